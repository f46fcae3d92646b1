//! Differential fuzzing of `SecondaryMap` and `SparseSecondaryMap` against a
//! model, driven by a real primary `IdTable` whose slots are removed and
//! reused, so the maps see live, stale and newer keys.
//!
//! The model keeps at most one value per slot index, with its key, and the
//! newest generation ever inserted per index: a key older than that is
//! stale (insert does nothing, `entry` is `None`). Both maps must agree with
//! it after every operation, for every key the primary ever issued, and
//! their invariants must hold. Any divergence panics.

#![no_main]

mod common;

use std::collections::HashMap;

use arbitrary::Arbitrary;
use common::{Input, Narrow};
use handlekit::{Id, Id32, IdTable, Key, SecondaryMap, SparseSecondaryMap};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Clone, Copy, Debug)]
enum Op {
    PrimaryInsert,
    PrimaryRemove(u16),
    Insert(u16, u32),
    Remove(u16),
    Get(u16),
    Entry(u16, u32),
    Retain(u8),
    Clear,
    Drain(u8),
    Clone,
    Serde,
}

struct Model<K: Key> {
    /// Slot index → (key, value).
    slots: HashMap<usize, (K, u32)>,
    /// Slot index → newest generation ever inserted.
    newest: HashMap<usize, u32>,
}

impl<K: Key> Model<K> {
    fn new() -> Self {
        Model {
            slots: HashMap::new(),
            newest: HashMap::new(),
        }
    }

    fn stale(&self, key: K) -> bool {
        key.generation() < self.newest.get(&key.index()).copied().unwrap_or(0)
    }

    fn get(&self, key: K) -> Option<u32> {
        self.slots
            .get(&key.index())
            .filter(|(k, _)| *k == key)
            .map(|&(_, v)| v)
    }

    fn insert(&mut self, key: K, value: u32) -> Option<u32> {
        if self.stale(key) {
            return None;
        }
        self.newest.insert(key.index(), key.generation());
        match self.slots.insert(key.index(), (key, value)) {
            Some((old_key, old)) if old_key == key => Some(old),
            _ => None,
        }
    }

    fn remove(&mut self, key: K) -> Option<u32> {
        let value = self.get(key)?;
        self.slots.remove(&key.index());
        Some(value)
    }
}

/// What the fuzzer needs of both maps.
trait Map<K: Key>: Default + Clone {
    fn insert(&mut self, key: K, value: u32) -> Option<u32>;
    fn remove(&mut self, key: K) -> Option<u32>;
    fn get(&self, key: K) -> Option<u32>;
    fn entry_or_insert(&mut self, key: K, value: u32) -> Option<u32>;
    fn retain_mod(&mut self, modulus: u32);
    fn clear(&mut self);
    fn drain_count(&mut self, n: usize) -> usize;
    fn len(&self) -> usize;
    fn check(&self);
    fn serde(&self) -> Self;
}

macro_rules! impl_map {
    ($map:ident) => {
        impl<K: Key + serde::Serialize + serde::de::DeserializeOwned> Map<K> for $map<K, u32> {
            fn insert(&mut self, key: K, value: u32) -> Option<u32> {
                $map::insert(self, key, value)
            }
            fn remove(&mut self, key: K) -> Option<u32> {
                $map::remove(self, key)
            }
            fn get(&self, key: K) -> Option<u32> {
                $map::get(self, key).copied()
            }
            fn entry_or_insert(&mut self, key: K, value: u32) -> Option<u32> {
                self.entry(key).map(|entry| *entry.or_insert(value))
            }
            fn retain_mod(&mut self, modulus: u32) {
                self.retain(|_, v| *v % modulus != 0);
            }
            fn clear(&mut self) {
                $map::clear(self);
            }
            fn drain_count(&mut self, n: usize) -> usize {
                self.drain().take(n).count()
            }
            fn len(&self) -> usize {
                $map::len(self)
            }
            fn check(&self) {
                self.check_invariants();
            }
            fn serde(&self) -> Self {
                let json = serde_json::to_string(self).expect("serializes");
                serde_json::from_str(&json).expect("round trip")
            }
        }
    };
}

impl_map!(SecondaryMap);
impl_map!(SparseSecondaryMap);

fn run<K: Key, M: Map<K>>(ops: &[Op]) {
    let mut primary: IdTable<(), K> = IdTable::default();
    let mut issued: Vec<K> = Vec::new();
    let mut map = M::default();
    let mut model = Model::<K>::new();
    let pick = |issued: &Vec<K>, i: u16| -> Option<K> {
        (!issued.is_empty()).then(|| issued[usize::from(i) % issued.len()])
    };
    for &op in ops {
        match op {
            Op::PrimaryInsert => {
                if let Ok(key) = primary.try_insert(()) {
                    issued.push(key);
                }
            }
            Op::PrimaryRemove(i) => {
                if let Some(key) = pick(&issued, i) {
                    primary.remove(key);
                }
            }
            Op::Insert(i, v) => {
                if let Some(key) = pick(&issued, i) {
                    assert_eq!(map.insert(key, v), model.insert(key, v), "insert {key:?}");
                }
            }
            Op::Remove(i) => {
                if let Some(key) = pick(&issued, i) {
                    assert_eq!(map.remove(key), model.remove(key));
                }
            }
            Op::Get(i) => {
                if let Some(key) = pick(&issued, i) {
                    assert_eq!(map.get(key), model.get(key));
                }
            }
            Op::Entry(i, v) => {
                if let Some(key) = pick(&issued, i) {
                    let expected = if model.stale(key) {
                        None
                    } else {
                        Some(match model.get(key) {
                            Some(old) => old,
                            None => {
                                model.insert(key, v);
                                v
                            }
                        })
                    };
                    assert_eq!(map.entry_or_insert(key, v), expected, "entry {key:?}");
                }
            }
            Op::Retain(m) => {
                let modulus = u32::from(m % 7) + 1;
                map.retain_mod(modulus);
                model.slots.retain(|_, entry| entry.1 % modulus != 0);
            }
            Op::Clear => {
                map.clear();
                model.slots.clear();
            }
            Op::Drain(n) => {
                let n = usize::from(n);
                let expected = n.min(model.slots.len());
                assert_eq!(map.drain_count(n), expected);
                model.slots.clear();
            }
            Op::Clone => map = map.clone(),
            Op::Serde => map = map.serde(),
        }
        map.check();
        assert_eq!(map.len(), model.slots.len());
        for &key in &issued {
            assert_eq!(map.get(key), model.get(key), "get {key:?}");
        }
    }
}

fuzz_target!(|input: Input<u8, Op>| {
    let sparse = input.head & 4 != 0;
    match (input.head % 3, sparse) {
        (0, false) => run::<Id, SecondaryMap<Id, u32>>(&input.ops),
        (1, false) => run::<Id32, SecondaryMap<Id32, u32>>(&input.ops),
        (_, false) => run::<Narrow, SecondaryMap<Narrow, u32>>(&input.ops),
        (0, true) => run::<Id, SparseSecondaryMap<Id, u32>>(&input.ops),
        (1, true) => run::<Id32, SparseSecondaryMap<Id32, u32>>(&input.ops),
        (_, true) => run::<Narrow, SparseSecondaryMap<Narrow, u32>>(&input.ops),
    }
});
