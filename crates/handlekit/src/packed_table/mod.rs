//! [`PackedTable`]: values packed tight in one array, reached through a
//! generational index, and its iterator types.

use core::cmp::Ordering;
use core::fmt;
use core::iter::{Copied, Zip};

use crate::iter::DenseEntries;
use core::ops::{Index, IndexMut};
use core::slice;

use crate::raw::packed::Packed;
use crate::{CapacityError, Id, Key, Reuse};

#[cfg(feature = "rayon")]
mod par;
#[cfg(feature = "serde")]
mod serde_impl;

#[cfg(feature = "rayon")]
pub use par::{ParIter, ParIterMut};

/// Iterator over `(key, &value)` in dense order; see [`PackedTable::iter`].
/// ([`DenseEntries`] of shared values).
///
/// ```
/// let table: handlekit::PackedTable<char> = ['a', 'b'].into_iter().collect();
/// let iter: handlekit::packed_table::Iter<'_, char> = table.iter();
/// assert_eq!(iter.len(), 2);
/// ```
pub type Iter<'a, T, K = Id> = DenseEntries<'a, T, K, &'a T>;
/// Iterator over `(key, &mut value)` in dense order; see
/// [`PackedTable::iter_mut`].
/// ([`DenseEntries`] of exclusive values).
///
/// ```
/// let mut table: handlekit::PackedTable<u8> = [1, 2].into_iter().collect();
/// let iter: handlekit::packed_table::IterMut<'_, u8> = table.iter_mut();
/// iter.for_each(|(_, v)| *v *= 3);
/// assert_eq!(table.values().sum::<u8>(), 9);
/// ```
pub type IterMut<'a, T, K = Id> = DenseEntries<'a, T, K, &'a mut T>;
/// Iterator over the keys in dense order; see [`PackedTable::keys`].
pub type Keys<'a, K = Id> = Copied<slice::Iter<'a, K>>;
/// Iterator over the values in dense order: a plain slice iterator.
pub type Values<'a, T> = slice::Iter<'a, T>;
/// Iterator over the values in dense order, mutably: a plain slice iterator.
pub type ValuesMut<'a, T> = slice::IterMut<'a, T>;
/// Removing iterator over `(key, value)`; see [`PackedTable::drain`].
pub type Drain<'a, T, K = Id> = Zip<alloc::vec::Drain<'a, K>, alloc::vec::Drain<'a, T>>;
/// Owning iterator over `(key, value)`.
pub type IntoIter<T, K = Id> = Zip<alloc::vec::IntoIter<K>, alloc::vec::IntoIter<T>>;

/// A packed array behind an index: values sit contiguously with no holes,
/// and generational keys reach them through a table of positions.
///
/// This is the *packed array* of BitSquid's ID lookup table. Iteration is
/// exactly slice iteration ([`as_slice`](Self::as_slice)), as fast as a
/// `Vec`. A lookup reads a sparse entry (generation and dense position
/// side by side, so `contains_key` is one compare) and then the value.
/// Removal swaps the last value into the hole: O(1), and it moves exactly
/// one value. Because values move, do not hold references across removals;
/// hold keys.
///
/// | operation | cost |
/// | --- | --- |
/// | `insert`, `remove`, `get`, `contains_key` | O(1) |
/// | iteration | O(len), a slice walk |
/// | `sort_by` | O(len log len) |
///
/// Memory: `size_of::<T>() + size_of::<K>()` per value (the dense values
/// and their keys), plus 8 bytes per slot on the sparse side.
///
/// Keys behave as in [`IdTable`](crate::IdTable): stale keys miss, and slots
/// whose generation runs out retire (see
/// [`retired_count`](Self::retired_count)).
///
/// # Examples
///
/// ```
/// use handlekit::PackedTable;
///
/// let mut particles = PackedTable::new();
/// let a = particles.insert(1.0f32);
/// let b = particles.insert(2.0);
/// let c = particles.insert(3.0);
/// particles.remove(a); // the last value moves into the hole
/// assert_eq!(particles.as_slice(), [3.0, 2.0]);
/// assert_eq!(particles[c], 3.0);
///
/// // Reorder for locality; every key stays valid.
/// particles.sort_by(|x, y| x.total_cmp(y));
/// assert_eq!(particles.as_slice(), [2.0, 3.0]);
/// assert_eq!((particles[b], particles[c]), (2.0, 3.0));
/// ```
pub struct PackedTable<T, K: Key = Id> {
    /// The sparse side (one entry per slot, an occupied entry holding the
    /// dense position of its value) and the dense side (the values,
    /// packed, with their keys), kept in step by `raw::packed`.
    ///
    /// The sparse side is interleaved: each entry's state word and
    /// position share 8 bytes, so a lookup reads one cache line on this
    /// side (the split layout that `IdTable` passes need would read two).
    core: Packed<T, K>,
}

impl<T> PackedTable<T, Id> {
    /// Creates an empty table keyed by [`Id`]; it allocates nothing until
    /// the first insertion. For another key type use
    /// [`PackedTable::with_key`] (or [`PackedTable::default`]).
    ///
    /// ```
    /// let table: handlekit::PackedTable<u8> = handlekit::PackedTable::new();
    /// assert!(table.is_empty());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self::with_key()
    }

    /// Creates an empty table keyed by [`Id`], with room for `capacity`
    /// values. For another key type, use
    /// [`with_capacity_and_key`](PackedTable::with_capacity_and_key).
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::with_capacity(10);
    /// table.insert(1u8); // keyed by `Id`: no annotation needed
    /// assert!(table.capacity() >= 10);
    /// ```
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_capacity_and_key(capacity)
    }
}

impl<T, K: Key> PackedTable<T, K> {
    /// Creates an empty table for any key type. It allocates nothing until
    /// the first insertion. The same as [`PackedTable::default`].
    ///
    /// ```
    /// handlekit::define_key! { struct ParticleKey(u32; index_bits = 24); }
    /// let mut particles = handlekit::PackedTable::with_key();
    /// let p: ParticleKey = particles.insert(1.5f32);
    /// assert_eq!(particles[p], 1.5);
    /// ```
    #[must_use]
    pub const fn with_key() -> Self {
        PackedTable {
            core: Packed::new(),
        }
    }

    /// Creates an empty table for any key type, with room for `capacity`
    /// values.
    ///
    /// ```
    /// use handlekit::{Id32, PackedTable};
    /// let table: PackedTable<u8, Id32> = PackedTable::with_capacity_and_key(10);
    /// assert!(table.capacity() >= 10);
    /// ```
    #[must_use]
    pub fn with_capacity_and_key(capacity: usize) -> Self {
        PackedTable {
            core: Packed::with_capacity(capacity),
        }
    }

    /// Creates an empty table with the given slot [`Reuse`] policy.
    ///
    /// ```
    /// use handlekit::{PackedTable, Reuse};
    /// let table: PackedTable<u8> = PackedTable::with_reuse(Reuse::Fifo { min_free: 64 });
    /// assert_eq!(table.reuse(), Reuse::Fifo { min_free: 64 });
    /// ```
    #[must_use]
    pub fn with_reuse(reuse: Reuse) -> Self {
        let mut table = Self::default();
        table.core.set_reuse(reuse);
        table
    }

    /// Creates an empty table that allocates room for `capacity` values now
    /// and never reallocates. Values still move on removal (that is how the
    /// array stays packed), but the arrays themselves never do.
    ///
    /// # Panics
    ///
    /// If `capacity` is more than the key type can index.
    ///
    /// ```
    /// let mut table: handlekit::PackedTable<u8> = handlekit::PackedTable::with_fixed_capacity(1);
    /// table.insert(1);
    /// assert!(table.try_insert(2).is_err());
    /// ```
    #[must_use]
    pub fn with_fixed_capacity(capacity: usize) -> Self {
        PackedTable {
            core: Packed::with_fixed_capacity(capacity),
        }
    }

    /// The slot [`Reuse`] policy.
    ///
    /// ```
    /// assert_eq!(handlekit::PackedTable::<u8>::new().reuse(), handlekit::Reuse::Lifo);
    /// ```
    #[must_use]
    pub fn reuse(&self) -> Reuse {
        self.core.sparse().reuse()
    }

    /// Changes the slot [`Reuse`] policy for slots freed from now on.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::<u8>::new();
    /// table.set_reuse(handlekit::Reuse::Fifo { min_free: 4 });
    /// assert_eq!(table.reuse(), handlekit::Reuse::Fifo { min_free: 4 });
    /// ```
    pub fn set_reuse(&mut self, reuse: Reuse) {
        self.core.set_reuse(reuse);
    }

    /// The number of values.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// table.insert(1);
    /// assert_eq!(table.len(), 1);
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.core.dense().values.len()
    }

    /// Whether the table holds no values.
    ///
    /// ```
    /// assert!(handlekit::PackedTable::<u8>::new().is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.core.dense().values.is_empty()
    }

    /// The number of values the table can hold without reallocating.
    ///
    /// ```
    /// let table: handlekit::PackedTable<u8> = handlekit::PackedTable::with_fixed_capacity(8);
    /// assert_eq!(table.capacity(), 8);
    /// ```
    #[must_use]
    pub fn capacity(&self) -> usize {
        let dense = self.core.dense();
        self.core
            .sparse()
            .capacity()
            .min(dense.values.capacity())
            .min(dense.keys.capacity())
    }

    /// The number of slots retired because their generation ran out; see
    /// [`IdTable::retired_count`](crate::IdTable::retired_count).
    ///
    /// ```
    /// assert_eq!(handlekit::PackedTable::<u8>::new().retired_count(), 0);
    /// ```
    #[must_use]
    pub fn retired_count(&self) -> usize {
        self.core.sparse().retired()
    }

    /// Reserves room for at least `additional` more values.
    ///
    /// # Panics
    ///
    /// If the key type cannot index that many slots, a fixed capacity is too
    /// small, or the allocation fails.
    ///
    /// ```
    /// let mut table: handlekit::PackedTable<u8> = handlekit::PackedTable::new();
    /// table.reserve(100);
    /// assert!(table.capacity() >= 100);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        if let Err(err) = self.try_reserve(additional) {
            panic!("PackedTable::reserve({additional}): {err}");
        }
    }

    /// Reserves room for at least `additional` more values, or reports why
    /// it cannot.
    ///
    /// ```
    /// let mut table: handlekit::PackedTable<u8> = handlekit::PackedTable::with_fixed_capacity(2);
    /// assert!(table.try_reserve(2).is_ok());
    /// assert!(table.try_reserve(3).is_err());
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        self.core.try_reserve(additional)
    }

    /// Frees spare capacity (not in a fixed-capacity table).
    ///
    /// ```
    /// let mut table: handlekit::PackedTable<u8> = handlekit::PackedTable::with_capacity(100);
    /// table.insert(1);
    /// table.shrink_to_fit();
    /// assert!(table.capacity() >= 1);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.core.shrink_to_fit();
    }

    /// Removes every value; keys issued before stay stale, and detached
    /// slots (see [`detach`](Self::detach)) stay detached.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(1);
    /// table.clear();
    /// table.insert(2);
    /// assert_eq!(table.get(key), None);
    /// ```
    pub fn clear(&mut self) {
        self.core.clear();
    }

    /// Inserts a value at the end of the dense array and returns its key.
    ///
    /// # Panics
    ///
    /// If the table is full; see [`try_insert`](Self::try_insert).
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert("x");
    /// assert_eq!(table[key], "x");
    /// ```
    // Forced: the fast paths are small, and a call would cost more than
    // the operation (measured in the comparison runner).
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> K {
        match self.try_insert(value) {
            Ok(key) => key,
            Err(err) => panic!("PackedTable::insert: {err}"),
        }
    }

    /// Inserts a value and returns its key, or a [`CapacityError`] if the
    /// table is full.
    ///
    /// ```
    /// let mut table: handlekit::PackedTable<u8> = handlekit::PackedTable::with_fixed_capacity(0);
    /// assert!(table.try_insert(1).is_err());
    /// ```
    #[inline(always)]
    pub fn try_insert(&mut self, value: T) -> Result<K, CapacityError> {
        self.core.try_insert_keyed(|_| value)
    }

    /// Inserts `make(key)`, where `key` is the key the value will have, and
    /// returns the key. If `make` panics, the table is unchanged.
    ///
    /// # Panics
    ///
    /// If the table is full.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert_with_key(|key| (key, 5));
    /// assert_eq!(table[key], (key, 5));
    /// ```
    pub fn insert_with_key(&mut self, make: impl FnOnce(K) -> T) -> K {
        match self.core.try_insert_keyed(make) {
            Ok(key) => key,
            Err(err) => panic!("PackedTable::insert_with_key: {err}"),
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
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.try_insert_with_key(|key| Ok::<_, ()>((key, 1))).unwrap();
    /// assert_eq!(table[key], (key, 1));
    /// assert_eq!(table.try_insert_with_key(|_| Err("no")), Err("no"));
    /// assert_eq!(table.len(), 1);
    /// ```
    pub fn try_insert_with_key<E>(&mut self, make: impl FnOnce(K) -> Result<T, E>) -> Result<K, E> {
        let key = match self.core.sparse().next_key() {
            Ok(key) => key,
            Err(err) => panic!("PackedTable::try_insert_with_key: {err}"),
        };
        let value = make(key)?;
        match self.core.try_insert_keyed(|filled| {
            debug_assert!(filled == key);
            value
        }) {
            Ok(key) => Ok(key),
            Err(err) => panic!("PackedTable::try_insert_with_key: {err}"),
        }
    }

    /// The dense position of a live key.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let a = table.insert('a');
    /// let b = table.insert('b');
    /// assert_eq!(table.position(b), Some(1));
    /// table.remove(a);
    /// assert_eq!(table.position(b), Some(0));
    /// ```
    #[inline]
    #[must_use]
    pub fn position(&self, key: K) -> Option<usize> {
        self.core.position(key)
    }

    /// Whether `key` names a live value.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(());
    /// assert!(table.contains_key(key));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_key(&self, key: K) -> bool {
        self.core
            .sparse()
            .contains(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// The value for `key`, or `None` if the key is stale or foreign.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(3);
    /// assert_eq!(table.get(key), Some(&3));
    /// ```
    #[inline]
    #[must_use]
    pub fn get(&self, key: K) -> Option<&T> {
        self.core.get(key)
    }

    /// The value for `key`, mutably.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(3);
    /// *table.get_mut(key).unwrap() = 4;
    /// assert_eq!(table[key], 4);
    /// ```
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self, key: K) -> Option<&mut T> {
        self.core.get_mut(key)
    }

    /// The value for `key`, without checking the key's generation.
    ///
    /// # Safety
    ///
    /// `key` must name a live value of this table.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(3);
    /// // SAFETY: `key` was just inserted.
    /// assert_eq!(unsafe { *table.get_unchecked(key) }, 3);
    /// ```
    #[inline]
    #[must_use]
    pub unsafe fn get_unchecked(&self, key: K) -> &T {
        debug_assert!(
            self.contains_key(key),
            "get_unchecked with dead key {key:?}"
        );
        // SAFETY: the caller guarantees `key` is live, so its sparse slot
        // exists and is occupied.
        let position = unsafe { *self.core.sparse().get_unchecked(key.index()) };
        &self.core.dense().values[position as usize]
    }

    /// The value for `key`, mutably, without checking the key's generation.
    ///
    /// # Safety
    ///
    /// `key` must name a live value of this table.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(3);
    /// // SAFETY: `key` was just inserted.
    /// unsafe { *table.get_unchecked_mut(key) = 4 };
    /// assert_eq!(table[key], 4);
    /// ```
    #[inline]
    #[must_use]
    pub unsafe fn get_unchecked_mut(&mut self, key: K) -> &mut T {
        debug_assert!(
            self.contains_key(key),
            "get_unchecked_mut with dead key {key:?}"
        );
        // SAFETY: the caller guarantees `key` is live.
        let position = unsafe { *self.core.sparse().get_unchecked(key.index()) };
        &mut self.core.values_mut()[position as usize]
    }

    /// Mutable references to the values of `N` keys at once, or `None` if
    /// any key is stale or foreign, or two keys are the same.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let a = table.insert(1);
    /// let b = table.insert(2);
    /// let [x, y] = table.get_disjoint_mut([a, b]).unwrap();
    /// core::mem::swap(x, y);
    /// assert_eq!((table[a], table[b]), (2, 1));
    /// assert!(table.get_disjoint_mut([a, a]).is_none());
    /// ```
    #[must_use]
    pub fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut T; N]> {
        let mut positions = [0usize; N];
        for (slot, key) in positions.iter_mut().zip(keys) {
            *slot = self.position(key)?;
        }
        self.core.values_mut().get_disjoint_mut(positions).ok()
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
    /// let mut table = handlekit::PackedTable::new();
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
        // Every key is live (the caller's guarantee), so its sparse slot
        // exists and is occupied; distinct live keys have distinct
        // positions below `len` (the sparse side is a bijection onto
        // `0..len`).
        // SAFETY: so every slot read is occupied, and the positions are in
        // bounds and distinct.
        unsafe {
            let positions = keys.map(|key| *self.core.sparse().get_unchecked(key.index()) as usize);
            self.core.values_mut().get_disjoint_unchecked_mut(positions)
        }
    }

    /// Removes the value for `key` and returns it, moving the last value
    /// into its place. `None` if the key is stale or foreign.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(5);
    /// assert_eq!(table.remove(key), Some(5));
    /// assert_eq!(table.remove(key), None);
    /// ```
    #[inline(always)]
    pub fn remove(&mut self, key: K) -> Option<T> {
        self.core.remove(key)
    }

    /// Takes the value for `key` out (moving the last value into its
    /// place, as [`remove`](Self::remove) does) but keeps its slot
    /// reserved: `key` names no value until [`reattach`](Self::reattach)
    /// puts one back under it, and no insertion is given the slot in the
    /// meantime. `None` if the key is stale or foreign.
    ///
    /// A detached slot stays detached through [`clear`](Self::clear),
    /// `clone` and serialization (with the `serde` feature).
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let a = table.insert(1);
    /// let b = table.insert(2);
    /// let value = table.detach(a).unwrap();
    /// assert_eq!(table.as_slice(), [2]);
    /// table.reattach(a, value * 10); // back at the end of the dense array
    /// assert_eq!(table.as_slice(), [2, 10]);
    /// assert_eq!((table[a], table[b]), (10, 2));
    /// ```
    pub fn detach(&mut self, key: K) -> Option<T> {
        self.core.detach(key)
    }

    /// Puts `value` back under a key [`detach`](Self::detach) took a value
    /// from, at the end of the dense array; the key is valid again.
    ///
    /// # Panics
    ///
    /// If `key` is not detached (it names a live value, is stale or
    /// foreign, or was reattached already).
    ///
    /// ```should_panic
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(1);
    /// table.remove(key);
    /// table.reattach(key, 2); // stale, not detached: panics
    /// ```
    #[track_caller]
    pub fn reattach(&mut self, key: K, value: T) {
        if !self.is_detached(key) {
            crate::id_table::not_detached("PackedTable", key);
        }
        self.core.reattach(key, value);
    }

    /// Whether `key` is detached: [`detach`](Self::detach) took its value
    /// and [`reattach`](Self::reattach) has not put one back.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(1);
    /// table.detach(key);
    /// assert!(table.is_detached(key));
    /// ```
    #[must_use]
    pub fn is_detached(&self, key: K) -> bool {
        self.core
            .sparse()
            .is_detached(key.index(), key.generation())
    }

    /// Swaps the values at two dense positions; their keys follow them.
    ///
    /// # Panics
    ///
    /// If either position is out of bounds.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let a = table.insert('a');
    /// let b = table.insert('b');
    /// table.swap_positions(0, 1);
    /// assert_eq!(table.as_slice(), ['b', 'a']);
    /// assert_eq!((table[a], table[b]), ('a', 'b'));
    /// ```
    pub fn swap_positions(&mut self, a: usize, b: usize) {
        self.core.swap_positions(a, b);
    }

    /// Keeps only the values for which `keep(key, &mut value)` is true, in
    /// dense order, and keeps the order of those that stay.
    ///
    /// If `keep` panics, the values not yet visited stay, the removed ones
    /// are dropped, and the table is consistent.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// table.extend(0..6);
    /// table.retain(|_, v| *v % 2 == 1);
    /// assert_eq!(table.as_slice(), [1, 3, 5]);
    /// ```
    pub fn retain(&mut self, keep: impl FnMut(K, &mut T) -> bool) {
        self.core.retain(keep);
    }

    /// Removes every value and yields it with its key, in dense order. The
    /// keys are invalidated at once; values not yet yielded are dropped
    /// with the iterator.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(1);
    /// assert_eq!(table.drain().collect::<Vec<_>>(), [(key, 1)]);
    /// assert!(table.is_empty());
    /// ```
    pub fn drain(&mut self) -> Drain<'_, T, K> {
        let (keys, values) = self.core.drain();
        keys.zip(values)
    }

    /// Iterates `(key, &value)` in dense order.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(1);
    /// assert_eq!(table.iter().collect::<Vec<_>>(), [(key, &1)]);
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_, T, K> {
        let dense = self.core.dense();
        DenseEntries::new(&dense.keys, &dense.values)
    }

    /// Iterates `(key, &mut value)` in dense order.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(1);
    /// for (_, v) in table.iter_mut() {
    ///     *v += 1;
    /// }
    /// assert_eq!(table[key], 2);
    /// ```
    #[inline]
    pub fn iter_mut(&mut self) -> IterMut<'_, T, K> {
        let (keys, values) = self.core.slices_mut();
        DenseEntries::new_mut(keys, values)
    }

    /// Iterates the keys in dense order.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(1);
    /// assert_eq!(table.keys().collect::<Vec<_>>(), [key]);
    /// ```
    #[inline]
    pub fn keys(&self) -> Keys<'_, K> {
        self.core.dense().keys.iter().copied()
    }

    /// Iterates the values in dense order: a slice iterator.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// table.extend([1, 2, 3]);
    /// assert_eq!(table.values().sum::<i32>(), 6);
    /// ```
    #[inline]
    pub fn values(&self) -> Values<'_, T> {
        self.core.dense().values.iter()
    }

    /// Iterates the values mutably in dense order: a slice iterator.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// table.extend([1, 2]);
    /// table.values_mut().for_each(|v| *v *= 10);
    /// assert_eq!(table.as_slice(), [10, 20]);
    /// ```
    #[inline]
    pub fn values_mut(&mut self) -> ValuesMut<'_, T> {
        self.core.values_mut().iter_mut()
    }

    /// The values, packed, in dense order.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// table.extend([1, 2]);
    /// assert_eq!(table.as_slice(), [1, 2]);
    /// ```
    #[inline]
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        &self.core.dense().values
    }

    /// The values, packed, in dense order, mutably. Keys are unaffected.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// table.extend([1, 2]);
    /// table.as_mut_slice()[0] = 7;
    /// assert_eq!(table.as_slice(), [7, 2]);
    /// ```
    #[inline]
    #[must_use]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.core.values_mut()
    }

    /// The keys and the values, in dense order: `keys[i]` is the key of
    /// `values[i]`.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert('a');
    /// assert_eq!(table.as_slices(), (&[key][..], &['a'][..]));
    /// ```
    #[inline]
    #[must_use]
    pub fn as_slices(&self) -> (&[K], &[T]) {
        let dense = self.core.dense();
        (&dense.keys, &dense.values)
    }

    /// The keys and the values, in dense order, with the values mutable:
    /// `keys[i]` is the key of `values[i]`. The keys are shared, so no key
    /// can be moved away from its value.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let a = table.insert(1);
    /// let b = table.insert(2);
    /// let (keys, values) = table.as_mut_slices();
    /// for (key, value) in keys.iter().zip(values) {
    ///     if *key == b {
    ///         *value *= 10;
    ///     }
    /// }
    /// assert_eq!((table[a], table[b]), (1, 20));
    /// ```
    #[inline]
    #[must_use]
    pub fn as_mut_slices(&mut self) -> (&[K], &mut [T]) {
        self.core.slices_mut()
    }

    /// The key of each value, in dense order.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(1);
    /// assert_eq!(table.key_slice(), [key]);
    /// ```
    #[inline]
    #[must_use]
    pub fn key_slice(&self) -> &[K] {
        &self.core.dense().keys
    }

    /// Sorts the values with a comparator (stable) and keeps every key
    /// pointing at its value. Use it to restore locality, for example by
    /// sorting on a spatial cell. If `compare` panics, nothing moves.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let keys: Vec<_> = [3, 1, 2].into_iter().map(|v| table.insert(v)).collect();
    /// table.sort_by(|a, b| a.cmp(b));
    /// assert_eq!(table.as_slice(), [1, 2, 3]);
    /// assert_eq!(table[keys[0]], 3);
    /// ```
    pub fn sort_by(&mut self, compare: impl FnMut(&T, &T) -> Ordering) {
        self.core.sort(true, compare);
    }

    /// Sorts the values by a key function (stable); see
    /// [`sort_by`](Self::sort_by).
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// table.extend([-3i32, 1, -2]);
    /// table.sort_by_key(|v| v.abs());
    /// assert_eq!(table.as_slice(), [1, -2, -3]);
    /// ```
    pub fn sort_by_key<S: Ord>(&mut self, mut sort_key: impl FnMut(&T) -> S) {
        self.core.sort(true, |a, b| sort_key(a).cmp(&sort_key(b)));
    }

    /// Sorts the values with a comparator (unstable, no allocation beyond
    /// the permutation); see [`sort_by`](Self::sort_by).
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// table.extend([2, 3, 1]);
    /// table.sort_unstable_by(|a, b| b.cmp(a));
    /// assert_eq!(table.as_slice(), [3, 2, 1]);
    /// ```
    pub fn sort_unstable_by(&mut self, compare: impl FnMut(&T, &T) -> Ordering) {
        self.core.sort(false, compare);
    }

    /// Builds a table from values, keyed in iteration order.
    ///
    /// ```
    /// let table: handlekit::PackedTable<_> = handlekit::PackedTable::from_iter_values([1, 2]);
    /// assert_eq!(table.as_slice(), [1, 2]);
    /// ```
    #[must_use]
    pub fn from_iter_values(values: impl IntoIterator<Item = T>) -> Self {
        let mut table = Self::default();
        table.extend(values);
        table
    }

    /// Checks the table's internal invariants and panics if one is broken.
    /// O(slots). For tests and fuzzing; not part of the stable API.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        self.core.check_invariants();
    }
}

impl<T, K: Key> Default for PackedTable<T, K> {
    /// An empty table.
    ///
    /// ```
    /// let table: handlekit::PackedTable<u8, handlekit::Id32> = Default::default();
    /// assert!(table.is_empty());
    /// ```
    fn default() -> Self {
        Self::with_key()
    }
}

impl<T: Clone, K: Key> Clone for PackedTable<T, K> {
    /// A copy with the same keys, order and free list.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(1);
    /// assert_eq!(table.clone()[key], 1);
    /// ```
    fn clone(&self) -> Self {
        PackedTable {
            core: self.core.clone(),
        }
    }

    /// Makes `self` a copy of `source`, reusing its allocations. If a
    /// `clone` panics, `self` is left empty.
    ///
    /// ```
    /// let source: handlekit::PackedTable<_> = handlekit::PackedTable::from_iter_values([1, 2]);
    /// let mut target = handlekit::PackedTable::new();
    /// target.clone_from(&source);
    /// assert_eq!(target.as_slice(), [1, 2]);
    /// ```
    fn clone_from(&mut self, source: &Self) {
        self.core.clone_from(&source.core);
    }
}

impl<T: fmt::Debug, K: Key> fmt::Debug for PackedTable<T, K> {
    /// Formats as a map from key to value, in dense order.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// table.insert('a');
    /// assert_eq!(format!("{table:?}"), "{Id(0v1): 'a'}");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<T: PartialEq, K: Key> PartialEq for PackedTable<T, K> {
    /// Equal when the same keys hold equal values (order aside).
    ///
    /// ```
    /// let a: handlekit::PackedTable<_> = handlekit::PackedTable::from_iter_values([1]);
    /// assert_eq!(a, a.clone());
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(key, value)| other.get(key) == Some(value))
    }
}

impl<T: Eq, K: Key> Eq for PackedTable<T, K> {}

impl<T, K: Key> Index<K> for PackedTable<T, K> {
    type Output = T;

    /// # Panics
    ///
    /// If `key` is stale or foreign; the message names the key.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
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

impl<T, K: Key> IndexMut<K> for PackedTable<T, K> {
    /// # Panics
    ///
    /// If `key` is stale or foreign.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// let key = table.insert(1);
    /// table[key] += 1;
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

#[cold]
#[track_caller]
fn invalid_key<K: Key>(key: K) -> ! {
    panic!("PackedTable: no live value for key {key:?} (stale, or from another table)")
}

impl<T, K: Key> FromIterator<T> for PackedTable<T, K> {
    /// The same as [`from_iter_values`](PackedTable::from_iter_values).
    ///
    /// ```
    /// use handlekit::{PackedTable, Key};
    /// let table: PackedTable<&str> = ["a", "b"].into_iter().collect();
    /// assert_eq!(table.keys().map(|k| k.index()).collect::<Vec<_>>(), [0, 1]);
    /// ```
    fn from_iter<I: IntoIterator<Item = T>>(values: I) -> Self {
        Self::from_iter_values(values)
    }
}

impl<T, K: Key> Extend<T> for PackedTable<T, K> {
    /// Inserts every value; the keys are discarded.
    ///
    /// ```
    /// let mut table = handlekit::PackedTable::new();
    /// table.extend([1, 2]);
    /// assert_eq!(table.len(), 2);
    /// ```
    fn extend<I: IntoIterator<Item = T>>(&mut self, values: I) {
        for value in values {
            self.insert(value);
        }
    }
}

impl<'a, T, K: Key> IntoIterator for &'a PackedTable<T, K> {
    type Item = (K, &'a T);
    type IntoIter = Iter<'a, T, K>;

    /// ```
    /// let table: handlekit::PackedTable<_> = handlekit::PackedTable::from_iter_values([1]);
    /// for (key, value) in &table {
    ///     assert_eq!(table[key], *value);
    /// }
    /// ```
    fn into_iter(self) -> Iter<'a, T, K> {
        self.iter()
    }
}

impl<'a, T, K: Key> IntoIterator for &'a mut PackedTable<T, K> {
    type Item = (K, &'a mut T);
    type IntoIter = IterMut<'a, T, K>;

    /// ```
    /// let mut table: handlekit::PackedTable<_> = handlekit::PackedTable::from_iter_values([1]);
    /// for (_, value) in &mut table {
    ///     *value = 2;
    /// }
    /// assert_eq!(table.as_slice(), [2]);
    /// ```
    fn into_iter(self) -> IterMut<'a, T, K> {
        self.iter_mut()
    }
}

impl<T, K: Key> IntoIterator for PackedTable<T, K> {
    type Item = (K, T);
    type IntoIter = IntoIter<T, K>;

    /// ```
    /// let table: handlekit::PackedTable<_> = handlekit::PackedTable::from_iter_values(["x"]);
    /// assert_eq!(table.into_iter().map(|(_, v)| v).collect::<Vec<_>>(), ["x"]);
    /// ```
    fn into_iter(self) -> IntoIter<T, K> {
        let dense = self.core.into_dense();
        dense.keys.into_iter().zip(dense.values)
    }
}
