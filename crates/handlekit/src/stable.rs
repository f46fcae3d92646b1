//! [`StableTable`]: a [`SlotTable`] over a [`BlockStorage`], the type
//! behind [`Pool`](crate::Pool) and [`Hive`](crate::Hive); and the methods
//! only those two have, about their blocks and the addresses of their
//! values. Every other method is `SlotTable`'s (in `table.rs`); each
//! container's constructors and block sizes are in `pool/mod.rs` and
//! `hive/mod.rs`.

use crate::iter::BlockStorage;
use crate::raw::table::RawTable;
use crate::{Key, SlotTable};

/// A container whose values never move: a [`SlotTable`] over blocks. Name
/// it by its aliases, [`Pool<T, K>`](crate::Pool) (`StableTable<T, K,
/// PoolBlocks>`: blocks of one size) and [`Hive<T, K>`](crate::Hive)
/// (`StableTable<T, K, HiveBlocks>`: blocks of growing size with
/// occupancy bits). Both have every method of `SlotTable`, and those
/// below; the examples use `Pool`, and read the same with `Hive`.
///
/// ```
/// use handlekit::iter::HiveBlocks;
/// use handlekit::{Hive, Id, StableTable};
///
/// let mut hive: StableTable<&str, Id, HiveBlocks> = Hive::new();
/// let key = hive.insert("stays put");
/// assert_eq!(hive[key], "stays put");
/// ```
pub type StableTable<T, K, S> = SlotTable<T, K, S>;

impl<T, K: Key, S: BlockStorage> SlotTable<T, K, S> {
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
}
