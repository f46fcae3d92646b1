//! The Windows backend: `VirtualAlloc(MEM_RESERVE)` for the reservation,
//! `VirtualAlloc(MEM_COMMIT)` and `VirtualFree(MEM_DECOMMIT)` for granules,
//! `VirtualFree(MEM_RELEASE)` for the whole. A decommitted range stays
//! reserved (so a stale pointer faults); Windows has no `mremap`, so the
//! window copies when it rebases.

use core::ffi::c_void;
use core::ops::Range;
use core::ptr::{self, NonNull};

use windows_sys::Win32::Foundation::GetLastError;
use windows_sys::Win32::System::Memory::{
    VirtualAlloc, VirtualFree, MEM_COMMIT, MEM_DECOMMIT, MEM_RELEASE, MEM_RESERVE, PAGE_NOACCESS,
    PAGE_READWRITE,
};
use windows_sys::Win32::System::SystemInformation::{GetSystemInfo, SYSTEM_INFO};

use super::{round_up, CHUNK};
use crate::vm_vec::ReserveError;

/// Whether this backend maps virtual memory.
pub(crate) const VIRTUAL: bool = true;
/// Whether [`Region::remap`] can move pages.
pub(crate) const CAN_REMAP: bool = false;
/// Whether [`Region::discard`] leaves the pages reading as zeros.
pub(crate) const DISCARD_ZEROES: bool = false;

/// `ERROR_NOT_ENOUGH_MEMORY`, what `VirtualAlloc` reports when the address
/// space is exhausted.
const ERROR_NOT_ENOUGH_MEMORY: u32 = 8;

/// One reservation.
pub(crate) struct Region {
    /// The reservation as `VirtualAlloc` returned it, or null when nothing
    /// was reserved. Released only in `drop`.
    map: *mut c_void,
    /// `map` rounded up to `granule`; `size` bytes from here are reserved.
    base: NonNull<u8>,
    /// A multiple of `granule`.
    size: usize,
    /// A power of two, at least [`CHUNK`], the page size, the allocation
    /// granularity and the element alignment.
    granule: usize,
}

impl Region {
    pub(crate) fn reserve(bytes: usize, align: usize) -> Result<Region, ReserveError> {
        let mut info = SYSTEM_INFO::default();
        // SAFETY: `GetSystemInfo` fills the structure it is given.
        unsafe { GetSystemInfo(&mut info) };
        let page = (info.dwPageSize as usize).max(1);
        let granularity = (info.dwAllocationGranularity as usize).max(1);
        let granule = CHUNK
            .max(page.next_power_of_two())
            .max(granularity.next_power_of_two())
            .max(align);
        if bytes == 0 {
            let dangling = ptr::without_provenance_mut::<u8>(granule);
            return Ok(Region {
                map: ptr::null_mut(),
                base: NonNull::new(dangling).expect("a granule is not zero"),
                size: 0,
                granule,
            });
        }
        let size = round_up(bytes, granule)
            .filter(|&size| size <= isize::MAX as usize)
            .ok_or_else(ReserveError::capacity_overflow)?;
        let map_len = size
            .checked_add(granule)
            .filter(|&len| len <= isize::MAX as usize)
            .ok_or_else(ReserveError::capacity_overflow)?;
        // SAFETY: reserving fresh address space at an address the system
        // picks cannot affect memory the program uses.
        let map = unsafe { VirtualAlloc(ptr::null(), map_len, MEM_RESERVE, PAGE_NOACCESS) };
        if map.is_null() {
            // SAFETY: reads the calling thread's last error code.
            let code = unsafe { GetLastError() };
            return Err(if code == ERROR_NOT_ENOUGH_MEMORY {
                ReserveError::address_space(bytes, None)
            } else {
                ReserveError::os(bytes, code as i32)
            });
        }
        let addr = map.addr();
        let offset =
            round_up(addr, granule).expect("a reservation does not end past usize::MAX") - addr;
        let base =
            NonNull::new(map.cast::<u8>().wrapping_add(offset)).expect("inside a reservation");
        Ok(Region {
            map,
            base,
            size,
            granule,
        })
    }

    /// [`Region::reserve`]: this backend keeps no spare list.
    pub(crate) fn reserve_recycled(bytes: usize, align: usize) -> Result<Region, ReserveError> {
        Region::reserve(bytes, align)
    }

    /// Nothing to do: this backend keeps no spare list.
    #[inline]
    pub(crate) fn offer_on_drop(&mut self, _committed: usize, _warm: usize) {}

    #[inline]
    pub(crate) fn base(&self) -> NonNull<u8> {
        self.base
    }

    #[inline]
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    #[inline]
    pub(crate) fn granule(&self) -> usize {
        self.granule
    }

    /// The unit of [`Region::remap`]. Windows cannot remap, so nothing
    /// moves page by page: the granule.
    #[inline]
    pub(crate) fn page(&self) -> usize {
        self.granule
    }

    #[inline]
    pub(crate) fn initially_committed(&self) -> usize {
        0
    }

    fn at(&self, range: &Range<usize>) -> *mut c_void {
        assert!(
            range.start <= range.end
                && range.end <= self.size
                && range.start % self.granule == 0
                && range.end % self.granule == 0,
            "region range {range:?} is not granule-aligned inside {} bytes",
            self.size
        );
        self.base.as_ptr().wrapping_add(range.start).cast()
    }

    /// Commits `range` (readable and writable), keeping what it holds.
    pub(crate) fn commit(&mut self, range: Range<usize>) -> Result<(), i32> {
        if range.is_empty() {
            return Ok(());
        }
        let start = self.at(&range);
        // SAFETY: the range lies inside our reservation (checked by `at`);
        // committing keeps the contents of pages already committed.
        let done = unsafe { VirtualAlloc(start, range.len(), MEM_COMMIT, PAGE_READWRITE) };
        if done.is_null() {
            // SAFETY: reads the calling thread's last error code.
            Err(unsafe { GetLastError() } as i32)
        } else {
            Ok(())
        }
    }

    /// Nothing is done on Windows: the pages stay until their granule is
    /// released.
    ///
    /// # Safety
    ///
    /// As for the virtual backends: no live value lies in `range`.
    #[inline]
    pub(crate) unsafe fn discard(&mut self, range: Range<usize>) {
        debug_assert!(range.end <= self.size);
    }

    /// A hint that the committed pages of `range` are about to be written.
    /// Windows backs committed pages on first touch; nothing is done here.
    #[inline]
    pub(crate) fn populate(&mut self, range: Range<usize>) {
        debug_assert!(range.end <= self.size);
    }

    /// Decommits `range`; it stays reserved.
    ///
    /// # Safety
    ///
    /// No live value lies in `range` and nothing will read or write it
    /// before it is committed again.
    pub(crate) unsafe fn release(&mut self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        let start = self.at(&range);
        // SAFETY: the range lies inside our reservation and, by the
        // caller's contract, holds nothing anyone will read.
        let done = unsafe { VirtualFree(start, range.len(), MEM_DECOMMIT) };
        debug_assert!(done != 0, "VirtualFree(MEM_DECOMMIT) failed");
    }

    /// # Safety
    ///
    /// As on Linux; Windows has no `mremap`, so nothing happens.
    pub(crate) unsafe fn remap(&mut self, _from: usize, _to: usize, _len: usize) -> bool {
        false
    }
}

/// Nothing to release: this backend keeps no spare list.
pub(crate) fn release_spares() -> usize {
    0
}

impl Drop for Region {
    fn drop(&mut self) {
        if !self.map.is_null() {
            // SAFETY: `map` is the reservation `reserve` made; the owner
            // dropped every value in it first, and nothing points into it.
            let done = unsafe { VirtualFree(self.map, 0, MEM_RELEASE) };
            debug_assert!(done != 0, "VirtualFree(MEM_RELEASE) failed");
        }
    }
}
