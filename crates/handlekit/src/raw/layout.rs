//! Where the stable containers keep their slots, and the accesses that
//! iterate them.
//!
//! [`Split`] keeps a run's state words in one array and its payloads in
//! another. A lookup touches two cache lines (the state word and the
//! payload, loaded side by side), but a pass reads the state words 64 at a
//! time and only the live payloads, and no padding sits between a state
//! word and its value (12 bytes per `u64` slot, against 16 side by side).
//! `Hive` and `Pool` use it, as the slot store of `IdTable` does (see
//! `buf.rs`). `Pool` once kept its slots side by side, for one cache line
//! per lookup; its keyed passes then took 2 to 25 times as long as
//! `IdTable`'s, checking every slot's state word, while its writes
//! measured the same either way.
//!
//! A slot is reached by raw pointers derived from the allocation's own
//! pointer, never through a reference to the whole array, so a pointer to
//! one value stays valid whatever is done to other slots (see `block.rs`).

use alloc::boxed::Box;
use core::marker::PhantomData;
use core::mem::{self, MaybeUninit};
use core::ptr::{self, NonNull};

use super::slot::{Payload, VACANT};
use super::store::SlotAccess;

/// The storage of a run of slots, as raw pointers: a layout is `Copy`, and
/// owns nothing by itself (its `Block` frees it).
///
/// # Safety
///
/// For a layout made by `allocate(len)` and not yet deallocated, and every
/// `i < len`, `state(i)` and `payload(i)` must point to properly aligned
/// memory for a `u32` and a `Payload<T>`, inside the allocation, disjoint
/// from each other and from those of every other index, with the
/// provenance of the whole allocation (derived from the pointer the
/// allocation returned, with no reference in between).
pub(crate) unsafe trait SlotLayout<T>: Copy {
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

    /// The state word of slot `i`.
    ///
    /// # Safety
    ///
    /// `i` is below the `len` the storage was allocated with.
    unsafe fn state(self, i: usize) -> *mut u32;

    /// The payload of slot `i`.
    ///
    /// # Safety
    ///
    /// `i` is below the `len` the storage was allocated with.
    unsafe fn payload(self, i: usize) -> *mut Payload<T>;
}

/// Frees a `Box<[MaybeUninit<E>]>` of `len` elements made by
/// [`allocate_uninit`].
///
/// # Safety
///
/// `first` came from `allocate_uninit::<E>(len)` and is freed once.
unsafe fn free_uninit<E>(first: NonNull<E>, len: usize) {
    let slice = ptr::slice_from_raw_parts_mut(first.as_ptr().cast::<MaybeUninit<E>>(), len);
    // `MaybeUninit` drops nothing.
    // SAFETY: the caller guarantees `first` and `len` are those of a box
    // `allocate_uninit` leaked, freed once.
    drop(unsafe { Box::from_raw(slice) });
}

/// `len` uninitialized `E`s, as the raw pointer to the first.
fn allocate_uninit<E>(len: usize) -> NonNull<E> {
    let raw = Box::into_raw(Box::<[MaybeUninit<E>]>::new_uninit_slice(len));
    // `Box::into_raw` never returns null; the cast keeps the provenance.
    NonNull::new(raw.cast::<E>()).unwrap_or(NonNull::dangling())
}

/// State words and payloads in two arrays: `[u32]` and `[Payload<T>]`.
pub(crate) struct Split<T> {
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

impl<T> Split<T> {
    /// The storage's first state word and first payload, each moved back
    /// by `start` elements, wrapping: for a block that holds the flat
    /// indices from `start`, flat index `start + i` has its state word at
    /// `states.wrapping_add(start + i)` and its payload likewise. The
    /// results are not themselves in the allocations; they keep the
    /// allocations' provenance, so those pointers are (for `i < len`).
    #[inline]
    pub(crate) fn flat_bases(self, start: usize) -> (*mut u32, *mut Payload<T>) {
        (
            self.states.as_ptr().wrapping_sub(start),
            self.payloads.as_ptr().wrapping_sub(start),
        )
    }
}

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

    #[inline]
    unsafe fn state(self, i: usize) -> *mut u32 {
        // SAFETY: `i < len` (the caller's guarantee).
        unsafe { self.states.as_ptr().add(i) }
    }

    #[inline]
    unsafe fn payload(self, i: usize) -> *mut Payload<T> {
        // SAFETY: `i < len` (the caller's guarantee).
        unsafe { self.payloads.as_ptr().add(i) }
    }
}

/// Access to the first `len` slots of a layout for `'a`, handing out
/// values as `R`: `&'a T` ([`LayoutShared`]) or `&'a mut T`
/// ([`LayoutExclusive`]). `R` also gives the access its auto traits: it
/// may cross threads exactly when an `R` may.
pub(crate) struct LayoutAccess<'a, T, L, R> {
    /// Invariant: the first `len` slots are initialized; for `&'a T`,
    /// nothing writes to them for `'a`; for `&'a mut T`, nothing else
    /// reaches their values for `'a`.
    layout: L,
    len: usize,
    _values: PhantomData<(&'a T, R)>,
}

/// Shared access to a layout's slots.
pub(crate) type LayoutShared<'a, T, L> = LayoutAccess<'a, T, L, &'a T>;
/// Exclusive access to a layout's slots. Deliberately not `Clone`: two
/// copies could hand out the same `&mut T`.
pub(crate) type LayoutExclusive<'a, T, L> = LayoutAccess<'a, T, L, &'a mut T>;

impl<T, L: Copy> Clone for LayoutShared<'_, T, L> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, L: Copy> Copy for LayoutShared<'_, T, L> {}

// SAFETY: the access hands out `R`s (to distinct values, for `&mut T`), so
// it may be sent wherever an `R` may; the raw pointers in `L` are only a
// way to reach those values.
unsafe impl<T, L, R: Send> Send for LayoutAccess<'_, T, L, R> {}
// SAFETY: shared access to the access itself reaches no value; `R: Sync`
// holds for both `&T` and `&mut T` exactly when `T: Sync`.
unsafe impl<T, L, R: Sync> Sync for LayoutAccess<'_, T, L, R> {}

impl<T, L: SlotLayout<T>, R> LayoutAccess<'_, T, L, R> {
    /// Access to the first `len` slots of `layout`.
    ///
    /// # Safety
    ///
    /// Those slots must be initialized and, for the access's lifetime,
    /// not written (shared access) or not reached by anything else
    /// (exclusive access).
    #[inline]
    pub(crate) unsafe fn new(layout: L, len: usize) -> Self {
        LayoutAccess {
            layout,
            len,
            _values: PhantomData,
        }
    }

    /// The generation and a pointer to the value of slot `index`.
    ///
    /// # Safety
    ///
    /// `index` is in bounds and occupied.
    #[inline]
    unsafe fn parts(&self, index: usize) -> (u32, *mut T) {
        debug_assert!(index < self.len);
        // The slots are initialized (invariant on `layout`), and an
        // occupied slot's state word is its generation, with no bit to mask.
        // SAFETY: the caller guarantees `index` is in bounds and occupied.
        unsafe {
            let generation = *self.layout.state(index);
            debug_assert!(generation & VACANT == 0);
            (generation, Payload::value_ptr(self.layout.payload(index)))
        }
    }
}

// SAFETY: shared references to occupied slots' values, which nothing
// writes for `'a`; any number may coexist.
unsafe impl<'a, T: 'a, L: SlotLayout<T>> SlotAccess<'a> for LayoutShared<'a, T, L> {
    type Value = &'a T;

    #[inline]
    unsafe fn item(&self, index: usize) -> (u32, &'a T) {
        // SAFETY: the caller guarantees `index` is in bounds and occupied,
        // so the value is initialized.
        let (generation, value) = unsafe { self.parts(index) };
        // SAFETY: as above; nothing writes to it for `'a`.
        (generation, unsafe { &*value })
    }
}

// SAFETY: each index is yielded at most once (the trait's contract), so the
// `&mut T` handed out never alias; they are derived from the raw pointers
// without a reference to a whole array, so earlier ones stay valid.
unsafe impl<'a, T: 'a, L: SlotLayout<T>> SlotAccess<'a> for LayoutExclusive<'a, T, L> {
    type Value = &'a mut T;

    #[inline]
    unsafe fn item(&self, index: usize) -> (u32, &'a mut T) {
        // SAFETY: the caller guarantees `index` is in bounds, occupied and
        // not yielded before.
        let (generation, value) = unsafe { self.parts(index) };
        // SAFETY: as above; nothing else reaches the value for `'a`.
        (generation, unsafe { &mut *value })
    }
}
