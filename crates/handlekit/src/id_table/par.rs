//! Rayon support for [`IdTable`].

use super::SlotTable;
use crate::layout::Layout;
use crate::slot_par::{ParIter, ParIterMut};
use crate::Key;

impl<T: Sync, K: Key, L: Layout> SlotTable<T, K, L> {
    /// Iterates `(key, &value)` in parallel with rayon.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let table: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values(0..1000u64);
    /// assert_eq!(table.par_iter().map(|(_, v)| v).sum::<u64>(), 499_500);
    /// ```
    pub fn par_iter(&self) -> ParIter<'_, T, K, L> {
        ParIter::new(self.arena.keyed_iter())
    }
}

impl<T: Send, K: Key, L: Layout> SlotTable<T, K, L> {
    /// Iterates `(key, &mut value)` in parallel with rayon.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let mut table: handlekit::IdTable<_> = handlekit::IdTable::from_iter_values(0..1000u64);
    /// table.par_iter_mut().for_each(|(_, v)| *v *= 2);
    /// assert_eq!(table.values().sum::<u64>(), 999_000);
    /// ```
    pub fn par_iter_mut(&mut self) -> ParIterMut<'_, T, K, L> {
        ParIterMut::new(self.arena.keyed_iter_mut())
    }
}
