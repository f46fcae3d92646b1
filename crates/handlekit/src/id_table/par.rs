//! Rayon support: parallel iteration over the slots.

use core::marker::PhantomData;

use rayon::iter::plumbing::UnindexedConsumer;
use rayon::prelude::*;

use super::IdTable;
use crate::raw::slot::Slot;
use crate::Key;

/// Parallel iterator over `(key, &value)`; see [`IdTable::par_iter`].
pub struct ParIter<'a, T, K: Key> {
    slots: &'a [Slot<T>],
    _key: PhantomData<fn(K) -> K>,
}

/// Parallel iterator over `(key, &mut value)`; see [`IdTable::par_iter_mut`].
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
                    .map(|value| (IdTable::<T, K>::key(index, generation), value))
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
                    .map(|value| (IdTable::<T, K>::key(index, generation), value))
            })
            .drive_unindexed(consumer)
    }
}

impl<T: Sync, K: Key> IdTable<T, K> {
    /// Iterates `(key, &value)` in parallel with rayon.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let table: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values(0..1000u64);
    /// assert_eq!(table.par_iter().map(|(_, v)| v).sum::<u64>(), 499_500);
    /// ```
    pub fn par_iter(&self) -> ParIter<'_, T, K> {
        ParIter {
            slots: self.arena.slots(),
            _key: PhantomData,
        }
    }
}

impl<T: Send, K: Key> IdTable<T, K> {
    /// Iterates `(key, &mut value)` in parallel with rayon.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let mut table: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values(0..1000u64);
    /// table.par_iter_mut().for_each(|(_, v)| *v *= 2);
    /// assert_eq!(table.values().sum::<u64>(), 999_000);
    /// ```
    pub fn par_iter_mut(&mut self) -> ParIterMut<'_, T, K> {
        ParIterMut {
            slots: self.arena.slots_mut(),
            _key: PhantomData,
        }
    }
}
