//! Rayon support for [`SecondaryMap`].

use super::SecondaryMap;
use crate::slot_par::{ParIter, ParIterMut};
use crate::Key;

impl<K: Key, V: Sync> SecondaryMap<K, V> {
    /// Iterates `(key, &value)` in parallel with rayon.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SecondaryMap::new();
    /// for n in 0..100u64 {
    ///     map.insert(table.insert(()), n);
    /// }
    /// assert_eq!(map.par_iter().map(|(_, v)| v).sum::<u64>(), 4950);
    /// ```
    pub fn par_iter(&self) -> ParIter<'_, V, K> {
        ParIter::new(self.store.keyed_iter())
    }
}

impl<K: Key, V: Send> SecondaryMap<K, V> {
    /// Iterates `(key, &mut value)` in parallel with rayon.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SecondaryMap::new();
    /// let key = table.insert(());
    /// map.insert(key, 1u64);
    /// map.par_iter_mut().for_each(|(_, v)| *v += 1);
    /// assert_eq!(map[key], 2);
    /// ```
    pub fn par_iter_mut(&mut self) -> ParIterMut<'_, V, K> {
        ParIterMut::new(self.store.keyed_iter_mut())
    }
}
