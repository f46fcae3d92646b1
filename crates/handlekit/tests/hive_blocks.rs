//! What only a hive does, beside the model test (`hive_model.rs`): the
//! blocks a removal empties stay until `shrink_to_fit`, a fixed hive keeps
//! its one block, a freed block's keys stay stale when another block is
//! made over its range, the index space ends the hive with an error, and
//! the split layout holds values of every size and alignment. Then the
//! stable-address churn test and an exhaustive stale-key test with 2
//! generation bits.
//!
//! Nothing here uses `serde`, so `scripts/miri.sh` runs this file in its
//! default pass only (the model test, which round-trips the hive with
//! `serde`, runs in both).

use std::collections::{HashMap, HashSet};
use std::ptr::NonNull;

use handlekit::{define_key, Hive, Id, Id32, Key};

mod common;

use common::keys::{Gen4, SixteenSlots};
use common::stale_suite::G2;

define_key! {
    /// 11 index bits: 2048 indices, the first two default blocks' ranges
    /// of `u64`s (the second cut to fit), three of 64-byte values.
    pub struct ElevenBits(u32; index_bits = 11);
}

/// Every test sits in `mod hive`, so that its name (`hive::...`) matches the
/// filter of `scripts/miri.sh hive`.
mod hive {
    use super::*;

    impl_churn!(Hive, Id;
        test: |max_block| Hive::with_block_sizes(4, max_block),
        miri: (64, 800, 4), full: (2000, 40_000, 256), shrink_phase: true);

    /// A fold that starts and ends inside a block's vacancy words, after
    /// `next` and `next_back` took slots from either end, visits exactly the
    /// live values between, in order: cut first and last words, whole words
    /// between, a part inside one word, full and empty words.
    #[test]
    fn folds_from_inside_a_word_visit_what_is_left() {
        let (len, cuts): (u64, &[usize]) = if cfg!(miri) {
            (300, &[0, 1, 63, 70])
        } else {
            (1200, &[0, 1, 2, 63, 64, 65, 127, 130, 500])
        };
        let mut hive: Hive<u64> = Hive::with_block_sizes(256, 512);
        let keys: Vec<Id> = (0..len).map(|v| hive.insert(v)).collect();
        for (v, &key) in keys.iter().enumerate() {
            // Whole vacant words (200..328), a run of full words, and
            // scattered holes.
            if v % 7 == 3 || (200..328).contains(&v) || (v > 700 && v % 2 == 0) {
                hive.remove(key);
            }
        }
        let live: Vec<u64> = hive.values().copied().collect();
        for &front in cuts {
            for &back in cuts {
                if front + back > live.len() {
                    continue;
                }
                let mut walk = hive.values();
                walk.by_ref().take(front).for_each(drop);
                for _ in 0..back {
                    walk.next_back();
                }
                let folded = walk.fold(Vec::new(), |mut seen, &v| {
                    seen.push(v);
                    seen
                });
                assert_eq!(
                    folded,
                    live[front..live.len() - back],
                    "cut {front}, {back}"
                );
            }
        }
    }

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

    /// A block that gives up its last value refills in slot order, not in
    /// the order of removal, each slot one generation on from its own last
    /// (no slot's generation jumps); a removal while it refills is reused
    /// first, and `try_insert_with_key` names the very slot it fills.
    #[test]
    fn an_emptied_block_refills_in_slot_order() {
        let mut hive: Hive<u32> = Hive::with_block_sizes(8, 8);
        let mut keys: Vec<Id> = (0..8).map(|n| hive.insert(n)).collect();
        let ptrs: Vec<_> = keys.iter().map(|&k| hive.get_ptr(k).unwrap()).collect();
        // Slot 5 goes through one more occupant, so generations differ.
        hive.remove(keys[5]);
        keys[5] = hive.insert(5);
        assert_eq!(keys[5].generation(), 2);
        for &n in &[3, 7, 0, 5, 1, 6, 2, 4] {
            assert_eq!(hive.remove(keys[n]), Some(n as u32));
            hive.check_invariants();
        }
        let mut again = Vec::new();
        for n in 0..3 {
            let key = hive.insert(100 + n as u32);
            hive.check_invariants();
            assert_eq!(hive.get_ptr(key), Some(ptrs[n]), "refill {n} out of order");
            assert_eq!(key.generation(), keys[n].generation() + 1);
            again.push(key);
        }
        // Freed during the refill: reused first, then the refill goes on.
        hive.remove(again[1]);
        hive.check_invariants();
        let reused = hive.insert(200);
        assert_eq!(hive.get_ptr(reused), Some(ptrs[1]));
        assert_eq!(reused.generation(), again[1].generation() + 1);
        let named = hive
            .try_insert_with_key(|key| Ok::<_, ()>(key.index() as u32))
            .unwrap();
        assert_eq!(hive.get_ptr(named), Some(ptrs[3]));
        assert_eq!(hive[named], named.index() as u32);
        let rest: Vec<Id> = (4..8).map(|n| hive.insert(n)).collect();
        hive.check_invariants();
        for (key, n) in rest.iter().zip(4..8) {
            assert_eq!(hive.get_ptr(*key), Some(ptrs[n]));
            assert_eq!(key.generation(), keys[n].generation() + 1);
        }
        assert_eq!(hive.len(), 8);
        assert_eq!(hive.block_count(), 1, "the refill made no block");
        for &key in &keys {
            assert_eq!(hive.get(key), None, "stale key {key:?} resolves");
        }
        assert_eq!(hive.get(again[1]), None);
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
        // The slots are reused where they were; the block emptied, so from
        // its first slot on, in slot order.
        let again = hive.insert(7);
        assert_eq!(hive.get_ptr(again), Some(ptrs[0]));
        assert_eq!(hive.get(keys[0]), None);
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
    /// slots (under Miri, after the last step), resolves iff it is live; no
    /// key is issued twice. The forged indices reach past the table (up to 12
    /// ranges, where the steps make at most 4 blocks), the never-used tail of
    /// the 1-slot block's range, and block numbers a lookup's mask folds onto
    /// a real block.
    ///
    /// Run over `u32` values and over values too large to be returned in
    /// registers, which a removal takes out of the slot after filing it
    /// (`RawHive::remove_filed_first`): every retirement and listing of a
    /// block goes through both ways.
    #[test]
    fn exhaustive_stale_keys_with_two_generation_bits() {
        exhaustive_stale_keys::<u32>(|n| n);
        exhaustive_stale_keys::<[u32; 8]>(|n| [n; 8]);
    }

    fn exhaustive_stale_keys<V: Clone + PartialEq + std::fmt::Debug>(make: fn(u32) -> V) {
        const OPS: u32 = 5;
        let length: u32 = if cfg!(miri) { 3 } else { 7 };
        // Under Miri, every third sequence: each step resolves every key
        // issued (and the last every forged key: see below).
        let every = if cfg!(miri) { 3 } else { 1 };
        for sequence in (0..OPS.pow(length)).step_by(every) {
            let mut hive: Hive<V, G2> = Hive::with_block_sizes(1, 2);
            let mut live: Vec<G2> = Vec::new();
            let mut issued: HashMap<G2, V> = HashMap::new();
            let mut code = sequence;
            let mut n = 0;
            for step in 0..length {
                let op = code % OPS;
                code /= OPS;
                match op {
                    0 | 1 => {
                        let key = hive.insert(make(n));
                        assert!(
                            issued.insert(key, make(n)).is_none(),
                            "{key:?} issued twice"
                        );
                        live.push(key);
                        n += 1;
                    }
                    2 if !live.is_empty() => {
                        let key = live.remove(0);
                        assert_eq!(hive.remove(key).as_ref(), Some(&issued[&key]));
                    }
                    3 if !live.is_empty() => {
                        let key = live.pop().unwrap();
                        assert_eq!(hive.remove(key).as_ref(), Some(&issued[&key]));
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
                // The forged keys: under Miri after the last step only (96
                // keys, three lookups each, were most of the test's time).
                if cfg!(miri) && step + 1 != length {
                    continue;
                }
                for key in common::forged_keys::<G2>(0..24, 0..=3) {
                    let mut expected = live.contains(&key).then(|| issued[&key].clone());
                    assert_eq!(hive.get(key), expected.as_ref(), "forged {key:?}");
                    assert_eq!(hive.get_mut(key), expected.as_mut(), "forged {key:?}");
                    assert_eq!(hive.contains_key(key), expected.is_some());
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

    /// The default block sizes use the whole index space, as the `Hive`
    /// docs state: an `Id32` hive (2^20 indices) holds 2^20 `u64`s (blocks
    /// of 1024, 2048, 4096, then 8192 slots, the last cut to fit) and 2^20
    /// 64-byte values (from 512). Under Miri, 11 index bits: 1024 + 1024
    /// and 512 + 1024 + 512 slots (each insertion costs there, and 12 bits
    /// took 25 s of its clock).
    #[test]
    fn default_sizes_use_the_whole_index_space() {
        fn fill<T: Copy, K: Key>(value: T) -> usize {
            let mut hive: Hive<T, K> = Hive::default();
            assert_eq!(hive.block_sizes().1, 8192);
            let err = loop {
                if let Err(err) = hive.try_insert(value) {
                    break err;
                }
            };
            assert!(err.is_index_space());
            hive.check_invariants();
            hive.len()
        }
        if cfg!(miri) {
            assert_eq!(fill::<u64, ElevenBits>(1), 1 << 11);
            assert_eq!(fill::<[u64; 8], ElevenBits>([1; 8]), 1 << 11);
        } else {
            assert_eq!(fill::<u64, Id32>(1), 1 << 20);
            assert_eq!(fill::<[u64; 8], Id32>([1; 8]), 1 << 20);
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
        // Under Miri, 64: still five blocks (4 to 64 slots), the last in
        // part, for each of the five types.
        let n = if cfg!(miri) { 64 } else { 2000 };
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
