//! Exhaustive stale-key tests at tiny widths.
//!
//! Deterministic runs (a fixed-seed LCG picks inserts and removes) drive
//! tables of keys with 1, 2 and 3 generation bits until every slot has
//! retired and the table refuses new values. Every key ever issued is kept,
//! and after every operation each one must resolve iff it is live, to its
//! own serial number. A reference free list predicts every key the table
//! issues, so the reuse policies are checked exactly, and the retired-slot
//! count is checked against it.
//!
//! `define_key!` keys are 32 or 64 bits wide, so a tiny generation width
//! comes with a huge index space; those are run on fixed-capacity tables.
//! A hand-written [`Tiny`] key has both a tiny index and a tiny generation,
//! so a growable table exhausts the key's whole space: then every valid key
//! of the type has been issued exactly once, and every possible bit pattern
//! can be tried against the table.

use std::collections::HashMap;
use std::num::NonZeroU16;

use handlekit::{define_key, IdTable, Key, Reuse};

mod common;
use common::reference::Reference;
use common::Lcg;

define_key! {
    /// 1 generation bit: every slot holds one value, then retires.
    pub struct G1(u32; index_bits = 31);
    /// 2 generation bits: 3 occupants per slot.
    pub struct G2(u32; index_bits = 30);
    /// 3 generation bits: 7 occupants per slot.
    pub struct G3(u32; index_bits = 29);
    /// 2 index bits: 4 slots, each reusable about 2^30 times.
    pub struct FourSlots(u32; index_bits = 2);
}

/// A hand-written key with `I` index bits and `G` generation bits, packed in
/// the low `I + G` bits of a `u16`. It keeps the `Key` contract.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
struct Tiny<const I: u32, const G: u32>(NonZeroU16);

impl<const I: u32, const G: u32> Key for Tiny<I, G> {
    const INDEX_BITS: u32 = I;
    const GENERATION_BITS: u32 = G;

    fn from_bits(bits: u64) -> Option<Self> {
        if bits >> (I + G) != 0 {
            return None;
        }
        let generation = bits >> I;
        if generation == 0 || generation > u64::from(Self::MAX_GENERATION) {
            return None;
        }
        NonZeroU16::new(u16::try_from(bits).ok()?).map(Tiny)
    }

    fn to_bits(self) -> u64 {
        u64::from(self.0.get())
    }
}

/// What the run ends on when the table is full.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Limit {
    /// A fixed capacity of this many slots.
    Fixed(usize),
    /// The key's index space.
    IndexSpace,
}

/// Runs inserts and removes until every slot is retired, checking every
/// issued key after every operation. Returns every key issued, in order.
fn exhaust<K: Key>(reuse: Reuse, limit: Limit, seed: u64) -> Vec<K> {
    let slot_limit = match limit {
        Limit::Fixed(n) => n,
        Limit::IndexSpace => 1usize << K::INDEX_BITS,
    };
    let mut table: IdTable<u64, K> = match limit {
        Limit::Fixed(n) => IdTable::with_fixed_capacity(n),
        Limit::IndexSpace => IdTable::default(),
    };
    table.set_reuse(reuse);
    let mut reference = Reference::new(reuse, slot_limit, K::MAX_GENERATION);
    let mut rng = Lcg(seed);
    let mut issued: Vec<K> = Vec::new();
    // key -> serial of its value, for live keys only.
    let mut live: HashMap<K, u64> = HashMap::new();
    let mut live_order: Vec<K> = Vec::new();
    let mut serial = 0u64;
    let mut refusals = 0;

    let remove_random = |table: &mut IdTable<u64, K>,
                         reference: &mut Reference,
                         live: &mut HashMap<K, u64>,
                         live_order: &mut Vec<K>,
                         r: u64| {
        let key = live_order.swap_remove(r as usize % live_order.len());
        let serial = live.remove(&key).unwrap();
        assert_eq!(table.remove(key), Some(serial));
        assert_eq!(table.remove(key), None);
        reference.remove_key(key.index());
    };

    loop {
        let r = rng.next();
        if !live_order.is_empty() && r % 5 < 2 {
            remove_random(
                &mut table,
                &mut reference,
                &mut live,
                &mut live_order,
                r / 5,
            );
        } else {
            let predicted = reference.insert();
            match table.try_insert(serial) {
                Ok(key) => {
                    let (index, generation) = predicted.expect("the reference was full");
                    assert_eq!((key.index(), key.generation()), (index, generation));
                    assert!(!issued.contains(&key), "{key:?} issued twice");
                    issued.push(key);
                    live.insert(key, serial);
                    live_order.push(key);
                    serial += 1;
                }
                Err(err) => {
                    assert_eq!(predicted, None, "the table refused a value it had room for");
                    match limit {
                        Limit::Fixed(n) => {
                            assert!(err.is_fixed_capacity());
                            assert_eq!(err.limit(), Some(n));
                        }
                        Limit::IndexSpace => {
                            assert!(err.is_index_space());
                            assert_eq!(err.limit(), Some(slot_limit));
                        }
                    }
                    assert_eq!(table.len() + table.retired_count(), slot_limit);
                    assert_eq!(table.len(), table.capacity());
                    refusals += 1;
                    if live_order.is_empty() {
                        break;
                    }
                    remove_random(&mut table, &mut reference, &mut live, &mut live_order, r);
                }
            }
        }

        table.check_invariants();
        assert_eq!(table.len(), live.len());
        assert_eq!(table.retired_count(), reference.retired);
        for &key in &issued {
            assert_eq!(table.get(key), live.get(&key), "{key:?}");
            assert_eq!(table.contains_key(key), live.contains_key(&key));
        }
    }

    // Every slot is retired, and each held exactly MAX_GENERATION values,
    // with generations 1, 2, ..., MAX_GENERATION.
    assert!(refusals >= 1);
    assert!(table.is_empty());
    assert_eq!(table.retired_count(), slot_limit);
    assert_eq!(table.capacity(), 0);
    assert!(table.try_insert(0).is_err());
    table.check_invariants();
    let max = K::MAX_GENERATION as usize;
    assert_eq!(issued.len(), slot_limit * max);
    let mut per_slot = vec![Vec::new(); slot_limit];
    for key in &issued {
        per_slot[key.index()].push(key.generation());
    }
    for generations in per_slot {
        assert_eq!(generations, (1..=K::MAX_GENERATION).collect::<Vec<_>>());
    }
    issued
}

/// The policies each run is repeated for (fewer under Miri, still both).
const POLICIES: &[Reuse] = if cfg!(miri) {
    &[Reuse::Lifo, Reuse::Fifo { min_free: 1 }]
} else {
    &[
        Reuse::Lifo,
        Reuse::Fifo { min_free: 0 },
        Reuse::Fifo { min_free: 1 },
        Reuse::Fifo { min_free: 3 },
    ]
};

/// Seeds per configuration.
const SEEDS: u64 = if cfg!(miri) { 1 } else { 4 };

fn exhaust_fixed<K: Key>(capacities: &[usize]) {
    for &reuse in POLICIES {
        for &capacity in capacities {
            for seed in 0..SEEDS {
                exhaust::<K>(reuse, Limit::Fixed(capacity), seed);
            }
        }
    }
}

#[test]
fn one_generation_bit_fixed() {
    assert_eq!(G1::MAX_GENERATION, 1);
    exhaust_fixed::<G1>(if cfg!(miri) { &[1, 5] } else { &[1, 2, 5, 16] });
}

#[test]
fn two_generation_bits_fixed() {
    assert_eq!(G2::MAX_GENERATION, 3);
    exhaust_fixed::<G2>(if cfg!(miri) { &[3] } else { &[1, 3, 8] });
}

#[test]
fn three_generation_bits_fixed() {
    assert_eq!(G3::MAX_GENERATION, 7);
    exhaust_fixed::<G3>(if cfg!(miri) { &[2] } else { &[1, 4, 9] });
}

/// A `Tiny` table exhausts the key's whole space: every valid key of the
/// type is issued exactly once, and no other.
fn exhaust_tiny<const I: u32, const G: u32>() {
    let all_valid: Vec<Tiny<I, G>> = (0..1u64 << (I + G))
        .filter_map(Tiny::<I, G>::from_bits)
        .collect();
    assert_eq!(
        all_valid.len(),
        (1 << I) * Tiny::<I, G>::MAX_GENERATION as usize
    );
    for &reuse in POLICIES {
        for seed in 0..SEEDS {
            let mut issued = exhaust::<Tiny<I, G>>(reuse, Limit::IndexSpace, seed);
            issued.sort();
            assert_eq!(issued, all_valid, "{reuse:?}");
        }
    }
}

#[test]
fn tiny_keys_exhaust_their_space() {
    exhaust_tiny::<1, 1>();
    exhaust_tiny::<2, 2>();
    if !cfg!(miri) {
        exhaust_tiny::<3, 1>();
        exhaust_tiny::<3, 2>();
        exhaust_tiny::<2, 3>();
        exhaust_tiny::<4, 3>();
    }
}

/// Every bit pattern (including ones above the key's width) is tried
/// against a table after every operation: a pattern resolves only if it is
/// the bits of a live key, and then to that key's value.
fn forged_bits_never_resolve_wrongly<K: Key>(limit: Limit, bit_patterns: &[u64], seed: u64) {
    let (mut table, slot_limit): (IdTable<u64, K>, usize) = match limit {
        Limit::Fixed(n) => (IdTable::with_fixed_capacity(n), n),
        Limit::IndexSpace => (IdTable::default(), 1 << K::INDEX_BITS),
    };
    let mut rng = Lcg(seed);
    let mut live: HashMap<u64, u64> = HashMap::new();
    let total = slot_limit * K::MAX_GENERATION as usize;
    let mut serial = 0u64;
    while serial < total as u64 || !live.is_empty() {
        let r = rng.next();
        if live.is_empty() || (r % 2 == 0 && serial < total as u64) {
            if let Ok(key) = table.try_insert(serial) {
                live.insert(key.to_bits(), serial);
                serial += 1;
            }
        } else {
            let mut bits: Vec<u64> = live.keys().copied().collect();
            bits.sort_unstable();
            let victim = bits[(r / 2) as usize % bits.len()];
            let key = K::from_bits(victim).unwrap();
            assert_eq!(table.remove(key), live.remove(&victim));
        }
        for &bits in bit_patterns {
            let Some(key) = K::from_bits(bits) else {
                assert!(!live.contains_key(&bits));
                continue;
            };
            assert_eq!(table.get(key), live.get(&bits), "{key:?}");
            assert_eq!(table.contains_key(key), live.contains_key(&bits));
        }
    }
    assert_eq!(table.retired_count(), slot_limit);
}

#[test]
fn one_generation_bit_every_pattern() {
    // G1: index in bits 0..31, the generation in bit 31. Patterns: every
    // index below 12 with every value of bit 31 and of a few bits above the
    // width, plus indices just past the table.
    let mut patterns = Vec::new();
    for index in 0..if cfg!(miri) { 6 } else { 12u64 } {
        for high in [0u64, 1, 2, 3, 1 << 31, u64::MAX >> 32] {
            patterns.push(index | high << 31);
        }
    }
    patterns.extend([u32::MAX.into(), 1 << 31 | 0x7fff_ffff, 1 << 32, u64::MAX]);
    for seed in 0..SEEDS {
        forged_bits_never_resolve_wrongly::<G1>(Limit::Fixed(8), &patterns, seed);
    }
}

#[test]
fn tiny_keys_every_pattern() {
    fn run<const I: u32, const G: u32>() {
        // Every pattern of the key's width and of two bits more.
        let patterns: Vec<u64> = (0..1u64 << (I + G + 2)).collect();
        for seed in 0..SEEDS {
            forged_bits_never_resolve_wrongly::<Tiny<I, G>>(Limit::IndexSpace, &patterns, seed);
        }
    }
    run::<2, 2>();
    if !cfg!(miri) {
        run::<3, 1>();
        run::<2, 3>();
    }
}

/// With `g` generation bits, a LIFO slot that churns one value retires after
/// exactly `2^g - 1` occupants, and the next slot takes over.
#[test]
fn lifo_churn_retires_after_max_generation_occupants() {
    fn run<K: Key>() {
        let max = K::MAX_GENERATION as usize;
        let mut table: IdTable<u64, K> = IdTable::default();
        let mut issued = Vec::new();
        for round in 0..4 * max {
            let key = table.insert(round as u64);
            assert_eq!(
                (key.index(), key.generation() as usize),
                (round / max, 1 + round % max)
            );
            assert_eq!(table.remove(key), Some(round as u64));
            assert_eq!(table.retired_count(), (round + 1) / max);
            issued.push(key);
            assert!(issued.iter().all(|&k| table.get(k).is_none()));
        }
        table.check_invariants();
    }
    run::<G1>();
    run::<G2>();
    run::<G3>();
}

/// Under `Fifo { min_free: F }`, churning one value through a growable
/// table cycles through `F + 1` slots, so a slot's first retirement comes
/// with insertion number `1 + (2^g - 2)(F + 1)`.
#[test]
fn fifo_churn_spreads_reuse_over_min_free_plus_one_slots() {
    fn run<K: Key>(min_free: u32) {
        let f = min_free as usize;
        let max = K::MAX_GENERATION as usize;
        let mut table: IdTable<u64, K> = IdTable::with_reuse(Reuse::Fifo { min_free });
        let first_retirement = 1 + (max - 1) * (f + 1);
        for insertion in 1..=first_retirement + 3 * (f + 1) {
            let key = table.insert(0);
            if insertion <= first_retirement {
                // Round robin over slots 0..=F.
                let round = insertion - 1;
                assert_eq!(key.index(), round % (f + 1));
                assert_eq!(key.generation() as usize, 1 + round / (f + 1));
            }
            table.remove(key);
            let expected_retired = usize::from(insertion >= first_retirement);
            if insertion <= first_retirement {
                assert_eq!(
                    table.retired_count(),
                    expected_retired,
                    "insertion {insertion}"
                );
            }
            table.check_invariants();
        }
        assert!(table.retired_count() >= 1);
    }
    let min_frees: &[u32] = if cfg!(miri) {
        &[0, 4]
    } else {
        &[0, 1, 3, 4, 7]
    };
    for &min_free in min_frees {
        run::<G1>(min_free);
        run::<G2>(min_free);
        run::<G3>(min_free);
    }
}

/// A key with a tiny index space and a wide generation: the table fills
/// its index space, refuses more, and under FIFO dips into its reserve of
/// free slots rather than failing.
#[test]
fn index_space_fills_and_fifo_dips_into_reserve() {
    for &reuse in POLICIES {
        let mut table: IdTable<u32, FourSlots> = IdTable::with_reuse(reuse);
        let keys: Vec<FourSlots> = (0..4).map(|n| table.insert(n)).collect();
        let err = table.try_insert(4).unwrap_err();
        assert!(err.is_index_space() && !err.is_fixed_capacity());
        assert_eq!(err.limit(), Some(4));
        assert!(table.try_reserve(1).is_err());
        assert_eq!(table.capacity(), 4);

        assert_eq!(table.remove(keys[1]), Some(1));
        assert!(table.try_reserve(1).is_ok());
        assert!(table.try_reserve(2).is_err());
        // Only one slot is free, fewer than FIFO's reserve, but the table
        // cannot grow, so it reuses it.
        let again = table.insert(10);
        assert_eq!((again.index(), again.generation()), (1, 2));
        assert_eq!(table.get(keys[1]), None);
        assert_eq!(table[again], 10);
        table.check_invariants();
    }
}

#[test]
#[should_panic(expected = "no live value for key")]
fn index_with_stale_key_panics() {
    let mut table: IdTable<u8, G2> = IdTable::default();
    let key = table.insert(1);
    table.remove(key);
    let _ = table[key];
}

#[test]
#[should_panic(expected = "fixed capacity")]
fn insert_into_full_fixed_table_panics() {
    let mut table: IdTable<u8, G1> = IdTable::with_fixed_capacity(1);
    let key = table.insert(1);
    table.remove(key); // slot 0 retires
    table.insert(2);
}

#[test]
#[should_panic(expected = "exceeds")]
fn fixed_capacity_beyond_index_space_panics() {
    let _ = IdTable::<u8, FourSlots>::with_fixed_capacity(5);
}

/// `clear` keeps every slot's generation: keys issued before stay stale, a
/// slot at its last generation retires, and the free list is rebuilt.
#[test]
fn clear_keeps_keys_stale_and_retires_exhausted_slots() {
    for &reuse in POLICIES {
        let mut table: IdTable<u64, G2> = IdTable::with_reuse(reuse);
        let mut issued = Vec::new();
        for round in 0..if cfg!(miri) { 6 } else { 20u64 } {
            for n in 0..3 {
                issued.push(table.insert(round * 10 + n));
            }
            table.clear();
            table.check_invariants();
            assert!(issued.iter().all(|&k| table.get(k).is_none()));
            let retired = issued.iter().filter(|k| k.generation() == 3).count();
            assert_eq!(table.retired_count(), retired);
        }
        let mut sorted = issued.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), issued.len(), "no key issued twice");
    }
}

/// Serialized tables are untrusted: generations are range-checked, the slot
/// count is bounded by the key, and the free list and retired count are
/// rebuilt from the slots, so stale keys stay stale across a round trip.
#[cfg(feature = "serde")]
mod serde_hostile {
    use super::*;
    use common::from_json;

    type Table = IdTable<u64, G2>;

    fn parse(json: &str) -> Result<Table, String> {
        from_json(json)
    }

    #[test]
    fn round_trip_keeps_stale_keys_stale_and_retired_slots_retired() {
        for &reuse in POLICIES {
            let mut table = Table::with_reuse(reuse);
            let mut issued = Vec::new();
            let mut rng = Lcg(7);
            for serial in 0..if cfg!(miri) { 12 } else { 60u64 } {
                let key = table.insert(serial);
                issued.push(key);
                if rng.next() % 3 != 0 {
                    table.remove(key);
                }
                let json = serde_json::to_string(&table).unwrap();
                let back = parse(&json).unwrap();
                back.check_invariants();
                assert_eq!(back.reuse(), reuse);
                assert_eq!(back.retired_count(), table.retired_count());
                for &key in &issued {
                    assert_eq!(back.get(key), table.get(key), "{key:?}");
                }
                table = back;
            }
            assert!(table.retired_count() > 0);
        }
    }

    #[test]
    fn slots_are_validated() {
        // G2: generations 1..=3.
        let ok = parse(r#"{"reuse":"Lifo","slots":[[1,10],[3,null],[0,null],[2,null]]}"#).unwrap();
        ok.check_invariants();
        assert_eq!(ok.len(), 1);
        assert_eq!(
            ok.retired_count(),
            1,
            "a vacant slot at the last generation is retired"
        );
        assert_eq!(ok.get(G2::from_parts(0, 1).unwrap()), Some(&10));
        assert_eq!(ok.get(G2::from_parts(1, 3).unwrap()), None);
        assert_eq!(ok.get(G2::from_parts(3, 2).unwrap()), None);

        for (json, why) in [
            (
                r#"{"reuse":"Lifo","slots":[[4,10]]}"#,
                "occupied generation past the maximum",
            ),
            (
                r#"{"reuse":"Lifo","slots":[[4,null]]}"#,
                "vacant generation past the maximum",
            ),
            (
                r#"{"reuse":"Lifo","slots":[[0,10]]}"#,
                "occupied generation 0",
            ),
            (
                r#"{"reuse":"Lifo","slots":[[4294967295,10]]}"#,
                "u32::MAX generation",
            ),
            (
                r#"{"reuse":"Lifo","slots":[[2147483649,null]]}"#,
                "generation with the vacant bit",
            ),
            (r#"{"reuse":"Lifo"}"#, "missing slots"),
            (r#"{"slots":[]}"#, "missing reuse"),
            (
                r#"{"reuse":"Lifo","slots":[],"slots":[]}"#,
                "duplicate slots",
            ),
            (
                r#"{"reuse":"Lifo","reuse":"Lifo","slots":[]}"#,
                "duplicate reuse",
            ),
            (r#"{"reuse":"Lifo","slots":[[1]]}"#, "slot without a value"),
            (r#"{"reuse":"Sideways","slots":[]}"#, "unknown policy"),
        ] {
            assert!(parse(json).is_err(), "accepted {why}: {json}");
        }
    }

    #[test]
    fn slot_count_is_bounded_by_the_key() {
        let slots = |n: usize| {
            let body = vec!["[1,0]"; n].join(",");
            format!(r#"{{"reuse":{{"Fifo":{{"min_free":1}}}},"slots":[{body}]}}"#)
        };
        let four: IdTable<u64, FourSlots> = from_json(&slots(4)).unwrap();
        assert_eq!(four.len(), 4);
        assert_eq!(four.reuse(), Reuse::Fifo { min_free: 1 });
        let err = from_json::<IdTable<u64, FourSlots>>(&slots(5)).unwrap_err();
        assert!(
            err.contains("more slots than the key type can index"),
            "{err}"
        );
    }

    #[test]
    fn the_sequence_form_is_accepted_too() {
        let table = parse(r#"["Lifo",[[2,5],[1,null]]]"#).unwrap();
        table.check_invariants();
        assert_eq!(table.get(G2::from_parts(0, 2).unwrap()), Some(&5));
        assert_eq!(table.get(G2::from_parts(0, 1).unwrap()), None);
        assert!(parse(r#"["Lifo"]"#).is_err());
    }

    /// After loading, the table issues keys that were never valid before:
    /// a vacant slot resumes after its last generation.
    #[test]
    fn loaded_vacant_slots_resume_after_their_generation() {
        let mut table = parse(r#"{"reuse":"Lifo","slots":[[2,null],[3,null]]}"#).unwrap();
        let key = table.insert(1);
        assert_eq!((key.index(), key.generation()), (0, 3));
        let key = table.insert(2);
        assert_eq!((key.index(), key.generation()), (2, 1), "slot 1 is retired");
        table.check_invariants();
    }
}

#[test]
fn emptied_lifo_table_refills_in_index_order() {
    let mut table: IdTable<u32> = IdTable::new();
    let mut keys: Vec<_> = (0..100).map(|i| table.insert(i)).collect();
    // Remove in a scrambled order: the free list is now that order reversed.
    keys.sort_by_key(|key| (key.index() * 37) % 101);
    for key in &keys {
        table.remove(*key);
    }
    let refilled: Vec<usize> = (0..100).map(|i| table.insert(i).index()).collect();
    assert_eq!(refilled, (0..100).collect::<Vec<_>>());
    // Stale keys stay stale after the reordering.
    assert!(keys.iter().all(|key| table.get(*key).is_none()));
}

#[test]
fn partly_emptied_lifo_table_keeps_stack_order() {
    let mut table: IdTable<u32> = IdTable::new();
    let keys: Vec<_> = (0..4).map(|i| table.insert(i)).collect();
    table.remove(keys[1]);
    table.remove(keys[3]);
    // Not empty: the most recently freed slot comes back first.
    assert_eq!(table.insert(9).index(), 3);
    assert_eq!(table.insert(9).index(), 1);
}
