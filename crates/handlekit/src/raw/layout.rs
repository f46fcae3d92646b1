//! Where the stable containers keep their slots, and the accesses that
//! iterate them.
//!
//! [`Split`] keeps a run's state words in one array and its payloads in
//! another. A lookup touches two cache lines (the state word and the
//! payload, loaded side by side), but a pass reads the state words 64 at a
//! time and only the live payloads, and no padding sits between a state
//! word and its value (12 bytes per `u64` slot, against 16 side by side).
//! `Hive` uses it, as the slot store of `IdTable` does (see `buf.rs`);
//! `Pool` keeps its state words in one array over all its blocks (see
//! `flat.rs`). `Pool` once kept its slots side by side, for one cache line
//! per lookup; its keyed passes then took 2 to 25 times as long as
//! `IdTable`'s, checking every slot's state word, while its writes
//! measured the same either way.
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

/// The storage of a run of slots, as raw pointers: a layout is `Copy`, and
/// owns nothing by itself (its `Block` frees it).
///
/// # Safety
///
/// For a layout made by `allocate(len)` and not yet deallocated, every
/// `start`, and every `i < len`, the bases `flat(start)` must lead from
/// flat index `start + i` to properly aligned memory for a `u32` and a
/// `Payload<T>`, inside the allocation, disjoint from each other and from
/// those of every other index, with the provenance of the whole
/// allocation (derived from the pointer the allocation returned, with no
/// reference in between).
pub unsafe trait SlotLayout<T>: Copy {
    /// Heap bytes one slot takes.
    const SLOT_BYTES: usize;

    /// Uninitialized storage for `len` slots.
    fn allocate(len: usize) -> Self;

    /// Frees the storage. Drops no value.
    ///
    /// # Safety
    ///
    /// `self` was made by `allocate(len)` with this `len`, is freed once,
    /// and neither it nor any pointer derived from it is used afterwards.
    unsafe fn deallocate(self, len: usize);

    /// The storage addressed by flat index, for a run of slots whose slot
    /// 0 has flat index `start`: flat index `start + i` reaches slot `i`.
    fn flat(self, start: usize) -> FlatBases<T>;
}

/// A run of slots addressed by flat index (see [`SlotLayout::flat`]): the
/// state word of flat index `index` is at `states.wrapping_add(index)` and
/// its payload at `payloads.wrapping_add(index)`. The pointers themselves
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

    /// The storage these bases were made from, by `storage.flat(start)`.
    ///
    /// # Safety
    ///
    /// `self` is `storage.flat(start)` for a `Split` storage and this very
    /// `start`.
    #[inline]
    pub(crate) unsafe fn storage(self, start: usize) -> Split<T> {
        let (states, payloads) = (
            self.states.wrapping_add(start),
            self.payloads.wrapping_add(start),
        );
        // SAFETY: moved back by `start` again, these are the storage's own
        // pointers (the caller's guarantee), which are not null.
        unsafe {
            Split {
                states: NonNull::new_unchecked(states),
                payloads: NonNull::new_unchecked(payloads),
            }
        }
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

/// Grows an allocation made by [`allocate_uninit`] from `len` to `new_len`
/// elements in place if the allocator can (for a large one, `realloc` remaps
/// its pages rather than copy them and touch fresh ones). The first `len`
/// elements keep their contents; the rest are uninitialized. The result
/// replaces `first`, which must not be used again.
///
/// # Safety
///
/// `first` came from `allocate_uninit::<E>(len)` (or from this function
/// with that length), with `0 < len < new_len`.
pub(crate) unsafe fn grow_uninit<E>(first: NonNull<E>, len: usize, new_len: usize) -> NonNull<E> {
    debug_assert!(0 < len && len < new_len);
    // A boxed slice of `len` elements was allocated with this layout.
    let Ok(old) = Layout::array::<E>(len) else {
        unreachable!("a live allocation of {len} elements has a layout")
    };
    let Ok(new) = Layout::array::<E>(new_len) else {
        panic!("{new_len} elements do not fit the address space")
    };
    if new.size() == 0 {
        return first;
    }
    // `first` was allocated by the global allocator with `old` (the
    // caller's guarantee); `Layout::array` checked that `new` fits `isize`.
    // SAFETY: so this may realloc it, to a size that is not zero.
    let grown = unsafe { alloc::alloc::realloc(first.as_ptr().cast::<u8>(), old, new.size()) };
    NonNull::new(grown.cast::<E>()).unwrap_or_else(|| alloc::alloc::handle_alloc_error(new))
}

/// `len` uninitialized `E`s, as the raw pointer to the first.
pub(crate) fn allocate_uninit<E>(len: usize) -> NonNull<E> {
    let raw = Box::into_raw(Box::<[MaybeUninit<E>]>::new_uninit_slice(len));
    // `Box::into_raw` never returns null; the cast keeps the provenance.
    NonNull::new(raw.cast::<E>()).unwrap_or(NonNull::dangling())
}

/// State words and payloads in two arrays: `[u32]` and `[Payload<T>]`.
pub struct Split<T> {
    /// The first of `len` state words, from `allocate_uninit`.
    states: NonNull<u32>,
    /// The first of `len` payloads, from `allocate_uninit`.
    payloads: NonNull<Payload<T>>,
}

impl<T> Clone for Split<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Split<T> {}

// SAFETY: slot `i`'s parts are element `i` of two separate allocations of
// `len` elements each, reached by offsets from the allocations' pointers.
unsafe impl<T> SlotLayout<T> for Split<T> {
    const SLOT_BYTES: usize = mem::size_of::<u32>() + mem::size_of::<Payload<T>>();

    #[inline]
    fn allocate(len: usize) -> Self {
        Split {
            states: allocate_uninit(len),
            payloads: allocate_uninit(len),
        }
    }

    #[inline]
    unsafe fn deallocate(self, len: usize) {
        // SAFETY: the caller's guarantee: both came from `allocate(len)`.
        unsafe {
            free_uninit(self.states, len);
            free_uninit(self.payloads, len);
        }
    }

    /// The storage's first state word and first payload, each moved back
    /// by `start` elements, wrapping. The results are not themselves in the
    /// allocations; they keep the allocations' provenance, so the pointers
    /// made from them for flat indices `start..start + len` are.
    #[inline]
    fn flat(self, start: usize) -> FlatBases<T> {
        FlatBases {
            states: self.states.as_ptr().wrapping_sub(start),
            payloads: self.payloads.as_ptr().wrapping_sub(start),
        }
    }
}
