//! The storages the table iterators walk, as type parameters: the slot
//! store's layouts and the block stores of [`Pool`](crate::Pool) and
//! [`Hive`](crate::Hive), each with the walk a pass takes over it. Public
//! under [`handlekit::iter`](crate::iter). It sits below the raw
//! containers (which name their storage) and the iterators, and imports
//! neither.

use super::block::BlocksWalk;
use super::buf::BufLayout;
use super::cursor::{Cursor, IndexedOf, UnitOf, Walk};
use super::flat::FlatWalk;
use super::scan::StoreWalk;

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

/// The raw cursor of a storage, handing out `R` (`&'a T` or `&'a mut T`).
pub(crate) type RawCursor<'a, T, S, R> = Cursor<'a, T, <S as Storage>::Walk<'a, T>, R>;

/// The raw cursor of a storage for values alone: its runs step unit
/// pointers rather than flat indices.
pub(crate) type ValueCursor<'a, T, S, R> =
    Cursor<'a, T, <S as Storage>::Walk<'a, T>, R, UnitOf<T, <S as Storage>::Walk<'a, T>>>;

/// The raw cursor of a storage for the iterators with keys: its runs step
/// a flat index with the unit beside it (see `Indexed`).
pub(crate) type KeyedCursor<'a, T, S, R> =
    Cursor<'a, T, <S as Storage>::Walk<'a, T>, R, IndexedOf<T, <S as Storage>::Walk<'a, T>>>;
