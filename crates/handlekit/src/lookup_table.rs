//! [`LookupTable`]: an [`IdTable`](crate::IdTable) laid out for lookups by
//! key, and its iterators.
//!
//! The same slot core as `IdTable` (the same free list, reuse policy,
//! retirement and stale-key checks) with the other slot layout: each
//! slot's state word sits beside its value, as `PackedTable`'s sparse side
//! keeps them, so a lookup reads one slot (one cache line) instead of a
//! state word and a value in two arrays. A pass reads every slot, state
//! word and value, one at a time. Choose it for a table that is looked up
//! far more often than iterated, with small values: an index from a key to
//! where something else lives (an entity's row, a position in another
//! array).

use core::fmt;
use core::marker::PhantomData;

use crate::raw::{InterleavedLayout, KeyLimits, RawIter, RawIterMut, SlotArena};
use crate::slot_iter::table_key;
use crate::{CapacityError, Id, Key};

/// Shared iteration over the interleaved store.
type LookupRawIter<'a, T> = RawIter<'a, T, InterleavedLayout>;
/// Exclusive iteration over the interleaved store.
type LookupRawIterMut<'a, T> = RawIterMut<'a, T, InterleavedLayout>;

/// An array with holes behind generational keys, like
/// [`IdTable`](crate::IdTable), with each slot's state word stored beside
/// its value: a lookup by key reads one slot, so one cache line, where
/// `IdTable` reads a state word and a value from two arrays (two cache
/// lines once the table outgrows the cache).
///
/// Keys, generations, the free list, [`Reuse`](crate::Reuse) (LIFO),
/// retirement and every guarantee about stale keys are `IdTable`'s: the
/// two share their slot core and differ only in where a slot's two parts
/// are stored. Iteration reads every slot (`IdTable`'s reads 4 bytes per
/// slot and only the live values), so prefer `IdTable` for tables that are
/// iterated often.
///
/// | operation | cost |
/// | --- | --- |
/// | `insert`, `remove`, `get`, `contains_key` | O(1), one slot read |
/// | iteration | O(slots), reading every slot |
/// | `clear` | O(slots) |
///
/// Memory: one slot per index ever used, of `4 + P` bytes rounded up to
/// the alignment of `max(align_of::<T>(), 4)`, where `P` is
/// `max(size_of::<T>(), 4)` (8 bytes for a `u32`). With the `serde`
/// feature it serializes exactly as an `IdTable` of the same values does,
/// so either reads what the other wrote.
///
/// ```
/// use handlekit::LookupTable;
/// let mut rows: LookupTable<u32> = LookupTable::new();
/// let a = rows.insert(10);
/// let b = rows.insert(20);
/// assert_eq!(rows.get(a), Some(&10));
/// rows.remove(a);
/// assert_eq!(rows.get(a), None); // stale
/// *rows.get_mut(b).unwrap() += 1;
/// assert_eq!(rows.iter().collect::<Vec<_>>(), [(b, &21)]);
/// ```
pub struct LookupTable<T, K: Key = Id> {
    arena: SlotArena<T, InterleavedLayout>,
    _key: PhantomData<fn(K) -> K>,
}

impl<T> LookupTable<T, Id> {
    /// Creates an empty table keyed by [`Id`]. It allocates nothing until
    /// the first insertion.
    ///
    /// ```
    /// let table: handlekit::LookupTable<u32> = handlekit::LookupTable::new();
    /// assert!(table.is_empty());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self::with_key()
    }
}

impl<T, K: Key> LookupTable<T, K> {
    /// The key for parts of this container's own slots.
    ///
    /// # Safety
    ///
    /// As for [`table_key`]: parts from this container's own slots.
    #[inline]
    unsafe fn key(index: usize, generation: u32) -> K {
        // SAFETY: the caller's guarantee is `table_key`'s.
        unsafe { table_key(index, generation) }
    }

    /// Creates an empty table for any key type. It allocates nothing until
    /// the first insertion. The same as [`LookupTable::default`].
    ///
    /// ```
    /// handlekit::define_key! { struct RowKey(u32; index_bits = 20); }
    /// let mut rows = handlekit::LookupTable::with_key();
    /// let key: RowKey = rows.insert(7u32);
    /// assert_eq!(rows.get(key), Some(&7));
    /// ```
    #[must_use]
    pub const fn with_key() -> Self {
        LookupTable {
            arena: SlotArena::new(KeyLimits::of::<K>()),
            _key: PhantomData,
        }
    }

    /// Creates an empty table for any key type, with room for `capacity`
    /// values.
    ///
    /// ```
    /// use handlekit::{Id32, LookupTable};
    /// let table: LookupTable<u32, Id32> = LookupTable::with_capacity_and_key(100);
    /// assert!(table.capacity() >= 100);
    /// ```
    #[must_use]
    pub fn with_capacity_and_key(capacity: usize) -> Self {
        LookupTable {
            arena: SlotArena::with_capacity(KeyLimits::of::<K>(), capacity),
            _key: PhantomData,
        }
    }

    /// The number of values in the table.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// table.insert('a');
    /// assert_eq!(table.len(), 1);
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.arena.len()
    }

    /// Whether the table holds no values.
    ///
    /// ```
    /// assert!(handlekit::LookupTable::<u8>::new().is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.arena.len() == 0
    }

    /// The number of values the table can hold without reallocating.
    /// Retired slots are not counted.
    ///
    /// ```
    /// let mut table: handlekit::LookupTable<u8> = handlekit::LookupTable::new();
    /// table.reserve(10);
    /// assert!(table.capacity() >= 10);
    /// ```
    #[inline]
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// Reserves room for at least `additional` more values.
    ///
    /// # Panics
    ///
    /// If the key type cannot index that many slots, or the allocation
    /// fails.
    ///
    /// ```
    /// let mut table: handlekit::LookupTable<u8> = handlekit::LookupTable::new();
    /// table.reserve(1000);
    /// assert!(table.capacity() >= 1000);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        if let Err(err) = self.arena.try_reserve(additional) {
            panic!("LookupTable::reserve({additional}): {err}");
        }
    }

    /// Reserves room for at least `additional` more values, or reports why
    /// it cannot.
    ///
    /// ```
    /// handlekit::define_key! { struct Small(u32; index_bits = 4); }
    /// let mut table: handlekit::LookupTable<u8, Small> = handlekit::LookupTable::default();
    /// assert!(table.try_reserve(16).is_ok());
    /// assert!(table.try_reserve(17).is_err());
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        self.arena.try_reserve(additional)
    }

    /// Removes every value. Every slot keeps its generation, so keys issued
    /// before stay stale.
    ///
    /// If a value's `Drop` panics, the other values are still dropped and
    /// the table is left empty; then the panic propagates.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// let key = table.insert(1);
    /// table.clear();
    /// assert!(table.is_empty());
    /// table.insert(2);
    /// assert_eq!(table.get(key), None);
    /// ```
    pub fn clear(&mut self) {
        self.arena.clear();
    }

    /// Inserts a value and returns its key.
    ///
    /// # Panics
    ///
    /// If the table is full: the key's index bits cannot name another slot.
    /// See [`try_insert`](Self::try_insert).
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// let key = table.insert(42);
    /// assert_eq!(table.get(key), Some(&42));
    /// ```
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> K {
        match self.try_insert(value) {
            Ok(key) => key,
            Err(err) => insert_failed(err),
        }
    }

    /// Inserts a value and returns its key, or returns a [`CapacityError`]
    /// if the table is full.
    ///
    /// ```
    /// handlekit::define_key! { struct Tiny(u32; index_bits = 1); }
    /// let mut table: handlekit::LookupTable<u8, Tiny> = handlekit::LookupTable::default();
    /// assert!(table.try_insert(1).is_ok() && table.try_insert(2).is_ok());
    /// assert!(table.try_insert(3).is_err());
    /// ```
    #[inline(always)]
    pub fn try_insert(&mut self, value: T) -> Result<K, CapacityError> {
        let (index, generation) = self.arena.try_insert_with(|_, _| value)?;
        // SAFETY: the parts come from this container's own slots (an
        // insert's), which is what `table_key` asks.
        Ok(unsafe { Self::key(index, generation) })
    }

    /// Whether `key` names a live value.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// let key = table.insert(());
    /// assert!(table.contains_key(key));
    /// table.remove(key);
    /// assert!(!table.contains_key(key));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_key(&self, key: K) -> bool {
        self.arena
            .contains(key.index(), crate::key::lookup_generation(key))
    }

    /// The value for `key`, or `None` if the key is stale or foreign.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// let key = table.insert("x");
    /// assert_eq!(table.get(key), Some(&"x"));
    /// ```
    #[inline]
    #[must_use]
    pub fn get(&self, key: K) -> Option<&T> {
        self.arena
            .get(key.index(), crate::key::lookup_generation(key))
    }

    /// The value for `key`, mutably, or `None` if the key is stale or
    /// foreign.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// let key = table.insert(1);
    /// *table.get_mut(key).unwrap() += 1;
    /// assert_eq!(table.get(key), Some(&2));
    /// ```
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self, key: K) -> Option<&mut T> {
        self.arena
            .get_mut(key.index(), crate::key::lookup_generation(key))
    }

    /// Removes the value for `key` and returns it, or `None` if the key is
    /// stale or foreign. The key, and every copy of it, is stale from now
    /// on.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// let key = table.insert(5);
    /// assert_eq!(table.remove(key), Some(5));
    /// assert_eq!(table.remove(key), None);
    /// ```
    #[inline(always)]
    pub fn remove(&mut self, key: K) -> Option<T> {
        self.arena
            .remove(key.index(), crate::key::lookup_generation(key))
    }

    /// Checks the internal invariants, panicking if one is broken (for
    /// tests and fuzzing).
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// table.insert(1);
    /// table.check_invariants();
    /// ```
    pub fn check_invariants(&self) {
        self.arena.check_invariants();
    }

    /// Iterates `(key, &value)` in slot order.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// let key = table.insert(1);
    /// assert_eq!(table.iter().collect::<Vec<_>>(), [(key, &1)]);
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_, T, K> {
        Iter::new(self.arena.iter())
    }

    /// Iterates `(key, &mut value)` in slot order.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// let key = table.insert(1);
    /// for (_, value) in table.iter_mut() {
    ///     *value *= 10;
    /// }
    /// assert_eq!(table.get(key), Some(&10));
    /// ```
    #[inline]
    pub fn iter_mut(&mut self) -> IterMut<'_, T, K> {
        IterMut::new(self.arena.iter_mut())
    }

    /// Iterates the keys of the live values, in slot order.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// let key = table.insert(1);
    /// assert_eq!(table.keys().collect::<Vec<_>>(), [key]);
    /// ```
    #[inline]
    pub fn keys(&self) -> Keys<'_, T, K> {
        Keys::new(self.arena.iter())
    }

    /// Iterates the live values, in slot order.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// table.insert(1);
    /// table.insert(2);
    /// assert_eq!(table.values().sum::<i32>(), 3);
    /// ```
    #[inline]
    pub fn values(&self) -> Values<'_, T> {
        Values::new(self.arena.iter())
    }

    /// Iterates the live values mutably, in slot order.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// let key = table.insert(1);
    /// table.values_mut().for_each(|v| *v += 1);
    /// assert_eq!(table.get(key), Some(&2));
    /// ```
    #[inline]
    pub fn values_mut(&mut self) -> ValuesMut<'_, T> {
        ValuesMut::new(self.arena.iter_mut())
    }
}

#[cold]
#[track_caller]
fn insert_failed(err: CapacityError) -> ! {
    panic!("LookupTable::insert: {err}")
}

impl<T, K: Key> Default for LookupTable<T, K> {
    /// An empty table.
    ///
    /// ```
    /// let table: handlekit::LookupTable<u8, handlekit::Id32> = Default::default();
    /// assert!(table.is_empty());
    /// ```
    fn default() -> Self {
        Self::with_key()
    }
}

impl<T: Clone, K: Key> Clone for LookupTable<T, K> {
    /// A copy with the same keys, generations, free list and policy: the
    /// copy issues the same keys as the original would.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// let key = table.insert(String::from("x"));
    /// let mut copy = table.clone();
    /// assert_eq!(copy.get(key).unwrap(), "x");
    /// assert_eq!(copy.insert(String::new()), table.insert(String::new()));
    /// ```
    fn clone(&self) -> Self {
        LookupTable {
            arena: self.arena.clone(),
            _key: PhantomData,
        }
    }
}

impl<T: fmt::Debug, K: Key> fmt::Debug for LookupTable<T, K> {
    /// Formats as a map from key to value.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// table.insert(1);
    /// assert_eq!(format!("{table:?}"), "{Id(0v1): 1}");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a, T, K: Key> IntoIterator for &'a LookupTable<T, K> {
    type Item = (K, &'a T);
    type IntoIter = Iter<'a, T, K>;

    /// Iterates `(key, &value)` in slot order.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// table.insert(1);
    /// for (_, value) in &table {
    ///     assert_eq!(*value, 1);
    /// }
    /// ```
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T, K: Key> IntoIterator for &'a mut LookupTable<T, K> {
    type Item = (K, &'a mut T);
    type IntoIter = IterMut<'a, T, K>;

    /// Iterates `(key, &mut value)` in slot order.
    ///
    /// ```
    /// let mut table = handlekit::LookupTable::new();
    /// table.insert(1);
    /// for (_, value) in &mut table {
    ///     *value += 1;
    /// }
    /// ```
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

crate::slot_iter::borrowing_iterators!(
    owner: "LookupTable",
    noun: "lookup_table",
    make: "{ let mut t = handlekit::LookupTable::new(); t.insert(1); t.insert(2); t }",
    key: Id,
    shared: LookupRawIter,
    exclusive: LookupRawIterMut,
);

/// Serde support: a `LookupTable` serializes exactly as an
/// [`IdTable`](crate::IdTable) of the same slots does (see its module), and
/// deserializes with the same validation.
#[cfg(feature = "serde")]
mod serde_impl {
    use core::marker::PhantomData;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::LookupTable;
    use crate::id_table::serde_impl::{deserialize_arena, serialize_arena};
    use crate::raw::InterleavedLayout;
    use crate::Key;

    impl<T: Serialize, K: Key> Serialize for LookupTable<T, K> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serialize_arena(&self.arena, serializer)
        }
    }

    impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for LookupTable<T, K> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            Ok(LookupTable {
                arena: deserialize_arena::<T, K, InterleavedLayout, D>(deserializer)?,
                _key: PhantomData,
            })
        }
    }
}
