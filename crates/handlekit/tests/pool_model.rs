//! Model test: `Pool` against a `HashMap<K, u64>` and a reference free list.
//!
//! A random sequence of operations runs on a pool and on the model. Every key
//! the pool ever issued is kept; after each operation every one of them must
//! resolve exactly as the model says, no key may be issued twice, and the
//! pool's invariant checker must pass. Beyond the map semantics:
//!
//! - a reference free list (a stack of freed slots, then the next unused
//!   slot, then a new block; `clear` lists the free slots lowest first)
//!   predicts the exact key of every insertion, and the retired count;
//! - the address of every live value, recorded when it was inserted, must
//!   not change until it is removed, and must read the right value: the
//!   `get_ptr` guarantee;
//! - a fixed-capacity pool must never add a block, and a growable one has
//!   exactly as many blocks as the slots it has used need.
//!
//! The same body runs for `PoolKey`, `Id32` and a key with 4 generation bits
//! (where slots retire constantly), with block sizes 1, 4 and 64 and
//! (sometimes) a fixed capacity.

use std::collections::{HashMap, HashSet};
use std::ptr::NonNull;

use handlekit::{define_key, Id32, Key, Pool, PoolKey};
use proptest::prelude::*;
use proptest::sample::Index as Pick;
use proptest::test_runner::Config;

mod common;

use common::iter_check::check_double_ended;

define_key! {
    /// 28 index bits, 4 generation bits: a slot retires after 15 occupants.
    pub struct Gen4(u32; index_bits = 28);
}

const CASES: u32 = if cfg!(miri) { 2 } else { 256 };
const MAX_OPS: usize = if cfg!(miri) { 12 } else { 200 };

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
    Get(Pick),
    GetStale(Pick),
    GetForgedBits(u64),
    GetForgedParts(usize, u32),
    /// Overwrite a live value through `get_mut` (false) or `IndexMut`
    /// (true).
    GetMut(Pick, u64, bool),
    /// Write a live value through the pointer recorded at insertion.
    WriteThroughPtr(Pick, u64),
    Clear,
    Retain(u64),
    Drain(usize),
    Clone,
    /// A serde round trip (a no-op without the `serde` feature).
    SerdeRoundTrip,
    /// `try_reserve(n)`.
    Reserve(usize),
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
        5 => any::<Pick>().prop_map(Op::Get),
        5 => any::<Pick>().prop_map(Op::GetStale),
        2 => any::<u64>().prop_map(Op::GetForgedBits),
        3 => (0usize..300, 0u32..20).prop_map(|(i, g)| Op::GetForgedParts(i, g)),
        4 => (any::<Pick>(), 0u64..1000, any::<bool>()).prop_map(|(p, v, b)| Op::GetMut(p, v, b)),
        3 => (any::<Pick>(), 0u64..1000).prop_map(|(p, v)| Op::WriteThroughPtr(p, v)),
        1 => Just(Op::Clear),
        2 => (1u64..5).prop_map(Op::Retain),
        1 => (0usize..5).prop_map(Op::Drain),
        1 => Just(Op::Clone),
        1 => Just(Op::SerdeRoundTrip),
        2 => (0usize..150).prop_map(Op::Reserve),
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

/// The documented allocation order, written plainly: reuse the most
/// recently freed slot, else the next never-used slot, else a new block.
struct Reference {
    /// Generation of every slot used so far (index = flat index).
    generations: Vec<u32>,
    /// Free slots; the last is reused first.
    free: Vec<usize>,
    retired: usize,
    /// Slots in the blocks allocated so far.
    slots: usize,
    block_size: usize,
    fixed: Option<usize>,
    max_generation: u32,
    /// The lowest number of vacant used slots since the free list was
    /// last rebuilt in index order.
    vacant_low: usize,
}

impl Reference {
    /// Vacant used slots: on the free list or retired.
    fn vacant(&self) -> usize {
        self.free.len() + self.retired
    }

    fn insert(&mut self) -> Option<(usize, u32)> {
        let used = self.generations.len();
        // Refilling an empty pool first puts the list back in index order,
        // lowest on top, if the vacant count rose by at least half the used
        // slots since the last rebuild.
        if !self.free.is_empty() && self.vacant() == used && used - self.vacant_low >= used / 2 {
            self.clear([]);
        }
        if let Some(index) = self.free.pop() {
            self.vacant_low = self.vacant_low.min(self.vacant());
            self.generations[index] += 1;
            return Some((index, self.generations[index]));
        }
        if self.generations.len() == self.slots {
            if self.fixed.is_some() {
                return None;
            }
            self.slots += self.block_size;
        }
        self.generations.push(1);
        Some((self.generations.len() - 1, 1))
    }

    fn remove(&mut self, index: usize) {
        if self.generations[index] >= self.max_generation {
            self.retired += 1;
        } else {
            self.free.push(index);
        }
    }

    /// `try_reserve(additional)`: blocks are added after the others (not
    /// used until the blocks before them are) until that many more values
    /// fit; a fixed pool refuses if they do not.
    fn reserve(&mut self, additional: usize) -> bool {
        let room = |r: &Self| r.free.len() + (r.slots - r.generations.len());
        if self.fixed.is_some() {
            return room(self) >= additional;
        }
        while room(self) < additional {
            self.slots += self.block_size;
        }
        true
    }

    /// `clear`: every live slot is freed, then the list is rebuilt with the
    /// lowest index on top.
    fn clear(&mut self, live: impl IntoIterator<Item = usize>) {
        for index in live {
            self.remove(index);
        }
        self.free = (0..self.generations.len())
            .rev()
            .filter(|&i| self.generations[i] < self.max_generation)
            .collect();
        self.vacant_low = self.vacant();
    }
}

struct Harness<K: Key> {
    pool: Pool<u64, K>,
    model: HashMap<K, u64>,
    /// The address of every live value, recorded at insertion.
    ptrs: HashMap<K, NonNull<u64>>,
    issued: Vec<K>,
    issued_set: HashSet<K>,
    reference: Reference,
}

impl<K: Key> Harness<K> {
    fn new(block_size: usize, fixed: Option<usize>) -> Self {
        let pool = match fixed {
            Some(capacity) => Pool::with_fixed_capacity(capacity),
            None => Pool::with_block_size(block_size),
        };
        let block_size = pool.block_size();
        if let Some(capacity) = fixed {
            assert_eq!(pool.capacity(), capacity);
            assert_eq!(pool.fixed_capacity(), Some(capacity));
            assert_eq!(pool.block_count(), usize::from(capacity > 0));
            assert!(block_size >= capacity);
        }
        Harness {
            pool,
            model: HashMap::new(),
            ptrs: HashMap::new(),
            issued: Vec::new(),
            issued_set: HashSet::new(),
            reference: Reference {
                generations: Vec::new(),
                free: Vec::new(),
                retired: 0,
                slots: fixed.unwrap_or(0),
                block_size,
                fixed,
                max_generation: K::MAX_GENERATION,
                vacant_low: 0,
            },
        }
    }

    /// Records a key the pool just issued for `value`, and checks it is the
    /// one the reference predicted.
    fn issue(&mut self, key: K, value: u64, predicted: Option<(usize, u32)>) {
        assert_eq!(
            Some((key.index(), key.generation())),
            predicted,
            "issued key {key:?}"
        );
        assert!(self.issued_set.insert(key), "key {key:?} issued twice");
        self.issued.push(key);
        assert_eq!(self.model.insert(key, value), None);
        let ptr = self.pool.get_ptr(key).expect("a new key is live");
        self.ptrs.insert(key, ptr);
    }

    /// Records the address of every live value again (the values moved
    /// to a new pool).
    fn rerecord(&mut self) {
        self.ptrs = common::addresses(self.live_keys(), |k| self.pool.get_ptr(k));
    }

    fn forget(&mut self, key: K) {
        self.model.remove(&key);
        self.ptrs.remove(&key);
        self.reference.remove(key.index());
    }

    fn full(&self) -> bool {
        self.pool.fixed_capacity().is_some() && self.pool.len() == self.pool.capacity()
    }

    fn live_keys(&self) -> Vec<K> {
        let mut keys: Vec<K> = self.model.keys().copied().collect();
        keys.sort_by_key(|k| k.index());
        keys
    }

    fn dead_keys(&self) -> Vec<K> {
        self.issued
            .iter()
            .copied()
            .filter(|k| !self.model.contains_key(k))
            .collect()
    }

    fn pick(&self, src: Src) -> Option<K> {
        let live = self.live_keys();
        match src {
            Src::Live(pick) if !live.is_empty() => Some(*pick.get(&live)),
            Src::Live(pick) | Src::Any(pick) => {
                (!self.issued.is_empty()).then(|| *pick.get(&self.issued))
            }
        }
    }

    fn check(&self) {
        let pool = &self.pool;
        pool.check_invariants();
        assert_eq!(pool.len(), self.model.len());
        assert_eq!(pool.is_empty(), self.model.is_empty());
        for &key in &self.issued {
            let expected = self.model.get(&key);
            assert_eq!(pool.get(key), expected, "get({key:?})");
            assert_eq!(pool.contains_key(key), expected.is_some());
            match expected {
                Some(&value) => {
                    let ptr = self.ptrs[&key];
                    assert_eq!(pool.get_ptr(key), Some(ptr), "address of {key:?} moved");
                    // SAFETY: the value is live and no reference to it is.
                    assert_eq!(unsafe { *ptr.as_ptr() }, value);
                }
                None => assert_eq!(pool.get_ptr(key), None),
            }
        }
        assert_eq!(pool.retired_count(), self.reference.retired, "retired");
        let retired_keys = self
            .issued
            .iter()
            .filter(|k| k.generation() == K::MAX_GENERATION && !self.model.contains_key(k))
            .count();
        assert_eq!(pool.retired_count(), retired_keys);
        assert_eq!(
            pool.capacity(),
            self.reference.slots - self.reference.retired,
            "capacity"
        );
        match self.reference.fixed {
            Some(fixed) => assert_eq!(pool.block_count(), usize::from(fixed > 0)),
            None => assert_eq!(
                pool.block_count(),
                self.reference.slots / self.reference.block_size
            ),
        }
    }

    fn insert_into_full(&mut self, value: u64) {
        let before = self.pool.len();
        let err = self.pool.try_insert(value).unwrap_err();
        assert!(err.is_fixed_capacity());
        assert_eq!(err.limit(), self.reference.fixed);
        assert_eq!(self.pool.len(), before);
        assert_eq!(self.reference.insert(), None);
    }

    fn check_iterators(&mut self, split: usize) {
        let expected: Vec<(K, u64)> = self
            .live_keys()
            .into_iter()
            .map(|k| (k, self.model[&k]))
            .collect();
        let n = expected.len();
        let pool = &self.pool;

        let mut iter = pool.iter();
        let mut got = Vec::new();
        for remaining in (0..=n).rev() {
            assert_eq!(iter.len(), remaining);
            assert_eq!(iter.size_hint(), (remaining, Some(remaining)));
            if let Some((k, v)) = iter.next() {
                got.push((k, *v));
            }
        }
        assert!(iter.next().is_none(), "fused");
        assert_eq!(got, expected);

        // `fold` (block by block), after a partial `next`.
        let split = split.min(n);
        let mut iter = pool.iter();
        let head: Vec<_> = iter.by_ref().take(split).map(|(k, v)| (k, *v)).collect();
        let tail = iter.fold(Vec::new(), |mut acc, (k, v)| {
            acc.push((k, *v));
            acc
        });
        assert_eq!(head.as_slice(), &expected[..split]);
        assert_eq!(tail.as_slice(), &expected[split..]);

        let keys: Vec<K> = expected.iter().map(|&(k, _)| k).collect();
        let values: Vec<u64> = expected.iter().map(|&(_, v)| v).collect();
        let seed = split as u64 * 7 + n as u64;
        check_double_ended(|| pool.iter().map(|(k, v)| (k, *v)), &expected, seed);
        check_double_ended(|| pool.keys(), &keys, seed + 1);
        check_double_ended(|| pool.values().copied(), &values, seed + 2);
        assert_eq!(pool.keys().collect::<Vec<_>>(), keys);
        assert_eq!(pool.keys().fold(0, |count, _| count + 1), n);
        assert_eq!(pool.values().copied().collect::<Vec<_>>(), values);
        assert_eq!(pool.iter().count(), n);
        assert_eq!(format!("{:?}", pool.values()), format!("{values:?}"));
        let by_ref: Vec<(K, u64)> = pool.into_iter().map(|(k, v)| (k, *v)).collect();
        assert_eq!(by_ref, expected);
        #[cfg(all(feature = "rayon", not(miri)))]
        {
            use rayon::prelude::*;
            let par: Vec<(K, u64)> = pool.par_iter().map(|(k, v)| (k, *v)).collect();
            assert_eq!(par, expected);
            let remaining = format!("ParEntries {{ remaining: {} }}", expected.len());
            assert_eq!(format!("{:?}", pool.par_iter()), remaining);
        }

        for (k, v) in self.pool.iter_mut() {
            assert_eq!(*v, self.model[&k]);
            *v += 1;
        }
        let mut values_mut = self.pool.values_mut();
        assert_eq!(values_mut.len(), n);
        for v in values_mut.by_ref().take(split) {
            *v += 1;
        }
        values_mut.fold((), |(), v| *v += 1);
        for (_, v) in &mut self.pool {
            *v += 1;
        }
        #[cfg(all(feature = "rayon", not(miri)))]
        {
            use rayon::prelude::*;
            self.pool.par_iter_mut().for_each(|(k, v)| {
                assert_eq!(*v, self.model[&k] + 3);
                *v += 1;
            });
        }
        let bumps = 3 + u64::from(cfg!(all(feature = "rayon", not(miri))));
        for v in self.model.values_mut() {
            *v += bumps;
        }
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::Insert(value) | Op::TryInsert(value) | Op::InsertWithKey(value) if self.full() => {
                self.insert_into_full(value);
            }
            Op::Insert(value) => {
                let key = self.pool.insert(value);
                let predicted = self.reference.insert();
                self.issue(key, value, predicted);
            }
            Op::TryInsert(value) => {
                let key = self.pool.try_insert(value).expect("room left");
                let predicted = self.reference.insert();
                self.issue(key, value, predicted);
            }
            Op::InsertWithKey(value) => {
                let mut seen = None;
                let key = self.pool.insert_with_key(|key| {
                    seen = Some(key);
                    value
                });
                assert_eq!(seen, Some(key));
                let predicted = self.reference.insert();
                self.issue(key, value, predicted);
            }
            Op::Extend(values) => {
                let room = self.pool.capacity() - self.pool.len();
                if self.reference.fixed.is_some() && values.len() > room {
                    return;
                }
                let before: HashSet<K> = self.pool.keys().collect();
                self.pool.extend(values.iter().copied());
                // Keys come in insertion order from the reference.
                let mut added: Vec<(K, u64)> = Vec::new();
                for &value in &values {
                    let (index, generation) = self.reference.insert().expect("room");
                    let key = K::from_parts(index, generation).expect("valid parts");
                    assert!(!before.contains(&key));
                    assert_eq!(self.pool.get(key), Some(&value));
                    added.push((key, value));
                }
                assert_eq!(self.pool.len(), before.len() + values.len());
                for (key, value) in added {
                    let predicted = Some((key.index(), key.generation()));
                    self.issue(key, value, predicted);
                }
            }
            Op::Remove(src) => {
                let Some(key) = self.pick(src) else { return };
                let expected = self.model.get(&key).copied();
                assert_eq!(self.pool.remove(key), expected);
                if expected.is_some() {
                    self.forget(key);
                }
                assert_eq!(self.pool.remove(key), None, "removed twice");
            }
            Op::Churn(rounds) => {
                for round in 0..rounds {
                    if self.full() {
                        self.insert_into_full(round);
                        break;
                    }
                    let key = self.pool.insert(round);
                    let predicted = self.reference.insert();
                    self.issue(key, round, predicted);
                    assert_eq!(self.pool.remove(key), Some(round));
                    self.forget(key);
                }
            }
            Op::Get(pick) => {
                let live = self.live_keys();
                if live.is_empty() {
                    return;
                }
                let key = *pick.get(&live);
                let value = self.model[&key];
                assert_eq!(self.pool[key], value);
                assert_eq!(self.pool.get_mut(key).copied(), Some(value));
                // SAFETY: `key` is live in the model, which the pool matches.
                assert_eq!(unsafe { *self.pool.get_unchecked(key) }, value);
                // SAFETY: as above.
                assert_eq!(unsafe { *self.pool.get_unchecked_mut(key) }, value);
            }
            Op::GetStale(pick) => {
                let dead = self.dead_keys();
                if dead.is_empty() {
                    return;
                }
                let key = *pick.get(&dead);
                assert_eq!(self.pool.get(key), None);
                assert_eq!(self.pool.get_mut(key), None);
                assert_eq!(self.pool.get_ptr(key), None);
                assert!(!self.pool.contains_key(key));
                assert_eq!(self.pool.remove(key), None);
                let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let _ = self.pool[key];
                }));
                assert!(caught.is_err(), "Index with a stale key must panic");
            }
            Op::GetForgedBits(bits) => {
                if let Some(key) = K::from_bits(bits) {
                    assert_eq!(self.pool.get(key), self.model.get(&key));
                    assert_eq!(self.pool.contains_key(key), self.model.contains_key(&key));
                    assert_eq!(self.pool.get_ptr(key), self.ptrs.get(&key).copied());
                }
            }
            Op::GetForgedParts(index, generation) => {
                if let Some(key) = K::from_parts(index, generation) {
                    assert_eq!(self.pool.get(key), self.model.get(&key));
                    assert_eq!(
                        self.pool.get_mut(key).copied(),
                        self.model.get(&key).copied()
                    );
                    assert_eq!(self.pool.get_ptr(key), self.ptrs.get(&key).copied());
                }
            }
            Op::GetMut(pick, value, via_index) => {
                let live = self.live_keys();
                if live.is_empty() {
                    return;
                }
                let key = *pick.get(&live);
                if via_index {
                    self.pool[key] = value;
                } else {
                    *self.pool.get_mut(key).unwrap() = value;
                }
                self.model.insert(key, value);
            }
            Op::WriteThroughPtr(pick, value) => {
                let live = self.live_keys();
                if live.is_empty() {
                    return;
                }
                let key = *pick.get(&live);
                let ptr = self.ptrs[&key];
                // SAFETY: the value is live (the model says so, and `check`
                // verified the pointer), and no reference into the pool is.
                unsafe { *ptr.as_ptr() = value };
                self.model.insert(key, value);
                assert_eq!(self.pool[key], value);
            }
            Op::Clear => {
                let live: Vec<usize> = self.live_keys().iter().map(|k| k.index()).collect();
                self.pool.clear();
                self.model.clear();
                self.ptrs.clear();
                self.reference.clear(live);
                assert!(self.pool.is_empty());
                assert_eq!(self.pool.iter().next(), None);
            }
            Op::Retain(modulus) => {
                let mut visited = Vec::new();
                self.pool.retain(|key, value| {
                    visited.push((key, *value));
                    let keep = *value % modulus != 0;
                    if keep {
                        *value += 1;
                    }
                    keep
                });
                let expected: Vec<(K, u64)> = self
                    .live_keys()
                    .into_iter()
                    .map(|k| (k, self.model[&k]))
                    .collect();
                assert_eq!(
                    visited, expected,
                    "retain visits every value once, in order"
                );
                for (key, value) in expected {
                    if value % modulus == 0 {
                        self.forget(key);
                    } else {
                        self.model.insert(key, value + 1);
                    }
                }
            }
            Op::Drain(take) => {
                let n = self.model.len();
                let live = self.live_keys();
                let mut drain = self.pool.drain();
                assert_eq!(drain.len(), n);
                let mut yielded = Vec::new();
                for (key, value) in drain.by_ref().take(take) {
                    assert_eq!(self.model.get(&key), Some(&value));
                    yielded.push(key);
                }
                assert_eq!(yielded.as_slice(), &live[..take.min(n)], "slot order");
                drop(drain);
                // The reference: the yielded slots were freed one by one,
                // then the rest by `clear`.
                for &key in &yielded {
                    self.reference.remove(key.index());
                }
                let rest: Vec<usize> = live[yielded.len()..].iter().map(|k| k.index()).collect();
                self.reference.clear(rest);
                self.model.clear();
                self.ptrs.clear();
                assert!(self.pool.is_empty());
            }
            Op::Clone => {
                let copy = self.pool.clone();
                copy.check_invariants();
                assert!(copy == self.pool);
                assert_eq!(copy.retired_count(), self.pool.retired_count());
                assert_eq!(copy.capacity(), self.pool.capacity());
                assert_eq!(copy.block_size(), self.pool.block_size());
                assert_eq!(copy.block_count(), self.pool.block_count());
                assert_eq!(copy.fixed_capacity(), self.pool.fixed_capacity());
                // The copy issues the same next key.
                let mut probe = copy.clone();
                if self.full() {
                    assert!(probe.try_insert(0).is_err());
                } else {
                    let mut original = self.pool.clone();
                    assert_eq!(probe.insert(0), original.insert(0));
                }
                // Continue with the copy: its values are at new addresses.
                self.pool = copy;
                self.rerecord();
            }
            Op::SerdeRoundTrip => self.serde_round_trip(),
            Op::Reserve(additional) => {
                let result = self.pool.try_reserve(additional);
                let expected = self.reference.reserve(additional);
                assert_eq!(result.is_ok(), expected, "try_reserve({additional})");
                match result {
                    Ok(()) => assert!(self.pool.capacity() - self.pool.len() >= additional),
                    Err(err) => assert!(err.is_fixed_capacity(), "{err}"),
                }
            }
            Op::Iter(split) => self.check_iterators(split),
        }
    }

    /// Serializes and deserializes the pool and continues with the result:
    /// same keys and values, the free list rebuilt in index order, the
    /// default block size, no fixed capacity.
    #[cfg(feature = "serde")]
    fn serde_round_trip(&mut self) {
        let json = serde_json::to_string(&self.pool).unwrap();
        let back: Pool<u64, K> = serde_json::from_str(&json).unwrap();
        back.check_invariants();
        assert!(back == self.pool);
        assert_eq!(back.retired_count(), self.pool.retired_count());
        assert_eq!(back.fixed_capacity(), None);
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        let live: HashSet<usize> = self.model.keys().map(|k| k.index()).collect();
        let reference = &mut self.reference;
        reference.free = (0..reference.generations.len())
            .rev()
            .filter(|&i| !live.contains(&i) && reference.generations[i] < reference.max_generation)
            .collect();
        reference.block_size = back.block_size();
        reference.slots = back.block_count() * back.block_size();
        reference.fixed = None;
        reference.vacant_low = reference.vacant();
        assert!(reference.slots >= reference.generations.len());
        assert!(reference.slots < reference.generations.len() + back.block_size());
        self.pool = back;
        self.rerecord();
    }

    #[cfg(not(feature = "serde"))]
    fn serde_round_trip(&mut self) {}
}

fn run<K: Key>(block_size: usize, fixed: Option<usize>, ops: Vec<Op>) {
    let mut harness = Harness::<K>::new(block_size, fixed);
    harness.check();
    for op in ops {
        harness.apply(op);
        harness.check();
    }
}

fn block_size() -> impl Strategy<Value = usize> {
    prop_oneof![Just(1usize), Just(4), Just(64)]
}

macro_rules! model_tests {
    ($($name:ident: $key:ty;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(
                    block_size in block_size(),
                    fixed in prop::option::weighted(0.25, 0usize..80),
                    ops in prop::collection::vec(op(), 0..MAX_OPS),
                ) {
                    run::<$key>(block_size, fixed, ops);
                }
            )*
        }
    };
}

model_tests! {
    pool_key: PoolKey;
    id32: Id32;
    gen4: Gen4;
}

/// The stable-address test of issue 5 (`common/churn.rs`): record
/// `get_ptr` for many elements, then insert and remove heavily, growing by
/// several blocks; every live element must keep its address and value.
#[test]
fn addresses_survive_heavy_churn() {
    let (initial, rounds, block) = if cfg!(miri) {
        (64, 400, 8)
    } else {
        (2000, 40_000, 16)
    };
    common::churn::addresses_survive_heavy_churn(
        Pool::with_block_size(block),
        initial,
        rounds,
        false,
    );
}

impl_churn!(Pool, PoolKey);

/// A fixed-capacity pool keeps its one block whatever happens, and its
/// addresses with it.
#[test]
fn fixed_capacity_never_adds_a_block() {
    let n = if cfg!(miri) { 40 } else { 1000 };
    let mut pool: Pool<u32> = Pool::with_fixed_capacity(n);
    let heap = pool.heap_bytes();
    let keys: Vec<PoolKey> = (0..n as u32).map(|v| pool.insert(v)).collect();
    assert!(pool.try_insert(0).unwrap_err().is_fixed_capacity());
    let first = pool.get_ptr(keys[0]).unwrap();
    assert_eq!(pool.keys().next(), Some(keys[0]));
    for round in 0..3 {
        let current: Vec<PoolKey> = pool.keys().skip(1).step_by(2).collect();
        assert!(current.len() >= n / 2 - 1);
        for key in current.into_iter().take(n / 2) {
            assert!(pool.remove(key).is_some());
        }
        pool.extend((0..n as u32 / 2).map(|v| v + round));
        assert!(pool.try_insert(0).is_err());
        pool.retain(|k, v| k == keys[0] || *v % 3 != 0);
        pool.extend(std::iter::repeat_n(7, n - pool.len()));
    }
    assert_eq!(pool.block_count(), 1);
    assert_eq!(pool.heap_bytes(), heap);
    assert_eq!(pool.get_ptr(keys[0]), Some(first));
    pool.check_invariants();
}

/// A key naming a slot of the last block that was never used, or a slot
/// past every block, resolves to nothing through every lookup, and
/// removing by it changes nothing. (Lookups bound the index by the used
/// slots, not by the slots allocated.)
#[test]
fn keys_past_the_used_slots_name_nothing() {
    let mut pool: Pool<u64> = Pool::with_block_size(16);
    // Two blocks, 20 of their 32 slots used.
    let keys: Vec<PoolKey> = (0..20).map(|v| pool.insert(v)).collect();
    assert_eq!(pool.block_count(), 2);
    let mut resolved = 0;
    for index in 0..40 {
        for generation in 0..4 {
            let Some(key) = PoolKey::from_parts(index, generation) else {
                continue;
            };
            let live = keys.contains(&key);
            resolved += usize::from(live);
            assert_eq!(pool.get(key).is_some(), live, "get({key:?})");
            assert_eq!(pool.get_mut(key).is_some(), live, "get_mut({key:?})");
            assert_eq!(pool.get_ptr(key).is_some(), live, "get_ptr({key:?})");
            assert_eq!(pool.contains_key(key), live, "contains_key({key:?})");
            if !live {
                assert_eq!(pool.remove(key), None, "remove({key:?})");
            }
        }
    }
    assert_eq!(resolved, keys.len());
    assert_eq!(pool.len(), 20);
    pool.check_invariants();
}

/// `Send` and `Sync` follow the value type, as for `Vec`.
#[test]
fn auto_traits() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Pool<u64>>();
    send_sync::<handlekit::pool::Iter<'static, u64>>();
    send_sync::<handlekit::pool::IterMut<'static, u64>>();
    send_sync::<handlekit::pool::IntoIter<u64>>();
    #[cfg(feature = "rayon")]
    {
        send_sync::<handlekit::pool::ParIter<'static, u64>>();
        send_sync::<handlekit::pool::ParIterMut<'static, u64>>();
    }
}

define_key! {
    /// 2 generation bits: 3 occupants per slot.
    pub struct G2(u32; index_bits = 30);
    /// 3 index bits: 8 slots in all.
    pub struct EightSlots(u32; index_bits = 3);
}

/// With 2 generation bits every slot retires after 3 occupants. A fixed pool
/// is churned until every slot has retired; after every step, every key ever
/// issued and every forged key over the slots resolves iff it is live.
#[test]
fn narrow_generations_retire_every_slot_and_no_key_comes_back() {
    let mut pool: Pool<u32, G2> = Pool::with_fixed_capacity(8);
    let mut issued: HashMap<G2, u32> = HashMap::new();
    let mut live: Vec<G2> = Vec::new();
    let mut n = 0u32;
    let mut steps = 0;
    loop {
        steps += 1;
        assert!(steps < 1000, "the pool never filled up with retired slots");
        match pool.try_insert(n) {
            Ok(key) => {
                assert!(issued.insert(key, n).is_none(), "{key:?} issued twice");
                live.push(key);
                n += 1;
            }
            Err(err) => {
                assert!(err.is_fixed_capacity());
                if live.is_empty() {
                    break;
                }
                let key = live.remove((n as usize * 7 + steps) % live.len());
                assert_eq!(pool.remove(key), Some(issued[&key]));
            }
        }
        pool.check_invariants();
        for index in 0..10 {
            for generation in 0..=4 {
                let Some(key) = G2::from_parts(index, generation) else {
                    continue;
                };
                let expected = live.contains(&key).then(|| &issued[&key]);
                assert_eq!(pool.get(key), expected, "{key:?}");
                assert_eq!(pool.get_ptr(key).is_some(), expected.is_some());
            }
        }
    }
    assert_eq!(issued.len(), 24);
    assert_eq!(pool.retired_count(), 8);
    assert_eq!(pool.capacity(), 0);
    assert!(pool.is_empty());
}

/// A growable pool stops at the key's index space, with the error saying so,
/// and its last block is cut to fit.
#[test]
fn growable_pool_stops_at_the_index_space() {
    let mut pool: Pool<u8, EightSlots> = Pool::with_block_size(3); // rounds up to 4
    for n in 0..8 {
        pool.insert(n);
    }
    assert_eq!(pool.block_count(), 2);
    let err = pool.try_insert(8).unwrap_err();
    assert!(err.is_index_space());
    assert_eq!(err.limit(), Some(8));
    pool.check_invariants();
    // A block bigger than the index space is cut to its 8 slots.
    let mut cut: Pool<u8, EightSlots> = Pool::with_block_size(16);
    cut.insert(0);
    assert_eq!((cut.block_count(), cut.capacity()), (1, 8));
    cut.extend(1..8);
    assert!(cut.try_insert(0).unwrap_err().is_index_space());
    cut.check_invariants();
}

/// A block cut short by the index space is walked, emptied and refilled
/// like any other: iteration stops at its end, and the free-list rebuild
/// that an emptying `remove` runs hands its slots out lowest first.
#[test]
fn a_cut_block_iterates_empties_and_refills_in_order() {
    let mut pool: Pool<u8, EightSlots> = Pool::with_block_size(16);
    let keys: Vec<_> = (0..8).map(|n| pool.insert(n)).collect();
    for &key in keys.iter().step_by(3) {
        pool.remove(key);
    }
    let left: Vec<u8> = vec![1, 2, 4, 5, 7];
    assert_eq!(pool.values().copied().collect::<Vec<_>>(), left);
    let mut iter = pool.values();
    assert_eq!(iter.next(), Some(&1));
    assert_eq!(iter.fold(0u32, |sum, v| sum + u32::from(*v)), 2 + 4 + 5 + 7);
    for &key in &keys {
        pool.remove(key);
    }
    assert!(pool.is_empty());
    pool.check_invariants();
    let again: Vec<_> = (0..8).map(|n| pool.insert(n)).collect();
    let indices: Vec<usize> = again.iter().map(|key| key.index()).collect();
    assert_eq!(indices, (0..8).collect::<Vec<_>>());
    assert!(again
        .iter()
        .zip(&keys)
        .all(|(new, old)| pool.get(*old).is_none() && pool[*new] < 8));
    pool.check_invariants();
}

/// Deserializing a pool from untrusted input.
#[cfg(feature = "serde")]
mod pool_serde {
    use super::*;

    define_key! {
        /// 2 index bits: 4 slots in all.
        pub struct FourSlots(u32; index_bits = 2);
    }

    fn parse<K: Key>(json: &str) -> Result<Pool<u64, K>, String> {
        common::from_json(json)
    }

    #[test]
    fn slots_are_loaded_and_validated() {
        // Gen4: generations 1..=15.
        let json = r#"{"slots":[[1,10],[15,null],[0,null],[2,null]]}"#;
        let mut pool = parse::<Gen4>(json).unwrap();
        pool.check_invariants();
        assert_eq!(pool.len(), 1);
        assert_eq!(
            pool.retired_count(),
            1,
            "a vacant slot at the last generation"
        );
        assert_eq!(pool.get(Gen4::from_parts(0, 1).unwrap()), Some(&10));
        assert_eq!(pool.get(Gen4::from_parts(1, 15).unwrap()), None);
        assert_eq!(serde_json::to_string(&pool).unwrap(), json);
        // The free list is rebuilt lowest index first; then fresh slots.
        let keys: Vec<(usize, u32)> = (0..3)
            .map(|v| pool.insert(v))
            .map(|k| (k.index(), k.generation()))
            .collect();
        assert_eq!(keys, [(2, 1), (3, 3), (4, 1)]);
        pool.check_invariants();

        for (json, why) in [
            (
                r#"{"slots":[[16,10]]}"#,
                "occupied generation past the maximum",
            ),
            (
                r#"{"slots":[[16,null]]}"#,
                "vacant generation past the maximum",
            ),
            (r#"{"slots":[[0,10]]}"#, "occupied generation 0"),
            (r#"{"slots":[[4294967295,10]]}"#, "u32::MAX generation"),
            (
                r#"{"slots":[[2147483649,null]]}"#,
                "generation with the vacant bit",
            ),
            (r#"{}"#, "missing slots"),
            (r#"{"slots":[],"slots":[]}"#, "duplicate slots"),
            (r#"{"slots":[],"block_size":4}"#, "unknown field"),
            (r#"{"slots":[[1]]}"#, "slot without a value"),
        ] {
            assert!(parse::<Gen4>(json).is_err(), "accepted {why}: {json}");
        }
    }

    #[test]
    fn slot_count_is_bounded_by_the_key() {
        let slots = |n: usize| format!(r#"{{"slots":[{}]}}"#, vec!["[1,0]"; n].join(","));
        let four = parse::<FourSlots>(&slots(4)).unwrap();
        assert_eq!(four.len(), 4);
        four.check_invariants();
        let err = parse::<FourSlots>(&slots(5)).unwrap_err();
        assert!(err.contains("index"), "{err}");
    }

    /// A fixed pool loads as a growable one with the default block size.
    #[test]
    fn fixed_capacity_and_block_size_are_not_kept() {
        let mut fixed: Pool<u64> = Pool::with_fixed_capacity(3);
        let key = fixed.insert(1);
        let back: Pool<u64> = parse(&serde_json::to_string(&fixed).unwrap()).unwrap();
        assert_eq!(back.fixed_capacity(), None);
        assert_eq!(back.block_size(), Pool::<u64>::new().block_size());
        assert_eq!(back[key], 1);
    }
}
