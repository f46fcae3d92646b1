//! Model test: `Hive` against a `HashMap<K, u64>`: the shared model suite
//! (`common/model_suite.rs`, whose doc says what is checked), with what
//! `Pool` and `Hive` check beside it (`common/stable_model.rs`: stable
//! addresses), and what only a hive does: runs of removals that empty
//! blocks, and the blocks kept by `clear`, freed by `shrink_to_fit`, kept
//! by a copy and never more than one in a fixed hive. A removed value's
//! key must miss even after its block was freed and another block made
//! over its range.
//!
//! The same body runs for `Id`, `Id32`, a key with 4 generation bits
//! (where slots retire constantly) and one with 16 slots in all (where the
//! index space runs out), with block sizes from 1 to 64 and (sometimes) a
//! fixed capacity. Then: the stable-address churn test, an exhaustive
//! stale-key test with 2 generation bits, and the index-space limit.

use std::collections::{HashMap, HashSet};
use std::ptr::NonNull;

use handlekit::iter::HiveBlocks;
use handlekit::{define_key, Hive, Id, Id32, Key};
use proptest::prelude::*;

mod common;

use common::model_suite::{Copied, Harness, MaybeSerde, ModelTable, Watch};
use common::stable_model::StableModel;

define_key! {
    /// 28 index bits, 4 generation bits: a slot retires after 15 occupants.
    pub struct Gen4(u32; index_bits = 28);
    /// 2 generation bits: 3 occupants per slot.
    pub struct G2(u32; index_bits = 30);
    /// 4 index bits: 16 slots in all.
    pub struct SixteenSlots(u32; index_bits = 4);
    /// 14 index bits: two ranges of the default largest block (8192).
    pub struct TwoRanges(u32; index_bits = 14);
}

impl<K: Key + std::fmt::Debug + MaybeSerde> StableModel<K> for HiveBlocks
where
    Hive<u64, K>: MaybeSerde,
{
    /// The smallest and the largest block size.
    type Config = (usize, usize);
    type Own = Blocks;
    /// Runs of removals.
    const OWN_WEIGHT: u32 = 3;
    /// Within the key's index space; past it the constructor panics.
    const FIXED_BELOW: usize = if K::INDEX_BITS >= 7 {
        80
    } else {
        (1 << K::INDEX_BITS) + 1
    };
    const SHRINKS: bool = true;
    /// A block whose every slot retired is freed.
    const RETIRED_SLOTS_CAN_GO: bool = true;

    fn make((min, max): (usize, usize), fixed: Option<usize>) -> Hive<u64, K> {
        match fixed {
            Some(capacity) => Hive::with_fixed_capacity(capacity),
            None => Hive::with_block_sizes(min, max),
        }
    }

    fn other() -> Hive<u64, K> {
        Hive::with_block_sizes(2, 8)
    }

    fn shrink(hive: &mut Hive<u64, K>) {
        hive.shrink_to_fit();
    }

    /// Removes a run of live values (in key order), emptying blocks.
    fn harness_op(harness: &mut Harness<Hive<u64, K>>, r: u64)
    where
        Hive<u64, K>: ModelTable,
    {
        let live = harness.iteration_order();
        if live.is_empty() {
            return;
        }
        let from = r as usize % live.len();
        let run = 1 + (r >> 32) as usize % 39;
        for &key in live[from..].iter().take(run) {
            harness.remove(key);
        }
    }
}

/// The blocks and capacity of the hive at the last check.
pub struct Blocks {
    blocks: usize,
    capacity: usize,
    /// Whether the hive is fixed and its block spent (every slot retired):
    /// the one block a fixed hive may lose.
    spent: bool,
}

impl<K: Key + std::fmt::Debug + MaybeSerde> Watch<Hive<u64, K>> for Blocks
where
    Hive<u64, K>: MaybeSerde,
{
    fn new(hive: &Hive<u64, K>, fixed: Option<usize>) -> Self {
        if let Some(capacity) = fixed {
            assert_eq!(hive.fixed_capacity(), Some(capacity));
            assert_eq!(hive.block_count(), usize::from(capacity > 0));
        }
        Blocks {
            blocks: hive.block_count(),
            capacity: hive.capacity(),
            spent: false,
        }
    }

    /// Blocks that can take a value stay; only those whose every slot
    /// retired go (slots at their last generation retire as they are
    /// cleared).
    fn cleared(&mut self, hive: &Hive<u64, K>, _rest: &[K]) {
        assert!(hive.block_count() <= self.blocks);
        assert!(hive.capacity() <= self.capacity);
        if K::GENERATION_BITS >= 16 {
            assert_eq!(
                (hive.block_count(), hive.capacity()),
                (self.blocks, self.capacity)
            );
        }
    }

    fn shrunk(&mut self, hive: &Hive<u64, K>) {
        if hive.fixed_capacity().is_some() {
            let blocks = if self.spent { 0 } else { self.blocks };
            assert_eq!(
                hive.block_count(),
                blocks,
                "a fixed hive keeps its block unless it is spent"
            );
            assert_eq!(hive.capacity(), self.capacity);
        } else {
            let max = hive.block_sizes().1;
            assert!(hive.capacity() < hive.len() + max * hive.block_count().max(1));
        }
    }

    fn copied(&mut self, original: &Hive<u64, K>, copy: &Hive<u64, K>, how: Copied) {
        assert_eq!(copy.block_sizes(), original.block_sizes());
        if how == Copied::Serde {
            // Loaded: the blocks the slots in use need.
            assert!(copy.capacity() <= original.capacity());
        } else {
            assert_eq!(copy.fixed_capacity(), original.fixed_capacity());
            assert_eq!(copy.capacity(), original.capacity());
            assert_eq!(copy.block_count(), original.block_count());
        }
    }

    fn check(&mut self, hive: &Hive<u64, K>, _model: &HashMap<K, u64>, _issued: &[K]) {
        if let Some(capacity) = hive.fixed_capacity() {
            assert!(hive.block_count() <= 1, "a fixed hive grew");
            assert!(hive.capacity() <= capacity);
        }
    }

    /// The blocks and room the next `clear` and `shrink_to_fit` compare
    /// with.
    fn stepped(&mut self, hive: &Hive<u64, K>) {
        self.spent = hive.block_count() == 1
            && hive
                .fixed_capacity()
                .is_some_and(|capacity| hive.retired_count() == capacity);
        self.blocks = hive.block_count();
        self.capacity = hive.capacity();
    }
}

fn block_sizes() -> impl Strategy<Value = (usize, usize)> {
    prop_oneof![Just((1, 1)), Just((1, 4)), Just((2, 16)), Just((64, 64))]
}

/// Every test sits in `mod hive`, so that its name (`hive::...`) matches the
/// filter of `scripts/miri.sh hive`.
mod hive {
    use super::*;

    model_suite_tests! {
        id: Hive<u64, Id>, block_sizes();
        id32: Hive<u64, Id32>, block_sizes();
        gen4: Hive<u64, Gen4>, block_sizes();
        sixteen_slots: Hive<u64, SixteenSlots>, block_sizes();
    }

    impl_churn!(Hive, Id;
        test: |max_block| Hive::with_block_sizes(4, max_block),
        miri: (64, 800, 4), full: (2000, 40_000, 256), shrink_phase: true);

    /// A removal keeps the block it empties, with its slots and free list,
    /// until `shrink_to_fit`: emptying a hive and filling it again makes no
    /// block and moves no slot; `clear` keeps the blocks as well.
    #[test]
    fn emptied_blocks_stay_until_shrink_to_fit() {
        let mut hive: Hive<u32> = Hive::with_block_sizes(4, 4);
        let keys: Vec<Id> = (0..16).map(|n| hive.insert(n)).collect();
        assert_eq!(hive.block_count(), 4);
        let (capacity, bytes) = (hive.capacity(), hive.heap_bytes());
        let ptrs: std::collections::HashSet<_> =
            keys.iter().map(|&k| hive.get_ptr(k).unwrap()).collect();
        for &key in &keys {
            hive.remove(key);
            hive.check_invariants();
        }
        assert_eq!(hive.block_count(), 4, "every emptied block stays");
        assert_eq!((hive.capacity(), hive.heap_bytes()), (capacity, bytes));
        // Filling again reuses the same slots.
        let again: Vec<Id> = (0..16).map(|n| hive.insert(n + 100)).collect();
        assert_eq!(hive.block_count(), 4);
        for &key in &again {
            assert!(ptrs.contains(&hive.get_ptr(key).unwrap()), "slot moved");
        }
        for &key in &keys {
            assert_eq!(hive.get(key), None, "stale key {key:?} resolves");
        }
        hive.clear();
        assert_eq!((hive.block_count(), hive.capacity()), (4, capacity));
        hive.check_invariants();
        hive.shrink_to_fit();
        assert_eq!((hive.block_count(), hive.capacity()), (0, 0));
        hive.check_invariants();
    }

    /// A fixed hive makes its one block up front and never another: a full
    /// hive refuses inserts and reservations, emptying it, `clear` and
    /// `shrink_to_fit` keep the block (and so the addresses of its slots),
    /// and a clone is fixed too.
    #[test]
    fn a_fixed_hive_keeps_its_one_block() {
        let mut hive: Hive<u64> = Hive::with_fixed_capacity(5);
        assert_eq!((hive.block_count(), hive.capacity()), (1, 5));
        let keys: Vec<Id> = (0..5).map(|v| hive.insert(v)).collect();
        let ptrs: Vec<_> = keys.iter().map(|&k| hive.get_ptr(k).unwrap()).collect();
        let err = hive.try_insert(5).unwrap_err();
        assert!(err.is_fixed_capacity());
        assert_eq!(err.limit(), Some(5));
        assert!(hive.try_reserve(1).unwrap_err().is_fixed_capacity());
        for &key in &keys {
            hive.remove(key);
        }
        hive.shrink_to_fit();
        assert_eq!((hive.block_count(), hive.capacity()), (1, 5));
        // The slots are reused where they were: last freed, first reused.
        let again = hive.insert(7);
        assert_eq!(hive.get_ptr(again), Some(ptrs[4]));
        assert_eq!(hive.get(keys[4]), None);
        hive.clear();
        assert_eq!((hive.block_count(), hive.capacity()), (1, 5));
        let copy = hive.clone();
        assert_eq!(copy.fixed_capacity(), Some(5));
        hive.check_invariants();

        let mut empty: Hive<u64> = Hive::with_fixed_capacity(0);
        assert_eq!(empty.block_count(), 0);
        assert!(empty.try_insert(1).unwrap_err().is_fixed_capacity());
        empty.check_invariants();
    }

    /// The one block a fixed hive gives up: when every slot of it retired
    /// (here after 2 × 15 occupants with a 4-bit generation), it can never
    /// take a value again, and `shrink_to_fit` frees it. The hive is full
    /// from then on, and the old keys stay stale.
    #[test]
    fn a_fixed_hive_frees_its_spent_block() {
        let mut hive: Hive<u64, Gen4> = Hive::with_fixed_capacity(2);
        let keys: Vec<Gen4> = (0..30)
            .map(|n| {
                let key = hive.insert(n);
                hive.remove(key);
                key
            })
            .collect();
        assert_eq!((hive.retired_count(), hive.capacity()), (2, 0));
        assert_eq!(
            hive.block_count(),
            1,
            "a spent block waits for shrink_to_fit"
        );
        hive.check_invariants();
        hive.shrink_to_fit();
        assert_eq!((hive.block_count(), hive.capacity()), (0, 0));
        assert_eq!(hive.fixed_capacity(), Some(2));
        assert!(hive.try_insert(1).unwrap_err().is_fixed_capacity());
        assert!(keys.iter().all(|&key| hive.get(key).is_none()));
        hive.check_invariants();
    }

    /// `shrink_to_fit` frees the emptied blocks, and a key into a freed
    /// block stays stale when a new block is made over the same index
    /// range.
    #[test]
    fn freed_blocks_keep_their_keys_stale() {
        let mut hive: Hive<u32> = Hive::with_block_sizes(4, 4);
        let keys: Vec<Id> = (0..16).map(|n| hive.insert(n)).collect();
        assert_eq!(hive.block_count(), 4);
        for &key in &keys {
            hive.remove(key);
        }
        assert_eq!(hive.block_count(), 4, "emptied blocks stay");
        hive.shrink_to_fit();
        assert_eq!((hive.block_count(), hive.capacity()), (0, 0));
        let again: Vec<Id> = (0..16).map(|n| hive.insert(n + 100)).collect();
        // The same index ranges, new generations.
        let mut old_indices: Vec<usize> = keys.iter().map(|k| k.index()).collect();
        let mut new_indices: Vec<usize> = again.iter().map(|k| k.index()).collect();
        old_indices.sort_unstable();
        new_indices.sort_unstable();
        assert_eq!(old_indices, new_indices);
        for &key in &keys {
            assert_eq!(hive.get(key), None, "{key:?} came back");
        }
        for (n, &key) in again.iter().enumerate() {
            assert_eq!(hive[key], n as u32 + 100);
            assert!(key.generation() >= 2);
        }
        hive.check_invariants();
    }

    /// Exhaustive over every sequence of a few operations, with 2 generation
    /// bits (a slot retires after 3 occupants) and blocks of 1 and 2 slots, so
    /// blocks are freed, ranges reused at a higher floor and retired. After
    /// every step every key ever issued, and every forged key over the first
    /// slots, resolves iff it is live; no key is issued twice.
    #[test]
    fn exhaustive_stale_keys_with_two_generation_bits() {
        const OPS: u32 = 5;
        let length: u32 = if cfg!(miri) { 3 } else { 7 };
        // Under Miri, every third sequence: each step resolves every key.
        let every = if cfg!(miri) { 3 } else { 1 };
        for sequence in (0..OPS.pow(length)).step_by(every) {
            let mut hive: Hive<u32, G2> = Hive::with_block_sizes(1, 2);
            let mut live: Vec<G2> = Vec::new();
            let mut issued: HashMap<G2, u32> = HashMap::new();
            let mut code = sequence;
            let mut n = 0;
            for _ in 0..length {
                let op = code % OPS;
                code /= OPS;
                match op {
                    0 | 1 => {
                        let key = hive.insert(n);
                        assert!(issued.insert(key, n).is_none(), "{key:?} issued twice");
                        live.push(key);
                        n += 1;
                    }
                    2 if !live.is_empty() => {
                        let key = live.remove(0);
                        assert_eq!(hive.remove(key), Some(issued[&key]));
                    }
                    3 if !live.is_empty() => {
                        let key = live.pop().unwrap();
                        assert_eq!(hive.remove(key), Some(issued[&key]));
                    }
                    4 => {
                        if sequence % 2 == 0 {
                            hive.clear();
                            live.clear();
                        } else {
                            hive.shrink_to_fit();
                        }
                    }
                    _ => {}
                }
                hive.check_invariants();
                for (&key, value) in &issued {
                    let expected = live.contains(&key).then_some(value);
                    assert_eq!(hive.get(key), expected, "{key:?} in sequence {sequence}");
                }
                for key in common::forged_keys::<G2>(0..8, 0..=3) {
                    let expected = live.contains(&key).then(|| &issued[&key]);
                    assert_eq!(hive.get(key), expected, "forged {key:?}");
                }
            }
        }
    }

    /// The index space ends the hive, with the error saying so: 4 index bits
    /// and ranges of 4 slots, of which the first block (2 slots) uses half.
    /// And with 2 generation bits and 1-slot blocks, churning one value
    /// retires range after range, with no key issued twice.
    #[test]
    fn index_space_and_retired_ranges() {
        let mut hive: Hive<u8, SixteenSlots> = Hive::with_block_sizes(2, 4);
        let mut n = 0;
        let err = loop {
            match hive.try_insert(n) {
                Ok(_) => n += 1,
                Err(err) => break err,
            }
        };
        assert!(err.is_index_space());
        assert_eq!(err.limit(), Some(16));
        assert_eq!(
            (hive.len(), hive.capacity(), hive.block_count()),
            (14, 14, 4)
        );
        hive.check_invariants();

        let mut g2: Hive<u8, G2> = Hive::with_block_sizes(1, 1);
        let mut seen = HashSet::new();
        for _ in 0..30 {
            let key = g2.insert(1);
            assert!(seen.insert(key), "{key:?} issued twice");
            assert_eq!(g2.remove(key), Some(1));
            g2.check_invariants();
        }
        // Three occupants per slot, then the range retires.
        assert_eq!(seen.iter().map(|k| k.index()).max(), Some(9));
        for &key in &seen {
            assert_eq!(g2.get(key), None);
        }
    }

    /// The index space the default block sizes leave unused, as the `Hive`
    /// docs state it: an `Id32` hive (2^20 indices) holds 2^20 - 17,408
    /// `u64`s (blocks of 1024, 2048 and 4096 slots in ranges of 8192) and
    /// 2^20 - 25,088 64-byte values (512 to 4096). Under Miri, two ranges:
    /// 1024 + 2048 and 512 + 1024 slots.
    #[test]
    fn default_sizes_use_the_documented_index_space() {
        fn fill<T: Copy, K: Key>(value: T) -> usize {
            let mut hive: Hive<T, K> = Hive::default();
            assert_eq!(hive.block_sizes().1, 8192);
            let err = loop {
                if let Err(err) = hive.try_insert(value) {
                    break err;
                }
            };
            assert!(err.is_index_space());
            hive.len()
        }
        if cfg!(miri) {
            assert_eq!(fill::<u64, TwoRanges>(1), 1024 + 2048);
            assert_eq!(fill::<[u64; 8], TwoRanges>([1; 8]), 512 + 1024);
        } else {
            assert_eq!(fill::<u64, Id32>(1), (1 << 20) - 17_408);
            assert_eq!(fill::<[u64; 8], Id32>([1; 8]), (1 << 20) - 25_088);
        }
    }

    /// `Index` with a stale key panics (and names the key).
    #[test]
    #[should_panic(expected = "no live value for key")]
    fn index_with_a_stale_key_panics() {
        let mut hive = Hive::new();
        let key = hive.insert(1);
        hive.remove(key);
        let _ = hive[key];
    }

    /// `Send` and `Sync` follow the value type, as for `Vec`.
    #[test]
    fn auto_traits() {
        assert_send_sync_with_iterators!(hive::Hive);
        // A mutable iterator may cross threads as `&mut T` may: with
        // `T: Send` alone.
        fn send<T: Send>() {}
        send::<handlekit::hive::IterMut<'static, std::cell::Cell<u64>>>();
    }

    /// Values narrower than the free-list link, zero-sized values and
    /// over-aligned values in the split layout (state words in one array,
    /// payloads in another): every value reads back, every `get_ptr` is
    /// aligned for its type and unchanged by churn, and freed slots are
    /// reused through the link stored in the payload.
    fn split_layout_round<T: Clone + PartialEq + std::fmt::Debug>(make: impl Fn(usize) -> T) {
        let n = if cfg!(miri) { 150 } else { 2000 };
        let mut hive: Hive<T> = Hive::with_block_sizes(4, 64);
        let keys: Vec<Id> = (0..n).map(|i| hive.insert(make(i))).collect();
        let ptrs: Vec<NonNull<T>> = keys.iter().map(|&k| hive.get_ptr(k).unwrap()).collect();
        for ptr in &ptrs {
            assert_eq!(ptr.as_ptr() as usize % std::mem::align_of::<T>(), 0);
        }
        // Free every other value, then refill: the refills take the freed
        // slots (no new block), and the survivors do not move.
        let blocks = hive.block_count();
        for &key in keys.iter().step_by(2) {
            assert!(hive.remove(key).is_some());
        }
        let refills: Vec<Id> = (0..n / 2).map(|i| hive.insert(make(n + i))).collect();
        assert_eq!(hive.block_count(), blocks, "refills reused the freed slots");
        for (i, (&key, &ptr)) in keys.iter().zip(&ptrs).enumerate().skip(1).step_by(2) {
            assert_eq!(hive.get(key), Some(&make(i)));
            assert_eq!(hive.get_ptr(key), Some(ptr), "value {i} moved");
        }
        for (i, &key) in refills.iter().enumerate() {
            assert_eq!(hive.get(key), Some(&make(n + i)));
        }
        for &key in keys.iter().step_by(2) {
            assert_eq!(hive.get(key), None, "stale key {key:?}");
        }
        assert_eq!(hive.values().count(), n);
        assert_eq!(hive.iter_mut().count(), n);
        hive.check_invariants();
    }

    #[test]
    fn split_layout_holds_narrow_zero_sized_and_over_aligned_values() {
        #[derive(Clone, PartialEq, Debug)]
        #[repr(align(64))]
        struct Line(u64);
        split_layout_round(|i| i as u8);
        split_layout_round(|_| ());
        split_layout_round(|i| i as u128);
        split_layout_round(|i| Line(i as u64));
        split_layout_round(|i| i.to_string());
    }
}

/// A key type that accepts any bits, so a generation with its top bit set
/// (which `Slot::matches` masks off) reaches the hive.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
struct LaxKey(u64);

impl Key for LaxKey {
    const INDEX_BITS: u32 = 32;
    const GENERATION_BITS: u32 = 32;
    fn from_bits(bits: u64) -> Option<Self> {
        Some(LaxKey(bits))
    }
    fn to_bits(self) -> u64 {
        self.0
    }
}

/// A forged key whose generation differs from a live one only in the top
/// bit removes that value, and the hive files the slot by the slot's own
/// generation (it used to count the slot as retired).
#[test]
fn top_bit_generation_is_filed_by_the_slot() {
    let mut hive: Hive<u32, LaxKey> = Hive::default();
    let key = hive.insert(5);
    let forged = LaxKey(key.0 | 1 << 63);
    assert_eq!(hive.remove(forged), Some(5));
    hive.check_invariants();
    assert_eq!(hive.capacity(), hive.block_sizes().0);
    let again = hive.insert(6);
    assert_eq!(again.0 & 0xffff_ffff, key.0 & 0xffff_ffff, "slot reused");
    assert!(hive.get(key).is_none());
    hive.check_invariants();
}

/// Deserializing a hive from untrusted input.
#[cfg(feature = "serde")]
mod hive_serde {
    use super::*;

    fn parse<K: Key>(json: &str) -> Result<Hive<u64, K>, String> {
        common::from_json(json)
    }

    #[test]
    fn blocks_floors_and_slots_are_loaded() {
        // G2: generations 1..=3. Block 0 (2 slots): a value and a retired
        // slot. Block 1: a freed range with floor 2. Block 2 (range 8..12):
        // one value.
        let json = r#"{"block_sizes":[2,4],"blocks":[[0,[[1,10],[3,null]]],[2,[]],[0,[[1,20]]]]}"#;
        let mut hive = parse::<G2>(json).unwrap();
        hive.check_invariants();
        assert_eq!(hive.len(), 2);
        assert_eq!(hive.retired_count(), 1);
        assert_eq!(hive.get(G2::from_parts(0, 1).unwrap()), Some(&10));
        assert_eq!(hive.get(G2::from_parts(8, 1).unwrap()), Some(&20));
        assert_eq!(hive.get(G2::from_parts(1, 3).unwrap()), None);
        assert_eq!(serde_json::to_string(&hive).unwrap(), json);
        // Block 2 holds exactly the slot the input used; block 0 is full and
        // its other slot retired, so the next value goes to a new block over
        // the freed range 4..8, above its floor.
        assert_eq!(hive.capacity(), 3 - 1);
        let key = hive.insert(30);
        assert_eq!((key.index(), key.generation()), (4, 3));
        hive.check_invariants();
    }

    #[test]
    fn malformed_input_is_rejected() {
        let refused = |json: &str, why: &str| {
            assert!(parse::<G2>(json).is_err(), "accepted {why}: {json}");
        };
        for (sizes, why) in [
            ([3, 4], "block size not a power of two"),
            ([4, 2], "smallest above largest"),
            ([0, 4], "zero block size"),
            ([2, 1u64 << 32], "block size above 2^31"),
        ] {
            refused(&format!(r#"{{"block_sizes":{sizes:?},"blocks":[]}}"#), why);
        }
        // Blocks of sizes 2 and 4 that a hive of G2 keys cannot have.
        for (blocks, why) in [
            ("[[2,[[2,5]]]]", "slot generation at its block's floor"),
            ("[[0,[[4,5]]]]", "generation past the maximum"),
            ("[[0,[[0,5]]]]", "occupied generation 0"),
            (
                "[[0,[[1,1],[1,2],[1,3]]]]",
                "more slots than the block holds",
            ),
            ("[[4,[]]]", "floor past the maximum"),
            ("[[3,[[3,null]]]]", "a block over a retired range"),
            ("[[0]]", "block without slots"),
        ] {
            refused(
                &format!(r#"{{"block_sizes":[2,4],"blocks":{blocks}}}"#),
                why,
            );
        }
        refused(
            r#"{"block_sizes":[2,4],"blocks":[],"extra":1}"#,
            "unknown field",
        );
        refused(r#"{"blocks":[]}"#, "missing block sizes");
    }

    #[test]
    fn blocks_are_bounded_by_the_index_space() {
        // SixteenSlots: 16 indices, 4 ranges of 4.
        let blocks = |n: usize| {
            let body = vec!["[0,[[1,7]]]"; n].join(",");
            format!(r#"{{"block_sizes":[4,4],"blocks":[{body}]}}"#)
        };
        let four = parse::<SixteenSlots>(&blocks(4)).unwrap();
        assert_eq!(four.len(), 4);
        four.check_invariants();
        let err = parse::<SixteenSlots>(&blocks(5)).unwrap_err();
        assert!(
            err.contains("more slots than the key type can index"),
            "{err}"
        );
    }

    /// The input names a block size of 2^31 slots but uses one: only that
    /// slot is allocated.
    #[test]
    fn a_named_block_size_allocates_nothing_by_itself() {
        let json = r#"{"block_sizes":[2147483648,2147483648],"blocks":[[0,[[1,7]]]]}"#;
        let hive = parse::<Id>(json).unwrap();
        hive.check_invariants();
        assert_eq!(hive.capacity(), 1);
        assert_eq!(hive.block_sizes(), (1 << 31, 1 << 31));
    }
}
