//! The `Key` trait: validation of raw bits, round trips, formatting,
//! ordering and hashing, thread safety, and serde as bits.
//!
//! Every property runs for `Id` (64 bits, 32/32), `Id32` (32 bits, 20/12),
//! a 64-bit key with 40 index bits and a 32-bit key with 28 index bits.

mod common;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use handlekit::{define_key, max_generation, Id, Id32, IdTable, Key};
use proptest::prelude::*;

define_key! {
    /// 40 index bits, 24 generation bits.
    pub struct W40(u64; index_bits = 40);
    /// 28 index bits, 4 generation bits.
    pub struct N28(u32; index_bits = 28);
    /// Split in the middle, as `Id`, so kept as two 32-bit halves; but
    /// without `Id`'s promise about its generations.
    pub struct Halves(u64; index_bits = 32);
}

const CASES: u32 = if cfg!(miri) { 4 } else { 1024 };

/// The width of the key's backing integer.
fn width<K: Key>() -> u32 {
    K::INDEX_BITS + K::GENERATION_BITS
}

/// What `from_bits` must accept, written independently of the crate.
fn valid<K: Key>(bits: u64) -> bool {
    let width = width::<K>();
    if width < 64 && bits >> width != 0 {
        return false;
    }
    let generation = bits >> K::INDEX_BITS;
    generation >= 1 && generation <= u64::from(K::MAX_GENERATION)
}

fn index_mask<K: Key>() -> u64 {
    (1u64 << K::INDEX_BITS) - 1
}

fn hash_of<T: Hash>(value: &T) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// Bits that hit the interesting cases often: any `u64` (a quarter of the
/// time), or an index with a generation at or near the edges, with or
/// without junk above the key's width. `mode` picks which; the raw words
/// `a` and `b` supply the rest. (A plain tuple rather than `prop_oneof!`,
/// which is slow to sample under Miri.)
fn make_bits<K: Key>(mode: u8, a: u64, b: u64) -> u64 {
    if mode < 4 {
        return a;
    }
    let max = u64::from(K::MAX_GENERATION);
    let generation = match mode % 6 {
        0 => 0,
        1 => 1,
        2 => max,
        3 => max + 1,
        4 => max + 2,
        _ => b & u64::from(u32::MAX),
    };
    let width = width::<K>();
    let junk = if width < 64 && mode >= 13 {
        (b >> 32 | 1) << width
    } else {
        0
    };
    // The shift may drop high generation bits of a 64-bit key; that is
    // just another bit pattern to try.
    (a & index_mask::<K>()) | generation << K::INDEX_BITS | junk
}

fn bits_for<K: Key>() -> impl Strategy<Value = u64> {
    (0u8..16, any::<u64>(), any::<u64>()).prop_map(|(mode, a, b)| make_bits::<K>(mode, a, b))
}

/// Parses JSON through `from_reader`: on a `&str`, serde_json finds an
/// error's line with memchr's SSE2 code, whose aligned loads Miri's symbolic
/// alignment check (used by `scripts/miri.sh`) reports as a false positive.
#[cfg(feature = "serde")]
fn from_json<T: serde::de::DeserializeOwned>(json: &str) -> serde_json::Result<T> {
    serde_json::from_reader(json.as_bytes())
}

/// All the per-bits properties of `Key`.
fn check_bits<K: Key>(bits: u64) {
    let key = K::from_bits(bits);
    assert_eq!(key.is_some(), valid::<K>(bits), "from_bits({bits:#x})");
    let Some(key) = key else { return };
    assert_eq!(key.to_bits(), bits);
    assert_eq!(key.index() as u64, bits & index_mask::<K>());
    assert_eq!(u64::from(key.generation()), bits >> K::INDEX_BITS);
    assert_eq!(K::from_parts(key.index(), key.generation()), Some(key));
    let name = std::any::type_name::<K>().rsplit("::").next().unwrap();
    assert_eq!(
        format!("{key:?}"),
        format!("{name}({}v{})", key.index(), key.generation())
    );
}

/// `from_parts` accepts exactly an index that fits and a valid generation.
fn check_parts<K: Key>(index: usize, generation: u32) {
    let fits = (index as u64) <= index_mask::<K>();
    let ok = fits && generation >= 1 && generation <= K::MAX_GENERATION;
    let key = K::from_parts(index, generation);
    assert_eq!(key.is_some(), ok, "from_parts({index}, {generation})");
    if let Some(key) = key {
        assert_eq!((key.index(), key.generation()), (index, generation));
    }
}

/// `Eq`, `Ord` and `Hash` follow the bits.
fn check_pair<K: Key>(a: u64, b: u64) {
    let (Some(x), Some(y)) = (K::from_bits(a), K::from_bits(b)) else {
        return;
    };
    assert_eq!(x == y, a == b);
    assert_eq!(x.cmp(&y), a.cmp(&b));
    assert_eq!(x.partial_cmp(&y), Some(a.cmp(&b)));
    if x == y {
        assert_eq!(hash_of(&x), hash_of(&y));
    }
}

/// An index and a generation for `from_parts`: in range, at the edges, or
/// anything at all.
fn parts_for<K: Key>() -> impl Strategy<Value = (usize, u32)> {
    (0u8..16, any::<usize>(), any::<u32>()).prop_map(|(mode, index, generation)| {
        let max = K::MAX_GENERATION;
        let limit = index_mask::<K>() as usize;
        let index = match mode % 4 {
            0 => limit,
            1 => limit.wrapping_add(1),
            2 => index,
            _ => index % (limit.saturating_add(1)).max(1),
        };
        let generation = match mode / 4 {
            0 => [0, 1, max, max.saturating_add(1)][usize::from(mode % 4)],
            1 => generation,
            _ => 1 + generation % max,
        };
        (index, generation)
    })
}

macro_rules! key_properties {
    ($($module:ident: $key:ty;)*) => {$(
        mod $module {
            use super::*;

            proptest! {
                #![proptest_config(common::proptest_config(CASES))]

                #[test]
                fn from_bits_validates_and_round_trips(bits in bits_for::<$key>()) {
                    check_bits::<$key>(bits);
                }

                #[test]
                fn from_parts_validates(
                    (index, generation) in parts_for::<$key>(),
                ) {
                    check_parts::<$key>(index, generation);
                }

                #[test]
                fn eq_ord_hash_follow_the_bits(
                    a in bits_for::<$key>(),
                    b in bits_for::<$key>(),
                    same in any::<bool>(),
                ) {
                    check_pair::<$key>(a, if same { a } else { b });
                }
            }

            #[cfg(feature = "serde")]
            proptest! {
                #![proptest_config(common::proptest_config(CASES))]

                /// A key serializes as its bits; deserializing accepts
                /// exactly the bits `from_bits` accepts.
                #[test]
                fn serde_as_bits(bits in bits_for::<$key>()) {
                    let parsed: serde_json::Result<$key> = from_json(&bits.to_string());
                    match <$key>::from_bits(bits) {
                        Some(key) => {
                            assert_eq!(serde_json::to_string(&key).unwrap(), bits.to_string());
                            assert_eq!(parsed.unwrap(), key);
                        }
                        None => {
                            let err = parsed.unwrap_err().to_string();
                            assert!(err.contains("invalid bits for key type"), "{err}");
                        }
                    }
                }
            }

            /// The edges, deterministically: the first and last valid
            /// generations and indices, and the first invalid ones.
            #[test]
            fn edges() {
                let max = u64::from(<$key>::MAX_GENERATION);
                let top = index_mask::<$key>();
                let width = width::<$key>();
                for index in [0, 1, top] {
                    for generation in [0, 1, 2, max - 1, max, max + 1] {
                        check_bits::<$key>(index | generation << <$key>::INDEX_BITS);
                    }
                    if width < 64 {
                        check_bits::<$key>(index | 1 << <$key>::INDEX_BITS | 1 << width);
                        assert!(<$key>::from_bits(index | 1 << width).is_none());
                    }
                }
                for bits in [0, 1, top, u64::MAX, u64::MAX >> 1, u64::MAX << 1] {
                    check_bits::<$key>(bits);
                }
                for (index, generation) in [(0, 0), (0, 1), (top as usize, max as u32), (1, max as u32 + 1)] {
                    check_parts::<$key>(index, generation);
                }
                assert!(<$key>::from_bits(0).is_none(), "zero is the niche");
                assert!(<$key>::from_parts(0, 0).is_none());
                assert!(<$key>::from_parts(top as usize + 1, 1).is_none());
                assert!(<$key>::from_parts(usize::MAX, 1).is_none());
                // A table issues keys of this type starting at 0v1.
                let mut table: IdTable<u8, $key> = IdTable::default();
                let key = table.insert(1);
                assert_eq!((key.index(), key.generation()), (0, 1));
                assert_eq!(<$key>::from_bits(key.to_bits()), Some(key));
            }
        }
    )*};
}

key_properties! {
    id: Id;
    id32: Id32;
    w40: W40;
    n28: N28;
    halves: Halves;
}

/// A key split in the middle is laid out as two 32-bit halves (so tables
/// load each with one instruction) but keeps the size, niche, bits, order
/// and hash of the `u64` it stands for.
#[test]
fn middle_split_keys_are_two_halves_with_the_bits_of_one_u64() {
    assert_eq!(core::mem::size_of::<Id>(), 8);
    assert_eq!(core::mem::size_of::<Option<Id>>(), 8);
    assert_eq!(core::mem::size_of::<Option<Halves>>(), 8);
    assert_eq!(core::mem::align_of::<Halves>(), 4);
    let bits = 0x0000_0007_0000_0005;
    let (id, halves) = (
        Id::from_bits(bits).unwrap(),
        Halves::from_bits(bits).unwrap(),
    );
    assert_eq!((id.index(), id.generation()), (5, 7));
    assert_eq!((halves.index(), halves.generation()), (5, 7));
    assert_eq!(hash_of(&id), hash_of(&bits));
    assert_eq!(hash_of(&halves), hash_of(&bits));
    assert_eq!(format!("{halves:?}"), "Halves(5v7)");
    // A generation of 2^31 fits the field, but no table issues it and no
    // constructor makes it, as when the key was one `u64`.
    assert!(Id::from_parts(0, 1 << 31).is_none());
    assert!(Halves::from_parts(0, 1 << 31).is_none());
    assert!(Halves::from_bits(1 << 63).is_none());
}

/// `from_parts` must reject a generation that does not fit the key's
/// generation bits. For a 64-bit key with more than 32 index bits, the
/// default `from_parts` computes `u64::from(generation) << INDEX_BITS`,
/// which drops the generation's high bits, so an out-of-range generation
/// turns into a different, valid one, and the forged key can name a live
/// value.
#[test]
fn from_parts_rejects_generations_wider_than_the_key() {
    let mut table: IdTable<&str, W40> = IdTable::default();
    let live = table.insert("live");
    assert_eq!((live.index(), live.generation()), (0, 1));
    // W40 has 24 generation bits. 2^24 + 1 is out of range; its low 24
    // bits are 1. u32::MAX is out of range; its low 24 bits are the maximum.
    for generation in [(1u32 << 24) + 1, u32::MAX] {
        let forged = W40::from_parts(0, generation);
        assert_eq!(forged, None, "from_parts(0, {generation}) accepted");
    }
}

#[test]
fn bit_splits() {
    assert_eq!((Id::INDEX_BITS, Id::GENERATION_BITS), (32, 32));
    // The state word keeps occupancy in its top bit: 31 usable bits.
    assert_eq!(Id::MAX_GENERATION, (1 << 31) - 1);
    assert_eq!(
        (
            Id32::INDEX_BITS,
            Id32::GENERATION_BITS,
            Id32::MAX_GENERATION
        ),
        (20, 12, 4095)
    );
    assert_eq!(
        (W40::INDEX_BITS, W40::GENERATION_BITS, W40::MAX_GENERATION),
        (40, 24, (1 << 24) - 1)
    );
    assert_eq!(
        (N28::INDEX_BITS, N28::GENERATION_BITS, N28::MAX_GENERATION),
        (28, 4, 15)
    );
    assert_eq!(max_generation(1), 1);
    assert_eq!(max_generation(30), (1 << 30) - 1);
    assert_eq!(max_generation(31), (1 << 31) - 1);
    assert_eq!(max_generation(32), (1 << 31) - 1);
}

#[test]
fn debug_format() {
    let id = Id::from_parts(5, 3).unwrap();
    assert_eq!(format!("{id:?}"), "Id(5v3)");
    assert_eq!(
        format!("{:?}", Id32::from_parts(1_048_575, 4095).unwrap()),
        "Id32(1048575v4095)"
    );
    assert_eq!(
        format!("{:?}", N28::from_parts(7, 15).unwrap()),
        "N28(7v15)"
    );
    assert_eq!(
        format!("{:?}", Some(W40::from_parts(0, 1).unwrap())),
        "Some(W40(0v1))"
    );
}

/// Keys order by their bits: by generation first, then by index.
#[test]
fn order_is_generation_major() {
    let a = Id::from_parts(9, 1).unwrap();
    let b = Id::from_parts(0, 2).unwrap();
    assert!(a < b);
    let c = Id::from_parts(3, 1).unwrap();
    let mut keys = [b, a, c];
    keys.sort();
    assert_eq!(keys, [c, a, b]);
}

#[test]
fn keys_and_tables_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Id>();
    send_sync::<Id32>();
    send_sync::<W40>();
    send_sync::<N28>();
    send_sync::<Option<Id>>();
    send_sync::<handlekit::Reuse>();
    send_sync::<handlekit::CapacityError>();
    send_sync::<IdTable<String>>();
    send_sync::<IdTable<u8, N28>>();
    send_sync::<handlekit::id_table::Iter<'static, u8, Id32>>();
    send_sync::<handlekit::id_table::IterMut<'static, u8, Id32>>();
    send_sync::<handlekit::id_table::Drain<'static, u8>>();
    send_sync::<handlekit::id_table::IntoIter<String, W40>>();
}

#[cfg(feature = "serde")]
#[test]
fn serde_keys_in_containers() {
    let keys = vec![Id::from_parts(5, 3).unwrap(), Id::from_parts(0, 1).unwrap()];
    let json = serde_json::to_string(&keys).unwrap();
    assert_eq!(json, format!("[{},{}]", 3u64 << 32 | 5, 1u64 << 32));
    let back: Vec<Id> = from_json(&json).unwrap();
    assert_eq!(back, keys);
    // Rejected: generation 0, a generation past the maximum, bits above a
    // 32-bit key's width, and values that are not integers.
    assert!(from_json::<Id>("5").is_err());
    assert!(from_json::<Id>(&(1u64 << 63).to_string()).is_err());
    assert!(from_json::<Id32>(&(1u64 << 32 | 1 << 20).to_string()).is_err());
    assert!(from_json::<N28>(&(16u64 << 28).to_string()).is_err());
    assert!(from_json::<Id>("-1").is_err());
    assert!(from_json::<Id>("\"Id(5v3)\"").is_err());
    assert_eq!(from_json::<Option<Id32>>("null").unwrap(), None);
}

define_key! {
    /// 4 index bits: 16 slots.
    pub struct Slots16(u32; index_bits = 4);
}

/// A capacity the key type cannot index is refused with a panic that
/// names the container, by every table over `SlotTable` (as `reserve`
/// refuses it); the most it can index is granted.
#[test]
fn a_capacity_past_the_key_space_panics() {
    use handlekit::{Hive, LookupTable, Pool};
    use std::panic::{catch_unwind, AssertUnwindSafe};

    fn refused(name: &str, make: impl FnOnce()) {
        let err = catch_unwind(AssertUnwindSafe(make)).expect_err(name);
        let message = err
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or_default();
        assert!(
            message.starts_with(&format!("{name}::reserve(17)")),
            "{message}"
        );
    }
    assert!(IdTable::<u8, Slots16>::with_capacity_and_key(16).capacity() >= 16);
    assert!(LookupTable::<u8, Slots16>::with_capacity_and_key(16).capacity() >= 16);
    assert!(Pool::<u8, Slots16>::with_capacity_and_key(16).capacity() >= 16);
    assert!(Hive::<u8, Slots16>::with_capacity_and_key(16).capacity() >= 16);
    refused("IdTable", || {
        drop(IdTable::<u8, Slots16>::with_capacity_and_key(17))
    });
    refused("LookupTable", || {
        drop(LookupTable::<u8, Slots16>::with_capacity_and_key(17))
    });
    refused("Pool", || {
        drop(Pool::<u8, Slots16>::with_capacity_and_key(17))
    });
    refused("Hive", || {
        drop(Hive::<u8, Slots16>::with_capacity_and_key(17))
    });
}
