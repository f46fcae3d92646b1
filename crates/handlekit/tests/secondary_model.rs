//! Model tests: `SecondaryMap` and `SparseSecondaryMap` against a model that
//! holds at most one value per slot index.
//!
//! A real primary table (`IdTable<(), K>`) issues the keys: it inserts,
//! removes and reuses slots, so the maps see keys of one slot with older and
//! newer generations. The model mirrors the documented generation rules:
//!
//! - inserting with the key that holds the slot's value replaces it and
//!   returns the old value;
//! - inserting with a *newer* key of the slot drops the older value and
//!   inserts (returning `None`);
//! - a key *older* than the one stored is stale: `insert` does nothing and
//!   returns `None`, `entry` returns `None`;
//! - a key whose index no table of its type could issue is refused.
//!
//! Both maps keep a slot's generation after its value leaves (removal,
//! `retain`, `drain`, `clear`; also across clones), so an older key stays
//! refused; the model tracks the newest generation per index. Both maps keep
//! it across a serde round trip too (the sparse map serializes the keys that
//! last left its empty entries; see `SERDE_KEEPS_GENERATIONS`).
//!
//! After every operation every key the primary ever issued is looked up
//! through `get`, `contains_key` and `entry` (stale or not, occupied or
//! vacant), a newer-than-issued key of each occupied slot too, and the map's
//! own invariant checker must pass. For the sparse map the dense order
//! (`key_slice`, `as_slice`) is modelled exactly as well.
//!
//! Each body runs for `Id`, `Id32` and a key with 4 generation bits, with
//! the primary under `Reuse::Lifo` (a slot is reused at once, so generations
//! climb) and `Reuse::Fifo { min_free: 1 }`.

use std::collections::HashMap;
use std::fmt::Debug;
use std::rc::Rc;

use handlekit::secondary::{Entry, EntryTarget};
use handlekit::{Id, Id32, IdTable, Key, Reuse, SecondaryMap, SparseSecondaryMap};
use proptest::prelude::*;
use proptest::sample::Index as Pick;

mod common;

use common::keys::Gen4;
use common::stale_suite::G2;

const CASES: u32 = if cfg!(miri) { 2 } else { 256 };
const MAX_OPS: usize = if cfg!(miri) { 10 } else { 200 };

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

/// Slots a key type can index: what a table of it could ever issue.
fn max_slots<K: Key>() -> u64 {
    if K::INDEX_BITS >= 32 {
        u64::from(u32::MAX)
    } else {
        1 << K::INDEX_BITS
    }
}

/// The two maps, behind one interface (each method forwards to the inherent
/// method of the same name).
trait Map<K: TestKey>:
    Clone + PartialEq + Debug + Default + Extend<(K, u64)> + FromIterator<(K, u64)>
where
    Self: EntryTarget<Key = K, Value = u64>,
{
    /// Whether a serde round trip keeps the generation of a slot whose
    /// value left (else only the held keys' generations survive it).
    #[cfg(feature = "serde")]
    const SERDE_KEEPS_GENERATIONS: bool;
    /// Whether iteration runs in dense order (else in index order).
    const DENSE_ORDER: bool;

    fn m_insert(&mut self, key: K, value: u64) -> Option<u64>;
    fn m_get(&self, key: K) -> Option<&u64>;
    fn m_get_mut(&mut self, key: K) -> Option<&mut u64>;
    fn m_contains(&self, key: K) -> bool;
    fn m_remove(&mut self, key: K) -> Option<u64>;
    fn m_entry(&mut self, key: K) -> Option<Entry<'_, Self>>;
    fn m_disjoint2(&mut self, keys: [K; 2]) -> Option<[&mut u64; 2]>;
    fn m_disjoint3(&mut self, keys: [K; 3]) -> Option<[&mut u64; 3]>;
    fn m_len(&self) -> usize;
    fn m_is_empty(&self) -> bool;
    fn m_clear(&mut self);
    fn m_retain(&mut self, keep: impl FnMut(K, &mut u64) -> bool);
    /// Takes `take` items from a `drain` and drops it; returns the length
    /// the drain reported at first and the items taken.
    fn m_drain(&mut self, take: usize) -> (usize, Vec<(K, u64)>);
    fn m_pairs(&self) -> Vec<(K, u64)>;
    fn m_keys(&self) -> Vec<K>;
    fn m_values(&self) -> Vec<u64>;
    fn m_owned_pairs(self) -> Vec<(K, u64)>;
    /// Adds 1 to every value four ways; returns the number of additions.
    fn m_bump_all(&mut self) -> u64;
    fn m_index(&self, key: K) -> u64;
    fn m_index_mut(&mut self, key: K) -> &mut u64;
    /// The dense order, for the sparse map.
    fn m_dense(&self) -> Option<(&[K], &[u64])>;
    fn m_check(&self);
    #[cfg(feature = "rayon")]
    fn m_par_pairs(&self) -> Vec<(K, u64)>;
    /// Serializes to JSON and back; returns the JSON and the copy.
    #[cfg(feature = "serde")]
    fn m_serde_round_trip(&self) -> (String, Self);
    #[cfg(feature = "serde")]
    fn m_to_json(&self) -> String;
}

macro_rules! impl_map {
    ($map:ident, serde_keeps_generations: $serde_keeps:expr, dense_order: $dense:expr, dense: |$m:ident| $dense_expr:expr) => {
        impl<K: TestKey> Map<K> for $map<K, u64> {
            #[cfg(feature = "serde")]
            const SERDE_KEEPS_GENERATIONS: bool = $serde_keeps;
            const DENSE_ORDER: bool = $dense;

            fn m_insert(&mut self, key: K, value: u64) -> Option<u64> {
                self.insert(key, value)
            }
            fn m_get(&self, key: K) -> Option<&u64> {
                self.get(key)
            }
            fn m_get_mut(&mut self, key: K) -> Option<&mut u64> {
                self.get_mut(key)
            }
            fn m_contains(&self, key: K) -> bool {
                self.contains_key(key)
            }
            fn m_remove(&mut self, key: K) -> Option<u64> {
                self.remove(key)
            }
            fn m_entry(&mut self, key: K) -> Option<Entry<'_, Self>> {
                self.entry(key)
            }
            fn m_disjoint2(&mut self, keys: [K; 2]) -> Option<[&mut u64; 2]> {
                self.get_disjoint_mut(keys)
            }
            fn m_disjoint3(&mut self, keys: [K; 3]) -> Option<[&mut u64; 3]> {
                self.get_disjoint_mut(keys)
            }
            fn m_len(&self) -> usize {
                self.len()
            }
            fn m_is_empty(&self) -> bool {
                self.is_empty()
            }
            fn m_clear(&mut self) {
                self.clear();
            }
            fn m_retain(&mut self, keep: impl FnMut(K, &mut u64) -> bool) {
                self.retain(keep);
            }
            fn m_drain(&mut self, take: usize) -> (usize, Vec<(K, u64)>) {
                let mut drain = self.drain();
                let len = drain.len();
                let taken: Vec<(K, u64)> = drain.by_ref().take(take).collect();
                assert_eq!(drain.len(), len - taken.len());
                (len, taken)
            }
            fn m_pairs(&self) -> Vec<(K, u64)> {
                let mut iter = self.iter();
                let mut pairs = Vec::new();
                loop {
                    let remaining = iter.len();
                    match iter.next() {
                        Some((k, v)) => pairs.push((k, *v)),
                        None => {
                            assert_eq!(remaining, 0);
                            break;
                        }
                    }
                    assert_eq!(iter.len(), remaining - 1);
                }
                let by_ref: Vec<(K, u64)> = self.into_iter().map(|(k, v)| (k, *v)).collect();
                assert_eq!(by_ref, pairs);
                pairs
            }
            fn m_keys(&self) -> Vec<K> {
                self.keys().collect()
            }
            fn m_values(&self) -> Vec<u64> {
                self.values().copied().collect()
            }
            fn m_owned_pairs(self) -> Vec<(K, u64)> {
                self.into_iter().collect()
            }
            fn m_bump_all(&mut self) -> u64 {
                for (_, v) in self.iter_mut() {
                    *v += 1;
                }
                for v in self.values_mut() {
                    *v += 1;
                }
                for (_, v) in &mut *self {
                    *v += 1;
                }
                let keys: Vec<K> = self.keys().collect();
                for key in keys {
                    self[key] += 1;
                }
                #[cfg(all(feature = "rayon", not(miri)))]
                {
                    use rayon::prelude::*;
                    self.par_iter_mut().for_each(|(_, v)| *v += 1);
                }
                4 + u64::from(cfg!(all(feature = "rayon", not(miri))))
            }
            fn m_index(&self, key: K) -> u64 {
                self[key]
            }
            fn m_index_mut(&mut self, key: K) -> &mut u64 {
                &mut self[key]
            }
            fn m_dense(&self) -> Option<(&[K], &[u64])> {
                let $m = self;
                $dense_expr
            }
            fn m_check(&self) {
                self.check_invariants();
            }
            #[cfg(feature = "serde")]
            fn m_serde_round_trip(&self) -> (String, Self) {
                let json = serde_json::to_string(self).unwrap();
                let back: Self = serde_json::from_str(&json).unwrap();
                (json, back)
            }
            #[cfg(feature = "serde")]
            fn m_to_json(&self) -> String {
                serde_json::to_string(self).unwrap()
            }
            #[cfg(feature = "rayon")]
            fn m_par_pairs(&self) -> Vec<(K, u64)> {
                use rayon::prelude::*;
                let mut pairs: Vec<(K, u64)> = self.par_iter().map(|(k, v)| (k, *v)).collect();
                if !Self::DENSE_ORDER {
                    pairs.sort_by_key(|&(k, _)| k.index());
                }
                pairs
            }
        }
    };
}

impl_map!(SecondaryMap, serde_keeps_generations: true, dense_order: false, dense: |_m| None);
impl_map!(SparseSecondaryMap, serde_keeps_generations: true, dense_order: true, dense: |m| Some((m.key_slice(), m.as_slice())));

/// The model: at most one value per slot index, and the generation rules.
struct Model<K: Key> {
    /// Slot index → the key holding it and its value.
    slots: HashMap<usize, (K, u64)>,
    /// Slot index → the newest generation the map was ever filled for.
    newest: HashMap<usize, u32>,
    /// The dense order (used for the sparse map).
    order: Vec<K>,
}

/// What `entry` must give for a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EntryState {
    Stale,
    Occupied,
    Vacant,
}

impl<K: Key> Model<K> {
    fn new() -> Self {
        Model {
            slots: HashMap::new(),
            newest: HashMap::new(),
            order: Vec::new(),
        }
    }

    /// Forgets the generations of slots without a value.
    #[cfg(feature = "serde")]
    fn forget_vacant_generations(&mut self) {
        self.newest = self
            .slots
            .iter()
            .map(|(&index, (key, _))| (index, key.generation()))
            .collect();
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    /// Generations below this are stale for slot `index`.
    fn floor(&self, index: usize) -> u32 {
        let occupied = self.slots.get(&index).map_or(0, |(k, _)| k.generation());
        occupied.max(self.newest.get(&index).copied().unwrap_or(0))
    }

    fn in_range(key: K) -> bool {
        (key.index() as u64) < max_slots::<K>()
    }

    fn get(&self, key: K) -> Option<u64> {
        match self.slots.get(&key.index()) {
            Some(&(k, v)) if k == key => Some(v),
            _ => None,
        }
    }

    fn entry_state(&self, key: K) -> EntryState {
        if !Self::in_range(key) || key.generation() < self.floor(key.index()) {
            EntryState::Stale
        } else if self.get(key).is_some() {
            EntryState::Occupied
        } else {
            EntryState::Vacant
        }
    }

    fn insert(&mut self, key: K, value: u64) -> Option<u64> {
        if self.entry_state(key) == EntryState::Stale {
            return None;
        }
        let index = key.index();
        let newest = self.newest.entry(index).or_insert(0);
        *newest = (*newest).max(key.generation());
        match self.slots.get_mut(&index) {
            Some((k, v)) if *k == key => Some(std::mem::replace(v, value)),
            Some((k, v)) => {
                // A newer key of the slot: the older value goes, the new one
                // takes its place (in the dense order too).
                let old = *k;
                *k = key;
                *v = value;
                let position = self.order.iter().position(|&o| o == old).unwrap();
                self.order[position] = key;
                None
            }
            None => {
                self.slots.insert(index, (key, value));
                self.order.push(key);
                None
            }
        }
    }

    fn remove(&mut self, key: K) -> Option<u64> {
        let value = self.get(key)?;
        self.slots.remove(&key.index());
        let position = self.order.iter().position(|&o| o == key).unwrap();
        self.order.swap_remove(position);
        Some(value)
    }

    fn clear(&mut self) {
        self.slots.clear();
        self.order.clear();
    }

    /// The pairs in iteration order.
    fn pairs(&self, dense_order: bool) -> Vec<(K, u64)> {
        if dense_order {
            self.order
                .iter()
                .map(|&k| (k, self.get(k).unwrap()))
                .collect()
        } else {
            let mut pairs: Vec<(K, u64)> = self.slots.values().copied().collect();
            pairs.sort_by_key(|&(k, _)| k.index());
            pairs
        }
    }
}

/// Where a key for an operation comes from.
#[derive(Clone, Copy, Debug)]
enum Src {
    /// A key live in the primary (falls back to any issued key).
    Live(Pick),
    /// Any key the primary ever issued.
    Any(Pick),
    /// A key the primary removed (falls back to any issued key).
    Stale(Pick),
    /// The key the map holds for a slot, with its generation raised by
    /// this much (a key newer than any the map has seen).
    Newer(Pick, u32),
    /// A key made up from parts; the flag picks an index far away (one no
    /// small table has; for `Id`, also the index no table issues).
    Forged(usize, u32, bool),
}

/// How an `Entry` op uses the entry.
#[derive(Clone, Copy, Debug)]
enum EntryUse {
    OrInsert,
    AndModifyOrInsert,
    OrDefault,
    OrInsertWith,
    /// Match on the variant: `OccupiedEntry::insert` or `VacantEntry::insert`.
    Match,
    /// Match, and remove an occupied entry.
    Remove,
}

#[derive(Clone, Debug)]
enum Op {
    PrimaryInsert,
    PrimaryRemove(Pick),
    /// Remove a live primary key and insert again: under LIFO the same
    /// slot comes back with a newer generation.
    PrimaryReuse(Pick),
    Insert(Src, u64),
    Get(Src),
    GetMut(Src, u64),
    Remove(Src),
    Entry(Src, EntryUse, u64),
    Extend(Vec<(Src, u64)>),
    Retain(u64),
    Drain(usize),
    Clear,
    Clone,
    SerdeRoundTrip,
    Disjoint2([Src; 2], bool),
    Disjoint3([Src; 3], bool),
    Iter,
}

const WEIGHTS: [u32; 17] = [
    10, // PrimaryInsert
    4,  // PrimaryRemove
    6,  // PrimaryReuse
    18, // Insert
    5,  // Get
    3,  // GetMut
    6,  // Remove
    8,  // Entry
    2,  // Extend
    2,  // Retain
    1,  // Drain
    1,  // Clear
    1,  // Clone
    1,  // SerdeRoundTrip
    3,  // Disjoint2
    2,  // Disjoint3
    2,  // Iter
];

const TOTAL_WEIGHT: u32 = common::total_weight(&WEIGHTS);

fn make_src(raw: u64, pick: Pick) -> Src {
    match raw % 16 {
        0..=6 => Src::Live(pick),
        7..=9 => Src::Stale(pick),
        10..=11 => Src::Any(pick),
        12..=13 => Src::Newer(pick, 1 + (raw >> 4) as u32 % 3),
        _ => Src::Forged(
            (raw >> 8) as usize % 24,
            (raw >> 16) as u32 % 20,
            (raw >> 32) % 4 == 0,
        ),
    }
}

fn make_op(selector: u32, value: u64, raw: u64, picks: [Pick; 3], flags: [bool; 3]) -> Op {
    let kind = common::kind_of(selector, &WEIGHTS);
    let [p0, p1, p2] = picks;
    let src = |i: u32, pick: Pick| make_src(raw.rotate_right(13 * i), pick);
    match kind {
        0 => Op::PrimaryInsert,
        1 => Op::PrimaryRemove(p0),
        2 => Op::PrimaryReuse(p0),
        3 => Op::Insert(src(0, p0), value),
        4 => Op::Get(src(0, p0)),
        5 => Op::GetMut(src(0, p0), value),
        6 => Op::Remove(src(0, p0)),
        7 => Op::Entry(
            src(0, p0),
            match value % 6 {
                0 => EntryUse::OrInsert,
                1 => EntryUse::AndModifyOrInsert,
                2 => EntryUse::OrDefault,
                3 => EntryUse::OrInsertWith,
                4 => EntryUse::Match,
                _ => EntryUse::Remove,
            },
            value,
        ),
        8 => Op::Extend(vec![
            (src(0, p0), value),
            (src(1, p1), value + 1),
            (src(2, p2), value + 2),
        ]),
        9 => Op::Retain(1 + value % 4),
        10 => Op::Drain(value as usize % 5),
        11 => Op::Clear,
        12 => Op::Clone,
        13 => Op::SerdeRoundTrip,
        14 => Op::Disjoint2([src(0, p0), src(1, p1)], flags[0]),
        15 => Op::Disjoint3([src(0, p0), src(1, p1), src(2, p2)], flags[0]),
        _ => Op::Iter,
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

struct Harness<K: TestKey, M: Map<K>> {
    primary: IdTable<(), K>,
    /// Every key the primary ever issued, in issue order.
    issued: Vec<K>,
    map: M,
    model: Model<K>,
}

impl<K: TestKey, M: Map<K>> Harness<K, M> {
    fn new(reuse: Reuse) -> Self {
        Harness {
            primary: IdTable::with_reuse(reuse),
            issued: Vec::new(),
            map: M::default(),
            model: Model::new(),
        }
    }

    fn primary_live(&self) -> Vec<K> {
        self.primary.keys().collect()
    }

    fn primary_dead(&self) -> Vec<K> {
        self.issued
            .iter()
            .copied()
            .filter(|&k| !self.primary.contains_key(k))
            .collect()
    }

    fn pick(&self, src: Src) -> Option<K> {
        let any = |pick: Pick| (!self.issued.is_empty()).then(|| *pick.get(&self.issued));
        // One of `keys`, or of all issued keys when there are none.
        let one_of = |keys: Vec<K>, pick: Pick| {
            if keys.is_empty() {
                any(pick)
            } else {
                Some(*pick.get(&keys))
            }
        };
        match src {
            Src::Live(pick) => one_of(self.primary_live(), pick),
            Src::Stale(pick) => one_of(self.primary_dead(), pick),
            Src::Any(pick) => any(pick),
            Src::Newer(pick, by) => {
                let held: Vec<K> = self
                    .model
                    .pairs(false)
                    .into_iter()
                    .map(|(k, _)| k)
                    .collect();
                if held.is_empty() {
                    return any(pick);
                }
                let key = *pick.get(&held);
                K::from_parts(key.index(), key.generation() + by).or(Some(key))
            }
            Src::Forged(index, generation, far) => {
                let index = if !far {
                    index
                } else if max_slots::<K>() == u64::from(u32::MAX) && index % 2 == 0 {
                    // The one index an `Id` can carry but no table issues.
                    u32::MAX as usize
                } else if M::DENSE_ORDER && !cfg!(miri) {
                    // Sparse maps take far indices for the price of a page.
                    (1 << 19) + index * 1021
                } else {
                    // The dense map grows to the index: keep it modest.
                    200 + index
                };
                K::from_parts(index, generation.min(K::MAX_GENERATION).max(1))
            }
        }
    }

    /// Every key worth looking up: all issued keys, and for every held slot
    /// the next generation (newer than anything issued).
    fn probe_keys(&self) -> Vec<K> {
        let mut keys = self.issued.clone();
        for &(key, _) in self.model.slots.values() {
            if let Some(newer) = K::from_parts(key.index(), key.generation() + 1) {
                keys.push(newer);
            }
        }
        keys
    }

    fn check(&mut self) {
        self.primary.check_invariants();
        self.map.m_check();
        assert_eq!(self.map.m_len(), self.model.len());
        assert_eq!(self.map.m_is_empty(), self.model.len() == 0);
        for key in self.probe_keys() {
            let expected = self.model.get(key);
            assert_eq!(self.map.m_get(key).copied(), expected, "get({key:?})");
            assert_eq!(self.map.m_contains(key), expected.is_some());
            let state = match self.map.m_entry(key) {
                None => EntryState::Stale,
                Some(Entry::Occupied(entry)) => {
                    assert_eq!(entry.key(), key);
                    EntryState::Occupied
                }
                Some(Entry::Vacant(entry)) => {
                    assert_eq!(entry.key(), key);
                    EntryState::Vacant
                }
            };
            assert_eq!(state, self.model.entry_state(key), "entry({key:?})");
        }
        if let Some((keys, values)) = self.map.m_dense() {
            assert_eq!(keys, self.model.order.as_slice(), "dense order");
            let expected: Vec<u64> = self
                .model
                .order
                .iter()
                .map(|&k| self.model.get(k).unwrap())
                .collect();
            assert_eq!(values, expected.as_slice());
        }
    }

    fn assert_disjoint<const N: usize>(&mut self, keys: [K; N], got: Option<[&mut u64; N]>) {
        let live = keys.iter().all(|&k| self.model.get(k).is_some());
        let distinct = (0..N).all(|i| (0..i).all(|j| keys[i] != keys[j]));
        match got {
            Some(values) => {
                assert!(live && distinct, "get_disjoint_mut({keys:?}) gave Some");
                for (&key, value) in keys.iter().zip(values) {
                    assert_eq!(Some(*value), self.model.get(key));
                    *value += 1;
                    self.model.slots.get_mut(&key.index()).unwrap().1 += 1;
                }
            }
            None => assert!(!(live && distinct), "get_disjoint_mut({keys:?}) gave None"),
        }
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::PrimaryInsert => {
                let key = self.primary.insert(());
                assert!(!self.issued.contains(&key));
                self.issued.push(key);
            }
            Op::PrimaryRemove(pick) => {
                let live = self.primary_live();
                if !live.is_empty() {
                    self.primary.remove(*pick.get(&live));
                }
            }
            Op::PrimaryReuse(pick) => {
                let live = self.primary_live();
                if !live.is_empty() {
                    self.primary.remove(*pick.get(&live));
                }
                let key = self.primary.insert(());
                assert!(!self.issued.contains(&key));
                self.issued.push(key);
            }
            Op::Insert(src, value) => {
                let Some(key) = self.pick(src) else { return };
                let expected = self.model.insert(key, value);
                assert_eq!(self.map.m_insert(key, value), expected, "insert({key:?})");
            }
            Op::Get(src) => {
                let Some(key) = self.pick(src) else { return };
                let expected = self.model.get(key);
                assert_eq!(self.map.m_get(key).copied(), expected);
                assert_eq!(self.map.m_get_mut(key).copied(), expected);
                assert_eq!(self.map.m_contains(key), expected.is_some());
                let single = self.map.m_disjoint2([key, key]);
                assert!(single.is_none(), "the same key twice");
                if let Some(value) = expected {
                    assert_eq!(self.map.m_index(key), value);
                }
            }
            Op::GetMut(src, value) => {
                let Some(key) = self.pick(src) else { return };
                if self.model.get(key).is_some() {
                    if value % 2 == 0 {
                        *self.map.m_get_mut(key).unwrap() = value;
                    } else {
                        *self.map.m_index_mut(key) = value;
                    }
                    self.model.slots.get_mut(&key.index()).unwrap().1 = value;
                } else {
                    assert_eq!(self.map.m_get_mut(key), None);
                }
            }
            Op::Remove(src) => {
                let Some(key) = self.pick(src) else { return };
                let expected = self.model.remove(key);
                assert_eq!(self.map.m_remove(key), expected, "remove({key:?})");
                assert_eq!(self.map.m_remove(key), None, "removed twice");
            }
            Op::Entry(src, how, value) => {
                let Some(key) = self.pick(src) else { return };
                let state = self.model.entry_state(key);
                let current = self.model.get(key);
                let Some(entry) = self.map.m_entry(key) else {
                    assert_eq!(state, EntryState::Stale, "entry({key:?}) gave None");
                    return;
                };
                assert_ne!(state, EntryState::Stale, "entry({key:?}) gave Some");
                assert_eq!(entry.key(), key);
                assert_eq!(
                    matches!(entry, Entry::Occupied(_)),
                    state == EntryState::Occupied
                );
                // The value the key should have afterwards (None: removed).
                let after = match how {
                    EntryUse::OrInsert => {
                        let v = entry.or_insert(value);
                        assert_eq!(*v, current.unwrap_or(value));
                        Some(*v)
                    }
                    EntryUse::AndModifyOrInsert => {
                        let v = entry.and_modify(|v| *v += 1).or_insert(value);
                        assert_eq!(*v, current.map_or(value, |c| c + 1));
                        Some(*v)
                    }
                    EntryUse::OrDefault => {
                        let v = entry.or_default();
                        assert_eq!(*v, current.unwrap_or(0));
                        *v += 1;
                        Some(*v)
                    }
                    EntryUse::OrInsertWith => {
                        let mut called = false;
                        let v = entry.or_insert_with(|| {
                            called = true;
                            value
                        });
                        assert_eq!(*v, current.unwrap_or(value));
                        let v = *v;
                        assert_eq!(called, current.is_none());
                        Some(v)
                    }
                    EntryUse::Match => match entry {
                        Entry::Occupied(mut occupied) => {
                            assert_eq!(occupied.key(), key);
                            assert_eq!(Some(*occupied.get()), current);
                            assert_eq!(Some(*occupied.get_mut()), current);
                            assert_eq!(Some(occupied.insert(value)), current);
                            let v = occupied.into_mut();
                            assert_eq!(*v, value);
                            Some(value)
                        }
                        Entry::Vacant(vacant) => {
                            assert_eq!(vacant.key(), key);
                            let v = vacant.insert(value);
                            assert_eq!(*v, value);
                            Some(value)
                        }
                    },
                    EntryUse::Remove => match entry {
                        Entry::Occupied(occupied) => {
                            assert_eq!(Some(occupied.remove()), current);
                            None
                        }
                        Entry::Vacant(_) => current,
                    },
                };
                match after {
                    Some(v) if current.is_some() => {
                        self.model.slots.get_mut(&key.index()).unwrap().1 = v;
                    }
                    Some(v) => {
                        // A vacant entry inserts by the insertion rules: a
                        // newer key replaces an older value of its slot.
                        assert_eq!(self.model.insert(key, v), None);
                    }
                    None => {
                        self.model.remove(key);
                    }
                }
            }
            Op::Extend(srcs) => {
                let pairs: Vec<(K, u64)> = srcs
                    .into_iter()
                    .filter_map(|(src, value)| Some((self.pick(src)?, value)))
                    .collect();
                for &(key, value) in &pairs {
                    self.model.insert(key, value);
                }
                self.map.extend(pairs);
            }
            Op::Retain(modulus) => {
                let expected = self.model.pairs(M::DENSE_ORDER);
                let mut visited = Vec::new();
                self.map.m_retain(|key, value| {
                    visited.push((key, *value));
                    common::retain_step(value, modulus)
                });
                assert_eq!(
                    visited, expected,
                    "retain visits every value once, in order"
                );
                for (key, value) in expected {
                    if value % modulus == 0 {
                        self.model.slots.remove(&key.index());
                    } else {
                        self.model.slots.get_mut(&key.index()).unwrap().1 += 1;
                    }
                }
                // The survivors keep their order.
                let slots = &self.model.slots;
                self.model
                    .order
                    .retain(|k| slots.get(&k.index()).is_some_and(|(held, _)| held == k));
            }
            Op::Drain(take) => {
                let expected = self.model.pairs(M::DENSE_ORDER);
                let (len, taken) = self.map.m_drain(take);
                assert_eq!(len, expected.len());
                assert_eq!(taken.as_slice(), &expected[..take.min(len)]);
                self.model.clear();
                assert!(self.map.m_is_empty());
            }
            Op::Clear => {
                self.map.m_clear();
                self.model.clear();
                assert!(self.map.m_pairs().is_empty());
            }
            Op::Clone => {
                let copy = self.map.clone();
                copy.m_check();
                assert!(copy == self.map);
                assert_eq!(copy.m_pairs(), self.map.m_pairs());
                // Built from its pairs, the map is equal too (if not its
                // remembered generations).
                let rebuilt: M = self.map.m_pairs().into_iter().collect();
                rebuilt.m_check();
                assert!(rebuilt == self.map);
                assert_eq!(rebuilt.m_pairs(), self.map.m_pairs());
                self.map = copy;
            }
            Op::SerdeRoundTrip => {
                #[cfg(feature = "serde")]
                {
                    let (json, back) = self.map.m_serde_round_trip();
                    back.m_check();
                    assert!(back == self.map);
                    assert_eq!(back.m_pairs(), self.map.m_pairs(), "order kept");
                    assert_eq!(back.m_to_json(), json);
                    self.map = back;
                    if !M::SERDE_KEEPS_GENERATIONS {
                        self.model.forget_vacant_generations();
                    }
                }
            }
            Op::Disjoint2(srcs, dup) => {
                let (Some(a), Some(b)) = (self.pick(srcs[0]), self.pick(srcs[1])) else {
                    return;
                };
                let keys = [a, if dup { a } else { b }];
                // Take the result out of the map's borrow by value first.
                let mut map = std::mem::take(&mut self.map);
                let got = map.m_disjoint2(keys);
                self.assert_disjoint(keys, got);
                self.map = map;
            }
            Op::Disjoint3(srcs, dup) => {
                let (Some(a), Some(b), Some(c)) =
                    (self.pick(srcs[0]), self.pick(srcs[1]), self.pick(srcs[2]))
                else {
                    return;
                };
                let keys = [a, b, if dup { a } else { c }];
                let mut map = std::mem::take(&mut self.map);
                let got = map.m_disjoint3(keys);
                self.assert_disjoint(keys, got);
                self.map = map;
            }
            Op::Iter => {
                let expected = self.model.pairs(M::DENSE_ORDER);
                assert_eq!(self.map.m_pairs(), expected);
                let keys: Vec<K> = expected.iter().map(|&(k, _)| k).collect();
                let values: Vec<u64> = expected.iter().map(|&(_, v)| v).collect();
                assert_eq!(self.map.m_keys(), keys);
                assert_eq!(self.map.m_values(), values);
                assert_eq!(self.map.clone().m_owned_pairs(), expected);
                #[cfg(feature = "rayon")]
                if !cfg!(miri) {
                    assert_eq!(self.map.m_par_pairs(), expected);
                }
                assert_eq!(format!("{:?}", self.map), common::map_debug(&expected));
                let bumps = self.map.m_bump_all();
                for (_, v) in self.model.slots.values_mut() {
                    *v += bumps;
                }
            }
        }
    }
}

fn run<K: TestKey, M: Map<K>>(reuse: Reuse, ops: Vec<Op>) {
    let mut harness = Harness::<K, M>::new(reuse);
    harness.check();
    let len = ops.len();
    for (step, op) in ops.into_iter().enumerate() {
        harness.apply(op);
        if common::check_after(step, len) {
            harness.check();
        }
    }
}

macro_rules! model_tests {
    // The six tests of a map type, named in this order: keys `Id`, `Id32`
    // and `Gen4`, each under LIFO, then FIFO.
    ($map:ident: $il:ident, $if:ident, $i32l:ident, $i32f:ident, $g4l:ident, $g4f:ident) => {
        model_tests! {
            $il: $map, Id, Reuse::Lifo;
            $if: $map, Id, Reuse::Fifo { min_free: 1 };
            $i32l: $map, Id32, Reuse::Lifo;
            $i32f: $map, Id32, Reuse::Fifo { min_free: 1 };
            $g4l: $map, Gen4, Reuse::Lifo;
            $g4f: $map, Gen4, Reuse::Fifo { min_free: 1 };
        }
    };
    ($($name:ident: $map:ident, $key:ty, $reuse:expr;)*) => {
        proptest! {
            #![proptest_config(common::proptest_config(CASES))]
            $(
                #[test]
                fn $name(ops in ops()) {
                    run::<$key, $map<$key, u64>>($reuse, ops);
                }
            )*
        }
    };
}

model_tests!(SecondaryMap:
    dense_id_lifo, dense_id_fifo, dense_id32_lifo, dense_id32_fifo,
    dense_gen4_lifo, dense_gen4_fifo);
model_tests!(SparseSecondaryMap:
    sparse_id_lifo, sparse_id_fifo, sparse_id32_lifo, sparse_id32_fifo,
    sparse_gen4_lifo, sparse_gen4_fifo);

// ---------------------------------------------------------------------------
// A reused slot never shows old data.

/// The scenario of the issue, step by step, for every generation of one
/// slot of a primary table: data for key `A`; the primary removes `A` and
/// reuses its slot for `B`.
///
/// - The map was not told about the removal, so it still holds `A`'s data
///   under `A`: `get(A)` returns it.
/// - `B` has no data: `get(B)` is `None` and `B`'s entry is vacant. The
///   old data is never shown under the new key.
/// - `insert(B, ..)` drops `A`'s data (returning `None`, not `A`'s value):
///   from then on `A` finds nothing, and `A` is stale: inserting with it
///   does nothing and its entry is `None`.
fn reused_slot_never_shows_old_data<K: TestKey, M: Map<K>>(reuse: Reuse) {
    let mut primary: IdTable<(), K> = IdTable::with_reuse(reuse);
    // A second live key keeps a neighbour's data around.
    let other = primary.insert(());
    let mut map = M::default();
    map.m_insert(other, 1000);
    let mut a = primary.insert(());
    assert_eq!(map.m_insert(a, 0), None);
    let mut rounds = 0u64;
    loop {
        primary.remove(a);
        // A reuse of `a`'s slot, if the policy and the generations allow.
        let b = primary.insert(());
        if b.index() != a.index() {
            // The slot retired (or FIFO took another): the old data is
            // still A's, and nothing else reads it.
            assert!(a.generation() == K::MAX_GENERATION || !matches!(reuse, Reuse::Lifo));
            assert_eq!(map.m_get(b), None);
            assert_eq!(map.m_get(a).copied(), Some(rounds));
            break;
        }
        assert!(b.generation() > a.generation());
        rounds += 1;

        // The map still holds A's data under A, and only under A.
        assert_eq!(map.m_get(a).copied(), Some(rounds - 1));
        assert!(map.m_contains(a));
        assert_eq!(map.m_get(b), None, "stale data under the new key");
        assert!(!map.m_contains(b));
        assert_eq!(map.m_get_mut(b), None);
        assert!(map.m_disjoint2([b, other]).is_none());
        assert!(matches!(map.m_entry(b), Some(Entry::Vacant(_))));
        assert_eq!(map.m_remove(b), None, "removing B must not remove A's data");
        assert_eq!(map.m_get(a).copied(), Some(rounds - 1));
        assert!(!map.m_pairs().iter().any(|&(k, _)| k == b));

        // Inserting for B replaces A's data: it is dropped, not returned.
        assert_eq!(map.m_insert(b, rounds), None);
        if !cfg!(miri) {
            map.m_check();
        }
        assert_eq!(map.m_len(), 2);
        assert_eq!(map.m_get(a), None, "A still reads after B was inserted");
        assert!(!map.m_contains(a));
        assert_eq!(map.m_get(b).copied(), Some(rounds));
        // A is stale now: nothing is inserted for it, no entry, no removal.
        assert_eq!(map.m_insert(a, 999), None);
        assert_eq!(map.m_get(a), None);
        assert_eq!(map.m_get(b).copied(), Some(rounds));
        assert!(map.m_entry(a).is_none());
        assert_eq!(map.m_remove(a), None);
        assert_eq!(map.m_get(b).copied(), Some(rounds));
        assert_eq!(map.m_get(other).copied(), Some(1000));
        let mut pairs = map.m_pairs();
        pairs.sort();
        let mut expected = vec![(other, 1000), (b, rounds)];
        expected.sort();
        assert_eq!(pairs, expected);
        map.m_check();
        a = b;
        if rounds > if cfg!(miri) { 4 } else { 40 } {
            break;
        }
    }
    assert!(rounds >= 1);
}

/// A test running [`reused_slot_never_shows_old_data`] on the map type
/// `$map` for every key type, under LIFO and FIFO reuse (under Miri, only
/// `G2` takes FIFO).
macro_rules! reused_slot_test {
    ($name:ident, $map:ident) => {
        #[test]
        fn $name() {
            for reuse in [Reuse::Lifo, Reuse::Fifo { min_free: 0 }] {
                reused_slot_never_shows_old_data::<G2, $map<G2, u64>>(reuse);
                if cfg!(miri) && reuse != Reuse::Lifo {
                    continue;
                }
                reused_slot_never_shows_old_data::<Id, $map<Id, u64>>(reuse);
                reused_slot_never_shows_old_data::<Id32, $map<Id32, u64>>(reuse);
                reused_slot_never_shows_old_data::<Gen4, $map<Gen4, u64>>(reuse);
            }
        }
    };
}

reused_slot_test!(reused_slot_never_shows_old_data_dense, SecondaryMap);
reused_slot_test!(reused_slot_never_shows_old_data_sparse, SparseSecondaryMap);

/// The old value is dropped when a newer key replaces it, exactly once, and
/// the replacing insertion does not hand it back; a stale insertion drops
/// the value it was given.
#[test]
fn replacing_an_older_value_drops_it_exactly_once() {
    let (_, a, b) = common::reused_slot();
    assert_eq!(a.index(), b.index());
    let old = Rc::new(());
    let new = Rc::new(());
    // `old` under `a`, then `new` under `b`, then `old` under `a` again; the
    // map ends up holding one more clone of `new`.
    let replace = |insert: &mut dyn FnMut(Id, Rc<()>) -> Option<Rc<()>>, new_count: usize| {
        assert!(insert(a, Rc::clone(&old)).is_none());
        assert!(insert(b, Rc::clone(&new)).is_none());
        assert_eq!(Rc::strong_count(&old), 1, "older value not dropped");
        assert_eq!(Rc::strong_count(&new), new_count);
        assert!(insert(a, Rc::clone(&old)).is_none());
        assert_eq!(Rc::strong_count(&old), 1, "stale insert kept its value");
    };

    let mut dense: SecondaryMap<Id, Rc<()>> = SecondaryMap::new();
    replace(&mut |key, value| dense.insert(key, value), 2);
    dense.check_invariants();

    let mut sparse: SparseSecondaryMap<Id, Rc<()>> = SparseSecondaryMap::new();
    replace(&mut |key, value| sparse.insert(key, value), 3);
    sparse.check_invariants();

    drop((dense, sparse));
    assert_eq!(Rc::strong_count(&new), 1);
}

/// Both maps remember a slot's generation after its value leaves: an older
/// key stays stale after removal, `clear`, `drain`, `retain` and a clone
/// (ARCHITECTURE.md: "generations only grow"); the dense map also across a
/// serde round trip.
fn older_keys_stay_stale_after_the_value_leaves<M: Map<Id>>() {
    let (_, a, b) = common::reused_slot();
    /// Empties a map holding value 2 for key `b`.
    type Emptier<M> = fn(&mut M, Id);
    let emptiers: [(&str, Emptier<M>); 6] = [
        ("remove", |m, b| assert_eq!(m.m_remove(b), Some(2))),
        ("entry remove", |m, b| match m.m_entry(b) {
            Some(Entry::Occupied(entry)) => assert_eq!(entry.remove(), 2),
            other => panic!("{other:?}"),
        }),
        ("clear", |m, _| m.m_clear()),
        ("drain", |m, _| assert_eq!(m.m_drain(0).0, 1)),
        ("retain", |m, _| m.m_retain(|_, _| false)),
        ("clone", |m, b| {
            let mut copy = m.clone();
            copy.m_remove(b);
            *m = copy.clone();
        }),
    ];
    for (how, empty) in emptiers {
        let mut map = M::default();
        map.m_insert(b, 2);
        empty(&mut map, b);
        assert!(map.m_is_empty(), "{how}");
        assert_eq!(map.m_insert(a, 1), None, "{how}");
        assert_eq!(map.m_get(a), None, "older key accepted after {how}");
        assert!(map.m_entry(a).is_none(), "{how}");
        // The newer key itself is welcome again.
        assert!(matches!(map.m_entry(b), Some(Entry::Vacant(_))), "{how}");
        assert_eq!(map.m_insert(b, 3), None);
        assert_eq!(map.m_index(b), 3);
        map.m_check();
    }
}

#[test]
fn older_keys_stay_stale_after_the_value_leaves_dense() {
    older_keys_stay_stale_after_the_value_leaves::<SecondaryMap<Id, u64>>();
    #[cfg(feature = "serde")]
    {
        let (_, a, b) = common::reused_slot();
        let mut map: SecondaryMap<Id, u8> = SecondaryMap::new();
        map.insert(b, 2);
        map.remove(b);
        let mut back = common::json_round_trip(&map);
        back.check_invariants();
        assert_eq!(back.insert(a, 1), None);
        assert_eq!(back.get(a), None, "older key accepted after a round trip");
        assert!(back.entry(a).is_none());
    }
}

#[test]
fn older_keys_stay_stale_after_the_value_leaves_sparse() {
    older_keys_stay_stale_after_the_value_leaves::<SparseSecondaryMap<Id, u64>>();
}

/// Keys no table of their type issues are refused: nothing is inserted,
/// `entry` is `None`, and the dense map does not grow to the index.
#[test]
fn out_of_range_keys_are_refused() {
    // `Id` carries 32 index bits, but tables use at most `u32::MAX` slots,
    // so index `u32::MAX` is never issued.
    let far = Id::from_parts(u32::MAX as usize, 1).unwrap();
    let mut dense: SecondaryMap<Id, u8> = SecondaryMap::new();
    assert_eq!(dense.insert(far, 1), None);
    assert!(dense.is_empty());
    assert!(dense.entry(far).is_none());
    assert_eq!(dense.get(far), None);
    assert!(dense.capacity() < 1 << 20, "grew to a forged index");
    dense.check_invariants();
    let mut sparse: SparseSecondaryMap<Id, u8> = SparseSecondaryMap::new();
    assert_eq!(sparse.insert(far, 1), None);
    assert!(sparse.is_empty());
    assert!(sparse.entry(far).is_none());
    assert_eq!(sparse.allocated_pages(), 0);
    sparse.check_invariants();
    // The largest issuable index is fine (for the sparse map: one page, and
    // a page directory of 4M entries, too slow to build under Miri).
    let last_index = common::scaled(1 << 16, u32::MAX as usize - 1);
    let last = Id::from_parts(last_index, 1).unwrap();
    assert_eq!(sparse.insert(last, 2), None);
    assert_eq!(sparse[last], 2);
    assert_eq!(sparse.allocated_pages(), 1);
    sparse.check_invariants();
}

/// Sparse pages: far keys cost a page each, clearing keeps pages, and a
/// lookup in a page that does not exist finds nothing.
#[test]
fn sparse_pages_are_allocated_on_first_use() {
    let mut map: SparseSecondaryMap<Id32, u32> = SparseSecondaryMap::new();
    let key = |index: usize| Id32::from_parts(index, 1).unwrap();
    for (n, index) in [0usize, 1, 1023, 1024, 5000, (1 << 20) - 1]
        .into_iter()
        .enumerate()
    {
        assert_eq!(map.insert(key(index), n as u32), None);
    }
    assert_eq!(map.allocated_pages(), 4);
    assert_eq!(map.get(key(2048)), None);
    assert_eq!(map.get(key(3000)), None);
    assert_eq!(map[key(1023)], 2);
    assert_eq!(map.as_slice(), [0, 1, 2, 3, 4, 5]);
    assert_eq!(map.remove(key(0)), Some(0));
    assert_eq!(map.as_slice(), [5, 1, 2, 3, 4]);
    map.check_invariants();
    map.clear();
    assert_eq!(map.allocated_pages(), 4);
    assert!(map.get(key(5000)).is_none());
    map.check_invariants();
}
