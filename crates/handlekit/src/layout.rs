//! Where a table keeps each slot's state word (its generation, and whether
//! it holds a value) relative to the slot's value: the two layouts of the
//! slot store under [`IdTable`](crate::IdTable) and
//! [`LookupTable`](crate::LookupTable).
//!
//! | | [`Split`] | [`Interleaved`] |
//! | --- | --- | --- |
//! | memory | the values in one array, the state words (4 bytes each) in another | each state word beside its value, as one slot |
//! | bytes per `u64` slot | 12 | 16 (the slot is padded to the value's alignment) |
//! | a lookup reads | two cache lines (state word and value) | one cache line |
//! | a pass reads | 64 state words at a time, then only the live values | every slot's state word, live or not |
//! | choose it for | passes over the values, most tables | tables looked up far more than iterated, larger than the cache |
//!
//! The layouts are also the storage parameter of the table iterators (see
//! [`handlekit::iter`](crate::iter)).

use crate::raw::buf::BufLayout;

/// A slot layout: [`Split`] or [`Interleaved`], the layout parameter of
/// [`SlotTable`](crate::SlotTable). Sealed: implemented by those two
/// only.
pub trait Layout: BufLayout {}

impl Layout for Split {}
impl Layout for Interleaved {}

/// State words in an array apart from the values: passes read 64 state
/// words at a time and only the live values. The layout of
/// [`IdTable`](crate::IdTable) and [`SecondaryMap`](crate::SecondaryMap).
///
/// ```
/// // The iterators of an `IdTable` walk a `Split` store.
/// let table: handlekit::IdTable<u8> = [1, 2].into_iter().collect();
/// let values: handlekit::iter::Values<'_, u8, handlekit::layout::Split> = table.values();
/// assert_eq!(values.len(), 2);
/// ```
#[derive(Debug)]
pub enum Split {}

/// Each state word beside its value, as one slot: a lookup reads one cache
/// line. The layout of [`LookupTable`](crate::LookupTable).
///
/// ```
/// let table: handlekit::LookupTable<u8> = [1, 2].into_iter().collect();
/// let values: handlekit::iter::Values<'_, u8, handlekit::layout::Interleaved> =
///     table.values();
/// assert_eq!(values.len(), 2);
/// ```
#[derive(Debug)]
pub enum Interleaved {}
