//! The model test, written once over [`ModelTable`] and run for
//! `IdTable`, `LookupTable`, `PackedTable`, `Pool` and `Hive`: a table
//! against a `HashMap<K, u64>`, with clone and serde round trips among the
//! operations. What a container lacks (a reuse policy, `shrink_to_fit`,
//! detached keys) its constants say, and the operations on it are not
//! drawn for it; a key whose index space a run can use up (8 index bits or
//! fewer) makes a growable table refuse insertions too.
//!
//! A random sequence of operations runs on a table and on the model. Every
//! key the table ever issued is kept; after each operation every one of
//! them must resolve exactly as the model says (live keys to their value,
//! removed keys to nothing), no key may ever be issued twice, the
//! retired-slot count must match the keys removed at the last generation,
//! iteration must follow the container's documented order (slot order, or
//! the dense order a `Vec` of keys models: an insertion appends, a removal
//! moves the last key into the hole), and the table's own invariant checker
//! must pass. The iterators are checked against the model: exact `len` and
//! `size_hint` at every step, both ends in turns until they meet, fusing,
//! and the adapters with their own paths (`common/iter_check.rs`).
//!
//! Detached keys (`detach`, `reattach`) are kept beside the model, with the
//! value held outside the table: they must resolve to nothing, stay
//! detached through `clear`, clones and serde round trips, and never have
//! their slot handed to an insertion.
//!
//! What only one container has (a packed table's sorts, swaps and slices)
//! comes in through [`ModelTable::own_op`] and the order checks of
//! [`ModelTable::check_position`]; what it checks with state of its own
//! (a pool's reference free list, the addresses of a pool's or a hive's
//! values: `stable_model.rs`) through its [`Watch`], told of every change
//! the harness makes, and [`ModelTable::harness_op`].

use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};

use handlekit::{Key, Reuse};
use proptest::prelude::*;
use proptest::sample::Index as Pick;
use proptest::test_runner::Config;

use super::iter_check::check_double_ended;
use super::table::{ReuseTable, Table};

/// With the `serde` feature: a type that round-trips through serde.
#[cfg(feature = "serde")]
pub trait MaybeSerde: serde::Serialize + serde::de::DeserializeOwned {}
#[cfg(feature = "serde")]
impl<T: serde::Serialize + serde::de::DeserializeOwned> MaybeSerde for T {}
/// Without the `serde` feature: nothing.
#[cfg(not(feature = "serde"))]
pub trait MaybeSerde {}
#[cfg(not(feature = "serde"))]
impl<T> MaybeSerde for T {}

/// What the model test needs of a table of `u64` values, beyond
/// [`Table`]; the hooks do nothing by default.
///
/// What only some containers have (a reuse policy, `shrink_to_fit`,
/// detached keys) is said by [`Table::HAS_REUSE`], [`SHRINKS`](Self::SHRINKS)
/// and [`ReuseSide::DETACHES`]: the operations on it are not drawn for a
/// container without it.
pub trait ModelTable:
    Table<u64>
    + Clone
    + PartialEq
    + Debug
    + MaybeSerde
    + std::ops::IndexMut<<Self as Table<u64>>::Key, Output = u64>
{
    /// How a table under test is made, beside its fixed capacity (a reuse
    /// policy, block sizes), drawn by the test's strategy.
    type Config: Copy + Debug;
    /// What the container checks beside the model (`()`: nothing).
    type Watch: Watch<Self>;
    /// Its reuse policy and detached keys: [`WithReuse`] for a
    /// [`ReuseTable`], else [`NoReuse`].
    type Reusing: ReuseSide<Self>;

    /// How often [`own_op`](Self::own_op) comes up, against 100 or so for
    /// the shared operations.
    const OWN_WEIGHT: u32 = 0;
    /// The fixed capacities drawn are below this.
    const FIXED_BELOW: usize = 24;
    /// The container has `shrink_to_fit`.
    const SHRINKS: bool;
    /// Retired slots can leave the container with their block (a hive
    /// frees a block whose every slot retired), so `retired_count` is at
    /// most the retired keys' count, not equal to it.
    const RETIRED_SLOTS_CAN_GO: bool = false;

    /// A table made with `config`, or with the `fixed` capacity.
    fn make(config: Self::Config, fixed: Option<usize>) -> Self;
    /// A growable table made another way than the ones under test (a
    /// `clone_from` target).
    fn other() -> Self;
    /// `shrink_to_fit` (where `SHRINKS`).
    fn shrink(&mut self);

    /// A table with the values in order (`from_iter_values`).
    fn from_values(values: Vec<u64>) -> Self;
    /// `extend` with values.
    fn extend_values(&mut self, values: impl IntoIterator<Item = u64>);

    /// The pairs a `for` loop over `&self` yields.
    fn for_loop(&self) -> Vec<(Self::Key, u64)>;
    /// Adds 1 to every value through a `for` loop over `&mut self`.
    fn for_loop_bump(&mut self);
    /// The pairs `par_iter` yields, and adds 1 to every value through
    /// `par_iter_mut` (with the `rayon` feature and not under Miri).
    #[cfg(all(feature = "rayon", not(miri)))]
    fn par_pairs_then_bump(&mut self) -> Vec<(Self::Key, u64)>;

    /// An operation only this container has, chosen by `r`, done on the
    /// table and on the model (`model`, and `order`, the model of the
    /// dense order). Returns how much it added to every value.
    fn own_op(
        &mut self,
        _r: u64,
        _order: &mut Vec<Self::Key>,
        _model: &HashMap<Self::Key, u64>,
    ) -> u64 {
        0
    }
    /// An operation only this container has that needs the whole harness
    /// (its watch, or its bookkeeping of removals), chosen by `r`; comes up
    /// with [`own_op`](Self::own_op).
    fn harness_op(_harness: &mut Harness<Self>, _r: u64) {}
    /// Writes `value` under the live `key` another way than `get_mut`,
    /// `IndexMut` and `get_unchecked_mut` (a packed table: through its
    /// slice); returns false if there is no other way.
    fn write_another_way(&mut self, _key: Self::Key, _value: u64) -> bool {
        false
    }
    /// Checks what the container says of `key`'s place (its position in
    /// the dense order) against `order`.
    fn check_position(&self, _key: Self::Key, _order: &[Self::Key]) {}
    /// Checks the container's own views of its order (slices) against
    /// `order` and the model.
    fn check_slices(&self, _order: &[Self::Key], _model: &HashMap<Self::Key, u64>) {}
    /// The addresses of the container's buffers, where it exposes them:
    /// they must not move while a fixed capacity is filled.
    fn buffers(&self) -> Vec<usize> {
        Vec::new()
    }
    /// Further checks of the iterators against the expected pairs.
    fn check_own_iterators(&self, _expected: &[(Self::Key, u64)]) {}
}

/// How a table came to be replaced by a copy of itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copied {
    Clone,
    CloneFrom,
    /// A serde round trip (the copy is growable).
    Serde,
}

/// What a container checks beside the model, with state of its own (the
/// addresses of its values, a reference free list): the harness tells it
/// of every change it makes to the table, after the change, and has it
/// check the table after every operation (under Miri, after some: see
/// [`check_after`](super::check_after)). Every hook does nothing by
/// default.
pub trait Watch<C: ModelTable>: Sized {
    /// The watch of a new table (`fixed`: its fixed capacity).
    fn new(table: &C, fixed: Option<usize>) -> Self;
    /// One insertion issued `key`.
    fn issued(&mut self, _table: &C, _key: C::Key) {}
    /// `extend` with `values` issued the keys `added` (in iteration order).
    fn extended(&mut self, _table: &C, _values: &[u64], _added: &[C::Key]) {}
    /// An insertion was refused for want of room.
    fn refused(&mut self, _table: &C) {}
    /// The live `key` was removed (`remove`, `retain`, a drain's yield).
    fn freed(&mut self, _table: &C, _key: C::Key) {}
    /// `clear`, or the drop of a drain, removed the live keys `rest`, in
    /// slot order.
    fn cleared(&mut self, _table: &C, _rest: &[C::Key]) {}
    /// `try_reserve(additional)` succeeded or not.
    fn reserved(&mut self, _table: &C, _additional: usize, _ok: bool) {}
    /// `shrink_to_fit` ran.
    fn shrunk(&mut self, _table: &C) {}
    /// The table was replaced by `copy`, made from `original` as `how`
    /// says (before anything is inserted into it).
    fn copied(&mut self, _original: &C, _copy: &C, _how: Copied) {}
    /// `key` was looked up (live, stale or forged); `value` is the model's.
    fn looked_up(&self, _table: &C, _key: C::Key, _value: Option<u64>) {}
    /// Checks the table after an operation (`model`: the live values;
    /// `issued`: every key issued).
    fn check(&mut self, _table: &C, _model: &HashMap<C::Key, u64>, _issued: &[C::Key]) {}
    /// An operation ended, the table checked or not: for state a watch
    /// carries from one operation to the next, which must not wait for the
    /// next check.
    fn stepped(&mut self, _table: &C) {}
}

/// No checks beside the model.
impl<C: ModelTable> Watch<C> for () {
    fn new(_table: &C, _fixed: Option<usize>) -> Self {}
}

/// Under Miri, three cases of fewer than 8 drawn operations, each with a
/// clone and a serde round trip spliced in (see [`ops`]): about a second of
/// Miri's clock a case.
pub const CASES: u32 = if cfg!(miri) { 3 } else { 256 };
pub const MAX_OPS: usize = if cfg!(miri) { 8 } else { 200 };

/// Where a key for an operation comes from.
#[derive(Clone, Copy, Debug)]
pub enum Src {
    /// A live key (falls back to any issued key if none is live).
    Live(Pick),
    /// Any key ever issued, live or dead.
    Any(Pick),
}

/// How `GetMut` writes a value.
#[derive(Clone, Copy, Debug)]
pub enum Via {
    GetMut,
    IndexMut,
    /// [`ModelTable::write_another_way`], else `get_mut`.
    Another,
    GetUncheckedMut,
}

#[derive(Clone, Debug)]
pub enum Op {
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
    /// [`ModelTable::own_op`].
    Own(u64),
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

/// The weights for `C`: none for what it does not have.
fn weights<C: ModelTable>() -> [u32; 27] {
    let mut weights = WEIGHTS;
    if !C::SHRINKS {
        weights[20] = 0; // ShrinkToFit
    }
    if !C::HAS_REUSE {
        weights[21] = 0; // SetReuse
    }
    if !C::Reusing::DETACHES {
        weights[24..].fill(0); // Detach, Reattach, ReattachNotDetached
    }
    weights
}

/// Builds an operation from a selector below the sum of `weights` and the
/// own weight, and raw parameters. (One selector instead of a `prop_oneof!`
/// of 27 arms: proptest seeds an RNG for each arm below the one it picks,
/// which is slow under Miri. The selector shrinks towards 0, that is
/// towards `Insert`.)
fn make_op(
    weights: &[u32],
    selector: u32,
    value: u64,
    raw: u64,
    picks: [Pick; 3],
    flags: [bool; 3],
) -> Op {
    if selector >= super::total_weight(weights) {
        return Op::Own(raw);
    }
    let kind = super::kind_of(selector, weights);
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
        10..=13 => Via::Another,
        _ => Via::GetUncheckedMut,
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
        9 => Op::GetMut(p0, value, via),
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

/// The operations for a container of type `C`.
pub fn ops<C: ModelTable>() -> impl Strategy<Value = Vec<Op>> {
    let weights = weights::<C>();
    let op = (
        0..super::total_weight(&weights) + C::OWN_WEIGHT,
        0u64..1000,
        any::<u64>(),
        any::<[Pick; 3]>(),
        any::<[bool; 3]>(),
    )
        .prop_map(move |(selector, value, raw, picks, flags)| {
            make_op(&weights, selector, value, raw, picks, flags)
        });
    prop::collection::vec(op, 0..MAX_OPS).prop_map(|mut ops| {
        // Under Miri, where a test runs a few short cases, each clones its
        // table halfway and ends with a serde round trip: drawn, each
        // comes up about once in a hundred operations.
        if cfg!(miri) {
            ops.insert(ops.len() / 2, Op::Clone);
            ops.push(Op::SerdeRoundTrip);
        }
        ops
    })
}

pub fn config() -> Config {
    super::proptest_config(CASES)
}

/// The table and its model.
pub struct Harness<C: ModelTable> {
    pub table: C,
    pub model: HashMap<C::Key, u64>,
    /// The live keys; for a dense container, in its dense order.
    pub order: Vec<C::Key>,
    /// Every key the table (or its ancestors, through clones and serde
    /// round trips) ever issued, in issue order.
    pub issued: Vec<C::Key>,
    issued_set: HashSet<C::Key>,
    /// The detached keys, with the values taken out under them.
    detached: HashMap<C::Key, u64>,
    /// The fixed capacity, while the table has one.
    fixed: Option<usize>,
    retired_before: usize,
    /// The container's own checks.
    pub watch: C::Watch,
}

impl<C: ModelTable> Harness<C> {
    pub fn new(config: C::Config, fixed: Option<usize>) -> Self {
        let table = C::make(config, fixed);
        if let Some(capacity) = fixed {
            assert_eq!(table.capacity(), capacity);
        }
        Harness {
            watch: C::Watch::new(&table, fixed),
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

    /// Records a key the table just issued for `value` by one insertion:
    /// a dense container put it last.
    fn issue(&mut self, key: C::Key, value: u64) {
        if C::DENSE {
            assert_eq!(self.table.keys().last(), Some(key), "an insertion appends");
        }
        self.record(key, value);
        self.watch.issued(&self.table, key);
    }

    /// Records a key the table just issued for `value`.
    fn record(&mut self, key: C::Key, value: u64) {
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

    /// Takes a live key out of the order model (a dense container moves its
    /// last key into the hole).
    fn unorder(&mut self, key: C::Key) {
        let at = self.order.iter().position(|&k| k == key).unwrap();
        self.order.swap_remove(at);
    }

    /// The live keys in the order the table iterates them.
    pub fn iteration_order(&self) -> Vec<C::Key> {
        let mut keys = self.order.clone();
        if !C::DENSE {
            keys.sort_by_key(|k| k.index());
        }
        keys
    }

    pub fn expected_pairs(&self) -> Vec<(C::Key, u64)> {
        self.iteration_order()
            .into_iter()
            .map(|k| (k, self.model[&k]))
            .collect()
    }

    /// The slots retired: a slot retires exactly when the occupant with
    /// the last generation leaves it, and each such key is issued once.
    fn retired(&self) -> usize {
        self.issued
            .iter()
            .filter(|k| {
                k.generation() == C::Key::MAX_GENERATION
                    && !self.model.contains_key(k)
                    && !self.detached.contains_key(k)
            })
            .count()
    }

    /// Slots of a fixed capacity that take no insertion: retired or
    /// detached.
    fn unusable(&self) -> usize {
        self.retired() + self.detached.len()
    }

    /// Whether a run can use up the key's index space (2^8 slots or
    /// fewer): then an insertion into a growable table may be refused.
    fn exhaustible() -> bool {
        C::Key::INDEX_BITS <= 8
    }

    /// Whether the table can take `additional` more values: the slots of a
    /// fixed capacity that are not live, retired or detached, or else (for
    /// a key whose index space a run can use up) `try_reserve`.
    fn room_for(&mut self, additional: usize) -> bool {
        match self.fixed {
            Some(fixed) => self.table.len() + self.unusable() + additional <= fixed,
            None => !Self::exhaustible() || self.table.try_reserve(additional).is_ok(),
        }
    }

    /// Whether the table cannot take another value.
    fn full(&mut self) -> bool {
        !self.room_for(1)
    }

    fn dead_keys(&self) -> Vec<C::Key> {
        self.issued
            .iter()
            .copied()
            .filter(|k| !self.model.contains_key(k))
            .collect()
    }

    pub fn pick_live(&self, pick: Pick) -> Option<C::Key> {
        let live = self.iteration_order();
        (!live.is_empty()).then(|| *pick.get(&live))
    }

    fn pick(&self, src: Src) -> Option<C::Key> {
        match src {
            Src::Live(pick) if !self.order.is_empty() => self.pick_live(pick),
            Src::Live(pick) | Src::Any(pick) => {
                (!self.issued.is_empty()).then(|| *pick.get(&self.issued))
            }
        }
    }

    /// Checks the table against the model after an operation.
    pub fn check(&mut self) {
        let table = &self.table;
        table.check_invariants();
        assert_eq!(table.len(), self.model.len());
        assert_eq!(table.is_empty(), self.model.is_empty());
        let got: Vec<(C::Key, u64)> = table.iter().map(|(k, v)| (k, *v)).collect();
        assert_eq!(got, self.expected_pairs(), "{}: iteration order", C::NAME);
        table.check_slices(&self.order, &self.model);
        for &key in &self.issued {
            let expected = self.model.get(&key);
            assert_eq!(table.get(key), expected, "get({key:?})");
            assert_eq!(table.contains_key(key), expected.is_some());
            assert_eq!(
                C::Reusing::is_detached(table, key),
                self.detached.contains_key(&key),
                "is_detached({key:?})"
            );
            table.check_position(key, &self.order);
        }
        let retired = self.retired();
        if C::RETIRED_SLOTS_CAN_GO {
            assert!(table.retired_count() <= retired, "retired_count");
        } else {
            assert_eq!(table.retired_count(), retired, "retired_count");
            assert!(retired >= self.retired_before, "a retired slot came back");
            self.retired_before = retired;
        }
        assert!(table.capacity() >= table.len());
        if let Some(fixed) = self.fixed {
            // A detached slot is not free either (nor a retired one gone
            // with its block).
            assert_eq!(table.capacity(), fixed - retired - self.detached.len());
        }
        self.watch.check(&self.table, &self.model, &self.issued);
    }

    /// Inserts into a full table (a fixed capacity, or the key's index
    /// space, used up): must fail, change nothing, and (where the buffers
    /// are visible) reallocate nothing.
    fn insert_into_full(&mut self, value: u64) {
        let before = self.table.len();
        let buffers = self.table.buffers();
        let err = self.table.try_insert(value).unwrap_err();
        assert_eq!(self.table.buffers(), buffers, "a fixed table reallocated");
        if self.fixed.is_some() {
            assert!(err.is_fixed_capacity());
            assert!(!err.is_index_space());
            assert_eq!(err.limit(), self.fixed);
        } else {
            assert!(err.is_index_space(), "{err}");
            assert!(!err.is_fixed_capacity());
            assert_eq!(err.limit(), Some(1 << C::Key::INDEX_BITS));
        }
        assert_eq!(self.table.len(), before);
        self.watch.refused(&self.table);
    }

    /// Checks a copy of the table (a clone, or a `clone_from` target): it
    /// holds what the table holds, keeps a fixed capacity, and issues the
    /// same next key; then carries on with the copy.
    fn check_and_adopt(&mut self, copy: C, how: Copied) {
        self.assert_faithful_copy(&copy);
        if self.fixed.is_some() {
            assert_eq!(copy.capacity(), self.table.capacity());
        }
        self.assert_keeps_fixed_capacity(&copy);
        let original = self.replace(copy, how);
        self.assert_same_next_key(original);
    }

    /// Continues with `copy` in place of the table, made from it as `how`
    /// says; returns the table it replaced.
    fn replace(&mut self, copy: C, how: Copied) -> C {
        let original = std::mem::replace(&mut self.table, copy);
        self.watch.copied(&original, &self.table, how);
        original
    }

    /// The same next key from the table and `other`, which must issue
    /// identically.
    fn assert_same_next_key(&mut self, mut other: C) {
        if self.full() {
            assert!(other.try_insert(0).is_err());
            return;
        }
        let a = self.table.insert(7);
        let b = other.insert(7);
        assert_eq!(a, b, "a copy issues the same keys as its original");
        self.issue(a, 7);
    }

    /// A copy must be equal, in the same order, with the same policy,
    /// retirements and detached keys.
    fn assert_faithful_copy(&self, copy: &C) {
        copy.check_invariants();
        assert!(*copy == self.table);
        assert!(copy.iter().eq(self.table.iter()), "the same order");
        assert_eq!(C::Reusing::policy(copy), C::Reusing::policy(&self.table));
        assert_eq!(copy.retired_count(), self.table.retired_count());
        assert!(copy.capacity() >= copy.len());
        for &key in self.detached.keys() {
            assert!(
                C::Reusing::is_detached(copy, key),
                "a copy keeps {key:?} detached"
            );
        }
    }

    /// A copy keeps a fixed capacity, allocation included: inserting up to
    /// it never moves the buffers.
    fn assert_keeps_fixed_capacity(&self, copy: &C) {
        if self.fixed.is_none() {
            return;
        }
        assert_eq!(copy.capacity(), self.table.capacity());
        let mut copy = copy.clone();
        let buffers = copy.buffers();
        let room = copy.capacity() - copy.len();
        let mut added = 0;
        while copy.try_insert(0).is_ok() {
            added += 1;
        }
        assert_eq!(added, room, "a fixed copy takes exactly its room");
        assert_eq!(copy.buffers(), buffers, "a fixed copy reallocated");
        copy.check_invariants();
    }

    /// Removes `key` from the table and the model.
    pub fn remove(&mut self, key: C::Key) {
        let expected = self.model.remove(&key);
        assert_eq!(self.table.remove(key), expected);
        if expected.is_some() {
            self.unorder(key);
            self.watch.freed(&self.table, key);
        }
        assert_eq!(self.table.remove(key), None, "removed twice");
        self.table.check_position(key, &self.order);
        self.watch.looked_up(&self.table, key, None);
    }

    fn assert_disjoint<const N: usize>(&mut self, keys: [C::Key; N]) {
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
        let expected = self.expected_pairs();
        let n = expected.len();
        let split = split.min(n);
        // (The iterators are opaque types that may have drop glue, so each
        // borrow of the table ends with a block.)
        {
            let table = &self.table;
            Self::check_borrowing_iterators(table, &expected, split);
        }
        self.check_mutable_iterators(split);
    }

    fn check_borrowing_iterators(table: &C, expected: &[(C::Key, u64)], split: usize) {
        let n = expected.len();
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
        let mut iter = table.iter();
        let head: Vec<_> = iter.by_ref().take(split).map(|(k, v)| (k, *v)).collect();
        let tail = iter.fold(Vec::new(), |mut acc, (k, v)| {
            acc.push((k, *v));
            acc
        });
        assert_eq!(head.as_slice(), &expected[..split]);
        assert_eq!(tail.as_slice(), &expected[split..]);

        let keys: Vec<C::Key> = expected.iter().map(|&(k, _)| k).collect();
        let values: Vec<u64> = expected.iter().map(|&(_, v)| v).collect();
        // Both ends, exact lengths, fusing and the adapters, for each
        // borrowing iterator.
        let seed = split as u64 * 7 + n as u64;
        check_double_ended(|| table.iter().map(|(k, v)| (k, *v)), expected, seed);
        // And unmapped: `map` leaves `nth`, `nth_back` and `last` to `next`,
        // so these reach the iterator's own.
        let pairs: Vec<(C::Key, &u64)> = expected.iter().map(|(k, v)| (*k, v)).collect();
        check_double_ended(|| table.iter(), &pairs, seed + 3);
        check_double_ended(|| table.keys(), &keys, seed + 1);
        check_double_ended(|| table.values().copied(), &values, seed + 2);
        assert_eq!(table.keys().collect::<Vec<_>>(), keys);
        assert_eq!(table.keys().len(), n);
        assert_eq!(table.keys().fold(0, |count, _| count + 1), n);
        assert_eq!(table.values().copied().collect::<Vec<_>>(), values);
        assert_eq!(table.values().count(), n);
        assert_eq!(table.iter().count(), n);
        assert_eq!(table.for_loop(), expected);
        for (k, _) in expected {
            assert_eq!(table.keys().find(|x| x == k), Some(*k));
        }
        // Owned: `into_iter` of a clone, and a table rebuilt from the values.
        let owned: Vec<(C::Key, u64)> = table.clone().into_pairs().collect();
        assert_eq!(owned, expected);
        let rebuilt = C::from_values(values.clone());
        assert_eq!(rebuilt.values().copied().collect::<Vec<_>>(), values);
        table.check_own_iterators(expected);

        // Debug prints the map in iteration order.
        assert_eq!(format!("{table:?}"), super::map_debug(expected));
    }

    /// Mutable iteration: bumps every value four ways (five with rayon),
    /// the first from both ends in turns.
    fn check_mutable_iterators(&mut self, split: usize) {
        let n = self.model.len();
        #[cfg(all(feature = "rayon", not(miri)))]
        let expected = self.expected_pairs();
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
        drop(iter_mut);
        for v in self.table.values_mut().rev() {
            *v += 1;
        }
        let mut values_mut = self.table.values_mut();
        assert_eq!(values_mut.len(), n);
        for v in values_mut.by_ref().take(split) {
            *v += 1;
        }
        values_mut.fold((), |(), v| *v += 1);
        self.table.for_loop_bump();
        #[cfg(all(feature = "rayon", not(miri)))]
        {
            let par = self.table.par_pairs_then_bump();
            let bumped: Vec<(C::Key, u64)> = expected.iter().map(|&(k, v)| (k, v + 4)).collect();
            assert_eq!(par, bumped);
        }
        let bumps = 4 + u64::from(cfg!(all(feature = "rayon", not(miri))));
        for v in self.model.values_mut() {
            *v += bumps;
        }
    }

    pub fn apply(&mut self, op: Op) {
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
                if !self.room_for(values.len()) {
                    return;
                }
                let before = self.table.len();
                self.table.extend_values(values.iter().copied());
                if C::DENSE {
                    // Extend appends, in order.
                    let added: Vec<(C::Key, u64)> = self
                        .table
                        .iter()
                        .skip(before)
                        .map(|(k, v)| (k, *v))
                        .collect();
                    let got: Vec<u64> = added.iter().map(|&(_, v)| v).collect();
                    assert_eq!(got, values);
                    for &(key, value) in &added {
                        self.record(key, value);
                    }
                    let keys: Vec<C::Key> = added.iter().map(|&(k, _)| k).collect();
                    self.watch.extended(&self.table, &values, &keys);
                    return;
                }
                let mut added: Vec<(C::Key, u64)> = self
                    .table
                    .iter()
                    .filter(|(k, _)| !self.model.contains_key(k))
                    .map(|(k, v)| (k, *v))
                    .collect();
                assert_eq!(added.len(), values.len());
                let mut got: Vec<u64> = added.iter().map(|&(_, v)| v).collect();
                let mut want = values.clone();
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want);
                // Issue order is not known here (the watch may know it); the
                // keys only have to be fresh.
                let keys: Vec<C::Key> = added.iter().map(|&(k, _)| k).collect();
                added.sort_by_key(|&(k, _)| k);
                for (key, value) in added {
                    self.record(key, value);
                }
                self.watch.extended(&self.table, &values, &keys);
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
                    self.remove(key);
                    assert!(!self.table.contains_key(key));
                }
            }
            Op::Get(pick) => {
                let Some(key) = self.pick_live(pick) else {
                    return;
                };
                let value = self.model[&key];
                assert_eq!(self.table[key], value);
                assert_eq!(self.table.get_mut(key).copied(), Some(value));
                // SAFETY: `key` is live in the model, which the table matches.
                assert_eq!(unsafe { *self.table.get_unchecked(key) }, value);
                // SAFETY: as above.
                assert_eq!(unsafe { *self.table.get_unchecked_mut(key) }, value);
                let [only] = self.table.get_disjoint_mut([key]).expect("live key");
                assert_eq!(*only, value);
                self.table.check_position(key, &self.order);
                self.watch.looked_up(&self.table, key, Some(value));
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
                assert!(!self.table.keys().any(|k| k == key));
                let table = &self.table;
                let index = catch_unwind(AssertUnwindSafe(|| table[key]));
                assert!(index.is_err(), "Index with the stale key {key:?}");
                self.table.check_position(key, &self.order);
                self.watch.looked_up(&self.table, key, None);
            }
            Op::GetForgedBits(bits) => {
                if let Some(key) = C::Key::from_bits(bits) {
                    assert_eq!(key.to_bits(), bits);
                    assert_eq!(self.table.get(key), self.model.get(&key));
                    assert_eq!(self.table.contains_key(key), self.model.contains_key(&key));
                    self.table.check_position(key, &self.order);
                    let value = self.model.get(&key).copied();
                    self.watch.looked_up(&self.table, key, value);
                }
            }
            Op::GetForgedParts(index, generation) => {
                if let Some(key) = C::Key::from_parts(index, generation) {
                    assert_eq!((key.index(), key.generation()), (index, generation));
                    assert_eq!(self.table.get(key), self.model.get(&key));
                    assert_eq!(
                        self.table.get_mut(key).copied(),
                        self.model.get(&key).copied()
                    );
                    self.table.check_position(key, &self.order);
                    let value = self.model.get(&key).copied();
                    self.watch.looked_up(&self.table, key, value);
                }
            }
            Op::GetMut(pick, value, via) => {
                let Some(key) = self.pick_live(pick) else {
                    return;
                };
                match via {
                    Via::GetMut => *self.table.get_mut(key).unwrap() = value,
                    Via::IndexMut => self.table[key] = value,
                    Via::Another => {
                        if !self.table.write_another_way(key, value) {
                            *self.table.get_mut(key).unwrap() = value;
                        }
                    }
                    // SAFETY: `key` is live in the model, which the table
                    // matches.
                    Via::GetUncheckedMut => unsafe { *self.table.get_unchecked_mut(key) = value },
                }
                self.model.insert(key, value);
            }
            Op::Clear => {
                let live = self.iteration_order();
                self.table.clear();
                self.watch.cleared(&self.table, &live);
                self.model.clear();
                self.order.clear();
                assert!(self.table.is_empty());
                assert_eq!(self.table.iter().next(), None);
            }
            Op::Retain(modulus) => {
                let mut visited = Vec::new();
                self.table.retain(|key, value| {
                    visited.push((key, *value));
                    super::retain_step(value, modulus)
                });
                assert_eq!(
                    visited,
                    self.expected_pairs(),
                    "retain visits every value once, in order"
                );
                self.model
                    .retain(|_, value| super::retain_step(value, modulus));
                // The survivors keep their order.
                let model = &self.model;
                self.order.retain(|k| model.contains_key(k));
                for (key, _) in visited {
                    if !self.model.contains_key(&key) {
                        self.watch.freed(&self.table, key);
                    }
                }
            }
            Op::Drain(take) => {
                let n = self.model.len();
                let expected = self.expected_pairs();
                let mut drain = self.table.drain();
                assert_eq!(drain.len(), n);
                let taken: Vec<(C::Key, u64)> = drain.by_ref().take(take).collect();
                assert_eq!(drain.len(), n - taken.len());
                drop(drain);
                assert_eq!(taken.as_slice(), &expected[..take.min(n)], "drain order");
                // The values taken were removed one by one, then the rest
                // by `clear`.
                for &(key, _) in &taken {
                    self.watch.freed(&self.table, key);
                }
                let rest: Vec<C::Key> = expected[taken.len()..].iter().map(|&(k, _)| k).collect();
                self.watch.cleared(&self.table, &rest);
                self.model.clear();
                self.order.clear();
                assert!(self.table.is_empty());
            }
            Op::Clone => {
                let copy = self.table.clone();
                self.check_and_adopt(copy, Copied::Clone);
            }
            Op::CloneFrom(junk, fixed_target) => {
                let mut target = if fixed_target {
                    C::with_fixed_capacity(junk.len() + 3)
                } else {
                    C::other()
                };
                target.extend_values(junk);
                let first = target
                    .keys()
                    .next()
                    .unwrap_or_else(|| C::Key::from_parts(0, 1).expect("a valid key"));
                target.remove(first);
                target.clone_from(&self.table);
                self.check_and_adopt(target, Copied::CloneFrom);
            }
            Op::SerdeRoundTrip => {
                #[cfg(feature = "serde")]
                {
                    let json = serde_json::to_string(&self.table).unwrap();
                    let back: C = serde_json::from_str(&json).unwrap();
                    self.assert_faithful_copy(&back);
                    assert_eq!(serde_json::to_string(&back).unwrap(), json);
                    // The fixed capacity is not part of the serialized form
                    // (the copy is growable): the next key is a fresh one
                    // (`issue` checks it is new).
                    self.fixed = None;
                    self.replace(back, Copied::Serde);
                    if self.full() {
                        self.insert_into_full(9);
                    } else {
                        let key = self.table.insert(9);
                        self.issue(key, 9);
                    }
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
                let result = self.table.try_reserve(additional);
                match self.fixed {
                    Some(fixed) => {
                        let room = fixed - self.unusable() - self.table.len();
                        assert_eq!(result.is_ok(), additional <= room);
                        if let Err(err) = result {
                            assert!(err.is_fixed_capacity());
                            assert_eq!(err.limit(), Some(fixed));
                        }
                    }
                    None => {
                        if let Err(err) = result {
                            assert!(Self::exhaustible() && err.is_index_space(), "{err}");
                        }
                    }
                }
                if result.is_ok() {
                    assert!(self.table.capacity() >= self.table.len() + additional);
                }
                self.watch.reserved(&self.table, additional, result.is_ok());
            }
            Op::ShrinkToFit => {
                let before = self.table.capacity();
                self.table.shrink();
                assert!(self.table.capacity() >= self.table.len());
                if self.fixed.is_some() {
                    assert_eq!(self.table.capacity(), before);
                }
                self.watch.shrunk(&self.table);
            }
            Op::SetReuse(reuse) => {
                self.table.set_reuse(reuse);
                assert_eq!(C::Reusing::policy(&self.table), Some(reuse));
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
                let taken = C::Reusing::detach(&mut self.table, key);
                assert_eq!(taken, self.model.remove(&key), "detach({key:?})");
                if let Some(value) = taken {
                    self.detached.insert(key, value);
                    // The last value fills the hole, as for `remove`.
                    self.unorder(key);
                }
                assert_eq!(
                    C::Reusing::detach(&mut self.table, key),
                    None,
                    "detached twice"
                );
                assert_eq!(self.table.remove(key), None, "removed while detached");
            }
            Op::Reattach(pick, bump) => {
                let mut keys: Vec<C::Key> = self.detached.keys().copied().collect();
                if keys.is_empty() {
                    return;
                }
                keys.sort();
                let key = *pick.get(&keys);
                let value = self.detached.remove(&key).unwrap() + bump;
                C::Reusing::reattach(&mut self.table, key, value);
                self.model.insert(key, value);
                // Back at the end of a dense order.
                self.order.push(key);
                assert_eq!(self.table.get(key), Some(&value));
            }
            Op::ReattachNotDetached(src) => {
                let Some(key) = self.pick(src) else { return };
                if self.detached.contains_key(&key) {
                    return;
                }
                let result = catch_unwind(AssertUnwindSafe(|| {
                    C::Reusing::reattach(&mut self.table, key, 0)
                }));
                assert!(result.is_err(), "reattach({key:?}) of a key not detached");
            }
            Op::Own(r) => {
                let bump = self.table.own_op(r, &mut self.order, &self.model);
                for v in self.model.values_mut() {
                    *v += bump;
                }
                C::harness_op(self, r);
            }
        }
    }
}

/// A model table's reuse policy and detached keys, where it has them.
pub trait ReuseSide<C: Table<u64>> {
    /// The container has `detach` and `reattach` (the operations on
    /// detached keys are drawn).
    const DETACHES: bool;
    fn policy(table: &C) -> Option<Reuse>;
    /// Only where `DETACHES`.
    fn detach(table: &mut C, key: C::Key) -> Option<u64>;
    /// Only where `DETACHES`.
    fn reattach(table: &mut C, key: C::Key, value: u64);
    fn is_detached(table: &C, key: C::Key) -> bool;
}

/// The [`ReuseSide`] of a [`ReuseTable`]: its own methods.
pub struct WithReuse;

impl<C: ReuseTable<u64>> ReuseSide<C> for WithReuse {
    const DETACHES: bool = true;
    fn policy(table: &C) -> Option<Reuse> {
        Some(table.reuse())
    }
    fn detach(table: &mut C, key: C::Key) -> Option<u64> {
        table.detach(key)
    }
    fn reattach(table: &mut C, key: C::Key, value: u64) {
        table.reattach(key, value);
    }
    fn is_detached(table: &C, key: C::Key) -> bool {
        table.is_detached(key)
    }
}

/// The [`ReuseSide`] of a table without a policy or detached keys.
pub struct NoReuse;

impl<C: Table<u64>> ReuseSide<C> for NoReuse {
    const DETACHES: bool = false;
    fn policy(_table: &C) -> Option<Reuse> {
        None
    }
    fn detach(_table: &mut C, _key: C::Key) -> Option<u64> {
        unreachable!("no detach")
    }
    fn reattach(_table: &mut C, _key: C::Key, _value: u64) {
        unreachable!("no reattach")
    }
    fn is_detached(_table: &C, _key: C::Key) -> bool {
        false
    }
}

/// The [`ModelTable`] items `IdTable`, `LookupTable` and `PackedTable`
/// spell alike (with no [`Watch`], and their [`ReuseTable`] methods for
/// the policy and detached keys).
#[macro_export]
macro_rules! forward_model_table_methods {
    () => {
        type Config = handlekit::Reuse;
        type Watch = ();
        type Reusing = $crate::common::model_suite::WithReuse;
        const SHRINKS: bool = true;

        fn make(reuse: handlekit::Reuse, fixed: Option<usize>) -> Self {
            let mut table = match fixed {
                Some(capacity) => Self::with_fixed_capacity(capacity),
                None => Self::with_reuse(reuse),
            };
            table.set_reuse(reuse);
            assert_eq!(table.reuse(), reuse);
            table
        }

        fn other() -> Self {
            Self::with_reuse(handlekit::Reuse::Fifo { min_free: 1 })
        }

        fn shrink(&mut self) {
            Self::shrink_to_fit(self)
        }

        $crate::forward_model_iteration!();
    };
}

/// The [`ModelTable`] methods that build and walk a table, which every
/// container spells alike.
#[macro_export]
macro_rules! forward_model_iteration {
    () => {
        fn from_values(values: Vec<u64>) -> Self {
            Self::from_iter_values(values)
        }

        fn extend_values(&mut self, values: impl IntoIterator<Item = u64>) {
            self.extend(values);
        }

        fn for_loop(&self) -> Vec<(K, u64)> {
            let mut pairs = Vec::new();
            for (k, v) in self {
                pairs.push((k, *v));
            }
            pairs
        }

        fn for_loop_bump(&mut self) {
            for (_, v) in self {
                *v += 1;
            }
        }

        #[cfg(all(feature = "rayon", not(miri)))]
        fn par_pairs_then_bump(&mut self) -> Vec<(K, u64)> {
            use rayon::prelude::*;
            let pairs = self.par_iter().map(|(k, v)| (k, *v)).collect();
            self.par_iter_mut().for_each(|(_, v)| *v += 1);
            pairs
        }
    };
}

/// Runs `ops` on a table of type `C` made with `config` (or a `fixed`
/// capacity), checking it against the model after each (under Miri, after
/// some: see [`check_after`](super::check_after)).
pub fn run<C: ModelTable>(config: C::Config, fixed: Option<usize>, ops: Vec<Op>) {
    let mut harness = Harness::<C>::new(config, fixed);
    harness.check();
    let len = ops.len();
    for (step, op) in ops.into_iter().enumerate() {
        harness.apply(op);
        if super::check_after(step, len) {
            harness.check();
        }
        harness.watch.stepped(&harness.table);
    }
}

/// Writes one proptest `#[test]` per line `name: Table type, config;`,
/// each calling [`run`]: `config` is a strategy for the table's
/// [`ModelTable::Config`] (`Just(Reuse::Lifo)`, block sizes).
///
/// `model_suite_tests!(reuse_matrix Table)` writes the tests of a table
/// with a reuse policy: keys `Id`, `Id32` and the caller's `Gen4`, each
/// under `Reuse::Lifo` and `Reuse::Fifo { min_free: 3 }`.
#[macro_export]
macro_rules! model_suite_tests {
    (reuse_matrix $table:ident) => {
        $crate::model_suite_tests! {
            id_lifo: $table<u64, Id>, Just(Reuse::Lifo);
            id_fifo: $table<u64, Id>, Just(Reuse::Fifo { min_free: 3 });
            id32_lifo: $table<u64, Id32>, Just(Reuse::Lifo);
            id32_fifo: $table<u64, Id32>, Just(Reuse::Fifo { min_free: 3 });
            gen4_lifo: $table<u64, Gen4>, Just(Reuse::Lifo);
            gen4_fifo: $table<u64, Gen4>, Just(Reuse::Fifo { min_free: 3 });
        }
    };
    ($($name:ident: $table:ty, $config:expr;)*) => {
        proptest::proptest! {
            #![proptest_config($crate::common::model_suite::config())]
            $(
                #[test]
                fn $name(
                    config in $config,
                    fixed in proptest::option::weighted(
                        0.25,
                        0usize..<$table as $crate::common::model_suite::ModelTable>::FIXED_BELOW,
                    ),
                    ops in $crate::common::model_suite::ops::<$table>(),
                ) {
                    $crate::common::model_suite::run::<$table>(config, fixed, ops);
                }
            )*
        }
    };
}
