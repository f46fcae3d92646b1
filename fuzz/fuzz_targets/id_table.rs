//! Differential fuzzing of `IdTable` against a `HashMap<Key, Value>` model.
//!
//! The first input byte picks the key type (`Id`, `Id32`, or `Narrow`, a key
//! with 4 generation bits whose slots retire after 15 occupants); the rest is
//! a table setup and a sequence of operations. After every operation every key
//! ever issued is checked against the model, the table's iterators are checked
//! against the model, and the table's hidden `check_invariants` runs. Any
//! divergence panics.
//!
//! Beyond the map semantics, the model keeps one record per slot (the
//! generation of its last occupant, and whether it is occupied) so that it can
//! check the documented key guarantees: no key is ever issued twice, a reused
//! slot gets the next generation, a slot whose generation reaches
//! `MAX_GENERATION` is retired, and the `Reuse` policy decides between reusing
//! a slot and appending one.
//!
//! Detached slots (`detach` / `reattach`) are modelled too: a detached slot
//! is neither free nor retired, keeps the detached key's generation, is never
//! given to an insertion, and stays detached through `clear`, clones and
//! serde round trips.
//!
//! Values are boxed so that AddressSanitizer and LeakSanitizer see double
//! drops, use after free and leaks.
//!
//! Print an input as an operation list with
//! `cargo +nightly fuzz fmt id_table <file>`.

#![no_main]

mod common;

use std::collections::{HashMap, HashSet};
use std::fmt;

use arbitrary::{Arbitrary, Unstructured};
use common::{nth_sorted, try_insert_with_key, Narrow, Wide};
use handlekit::{CapacityError, Id, Id32, IdTable, Key, Reuse};
use libfuzzer_sys::fuzz_target;
#[path = "walk.rs"]
mod walk;
use serde::de::DeserializeOwned;
use serde::Serialize;
use walk::walk_both_ends;

/// The stored value: heap-owning, so that sanitizers see drop bugs.
type Value = Box<u32>;
type Table<K> = IdTable<Value, K>;

/// Which key type the run uses.
#[derive(Clone, Copy, Debug)]
enum KeyKind {
    Id,
    Id32,
    Narrow,
}

/// From the first byte, mod 3.
impl<'a> Arbitrary<'a> for KeyKind {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match u8::arbitrary(u)? % 3 {
            0 => KeyKind::Id,
            1 => KeyKind::Id32,
            _ => KeyKind::Narrow,
        })
    }
}

#[derive(Arbitrary, Clone, Copy, Debug)]
enum Setup {
    Default,
    WithCapacity(u8),
    WithReuse(ReuseArg),
    /// `with_fixed_capacity(n)`, then the policy.
    Fixed(u8, ReuseArg),
}

#[derive(Arbitrary, Clone, Copy, Debug)]
enum ReuseArg {
    Lifo,
    Fifo { min_free: u8 },
}

impl ReuseArg {
    fn get(self) -> Reuse {
        match self {
            ReuseArg::Lifo => Reuse::Lifo,
            ReuseArg::Fifo { min_free } => Reuse::Fifo {
                min_free: u32::from(min_free % 16),
            },
        }
    }
}

/// How an operation names a key.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum KeyRef {
    /// One of the keys issued so far (index into the list, modulo its length).
    Issued(u16),
    /// Any bits, through `Key::from_bits`.
    Forged(u64),
    /// An issued key's index with its generation shifted: a near miss.
    Near(u16, i8),
    /// A small index with any generation, through `Key::from_parts`.
    Parts(u8, u32),
}

#[derive(Arbitrary, Clone, Debug)]
enum Op {
    Insert(u32),
    TryInsert(u32),
    InsertWithKey,
    Remove(KeyRef),
    Get(KeyRef),
    GetMut(KeyRef, u32),
    ContainsKey(KeyRef),
    Clear,
    /// `retain(|_, v| *v % (modulus + 1) != rem)`, adding `add` to kept values.
    Retain {
        modulus: u8,
        rem: u8,
        add: u32,
    },
    /// `drain()`, take `take` items, drop the rest.
    Drain {
        take: u8,
    },
    /// Clone the table; optionally insert `probe` into both (the clone must
    /// issue the same key); optionally continue with the clone.
    Clone {
        probe: Option<u32>,
        adopt: bool,
    },
    /// `clone_from` into a table that already holds `junk` values.
    CloneFrom {
        target: Setup,
        junk: u8,
        adopt: bool,
    },
    /// serde_json round trip of the table and of every issued key;
    /// optionally continue with the deserialized table.
    SerdeRoundTrip {
        adopt: bool,
    },
    /// Deserialize a table from well-formed JSON with arbitrary slots.
    HostileSlots {
        reuse: ReuseArg,
        slots: Vec<(u32, Option<u32>)>,
        inserts: u8,
    },
    /// Deserialize a table and a key from arbitrary text.
    HostileJson(String),
    GetDisjointMut(KeyRef, KeyRef),
    SetReuse(ReuseArg),
    TryReserve(u8),
    ShrinkToFit,
    /// `try_insert_with_key`, whose closure fails when `fail` is set.
    TryInsertWithKey {
        fail: bool,
    },
    Detach(KeyRef),
    /// Reattach one of the detached keys (index into them, sorted) with a
    /// new value.
    Reattach(u16, u32),
    /// Walk `iter()` and then `iter_mut()` (adding 1 to each value) from
    /// both ends, in the order `ends` picks (see `walk_both_ends`).
    Walk {
        ends: u64,
    },
}

/// A fuzz input: the key type, the table setup, then the operations.
type Input = common::Input<(KeyKind, Setup), Op>;

fuzz_target!(|input: Input| {
    match input.head.0 {
        KeyKind::Id => run::<Id>(&input),
        KeyKind::Id32 => run::<Id32>(&input),
        KeyKind::Narrow => run::<Narrow>(&input),
    }
});

/// Where a check failed: the step and its operation.
struct Ctx<'a> {
    step: usize,
    op: &'a Op,
}

impl fmt::Display for Ctx<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {} ({:?})", self.step, self.op)
    }
}

/// The model's record of one slot.
#[derive(Clone, Copy, Debug)]
struct SlotModel {
    /// Generation of the current or last occupant (of the detached key,
    /// for a detached slot); 0 if never occupied.
    generation: u32,
    occupied: bool,
    /// Reserved by `detach`: neither free nor retired.
    detached: bool,
}

struct Model<K: Key> {
    live: HashMap<K, u32>,
    /// Every key ever issued, in order.
    issued: Vec<K>,
    issued_set: HashSet<K>,
    slots: Vec<SlotModel>,
    /// The detached keys, with the values taken out under them.
    detached: HashMap<K, u32>,
    fixed: Option<usize>,
    reuse: Reuse,
}

fn max_slots<K: Key>() -> usize {
    if K::INDEX_BITS >= 32 {
        u32::MAX as usize
    } else {
        1usize << K::INDEX_BITS
    }
}

fn table_from_setup<K: Key>(setup: Setup) -> (Table<K>, Option<usize>, Reuse) {
    match setup {
        Setup::Default => (Table::default(), None, Reuse::Lifo),
        Setup::WithCapacity(n) => {
            let table = Table::with_capacity_and_key(usize::from(n));
            assert!(table.capacity() >= usize::from(n), "with_capacity");
            (table, None, Reuse::Lifo)
        }
        Setup::WithReuse(reuse) => (Table::with_reuse(reuse.get()), None, reuse.get()),
        Setup::Fixed(n, reuse) => {
            let n = usize::from(n);
            let mut table = Table::with_fixed_capacity(n);
            assert_eq!(table.capacity(), n, "with_fixed_capacity");
            table.set_reuse(reuse.get());
            (table, Some(n), reuse.get())
        }
    }
}

impl<K: Key> Model<K> {
    fn new(fixed: Option<usize>, reuse: Reuse) -> Self {
        Model {
            live: HashMap::new(),
            issued: Vec::new(),
            issued_set: HashSet::new(),
            slots: Vec::new(),
            detached: HashMap::new(),
            fixed,
            reuse,
        }
    }

    fn limit(&self) -> usize {
        self.fixed.unwrap_or_else(max_slots::<K>)
    }

    fn is_retired(slot: &SlotModel) -> bool {
        !slot.occupied && !slot.detached && slot.generation >= K::MAX_GENERATION
    }

    fn is_free(slot: &SlotModel) -> bool {
        !slot.occupied && !slot.detached && slot.generation < K::MAX_GENERATION
    }

    fn free(&self) -> usize {
        self.slots.iter().filter(|s| Self::is_free(s)).count()
    }

    fn retired(&self) -> usize {
        self.slots.iter().filter(|s| Self::is_retired(s)).count()
    }

    /// Whether the next insertion must fail.
    fn insert_must_fail(&self) -> bool {
        self.free() == 0 && self.slots.len() >= self.limit()
    }

    /// Resolves a key reference; `None` when it names no key at all.
    fn resolve(&self, key: KeyRef, ctx: &Ctx<'_>) -> Option<K> {
        match key {
            KeyRef::Issued(n) => {
                if self.issued.is_empty() {
                    None
                } else {
                    Some(self.issued[usize::from(n) % self.issued.len()])
                }
            }
            KeyRef::Forged(bits) => {
                let key = K::from_bits(bits);
                if let Some(key) = key {
                    assert_eq!(key.to_bits(), bits, "{ctx}: from_bits/to_bits");
                    assert!(
                        (1..=K::MAX_GENERATION).contains(&key.generation()),
                        "{ctx}: from_bits accepted generation {}",
                        key.generation()
                    );
                }
                key
            }
            KeyRef::Near(n, delta) => {
                if self.issued.is_empty() {
                    return None;
                }
                let base = self.issued[usize::from(n) % self.issued.len()];
                let generation = base.generation().wrapping_add_signed(i32::from(delta));
                let key = K::from_parts(base.index(), generation);
                assert_eq!(
                    key.is_some(),
                    (1..=K::MAX_GENERATION).contains(&generation),
                    "{ctx}: from_parts({}, {generation})",
                    base.index()
                );
                key
            }
            KeyRef::Parts(index, generation) => {
                let key = K::from_parts(usize::from(index), generation);
                assert_eq!(
                    key.is_some(),
                    (1..=K::MAX_GENERATION).contains(&generation),
                    "{ctx}: from_parts({index}, {generation})"
                );
                if let Some(key) = key {
                    assert_eq!(
                        (key.index(), key.generation()),
                        (usize::from(index), generation)
                    );
                }
                key
            }
        }
    }

    /// Records the outcome of an insertion of `value`, checking the key
    /// guarantees and the reuse policy.
    fn record_insert(&mut self, result: Result<K, CapacityError>, value: u32, ctx: &Ctx<'_>) {
        let must_fail = self.insert_must_fail();
        let key = match result {
            Err(err) => {
                assert!(must_fail, "{ctx}: insertion failed with room left: {err}");
                assert_eq!(
                    err.is_fixed_capacity(),
                    self.fixed.is_some(),
                    "{ctx}: error cause: {err}"
                );
                assert_eq!(err.is_index_space(), self.fixed.is_none(), "{ctx}: {err}");
                assert_eq!(err.limit(), Some(self.limit()), "{ctx}: error limit");
                return;
            }
            Ok(key) => key,
        };
        assert!(
            !must_fail,
            "{ctx}: insertion into a full table gave {key:?}"
        );
        assert!(
            !self.issued_set.contains(&key),
            "{ctx}: key {key:?} was issued twice"
        );
        assert!(
            (1..=K::MAX_GENERATION).contains(&key.generation()),
            "{ctx}: issued generation out of range: {key:?}"
        );
        assert_eq!(K::from_bits(key.to_bits()), Some(key), "{ctx}: key bits");
        let free = self.free();
        let can_grow = self.slots.len() < self.limit();
        let index = key.index();
        if index < self.slots.len() {
            let slot = self.slots[index];
            assert!(
                Self::is_free(&slot),
                "{ctx}: {key:?} reuses a slot that is not free: {slot:?}"
            );
            assert_eq!(
                key.generation(),
                slot.generation + 1,
                "{ctx}: a reused slot must get the next generation"
            );
            if let Reuse::Fifo { min_free } = self.reuse {
                assert!(
                    free > min_free as usize || !can_grow,
                    "{ctx}: FIFO reused a slot with only {free} free (min_free {min_free}) while the table can grow"
                );
            }
        } else {
            assert_eq!(index, self.slots.len(), "{ctx}: {key:?} skips slots");
            assert_eq!(
                key.generation(),
                1,
                "{ctx}: a new slot starts at generation 1"
            );
            assert!(can_grow, "{ctx}: appended past the slot limit");
            match self.reuse {
                Reuse::Lifo => assert_eq!(
                    free, 0,
                    "{ctx}: LIFO appended a slot although {free} were free"
                ),
                Reuse::Fifo { min_free } => assert!(
                    free <= min_free as usize,
                    "{ctx}: FIFO appended a slot although {free} > min_free {min_free} were free"
                ),
            }
            self.slots.push(SlotModel {
                generation: 0,
                occupied: false,
                detached: false,
            });
        }
        self.slots[index] = SlotModel {
            generation: key.generation(),
            occupied: true,
            detached: false,
        };
        self.issued.push(key);
        self.issued_set.insert(key);
        self.live.insert(key, value);
    }

    /// Records the removal of a live key.
    fn record_remove(&mut self, key: K) -> Option<u32> {
        let value = self.live.remove(&key)?;
        let slot = &mut self.slots[key.index()];
        assert!(slot.occupied && slot.generation == key.generation());
        slot.occupied = false;
        Some(value)
    }

    /// Records the detaching of a live key.
    fn record_detach(&mut self, key: K) -> Option<u32> {
        let value = self.record_remove(key)?;
        self.slots[key.index()].detached = true;
        self.detached.insert(key, value);
        Some(value)
    }

    /// Records the reattaching of a detached key with `value`.
    fn record_reattach(&mut self, key: K, value: u32) {
        assert!(self.detached.remove(&key).is_some());
        let slot = &mut self.slots[key.index()];
        assert!(slot.detached && !slot.occupied && slot.generation == key.generation());
        slot.detached = false;
        slot.occupied = true;
        self.live.insert(key, value);
    }

    fn remove_all(&mut self) {
        let keys: Vec<K> = self.live.keys().copied().collect();
        for key in keys {
            self.record_remove(key);
        }
    }

    /// Checks a table against the model: every issued key, the counts, the
    /// iterators and the table's own invariants.
    fn check(&self, table: &Table<K>, ctx: &Ctx<'_>) {
        table.check_invariants();
        assert_eq!(table.len(), self.live.len(), "{ctx}: len");
        assert_eq!(table.is_empty(), self.live.is_empty(), "{ctx}: is_empty");
        assert_eq!(
            table.retired_count(),
            self.retired(),
            "{ctx}: retired_count"
        );
        assert_eq!(table.reuse(), self.reuse, "{ctx}: reuse");
        assert!(table.capacity() >= table.len(), "{ctx}: capacity < len");
        if let Some(fixed) = self.fixed {
            assert_eq!(
                table.capacity(),
                fixed - self.retired() - self.detached.len(),
                "{ctx}: capacity of a fixed table"
            );
        }
        for &key in &self.issued {
            let expected = self.live.get(&key);
            assert_eq!(
                table.get(key).map(|v| **v),
                expected.copied(),
                "{ctx}: get({key:?})"
            );
            assert_eq!(
                table.contains_key(key),
                expected.is_some(),
                "{ctx}: contains_key({key:?})"
            );
            assert_eq!(
                table.is_detached(key),
                self.detached.contains_key(&key),
                "{ctx}: is_detached({key:?})"
            );
        }
        let iter = table.iter();
        assert_eq!(iter.len(), self.live.len(), "{ctx}: iter().len()");
        let mut last: Option<usize> = None;
        let mut count = 0;
        for (key, value) in iter {
            assert!(
                last.is_none_or(|last| last < key.index()),
                "{ctx}: iteration out of slot order at {key:?}"
            );
            last = Some(key.index());
            assert_eq!(
                self.live.get(&key),
                Some(&**value),
                "{ctx}: iter yielded {key:?}"
            );
            count += 1;
        }
        assert_eq!(count, self.live.len(), "{ctx}: iter count");
        assert!(
            table.keys().eq(table.iter().map(|(k, _)| k)),
            "{ctx}: keys() and iter() disagree"
        );
        assert!(
            table.values().eq(table.iter().map(|(_, v)| v)),
            "{ctx}: values() and iter() disagree"
        );
    }
}

/// Checks that `other` holds exactly what `model` says, besides the
/// structural checks of [`Model::check`].
fn check_copy<K: Key>(model: &Model<K>, table: &Table<K>, copy: &Table<K>, ctx: &Ctx<'_>) {
    copy.check_invariants();
    assert!(copy == table, "{ctx}: copy != original");
    assert_eq!(copy.len(), table.len(), "{ctx}: copy len");
    assert_eq!(
        copy.retired_count(),
        table.retired_count(),
        "{ctx}: copy retired"
    );
    assert_eq!(copy.reuse(), table.reuse(), "{ctx}: copy reuse");
    for &key in &model.issued {
        assert_eq!(
            copy.get(key).map(|v| **v),
            model.live.get(&key).copied(),
            "{ctx}: copy get({key:?})"
        );
        assert_eq!(
            copy.is_detached(key),
            model.detached.contains_key(&key),
            "{ctx}: copy is_detached({key:?})"
        );
    }
}

fn run<K>(input: &Input)
where
    K: Key + Serialize + DeserializeOwned,
{
    let (mut table, fixed, reuse) = table_from_setup::<K>(input.head.1);
    let mut model = Model::<K>::new(fixed, reuse);
    for (step, op) in input.ops.iter().enumerate() {
        let ctx = Ctx { step, op };
        apply(&mut table, &mut model, op, &ctx);
        model.check(&table, &ctx);
    }
    // Dropping the table drops the remaining boxes; LeakSanitizer checks
    // that nothing leaked.
}

fn apply<K>(table: &mut Table<K>, model: &mut Model<K>, op: &Op, ctx: &Ctx<'_>)
where
    K: Key + Serialize + DeserializeOwned,
{
    match *op {
        Op::Insert(value) => {
            // `insert` panics on a full table; only a fixed table can fill up
            // within a fuzz input.
            let result = if model.insert_must_fail() {
                table.try_insert(Box::new(value))
            } else {
                Ok(table.insert(Box::new(value)))
            };
            model.record_insert(result, value, ctx);
        }
        Op::TryInsert(value) => {
            let result = table.try_insert(Box::new(value));
            model.record_insert(result, value, ctx);
        }
        Op::InsertWithKey => {
            if model.insert_must_fail() {
                return;
            }
            let mut seen = None;
            let key = table.insert_with_key(|key| {
                seen = Some(key);
                Box::new(key.to_bits() as u32)
            });
            assert_eq!(seen, Some(key), "{ctx}: insert_with_key saw another key");
            model.record_insert(Ok(key), key.to_bits() as u32, ctx);
        }
        // A detached value leaves like a removed one, but its slot stays
        // reserved.
        Op::Remove(key) | Op::Detach(key) => {
            let Some(key) = model.resolve(key, ctx) else {
                return;
            };
            let detach = matches!(op, Op::Detach(_));
            let (got, expected) = if detach {
                (table.detach(key).map(|v| *v), model.record_detach(key))
            } else {
                (table.remove(key).map(|v| *v), model.record_remove(key))
            };
            assert_eq!(got, expected, "{ctx}: the value taken for {key:?}");
            if detach {
                assert!(table.detach(key).is_none(), "{ctx}: detached twice");
            }
        }
        Op::Get(key) => {
            let Some(key) = model.resolve(key, ctx) else {
                return;
            };
            let expected = model.live.get(&key).copied();
            assert_eq!(table.get(key).map(|v| **v), expected, "{ctx}: get({key:?})");
            if let Some(expected) = expected {
                assert_eq!(*table[key], expected, "{ctx}: index({key:?})");
            }
        }
        Op::GetMut(key, new) => {
            let Some(key) = model.resolve(key, ctx) else {
                return;
            };
            match (table.get_mut(key), model.live.get_mut(&key)) {
                (Some(value), Some(expected)) => {
                    assert_eq!(**value, *expected, "{ctx}: get_mut({key:?})");
                    **value = new;
                    *expected = new;
                }
                (None, None) => {}
                (got, expected) => {
                    panic!("{ctx}: get_mut({key:?}) = {got:?}, model has {expected:?}")
                }
            }
        }
        Op::ContainsKey(key) => {
            let Some(key) = model.resolve(key, ctx) else {
                return;
            };
            assert_eq!(
                table.contains_key(key),
                model.live.contains_key(&key),
                "{ctx}: contains_key({key:?})"
            );
        }
        Op::Clear => {
            table.clear();
            model.remove_all();
        }
        Op::Retain { modulus, rem, add } => {
            let modulus = u32::from(modulus) + 1;
            let rem = u32::from(rem);
            let mut visited = Vec::new();
            table.retain(|key, value| {
                visited.push((key, **value));
                let keep = **value % modulus != rem;
                if keep {
                    **value = value.wrapping_add(add);
                }
                keep
            });
            assert_eq!(visited.len(), model.live.len(), "{ctx}: retain visits");
            assert!(
                visited.windows(2).all(|w| w[0].0.index() < w[1].0.index()),
                "{ctx}: retain out of slot order"
            );
            for (key, value) in visited {
                assert_eq!(
                    model.live.get(&key),
                    Some(&value),
                    "{ctx}: retain visited {key:?}"
                );
                if value % modulus != rem {
                    model.live.insert(key, value.wrapping_add(add));
                } else {
                    model.record_remove(key);
                }
            }
        }
        Op::Drain { take } => {
            let mut drain = table.drain();
            assert_eq!(drain.len(), model.live.len(), "{ctx}: drain len");
            let mut last: Option<usize> = None;
            for _ in 0..take {
                let Some((key, value)) = drain.next() else {
                    break;
                };
                assert!(
                    last.is_none_or(|last| last < key.index()),
                    "{ctx}: drain out of slot order at {key:?}"
                );
                last = Some(key.index());
                assert_eq!(
                    model.record_remove(key),
                    Some(*value),
                    "{ctx}: drain yielded {key:?}"
                );
                assert_eq!(drain.len(), model.live.len(), "{ctx}: drain len");
            }
            drop(drain);
            model.remove_all();
        }
        Op::Clone { probe, adopt } => {
            let mut copy = table.clone();
            check_copy(model, table, &copy, ctx);
            if let Some(value) = probe {
                let in_copy = copy.try_insert(Box::new(value));
                let in_table = table.try_insert(Box::new(value));
                assert_eq!(
                    in_copy.as_ref().ok(),
                    in_table.as_ref().ok(),
                    "{ctx}: a clone must issue the same key as its original"
                );
                model.record_insert(in_table, value, ctx);
                check_copy(model, table, &copy, ctx);
            }
            if adopt {
                *table = copy;
            } else {
                // The owning iterator yields what the model holds, in slot order.
                let items: Vec<(K, u32)> = copy.into_iter().map(|(k, v)| (k, *v)).collect();
                assert_eq!(items.len(), model.live.len(), "{ctx}: into_iter len");
                for (key, value) in &items {
                    assert_eq!(model.live.get(key), Some(value), "{ctx}: into_iter");
                }
                assert!(
                    items.windows(2).all(|w| w[0].0.index() < w[1].0.index()),
                    "{ctx}: into_iter out of slot order"
                );
            }
        }
        Op::CloneFrom {
            target,
            junk,
            adopt,
        } => {
            let (mut copy, _, _) = table_from_setup::<K>(target);
            for n in 0..junk {
                if copy.try_insert(Box::new(u32::from(n))).is_err() {
                    break;
                }
            }
            let first = copy.keys().next();
            if let Some(first) = first {
                copy.remove(first);
            }
            copy.clone_from(table);
            check_copy(model, table, &copy, ctx);
            if adopt {
                *table = copy;
            }
        }
        Op::SerdeRoundTrip { adopt } => {
            let json = serde_json::to_string(&*table).expect("serialize table");
            let back: Table<K> = serde_json::from_str(&json)
                .unwrap_or_else(|err| panic!("{ctx}: deserialize {json}: {err}"));
            check_copy(model, table, &back, ctx);
            assert_eq!(
                serde_json::to_string(&back).expect("serialize table"),
                json,
                "{ctx}: a round trip changed the serialized form"
            );
            let keys_json = serde_json::to_string(&model.issued).expect("serialize keys");
            let keys: Vec<K> = serde_json::from_str(&keys_json)
                .unwrap_or_else(|err| panic!("{ctx}: deserialize keys {keys_json}: {err}"));
            assert_eq!(keys, model.issued, "{ctx}: key round trip");
            if adopt {
                *table = back;
                // A deserialized table is growable: it does not keep a
                // fixed capacity.
                model.fixed = None;
            }
        }
        Op::HostileSlots {
            reuse,
            ref slots,
            inserts,
        } => hostile_slots::<K>(reuse.get(), slots, inserts, ctx),
        Op::HostileJson(ref text) => {
            if let Ok(table) = serde_json::from_str::<IdTable<u32, K>>(text) {
                table.check_invariants();
                assert_eq!(table.iter().count(), table.len(), "{ctx}: hostile len");
                for (key, value) in &table {
                    assert_eq!(table.get(key), Some(value), "{ctx}: hostile get");
                }
            }
            if let Ok(key) = serde_json::from_str::<K>(text) {
                assert_eq!(K::from_bits(key.to_bits()), Some(key), "{ctx}: hostile key");
            }
        }
        Op::GetDisjointMut(a, b) => {
            let (Some(a), Some(b)) = (model.resolve(a, ctx), model.resolve(b, ctx)) else {
                return;
            };
            let expect = a != b && model.live.contains_key(&a) && model.live.contains_key(&b);
            match table.get_disjoint_mut([a, b]) {
                Some([x, y]) => {
                    assert!(expect, "{ctx}: get_disjoint_mut([{a:?}, {b:?}]) succeeded");
                    assert_eq!(Some(&**x), model.live.get(&a), "{ctx}: disjoint a");
                    assert_eq!(Some(&**y), model.live.get(&b), "{ctx}: disjoint b");
                    core::mem::swap(x, y);
                    **x = x.wrapping_add(1);
                    let (va, vb) = (model.live[&a], model.live[&b]);
                    model.live.insert(a, vb.wrapping_add(1));
                    model.live.insert(b, va);
                }
                None => assert!(!expect, "{ctx}: get_disjoint_mut([{a:?}, {b:?}]) failed"),
            }
        }
        Op::SetReuse(reuse) => {
            table.set_reuse(reuse.get());
            model.reuse = reuse.get();
        }
        Op::TryReserve(n) => {
            let n = usize::from(n);
            let growable = model.limit() - model.slots.len();
            let expect_ok = n.saturating_sub(model.free()) <= growable;
            match table.try_reserve(n) {
                Ok(()) => {
                    assert!(expect_ok, "{ctx}: try_reserve({n}) succeeded");
                    assert!(
                        table.capacity() >= table.len() + n,
                        "{ctx}: try_reserve({n}) left capacity {} for len {}",
                        table.capacity(),
                        table.len()
                    );
                }
                Err(err) => {
                    assert!(!expect_ok, "{ctx}: try_reserve({n}) failed: {err}");
                    assert!(
                        err.is_fixed_capacity() || err.is_index_space(),
                        "{ctx}: {err}"
                    );
                }
            }
        }
        Op::TryInsertWithKey { fail } => {
            // A full table panics before calling the closure.
            if model.insert_must_fail() {
                return;
            }
            let make = |key: K| Box::new(key.to_bits() as u32);
            match try_insert_with_key(|f| table.try_insert_with_key(f), fail, make) {
                Ok(key) => model.record_insert(Ok(key), key.to_bits() as u32, ctx),
                Err(key) => assert!(!table.contains_key(key), "{ctx}: Err inserted {key:?}"),
            }
        }
        Op::Reattach(n, value) => {
            let Some(key) = nth_sorted(model.detached.keys().copied(), n) else {
                return;
            };
            table.reattach(key, Box::new(value));
            model.record_reattach(key, value);
        }
        Op::Walk { ends } => {
            let mut expected: Vec<(K, u32)> = model.live.iter().map(|(&k, &v)| (k, v)).collect();
            expected.sort_by_key(|&(k, _)| k.index());
            let walked = walk_both_ends(table.iter().map(|(k, v)| (k, **v)), ends);
            assert_eq!(walked, expected, "{ctx}: iter() from both ends");
            // The same slots, holes and generations with 12-byte values
            // (see `Wide`).
            let wide: IdTable<Wide, K> = common::reload(&*table);
            let walked = walk_both_ends(wide.iter().map(|(k, v)| (k, v.0[0])), ends);
            assert_eq!(walked, expected, "{ctx}: iter() over 12-byte values");
            let bumped = walk_both_ends(
                table.iter_mut().map(|(k, v)| {
                    **v = v.wrapping_add(1);
                    (k, **v)
                }),
                ends.rotate_left(7),
            );
            for (key, value) in model.live.iter_mut() {
                *value = value.wrapping_add(1);
                assert!(
                    bumped.contains(&(*key, *value)),
                    "{ctx}: iter_mut() missed {key:?}"
                );
            }
            assert_eq!(bumped.len(), expected.len(), "{ctx}: iter_mut() count");
        }
        Op::ShrinkToFit => {
            let fixed_capacity = table.capacity();
            table.shrink_to_fit();
            if model.fixed.is_some() {
                assert_eq!(
                    table.capacity(),
                    fixed_capacity,
                    "{ctx}: fixed table shrank"
                );
            }
        }
    }
}

/// Deserializes a table from well-formed JSON with arbitrary slot contents
/// and checks that it is accepted exactly when every slot is valid, and that
/// it then behaves.
fn hostile_slots<K>(reuse: Reuse, slots: &[(u32, Option<u32>)], inserts: u8, ctx: &Ctx<'_>)
where
    K: Key + Serialize + DeserializeOwned,
{
    let json = serde_json::json!({ "reuse": reuse, "slots": slots });
    let result = serde_json::from_value::<Table<K>>(json.clone());
    let valid = slots.len() <= max_slots::<K>()
        && slots.iter().all(|&(generation, value)| {
            generation <= K::MAX_GENERATION && (value.is_none() || generation >= 1)
        });
    let mut table = match result {
        Ok(table) => {
            assert!(valid, "{ctx}: accepted invalid table {json}");
            table
        }
        Err(err) => {
            assert!(!valid, "{ctx}: rejected valid table {json}: {err}");
            return;
        }
    };
    let mut model = Model::<K>::new(None, reuse);
    for (index, &(generation, value)) in slots.iter().enumerate() {
        model.slots.push(SlotModel {
            generation,
            occupied: value.is_some(),
            detached: false,
        });
        if let Some(value) = value {
            let key = K::from_parts(index, generation).expect("valid slot");
            model.live.insert(key, value);
            model.issued.push(key);
            model.issued_set.insert(key);
        } else if generation >= 1 {
            // The key of the last occupant must stay stale.
            let key = K::from_parts(index, generation).expect("valid slot");
            model.issued.push(key);
            model.issued_set.insert(key);
        }
    }
    model.check(&table, ctx);
    for n in 0..inserts % 8 {
        let value = u32::from(n);
        let result = table.try_insert(Box::new(value));
        model.record_insert(result, value, ctx);
        model.check(&table, ctx);
    }
}
