//! Rayon support: one producer for every container's parallel iteration.
//! It cuts a raw cursor through [`SplitCursor`] (a slot store's at a
//! 64-slot chunk of its state words, for [`IdTable`](crate::IdTable)
//! and [`SecondaryMap`](crate::SecondaryMap); a `Pool`'s or `Hive`'s at a
//! block boundary) and folds each part with the cursor's own fast fold.

use core::fmt;

use rayon::iter::plumbing::{bridge_unindexed, Folder, UnindexedConsumer, UnindexedProducer};
use rayon::iter::ParallelIterator;

use crate::layout::Split;
use crate::raw::cursor::ValueRef;
use crate::raw::storage::{RawCursor, Storage};
use crate::raw::{Keyed, SplitCursor};
use crate::{Id, Key};

/// Parallel iterator over `(key, value)`, the value made as `R`:
/// [`ParIter`] (`&'a T`) and [`ParIterMut`] (`&'a mut T`) are its two
/// names. It is cut between threads where the storage divides (a 64-slot
/// chunk of a slot store, a block of a `Pool` or `Hive`), and each part is
/// folded with the storage's own word-at-a-time loop.
pub struct ParEntries<'a, T: 'a, K: Key, S: Storage, R> {
    /// A cursor of the container whose keys are `K`.
    raw: Keyed<RawCursor<'a, T, S, R>, K>,
}

/// Parallel iterator over `(key, &value)`. Made by the `par_iter` method
/// of [`IdTable`](crate::IdTable::par_iter),
/// [`SecondaryMap`](crate::SecondaryMap::par_iter),
/// [`Pool`](crate::Pool::par_iter) and [`Hive`](crate::Hive::par_iter).
///
/// ```
/// use rayon::prelude::*;
/// let table = handlekit::IdTable::<i32>::from_iter_values([1, 2]);
/// let iter: handlekit::id_table::ParIter<'_, i32> = table.par_iter();
/// assert_eq!(iter.count(), 2);
/// ```
pub type ParIter<'a, T, K = Id, S = Split> = ParEntries<'a, T, K, S, &'a T>;

/// Parallel iterator over `(key, &mut value)`. Made by the `par_iter_mut`
/// method of the same containers.
///
/// ```
/// use rayon::prelude::*;
/// let mut table = handlekit::IdTable::<i32>::from_iter_values([1, 2]);
/// let iter: handlekit::id_table::ParIterMut<'_, i32> = table.par_iter_mut();
/// iter.for_each(|(_, v)| *v += 1);
/// assert_eq!(table.values().sum::<i32>(), 5);
/// ```
pub type ParIterMut<'a, T, K = Id, S = Split> = ParEntries<'a, T, K, S, &'a mut T>;

impl<'a, T, K: Key, S: Storage, R: ValueRef<T>> ParEntries<'a, T, K, S, R> {
    /// Iterates what `raw` finds, in parallel.
    pub(crate) fn new(raw: Keyed<RawCursor<'a, T, S, R>, K>) -> Self {
        ParEntries { raw }
    }
}

impl<T, K: Key, S: Storage, R: ValueRef<T>> fmt::Debug for ParEntries<'_, T, K, S, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ParEntries")
            .field("remaining", &self.raw.len())
            .finish()
    }
}

impl<'a, T, K: Key, S: Storage, R> ParallelIterator for ParEntries<'a, T, K, S, R>
where
    R: ValueRef<T> + Send,
{
    type Item = (K, R);

    fn drive_unindexed<C>(self, consumer: C) -> C::Result
    where
        C: UnindexedConsumer<Self::Item>,
    {
        bridge_unindexed(Parts(self.raw), consumer)
    }
}

/// A part of a keyed cursor, as rayon splits and folds it.
struct Parts<C>(C);

impl<C> UnindexedProducer for Parts<C>
where
    C: SplitCursor + Send,
{
    type Item = C::Item;

    fn split(self) -> (Self, Option<Self>) {
        let (left, right) = self.0.split_part();
        (Parts(left), right.map(Parts))
    }

    fn fold_with<G: Folder<C::Item>>(self, folder: G) -> G {
        // The folder is asked whether it is full only between parts: the
        // raw fold cannot stop early, and it is what makes a pass fast.
        if folder.full() {
            return folder;
        }
        self.0
            .fold_part(folder, |folder, item| folder.consume(item))
    }
}
