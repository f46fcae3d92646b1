//! The heap fallback: the whole capacity is allocated up front, so
//! addresses never change and every byte is accessible from the start.
//! Nothing is released before the region is dropped.

use alloc::alloc::{alloc, dealloc, Layout};
use core::ops::Range;
use core::ptr::NonNull;

use super::{Backend, Span};
use crate::vm_vec::ReserveError;

/// One heap allocation.
pub(crate) struct Region {
    /// `span.size` bytes allocated with `Layout::from_size_align(size,
    /// align)`; when the size is 0, a dangling pointer aligned to `align`.
    /// No granule or page to speak of: both 1, which keeps the rounding in
    /// the window an identity.
    span: Span,
    align: usize,
}

impl Backend for Region {
    const VIRTUAL: bool = false;

    fn reserve(bytes: usize, align: usize) -> Result<Region, ReserveError> {
        let Ok(layout) = Layout::from_size_align(bytes, align) else {
            return Err(ReserveError::capacity_overflow());
        };
        // Empty, at a dangling address aligned to `align`; granule 1.
        let mut span = Span {
            granule: 1,
            ..Span::empty(align, 1)
        };
        if bytes == 0 {
            return Ok(Region { span, align });
        }
        // SAFETY: the layout's size is not zero.
        let base = unsafe { alloc(layout) };
        span.base = NonNull::new(base).ok_or_else(|| ReserveError::alloc(bytes))?;
        span.size = bytes;
        Ok(Region { span, align })
    }

    #[inline]
    fn span(&self) -> &Span {
        &self.span
    }

    /// All of it: the allocation is there from the start.
    #[inline]
    fn initially_committed(&self) -> usize {
        self.span.size
    }

    /// Nothing to do: the whole allocation is accessible.
    #[inline]
    fn commit(&mut self, range: Range<usize>) -> Result<(), i32> {
        debug_assert!(range.end <= self.span.size);
        Ok(())
    }

    /// Nothing to do: the heap backend frees nothing before it is dropped.
    ///
    /// # Safety
    ///
    /// As for every backend (the heap backend does nothing with the range,
    /// but callers keep the shared contract).
    #[inline]
    unsafe fn release(&mut self, range: Range<usize>) {
        debug_assert!(range.end <= self.span.size);
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        if self.span.size != 0 {
            // SAFETY: `base` was allocated in `reserve` with exactly this
            // layout (it was valid then, so it is now) and is freed once.
            unsafe {
                dealloc(
                    self.span.base.as_ptr(),
                    Layout::from_size_align_unchecked(self.span.size, self.align),
                );
            }
        }
    }
}
