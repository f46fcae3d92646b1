//! Model test: `Hive` against a `HashMap<K, u64>`.
//!
//! A random sequence of operations runs on a hive and on the model. Every
//! key the hive ever issued is kept; after each operation every one of them
//! must resolve exactly as the model says (a removed value's key must miss,
//! even after its block was freed and another block made over its range),
//! no key may be issued twice, forged keys must resolve only to the value
//! the model has under them, and the hive's invariant checker must pass.
//! The address of every live value, recorded when it was inserted, must not
//! change until it is removed, and must read the right value.
//!
//! The same body runs for `Id`, `Id32` and a key with 4 generation bits
//! (where slots retire constantly), with block sizes from 1 to 64 and fixed capacities below 80.
//! Then: the stable-address churn test, an exhaustive stale-key test with 2
//! generation bits, and the index-space limit.

use std::collections::{HashMap, HashSet};
use std::ptr::NonNull;

use handlekit::{define_key, Hive, Id, Id32, Key};
use proptest::prelude::*;
use proptest::sample::Index as Pick;
use proptest::test_runner::Config;

mod common;

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

/// Every test sits in `mod hive`, so that its name (`hive::...`) matches the
/// filter of `scripts/miri.sh hive`.
mod hive {
    use super::*;
    use common::iter_check::check_double_ended;

    const CASES: u32 = if cfg!(miri) { 2 } else { 256 };
    const MAX_OPS: usize = if cfg!(miri) { 8 } else { 200 };

    #[derive(Clone, Copy, Debug)]
    enum Src {
        Live(Pick),
        Any(Pick),
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(u64),
        TryInsert(u64),
        InsertWithKey(u64),
        Extend(Vec<u64>),
        Remove(Src),
        /// Insert and remove again, this many times.
        Churn(u64),
        /// Remove a run of live values (in key order), emptying blocks.
        RemoveRun(Pick, usize),
        Get(Pick),
        GetForgedBits(u64),
        GetForgedParts(usize, u32),
        /// Overwrite a live value through `get_mut` (false) or `IndexMut`
        /// (true).
        GetMut(Pick, u64, bool),
        GetDisjoint(Pick, Pick),
        /// Write a live value through the pointer recorded at insertion.
        WriteThroughPtr(Pick, u64),
        Clear,
        ShrinkToFit,
        Reserve(usize),
        Retain(u64),
        Drain(usize),
        Clone,
        /// A serde round trip (a no-op without the `serde` feature).
        SerdeRoundTrip,
        IntoIter,
        Iter(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        let src = || {
            prop_oneof![
                3 => any::<Pick>().prop_map(Src::Live),
                1 => any::<Pick>().prop_map(Src::Any),
            ]
        };
        prop_oneof![
            20 => (0u64..1000).prop_map(Op::Insert),
            4 => (0u64..1000).prop_map(Op::TryInsert),
            3 => (0u64..1000).prop_map(Op::InsertWithKey),
            3 => prop::collection::vec(0u64..1000, 0..70).prop_map(Op::Extend),
            14 => src().prop_map(Op::Remove),
            2 => (1u64..40).prop_map(Op::Churn),
            3 => (any::<Pick>(), 1usize..40).prop_map(|(p, n)| Op::RemoveRun(p, n)),
            5 => any::<Pick>().prop_map(Op::Get),
            2 => any::<u64>().prop_map(Op::GetForgedBits),
            3 => (0usize..300, 0u32..20).prop_map(|(i, g)| Op::GetForgedParts(i, g)),
            4 => (any::<Pick>(), 0u64..1000, any::<bool>()).prop_map(|(p, v, b)| Op::GetMut(p, v, b)),
            2 => (any::<Pick>(), any::<Pick>()).prop_map(|(a, b)| Op::GetDisjoint(a, b)),
            3 => (any::<Pick>(), 0u64..1000).prop_map(|(p, v)| Op::WriteThroughPtr(p, v)),
            1 => Just(Op::Clear),
            1 => Just(Op::ShrinkToFit),
            1 => (0usize..100).prop_map(Op::Reserve),
            2 => (1u64..5).prop_map(Op::Retain),
            1 => (0usize..5).prop_map(Op::Drain),
            1 => Just(Op::Clone),
            1 => Just(Op::SerdeRoundTrip),
            1 => Just(Op::IntoIter),
            3 => (0usize..8).prop_map(Op::Iter),
        ]
    }

    fn config() -> Config {
        Config {
            cases: CASES,
            failure_persistence: None,
            ..Config::default()
        }
    }

    struct Harness<K: Key> {
        hive: Hive<u64, K>,
        model: HashMap<K, u64>,
        /// Every key ever issued.
        issued: HashSet<K>,
        /// The address of every live value, recorded at insertion.
        ptrs: HashMap<K, NonNull<u64>>,
    }

    impl<K: Key + std::hash::Hash> Harness<K> {
        fn new(setup: Setup) -> Self {
            Harness {
                hive: match setup {
                    Setup::Sizes(min, max) => Hive::with_block_sizes(min, max),
                    // Within the key's index space (16 slots for
                    // `SixteenSlots`); past it the constructor panics.
                    Setup::Fixed(capacity) => {
                        Hive::with_fixed_capacity(capacity.min(1 << K::INDEX_BITS.min(32)))
                    }
                },
                model: HashMap::new(),
                issued: HashSet::new(),
                ptrs: HashMap::new(),
            }
        }

        /// Live keys in key-index order (the documented iteration order).
        fn live_keys(&self) -> Vec<K> {
            let mut keys: Vec<K> = self.model.keys().copied().collect();
            keys.sort_by_key(|k| k.index());
            keys
        }

        fn pick_live(&self, pick: Pick) -> Option<K> {
            let keys = self.live_keys();
            (!keys.is_empty()).then(|| keys[pick.index(keys.len())])
        }

        fn pick_any(&self, pick: Pick) -> Option<K> {
            let mut keys: Vec<K> = self.issued.iter().copied().collect();
            keys.sort_by_key(|k| (k.index(), k.generation()));
            (!keys.is_empty()).then(|| keys[pick.index(keys.len())])
        }

        fn inserted(&mut self, key: K, value: u64) {
            assert!(self.issued.insert(key), "{key:?} issued twice");
            assert!(self.model.insert(key, value).is_none());
            let ptr = self.hive.get_ptr(key).expect("a new key resolves");
            self.ptrs.insert(key, ptr);
        }

        fn removed(&mut self, key: K, got: Option<u64>) {
            assert_eq!(got, self.model.remove(&key), "remove {key:?}");
            self.ptrs.remove(&key);
        }

        /// Serializes and deserializes the hive and continues with the
        /// result: same keys, values, block sizes and retired slots; `check`
        /// then finds every stale key still stale.
        #[cfg(feature = "serde")]
        fn serde_round_trip(&mut self) {
            let json = serde_json::to_string(&self.hive).unwrap();
            let back: Hive<u64, K> = serde_json::from_str(&json).unwrap();
            back.check_invariants();
            assert_eq!(back, self.hive);
            assert_eq!(back.block_sizes(), self.hive.block_sizes());
            assert_eq!(back.retired_count(), self.hive.retired_count());
            assert!(back.capacity() <= self.hive.capacity());
            assert_eq!(serde_json::to_string(&back).unwrap(), json);
            self.hive = back;
            self.rerecord();
        }

        #[cfg(not(feature = "serde"))]
        fn serde_round_trip(&mut self) {}

        /// Records the address of every live value again (the values moved
        /// to a new hive).
        fn rerecord(&mut self) {
            self.ptrs = common::addresses(self.live_keys(), |k| self.hive.get_ptr(k));
        }

        fn check(&self) {
            self.hive.check_invariants();
            assert_eq!(self.hive.len(), self.model.len());
            assert_eq!(self.hive.is_empty(), self.model.is_empty());
            assert!(self.hive.capacity() >= self.hive.len());
            if let Some(capacity) = self.hive.fixed_capacity() {
                assert!(self.hive.block_count() <= 1, "a fixed hive grew");
                assert!(self.hive.capacity() <= capacity);
            }
            for &key in &self.issued {
                let expected = self.model.get(&key);
                assert_eq!(self.hive.get(key), expected, "get {key:?}");
                assert_eq!(self.hive.contains_key(key), expected.is_some());
                match expected {
                    Some(&value) => {
                        let ptr = self.ptrs[&key];
                        assert_eq!(self.hive.get_ptr(key), Some(ptr), "{key:?} moved");
                        // SAFETY: the value is live and no reference into the
                        // hive is.
                        assert_eq!(unsafe { *ptr.as_ptr() }, value);
                    }
                    None => assert_eq!(self.hive.get_ptr(key), None),
                }
            }
            let seen: Vec<(K, u64)> = self.hive.iter().map(|(k, v)| (k, *v)).collect();
            let expected: Vec<(K, u64)> = self
                .live_keys()
                .into_iter()
                .map(|k| (k, self.model[&k]))
                .collect();
            assert_eq!(seen, expected, "iteration in key-index order");
        }

        fn forged(&self, key: K) {
            let expected = self.model.get(&key);
            assert_eq!(self.hive.get(key), expected);
            assert_eq!(self.hive.contains_key(key), expected.is_some());
            assert_eq!(self.hive.get_ptr(key).is_some(), expected.is_some());
        }

        fn insert_result(&mut self, result: Result<K, handlekit::CapacityError>, value: u64) {
            match result {
                Ok(key) => self.inserted(key, value),
                Err(err) if err.is_fixed_capacity() => {
                    let capacity = self.hive.fixed_capacity().expect("a fixed hive");
                    assert_eq!(err.limit(), Some(capacity));
                    assert_eq!(self.hive.len(), self.hive.capacity(), "refused with room");
                }
                Err(err) => assert!(err.is_index_space(), "{err}"),
            }
        }

        fn apply(&mut self, op: Op) {
            match op {
                Op::Insert(v) | Op::TryInsert(v) => {
                    let result = self.hive.try_insert(v);
                    self.insert_result(result, v);
                }
                Op::InsertWithKey(v) => {
                    if self.hive.try_reserve(1).is_err() {
                        return; // out of index space (`SixteenSlots`)
                    }
                    let mut seen = None;
                    let key = self.hive.insert_with_key(|k| {
                        seen = Some(k);
                        v + k.index() as u64
                    });
                    assert_eq!(seen, Some(key));
                    self.inserted(key, v + key.index() as u64);
                }
                Op::Extend(values) => {
                    if self.hive.try_reserve(values.len()).is_err() {
                        return;
                    }
                    let before: HashSet<K> = self.hive.keys().collect();
                    self.hive.extend(values.iter().copied());
                    let new: Vec<K> = self.hive.keys().filter(|k| !before.contains(k)).collect();
                    assert_eq!(new.len(), values.len());
                    for key in new {
                        let value = self.hive[key];
                        self.inserted(key, value);
                    }
                }
                Op::Remove(src) => {
                    let key = match src {
                        Src::Live(p) => self.pick_live(p),
                        Src::Any(p) => self.pick_any(p),
                    };
                    if let Some(key) = key {
                        let got = self.hive.remove(key);
                        self.removed(key, got);
                    }
                }
                Op::Churn(n) => {
                    for v in 0..n {
                        let Ok(key) = self.hive.try_insert(v) else {
                            return;
                        };
                        self.inserted(key, v);
                        let got = self.hive.remove(key);
                        self.removed(key, got);
                    }
                }
                Op::RemoveRun(p, n) => {
                    let keys = self.live_keys();
                    if !keys.is_empty() {
                        let from = p.index(keys.len());
                        for &key in keys[from..].iter().take(n) {
                            let got = self.hive.remove(key);
                            self.removed(key, got);
                        }
                    }
                }
                Op::Get(p) => {
                    if let Some(key) = self.pick_any(p) {
                        self.forged(key);
                    }
                }
                Op::GetForgedBits(bits) => {
                    if let Some(key) = K::from_bits(bits as _) {
                        self.forged(key);
                    }
                }
                Op::GetForgedParts(index, generation) => {
                    if let Some(key) = K::from_parts(index, generation) {
                        self.forged(key);
                    }
                }
                Op::GetMut(p, v, by_index) => {
                    if let Some(key) = self.pick_live(p) {
                        if by_index {
                            self.hive[key] = v;
                        } else {
                            *self.hive.get_mut(key).unwrap() = v;
                        }
                        self.model.insert(key, v);
                    }
                }
                Op::GetDisjoint(a, b) => {
                    if let (Some(a), Some(b)) = (self.pick_any(a), self.pick_any(b)) {
                        let both_live = self.model.contains_key(&a) && self.model.contains_key(&b);
                        match self.hive.get_disjoint_mut([a, b]) {
                            Some([x, y]) => {
                                assert!(both_live && a != b);
                                std::mem::swap(x, y);
                                let (va, vb) = (self.model[&a], self.model[&b]);
                                self.model.insert(a, vb);
                                self.model.insert(b, va);
                            }
                            None => assert!(!both_live || a == b),
                        }
                    }
                }
                Op::WriteThroughPtr(p, v) => {
                    if let Some(key) = self.pick_live(p) {
                        // SAFETY: the value is live and no reference into the
                        // hive is.
                        unsafe { *self.ptrs[&key].as_ptr() = v };
                        self.model.insert(key, v);
                    }
                }
                Op::Clear => {
                    let (blocks, capacity) = (self.hive.block_count(), self.hive.capacity());
                    self.hive.clear();
                    self.model.clear();
                    self.ptrs.clear();
                    // Blocks that can take a value stay; only those whose
                    // every slot retired go (slots at their last generation
                    // retire as they are cleared).
                    assert!(self.hive.block_count() <= blocks);
                    assert!(self.hive.capacity() <= capacity);
                    if K::GENERATION_BITS >= 16 {
                        assert_eq!(
                            (self.hive.block_count(), self.hive.capacity()),
                            (blocks, capacity)
                        );
                    }
                }
                Op::ShrinkToFit => {
                    let (blocks, capacity) = (self.hive.block_count(), self.hive.capacity());
                    self.hive.shrink_to_fit();
                    if self.hive.fixed_capacity().is_some() {
                        assert_eq!(
                            self.hive.block_count(),
                            blocks,
                            "a fixed hive keeps its block"
                        );
                        assert_eq!(self.hive.capacity(), capacity);
                    } else {
                        let max = self.hive.block_sizes().1;
                        assert!(
                            self.hive.capacity()
                                < self.hive.len() + max * self.hive.block_count().max(1)
                        );
                    }
                }
                Op::Reserve(n) => {
                    if self.hive.try_reserve(n).is_ok() {
                        assert!(self.hive.capacity() - self.hive.len() >= n);
                    }
                }
                Op::Retain(m) => {
                    let mut visited = Vec::new();
                    self.hive.retain(|k, v| {
                        visited.push(k);
                        *v += 1;
                        *v % m != 0
                    });
                    assert_eq!(visited, self.live_keys(), "retain visits in key order");
                    for key in visited {
                        let v = self.model[&key] + 1;
                        if v % m == 0 {
                            self.model.remove(&key);
                            self.ptrs.remove(&key);
                        } else {
                            self.model.insert(key, v);
                        }
                    }
                }
                Op::Drain(take) => {
                    let expected: Vec<(K, u64)> = self
                        .live_keys()
                        .into_iter()
                        .map(|k| (k, self.model[&k]))
                        .collect();
                    let mut drain = self.hive.drain();
                    assert_eq!(drain.len(), expected.len());
                    let got: Vec<(K, u64)> = drain.by_ref().take(take).collect();
                    drop(drain);
                    assert_eq!(got[..], expected[..take.min(expected.len())]);
                    self.model.clear();
                    self.ptrs.clear();
                }
                Op::Clone => {
                    let copy = self.hive.clone();
                    assert_eq!(copy, self.hive);
                    assert_eq!(copy.fixed_capacity(), self.hive.fixed_capacity());
                    assert_eq!(copy.capacity(), self.hive.capacity());
                    assert_eq!(copy.block_count(), self.hive.block_count());
                    assert_eq!(copy.retired_count(), self.hive.retired_count());
                    // The copy issues the same next key.
                    let (mut probe, mut original) = (copy.clone(), self.hive.clone());
                    match (probe.try_insert(0), original.try_insert(0)) {
                        (Ok(a), Ok(b)) => assert_eq!(a, b),
                        (a, b) => assert!(a.is_err() && b.is_err()),
                    }
                    self.hive = copy;
                    self.rerecord();
                }
                Op::SerdeRoundTrip => self.serde_round_trip(),
                Op::IntoIter => {
                    let hive = std::mem::take(&mut self.hive);
                    let copy = hive.clone();
                    let all: Vec<(K, u64)> = hive.into_iter().collect();
                    let expected: Vec<(K, u64)> = self
                        .live_keys()
                        .into_iter()
                        .map(|k| (k, self.model[&k]))
                        .collect();
                    assert_eq!(all, expected);
                    // Continue with the clone (same keys), at new addresses.
                    self.hive = copy;
                    self.rerecord();
                }
                Op::Iter(split) => self.check_iterators(split),
            }
        }

        fn check_iterators(&mut self, split: usize) {
            let expected: Vec<(K, u64)> = self
                .live_keys()
                .into_iter()
                .map(|k| (k, self.model[&k]))
                .collect();
            // `next` for a while, then `fold` for the rest.
            let mut iter = self.hive.iter();
            let mut got: Vec<(K, u64)> = iter.by_ref().take(split).map(|(k, v)| (k, *v)).collect();
            assert_eq!(iter.len(), expected.len() - got.len());
            got = iter.fold(got, |mut acc, (k, v)| {
                acc.push((k, *v));
                acc
            });
            assert_eq!(got, expected);
            let seed = split as u64 * 7 + expected.len() as u64;
            let hive = &self.hive;
            check_double_ended(|| hive.iter().map(|(k, v)| (k, *v)), &expected, seed);
            let expected_keys: Vec<K> = expected.iter().map(|e| e.0).collect();
            check_double_ended(|| hive.keys(), &expected_keys, seed + 1);
            let expected_values: Vec<u64> = expected.iter().map(|e| e.1).collect();
            check_double_ended(|| hive.values().copied(), &expected_values, seed + 2);
            #[cfg(all(feature = "rayon", not(miri)))]
            {
                use rayon::prelude::*;
                let par: Vec<(K, u64)> = self.hive.par_iter().map(|(k, v)| (k, *v)).collect();
                assert_eq!(par, expected);
                let remaining = format!("ParEntries {{ remaining: {} }}", expected.len());
                assert_eq!(format!("{:?}", self.hive.par_iter()), remaining);
                self.hive.par_iter_mut().for_each(|(_, v)| *v += 4);
            }
            let par_bump = if cfg!(all(feature = "rayon", not(miri))) {
                4
            } else {
                0
            };
            let keys: Vec<K> = self.hive.keys().collect();
            assert_eq!(keys, expected.iter().map(|e| e.0).collect::<Vec<_>>());
            let values: Vec<u64> = self.hive.values().copied().collect();
            assert_eq!(
                values,
                expected.iter().map(|e| e.1 + par_bump).collect::<Vec<_>>()
            );
            let mut sum = 0;
            self.hive.values().for_each(|v| sum += v);
            assert_eq!(sum, expected.iter().map(|e| e.1 + par_bump).sum::<u64>());
            assert_eq!(self.hive.values().count(), expected.len());
            for (i, (_, v)) in self.hive.iter_mut().enumerate() {
                if i % 2 == 0 {
                    *v += 1;
                }
            }
            for v in self.hive.values_mut().skip(split) {
                *v += 2;
            }
            for (i, &(key, value)) in expected.iter().enumerate() {
                let bump = par_bump + u64::from(i % 2 == 0) + if i >= split { 2 } else { 0 };
                self.model.insert(key, value + bump);
            }
            let listed: Vec<(K, &u64)> = self.hive.iter().collect();
            assert_eq!(format!("{:?}", self.hive.iter()), format!("{listed:?}"));
        }
    }

    /// How the hive under test is made.
    #[derive(Clone, Copy, Debug)]
    enum Setup {
        /// `with_block_sizes(min, max)`.
        Sizes(usize, usize),
        /// `with_fixed_capacity`: inserts past it must fail, and the one
        /// block must stay.
        Fixed(usize),
    }

    fn run<K: Key + std::hash::Hash>(setup: Setup, ops: Vec<Op>) {
        let mut harness = Harness::<K>::new(setup);
        harness.check();
        for op in ops {
            harness.apply(op);
            harness.check();
        }
    }

    fn setup() -> impl Strategy<Value = Setup> {
        prop_oneof![
            Just(Setup::Sizes(1, 1)),
            Just(Setup::Sizes(1, 4)),
            Just(Setup::Sizes(2, 16)),
            Just(Setup::Sizes(64, 64)),
            (0usize..80).prop_map(Setup::Fixed),
        ]
    }

    macro_rules! model_tests {
        ($($name:ident: $key:ty;)*) => {
            proptest! {
                #![proptest_config(config())]
                $(
                    #[test]
                    fn $name(
                        setup in setup(),
                        ops in prop::collection::vec(op(), 0..MAX_OPS),
                    ) {
                        run::<$key>(setup, ops);
                    }
                )*
            }
        };
    }

    model_tests! {
        id: Id;
        id32: Id32;
        gen4: Gen4;
        sixteen_slots: SixteenSlots;
    }

    /// The stable-address test of issue 5 (`common/churn.rs`): record
    /// `get_ptr` for many elements, then insert and remove heavily, growing by
    /// several blocks; every live element must keep its address and value.
    #[test]
    fn addresses_survive_heavy_churn() {
        let (initial, rounds, max_block) = if cfg!(miri) {
            (64, 800, 4)
        } else {
            (2000, 40_000, 256)
        };
        common::churn::addresses_survive_heavy_churn(
            Hive::with_block_sizes(4, max_block),
            initial,
            rounds,
            true,
        );
    }

    impl_churn!(Hive, Id);

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
        for sequence in 0..OPS.pow(length) {
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
                for index in 0..8 {
                    for generation in 0..=3 {
                        let Some(key) = G2::from_parts(index, generation) else {
                            continue;
                        };
                        let expected = live.contains(&key).then(|| &issued[&key]);
                        assert_eq!(hive.get(key), expected, "forged {key:?}");
                    }
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
        fn send_sync<T: Send + Sync>() {}
        send_sync::<Hive<u64>>();
        send_sync::<handlekit::hive::Iter<'static, u64>>();
        send_sync::<handlekit::hive::IterMut<'static, u64>>();
        send_sync::<handlekit::hive::IntoIter<u64>>();
        send_sync::<handlekit::hive::Drain<'static, u64>>();
        #[cfg(feature = "rayon")]
        {
            send_sync::<handlekit::hive::ParIter<'static, u64>>();
            send_sync::<handlekit::hive::ParIterMut<'static, u64>>();
        }
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
        for (json, why) in [
            (
                r#"{"block_sizes":[3,4],"blocks":[]}"#,
                "block size not a power of two",
            ),
            (
                r#"{"block_sizes":[4,2],"blocks":[]}"#,
                "smallest above largest",
            ),
            (r#"{"block_sizes":[0,4],"blocks":[]}"#, "zero block size"),
            (
                r#"{"block_sizes":[2,4294967296],"blocks":[]}"#,
                "block size above 2^31",
            ),
            (
                r#"{"block_sizes":[2,4],"blocks":[[2,[[2,5]]]]}"#,
                "slot generation at its block's floor",
            ),
            (
                r#"{"block_sizes":[2,4],"blocks":[[0,[[4,5]]]]}"#,
                "generation past the maximum",
            ),
            (
                r#"{"block_sizes":[2,4],"blocks":[[0,[[0,5]]]]}"#,
                "occupied generation 0",
            ),
            (
                r#"{"block_sizes":[2,4],"blocks":[[0,[[1,1],[1,2],[1,3]]]]}"#,
                "more slots than the block holds",
            ),
            (
                r#"{"block_sizes":[2,4],"blocks":[[4,[]]]}"#,
                "floor past the maximum",
            ),
            (
                r#"{"block_sizes":[2,4],"blocks":[[3,[[3,null]]]]}"#,
                "a block over a retired range",
            ),
            (
                r#"{"block_sizes":[2,4],"blocks":[],"extra":1}"#,
                "unknown field",
            ),
            (r#"{"blocks":[]}"#, "missing block sizes"),
            (
                r#"{"block_sizes":[2,4],"blocks":[[0]]}"#,
                "block without slots",
            ),
        ] {
            assert!(parse::<G2>(json).is_err(), "accepted {why}: {json}");
        }
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
