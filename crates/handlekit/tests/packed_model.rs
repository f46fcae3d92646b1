//! Model test: `PackedTable` against a `HashMap<K, u64>` and a `Vec<K>` of
//! the dense order.
//!
//! A random sequence of operations runs on a table and on the model. The
//! model predicts the dense order exactly: an insertion appends, a removal
//! moves the last key into the hole, `retain` keeps the order of the
//! survivors, a stable sort is a stable sort of the model's keys by their
//! values, `swap_positions` swaps. After every operation `key_slice()` must
//! equal the model's order, `as_slice()` the model's values in that order,
//! `position()` must agree with `key_slice()`, every key ever issued must
//! resolve exactly as the model says, and the table's own invariant checker
//! must pass.
//!
//! The same body runs for `Id`, `Id32` and a key with 4 generation bits
//! (where slots retire constantly), under `Reuse::Lifo` and
//! `Reuse::Fifo { min_free: 3 }`, on growable and (sometimes)
//! fixed-capacity tables.
//!
//! Below the model: dedicated tests that sorting keeps every key valid and
//! that a panicking comparator moves nothing.

use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::panic::{self, catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use handlekit::{define_key, Id, Id32, Key, PackedTable, Reuse};
use proptest::prelude::*;
use proptest::sample::Index as Pick;
use proptest::test_runner::Config;

mod common;
use common::Lcg;

define_key! {
    /// 28 index bits, 4 generation bits: a slot retires after 15 occupants.
    pub struct Gen4(u32; index_bits = 28);
}

const CASES: u32 = if cfg!(miri) { 3 } else { 256 };
const MAX_OPS: usize = if cfg!(miri) { 20 } else { 200 };

/// Where a key for an operation comes from.
#[derive(Clone, Copy, Debug)]
enum Src {
    /// A live key (falls back to any issued key if none is live).
    Live(Pick),
    /// Any key ever issued, live or dead.
    Any(Pick),
}

/// How `GetMut` writes a value.
#[derive(Clone, Copy, Debug)]
enum Via {
    GetMut,
    IndexMut,
    /// `as_mut_slice()[position(key)]`.
    MutSlice,
    GetUncheckedMut,
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u64),
    TryInsert(u64),
    InsertWithKey(u64),
    Extend(Vec<u64>),
    /// Remove a key, live (usually) or stale.
    Remove(Src),
    /// Insert a value and remove it again, this many times: ages slots
    /// fast, so narrow keys retire slots.
    Churn(u64),
    /// Look up a live key through every accessor.
    Get(Pick),
    /// Look up a removed key through every accessor.
    GetStale(Pick),
    GetForgedBits(u64),
    GetForgedParts(usize, u32),
    GetMut(Pick, u64, Via),
    Clear,
    /// Keep the values not divisible by the modulus (and bump them).
    Retain(u64),
    /// Take this many items from a `drain`, then drop it.
    Drain(usize),
    Clone,
    /// `clone_from` into a target that already holds these values.
    CloneFrom(Vec<u64>, bool),
    SerdeRoundTrip,
    /// Two keys; the flag makes the second a copy of the first.
    Disjoint2([Src; 2], bool),
    /// Three keys; the flag makes the third a copy of the first.
    Disjoint3([Src; 3], bool),
    /// `sort_by` on the value; the flag sorts descending.
    SortBy(bool),
    /// `sort_by_key` on `value % modulus` (many ties: stability shows).
    SortByKey(u64),
    /// `sort_unstable_by` on the value; the flag sorts descending.
    SortUnstableBy(bool),
    SwapPositions(Pick, Pick),
    Iter(usize),
    TryReserve(usize),
    ShrinkToFit,
    SetReuse(Reuse),
    /// `try_insert_with_key`, whose closure fails when the flag is set.
    TryInsertWithKey(u64, bool),
    /// Detach a key, live (usually) or not.
    Detach(Src),
    /// Reattach a detached key with its value plus this.
    Reattach(Pick, u64),
    /// Reattach a key that is not detached: must panic and change nothing.
    ReattachNotDetached(Src),
    /// Bump every value through `as_mut_slices`, checking its keys.
    MutSlices,
}

/// Operation weights, in the order `make_op` tries them.
const WEIGHTS: [u32; 32] = [
    20, // Insert
    4,  // TryInsert
    3,  // InsertWithKey
    2,  // Extend
    14, // Remove
    2,  // Churn
    5,  // Get
    5,  // GetStale
    2,  // GetForgedBits
    3,  // GetForgedParts
    4,  // GetMut
    1,  // Clear
    2,  // Retain
    1,  // Drain
    1,  // Clone
    1,  // CloneFrom
    1,  // SerdeRoundTrip
    3,  // Disjoint2
    2,  // Disjoint3
    2,  // SortBy
    2,  // SortByKey
    2,  // SortUnstableBy
    3,  // SwapPositions
    2,  // Iter
    1,  // TryReserve
    1,  // ShrinkToFit
    1,  // SetReuse
    3,  // TryInsertWithKey
    4,  // Detach
    3,  // Reattach
    1,  // ReattachNotDetached
    1,  // MutSlices
];

const TOTAL_WEIGHT: u32 = {
    let mut total = 0;
    let mut i = 0;
    while i < WEIGHTS.len() {
        total += WEIGHTS[i];
        i += 1;
    }
    total
};

/// Builds an operation from a selector in `0..TOTAL_WEIGHT` and raw
/// parameters (one selector rather than a `prop_oneof!`, which is slow
/// under Miri; the selector shrinks towards `Insert`).
fn make_op(selector: u32, value: u64, raw: u64, picks: [Pick; 3], flags: [bool; 3]) -> Op {
    let mut kind = 0;
    let mut rest = selector;
    while rest >= WEIGHTS[kind] {
        rest -= WEIGHTS[kind];
        kind += 1;
    }
    let [p0, p1, p2] = picks;
    // A key source: live three times in four.
    let src = |i: u32, pick: Pick| {
        if (raw >> (2 * i)) & 3 != 0 {
            Src::Live(pick)
        } else {
            Src::Any(pick)
        }
    };
    let via = match raw >> 60 {
        0..=5 => Via::GetMut,
        6..=9 => Via::IndexMut,
        10..=13 => Via::MutSlice,
        _ => Via::GetUncheckedMut,
    };
    match kind {
        0 => Op::Insert(value),
        1 => Op::TryInsert(value),
        2 => Op::InsertWithKey(value),
        3 => Op::Extend((0..raw % 6).map(|i| (raw >> (3 + 8 * i)) % 1000).collect()),
        4 => Op::Remove(src(0, p0)),
        5 => Op::Churn(1 + value % 40),
        6 => Op::Get(p0),
        7 => Op::GetStale(p0),
        8 => Op::GetForgedBits(raw),
        9 => {
            let generation = (raw >> 32) as u32;
            let generation = if flags[0] {
                generation % 20
            } else {
                generation
            };
            Op::GetForgedParts(raw as usize % 40, generation)
        }
        10 => Op::GetMut(p0, value, via),
        11 => Op::Clear,
        12 => Op::Retain(1 + value % 4),
        13 => Op::Drain(value as usize % 5),
        14 => Op::Clone,
        15 => Op::CloneFrom(
            (0..raw % 5).map(|i| (raw >> (3 + 8 * i)) % 1000).collect(),
            flags[1],
        ),
        16 => Op::SerdeRoundTrip,
        17 => Op::Disjoint2([src(0, p0), src(1, p1)], value % 5 == 0),
        18 => Op::Disjoint3([src(0, p0), src(1, p1), src(2, p2)], value % 5 == 0),
        19 => Op::SortBy(flags[0]),
        20 => Op::SortByKey(1 + value % 7),
        21 => Op::SortUnstableBy(flags[0]),
        22 => Op::SwapPositions(p1, p2),
        23 => Op::Iter(value as usize % 8),
        24 => Op::TryReserve(value as usize % 40),
        25 => Op::ShrinkToFit,
        26 => Op::SetReuse(if flags[0] {
            Reuse::Lifo
        } else {
            Reuse::Fifo {
                min_free: (value % 5) as u32,
            }
        }),
        27 => Op::TryInsertWithKey(value, flags[0]),
        28 => Op::Detach(src(0, p0)),
        29 => Op::Reattach(p0, value),
        30 => Op::ReattachNotDetached(src(0, p0)),
        _ => Op::MutSlices,
    }
}

fn op() -> impl Strategy<Value = Op> {
    (
        0..TOTAL_WEIGHT,
        0u64..1000,
        any::<u64>(),
        any::<[Pick; 3]>(),
        any::<[bool; 3]>(),
    )
        .prop_map(|(selector, value, raw, picks, flags)| {
            make_op(selector, value, raw, picks, flags)
        })
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 0..MAX_OPS)
}

fn config() -> Config {
    Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    }
}

/// The comparator of `SortBy` and `SortUnstableBy`.
fn by_value(descending: bool) -> impl Fn(&u64, &u64) -> Ordering {
    move |a, b| if descending { b.cmp(a) } else { a.cmp(b) }
}

struct Harness<K: Key> {
    table: PackedTable<u64, K>,
    model: HashMap<K, u64>,
    /// The dense order the table must have: `key_slice()`.
    order: Vec<K>,
    /// Every key the table (or its ancestors, through clones and serde
    /// round trips) ever issued, in issue order.
    issued: Vec<K>,
    issued_set: HashSet<K>,
    /// The detached keys, with the values taken out under them.
    detached: HashMap<K, u64>,
    /// The fixed capacity, while the table has one.
    fixed: Option<usize>,
    retired_before: usize,
}

impl<K: Key> Harness<K> {
    fn new(reuse: Reuse, fixed: Option<usize>) -> Self {
        let mut table = match fixed {
            Some(capacity) => PackedTable::with_fixed_capacity(capacity),
            None => PackedTable::with_reuse(reuse),
        };
        table.set_reuse(reuse);
        assert_eq!(table.reuse(), reuse);
        if let Some(capacity) = fixed {
            assert_eq!(table.capacity(), capacity);
        }
        Harness {
            table,
            model: HashMap::new(),
            order: Vec::new(),
            issued: Vec::new(),
            issued_set: HashSet::new(),
            detached: HashMap::new(),
            fixed,
            retired_before: 0,
        }
    }

    /// Records a key the table just issued for `value` (at the end of the
    /// dense array).
    fn issue(&mut self, key: K, value: u64) {
        assert!(
            self.issued_set.insert(key),
            "key {key:?} was issued a second time"
        );
        self.issued.push(key);
        assert_eq!(self.model.insert(key, value), None);
        self.order.push(key);
        assert!(
            self.detached.keys().all(|d| d.index() != key.index()),
            "key {key:?} was issued in a detached slot"
        );
    }

    /// Slots of a fixed capacity that take no insertion: retired or
    /// detached.
    fn unusable(&self) -> usize {
        self.table.retired_count() + self.detached.len()
    }

    /// Whether the table cannot take another value: every slot of the fixed
    /// capacity is live or retired.
    fn full(&self) -> bool {
        self.fixed
            .is_some_and(|fixed| self.table.len() + self.unusable() == fixed)
    }

    fn dead_keys(&self) -> Vec<K> {
        self.issued
            .iter()
            .copied()
            .filter(|k| !self.model.contains_key(k))
            .collect()
    }

    fn pick(&self, src: Src) -> Option<K> {
        match src {
            Src::Live(pick) if !self.order.is_empty() => Some(*pick.get(&self.order)),
            Src::Live(pick) | Src::Any(pick) => {
                (!self.issued.is_empty()).then(|| *pick.get(&self.issued))
            }
        }
    }

    /// Checks the table against the model after an operation.
    fn check(&mut self) {
        let table = &self.table;
        table.check_invariants();
        assert_eq!(table.len(), self.model.len());
        assert_eq!(table.is_empty(), self.model.is_empty());
        assert_eq!(table.key_slice(), self.order.as_slice(), "dense order");
        assert_eq!(table.as_slice().len(), self.order.len());
        for (position, key) in self.order.iter().enumerate() {
            assert_eq!(table.as_slice()[position], self.model[key]);
            assert_eq!(table.position(*key), Some(position), "position({key:?})");
        }
        for &key in &self.issued {
            let expected = self.model.get(&key);
            assert_eq!(table.get(key), expected, "get({key:?})");
            assert_eq!(table.contains_key(key), expected.is_some());
            assert_eq!(
                table.is_detached(key),
                self.detached.contains_key(&key),
                "is_detached({key:?})"
            );
            if expected.is_none() {
                assert_eq!(table.position(key), None, "position of dead {key:?}");
            }
        }
        // A slot retires exactly when the occupant with the last generation
        // leaves it, and each such key is issued once.
        let retired = self
            .issued
            .iter()
            .filter(|k| {
                k.generation() == K::MAX_GENERATION
                    && !self.model.contains_key(k)
                    && !self.detached.contains_key(k)
            })
            .count();
        assert_eq!(table.retired_count(), retired, "retired_count");
        assert!(retired >= self.retired_before, "a retired slot came back");
        self.retired_before = retired;
        assert!(table.capacity() >= table.len());
        if let Some(fixed) = self.fixed {
            // A detached slot is not free either.
            assert_eq!(table.capacity(), fixed - retired - self.detached.len());
        }
    }

    /// Inserts into a full fixed-capacity table: must fail, change nothing.
    fn insert_into_full(&mut self, value: u64) {
        let before = self.table.len();
        let values = self.table.as_slice().as_ptr();
        let keys = self.table.key_slice().as_ptr();
        let err = self.table.try_insert(value).unwrap_err();
        // A fixed-capacity table never reallocates, refusing included.
        assert_eq!(self.table.as_slice().as_ptr(), values);
        assert_eq!(self.table.key_slice().as_ptr(), keys);
        assert!(err.is_fixed_capacity());
        assert!(!err.is_index_space());
        assert_eq!(err.limit(), self.fixed);
        assert_eq!(self.table.len(), before);
    }

    /// The same next key from two tables that must issue identically.
    fn assert_same_next_key(&mut self, copy: &mut PackedTable<u64, K>) {
        if self.full() {
            assert!(copy.try_insert(0).is_err());
            return;
        }
        let a = self.table.insert(7);
        let b = copy.insert(7);
        assert_eq!(a, b, "a copy issues the same keys as its original");
        self.issue(a, 7);
    }

    /// A copy must be equal, in the same dense order, with the same policy
    /// and retirements.
    fn assert_faithful_copy(&self, copy: &PackedTable<u64, K>) {
        copy.check_invariants();
        assert!(*copy == self.table);
        assert_eq!(copy.key_slice(), self.table.key_slice());
        assert_eq!(copy.as_slice(), self.table.as_slice());
        assert_eq!(copy.reuse(), self.table.reuse());
        assert_eq!(copy.retired_count(), self.table.retired_count());
        assert!(copy.capacity() >= copy.len());
        for &key in self.detached.keys() {
            assert!(copy.is_detached(key), "a copy keeps {key:?} detached");
        }
    }

    /// A clone keeps a fixed capacity, allocation included: inserting up to
    /// it never moves the values.
    fn assert_keeps_fixed_capacity(&self, copy: &PackedTable<u64, K>) {
        if self.fixed.is_none() {
            return;
        }
        assert_eq!(copy.capacity(), self.table.capacity());
        let mut copy = copy.clone();
        let values = copy.as_slice().as_ptr();
        let keys = copy.key_slice().as_ptr();
        while copy.try_insert(0).is_ok() {}
        assert_eq!(copy.as_slice().as_ptr(), values, "a fixed copy reallocated");
        assert_eq!(copy.key_slice().as_ptr(), keys);
        copy.check_invariants();
    }

    /// Removes `key` from the table and the model; a live key's position is
    /// filled by the last key.
    fn remove(&mut self, key: K) {
        let position = self.order.iter().position(|&k| k == key);
        assert_eq!(self.table.position(key), position);
        let expected = self.model.remove(&key);
        assert_eq!(self.table.remove(key), expected);
        if let Some(position) = position {
            self.order.swap_remove(position);
        }
        assert_eq!(self.table.remove(key), None, "removed twice");
        assert_eq!(self.table.position(key), None);
    }

    fn assert_disjoint<const N: usize>(&mut self, keys: [K; N]) {
        let live = keys.iter().all(|k| self.model.contains_key(k));
        let distinct = (0..N).all(|i| (0..i).all(|j| keys[i] != keys[j]));
        match self.table.get_disjoint_mut(keys) {
            Some(values) => {
                assert!(live && distinct, "get_disjoint_mut({keys:?}) gave Some");
                for (key, value) in keys.iter().zip(values) {
                    assert_eq!(*value, self.model[key]);
                    *value += 1;
                    *self.model.get_mut(key).unwrap() += 1;
                }
            }
            None => assert!(!(live && distinct), "get_disjoint_mut({keys:?}) gave None"),
        }
    }

    fn check_iterators(&mut self, split: usize) {
        let expected: Vec<(K, u64)> = self.order.iter().map(|&k| (k, self.model[&k])).collect();
        let n = expected.len();
        let table = &self.table;

        let mut iter = table.iter();
        let mut got = Vec::new();
        for remaining in (0..=n).rev() {
            assert_eq!(iter.len(), remaining);
            if let Some((k, v)) = iter.next() {
                got.push((k, *v));
            }
        }
        assert!(iter.next().is_none());
        assert_eq!(got, expected);

        let split = split.min(n);
        let mut iter = table.iter();
        let head: Vec<_> = iter.by_ref().take(split).map(|(k, v)| (k, *v)).collect();
        let tail: Vec<_> = iter.map(|(k, v)| (k, *v)).collect();
        assert_eq!(head.as_slice(), &expected[..split]);
        assert_eq!(tail.as_slice(), &expected[split..]);

        let keys: Vec<K> = expected.iter().map(|&(k, _)| k).collect();
        let values: Vec<u64> = expected.iter().map(|&(_, v)| v).collect();
        assert_eq!(table.keys().collect::<Vec<_>>(), keys);
        assert_eq!(table.values().copied().collect::<Vec<_>>(), values);
        assert_eq!(table.values().len(), n);
        let mut by_ref = Vec::new();
        for (k, v) in table {
            by_ref.push((k, *v));
        }
        assert_eq!(by_ref, expected);
        let owned: Vec<(K, u64)> = table.clone().into_iter().collect();
        assert_eq!(owned, expected);
        let rebuilt: PackedTable<u64, K> = PackedTable::from_iter_values(values.iter().copied());
        assert_eq!(rebuilt.as_slice(), values.as_slice());

        // Debug prints the map in dense order.
        let mut debug = String::from("{");
        for (i, (k, v)) in expected.iter().enumerate() {
            if i > 0 {
                debug.push_str(", ");
            }
            write!(debug, "{k:?}: {v:?}").unwrap();
        }
        debug.push('}');
        assert_eq!(format!("{table:?}"), debug);

        #[cfg(all(feature = "rayon", not(miri)))]
        {
            use rayon::prelude::*;
            let par: Vec<(K, u64)> = table.par_iter().map(|(k, v)| (k, *v)).collect();
            assert_eq!(par, expected);
        }

        // Mutable iteration: bump every value four ways.
        for (k, v) in self.table.iter_mut() {
            assert_eq!(*v, self.model[&k]);
            *v += 1;
        }
        let mut values_mut = self.table.values_mut();
        assert_eq!(values_mut.len(), n);
        for v in values_mut.by_ref().take(split) {
            *v += 1;
        }
        values_mut.for_each(|v| *v += 1);
        for (_, v) in &mut self.table {
            *v += 1;
        }
        for v in self.table.as_mut_slice() {
            *v += 1;
        }
        #[cfg(all(feature = "rayon", not(miri)))]
        {
            use rayon::prelude::*;
            self.table.par_iter_mut().for_each(|(_, v)| *v += 1);
        }
        let bumps = 4 + u64::from(cfg!(all(feature = "rayon", not(miri))));
        for v in self.model.values_mut() {
            *v += bumps;
        }
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::Insert(value) => {
                if self.full() {
                    self.insert_into_full(value);
                } else {
                    let key = self.table.insert(value);
                    self.issue(key, value);
                }
            }
            Op::TryInsert(value) => {
                if self.full() {
                    self.insert_into_full(value);
                } else {
                    let key = self.table.try_insert(value).expect("room left");
                    self.issue(key, value);
                }
            }
            Op::InsertWithKey(value) => {
                if self.full() {
                    self.insert_into_full(value);
                } else {
                    let mut seen = None;
                    let key = self.table.insert_with_key(|key| {
                        seen = Some(key);
                        value
                    });
                    assert_eq!(seen, Some(key), "closure saw the key it got");
                    self.issue(key, value);
                }
            }
            Op::Extend(values) => {
                if let Some(fixed) = self.fixed {
                    if self.table.len() + self.unusable() + values.len() > fixed {
                        return;
                    }
                }
                let before = self.table.len();
                self.table.extend(values.iter().copied());
                // Extend appends, in order.
                let added: Vec<K> = self.table.key_slice()[before..].to_vec();
                assert_eq!(&self.table.as_slice()[before..], values.as_slice());
                for (key, value) in added.into_iter().zip(values) {
                    self.issue(key, value);
                }
            }
            Op::Remove(src) => {
                let Some(key) = self.pick(src) else { return };
                self.remove(key);
            }
            Op::Churn(rounds) => {
                for round in 0..rounds {
                    if self.full() {
                        self.insert_into_full(round);
                        break;
                    }
                    let key = self.table.insert(round);
                    self.issue(key, round);
                    assert_eq!(self.table.position(key), Some(self.table.len() - 1));
                    self.remove(key);
                }
            }
            Op::Get(pick) => {
                if self.order.is_empty() {
                    return;
                }
                let key = *pick.get(&self.order);
                let value = self.model[&key];
                assert_eq!(self.table[key], value);
                assert_eq!(self.table.get_mut(key).copied(), Some(value));
                // SAFETY: `key` is live in the model, which the table matches.
                assert_eq!(unsafe { *self.table.get_unchecked(key) }, value);
                // SAFETY: as above.
                assert_eq!(unsafe { *self.table.get_unchecked_mut(key) }, value);
                let [only] = self.table.get_disjoint_mut([key]).expect("live key");
                assert_eq!(*only, value);
                let position = self.table.position(key).unwrap();
                assert_eq!(self.table.key_slice()[position], key);
                assert_eq!(self.table.as_slice()[position], value);
            }
            Op::GetStale(pick) => {
                let dead = self.dead_keys();
                if dead.is_empty() {
                    return;
                }
                let key = *pick.get(&dead);
                assert_eq!(self.table.get(key), None);
                assert_eq!(self.table.get_mut(key), None);
                assert!(!self.table.contains_key(key));
                assert_eq!(self.table.position(key), None);
                assert!(self.table.get_disjoint_mut([key]).is_none());
                assert_eq!(self.table.remove(key), None);
                assert!(!self.table.key_slice().contains(&key));
            }
            Op::GetForgedBits(bits) => {
                if let Some(key) = K::from_bits(bits) {
                    assert_eq!(key.to_bits(), bits);
                    assert_eq!(self.table.get(key), self.model.get(&key));
                    assert_eq!(self.table.contains_key(key), self.model.contains_key(&key));
                    assert_eq!(
                        self.table.position(key),
                        self.order.iter().position(|&k| k == key)
                    );
                }
            }
            Op::GetForgedParts(index, generation) => {
                if let Some(key) = K::from_parts(index, generation) {
                    assert_eq!((key.index(), key.generation()), (index, generation));
                    assert_eq!(self.table.get(key), self.model.get(&key));
                    assert_eq!(
                        self.table.get_mut(key).copied(),
                        self.model.get(&key).copied()
                    );
                    assert_eq!(
                        self.table.position(key),
                        self.order.iter().position(|&k| k == key)
                    );
                }
            }
            Op::GetMut(pick, value, via) => {
                if self.order.is_empty() {
                    return;
                }
                let key = *pick.get(&self.order);
                match via {
                    Via::GetMut => *self.table.get_mut(key).unwrap() = value,
                    Via::IndexMut => self.table[key] = value,
                    Via::MutSlice => {
                        let position = self.table.position(key).unwrap();
                        self.table.as_mut_slice()[position] = value;
                    }
                    // SAFETY: `key` is live in the model, which the table
                    // matches.
                    Via::GetUncheckedMut => unsafe { *self.table.get_unchecked_mut(key) = value },
                }
                self.model.insert(key, value);
            }
            Op::Clear => {
                self.table.clear();
                self.model.clear();
                self.order.clear();
                assert!(self.table.is_empty());
                assert!(self.table.key_slice().is_empty());
                assert_eq!(self.table.iter().next(), None);
            }
            Op::Retain(modulus) => {
                let mut visited = Vec::new();
                self.table.retain(|key, value| {
                    visited.push((key, *value));
                    let keep = *value % modulus != 0;
                    if keep {
                        *value += 1;
                    }
                    keep
                });
                let expected: Vec<(K, u64)> =
                    self.order.iter().map(|&k| (k, self.model[&k])).collect();
                assert_eq!(visited, expected, "retain visits in dense order");
                self.model.retain(|_, value| {
                    let keep = *value % modulus != 0;
                    if keep {
                        *value += 1;
                    }
                    keep
                });
                // The survivors keep their order.
                let model = &self.model;
                self.order.retain(|k| model.contains_key(k));
            }
            Op::Drain(take) => {
                let n = self.model.len();
                let expected: Vec<(K, u64)> =
                    self.order.iter().map(|&k| (k, self.model[&k])).collect();
                let mut drain = self.table.drain();
                assert_eq!(drain.len(), n);
                let taken: Vec<(K, u64)> = drain.by_ref().take(take).collect();
                assert_eq!(drain.len(), n - taken.len());
                drop(drain);
                assert_eq!(taken.as_slice(), &expected[..take.min(n)], "dense order");
                self.model.clear();
                self.order.clear();
                assert!(self.table.is_empty());
            }
            Op::Clone => {
                let mut copy = self.table.clone();
                self.assert_faithful_copy(&copy);
                self.assert_keeps_fixed_capacity(&copy);
                self.assert_same_next_key(&mut copy);
                self.table = copy;
            }
            Op::CloneFrom(junk, fixed_target) => {
                let mut target: PackedTable<u64, K> = if fixed_target {
                    PackedTable::with_fixed_capacity(junk.len() + 3)
                } else {
                    PackedTable::with_reuse(Reuse::Fifo { min_free: 1 })
                };
                target.extend(junk);
                if let Some(&first) = target.key_slice().first() {
                    target.remove(first);
                }
                target.clone_from(&self.table);
                self.assert_faithful_copy(&target);
                self.assert_keeps_fixed_capacity(&target);
                self.assert_same_next_key(&mut target);
                self.table = target;
            }
            Op::SerdeRoundTrip => {
                #[cfg(feature = "serde")]
                {
                    let json = serde_json::to_string(&self.table).unwrap();
                    let mut back: PackedTable<u64, K> = serde_json::from_str(&json).unwrap();
                    self.assert_faithful_copy(&back);
                    assert_eq!(serde_json::to_string(&back).unwrap(), json);
                    // The fixed capacity is not part of the serialized form
                    // (the copy is growable), and the free list is rebuilt
                    // in index order: the next key is a fresh one, not
                    // necessarily the original's (`issue` checks it is new).
                    self.fixed = None;
                    let key = back.insert(9);
                    self.table = back;
                    self.issue(key, 9);
                }
            }
            Op::Disjoint2(srcs, dup) => {
                let (Some(a), Some(b)) = (self.pick(srcs[0]), self.pick(srcs[1])) else {
                    return;
                };
                self.assert_disjoint([a, if dup { a } else { b }]);
            }
            Op::Disjoint3(srcs, dup) => {
                let (Some(a), Some(b), Some(c)) =
                    (self.pick(srcs[0]), self.pick(srcs[1]), self.pick(srcs[2]))
                else {
                    return;
                };
                self.assert_disjoint([a, b, if dup { a } else { c }]);
            }
            Op::SortBy(descending) => {
                let compare = by_value(descending);
                self.table.sort_by(&compare);
                let model = &self.model;
                // `sort_by` on a `Vec` is stable too: the exact order.
                self.order.sort_by(|a, b| compare(&model[a], &model[b]));
            }
            Op::SortByKey(modulus) => {
                self.table.sort_by_key(|v| v % modulus);
                let model = &self.model;
                self.order.sort_by_key(|k| model[k] % modulus);
            }
            Op::SortUnstableBy(descending) => {
                let compare = by_value(descending);
                self.table.sort_unstable_by(&compare);
                let values = self.table.as_slice();
                assert!(
                    values
                        .windows(2)
                        .all(|w| compare(&w[0], &w[1]) != Ordering::Greater),
                    "sorted"
                );
                // Any order of equal values will do; the keys must be the
                // same set, each still naming its value (checked next).
                let mut before = self.order.clone();
                let mut after = self.table.key_slice().to_vec();
                before.sort();
                after.sort();
                assert_eq!(before, after);
                self.order = self.table.key_slice().to_vec();
            }
            Op::SwapPositions(a, b) => {
                let n = self.order.len();
                if n == 0 {
                    return;
                }
                let (a, b) = (a.index(n), b.index(n));
                self.table.swap_positions(a, b);
                self.order.swap(a, b);
            }
            Op::Iter(split) => self.check_iterators(split),
            Op::TryReserve(additional) => {
                let result = self.table.try_reserve(additional);
                match self.fixed {
                    Some(fixed) => {
                        let room = fixed - self.unusable() - self.table.len();
                        assert_eq!(result.is_ok(), additional <= room);
                        if let Err(err) = result {
                            assert!(err.is_fixed_capacity());
                            assert_eq!(err.limit(), Some(fixed));
                        }
                        if result.is_ok() {
                            assert!(self.table.capacity() >= self.table.len() + additional);
                        }
                    }
                    None => {
                        result.unwrap();
                        assert!(self.table.capacity() >= self.table.len() + additional);
                    }
                }
            }
            Op::ShrinkToFit => {
                let before = self.table.capacity();
                self.table.shrink_to_fit();
                assert!(self.table.capacity() >= self.table.len());
                if self.fixed.is_some() {
                    assert_eq!(self.table.capacity(), before);
                }
            }
            Op::SetReuse(reuse) => {
                self.table.set_reuse(reuse);
                assert_eq!(self.table.reuse(), reuse);
            }
            Op::TryInsertWithKey(value, fail) => {
                if self.full() {
                    // A full table panics before calling the closure.
                    let result = catch_unwind(AssertUnwindSafe(|| {
                        self.table
                            .try_insert_with_key(|_| -> Result<u64, ()> { unreachable!() })
                    }));
                    assert!(result.is_err(), "try_insert_with_key on a full table");
                    return;
                }
                let mut seen = None;
                let result = self.table.try_insert_with_key(|key| {
                    seen = Some(key);
                    if fail {
                        Err(value)
                    } else {
                        Ok(value)
                    }
                });
                match result {
                    Ok(key) => {
                        assert!(!fail);
                        assert_eq!(seen, Some(key), "closure saw the key it got");
                        self.issue(key, value);
                    }
                    Err(err) => {
                        assert!(fail);
                        assert_eq!(err, value);
                        let key = seen.expect("the closure ran");
                        assert!(!self.table.contains_key(key), "Err inserted nothing");
                        // The next insertion gets the key the failed one saw.
                        let again = self.table.insert(value);
                        assert_eq!(again, key);
                        self.issue(again, value);
                    }
                }
            }
            Op::Detach(src) => {
                let Some(key) = self.pick(src) else { return };
                let position = self.order.iter().position(|&k| k == key);
                let taken = self.table.detach(key);
                assert_eq!(taken, self.model.remove(&key), "detach({key:?})");
                if let Some(value) = taken {
                    self.detached.insert(key, value);
                    // The last value fills the hole, as for `remove`.
                    self.order
                        .swap_remove(position.expect("a live key has a position"));
                }
                assert_eq!(self.table.detach(key), None, "detached twice");
                assert_eq!(self.table.remove(key), None, "removed while detached");
            }
            Op::Reattach(pick, bump) => {
                let mut keys: Vec<K> = self.detached.keys().copied().collect();
                if keys.is_empty() {
                    return;
                }
                keys.sort();
                let key = *pick.get(&keys);
                let value = self.detached.remove(&key).unwrap() + bump;
                self.table.reattach(key, value);
                self.model.insert(key, value);
                // Back at the end of the dense array.
                self.order.push(key);
                assert_eq!(self.table.get(key), Some(&value));
            }
            Op::ReattachNotDetached(src) => {
                let Some(key) = self.pick(src) else { return };
                if self.detached.contains_key(&key) {
                    return;
                }
                let result = catch_unwind(AssertUnwindSafe(|| self.table.reattach(key, 0)));
                assert!(result.is_err(), "reattach({key:?}) of a key not detached");
            }
            Op::MutSlices => {
                let (keys, values) = self.table.as_mut_slices();
                assert_eq!(keys, self.order.as_slice());
                for (key, value) in keys.iter().zip(values) {
                    assert_eq!(*value, self.model[key]);
                    *value += 1;
                }
                for value in self.model.values_mut() {
                    *value += 1;
                }
            }
        }
    }
}

fn run<K: Key>(reuse: Reuse, fixed: Option<usize>, ops: Vec<Op>) {
    let mut harness = Harness::<K>::new(reuse, fixed);
    harness.check();
    for op in ops {
        harness.apply(op);
        harness.check();
    }
}

macro_rules! model_tests {
    ($($name:ident: $key:ty, $reuse:expr;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(fixed in prop::option::weighted(0.25, 0usize..24), ops in ops()) {
                    run::<$key>($reuse, fixed, ops);
                }
            )*
        }
    };
}

model_tests! {
    id_lifo: Id, Reuse::Lifo;
    id_fifo: Id, Reuse::Fifo { min_free: 3 };
    id32_lifo: Id32, Reuse::Lifo;
    id32_fifo: Id32, Reuse::Fifo { min_free: 3 };
    gen4_lifo: Gen4, Reuse::Lifo;
    gen4_fifo: Gen4, Reuse::Fifo { min_free: 3 };
}

/// Swap-remove, exactly: removing the value at position `p` moves the last
/// value (and its key) to `p`.
#[test]
fn remove_moves_the_last_value_into_the_hole() {
    let mut table: PackedTable<char> = PackedTable::new();
    let keys: Vec<Id> = "abcde".chars().map(|c| table.insert(c)).collect();
    assert_eq!(table.remove(keys[1]), Some('b'));
    assert_eq!(table.as_slice(), ['a', 'e', 'c', 'd']);
    assert_eq!(table.key_slice(), [keys[0], keys[4], keys[2], keys[3]]);
    assert_eq!(table.position(keys[4]), Some(1));
    // Removing the last value moves nothing.
    assert_eq!(table.remove(keys[3]), Some('d'));
    assert_eq!(table.as_slice(), ['a', 'e', 'c']);
    table.check_invariants();
}

// ---------------------------------------------------------------------------
// Sorting keeps every key valid.

/// The payload of every panic the tests cause on purpose.
const BOOM: &str = "intentional test panic";

/// Keeps the intentional panics out of the test output.
fn quiet_intentional_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&BOOM) {
                default(info);
            }
        }));
    });
}

/// A sort key with many ties and a serial number that tells equal keys
/// apart, so stability is visible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct Item {
    rank: u32,
    serial: u32,
}

const SORT_LEN: usize = if cfg!(miri) { 24 } else { 1000 };

/// A table of `SORT_LEN` items in random order, built with removals and
/// slot reuse on the way, and the removed keys.
fn shuffled_table<K: Key>(seed: u64) -> (PackedTable<Item, K>, Vec<K>) {
    let mut rng = Lcg(seed);
    let mut table = PackedTable::default();
    let mut dead = Vec::new();
    let mut serial = 0;
    while table.len() < SORT_LEN {
        let rank = (rng.next() % 50) as u32;
        let key = table.insert(Item { rank, serial });
        serial += 1;
        if rng.next() % 4 == 0 {
            // Remove a random value: the last one moves into its place.
            let victim = table.key_slice()[rng.next() as usize % table.len()];
            assert!(table.remove(victim).is_some());
            dead.push(victim);
        }
        let _ = key;
    }
    table.check_invariants();
    (table, dead)
}

/// Checks that every key still names the value it named in `before`, that
/// stale keys stay stale, that `position` agrees with `key_slice`, and that
/// the values are sorted by `rank` (ascending or descending).
fn assert_sorted_and_keys_follow<K: Key>(
    table: &PackedTable<Item, K>,
    before: &[(K, Item)],
    dead: &[K],
    descending: bool,
) {
    table.check_invariants();
    assert_eq!(table.len(), before.len());
    for &(key, item) in before {
        assert_eq!(table.get(key), Some(&item), "{key:?} lost its value");
    }
    for &key in dead {
        assert_eq!(table.get(key), None, "stale {key:?} came back");
    }
    for (position, (&key, item)) in table.key_slice().iter().zip(table.as_slice()).enumerate() {
        assert_eq!(table.position(key), Some(position));
        assert_eq!(table[key], *item);
    }
    let ranks: Vec<u32> = table.values().map(|item| item.rank).collect();
    let mut sorted = ranks.clone();
    sorted.sort_unstable();
    if descending {
        sorted.reverse();
    }
    assert_eq!(ranks, sorted);
}

/// A stable sort keeps equal ranks in their previous dense order.
fn assert_stable<K: Key>(table: &PackedTable<Item, K>, before: &[(K, Item)]) {
    let previous: HashMap<u32, usize> = before
        .iter()
        .enumerate()
        .map(|(position, (_, item))| (item.serial, position))
        .collect();
    for pair in table.as_slice().windows(2) {
        if pair[0].rank == pair[1].rank {
            assert!(
                previous[&pair[0].serial] < previous[&pair[1].serial],
                "equal ranks changed order: {pair:?}"
            );
        }
    }
}

fn sort_keeps_keys<K: Key>(seed: u64) {
    // sort_by, ascending then descending.
    for descending in [false, true] {
        let (mut table, dead) = shuffled_table::<K>(seed);
        let before: Vec<(K, Item)> = table.iter().map(|(k, v)| (k, *v)).collect();
        table.sort_by(|a, b| {
            if descending {
                b.rank.cmp(&a.rank)
            } else {
                a.rank.cmp(&b.rank)
            }
        });
        assert_sorted_and_keys_follow(&table, &before, &dead, descending);
        assert_stable(&table, &before);
    }

    // sort_by_key.
    let (mut table, dead) = shuffled_table::<K>(seed + 1);
    let before: Vec<(K, Item)> = table.iter().map(|(k, v)| (k, *v)).collect();
    table.sort_by_key(|item| item.rank);
    assert_sorted_and_keys_follow(&table, &before, &dead, false);
    assert_stable(&table, &before);

    // sort_unstable_by.
    let (mut table, dead) = shuffled_table::<K>(seed + 2);
    let before: Vec<(K, Item)> = table.iter().map(|(k, v)| (k, *v)).collect();
    table.sort_unstable_by(|a, b| a.rank.cmp(&b.rank));
    assert_sorted_and_keys_follow(&table, &before, &dead, false);

    // After a sort the table works as before: removals repoint the moved
    // key, insertions append, and the stale keys stay stale.
    let mut rng = Lcg(seed);
    let mut live: Vec<(K, Item)> = table.iter().map(|(k, v)| (k, *v)).collect();
    for round in 0..SORT_LEN / 2 {
        let (key, item) = live.swap_remove(rng.next() as usize % live.len());
        assert_eq!(table.remove(key), Some(item));
        let item = Item {
            rank: round as u32,
            serial: u32::MAX - round as u32,
        };
        let fresh = table.insert(item);
        assert!(!dead.contains(&fresh) && !before.iter().any(|&(k, _)| k == fresh));
        assert_eq!(table.key_slice().last(), Some(&fresh));
        live.push((fresh, item));
    }
    table.check_invariants();
    for &(key, item) in &live {
        assert_eq!(table.get(key), Some(&item));
    }
    for &key in &dead {
        assert_eq!(table.get(key), None);
    }
}

#[test]
fn sort_keeps_every_key_pointing_at_its_value() {
    sort_keeps_keys::<Id>(1);
    sort_keeps_keys::<Id32>(2);
    sort_keeps_keys::<Gen4>(3);
}

#[test]
fn sorting_empty_and_single_tables() {
    let mut table: PackedTable<u8> = PackedTable::new();
    table.sort_by(|a, b| a.cmp(b));
    table.sort_unstable_by(|a, b| a.cmp(b));
    table.sort_by_key(|v| *v);
    table.check_invariants();
    let key = table.insert(5);
    table.sort_by(|_, _| unreachable!("one value needs no comparison"));
    table.sort_unstable_by(|_, _| unreachable!("one value needs no comparison"));
    assert_eq!(table[key], 5);
    assert_eq!(table.position(key), Some(0));
    table.check_invariants();
}

/// A comparator that panics on its `n`th call moves nothing: the dense
/// order, the values and every key are as before.
#[test]
fn panicking_comparator_leaves_the_table_unchanged() {
    quiet_intentional_panics();
    let (table, dead) = shuffled_table::<Id32>(9);
    let before: Vec<(Id32, Item)> = table.iter().map(|(k, v)| (k, *v)).collect();
    let calls: &[usize] = if cfg!(miri) {
        &[0, 7, 40]
    } else {
        &[0, 1, 7, 100, 500, 2000, 5000]
    };
    for &n in calls {
        for method in 0..3 {
            let mut table = table.clone();
            let count = Cell::new(0);
            // Counts a call, and panics on call number `n` (from 0).
            let tick = || {
                if count.get() == n {
                    panic::panic_any(BOOM);
                }
                count.set(count.get() + 1);
            };
            let compare = |a: &Item, b: &Item| {
                tick();
                a.rank.cmp(&b.rank)
            };
            let result = catch_unwind(AssertUnwindSafe(|| match method {
                0 => table.sort_by(compare),
                1 => table.sort_unstable_by(compare),
                _ => table.sort_by_key(|item| {
                    tick();
                    item.rank
                }),
            }));
            let panicked = result.is_err();
            table.check_invariants();
            if panicked {
                let after: Vec<(Id32, Item)> = table.iter().map(|(k, v)| (k, *v)).collect();
                assert_eq!(after, before, "method {method}, panic at call {n}");
            } else {
                // The sort finished before the nth call.
                assert_sorted_and_keys_follow(&table, &before, &dead, false);
            }
            for &key in &dead {
                assert_eq!(table.get(key), None);
            }
            // Panic at call 0 always happens (there are comparisons to make).
            if n == 0 {
                assert!(panicked, "method {method}");
            }
        }
    }
}

/// `swap_positions` swaps values and keys together, and panics on an
/// out-of-bounds position without changing anything.
#[test]
fn swap_positions_moves_keys_with_values() {
    quiet_intentional_panics();
    let mut table: PackedTable<u32, Id32> = PackedTable::default();
    let keys: Vec<Id32> = (0..5).map(|n| table.insert(n)).collect();
    table.swap_positions(0, 4);
    table.swap_positions(2, 2);
    assert_eq!(table.as_slice(), [4, 1, 2, 3, 0]);
    assert_eq!(
        table.key_slice(),
        [keys[4], keys[1], keys[2], keys[3], keys[0]]
    );
    assert_eq!(table.position(keys[0]), Some(4));
    assert_eq!(table[keys[0]], 0);
    let result = catch_unwind(AssertUnwindSafe(|| table.swap_positions(1, 5)));
    assert!(result.is_err());
    table.check_invariants();
    assert_eq!(table.as_slice(), [4, 1, 2, 3, 0]);
    for (n, &key) in keys.iter().enumerate() {
        assert_eq!(table[key], n as u32);
    }
}

/// A full fixed-capacity table refuses values with an error that names the
/// capacity, and changes nothing; after a removal it takes one again.
#[test]
fn try_insert_into_full_fixed_table() {
    for reuse in [Reuse::Lifo, Reuse::Fifo { min_free: 3 }] {
        let mut table: PackedTable<u32, Gen4> = PackedTable::with_fixed_capacity(3);
        table.set_reuse(reuse);
        let keys: Vec<Gen4> = (0..3).map(|n| table.try_insert(n).unwrap()).collect();
        let err = table.try_insert(3).unwrap_err();
        assert!(err.is_fixed_capacity() && !err.is_index_space());
        assert_eq!(err.limit(), Some(3));
        assert!(table.try_reserve(1).is_err());
        assert_eq!(table.as_slice(), [0, 1, 2]);
        assert_eq!(table.key_slice(), keys.as_slice());
        table.check_invariants();
        assert_eq!(table.remove(keys[0]), Some(0));
        // FIFO's reserve cannot be kept when the table cannot grow.
        let again = table.try_insert(4).unwrap();
        assert_eq!((again.index(), again.generation()), (0, 2));
        assert_eq!(table.as_slice(), [2, 1, 4]);
        assert_eq!(table.get(keys[0]), None);
        table.check_invariants();
    }
}

/// Serde keeps the dense order, every key, the stale keys' staleness and
/// the next key to be issued.
#[cfg(feature = "serde")]
#[test]
fn serde_round_trip_keeps_dense_order_and_stale_keys() {
    for reuse in [Reuse::Lifo, Reuse::Fifo { min_free: 3 }] {
        let (mut table, dead) = shuffled_table::<Gen4>(4);
        table.set_reuse(reuse);
        // A dense order that is neither insertion nor slot order.
        table.sort_unstable_by(|a, b| b.serial.cmp(&a.serial));
        table.swap_positions(0, 1);
        let json = serde_json::to_string(&table).unwrap();
        let mut back: PackedTable<Item, Gen4> = serde_json::from_str(&json).unwrap();
        back.check_invariants();
        assert_eq!(back.key_slice(), table.key_slice());
        assert_eq!(back.as_slice(), table.as_slice());
        assert_eq!(back.reuse(), reuse);
        assert_eq!(back.retired_count(), table.retired_count());
        for (position, &key) in table.key_slice().iter().enumerate() {
            assert_eq!(back.position(key), Some(position));
        }
        for &key in &dead {
            assert_eq!(
                back.get(key),
                None,
                "stale {key:?} resolves after a round trip"
            );
        }
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        // The free list is rebuilt (in index order), so the copy may issue
        // keys in another order, but never a key issued before.
        let before: Vec<Gen4> = table.keys().chain(dead.iter().copied()).collect();
        for _ in 0..40 {
            let key = back.insert(Item { rank: 0, serial: 0 });
            assert!(
                !before.contains(&key),
                "{key:?} issued again after a round trip"
            );
        }
        back.check_invariants();
    }
}

/// A hand-written key that lies: every few calls `index()` names the next
/// slot and `generation()` a newer generation, so the keys the table keeps
/// beside its values do not always name their own slots. Such a key type
/// is not trusted (`Key::__PARTS_TRUST` keeps its default), so the table
/// checks every position and slot it takes from a key: whatever the key
/// says, operations give wrong answers or panic, never undefined behaviour
/// (Miri runs this).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
struct LyingKey(u64);

thread_local! {
    static LIES: Cell<u32> = const { Cell::new(0) };
}

/// Whether this call lies (one call in three).
fn lie_now() -> bool {
    LIES.with(|lies| {
        let n = lies.get().wrapping_add(1);
        lies.set(n);
        n % 3 == 0
    })
}

impl Key for LyingKey {
    const INDEX_BITS: u32 = 32;
    const GENERATION_BITS: u32 = 32;
    fn from_bits(bits: u64) -> Option<Self> {
        (bits >> 32 != 0).then_some(LyingKey(bits))
    }
    fn to_bits(self) -> u64 {
        self.0
    }
    fn index(self) -> usize {
        (self.0 & 0xffff_ffff) as usize + usize::from(lie_now())
    }
    fn generation(self) -> u32 {
        (self.0 >> 32) as u32 + u32::from(lie_now())
    }
}

#[test]
fn lying_keys_never_reach_past_the_values() {
    quiet_intentional_panics();
    let mut table: PackedTable<String, LyingKey> = PackedTable::default();
    let mut keys = Vec::new();
    let mut rng = Lcg(7);
    let steps = if cfg!(miri) { 120 } else { 4000 };
    for step in 0..steps {
        let roll = rng.next() % 8;
        let pick = |rng: &mut Lcg, keys: &[LyingKey]| {
            if keys.is_empty() {
                LyingKey(1 << 32)
            } else {
                keys[rng.next() as usize % keys.len()]
            }
        };
        let key = pick(&mut rng, &keys);
        // Any of these may panic on a lie (a position out of bounds); the
        // table stays memory-safe either way.
        let _ = catch_unwind(AssertUnwindSafe(|| match roll {
            0..=2 => keys.push(table.insert(step.to_string())),
            3 => drop(table.remove(key)),
            4 => drop(table.get(key).map(String::len)),
            5 => {
                if let Some(value) = table.get_mut(key) {
                    value.push('!');
                }
            }
            6 => table.retain(|_, value| value.len() % 3 != 0),
            _ => {
                if let Some(value) = table.detach(key) {
                    let _ = table.try_reattach_for_test(key, value);
                }
            }
        }));
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let total: usize = table.values().map(String::len).sum();
            let reached: usize = keys
                .iter()
                .filter_map(|&key| table.get(key))
                .map(String::len)
                .sum();
            std::hint::black_box((total, reached, table.len()));
        }));
    }
}

/// `reattach` panics on a key that is not detached (a lie can make it so).
trait TryReattach<K> {
    fn try_reattach_for_test(&mut self, key: K, value: String) -> Result<(), ()>;
}

impl<K: Key> TryReattach<K> for PackedTable<String, K> {
    fn try_reattach_for_test(&mut self, key: K, value: String) -> Result<(), ()> {
        catch_unwind(AssertUnwindSafe(|| self.reattach(key, value))).map_err(|_| ())
    }
}
