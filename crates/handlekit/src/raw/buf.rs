//! `SlotBuf`: the one allocation behind a [`SlotStore`](super::SlotStore):
//! room for `capacity` payloads, followed by room for `capacity` state
//! words.
//!
//! Why one allocation rather than two `Vec`s: a table that grows by
//! doubling reallocates its buffer about log2(N) times, and an allocator
//! can often grow the block in place (the top of the heap, or `mremap` for
//! big blocks). With two buffers, at most one of them can be the block
//! that grows in place, and the other is copied every time: a `u64` table
//! filled from empty took about 1.4 ns per insert with two buffers against
//! 0.6 ns with one (100,000 inserts, glibc with the runner's fixed
//! thresholds). With one buffer, growing moves only the state words (4
//! bytes a slot) from the end of the old payload area to the end of the
//! new one.
//!
//! The buffer is allocated as a `Vec<MaybeUninit<Payload<T>>>` whose length
//! is always its capacity (uninitialized elements are valid values of
//! `MaybeUninit`), so `Vec`'s growth preserves every byte, and allocation
//! errors are `Vec`'s own. The state words fit in the trailing payload
//! units, since a payload (which holds at least a `u32` link) is a multiple
//! of 4 bytes in size and alignment.

use alloc::collections::TryReserveError;
use alloc::vec::Vec;
use core::marker::PhantomData;
use core::mem::{self, ManuallyDrop, MaybeUninit};
use core::ptr::{self, NonNull};

use super::slot::Payload;

/// One payload-sized unit of the allocation.
type Unit<T> = MaybeUninit<Payload<T>>;

/// Payloads and state words in one allocation. It knows nothing of what the
/// slots mean: the store says which payloads are values.
pub(crate) struct SlotBuf<T> {
    /// Start of the allocation and of the payload area: `units` units, from
    /// a `Vec<Unit<T>>` with length and capacity `units` that this buffer
    /// owns (dangling, and owning nothing, while `units == 0`). Payloads
    /// `0..len` are initialized (as the store's state words describe).
    payloads: NonNull<Payload<T>>,
    /// Start of the state words: `capacity` units into the same allocation
    /// (derived from `payloads`), room for `capacity` words. Words `0..len`
    /// are initialized.
    states: NonNull<u32>,
    /// Size of the allocation in units (the `Vec`'s capacity).
    units: usize,
    /// Slots the allocation holds: the largest count whose payloads and
    /// state words fit in `units` (`units_for(capacity) <= units`).
    capacity: usize,
    /// Slots in use. Invariant: `len <= capacity`.
    len: usize,
    _owns: PhantomData<Payload<T>>,
}

// SAFETY: `SlotBuf` owns its allocation as a `Vec<Payload<T>>` would, and
// hands out access to it only through `&self`/`&mut self`.
unsafe impl<T: Send> Send for SlotBuf<T> {}
// SAFETY: as for `Send`; `&SlotBuf` gives only shared access.
unsafe impl<T: Sync> Sync for SlotBuf<T> {}

impl<T> SlotBuf<T> {
    const PAYLOAD: usize = mem::size_of::<Payload<T>>();

    /// A buffer with no allocation.
    #[inline]
    pub(crate) const fn new() -> Self {
        // A payload holds a `u32`, so it is at least 4 bytes and aligned to
        // at least 4: state words can start at any unit boundary.
        const {
            assert!(mem::size_of::<Payload<T>>() >= 4 && mem::align_of::<Payload<T>>() >= 4);
        }
        SlotBuf {
            payloads: NonNull::dangling(),
            states: NonNull::dangling(),
            units: 0,
            capacity: 0,
            len: 0,
            _owns: PhantomData,
        }
    }

    /// Units needed for `slots` payloads and state words, if that fits in a
    /// `usize`.
    fn units_for(slots: usize) -> Option<usize> {
        let state_bytes = slots.checked_mul(4)?;
        slots.checked_add(state_bytes.div_ceil(Self::PAYLOAD))
    }

    /// The most slots `units` units hold.
    fn slots_in(units: usize) -> usize {
        // `units * PAYLOAD` bytes were allocated, so the product fits.
        let slots = units * Self::PAYLOAD / (Self::PAYLOAD + 4);
        debug_assert!(Self::units_for(slots).is_some_and(|needed| needed <= units));
        slots
    }

    /// Slots in use.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Slots the allocation holds.
    #[inline(always)]
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Sets the number of slots in use.
    ///
    /// # Safety
    ///
    /// `len <= capacity`, and the payloads and state words `0..len` are
    /// initialized.
    #[inline(always)]
    pub(crate) unsafe fn set_len(&mut self, len: usize) {
        debug_assert!(len <= self.capacity);
        self.len = len;
    }

    /// Start of the payloads, for reads and writes of single slots. Made
    /// without a reference to the array, so pointers from several calls
    /// may be used together.
    #[inline(always)]
    pub(crate) fn payloads_ptr(&self) -> *mut Payload<T> {
        self.payloads.as_ptr()
    }

    /// Start of the state words (see [`payloads_ptr`](Self::payloads_ptr)).
    #[inline(always)]
    pub(crate) fn states_ptr(&self) -> *mut u32 {
        self.states.as_ptr()
    }

    /// The state words in use.
    #[inline(always)]
    pub(crate) fn states(&self) -> &[u32] {
        // SAFETY: words `0..len` are initialized (the invariant on
        // `states`), and `&self` keeps them from being written.
        unsafe { core::slice::from_raw_parts(self.states.as_ptr(), self.len) }
    }

    /// The payloads in use.
    #[inline(always)]
    pub(crate) fn payloads(&self) -> &[Payload<T>] {
        // SAFETY: as in `states`.
        unsafe { core::slice::from_raw_parts(self.payloads.as_ptr(), self.len) }
    }

    /// The state words and payloads in use, the state words shared and the
    /// payloads unique.
    #[inline(always)]
    pub(crate) fn parts_mut(&mut self) -> (&[u32], &mut [Payload<T>]) {
        // The two areas do not overlap (`states` starts `capacity` units
        // after `payloads`).
        // SAFETY: both runs are initialized (the invariants on `states` and
        // `payloads`), and `&mut self` makes the payloads' borrow unique.
        unsafe {
            (
                core::slice::from_raw_parts(self.states.as_ptr(), self.len),
                core::slice::from_raw_parts_mut(self.payloads.as_ptr(), self.len),
            )
        }
    }

    /// The state words in use, mutably.
    #[inline(always)]
    pub(crate) fn states_mut(&mut self) -> &mut [u32] {
        // SAFETY: as in `states`, through the unique borrow.
        unsafe { core::slice::from_raw_parts_mut(self.states.as_ptr(), self.len) }
    }

    /// Makes room for at least `additional` more slots, growing
    /// geometrically as `Vec::reserve` does.
    ///
    /// # Panics
    ///
    /// If the size overflows (as `Vec::reserve`); an allocation failure
    /// goes to the global allocation error handler.
    pub(crate) fn reserve(&mut self, additional: usize) {
        if let Some(extra) = self.extra_units(additional) {
            self.regrow(|vec| {
                vec.reserve(extra);
                Ok(())
            })
            .unwrap_or_else(|_: TryReserveError| unreachable!());
        }
    }

    /// Makes room for exactly `additional` more slots (up to the
    /// allocator's rounding), as `Vec::reserve_exact`.
    pub(crate) fn reserve_exact(&mut self, additional: usize) {
        if let Some(extra) = self.extra_units(additional) {
            self.regrow(|vec| {
                vec.reserve_exact(extra);
                Ok(())
            })
            .unwrap_or_else(|_: TryReserveError| unreachable!());
        }
    }

    /// As [`reserve`](Self::reserve), but returns an error instead of
    /// panicking or aborting.
    pub(crate) fn try_reserve(&mut self, additional: usize) -> Result<(), TryReserveError> {
        match self.extra_units(additional) {
            Some(extra) => self.regrow(|vec| vec.try_reserve(extra)),
            None => Ok(()),
        }
    }

    /// Units to add so that `additional` more slots fit, or `None` if they
    /// fit already. A size that overflows asks for `usize::MAX` units, so
    /// `Vec` reports the overflow.
    fn extra_units(&self, additional: usize) -> Option<usize> {
        let wanted = self.len.saturating_add(additional);
        if wanted <= self.capacity {
            return None;
        }
        Some(Self::units_for(wanted).map_or(usize::MAX, |units| units - self.units))
    }

    /// Shrinks the allocation to the slots in use (or as close as the
    /// allocator allows).
    pub(crate) fn shrink_to_fit(&mut self) {
        let wanted = self.len;
        if wanted == self.capacity {
            return;
        }
        // Both fit: `units_for(len) <= units_for(capacity) <= units`.
        let units = Self::units_for(wanted).unwrap_or(self.units);
        // The state words move down first, to where `wanted` slots put
        // them, so that the truncated allocation keeps them.
        self.move_states(wanted);
        let result = self.regrow(|vec| {
            vec.truncate(units);
            vec.shrink_to_fit();
            Ok(())
        });
        debug_assert!(result.is_ok());
    }

    /// Moves the state words to where a capacity of `capacity` slots puts
    /// them, and records that capacity.
    fn move_states(&mut self, capacity: usize) {
        debug_assert!(Self::units_for(capacity).is_some_and(|units| units <= self.units));
        debug_assert!(self.len <= capacity);
        if self.units == 0 {
            return;
        }
        // SAFETY: `capacity` units plus `len` state words lie inside the
        // allocation (the first assertion), so does the current area (the
        // invariant on `states`), and `ptr::copy` allows them to overlap.
        unsafe {
            let to = self.payloads.as_ptr().add(capacity).cast::<u32>();
            ptr::copy(self.states.as_ptr(), to, self.len);
            self.states = NonNull::new_unchecked(to);
        }
        self.capacity = capacity;
    }

    /// Lends the allocation to `change` as its `Vec`, then takes it back
    /// with the state words moved to the end of the new payload area. If
    /// `change` fails or panics, the buffer is as it was.
    fn regrow(
        &mut self,
        change: impl FnOnce(&mut Vec<Unit<T>>) -> Result<(), TryReserveError>,
    ) -> Result<(), TryReserveError> {
        // `ManuallyDrop`: if `change` panics, the allocation stays owned
        // by `self` (a `Vec` that fails to grow keeps its block).
        // SAFETY: `payloads` and `units` are the parts of a `Vec<Unit<T>>`
        // of length and capacity `units` (the invariant on `payloads`;
        // for `units == 0`, a dangling pointer and no allocation, as
        // `Vec::new` has).
        let mut vec = ManuallyDrop::new(unsafe {
            Vec::from_raw_parts(
                self.payloads.as_ptr().cast::<Unit<T>>(),
                self.units,
                self.units,
            )
        });
        let old_capacity = self.capacity;
        change(&mut vec)?;
        let units = vec.capacity();
        // SAFETY: units are `MaybeUninit`, so every one up to the capacity
        // is a valid value.
        unsafe { vec.set_len(units) };
        // SAFETY: a `Vec`'s pointer is never null.
        self.payloads = unsafe { NonNull::new_unchecked(vec.as_mut_ptr().cast::<Payload<T>>()) };
        self.units = units;
        if units == 0 {
            self.states = NonNull::dangling();
            self.capacity = 0;
            return Ok(());
        }
        // The allocation kept its bytes, so the state words sit
        // `old_capacity` units in; move them to the new capacity's place.
        // SAFETY: the old state area lies inside the new allocation:
        // growing keeps all old units, and shrinking came after
        // `move_states(len)` put the words inside the kept units.
        self.states = unsafe {
            NonNull::new_unchecked(
                self.payloads
                    .as_ptr()
                    .add(old_capacity.min(units))
                    .cast::<u32>(),
            )
        };
        self.move_states(Self::slots_in(units));
        Ok(())
    }
}

impl<T> Drop for SlotBuf<T> {
    fn drop(&mut self) {
        // The store drops the values; the units have no drop glue.
        // SAFETY: as in `regrow`; the buffer is not used again.
        drop(unsafe {
            Vec::from_raw_parts(
                self.payloads.as_ptr().cast::<Unit<T>>(),
                self.units,
                self.units,
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::SlotBuf;
    use crate::raw::slot::Payload;

    fn fill<T>(buf: &mut SlotBuf<T>, slots: usize) {
        for index in buf.len()..slots {
            if index == buf.capacity() {
                buf.reserve(1);
            }
            // SAFETY: `index < capacity`, and the slot is written before
            // `len` covers it.
            unsafe {
                buf.states_ptr()
                    .add(index)
                    .write(index as u32 | 0x8000_0000);
                buf.payloads_ptr()
                    .add(index)
                    .write(Payload::vacant(!(index as u32)));
                buf.set_len(index + 1);
            }
        }
    }

    fn check<T>(buf: &SlotBuf<T>) {
        assert!(buf.len() <= buf.capacity());
        for (index, &state) in buf.states().iter().enumerate() {
            assert_eq!(state, index as u32 | 0x8000_0000);
            // SAFETY: every payload was written as a vacant link.
            let link = unsafe { Payload::next_free_ptr(buf.payloads_ptr().add(index)).read() };
            assert_eq!(link, !(index as u32));
        }
    }

    #[test]
    fn growth_and_shrinking_keep_both_areas() {
        let mut buf = SlotBuf::<u64>::new();
        for slots in [1, 2, 3, 10, 64, 65, 200, 1000] {
            fill(&mut buf, slots);
            check(&buf);
        }
        buf.reserve_exact(5000);
        assert!(buf.capacity() >= 6000);
        check(&buf);
        buf.shrink_to_fit();
        assert!(buf.capacity() >= 1000 && buf.capacity() < 6000);
        check(&buf);
        fill(&mut buf, 1500);
        check(&buf);
    }

    #[test]
    fn payload_sizes_from_4_to_large() {
        let mut small = SlotBuf::<u8>::new();
        fill(&mut small, 300);
        check(&small);
        small.shrink_to_fit();
        check(&small);
        let mut large = SlotBuf::<[u64; 9]>::new();
        fill(&mut large, 300);
        check(&large);
        large.shrink_to_fit();
        check(&large);
    }

    #[test]
    fn shrinking_an_empty_buffer_frees_it() {
        let mut buf = SlotBuf::<u32>::new();
        buf.reserve(100);
        assert!(buf.capacity() >= 100);
        buf.shrink_to_fit();
        assert_eq!(buf.capacity(), 0);
        fill(&mut buf, 3);
        check(&buf);
    }

    #[test]
    fn overflowing_sizes_are_errors() {
        let mut buf = SlotBuf::<u64>::new();
        fill(&mut buf, 10);
        assert!(buf.try_reserve(usize::MAX).is_err());
        assert!(buf.try_reserve(usize::MAX / 8).is_err());
        check(&buf);
    }
}
