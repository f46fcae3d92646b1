//! [`TableStorage`]: which raw container a [`SlotTable`](crate::SlotTable)
//! holds, for the two slot layouts ([`Split`](crate::layout::Split),
//! [`Interleaved`](crate::layout::Interleaved)) and the two block storages
//! ([`PoolBlocks`], [`HiveBlocks`]); and [`BlockStorage`], the last two.
//! The storages themselves (and their walks) are in `raw/storage.rs`; this
//! file names the raw container of each.

use crate::layout::Layout;
use crate::raw::hive::RawHive;
use crate::raw::pool::RawPool;
use crate::raw::storage::{HiveBlocks, PoolBlocks, Storage};
use crate::raw::table::RawTable;
use crate::raw::SlotArena;
use crate::{Id, Key, PoolKey};

/// The storage parameter of [`SlotTable`](crate::SlotTable): a slot layout
/// ([`Split`](crate::layout::Split) for `IdTable`,
/// [`Interleaved`](crate::layout::Interleaved) for `LookupTable`) or a
/// [`BlockStorage`] ([`PoolBlocks`] for `Pool`, [`HiveBlocks`] for
/// `Hive`). Sealed (through [`Storage`]); the raw container walks itself
/// as this storage (`RawTable::Blocks`), so a table's iterators are this
/// storage's.
// The raw container stays crate-private: the trait is sealed and these
// items are hidden, only `SlotTable` uses them.
#[allow(private_interfaces)]
pub trait TableStorage: Storage + Sized {
    /// The raw container, typed by its key type.
    #[doc(hidden)]
    type Raw<T, K: Key>: RawTable<T, Key = K, Blocks = Self>;
    /// The key type of `new` and `with_capacity`.
    #[doc(hidden)]
    type DefaultKey: Key;
    /// The container's name in panic messages (`"Pool"`).
    #[doc(hidden)]
    const NAME: &'static str;
    /// The container's noun in panic messages (`"pool"`).
    #[doc(hidden)]
    const NOUN: &'static str;
}

/// The storages of the containers with stable addresses, [`PoolBlocks`]
/// and [`HiveBlocks`]: a [`SlotTable`](crate::SlotTable) over one of them
/// is a [`StableTable`](crate::StableTable), and has the methods about
/// its blocks and pointers. Sealed.
pub trait BlockStorage: TableStorage {}

#[allow(private_interfaces)]
impl<L: Layout> TableStorage for L {
    type Raw<T, K: Key> = SlotArena<T, K, L>;
    type DefaultKey = Id;
    const NAME: &'static str = L::TABLE_NAME;
    const NOUN: &'static str = "table";
}

#[allow(private_interfaces)]
impl TableStorage for PoolBlocks {
    type Raw<T, K: Key> = RawPool<T, K>;
    type DefaultKey = PoolKey;
    const NAME: &'static str = "Pool";
    const NOUN: &'static str = "pool";
}

impl BlockStorage for PoolBlocks {}

#[allow(private_interfaces)]
impl TableStorage for HiveBlocks {
    type Raw<T, K: Key> = RawHive<T, K>;
    type DefaultKey = Id;
    const NAME: &'static str = "Hive";
    const NOUN: &'static str = "hive";
}

impl BlockStorage for HiveBlocks {}
