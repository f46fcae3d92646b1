//! The memory under a [`VmVec`](super::VmVec): one reservation, committed
//! and released a granule at a time.
//!
//! Exactly one backend is compiled in, each exporting the same items:
//!
//! - `unix.rs`: `mmap` / `mprotect` / `madvise` / `mremap` through rustix
//!   (Linux, Android, macOS, iOS and the BSDs that rustix covers);
//! - `windows.rs`: `VirtualAlloc` / `VirtualFree` through windows-sys;
//! - `heap.rs`: one heap allocation of the whole capacity, for targets
//!   without either, without the `vm` feature, and under Miri (which cannot
//!   map memory).
//!
//! The contract every backend keeps (the window in `raw.rs` relies on it):
//!
//! - `Region::reserve(bytes, align)` reserves at least `bytes` bytes at a
//!   base aligned to `align` and to the granule. `size()` is a multiple of
//!   the granule. A virtual region commits nothing; the heap region is all
//!   accessible (`initially_committed() == size()`).
//! - `commit(range)` makes a granule-aligned range readable and writable,
//!   keeping any data already there.
//! - `release(range)` gives a granule-aligned range back to the system and
//!   makes it inaccessible, without unmapping it: the addresses stay ours,
//!   so a stale pointer faults instead of aliasing a later mapping.
//! - `page()` is the unit of `remap`: the system page size on unix, a
//!   power of two dividing the granule (the granule on Windows, 1 on the
//!   heap, where nothing is remapped).
//! - `discard(range)` gives the pages of a committed, page-aligned range
//!   back to the system while keeping them accessible; where
//!   `DISCARD_ZEROES`, they read as zeros afterwards, elsewhere their
//!   contents are unspecified (or unchanged).
//! - `remap(from, to, len)` moves the pages of one page-aligned range to
//!   another without copying, leaving the source mapped (Linux only;
//!   `false` elsewhere). The destination takes the source's protection.
//! - `reserve_recycled(bytes, align)` is `reserve`, except that a backend
//!   may hand out a reservation a dropped region left behind (unix with
//!   `std`: the spare list), with `initially_committed()` its committed
//!   prefix, holding stale bytes. `offer_on_drop(committed, warm)` asks
//!   that dropping such a region hand it on rather than unmap it; the
//!   caller holds no value in it by then.
//! - Dropping the region unmaps or frees all of it (or, after
//!   `offer_on_drop`, may put it on the spare list).

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

pub(crate) use os::{release_spares, Region, CAN_REMAP, DISCARD_ZEROES, VIRTUAL};

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
