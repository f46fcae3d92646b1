//! Errors.

use core::fmt;

/// Why a table could not make room for another value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Cause {
    /// The key's index bits cannot name another slot.
    IndexSpace,
    /// The table was built with a fixed capacity, which is used up.
    Fixed,
    /// The allocator refused memory.
    Alloc,
}

/// A table had no room for another value.
///
/// Returned by `try_insert` and `try_reserve`; `insert` and `reserve` panic
/// with the same message.
///
/// # Examples
///
/// ```
/// use handlekit::IdTable;
///
/// let mut table: IdTable<u8> = IdTable::with_fixed_capacity(1);
/// table.insert(1);
/// let err = table.try_insert(2).unwrap_err();
/// assert_eq!(err.limit(), Some(1));
/// assert!(err.to_string().contains("fixed capacity"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CapacityError {
    cause: Cause,
    limit: usize,
}

impl CapacityError {
    pub(crate) const fn index_space(max_slots: usize) -> Self {
        CapacityError {
            cause: Cause::IndexSpace,
            limit: max_slots,
        }
    }

    pub(crate) const fn fixed(capacity: usize) -> Self {
        CapacityError {
            cause: Cause::Fixed,
            limit: capacity,
        }
    }

    pub(crate) const fn alloc() -> Self {
        CapacityError {
            cause: Cause::Alloc,
            limit: 0,
        }
    }

    /// The slot limit that was reached: the fixed capacity, or the number of
    /// slots the key type can index. `None` when the allocator failed.
    ///
    /// ```
    /// let err = handlekit::IdTable::<u8>::with_fixed_capacity(0).try_insert(1).unwrap_err();
    /// assert_eq!(err.limit(), Some(0));
    /// ```
    #[must_use]
    pub fn limit(&self) -> Option<usize> {
        match self.cause {
            Cause::Alloc => None,
            Cause::IndexSpace | Cause::Fixed => Some(self.limit),
        }
    }

    /// Whether the table's fixed capacity was the limit.
    ///
    /// ```
    /// let err = handlekit::IdTable::<u8>::with_fixed_capacity(0).try_insert(1).unwrap_err();
    /// assert!(err.is_fixed_capacity());
    /// ```
    #[must_use]
    pub fn is_fixed_capacity(&self) -> bool {
        self.cause == Cause::Fixed
    }

    /// Whether the key type's index width was the limit: every index the key
    /// can hold names a slot that is occupied or retired.
    ///
    /// ```
    /// handlekit::define_key! { struct Tiny(u32; index_bits = 1); }
    /// let mut table: handlekit::IdTable<u8, Tiny> = handlekit::IdTable::default();
    /// table.insert(1);
    /// table.insert(2);
    /// assert!(table.try_insert(3).unwrap_err().is_index_space());
    /// ```
    #[must_use]
    pub fn is_index_space(&self) -> bool {
        self.cause == Cause::IndexSpace
    }
}

impl fmt::Display for CapacityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cause {
            Cause::IndexSpace => write!(
                f,
                "table is full: the key type's index bits allow {} slots, and every one is live or retired",
                self.limit
            ),
            Cause::Fixed => write!(
                f,
                "table is full: its fixed capacity of {} slots is used up",
                self.limit
            ),
            Cause::Alloc => f.write_str("table could not grow: memory allocation failed"),
        }
    }
}

impl core::error::Error for CapacityError {}
