//! The heap fallback: the whole capacity is allocated up front, so
//! addresses never change and every byte is accessible from the start.
//! Nothing is released before the region is dropped.

use alloc::alloc::{alloc, dealloc, Layout};
use core::ops::Range;
use core::ptr::{self, NonNull};

use crate::vm_vec::ReserveError;

/// Whether this backend maps virtual memory.
pub(crate) const VIRTUAL: bool = false;
/// Whether [`Region::remap`] can move pages.
pub(crate) const CAN_REMAP: bool = false;
/// Whether [`Region::discard`] leaves the pages reading as zeros.
pub(crate) const DISCARD_ZEROES: bool = false;

/// One heap allocation.
pub(crate) struct Region {
    /// `size` bytes allocated with `Layout::from_size_align(size, align)`;
    /// when `size == 0`, a dangling pointer aligned to `align`.
    base: NonNull<u8>,
    size: usize,
    align: usize,
}

impl Region {
    pub(crate) fn reserve(bytes: usize, align: usize) -> Result<Region, ReserveError> {
        let Ok(layout) = Layout::from_size_align(bytes, align) else {
            return Err(ReserveError::capacity_overflow());
        };
        if bytes == 0 {
            let dangling = ptr::without_provenance_mut::<u8>(align);
            return Ok(Region {
                base: NonNull::new(dangling).expect("an alignment is not zero"),
                size: 0,
                align,
            });
        }
        // SAFETY: the layout's size is not zero.
        let base = unsafe { alloc(layout) };
        match NonNull::new(base) {
            Some(base) => Ok(Region {
                base,
                size: bytes,
                align,
            }),
            None => Err(ReserveError::alloc(bytes)),
        }
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

    /// The heap region has no granule to speak of; 1 keeps the rounding in
    /// the window an identity.
    #[inline]
    pub(crate) fn granule(&self) -> usize {
        1
    }

    /// No pages either: 1, like the granule.
    #[inline]
    pub(crate) fn page(&self) -> usize {
        1
    }

    #[inline]
    pub(crate) fn initially_committed(&self) -> usize {
        self.size
    }

    #[inline]
    pub(crate) fn commit(&mut self, range: Range<usize>) -> Result<(), i32> {
        debug_assert!(range.end <= self.size);
        Ok(())
    }

    /// Nothing to do: the heap backend frees nothing before it is dropped.
    ///
    /// # Safety
    ///
    /// As for the virtual backends: no live value lies in `range`.
    #[inline]
    pub(crate) unsafe fn discard(&mut self, range: Range<usize>) {
        debug_assert!(range.end <= self.size);
    }

    /// Nothing to do: the whole allocation is there from the start.
    #[inline]
    pub(crate) fn populate(&mut self, range: Range<usize>) {
        debug_assert!(range.end <= self.size);
    }

    /// # Safety
    ///
    /// No live value or reference lies in `range` (the heap backend does
    /// nothing with it, but callers keep the shared contract).
    #[inline]
    pub(crate) unsafe fn release(&mut self, range: Range<usize>) {
        debug_assert!(range.end <= self.size);
    }

    /// # Safety
    ///
    /// As for the virtual backends; the heap backend never remaps.
    #[inline]
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
        if self.size != 0 {
            // SAFETY: `base` was allocated in `reserve` with exactly this
            // layout (it was valid then, so it is now) and is freed once.
            unsafe {
                dealloc(
                    self.base.as_ptr(),
                    Layout::from_size_align_unchecked(self.size, self.align),
                );
            }
        }
    }
}
