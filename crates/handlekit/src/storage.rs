//! [`BlockStorage`]: which raw container a [`StableTable`](crate::StableTable)
//! holds, for [`PoolBlocks`] and [`HiveBlocks`]. The storages themselves
//! (and their walks) are in `raw/storage.rs`; this file names the raw
//! container of each.

use crate::raw::hive::RawHive;
use crate::raw::pool::RawPool;
use crate::raw::stable::RawStable;
use crate::raw::storage::{HiveBlocks, PoolBlocks, Storage};
use crate::raw::KeyLimits;
use crate::Key;

/// The storages of the containers with stable addresses, [`PoolBlocks`]
/// and [`HiveBlocks`]: which raw container a
/// [`StableTable`](crate::StableTable) holds. Sealed (through
/// [`Storage`]); the raw container walks itself as this storage
/// (`RawStable::Blocks`), so a table's iterators are this storage's.
// The raw container stays crate-private: the trait is sealed and these
// items are hidden, only `StableTable` uses them.
#[allow(private_interfaces)]
pub trait BlockStorage: Storage + Sized {
    /// The raw container, typed by its key type.
    #[doc(hidden)]
    type Raw<T, K: Key>: RawStable<T, Key = K, Blocks = Self>;
    /// The container's name in panic messages (`"Pool"`).
    #[doc(hidden)]
    const NAME: &'static str;
    /// The container's noun in panic messages (`"pool"`).
    #[doc(hidden)]
    const NOUN: &'static str;
    /// An empty raw container with the key limits of `K` and the default
    /// block sizes.
    #[doc(hidden)]
    fn empty<T, K: Key>() -> Self::Raw<T, K>;
}

#[allow(private_interfaces)]
impl BlockStorage for PoolBlocks {
    type Raw<T, K: Key> = RawPool<T, K>;
    const NAME: &'static str = "Pool";
    const NOUN: &'static str = "pool";
    #[inline]
    fn empty<T, K: Key>() -> RawPool<T, K> {
        RawPool::new(KeyLimits::of::<K>(), crate::raw::pool::default_shift::<T>())
    }
}

#[allow(private_interfaces)]
impl BlockStorage for HiveBlocks {
    type Raw<T, K: Key> = RawHive<T, K>;
    const NAME: &'static str = "Hive";
    const NOUN: &'static str = "hive";
    #[inline]
    fn empty<T, K: Key>() -> RawHive<T, K> {
        crate::raw::hive::default_raw::<T, K>()
    }
}
