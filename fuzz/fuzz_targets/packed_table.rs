//! Differential fuzzing of `PackedTable` against a model: a `HashMap` from
//! key to value plus a `Vec` of keys in dense order (swap-remove, ordered
//! retain and sorting are all predicted exactly).
//!
//! The first input byte picks the key type (`Id`, `Id32`, or `Narrow` with 4
//! generation bits, whose slots retire after 15 occupants). After every
//! operation every key ever issued is checked against the model, the dense
//! order is compared, and `check_invariants` runs. Any divergence panics.
//! Detached keys (`detach` / `reattach`) are kept beside the model: they
//! resolve to nothing, their slot is never issued again, and they stay
//! detached through `clear`, clones and serde round trips.
//! Values are boxed so sanitizers see double drops and leaks.

#![no_main]

mod common;
mod walk;

use std::collections::{HashMap, HashSet};

use arbitrary::Arbitrary;
use common::{nth_sorted, try_insert_with_key, Input, Narrow};
use handlekit::{Id, Id32, Key, PackedTable, Reuse};
use libfuzzer_sys::fuzz_target;
use walk::walk_both_ends;

type Value = Box<u32>;

#[derive(Arbitrary, Clone, Copy, Debug)]
enum KeyRef {
    /// An issued key (index into the list of all issued keys).
    Issued(u16),
    /// Any bits, through `Key::from_bits`.
    Forged(u64),
}

#[derive(Arbitrary, Clone, Debug)]
enum Op {
    Insert(u32),
    Remove(KeyRef),
    Get(KeyRef),
    GetMut(KeyRef, u32),
    Retain {
        modulus: u8,
        rem: u8,
    },
    DrainSome(u8),
    Clear,
    Clone,
    CloneFrom,
    Serde,
    SortByValue,
    SortUnstableDescending,
    SortByKeyMod(u8),
    Swap(u16, u16),
    Disjoint(KeyRef, KeyRef),
    SetReuse(Option<u8>),
    /// `try_insert_with_key`, whose closure fails when the flag is set.
    TryInsertWithKey(u32, bool),
    Detach(KeyRef),
    /// Reattach one of the detached keys (index into them, sorted).
    Reattach(u16, u32),
    /// Add to every value through `as_mut_slices`.
    MutSlices(u32),
    /// Walk `iter()` from both ends in the order `ends` picks (a `fold`
    /// takes the rest where it says), then add to every value the same way
    /// through `iter_mut()`.
    Walk(u64, u32),
}

struct Model<K: Key> {
    values: HashMap<K, u32>,
    order: Vec<K>,
    issued: Vec<K>,
    /// Detached keys, with the values taken out under them.
    detached: HashMap<K, u32>,
}

impl<K: Key> Model<K> {
    fn resolve(&self, key: KeyRef) -> Option<K> {
        match key {
            KeyRef::Issued(i) if !self.issued.is_empty() => {
                Some(self.issued[usize::from(i) % self.issued.len()])
            }
            KeyRef::Issued(_) => None,
            KeyRef::Forged(bits) => K::from_bits(bits),
        }
    }

    fn remove(&mut self, key: K) -> Option<u32> {
        let value = self.values.remove(&key)?;
        let position = self.order.iter().position(|&k| k == key).expect("ordered");
        self.order.swap_remove(position);
        Some(value)
    }

    /// A stable sort of the dense order by a key of the value.
    fn sort_by(&mut self, mut key_of: impl FnMut(u32) -> u64) {
        let values = &self.values;
        self.order.sort_by_key(|k| key_of(values[k]));
    }
}

fn check<K: Key>(table: &PackedTable<Value, K>, model: &Model<K>) {
    table.check_invariants();
    assert_eq!(table.len(), model.values.len());
    assert_eq!(table.key_slice(), model.order.as_slice(), "dense order");
    for (position, key) in model.order.iter().enumerate() {
        assert_eq!(
            **table.as_slice().get(position).expect("value"),
            model.values[key]
        );
    }
    for &key in &model.issued {
        assert_eq!(table.get(key).map(|v| **v), model.values.get(&key).copied());
        assert_eq!(table.contains_key(key), model.values.contains_key(&key));
        assert_eq!(table.is_detached(key), model.detached.contains_key(&key));
    }
}

/// Runs `ops` on a default table, or on one of this fixed capacity (mod 64).
fn run<K: Key>(fixed: Option<u8>, ops: &[Op]) {
    let mut table: PackedTable<Value, K> = match fixed {
        Some(n) => PackedTable::with_fixed_capacity(usize::from(n % 64)),
        None => PackedTable::default(),
    };
    let mut model = Model::<K> {
        values: HashMap::new(),
        order: Vec::new(),
        issued: Vec::new(),
        detached: HashMap::new(),
    };
    let mut seen = HashSet::new();
    for op in ops {
        match op.clone() {
            Op::Insert(v) => {
                if let Ok(key) = table.try_insert(Box::new(v)) {
                    assert!(seen.insert(key), "key {key:?} issued twice");
                    assert!(
                        model.detached.keys().all(|d| d.index() != key.index()),
                        "{key:?} issued in a detached slot"
                    );
                    model.issued.push(key);
                    model.values.insert(key, v);
                    model.order.push(key);
                }
            }
            Op::Remove(k) => {
                if let Some(key) = model.resolve(k) {
                    assert_eq!(table.remove(key).map(|v| *v), model.remove(key));
                }
            }
            Op::Get(k) => {
                if let Some(key) = model.resolve(k) {
                    assert_eq!(table.get(key).map(|v| **v), model.values.get(&key).copied());
                    assert_eq!(
                        table.position(key),
                        model.order.iter().position(|&o| o == key)
                    );
                }
            }
            Op::GetMut(k, v) => {
                if let Some(key) = model.resolve(k) {
                    if let Some(slot) = table.get_mut(key) {
                        **slot = v;
                        model.values.insert(key, v);
                    } else {
                        assert!(!model.values.contains_key(&key));
                    }
                }
            }
            Op::Retain { modulus, rem } => {
                let modulus = u32::from(modulus) + 1;
                let rem = u32::from(rem);
                table.retain(|_, v| **v % modulus != rem);
                model.order.retain(|k| model.values[k] % modulus != rem);
                model.values.retain(|_, v| *v % modulus != rem);
            }
            Op::DrainSome(n) => {
                let taken: Vec<(K, u32)> = table
                    .drain()
                    .take(usize::from(n))
                    .map(|(k, v)| (k, *v))
                    .collect();
                let expected: Vec<(K, u32)> = model
                    .order
                    .iter()
                    .take(usize::from(n))
                    .map(|k| (*k, model.values[k]))
                    .collect();
                assert_eq!(taken, expected);
                model.values.clear();
                model.order.clear();
            }
            Op::Clear => {
                table.clear();
                model.values.clear();
                model.order.clear();
            }
            Op::Clone => table = table.clone(),
            Op::CloneFrom => {
                let mut target = PackedTable::default();
                target.clone_from(&table);
                table = target;
            }
            Op::Serde => {
                let json = serde_json::to_string(&table).expect("serializes");
                table = serde_json::from_str(&json).expect("round trip");
            }
            Op::SortByValue => {
                table.sort_by(|a, b| a.cmp(b));
                model.sort_by(u64::from);
            }
            Op::SortUnstableDescending => {
                table.sort_unstable_by(|a, b| b.cmp(a));
                // Unstable: equal values may land in any order, so follow
                // the table, after checking it is sorted descending.
                assert!(table.as_slice().windows(2).all(|w| w[0] >= w[1]));
                model.order = table.key_slice().to_vec();
            }
            Op::SortByKeyMod(m) => {
                let m = u32::from(m) + 1;
                table.sort_by_key(|v| **v % m);
                model.sort_by(|v| u64::from(v % m));
            }
            Op::Swap(a, b) => {
                let len = model.order.len();
                if len > 0 {
                    let (a, b) = (usize::from(a) % len, usize::from(b) % len);
                    table.swap_positions(a, b);
                    model.order.swap(a, b);
                }
            }
            Op::Disjoint(a, b) => {
                if let (Some(a), Some(b)) = (model.resolve(a), model.resolve(b)) {
                    let live = model.values.contains_key(&a) && model.values.contains_key(&b);
                    let got = table.get_disjoint_mut([a, b]);
                    assert_eq!(got.is_some(), live && a != b);
                }
            }
            Op::SetReuse(policy) => table.set_reuse(match policy {
                None => Reuse::Lifo,
                Some(n) => Reuse::Fifo {
                    min_free: u32::from(n % 16),
                },
            }),
            Op::TryInsertWithKey(v, fail) => {
                // A full table panics before calling the closure; only a
                // fixed table fills up within a fuzz input.
                if fixed.is_some() && table.len() >= table.capacity() {
                    continue;
                }
                match try_insert_with_key(|f| table.try_insert_with_key(f), fail, |_| Box::new(v)) {
                    Ok(key) => {
                        assert!(seen.insert(key), "key {key:?} issued twice");
                        assert!(model.detached.keys().all(|d| d.index() != key.index()));
                        model.issued.push(key);
                        model.values.insert(key, v);
                        model.order.push(key);
                    }
                    Err(key) => assert!(!table.contains_key(key), "Err inserted {key:?}"),
                }
            }
            Op::Detach(k) => {
                if let Some(key) = model.resolve(k) {
                    let got = table.detach(key).map(|v| *v);
                    let expected = model.remove(key);
                    assert_eq!(got, expected);
                    if let Some(value) = expected {
                        model.detached.insert(key, value);
                    }
                    assert!(table.detach(key).is_none(), "detached twice");
                }
            }
            Op::Reattach(n, v) => {
                if let Some(key) = nth_sorted(model.detached.keys().copied(), n) {
                    table.reattach(key, Box::new(v));
                    model.detached.remove(&key);
                    model.values.insert(key, v);
                    model.order.push(key);
                }
            }
            Op::Walk(ends, add) => {
                let expected: Vec<(K, u32)> = model
                    .order
                    .iter()
                    .map(|&key| (key, model.values[&key]))
                    .collect();
                let walked = walk_both_ends(table.iter().map(|(k, v)| (k, **v)), ends);
                assert_eq!(walked, expected, "iter from both ends, order {ends:#x}");
                let bumped = walk_both_ends(
                    table.iter_mut().map(|(k, v)| {
                        **v = v.wrapping_add(add);
                        k
                    }),
                    ends.rotate_left(17),
                );
                assert_eq!(bumped, model.order, "iter_mut from both ends");
                for value in model.values.values_mut() {
                    *value = value.wrapping_add(add);
                }
            }
            Op::MutSlices(add) => {
                let (keys, values) = table.as_mut_slices();
                assert_eq!(keys, model.order.as_slice());
                for (key, value) in keys.iter().zip(values) {
                    **value = value.wrapping_add(add);
                    let expected = model.values.get_mut(key).expect("live");
                    *expected = expected.wrapping_add(add);
                }
            }
        }
        check(&table, &model);
    }
}

fuzz_target!(|input: Input<(u8, Option<u8>), Op>| {
    let (key, fixed) = input.head;
    common::run_with_type_picked!(key, [Id, Id32, Narrow], run(fixed, &input.ops));
});
