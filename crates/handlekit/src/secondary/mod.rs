//! Secondary maps: attach data to the keys of another table.
//!
//! One type, [`SecondaryTable`], written once over two storages:
//!
//! - [`SecondaryMap`] (`SecondaryTable<K, V, Dense>`) is dense: one slot
//!   per index of the primary table, holding the generation, so a stale
//!   key misses. Lookups cost what an [`IdTable`](crate::IdTable) lookup
//!   costs; memory grows with the highest index ever inserted.
//! - [`SparseSecondaryMap`] (`SecondaryTable<K, V, Sparse>`) is a sparse
//!   set: a paged index array points into packed values, so a few keys
//!   with large indices cost little memory and iteration is a slice walk.
//!
//! Both compare generations: inserting with a newer key of the same slot
//! replaces the older value, and a key older than the one stored is stale
//! (lookups miss, `insert` does nothing, `entry` returns `None`). Every
//! method below exists for both storages unless its section says which;
//! name the map by its alias.

use core::fmt;
use core::iter::FusedIterator;
use core::ops::{Index, IndexMut};

use crate::Key;

mod dense;
mod entry;
mod sparse;

pub use crate::iter::{Iter, IterMut, Keys, Values, ValuesMut};
#[cfg(feature = "rayon")]
pub use crate::slot_par::{ParIter, ParIterMut};
pub use dense::{Drain, IntoIter};
pub use entry::{Entry, EntryTarget, OccupiedEntry, VacantEntry};

/// A dense secondary map: values for the keys of another table, stored by
/// slot index with their generation.
///
/// Memory: one slot (`4 + max(size_of::<V>(), 4)` bytes, aligned) per index
/// up to the highest one inserted. A key whose index is far beyond the
/// others makes the map grow to it; for keys from untrusted sources, or a
/// handful of keys from a big table, use [`SparseSecondaryMap`]. Iteration
/// is in index order.
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
pub type SecondaryMap<K, V> = SecondaryTable<K, V, Dense>;

/// A sparse secondary map: values for the keys of another table, packed
/// tight, found through a paged sparse array.
///
/// This is the sparse set of EnTT and friends. The sparse side is split into
/// 4 KiB pages (1024 indices each) that are allocated on first use, so a
/// few keys with large indices cost a few pages, not an array as long as
/// the biggest index. Values sit in one `Vec` in insertion order (removal
/// swaps the last one in), so iteration is a slice walk:
/// [`as_slice`](SecondaryTable::as_slice). This is the storage the
/// entity-component store builds on.
///
/// Memory: `size_of::<K>() + size_of::<V>()` per value, plus 4 KiB per page
/// touched. A sparse entry without a value remembers the generation of the
/// last key whose value left it, so generations compare exactly as in
/// [`SecondaryMap`]. At most 2³¹ values.
///
/// # Examples
///
/// ```
/// use handlekit::{IdTable, SparseSecondaryMap};
///
/// let mut entities = IdTable::new();
/// let mut velocity = SparseSecondaryMap::new();
/// let a = entities.insert("a");
/// let b = entities.insert("b");
/// velocity.insert(b, 2.0f32);
/// assert_eq!(velocity.get(a), None);
/// assert_eq!(velocity.as_slice(), [2.0]);
/// ```
pub type SparseSecondaryMap<K, V> = SecondaryTable<K, V, Sparse>;

/// The storage of a [`SecondaryMap`]: a slot per key index, with its
/// generation. Iterates in index order.
#[derive(Debug)]
pub enum Dense {}

/// The storage of a [`SparseSecondaryMap`]: a paged index array and the
/// values packed with their keys. Iterates in the packed (dense) order.
#[derive(Debug)]
pub enum Sparse {}

/// The sealing trait, and the cores' trait: public in a private module, so
/// nothing outside the crate can name or implement them.
mod sealed {
    use crate::Key;

    pub trait Sealed {}
    impl Sealed for super::Dense {}
    impl Sealed for super::Sparse {}

    /// What each storage's core does; [`SecondaryTable`]'s methods are these,
    /// with the docs. Not public API.
    pub trait MapCore<K: Key, V, S: super::SecondaryStorage>: Sized {
        /// The empty map, for `const fn new`.
        const EMPTY: Self;
        fn with_capacity(capacity: usize) -> Self;
        fn len(&self) -> usize;
        fn capacity(&self) -> usize;
        fn insert(&mut self, key: K, value: V) -> Option<V>;
        fn contains_key(&self, key: K) -> bool;
        fn get(&self, key: K) -> Option<&V>;
        fn get_mut(&mut self, key: K) -> Option<&mut V>;
        fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut V; N]>;
        fn remove(&mut self, key: K) -> Option<V>;
        /// `Some(true)` if `key` has a value, `Some(false)` if a value could be
        /// inserted for it, `None` if it is stale or out of range.
        fn entry_state(&self, key: K) -> Option<bool>;
        fn clear(&mut self);
        fn retain(&mut self, keep: impl FnMut(K, &mut V) -> bool);
        fn drain(&mut self) -> S::Drain<'_, K, V>;
        fn iter(&self) -> S::Iter<'_, K, V>;
        fn iter_mut(&mut self) -> S::IterMut<'_, K, V>;
        fn keys(&self) -> S::Keys<'_, K, V>;
        fn values(&self) -> S::Values<'_, K, V>;
        fn values_mut(&mut self) -> S::ValuesMut<'_, K, V>;
        fn into_iter(self) -> S::IntoIter<K, V>;
        fn check_invariants(&self);
    }
}

use sealed::MapCore;

/// How a [`SecondaryTable`] stores its values: [`Dense`] or [`Sparse`].
/// Sealed; it names the map's core and the types of its iterators.
pub trait SecondaryStorage: sealed::Sealed + Sized {
    /// The map's core for keys `K` and values `V`.
    #[doc(hidden)]
    type Map<K: Key, V>: MapCore<K, V, Self>;
    /// Iterator over `(key, &value)`.
    type Iter<'a, K: Key, V: 'a>: Iterator<Item = (K, &'a V)>
        + DoubleEndedIterator
        + ExactSizeIterator
        + FusedIterator;
    /// Iterator over `(key, &mut value)`.
    type IterMut<'a, K: Key, V: 'a>: Iterator<Item = (K, &'a mut V)>
        + DoubleEndedIterator
        + ExactSizeIterator
        + FusedIterator;
    /// Iterator over the keys with values.
    type Keys<'a, K: Key, V: 'a>: Iterator<Item = K>
        + DoubleEndedIterator
        + ExactSizeIterator
        + FusedIterator;
    /// Iterator over the values.
    type Values<'a, K: Key, V: 'a>: Iterator<Item = &'a V>
        + DoubleEndedIterator
        + ExactSizeIterator
        + FusedIterator;
    /// Iterator over the values, mutably.
    type ValuesMut<'a, K: Key, V: 'a>: Iterator<Item = &'a mut V>
        + DoubleEndedIterator
        + ExactSizeIterator
        + FusedIterator;
    /// Removing iterator over `(key, value)`.
    type Drain<'a, K: Key, V: 'a>: Iterator<Item = (K, V)> + ExactSizeIterator;
    /// Owning iterator over `(key, value)`.
    type IntoIter<K: Key, V>: Iterator<Item = (K, V)> + ExactSizeIterator;
}

/// A secondary map over storage `S`: values for the keys of another table.
/// Name it by its aliases, [`SecondaryMap`] (dense) and
/// [`SparseSecondaryMap`]; every method below exists for both unless its
/// section names one.
///
/// ```
/// use handlekit::secondary::{Sparse, SecondaryTable};
/// use handlekit::{Id, IdTable, SparseSecondaryMap};
///
/// let mut table = IdTable::new();
/// let mut map: SecondaryTable<Id, &str, Sparse> = SparseSecondaryMap::new();
/// let key = table.insert(());
/// map.insert(key, "found through a page");
/// assert_eq!(map[key], "found through a page");
/// ```
pub struct SecondaryTable<K: Key, V, S: SecondaryStorage> {
    /// The storage's core: every operation is its.
    map: S::Map<K, V>,
}

impl<K: Key, V, S: SecondaryStorage> SecondaryTable<K, V, S> {
    /// An empty map; it allocates nothing until the first insertion.
    ///
    /// ```
    /// let map: handlekit::SecondaryMap<handlekit::Id, u8> = handlekit::SecondaryMap::new();
    /// assert!(map.is_empty());
    /// let sparse: handlekit::SparseSecondaryMap<handlekit::Id, u8> =
    ///     handlekit::SparseSecondaryMap::new();
    /// assert!(sparse.is_empty());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        SecondaryTable {
            map: <S::Map<K, V> as MapCore<K, V, S>>::EMPTY,
        }
    }

    /// An empty map with room for `capacity` values: for the dense map,
    /// keys with indices below `capacity`.
    ///
    /// ```
    /// let map: handlekit::SecondaryMap<handlekit::Id, u8> = handlekit::SecondaryMap::with_capacity(64);
    /// assert!(map.capacity() >= 64);
    /// let sparse: handlekit::SparseSecondaryMap<handlekit::Id, u8> =
    ///     handlekit::SparseSecondaryMap::with_capacity(8);
    /// assert!(sparse.capacity() >= 8);
    /// ```
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        SecondaryTable {
            map: MapCore::with_capacity(capacity),
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
        self.map.len()
    }

    /// Whether the map holds no values.
    ///
    /// ```
    /// assert!(handlekit::SecondaryMap::<handlekit::Id, u8>::new().is_empty());
    /// assert!(handlekit::SparseSecondaryMap::<handlekit::Id, u8>::new().is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many values fit without reallocating: for the dense map, the
    /// number of slots; for the sparse map, the room on its packed side.
    ///
    /// ```
    /// let map: handlekit::SecondaryMap<handlekit::Id, u8> = handlekit::SecondaryMap::with_capacity(8);
    /// assert!(map.capacity() >= 8);
    /// ```
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.map.capacity()
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
    ///
    /// table.remove(key);
    /// let newer = table.insert(()); // the same slot, a newer generation
    /// let mut sparse = handlekit::SparseSecondaryMap::new();
    /// sparse.insert(newer, 'n');
    /// assert_eq!(sparse.insert(key, 'o'), None); // stale: nothing inserted
    /// assert_eq!(sparse[newer], 'n');
    /// ```
    // Forced, as the dense core's own `insert` is (see there).
    #[inline(always)]
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        self.map.insert(key, value)
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
        self.map.contains_key(key)
    }

    /// The value for `key`, or `None` if it has none or is stale.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.get(key), Some(&1));
    /// let mut sparse = handlekit::SparseSecondaryMap::new();
    /// sparse.insert(key, 1);
    /// assert_eq!(sparse.get(key), Some(&1));
    /// ```
    #[inline]
    #[must_use]
    pub fn get(&self, key: K) -> Option<&V> {
        self.map.get(key)
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
        self.map.get_mut(key)
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
    /// assert!(map.get_disjoint_mut([a, a]).is_none());
    /// ```
    #[must_use]
    pub fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut V; N]> {
        self.map.get_disjoint_mut(keys)
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
    /// let mut map = handlekit::SparseSecondaryMap::new();
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
        // The lookup's checks lead only to the `None` it cannot return, so
        // the optimizer drops them.
        // SAFETY: the caller guarantees `key` has a value.
        unsafe { self.get(key).unwrap_unchecked() }
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
        // As in `get_unchecked`.
        // SAFETY: the caller guarantees `key` has a value.
        unsafe { self.get_mut(key).unwrap_unchecked() }
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
        // As in `get_unchecked`.
        // SAFETY: the caller guarantees every key has a value and no two
        // are equal, so `get_disjoint_mut` finds them all.
        unsafe { self.get_disjoint_mut(keys).unwrap_unchecked() }
    }

    /// Removes the value for `key` and returns it. In the sparse map the
    /// last value moves into its place.
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
        self.map.remove(key)
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
    /// let mut lists = handlekit::SparseSecondaryMap::new();
    /// lists.entry(key).unwrap().or_insert_with(Vec::new).push(1);
    /// assert_eq!(lists[key], [1]);
    /// ```
    pub fn entry(&mut self, key: K) -> Option<Entry<'_, Self>> {
        entry::entry(self, key)
    }

    /// Removes every value. The sparse map keeps its allocated pages.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(table.insert(()), 1);
    /// map.clear();
    /// assert!(map.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.map.clear();
    }

    /// Keeps only the values for which `keep(key, &mut value)` is true,
    /// visited in iteration order; the sparse map keeps the order of those
    /// that stay.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// for n in 0..4 {
    ///     map.insert(table.insert(()), n);
    /// }
    /// map.retain(|_, n| *n % 2 == 0);
    /// assert_eq!(map.as_slice(), [0, 2]);
    /// ```
    pub fn retain(&mut self, keep: impl FnMut(K, &mut V) -> bool) {
        self.map.retain(keep);
    }

    /// Removes every value and yields it with its key, in iteration order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.drain().collect::<Vec<_>>(), [(key, 1)]);
    /// assert!(map.is_empty());
    /// ```
    pub fn drain(&mut self) -> S::Drain<'_, K, V> {
        self.map.drain()
    }

    /// Iterates `(key, &value)`: in index order for the dense map, in
    /// packed order for the sparse one.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let (a, b) = (table.insert(()), table.insert(()));
    /// let mut map = handlekit::SecondaryMap::new();
    /// let mut sparse = handlekit::SparseSecondaryMap::new();
    /// for key in [b, a] {
    ///     map.insert(key, 1);
    ///     sparse.insert(key, 1);
    /// }
    /// assert_eq!(map.iter().collect::<Vec<_>>(), [(a, &1), (b, &1)]);
    /// assert_eq!(sparse.iter().collect::<Vec<_>>(), [(b, &1), (a, &1)]);
    /// ```
    pub fn iter(&self) -> S::Iter<'_, K, V> {
        self.map.iter()
    }

    /// Iterates `(key, &mut value)`, in [`iter`](Self::iter)'s order.
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
    pub fn iter_mut(&mut self) -> S::IterMut<'_, K, V> {
        self.map.iter_mut()
    }

    /// Iterates the keys with values, in [`iter`](Self::iter)'s order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.keys().collect::<Vec<_>>(), [key]);
    /// ```
    pub fn keys(&self) -> S::Keys<'_, K, V> {
        self.map.keys()
    }

    /// Iterates the values, in [`iter`](Self::iter)'s order: for the
    /// sparse map, a slice iterator.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(table.insert(()), 1);
    /// map.insert(table.insert(()), 2);
    /// assert_eq!(map.values().sum::<i32>(), 3);
    /// ```
    pub fn values(&self) -> S::Values<'_, K, V> {
        self.map.values()
    }

    /// Iterates the values mutably, in [`iter`](Self::iter)'s order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// map.values_mut().for_each(|v| *v += 1);
    /// assert_eq!(map[key], 2);
    /// ```
    pub fn values_mut(&mut self) -> S::ValuesMut<'_, K, V> {
        self.map.values_mut()
    }

    /// Checks internal invariants; panics if one is broken. For tests and
    /// fuzzing; not part of the stable API.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        self.map.check_invariants();
    }
}

impl<K: Key, V, S: SecondaryStorage> EntryTarget for SecondaryTable<K, V, S> {
    type Key = K;
    type Value = V;

    fn entry_state(&self, key: K) -> Option<bool> {
        self.map.entry_state(key)
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

impl<K: Key, V, S: SecondaryStorage> Default for SecondaryTable<K, V, S> {
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

impl<K: Key, V, S: SecondaryStorage> Clone for SecondaryTable<K, V, S>
where
    S::Map<K, V>: Clone,
{
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.clone()[key], 1);
    /// ```
    fn clone(&self) -> Self {
        SecondaryTable {
            map: self.map.clone(),
        }
    }
}

impl<K: Key, V: fmt::Debug, S: SecondaryStorage> fmt::Debug for SecondaryTable<K, V, S> {
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

impl<K: Key, V: PartialEq, S: SecondaryStorage> PartialEq for SecondaryTable<K, V, S> {
    /// Equal when both hold the same keys with equal values, whatever
    /// their order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let (a, b) = (table.insert(()), table.insert(()));
    /// let mut x = handlekit::SparseSecondaryMap::new();
    /// let mut y = handlekit::SparseSecondaryMap::new();
    /// x.extend([(a, 1), (b, 2)]);
    /// y.extend([(b, 2), (a, 1)]);
    /// assert_eq!(x, y);
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(key, value)| other.get(key) == Some(value))
    }
}

impl<K: Key, V: Eq, S: SecondaryStorage> Eq for SecondaryTable<K, V, S> {}

impl<K: Key, V, S: SecondaryStorage> Index<K> for SecondaryTable<K, V, S> {
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

impl<K: Key, V, S: SecondaryStorage> IndexMut<K> for SecondaryTable<K, V, S> {
    /// # Panics
    ///
    /// If `key` has no value.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
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

impl<K: Key, V, S: SecondaryStorage> Extend<(K, V)> for SecondaryTable<K, V, S> {
    /// Inserts each pair as [`insert`](SecondaryTable::insert) does.
    ///
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

impl<K: Key, V, S: SecondaryStorage> FromIterator<(K, V)> for SecondaryTable<K, V, S> {
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let map: handlekit::SparseSecondaryMap<_, _> = [(key, 1)].into_iter().collect();
    /// assert_eq!(map[key], 1);
    /// ```
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Self {
        let mut map = Self::new();
        map.extend(pairs);
        map
    }
}

impl<'a, K: Key, V, S: SecondaryStorage> IntoIterator for &'a SecondaryTable<K, V, S> {
    type Item = (K, &'a V);
    type IntoIter = S::Iter<'a, K, V>;

    fn into_iter(self) -> S::Iter<'a, K, V> {
        self.iter()
    }
}

impl<'a, K: Key, V, S: SecondaryStorage> IntoIterator for &'a mut SecondaryTable<K, V, S> {
    type Item = (K, &'a mut V);
    type IntoIter = S::IterMut<'a, K, V>;

    fn into_iter(self) -> S::IterMut<'a, K, V> {
        self.iter_mut()
    }
}

impl<K: Key, V, S: SecondaryStorage> IntoIterator for SecondaryTable<K, V, S> {
    type Item = (K, V);
    type IntoIter = S::IntoIter<K, V>;

    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.into_iter().collect::<Vec<_>>(), [(key, 1)]);
    /// ```
    fn into_iter(self) -> S::IntoIter<K, V> {
        self.map.into_iter()
    }
}
