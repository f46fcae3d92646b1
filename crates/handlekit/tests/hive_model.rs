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
//! fixed capacity; with `serde`, it round-trips the hive, and loads of
//! untrusted input are checked. The hive's own tests without a model
//! (blocks, index space, layout, churn, exhaustive stale keys) are in
//! `hive_blocks.rs`.

use std::collections::HashMap;

use handlekit::iter::HiveBlocks;
use handlekit::{Hive, Id, Id32, Key};
use proptest::prelude::*;

mod common;

use common::keys::{Gen4, SixteenSlots};
use common::model_suite::{Copied, Harness, MaybeSerde, ModelTable, Watch};
use common::stable_model::StableModel;

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
}

/// Deserializing a hive from untrusted input.
#[cfg(feature = "serde")]
mod hive_serde {
    use super::*;
    use common::stale_suite::G2;

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

    /// What the loaded hive keeps for the index space the input names is
    /// taken from an allowance that grows with the input: blocks of 64 up
    /// to 2^20 slots, all freed, name up to 2^20 indices a block in a few
    /// bytes (192 KiB of chunk directory), and thirty of them are refused;
    /// a hive's own freed ranges load, keep their keys stale, and are made
    /// again over their floors.
    #[test]
    fn the_index_space_an_input_names_is_bounded() {
        let freed = |n: usize| {
            let body = vec!["[5,[]]"; n].join(",");
            format!(r#"{{"block_sizes":[64,1048576],"blocks":[{body}]}}"#)
        };
        // Under Miri, fewer blocks: the refused input builds a megabyte of
        // directory before the block that passes the allowance, and the
        // accepted one costs with every index it names (8 blocks name
        // 16,320; 10 named 65,472, and took 19 s of Miri's clock to load
        // and check).
        let (accepted, refused) = common::scaled((8, 12), (16, 30));
        let few = parse::<Id>(&freed(accepted)).unwrap();
        few.check_invariants();
        assert_eq!((few.len(), few.capacity()), (0, 0));
        if !cfg!(miri) {
            let err = parse::<Id>(&freed(refused)).unwrap_err();
            assert!(err.contains("more bookkeeping"), "{err}");
        }

        // Under Miri, 2,100 values: still both default blocks (1024 and
        // 2048 slots), the second made again in full and the first in part.
        let n: usize = common::scaled(2_100, 100_000);
        let mut hive: Hive<u64> = Hive::new();
        let keys: Vec<Id> = (0..n as u64).map(|i| hive.insert(i)).collect();
        hive.clear();
        hive.shrink_to_fit();
        assert_eq!(hive.block_count(), 0);
        let json = serde_json::to_string(&hive).unwrap();
        let mut loaded: Hive<u64> = common::from_json(&json).unwrap();
        loaded.check_invariants();
        for &key in keys.iter().step_by(97) {
            assert_eq!(loaded.get(key), None, "{key:?}");
            assert!(!loaded.contains_key(key));
        }
        // Made again over the freed ranges (the last freed is reused
        // first), every slot above its floor: no old key matches.
        let again: Vec<Id> = (0..n as u64).map(|i| loaded.insert(i)).collect();
        loaded.check_invariants();
        assert!(again
            .iter()
            .all(|key| key.index() < n.next_multiple_of(8192)));
        for &key in keys.iter().step_by(97) {
            assert_eq!(loaded.get(key), None, "{key:?}");
        }
    }

    /// The input names a block size of 2^31 slots but uses one: only that
    /// slot is allocated.
    #[test]
    fn a_named_block_size_allocates_nothing_by_itself() {
        // Under Miri, 2^20: the hive's directory of chunks still covers the
        // named size (about 30 million instructions of a debug build at
        // 2^31, 70 s of Miri's clock).
        let shift = common::scaled(20, 31);
        let size = 1u64 << shift;
        let json = format!(r#"{{"block_sizes":[{size},{size}],"blocks":[[0,[[1,7]]]]}}"#);
        let hive = parse::<Id>(&json).unwrap();
        hive.check_invariants();
        assert_eq!(hive.capacity(), 1);
        assert_eq!(hive.block_sizes(), (1 << shift, 1 << shift));
    }
}
