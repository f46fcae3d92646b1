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
// The markers are defined beside the raw layouts they name, so that this
// module depends on the raw layer and not the other way round.
pub use crate::raw::buf::{Interleaved, Split};

/// A slot layout: [`Split`] or [`Interleaved`], the layout parameter of
/// [`SlotTable`](crate::SlotTable). Sealed: implemented by those two
/// only.
pub trait Layout: BufLayout {
    /// The name of a table in this layout, in panic messages.
    #[doc(hidden)]
    const TABLE_NAME: &'static str;
}

impl Layout for Split {
    const TABLE_NAME: &'static str = "IdTable";
}
impl Layout for Interleaved {
    const TABLE_NAME: &'static str = "LookupTable";
}
