//! The memory under a [`VmVec`](super::VmVec): one reservation, committed
//! and released a granule at a time.
//!
//! Exactly one backend is compiled in, each a [`Backend`] (the contract,
//! written once here with what the backends share: a [`Span`] and the
//! defaults of the calls some of them leave empty):
//!
//! - `unix.rs`: `mmap` / `mprotect` / `madvise` / `mremap` through rustix
//!   (Linux, Android, macOS, iOS and the BSDs that rustix covers);
//! - `windows.rs`: `VirtualAlloc` / `VirtualFree` through windows-sys;
//! - `heap.rs`: one heap allocation of the whole capacity, for targets
//!   without either, without the `vm` feature, and under Miri (which cannot
//!   map memory).

use core::ffi::c_void;
use core::ops::Range;
use core::ptr::NonNull;

use crate::vm_vec::ReserveError;

#[cfg(all(
    feature = "vm",
    not(miri),
    any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "dragonfly",
    )
))]
#[path = "unix.rs"]
mod os;

#[cfg(all(feature = "vm", not(miri), windows))]
#[path = "windows.rs"]
mod os;

#[cfg(not(all(
    feature = "vm",
    not(miri),
    any(
        windows,
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "dragonfly",
    )
)))]
#[path = "heap.rs"]
mod os;

pub(crate) use os::Region;

/// Whether the backend maps virtual memory.
pub(crate) const VIRTUAL: bool = Region::VIRTUAL;
/// Whether [`Backend::remap`] can move pages.
pub(crate) const CAN_REMAP: bool = Region::CAN_REMAP;
/// Whether [`Backend::discard`] leaves the pages reading as zeros.
pub(crate) const DISCARD_ZEROES: bool = Region::DISCARD_ZEROES;

/// Gives back whatever reservations the backend keeps for reuse (see
/// [`Backend::reserve_recycled`]); returns the committed bytes they held.
pub(crate) fn release_spares() -> usize {
    Region::release_spares()
}

/// Where a region lies and its units, alike in every backend.
#[derive(Clone, Copy)]
pub(crate) struct Span {
    /// The first reserved byte, aligned to `granule`; `size` bytes from
    /// here are the region's. Derived from the reservation (or dangling
    /// when `size == 0`), so it carries the reservation's provenance.
    pub(super) base: NonNull<u8>,
    /// A multiple of `granule`.
    pub(super) size: usize,
    /// The commit and release unit: a power of two, at least the page
    /// size and the element alignment (1 on the heap).
    pub(super) granule: usize,
    /// The unit of [`Backend::remap`]: a power of two dividing `granule`.
    pub(super) page: usize,
}

impl Span {
    /// An empty span at a dangling address aligned to `granule`.
    #[cfg_attr(any(not(feature = "vm"), miri), allow(dead_code))]
    pub(super) fn empty(granule: usize, page: usize) -> Span {
        let dangling = core::ptr::without_provenance_mut::<u8>(granule);
        Span {
            base: NonNull::new(dangling).expect("a granule is not zero"),
            size: 0,
            granule,
            page,
        }
    }

    /// The start of `range`, after checking that both ends are multiples
    /// of `unit` (the granule, or the page) and that it lies inside the
    /// span.
    #[cfg_attr(any(not(feature = "vm"), miri), allow(dead_code))]
    pub(super) fn at(&self, range: &Range<usize>, unit: usize) -> *mut c_void {
        assert!(
            range.start <= range.end
                && range.end <= self.size
                && range.start % unit == 0
                && range.end % unit == 0,
            "region range {range:?} is not {unit}-aligned inside {} bytes",
            self.size
        );
        self.base.as_ptr().wrapping_add(range.start).cast()
    }
}

/// One reservation of address space, committed and released a granule at
/// a time: the contract every backend keeps, which the window in `raw.rs`
/// relies on. Dropping the region unmaps or frees all of it (or, after
/// [`offer_on_drop`](Self::offer_on_drop), may put it on a spare list).
pub(crate) trait Backend: Sized {
    /// Whether the backend maps virtual memory.
    const VIRTUAL: bool;
    /// Whether [`remap`](Self::remap) can move pages.
    const CAN_REMAP: bool = false;
    /// Whether [`discard`](Self::discard) leaves the pages reading as zeros.
    const DISCARD_ZEROES: bool = false;

    /// Reserves at least `bytes` bytes at a base aligned to `align` and to
    /// the granule; the size is a multiple of the granule. A virtual region
    /// commits nothing; the heap region is all accessible
    /// (`initially_committed() == size()`).
    fn reserve(bytes: usize, align: usize) -> Result<Self, ReserveError>;

    /// [`reserve`](Self::reserve), except that a backend may hand out a
    /// reservation a dropped region left behind (unix with `std`: the spare
    /// list), with [`initially_committed`](Self::initially_committed) its
    /// committed prefix, holding stale bytes. By default, `reserve`.
    #[inline]
    fn reserve_recycled(bytes: usize, align: usize) -> Result<Self, ReserveError> {
        Self::reserve(bytes, align)
    }

    /// Asks that dropping the region hand it on rather than unmap it, with
    /// `[0, committed)` committed and `[0, warm)` backed by memory; the
    /// caller holds no value in it by then. By default, nothing: the
    /// backend keeps no spare list.
    #[inline]
    fn offer_on_drop(&mut self, committed: usize, warm: usize) {
        let _ = (committed, warm);
    }

    /// Unmaps the reservations the backend keeps for reuse; returns the
    /// committed bytes they held. By default none are kept: 0.
    #[inline]
    fn release_spares() -> usize {
        0
    }

    /// Where the region lies, and its units.
    fn span(&self) -> &Span;

    /// The region's first byte.
    #[inline]
    fn base(&self) -> NonNull<u8> {
        self.span().base
    }

    /// The region's length in bytes, a multiple of the granule.
    #[inline]
    fn size(&self) -> usize {
        self.span().size
    }

    /// The unit of [`commit`](Self::commit) and [`release`](Self::release).
    #[inline]
    fn granule(&self) -> usize {
        self.span().granule
    }

    /// The unit of [`remap`](Self::remap): the system page size on unix, a
    /// power of two dividing the granule (the granule on Windows, 1 on the
    /// heap, where nothing is remapped).
    #[inline]
    fn page(&self) -> usize {
        self.span().page
    }

    /// The prefix committed when the region was handed out.
    fn initially_committed(&self) -> usize;

    /// Makes a granule-aligned range readable and writable, keeping any
    /// data already there; fails with the OS error code when the system
    /// refuses memory.
    fn commit(&mut self, range: Range<usize>) -> Result<(), i32>;

    /// A hint that the committed pages of `range` are about to be written,
    /// so that the system may back them now rather than a page fault at a
    /// time. By default, nothing.
    #[inline]
    fn populate(&mut self, range: Range<usize>) {
        debug_assert!(range.end <= self.size());
    }

    /// Gives the pages of a committed, page-aligned range back to the
    /// system while keeping them accessible; where
    /// [`DISCARD_ZEROES`](Self::DISCARD_ZEROES), they read as zeros
    /// afterwards, elsewhere their contents are unspecified (or unchanged).
    /// By default, nothing.
    ///
    /// # Safety
    ///
    /// No live value lies in `range` and nothing reads it expecting its
    /// contents.
    #[inline]
    unsafe fn discard(&mut self, range: Range<usize>) {
        debug_assert!(range.end <= self.size());
    }

    /// Gives a granule-aligned range back to the system and makes it
    /// inaccessible, without unmapping it: the addresses stay ours, so a
    /// stale pointer faults instead of aliasing a later mapping.
    ///
    /// # Safety
    ///
    /// No live value lies in `range` and nothing will read or write it
    /// before it is committed again.
    unsafe fn release(&mut self, range: Range<usize>);

    /// Moves the pages of `from..from + len` to `to..to + len` without
    /// copying, leaving the source mapped and empty; the destination takes
    /// the source's protection. Returns `false`, having changed nothing,
    /// where the system cannot (by default, always).
    ///
    /// # Safety
    ///
    /// Both ranges are page-aligned, inside the region and disjoint; the
    /// source is committed; no reference points into either, and the
    /// destination holds no live value.
    #[inline]
    unsafe fn remap(&mut self, from: usize, to: usize, len: usize) -> bool {
        let _ = (from, to, len);
        false
    }
}

/// The smallest unit a virtual region commits and releases: 2 MiB, the size
/// of an x86-64 or AArch64 huge page, so that huge pages and `mremap`'s
/// fast path (moving whole page-table entries) apply.
#[cfg_attr(any(not(feature = "vm"), miri), allow(dead_code))]
pub(crate) const CHUNK: usize = 2 << 20;

/// `x` rounded up to a multiple of `to` (a power of two), or `None` on
/// overflow.
#[inline]
pub(crate) fn round_up(x: usize, to: usize) -> Option<usize> {
    debug_assert!(to.is_power_of_two());
    Some(x.checked_add(to - 1)? & !(to - 1))
}

/// `x` rounded down to a multiple of `to` (a power of two).
#[inline]
pub(crate) fn round_down(x: usize, to: usize) -> usize {
    debug_assert!(to.is_power_of_two());
    x & !(to - 1)
}
