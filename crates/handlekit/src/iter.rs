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
use crate::raw::cursor::ValueRef;
use crate::raw::{Keyed, SlotArena, TakeSlots};
use crate::{Id, Key};

mod sealed {
    /// Keeps [`TakeFrom`](super::TakeFrom) to this crate's two holders.
    pub trait SealedHolder {}
}

pub use crate::raw::dense::DenseEntries;
pub use crate::raw::storage::{HiveBlocks, PoolBlocks, Storage};
pub(crate) use crate::raw::storage::{KeyedCursor, RawCursor, ValueCursor};
pub use crate::storage::{BlockStorage, TableStorage};

#[cfg(feature = "rayon")]
pub use crate::slot_par::{ParEntries, ParIter, ParIterMut};

/// The value of a cursor's item.
#[inline(always)]
fn value_of<V>((_, _, value): (usize, u32, V)) -> V {
    value
}

/// Iterator over `(key, value)` in slot order, the value made as `R`:
/// [`Iter`] (`&'a T`) and [`IterMut`] (`&'a mut T`) are its two names.
pub struct Entries<'a, T: 'a, K: Key, S: Storage, R> {
    /// A cursor of the container whose keys are `K`, stepping an index
    /// with the unit beside it.
    raw: Keyed<KeyedCursor<'a, T, S, R>, K>,
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
pub type Iter<'a, T, K = Id, S = Split> = Entries<'a, T, K, S, &'a T>;

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
pub type IterMut<'a, T, K = Id, S = Split> = Entries<'a, T, K, S, &'a mut T>;

impl<'a, T, K: Key, S: Storage, R: ValueRef<T>> Entries<'a, T, K, S, R> {
    /// Iterates what `raw` finds.
    #[inline]
    pub(crate) fn new(raw: Keyed<RawCursor<'a, T, S, R>, K>) -> Self {
        Entries {
            raw: raw.with_pos(),
        }
    }
}

impl<'a, T, K: Key, S: Storage, R: ValueRef<T>> Iterator for Entries<'a, T, K, S, R> {
    type Item = (K, R);

    #[inline(always)]
    fn next(&mut self) -> Option<(K, R)> {
        self.raw.next()
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
    fn fold<B, F: FnMut(B, (K, R)) -> B>(self, init: B, f: F) -> B {
        self.raw.fold(init, f)
    }
}

impl<T, K: Key, S: Storage, R: ValueRef<T>> DoubleEndedIterator for Entries<'_, T, K, S, R> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<(K, R)> {
        self.raw.next_back()
    }
}

impl<T, K: Key, S: Storage, R: ValueRef<T>> ExactSizeIterator for Entries<'_, T, K, S, R> {
    #[inline]
    fn len(&self) -> usize {
        self.raw.len()
    }
}

impl<T, K: Key, S: Storage, R: ValueRef<T>> FusedIterator for Entries<'_, T, K, S, R> {}

impl<'a, T, K: Key, S: Storage> Clone for Iter<'a, T, K, S>
where
    S::Walk<'a, T>: Clone,
{
    fn clone(&self) -> Self {
        Entries {
            raw: self.raw.clone(),
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
    #[inline]
    pub(crate) fn new(raw: Keyed<RawCursor<'a, T, S, &'a T>, K>) -> Self {
        Keys {
            inner: Entries::new(raw),
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
        // `move`, as in `ValueRefs::fold`.
        self.inner.fold(init, move |acc, (key, _)| f(acc, key))
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

/// Iterator over the live values in slot order, made as `R`: [`Values`]
/// (`&'a T`) and [`ValuesMut`] (`&'a mut T`) are its two names.
pub struct ValueRefs<'a, T: 'a, S: Storage, R> {
    /// Steps unit pointers: no index is needed.
    raw: ValueCursor<'a, T, S, R>,
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
pub type Values<'a, T, S = Split> = ValueRefs<'a, T, S, &'a T>;

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
pub type ValuesMut<'a, T, S = Split> = ValueRefs<'a, T, S, &'a mut T>;

impl<'a, T, S: Storage, R: ValueRef<T>> ValueRefs<'a, T, S, R> {
    /// Iterates the values `raw` finds.
    #[inline]
    pub(crate) fn new(raw: RawCursor<'a, T, S, R>) -> Self {
        ValueRefs {
            raw: raw.with_pos(),
        }
    }
}

impl<'a, T, S: Storage, R: ValueRef<T>> Iterator for ValueRefs<'a, T, S, R> {
    type Item = R;

    #[inline(always)]
    fn next(&mut self) -> Option<R> {
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
    fn fold<B, F: FnMut(B, R) -> B>(self, init: B, mut f: F) -> B {
        // `move`: the closure holds `f`, not a reference to it. A block's
        // run is folded out of line (`fold_units_outlined`), and through a
        // reference into this frame the loop reloaded `f`'s captures on
        // every item once a call in `f` might have written memory (a
        // `for_each` into an opaque sink over a full `Hive`: 5 instructions
        // an item, not 4, and 1.3x the time).
        self.raw
            .fold_items(init, move |acc, item| f(acc, value_of(item)))
    }
}

impl<T, S: Storage, R: ValueRef<T>> DoubleEndedIterator for ValueRefs<'_, T, S, R> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<R> {
        self.raw.next_back().map(value_of)
    }
}

impl<T, S: Storage, R: ValueRef<T>> ExactSizeIterator for ValueRefs<'_, T, S, R> {
    #[inline]
    fn len(&self) -> usize {
        self.raw.len()
    }
}

impl<T, S: Storage, R: ValueRef<T>> FusedIterator for ValueRefs<'_, T, S, R> {}

impl<'a, T, S: Storage> Clone for Values<'a, T, S>
where
    S::Walk<'a, T>: Clone,
{
    fn clone(&self) -> Self {
        ValueRefs {
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

impl<T, S: Storage> fmt::Debug for ValuesMut<'_, T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValuesMut")
            .field("remaining", &self.raw.len())
            .finish()
    }
}

/// The slots a removing iterator takes values out of: borrowed
/// (`&'a mut C`, a [`Drain`]) or owned (`Owned<C>`, an [`IntoIter`]).
/// Sealed.
pub trait TakeFrom<T>: sealed::SealedHolder {
    /// The slots.
    #[doc(hidden)]
    type Slots: TakeSlots<T>;
    /// The slots, to take from.
    #[doc(hidden)]
    fn slots(&mut self) -> &mut Self::Slots;
    /// The slots, to count.
    #[doc(hidden)]
    fn slots_ref(&self) -> &Self::Slots;
}

/// A container's slots owned by an [`IntoIter`].
pub struct Owned<C>(C);

impl<C> sealed::SealedHolder for &mut C {}
impl<T, C: TakeSlots<T>> TakeFrom<T> for &mut C {
    type Slots = C;
    #[inline(always)]
    fn slots(&mut self) -> &mut C {
        self
    }
    #[inline(always)]
    fn slots_ref(&self) -> &C {
        self
    }
}

impl<C> sealed::SealedHolder for Owned<C> {}
impl<T, C: TakeSlots<T>> TakeFrom<T> for Owned<C> {
    type Slots = C;
    #[inline(always)]
    fn slots(&mut self) -> &mut C {
        &mut self.0
    }
    #[inline(always)]
    fn slots_ref(&self) -> &C {
        &self.0
    }
}

/// Removing iterator over `(key, value)`, lowest index first, over slots
/// `H` holds: [`Drain`] (borrowed) and [`IntoIter`] (owned) are its two
/// names. The values not taken when it is dropped are dropped then (a
/// `Drain` empties its container); if it is leaked (`mem::forget`), a
/// `Drain` leaves them in the container.
pub struct Taking<T, K: Key, H: TakeFrom<T>> {
    /// The slots of a container whose keys are `K` (`TakeSlots::Key`).
    source: H,
    /// Indices below this have been taken.
    next: usize,
    _marker: PhantomData<fn(K) -> (K, T)>,
}

/// Removing iterator over `(key, value)`, lowest index first. Made by the
/// `drain` method of [`IdTable`](crate::IdTable::drain),
/// [`LookupTable`](crate::LookupTable::drain),
/// [`SecondaryMap`](crate::SecondaryMap::drain),
/// [`Pool`](crate::Pool::drain) and [`Hive`](crate::Hive::drain), which
/// name it for their slots.
///
/// ```
/// let mut table: handlekit::IdTable<char> = ['a', 'b'].into_iter().collect();
/// let drain: handlekit::id_table::Drain<'_, char> = table.drain();
/// assert_eq!(drain.len(), 2);
/// assert_eq!(drain.map(|(_, c)| c).collect::<String>(), "ab");
/// assert!(table.is_empty());
/// ```
pub type Drain<'a, T, K = Id, C = SlotArena<T, K, Split>> = Taking<T, K, &'a mut C>;

/// Owning iterator over `(key, value)`, lowest index first. Made by the
/// `into_iter` method of [`IdTable`](crate::IdTable),
/// [`LookupTable`](crate::LookupTable),
/// [`SecondaryMap`](crate::SecondaryMap), [`Pool`](crate::Pool) and
/// [`Hive`](crate::Hive), which name it for their slots.
///
/// ```
/// let table: handlekit::Pool<char> = ['a', 'b'].into_iter().collect();
/// let all: handlekit::pool::IntoIter<char> = table.into_iter();
/// assert_eq!(all.len(), 2);
/// assert_eq!(all.map(|(_, c)| c).collect::<String>(), "ab");
/// ```
pub type IntoIter<T, K = Id, C = SlotArena<T, K, Split>> = Taking<T, K, Owned<C>>;

impl<'a, T, K: Key, C: TakeSlots<T, Key = K>> Drain<'a, T, K, C> {
    /// Takes the values out of `source`.
    #[inline]
    pub(crate) fn new(source: &'a mut C) -> Self {
        Taking {
            source,
            next: 0,
            _marker: PhantomData,
        }
    }
}

impl<T, K: Key, C: TakeSlots<T, Key = K>> IntoIter<T, K, C> {
    /// Takes the values out of `source`.
    #[inline]
    pub(crate) fn new(source: C) -> Self {
        Taking {
            source: Owned(source),
            next: 0,
            _marker: PhantomData,
        }
    }
}

impl<T, K: Key, H: TakeFrom<T>> Iterator for Taking<T, K, H>
where
    H::Slots: TakeSlots<T, Key = K>,
{
    type Item = (K, T);

    #[inline]
    fn next(&mut self) -> Option<(K, T)> {
        let (index, key, value) = self.source.slots().take_next(self.next)?;
        self.next = index + 1;
        Some((key, value))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.source.slots_ref().len();
        (len, Some(len))
    }
}

impl<T, K: Key, H: TakeFrom<T>> ExactSizeIterator for Taking<T, K, H> where
    H::Slots: TakeSlots<T, Key = K>
{
}
impl<T, K: Key, H: TakeFrom<T>> FusedIterator for Taking<T, K, H> where
    H::Slots: TakeSlots<T, Key = K>
{
}

impl<T, K: Key, H: TakeFrom<T>> Drop for Taking<T, K, H> {
    /// Drops the values not taken (the container's own drop would drop an
    /// owned container's; a drained container is emptied here).
    fn drop(&mut self) {
        self.source.slots().clear();
    }
}

impl<T, K: Key, H: TakeFrom<T>> fmt::Debug for Taking<T, K, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Taking")
            .field("remaining", &self.source.slots_ref().len())
            .finish()
    }
}
