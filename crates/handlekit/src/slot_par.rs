//! Rayon support: parallel iteration over the slots of the slot-based
//! containers ([`IdTable`](crate::IdTable), [`SecondaryMap`](crate::SecondaryMap)).

use core::marker::PhantomData;

use rayon::iter::plumbing::UnindexedConsumer;
use rayon::prelude::*;

use crate::raw::slot::Slot;
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
