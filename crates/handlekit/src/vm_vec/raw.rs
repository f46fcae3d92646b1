//! The window of live elements over a [`Region`]: every piece of unsafe code
//! that touches elements. [`VmVec`](super::VmVec) is safe code over it.
//!
//! Offsets are in bytes from the region's base. For a zero-sized `T` they
//! count elements instead (`STRIDE` is 1), no memory is touched, and the
//! region is empty; the walking and capacity rules stay the same.

use core::fmt;
use core::iter::FusedIterator;
use core::marker::PhantomData;
use core::mem::{align_of, size_of, MaybeUninit};
use core::ptr::{self, NonNull};
use core::slice;

use super::error::{PushFailure, ReserveError};
use super::region::{round_down, round_up, Backend, Region, CAN_REMAP, DISCARD_ZEROES, VIRTUAL};
use super::{Rebased, ZeroBits};

/// The least run of dead pages at the front, in bytes, that
/// [`RawVmVec::release_front`] gives back short of a whole granule: fewer
/// would cost a system call every few pages of a queue's pops.
const DISCARD_MIN: usize = 64 << 10;

/// The live elements of a `VmVec` and the state of the memory under them.
///
/// The memory of the region, by offset:
///
/// ```text
/// 0        released       head ─ live ─ tail     fast_end ≤ committed    size
/// │ released │ dead (committed) │ len elements │ committed, unused │ reserved │
/// ```
pub(crate) struct RawVmVec<T> {
    /// The reservation. For a virtual region, `[0, released)` is released
    /// (inaccessible), `[released, committed)` is committed (readable and
    /// writable) and `[committed, size)` is reserved only. A heap region is
    /// all accessible. Empty for a zero-sized `T`.
    region: Region,
    /// Offset of the first live element. A multiple of `align_of::<T>()`.
    /// Everything before it is dead: no value lives there. Written only by
    /// [`set_head`](Self::set_head), which keeps `first` with it.
    head: usize,
    /// `at(head)`: the first live element's address, with the region's
    /// provenance (dangling for a zero-sized `T`). Invariant: equal to
    /// `at(head)` (the region's base never changes). Kept so that an
    /// access by index reads one field, not the base and the offset (two
    /// loads and an add in every lookup of the ECS's entity table).
    first: *mut T,
    /// The `len` elements at `head`, `head + STRIDE`, … are initialized and
    /// owned by this window; nothing at or past `tail() = head + len *
    /// STRIDE` is. (`tail` is derived rather than stored so that a push
    /// updates one field.)
    len: usize,
    /// `max_capacity * STRIDE`: the window never extends past it
    /// (`tail() <= limit <= region.size()`, except for a zero-sized `T`).
    limit: usize,
    /// See `region`. A multiple of the granule (or `region.size()`), and
    /// `tail <= committed`. For a zero-sized `T`, `limit`.
    committed: usize,
    /// See `region`. A multiple of the granule, at most `head` rounded down
    /// to the granule; it lags behind while a `DrainFront` is alive (the
    /// drained values are still read), and catches up at the next release.
    /// Always 0 for a heap region and a zero-sized `T`.
    released: usize,
    /// A multiple of the page size (0 for a heap region and a zero-sized
    /// `T`): the dead pages of `[released, discarded)` were given back to
    /// the system while staying committed (they read as zeros), so that a
    /// window whose front has moved less than a granule past `released`
    /// does not keep that granule's dead pages resident. At most `head`
    /// rounded down to the page; reset with `released`.
    discarded: usize,
    /// `min(committed, limit)`: a push below it needs no system call.
    fast_end: usize,
    /// The position of the first live element (wrapping).
    front: usize,
    max_capacity: usize,
    _owns: PhantomData<T>,
}

// SAFETY: the window owns its elements (like `Vec<T>`): sending it sends
// them, and nothing else refers to the region.
unsafe impl<T: Send> Send for RawVmVec<T> {}
// SAFETY: `&RawVmVec<T>` only gives out `&T`.
unsafe impl<T: Sync> Sync for RawVmVec<T> {}

impl<T> RawVmVec<T> {
    const IS_ZST: bool = size_of::<T>() == 0;
    /// The offset step between elements.
    const STRIDE: usize = if Self::IS_ZST { 1 } else { size_of::<T>() };
    /// Whether commit and release do anything.
    const PAGED: bool = VIRTUAL && !Self::IS_ZST;

    pub(crate) fn with_max_capacity(max_capacity: usize) -> Result<Self, ReserveError> {
        Self::new(max_capacity, Region::reserve)
    }

    /// [`with_max_capacity`](Self::with_max_capacity) from the spare list
    /// when it can, handing the reservation back to it when dropped (see
    /// `Region::reserve_recycled`).
    pub(crate) fn with_max_capacity_recycled(max_capacity: usize) -> Result<Self, ReserveError> {
        Self::new(max_capacity, Region::reserve_recycled)
    }

    fn new(
        max_capacity: usize,
        reserve: fn(usize, usize) -> Result<Region, ReserveError>,
    ) -> Result<Self, ReserveError> {
        let limit = max_capacity
            .checked_mul(Self::STRIDE)
            .filter(|&bytes| Self::IS_ZST || bytes <= isize::MAX as usize)
            .ok_or_else(ReserveError::capacity_overflow)?;
        let region = reserve(if Self::IS_ZST { 0 } else { limit }, align_of::<T>())?;
        let committed = if Self::IS_ZST {
            limit
        } else {
            region.initially_committed()
        };
        let mut raw = RawVmVec {
            region,
            head: 0,
            // Set by `set_head` below, through `at` like every later value.
            first: ptr::null_mut(),
            len: 0,
            limit,
            committed,
            released: 0,
            discarded: 0,
            fast_end: committed.min(limit),
            front: 0,
            max_capacity,
            _owns: PhantomData,
        };
        raw.set_head(0);
        Ok(raw)
    }

    /// The element at `offset`. Computing it is safe; using it needs the
    /// invariants.
    #[inline]
    fn at(&self, offset: usize) -> *mut T {
        if Self::IS_ZST {
            NonNull::dangling().as_ptr()
        } else {
            self.region.base().as_ptr().wrapping_add(offset).cast()
        }
    }

    /// One past the last live element.
    #[inline]
    fn tail(&self) -> usize {
        self.head + self.len * Self::STRIDE
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn max_capacity(&self) -> usize {
        self.max_capacity
    }

    /// Elements that fit between the window's end and the reservation's.
    #[inline]
    pub(crate) fn remaining_capacity(&self) -> usize {
        (self.limit - self.tail()) / Self::STRIDE
    }

    #[inline]
    pub(crate) fn front_position(&self) -> usize {
        self.front
    }

    /// Sets the position of the first element of an empty window (for a
    /// copy that keeps the positions of its original).
    pub(crate) fn set_front_position(&mut self, front: usize) {
        debug_assert_eq!(self.len, 0, "positions of live elements never change");
        self.front = front;
    }

    pub(crate) fn granule(&self) -> usize {
        self.region.granule()
    }

    pub(crate) fn reserved_bytes(&self) -> usize {
        self.region.size()
    }

    pub(crate) fn committed_bytes(&self) -> usize {
        if Self::IS_ZST {
            0
        } else {
            self.committed - self.released
        }
    }

    /// Offset of the first live element from the start of the reservation,
    /// in bytes (in elements for a zero-sized `T`).
    pub(crate) fn head_offset(&self) -> usize {
        self.head
    }

    /// The first live element's address (where it would be, for an empty
    /// window), with the reservation's own provenance: no reference to the
    /// elements is made on the way.
    #[inline]
    pub(crate) fn as_ptr(&self) -> *mut T {
        debug_assert_eq!(self.first, self.at(self.head));
        self.first
    }

    #[inline]
    pub(crate) fn as_slice(&self) -> &[T] {
        // The `len` elements from `head` (at `first`) are initialized,
        // aligned and owned by the window.
        // SAFETY: so the slice is valid; `&self` keeps it alive and unchanged.
        unsafe { slice::from_raw_parts(self.as_ptr(), self.len) }
    }

    #[inline]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`; `&mut self` makes the access unique.
        unsafe { slice::from_raw_parts_mut(self.as_ptr(), self.len) }
    }

    /// Moves the window's start to offset `head`, and `first` with it.
    #[inline]
    fn set_head(&mut self, head: usize) {
        self.head = head;
        self.first = self.at(head);
    }

    /// Appends `value` without moving any element.
    #[inline]
    pub(crate) fn push(&mut self, value: T) -> Result<(), (T, PushFailure)> {
        let tail = self.tail();
        if self.fast_end - tail < Self::STRIDE {
            if let Err(failure) = self.grow(Self::STRIDE) {
                return Err((value, failure));
            }
        }
        // `tail + STRIDE <= fast_end`, and `head` and the stride are aligned.
        // SAFETY: so the slot is aligned committed memory inside the
        // reservation, past the last live element (it holds no value).
        unsafe { self.at(tail).write(value) };
        self.len += 1;
        Ok(())
    }

    /// The committed room past the last element, uninitialized.
    #[inline]
    pub(crate) fn spare_capacity_mut(&mut self) -> &mut [MaybeUninit<T>] {
        let tail = self.tail();
        let count = (self.fast_end - tail) / Self::STRIDE;
        // `[tail, fast_end)` is committed memory inside the reservation
        // (dangling for a zero-sized `T`), aligned at `tail`, holding no
        // live element; `&mut self` makes the access unique.
        // SAFETY: so it is valid as `count` uninitialized slots.
        unsafe { slice::from_raw_parts_mut(self.at(tail).cast::<MaybeUninit<T>>(), count) }
    }

    /// Sets the number of live elements.
    ///
    /// # Safety
    ///
    /// `len` is at most the current length plus the spare capacity, and the
    /// elements between the current length and `len` are initialized.
    #[inline]
    pub(crate) unsafe fn set_len(&mut self, len: usize) {
        debug_assert!(
            self.head + len * Self::STRIDE <= self.fast_end,
            "set_len past the committed room"
        );
        self.len = len;
    }

    /// Commits room for `additional` more bytes past `tail`, at least a
    /// granule at a time.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, additional: usize) -> Result<(), PushFailure> {
        let tail = self.tail();
        if self.limit - tail < additional {
            return Err(PushFailure::Full {
                max_capacity: self.max_capacity,
            });
        }
        // Only a virtual region gets here: otherwise `fast_end == limit`.
        let needed = tail + additional;
        let new_committed = round_up(needed, self.region.granule())
            .map_or(self.region.size(), |end| end.min(self.region.size()));
        self.region
            .commit(self.committed..new_committed)
            .map_err(PushFailure::Commit)?;
        self.committed = new_committed;
        self.fast_end = self.committed.min(self.limit);
        Ok(())
    }

    /// Commits room for `additional` more elements (as many as fit), so that
    /// a known-length extend makes one system call. A refusal is ignored:
    /// the pushes report it.
    pub(crate) fn reserve(&mut self, additional: usize) {
        let tail = self.tail();
        let bytes = additional
            .saturating_mul(Self::STRIDE)
            .min(self.limit - tail);
        if self.fast_end - tail < bytes {
            let _ = self.grow(bytes);
        }
    }

    /// [`reserve`](Self::reserve), then asks the system to back the room
    /// with memory now, in one call, instead of a page fault per page as
    /// the pushes first write it.
    pub(crate) fn reserve_populated(&mut self, additional: usize) {
        self.reserve(additional);
        if !Self::PAGED {
            return;
        }
        let tail = self.tail();
        let end = tail
            .saturating_add(additional.saturating_mul(Self::STRIDE))
            .min(self.committed);
        if end > tail {
            self.region.populate(tail..end);
        }
    }

    pub(crate) fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        // SAFETY: `len > 0`, so the element at `head` is initialized; `head`
        // moves past it next, so it is read out exactly once.
        let value = unsafe { self.as_ptr().read() };
        self.set_head(self.head + Self::STRIDE);
        self.len -= 1;
        self.front = self.front.wrapping_add(1);
        self.release_front();
        Some(value)
    }

    pub(crate) fn pop_back(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: the element at the old last slot is initialized and now
        // outside the window, so it is read out exactly once.
        Some(unsafe { self.at(self.tail()).read() })
    }

    pub(crate) fn truncate(&mut self, len: usize) {
        if len >= self.len {
            return;
        }
        let cut = self.len - len;
        let first_cut = self.at(self.head + len * Self::STRIDE);
        // Shorten first: if a `Drop` panics, the values are already out of
        // the window and are not dropped again.
        self.len = len;
        // Dropping a slice in place drops every element even if one panics.
        // SAFETY: the `cut` elements from `first_cut` were initialized and
        // owned by the window, which no longer counts them.
        unsafe { ptr::drop_in_place(ptr::slice_from_raw_parts_mut(first_cut, cut)) };
    }

    /// Takes the first `n` elements out of the window; the returned drain
    /// owns them and releases the dead chunks when it is dropped.
    ///
    /// # Panics
    ///
    /// If `n > len`.
    pub(crate) fn drain_front(&mut self, n: usize) -> DrainFront<'_, T> {
        assert!(
            n <= self.len,
            "drain_front: cannot remove {n} elements from a VmVec of length {}",
            self.len
        );
        let block = self.as_ptr();
        self.set_head(self.head + n * Self::STRIDE);
        self.len -= n;
        self.front = self.front.wrapping_add(n);
        DrainFront {
            block,
            next: 0,
            end: n,
            vec: self,
        }
    }

    /// Gives every whole granule before `head` back to the system, and the
    /// whole dead pages before `head` in the granule after them once at
    /// least [`DISCARD_MIN`] bytes of them have gathered.
    #[inline]
    fn release_front(&mut self) {
        if !Self::PAGED {
            return;
        }
        let target = round_down(self.head, self.region.granule());
        if target > self.released {
            self.release_front_to(target);
        }
        let pages = round_down(self.head, self.region.page());
        if pages >= self.discarded.max(self.released) + DISCARD_MIN {
            self.discard_front_to(pages);
        }
    }

    /// Drops the dead pages of `[max(discarded, released), to)`, keeping
    /// them committed.
    #[cold]
    #[inline(never)]
    fn discard_front_to(&mut self, to: usize) {
        let from = self.discarded.max(self.released);
        // A drain calls this only after its values are gone; `[from, to)`
        // lies before `head`, inside the committed part.
        // SAFETY: no live value is there; with `&mut self` nothing reads it.
        unsafe { self.region.discard(from..to) };
        self.discarded = to;
    }

    #[cold]
    #[inline(never)]
    fn release_front_to(&mut self, target: usize) {
        // A drain calls this only after its values are gone.
        // SAFETY: `[released, target)` lies before `head`: no live value is
        // there, and with `&mut self` nothing reads it.
        unsafe { self.region.release(self.released..target) };
        self.released = target;
        self.discarded = self.discarded.max(target);
    }

    /// Sets the live elements `range` (indices into the window, checked)
    /// to all-zero bytes, giving the whole pages inside the range back to
    /// the system where that leaves them reading as zeros. Returns the
    /// bytes given back.
    pub(crate) fn zero_range(&mut self, range: core::ops::Range<usize>) -> usize
    where
        T: ZeroBits,
    {
        let elements = &mut self.as_mut_slice()[range.clone()];
        if !Self::PAGED || !DISCARD_ZEROES || elements.is_empty() {
            // `elements` is a live part of the window, writable through `&mut`.
            // SAFETY: zero bytes are a valid `T` (`ZeroBits`); `T: Copy` drops nothing.
            unsafe { ptr::write_bytes(elements.as_mut_ptr(), 0, elements.len()) };
            return 0;
        }
        let start = self.head + range.start * Self::STRIDE;
        let end = self.head + range.end * Self::STRIDE;
        let page = self.region.page();
        // Whole pages inside the range; the bytes around them are written.
        let inner_start = round_up(start, page).map_or(end, |at| at.min(end));
        let inner_end = round_down(end, page).max(inner_start);
        // `[start, inner_start)` and `[inner_end, end)` lie inside the live
        // elements of `range`, which `&mut self` lets us overwrite.
        // SAFETY: zeros are a valid `T`, and `T: Copy` drops nothing.
        unsafe { ptr::write_bytes(self.at(start).cast::<u8>(), 0, inner_start - start) };
        // SAFETY: as above.
        unsafe { ptr::write_bytes(self.at(inner_end).cast::<u8>(), 0, end - inner_end) };
        if inner_end > inner_start {
            // `[inner_start, inner_end)` is page-aligned (the base is
            // granule-aligned) and committed (it lies before `tail`). Its
            // values are meant to become zeros, which this backend's
            // discard leaves (`DISCARD_ZEROES`) and which are valid `T`s.
            // SAFETY: no value there is read expecting its old contents.
            unsafe { self.region.discard(inner_start..inner_end) };
        }
        inner_end - inner_start
    }

    /// Gives the committed memory past the last live element's granule back.
    pub(crate) fn shrink_to_fit(&mut self) {
        if !Self::PAGED {
            return;
        }
        self.release_front();
        let keep = round_up(self.tail(), self.region.granule())
            .map_or(self.committed, |end| end.min(self.committed))
            .max(self.released);
        if keep < self.committed {
            // SAFETY: `[keep, committed)` lies past `tail`: it holds no live
            // value, and `&mut self` means nothing reads it.
            unsafe { self.region.release(keep..self.committed) };
            self.committed = keep;
            self.fast_end = self.committed.min(self.limit);
        }
    }

    /// Moves the live window back towards the start of the reservation.
    pub(crate) fn rebase(&mut self) -> Rebased {
        self.release_front();
        if self.head == 0 {
            return Rebased::NONE;
        }
        if self.len == 0 {
            return self.rewind();
        }
        if !Self::PAGED {
            let shift = self.head;
            if !Self::IS_ZST {
                // `copy` allows the overlap; afterwards only the destination
                // counts as live.
                // SAFETY: the source holds the `len` live elements; the
                // destination is accessible memory of the same allocation.
                unsafe { ptr::copy(self.as_ptr(), self.at(0), self.len) };
            }
            self.set_head(0);
            return Rebased {
                shift,
                remapped: 0,
                copied: if Self::IS_ZST { 0 } else { self.tail() },
            };
        }
        if CAN_REMAP {
            // Remap when whole pages are dead and either one piece moves
            // everything or the pieces are at least a granule each; a small
            // dead prefix before a large live part is cheaper to copy than
            // to move in many small pieces.
            let page = self.region.page();
            let shift = round_down(self.head, page);
            let live = self.live_pages_end() - shift;
            if shift > 0 && (shift >= live || shift >= self.region.granule()) {
                return self.rebase_remap(usize::MAX);
            }
        }
        self.rebase_copy()
    }

    /// The end of the page holding the last live byte: `tail` rounded up to
    /// the page size, at most `committed` (a multiple of the page size).
    fn live_pages_end(&self) -> usize {
        round_up(self.tail(), self.region.page())
            .map_or(self.committed, |end| end.min(self.committed))
    }

    /// `rebase` of an empty window: release everything, start over at 0.
    fn rewind(&mut self) -> Rebased {
        let shift = self.head;
        if Self::PAGED {
            // SAFETY: the window is empty: no live value anywhere.
            unsafe { self.region.release(self.released..self.committed) };
            self.committed = 0;
            self.released = 0;
            self.discarded = 0;
            self.fast_end = 0;
        }
        self.set_head(0);
        Rebased {
            shift,
            remapped: 0,
            copied: 0,
        }
    }

    /// `rebase` by the whole pages before `head`, moving the live pages
    /// with `mremap` in pieces of at most the shift; after at most
    /// `max_pieces` pieces (`usize::MAX` outside tests), or when the system
    /// refuses one, the rest of the live bytes are copied. Either way the
    /// window ends up at `head % page`, inside the first page.
    ///
    /// Only for a virtual region (`PAGED`) with at least one live element
    /// and one whole dead page.
    fn rebase_remap(&mut self, max_pieces: usize) -> Rebased {
        debug_assert!(Self::PAGED && self.len > 0);
        let page = self.region.page();
        let shift = round_down(self.head, page);
        debug_assert!(shift > 0);
        let tail = self.tail();
        let end = self.live_pages_end();
        let old_committed = self.committed;
        // The moved pages end at `end - shift`; commitment stays in
        // granules, from 0.
        let new_committed = round_up(end - shift, self.region.granule())
            .map_or(old_committed, |c| c.min(old_committed));
        // Commit the destination first, below the committed part (the rest
        // of it is committed already): a remapped piece brings its own
        // protection, but a copied rest needs committed memory, and this way
        // `[0, new_committed)` is committed however far the remap gets. If
        // the system refuses, nothing has moved.
        if self
            .region
            .commit(0..self.released.min(new_committed))
            .is_err()
        {
            return Rebased::NONE;
        }
        // Piece k goes where piece k - 1 was: pieces of at most `shift`
        // bytes never overlap their destination.
        let mut moved = shift;
        let mut pieces = 0;
        while moved < end && pieces < max_pieces {
            let len = shift.min(end - moved);
            // The source `[moved, moved + len)` lies in `[round_down(head,
            // page), end)`, inside `[released, committed)`; the destination
            // is `shift` bytes lower, disjoint from it, and is dead memory or
            // the source of the previous piece, which that call emptied.
            // Both are page-aligned (`end` is, or is `committed`, a multiple
            // of the granule).
            // SAFETY: so the source is committed, the destination holds no
            // live value, and `&mut self` means no references into either.
            if !unsafe { self.region.remap(moved, moved - shift, len) } {
                break;
            }
            moved += len;
            pieces += 1;
        }
        let remapped = moved - shift;
        // Whatever did not move is copied after the part that did.
        let from = moved.max(self.head);
        let mut copied = 0;
        if from < tail {
            copied = tail - from;
            let base = self.region.base().as_ptr();
            // The source `[from, tail)` holds the rest of the live bytes,
            // untouched; the destination `[from - shift, tail - shift)` lies
            // in `[0, new_committed)`, committed above, and past the bytes
            // remapped so far. `copy` allows the overlap and copies bytes as
            // they are (padding too).
            // SAFETY: so both ranges are committed memory of the region, and
            // `&mut self` means nothing else refers to them.
            unsafe {
                ptr::copy(
                    base.wrapping_add(from),
                    base.wrapping_add(from - shift),
                    copied,
                );
            }
        }
        // The window now ends at `tail - shift <= end - shift <=
        // new_committed`: `[new_committed, old_committed)` holds emptied or
        // copied-from sources and dead values only (and the part of it that
        // was released stays so).
        // SAFETY: so no live value lies there, and `&mut self` means nothing
        // reads it.
        unsafe { self.region.release(new_committed..old_committed) };
        self.settle_rebased(self.head - shift, new_committed);
        Rebased {
            shift,
            remapped,
            copied,
        }
    }

    /// Records where a rebase left the window: starting at `head`, the
    /// region committed up to `committed`, and nothing below released or
    /// discarded any more.
    fn settle_rebased(&mut self, head: usize, committed: usize) {
        self.set_head(head);
        self.committed = committed;
        self.released = 0;
        self.discarded = 0;
        self.fast_end = self.committed.min(self.limit);
    }

    /// `rebase` to offset 0 by copying the live elements.
    fn rebase_copy(&mut self) -> Rebased {
        let shift = self.head;
        let bytes = self.tail() - self.head;
        let new_committed = round_up(bytes, self.region.granule())
            .map_or(self.committed, |end| end.min(self.committed));
        // `[released, committed)` is accessible; commit the part of the
        // destination below it.
        if self
            .region
            .commit(0..self.released.min(new_committed))
            .is_err()
        {
            return Rebased::NONE;
        }
        // `copy` allows the overlap; afterwards only the destination counts.
        // SAFETY: the source holds the `len` live elements; the destination
        // `[0, bytes)` is committed and inside the region.
        unsafe { ptr::copy(self.as_ptr(), self.at(0), self.len) };
        let stale = new_committed.max(self.released);
        // SAFETY: `[stale, committed)` lies past the new window's end: it
        // holds only copied-from bytes and dead values.
        unsafe { self.region.release(stale..self.committed) };
        self.settle_rebased(0, new_committed);
        Rebased {
            shift,
            remapped: 0,
            copied: bytes,
        }
    }

    /// Checks every invariant documented on the fields.
    pub(crate) fn check_invariants(&self) {
        let g = self.region.granule();
        let tail = self.tail();
        assert!(tail <= self.limit, "window");
        assert_eq!(self.head % align_of::<T>(), 0, "alignment");
        assert_eq!(self.first, self.at(self.head), "first");
        assert_eq!(self.limit, self.max_capacity * Self::STRIDE, "limit");
        assert_eq!(self.fast_end, self.committed.min(self.limit), "fast_end");
        assert!(tail <= self.committed, "committed");
        if Self::IS_ZST {
            assert_eq!(self.committed, self.limit);
            assert_eq!(self.released, 0);
        } else {
            assert!(self.limit <= self.region.size(), "reservation");
            assert!(self.committed <= self.region.size(), "committed");
            assert!(self.region.size() % g == 0, "size");
            assert!(
                self.committed % g == 0 || self.committed == self.region.size(),
                "committed granule"
            );
            assert!(self.released % g == 0, "released granule");
            assert!(self.released <= round_down(self.head, g), "released");
            let page = self.region.page();
            assert!(self.discarded % page == 0, "discarded page");
            assert!(
                self.discarded <= round_down(self.head, page).max(self.released),
                "discarded"
            );
            if !VIRTUAL {
                assert_eq!(self.released, 0);
                assert_eq!(self.committed, self.region.size());
            }
        }
    }
}

impl<T> Drop for RawVmVec<T> {
    fn drop(&mut self) {
        // Dropping a slice in place drops every element even if one panics;
        // the region is freed after.
        // SAFETY: the live elements are initialized and owned; the window is
        // going away, so nothing sees them again.
        unsafe { ptr::drop_in_place(self.as_mut_slice()) };
        // A region with no released front can serve again as it is: its
        // committed prefix is `[0, committed)`, and the pages up to the
        // window's end were written (unless some were discarded).
        if Self::PAGED && self.released == 0 {
            let warm = if self.discarded == 0 {
                round_up(self.tail(), self.region.page())
                    .map_or(self.committed, |end| end.min(self.committed))
            } else {
                0
            };
            self.region.offer_on_drop(self.committed, warm);
        }
    }
}

/// A draining iterator over the front of a [`VmVec`](super::VmVec), from
/// [`VmVec::drain_front`](super::VmVec::drain_front).
///
/// The elements are out of the vector as soon as this is created. Dropping
/// the iterator drops the elements it did not yield, then gives the chunks
/// that became dead back to the system. Forgetting it (`mem::forget`) leaks
/// those elements; the chunks are released by the next removal at the front.
pub struct DrainFront<'a, T> {
    /// The first drained element; the `end` elements from here were taken
    /// out of the window and are owned by the drain.
    block: *mut T,
    /// Elements `[next, end)` of the block are initialized and not yet
    /// yielded; the others were read out.
    next: usize,
    end: usize,
    vec: &'a mut RawVmVec<T>,
}

// SAFETY: the drain owns the values it has not yielded and borrows the
// vector mutably, like `vec::Drain`.
unsafe impl<T: Send> Send for DrainFront<'_, T> {}
// SAFETY: `&DrainFront` gives out only `&T` (through `as_slice`).
unsafe impl<T: Sync> Sync for DrainFront<'_, T> {}

impl<T> DrainFront<'_, T> {
    /// The elements not yet yielded.
    ///
    /// ```
    /// let mut v = handlekit::VmVec::with_max_capacity(8)?;
    /// v.extend([1, 2, 3, 4]);
    /// let mut drain = v.drain_front(3);
    /// assert_eq!(drain.next(), Some(1));
    /// assert_eq!(drain.as_slice(), &[2, 3]);
    /// # Ok::<(), handlekit::vm_vec::ReserveError>(())
    /// ```
    #[must_use]
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: elements `[next, end)` of the block are initialized and
        // owned by the drain; `&self` keeps them.
        unsafe { slice::from_raw_parts(self.block.wrapping_add(self.next), self.end - self.next) }
    }
}

impl<T> Iterator for DrainFront<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.next == self.end {
            return None;
        }
        // SAFETY: element `next` is initialized and owned by the drain;
        // `next` moves past it, so it is read out once.
        let value = unsafe { self.block.wrapping_add(self.next).read() };
        self.next += 1;
        Some(value)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.end - self.next;
        (n, Some(n))
    }
}

impl<T> DoubleEndedIterator for DrainFront<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        if self.next == self.end {
            return None;
        }
        self.end -= 1;
        // SAFETY: element `end` (before the decrement: the last not yet
        // yielded) is initialized and owned; it is now outside `[next, end)`.
        Some(unsafe { self.block.wrapping_add(self.end).read() })
    }
}

impl<T> ExactSizeIterator for DrainFront<'_, T> {}
impl<T> FusedIterator for DrainFront<'_, T> {}

impl<T: fmt::Debug> fmt::Debug for DrainFront<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("DrainFront").field(&self.as_slice()).finish()
    }
}

impl<T> Drop for DrainFront<'_, T> {
    fn drop(&mut self) {
        /// Releases the dead chunks after the values are dropped, even if a
        /// `Drop` panics.
        struct Release<'r, T>(&'r mut RawVmVec<T>);
        impl<T> Drop for Release<'_, T> {
            fn drop(&mut self) {
                self.0.release_front();
            }
        }

        let rest =
            ptr::slice_from_raw_parts_mut(self.block.wrapping_add(self.next), self.end - self.next);
        self.next = self.end;
        let _release = Release(&mut *self.vec);
        // Dropping a slice in place drops every element even if one panics,
        // and `_release` runs after them either way.
        // SAFETY: `rest` holds the initialized elements the drain still
        // owns; `next = end` first, so they are not read again.
        unsafe { ptr::drop_in_place(rest) };
    }
}

/// The remap-then-copy path of `rebase`, driven directly: the public API
/// cannot make the kernel refuse an `mremap`, so `max_pieces` stands in for
/// the refusal (a refused piece changes nothing, exactly like a piece that
/// is never tried).
#[cfg(all(test, feature = "vm", target_os = "linux", not(miri)))]
mod tests {
    use super::RawVmVec;
    use crate::vm_vec::region::Backend as _;

    /// A vector of `u64` whose first element sits at byte `head` and that
    /// holds `len` elements, valued by their position.
    fn window(head: usize, len: usize) -> RawVmVec<u64> {
        let mut v = RawVmVec::<u64>::with_max_capacity((head / 8 + len) * 2).expect("reserve");
        for i in 0..(head / 8 + len) {
            v.push(i as u64).expect("room");
        }
        drop(v.drain_front(head / 8));
        v.check_invariants();
        assert_eq!(v.head_offset(), head);
        v
    }

    fn check_moved(v: &RawVmVec<u64>, head: usize, len: usize, page: usize) {
        v.check_invariants();
        assert_eq!(
            v.head_offset(),
            head % page,
            "first element in the first page"
        );
        let first = (head / 8) as u64;
        assert!(
            v.as_slice().iter().copied().eq(first..first + len as u64),
            "contents survive the move"
        );
        // Committed memory: the granules from 0 holding the window, no more.
        let g = v.granule();
        let end = (head % page + len * 8).div_ceil(g) * g;
        assert_eq!(v.committed_bytes(), end.min(v.reserved_bytes()));
    }

    /// Several pieces, cut off after `pieces`: the first ones are remapped,
    /// the rest copied behind them.
    fn partial(head: usize, len: usize, pieces: usize) {
        let mut v = window(head, len);
        let page = v.region.page();
        let shift = head / page * page;
        let live_pages = (head + len * 8).div_ceil(page) * page - shift;
        assert!(live_pages > pieces * shift, "the cut leaves a rest to copy");
        let r = v.rebase_remap(pieces);
        assert_eq!(r.shift, shift);
        assert_eq!(r.remapped, pieces * shift);
        // The copy starts where the remapped pages end (or at the window's
        // start if nothing was remapped) and runs to the window's end.
        let from = (shift + r.remapped).max(head);
        assert_eq!(r.copied, head + len * 8 - from);
        check_moved(&v, head, len, page);
        // The vector stays usable: push into the freed room, drain, rebase.
        let next = v.as_slice().last().copied().expect("not empty") + 1;
        v.push(next).expect("room after the rebase");
        drop(v.drain_front(len / 2));
        v.check_invariants();
        assert_eq!(v.as_slice().last(), Some(&next));
    }

    #[test]
    fn remap_cut_short_copies_the_rest() {
        let page = rustix::param::page_size();
        // A dead prefix of three pages and a bit, a live part of ten pages:
        // four pieces, two remapped.
        partial(3 * page + 40, 10 * page / 8, 2);
        // Chunk-sized pieces: 2 MiB and three pages dead, 5 MiB live.
        partial((2 << 20) + 3 * page + 16, (5 << 20) / 8, 1);
    }

    #[test]
    fn remap_refused_at_once_copies_everything() {
        let page = rustix::param::page_size();
        let head = 5 * page + 24;
        let len = 7 * page / 8;
        let mut v = window(head, len);
        let r = v.rebase_remap(0);
        assert_eq!((r.shift, r.remapped, r.copied), (5 * page, 0, len * 8));
        check_moved(&v, head, len, page);
        // With a released chunk at the front, the copy lands in memory that
        // the rebase had to commit again first.
        let far = (4 << 20) + head;
        let mut v = window(far, len);
        assert_eq!(
            v.committed_bytes(),
            2 << 20,
            "the front chunks are released"
        );
        let r = v.rebase_remap(0);
        assert_eq!(
            (r.shift, r.remapped, r.copied),
            (far / page * page, 0, len * 8)
        );
        check_moved(&v, far, len, page);
        // The same window remapped in full copies nothing.
        let mut w = window(head, len);
        let r = w.rebase_remap(usize::MAX);
        assert_eq!((r.shift, r.remapped, r.copied), (5 * page, 8 * page, 0));
        check_moved(&w, head, len, page);
    }
}
