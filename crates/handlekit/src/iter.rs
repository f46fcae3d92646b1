//! The iterators of the slot containers, written once: the borrowing
//! [`Iter`], [`IterMut`], [`Keys`], [`Values`] and [`ValuesMut`] (and with
//! `rayon`, `ParIter` and `ParIterMut`), generic over the [`Storage`] they
//! walk, and the removing [`Drain`] and [`IntoIter`], generic over the
//! slots they take values out of.
//!
//! Every container's module names them for its own storage
//! ([`id_table::Iter`](crate::id_table::Iter) is `Iter<'a, T, K>`,
//! [`lookup_table::Iter`](crate::lookup_table::Iter) is
//! `Iter<'a, T, K, Interleaved>`, [`hive::Iter`](crate::hive::Iter) is
//! `Iter<'a, T, K, HiveBlocks>`, ...), so code rarely names this module.
//!
//! # Cost
//!
//! An iterator holds the run of live slots it is in, so `next()` is one
//! compare and one increment while the run lasts: a `for` loop over a table
//! with no holes compiles to the loop over a slice. In a table with holes,
//! it holds the live slots of 64 at a time as a mask and takes them with a
//! few bit operations, never looking at a vacant slot's value. `fold`
//! (and so `for_each`, `sum`, `count`, ...) goes further: it runs the
//! table's own word-at-a-time loop, which the compiler can unroll and
//! vectorize. Both ends can be taken from (`rev()`, `next_back()`), and
//! `len()` is exact.
//!
//! ```
//! use handlekit::IdTable;
//!
//! let mut table: IdTable<u32> = (0..10).collect();
//! let keys: Vec<_> = table.keys().collect();
//! for &key in keys.iter().step_by(3) {
//!     table.remove(key);
//! }
//! let mut values = table.values();
//! assert_eq!(values.len(), 6);
//! assert_eq!(values.next(), Some(&1));
//! assert_eq!(values.next_back(), Some(&8));
//! assert_eq!(values.sum::<u32>(), 2 + 4 + 5 + 7);
//! ```

use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;

use crate::layout::Split;
use crate::raw::block::BlocksWalk;
use crate::raw::buf::BufLayout;
use crate::raw::cursor::{Cursor, Walk};
use crate::raw::flat::FlatWalk;
use crate::raw::scan::StoreWalk;
use crate::raw::{SlotArena, TakeSlots};
use crate::slot_iter::table_key;
use crate::{Id, Key};

mod sealed {
    /// Keeps [`Storage`](super::Storage) to the storages of this crate.
    pub trait Sealed {}
}

/// The storage a slot container's iterators walk: [`Split`] and
/// [`Interleaved`](crate::layout::Interleaved) (the layouts of the slot
/// store), [`PoolBlocks`] and
/// [`HiveBlocks`]. Sealed: implemented by those four only.
pub trait Storage: sealed::Sealed {
    /// How a pass finds the live slots of this storage.
    #[doc(hidden)]
    type Walk<'a, T: 'a>: Walk<T>;
}

/// The storage of a [`Pool`](crate::Pool): blocks of one size behind a
/// directory, walked 64 state words at a time. Only names the iterator
/// types of [`pool`](crate::pool).
#[derive(Debug)]
pub enum PoolBlocks {}

/// The storage of a [`Hive`](crate::Hive): blocks of growing size, each
/// with occupancy bits. Only names the iterator types of
/// [`hive`](crate::hive).
#[derive(Debug)]
pub enum HiveBlocks {}

// The slot store's layouts (`Split`, `Interleaved`): the store's walk.
impl<L: BufLayout> sealed::Sealed for L {}
impl<L: BufLayout> Storage for L {
    type Walk<'a, T: 'a> = StoreWalk<'a, T, L>;
}

impl sealed::Sealed for PoolBlocks {}
impl Storage for PoolBlocks {
    type Walk<'a, T: 'a> = FlatWalk<'a, T>;
}

impl sealed::Sealed for HiveBlocks {}
impl Storage for HiveBlocks {
    type Walk<'a, T: 'a> = BlocksWalk<'a, T>;
}

#[cfg(feature = "rayon")]
pub use crate::slot_par::{ParIter, ParIterMut};

/// The raw cursor of a storage, handing out `R` (`&'a T` or `&'a mut T`).
pub(crate) type RawCursor<'a, T, S, R> = Cursor<'a, T, <S as Storage>::Walk<'a, T>, R>;

/// The key of a cursor's item.
///
/// # Safety
///
/// The item comes from the cursor of a container whose keys are `K`: its
/// index and generation are those of one of the container's own live
/// slots, which `table_key` asks.
#[inline(always)]
unsafe fn keyed<K: Key, V>((index, generation, value): (usize, u32, V)) -> (K, V) {
    // SAFETY: the caller's guarantee.
    (unsafe { table_key::<K>(index, generation) }, value)
}

/// The value of a cursor's item.
#[inline(always)]
fn value_of<V>((_, _, value): (usize, u32, V)) -> V {
    value
}

/// Iterator over `(key, &value)`, in slot order. Made by the `iter`
/// method of [`IdTable`](crate::IdTable::iter),
/// [`SecondaryMap`](crate::SecondaryMap::iter),
/// [`LookupTable`](crate::LookupTable::iter), [`Pool`](crate::Pool::iter)
/// and [`Hive`](crate::Hive::iter).
///
/// ```
/// let table: handlekit::IdTable<char> = ['a', 'b'].into_iter().collect();
/// let iter: handlekit::id_table::Iter<'_, char> = table.iter();
/// assert_eq!(iter.len(), 2);
/// let values: String = iter.rev().map(|(_, c)| c).collect();
/// assert_eq!(values, "ba");
/// ```
pub struct Iter<'a, T: 'a, K: Key = Id, S: Storage = Split> {
    /// A cursor of the container whose keys are `K`.
    raw: RawCursor<'a, T, S, &'a T>,
    _key: PhantomData<fn(K) -> K>,
}

impl<'a, T, K: Key, S: Storage> Iter<'a, T, K, S> {
    /// Iterates what `raw` finds.
    ///
    /// # Safety
    ///
    /// `raw` walks a container whose keys are `K` (made with the key
    /// limits of `K`), so every item makes a valid key.
    #[inline]
    pub(crate) unsafe fn new(raw: RawCursor<'a, T, S, &'a T>) -> Self {
        Iter {
            raw,
            _key: PhantomData,
        }
    }
}

impl<'a, T, K: Key, S: Storage> Iterator for Iter<'a, T, K, S> {
    type Item = (K, &'a T);

    #[inline(always)]
    fn next(&mut self) -> Option<(K, &'a T)> {
        // SAFETY: the cursor walks a container whose keys are `K` (`new`).
        self.raw.next().map(|item| unsafe { keyed(item) })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.raw.size_hint()
    }

    #[inline]
    fn count(self) -> usize {
        self.raw.len()
    }

    #[inline]
    fn fold<B, F: FnMut(B, (K, &'a T)) -> B>(self, init: B, mut f: F) -> B {
        self.raw.fold_items(init, |acc, item| {
            // SAFETY: as in `next`.
            f(acc, unsafe { keyed(item) })
        })
    }
}

impl<'a, T, K: Key, S: Storage> DoubleEndedIterator for Iter<'a, T, K, S> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<(K, &'a T)> {
        // SAFETY: as in `next`.
        self.raw.next_back().map(|item| unsafe { keyed(item) })
    }
}

impl<T, K: Key, S: Storage> ExactSizeIterator for Iter<'_, T, K, S> {
    #[inline]
    fn len(&self) -> usize {
        self.raw.len()
    }
}

impl<T, K: Key, S: Storage> FusedIterator for Iter<'_, T, K, S> {}

impl<'a, T, K: Key, S: Storage> Clone for Iter<'a, T, K, S>
where
    S::Walk<'a, T>: Clone,
{
    fn clone(&self) -> Self {
        Iter {
            raw: self.raw.clone(),
            _key: PhantomData,
        }
    }
}

impl<'a, T: fmt::Debug, K: Key, S: Storage> fmt::Debug for Iter<'a, T, K, S>
where
    S::Walk<'a, T>: Clone,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// Iterator over `(key, &mut value)`, in slot order. Made by the
/// `iter_mut` method of [`IdTable`](crate::IdTable::iter_mut),
/// [`SecondaryMap`](crate::SecondaryMap::iter_mut),
/// [`LookupTable`](crate::LookupTable::iter_mut),
/// [`Pool`](crate::Pool::iter_mut) and [`Hive`](crate::Hive::iter_mut).
///
/// ```
/// let mut table: handlekit::Hive<u32> = (1..=3).collect();
/// for (_, value) in table.iter_mut() {
///     *value *= 10;
/// }
/// assert_eq!(table.values().sum::<u32>(), 60);
/// ```
pub struct IterMut<'a, T: 'a, K: Key = Id, S: Storage = Split> {
    /// A cursor of the container whose keys are `K`.
    raw: RawCursor<'a, T, S, &'a mut T>,
    _key: PhantomData<fn(K) -> K>,
}

impl<'a, T, K: Key, S: Storage> IterMut<'a, T, K, S> {
    /// Iterates what `raw` finds.
    ///
    /// # Safety
    ///
    /// As for [`Iter::new`].
    #[inline]
    pub(crate) unsafe fn new(raw: RawCursor<'a, T, S, &'a mut T>) -> Self {
        IterMut {
            raw,
            _key: PhantomData,
        }
    }
}

impl<'a, T, K: Key, S: Storage> Iterator for IterMut<'a, T, K, S> {
    type Item = (K, &'a mut T);

    #[inline(always)]
    fn next(&mut self) -> Option<(K, &'a mut T)> {
        // SAFETY: the cursor walks a container whose keys are `K` (`new`).
        self.raw.next().map(|item| unsafe { keyed(item) })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.raw.size_hint()
    }

    #[inline]
    fn count(self) -> usize {
        self.raw.len()
    }

    #[inline]
    fn fold<B, F: FnMut(B, (K, &'a mut T)) -> B>(self, init: B, mut f: F) -> B {
        self.raw.fold_items(init, |acc, item| {
            // SAFETY: as in `next`.
            f(acc, unsafe { keyed(item) })
        })
    }
}

impl<'a, T, K: Key, S: Storage> DoubleEndedIterator for IterMut<'a, T, K, S> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<(K, &'a mut T)> {
        // SAFETY: as in `next`.
        self.raw.next_back().map(|item| unsafe { keyed(item) })
    }
}

impl<T, K: Key, S: Storage> ExactSizeIterator for IterMut<'_, T, K, S> {
    #[inline]
    fn len(&self) -> usize {
        self.raw.len()
    }
}

impl<T, K: Key, S: Storage> FusedIterator for IterMut<'_, T, K, S> {}

impl<T, K: Key, S: Storage> fmt::Debug for IterMut<'_, T, K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IterMut")
            .field("remaining", &self.raw.len())
            .finish()
    }
}

/// Iterator over the keys of the live values, in slot order. Made by the
/// `keys` method of [`IdTable`](crate::IdTable::keys),
/// [`SecondaryMap`](crate::SecondaryMap::keys),
/// [`LookupTable`](crate::LookupTable::keys), [`Pool`](crate::Pool::keys)
/// and [`Hive`](crate::Hive::keys).
///
/// ```
/// let table: handlekit::Pool<u8> = [7, 8].into_iter().collect();
/// let keys: Vec<_> = table.keys().collect();
/// assert_eq!(table[keys[1]], 8);
/// ```
pub struct Keys<'a, T: 'a, K: Key = Id, S: Storage = Split> {
    inner: Iter<'a, T, K, S>,
}

impl<'a, T, K: Key, S: Storage> Keys<'a, T, K, S> {
    /// Iterates the keys of what `raw` finds.
    ///
    /// # Safety
    ///
    /// As for [`Iter::new`].
    #[inline]
    pub(crate) unsafe fn new(raw: RawCursor<'a, T, S, &'a T>) -> Self {
        Keys {
            // SAFETY: the caller's guarantee.
            inner: unsafe { Iter::new(raw) },
        }
    }
}

impl<T, K: Key, S: Storage> Iterator for Keys<'_, T, K, S> {
    type Item = K;

    #[inline(always)]
    fn next(&mut self) -> Option<K> {
        self.inner.next().map(|(key, _)| key)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }

    #[inline]
    fn count(self) -> usize {
        self.inner.len()
    }

    #[inline]
    fn fold<B, F: FnMut(B, K) -> B>(self, init: B, mut f: F) -> B {
        self.inner.fold(init, |acc, (key, _)| f(acc, key))
    }
}

impl<T, K: Key, S: Storage> DoubleEndedIterator for Keys<'_, T, K, S> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<K> {
        self.inner.next_back().map(|(key, _)| key)
    }
}

impl<T, K: Key, S: Storage> ExactSizeIterator for Keys<'_, T, K, S> {
    #[inline]
    fn len(&self) -> usize {
        self.inner.len()
    }
}

impl<T, K: Key, S: Storage> FusedIterator for Keys<'_, T, K, S> {}

impl<'a, T, K: Key, S: Storage> Clone for Keys<'a, T, K, S>
where
    S::Walk<'a, T>: Clone,
{
    fn clone(&self) -> Self {
        Keys {
            inner: self.inner.clone(),
        }
    }
}

impl<'a, T, K: Key, S: Storage> fmt::Debug for Keys<'a, T, K, S>
where
    S::Walk<'a, T>: Clone,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// Iterator over the live values, in slot order. Made by the `values`
/// method of [`IdTable`](crate::IdTable::values),
/// [`SecondaryMap`](crate::SecondaryMap::values),
/// [`LookupTable`](crate::LookupTable::values),
/// [`Pool`](crate::Pool::values) and [`Hive`](crate::Hive::values).
///
/// ```
/// let table: handlekit::LookupTable<u32> = (1..=4).collect();
/// assert_eq!(table.values().max(), Some(&4));
/// assert_eq!(table.values().rev().next(), Some(&4));
/// ```
pub struct Values<'a, T: 'a, S: Storage = Split> {
    raw: RawCursor<'a, T, S, &'a T>,
}

impl<'a, T, S: Storage> Values<'a, T, S> {
    /// Iterates the values `raw` finds.
    #[inline]
    pub(crate) fn new(raw: RawCursor<'a, T, S, &'a T>) -> Self {
        Values { raw }
    }
}

impl<'a, T, S: Storage> Iterator for Values<'a, T, S> {
    type Item = &'a T;

    #[inline(always)]
    fn next(&mut self) -> Option<&'a T> {
        self.raw.next().map(value_of)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.raw.size_hint()
    }

    #[inline]
    fn count(self) -> usize {
        self.raw.len()
    }

    #[inline]
    fn fold<B, F: FnMut(B, &'a T) -> B>(self, init: B, mut f: F) -> B {
        self.raw
            .fold_items(init, |acc, item| f(acc, value_of(item)))
    }
}

impl<'a, T, S: Storage> DoubleEndedIterator for Values<'a, T, S> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<&'a T> {
        self.raw.next_back().map(value_of)
    }
}

impl<T, S: Storage> ExactSizeIterator for Values<'_, T, S> {
    #[inline]
    fn len(&self) -> usize {
        self.raw.len()
    }
}

impl<T, S: Storage> FusedIterator for Values<'_, T, S> {}

impl<'a, T, S: Storage> Clone for Values<'a, T, S>
where
    S::Walk<'a, T>: Clone,
{
    fn clone(&self) -> Self {
        Values {
            raw: self.raw.clone(),
        }
    }
}

impl<'a, T: fmt::Debug, S: Storage> fmt::Debug for Values<'a, T, S>
where
    S::Walk<'a, T>: Clone,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.clone()).finish()
    }
}

/// Iterator over the live values, mutably, in slot order. Made by the
/// `values_mut` method of [`IdTable`](crate::IdTable::values_mut),
/// [`SecondaryMap`](crate::SecondaryMap::values_mut),
/// [`LookupTable`](crate::LookupTable::values_mut),
/// [`Pool`](crate::Pool::values_mut) and
/// [`Hive`](crate::Hive::values_mut).
///
/// ```
/// let mut table: handlekit::IdTable<u32> = (1..=3).collect();
/// for value in table.values_mut().rev() {
///     *value += 1;
/// }
/// assert_eq!(table.values().copied().collect::<Vec<_>>(), [2, 3, 4]);
/// ```
pub struct ValuesMut<'a, T: 'a, S: Storage = Split> {
    raw: RawCursor<'a, T, S, &'a mut T>,
}

impl<'a, T, S: Storage> ValuesMut<'a, T, S> {
    /// Iterates the values `raw` finds, mutably.
    #[inline]
    pub(crate) fn new(raw: RawCursor<'a, T, S, &'a mut T>) -> Self {
        ValuesMut { raw }
    }
}

impl<'a, T, S: Storage> Iterator for ValuesMut<'a, T, S> {
    type Item = &'a mut T;

    #[inline(always)]
    fn next(&mut self) -> Option<&'a mut T> {
        self.raw.next().map(value_of)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.raw.size_hint()
    }

    #[inline]
    fn count(self) -> usize {
        self.raw.len()
    }

    #[inline]
    fn fold<B, F: FnMut(B, &'a mut T) -> B>(self, init: B, mut f: F) -> B {
        self.raw
            .fold_items(init, |acc, item| f(acc, value_of(item)))
    }
}

impl<'a, T, S: Storage> DoubleEndedIterator for ValuesMut<'a, T, S> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<&'a mut T> {
        self.raw.next_back().map(value_of)
    }
}

impl<T, S: Storage> ExactSizeIterator for ValuesMut<'_, T, S> {
    #[inline]
    fn len(&self) -> usize {
        self.raw.len()
    }
}

impl<T, S: Storage> FusedIterator for ValuesMut<'_, T, S> {}

impl<T, S: Storage> fmt::Debug for ValuesMut<'_, T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValuesMut")
            .field("remaining", &self.raw.len())
            .finish()
    }
}

/// Removing iterator over `(key, value)`, lowest index first. Made by the
/// `drain` method of [`IdTable`](crate::IdTable::drain),
/// [`LookupTable`](crate::LookupTable::drain),
/// [`SecondaryMap`](crate::SecondaryMap::drain),
/// [`Pool`](crate::Pool::drain) and [`Hive`](crate::Hive::drain), which
/// name it for their slots. The values not yet taken when it is dropped
/// are dropped then; if it is leaked (`mem::forget`), they stay in the
/// container.
///
/// ```
/// let mut table: handlekit::IdTable<char> = ['a', 'b'].into_iter().collect();
/// let drain: handlekit::id_table::Drain<'_, char> = table.drain();
/// assert_eq!(drain.len(), 2);
/// assert_eq!(drain.map(|(_, c)| c).collect::<String>(), "ab");
/// assert!(table.is_empty());
/// ```
pub struct Drain<'a, T, K: Key = Id, C: TakeSlots<T> = SlotArena<T, Split>> {
    /// The slots of a container whose keys are `K`.
    source: &'a mut C,
    /// Indices below this have been taken.
    next: usize,
    _marker: PhantomData<fn(K) -> (K, T)>,
}

impl<'a, T, K: Key, C: TakeSlots<T>> Drain<'a, T, K, C> {
    /// Takes the values out of `source`.
    ///
    /// # Safety
    ///
    /// `source` belongs to a container whose keys are `K` (made with the
    /// key limits of `K`), so every value taken makes a valid key.
    #[inline]
    pub(crate) unsafe fn new(source: &'a mut C) -> Self {
        Drain {
            source,
            next: 0,
            _marker: PhantomData,
        }
    }
}

impl<T, K: Key, C: TakeSlots<T>> Iterator for Drain<'_, T, K, C> {
    type Item = (K, T);

    #[inline]
    fn next(&mut self) -> Option<(K, T)> {
        let item = self.source.take_next(self.next)?;
        self.next = item.0 + 1;
        // SAFETY: the slots are those of a container whose keys are `K`
        // (`new`).
        Some(unsafe { keyed(item) })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.source.len();
        (len, Some(len))
    }
}

impl<T, K: Key, C: TakeSlots<T>> ExactSizeIterator for Drain<'_, T, K, C> {}
impl<T, K: Key, C: TakeSlots<T>> FusedIterator for Drain<'_, T, K, C> {}

impl<T, K: Key, C: TakeSlots<T>> Drop for Drain<'_, T, K, C> {
    fn drop(&mut self) {
        self.source.clear();
    }
}

impl<T, K: Key, C: TakeSlots<T>> fmt::Debug for Drain<'_, T, K, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Drain")
            .field("remaining", &self.source.len())
            .finish()
    }
}

/// Owning iterator over `(key, value)`, lowest index first. Made by the
/// `into_iter` method of [`IdTable`](crate::IdTable),
/// [`LookupTable`](crate::LookupTable),
/// [`SecondaryMap`](crate::SecondaryMap), [`Pool`](crate::Pool) and
/// [`Hive`](crate::Hive), which name it for their slots. The values not
/// taken are dropped with it.
///
/// ```
/// let table: handlekit::Pool<char> = ['a', 'b'].into_iter().collect();
/// let all: handlekit::pool::IntoIter<char> = table.into_iter();
/// assert_eq!(all.len(), 2);
/// assert_eq!(all.map(|(_, c)| c).collect::<String>(), "ab");
/// ```
pub struct IntoIter<T, K: Key = Id, C: TakeSlots<T> = SlotArena<T, Split>> {
    /// The slots of a container whose keys are `K`.
    source: C,
    /// Indices below this have been taken.
    next: usize,
    _marker: PhantomData<fn(K) -> (K, T)>,
}

impl<T, K: Key, C: TakeSlots<T>> IntoIter<T, K, C> {
    /// Takes the values out of `source`.
    ///
    /// # Safety
    ///
    /// As for [`Drain::new`].
    #[inline]
    pub(crate) unsafe fn new(source: C) -> Self {
        IntoIter {
            source,
            next: 0,
            _marker: PhantomData,
        }
    }
}

impl<T, K: Key, C: TakeSlots<T>> Iterator for IntoIter<T, K, C> {
    type Item = (K, T);

    #[inline]
    fn next(&mut self) -> Option<(K, T)> {
        let item = self.source.take_next(self.next)?;
        self.next = item.0 + 1;
        // SAFETY: the slots are those of a container whose keys are `K`
        // (`new`).
        Some(unsafe { keyed(item) })
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.source.len();
        (len, Some(len))
    }
}

impl<T, K: Key, C: TakeSlots<T>> ExactSizeIterator for IntoIter<T, K, C> {}
impl<T, K: Key, C: TakeSlots<T>> FusedIterator for IntoIter<T, K, C> {}

impl<T, K: Key, C: TakeSlots<T>> fmt::Debug for IntoIter<T, K, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntoIter")
            .field("remaining", &self.source.len())
            .finish()
    }
}
