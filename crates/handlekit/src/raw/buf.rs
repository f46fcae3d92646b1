//! `SlotBuf`: the one allocation behind a [`SlotStore`](super::SlotStore),
//! in one of two layouts ([`BufLayout`]):
//!
//! - [`SplitLayout`]: room for `capacity` payloads, followed by room for
//!   `capacity` state words. A pass reads the state words 64 at a time
//!   (`StateScan`) and only the live payloads; a lookup reads a state word
//!   and a payload from two places. `IdTable`, `SecondaryMap` and
//!   `IndexLists` use it: their passes are among their goals.
//! - [`InterleavedLayout`]: `capacity` [`Slot`]s, each state word beside
//!   its payload, as `Pool`'s blocks keep them. A lookup reads one slot
//!   (one cache line, one page); a pass reads every slot. `PackedTable`'s
//!   sparse side uses it: it is looked up on every access and never
//!   iterated for values (the dense array is).
//!
//! Everything else (growth, the store's policy, the arena's free list) is
//! written once for both: the layout only says where slot `i`'s state word
//! and payload are ([`BufPtrs`]), how many units a capacity takes, and how
//! a pass walks the occupied slots.
//!
//! Why one allocation rather than two `Vec`s for the split layout: a table
//! that grows by doubling reallocates its buffer about log2(N) times, and
//! an allocator can often grow the block in place (the top of the heap, or
//! `mremap` for big blocks). With two buffers, at most one of them can be
//! the block that grows in place, and the other is copied every time: a
//! `u64` table filled from empty took about 1.4 ns per insert with two
//! buffers against 0.6 ns with one (100,000 inserts, glibc with the
//! runner's fixed thresholds). With one buffer, growing moves only the
//! state words (4 bytes a slot) from the end of the old payload area to
//! the end of the new one.
//!
//! The buffer is allocated as a `Vec<MaybeUninit<Unit>>` (a payload for
//! the split layout, a whole slot for the interleaved one) whose length is
//! always its capacity (uninitialized elements are valid values of
//! `MaybeUninit`), so `Vec`'s growth preserves every byte, and allocation
//! errors are `Vec`'s own. In the split layout the state words fit in the
//! trailing payload units, since a payload (which holds at least a `u32`
//! link) is a multiple of 4 bytes in size and alignment.

use alloc::collections::TryReserveError;
use alloc::vec::Vec;
use core::marker::PhantomData;
use core::mem::{self, ManuallyDrop, MaybeUninit};
use core::ptr::{self, NonNull};

#[cfg(any(test, feature = "rayon"))]
use core::ops::Range;

use super::cursor::SlotPtrs;

/// A buffer's allocation as the `Vec` it is lent as to grow or shrink.
type UnitVec<T, L> = Vec<MaybeUninit<<L as BufLayout>::Unit<T>>>;
use super::slot::{Payload, Slot, VACANT};
#[cfg(any(test, feature = "rayon"))]
use super::state_mask::count_occupied;
use super::state_mask::{occupied_mask, partial_occupied_mask};

/// Where a [`SlotBuf`] keeps each slot's state word and payload, and how a
/// pass walks the occupied slots.
///
/// # Safety
///
/// For an allocation of `units` units of `Unit<T>` (the buffer's) holding
/// `capacity` slots, where `units_for::<T>(capacity) <= units` (and
/// `slots_in::<T>(units)` is the largest such `capacity`), and its pointers
/// as [`BufPtrs`] describes them: for every `i < capacity`,
/// `state_ptr(ptrs, i)` and `payload_ptr(ptrs, i)` must point to properly
/// aligned memory for a `u32` and a `Payload<T>`, inside the allocation,
/// disjoint from each other and from those of every other index, derived
/// from `ptrs`'s pointers (so with the allocation's provenance). If
/// `SPLIT` is false, they must lie in unit `i`, so that the allocation's
/// first `len` units hold exactly slots `0..len`. `occupied_bits` and
/// `count_occupied` must read the state words they are asked about and
/// nothing else, and report exactly those with the vacant bit clear.
pub unsafe trait BufLayout: Sized + 'static {
    /// One unit of the allocation.
    type Unit<T>;

    /// Whether the state words are an area of their own, `capacity` units
    /// into the allocation (so they move when the capacity changes), rather
    /// than part of each unit.
    const SPLIT: bool;

    /// Units needed for `slots` slots, if that fits in a `usize`.
    fn units_for<T>(slots: usize) -> Option<usize>;

    /// The most slots `units` units hold.
    fn slots_in<T>(units: usize) -> usize;

    /// The state word of slot `i`.
    ///
    /// # Safety
    ///
    /// `i` is below the capacity of the buffer `ptrs` belongs to.
    unsafe fn state_ptr<T>(ptrs: &BufPtrs<T, Self>, i: usize) -> *mut u32;

    /// The payload of slot `i`.
    ///
    /// # Safety
    ///
    /// As for [`state_ptr`](Self::state_ptr).
    unsafe fn payload_ptr<T>(ptrs: &BufPtrs<T, Self>, i: usize) -> *mut Payload<T>;

    /// The state word of slot `i`, whose unit is `unit`: `state_ptr(ptrs,
    /// i)`, from whichever of the two finds it with less work (the index
    /// where the state words lie apart, the unit where each slot holds
    /// its own).
    ///
    /// # Safety
    ///
    /// `unit` is unit `i` of the buffer `ptrs` belongs to, `i` below its
    /// capacity.
    unsafe fn state_of_unit<T>(
        ptrs: &BufPtrs<T, Self>,
        unit: NonNull<Self::Unit<T>>,
        i: usize,
    ) -> *mut u32;

    /// The payload of the slot whose unit is `unit` (see
    /// [`state_of_unit`](Self::state_of_unit)): `payload_ptr(ptrs, i)`.
    ///
    /// # Safety
    ///
    /// As for [`state_of_unit`](Self::state_of_unit).
    unsafe fn payload_of_unit<T>(unit: NonNull<Self::Unit<T>>) -> *mut Payload<T>;

    /// The occupied slots among `states[start..start + len]` (`len <= 64`,
    /// within the view), as a mask: bit `i` for slot `start + i`.
    fn occupied_bits<T>(states: StateView<'_, T, Self>, start: usize, len: usize) -> u64;

    /// How many of `states[range]` (within the view) are occupied.
    #[cfg(any(test, feature = "rayon"))]
    fn count_occupied<T>(states: StateView<'_, T, Self>, range: Range<usize>) -> usize;
}

/// State words in an array apart from the values: passes read 64 state
/// words at a time and only the live values. The layout of
/// [`IdTable`](crate::IdTable) and [`SecondaryMap`](crate::SecondaryMap).
///
/// ```
/// // The iterators of an `IdTable` walk a `Split` store.
/// let table: handlekit::IdTable<u8> = [1, 2].into_iter().collect();
/// let values: handlekit::iter::Values<'_, u8, handlekit::layout::Split> = table.values();
/// assert_eq!(values.len(), 2);
/// ```
#[derive(Debug)]
pub enum Split {}

/// Each state word beside its value, as one slot: a lookup reads one cache
/// line. The layout of [`LookupTable`](crate::LookupTable).
///
/// ```
/// let table: handlekit::LookupTable<u8> = [1, 2].into_iter().collect();
/// let values: handlekit::iter::Values<'_, u8, handlekit::layout::Interleaved> =
///     table.values();
/// assert_eq!(values.len(), 2);
/// ```
#[derive(Debug)]
pub enum Interleaved {}

/// The state words in an area of their own after the payloads: see the
/// module docs. The public marker of the layout ([`Split`]), by the name
/// the raw layer gives it.
pub(crate) use Split as SplitLayout;

/// Each state word beside its payload, as a [`Slot`]: see the module docs.
pub(crate) use Interleaved as InterleavedLayout;

// SAFETY: payload `i` is unit `i`; state word `i` is word `i` of the state
// area, which starts `capacity` units in (`BufPtrs::states`) and has room
// for `capacity` words (`units_for` counts them); the two areas do not
// overlap. Both pointers are derived from the allocation's. The masks
// and counts read the asked-for words of the state array.
unsafe impl BufLayout for SplitLayout {
    type Unit<T> = Payload<T>;
    const SPLIT: bool = true;

    #[inline]
    fn units_for<T>(slots: usize) -> Option<usize> {
        let state_bytes = slots.checked_mul(4)?;
        slots.checked_add(state_bytes.div_ceil(mem::size_of::<Payload<T>>()))
    }

    #[inline]
    fn slots_in<T>(units: usize) -> usize {
        let payload = mem::size_of::<Payload<T>>();
        // `units * payload` bytes were allocated, so the product fits.
        let slots = units * payload / (payload + 4);
        debug_assert!(Self::units_for::<T>(slots).is_some_and(|needed| needed <= units));
        slots
    }

    #[inline(always)]
    unsafe fn state_ptr<T>(ptrs: &BufPtrs<T, Self>, i: usize) -> *mut u32 {
        // SAFETY: `i < capacity` (the caller's guarantee), and the state
        // area holds `capacity` words.
        unsafe { ptrs.states.as_ptr().add(i) }
    }

    #[inline(always)]
    unsafe fn payload_ptr<T>(ptrs: &BufPtrs<T, Self>, i: usize) -> *mut Payload<T> {
        // SAFETY: `i < capacity` (the caller's guarantee), and the payload
        // area holds `capacity` payloads.
        unsafe { ptrs.base.as_ptr().add(i) }
    }

    #[inline(always)]
    unsafe fn state_of_unit<T>(
        ptrs: &BufPtrs<T, Self>,
        _: NonNull<Payload<T>>,
        i: usize,
    ) -> *mut u32 {
        // SAFETY: `i < capacity` (the caller's guarantee).
        unsafe { Self::state_ptr(ptrs, i) }
    }

    #[inline(always)]
    unsafe fn payload_of_unit<T>(unit: NonNull<Payload<T>>) -> *mut Payload<T> {
        // A payload is its own unit.
        unit.as_ptr()
    }

    #[inline]
    fn occupied_bits<T>(states: StateView<'_, T, Self>, start: usize, len: usize) -> u64 {
        let words = &states.as_slice()[start..start + len];
        match words.first_chunk() {
            Some(chunk) => occupied_mask(chunk),
            None => partial_occupied_mask(words),
        }
    }

    #[cfg(any(test, feature = "rayon"))]
    fn count_occupied<T>(states: StateView<'_, T, Self>, range: Range<usize>) -> usize {
        count_occupied(&states.as_slice()[range])
    }
}

// SAFETY: slot `i` is unit `i`, and its two fields are disjoint, aligned,
// and reached by `addr_of_mut!` from the allocation's pointer. The masks
// and counts read the asked-for state words one by one.
unsafe impl BufLayout for InterleavedLayout {
    type Unit<T> = Slot<T>;
    const SPLIT: bool = false;

    #[inline]
    fn units_for<T>(slots: usize) -> Option<usize> {
        Some(slots)
    }

    #[inline]
    fn slots_in<T>(units: usize) -> usize {
        units
    }

    #[inline(always)]
    unsafe fn state_ptr<T>(ptrs: &BufPtrs<T, Self>, i: usize) -> *mut u32 {
        // SAFETY: `i < capacity` (the caller's guarantee), so slot `i` is
        // in the allocation.
        unsafe { Slot::state_ptr(ptrs.base.as_ptr().add(i)) }
    }

    #[inline(always)]
    unsafe fn payload_ptr<T>(ptrs: &BufPtrs<T, Self>, i: usize) -> *mut Payload<T> {
        // SAFETY: as in `state_ptr`.
        unsafe { Slot::payload_ptr(ptrs.base.as_ptr().add(i)) }
    }

    #[inline(always)]
    unsafe fn state_of_unit<T>(_: &BufPtrs<T, Self>, unit: NonNull<Slot<T>>, _: usize) -> *mut u32 {
        // SAFETY: `unit` is a slot of the allocation (the caller's
        // guarantee).
        unsafe { Slot::state_ptr(unit.as_ptr()) }
    }

    #[inline(always)]
    unsafe fn payload_of_unit<T>(unit: NonNull<Slot<T>>) -> *mut Payload<T> {
        // SAFETY: as in `state_of_unit`.
        unsafe { Slot::payload_ptr(unit.as_ptr()) }
    }

    #[inline]
    fn occupied_bits<T>(states: StateView<'_, T, Self>, start: usize, len: usize) -> u64 {
        assert!(start <= states.len() && len <= states.len() - start && len <= 64);
        let mut mask = 0u64;
        for bit in 0..len {
            // SAFETY: `start + bit < start + len <= states.len()`.
            let state = unsafe { states.get_unchecked(start + bit) };
            mask |= u64::from(state & VACANT == 0) << bit;
        }
        mask
    }

    #[cfg(any(test, feature = "rayon"))]
    fn count_occupied<T>(states: StateView<'_, T, Self>, range: Range<usize>) -> usize {
        range
            .filter(|&i| states.get(i).is_some_and(|state| state & VACANT == 0))
            .count()
    }
}

/// Where a buffer's slots are: the pointers of its allocation, from which
/// the layout finds slot `i`'s state word and payload. Only pointers: what
/// they may be used for is the business of whoever holds them (the
/// buffer, a view or an access, each with its own invariant).
pub struct BufPtrs<T, L: BufLayout> {
    /// Start of the allocation (dangling while nothing is allocated).
    base: NonNull<L::Unit<T>>,
    /// Start of the state area, `capacity` units into the allocation and
    /// derived from `base`, for a split layout (`L::SPLIT`); dangling and
    /// unused for an interleaved one.
    states: NonNull<u32>,
}

impl<T, L: BufLayout> Clone for BufPtrs<T, L> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, L: BufLayout> Copy for BufPtrs<T, L> {}

impl<T, L: BufLayout> BufPtrs<T, L> {
    const DANGLING: Self = BufPtrs {
        base: NonNull::dangling(),
        states: NonNull::dangling(),
    };

    /// The state word of slot `i`. Made without a reference to any array,
    /// so pointers from several calls may be used together.
    ///
    /// # Safety
    ///
    /// `i` is below the capacity of the buffer these pointers belong to.
    #[inline(always)]
    pub(crate) unsafe fn state(&self, i: usize) -> *mut u32 {
        // SAFETY: the caller's guarantee is the layout's.
        unsafe { L::state_ptr(self, i) }
    }

    /// The payload of slot `i` (see [`state`](Self::state)).
    ///
    /// # Safety
    ///
    /// As for [`state`](Self::state).
    #[inline(always)]
    pub(crate) unsafe fn payload(&self, i: usize) -> *mut Payload<T> {
        // SAFETY: the caller's guarantee is the layout's.
        unsafe { L::payload_ptr(self, i) }
    }
}

// SAFETY: the walks of a store hand out only indices below the store's
// length with its buffer's pointers, and for those the layout's pointers
// are the slots' (the contract of `BufLayout`).
unsafe impl<T, L: BufLayout> SlotPtrs<T> for BufPtrs<T, L> {
    type Unit = L::Unit<T>;
    const INLINE_UNIT_FOLD: bool = true;

    #[inline(always)]
    unsafe fn unit_at(self, index: usize) -> NonNull<L::Unit<T>> {
        // `index` is at most the store's length (the caller's guarantee),
        // so at most its capacity.
        // SAFETY: unit `index` is in the allocation or one past its slots.
        unsafe { self.base.add(index) }
    }

    #[inline(always)]
    unsafe fn index_of(self, unit: NonNull<L::Unit<T>>) -> usize {
        // SAFETY: `unit` is `base` moved by its index (the caller's
        // guarantee), in one allocation.
        unsafe { unit.offset_from(self.base) as usize }
    }

    #[inline(always)]
    unsafe fn state_of(self, unit: NonNull<L::Unit<T>>, index: usize) -> *const u32 {
        // SAFETY: `unit` is the unit of slot `index`, below the capacity.
        unsafe { L::state_of_unit(&self, unit, index) }
    }

    #[inline(always)]
    unsafe fn payload_of(self, unit: NonNull<L::Unit<T>>) -> *mut Payload<T> {
        // SAFETY: as in `state_of`.
        unsafe { L::payload_of_unit(unit) }
    }

    #[inline(always)]
    unsafe fn state_at(self, index: usize) -> *const u32 {
        // SAFETY: `index` is below the store's length (the caller's
        // guarantee), so below the capacity.
        unsafe { L::state_ptr(&self, index) }
    }

    #[inline(always)]
    unsafe fn payload_at(self, index: usize) -> *mut Payload<T> {
        // SAFETY: as for `state`.
        unsafe { L::payload_ptr(&self, index) }
    }

    #[inline(always)]
    // The check the lint calls useless is the point: the optimizer loses
    // the `NonNull` once the pointers have been through memory.
    #[allow(useless_ptr_null_checks)]
    fn hint_not_null(self) {
        // SAFETY: both fields are `NonNull`.
        unsafe {
            core::hint::assert_unchecked(!self.base.as_ptr().is_null());
            core::hint::assert_unchecked(!self.states.as_ptr().is_null());
        }
    }
}

/// The state words of a buffer's slots in use, borrowed for `'a` and read
/// one at a time, whatever the layout.
pub struct StateView<'a, T, L: BufLayout> {
    /// Invariant: slots `0..len` of the buffer these point into are
    /// initialized, and their state words are not written for `'a`.
    ptrs: BufPtrs<T, L>,
    len: usize,
    _borrow: PhantomData<&'a u32>,
}

impl<T, L: BufLayout> Clone for StateView<'_, T, L> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, L: BufLayout> Copy for StateView<'_, T, L> {}

// SAFETY: a view reads only `u32` state words that nothing writes for
// `'a`, never a payload, so it may be sent and shared as a `&[u32]` may.
unsafe impl<T, L: BufLayout> Send for StateView<'_, T, L> {}
// SAFETY: as for `Send`.
unsafe impl<T, L: BufLayout> Sync for StateView<'_, T, L> {}

impl<T, L: BufLayout> StateView<'_, T, L> {
    /// A view of the state words of slots `0..len`.
    ///
    /// # Safety
    ///
    /// Slots `0..len` of the buffer `ptrs` belongs to are initialized, and
    /// their state words are not written for the view's lifetime.
    #[inline(always)]
    pub(crate) unsafe fn new(ptrs: BufPtrs<T, L>, len: usize) -> Self {
        StateView {
            ptrs,
            len,
            _borrow: PhantomData,
        }
    }

    /// Slots in the view.
    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The pointers of the buffer the view reads.
    #[inline(always)]
    pub(crate) fn ptrs(&self) -> BufPtrs<T, L> {
        self.ptrs
    }

    /// The state word of slot `i`, if it is in the view.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Option<u32> {
        if i < self.len {
            // SAFETY: `i < len`.
            Some(unsafe { self.get_unchecked(i) })
        } else {
            None
        }
    }

    /// [`get`](Self::get), with the word read by an instruction of its
    /// own, for a lookup that only compares it with a key's generation.
    ///
    /// Left to itself, the compiler folds that load into the compare as a
    /// memory operand addressed with an index register, which Intel cores
    /// split into two micro-ops when they rename it (un-lamination); a
    /// lookup in a small table is bound by how many micro-ops are renamed
    /// per cycle. A volatile read keeps the load apart (measured: a stale
    /// lookup at 1k `u64` 1.19 -> 1.00 times DenseSlotMap's time, whose
    /// lookup loads its slot's version on its own). It reads the same
    /// initialized word; the compiler merely may not fold or merge it.
    #[inline(always)]
    pub(crate) fn get_apart(&self, i: usize) -> Option<u32> {
        if i < self.len {
            // The word is initialized and not written meanwhile (the
            // invariant on `ptrs`).
            // SAFETY: `i < len <= capacity`.
            Some(unsafe { self.ptrs.state(i).read_volatile() })
        } else {
            None
        }
    }

    /// The state word of slot `i`, without a bounds check.
    ///
    /// # Safety
    ///
    /// `i < len`.
    #[inline(always)]
    pub(crate) unsafe fn get_unchecked(&self, i: usize) -> u32 {
        debug_assert!(i < self.len);
        // The word is initialized and not written meanwhile (the invariant
        // on `ptrs`).
        // SAFETY: `i < len <= capacity` (the caller's guarantee).
        unsafe { self.ptrs.state(i).read() }
    }
}

impl<'a, T> StateView<'a, T, SplitLayout> {
    /// The state words as a slice: in the split layout they are one array.
    #[inline(always)]
    pub(crate) fn as_slice(self) -> &'a [u32] {
        // The split layout's state words are `len` consecutive `u32`s from
        // `states`, initialized and not written for `'a` (the invariant on
        // `ptrs`).
        // SAFETY: as just said; `states` is aligned and non-null.
        unsafe { core::slice::from_raw_parts(self.ptrs.states.as_ptr(), self.len) }
    }
}

/// Payloads and state words in one allocation, laid out as `L` says. It
/// knows nothing of what the slots mean: the store says which payloads are
/// values.
pub(crate) struct SlotBuf<T, L: BufLayout = SplitLayout> {
    /// The allocation: `units` units, from a `Vec<MaybeUninit<L::Unit<T>>>`
    /// with length and capacity `units` that this buffer owns (`base`
    /// dangling, and owning nothing, while `units == 0`), and, for a split
    /// layout, the state area `capacity` units in. The state words and
    /// payloads of slots `0..len` are initialized (the payloads as the
    /// store's state words describe).
    ptrs: BufPtrs<T, L>,
    /// Size of the allocation in units (the `Vec`'s capacity).
    units: usize,
    /// Slots the allocation holds: `L::slots_in(units)`, the largest count
    /// whose state words and payloads fit.
    capacity: usize,
    /// Slots in use. Invariant: `len <= capacity`.
    len: usize,
    _owns: PhantomData<Payload<T>>,
}

// SAFETY: `SlotBuf` owns its allocation as a `Vec<Payload<T>>` would, and
// hands out access to it only through `&self`/`&mut self`.
unsafe impl<T: Send, L: BufLayout> Send for SlotBuf<T, L> {}
// SAFETY: as for `Send`; `&SlotBuf` gives only shared access.
unsafe impl<T: Sync, L: BufLayout> Sync for SlotBuf<T, L> {}

impl<T, L: BufLayout> SlotBuf<T, L> {
    /// A buffer with no allocation.
    #[inline]
    pub(crate) const fn new() -> Self {
        // A payload holds a `u32`, so it is at least 4 bytes and aligned to
        // at least 4: state words can start at any unit boundary.
        const {
            assert!(mem::size_of::<Payload<T>>() >= 4 && mem::align_of::<Payload<T>>() >= 4);
        }
        SlotBuf {
            ptrs: BufPtrs::DANGLING,
            units: 0,
            capacity: 0,
            len: 0,
            _owns: PhantomData,
        }
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

    /// Bytes of the allocation (0 when nothing is allocated).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.units * mem::size_of::<L::Unit<T>>()
    }

    /// Sets the number of slots in use.
    ///
    /// # Safety
    ///
    /// `len <= capacity`, and the state words and payloads of slots
    /// `0..len` are initialized.
    #[inline(always)]
    pub(crate) unsafe fn set_len(&mut self, len: usize) {
        debug_assert!(len <= self.capacity);
        self.len = len;
    }

    /// Where the slots are, for reads and writes of single slots (see
    /// [`BufPtrs::state`]); valid until the buffer reallocates.
    #[inline(always)]
    pub(crate) fn ptrs(&self) -> BufPtrs<T, L> {
        self.ptrs
    }

    /// The state word of slot `index`, for a read or a write.
    ///
    /// # Safety
    ///
    /// `index < capacity`.
    #[inline(always)]
    pub(crate) unsafe fn state_ptr(&self, index: usize) -> *mut u32 {
        debug_assert!(index < self.capacity);
        // SAFETY: the caller's guarantee.
        unsafe { self.ptrs.state(index) }
    }

    /// The payload of slot `index`, for a read or a write.
    ///
    /// # Safety
    ///
    /// `index < capacity`.
    #[inline(always)]
    pub(crate) unsafe fn payload_ptr(&self, index: usize) -> *mut Payload<T> {
        debug_assert!(index < self.capacity);
        // SAFETY: the caller's guarantee.
        unsafe { self.ptrs.payload(index) }
    }

    /// The state words in use.
    #[inline(always)]
    pub(crate) fn states(&self) -> StateView<'_, T, L> {
        // SAFETY: slots `0..len` are initialized (the invariant on `ptrs`),
        // and `&self` keeps them from being written.
        unsafe { StateView::new(self.ptrs, self.len) }
    }

    /// Makes room for at least `additional` more slots, growing
    /// geometrically as `Vec::reserve` does.
    ///
    /// # Panics
    ///
    /// If the size overflows (as `Vec::reserve`); an allocation failure
    /// goes to the global allocation error handler.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.grow_by(additional, |vec, extra| {
            vec.reserve(extra);
            Ok(())
        })
        .unwrap_or_else(|_: TryReserveError| unreachable!());
    }

    /// Makes room for at least `additional` more slots, as
    /// [`reserve`](Self::reserve), for a loop of appends: only the
    /// allocation's pointer and size pass to the out-of-line part and back,
    /// in registers. With the whole buffer moved into that function and
    /// back (40 bytes each way, through memory), an `IdTable` insert into a
    /// growing table of 1,000 `u64`s took 1.13 to 1.21 times SlotMap's
    /// time; with two words, 0.95 to 0.97 (three side-by-side runs each).
    #[inline(always)]
    pub(crate) fn grow_for_push(&mut self, additional: usize) {
        let Some(extra) = self.extra_units(additional) else {
            return;
        };
        let (base, units) = Self::grown_allocation(self.ptrs.base, self.units, extra);
        self.adopt(base, units);
    }

    /// The allocation `base` of `units` units, grown by at least `extra`
    /// units: its new start and size. Panics as `Vec::reserve` does; the
    /// buffer then still owns the unchanged allocation.
    #[cold]
    #[inline(never)]
    fn grown_allocation(
        base: NonNull<L::Unit<T>>,
        units: usize,
        extra: usize,
    ) -> (NonNull<L::Unit<T>>, usize) {
        // SAFETY: the caller's `base` and `units` are a buffer's allocation
        // (the invariant on `ptrs`), as `lend` requires.
        unsafe {
            Self::lend(base, units, |vec| {
                vec.reserve(extra);
                Ok(())
            })
        }
        .unwrap_or_else(|_: TryReserveError| unreachable!())
    }

    /// Lends the allocation `base` of `units` units to `change` as a
    /// `Vec`, and returns the `Vec`'s start and size afterwards. If
    /// `change` fails or panics, the allocation is as it was, and still
    /// the caller's.
    ///
    /// # Safety
    ///
    /// `base` and `units` are the parts of a `Vec` of length and capacity
    /// `units` (as the invariant on `ptrs` says of a buffer's), owned by
    /// the caller; on success the caller owns the returned parts instead.
    #[inline(always)]
    unsafe fn lend(
        base: NonNull<L::Unit<T>>,
        units: usize,
        change: impl FnOnce(&mut UnitVec<T, L>) -> Result<(), TryReserveError>,
    ) -> Result<(NonNull<L::Unit<T>>, usize), TryReserveError> {
        // `ManuallyDrop`: if `change` panics, the allocation stays owned
        // by the caller (a `Vec` that fails to grow keeps its block). For
        // `units == 0` the parts are a dangling pointer and no allocation,
        // as `Vec::new` has.
        // SAFETY: `base` and `units` are the parts of a `Vec` of length and
        // capacity `units` (the caller's guarantee).
        let mut vec = ManuallyDrop::new(unsafe {
            Vec::from_raw_parts(
                base.as_ptr().cast::<MaybeUninit<L::Unit<T>>>(),
                units,
                units,
            )
        });
        change(&mut vec)?;
        // SAFETY: a `Vec`'s pointer is never null.
        let base = unsafe { NonNull::new_unchecked(vec.as_mut_ptr().cast::<L::Unit<T>>()) };
        Ok((base, vec.capacity()))
    }

    /// Makes room for exactly `additional` more slots (up to the
    /// allocator's rounding), as `Vec::reserve_exact`.
    pub(crate) fn reserve_exact(&mut self, additional: usize) {
        self.grow_by(additional, |vec, extra| {
            vec.reserve_exact(extra);
            Ok(())
        })
        .unwrap_or_else(|_: TryReserveError| unreachable!());
    }

    /// As [`reserve`](Self::reserve), but returns an error instead of
    /// panicking or aborting.
    pub(crate) fn try_reserve(&mut self, additional: usize) -> Result<(), TryReserveError> {
        self.grow_by(additional, Vec::try_reserve)
    }

    /// Unless `additional` more slots fit already, grows the allocation
    /// with `grow` (one of `Vec`'s reserve calls), given the units to add.
    fn grow_by(
        &mut self,
        additional: usize,
        grow: impl FnOnce(&mut UnitVec<T, L>, usize) -> Result<(), TryReserveError>,
    ) -> Result<(), TryReserveError> {
        match self.extra_units(additional) {
            Some(extra) => self.regrow(|vec| grow(vec, extra)),
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
        Some(L::units_for::<T>(wanted).map_or(usize::MAX, |units| units - self.units))
    }

    /// Shrinks the allocation to the slots in use (or as close as the
    /// allocator allows).
    pub(crate) fn shrink_to_fit(&mut self) {
        let wanted = self.len;
        if wanted == self.capacity {
            return;
        }
        // Both fit: `units_for(len) <= units_for(capacity) <= units`.
        let units = L::units_for::<T>(wanted).unwrap_or(self.units);
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
    /// them (for a split layout), and records that capacity.
    fn move_states(&mut self, capacity: usize) {
        debug_assert!(L::units_for::<T>(capacity).is_some_and(|units| units <= self.units));
        debug_assert!(self.len <= capacity);
        self.capacity = capacity;
        if !L::SPLIT || self.units == 0 {
            return;
        }
        // `capacity` units plus `len` state words lie inside the allocation
        // (the first assertion), and so does the current area (the
        // invariant on `ptrs`).
        // SAFETY: both areas are in bounds; `ptr::copy` allows overlap.
        unsafe {
            let to = self.ptrs.base.as_ptr().add(capacity).cast::<u32>();
            ptr::copy(self.ptrs.states.as_ptr(), to, self.len);
            self.ptrs.states = NonNull::new_unchecked(to);
        }
    }

    /// Lends the allocation to `change` as its `Vec`, then takes it back
    /// (for a split layout, with the state words moved to the end of the
    /// new payload area). If `change` fails or panics, the buffer is as it
    /// was.
    fn regrow(
        &mut self,
        change: impl FnOnce(&mut UnitVec<T, L>) -> Result<(), TryReserveError>,
    ) -> Result<(), TryReserveError> {
        // SAFETY: `base` and `units` are the parts of a `Vec` (the
        // invariant on `ptrs`), as `lend` requires.
        let (base, units) = unsafe { Self::lend(self.ptrs.base, self.units, change)? };
        self.adopt(base, units);
        Ok(())
    }

    /// Takes `base` and `units` as the allocation, reallocated from the
    /// current one with its bytes kept, and (for a split layout) moves the
    /// state words to the new capacity's place.
    ///
    /// The reallocation must keep the current state area: growing keeps
    /// every old unit, and a shrink must come after `move_states(len)` put
    /// the words inside the kept units.
    #[inline(always)]
    fn adopt(&mut self, base: NonNull<L::Unit<T>>, units: usize) {
        let old_capacity = self.capacity;
        self.ptrs.base = base;
        self.units = units;
        if units == 0 {
            self.ptrs.states = NonNull::dangling();
            self.capacity = 0;
            return;
        }
        if L::SPLIT {
            // The allocation kept its bytes, so the state words sit
            // `old_capacity` units in (inside the new allocation, as the
            // caller guarantees); `move_states` moves them to the new
            // capacity's place.
            // SAFETY: so the old state area lies inside the new allocation.
            self.ptrs.states = unsafe {
                NonNull::new_unchecked(base.as_ptr().add(old_capacity.min(units)).cast::<u32>())
            };
        }
        self.move_states(L::slots_in::<T>(units));
    }
}

impl<T, L: BufLayout> Drop for SlotBuf<T, L> {
    fn drop(&mut self) {
        // The store drops the values; the units have no drop glue.
        // SAFETY: as in `regrow`; the buffer is not used again.
        drop(unsafe {
            Vec::from_raw_parts(
                self.ptrs.base.as_ptr().cast::<MaybeUninit<L::Unit<T>>>(),
                self.units,
                self.units,
            )
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{BufLayout, InterleavedLayout, SlotBuf, SplitLayout};
    use crate::raw::slot::Payload;

    fn fill<T, L: BufLayout>(buf: &mut SlotBuf<T, L>, slots: usize) {
        for index in buf.len()..slots {
            if index == buf.capacity() {
                buf.reserve(1);
            }
            // SAFETY: `index < capacity`, and the slot is written before
            // `len` covers it.
            unsafe {
                buf.state_ptr(index).write(index as u32 | 0x8000_0000);
                buf.payload_ptr(index)
                    .write(Payload::vacant(!(index as u32)));
                buf.set_len(index + 1);
            }
        }
    }

    fn check<T, L: BufLayout>(buf: &SlotBuf<T, L>) {
        assert!(buf.len() <= buf.capacity());
        let states = buf.states();
        assert_eq!(states.len(), buf.len());
        for index in 0..buf.len() {
            assert_eq!(states.get(index), Some(index as u32 | 0x8000_0000));
            // SAFETY: every payload was written as a vacant link.
            let link = unsafe { Payload::next_free_ptr(buf.payload_ptr(index)).read() };
            assert_eq!(link, !(index as u32));
        }
        assert_eq!(states.get(buf.len()), None);
    }

    fn growth_and_shrinking<L: BufLayout>() {
        let mut buf = SlotBuf::<u64, L>::new();
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
    fn growth_and_shrinking_keep_both_areas() {
        growth_and_shrinking::<SplitLayout>();
    }

    #[test]
    fn growth_and_shrinking_keep_interleaved_slots() {
        growth_and_shrinking::<InterleavedLayout>();
    }

    fn payload_sizes<L: BufLayout>() {
        let mut small = SlotBuf::<u8, L>::new();
        fill(&mut small, 300);
        check(&small);
        small.shrink_to_fit();
        check(&small);
        let mut large = SlotBuf::<[u64; 9], L>::new();
        fill(&mut large, 300);
        check(&large);
        large.shrink_to_fit();
        check(&large);
    }

    #[test]
    fn payload_sizes_from_4_to_large() {
        payload_sizes::<SplitLayout>();
        payload_sizes::<InterleavedLayout>();
    }

    #[test]
    fn interleaved_slots_sit_side_by_side() {
        let mut buf = SlotBuf::<u32, InterleavedLayout>::new();
        fill(&mut buf, 3);
        // SAFETY: slots 0..3 exist; only addresses are compared.
        let (state, payload, next) = unsafe {
            (
                buf.state_ptr(1) as usize,
                buf.payload_ptr(1) as usize,
                buf.state_ptr(2) as usize,
            )
        };
        // A `Slot<u32>` is 8 bytes: the state word and the payload share
        // it, whichever order the fields are in.
        assert_eq!(next - state, 8);
        assert_eq!(state.abs_diff(payload), 4);
    }

    fn shrinking_empty<L: BufLayout>() {
        let mut buf = SlotBuf::<u32, L>::new();
        buf.reserve(100);
        assert!(buf.capacity() >= 100);
        buf.shrink_to_fit();
        assert_eq!(buf.capacity(), 0);
        fill(&mut buf, 3);
        check(&buf);
    }

    #[test]
    fn shrinking_an_empty_buffer_frees_it() {
        shrinking_empty::<SplitLayout>();
        shrinking_empty::<InterleavedLayout>();
    }

    fn overflowing<L: BufLayout>() {
        let mut buf = SlotBuf::<u64, L>::new();
        fill(&mut buf, 10);
        assert!(buf.try_reserve(usize::MAX).is_err());
        assert!(buf.try_reserve(usize::MAX / 8).is_err());
        check(&buf);
    }

    #[test]
    fn overflowing_sizes_are_errors() {
        overflowing::<SplitLayout>();
        overflowing::<InterleavedLayout>();
    }
}
