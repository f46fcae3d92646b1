//! [`SlotTable`], the one table type behind [`IdTable`](crate::IdTable),
//! [`LookupTable`](crate::LookupTable), [`Pool`](crate::Pool) and
//! [`Hive`](crate::Hive): every method and trait impl they share, written
//! once over the raw container their [`TableStorage`] names. What only
//! some of them have is beside their aliases: the slot layouts' reuse
//! policy and detaching in `id_table/mod.rs`, the blocks' pointers and
//! memory figures in `stable.rs`, each container's constructors and block
//! sizes in `pool/mod.rs` and `hive/mod.rs`.

use core::fmt;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

use crate::iter::{Drain, IntoIter, Iter, IterMut, Keys, TableStorage, Values, ValuesMut};
#[cfg(feature = "rayon")]
use crate::iter::{ParIter, ParIterMut};
use crate::layout::Split;
use crate::raw::table::RawTable;
use crate::raw::TakeSlots;
use crate::{CapacityError, Id, Key};

/// A table of values behind generational keys, generic over its storage:
/// name it by its aliases.
///
/// | alias | storage `S` | values move when it grows | lookup reads |
/// | --- | --- | --- | --- |
/// | [`IdTable<T, K>`](crate::IdTable) | [`Split`]: one array of state words, one of values | yes | two cache lines |
/// | [`LookupTable<T, K>`](crate::LookupTable) | [`Interleaved`](crate::layout::Interleaved): each state word beside its value | yes | one cache line |
/// | [`Pool<T, K>`](crate::Pool) | [`PoolBlocks`](crate::iter::PoolBlocks): blocks of one size | never | two cache lines |
/// | [`Hive<T, K>`](crate::Hive) | [`HiveBlocks`](crate::iter::HiveBlocks): blocks of growing size, occupancy bits | never | two cache lines |
///
/// Every method in the first blocks below exists for all four: the
/// examples use `IdTable`, and read the same with the others. The later
/// blocks hold what only some storages have. [`StableTable`](crate::StableTable)
/// names the two block storages together.
///
/// A `SlotTable` is invariant in `T`: its field is the storage's raw
/// container, a type the compiler cannot see through.
///
/// ```
/// use handlekit::iter::HiveBlocks;
/// use handlekit::layout::Interleaved;
/// use handlekit::{Hive, Id, LookupTable, SlotTable};
///
/// let mut table: SlotTable<&str, Id, Interleaved> = LookupTable::new();
/// let key = table.insert("one cache line per lookup");
/// assert_eq!(table[key], "one cache line per lookup");
///
/// let mut hive: SlotTable<&str, Id, HiveBlocks> = Hive::new();
/// let key = hive.insert("stays put");
/// assert_eq!(hive[key], "stays put");
/// ```
pub struct SlotTable<T, K: Key = Id, S: TableStorage = Split> {
    /// The raw container, typed by `K`: it hands out keys of that type
    /// itself, so the methods below need no `unsafe` to make them.
    pub(crate) raw: S::Raw<T, K>,
    _key: PhantomData<fn(K) -> K>,
}

impl<T, K: Key, S: TableStorage> SlotTable<T, K, S> {
    /// The table over `raw`.
    pub(crate) const fn from_raw(raw: S::Raw<T, K>) -> Self {
        SlotTable {
            raw,
            _key: PhantomData,
        }
    }

    /// Creates an empty table for any key type (a pool or hive with the
    /// default block sizes). It allocates nothing until the first
    /// insertion. The same as `default`; a `const fn`, so it can make a
    /// `static`'s initial value.
    ///
    /// ```
    /// handlekit::define_key! { struct EnemyKey(u32; index_bits = 20); }
    /// let mut enemies = handlekit::IdTable::with_key();
    /// let orc: EnemyKey = enemies.insert("orc");
    /// assert_eq!(enemies[orc], "orc");
    /// ```
    #[must_use]
    pub const fn with_key() -> Self {
        Self::from_raw(<S::Raw<T, K> as RawTable<T>>::EMPTY)
    }

    /// Creates an empty table for any key type, with room for at least
    /// `capacity` values.
    ///
    /// # Panics
    ///
    /// If the key type cannot index `capacity` values, or allocation
    /// fails.
    ///
    /// ```
    /// use handlekit::{Id32, IdTable};
    /// let table: IdTable<u32, Id32> = IdTable::with_capacity_and_key(100);
    /// assert!(table.capacity() >= 100);
    /// ```
    #[must_use]
    pub fn with_capacity_and_key(capacity: usize) -> Self {
        let mut table = Self::with_key();
        table.reserve(capacity);
        table
    }

    /// Builds a table from values, keyed in iteration order (the first value
    /// gets index 0).
    ///
    /// ```
    /// let table: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values(["a", "b"]);
    /// assert_eq!(table.len(), 2);
    /// ```
    #[must_use]
    pub fn from_iter_values(values: impl IntoIterator<Item = T>) -> Self {
        let values = values.into_iter();
        let mut table = Self::with_capacity_and_key(values.size_hint().0);
        for value in values {
            table.insert(value);
        }
        table
    }

    /// The number of live values.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// table.insert('a');
    /// assert_eq!(table.len(), 1);
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether the table holds no values.
    ///
    /// ```
    /// assert!(handlekit::IdTable::<u8>::new().is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.raw.len() == 0
    }

    /// The number of values the table can hold without allocating: the
    /// slot array's room (a slot table), or every slot of the blocks
    /// allocated so far (a pool or hive). Retired slots are not counted.
    ///
    /// ```
    /// let table: handlekit::IdTable<u8> = handlekit::IdTable::with_fixed_capacity(10);
    /// assert_eq!(table.capacity(), 10);
    ///
    /// let mut pool: handlekit::Pool<u8> = handlekit::Pool::with_block_size(8);
    /// assert_eq!(pool.capacity(), 0);
    /// pool.insert(1);
    /// assert_eq!(pool.capacity(), 8);
    /// ```
    #[inline]
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.raw.capacity()
    }

    /// The fixed capacity, for a table made by `with_fixed_capacity`.
    ///
    /// ```
    /// let table: handlekit::IdTable<u8> = handlekit::IdTable::with_fixed_capacity(5);
    /// assert_eq!(table.fixed_capacity(), Some(5));
    /// let pool: handlekit::Pool<u8> = handlekit::Pool::with_fixed_capacity(3);
    /// assert_eq!(pool.fixed_capacity(), Some(3));
    /// assert_eq!(handlekit::Hive::<u8>::new().fixed_capacity(), None);
    /// ```
    #[inline]
    #[must_use]
    pub fn fixed_capacity(&self) -> Option<usize> {
        self.raw.fixed_capacity()
    }

    /// Bytes of heap memory the table holds. A slot table: its slot array
    /// (state words and values, `4 + P` bytes a slot, see
    /// [`IdTable`](crate::IdTable)). A pool: its state array (4 bytes per
    /// slot, and the room it has grown into), its blocks' payloads (the
    /// value, or a 4-byte link, whichever is larger, per slot) and the
    /// directory of blocks (8 bytes per block).
    /// A hive: its blocks (slots, headers and occupancy bits) and its
    /// tables.
    ///
    /// ```
    /// let table: handlekit::IdTable<u64> = handlekit::IdTable::with_fixed_capacity(64);
    /// assert_eq!(table.heap_bytes(), 64 * (4 + 8));
    /// let pool: handlekit::Pool<u64> = handlekit::Pool::with_fixed_capacity(64);
    /// assert_eq!(pool.heap_bytes(), 64 * (4 + 8) + 8);
    /// let hive: handlekit::Hive<u64> = handlekit::Hive::with_capacity(64);
    /// assert!(hive.heap_bytes() >= 64 * 16 + 8);
    /// ```
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.raw.heap_bytes()
    }

    /// The number of slots retired because their generation ran out.
    ///
    /// A retired slot keeps its memory (one slot, `size_of` a slot) and is
    /// never reused, so that no key is issued twice. With [`Id`] a slot
    /// retires after 2³¹ − 1 occupants; with a 4-bit generation, after 15.
    /// A slot table's [`Reuse::Fifo`](crate::Reuse::Fifo) spreads reuse
    /// over many slots and delays retirement; a hive's freed block takes
    /// its retired slots with it.
    ///
    /// ```
    /// handlekit::define_key! { struct Narrow(u32; index_bits = 30); } // 2 generation bits
    /// let mut table: handlekit::IdTable<u8, Narrow> = handlekit::IdTable::default();
    /// for _ in 0..3 {
    ///     let key = table.insert(0);
    ///     table.remove(key);
    /// }
    /// assert_eq!(table.retired_count(), 1);
    /// ```
    #[inline]
    #[must_use]
    pub fn retired_count(&self) -> usize {
        self.raw.retired()
    }

    /// Reserves room for at least `additional` more values.
    ///
    /// # Panics
    ///
    /// If the key type cannot index that many slots, the table has a fixed
    /// capacity that is too small, or the allocation fails. See
    /// [`try_reserve`](Self::try_reserve).
    ///
    /// ```
    /// let mut table: handlekit::IdTable<u8> = handlekit::IdTable::new();
    /// table.reserve(1000);
    /// assert!(table.capacity() >= 1000);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        if let Err(err) = self.raw.try_reserve(additional) {
            panic!("{}::reserve({additional}): {err}", S::NAME);
        }
    }

    /// Reserves room for at least `additional` more values, or reports why
    /// it cannot (a pool's or hive's blocks allocated before the failure
    /// stay).
    ///
    /// ```
    /// handlekit::define_key! { struct Small(u32; index_bits = 4); }
    /// let mut table: handlekit::IdTable<u8, Small> = handlekit::IdTable::default();
    /// assert!(table.try_reserve(16).is_ok());
    /// assert!(table.try_reserve(17).is_err());
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        self.raw.try_reserve(additional)
    }

    /// Removes every value. Every slot keeps its generation, so keys issued
    /// before stay stale. A slot table's detached slots (see
    /// [`detach`](Self::detach)) stay detached; a pool's or hive's blocks
    /// stay allocated (a hive frees them in
    /// [`shrink_to_fit`](crate::Hive::shrink_to_fit)).
    ///
    /// If a value's `Drop` panics, the other values are still dropped and
    /// the table is left empty; then the panic propagates.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// table.clear();
    /// assert!(table.is_empty());
    /// table.insert(2);
    /// assert_eq!(table.get(key), None);
    /// ```
    pub fn clear(&mut self) {
        self.raw.clear();
    }

    /// Inserts a value and returns its key.
    ///
    /// # Panics
    ///
    /// If the table is full: the key's index bits cannot name another slot,
    /// or a fixed capacity is used up. See [`try_insert`](Self::try_insert).
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(42);
    /// assert_eq!(table[key], 42);
    /// ```
    // Forced: the fast paths are small, and a call would cost more than
    // the operation (measured in the comparison runner).
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> K {
        match self.try_insert(value) {
            Ok(key) => key,
            Err(err) => insert_failed::<S>(err),
        }
    }

    /// Inserts a value and returns its key, or returns a [`CapacityError`]
    /// if the table is full (a fixed capacity used up, or the key type has
    /// no index left); the value is dropped then.
    ///
    /// ```
    /// let mut table: handlekit::IdTable<u8> = handlekit::IdTable::with_fixed_capacity(1);
    /// assert!(table.try_insert(1).is_ok());
    /// assert!(table.try_insert(2).unwrap_err().is_fixed_capacity());
    ///
    /// handlekit::define_key! { struct Tiny(u32; index_bits = 1); }
    /// let mut hive: handlekit::Hive<u8, Tiny> = handlekit::Hive::default();
    /// assert!(hive.try_insert(1).is_ok() && hive.try_insert(2).is_ok());
    /// assert!(hive.try_insert(3).unwrap_err().is_index_space());
    /// ```
    #[inline(always)]
    pub fn try_insert(&mut self, value: T) -> Result<K, CapacityError> {
        let (_, key) = self.raw.try_insert_keyed(|_| value)?;
        Ok(key)
    }

    /// Inserts the value `make(key)`, where `key` is the key it will have,
    /// and returns that key. Useful for values that store their own key. If
    /// `make` panics, the table is unchanged.
    ///
    /// # Panics
    ///
    /// If the table is full, as for [`insert`](Self::insert).
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert_with_key(|key| (key, "self-aware"));
    /// assert_eq!(table[key].0, key);
    /// ```
    pub fn insert_with_key(&mut self, make: impl FnOnce(K) -> T) -> K {
        match self.raw.try_insert_keyed(make) {
            Ok((_, key)) => key,
            Err(err) => insert_failed::<S>(err),
        }
    }

    /// Inserts the value `make(key)` returns, where `key` is the key it
    /// will have, and returns that key; if `make` returns an error, inserts
    /// nothing and returns the error. If `make` panics, the table is
    /// unchanged.
    ///
    /// # Panics
    ///
    /// If the table is full, as for [`insert`](Self::insert) (before
    /// `make` is called).
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.try_insert_with_key(|key| Ok::<_, ()>((key, 1))).unwrap();
    /// assert_eq!(table[key], (key, 1));
    /// assert_eq!(table.try_insert_with_key(|_| Err("no")), Err("no"));
    /// assert_eq!(table.len(), 1);
    /// ```
    pub fn try_insert_with_key<E>(&mut self, make: impl FnOnce(K) -> Result<T, E>) -> Result<K, E> {
        let key = match self.raw.next_key() {
            Ok(key) => key,
            Err(err) => insert_failed::<S>(err),
        };
        let value = make(key)?;
        match self.raw.try_insert_keyed(|filled| {
            debug_assert!(filled == key);
            value
        }) {
            Ok(_) => Ok(key),
            Err(err) => insert_failed::<S>(err),
        }
    }

    /// Whether `key` names a live value.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// assert!(table.contains_key(key));
    /// table.remove(key);
    /// assert!(!table.contains_key(key));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_key(&self, key: K) -> bool {
        self.raw
            .contains(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// The value for `key`, or `None` if the key is stale or foreign.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert("x");
    /// assert_eq!(table.get(key), Some(&"x"));
    /// ```
    #[inline]
    #[must_use]
    pub fn get(&self, key: K) -> Option<&T> {
        self.raw
            .get(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// The value for `key`, mutably, or `None` if the key is stale or
    /// foreign.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// *table.get_mut(key).unwrap() += 1;
    /// assert_eq!(table[key], 2);
    /// ```
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self, key: K) -> Option<&mut T> {
        self.raw
            .get_mut(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// The value for `key`, without checking the key.
    ///
    /// # Safety
    ///
    /// `key` must name a live value of this table: one returned by an
    /// insertion into this table and not removed since.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(7);
    /// // SAFETY: `key` was just returned by `insert`.
    /// assert_eq!(unsafe { *table.get_unchecked(key) }, 7);
    /// ```
    #[inline]
    #[must_use]
    pub unsafe fn get_unchecked(&self, key: K) -> &T {
        debug_assert!(
            self.contains_key(key),
            "get_unchecked with dead key {key:?}"
        );
        // SAFETY: the caller guarantees `key` is live, so its slot exists
        // and is occupied.
        unsafe { self.raw.get_unchecked(key.index()) }
    }

    /// The value for `key`, mutably, without checking the key.
    ///
    /// # Safety
    ///
    /// `key` must name a live value of this table.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(7);
    /// // SAFETY: `key` was just returned by `insert`.
    /// unsafe { *table.get_unchecked_mut(key) = 8 };
    /// assert_eq!(table[key], 8);
    /// ```
    #[inline]
    #[must_use]
    pub unsafe fn get_unchecked_mut(&mut self, key: K) -> &mut T {
        debug_assert!(
            self.contains_key(key),
            "get_unchecked_mut with dead key {key:?}"
        );
        // SAFETY: the caller guarantees `key` is live.
        unsafe { self.raw.get_unchecked_mut(key.index()) }
    }

    /// Mutable references to the values of `N` keys at once, or `None` if
    /// any key is stale or foreign, or if two keys are the same.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let a = table.insert(1);
    /// let b = table.insert(2);
    /// let [x, y] = table.get_disjoint_mut([a, b]).unwrap();
    /// core::mem::swap(x, y);
    /// assert_eq!((table[a], table[b]), (2, 1));
    /// assert!(table.get_disjoint_mut([a, a]).is_none());
    /// ```
    #[must_use]
    pub fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut T; N]> {
        self.raw.get_disjoint_mut(
            keys.map(|key| (key.index(), crate::raw::keyed::lookup_generation(key))),
        )
    }

    /// Removes the value for `key` and returns it, or `None` if the key is
    /// stale or foreign.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(5);
    /// assert_eq!(table.remove(key), Some(5));
    /// assert_eq!(table.remove(key), None);
    /// ```
    #[inline(always)]
    pub fn remove(&mut self, key: K) -> Option<T> {
        self.raw
            .remove(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// Keeps only the values for which `keep(key, &mut value)` returns
    /// `true`, visiting them in slot order.
    ///
    /// If `keep` panics, or a removed value's `Drop` panics, the values not
    /// yet visited stay in the table.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// for n in 0..10 {
    ///     table.insert(n);
    /// }
    /// table.retain(|_, n| *n % 2 == 0);
    /// assert_eq!(table.len(), 5);
    /// ```
    pub fn retain(&mut self, keep: impl FnMut(K, &mut T) -> bool) {
        self.raw.retain_keyed(keep);
    }

    /// Removes every value and yields it with its key, in slot order.
    ///
    /// The values not yet yielded when the `Drain` is dropped are dropped
    /// then. If the `Drain` is leaked (`mem::forget`), they stay in the
    /// table.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert("x");
    /// assert_eq!(table.drain().collect::<Vec<_>>(), [(key, "x")]);
    /// assert!(table.is_empty());
    /// ```
    pub fn drain(&mut self) -> Drain<'_, T, K, S::Raw<T, K>> {
        Drain::new(&mut self.raw)
    }

    /// Checks the table's internal invariants (state words, counts, the
    /// free list and the refill) and panics if one is broken. O(slots). For tests and
    /// fuzzing; not part of the stable API.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        self.raw.check_invariants();
    }

    /// Iterates `(key, &value)` in slot order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// assert_eq!(table.iter().collect::<Vec<_>>(), [(key, &1)]);
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_, T, K, S> {
        Iter::new(self.raw.keyed_iter())
    }

    /// Iterates `(key, &mut value)` in slot order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// for (_, value) in table.iter_mut() {
    ///     *value *= 10;
    /// }
    /// assert_eq!(table[key], 10);
    /// ```
    #[inline]
    pub fn iter_mut(&mut self) -> IterMut<'_, T, K, S> {
        IterMut::new(self.raw.keyed_iter_mut())
    }

    /// Iterates the keys of the live values, in slot order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// assert_eq!(table.keys().collect::<Vec<_>>(), [key]);
    /// ```
    #[inline]
    pub fn keys(&self) -> Keys<'_, T, K, S> {
        Keys::new(self.raw.keyed_iter())
    }

    /// Iterates the live values, in slot order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// table.insert(1);
    /// table.insert(2);
    /// assert_eq!(table.values().sum::<i32>(), 3);
    /// ```
    #[inline]
    pub fn values(&self) -> Values<'_, T, S> {
        Values::new(self.raw.iter())
    }

    /// Iterates the live values mutably, in slot order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// table.values_mut().for_each(|v| *v += 1);
    /// assert_eq!(table[key], 2);
    /// ```
    #[inline]
    pub fn values_mut(&mut self) -> ValuesMut<'_, T, S> {
        ValuesMut::new(self.raw.iter_mut())
    }
}

impl<T, S: TableStorage> SlotTable<T, S::DefaultKey, S> {
    /// Creates an empty table keyed by its default key type: [`Id`], or
    /// [`PoolKey`](crate::PoolKey) for a [`Pool`](crate::Pool). It
    /// allocates nothing until the first insertion.
    ///
    /// For another key type, use [`with_key`](Self::with_key) (or
    /// `default`).
    ///
    /// ```
    /// let table: handlekit::IdTable<u32> = handlekit::IdTable::new();
    /// assert!(table.is_empty());
    /// let hive = handlekit::Hive::<u32>::new();
    /// assert_eq!(hive.block_sizes(), (1024, 8192));
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self::with_key()
    }

    /// Creates an empty table keyed by its default key type, with room for
    /// at least `capacity` values. For another key type, use
    /// [`with_capacity_and_key`](Self::with_capacity_and_key).
    ///
    /// # Panics
    ///
    /// If the key type cannot index `capacity` values, or allocation
    /// fails.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::with_capacity(100);
    /// let key = table.insert(1u8); // keyed by `Id`: no annotation needed
    /// assert!(table.capacity() >= 100);
    /// # let _: handlekit::Id = key;
    /// ```
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_and_key(capacity)
    }
}

#[cfg(feature = "rayon")]
impl<T: Sync, K: Key, S: TableStorage> SlotTable<T, K, S> {
    /// Iterates `(key, &value)` in parallel with rayon. The work is cut
    /// between threads where the storage divides (64 slots of a slot
    /// array, a block of a `Pool` or `Hive`), and each part runs the
    /// storage's own word-at-a-time loop.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let table: handlekit::IdTable<u64> = (0..10_000).collect();
    /// assert_eq!(table.par_iter().map(|(_, v)| v).sum::<u64>(), 49_995_000);
    /// assert!(table.par_iter().all(|(key, v)| table[key] == *v));
    /// ```
    pub fn par_iter(&self) -> ParIter<'_, T, K, S> {
        ParIter::new(self.raw.keyed_iter())
    }
}

#[cfg(feature = "rayon")]
impl<T: Send, K: Key, S: TableStorage> SlotTable<T, K, S> {
    /// Iterates `(key, &mut value)` in parallel with rayon, cut between
    /// threads as [`par_iter`](Self::par_iter) is.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let mut table: handlekit::IdTable<u64> = (0..10_000).collect();
    /// table.par_iter_mut().for_each(|(_, v)| *v *= 2);
    /// assert_eq!(table.values().sum::<u64>(), 99_990_000);
    /// ```
    pub fn par_iter_mut(&mut self) -> ParIterMut<'_, T, K, S> {
        ParIterMut::new(self.raw.keyed_iter_mut())
    }
}

#[cold]
#[track_caller]
fn insert_failed<S: TableStorage>(err: CapacityError) -> ! {
    panic!("{}::insert: {err}", S::NAME)
}

#[cold]
#[track_caller]
fn invalid_key<K: Key, S: TableStorage>(key: K) -> ! {
    panic!(
        "{}: no live value for key {key:?} (stale, or from another {})",
        S::NAME,
        S::NOUN
    )
}

impl<T, K: Key, S: TableStorage> Default for SlotTable<T, K, S> {
    /// An empty table.
    ///
    /// ```
    /// let table: handlekit::IdTable<u8, handlekit::Id32> = Default::default();
    /// assert!(table.is_empty());
    /// ```
    fn default() -> Self {
        Self::with_key()
    }
}

impl<T: Clone, K: Key, S: TableStorage> Clone for SlotTable<T, K, S>
where
    S::Raw<T, K>: Clone,
{
    /// A copy with the same keys, generations and free lists (and a slot
    /// table's reuse policy; a pool's or hive's block sizes): the copy
    /// issues the same keys as the original would.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(String::from("x"));
    /// let mut copy = table.clone();
    /// assert_eq!(copy[key], "x");
    /// assert_eq!(copy.insert(String::new()), table.insert(String::new()));
    /// ```
    fn clone(&self) -> Self {
        Self::from_raw(self.raw.clone())
    }

    /// Makes `self` a copy of `source`, reusing `self`'s allocation.
    ///
    /// ```
    /// let source: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values([1, 2, 3]);
    /// let mut target = handlekit::IdTable::new();
    /// target.clone_from(&source);
    /// assert_eq!(target.len(), 3);
    /// ```
    fn clone_from(&mut self, source: &Self) {
        self.raw.clone_from(&source.raw);
    }
}

impl<T: fmt::Debug, K: Key, S: TableStorage> fmt::Debug for SlotTable<T, K, S> {
    /// Formats as a map from key to value.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// table.insert('a');
    /// assert_eq!(format!("{table:?}"), "{Id(0v1): 'a'}");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<T, K: Key, S: TableStorage> Index<K> for SlotTable<T, K, S> {
    type Output = T;

    /// # Panics
    ///
    /// If `key` is stale or foreign; the message names the key.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// assert_eq!(table[key], 1);
    /// ```
    #[inline]
    #[track_caller]
    fn index(&self, key: K) -> &T {
        match self.get(key) {
            Some(value) => value,
            None => invalid_key::<K, S>(key),
        }
    }
}

impl<T, K: Key, S: TableStorage> IndexMut<K> for SlotTable<T, K, S> {
    /// # Panics
    ///
    /// If `key` is stale or foreign; the message names the key.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// table[key] = 2;
    /// assert_eq!(table[key], 2);
    /// ```
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, key: K) -> &mut T {
        match self.get_mut(key) {
            Some(value) => value,
            None => invalid_key::<K, S>(key),
        }
    }
}

impl<T: PartialEq, K: Key, S: TableStorage> PartialEq for SlotTable<T, K, S> {
    /// Two tables are equal when they hold the same values under the same
    /// keys.
    ///
    /// ```
    /// let a: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values([1, 2]);
    /// let b: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values([1, 2]);
    /// assert_eq!(a, b);
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(key, value)| other.get(key) == Some(value))
    }
}

impl<T: Eq, K: Key, S: TableStorage> Eq for SlotTable<T, K, S> {}

impl<T, K: Key, S: TableStorage> FromIterator<T> for SlotTable<T, K, S> {
    /// The same as [`from_iter_values`](Self::from_iter_values).
    ///
    /// ```
    /// use handlekit::{IdTable, Key};
    /// let table: IdTable<&str> = ["a", "b"].into_iter().collect();
    /// assert_eq!(table.keys().map(|k| k.index()).collect::<Vec<_>>(), [0, 1]);
    /// ```
    fn from_iter<I: IntoIterator<Item = T>>(values: I) -> Self {
        Self::from_iter_values(values)
    }
}

impl<T, K: Key, S: TableStorage> Extend<T> for SlotTable<T, K, S> {
    /// Inserts every value; the keys are discarded.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// table.extend([1, 2, 3]);
    /// assert_eq!(table.len(), 3);
    /// ```
    fn extend<I: IntoIterator<Item = T>>(&mut self, values: I) {
        for value in values {
            self.insert(value);
        }
    }
}

impl<'a, T, K: Key, S: TableStorage> IntoIterator for &'a SlotTable<T, K, S> {
    type Item = (K, &'a T);
    type IntoIter = Iter<'a, T, K, S>;

    /// ```
    /// let table: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values([1]);
    /// for (key, value) in &table {
    ///     assert_eq!(table[key], *value);
    /// }
    /// ```
    fn into_iter(self) -> Iter<'a, T, K, S> {
        self.iter()
    }
}

impl<'a, T, K: Key, S: TableStorage> IntoIterator for &'a mut SlotTable<T, K, S> {
    type Item = (K, &'a mut T);
    type IntoIter = IterMut<'a, T, K, S>;

    /// ```
    /// let mut table: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values([1]);
    /// for (_, value) in &mut table {
    ///     *value += 1;
    /// }
    /// assert_eq!(table.values().next(), Some(&2));
    /// ```
    fn into_iter(self) -> IterMut<'a, T, K, S> {
        self.iter_mut()
    }
}

impl<T, K: Key, S: TableStorage> IntoIterator for SlotTable<T, K, S> {
    type Item = (K, T);
    type IntoIter = IntoIter<T, K, S::Raw<T, K>>;

    /// ```
    /// let table: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values([String::from("x")]);
    /// let all: Vec<_> = table.into_iter().map(|(_, v)| v).collect();
    /// assert_eq!(all, ["x"]);
    /// ```
    fn into_iter(self) -> IntoIter<T, K, S::Raw<T, K>> {
        IntoIter::new(self.raw)
    }
}
