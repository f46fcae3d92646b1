//! [`Pool`]: the typed free-list block allocator, with generational keys and
//! stable addresses; and its iterators.

#[cfg(feature = "serde")]
mod serde_impl;

use crate::iter::PoolBlocks;
use crate::raw::pool::RawPool;
use crate::raw::KeyLimits;
use crate::{Key, PoolKey};
use crate::{SlotTable, StableTable};

/// A typed free-list block allocator: values live in blocks that are never
/// moved or reallocated, freed slots are reused through a free list
/// threaded through their own memory, and a generational key finds a value
/// with one bounds check, one read from a directory of blocks (8 bytes per
/// block) and one compare.
///
/// This is seed 001's free list (`fl_create` / `fl_malloc` / `fl_free`)
/// made safe: a key instead of a raw pointer, so a stale handle is
/// detected, and [`get_ptr`](Pool::get_ptr) for code that needs the
/// address.
///
/// | operation | cost |
/// | --- | --- |
/// | `insert` | O(1), amortized (see Reuse order): pop the free list, else the next unused slot, else a new block |
/// | `remove` | O(1) |
/// | `get`, `get_mut`, `get_ptr`, `contains_key` | O(1) |
/// | iteration | O(used slots): every slot ever used is checked |
/// | `clear`, `retain` | O(slots) |
///
/// # Stable addresses
///
/// A value never moves while it is in the pool: inserting never reallocates
/// a block (a new block is added instead), and removing other values does
/// not touch it. The pointer from [`get_ptr`](Pool::get_ptr) therefore
/// stays valid **until that value is removed (by `remove`, `retain`,
/// `clear`, `drain` or `into_iter`) or the pool is dropped**, across any
/// number of other insertions and removals.
///
/// # Blocks
///
/// A block holds `block_size()` slots, a power of two, so a key's flat
/// index finds its block with a shift. The default
/// size is as many slots as fit in 64 KiB, kept within 64..=16384;
/// [`with_block_size`](Pool::with_block_size) picks another. A block is
/// allocated when the free list is empty and every slot has been used, or
/// ahead of time by [`reserve`](Pool::reserve); its slots are then handed
/// out in order. Blocks are freed only when the pool
/// is dropped (their slots keep the generations that make stale keys
/// fail). [`with_fixed_capacity`](Pool::with_fixed_capacity) allocates one
/// block of exactly the capacity and never allocates again.
///
/// # Reuse order
///
/// An insertion reuses the most recently freed slot (the free list is a
/// stack), which keeps a churning pool's working set small. One exception:
/// when an insertion finds the pool empty, and at least half the used
/// slots were freed since the list was last put in order, the list is put
/// in index order, lowest first. Refilling an emptied pool then walks its
/// blocks forwards rather than in the random order of the removals. With
/// no retired slot this is a sweep over the slots, two writes (at a
/// million `u64`s, 1.6 ns per insert in the comparison runner, 1.2 to 1.3
/// times an [`IdTable`](crate::IdTable)'s, where relinking the list slot
/// by slot first took 3.7, and refilling in the order of the removals
/// about 80); otherwise
/// the list is rebuilt, which costs O(used slots) and runs at most once
/// per that many removals, so `insert` stays O(1) amortized. Either runs
/// at the refill rather than at the removal that empties the pool, so
/// `remove` never does more than O(1), and a pool that is emptied and then
/// dropped never pays for it. [`clear`](Pool::clear) and deserialization
/// leave the list in index order too.
///
/// # Iteration
///
/// A pool keeps no occupancy bits and no per-block counters: `remove` and
/// a reusing `insert` write the slot and the pool's own counters and
/// nothing else. The state words of all slots lie in one array and each
/// block holds only payloads (as [`IdTable`](crate::IdTable) keeps its
/// state words apart from its values), and the state words are the
/// occupancy: a pass turns 64 of them into a mask at a
/// time and reads only the live payloads, so its cost follows the values
/// live, not the slots used. Counted with callgrind over 100,000 `u64`
/// slots (instructions per live value, Pool / `IdTable` / `SlotMap`):
///
/// | `iter()` pass over `(key, value)` | Pool | `IdTable` | `SlotMap` |
/// | --- | --- | --- | --- |
/// | every slot live | 6.0 | 5.8 | 19.0 |
/// | half the slots live | 15.5 | 14.8 | 26.0 |
/// | 5% live | 38 | 31 | 152 |
///
/// An earlier pool kept each state word beside its value, for one cache
/// line per lookup: the same passes cost 15, 22 and 148 instructions per
/// value, took 2 to 25 times as long as `IdTable`'s in the comparison
/// runner, and its writes measured no faster than with the split layout.
///
/// Memory: `4 + max(size_of::<T>(), 4)` bytes per slot, the payload
/// rounded up to `max(align_of::<T>(), 4)` (12 bytes for `u64`), and per
/// block an 8-byte entry in the directory that lookups by key go through.
/// A block has no header. The state words lie in one array over all the
/// blocks, checked before the directory is read, so a lookup costs what
/// an `IdTable` lookup costs plus one directory read. That array grows by
/// doubling when a block is added, as a `Vec` does, so up to 4 bytes per
/// slot may be room for blocks to come; it moves when it grows, the
/// values never do. [`with_fixed_capacity`](Pool::with_fixed_capacity)
/// and [`reserve`](Pool::reserve) size it once.
///
/// # Stale keys
///
/// Removing a value bumps its slot's generation, so every key to it goes
/// stale: `get` returns `None` and `Index` panics. Keys from another pool,
/// forged keys and stale keys never cause undefined behaviour. A slot whose
/// generation reaches [`Key::MAX_GENERATION`] retires and is never reused
/// (see [`IdTable`](crate::IdTable) for the story).
///
/// # Serde
///
/// With the `serde` feature, a pool serializes as its used slots in index
/// order, each as `(generation, Option<value>)`, so every key stays valid
/// and every stale key stays stale after a round trip. Deserialization
/// checks every generation and the slot count against the key type and
/// rebuilds the free list in index order. The block size and a fixed
/// capacity are not part of the form (no key depends on them): a loaded
/// pool has the default block size and can grow, and no block size is ever
/// read from untrusted input.
///
/// # Examples
///
/// ```
/// use handlekit::Pool;
///
/// let mut pool = Pool::new();
/// let a = pool.insert(String::from("apple"));
/// let ptr = pool.get_ptr(a).unwrap();
/// for n in 0..10_000 {
///     pool.insert(n.to_string()); // adds blocks; `a` does not move
/// }
/// // SAFETY: `a` is still in the pool, and no reference to it is live.
/// assert_eq!(unsafe { ptr.as_ref() }, "apple");
/// assert_eq!(pool.remove(a).as_deref(), Some("apple"));
/// assert_eq!(pool.get(a), None); // stale
/// ```
pub type Pool<T, K = PoolKey> = StableTable<T, K, PoolBlocks>;

impl<T, K: Key> SlotTable<T, K, PoolBlocks> {
    /// Creates an empty pool whose blocks hold `slots` values each, rounded
    /// up to a power of two. It allocates nothing until the first insertion.
    ///
    /// # Panics
    ///
    /// If `slots` is 0 or above 2³¹.
    ///
    /// ```
    /// let pool: handlekit::Pool<u8> = handlekit::Pool::with_block_size(100);
    /// assert_eq!(pool.block_size(), 128);
    /// ```
    #[must_use]
    pub fn with_block_size(slots: usize) -> Self {
        assert!(
            slots > 0 && slots <= 1 << 31,
            "block size must be in 1..=2^31, not {slots}"
        );
        SlotTable::from_raw(RawPool::new(
            KeyLimits::of::<K>(),
            slots.next_power_of_two().trailing_zeros(),
        ))
    }

    /// Creates a pool with room for exactly `capacity` values, allocated now
    /// in one block. It never allocates again: when it is full,
    /// [`try_insert`](Self::try_insert) returns a [`CapacityError`](crate::CapacityError). This is
    /// the seed's "memory pool with a known maximum".
    ///
    /// # Panics
    ///
    /// If `capacity` is more than the key type can index.
    ///
    /// ```
    /// let mut pool: handlekit::Pool<u32> = handlekit::Pool::with_fixed_capacity(2);
    /// let a = pool.insert(1);
    /// pool.insert(2);
    /// assert!(pool.try_insert(3).unwrap_err().is_fixed_capacity());
    /// pool.remove(a);
    /// assert!(pool.try_insert(3).is_ok()); // the freed slot is reused
    /// ```
    #[must_use]
    pub fn with_fixed_capacity(capacity: usize) -> Self {
        SlotTable::from_raw(RawPool::with_fixed_capacity(KeyLimits::of::<K>(), capacity))
    }

    /// Slots per block (a power of two).
    ///
    /// ```
    /// let small: handlekit::Pool<u32> = handlekit::Pool::new();
    /// assert_eq!(small.block_size(), 8192); // 64 KiB of 8-byte slots
    /// let big: handlekit::Pool<[u8; 1000]> = handlekit::Pool::new();
    /// assert_eq!(big.block_size(), 64); // at least 64 slots
    /// ```
    #[inline]
    #[must_use]
    pub fn block_size(&self) -> usize {
        self.raw.block_size()
    }
}

/// Iterator over `(key, &value)`; see [`Pool::iter`]
/// ([`iter::Iter`](crate::iter::Iter) over the Pool's blocks). It runs from
/// either end and knows its length.
///
/// ```
/// let mut pool = handlekit::Pool::new();
/// let first = pool.insert('a');
/// let last = pool.insert('b');
/// let mut walk: handlekit::pool::Iter<'_, char> = pool.iter();
/// assert_eq!(walk.next_back(), Some((last, &'b')));
/// assert_eq!(walk.next(), Some((first, &'a')));
/// ```
pub type Iter<'a, T, K = PoolKey> = crate::iter::Iter<'a, T, K, PoolBlocks>;

/// Iterator over `(key, &mut value)`; see [`Pool::iter_mut`]
/// ([`iter::IterMut`](crate::iter::IterMut) over the Pool's blocks).
///
/// ```
/// let mut pool: handlekit::Pool<u32> = handlekit::Pool::new();
/// let keys = [pool.insert(10), pool.insert(20)];
/// let walk: handlekit::pool::IterMut<'_, u32> = pool.iter_mut();
/// for (key, value) in walk {
///     if key == keys[1] {
///         *value += 1;
///     }
/// }
/// assert_eq!(pool[keys[1]], 21);
/// ```
pub type IterMut<'a, T, K = PoolKey> = crate::iter::IterMut<'a, T, K, PoolBlocks>;

/// Iterator over the keys of live values; see [`Pool::keys`]
/// ([`iter::Keys`](crate::iter::Keys) over the Pool's blocks). A removed
/// value's key is skipped.
///
/// ```
/// let mut pool = handlekit::Pool::new();
/// let gone = pool.insert(1.5);
/// let kept = pool.insert(2.5);
/// pool.remove(gone);
/// let keys: handlekit::pool::Keys<'_, f64> = pool.keys();
/// assert!(keys.eq([kept]));
/// ```
pub type Keys<'a, T, K = PoolKey> = crate::iter::Keys<'a, T, K, PoolBlocks>;

/// Iterator over the live values; see [`Pool::values`]
/// ([`iter::Values`](crate::iter::Values) over the Pool's blocks).
///
/// ```
/// let pool: handlekit::Pool<&str> = ["x", "yy", "zzz"].into_iter().collect();
/// let lengths: handlekit::pool::Values<'_, &str> = pool.values();
/// assert_eq!(lengths.map(|s| s.len()).sum::<usize>(), 6);
/// ```
pub type Values<'a, T> = crate::iter::Values<'a, T, PoolBlocks>;

/// Iterator over the live values, mutably; see [`Pool::values_mut`]
/// ([`iter::ValuesMut`](crate::iter::ValuesMut) over the Pool's blocks).
///
/// ```
/// let mut pool: handlekit::Pool<String> = ["a".to_string()].into_iter().collect();
/// let mut names: handlekit::pool::ValuesMut<'_, String> = pool.values_mut();
/// names.next().unwrap().push('!');
/// assert_eq!(pool.values().next().map(String::as_str), Some("a!"));
/// ```
pub type ValuesMut<'a, T> = crate::iter::ValuesMut<'a, T, PoolBlocks>;

/// Removing iterator over `(key, value)`; see [`Pool::drain`]
/// ([`iter::Drain`](crate::iter::Drain) over the Pool's slots). Values it
/// has not yet handed out are dropped when it is dropped.
///
/// ```
/// let mut pool: handlekit::Pool<u8> = (0..5).collect();
/// let mut drain: handlekit::pool::Drain<'_, u8> = pool.drain();
/// assert_eq!(drain.next().map(|(_, v)| v), Some(0));
/// drop(drain);
/// assert_eq!(pool.len(), 0);
/// ```
pub type Drain<'a, T, K = PoolKey> = crate::iter::Drain<'a, T, K, RawPool<T>>;

/// Owning iterator over `(key, value)`; see [`Pool::into_iter`]
/// ([`iter::IntoIter`](crate::iter::IntoIter) over the Pool's slots).
///
/// ```
/// let mut pool = handlekit::Pool::new();
/// let key = pool.insert(vec![1, 2]);
/// let owned: handlekit::pool::IntoIter<Vec<i32>> = pool.into_iter();
/// assert_eq!(owned.collect::<Vec<_>>(), [(key, vec![1, 2])]);
/// ```
pub type IntoIter<T, K = PoolKey> = crate::iter::IntoIter<T, K, RawPool<T>>;

/// Parallel iterator over `(key, &value)`; see [`Pool::par_iter`]
/// ([`iter::ParIter`](crate::iter::ParIter) over the Pool's blocks).
///
/// ```
/// use rayon::prelude::*;
/// let pool: handlekit::Pool<u64> = (1..=100).collect();
/// let walk: handlekit::pool::ParIter<'_, u64> = pool.par_iter();
/// assert_eq!(walk.map(|(_, v)| *v).sum::<u64>(), 5050);
/// ```
#[cfg(feature = "rayon")]
pub type ParIter<'a, T, K = PoolKey> = crate::iter::ParIter<'a, T, K, PoolBlocks>;

/// Parallel iterator over `(key, &mut value)`; see [`Pool::par_iter_mut`]
/// ([`iter::ParIterMut`](crate::iter::ParIterMut) over the Pool's blocks).
///
/// ```
/// use rayon::prelude::*;
/// let mut pool: handlekit::Pool<u64> = (0..1000).collect();
/// let walk: handlekit::pool::ParIterMut<'_, u64> = pool.par_iter_mut();
/// walk.filter(|(_, v)| **v % 2 == 1).for_each(|(_, v)| *v = 0);
/// assert_eq!(pool.values().sum::<u64>(), 249_500); // the even ones stay
/// ```
#[cfg(feature = "rayon")]
pub type ParIterMut<'a, T, K = PoolKey> = crate::iter::ParIterMut<'a, T, K, PoolBlocks>;

#[cfg(test)]
mod split_tests {
    use super::*;
    use crate::raw::table::RawTable;
    use alloc::vec::Vec;

    /// Parallel iteration's parts, split as far as they go, cover every
    /// value once and in order, for shared and exclusive access, over
    /// blocks of several sizes and vacant slots.
    #[test]
    fn split_parts_cover_every_value_once() {
        let sizes: &[usize] = if cfg!(miri) { &[1, 64] } else { &[1, 2, 8, 64] };
        // Under Miri, 150 values: blocks of one slot split into a part
        // each, and 300 parts took 4 s of its clock.
        let n = if cfg!(miri) { 150 } else { 300 };
        for &size in sizes {
            let mut pool: Pool<u64> = Pool::with_block_size(size);
            let keys: Vec<PoolKey> = (0..n).map(|i| pool.insert(i)).collect();
            for (i, &key) in keys.iter().enumerate() {
                if i % 3 == 0 || (40..120).contains(&i) {
                    pool.remove(key);
                }
            }
            let (expected, parts) = crate::raw::check_split_round!(pool.raw);
            assert_eq!(expected.len(), pool.len());
            assert!(parts > 1, "{size}: {parts} part");
            let bumped: Vec<u64> = pool.values().copied().collect();
            assert_eq!(bumped, expected.iter().map(|e| e.2 + 1).collect::<Vec<_>>());
        }
        let empty: Pool<u64> = Pool::new();
        assert_eq!(crate::raw::check_split_shared(empty.raw.iter(), &[]), 1);
    }
}
