//! Rayon support: parallel iteration over the slots of the slot-based
//! containers ([`IdTable`](crate::IdTable), [`SecondaryMap`](crate::SecondaryMap)),
//! and over the blocks of the stable ones ([`Pool`](crate::Pool),
//! [`Hive`](crate::Hive)), whose raw cursors split at block boundaries.

use core::marker::PhantomData;

use rayon::iter::plumbing::{bridge_unindexed, Folder, UnindexedConsumer, UnindexedProducer};
use rayon::prelude::*;

use crate::raw::slot::Slot;
use crate::raw::SplitCursor;
use crate::slot_iter::table_key;
use crate::Key;

/// Parallel iterator over `(key, &value)`; see
/// [`IdTable::par_iter`](crate::IdTable::par_iter).
pub struct ParIter<'a, T, K: Key> {
    slots: &'a [Slot<T>],
    _key: PhantomData<fn(K) -> K>,
}

/// Parallel iterator over `(key, &mut value)`; see
/// [`IdTable::par_iter_mut`](crate::IdTable::par_iter_mut).
pub struct ParIterMut<'a, T, K: Key> {
    slots: &'a mut [Slot<T>],
    _key: PhantomData<fn(K) -> K>,
}

impl<'a, T: Sync, K: Key> ParallelIterator for ParIter<'a, T, K> {
    type Item = (K, &'a T);

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        self.slots
            .par_iter()
            .enumerate()
            .filter_map(|(index, slot)| {
                let generation = slot.generation();
                slot.get()
                    .map(|value| (table_key::<K>(index, generation), value))
            })
            .drive_unindexed(consumer)
    }
}

impl<'a, T: Send, K: Key> ParallelIterator for ParIterMut<'a, T, K> {
    type Item = (K, &'a mut T);

    fn drive_unindexed<C: UnindexedConsumer<Self::Item>>(self, consumer: C) -> C::Result {
        self.slots
            .par_iter_mut()
            .enumerate()
            .filter_map(|(index, slot)| {
                let generation = slot.generation();
                slot.get_mut()
                    .map(|value| (table_key::<K>(index, generation), value))
            })
            .drive_unindexed(consumer)
    }
}

impl<'a, T, K: Key> ParIter<'a, T, K> {
    pub(crate) fn new(slots: &'a [Slot<T>]) -> Self {
        ParIter {
            slots,
            _key: PhantomData,
        }
    }
}

impl<'a, T, K: Key> ParIterMut<'a, T, K> {
    pub(crate) fn new(slots: &'a mut [Slot<T>]) -> Self {
        ParIterMut {
            slots,
            _key: PhantomData,
        }
    }
}

/// A part of a raw block cursor, as rayon splits and folds it; `map` turns
/// a raw item into the public one.
struct BlockParts<C, F> {
    cursor: C,
    map: F,
}

impl<C, F, I> UnindexedProducer for BlockParts<C, F>
where
    C: SplitCursor + Send,
    F: Fn(C::Item) -> I + Copy + Send,
{
    type Item = I;

    fn split(self) -> (Self, Option<Self>) {
        let map = self.map;
        let (left, right) = self.cursor.split_at_block();
        (
            BlockParts { cursor: left, map },
            right.map(|cursor| BlockParts { cursor, map }),
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

/// Drives `consumer` over the items of `cursor`, each turned by `map`,
/// with the parts split at block boundaries.
pub(crate) fn drive_blocks<C, F, I, Co>(cursor: C, map: F, consumer: Co) -> Co::Result
where
    C: SplitCursor + Send,
    F: Fn(C::Item) -> I + Copy + Send,
    I: Send,
    Co: UnindexedConsumer<I>,
{
    bridge_unindexed(BlockParts { cursor, map }, consumer)
}
