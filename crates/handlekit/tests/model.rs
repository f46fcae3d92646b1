//! Model test: `IdTable` and `LookupTable` (a `SlotTable` in each layout)
//! against a `HashMap<K, u64>`.
//!
//! A random sequence of operations runs on a table and on the model. Every
//! key the table ever issued is kept; after each operation every one of them
//! must resolve exactly as the model says (live keys to their value, removed
//! keys to nothing), no key may ever be issued twice, the retired-slot count
//! must match the keys removed at the last generation, and the table's own
//! invariant checker must pass.
//!
//! Detached keys (`detach`, `reattach`) are kept beside the model, with the
//! value held outside the table: they must resolve to nothing, stay
//! detached through `clear`, clones and serde round trips, and never have
//! their slot handed to an insertion.
//!
//! The same body runs for `Id`, `Id32` and keys with 4 and 2 generation
//! bits (where slots retire constantly), under `Reuse::Lifo` and
//! `Reuse::Fifo { min_free: 3 }`, on growable and (sometimes) fixed-capacity
//! tables.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

mod common;

use common::iter_check::check_double_ended;
use handlekit::layout::{Interleaved, Layout, Split};
use handlekit::{define_key, Id, Id32, Key, Reuse, SlotTable};
use proptest::prelude::*;
use proptest::sample::Index as Pick;
use proptest::test_runner::Config;

define_key! {
    /// 28 index bits, 4 generation bits: a slot retires after 15 occupants.
    pub struct Gen4(u32; index_bits = 28);
    /// 30 index bits, 2 generation bits: a slot retires after 3 occupants.
    pub struct Gen2(u32; index_bits = 30);
}

const CASES: u32 = if cfg!(miri) { 4 } else { 256 };
const MAX_OPS: usize = if cfg!(miri) { 20 } else { 200 };

/// The key bounds the harness needs: with the `serde` feature, keys must
/// also round-trip through serde (every key made by `define_key!` does).
#[cfg(feature = "serde")]
trait TestKey: Key + serde::Serialize + serde::de::DeserializeOwned {}
#[cfg(feature = "serde")]
impl<K: Key + serde::Serialize + serde::de::DeserializeOwned> TestKey for K {}
/// The key bounds the harness needs.
#[cfg(not(feature = "serde"))]
trait TestKey: Key {}
#[cfg(not(feature = "serde"))]
impl<K: Key> TestKey for K {}

/// Where a key for an operation comes from.
#[derive(Clone, Copy, Debug)]
enum Src {
    /// A live key (falls back to any issued key if none is live).
    Live(Pick),
    /// Any key ever issued, live or dead.
    Any(Pick),
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
    /// Overwrite a live value through `get_mut` (false) or `IndexMut` (true).
    GetMut(Pick, u64, bool),
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
}

/// Operation weights, in the order `make_op` tries them.
const WEIGHTS: [u32; 27] = [
    20, // Insert
    4,  // TryInsert
    3,  // InsertWithKey
    2,  // Extend
    14, // Remove
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
    3,  // Disjoint3
    3,  // Iter
    1,  // TryReserve
    1,  // ShrinkToFit
    1,  // SetReuse
    2,  // Churn
    3,  // TryInsertWithKey
    4,  // Detach
    3,  // Reattach
    1,  // ReattachNotDetached
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
/// parameters. (One selector instead of a `prop_oneof!` of 22 arms: proptest
/// seeds an RNG for each arm below the one it picks, which is slow under
/// Miri. The selector shrinks towards 0, that is towards `Insert`.)
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
    match kind {
        0 => Op::Insert(value),
        1 => Op::TryInsert(value),
        2 => Op::InsertWithKey(value),
        // Now and then a bulk insert, so tables span several bitset words
        // and iteration meets fully occupied words.
        3 if flags[2] && value % 4 == 0 => {
            Op::Extend((0..64 + raw % 67).map(|i| (raw ^ i) % 1000).collect())
        }
        3 => Op::Extend((0..raw % 6).map(|i| (raw >> (3 + 8 * i)) % 1000).collect()),
        4 => Op::Remove(src(0, p0)),
        5 => Op::Get(p0),
        6 => Op::GetStale(p0),
        7 => Op::GetForgedBits(raw),
        8 => {
            let generation = (raw >> 32) as u32;
            let generation = if flags[0] {
                generation % 20
            } else {
                generation
            };
            Op::GetForgedParts(raw as usize % 40, generation)
        }
        9 => Op::GetMut(p0, value, flags[0]),
        10 => Op::Clear,
        11 => Op::Retain(1 + value % 4),
        12 => Op::Drain(value as usize % 5),
        13 => Op::Clone,
        14 => Op::CloneFrom(
            (0..raw % 5).map(|i| (raw >> (3 + 8 * i)) % 1000).collect(),
            flags[1],
        ),
        15 => Op::SerdeRoundTrip,
        16 => Op::Disjoint2([src(0, p0), src(1, p1)], value % 5 == 0),
        17 => Op::Disjoint3([src(0, p0), src(1, p1), src(2, p2)], value % 5 == 0),
        18 => Op::Iter(value as usize % 8),
        19 => Op::TryReserve(value as usize % 40),
        20 => Op::ShrinkToFit,
        21 => Op::SetReuse(if flags[0] {
            Reuse::Lifo
        } else {
            Reuse::Fifo {
                min_free: (value % 5) as u32,
            }
        }),
        22 => Op::Churn(1 + value % 64),
        23 => Op::TryInsertWithKey(value, flags[0]),
        24 => Op::Detach(src(0, p0)),
        25 => Op::Reattach(p0, value),
        _ => Op::ReattachNotDetached(src(0, p0)),
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

struct Harness<K: TestKey, L: Layout = Split> {
    table: SlotTable<u64, K, L>,
    model: HashMap<K, u64>,
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

impl<K: TestKey, L: Layout> Harness<K, L> {
    fn new(reuse: Reuse, fixed: Option<usize>) -> Self {
        let mut table = match fixed {
            Some(capacity) => SlotTable::with_fixed_capacity(capacity),
            None => SlotTable::with_reuse(reuse),
        };
        table.set_reuse(reuse);
        assert_eq!(table.reuse(), reuse);
        if let Some(capacity) = fixed {
            assert_eq!(table.capacity(), capacity);
        }
        Harness {
            table,
            model: HashMap::new(),
            issued: Vec::new(),
            issued_set: HashSet::new(),
            detached: HashMap::new(),
            fixed,
            retired_before: 0,
        }
    }

    /// Records a key the table just issued for `value`.
    fn issue(&mut self, key: K, value: u64) {
        assert!(
            self.issued_set.insert(key),
            "key {key:?} was issued a second time"
        );
        self.issued.push(key);
        assert_eq!(self.model.insert(key, value), None);
        assert!(
            self.detached.keys().all(|d| d.index() != key.index()),
            "key {key:?} was issued in a detached slot"
        );
    }

    /// Whether the table cannot take another value.
    fn full(&self) -> bool {
        self.fixed.is_some() && self.table.len() == self.table.capacity()
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

    /// Checks the table against the model after an operation.
    fn check(&mut self) {
        let table = &self.table;
        table.check_invariants();
        assert_eq!(table.len(), self.model.len());
        assert_eq!(table.is_empty(), self.model.is_empty());
        for &key in &self.issued {
            let expected = self.model.get(&key);
            assert_eq!(table.get(key), expected, "get({key:?})");
            assert_eq!(table.contains_key(key), expected.is_some());
            assert_eq!(
                table.is_detached(key),
                self.detached.contains_key(&key),
                "is_detached({key:?})"
            );
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
        match self.fixed {
            // A detached slot is not free either.
            Some(fixed) => assert_eq!(table.capacity(), fixed - retired - self.detached.len()),
            None => assert!(table.capacity() >= table.len()),
        }
    }

    /// Inserts into a full fixed-capacity table: must fail, change nothing.
    fn insert_into_full(&mut self, value: u64) {
        let before = self.table.len();
        let err = self.table.try_insert(value).unwrap_err();
        assert!(err.is_fixed_capacity());
        assert!(!err.is_index_space());
        assert_eq!(err.limit(), self.fixed);
        assert_eq!(self.table.len(), before);
    }

    /// The same next key from two tables that must issue identically.
    fn assert_same_next_key(&mut self, copy: &mut SlotTable<u64, K, L>) {
        if self.full() {
            assert!(copy.try_insert(0).is_err());
            return;
        }
        let a = self.table.insert(7);
        let b = copy.insert(7);
        assert_eq!(a, b, "a copy issues the same keys as its original");
        self.issue(a, 7);
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
        let expected: Vec<(K, u64)> = self
            .live_keys()
            .into_iter()
            .map(|k| (k, self.model[&k]))
            .collect();
        let n = expected.len();
        let table = &self.table;

        // `next`, with an exact length all the way.
        let mut iter = table.iter();
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

        // `fold` (the word-at-a-time path), also after a partial `next`.
        let split = split.min(n);
        let mut iter = table.iter();
        let head: Vec<_> = iter.by_ref().take(split).map(|(k, v)| (k, *v)).collect();
        let tail = iter.fold(Vec::new(), |mut acc, (k, v)| {
            acc.push((k, *v));
            acc
        });
        assert_eq!(head.as_slice(), &expected[..split]);
        assert_eq!(tail.as_slice(), &expected[split..]);

        let keys: Vec<K> = expected.iter().map(|&(k, _)| k).collect();
        let values: Vec<u64> = expected.iter().map(|&(_, v)| v).collect();
        // Both ends, exact lengths, fusing and the adapters, for each
        // borrowing iterator.
        let seed = split as u64 * 7 + n as u64;
        check_double_ended(|| table.iter().map(|(k, v)| (k, *v)), &expected, seed);
        check_double_ended(|| table.keys(), &keys, seed + 1);
        check_double_ended(|| table.values().copied(), &values, seed + 2);
        assert_eq!(table.keys().collect::<Vec<_>>(), keys);
        assert_eq!(table.keys().len(), n);
        assert_eq!(table.keys().fold(0, |count, _| count + 1), n);
        assert_eq!(table.values().copied().collect::<Vec<_>>(), values);
        assert_eq!(table.values().count(), n);
        assert_eq!(table.iter().count(), n);
        let mut by_ref = Vec::new();
        for (k, v) in table {
            by_ref.push((k, *v));
        }
        assert_eq!(by_ref, expected);
        for (k, _) in &expected {
            assert_eq!(table.keys().find(|x| x == k), Some(*k));
        }

        // Debug prints the map in slot order.
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
            let remaining = format!("ParEntries {{ remaining: {n} }}");
            assert_eq!(format!("{:?}", table.par_iter()), remaining);
        }

        // Mutable iteration: bump every value four ways (five with rayon),
        // the first from both ends in turns.
        let mut iter_mut = self.table.iter_mut();
        let mut from_back = false;
        let mut seen = 0;
        while let Some((k, v)) = if from_back {
            iter_mut.next_back()
        } else {
            iter_mut.next()
        } {
            assert_eq!(*v, self.model[&k]);
            *v += 1;
            seen += 1;
            assert_eq!(iter_mut.len(), n - seen);
            from_back = (seen + split) % 3 == 0;
        }
        assert_eq!(seen, n);
        for v in self.table.values_mut().rev() {
            *v += 1;
        }
        let mut values_mut = self.table.values_mut();
        assert_eq!(values_mut.len(), n);
        for v in values_mut.by_ref().take(split) {
            *v += 1;
        }
        values_mut.fold((), |(), v| *v += 1);
        for (_, v) in &mut self.table {
            *v += 1;
        }
        #[cfg(all(feature = "rayon", not(miri)))]
        {
            use rayon::prelude::*;
            self.table.par_iter_mut().for_each(|(k, v)| {
                assert_eq!(*v, self.model[&k] + 4);
                *v += 1;
            });
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
                if self.fixed.is_some() && self.table.len() + values.len() > self.table.capacity() {
                    return;
                }
                self.table.extend(values.iter().copied());
                let mut added: Vec<(K, u64)> = self
                    .table
                    .iter()
                    .filter(|(k, _)| !self.model.contains_key(k))
                    .map(|(k, v)| (k, *v))
                    .collect();
                assert_eq!(added.len(), values.len());
                let mut got: Vec<u64> = added.iter().map(|&(_, v)| v).collect();
                let mut want = values;
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want);
                // Issue order is not known; the keys only have to be fresh.
                added.sort_by_key(|&(k, _)| k);
                for (key, value) in added {
                    self.issue(key, value);
                }
            }
            Op::Remove(src) => {
                let Some(key) = self.pick(src) else { return };
                assert_eq!(self.table.remove(key), self.model.remove(&key));
                assert_eq!(self.table.remove(key), None, "removed twice");
            }
            Op::Churn(rounds) => {
                for round in 0..rounds {
                    if self.full() {
                        self.insert_into_full(round);
                        break;
                    }
                    let key = self.table.insert(round);
                    self.issue(key, round);
                    assert_eq!(self.table.remove(key), self.model.remove(&key));
                    assert!(!self.table.contains_key(key));
                }
            }
            Op::Get(pick) => {
                let live = self.live_keys();
                if live.is_empty() {
                    return;
                }
                let key = *pick.get(&live);
                let value = self.model[&key];
                assert_eq!(self.table[key], value);
                assert_eq!(self.table.get_mut(key).copied(), Some(value));
                // SAFETY: `key` is live in the model, which the table matches.
                assert_eq!(unsafe { *self.table.get_unchecked(key) }, value);
                // SAFETY: as above.
                assert_eq!(unsafe { *self.table.get_unchecked_mut(key) }, value);
                let [only] = self.table.get_disjoint_mut([key]).expect("live key");
                assert_eq!(*only, value);
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
                assert!(self.table.get_disjoint_mut([key]).is_none());
                assert_eq!(self.table.remove(key), None);
            }
            Op::GetForgedBits(bits) => {
                if let Some(key) = K::from_bits(bits) {
                    assert_eq!(key.to_bits(), bits);
                    assert_eq!(self.table.get(key), self.model.get(&key));
                    assert_eq!(self.table.contains_key(key), self.model.contains_key(&key));
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
                }
            }
            Op::GetMut(pick, value, via_index) => {
                let live = self.live_keys();
                if live.is_empty() {
                    return;
                }
                let key = *pick.get(&live);
                if via_index {
                    self.table[key] = value;
                } else {
                    *self.table.get_mut(key).unwrap() = value;
                }
                self.model.insert(key, value);
            }
            Op::Clear => {
                self.table.clear();
                self.model.clear();
                assert!(self.table.is_empty());
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
                let expected: Vec<(K, u64)> = self
                    .live_keys()
                    .into_iter()
                    .map(|k| (k, self.model[&k]))
                    .collect();
                assert_eq!(
                    visited, expected,
                    "retain visits every value once, in order"
                );
                self.model.retain(|_, value| {
                    let keep = *value % modulus != 0;
                    if keep {
                        *value += 1;
                    }
                    keep
                });
            }
            Op::Drain(take) => {
                let n = self.model.len();
                let mut drain = self.table.drain();
                assert_eq!(drain.len(), n);
                let mut last = None;
                for (i, (key, value)) in drain.by_ref().take(take).enumerate() {
                    assert_eq!(self.model.remove(&key), Some(value));
                    assert!(last < Some(key.index()), "drain runs in slot order");
                    last = Some(key.index());
                    assert_eq!(i + 1 + self.model.len(), n);
                }
                assert_eq!(drain.len(), self.model.len());
                drop(drain);
                self.model.clear();
                assert!(self.table.is_empty());
            }
            Op::Clone => {
                let mut copy = self.table.clone();
                copy.check_invariants();
                for &key in self.detached.keys() {
                    assert!(copy.is_detached(key), "a clone keeps {key:?} detached");
                }
                assert!(copy == self.table);
                assert_eq!(copy.reuse(), self.table.reuse());
                assert_eq!(copy.retired_count(), self.table.retired_count());
                assert!(copy.capacity() >= copy.len());
                if self.fixed.is_some() {
                    assert_eq!(copy.capacity(), self.table.capacity());
                }
                self.assert_same_next_key(&mut copy);
                self.table = copy;
            }
            Op::CloneFrom(junk, fixed_target) => {
                let mut target: SlotTable<u64, K, L> = if fixed_target {
                    SlotTable::with_fixed_capacity(junk.len() + 3)
                } else {
                    SlotTable::with_reuse(Reuse::Fifo { min_free: 1 })
                };
                target.extend(junk);
                target.remove(
                    target
                        .keys()
                        .next()
                        .unwrap_or_else(|| K::from_parts(0, 1).expect("a valid key")),
                );
                target.clone_from(&self.table);
                target.check_invariants();
                for &key in self.detached.keys() {
                    assert!(target.is_detached(key), "clone_from keeps {key:?} detached");
                }
                assert!(target == self.table);
                assert_eq!(target.reuse(), self.table.reuse());
                assert_eq!(target.retired_count(), self.table.retired_count());
                if self.fixed.is_some() {
                    assert_eq!(target.capacity(), self.table.capacity());
                }
                self.assert_same_next_key(&mut target);
                self.table = target;
            }
            Op::SerdeRoundTrip => {
                #[cfg(feature = "serde")]
                {
                    let json = serde_json::to_string(&self.table).unwrap();
                    let back: SlotTable<u64, K, L> = serde_json::from_str(&json).unwrap();
                    back.check_invariants();
                    for &key in self.detached.keys() {
                        assert!(back.is_detached(key), "serde keeps {key:?} detached");
                    }
                    assert!(back == self.table);
                    assert_eq!(back.reuse(), self.table.reuse());
                    assert_eq!(back.retired_count(), self.table.retired_count());
                    assert_eq!(serde_json::to_string(&back).unwrap(), json);
                    self.table = back;
                    // The fixed capacity is not part of the serialized form.
                    self.fixed = None;
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
            Op::Iter(split) => self.check_iterators(split),
            Op::TryReserve(additional) => {
                let room = self.table.capacity() - self.table.len();
                let result = self.table.try_reserve(additional);
                match self.fixed {
                    Some(fixed) => {
                        assert_eq!(result.is_ok(), additional <= room);
                        if let Err(err) = result {
                            assert!(err.is_fixed_capacity());
                            assert_eq!(err.limit(), Some(fixed));
                        }
                    }
                    None => result.unwrap(),
                }
                if result.is_ok() {
                    assert!(self.table.capacity() >= self.table.len() + additional);
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
                        if !self.full() {
                            let again = self.table.insert(value);
                            assert_eq!(again, key);
                            self.issue(again, value);
                        }
                    }
                }
            }
            Op::Detach(src) => {
                let Some(key) = self.pick(src) else { return };
                let taken = self.table.detach(key);
                assert_eq!(taken, self.model.remove(&key), "detach({key:?})");
                if let Some(value) = taken {
                    self.detached.insert(key, value);
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
        }
    }
}

fn run<K: TestKey, L: Layout>(reuse: Reuse, fixed: Option<usize>, ops: Vec<Op>) {
    let mut harness = Harness::<K, L>::new(reuse, fixed);
    harness.check();
    for op in ops {
        harness.apply(op);
        harness.check();
    }
}

macro_rules! model_tests {
    ($($name:ident: $key:ty, $layout:ty, $reuse:expr;)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name(fixed in prop::option::weighted(0.25, 0usize..24), ops in ops()) {
                    run::<$key, $layout>($reuse, fixed, ops);
                }
            )*
        }
    };
}

model_tests! {
    id_lifo: Id, Split, Reuse::Lifo;
    id_fifo: Id, Split, Reuse::Fifo { min_free: 3 };
    id32_lifo: Id32, Split, Reuse::Lifo;
    id32_fifo: Id32, Split, Reuse::Fifo { min_free: 3 };
    gen4_lifo: Gen4, Split, Reuse::Lifo;
    gen4_fifo: Gen4, Split, Reuse::Fifo { min_free: 3 };
    lookup_id_lifo: Id, Interleaved, Reuse::Lifo;
    lookup_id32_fifo: Id32, Interleaved, Reuse::Fifo { min_free: 3 };
    lookup_gen4_lifo: Gen4, Interleaved, Reuse::Lifo;
    lookup_gen2_lifo: Gen2, Interleaved, Reuse::Lifo;
}

/// With 4 generation bits, a LIFO table that churns one value retires a slot
/// every 15 insertions, and no stale key ever resolves.
#[test]
fn gen4_churn_retires_every_15_insertions() {
    let rounds: u64 = if cfg!(miri) { 40 } else { 400 };
    let mut harness = Harness::<Gen4>::new(Reuse::Lifo, None);
    harness.apply(Op::Insert(u64::MAX));
    for round in 0..rounds {
        harness.apply(Op::Insert(round));
        let key = *harness.issued.last().unwrap();
        // Slot 0 holds the permanent value; the churning slots come after.
        assert_eq!(key.index() as u64, 1 + round / 15);
        assert_eq!(u64::from(key.generation()), 1 + round % 15);
        assert_eq!(harness.table.remove(key), harness.model.remove(&key));
        harness.check();
        assert_eq!(harness.table.retired_count() as u64, (round + 1) / 15);
    }
}
