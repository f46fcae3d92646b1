//! The dense half shared by [`PackedTable`](crate::PackedTable) and
//! [`SparseSecondaryMap`](crate::SparseSecondaryMap): values packed in one
//! `Vec`, with the key of each in a parallel `Vec`. Whatever index finds a
//! value by key (a slot arena, a paged array) implements [`Positions`], and
//! every operation that moves values tells it where they went.

use alloc::vec::Vec;
use core::cmp::Ordering;
use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::raw::cursor::ValueRef;
use crate::Key;

/// An index from keys to dense positions.
pub(crate) trait Positions<K> {
    /// Points live `key` at `position`.
    fn set_position(&mut self, key: K, position: usize);
    /// Forgets `key`, which is being removed.
    fn forget(&mut self, key: K);
}

/// Values and their keys, packed, in the same order.
pub(crate) struct Dense<K, V> {
    /// Invariant: `keys.len() == values.len()`.
    pub(crate) keys: Vec<K>,
    pub(crate) values: Vec<V>,
}

impl<K: Key, V> Dense<K, V> {
    pub(crate) const fn new() -> Self {
        Dense {
            keys: Vec::new(),
            values: Vec::new(),
        }
    }

    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Dense {
            keys: Vec::with_capacity(capacity),
            values: Vec::with_capacity(capacity),
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// Makes room for one more value, so a following `push` cannot fail.
    #[inline]
    pub(crate) fn reserve_one(&mut self) {
        if self.keys.len() == self.keys.capacity() || self.values.len() == self.values.capacity() {
            self.grow_one();
        }
    }

    /// The slow side of [`reserve_one`](Self::reserve_one).
    #[cold]
    #[inline(never)]
    fn grow_one(&mut self) {
        self.keys.reserve(1);
        self.values.reserve(1);
    }

    #[inline]
    pub(crate) fn push(&mut self, key: K, value: V) {
        self.keys.push(key);
        self.values.push(value);
    }

    /// Removes the value at `position` by moving the last one into its
    /// place, and repoints the moved key. The caller has already made the
    /// index forget the removed key.
    #[inline]
    pub(crate) fn swap_remove(&mut self, position: usize, index: &mut impl Positions<K>) -> V {
        let value = self.values.swap_remove(position);
        self.keys.swap_remove(position);
        if let Some(&moved) = self.keys.get(position) {
            index.set_position(moved, position);
        }
        value
    }

    /// [`swap_remove`](Self::swap_remove) without its bounds checks.
    ///
    /// # Safety
    ///
    /// `position` must be below `values.len()`, and `keys.len()` must equal
    /// `values.len()`.
    #[inline]
    pub(crate) unsafe fn swap_remove_unchecked(
        &mut self,
        position: usize,
        index: &mut impl Positions<K>,
    ) -> V {
        debug_assert!(position < self.values.len() && self.keys.len() == self.values.len());
        // One length for both arrays: they are equally long.
        let last = self.values.len() - 1;
        // The keys first, and with them the one branch (whether another
        // value moves): the value read below then meets no branch before
        // it is returned, and stays in registers (read before the branch,
        // a 64-byte value was copied through the stack twice).
        // `K: Copy`, so the keys need no care over drops.
        // SAFETY: `position <= last < keys.len()`, the caller's promise.
        let moved = unsafe {
            let keys = self.keys.as_mut_ptr();
            let moved = *keys.add(last);
            *keys.add(position) = moved;
            self.keys.set_len(last);
            moved
        };
        if position < last {
            index.set_position(moved, position);
        }
        let values = self.values.as_mut_ptr();
        // The value leaves by a read, the last one fills its place by a
        // copy (onto itself when it is the last), and the length drops
        // over both, so no value is dropped twice or lost.
        // SAFETY: `position <= last < values.len()`, the caller's promise.
        unsafe {
            let value = values.add(position).read();
            core::ptr::copy(values.add(last), values.add(position), 1);
            self.values.set_len(last);
            value
        }
    }

    /// Swaps two positions and repoints both keys.
    pub(crate) fn swap_positions(&mut self, a: usize, b: usize, index: &mut impl Positions<K>) {
        self.values.swap(a, b);
        self.keys.swap(a, b);
        index.set_position(self.keys[a], a);
        index.set_position(self.keys[b], b);
    }

    /// Empties both arrays (the caller clears the index first).
    pub(crate) fn clear(&mut self) {
        self.keys.clear();
        self.values.clear();
    }

    /// Keeps the values for which `keep` is true, in order, telling the
    /// index about every key removed or moved. If `keep` panics, the values
    /// not yet visited stay, and the index stays right.
    pub(crate) fn retain<I: Positions<K>>(
        &mut self,
        index: &mut I,
        mut keep: impl FnMut(K, &mut V) -> bool,
    ) {
        /// Compacts the kept values to the front; its `Drop` finishes the
        /// job, on the normal path and if `keep` panics.
        struct Compactor<'a, K: Key, V, I: Positions<K>> {
            dense: &'a mut Dense<K, V>,
            index: &'a mut I,
            /// Values before this are kept, in place.
            write: usize,
            /// Values from here on are not visited yet; between `write` and
            /// `read` lie removed values, whose keys are already forgotten.
            read: usize,
        }
        impl<K: Key, V, I: Positions<K>> Compactor<'_, K, V, I> {
            fn keep_current(&mut self) {
                if self.write != self.read {
                    self.dense.values.swap(self.write, self.read);
                    self.dense.keys.swap(self.write, self.read);
                    self.index
                        .set_position(self.dense.keys[self.write], self.write);
                }
                self.write += 1;
                self.read += 1;
            }
        }
        impl<K: Key, V, I: Positions<K>> Drop for Compactor<'_, K, V, I> {
            fn drop(&mut self) {
                while self.read < self.dense.values.len() {
                    self.keep_current();
                }
                self.dense.keys.truncate(self.write);
                self.dense.values.truncate(self.write);
            }
        }
        let mut compactor = Compactor {
            dense: self,
            index,
            write: 0,
            read: 0,
        };
        while compactor.read < compactor.dense.values.len() {
            let read = compactor.read;
            let key = compactor.dense.keys[read];
            if keep(key, &mut compactor.dense.values[read]) {
                compactor.keep_current();
            } else {
                compactor.index.forget(key);
                compactor.read += 1;
            }
        }
    }

    /// Sorts by `compare` (stable when `stable`), then moves the values and
    /// keys into that order and repoints every key. If `compare` panics,
    /// nothing has moved.
    pub(crate) fn sort(
        &mut self,
        index: &mut impl Positions<K>,
        stable: bool,
        mut compare: impl FnMut(&V, &V) -> Ordering,
    ) {
        let mut order: Vec<u32> = (0..self.values.len() as u32).collect();
        let values = &self.values;
        let by_value = |a: &u32, b: &u32| compare(&values[*a as usize], &values[*b as usize]);
        if stable {
            order.sort_by(by_value);
        } else {
            order.sort_unstable_by(by_value);
        }
        self.apply_order(order, index);
    }

    /// Reorders so that position `i` holds what was at `order[i]` (a
    /// permutation of `0..len`), then repoints every key.
    fn apply_order(&mut self, mut order: Vec<u32>, index: &mut impl Positions<K>) {
        const DONE: u32 = u32::MAX;
        for start in 0..order.len() {
            if order[start] == DONE {
                continue;
            }
            // Walk the cycle through `start`: each step pulls the value
            // that belongs at `at` into place.
            let mut at = start;
            loop {
                let from = order[at] as usize;
                order[at] = DONE;
                if from == start {
                    break;
                }
                self.values.swap(at, from);
                self.keys.swap(at, from);
                at = from;
            }
        }
        for (position, &key) in self.keys.iter().enumerate() {
            index.set_position(key, position);
        }
    }
}

impl<K: Clone, V: Clone> Clone for Dense<K, V> {
    fn clone(&self) -> Self {
        Dense {
            keys: self.keys.clone(),
            values: self.values.clone(),
        }
    }
}

/// Iterator over the `(key, value)` pairs of a dense array, in order, the
/// value made as `R` (`&T` or `&mut T`): [`packed_table::Iter`] and
/// [`packed_table::IterMut`] are its two names.
///
/// `next()` is one compare and one increment. `fold` (and so `for_each`,
/// `sum`, ...) takes two pairs a step: on some CPUs a short loop whose
/// machine code straddles a 64-byte line runs at about half speed, and
/// where a loop lands is up to the linker. Two pairs a step make the loop
/// long enough for its placement to matter little. Measured on an AMD
/// EPYC with an opaque body, a one-pair loop took 0.79 or 1.43 ns a pair
/// depending on where it landed, the two-pair loop 0.81 to 0.95 wherever
/// it landed.
///
/// [`packed_table::Iter`]: crate::packed_table::Iter
/// [`packed_table::IterMut`]: crate::packed_table::IterMut
///
/// ```
/// let table: handlekit::PackedTable<u32> = (1..=4).collect();
/// let mut iter: handlekit::packed_table::Iter<'_, u32> = table.iter();
/// assert_eq!(iter.len(), 4);
/// assert_eq!(iter.next_back().map(|(_, v)| *v), Some(4));
/// assert_eq!(iter.map(|(_, v)| *v).sum::<u32>(), 6);
/// ```
pub struct DenseEntries<'a, T, K, R> {
    /// The keys, from position 0 of the dense array.
    keys: NonNull<K>,
    /// The values, from position 0. Invariant: `keys` and `values` are
    /// valid for reads (and `values` for writes if `R` is `&mut T`) at
    /// every position in `front..back` for `'a`, borrowed as `R` borrows,
    /// and each position's value is handed out at most once.
    values: NonNull<T>,
    /// The next position from the front.
    front: usize,
    /// One past the next position from the back; `front <= back`.
    back: usize,
    marker: PhantomData<(&'a [K], R)>,
}

impl<'a, T, K: Copy> DenseEntries<'a, T, K, &'a T> {
    /// Iterates `keys` with `values`, pair by pair.
    ///
    /// # Panics
    ///
    /// If there are fewer values than keys (never, for a table's own two
    /// arrays).
    #[inline]
    pub(crate) fn new(keys: &'a [K], values: &'a [T]) -> Self {
        debug_assert_eq!(keys.len(), values.len());
        // The end is the keys' length alone, with the values cut to it (one
        // check, here): from `min` of the two, the optimizer made a `for`
        // loop compare with both lengths on every pair.
        let values = &values[..keys.len()];
        // SAFETY: as many values as keys, borrowed shared for `'a`.
        unsafe { Self::over(keys, NonNull::from(values).cast()) }
    }
}

impl<'a, T, K: Copy> DenseEntries<'a, T, K, &'a mut T> {
    /// Iterates `keys` with `values`, pair by pair, the values mutably.
    ///
    /// # Panics
    ///
    /// As for [`new`](DenseEntries::new).
    #[inline]
    pub(crate) fn new_mut(keys: &'a [K], values: &'a mut [T]) -> Self {
        debug_assert_eq!(keys.len(), values.len());
        // As in `new`.
        let values = &mut values[..keys.len()];
        // SAFETY: as many values as keys, borrowed exclusively for `'a`.
        unsafe { Self::over(keys, NonNull::from(values).cast()) }
    }
}

impl<'a, T, K, R> DenseEntries<'a, T, K, R> {
    /// Iterates `keys` with the values from `values`.
    ///
    /// # Safety
    ///
    /// `values` points to at least `keys.len()` values, valid for `'a` as
    /// `R` borrows them (reads for `&T`; reads and writes, and nothing
    /// else reaching them, for `&mut T`): the invariant on `values`.
    #[inline(always)]
    unsafe fn over(keys: &'a [K], values: NonNull<T>) -> Self {
        DenseEntries {
            keys: NonNull::from(keys).cast(),
            values,
            front: 0,
            back: keys.len(),
            marker: PhantomData,
        }
    }
}

impl<'a, T, K: Copy, R: ValueRef<T>> DenseEntries<'a, T, K, R> {
    /// The pair at `position`.
    ///
    /// # Safety
    ///
    /// `position` is in `front..back`, and the caller takes it out of that
    /// range before the next call, so it is never handed out again.
    #[inline(always)]
    unsafe fn pair(&self, position: usize) -> (K, R) {
        debug_assert!(self.front <= position && position < self.back);
        // SAFETY: the invariant on `values` makes both reads valid, and the
        // caller's promise makes this the one `R` made for `position`.
        unsafe {
            let key = *self.keys.as_ptr().add(position);
            (key, R::from_value_ptr(self.values.as_ptr().add(position)))
        }
    }
}

impl<T, K, R> Default for DenseEntries<'_, T, K, R> {
    /// An iterator over nothing.
    fn default() -> Self {
        DenseEntries {
            keys: NonNull::dangling(),
            values: NonNull::dangling(),
            front: 0,
            back: 0,
            marker: PhantomData,
        }
    }
}

impl<T, K: Copy, R: ValueRef<T>> Iterator for DenseEntries<'_, T, K, R> {
    type Item = (K, R);

    #[inline(always)]
    fn next(&mut self) -> Option<(K, R)> {
        if self.front == self.back {
            return None;
        }
        // SAFETY: `front` is in `front..back` and leaves it below.
        let pair = unsafe { self.pair(self.front) };
        self.front += 1;
        Some(pair)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len(), Some(self.len()))
    }

    #[inline]
    fn count(self) -> usize {
        self.back - self.front
    }

    #[inline]
    fn nth(&mut self, n: usize) -> Option<(K, R)> {
        // The skipped pairs are never handed out: a `&mut T` not made is
        // not aliased, and nothing here needs dropping.
        self.front += n.min(self.back - self.front);
        self.next()
    }

    #[inline]
    fn last(mut self) -> Option<(K, R)> {
        self.next_back()
    }

    #[inline]
    fn fold<B, F: FnMut(B, (K, R)) -> B>(mut self, init: B, mut f: F) -> B {
        let mut acc = init;
        // Two pairs a step (see the type's docs); positions leave the range
        // before `f` sees their pairs, so a panicking `f` leaves nothing
        // handed out twice.
        while self.back - self.front >= 2 {
            // SAFETY: `front` and `front + 1` are in `front..back` and
            // leave it below.
            let (first, second) = unsafe { (self.pair(self.front), self.pair(self.front + 1)) };
            self.front += 2;
            acc = f(acc, first);
            acc = f(acc, second);
        }
        if let Some(pair) = self.next() {
            acc = f(acc, pair);
        }
        acc
    }
}

impl<T, K: Copy, R: ValueRef<T>> DoubleEndedIterator for DenseEntries<'_, T, K, R> {
    #[inline(always)]
    fn next_back(&mut self) -> Option<(K, R)> {
        if self.front == self.back {
            return None;
        }
        // SAFETY: `back - 1` is in `front..back` and leaves it below.
        let pair = unsafe { self.pair(self.back - 1) };
        self.back -= 1;
        Some(pair)
    }

    #[inline]
    fn nth_back(&mut self, n: usize) -> Option<(K, R)> {
        self.back -= n.min(self.back - self.front);
        self.next_back()
    }
}

impl<T, K: Copy, R: ValueRef<T>> ExactSizeIterator for DenseEntries<'_, T, K, R> {
    #[inline]
    fn len(&self) -> usize {
        self.back - self.front
    }
}

impl<T, K: Copy, R: ValueRef<T>> FusedIterator for DenseEntries<'_, T, K, R> {}

impl<T, K> Clone for DenseEntries<'_, T, K, &T> {
    fn clone(&self) -> Self {
        DenseEntries { ..*self }
    }
}

impl<T: fmt::Debug, K: Copy + fmt::Debug, R> fmt::Debug for DenseEntries<'_, T, K, R> {
    /// The pairs left, values shown shared.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = DenseEntries::<'_, T, K, &T> {
            keys: self.keys,
            values: self.values,
            front: self.front,
            back: self.back,
            marker: PhantomData,
        };
        f.debug_list().entries(shared).finish()
    }
}

// SAFETY: the iterator hands out `K`s read from `&[K]` and `R`s, so it can
// go to another thread when a `&[K]` and an `R` can.
unsafe impl<T, K: Sync, R: Send> Send for DenseEntries<'_, T, K, R> {}
// SAFETY: through `&self` it only reads keys and values (`Debug`, `len`):
// as `&[K]` and `R` allow when they are `Sync`.
unsafe impl<T, K: Sync, R: Sync> Sync for DenseEntries<'_, T, K, R> {}
