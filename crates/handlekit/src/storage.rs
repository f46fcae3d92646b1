//! The storages the table iterators walk, as type parameters: the slot
//! store's layouts and the block stores of [`Pool`](crate::Pool) and
//! [`Hive`](crate::Hive), each with the walk a pass takes over it. Public
//! under [`handlekit::iter`](crate::iter); this file sits below the
//! iterators and the containers, so neither imports the other through it.

use crate::raw::block::BlocksWalk;
use crate::raw::buf::BufLayout;
use crate::raw::cursor::{Cursor, UnitOf, Walk};
use crate::raw::flat::FlatWalk;
use crate::raw::hive::RawHive;
use crate::raw::pool::RawPool;
use crate::raw::scan::StoreWalk;
use crate::raw::stable::RawStable;
use crate::raw::{KeyLimits, Keyed};
use crate::Key;

mod sealed {
    /// Keeps [`Storage`](super::Storage) to the storages of this crate.
    pub trait Sealed {}
}

/// The storage a slot container's iterators walk: [`Split`](crate::layout::Split) and
/// [`Interleaved`](crate::layout::Interleaved) (the layouts of the slot
/// store), [`PoolBlocks`] and
/// [`HiveBlocks`]. Sealed: implemented by those four only.
pub trait Storage: sealed::Sealed {
    /// How a pass finds the live slots of this storage.
    #[doc(hidden)]
    type Walk<'a, T: 'a>: Walk<T>;
}

/// The storage of a [`Pool`](crate::Pool): blocks of one size behind a
/// directory, walked 64 state words at a time. Only names the iterator
/// types of [`pool`](crate::pool).
#[derive(Debug)]
pub enum PoolBlocks {}

/// The storage of a [`Hive`](crate::Hive): blocks of growing size, each
/// with occupancy bits. Only names the iterator types of
/// [`hive`](crate::hive).
#[derive(Debug)]
pub enum HiveBlocks {}

// The slot store's layouts (`Split`, `Interleaved`): the store's walk.
impl<L: BufLayout> sealed::Sealed for L {}
impl<L: BufLayout> Storage for L {
    type Walk<'a, T: 'a> = StoreWalk<'a, T, L>;
}

impl sealed::Sealed for PoolBlocks {}
impl Storage for PoolBlocks {
    type Walk<'a, T: 'a> = FlatWalk<'a, T>;
}

impl sealed::Sealed for HiveBlocks {}
impl Storage for HiveBlocks {
    type Walk<'a, T: 'a> = BlocksWalk<'a, T>;
}

/// The storages of the containers with stable addresses, [`PoolBlocks`]
/// and [`HiveBlocks`]: which raw container a
/// [`StableTable`](crate::StableTable) holds, and how it is walked. Sealed.
// The raw cursor types stay crate-private: the trait is sealed and these
// items are hidden, only `StableTable` calls them.
#[allow(private_interfaces)]
pub trait BlockStorage: Storage + Sized {
    /// The raw container, typed by its key type.
    #[doc(hidden)]
    type Raw<T, K: Key>: RawStable<T, Key = K>;
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
    /// A pass over the live values.
    #[doc(hidden)]
    fn iter<'a, T: 'a, K: Key>(raw: &'a Self::Raw<T, K>) -> RawCursor<'a, T, Self, &'a T>;
    /// A pass over the live values, mutably.
    #[doc(hidden)]
    fn iter_mut<'a, T: 'a, K: Key>(
        raw: &'a mut Self::Raw<T, K>,
    ) -> RawCursor<'a, T, Self, &'a mut T>;
    /// A pass over `(key, &value)`.
    #[doc(hidden)]
    fn keyed_iter<'a, T: 'a, K: Key>(
        raw: &'a Self::Raw<T, K>,
    ) -> Keyed<RawCursor<'a, T, Self, &'a T>, K>;
    /// A pass over `(key, &mut value)`.
    #[doc(hidden)]
    fn keyed_iter_mut<'a, T: 'a, K: Key>(
        raw: &'a mut Self::Raw<T, K>,
    ) -> Keyed<RawCursor<'a, T, Self, &'a mut T>, K>;
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
    #[inline]
    fn iter<'a, T: 'a, K: Key>(raw: &'a RawPool<T, K>) -> RawCursor<'a, T, Self, &'a T> {
        raw.iter()
    }
    #[inline]
    fn iter_mut<'a, T: 'a, K: Key>(
        raw: &'a mut RawPool<T, K>,
    ) -> RawCursor<'a, T, Self, &'a mut T> {
        raw.iter_mut()
    }
    #[inline]
    fn keyed_iter<'a, T: 'a, K: Key>(
        raw: &'a RawPool<T, K>,
    ) -> Keyed<RawCursor<'a, T, Self, &'a T>, K> {
        raw.keyed_iter()
    }
    #[inline]
    fn keyed_iter_mut<'a, T: 'a, K: Key>(
        raw: &'a mut RawPool<T, K>,
    ) -> Keyed<RawCursor<'a, T, Self, &'a mut T>, K> {
        raw.keyed_iter_mut()
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
    #[inline]
    fn iter<'a, T: 'a, K: Key>(raw: &'a RawHive<T, K>) -> RawCursor<'a, T, Self, &'a T> {
        raw.iter()
    }
    #[inline]
    fn iter_mut<'a, T: 'a, K: Key>(
        raw: &'a mut RawHive<T, K>,
    ) -> RawCursor<'a, T, Self, &'a mut T> {
        raw.iter_mut()
    }
    #[inline]
    fn keyed_iter<'a, T: 'a, K: Key>(
        raw: &'a RawHive<T, K>,
    ) -> Keyed<RawCursor<'a, T, Self, &'a T>, K> {
        raw.keyed_iter()
    }
    #[inline]
    fn keyed_iter_mut<'a, T: 'a, K: Key>(
        raw: &'a mut RawHive<T, K>,
    ) -> Keyed<RawCursor<'a, T, Self, &'a mut T>, K> {
        raw.keyed_iter_mut()
    }
}

/// The raw cursor of a storage, handing out `R` (`&'a T` or `&'a mut T`).
pub(crate) type RawCursor<'a, T, S, R> = Cursor<'a, T, <S as Storage>::Walk<'a, T>, R>;

/// The raw cursor of a storage for values alone: its runs step unit
/// pointers rather than flat indices.
pub(crate) type ValueCursor<'a, T, S, R> =
    Cursor<'a, T, <S as Storage>::Walk<'a, T>, R, UnitOf<T, <S as Storage>::Walk<'a, T>>>;
