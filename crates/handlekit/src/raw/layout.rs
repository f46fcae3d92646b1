//! Where the stable containers keep their slots, and the accesses that
//! iterate them.
//!
//! `Pool` and `Hive` keep their state words in one array over all their
//! flat indices ([`StateWords`]) and their payloads in blocks that never
//! move, reached through [`FlatBases`]. A lookup touches two cache lines
//! (the state word and the payload), but a pass reads the state words (or
//! a hive's vacancy bits) 64 at a time and only the live payloads, and no
//! padding sits between a state word and its value (12 bytes per `u64`
//! slot, against 16 side by side). `Pool` once kept its slots side by
//! side, for one cache line per lookup; its keyed passes then took 2 to 25
//! times as long as `IdTable`'s, checking every slot's state word, while
//! its writes measured the same either way.
//!
//! A slot is reached by raw pointers derived from the allocation's own
//! pointer, never through a reference to the whole array, so a pointer to
//! one value stays valid whatever is done to other slots (see `block.rs`).

use alloc::boxed::Box;
use core::alloc::Layout;
use core::mem::{self, MaybeUninit};
use core::ptr::{self, NonNull};

use super::cursor::SlotPtrs;
use super::slot::Payload;
use crate::CapacityError;

/// Heap bytes one slot of a `Pool` or a `Hive` takes: its state word and
/// its payload, in two arrays.
pub(crate) const fn slot_bytes<T>() -> usize {
    mem::size_of::<u32>() + mem::size_of::<Payload<T>>()
}

/// A run of slots addressed by flat index: the state word of flat index
/// `index` is at `states.wrapping_add(index)` and its payload at
/// `payloads.wrapping_add(index)`. The pointers themselves
/// may lie outside the storage (they are moved back by the run's first
/// flat index); they keep its provenance, so those of the run's indices
/// are valid. Two words, not three: an iterator keeps one of these per end
/// in registers, beside its run and the loop's own values.
pub struct FlatBases<T> {
    states: *mut u32,
    payloads: *mut Payload<T>,
}

impl<T> Clone for FlatBases<T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for FlatBases<T> {}

impl<T> FlatBases<T> {
    /// Bases that reach nothing: for a run that holds no slot.
    pub(crate) const NONE: Self = FlatBases {
        states: ptr::null_mut(),
        payloads: ptr::null_mut(),
    };

    /// Bases from their two flat pointers: `states.wrapping_add(index)`
    /// and `payloads.wrapping_add(index)` must lead to the state word and
    /// payload of every flat index of the run they are handed out for.
    #[inline(always)]
    pub(crate) fn new(states: *mut u32, payloads: *mut Payload<T>) -> Self {
        FlatBases { states, payloads }
    }

    /// Where the state word of flat index `index` is. Only a pointer: it
    /// may be read or written only for an index of the run (see the type).
    #[inline(always)]
    pub(crate) fn state_ptr(self, index: usize) -> *mut u32 {
        self.states.wrapping_add(index)
    }

    /// Where the payload of flat index `index` is (see
    /// [`state_ptr`](Self::state_ptr)).
    #[inline(always)]
    pub(crate) fn payload_ptr(self, index: usize) -> *mut Payload<T> {
        self.payloads.wrapping_add(index)
    }
}

// SAFETY: the walks over blocks hand out only the flat indices of a run of
// initialized slots with that run's bases, and for those the bases lead
// back into the storage (see `flat`).
unsafe impl<T> SlotPtrs<T> for FlatBases<T> {
    type Unit = Payload<T>;
    const INLINE_UNIT_FOLD: bool = false;

    #[inline(always)]
    unsafe fn unit_at(self, index: usize) -> NonNull<Payload<T>> {
        // SAFETY: the index is the run's, or one past its last (the
        // caller's guarantee): in the storage or just past it, so not null.
        unsafe { NonNull::new_unchecked(self.payloads.wrapping_add(index)) }
    }

    #[inline(always)]
    unsafe fn index_of(self, unit: NonNull<Payload<T>>) -> usize {
        // By address: the bases may lie outside the storage, where
        // `offset_from` would not be defined.
        unit.as_ptr().addr().wrapping_sub(self.payloads.addr()) / mem::size_of::<Payload<T>>()
    }

    #[inline(always)]
    unsafe fn state_of(self, _: NonNull<Payload<T>>, index: usize) -> *const u32 {
        // SAFETY: `index` is an index of the run (the caller's guarantee).
        unsafe { self.state_at(index) }
    }

    #[inline(always)]
    unsafe fn payload_of(self, unit: NonNull<Payload<T>>) -> *mut Payload<T> {
        // The payload is the unit.
        unit.as_ptr()
    }

    #[inline(always)]
    unsafe fn state_at(self, index: usize) -> *const u32 {
        // No `assert_unchecked(!state.is_null())` here: the assumption kept
        // the computed address alive as a value of its own, so a `for`
        // loop over a `Pool` with keys computed it in two instructions
        // instead of folding it into its load (10 instructions an item,
        // not 8). The item's value pointer is said not null where the item
        // is made.
        self.states.wrapping_add(index)
    }

    #[inline(always)]
    unsafe fn payload_at(self, index: usize) -> *mut Payload<T> {
        // No assumption either (see `state_at`): where an item is made,
        // its value pointer is said not null.
        self.payloads.wrapping_add(index)
    }
}

/// Frees a `Box<[MaybeUninit<E>]>` of `len` elements made by
/// [`allocate_uninit`].
///
/// # Safety
///
/// `first` came from `allocate_uninit::<E>(len)` and is freed once.
pub(crate) unsafe fn free_uninit<E>(first: NonNull<E>, len: usize) {
    let slice = ptr::slice_from_raw_parts_mut(first.as_ptr().cast::<MaybeUninit<E>>(), len);
    // `MaybeUninit` drops nothing.
    // SAFETY: the caller guarantees `first` and `len` are those of a box
    // `allocate_uninit` leaked, freed once.
    drop(unsafe { Box::from_raw(slice) });
}

/// `len` uninitialized `E`s, as the raw pointer to the first.
pub(crate) fn allocate_uninit<E>(len: usize) -> NonNull<E> {
    let raw = Box::into_raw(Box::<[MaybeUninit<E>]>::new_uninit_slice(len));
    // `Box::into_raw` never returns null; the cast keeps the provenance.
    NonNull::new(raw.cast::<E>()).unwrap_or(NonNull::dangling())
}

/// One array of state words over the flat indices `0..capacity()`, the
/// state array of `Pool` (`flat.rs`) and of `Hive` (`hive.rs`): a lookup
/// by key finds a slot's state word at `as_ptr() + index`, with no
/// directory load before the generation check. It grows by `realloc`
/// (doubling, or exactly, as its owner asks), in place where the allocator
/// can, and owns only memory: which words are
/// initialized is its owner's invariant, and so is refreshing every
/// pointer into it after it moved.
pub(crate) struct StateWords {
    /// `cap` words from the global allocator, with the layout of `[u32;
    /// cap]` (dangling while `cap` is 0). Invariant: replaced only by
    /// `try_grow_to`, freed only by `Drop`; no reference to the whole array is
    /// ever made, only to single words (so a pointer to one word stays
    /// valid while others are written).
    first: NonNull<u32>,
    /// The number of words allocated.
    cap: usize,
}

// SAFETY: the array holds plain `u32`s, owned as by a `Vec<u32>`.
unsafe impl Send for StateWords {}
// SAFETY: as above; `&self` hands out only a raw pointer.
unsafe impl Sync for StateWords {}

impl StateWords {
    /// No words; allocates nothing.
    pub(crate) const fn new() -> Self {
        StateWords {
            first: NonNull::dangling(),
            cap: 0,
        }
    }

    /// The first word, with the provenance of the whole array: word
    /// `index` is at `as_ptr().wrapping_add(index)` for `index <
    /// capacity()`. Valid until the array next grows.
    #[inline(always)]
    pub(crate) fn as_ptr(&self) -> *mut u32 {
        self.first.as_ptr()
    }

    /// Words allocated.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// Makes the array at least `needed` words long: twice as long as it
    /// was, or `needed` if that is more, so that growing a word at a time
    /// copies each word O(1) times. Returns whether it moved (then every
    /// pointer into it must be made again from [`as_ptr`](Self::as_ptr)).
    /// Running out of memory is handled as by `Vec::reserve`.
    #[inline]
    pub(crate) fn reserve(&mut self, needed: usize) -> bool {
        if needed <= self.cap {
            return false;
        }
        self.grow_or_abort(needed.max(self.cap.saturating_mul(2)));
        true
    }

    /// Makes the array at least `needed` words long, exactly; returns
    /// whether it moved, as [`reserve`](Self::reserve).
    pub(crate) fn reserve_exact(&mut self, needed: usize) -> bool {
        if needed <= self.cap {
            return false;
        }
        self.grow_or_abort(needed);
        true
    }

    /// [`try_grow_to`](Self::try_grow_to), handling a failure as
    /// `Vec::reserve` does.
    #[cold]
    fn grow_or_abort(&mut self, cap: usize) {
        if let Err(layout) = self.try_grow_to(cap) {
            match layout {
                Some(layout) => alloc::alloc::handle_alloc_error(layout),
                None => panic!("{cap} state words do not fit the address space"),
            }
        }
    }

    /// Makes the array at least `needed` words long, exactly, or fails
    /// (leaving it as it was) if the allocator cannot. On success, returns
    /// whether it moved, as [`reserve`](Self::reserve).
    pub(crate) fn try_reserve_exact(&mut self, needed: usize) -> Result<bool, CapacityError> {
        if needed <= self.cap {
            return Ok(false);
        }
        self.try_grow_to(needed)
            .map(|()| true)
            .map_err(|_| CapacityError::alloc())
    }

    /// Moves the words to an array of `cap` words, more than before,
    /// keeping their contents, or fails with the layout the allocator
    /// refused (`None` if `cap` words do not fit the address space). Grown
    /// in place where the allocator can (copying the words and faulting in
    /// a fresh array at every doubling made a growing pool's inserts take
    /// half again as long at 100k).
    #[cold]
    fn try_grow_to(&mut self, cap: usize) -> Result<(), Option<Layout>> {
        debug_assert!(cap > self.cap);
        let new = Layout::array::<u32>(cap).map_err(|_| None)?;
        let grown = if self.cap == 0 {
            // SAFETY: `new` is not zero-sized (`cap > 0`).
            unsafe { alloc::alloc::alloc(new) }
        } else {
            // The array was allocated with this layout (invariant on
            // `first`), and `Layout::array` checked that `new` fits `isize`.
            // SAFETY: so it may be reallocated, to a size that is not zero.
            unsafe {
                let old = Layout::array::<u32>(self.cap).unwrap_unchecked();
                alloc::alloc::realloc(self.first.as_ptr().cast::<u8>(), old, new.size())
            }
        };
        self.first = NonNull::new(grown.cast::<u32>()).ok_or(Some(new))?;
        self.cap = cap;
        Ok(())
    }

    /// Heap bytes.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.cap * mem::size_of::<u32>()
    }
}

impl Drop for StateWords {
    fn drop(&mut self) {
        if self.cap != 0 {
            // SAFETY: the array was allocated with this layout (invariant on
            // `first`), and is freed once, here.
            unsafe {
                let layout = Layout::array::<u32>(self.cap).unwrap_unchecked();
                alloc::alloc::dealloc(self.first.as_ptr().cast::<u8>(), layout);
            }
        }
    }
}
