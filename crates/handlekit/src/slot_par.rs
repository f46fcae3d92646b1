//! Rayon support: one producer for every container's parallel iteration.
//! It cuts a raw cursor through [`SplitCursor`] (a slot store's at a word of
//! its occupancy bitset or in its bit-less tail, for [`IdTable`](crate::IdTable)
//! and [`SecondaryMap`](crate::SecondaryMap); a `Pool`'s or `Hive`'s at a
//! block boundary) and folds each part with the cursor's own fast fold.

use core::marker::PhantomData;

use rayon::iter::plumbing::{bridge_unindexed, Folder, UnindexedConsumer, UnindexedProducer};
use rayon::iter::ParallelIterator;

use crate::raw::store::{RawIter, RawIterMut};
use crate::raw::SplitCursor;
use crate::slot_iter::table_key;
use crate::Key;

/// Parallel iterator over `(key, &value)`; see
/// [`IdTable::par_iter`](crate::IdTable::par_iter).
pub struct ParIter<'a, T, K: Key> {
    raw: RawIter<'a, T>,
    _key: PhantomData<fn(K) -> K>,
}

/// Parallel iterator over `(key, &mut value)`; see
/// [`IdTable::par_iter_mut`](crate::IdTable::par_iter_mut).
pub struct ParIterMut<'a, T, K: Key> {
    raw: RawIterMut<'a, T>,
    _key: PhantomData<fn(K) -> K>,
}

impl<T, K: Key> core::fmt::Debug for ParIter<'_, T, K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ParIter")
            .field("remaining", &self.raw.len())
            .finish()
    }
}

impl<T, K: Key> core::fmt::Debug for ParIterMut<'_, T, K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ParIterMut")
            .field("remaining", &self.raw.len())
            .finish()
    }
}

impl<'a, T: Sync, K: Key> ParallelIterator for ParIter<'a, T, K> {
    type Item = (K, &'a T);

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        drive_keyed(self.raw, consumer)
    }
}

impl<'a, T: Send, K: Key> ParallelIterator for ParIterMut<'a, T, K> {
    type Item = (K, &'a mut T);

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        drive_keyed(self.raw, consumer)
    }
}

impl<'a, T, K: Key> ParIter<'a, T, K> {
    pub(crate) fn new(raw: RawIter<'a, T>) -> Self {
        ParIter {
            raw,
            _key: PhantomData,
        }
    }
}

impl<'a, T, K: Key> ParIterMut<'a, T, K> {
    pub(crate) fn new(raw: RawIterMut<'a, T>) -> Self {
        ParIterMut {
            raw,
            _key: PhantomData,
        }
    }
}

/// A part of a raw cursor, as rayon splits and folds it; `map` turns
/// a raw item into the public one.
struct Parts<C, F> {
    cursor: C,
    map: F,
}

impl<C, F, I> UnindexedProducer for Parts<C, F>
where
    C: SplitCursor + Send,
    F: Fn(C::Item) -> I + Copy + Send,
{
    type Item = I;

    fn split(self) -> (Self, Option<Self>) {
        let map = self.map;
        let (left, right) = self.cursor.split_part();
        (
            Parts { cursor: left, map },
            right.map(|cursor| Parts { cursor, map }),
        )
    }

    fn fold_with<G: Folder<I>>(self, folder: G) -> G {
        // The folder is asked whether it is full only between parts: the
        // raw fold cannot stop early, and it is what makes a pass fast.
        if folder.full() {
            return folder;
        }
        let map = self.map;
        self.cursor
            .fold_part(folder, |folder, item| folder.consume(map(item)))
    }
}

/// Drives `consumer` over the items of a keyed container's raw `cursor`,
/// each as `(key, value)`, in parts as the cursor splits.
pub(crate) fn drive_keyed<K, V, C, Co>(cursor: C, consumer: Co) -> Co::Result
where
    K: Key,
    V: Send,
    C: SplitCursor<Item = (usize, u32, V)> + Send,
    Co: UnindexedConsumer<(K, V)>,
{
    let map = |(index, generation, value)| (table_key::<K>(index, generation), value);
    bridge_unindexed(Parts { cursor, map }, consumer)
}
