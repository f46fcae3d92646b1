//! [`IdTable`] and [`SlotTable`]: the array with holes behind
//! generational keys, written once for both slot layouts.

use core::fmt;
use core::marker::PhantomData;
use core::ops::{Index, IndexMut};

pub use crate::iter::{Iter, IterMut, Keys, Values, ValuesMut};
use crate::layout::{Layout, Split};
use crate::raw::{KeyLimits, SlotArena};
use crate::{CapacityError, Id, Key, Reuse};

#[cfg(feature = "rayon")]
mod par;
#[cfg(feature = "serde")]
pub(crate) mod serde_impl;

#[cfg(feature = "rayon")]
pub use crate::slot_par::{ParIter, ParIterMut};

/// An array with holes: values stay where they are inserted, and a
/// generational key finds them with one bounds check and one compare.
///
/// Each slot has a 32-bit state word (a vacant bit plus the generation) in
/// one array and its value in a second, parallel array. A lookup reads the
/// state word and the value, two loads whose addresses depend only on the
/// key, so they overlap. Vacant slots hold the free-list link in the
/// value's own memory. The state words are also the occupancy: a write
/// changes its own slot and nothing else, and iteration turns 64 state
/// words into a mask at a time and reads only the live values.
///
/// | operation | cost |
/// | --- | --- |
/// | `insert`, `remove`, `get`, `contains_key` | O(1) |
/// | iteration | O(len + slots), reading 4 bytes per slot and the live values |
/// | `clear`, `retain` | O(slots) |
///
/// Memory: `4 + P` bytes per slot, where `P` is `max(size_of::<T>(), 4)`
/// rounded up to `max(align_of::<T>(), 4)` (12 bytes for `u64`). Slots are never returned to the allocator (that would let stale
/// keys come back to life), so memory follows the peak number of values.
///
/// # Stale keys
///
/// Removing a value bumps its slot's generation, so every key to it goes
/// stale: `get` returns `None` and `Index` panics. A slot whose generation
/// reaches [`Key::MAX_GENERATION`] is *retired*: it keeps its memory and is
/// never reused, so a stale key never names a later value, whatever the key
/// width and the [`Reuse`] policy. See [`IdTable::retired_count`].
///
/// # Examples
///
/// ```
/// use handlekit::IdTable;
///
/// let mut table = IdTable::new();
/// let a = table.insert("apple");
/// let b = table.insert("banana");
/// assert_eq!(table[a], "apple");
///
/// assert_eq!(table.remove(a), Some("apple"));
/// assert_eq!(table.get(a), None); // stale
///
/// let c = table.insert("cherry"); // reuses a's slot, with a new generation
/// assert_eq!(table.get(a), None);
/// assert_eq!(table[c], "cherry");
/// assert_eq!(table.values().copied().collect::<Vec<_>>(), ["cherry", "banana"]);
/// # let _ = b;
/// ```
pub type IdTable<T, K = Id> = SlotTable<T, K, Split>;

/// The array with holes behind [`IdTable`] and
/// [`LookupTable`](crate::LookupTable), written once for both slot
/// [layouts](crate::layout): `IdTable<T, K>` is `SlotTable<T, K, Split>`
/// and `LookupTable<T, K>` is `SlotTable<T, K, Interleaved>`. Every method
/// below exists for both; name the table by its alias.
///
/// ```
/// use handlekit::layout::Interleaved;
/// use handlekit::{Id, LookupTable, SlotTable};
///
/// let mut table: SlotTable<&str, Id, Interleaved> = LookupTable::new();
/// let key = table.insert("one cache line per lookup");
/// assert_eq!(table[key], "one cache line per lookup");
/// ```
pub struct SlotTable<T, K: Key = Id, L: Layout = Split> {
    /// The slots, typed by `K` (so they hand out keys themselves).
    pub(crate) arena: SlotArena<T, K, L>,
    _key: PhantomData<fn(K) -> K>,
}

impl<T, L: Layout> SlotTable<T, Id, L> {
    /// Creates an empty table keyed by [`Id`]. It allocates nothing until
    /// the first insertion.
    ///
    /// For another key type, use [`IdTable::with_key`] (or
    /// [`IdTable::default`]).
    ///
    /// ```
    /// let table: handlekit::IdTable<u32> = handlekit::IdTable::new();
    /// assert!(table.is_empty());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self::with_key()
    }

    /// Creates an empty table keyed by [`Id`], with room for `capacity`
    /// values. For another key type, use
    /// [`with_capacity_and_key`](IdTable::with_capacity_and_key).
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

impl<T, K: Key, L: Layout> SlotTable<T, K, L> {
    /// The table over `arena`.
    #[cfg(feature = "serde")]
    pub(crate) fn from_arena(arena: SlotArena<T, K, L>) -> Self {
        SlotTable {
            arena,
            _key: PhantomData,
        }
    }

    /// Creates an empty table for any key type. It allocates nothing until
    /// the first insertion. The same as [`IdTable::default`].
    ///
    /// ```
    /// handlekit::define_key! { struct EnemyKey(u32; index_bits = 20); }
    /// let mut enemies = handlekit::IdTable::with_key();
    /// let orc: EnemyKey = enemies.insert("orc");
    /// assert_eq!(enemies[orc], "orc");
    /// ```
    #[must_use]
    pub const fn with_key() -> Self {
        SlotTable {
            arena: SlotArena::new(KeyLimits::of::<K>()),
            _key: PhantomData,
        }
    }

    /// Creates an empty table for any key type, with room for `capacity`
    /// values.
    ///
    /// ```
    /// use handlekit::{Id32, IdTable};
    /// let table: IdTable<u32, Id32> = IdTable::with_capacity_and_key(100);
    /// assert!(table.capacity() >= 100);
    /// ```
    #[must_use]
    pub fn with_capacity_and_key(capacity: usize) -> Self {
        SlotTable {
            arena: SlotArena::with_capacity(KeyLimits::of::<K>(), capacity),
            _key: PhantomData,
        }
    }

    /// Creates an empty table with the given slot [`Reuse`] policy.
    ///
    /// ```
    /// use handlekit::{IdTable, Reuse};
    /// let table: IdTable<u32> = IdTable::with_reuse(Reuse::Fifo { min_free: 1024 });
    /// assert_eq!(table.reuse(), Reuse::Fifo { min_free: 1024 });
    /// ```
    #[must_use]
    pub fn with_reuse(reuse: Reuse) -> Self {
        let mut table = Self::default();
        table.arena.set_reuse(reuse);
        table
    }

    /// Creates an empty table that allocates room for `capacity` values now
    /// and never reallocates: the address of a value stays fixed for as long
    /// as it lives. When it is full, [`try_insert`](Self::try_insert)
    /// returns a [`CapacityError`].
    ///
    /// # Panics
    ///
    /// If `capacity` is more than the key type can index.
    ///
    /// ```
    /// use handlekit::IdTable;
    /// let mut table: IdTable<u64> = IdTable::with_fixed_capacity(2);
    /// let a = table.insert(1);
    /// let address = &table[a] as *const u64;
    /// table.insert(2);
    /// assert!(table.try_insert(3).is_err());
    /// assert_eq!(&table[a] as *const u64, address);
    /// ```
    #[must_use]
    pub fn with_fixed_capacity(capacity: usize) -> Self {
        SlotTable {
            arena: SlotArena::with_fixed_capacity(KeyLimits::of::<K>(), capacity),
            _key: PhantomData,
        }
    }

    /// The slot [`Reuse`] policy.
    ///
    /// ```
    /// assert_eq!(handlekit::IdTable::<u8>::new().reuse(), handlekit::Reuse::Lifo);
    /// ```
    #[must_use]
    pub fn reuse(&self) -> Reuse {
        self.arena.reuse()
    }

    /// Changes the slot [`Reuse`] policy. Slots freed from now on follow the
    /// new policy; the free list keeps its order.
    ///
    /// ```
    /// use handlekit::{IdTable, Reuse};
    /// let mut table: IdTable<u8> = IdTable::with_fixed_capacity(64);
    /// table.set_reuse(Reuse::Fifo { min_free: 8 });
    /// assert_eq!(table.reuse(), Reuse::Fifo { min_free: 8 });
    /// ```
    pub fn set_reuse(&mut self, reuse: Reuse) {
        self.arena.set_reuse(reuse);
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
        self.arena.len()
    }

    /// Whether the table holds no values.
    ///
    /// ```
    /// assert!(handlekit::IdTable::<u8>::new().is_empty());
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
    /// let table: handlekit::IdTable<u8> = handlekit::IdTable::with_fixed_capacity(10);
    /// assert_eq!(table.capacity(), 10);
    /// ```
    #[inline]
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.arena.capacity()
    }

    /// The number of slots retired because their generation ran out.
    ///
    /// A retired slot keeps its memory (one slot, `size_of` a slot) and is
    /// never reused, so that no key is issued twice. With [`Id`] a slot
    /// retires after 2³¹ − 1 occupants; with a 4-bit generation, after 15.
    /// [`Reuse::Fifo`] spreads reuse over many slots and delays retirement.
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
        self.arena.retired()
    }

    /// Reserves room for at least `additional` more values.
    ///
    /// # Panics
    ///
    /// If the key type cannot index that many slots, the table has a fixed
    /// capacity that is too small, or the allocation fails.
    ///
    /// ```
    /// let mut table: handlekit::IdTable<u8> = handlekit::IdTable::new();
    /// table.reserve(1000);
    /// assert!(table.capacity() >= 1000);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        if let Err(err) = self.arena.try_reserve(additional) {
            panic!("IdTable::reserve({additional}): {err}");
        }
    }

    /// Reserves room for at least `additional` more values, or reports why
    /// it cannot.
    ///
    /// ```
    /// handlekit::define_key! { struct Small(u32; index_bits = 4); }
    /// let mut table: handlekit::IdTable<u8, Small> = handlekit::IdTable::default();
    /// assert!(table.try_reserve(16).is_ok());
    /// assert!(table.try_reserve(17).is_err());
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        self.arena.try_reserve(additional)
    }

    /// Frees spare capacity. Slots that once held values are kept (their
    /// generations guard stale keys); a fixed-capacity table keeps its
    /// allocation.
    ///
    /// ```
    /// let mut table: handlekit::IdTable<u8> = handlekit::IdTable::with_capacity(100);
    /// table.insert(1);
    /// table.shrink_to_fit();
    /// assert!(table.capacity() >= 1);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.arena.shrink_to_fit();
    }

    /// Removes every value. Every slot keeps its generation, so keys issued
    /// before stay stale. Detached slots (see [`detach`](Self::detach))
    /// stay detached.
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
        self.arena.clear();
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
            Err(err) => insert_failed(err),
        }
    }

    /// Inserts a value and returns its key, or returns a [`CapacityError`]
    /// if the table is full.
    ///
    /// ```
    /// let mut table: handlekit::IdTable<u8> = handlekit::IdTable::with_fixed_capacity(1);
    /// assert!(table.try_insert(1).is_ok());
    /// assert!(table.try_insert(2).is_err());
    /// ```
    #[inline(always)]
    pub fn try_insert(&mut self, value: T) -> Result<K, CapacityError> {
        let (_, key) = self.arena.try_insert_keyed(|_| value)?;
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
        match self.arena.try_insert_keyed(make) {
            Ok((_, key)) => key,
            Err(err) => insert_failed(err),
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
        let key = match self.arena.next_key() {
            Ok(key) => key,
            Err(err) => insert_failed(err),
        };
        let value = make(key)?;
        match self.arena.try_insert_keyed(|filled| {
            debug_assert!(filled == key);
            value
        }) {
            Ok(_) => Ok(key),
            Err(err) => insert_failed(err),
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
        self.arena
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
        self.arena
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
        self.arena
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
        unsafe { self.arena.get_unchecked(key.index()) }
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
        unsafe { self.arena.get_unchecked_mut(key.index()) }
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
        self.arena.get_disjoint_mut(
            keys.map(|key| (key.index(), crate::raw::keyed::lookup_generation(key))),
        )
    }

    /// Mutable references to the values of `N` keys at once, without
    /// checking the keys.
    ///
    /// # Safety
    ///
    /// Every key must name a live value of this table, and no two keys may
    /// be equal: exactly when [`get_disjoint_mut`](Self::get_disjoint_mut)
    /// would return `Some`.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let a = table.insert(1);
    /// let b = table.insert(2);
    /// // SAFETY: `a` and `b` are live and distinct.
    /// let [x, y] = unsafe { table.get_disjoint_unchecked_mut([a, b]) };
    /// core::mem::swap(x, y);
    /// assert_eq!((table[a], table[b]), (2, 1));
    /// ```
    #[must_use]
    pub unsafe fn get_disjoint_unchecked_mut<const N: usize>(
        &mut self,
        keys: [K; N],
    ) -> [&mut T; N] {
        debug_assert!(
            self.get_disjoint_mut(keys).is_some(),
            "get_disjoint_unchecked_mut with a dead or repeated key in {keys:?}"
        );
        // Live keys with one index are one key, so distinct live keys have
        // distinct indices.
        // SAFETY: the caller guarantees every key is live and distinct.
        unsafe {
            self.arena
                .get_disjoint_unchecked_mut(keys.map(|key| key.index()))
        }
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
        self.arena
            .remove(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// Takes the value for `key` out but keeps its slot reserved: `key`
    /// names no value (`get` gives `None`, `len` drops by one) until
    /// [`reattach`](Self::reattach) puts a value back under it, and no
    /// insertion is given the slot in the meantime. `None` if the key is
    /// stale or foreign.
    ///
    /// A detached slot stays detached through [`clear`](Self::clear),
    /// `clone` and serialization (with the `serde` feature).
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(String::from("borrowed"));
    /// let mut value = table.detach(key).unwrap();
    /// assert_eq!(table.get(key), None);
    /// let other = table.insert(String::new()); // never key's slot
    /// assert_ne!(other, key);
    /// value.push('!');
    /// table.reattach(key, value);
    /// assert_eq!(table[key], "borrowed!");
    /// ```
    pub fn detach(&mut self, key: K) -> Option<T> {
        self.arena.detach_slot(key.index(), key.generation())
    }

    /// Puts `value` back under a key [`detach`](Self::detach) took a value
    /// from; the key is valid again.
    ///
    /// # Panics
    ///
    /// If `key` is not detached (it names a live value, is stale or
    /// foreign, or was reattached already).
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// let value = table.detach(key).unwrap();
    /// table.reattach(key, value + 1);
    /// assert_eq!(table[key], 2);
    /// ```
    ///
    /// ```should_panic
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// table.reattach(key, 2); // live, not detached: panics
    /// ```
    #[track_caller]
    pub fn reattach(&mut self, key: K, value: T) {
        if self
            .arena
            .reattach_slot(key.index(), key.generation(), value)
            .is_err()
        {
            not_detached("IdTable", key);
        }
    }

    /// Whether `key` is detached: [`detach`](Self::detach) took its value
    /// and [`reattach`](Self::reattach) has not put one back.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// assert!(!table.is_detached(key));
    /// table.detach(key);
    /// assert!(table.is_detached(key));
    /// ```
    #[must_use]
    pub fn is_detached(&self, key: K) -> bool {
        self.arena.is_detached(key.index(), key.generation())
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
        self.arena.retain_keyed(keep);
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
    pub fn drain(&mut self) -> Drain<'_, T, K, L> {
        Drain::new(&mut self.arena)
    }

    /// Checks the table's internal invariants (state words, counts, the
    /// free list and the refill) and panics if one is broken. O(slots). For tests and
    /// fuzzing; not part of the stable API.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        self.arena.check_invariants();
    }

    /// Iterates `(key, &value)` in slot order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// assert_eq!(table.iter().collect::<Vec<_>>(), [(key, &1)]);
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_, T, K, L> {
        Iter::new(self.arena.keyed_iter())
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
    pub fn iter_mut(&mut self) -> IterMut<'_, T, K, L> {
        IterMut::new(self.arena.keyed_iter_mut())
    }

    /// Iterates the keys of the live values, in slot order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// assert_eq!(table.keys().collect::<Vec<_>>(), [key]);
    /// ```
    #[inline]
    pub fn keys(&self) -> Keys<'_, T, K, L> {
        Keys::new(self.arena.keyed_iter())
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
    pub fn values(&self) -> Values<'_, T, L> {
        Values::new(self.arena.iter())
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
    pub fn values_mut(&mut self) -> ValuesMut<'_, T, L> {
        ValuesMut::new(self.arena.iter_mut())
    }
}

#[cold]
#[track_caller]
fn insert_failed(err: CapacityError) -> ! {
    panic!("IdTable::insert: {err}")
}

impl<T, K: Key, L: Layout> Default for SlotTable<T, K, L> {
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

impl<T: Clone, K: Key, L: Layout> Clone for SlotTable<T, K, L> {
    /// A copy with the same keys, generations, free list and policy: the
    /// copy issues the same keys as the original would.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(String::from("x"));
    /// let mut copy = table.clone();
    /// assert_eq!(copy[key], "x");
    /// assert_eq!(copy.insert(String::new()), table.insert(String::new()));
    /// ```
    fn clone(&self) -> Self {
        SlotTable {
            arena: self.arena.clone(),
            _key: PhantomData,
        }
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
        self.arena.clone_from(&source.arena);
    }
}

impl<T, K: Key, L: Layout> SlotTable<T, K, L> {
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
}

impl<T: fmt::Debug, K: Key, L: Layout> fmt::Debug for SlotTable<T, K, L> {
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

impl<T, K: Key, L: Layout> Index<K> for SlotTable<T, K, L> {
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
            None => invalid_key(key),
        }
    }
}

impl<T, K: Key, L: Layout> IndexMut<K> for SlotTable<T, K, L> {
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
            None => invalid_key(key),
        }
    }
}

/// The panic of `reattach` with a key that is not detached.
#[cold]
#[track_caller]
pub(crate) fn not_detached<K: Key>(table: &str, key: K) -> ! {
    panic!("{table}::reattach: key {key:?} is not detached (it is live, stale, foreign, or reattached already)")
}

#[cold]
#[track_caller]
fn invalid_key<K: Key>(key: K) -> ! {
    panic!("IdTable: no live value for key {key:?} (stale, or from another table)")
}

impl<T: PartialEq, K: Key, L: Layout> PartialEq for SlotTable<T, K, L> {
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

impl<T: Eq, K: Key, L: Layout> Eq for SlotTable<T, K, L> {}

impl<T, K: Key, L: Layout> FromIterator<T> for SlotTable<T, K, L> {
    /// The same as [`from_iter_values`](IdTable::from_iter_values).
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

impl<T, K: Key, L: Layout> Extend<T> for SlotTable<T, K, L> {
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

impl<'a, T, K: Key, L: Layout> IntoIterator for &'a SlotTable<T, K, L> {
    type Item = (K, &'a T);
    type IntoIter = Iter<'a, T, K, L>;

    /// ```
    /// let table: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values([1]);
    /// for (key, value) in &table {
    ///     assert_eq!(table[key], *value);
    /// }
    /// ```
    fn into_iter(self) -> Iter<'a, T, K, L> {
        self.iter()
    }
}

impl<'a, T, K: Key, L: Layout> IntoIterator for &'a mut SlotTable<T, K, L> {
    type Item = (K, &'a mut T);
    type IntoIter = IterMut<'a, T, K, L>;

    /// ```
    /// let mut table: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values([1]);
    /// for (_, value) in &mut table {
    ///     *value += 1;
    /// }
    /// assert_eq!(table.values().next(), Some(&2));
    /// ```
    fn into_iter(self) -> IterMut<'a, T, K, L> {
        self.iter_mut()
    }
}

impl<T, K: Key, L: Layout> IntoIterator for SlotTable<T, K, L> {
    type Item = (K, T);
    type IntoIter = IntoIter<T, K, L>;

    /// ```
    /// let table: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values([String::from("x")]);
    /// let all: Vec<_> = table.into_iter().map(|(_, v)| v).collect();
    /// assert_eq!(all, ["x"]);
    /// ```
    fn into_iter(self) -> IntoIter<T, K, L> {
        IntoIter::new(self.arena)
    }
}

/// Removing iterator over `(key, value)`; see [`SlotTable::drain`]
/// ([`iter::Drain`](crate::iter::Drain) over the table's slots).
pub type Drain<'a, T, K = Id, L = Split> = crate::iter::Drain<'a, T, K, SlotArena<T, K, L>>;

/// Owning iterator over `(key, value)`; see [`SlotTable::into_iter`]
/// ([`iter::IntoIter`](crate::iter::IntoIter) over the table's slots).
pub type IntoIter<T, K = Id, L = Split> = crate::iter::IntoIter<T, K, SlotArena<T, K, L>>;

#[cfg(test)]
mod split_tests {
    use super::*;
    use alloc::vec::Vec;

    /// Parallel iteration's parts, split as far as they go, cover every
    /// value once and in order, for shared and exclusive access: cut at
    /// 64-slot chunks of the state words, with no hole (where each part
    /// walks its rest as a range) and then with holes.
    #[test]
    fn split_parts_cover_every_value_once() {
        // Just past the size below which a walk is not cut (2048 slots),
        // to keep the test quick under Miri.
        let mut table: IdTable<u64> = IdTable::from_iter_values(0..2200);
        for round in 0..2 {
            let (expected, parts) = crate::raw::check_split_round!(table.arena);
            assert_eq!(expected.len(), table.len());
            assert!(parts > 1, "round {round}: {parts} part");
            let bumped: Vec<u64> = table.values().copied().collect();
            assert_eq!(bumped, expected.iter().map(|e| e.2 + 1).collect::<Vec<_>>());
            let keys: Vec<Id> = table.keys().collect();
            for (i, &key) in keys.iter().enumerate() {
                if i % 3 == 0 || (1000..1100).contains(&i) {
                    table.remove(key);
                }
            }
        }
        let empty: IdTable<u64> = IdTable::new();
        assert_eq!(crate::raw::check_split_shared(empty.arena.iter(), &[]), 1);
    }
}
