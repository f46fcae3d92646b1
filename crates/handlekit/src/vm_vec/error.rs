//! The errors of [`VmVec`](super::VmVec).

use core::fmt;

/// Why a reservation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReserveErrorKind {
    /// `max_capacity * size_of::<T>()` does not fit in `isize`.
    CapacityOverflow,
    /// The address space is too small: the request exceeds `RLIMIT_AS`, or
    /// the system found no free range of that size.
    AddressSpace,
    /// The system refused the reservation for another reason
    /// ([`ReserveError::raw_os_error`] says which).
    Os,
    /// The heap fallback could not allocate the capacity.
    Alloc,
}

/// [`VmVec::with_max_capacity`](super::VmVec::with_max_capacity) could not
/// reserve the memory.
///
/// # Examples
///
/// ```
/// use handlekit::vm_vec::ReserveErrorKind;
/// use handlekit::VmVec;
///
/// let err = VmVec::<u64>::with_max_capacity(usize::MAX).unwrap_err();
/// assert_eq!(err.kind(), ReserveErrorKind::CapacityOverflow);
/// assert!(err.to_string().contains("overflow"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReserveError {
    kind: ReserveErrorKind,
    /// The bytes asked for (0 for `CapacityOverflow`).
    requested: usize,
    /// The `RLIMIT_AS` in force, if any was read.
    limit: Option<u64>,
    os: Option<i32>,
}

impl ReserveError {
    pub(crate) const fn capacity_overflow() -> Self {
        ReserveError {
            kind: ReserveErrorKind::CapacityOverflow,
            requested: 0,
            limit: None,
            os: None,
        }
    }

    #[allow(dead_code)] // the virtual backends only
    pub(crate) const fn address_space(requested: usize, limit: Option<u64>) -> Self {
        ReserveError {
            kind: ReserveErrorKind::AddressSpace,
            requested,
            limit,
            os: None,
        }
    }

    #[allow(dead_code)] // the virtual backends only
    pub(crate) const fn os(requested: usize, code: i32) -> Self {
        ReserveError {
            kind: ReserveErrorKind::Os,
            requested,
            limit: None,
            os: Some(code),
        }
    }

    #[allow(dead_code)] // the heap backend only
    pub(crate) const fn alloc(requested: usize) -> Self {
        ReserveError {
            kind: ReserveErrorKind::Alloc,
            requested,
            limit: None,
            os: None,
        }
    }

    /// What went wrong.
    #[must_use]
    pub fn kind(&self) -> ReserveErrorKind {
        self.kind
    }

    /// The number of bytes the reservation asked for, or `None` when that
    /// number overflowed.
    #[must_use]
    pub fn requested_bytes(&self) -> Option<usize> {
        match self.kind {
            ReserveErrorKind::CapacityOverflow => None,
            _ => Some(self.requested),
        }
    }

    /// The address-space limit (`RLIMIT_AS`, in bytes) that was in force,
    /// when the address space was the problem and a limit was set.
    #[must_use]
    pub fn address_space_limit(&self) -> Option<u64> {
        self.limit
    }

    /// The operating system's error code, for [`ReserveErrorKind::Os`].
    #[must_use]
    pub fn raw_os_error(&self) -> Option<i32> {
        self.os
    }
}

impl fmt::Display for ReserveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ReserveErrorKind::CapacityOverflow => {
                f.write_str("VmVec reservation failed: capacity overflow (more than isize::MAX bytes)")
            }
            ReserveErrorKind::AddressSpace => match self.limit {
                Some(limit) => write!(
                    f,
                    "VmVec reservation of {} bytes failed: the address space is limited to {limit} bytes (RLIMIT_AS)",
                    self.requested
                ),
                None => write!(
                    f,
                    "VmVec reservation of {} bytes failed: no free address range that large",
                    self.requested
                ),
            },
            ReserveErrorKind::Os => write!(
                f,
                "VmVec reservation of {} bytes failed: os error {}",
                self.requested,
                self.os.unwrap_or(0)
            ),
            ReserveErrorKind::Alloc => write!(
                f,
                "VmVec reservation of {} bytes failed: heap allocation failed",
                self.requested
            ),
        }
    }
}

impl core::error::Error for ReserveError {}

/// Why a push failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PushFailure {
    /// The window reached the end of the reservation.
    Full { max_capacity: usize },
    /// The system refused to commit more memory (OS error code).
    Commit(i32),
}

/// [`VmVec::try_push`](super::VmVec::try_push) had no room; the value is
/// handed back.
///
/// # Examples
///
/// ```
/// let mut v = handlekit::VmVec::with_max_capacity(1)?;
/// v.push('a');
/// let err = v.try_push('b').unwrap_err();
/// assert!(err.is_full());
/// assert_eq!(err.into_inner(), 'b');
/// # Ok::<(), handlekit::vm_vec::ReserveError>(())
/// ```
pub struct PushError<T> {
    value: T,
    cause: PushFailure,
}

impl<T> PushError<T> {
    pub(crate) fn new(value: T, cause: PushFailure) -> Self {
        PushError { value, cause }
    }

    /// The value that was not pushed.
    #[must_use]
    pub fn into_inner(self) -> T {
        self.value
    }

    /// Whether the window reached the end of the reservation (rather than
    /// the system refusing to commit memory). [`VmVec::rebase`] moves the
    /// window back when its front has been removed.
    ///
    /// [`VmVec::rebase`]: super::VmVec::rebase
    #[must_use]
    pub fn is_full(&self) -> bool {
        matches!(self.cause, PushFailure::Full { .. })
    }

    /// The operating system's error code when it refused to commit memory.
    #[must_use]
    pub fn raw_os_error(&self) -> Option<i32> {
        match self.cause {
            PushFailure::Commit(code) => Some(code),
            PushFailure::Full { .. } => None,
        }
    }
}

impl<T> fmt::Debug for PushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PushError")
            .field("cause", &self.cause)
            .finish_non_exhaustive()
    }
}

impl<T> fmt::Display for PushError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.cause, f)
    }
}

impl fmt::Display for PushFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PushFailure::Full { max_capacity } => write!(
                f,
                "VmVec is full: the window reached the end of its reservation of {max_capacity} elements (rebase() moves it back once the front is removed)"
            ),
            PushFailure::Commit(code) => {
                write!(f, "VmVec could not commit memory: os error {code}")
            }
        }
    }
}

impl<T> core::error::Error for PushError<T> {}
