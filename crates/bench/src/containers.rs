//! One trait over every container the runner compares, so each workload is
//! written once and runs the same code on all of them.

use handlekit::Key as _;
use handlekit::{Hive, Id, Id32, IdTable, LookupTable, PackedTable, Pool, PoolKey};
use std::borrow::{Borrow, BorrowMut};
use std::collections::{BTreeMap, HashMap};

/// A value type the workloads store: `u64`, or a 64-byte block.
pub trait Value: Copy + 'static {
    /// Name in reports.
    const NAME: &'static str;
    /// A value made from a counter.
    fn make(n: u64) -> Self;
    /// What iteration sums.
    fn weight(&self) -> u64;
}

impl Value for u64 {
    const NAME: &'static str = "u64";
    #[inline(always)]
    fn make(n: u64) -> Self {
        n
    }
    #[inline(always)]
    fn weight(&self) -> u64 {
        *self
    }
}

/// A 64-byte value, the size of a cache line.
#[derive(Clone, Copy)]
pub struct Blob64([u64; 8]);

impl Value for Blob64 {
    const NAME: &'static str = "64B";
    #[inline(always)]
    fn make(n: u64) -> Self {
        Blob64([n; 8])
    }
    #[inline(always)]
    fn weight(&self) -> u64 {
        self.0[0]
    }
}

/// Which family a container belongs to, for ratios and goals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// One of ours.
    Handlekit,
    /// A generational peer (detects stale keys).
    Generational,
    /// A peer without generations (slab): a lower bound on bookkeeping.
    Plain,
    /// The seed's "STL method": a map from a counter ID.
    Map,
    /// `Vec<T>` with plain indices: the physical bound.
    Bound,
    /// A secondary map, ours or a peer's: compared with each other only
    /// (by their own goals), never in the tables' ratios.
    Secondary,
}

/// A container as the workloads see it.
///
/// Every implementation forces its methods inline: the trait is plumbing,
/// and the workloads should see what a direct call to the container's own
/// method compiles to. Left to `#[inline]`, LLVM kept a call to the wrapper
/// for some containers and not for others, which measured the wrapper. The
/// five passes return the container's own iterators (a peer without
/// `values` or `keys` gets the `map` over `iter` its users write), so a
/// `for` loop over them calls the container's own `next()`.
pub trait Container<V: Value> {
    /// The handle type.
    type Key: Copy;
    /// Name in reports.
    const NAME: &'static str;
    /// Family, for ratios.
    const FAMILY: Family;
    /// `false` for containers that cannot remove (plain `Vec`).
    const CAN_REMOVE: bool = true;
    /// Whether the container takes part only in insert, remove and get
    /// (the secondary maps: attaching values to the keys of a primary
    /// table, in the order it issued them, looking them up, and detaching
    /// them in random order).
    const KEYED_OPS_ONLY: bool = false;

    fn new() -> Self;
    fn insert(&mut self, value: V) -> Self::Key;
    fn get(&self, key: Self::Key) -> Option<&V>;
    fn remove(&mut self, key: Self::Key) -> Option<V>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// A number taken from a key, which a pass adds up so that its keys
    /// are made.
    fn key_bits(key: Self::Key) -> u64;
    /// `(key, &value)` of every live value: `table.iter()`.
    fn iter(&self) -> impl Iterator<Item = (Self::Key, &V)>;
    /// `(key, &mut value)` of every live value: `table.iter_mut()`.
    fn iter_mut(&mut self) -> impl Iterator<Item = (Self::Key, &mut V)>;
    /// Every live value: `table.values()`.
    fn values(&self) -> impl Iterator<Item = &V>;
    /// Every live value, mutably: `table.values_mut()`.
    fn values_mut(&mut self) -> impl Iterator<Item = &mut V>;
    /// Every live key: `table.keys()`.
    fn keys(&self) -> impl Iterator<Item = Self::Key>;

    /// Sum of the weights of all live values, through `values().fold`.
    #[inline(always)]
    fn sum(&self) -> u64 {
        self.values().fold(0, |acc, v| acc.wrapping_add(v.weight()))
    }
    /// The same sum over `iter().fold`, with [`key_bits`](Self::key_bits)
    /// of each key added in.
    #[inline(always)]
    fn keyed_sum(&self) -> u64 {
        self.iter().fold(0, |acc, (k, v)| {
            acc.wrapping_add(v.weight()).wrapping_add(Self::key_bits(k))
        })
    }
}

/// A handlekit container with the key-table API (`default`, `insert`,
/// `get`, `remove`, `len` and the five passes).
macro_rules! keyed {
    ($ty:ident, $name:literal, $key:ty) => {
        impl<V: Value> Container<V> for $ty<V, $key> {
            type Key = $key;
            const NAME: &'static str = $name;
            const FAMILY: Family = Family::Handlekit;
            fn new() -> Self {
                $ty::default()
            }
            #[inline(always)]
            fn insert(&mut self, value: V) -> $key {
                $ty::insert(self, value)
            }
            #[inline(always)]
            fn get(&self, key: $key) -> Option<&V> {
                $ty::get(self, key)
            }
            #[inline(always)]
            fn remove(&mut self, key: $key) -> Option<V> {
                $ty::remove(self, key)
            }
            fn len(&self) -> usize {
                $ty::len(self)
            }
            #[inline(always)]
            fn key_bits(key: $key) -> u64 {
                key.to_bits()
            }
            #[inline(always)]
            fn iter(&self) -> impl Iterator<Item = ($key, &V)> {
                $ty::iter(self)
            }
            #[inline(always)]
            fn iter_mut(&mut self) -> impl Iterator<Item = ($key, &mut V)> {
                $ty::iter_mut(self)
            }
            #[inline(always)]
            fn values(&self) -> impl Iterator<Item = &V> {
                $ty::values(self)
            }
            #[inline(always)]
            fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
                $ty::values_mut(self)
            }
            #[inline(always)]
            fn keys(&self) -> impl Iterator<Item = $key> {
                $ty::keys(self)
            }
        }
    };
}

keyed!(IdTable, "IdTable<Id>", Id);
keyed!(IdTable, "IdTable<Id32>", Id32);
keyed!(LookupTable, "LookupTable", Id);
keyed!(PackedTable, "PackedTable", Id);
keyed!(Pool, "Pool", PoolKey);
keyed!(Hive, "Hive", Id);

macro_rules! slotmap_like {
    ($name:literal, $ty:ident) => {
        impl<V: Value> Container<V> for slotmap::$ty<slotmap::DefaultKey, V> {
            type Key = slotmap::DefaultKey;
            const NAME: &'static str = $name;
            const FAMILY: Family = Family::Generational;
            fn new() -> Self {
                slotmap::$ty::new()
            }
            #[inline(always)]
            fn insert(&mut self, value: V) -> Self::Key {
                slotmap::$ty::insert(self, value)
            }
            #[inline(always)]
            fn get(&self, key: Self::Key) -> Option<&V> {
                slotmap::$ty::get(self, key)
            }
            #[inline(always)]
            fn remove(&mut self, key: Self::Key) -> Option<V> {
                slotmap::$ty::remove(self, key)
            }
            fn len(&self) -> usize {
                slotmap::$ty::len(self)
            }
            #[inline(always)]
            fn key_bits(key: Self::Key) -> u64 {
                use slotmap::Key as _;
                key.data().as_ffi()
            }
            #[inline(always)]
            fn iter(&self) -> impl Iterator<Item = (Self::Key, &V)> {
                slotmap::$ty::iter(self)
            }
            #[inline(always)]
            fn iter_mut(&mut self) -> impl Iterator<Item = (Self::Key, &mut V)> {
                slotmap::$ty::iter_mut(self)
            }
            #[inline(always)]
            fn values(&self) -> impl Iterator<Item = &V> {
                slotmap::$ty::values(self)
            }
            #[inline(always)]
            fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
                slotmap::$ty::values_mut(self)
            }
            #[inline(always)]
            fn keys(&self) -> impl Iterator<Item = Self::Key> {
                slotmap::$ty::keys(self)
            }
        }
    };
}

slotmap_like!("SlotMap", SlotMap);
slotmap_like!("HopSlotMap", HopSlotMap);
slotmap_like!("DenseSlotMap", DenseSlotMap);

/// Peers whose API is `insert`, `get`, a removal method, and `iter()` /
/// `iter_mut()` over `(key, value)` without `values` or `keys`: their users
/// write `iter().map(..)`, and so do these passes.
macro_rules! arena_like {
    ($ty:ty, $key:ty, $name:literal, $family:expr, $remove:ident, |$k:ident| $bits:expr) => {
        impl<V: Value> Container<V> for $ty {
            type Key = $key;
            const NAME: &'static str = $name;
            const FAMILY: Family = $family;
            fn new() -> Self {
                <$ty>::new()
            }
            #[inline(always)]
            fn insert(&mut self, value: V) -> $key {
                <$ty>::insert(self, value)
            }
            #[inline(always)]
            fn get(&self, key: $key) -> Option<&V> {
                <$ty>::get(self, key)
            }
            #[inline(always)]
            fn remove(&mut self, key: $key) -> Option<V> {
                <$ty>::$remove(self, key)
            }
            fn len(&self) -> usize {
                <$ty>::len(self)
            }
            #[inline(always)]
            fn key_bits($k: $key) -> u64 {
                $bits
            }
            #[inline(always)]
            fn iter(&self) -> impl Iterator<Item = ($key, &V)> {
                <$ty>::iter(self)
            }
            #[inline(always)]
            fn iter_mut(&mut self) -> impl Iterator<Item = ($key, &mut V)> {
                <$ty>::iter_mut(self)
            }
            #[inline(always)]
            fn values(&self) -> impl Iterator<Item = &V> {
                <$ty>::iter(self).map(|(_, v)| v)
            }
            #[inline(always)]
            fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
                <$ty>::iter_mut(self).map(|(_, v)| v)
            }
            #[inline(always)]
            fn keys(&self) -> impl Iterator<Item = $key> {
                <$ty>::iter(self).map(|(k, _)| k)
            }
        }
    };
}

arena_like!(
    thunderdome::Arena<V>,
    thunderdome::Index,
    "thunderdome",
    Family::Generational,
    remove,
    |k| k.to_bits()
);
arena_like!(
    generational_arena::Arena<V>,
    generational_arena::Index,
    "generational-arena",
    Family::Generational,
    remove,
    |k| k.into_raw_parts().0 as u64
);
arena_like!(
    pulz_arena::Arena<V>,
    pulz_arena::Index,
    "pulz-arena",
    Family::Generational,
    remove,
    |k| u64::from(k.offset()) | u64::from(k.generation().get()) << 32
);
// slab has no generations: `try_remove` of a reused slot removes the new value.
arena_like!(
    slab::Slab<V>,
    usize,
    "slab",
    Family::Plain,
    try_remove,
    |k| k as u64
);

/// A std map from a counter ID: the seed's "STL method", objects boxed on
/// the heap in an ordered map ([`BTreeIds`]), and a `HashMap` holding its
/// values in place ([`HashIds`]).
pub struct CounterIds<M> {
    next_id: u32,
    map: M,
}

/// The seed's "STL method": objects boxed on the heap, found through an
/// ordered map from a counter ID.
pub type BTreeIds<V> = CounterIds<BTreeMap<u32, Box<V>>>;
/// A `HashMap` (std's default hasher) from a counter ID.
pub type HashIds<V> = CounterIds<HashMap<u32, V>>;

/// Taking a value back out of a map's slot: a `Box<V>`, or `V` itself.
/// (Putting it in is `From<V>`, reading it `BorrowMut<V>`.)
pub trait IntoValue<V> {
    fn into_value(self) -> V;
}

impl<V> IntoValue<V> for V {
    #[inline(always)]
    fn into_value(self) -> V {
        self
    }
}

impl<V> IntoValue<V> for Box<V> {
    #[inline(always)]
    fn into_value(self) -> V {
        *self
    }
}

/// The two std maps share their method names but no trait, so their
/// `Container` impl is written once here; the slot (`Box<V>` or `V`) is
/// reached through `From`, `Borrow` and [`IntoValue`], each the identity
/// for `V`, so the `HashMap` runs its own methods and nothing else.
macro_rules! counter_ids {
    ($map:ident, $slot:ty, $name:literal) => {
        impl<V: Value> Container<V> for CounterIds<$map<u32, $slot>> {
            type Key = u32;
            const NAME: &'static str = $name;
            const FAMILY: Family = Family::Map;
            fn new() -> Self {
                CounterIds {
                    next_id: 0,
                    map: $map::new(),
                }
            }
            #[inline(always)]
            fn insert(&mut self, value: V) -> u32 {
                let id = self.next_id;
                self.next_id = self.next_id.wrapping_add(1);
                self.map.insert(id, <$slot>::from(value));
                id
            }
            #[inline(always)]
            fn get(&self, key: u32) -> Option<&V> {
                self.map.get(&key).map(Borrow::borrow)
            }
            #[inline(always)]
            fn remove(&mut self, key: u32) -> Option<V> {
                self.map.remove(&key).map(IntoValue::into_value)
            }
            fn len(&self) -> usize {
                self.map.len()
            }
            #[inline(always)]
            fn key_bits(key: u32) -> u64 {
                u64::from(key)
            }
            #[inline(always)]
            fn iter(&self) -> impl Iterator<Item = (u32, &V)> {
                self.map.iter().map(|(&k, v)| (k, v.borrow()))
            }
            #[inline(always)]
            fn iter_mut(&mut self) -> impl Iterator<Item = (u32, &mut V)> {
                self.map.iter_mut().map(|(&k, v)| (k, v.borrow_mut()))
            }
            #[inline(always)]
            fn values(&self) -> impl Iterator<Item = &V> {
                self.map.values().map(Borrow::borrow)
            }
            #[inline(always)]
            fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
                self.map.values_mut().map(BorrowMut::borrow_mut)
            }
            #[inline(always)]
            fn keys(&self) -> impl Iterator<Item = u32> {
                self.map.keys().copied()
            }
        }
    };
}

counter_ids!(BTreeMap, Box<V>, "BTreeMap+Box");
counter_ids!(HashMap, V, "HashMap");

/// `Vec<T>` with plain indices: no stale-key detection and no removal. The
/// physical bound for insert, get and iteration (`iter().enumerate()` for
/// the keyed passes, `0..len` for the keys).
pub struct PlainVec<V>(Vec<V>);

impl<V: Value> Container<V> for PlainVec<V> {
    type Key = usize;
    const NAME: &'static str = "Vec";
    const FAMILY: Family = Family::Bound;
    const CAN_REMOVE: bool = false;
    fn new() -> Self {
        PlainVec(Vec::new())
    }
    #[inline(always)]
    fn insert(&mut self, value: V) -> usize {
        self.0.push(value);
        self.0.len() - 1
    }
    #[inline(always)]
    fn get(&self, key: usize) -> Option<&V> {
        self.0.get(key)
    }
    fn remove(&mut self, _key: usize) -> Option<V> {
        unreachable!("Vec with plain indices cannot remove")
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline(always)]
    fn key_bits(key: usize) -> u64 {
        key as u64
    }
    #[inline(always)]
    fn iter(&self) -> impl Iterator<Item = (usize, &V)> {
        self.0.iter().enumerate()
    }
    #[inline(always)]
    fn iter_mut(&mut self) -> impl Iterator<Item = (usize, &mut V)> {
        self.0.iter_mut().enumerate()
    }
    #[inline(always)]
    fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter()
    }
    #[inline(always)]
    fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.0.iter_mut()
    }
    #[inline(always)]
    fn keys(&self) -> impl Iterator<Item = usize> {
        0..self.0.len()
    }
}

/// A key laid out as `Id` is (index, then generation, 32 bits each), for
/// [`GenVec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct GenKey {
    index: u32,
    generation: u32,
}

/// A `Vec<T>` with a parallel array of generations, every one 1: no free
/// list and no removal. Its keyed passes are the loop a generational key
/// costs at the least, written by hand (`iter().zip(..).enumerate()`, a
/// load of the generation and a key of two 32-bit halves): the floor the
/// keyed `for` loops of the core tables are held to, where a plain `Vec`'s
/// index is a counter with nothing to load (see the `keyed_floor`
/// example).
pub struct GenVec<V> {
    values: Vec<V>,
    /// The generation of each value's slot, at the value's index.
    generations: Vec<u32>,
}

impl<V: Value> Container<V> for GenVec<V> {
    type Key = GenKey;
    const NAME: &'static str = "Vec+generations";
    const FAMILY: Family = Family::Bound;
    const CAN_REMOVE: bool = false;
    fn new() -> Self {
        GenVec {
            values: Vec::new(),
            generations: Vec::new(),
        }
    }
    #[inline(always)]
    fn insert(&mut self, value: V) -> GenKey {
        let index = self.values.len() as u32;
        self.values.push(value);
        self.generations.push(1);
        GenKey {
            index,
            generation: 1,
        }
    }
    #[inline(always)]
    fn get(&self, key: GenKey) -> Option<&V> {
        let index = key.index as usize;
        if *self.generations.get(index)? == key.generation {
            self.values.get(index)
        } else {
            None
        }
    }
    fn remove(&mut self, _key: GenKey) -> Option<V> {
        unreachable!("Vec+generations cannot remove")
    }
    fn len(&self) -> usize {
        self.values.len()
    }
    #[inline(always)]
    fn key_bits(key: GenKey) -> u64 {
        (u64::from(key.generation) << 32) | u64::from(key.index)
    }
    #[inline(always)]
    fn iter(&self) -> impl Iterator<Item = (GenKey, &V)> {
        with_keys(self.values.iter(), &self.generations)
    }
    #[inline(always)]
    fn iter_mut(&mut self) -> impl Iterator<Item = (GenKey, &mut V)> {
        with_keys(self.values.iter_mut(), &self.generations)
    }
    #[inline(always)]
    fn values(&self) -> impl Iterator<Item = &V> {
        self.values.iter()
    }
    #[inline(always)]
    fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.values.iter_mut()
    }
    #[inline(always)]
    fn keys(&self) -> impl Iterator<Item = GenKey> {
        with_keys(core::iter::repeat(()), &self.generations).map(|(key, ())| key)
    }
}

/// `items` paired with the keys of [`GenVec`]'s slots in order: a slot's
/// index and its generation, loaded from `generations`.
#[inline(always)]
fn with_keys<'a, R, I: Iterator<Item = R> + 'a>(
    items: I,
    generations: &'a [u32],
) -> impl Iterator<Item = (GenKey, R)> + 'a {
    items
        .zip(generations)
        .enumerate()
        .map(|(index, (item, &generation))| {
            let key = GenKey {
                index: index as u32,
                generation,
            };
            (key, item)
        })
}

/// A secondary map as a runner container: its `insert` attaches the value
/// to the next key a fresh primary table would issue (key `i` for the
/// `i`-th insertion: slot `i`, first generation), and returns that key.
/// The key is computed, not drawn from a table, so the timed loop holds
/// the map's own insertion and nothing else (`issued_keys_match_a_primary`
/// checks that the keys are the ones a primary issues).
pub struct Secondary<M> {
    map: M,
    /// Insertions so far: the index of the next key.
    next: u32,
}

/// handlekit's dense `SecondaryMap`, attached to the keys of an
/// `IdTable`.
pub type HkSecondary<V> = Secondary<handlekit::SecondaryMap<Id, V>>;
/// slotmap's `SecondaryMap`, attached to the keys of a `SlotMap`.
pub type SlotmapSecondary<V> = Secondary<slotmap::SecondaryMap<slotmap::DefaultKey, V>>;

/// The `i`-th key a fresh `IdTable` issues.
#[inline(always)]
pub fn hk_primary_key(i: u32) -> Id {
    Id::from_bits((1 << 32) | u64::from(i)).expect("generation 1 is valid")
}

/// The `i`-th key a fresh `SlotMap` issues (its slot 0 is a sentinel, so
/// slot `i + 1`, version 1).
#[inline(always)]
pub fn slotmap_primary_key(i: u32) -> slotmap::DefaultKey {
    slotmap::KeyData::from_ffi((1 << 32) | u64::from(i + 1)).into()
}

/// The two secondary maps, written once.
macro_rules! secondary_container {
    ($map:ty, $key:ty, $name:literal, $family:expr, $make_key:ident, |$k:ident| $bits:expr) => {
        impl<V: Value> Container<V> for Secondary<$map> {
            type Key = $key;
            const NAME: &'static str = $name;
            const FAMILY: Family = $family;
            const KEYED_OPS_ONLY: bool = true;
            fn new() -> Self {
                Secondary {
                    map: <$map>::new(),
                    next: 0,
                }
            }
            #[inline(always)]
            fn insert(&mut self, value: V) -> $key {
                let key = $make_key(self.next);
                self.next += 1;
                // Every key is new to the map: no old value comes back.
                let _old = self.map.insert(key, value);
                key
            }
            #[inline(always)]
            fn get(&self, key: $key) -> Option<&V> {
                self.map.get(key)
            }
            #[inline(always)]
            fn remove(&mut self, key: $key) -> Option<V> {
                self.map.remove(key)
            }
            fn len(&self) -> usize {
                self.map.len()
            }
            #[inline(always)]
            fn key_bits($k: $key) -> u64 {
                $bits
            }
            #[inline(always)]
            fn iter(&self) -> impl Iterator<Item = ($key, &V)> {
                self.map.iter()
            }
            #[inline(always)]
            fn iter_mut(&mut self) -> impl Iterator<Item = ($key, &mut V)> {
                self.map.iter_mut()
            }
            #[inline(always)]
            fn values(&self) -> impl Iterator<Item = &V> {
                self.map.values()
            }
            #[inline(always)]
            fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
                self.map.values_mut()
            }
            #[inline(always)]
            fn keys(&self) -> impl Iterator<Item = $key> {
                self.map.keys()
            }
        }
    };
}

secondary_container!(
    handlekit::SecondaryMap<Id, V>,
    Id,
    "SecondaryMap",
    Family::Secondary,
    hk_primary_key,
    |k| k.to_bits()
);
secondary_container!(
    slotmap::SecondaryMap<slotmap::DefaultKey, V>,
    slotmap::DefaultKey,
    "slotmap::SecondaryMap",
    Family::Secondary,
    slotmap_primary_key,
    |k| {
        use slotmap::Key as _;
        k.data().as_ffi()
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issued_keys_match_a_primary() {
        let mut table = IdTable::<()>::new();
        let mut slots = slotmap::SlotMap::<slotmap::DefaultKey, ()>::new();
        for i in 0..1000 {
            assert_eq!(table.insert(()), hk_primary_key(i));
            assert_eq!(slots.insert(()), slotmap_primary_key(i));
        }
    }
}
