//! Restoring the locality of a list of indices: seed 001's "list of valid
//! indices", which "can degrade in terms of memory access patterns into the
//! array as they become unsorted over time. A quick way to repair that is to
//! radix sort the indices from time to time."
//!
//! The sorts here are radix sorts (the `radsort` crate): O(n), stable, and
//! they skip the bytes that are equal in every index. Feature `radsort`
//! (on by default).

use crate::Key;

/// Sorts keys by slot index, so that visiting a table through them (an
/// [`IdTable`](crate::IdTable), a [`SecondaryMap`](crate::SecondaryMap), an
/// [`IndexLists`](crate::IndexLists)) sweeps its slots in memory order
/// instead of jumping around. Stable: keys with the same index (stale ones
/// beside a live one) keep their relative order. O(n) time, O(n) scratch.
///
/// ```
/// use handlekit::{IdTable, Key};
///
/// let mut table = IdTable::new();
/// let mut visit: Vec<_> = (0..8).map(|i| table.insert(i)).collect();
/// visit.reverse(); // an order that jumps backwards through memory
/// handlekit::sort_keys(&mut visit);
/// let slots: Vec<usize> = visit.iter().map(|key| key.index()).collect();
/// assert_eq!(slots, [0, 1, 2, 3, 4, 5, 6, 7]);
/// let sum: i32 = visit.iter().map(|&key| table[key]).sum();
/// assert_eq!(sum, 28);
/// ```
pub fn sort_keys<K: Key>(keys: &mut [K]) {
    // Indices fit in 32 bits for every key type (`INDEX_BITS <= 32`).
    radsort::sort_by_key(keys, |key| key.index() as u32);
}

/// Sorts plain `u32` indices in increasing order, with a radix sort.
///
/// ```
/// let mut indices = vec![7u32, 3, 9, 0, 3];
/// handlekit::sort_indices(&mut indices);
/// assert_eq!(indices, [0, 3, 3, 7, 9]);
/// ```
pub fn sort_indices(indices: &mut [u32]) {
    radsort::sort(indices);
}
