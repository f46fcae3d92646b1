//! Secondary maps: attach data to the keys of another table.
//!
//! - [`SecondaryMap`] is dense: one slot per index of the primary table,
//!   holding the generation, so a stale key misses. Lookups cost what an
//!   [`IdTable`](crate::IdTable) lookup costs; memory grows with the highest
//!   index ever inserted.
//! - [`SparseSecondaryMap`] is a sparse set: a paged index array points into
//!   packed values, so a few keys with large indices cost little memory and
//!   iteration is a slice walk.
//!
//! Both compare generations: inserting with a newer key of the same slot
//! replaces the older value, and a key older than the one stored is stale
//! (lookups miss, `insert` does nothing, `entry` returns `None`).

use core::fmt;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

use crate::raw::{KeyLimits, KeyedStore, Parts};
use crate::Key;

mod entry;
#[cfg(feature = "rayon")]
mod par;
#[cfg(feature = "serde")]
mod serde_impl;
mod sparse;

pub use crate::iter::{Iter, IterMut, Keys, Values, ValuesMut};
#[cfg(feature = "rayon")]
pub use crate::slot_par::{ParIter, ParIterMut};
pub use entry::{Entry, EntryTarget, OccupiedEntry, VacantEntry};
pub use sparse::SparseSecondaryMap;

/// A dense secondary map: values for the keys of another table, stored by
/// slot index with their generation.
///
/// Memory: one slot (`4 + max(size_of::<V>(), 4)` bytes, aligned) per index
/// up to the highest index inserted, plus one bit. A key with a huge index
/// makes the map grow to it; for keys from untrusted sources, or a handful
/// of keys from a big table, use [`SparseSecondaryMap`].
///
/// # Examples
///
/// ```
/// use handlekit::{IdTable, SecondaryMap};
///
/// let mut bodies = IdTable::new();
/// let mut names = SecondaryMap::new();
/// let ship = bodies.insert("ship");
/// names.insert(ship, "Enterprise");
/// assert_eq!(names[ship], "Enterprise");
///
/// bodies.remove(ship);
/// let rock = bodies.insert("rock"); // reuses the slot with a new generation
/// assert_eq!(names.get(rock), None); // the old name does not leak through
/// ```
pub struct SecondaryMap<K: Key, V> {
    /// Slots by key index. Invariant: never more than the key type's
    /// `max_slots`; an occupied slot's generation is its key's.
    store: KeyedStore<V, K>,
    _key: PhantomData<fn(K) -> K>,
}

/// What [`SecondaryMap::insert`] does with a slot other than the next
/// one, as `prepare` found it.
enum Prepared {
    /// The slot holds a newer key's value: the key is stale.
    Stale,
    /// The slot holds a value for this very key: replace it.
    Occupied,
    /// The slot exists and is vacant: fill it.
    Vacant,
}

impl<K: Key, V> SecondaryMap<K, V> {
    /// An empty map.
    ///
    /// ```
    /// let map: handlekit::SecondaryMap<handlekit::Id, u8> = handlekit::SecondaryMap::new();
    /// assert!(map.is_empty());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        SecondaryMap {
            store: KeyedStore::new(),
            _key: PhantomData,
        }
    }

    /// An empty map with room for keys with indices below `capacity`.
    ///
    /// ```
    /// let map: handlekit::SecondaryMap<handlekit::Id, u8> = handlekit::SecondaryMap::with_capacity(64);
    /// assert!(map.capacity() >= 64);
    /// ```
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        SecondaryMap {
            store: KeyedStore::with_capacity(capacity.min(KeyLimits::of::<K>().max_slots)),
            _key: PhantomData,
        }
    }

    /// The number of values.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(table.insert(()), 1);
    /// assert_eq!(map.len(), 1);
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.store.len()
    }

    /// Whether the map holds no values.
    ///
    /// ```
    /// assert!(handlekit::SecondaryMap::<handlekit::Id, u8>::new().is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.store.len() == 0
    }

    /// The number of slots the map can hold without reallocating.
    ///
    /// ```
    /// let map: handlekit::SecondaryMap<handlekit::Id, u8> = handlekit::SecondaryMap::with_capacity(8);
    /// assert!(map.capacity() >= 8);
    /// ```
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.store.slot_capacity()
    }

    /// Makes room for keys with indices below `new_capacity`, if there is
    /// less; never shrinks. Call it with the capacity of the primary table
    /// before filling the map, so the map allocates once. Indices the key
    /// type cannot have are not allocated for.
    ///
    /// # Panics
    ///
    /// If the allocation fails.
    ///
    /// ```
    /// let table: handlekit::IdTable<u8> = handlekit::IdTable::with_capacity(100);
    /// let mut map = handlekit::SecondaryMap::<handlekit::Id, f32>::new();
    /// map.set_capacity(table.capacity());
    /// assert!(map.capacity() >= 100);
    /// map.set_capacity(10); // never shrinks
    /// assert!(map.capacity() >= 100);
    /// ```
    pub fn set_capacity(&mut self, new_capacity: usize) {
        let wanted = new_capacity.min(KeyLimits::of::<K>().max_slots);
        let additional = wanted.saturating_sub(self.store.slot_count());
        if self.store.try_reserve_slots(additional).is_err() {
            panic!("SecondaryMap::set_capacity({new_capacity}): allocation failed");
        }
    }

    /// Whether the key's index and generation are ones a table could issue.
    #[inline]
    fn in_range(key: K) -> bool {
        Parts::of(key).is_some()
    }

    /// Inserts `value` for `key` and returns the value it had, if any.
    ///
    /// If the map holds a value for an *older* key of the same slot, that
    /// value is dropped and replaced. If it holds a value for a *newer* key
    /// (so `key` is stale), nothing is inserted and `None` is returned; so
    /// is a key whose index or generation no table of this key type issues.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// assert_eq!(map.insert(key, 1), None);
    /// assert_eq!(map.insert(key, 2), Some(1));
    /// ```
    // Inline, with the choice of what to do with a slot other than the
    // next one out of line (`prepare`), which never sees `value`: a call
    // per insertion cost more than the append itself (59 instructions per
    // insert at 100k `u64`, against 37 inline and slotmap's 75.5), and a
    // value passed to a function that is not inlined is built in memory
    // on every path, then copied with wide loads from narrow stores, which
    // stalls on store forwarding (a 64-byte value took as long to insert
    // as with slotmap, despite a third fewer instructions). Forced: left to
    // `#[inline]`, it was not inlined.
    #[inline(always)]
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        let parts = Parts::of(key)?;
        let (index, generation) = (parts.index(), parts.generation());
        if index == self.store.slot_count() {
            // The common case when keys arrive in the order a table issued
            // them: append the slot already occupied, in one write.
            self.store.push_occupied(parts, value);
            return None;
        }
        match self.prepare(parts) {
            Prepared::Stale => None,
            Prepared::Occupied => self
                .store
                .get_mut(index, generation)
                .map(|old| core::mem::replace(old, value)),
            Prepared::Vacant => {
                self.store.occupy(parts, value);
                None
            }
        }
    }

    /// Readies slot `index` for a key of `generation` (in range, and not
    /// the next slot to append): makes the slot exist, and drops a value
    /// an older key left there.
    #[inline(never)]
    fn prepare(&mut self, parts: Parts<K>) -> Prepared {
        let (index, generation) = (parts.index(), parts.generation());
        self.store.grow_vacant_to(index + 1);
        let (stored, occupied) = self
            .store
            .slot(index)
            .map_or((0, false), |slot| (slot.generation(), slot.is_occupied()));
        if generation < stored {
            return Prepared::Stale;
        }
        if occupied {
            if generation == stored {
                return Prepared::Occupied;
            }
            drop(self.store.remove(index, stored));
        }
        Prepared::Vacant
    }

    /// Whether `key` has a value.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert!(map.contains_key(key));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_key(&self, key: K) -> bool {
        self.store
            .contains(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// The value for `key`, or `None` if it has none or is stale.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.get(key), Some(&1));
    /// ```
    #[inline]
    #[must_use]
    pub fn get(&self, key: K) -> Option<&V> {
        self.store
            .get(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// The value for `key`, mutably.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// *map.get_mut(key).unwrap() = 2;
    /// assert_eq!(map[key], 2);
    /// ```
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self, key: K) -> Option<&mut V> {
        self.store
            .get_mut(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// Mutable references to the values of `N` keys at once, or `None` if
    /// any key has no value or two keys are the same.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let (a, b) = (table.insert(()), table.insert(()));
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(a, 1);
    /// map.insert(b, 2);
    /// let [x, y] = map.get_disjoint_mut([a, b]).unwrap();
    /// core::mem::swap(x, y);
    /// assert_eq!((map[a], map[b]), (2, 1));
    /// ```
    #[must_use]
    pub fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut V; N]> {
        self.store.get_disjoint_mut(
            keys.map(|key| (key.index(), crate::raw::keyed::lookup_generation(key))),
        )
    }

    /// The value for `key`, without checking the key.
    ///
    /// # Safety
    ///
    /// `key` must have a value in this map: exactly when
    /// [`contains_key`](Self::contains_key) would return `true`.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// // SAFETY: `key` was just given a value.
    /// assert_eq!(unsafe { *map.get_unchecked(key) }, 1);
    /// ```
    #[inline]
    #[must_use]
    pub unsafe fn get_unchecked(&self, key: K) -> &V {
        debug_assert!(
            self.contains_key(key),
            "get_unchecked with key {key:?}, which has no value"
        );
        // SAFETY: the caller guarantees `key` has a value, so its slot
        // exists and is occupied.
        unsafe { self.store.get_unchecked(key.index()) }
    }

    /// The value for `key`, mutably, without checking the key.
    ///
    /// # Safety
    ///
    /// `key` must have a value in this map.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// // SAFETY: `key` was just given a value.
    /// unsafe { *map.get_unchecked_mut(key) = 2 };
    /// assert_eq!(map[key], 2);
    /// ```
    #[inline]
    #[must_use]
    pub unsafe fn get_unchecked_mut(&mut self, key: K) -> &mut V {
        debug_assert!(
            self.contains_key(key),
            "get_unchecked_mut with key {key:?}, which has no value"
        );
        // SAFETY: the caller guarantees `key` has a value.
        unsafe { self.store.get_unchecked_mut(key.index()) }
    }

    /// Mutable references to the values of `N` keys at once, without
    /// checking the keys.
    ///
    /// # Safety
    ///
    /// Every key must have a value in this map, and no two keys may be
    /// equal: exactly when [`get_disjoint_mut`](Self::get_disjoint_mut)
    /// would return `Some`.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let (a, b) = (table.insert(()), table.insert(()));
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(a, 1);
    /// map.insert(b, 2);
    /// // SAFETY: `a` and `b` have values and are distinct.
    /// let [x, y] = unsafe { map.get_disjoint_unchecked_mut([a, b]) };
    /// core::mem::swap(x, y);
    /// assert_eq!((map[a], map[b]), (2, 1));
    /// ```
    #[must_use]
    pub unsafe fn get_disjoint_unchecked_mut<const N: usize>(
        &mut self,
        keys: [K; N],
    ) -> [&mut V; N] {
        debug_assert!(
            self.get_disjoint_mut(keys).is_some(),
            "get_disjoint_unchecked_mut with a key without a value, or a repeated key, in {keys:?}"
        );
        // Keys with values and one index are one key, so distinct such keys
        // have distinct indices.
        // SAFETY: the caller guarantees every key has a value and is distinct.
        unsafe {
            self.store
                .get_disjoint_unchecked_mut(keys.map(|key| key.index()))
        }
    }

    /// Removes the value for `key` and returns it.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.remove(key), Some(1));
    /// assert_eq!(map.remove(key), None);
    /// ```
    #[inline]
    pub fn remove(&mut self, key: K) -> Option<V> {
        self.store
            .remove(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// The entry for `key`, for in-place manipulation, or `None` if the key
    /// is stale (the map holds a value for a newer key of its slot) or is
    /// out of range for its type.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut counts = handlekit::SecondaryMap::new();
    /// *counts.entry(key).unwrap().or_insert(0) += 1;
    /// assert_eq!(counts[key], 1);
    /// ```
    pub fn entry(&mut self, key: K) -> Option<Entry<'_, Self>> {
        entry::entry(self, key)
    }

    /// Removes every value.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(table.insert(()), 1);
    /// map.clear();
    /// assert!(map.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.store.drop_values();
    }

    /// Keeps only the values for which `keep(key, &mut value)` is true.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SecondaryMap::new();
    /// for n in 0..4 {
    ///     map.insert(table.insert(()), n);
    /// }
    /// map.retain(|_, n| *n >= 2);
    /// assert_eq!(map.len(), 2);
    /// ```
    pub fn retain(&mut self, keep: impl FnMut(K, &mut V) -> bool) {
        self.store.retain_keyed(keep);
    }

    /// Removes every value and yields it with its key, in index order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.drain().collect::<Vec<_>>(), [(key, 1)]);
    /// ```
    pub fn drain(&mut self) -> Drain<'_, K, V> {
        Drain::new(&mut self.store)
    }

    /// Iterates `(key, &value)` in index order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.iter().collect::<Vec<_>>(), [(key, &1)]);
    /// ```
    pub fn iter(&self) -> Iter<'_, V, K> {
        Iter::new(self.store.keyed_iter())
    }

    /// Iterates `(key, &mut value)` in index order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// for (_, v) in map.iter_mut() {
    ///     *v = 5;
    /// }
    /// assert_eq!(map[key], 5);
    /// ```
    pub fn iter_mut(&mut self) -> IterMut<'_, V, K> {
        IterMut::new(self.store.keyed_iter_mut())
    }

    /// Iterates the keys with values, in index order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.keys().collect::<Vec<_>>(), [key]);
    /// ```
    pub fn keys(&self) -> Keys<'_, V, K> {
        Keys::new(self.store.keyed_iter())
    }

    /// Iterates the values, in index order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(table.insert(()), 1);
    /// map.insert(table.insert(()), 2);
    /// assert_eq!(map.values().sum::<i32>(), 3);
    /// ```
    pub fn values(&self) -> Values<'_, V> {
        Values::new(self.store.iter())
    }

    /// Iterates the values mutably, in index order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// map.values_mut().for_each(|v| *v += 1);
    /// assert_eq!(map[key], 2);
    /// ```
    pub fn values_mut(&mut self) -> ValuesMut<'_, V> {
        ValuesMut::new(self.store.iter_mut())
    }

    /// Checks internal invariants; panics if one is broken. For tests and
    /// fuzzing; not part of the stable API.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        self.store.check_invariants();
        assert!(self.store.slot_count() <= KeyLimits::of::<K>().max_slots);
    }
}

impl<K: Key, V> EntryTarget for SecondaryMap<K, V> {
    type Key = K;
    type Value = V;

    fn entry_state(&self, key: K) -> Option<bool> {
        if !Self::in_range(key) {
            return None;
        }
        match self.store.slot(key.index()) {
            None => Some(false),
            Some(slot) if crate::raw::keyed::lookup_generation(key) < slot.generation() => None,
            Some(slot) => Some(
                slot.is_occupied()
                    && slot.generation() == crate::raw::keyed::lookup_generation(key),
            ),
        }
    }

    fn entry_get(&self, key: K) -> Option<&V> {
        self.get(key)
    }

    fn entry_get_mut(&mut self, key: K) -> Option<&mut V> {
        self.get_mut(key)
    }

    fn entry_insert(&mut self, key: K, value: V) -> Option<V> {
        self.insert(key, value)
    }

    fn entry_remove(&mut self, key: K) -> Option<V> {
        self.remove(key)
    }
}

/// Removing iterator over `(key, value)`; see [`SecondaryMap::drain`]
/// ([`iter::Drain`](crate::iter::Drain) over the map's slots).
pub type Drain<'a, K, V> = crate::iter::Drain<'a, V, K, KeyedStore<V, K>>;

/// Owning iterator over `(key, value)`, in index order
/// ([`iter::IntoIter`](crate::iter::IntoIter) over the map's slots).
pub type IntoIter<K, V> = crate::iter::IntoIter<V, K, KeyedStore<V, K>>;

impl<K: Key, V> Default for SecondaryMap<K, V> {
    /// An empty map.
    ///
    /// ```
    /// let map: handlekit::SecondaryMap<handlekit::Id32, u8> = Default::default();
    /// assert!(map.is_empty());
    /// ```
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Key, V: Clone> Clone for SecondaryMap<K, V> {
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.clone()[key], 1);
    /// ```
    fn clone(&self) -> Self {
        SecondaryMap {
            store: self.store.clone(),
            _key: PhantomData,
        }
    }
}

impl<K: Key, V: fmt::Debug> fmt::Debug for SecondaryMap<K, V> {
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(table.insert(()), 'a');
    /// assert_eq!(format!("{map:?}"), "{Id(0v1): 'a'}");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Key, V: PartialEq> PartialEq for SecondaryMap<K, V> {
    /// ```
    /// let map: handlekit::SecondaryMap<handlekit::Id, u8> = Default::default();
    /// assert_eq!(map, map.clone());
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(key, value)| other.get(key) == Some(value))
    }
}

impl<K: Key, V: Eq> Eq for SecondaryMap<K, V> {}

impl<K: Key, V> Index<K> for SecondaryMap<K, V> {
    type Output = V;

    /// # Panics
    ///
    /// If `key` has no value; the message names the key.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map[key], 1);
    /// ```
    #[track_caller]
    fn index(&self, key: K) -> &V {
        match self.get(key) {
            Some(value) => value,
            None => missing(key),
        }
    }
}

impl<K: Key, V> IndexMut<K> for SecondaryMap<K, V> {
    /// # Panics
    ///
    /// If `key` has no value.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// map[key] += 1;
    /// assert_eq!(map[key], 2);
    /// ```
    #[track_caller]
    fn index_mut(&mut self, key: K) -> &mut V {
        match self.get_mut(key) {
            Some(value) => value,
            None => missing(key),
        }
    }
}

#[cold]
#[track_caller]
pub(crate) fn missing<K: Key>(key: K) -> ! {
    panic!("secondary map: no value for key {key:?} (never inserted, removed, or stale)")
}

impl<K: Key, V> Extend<(K, V)> for SecondaryMap<K, V> {
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.extend([(key, 1)]);
    /// assert_eq!(map[key], 1);
    /// ```
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, pairs: I) {
        for (key, value) in pairs {
            self.insert(key, value);
        }
    }
}

impl<K: Key, V> FromIterator<(K, V)> for SecondaryMap<K, V> {
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let map: handlekit::SecondaryMap<_, _> = [(key, 1)].into_iter().collect();
    /// assert_eq!(map[key], 1);
    /// ```
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Self {
        let mut map = Self::new();
        map.extend(pairs);
        map
    }
}

impl<'a, K: Key, V> IntoIterator for &'a SecondaryMap<K, V> {
    type Item = (K, &'a V);
    type IntoIter = Iter<'a, V, K>;

    fn into_iter(self) -> Iter<'a, V, K> {
        self.iter()
    }
}

impl<'a, K: Key, V> IntoIterator for &'a mut SecondaryMap<K, V> {
    type Item = (K, &'a mut V);
    type IntoIter = IterMut<'a, V, K>;

    fn into_iter(self) -> IterMut<'a, V, K> {
        self.iter_mut()
    }
}

impl<K: Key, V> IntoIterator for SecondaryMap<K, V> {
    type Item = (K, V);
    type IntoIter = IntoIter<K, V>;

    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.into_iter().collect::<Vec<_>>(), [(key, 1)]);
    /// ```
    fn into_iter(self) -> IntoIter<K, V> {
        IntoIter::new(self.store)
    }
}
