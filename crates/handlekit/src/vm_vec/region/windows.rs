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

use super::{round_up, Backend, Span, CHUNK};
use crate::vm_vec::ReserveError;

/// `ERROR_NOT_ENOUGH_MEMORY`, what `VirtualAlloc` reports when the address
/// space is exhausted.
const ERROR_NOT_ENOUGH_MEMORY: u32 = 8;

/// One reservation.
pub(crate) struct Region {
    /// The reservation as `VirtualAlloc` returned it, or null when nothing
    /// was reserved. Released only in `drop`.
    map: *mut c_void,
    /// `map` rounded up to the granule: a power of two, at least
    /// [`CHUNK`], the page size, the allocation granularity and the
    /// element alignment. Windows cannot remap, so nothing moves page by
    /// page: the span's page is the granule.
    span: Span,
}

impl Backend for Region {
    const VIRTUAL: bool = true;

    fn reserve(bytes: usize, align: usize) -> Result<Region, ReserveError> {
        let mut info = SYSTEM_INFO::default();
        // SAFETY: `GetSystemInfo` fills the structure it is given.
        unsafe { GetSystemInfo(&mut info) };
        let page = (info.dwPageSize as usize).max(1);
        let granularity = (info.dwAllocationGranularity as usize).max(1);
        let granule = CHUNK
            .max(page.next_power_of_two())
            .max(granularity.next_power_of_two())
            .max(align);
        let mut span = Span::empty(granule, granule);
        if bytes == 0 {
            return Ok(Region {
                map: ptr::null_mut(),
                span,
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
        span.base =
            NonNull::new(map.cast::<u8>().wrapping_add(offset)).expect("inside a reservation");
        span.size = size;
        Ok(Region { map, span })
    }

    #[inline]
    fn span(&self) -> &Span {
        &self.span
    }

    #[inline]
    fn initially_committed(&self) -> usize {
        0
    }

    /// Commits `range` (readable and writable), keeping what it holds.
    fn commit(&mut self, range: Range<usize>) -> Result<(), i32> {
        if range.is_empty() {
            return Ok(());
        }
        let start = self.span.at(&range, self.span.granule);
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

    /// Decommits `range`; it stays reserved.
    ///
    /// # Safety
    ///
    /// No live value lies in `range` and nothing will read or write it
    /// before it is committed again.
    unsafe fn release(&mut self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        let start = self.span.at(&range, self.span.granule);
        // SAFETY: the range lies inside our reservation and, by the
        // caller's contract, holds nothing anyone will read.
        let done = unsafe { VirtualFree(start, range.len(), MEM_DECOMMIT) };
        debug_assert!(done != 0, "VirtualFree(MEM_DECOMMIT) failed");
    }
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
