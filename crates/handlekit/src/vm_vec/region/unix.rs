//! The unix backend: an anonymous private mapping through rustix.
//!
//! - Reserve: `mmap(PROT_NONE)`, over-sized by one granule so the base can
//!   be aligned to it. `PROT_NONE` private memory is not charged to the
//!   commit limit; `mprotect(READ | WRITE)` charges it, so committing a
//!   granule at a time keeps the accounting honest.
//! - Release (Linux, Android): `madvise(MADV_DONTNEED)`, which frees the
//!   pages at once, then `mprotect(PROT_NONE)`. rustix's `Advice::DontNeed`
//!   is the POSIX advice, a no-op on Linux; the one that frees is
//!   `Advice::LinuxDontNeed`. Elsewhere `MADV_DONTNEED` may only be a hint,
//!   so the range is replaced by a fresh `PROT_NONE` mapping
//!   (`mmap(MAP_FIXED)`), which frees the pages in one step and never leaves
//!   the range unmapped.
//! - Never `munmap` a part: another mapping could take the range, and a
//!   stale pointer would then alias unrelated memory.
//! - Remap (Linux): `mremap(MREMAP_MAYMOVE | MREMAP_FIXED |
//!   MREMAP_DONTUNMAP)`, which moves page-table entries and leaves the source
//!   mapped (empty), so the reservation has no hole at any moment. Kernels
//!   before 5.7 refuse the flag and the window falls back to copying.

use core::ffi::c_void;
use core::ops::Range;
use core::ptr::{self, NonNull};

use rustix::io::Errno;
use rustix::mm::{self, MapFlags, MprotectFlags, ProtFlags};

use super::{round_up, Backend, Span, CHUNK};
use crate::vm_vec::ReserveError;

/// One anonymous mapping.
pub(crate) struct Region {
    /// The mapping as `mmap` returned it (`map_len` bytes), or null when
    /// nothing was mapped (`map_len == 0`). Unmapped only in `drop`.
    map: *mut c_void,
    map_len: usize,
    /// `map` rounded up to the granule (a power of two, at least
    /// [`CHUNK`], the page size and the element alignment): the span's
    /// bytes lie inside the mapping. Its page is the system page size.
    span: Span,
    /// `[0, arrived_committed)` was committed when the region was handed
    /// out: 0 for a fresh reservation, the committed prefix its last owner
    /// left for one taken from the spare list.
    arrived_committed: usize,
    /// `[0, warm)` is known to be backed by memory (written by the last
    /// owner and not given back since), so [`Region::populate`] skips it.
    /// Reset to 0 by anything that gives pages back or moves them.
    warm: usize,
    /// Whether the region came from [`Region::reserve_recycled`]: only
    /// such regions go to the spare list.
    recyclable: bool,
    /// Set by [`Region::offer_on_drop`]: the committed prefix and the warm
    /// bytes with which dropping hands the mapping to the spare list
    /// instead of unmapping it.
    offered: Option<(usize, usize)>,
}

impl Backend for Region {
    const VIRTUAL: bool = true;
    const CAN_REMAP: bool = cfg!(target_os = "linux");
    const DISCARD_ZEROES: bool = cfg!(any(target_os = "linux", target_os = "android"));

    fn reserve(bytes: usize, align: usize) -> Result<Region, ReserveError> {
        let page = rustix::param::page_size();
        let granule = CHUNK.max(page).max(align);
        let mut region = Region {
            map: ptr::null_mut(),
            map_len: 0,
            span: Span::empty(granule, page),
            arrived_committed: 0,
            warm: 0,
            recyclable: false,
            offered: None,
        };
        if bytes == 0 {
            return Ok(region);
        }
        let size = round_up(bytes, granule)
            .filter(|&size| size <= isize::MAX as usize)
            .ok_or_else(ReserveError::capacity_overflow)?;
        // `mmap` aligns to a page; one granule more leaves room to align the
        // base to the granule.
        let map_len = size
            .checked_add(granule - page)
            .filter(|&len| len <= isize::MAX as usize)
            .ok_or_else(ReserveError::capacity_overflow)?;
        // SAFETY: a fresh anonymous mapping at an address the kernel picks
        // (no `MAP_FIXED`) cannot affect any memory the program uses.
        let map = unsafe {
            mm::mmap_anonymous(
                ptr::null_mut(),
                map_len,
                ProtFlags::empty(),
                MapFlags::PRIVATE,
            )
        }
        .map_err(|errno| {
            if errno == Errno::NOMEM {
                // The limit is read only to report it: a mapping past
                // `RLIMIT_AS` fails with `ENOMEM` anyway, and asking for it
                // on every reservation was a system call per reservation
                // (ten per loaded ECS world).
                ReserveError::address_space(bytes, address_space_limit())
            } else {
                ReserveError::os(bytes, errno.raw_os_error())
            }
        })?;
        let addr = map.addr();
        let offset =
            round_up(addr, granule).expect("a mapping does not end past usize::MAX") - addr;
        // `offset < granule`, and the mapping is `size + granule - page`
        // bytes long from a page-aligned `map`, so `size` bytes from the
        // aligned base stay inside it.
        region.span.base =
            NonNull::new(map.cast::<u8>().wrapping_add(offset)).expect("inside a mapping");
        region.span.size = size;
        (region.map, region.map_len) = (map, map_len);
        Ok(region)
    }

    /// [`Region::reserve`], but a reservation of the same size and granule
    /// that a dropped recyclable region left on the spare list is taken
    /// first (with its committed prefix, and its pages still backed by
    /// memory: no system call, no page fault). The region is recyclable:
    /// after [`Region::offer_on_drop`], dropping it puts it on the list.
    fn reserve_recycled(bytes: usize, align: usize) -> Result<Region, ReserveError> {
        #[cfg(feature = "std")]
        if bytes != 0 {
            let page = rustix::param::page_size();
            let granule = CHUNK.max(page).max(align);
            if let Some(spare) =
                round_up(bytes, granule).and_then(|size| spare::take(size, granule))
            {
                return Ok(spare.into_region());
            }
        }
        let mut region = Region::reserve(bytes, align)?;
        region.recyclable = true;
        Ok(region)
    }

    /// Asks that dropping the region put it on the spare list rather than
    /// unmap it, with `[0, committed)` committed (a multiple of the granule,
    /// or the size) and `[0, warm)` backed by memory. Ignored unless the
    /// region is recyclable; the list may still refuse it (it is full).
    /// The owner must hold no value in the region any more when it drops.
    fn offer_on_drop(&mut self, committed: usize, warm: usize) {
        if self.recyclable {
            debug_assert!(committed <= self.span.size && warm <= committed);
            self.offered = Some((committed, warm));
        }
    }

    /// Unmaps every reservation on the spare list; returns the committed
    /// bytes they held.
    fn release_spares() -> usize {
        #[cfg(feature = "std")]
        {
            let mut committed = 0;
            for old in spare::take_all() {
                committed += old.committed;
                // The list owned the mapping alone.
                // SAFETY: so nothing points into it.
                unsafe { unmap(old.map, old.map_len) };
            }
            committed
        }
        #[cfg(not(feature = "std"))]
        0
    }

    #[inline]
    fn span(&self) -> &Span {
        &self.span
    }

    #[inline]
    fn initially_committed(&self) -> usize {
        self.arrived_committed
    }

    /// Makes `range` readable and writable, keeping what it holds. Fails
    /// with the OS error code when the system refuses to commit memory
    /// (`ENOMEM` under strict overcommit or a mapping-count limit).
    fn commit(&mut self, range: Range<usize>) -> Result<(), i32> {
        if range.is_empty() {
            return Ok(());
        }
        let start = self.span.at(&range, self.span.granule);
        // Making memory accessible invalidates nothing the program holds,
        // and keeps the data of pages that were already accessible.
        // SAFETY: the range lies inside our own mapping (checked by `at`).
        unsafe {
            mm::mprotect(
                start,
                range.len(),
                MprotectFlags::READ | MprotectFlags::WRITE,
            )
        }
        .map_err(|errno| errno.raw_os_error())
    }

    /// Asks the system to back the committed pages of `range` with memory
    /// now, in one call, rather than one page fault at a time as they are
    /// first written (`madvise(MADV_POPULATE_WRITE)`, Linux 5.14 and
    /// later). Only a hint: where the system refuses (an older kernel, no
    /// memory), the pages fault in as they are written, as without it.
    /// Both ends of `range` are rounded out to pages.
    fn populate(&mut self, range: Range<usize>) {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            // Pages the last owner wrote are still there.
            let start = super::round_down(range.start.max(self.warm), self.span.page);
            let end = round_up(range.end, self.span.page)
                .map_or(self.span.size, |end| end.min(self.span.size));
            if start >= end {
                return;
            }
            let at = self.span.at(&(start..end), self.span.page);
            // Populating writes nothing the program can see: committed
            // pages read as before (zeros if never written), and pages
            // already present are left as they are.
            // SAFETY: the range lies inside our mapping (checked by
            // `at`); the caller committed it.
            let populated = unsafe { mm::madvise(at, end - start, mm::Advice::LinuxPopulateWrite) };
            // A refusal only means the pages fault in one at a time.
            let _ = populated;
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            let _ = range;
        }
    }

    /// Gives the pages of `range` (page-aligned, committed) back to the
    /// system but keeps them committed: they read as zeros when next
    /// touched. Linux and Android (`madvise(MADV_DONTNEED)`); elsewhere it
    /// does nothing, since `MADV_DONTNEED` may only be a hint there.
    ///
    /// # Safety
    ///
    /// No live value lies in `range` and nothing reads it expecting its
    /// contents: they are lost.
    unsafe fn discard(&mut self, range: Range<usize>) {
        let Some(start) = self.giving_back(&range, self.span.page) else {
            return;
        };
        // SAFETY: the range lies inside our mapping, page-aligned (checked
        // by `at`), and the caller guarantees it holds nothing anyone reads.
        unsafe { drop_pages(start, range.len()) };
    }

    /// Gives the pages of `range` back to the system and makes the range
    /// inaccessible. The addresses stay reserved.
    ///
    /// # Safety
    ///
    /// No live value lies in `range` and nothing will read or write it
    /// before it is committed again: its contents are lost.
    unsafe fn release(&mut self, range: Range<usize>) {
        let Some(start) = self.giving_back(&range, self.span.granule) else {
            return;
        };
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            // SAFETY: inside our mapping, granule-aligned (checked by `at`);
            // the caller guarantees nothing reads it.
            unsafe { drop_pages(start, range.len()) };
            // SAFETY: as above; revoking access to memory nobody uses
            // turns a stale access into a fault.
            let closed = unsafe { mm::mprotect(start, range.len(), MprotectFlags::empty()) };
            debug_assert!(closed.is_ok(), "mprotect(PROT_NONE): {closed:?}");
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        {
            // `MAP_FIXED` over a range of our own mapping replaces it in one
            // step: it is never unmapped in between, so no other mapping
            // can take it.
            // SAFETY: the range is ours, and the caller guarantees it holds
            // nothing anyone will read.
            let replaced = unsafe {
                mm::mmap_anonymous(
                    start,
                    range.len(),
                    ProtFlags::empty(),
                    MapFlags::PRIVATE | MapFlags::FIXED,
                )
            };
            debug_assert!(replaced.is_ok(), "mmap(MAP_FIXED, PROT_NONE): {replaced:?}");
        }
    }

    /// Moves the pages of `from..from + len` to `to..to + len` without
    /// copying, leaving the source mapped and empty (it reads as zeros).
    /// Returns `false`, having changed nothing, when the system cannot.
    ///
    /// # Safety
    ///
    /// Both ranges are page-aligned, inside the region and disjoint; the
    /// source is committed; no reference points into either, and the
    /// destination holds no live value. (The destination takes the
    /// source's protection, so it need not be committed.)
    #[cfg(target_os = "linux")]
    unsafe fn remap(&mut self, from: usize, to: usize, len: usize) -> bool {
        debug_assert!(from + len <= to || to + len <= from, "overlapping remap");
        self.warm = 0;
        let source = self.span.at(&(from..from + len), self.span.page);
        let target = self.span.at(&(to..to + len), self.span.page);
        // `MREMAP_FIXED` replaces the (dead) destination and
        // `MREMAP_DONTUNMAP` keeps the source mapped: no hole ever opens.
        // SAFETY: the caller's contract: both ranges are ours, disjoint, and
        // nothing refers to them.
        let moved = unsafe {
            mm::mremap_fixed(
                source,
                len,
                len,
                mm::MremapFlags::MAYMOVE | mm::MremapFlags::DONTUNMAP,
                target,
            )
        };
        debug_assert!(
            moved.is_err() || moved == Ok(target),
            "mremap moved to another address"
        );
        moved.is_ok()
    }
}

impl Region {
    /// The start of `range` (both ends multiples of `unit`, checked),
    /// whose pages are about to be given back, or `None` if it is empty.
    /// The pages written so far are no longer known to be backed.
    fn giving_back(&mut self, range: &Range<usize>, unit: usize) -> Option<*mut c_void> {
        if range.is_empty() {
            return None;
        }
        self.warm = 0;
        Some(self.span.at(range, unit))
    }
}

/// Drops the pages of the `len` bytes at `start`: on Linux and Android
/// (`madvise(MADV_DONTNEED)`) they read back as zeros; elsewhere nothing
/// is done, since `MADV_DONTNEED` may only be a hint there.
///
/// # Safety
///
/// The bytes lie inside a mapping of ours, page-aligned, and nothing reads
/// them expecting their contents.
unsafe fn drop_pages(start: *mut c_void, len: usize) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: the caller's guarantee: dropping the pages loses nothing.
        let freed = unsafe { mm::madvise(start, len, mm::Advice::LinuxDontNeed) };
        debug_assert!(freed.is_ok(), "madvise(MADV_DONTNEED): {freed:?}");
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (start, len);
    }
}

/// Unmaps a whole mapping `reserve` made.
///
/// # Safety
///
/// `map` and `map_len` are such a mapping, and nothing points into it.
unsafe fn unmap(map: *mut c_void, map_len: usize) {
    // SAFETY: the caller's guarantee.
    let unmapped = unsafe { mm::munmap(map, map_len) };
    debug_assert!(unmapped.is_ok(), "munmap: {unmapped:?}");
}

/// The soft `RLIMIT_AS` in bytes, or `None` when unlimited.
fn address_space_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::As).current
}

impl Drop for Region {
    fn drop(&mut self) {
        #[cfg(feature = "std")]
        if let (Some((mut committed, mut warm)), true) = (self.offered, self.map_len != 0) {
            // A large vector's region keeps only its first granules
            // committed on the list, so that its leftovers do not crowd out
            // the small regions made and dropped again and again (each
            // eviction costs a later `mmap` and page faults).
            let keep = spare::KEEP_GRANULES * self.span.granule;
            if committed > keep {
                // `[keep, committed)` is granule-aligned and inside the
                // mapping; the owner dropped every value in the region.
                // SAFETY: so nothing reads it before it is committed again.
                unsafe { self.release(keep..committed) };
                (committed, warm) = (keep, warm.min(keep));
            }
            let evicted = spare::put(spare::Spare {
                map: self.map,
                map_len: self.map_len,
                span: self.span,
                committed,
                warm,
            });
            // The list owns the mapping now, or hands back the ones it
            // evicted (maybe this one): those are unmapped here.
            for old in evicted {
                // The list owned the mapping alone.
                // SAFETY: so nothing points into it.
                unsafe { unmap(old.map, old.map_len) };
            }
            return;
        }
        if self.map_len != 0 {
            // The owner dropped every value in it first.
            // SAFETY: so nothing else points into the mapping.
            unsafe { unmap(self.map, self.map_len) };
        }
    }
}

/// The spare list: whole reservations that dropped recyclable regions left
/// behind, with their committed memory, for the next reservation of the
/// same size. It plays the part of a heap allocator's free lists for
/// programs that create and drop vectors of the same shape again and again
/// (an ECS world per level or per test): the next one then costs no
/// `mmap`, `mprotect`, `munmap` nor page fault. Bounded, oldest out first,
/// by [`spare::MAX_REGIONS`] reservations and [`spare::MAX_COMMITTED`]
/// committed bytes (an upper bound on the resident memory it keeps).
#[cfg(feature = "std")]
mod spare {
    use core::ffi::c_void;
    use std::sync::{Mutex, PoisonError};
    use std::vec::Vec;

    use super::{Region, Span};

    /// The most reservations the list keeps.
    pub(super) const MAX_REGIONS: usize = 64;
    /// The most committed bytes the list keeps, all reservations together;
    /// a region with more committed on its own is unmapped.
    pub(super) const MAX_COMMITTED: usize = 64 << 20;
    /// The granules of a region that stay committed when it joins the list
    /// (the rest is released first).
    pub(super) const KEEP_GRANULES: usize = 2;

    /// A mapping owned by the list: the fields of its [`Region`].
    pub(super) struct Spare {
        pub(super) map: *mut c_void,
        pub(super) map_len: usize,
        pub(super) span: Span,
        /// `[0, committed)` is committed, its contents whatever the last
        /// owner left there.
        pub(super) committed: usize,
        /// `[0, warm)` is backed by memory.
        pub(super) warm: usize,
    }

    // A spare mapping is owned by the list alone: its last owner dropped
    // every value in it and kept no pointer.
    // SAFETY: so whichever thread takes it is its only user.
    unsafe impl Send for Spare {}

    impl Spare {
        /// The region again, recyclable, with the list's record of it.
        pub(super) fn into_region(self) -> Region {
            Region {
                map: self.map,
                map_len: self.map_len,
                span: self.span,
                arrived_committed: self.committed,
                warm: self.warm,
                recyclable: true,
                offered: None,
            }
        }
    }

    static LIST: Mutex<Vec<Spare>> = Mutex::new(Vec::new());

    /// The newest spare reservation of exactly `size` bytes and `granule`.
    pub(super) fn take(size: usize, granule: usize) -> Option<Spare> {
        let mut list = LIST.lock().unwrap_or_else(PoisonError::into_inner);
        let i = list
            .iter()
            .rposition(|s| s.span.size == size && s.span.granule == granule)?;
        Some(list.remove(i))
    }

    /// Empties the list.
    pub(super) fn take_all() -> Vec<Spare> {
        core::mem::take(&mut *LIST.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Puts `spare` on the list and returns what no longer fits (the
    /// oldest first, or `spare` itself if its committed memory alone is
    /// over the bound), for the caller to unmap outside the lock.
    pub(super) fn put(spare: Spare) -> Vec<Spare> {
        if spare.committed > MAX_COMMITTED {
            return std::vec![spare];
        }
        let mut evicted = Vec::new();
        let mut list = LIST.lock().unwrap_or_else(PoisonError::into_inner);
        list.push(spare);
        let mut committed: usize = list.iter().map(|s| s.committed).sum();
        while list.len() > MAX_REGIONS || committed > MAX_COMMITTED {
            let old = list.remove(0);
            committed -= old.committed;
            evicted.push(old);
        }
        evicted
    }
}
