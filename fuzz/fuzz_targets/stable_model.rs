//! The differential model shared by the fuzz targets of the containers
//! with stable addresses (`pool`, `hive`): the operations, a
//! `HashMap<Key, Value>` model, and the `Stable` trait both containers
//! implement (by forwarding to their own methods of the same names).
//!
//! After every operation, every key ever issued must resolve as the model
//! says; every live value must still be at the address `get_ptr` gave when
//! it was inserted, and read right through it; the iterators must yield the
//! model in key-index order; and the container's `check_invariants` must
//! pass. Any divergence panics.
//!
//! Values are boxed so that AddressSanitizer and LeakSanitizer see double
//! drops, use after free and leaks.

use std::collections::{HashMap, HashSet};
use std::ptr::NonNull;

use arbitrary::Arbitrary;
use handlekit::{CapacityError, Hive, Key, Pool};

use crate::common::{nth_sorted, Wide};
use crate::walk::walk_both_ends;

pub type Value = Box<u32>;

/// What the model needs of a container.
pub trait Stable<K: Key>: Clone + PartialEq {
    /// Whether `retired_count` counts every retired key (a hive does not
    /// count the slots of blocks it freed).
    const EXACT_RETIRED: bool;
    fn insert(&mut self, value: Value) -> K;
    fn try_insert(&mut self, value: Value) -> Result<K, CapacityError>;
    fn insert_with_key(&mut self, make: impl FnOnce(K) -> Value) -> K;
    fn remove(&mut self, key: K) -> Option<Value>;
    fn get(&self, key: K) -> Option<&Value>;
    fn get_mut(&mut self, key: K) -> Option<&mut Value>;
    fn get_ptr(&self, key: K) -> Option<NonNull<Value>>;
    fn contains_key(&self, key: K) -> bool;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool;
    fn capacity(&self) -> usize;
    fn retired_count(&self) -> usize;
    fn clear(&mut self);
    fn shrink(&mut self);
    fn retain(&mut self, keep: impl FnMut(K, &mut Value) -> bool);
    fn drain(&mut self) -> Box<dyn Iterator<Item = (K, Value)> + '_>;
    /// `(key, value)` in iteration order, through `next()`.
    fn entries(&self) -> Vec<(K, u32)>;
    /// The number of values, counted through `values().fold`.
    fn fold_count(&self) -> usize;
    /// `(key, value)` in iteration order, taken from both ends of `iter()`
    /// as `ends` says (see `walk_both_ends`).
    fn walk(&self, ends: u64) -> Vec<(K, u32)>;
    fn check_invariants(&self);
    /// A serde_json round trip.
    fn round_trip(&self) -> Self;
    fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError>;
}

macro_rules! forward_stable {
    ($ty:ident, $exact:expr, |$s:ident| $shrink:expr) => {
        impl<K: Key> Stable<K> for $ty<Value, K> {
            const EXACT_RETIRED: bool = $exact;
            fn insert(&mut self, value: Value) -> K {
                $ty::insert(self, value)
            }
            fn try_insert(&mut self, value: Value) -> Result<K, CapacityError> {
                $ty::try_insert(self, value)
            }
            fn insert_with_key(&mut self, make: impl FnOnce(K) -> Value) -> K {
                $ty::insert_with_key(self, make)
            }
            fn remove(&mut self, key: K) -> Option<Value> {
                $ty::remove(self, key)
            }
            fn get(&self, key: K) -> Option<&Value> {
                $ty::get(self, key)
            }
            fn get_mut(&mut self, key: K) -> Option<&mut Value> {
                $ty::get_mut(self, key)
            }
            fn get_ptr(&self, key: K) -> Option<NonNull<Value>> {
                $ty::get_ptr(self, key)
            }
            fn contains_key(&self, key: K) -> bool {
                $ty::contains_key(self, key)
            }
            fn len(&self) -> usize {
                $ty::len(self)
            }
            fn is_empty(&self) -> bool {
                $ty::is_empty(self)
            }
            fn capacity(&self) -> usize {
                $ty::capacity(self)
            }
            fn retired_count(&self) -> usize {
                $ty::retired_count(self)
            }
            fn clear(&mut self) {
                $ty::clear(self)
            }
            fn shrink(&mut self) {
                let $s = self;
                $shrink
            }
            fn retain(&mut self, keep: impl FnMut(K, &mut Value) -> bool) {
                $ty::retain(self, keep)
            }
            fn drain(&mut self) -> Box<dyn Iterator<Item = (K, Value)> + '_> {
                Box::new($ty::drain(self))
            }
            fn entries(&self) -> Vec<(K, u32)> {
                let mut entries = Vec::new();
                for (key, value) in $ty::iter(self) {
                    entries.push((key, **value));
                }
                entries
            }
            fn fold_count(&self) -> usize {
                $ty::values(self).fold(0, |n, _| n + 1)
            }
            fn walk(&self, ends: u64) -> Vec<(K, u32)> {
                let walked =
                    walk_both_ends($ty::iter(self).map(|(key, value)| (key, **value)), ends);
                // The same slots, holes and generations with 12-byte values
                // (see `Wide`).
                let wide: $ty<Wide, K> = crate::common::reload(self);
                let wide_walked =
                    walk_both_ends(wide.iter().map(|(key, value)| (key, value.0[0])), ends);
                assert_eq!(wide_walked, walked, "12-byte values, order {ends:#x}");
                walked
            }
            fn check_invariants(&self) {
                $ty::check_invariants(self)
            }
            fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
                $ty::try_reserve(self, additional)
            }
            fn round_trip(&self) -> Self {
                let json = serde_json::to_string(self).expect("serialize");
                let back: Self = serde_json::from_str(&json).expect("deserialize");
                assert_eq!(serde_json::to_string(&back).expect("serialize again"), json);
                back
            }
        }
    };
}

forward_stable!(Pool, true, |_pool| ());
forward_stable!(Hive, false, |hive| hive.shrink_to_fit());

/// How an operation names a key.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum KeyRef {
    /// One of the keys issued so far (modulo their number).
    Issued(u16),
    /// Any bits, through `Key::from_bits`.
    Forged(u64),
    /// A small index with any generation, through `Key::from_parts`.
    Parts(u8, u32),
}

#[derive(Arbitrary, Clone, Debug)]
pub enum Op {
    Insert(u32),
    InsertWithKey,
    /// Insert this many values.
    Extend(u8),
    Remove(KeyRef),
    Get(KeyRef),
    GetMut(KeyRef, u32),
    /// Write through the pointer recorded at insertion.
    WriteThroughPtr(u16, u32),
    Clear,
    /// `retain(|_, v| **v % (modulus + 1) != rem)`.
    Retain {
        modulus: u8,
        rem: u8,
    },
    /// `drain()`, take `take` items, drop the rest.
    Drain {
        take: u8,
    },
    /// Walk `iter()` from both ends in the order `ends` picks.
    Walk {
        ends: u64,
    },
    /// Clone; optionally continue with the clone.
    Clone {
        adopt: bool,
    },
    /// Remove every live value except one in `keep`, in a scrambled order.
    Thin {
        keep: u8,
        seed: u16,
    },
    /// `shrink_to_fit` (a hive frees its empty blocks; a pool has none to
    /// free).
    Shrink,
    /// A serde round trip; optionally continue with the result (which has
    /// no fixed capacity).
    SerdeRoundTrip {
        adopt: bool,
    },
    /// `try_reserve(n)`.
    Reserve(u8),
}

pub struct Model<K: Key, C: Stable<K>> {
    pub pool: C,
    live: HashMap<K, u32>,
    ptrs: HashMap<K, NonNull<Value>>,
    issued: Vec<K>,
    issued_set: HashSet<K>,
    /// The fixed capacity, if any.
    fixed: Option<usize>,
}

impl<K: Key, C: Stable<K>> Model<K, C> {
    pub fn new(pool: C, fixed: Option<usize>) -> Self {
        Model {
            pool,
            live: HashMap::new(),
            ptrs: HashMap::new(),
            issued: Vec::new(),
            issued_set: HashSet::new(),
            fixed,
        }
    }

    fn resolve(&self, key: KeyRef) -> Option<K> {
        match key {
            KeyRef::Issued(n) => {
                (!self.issued.is_empty()).then(|| self.issued[usize::from(n) % self.issued.len()])
            }
            KeyRef::Forged(bits) => K::from_bits(bits),
            KeyRef::Parts(index, generation) => K::from_parts(usize::from(index), generation),
        }
    }

    fn full(&self) -> bool {
        self.fixed.is_some() && self.pool.len() == self.pool.capacity()
    }

    fn record(&mut self, key: K, value: u32) {
        assert!(self.issued_set.insert(key), "{key:?} issued twice");
        assert!((1..=K::MAX_GENERATION).contains(&key.generation()));
        self.issued.push(key);
        self.live.insert(key, value);
        let ptr = self.pool.get_ptr(key).expect("a new key is live");
        self.ptrs.insert(key, ptr);
    }

    fn insert(&mut self, value: u32) {
        if self.full() {
            let err = self.pool.try_insert(Box::new(value)).unwrap_err();
            assert!(err.is_fixed_capacity());
            assert_eq!(err.limit(), self.fixed);
            return;
        }
        let key = self.pool.insert(Box::new(value));
        self.record(key, value);
    }

    fn forget(&mut self, key: K) {
        self.live.remove(&key);
        self.ptrs.remove(&key);
    }

    /// Records every live value's address anew, after the model adopted
    /// another container (a clone or a deserialized copy).
    fn readdress(&mut self) {
        self.ptrs = self
            .live
            .keys()
            .map(|&k| (k, self.pool.get_ptr(k).unwrap()))
            .collect();
    }

    pub fn check(&self) {
        self.pool.check_invariants();
        assert_eq!(self.pool.len(), self.live.len());
        for &key in &self.issued {
            let expected = self.live.get(&key);
            assert_eq!(self.pool.get(key).map(|v| **v), expected.copied());
            assert_eq!(self.pool.contains_key(key), expected.is_some());
            match expected {
                Some(&value) => {
                    let ptr = self.ptrs[&key];
                    assert_eq!(self.pool.get_ptr(key), Some(ptr), "{key:?} moved");
                    // SAFETY: the value is live and no reference to it is.
                    assert_eq!(unsafe { **ptr.as_ptr() }, value);
                }
                None => assert_eq!(self.pool.get_ptr(key), None),
            }
        }
        let mut expected: Vec<(K, u32)> = self.live.iter().map(|(&k, &v)| (k, v)).collect();
        expected.sort_by_key(|&(k, _)| k.index());
        assert_eq!(self.pool.entries(), expected);
        assert_eq!(self.pool.fold_count(), expected.len());
        let retired = self
            .issued
            .iter()
            .filter(|k| k.generation() == K::MAX_GENERATION && !self.live.contains_key(k))
            .count();
        if C::EXACT_RETIRED {
            assert_eq!(self.pool.retired_count(), retired);
        } else {
            assert!(self.pool.retired_count() <= retired);
        }
    }

    pub fn apply(&mut self, op: &Op) {
        match *op {
            Op::Insert(value) => self.insert(value),
            Op::InsertWithKey => {
                if self.full() {
                    return self.insert(0);
                }
                let mut seen = None;
                let key = self.pool.insert_with_key(|key| {
                    seen = Some(key);
                    Box::new(key.index() as u32)
                });
                assert_eq!(seen, Some(key));
                self.record(key, key.index() as u32);
            }
            Op::Extend(n) => {
                for i in 0..u32::from(n) {
                    self.insert(i);
                }
            }
            Op::Remove(key) => {
                let Some(key) = self.resolve(key) else { return };
                let expected = self.live.get(&key).copied();
                assert_eq!(self.pool.remove(key).map(|v| *v), expected);
                self.forget(key);
            }
            Op::Get(key) => {
                let Some(key) = self.resolve(key) else { return };
                assert_eq!(
                    self.pool.get(key).map(|v| **v),
                    self.live.get(&key).copied()
                );
            }
            Op::GetMut(key, value) => {
                let Some(key) = self.resolve(key) else { return };
                match self.pool.get_mut(key) {
                    Some(slot) => {
                        assert!(self.live.contains_key(&key));
                        **slot = value;
                        self.live.insert(key, value);
                    }
                    None => assert!(!self.live.contains_key(&key)),
                }
            }
            Op::WriteThroughPtr(n, value) => {
                let Some(key) = nth_sorted(self.live.keys().copied(), n) else {
                    return;
                };
                // SAFETY: the value is live (checked after the last step),
                // and no reference into the pool is.
                unsafe { **self.ptrs[&key].as_ptr() = value };
                self.live.insert(key, value);
            }
            Op::Clear => {
                self.pool.clear();
                self.live.clear();
                self.ptrs.clear();
            }
            Op::Retain { modulus, rem } => {
                let modulus = u32::from(modulus) + 1;
                let rem = u32::from(rem);
                let mut visited = 0;
                self.pool.retain(|key, value| {
                    visited += 1;
                    assert_eq!(Some(**value), self.live.get(&key).copied());
                    **value % modulus != rem
                });
                assert_eq!(visited, self.live.len());
                let gone: Vec<K> = self
                    .live
                    .iter()
                    .filter(|&(_, &v)| v % modulus == rem)
                    .map(|(&k, _)| k)
                    .collect();
                for key in gone {
                    self.forget(key);
                }
            }
            Op::Walk { ends } => {
                let mut expected: Vec<(K, u32)> = self.live.iter().map(|(&k, &v)| (k, v)).collect();
                expected.sort_by_key(|&(k, _)| k.index());
                assert_eq!(self.pool.walk(ends), expected, "both ends, order {ends:#x}");
            }
            Op::Drain { take } => {
                let mut drain = self.pool.drain();
                for (key, value) in drain.by_ref().take(usize::from(take)) {
                    assert_eq!(self.live.get(&key), Some(&*value));
                }
                drop(drain);
                assert!(self.pool.is_empty());
                self.live.clear();
                self.ptrs.clear();
            }
            Op::Clone { adopt } => {
                let copy = self.pool.clone();
                copy.check_invariants();
                assert!(copy == self.pool);
                assert_eq!(copy.capacity(), self.pool.capacity());
                if !self.full() {
                    let mut a = copy.clone();
                    let mut b = self.pool.clone();
                    assert_eq!(a.insert(Box::new(0)), b.insert(Box::new(0)));
                }
                if adopt {
                    self.pool = copy;
                    self.readdress();
                }
            }
            Op::Shrink => self.pool.shrink(),
            Op::Reserve(additional) => {
                let additional = usize::from(additional);
                match self.pool.try_reserve(additional) {
                    Ok(()) => {
                        assert!(self.pool.capacity() - self.pool.len() >= additional);
                    }
                    Err(err) => {
                        assert!(err.is_fixed_capacity() || err.is_index_space(), "{err}");
                        if err.is_fixed_capacity() {
                            assert!(self.pool.capacity() - self.pool.len() < additional);
                        }
                    }
                }
            }
            Op::SerdeRoundTrip { adopt } => {
                let back = self.pool.round_trip();
                back.check_invariants();
                assert!(back == self.pool);
                assert_eq!(back.retired_count(), self.pool.retired_count());
                if adopt {
                    self.pool = back;
                    self.fixed = None;
                    self.readdress();
                }
            }
            Op::Thin { keep, seed } => {
                let mut keys: Vec<K> = self.live.keys().copied().collect();
                keys.sort();
                let keep = usize::from(keep).max(1);
                let mut order: Vec<usize> = (0..keys.len()).collect();
                let mut state = u32::from(seed) | 1;
                for i in (1..order.len()).rev() {
                    state ^= state << 13;
                    state ^= state >> 17;
                    state ^= state << 5;
                    order.swap(i, state as usize % (i + 1));
                }
                for (n, &i) in order.iter().enumerate() {
                    if n % keep != 0 {
                        let key = keys[i];
                        assert!(self.pool.remove(key).is_some());
                        self.forget(key);
                    }
                }
            }
        }
    }
}
