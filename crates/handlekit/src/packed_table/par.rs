//! Rayon support: parallel iteration over the dense arrays.

use rayon::prelude::*;

use super::PackedTable;
use crate::Key;

/// Parallel iterator over `(key, &value)`; see [`PackedTable::par_iter`].
pub type ParIter<'a, T, K> =
    rayon::iter::Zip<rayon::iter::Copied<rayon::slice::Iter<'a, K>>, rayon::slice::Iter<'a, T>>;
/// Parallel iterator over `(key, &mut value)`; see
/// [`PackedTable::par_iter_mut`].
pub type ParIterMut<'a, T, K> =
    rayon::iter::Zip<rayon::iter::Copied<rayon::slice::Iter<'a, K>>, rayon::slice::IterMut<'a, T>>;

impl<T: Sync, K: Key> PackedTable<T, K> {
    /// Iterates `(key, &value)` in parallel with rayon; an indexed parallel
    /// iterator over the dense arrays.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let table: handlekit::PackedTable<_> = handlekit::PackedTable::from_iter_values(0..100u64);
    /// assert_eq!(table.par_iter().map(|(_, v)| v).sum::<u64>(), 4950);
    /// ```
    pub fn par_iter(&self) -> ParIter<'_, T, K> {
        let dense = self.core.dense();
        dense.keys.par_iter().copied().zip(dense.values.par_iter())
    }
}

impl<T: Send, K: Key> PackedTable<T, K> {
    /// Iterates `(key, &mut value)` in parallel with rayon.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let mut table: handlekit::PackedTable<_> = handlekit::PackedTable::from_iter_values(0..100u64);
    /// table.par_iter_mut().for_each(|(_, v)| *v += 1);
    /// assert_eq!(table.values().sum::<u64>(), 5050);
    /// ```
    pub fn par_iter_mut(&mut self) -> ParIterMut<'_, T, K> {
        let (keys, values) = self.core.slices_mut();
        keys.par_iter().copied().zip(values.par_iter_mut())
    }
}
