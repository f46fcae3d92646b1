//! [`StableTable`], the one type behind [`Pool`](crate::Pool) and
//! [`Hive`](crate::Hive): the methods and trait impls both containers have,
//! written once over the raw container their
//! [`BlockStorage`] names. What only one of them has (its constructors and
//! block sizes) is in `pool/mod.rs` and `hive/mod.rs`.

use core::marker::PhantomData;

use crate::iter::{BlockStorage, Drain, IntoIter, Iter, IterMut, Keys, Values, ValuesMut};
#[cfg(feature = "rayon")]
use crate::iter::{ParIter, ParIterMut};
use crate::raw::stable::RawStable;
use crate::raw::TakeSlots;
use crate::Key;

/// A container whose values never move, generic over its blocks: name it
/// by its aliases, [`Pool<T, K>`](crate::Pool) (`StableTable<T, K,
/// PoolBlocks>`: blocks of one size) and [`Hive<T, K>`](crate::Hive)
/// (`StableTable<T, K, HiveBlocks>`: blocks of growing size with
/// occupancy bits). Every method below exists for both; the examples use
/// `Pool`, and read the same with `Hive`.
///
/// ```
/// use handlekit::iter::HiveBlocks;
/// use handlekit::{Hive, Id, StableTable};
///
/// let mut hive: StableTable<&str, Id, HiveBlocks> = Hive::new();
/// let key = hive.insert("stays put");
/// assert_eq!(hive[key], "stays put");
/// ```
pub struct StableTable<T, K: Key, S: BlockStorage> {
    /// The blocks, typed by `K`, so every index and generation they hold
    /// fits `K` and they hand out keys themselves.
    pub(crate) raw: S::Raw<T, K>,
    _key: PhantomData<fn(K) -> K>,
}

impl<T, K: Key, S: BlockStorage> StableTable<T, K, S> {
    /// The container over `raw`.
    pub(crate) const fn from_raw(raw: S::Raw<T, K>) -> Self {
        StableTable {
            raw,
            _key: PhantomData,
        }
    }
}

impl<T, K: Key, S: BlockStorage> StableTable<T, K, S> {
    /// The number of live values.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// c.insert('a');
    /// assert_eq!(c.len(), 1);
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether the container holds no values.
    ///
    /// ```
    /// assert!(handlekit::Pool::<u8>::new().is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.raw.len() == 0
    }

    /// Allocates blocks until `additional` more values fit without
    /// allocating.
    ///
    /// # Panics
    ///
    /// If the key type cannot index that many values, a fixed
    /// capacity is too small, or allocation fails. See
    /// [`try_reserve`](Self::try_reserve).
    ///
    /// ```
    /// let mut c: handlekit::Pool<u8> = handlekit::Pool::new();
    /// c.reserve(1000);
    /// assert!(c.capacity() >= 1000);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        if let Err(err) = self.try_reserve(additional) {
            panic!("{}::reserve: {err}", S::NAME);
        }
    }

    /// Allocates blocks until `additional` more values fit without
    /// allocating, or says why it cannot (blocks allocated before
    /// the failure stay).
    ///
    /// ```
    /// handlekit::define_key! { struct Tiny(u32; index_bits = 4); }
    /// let mut c: handlekit::Pool<u8, Tiny> = Default::default();
    /// assert!(c.try_reserve(16).is_ok());
    /// assert!(c.try_reserve(17).unwrap_err().is_index_space());
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), crate::CapacityError> {
        self.raw.try_reserve(additional)
    }

    /// Inserts a value and returns its key.
    ///
    /// # Panics
    ///
    /// If no slot can be had: see [`try_insert`](Self::try_insert).
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert(42);
    /// assert_eq!(c[key], 42);
    /// ```
    // Forced, as for `IdTable`: the fast path is small, and a call
    // (which takes a large value through memory) costs more than it.
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> K {
        match self.try_insert(value) {
            Ok(key) => key,
            Err(err) => insert_failed::<S>(err),
        }
    }

    /// Inserts the value `make(key)`, where `key` is the key it will
    /// have, and returns that key. If `make` panics, no value is added.
    ///
    /// # Panics
    ///
    /// If no slot can be had, as for [`insert`](Self::insert).
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert_with_key(|key| (key, "self-aware"));
    /// assert_eq!(c[key].0, key);
    /// ```
    pub fn insert_with_key(&mut self, make: impl FnOnce(K) -> T) -> K {
        match self.raw.try_insert_keyed(make) {
            Ok(key) => key,
            Err(err) => insert_failed::<S>(err),
        }
    }

    /// Inserts the value `make(key)` returns, where `key` is the key
    /// it will have, and returns that key; if `make` returns an
    /// error, adds no value and returns the error. If `make` panics,
    /// no value is added.
    ///
    /// # Panics
    ///
    /// If no slot can be had, as for [`insert`](Self::insert)
    /// (before `make` is called).
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.try_insert_with_key(|key| Ok::<_, ()>((key, 1))).unwrap();
    /// assert_eq!(c[key], (key, 1));
    /// assert_eq!(c.try_insert_with_key(|_| Err("no")), Err("no"));
    /// assert_eq!(c.len(), 1);
    /// ```
    pub fn try_insert_with_key<E>(&mut self, make: impl FnOnce(K) -> Result<T, E>) -> Result<K, E> {
        let key = match self.raw.next_key() {
            Ok(key) => key,
            Err(err) => insert_failed::<S>(err),
        };
        let value = make(key)?;
        match self.raw.try_insert_keyed(|filled| {
            debug_assert!(filled == key);
            value
        }) {
            Ok(_) => Ok(key),
            Err(err) => insert_failed::<S>(err),
        }
    }

    /// Whether `key` names a live value.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert(());
    /// assert!(c.contains_key(key));
    /// c.remove(key);
    /// assert!(!c.contains_key(key));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_key(&self, key: K) -> bool {
        self.raw
            .contains(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// The value for `key`, or `None` if the key is stale or foreign.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert("x");
    /// assert_eq!(c.get(key), Some(&"x"));
    /// ```
    #[inline]
    #[must_use]
    pub fn get(&self, key: K) -> Option<&T> {
        self.raw
            .get(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// The value for `key`, mutably, or `None` if the key is stale or
    /// foreign.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert(1);
    /// *c.get_mut(key).unwrap() += 1;
    /// assert_eq!(c[key], 2);
    /// ```
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self, key: K) -> Option<&mut T> {
        self.raw
            .get_mut(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// Mutable references to the values of `N` keys at once, or
    /// `None` if any key is stale or foreign, or if two keys are the
    /// same.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let a = c.insert(1);
    /// let b = c.insert(2);
    /// let [x, y] = c.get_disjoint_mut([a, b]).unwrap();
    /// core::mem::swap(x, y);
    /// assert_eq!((c[a], c[b]), (2, 1));
    /// assert!(c.get_disjoint_mut([a, a]).is_none());
    /// ```
    #[must_use]
    pub fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut T; N]> {
        self.raw.get_disjoint_mut(
            keys.map(|key| (key.index(), crate::raw::keyed::lookup_generation(key))),
        )
    }

    /// A pointer to the value for `key`, or `None` if the key is stale
    /// or foreign.
    ///
    /// **Guarantee:** the pointer stays valid, and keeps pointing at
    /// this value, until the value is removed from the container (by
    /// `remove`, `retain`, `clear`, `drain` or `into_iter`) or the
    /// container is dropped, whatever else is inserted or removed in
    /// between: blocks are never moved or reallocated, and a block is
    /// freed only when it holds no value.
    ///
    /// Using the pointer is `unsafe` and follows the usual aliasing
    /// rules: read through it only while no `&mut` to the value is
    /// live (from `get_mut`, `iter_mut`, `IndexMut`, ...), and write
    /// through it only while no reference to the value obtained from
    /// the container is live. The pointer may be used to write even though
    /// it was obtained through `&self`.
    ///
    /// ```
    /// let mut c = handlekit::Pool::<u32>::new();
    /// let key = c.insert(1);
    /// let ptr = c.get_ptr(key).unwrap();
    /// c.extend(0..10_000); // more blocks
    /// // SAFETY: the value is still there, and no reference to it is live.
    /// unsafe { *ptr.as_ptr() += 1 };
    /// assert_eq!(c[key], 2);
    /// assert_eq!(c.get_ptr(key), Some(ptr));
    /// ```
    #[inline]
    #[must_use]
    pub fn get_ptr(&self, key: K) -> Option<core::ptr::NonNull<T>> {
        self.raw
            .get_ptr(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// The value for `key`, without checking the key.
    ///
    /// # Safety
    ///
    /// `key` must name a live value of this container: one returned by an
    /// insertion into this container and not removed since.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert(7);
    /// // SAFETY: `key` was just returned by `insert`.
    /// assert_eq!(unsafe { *c.get_unchecked(key) }, 7);
    /// ```
    #[inline]
    #[must_use]
    pub unsafe fn get_unchecked(&self, key: K) -> &T {
        debug_assert!(
            self.contains_key(key),
            "get_unchecked with dead key {key:?}"
        );
        // SAFETY: the caller guarantees `key` is live, so its slot
        // exists and is occupied.
        unsafe { self.raw.get_unchecked(key.index()) }
    }

    /// The value for `key`, mutably, without checking the key.
    ///
    /// # Safety
    ///
    /// `key` must name a live value of this container.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert(7);
    /// // SAFETY: `key` was just returned by `insert`.
    /// unsafe { *c.get_unchecked_mut(key) = 8 };
    /// assert_eq!(c[key], 8);
    /// ```
    #[inline]
    #[must_use]
    pub unsafe fn get_unchecked_mut(&mut self, key: K) -> &mut T {
        debug_assert!(
            self.contains_key(key),
            "get_unchecked_mut with dead key {key:?}"
        );
        // SAFETY: the caller guarantees `key` is live.
        unsafe { self.raw.get_unchecked_mut(key.index()) }
    }

    /// Removes the value for `key` and returns it, or `None` if the
    /// key is stale or foreign. Its slot goes on a free list (or
    /// retires, if its generation ran out).
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert(5);
    /// assert_eq!(c.remove(key), Some(5));
    /// assert_eq!(c.remove(key), None);
    /// ```
    // Forced, as for `IdTable`: the fast path is small, and a call
    // (which takes a large value through memory) costs more than it.
    #[inline(always)]
    pub fn remove(&mut self, key: K) -> Option<T> {
        self.raw
            .remove(key.index(), crate::raw::keyed::lookup_generation(key))
    }

    /// Keeps only the values for which `keep(key, &mut value)` returns
    /// `true`, visiting them in key-index order.
    ///
    /// If `keep` panics, or a removed value's `Drop` panics, the values
    /// not yet visited stay in the container.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// c.extend(0..10);
    /// c.retain(|_, n| *n % 2 == 0);
    /// assert_eq!(c.len(), 5);
    /// ```
    pub fn retain(&mut self, keep: impl FnMut(K, &mut T) -> bool) {
        self.raw.retain_keyed(keep);
    }

    /// Removes every value and yields it with its key, in key-index
    /// order.
    ///
    /// The values not yet yielded when the `Drain` is dropped are
    /// dropped then. If the `Drain` is leaked (`mem::forget`), they
    /// stay in the container.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert("x");
    /// assert_eq!(c.drain().collect::<Vec<_>>(), [(key, "x")]);
    /// assert!(c.is_empty());
    /// ```
    pub fn drain(&mut self) -> Drain<'_, T, K, S::Raw<T, K>> {
        Drain::new(&mut self.raw)
    }

    /// Iterates `(key, &value)` in key-index order: block by block,
    /// and within a block by slot, skipping vacant slots by 64-bit masks.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert(1);
    /// assert_eq!(c.iter().collect::<Vec<_>>(), [(key, &1)]);
    /// ```
    #[inline]
    pub fn iter(&self) -> Iter<'_, T, K, S> {
        Iter::new(self.raw.keyed_iter())
    }

    /// Iterates `(key, &mut value)` in key-index order.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert(1);
    /// for (_, value) in c.iter_mut() {
    ///     *value *= 10;
    /// }
    /// assert_eq!(c[key], 10);
    /// ```
    #[inline]
    pub fn iter_mut(&mut self) -> IterMut<'_, T, K, S> {
        IterMut::new(self.raw.keyed_iter_mut())
    }

    /// Iterates the keys of the live values, in key-index order.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert(1);
    /// assert_eq!(c.keys().collect::<Vec<_>>(), [key]);
    /// ```
    #[inline]
    pub fn keys(&self) -> Keys<'_, T, K, S> {
        Keys::new(self.raw.keyed_iter())
    }

    /// Iterates the live values, in key-index order.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// c.extend([1, 2]);
    /// assert_eq!(c.values().sum::<i32>(), 3);
    /// ```
    #[inline]
    pub fn values(&self) -> Values<'_, T, S> {
        Values::new(self.raw.iter())
    }

    /// Iterates the live values mutably, in key-index order.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert(1);
    /// c.values_mut().for_each(|v| *v += 1);
    /// assert_eq!(c[key], 2);
    /// ```
    #[inline]
    pub fn values_mut(&mut self) -> ValuesMut<'_, T, S> {
        ValuesMut::new(self.raw.iter_mut())
    }

    /// Checks the container's internal invariants and panics if one is
    /// broken. O(slots). For tests and fuzzing; not part of the stable
    /// API.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
        self.raw.check_invariants();
    }
}

#[cold]
#[track_caller]
fn insert_failed<S: BlockStorage>(err: crate::CapacityError) -> ! {
    panic!("{}::insert: {err}", S::NAME)
}

#[cold]
#[track_caller]
fn invalid_key<K: Key, S: BlockStorage>(key: K) -> ! {
    panic!(
        "{}: no live value for key {key:?} (stale, or from another {})",
        S::NAME,
        S::NOUN
    )
}

impl<T: core::fmt::Debug, K: Key, S: BlockStorage> core::fmt::Debug for StableTable<T, K, S> {
    /// Formats as a map from key to value.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// c.insert('a');
    /// assert_eq!(format!("{c:?}"), "{PoolKey(0v1): 'a'}");
    /// ```
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<T, K: Key, S: BlockStorage> core::ops::Index<K> for StableTable<T, K, S> {
    type Output = T;

    /// # Panics
    ///
    /// If `key` is stale or foreign; the message names the key.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert(1);
    /// assert_eq!(c[key], 1);
    /// ```
    #[inline]
    #[track_caller]
    fn index(&self, key: K) -> &T {
        match self.get(key) {
            Some(value) => value,
            None => invalid_key::<K, S>(key),
        }
    }
}

impl<T, K: Key, S: BlockStorage> core::ops::IndexMut<K> for StableTable<T, K, S> {
    /// # Panics
    ///
    /// If `key` is stale or foreign; the message names the key.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// let key = c.insert(1);
    /// c[key] = 2;
    /// assert_eq!(c[key], 2);
    /// ```
    #[inline]
    #[track_caller]
    fn index_mut(&mut self, key: K) -> &mut T {
        match self.get_mut(key) {
            Some(value) => value,
            None => invalid_key::<K, S>(key),
        }
    }
}

impl<T: PartialEq, K: Key, S: BlockStorage> PartialEq for StableTable<T, K, S> {
    /// Two containers are equal when they hold the same values under the same keys.
    ///
    /// ```
    /// let a: handlekit::Pool<_> = [1, 2].into_iter().collect();
    /// let b: handlekit::Pool<_> = [1, 2].into_iter().collect();
    /// assert_eq!(a, b);
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(key, value)| other.get(key) == Some(value))
    }
}

impl<T: Eq, K: Key, S: BlockStorage> Eq for StableTable<T, K, S> {}

impl<T, K: Key, S: BlockStorage> Extend<T> for StableTable<T, K, S> {
    /// Inserts every value; the keys are discarded. If the iterator
    /// panics, the values inserted so far stay.
    ///
    /// ```
    /// let mut c = handlekit::Pool::new();
    /// c.extend([1, 2, 3]);
    /// assert_eq!(c.len(), 3);
    /// ```
    fn extend<I: IntoIterator<Item = T>>(&mut self, values: I) {
        for value in values {
            self.insert(value);
        }
    }
}

impl<T, K: Key, S: BlockStorage> StableTable<T, K, S> {
    /// Builds a container from values, keyed in iteration order (the first
    /// value gets index 0), as `collect` does; the name is
    /// [`IdTable`](crate::IdTable)'s.
    ///
    /// ```
    /// let c: handlekit::Pool<_> = handlekit::Pool::from_iter_values(["a", "b"]);
    /// assert_eq!(c.len(), 2);
    /// ```
    #[must_use]
    pub fn from_iter_values(values: impl IntoIterator<Item = T>) -> Self {
        values.into_iter().collect()
    }
}

impl<T, K: Key, S: BlockStorage> FromIterator<T> for StableTable<T, K, S> {
    /// A container of the values, keyed in iteration order (the first value gets index 0).
    ///
    /// ```
    /// use handlekit::{Pool, Key};
    /// let c: Pool<&str> = ["a", "b"].into_iter().collect();
    /// assert_eq!(c.keys().map(|k| k.index()).collect::<Vec<_>>(), [0, 1]);
    /// ```
    fn from_iter<I: IntoIterator<Item = T>>(values: I) -> Self {
        let mut container = Self::default();
        container.extend(values);
        container
    }
}

impl<'a, T, K: Key, S: BlockStorage> IntoIterator for &'a StableTable<T, K, S> {
    type Item = (K, &'a T);
    type IntoIter = Iter<'a, T, K, S>;

    /// ```
    /// let c: handlekit::Pool<_> = [1].into_iter().collect();
    /// for (key, value) in &c {
    ///     assert_eq!(c[key], *value);
    /// }
    /// ```
    fn into_iter(self) -> Iter<'a, T, K, S> {
        self.iter()
    }
}

impl<'a, T, K: Key, S: BlockStorage> IntoIterator for &'a mut StableTable<T, K, S> {
    type Item = (K, &'a mut T);
    type IntoIter = IterMut<'a, T, K, S>;

    /// ```
    /// let mut c: handlekit::Pool<_> = [1].into_iter().collect();
    /// for (_, value) in &mut c {
    ///     *value += 1;
    /// }
    /// assert_eq!(c.values().next(), Some(&2));
    /// ```
    fn into_iter(self) -> IterMut<'a, T, K, S> {
        self.iter_mut()
    }
}

impl<T, K: Key, S: BlockStorage> IntoIterator for StableTable<T, K, S> {
    type Item = (K, T);
    type IntoIter = IntoIter<T, K, S::Raw<T, K>>;

    /// ```
    /// let c: handlekit::Pool<_> = [String::from("x")].into_iter().collect();
    /// let all: Vec<_> = c.into_iter().map(|(_, v)| v).collect();
    /// assert_eq!(all, ["x"]);
    /// ```
    fn into_iter(self) -> IntoIter<T, K, S::Raw<T, K>> {
        IntoIter::new(self.raw)
    }
}

#[cfg(feature = "rayon")]
impl<T: Sync, K: Key, S: BlockStorage> StableTable<T, K, S> {
    /// Iterates `(key, &value)` in parallel with rayon. The work is
    /// cut between threads at block boundaries, so a
    /// container of one block runs on one thread.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let c: handlekit::Pool<u64> = (0..10_000).collect();
    /// assert_eq!(c.par_iter().map(|(_, v)| v).sum::<u64>(), 49_995_000);
    /// assert!(c.par_iter().all(|(key, v)| c[key] == *v));
    /// ```
    pub fn par_iter(&self) -> ParIter<'_, T, K, S> {
        ParIter::new(self.raw.keyed_iter())
    }
}

#[cfg(feature = "rayon")]
impl<T: Send, K: Key, S: BlockStorage> StableTable<T, K, S> {
    /// Iterates `(key, &mut value)` in parallel with rayon, cut
    /// between threads at block boundaries.
    ///
    /// ```
    /// use rayon::prelude::*;
    /// let mut c: handlekit::Pool<u64> = (0..10_000).collect();
    /// c.par_iter_mut().for_each(|(_, v)| *v *= 2);
    /// assert_eq!(c.values().sum::<u64>(), 99_990_000);
    /// ```
    pub fn par_iter_mut(&mut self) -> ParIterMut<'_, T, K, S> {
        ParIterMut::new(self.raw.keyed_iter_mut())
    }
}

/// What both containers count and hold, and the calls that differ only in
/// their raw container.
impl<T, K: Key, S: BlockStorage> StableTable<T, K, S> {
    /// Creates an empty container for any key type, with room for at least
    /// `capacity` values in blocks of the default sizes.
    ///
    /// # Panics
    ///
    /// If `capacity` is more than the key type can index, or allocation
    /// fails.
    ///
    /// ```
    /// let pool: handlekit::Pool<u32, handlekit::Id32> = handlekit::Pool::with_capacity_and_key(10_000);
    /// assert!(pool.capacity() >= 10_000);
    /// let hive: handlekit::Hive<u32, handlekit::Id32> = handlekit::Hive::with_capacity_and_key(10_000);
    /// assert!(hive.capacity() >= 10_000 && hive.is_empty());
    /// ```
    #[must_use]
    pub fn with_capacity_and_key(capacity: usize) -> Self {
        let mut container = Self::default();
        container.reserve(capacity);
        container
    }

    /// Blocks allocated now, including those [`reserve`](Self::reserve)
    /// allocated ahead (a hive's freed blocks are not counted).
    ///
    /// ```
    /// let mut pool: handlekit::Pool<u8> = handlekit::Pool::with_block_size(4);
    /// assert_eq!(pool.block_count(), 0);
    /// pool.extend(0..5);
    /// assert_eq!(pool.block_count(), 2);
    /// pool.reserve(8);
    /// assert_eq!(pool.block_count(), 4);
    ///
    /// let mut hive: handlekit::Hive<u8> = handlekit::Hive::with_block_sizes(4, 4);
    /// let keys: Vec<_> = (0..8).map(|n| hive.insert(n)).collect();
    /// keys.into_iter().for_each(|key| { hive.remove(key); });
    /// assert_eq!(hive.block_count(), 2); // emptied blocks stay
    /// hive.shrink_to_fit();
    /// assert_eq!(hive.block_count(), 0);
    /// ```
    #[inline]
    #[must_use]
    pub fn block_count(&self) -> usize {
        self.raw.block_count()
    }

    /// The number of values the container can hold without allocating a
    /// block: every slot of the blocks allocated so far, less retired
    /// slots.
    ///
    /// ```
    /// let mut pool: handlekit::Pool<u8> = handlekit::Pool::with_block_size(8);
    /// assert_eq!(pool.capacity(), 0);
    /// pool.insert(1);
    /// assert_eq!(pool.capacity(), 8);
    /// ```
    #[inline]
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.raw.capacity()
    }

    /// The fixed capacity, for a container made by `with_fixed_capacity`.
    ///
    /// ```
    /// let pool: handlekit::Pool<u8> = handlekit::Pool::with_fixed_capacity(3);
    /// assert_eq!(pool.fixed_capacity(), Some(3));
    /// assert_eq!(handlekit::Hive::<u8>::new().fixed_capacity(), None);
    /// ```
    #[inline]
    #[must_use]
    pub fn fixed_capacity(&self) -> Option<usize> {
        self.raw.fixed_capacity()
    }

    /// The number of slots retired because their generation ran out; they
    /// keep their memory and are never reused, so no key is issued twice.
    /// A hive's freed block takes its retired slots with it.
    ///
    /// ```
    /// handlekit::define_key! { struct Narrow(u32; index_bits = 30); } // 2 generation bits
    /// let mut pool: handlekit::Pool<u8, Narrow> = handlekit::Pool::with_block_size(4);
    /// for _ in 0..3 {
    ///     let key = pool.insert(0);
    ///     pool.remove(key);
    /// }
    /// assert_eq!(pool.retired_count(), 1);
    /// ```
    #[inline]
    #[must_use]
    pub fn retired_count(&self) -> usize {
        self.raw.retired()
    }

    /// Bytes of heap memory the container holds. A pool: its blocks' slots
    /// (a 4-byte state word plus the value, or a 4-byte link, whichever is
    /// larger, per slot) and the directory of blocks (16 bytes per block).
    /// A hive: its blocks (slots, headers and occupancy bits) and its
    /// tables.
    ///
    /// ```
    /// let pool: handlekit::Pool<u64> = handlekit::Pool::with_fixed_capacity(64);
    /// assert_eq!(pool.heap_bytes(), 64 * (4 + 8) + 16);
    /// let hive: handlekit::Hive<u64> = handlekit::Hive::with_capacity(64);
    /// assert!(hive.heap_bytes() >= 64 * 16 + 8);
    /// ```
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.raw.heap_bytes()
    }

    /// Inserts a value and returns its key, or a [`CapacityError`] if the
    /// container is full or the key type has no index left (the value is
    /// dropped then).
    ///
    /// ```
    /// let mut pool: handlekit::Pool<u8> = handlekit::Pool::with_fixed_capacity(1);
    /// assert!(pool.try_insert(1).is_ok());
    /// assert!(pool.try_insert(2).unwrap_err().is_fixed_capacity());
    ///
    /// handlekit::define_key! { struct Tiny(u32; index_bits = 1); }
    /// let mut hive: handlekit::Hive<u8, Tiny> = handlekit::Hive::default();
    /// assert!(hive.try_insert(1).is_ok() && hive.try_insert(2).is_ok());
    /// assert!(hive.try_insert(3).unwrap_err().is_index_space());
    /// ```
    ///
    /// [`CapacityError`]: crate::CapacityError
    // Forced, as `insert` is.
    #[inline(always)]
    pub fn try_insert(&mut self, value: T) -> Result<K, crate::CapacityError> {
        self.raw.try_insert_keyed(|_| value)
    }

    /// Removes every value. The blocks stay (a hive's are freed by
    /// [`shrink_to_fit`](crate::Hive::shrink_to_fit)), and every slot
    /// keeps its generation, so keys issued before stay stale.
    ///
    /// If a value's `Drop` panics, the other values are still dropped and
    /// the container is left empty; then the panic propagates.
    ///
    /// ```
    /// let mut pool = handlekit::Pool::new();
    /// let key = pool.insert(1);
    /// pool.clear();
    /// assert!(pool.is_empty());
    /// pool.insert(2);
    /// assert_eq!(pool.get(key), None);
    /// ```
    pub fn clear(&mut self) {
        self.raw.clear();
    }
}

impl<T, K: Key, S: BlockStorage> Default for StableTable<T, K, S> {
    /// An empty container with the default block sizes.
    ///
    /// ```
    /// let pool: handlekit::Pool<u8, handlekit::Id32> = Default::default();
    /// let hive: handlekit::Hive<u8, handlekit::Id32> = Default::default();
    /// assert!(pool.is_empty() && hive.is_empty());
    /// ```
    fn default() -> Self {
        Self::from_raw(S::empty::<T, K>())
    }
}

impl<T: Clone, K: Key, S: BlockStorage> Clone for StableTable<T, K, S>
where
    S::Raw<T, K>: Clone,
{
    /// A copy with the same keys, generations, free lists and block sizes
    /// (a fixed container's copy is fixed too): the copy issues the same
    /// keys as the original would. The copy's values are at new addresses.
    ///
    /// ```
    /// let mut pool = handlekit::Pool::new();
    /// let key = pool.insert(String::from("x"));
    /// let mut copy = pool.clone();
    /// assert_eq!(copy[key], "x");
    /// assert_eq!(copy.insert(String::new()), pool.insert(String::new()));
    /// ```
    fn clone(&self) -> Self {
        Self::from_raw(self.raw.clone())
    }
}
