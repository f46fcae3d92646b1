//! [`Cursor`]: the one iterator over the live slots of every slot
//! container (`IdTable`, `LookupTable`, `SecondaryMap`, `IndexLists`,
//! `Pool`, `Hive`), written once over a [`Walk`], the container's way of
//! finding its live slots.
//!
//! A `for` loop calls `next()` once per item, so `next()` must be small.
//! The cursor keeps the run of live slots it is in as the position before
//! its next slot and its last slot, plus the pointers of the storage that
//! holds them (made from a [`Run`]), so that `next()` is one compare and
//! one increment and then the reads of the item, and a loop keeps a single
//! position (the one it hands out is the one it steps). The two positions
//! are flat indices with the slots' units beside them for the iterators
//! that hand out keys ([`Indexed`]), and the slots' own addresses for
//! those that hand out values alone ([`RunPos`]): their `next()` is then
//! the loop over a slice, with no index turned into an address. Only when the run ends does it go out of line
//! ([`Cursor::refill`]): it cuts the next run from the mask of the
//! 64-slot chunk it holds ([`Bits`]), or asks the walk for the next piece,
//! a mask or a whole run. A table with no holes is one run (the walk sees
//! that the slots left equal the live values left); a table with holes
//! costs one refill per run of live slots, not per slot.
//!
//! The same state serves both ends: `next_back()` works on a second run
//! and mask from the top, and when the walk has nothing left between them,
//! one end takes over what the other holds, so the two meet in the middle
//! and every slot is yielded once.
//!
//! `fold` (and so `for_each`, `sum`, `count`, ...) does not go through
//! `next()`: it drains the runs and masks it holds and hands the rest to
//! [`Walk::fold`], the walk's own word-at-a-time loop.

use core::marker::PhantomData;
use core::mem;
use core::ptr::NonNull;

use super::slot::Payload;

/// Where the slots of a piece of storage are, by flat index: the pointers
/// a [`Run`] or [`Bits`] keeps, from which an item is read.
///
/// # Safety
///
/// For every flat index `i` that a walk hands out with a value of this
/// type (in a piece, or to the closure of [`Walk::fold`]), `state_at(i)` and
/// `payload_at(i)` must point to slot `i`'s state word and payload, both
/// initialized, with the provenance of the storage, for as long as the
/// walk's borrow lasts.
///
/// A run steps over [`Unit`](Self::Unit)s, one per slot and contiguous
/// within a run: for every run `next..end` a walk hands out, `unit_at(i)`
/// for `i` in `next..=end` must be `unit_at(next)` moved by `i - next`
/// units within one allocation (`end` one past the run's last unit), and
/// `index_of`, `state_of` (given `i`) and `payload_of` of such a unit must
/// give back `i`, `state_at(i)` and `payload_at(i)`.
pub unsafe trait SlotPtrs<T>: Copy {
    /// What a run steps over, one per slot: the slot's payload where the
    /// state words lie apart, the whole slot where each holds its own.
    type Unit;

    /// The unit of slot `index`.
    ///
    /// # Safety
    ///
    /// `index` was handed out with these pointers, or is one past the
    /// last index of a run handed out with them.
    unsafe fn unit_at(self, index: usize) -> NonNull<Self::Unit>;

    /// The index of the slot whose unit is `unit`.
    ///
    /// # Safety
    ///
    /// `unit` is `unit_at(i)` for an index `i` handed out with these
    /// pointers (see the trait).
    unsafe fn index_of(self, unit: NonNull<Self::Unit>) -> usize;

    /// The state word of the slot whose unit is `unit` and whose index is
    /// `index`: from whichever of the two finds it with less work.
    ///
    /// # Safety
    ///
    /// As for [`index_of`](Self::index_of), and `index == index_of(unit)`.
    unsafe fn state_of(self, unit: NonNull<Self::Unit>, index: usize) -> *const u32;

    /// The payload of the slot whose unit is `unit`.
    ///
    /// # Safety
    ///
    /// As for [`index_of`](Self::index_of).
    unsafe fn payload_of(self, unit: NonNull<Self::Unit>) -> *mut Payload<T>;

    /// The state word of slot `index`.
    ///
    /// # Safety
    ///
    /// `index` was handed out with these pointers (see the trait).
    unsafe fn state_at(self, index: usize) -> *const u32;

    /// The payload of slot `index`.
    ///
    /// # Safety
    ///
    /// As for [`state_at`](Self::state_at).
    unsafe fn payload_at(self, index: usize) -> *mut Payload<T>;

    /// Whether [`fold_run`]'s loop over units is inlined into the walk's
    /// fold (else it is a call per run). Inlined, it ran 2x faster over a
    /// full `IdTable` than as a call; inlined into the fold over a `Hive`'s
    /// blocks, it changed the registers of that fold's loop over masks,
    /// which then ran 1.85x as long over a half-emptied `Hive` (side by
    /// side, code placement held).
    const INLINE_UNIT_FOLD: bool;

    /// Tells the optimizer what it cannot see once the pointers have been
    /// through memory (an iterator made in one function and walked in
    /// another): that they are not null, where that always holds. Called
    /// at the top of `next()`, so that a `for` loop does not test each
    /// item's `Option` (a reference's niche) against null. Does nothing
    /// by default.
    #[inline(always)]
    fn hint_not_null(self) {}
}

/// A reference a cursor makes to a value: `&'a T` or `&'a mut T`.
///
/// # Safety
///
/// `from_value_ptr` must make only the reference of its own type, to the
/// value the pointer points to.
pub unsafe trait ValueRef<T>: Sized {
    /// The reference to `*value`.
    ///
    /// # Safety
    ///
    /// `value` points to an initialized `T` that is valid for the
    /// reference's lifetime (no `&mut` to it elsewhere for `&T`, nothing
    /// else at all for `&mut T`).
    unsafe fn from_value_ptr(value: *mut T) -> Self;
}

// SAFETY: only makes the shared reference.
unsafe impl<T> ValueRef<T> for &T {
    #[inline(always)]
    unsafe fn from_value_ptr(value: *mut T) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { &*value }
    }
}

// SAFETY: only makes the exclusive reference.
unsafe impl<T> ValueRef<T> for &mut T {
    #[inline(always)]
    unsafe fn from_value_ptr(value: *mut T) -> Self {
        // SAFETY: the caller's guarantee.
        unsafe { &mut *value }
    }
}

/// The item of occupied slot `index`: `(index, generation, value)`.
///
/// # Safety
///
/// `index` was handed out with `ptrs` (see [`SlotPtrs`]) and names an
/// occupied slot, made into an `R` at most once if `R` is exclusive.
#[inline(always)]
unsafe fn item<T, P: SlotPtrs<T>, R: ValueRef<T>>(ptrs: P, index: usize) -> (usize, u32, R) {
    // An occupied slot's state word is its generation; its payload holds
    // the value.
    // SAFETY: the caller's guarantee.
    unsafe {
        let generation = ptrs.state_at(index).read();
        debug_assert!(generation & super::slot::VACANT == 0);
        let value = Payload::value_ptr(ptrs.payload_at(index));
        // A slot's address is never null (it lies in an allocation); said
        // here for the folds, which make items without `next()`. For
        // `next()` this is not enough (the optimizer tests the `Option`
        // before this block and then drops the assumption as implied):
        // it says it of the pointers at its top (`hint_not_null`).
        core::hint::assert_unchecked(!value.is_null());
        (index, generation, R::from_value_ptr(value))
    }
}

/// The item of the slot whose unit is `unit` and whose flat index is
/// `index`, read through the unit: [`item`] for the positions that keep
/// units (`*mut Unit`, and [`Indexed`] where the unit is not scaled for
/// free).
///
/// # Safety
///
/// As for [`item`], and `unit` is `unit_at(index)` of `ptrs`.
#[inline(always)]
unsafe fn item_by_unit<T, P: SlotPtrs<T>, R: ValueRef<T>>(
    ptrs: P,
    unit: NonNull<P::Unit>,
    index: usize,
) -> (usize, u32, R) {
    // SAFETY: the caller's guarantee.
    unsafe {
        let generation = ptrs.state_of(unit, index).read();
        debug_assert!(generation & super::slot::VACANT == 0);
        let value = Payload::value_ptr(ptrs.payload_of(unit));
        (index, generation, R::from_value_ptr(value))
    }
}

/// Marks the path it is called on as rarely taken (a call to a `#[cold]`
/// function does, and this one compiles to nothing). On a refill: without
/// it, the register allocator weighs the refill's values like the loop's
/// own and may keep a `for` loop's running sum in memory.
#[cold]
#[inline(always)]
fn refill_is_rare() {}

/// What a fold does with each occupied slot, given by flat index (a slot
/// a mask names) or by position (a slot of a run, see [`fold_run`]): make
/// the item and hand it to the caller's closure. Both ways of one fold make
/// the same item; the walks call them only for slots they hand out, each
/// once (the [`Walk`] contract).
pub trait SlotFold<T, P: SlotPtrs<T>, Q: RunPos<T, P>, B> {
    /// The slot at flat index `index`.
    fn at_index(&mut self, acc: B, ptrs: P, index: usize) -> B;
    /// The slot at position `at`.
    fn at_pos(&mut self, acc: B, ptrs: P, at: Q) -> B;
}

/// Folds `f` over the slots of `word`'s set bits, bit `i` standing for flat
/// index `base + i`, lowest first; a full word as a loop of 64.
///
/// # Safety
///
/// Each such index is an occupied slot of `ptrs` that a walk hands out
/// here, once.
#[inline(always)]
pub(crate) unsafe fn fold_word<T, P: SlotPtrs<T>, Q: RunPos<T, P>, B>(
    ptrs: P,
    mut word: u64,
    base: usize,
    init: B,
    f: &mut impl SlotFold<T, P, Q, B>,
) -> B {
    let mut acc = init;
    if word == u64::MAX {
        // A constant trip count, not `base..base + WORD_BITS`: the compiler
        // must allow for that end wrapping, and the trip count it then
        // works out on every word took registers that the sparse path below
        // spilled to the stack.
        for bit in 0..super::bitset::WORD_BITS {
            acc = f.at_index(acc, ptrs, base + bit);
        }
    } else {
        while word != 0 {
            acc = f.at_index(acc, ptrs, base + super::bitset::pop_lowest(&mut word));
        }
    }
    acc
}

/// Folds `f` over the run of occupied slots `next..end` of `ptrs`, in
/// order: as flat indices for the iterators with keys, by stepping the
/// units' addresses for the iterators of values alone ([`RunPos`]).
///
/// The unit pointer's end is made opaque ([`RunPos::opaque`]), so that the
/// loop steps one induction variable and compares it with the end, as a
/// slice's loop does. With the end in view, the optimizer turns the loop
/// into a pointer stepped up and a count stepped down to zero, and on the
/// development machine such a loop (an opaque body over `values()` of a
/// full `IdTable`, 1,000 slots) took 0.27 ns an item where the slice's
/// took 0.14 (the same two-counter loop in assembly: 0.27; a `black_box`
/// end, reloaded from the stack by every compare: 0.17). The trip count
/// is still worked out, so a sum over the run is still vectorized.
///
/// # Safety
///
/// `next..end` is a run a walk handed out with `ptrs` (or its fold may
/// hand out), each slot folded at most once; or empty.
#[inline(always)]
pub(crate) unsafe fn fold_run<T, P: SlotPtrs<T>, Q: RunPos<T, P>, B>(
    ptrs: P,
    next: usize,
    end: usize,
    init: B,
    f: &mut impl SlotFold<T, P, Q, B>,
) -> B {
    let mut acc = init;
    if Q::IS_INDEX {
        // Two slots a trip: a loop this small runs at one item a cycle or
        // at two, depending on whether it happens to cross a 64-byte line
        // (which no source can control); with two items a trip the
        // crossing costs half as much an item. Sums still vectorize.
        let mut index = next;
        while end - index >= 2 {
            acc = f.at_index(acc, ptrs, index);
            acc = f.at_index(acc, ptrs, index + 1);
            index += 2;
        }
        if index < end {
            acc = f.at_index(acc, ptrs, index);
        }
        return acc;
    }
    if next == end {
        // An empty run may come with pointers that lead nowhere (a freed
        // block's), from which no position can be made.
        return acc;
    }
    if P::INLINE_UNIT_FOLD {
        // SAFETY: the caller's guarantee; the run is not empty.
        unsafe { fold_units(ptrs, next, end, acc, f) }
    } else {
        // SAFETY: as above.
        unsafe { fold_units_outlined(ptrs, next, end, acc, f) }
    }
}

/// [`fold_units`] out of line (see [`SlotPtrs::INLINE_UNIT_FOLD`]).
///
/// # Safety
///
/// As for [`fold_units`].
#[inline(never)]
unsafe fn fold_units_outlined<T, P: SlotPtrs<T>, Q: RunPos<T, P>, B>(
    ptrs: P,
    next: usize,
    end: usize,
    init: B,
    f: &mut impl SlotFold<T, P, Q, B>,
) -> B {
    // SAFETY: the caller's guarantee.
    unsafe { fold_units(ptrs, next, end, init, f) }
}

/// [`fold_run`]'s loop over units.
///
/// # Safety
///
/// As for [`fold_run`], and the run is not empty.
#[inline(always)]
unsafe fn fold_units<T, P: SlotPtrs<T>, Q: RunPos<T, P>, B>(
    ptrs: P,
    next: usize,
    end: usize,
    init: B,
    f: &mut impl SlotFold<T, P, Q, B>,
) -> B {
    let mut acc = init;
    // SAFETY: the first slot of the run and one past its last (the
    // caller's guarantee).
    let (mut at, last) = unsafe { (Q::at(ptrs, next), Q::at(ptrs, end)) };
    let last = last.opaque();
    while at != last {
        acc = f.at_pos(acc, ptrs, at);
        // SAFETY: `at` lies in the run, made from `ptrs`; one on is at most
        // its end.
        at = unsafe { at.add(1) };
    }
    acc
}

/// Occupied slots `next..end`, all reached through `ptrs`: what a walk
/// hands out when it knows a stretch is all occupied.
pub struct Run<P> {
    /// The storage of the run: every index of `next..end` names an
    /// occupied slot reached through these pointers.
    pub(crate) ptrs: P,
    /// The first index of the run.
    pub(crate) next: usize,
    /// Past the last index; `next < end`.
    pub(crate) end: usize,
}

/// Occupied slots among the 64 from `base`: bit `i` of `bits` for index
/// `base + i`, all reached through `ptrs`.
pub struct Bits<P> {
    /// The storage of the slots: every index a set bit stands for names an
    /// occupied slot reached through these pointers.
    pub(crate) ptrs: P,
    /// The index of bit 0.
    pub(crate) base: usize,
    /// The occupied slots.
    pub(crate) bits: u64,
}

/// What a walk hands out at a time: a mask of up to 64 slots, or a run
/// known to be all occupied.
pub enum Piece<P> {
    /// Some of 64 slots.
    Bits(Bits<P>),
    /// A run, not empty.
    Run(Run<P>),
}

/// Where a run of an [`End`] is, as the position before its first slot
/// and its last slot's: flat indices ([`usize`], for the iterators that hand out
/// keys, which need the index anyway) or the slots' [`Unit`]s
/// (`*mut Unit`, for those that hand out values alone, whose
/// `next()` is then the loop over a slice: a compare, a step of the
/// pointer and the read of the value, with no index to turn into an
/// address). The same pair serves a mask: `last` is the position of bit
/// 0.
///
/// [`Unit`]: SlotPtrs::Unit
///
/// # Safety
///
/// `at`, `add` and `back` must give the position of the slot they are
/// asked for (with the pointers `at` was given, `add(n)` the slot `n` on,
/// `back` the one before), `index` its flat index, `distance` the number of
/// slots from one position to a later one, and `item` the item of the slot
/// at the position: `item(ptrs, index)` of [`item`].
pub unsafe trait RunPos<T, P: SlotPtrs<T>>: Copy + Eq {
    /// The position of an end that holds nothing (never read).
    fn none() -> Self;

    /// The position of slot `index`.
    ///
    /// # Safety
    ///
    /// `index` was handed out with `ptrs` (a slot of a run or a set bit of
    /// a mask), or is one past the last index of a run handed out with
    /// them.
    unsafe fn at(ptrs: P, index: usize) -> Self;

    /// The position `n` slots on, within the same piece.
    ///
    /// # Safety
    ///
    /// This position and the slot `n` on are in the piece (a mask's
    /// position is its lowest set bit's: see `End::at`).
    unsafe fn add(self, n: usize) -> Self;

    /// The position one slot on, wrapping: it may be one past a piece's
    /// storage, or leave the position before its first slot (see
    /// [`End::before`]) for that first slot. Only a position that names a
    /// slot is made into an item.
    fn step(self) -> Self;

    /// The position one slot back, wrapping: it may be the position
    /// before a piece's first slot (see [`End::before`]).
    fn step_back(self) -> Self;

    /// The number of slots from `self` to the later `to`, of one piece
    /// (either may be the position before its first slot).
    fn distance(self, to: Self) -> usize;

    /// Whether this position lies before `other`, of one piece (either may
    /// be the position before its first slot).
    fn precedes(self, other: Self) -> bool;

    /// The flat index of the slot at this position.
    ///
    /// # Safety
    ///
    /// The position was made from `ptrs` (by `at`, then `add`, `back`).
    unsafe fn index(self, ptrs: P) -> usize;

    /// The item of the slot at this position.
    ///
    /// # Safety
    ///
    /// As for [`item`]: the slot is occupied and reached through `ptrs`,
    /// made into an `R` at most once if `R` is exclusive.
    unsafe fn item<R: ValueRef<T>>(self, ptrs: P) -> (usize, u32, R);

    /// Whether the positions are flat indices (`usize`).
    const IS_INDEX: bool;

    /// The same position, as [`fold_run`] wants its end: one the optimizer
    /// may not relate to any other, so that its loop steps a single
    /// induction variable.
    fn opaque(self) -> Self;

    /// Tells the optimizer that the position is not null, where it is a
    /// pointer: called in `next()` on the position the item is made from
    /// (only ever one that names a slot), when the walk's pointers may not say so (a block's
    /// bases lie outside its storage and may be any address), so that a
    /// `for` loop does not test each item's `Option` against null.
    #[inline(always)]
    fn hint_not_null(self) {}
}

/// `pointer`, unchanged, as a value the optimizer cannot see through: an
/// empty `asm!` block it passes through in a register, where the target
/// has inline assembly (and not under Miri, which runs none); else
/// `black_box`, which costs a store, and a load by every use. Any pointer,
/// null or dangling included.
#[inline(always)]
// The pointer only passes through the block, which touches no memory.
#[allow(clippy::pointers_in_nomem_asm_block)]
fn opaque_raw<U>(pointer: *mut U) -> *mut U {
    #[cfg(all(not(miri), any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let mut pointer = pointer;
        // SAFETY: the block is empty: it reads and writes nothing but the
        // register it is given, and leaves the same pointer in it.
        unsafe {
            core::arch::asm!(
                "/* {0} */",
                inout(reg) pointer,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        pointer
    }
    #[cfg(not(all(not(miri), any(target_arch = "x86_64", target_arch = "aarch64"))))]
    {
        core::hint::black_box(pointer)
    }
}

/// [`opaque_raw`] for a pointer known not to be null.
#[inline(always)]
fn opaque_ptr<U>(value: NonNull<U>) -> NonNull<U> {
    // SAFETY: `opaque_raw` gives back the pointer it is given.
    unsafe { NonNull::new_unchecked(opaque_raw(value.as_ptr())) }
}

// SAFETY: a flat index is its own position; steps are additions.
unsafe impl<T, P: SlotPtrs<T>> RunPos<T, P> for usize {
    #[inline(always)]
    fn none() -> Self {
        0
    }

    #[inline(always)]
    unsafe fn at(_: P, index: usize) -> Self {
        index
    }

    #[inline(always)]
    unsafe fn add(self, n: usize) -> Self {
        self + n
    }

    #[inline(always)]
    fn step(self) -> Self {
        self.wrapping_add(1)
    }

    #[inline(always)]
    fn step_back(self) -> Self {
        self.wrapping_sub(1)
    }

    #[inline(always)]
    fn distance(self, to: Self) -> usize {
        to.wrapping_sub(self)
    }

    #[inline(always)]
    fn precedes(self, other: Self) -> bool {
        // Signed: the position before slot 0 is `usize::MAX`, -1 (flat
        // indices stay below `isize::MAX`).
        (self as isize) < (other as isize)
    }

    #[inline(always)]
    unsafe fn index(self, _: P) -> usize {
        self
    }

    #[inline(always)]
    unsafe fn item<R: ValueRef<T>>(self, ptrs: P) -> (usize, u32, R) {
        // SAFETY: the caller's guarantee.
        unsafe { item(ptrs, self) }
    }

    const IS_INDEX: bool = true;

    /// Unchanged: [`fold_run`] steps indices as a plain range (the loops of
    /// the iterators with keys, which read the state word at each index;
    /// hiding the end only took a few percent off a vectorized sum).
    #[inline(always)]
    fn opaque(self) -> Self {
        self
    }
}

// SAFETY: `at` is `unit_at`; the units of a piece are contiguous in one
// allocation (the contract of `SlotPtrs`), so steps are pointer steps and
// distances are address differences over the unit's size; `index_of`,
// `state_of` and `payload_of` find the item's parts. A position that
// names a slot is never null: `none()` is dangling and every other one is
// made by `unit_at` (a `NonNull`) or by steps within a piece (the position
// before a piece's first unit names none, and is only stepped and
// compared).
//
// A raw pointer, not a `NonNull`: a `NonNull` read from the iterator comes
// with the optimizer's knowledge that it is not null, and that knowledge
// makes it drop `hint_not_null`'s assumption as redundant; then, once the
// iterator's fields live in registers (a `for` loop), the knowledge is
// gone as well, and a loop over a hive's blocks tested every item's
// `Option` against null (two taken jumps an item instead of one).
unsafe impl<T, P: SlotPtrs<T>> RunPos<T, P> for *mut P::Unit {
    #[inline(always)]
    fn none() -> Self {
        NonNull::dangling().as_ptr()
    }

    #[inline(always)]
    unsafe fn at(ptrs: P, index: usize) -> Self {
        // SAFETY: the caller's guarantee is `unit_at`'s.
        unsafe { ptrs.unit_at(index) }.as_ptr()
    }

    #[inline(always)]
    unsafe fn add(self, n: usize) -> Self {
        // SAFETY: the caller's guarantee: within the piece's allocation.
        unsafe { self.add(n) }
    }

    #[inline(always)]
    fn step(self) -> Self {
        self.wrapping_add(1)
    }

    #[inline(always)]
    fn step_back(self) -> Self {
        self.wrapping_sub(1)
    }

    #[inline(always)]
    fn distance(self, to: Self) -> usize {
        // Units are never zero-sized: each holds at least a state word or
        // a free-list link.
        to.addr().wrapping_sub(self.addr()) / mem::size_of::<P::Unit>()
    }

    #[inline(always)]
    fn precedes(self, other: Self) -> bool {
        // A unit before a piece's first is still above address 0.
        self < other
    }

    #[inline(always)]
    unsafe fn index(self, ptrs: P) -> usize {
        // SAFETY: the caller's guarantee is `index_of`'s; a position is
        // never null.
        unsafe { ptrs.index_of(NonNull::new_unchecked(self)) }
    }

    #[inline(always)]
    unsafe fn item<R: ValueRef<T>>(self, ptrs: P) -> (usize, u32, R) {
        // An iterator of values drops the index and the generation, so the
        // optimizer drops their work.
        // SAFETY: the caller's guarantee, as for `item`; a position is
        // never null, and its index is the one `index_of` gives.
        unsafe {
            let unit = NonNull::new_unchecked(self);
            item_by_unit(ptrs, unit, ptrs.index_of(unit))
        }
    }

    const IS_INDEX: bool = false;

    #[inline(always)]
    fn opaque(self) -> Self {
        // SAFETY: a position is never null.
        opaque_ptr(unsafe { NonNull::new_unchecked(self) }).as_ptr()
    }

    #[inline(always)]
    fn hint_not_null(self) {
        // SAFETY: a position is never null (see the impl).
        unsafe { core::hint::assert_unchecked(!self.is_null()) };
    }
}

/// The position of the iterators with keys: a flat index and, beside it,
/// the unit of the same slot, stepped together. The index makes the key
/// and finds the state word where the state words lie apart; the unit
/// finds the payload (and the state word where each slot holds its own)
/// without turning the index into an address. For a unit of 1, 2, 4 or
/// 8 bytes the index is scaled inside the load for free, so the unit is
/// left unused and the optimizer drops it; for any other size, turning
/// the index into an address took three instructions an item where the
/// unit's step takes one (a `for` loop over `iter()` of an `IdTable` of
/// 64-byte values: 10 instructions an item, 8 with the unit; over a
/// `LookupTable<u64>`, whose slots are 16 bytes: the same).
///
/// Positions are compared by their index alone. (Making a mask's slots
/// into items by their index instead, so that a mask's step would move
/// the index alone, made the item in two places, and the optimizer then
/// merged the two reads into one after them, shuffling a `for` loop's
/// registers on every item: 1 to 3 instructions an item more, with holes
/// or without.)
pub(crate) struct Indexed<U> {
    /// The flat index.
    index: usize,
    /// Invariant: `unit_at(index)`, moved as `index` is moved (wrapping;
    /// for the position before a piece's first slot, the unit before it,
    /// never read).
    unit: *mut U,
}

impl<U> Clone for Indexed<U> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<U> Copy for Indexed<U> {}

impl<U> PartialEq for Indexed<U> {
    #[inline(always)]
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<U> Eq for Indexed<U> {}

impl<U> Indexed<U> {
    /// Whether the unit is found from the index as cheaply as it is
    /// stepped: a size the address modes scale by.
    const SCALED: bool = matches!(mem::size_of::<U>(), 1 | 2 | 4 | 8);
}

/// The position of a keyed cursor over a walk's pieces (see [`Indexed`]).
pub(crate) type IndexedOf<T, W> = Indexed<<<W as Walk<T>>::Ptrs as SlotPtrs<T>>::Unit>;

// SAFETY: the index is a flat index as for `usize`, and every step moves
// the unit by as many units as the index (within a piece, by the contract
// of `SlotPtrs`, `unit_at(i + n)` is `unit_at(i)` moved by `n`), so the
// unit is the slot's whenever the index names one; `item` reads the parts
// of that slot, by the index or by the unit, which `SlotPtrs` says agree.
unsafe impl<T, P: SlotPtrs<T>> RunPos<T, P> for Indexed<P::Unit> {
    #[inline(always)]
    fn none() -> Self {
        Indexed {
            index: 0,
            unit: NonNull::dangling().as_ptr(),
        }
    }

    #[inline(always)]
    unsafe fn at(ptrs: P, index: usize) -> Self {
        Indexed {
            index,
            // SAFETY: the caller's guarantee is `unit_at`'s.
            unit: unsafe { ptrs.unit_at(index) }.as_ptr(),
        }
    }

    #[inline(always)]
    unsafe fn add(self, n: usize) -> Self {
        Indexed {
            index: self.index + n,
            unit: self.unit.wrapping_add(n),
        }
    }

    #[inline(always)]
    fn step(self) -> Self {
        let mut unit = self.unit.wrapping_add(1);
        if !Self::SCALED {
            // Hidden from the optimizer, so that the item's reads are made
            // from the stepped unit: otherwise it folds the step into their
            // offsets (the state word at `before + 1 unit + 64`) and keeps
            // the unit before and after the step in two registers, copied
            // on every item.
            unit = opaque_raw(unit);
        }
        Indexed {
            index: self.index.wrapping_add(1),
            unit,
        }
    }

    #[inline(always)]
    fn step_back(self) -> Self {
        Indexed {
            index: self.index.wrapping_sub(1),
            unit: self.unit.wrapping_sub(1),
        }
    }

    #[inline(always)]
    fn distance(self, to: Self) -> usize {
        to.index.wrapping_sub(self.index)
    }

    #[inline(always)]
    fn precedes(self, other: Self) -> bool {
        // As for `usize`: the position before slot 0 has index -1.
        (self.index as isize) < (other.index as isize)
    }

    #[inline(always)]
    unsafe fn index(self, _: P) -> usize {
        self.index
    }

    #[inline(always)]
    unsafe fn item<R: ValueRef<T>>(self, ptrs: P) -> (usize, u32, R) {
        if Self::SCALED {
            // SAFETY: the caller's guarantee.
            return unsafe { item(ptrs, self.index) };
        }
        // SAFETY: the caller's guarantee: the position names an occupied
        // slot, so the unit is that slot's (see the impl) and not null.
        unsafe { item_by_unit(ptrs, NonNull::new_unchecked(self.unit), self.index) }
    }

    /// Folds take runs by index, as for `usize` ([`fold_run`]), so the
    /// unit is only ever stepped by `next()` and `next_back()`.
    const IS_INDEX: bool = true;

    #[inline(always)]
    fn opaque(self) -> Self {
        self
    }

    #[inline(always)]
    fn hint_not_null(self) {
        if !Self::SCALED {
            // SAFETY: called only on a position that names a slot, whose
            // unit lies in an allocation.
            unsafe { core::hint::assert_unchecked(!self.unit.is_null()) };
        }
    }
}

/// One end of a [`Cursor`]: the piece it takes from, as a run of the
/// slots after `before` up to `last`, or as the mask `bits` from `last`
/// (then `before` is not below `last`), never both at once, the positions kept as `Q` (see [`RunPos`]).
/// `next()` takes the run upward, and the mask's bits lowest first;
/// `next_back()` the run downward, and the bits highest first. Four words
/// and the pointers: a loop keeps both ends, the walk and its own values in
/// registers only while they are few. (Turning a mask's stretches of set
/// bits into runs inside `next()` was tried: the loop's registers were then
/// shuffled on every item, and a `for` loop took 2.5x as long.)
///
/// The run is kept by the position before its next slot, not the next
/// slot's own, so that `next()` steps the position and hands out the slot
/// it then names: one value, where a position stepped past the slot it
/// hands out kept the two in two registers, copied on every item (a
/// `values` loop of five instructions and 17 bytes instead of a slice's
/// four and 14; a loop that straddles a 64-byte line of code takes two
/// cycles an item on the development machine's core, not one).
struct End<T, P: SlotPtrs<T>, Q: RunPos<T, P>> {
    /// The storage of the piece. Invariant: every position after `before`
    /// up to `last`, and every slot a set bit of `bits` stands for, is an
    /// occupied slot reached through these pointers, not yet taken.
    ptrs: P,
    /// The position before the run's next slot (a wrapping step back from
    /// a slot, which may lie before the storage, never made into an item);
    /// the run is empty when it does not precede `last`
    /// ([`RunPos::precedes`]). With a mask, the slot `next()` took from it
    /// last (or `last`). Both are made from `ptrs` (or both `none()` while
    /// the end holds no piece).
    before: Q,
    /// The run's last slot; while `bits` is not zero, the run is empty
    /// and this is the position of bit 0 of `bits`: the mask's lowest
    /// occupied slot when the end was made.
    last: Q,
    /// The mask: bit `i` for the slot `i` past `last`. Invariant: `bits ==
    /// 0` or the run is empty.
    bits: u64,
    _slots: PhantomData<fn() -> T>,
}

impl<T, P: SlotPtrs<T>, Q: RunPos<T, P>> Clone for End<T, P, Q> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, P: SlotPtrs<T>, Q: RunPos<T, P>> Copy for End<T, P, Q> {}

impl<T, P: SlotPtrs<T>, Q: RunPos<T, P>> End<T, P, Q> {
    /// Nothing, at `ptrs`.
    #[inline(always)]
    fn empty(ptrs: P) -> Self {
        End {
            ptrs,
            before: Q::none(),
            last: Q::none(),
            bits: 0,
            _slots: PhantomData,
        }
    }

    /// The run of slots `next..end` of `ptrs`, or with `bits` not zero,
    /// the mask `bits` from slot `next` (`== end`). A mask is kept shifted
    /// so that its bit 0 is set: its position is then an occupied slot,
    /// inside the storage, as a unit pointer must be (a mask a walk hands
    /// out may start before the storage: a block of `Hive` or `Pool` that
    /// starts inside a 64-slot word).
    ///
    /// # Safety
    ///
    /// A piece a walk handed out with `ptrs` (see [`Walk`]), or what is
    /// left of one.
    #[inline(always)]
    unsafe fn at(ptrs: P, next: usize, end: usize, bits: u64) -> Self {
        if bits == 0 {
            // SAFETY: the caller's guarantee: a run's first index and one
            // past its last.
            let (next, end) = unsafe { (Q::at(ptrs, next), Q::at(ptrs, end)) };
            return End {
                ptrs,
                before: next.step_back(),
                last: end.step_back(),
                bits,
                _slots: PhantomData,
            };
        }
        let skip = bits.trailing_zeros();
        // SAFETY: the caller's guarantee: the mask's lowest set bit is an
        // occupied slot.
        let base = unsafe { Q::at(ptrs, end + skip as usize) };
        End {
            ptrs,
            before: base,
            last: base,
            bits: bits >> skip,
            _slots: PhantomData,
        }
    }

    /// The piece as an end. A full mask becomes a run: a run costs a
    /// compare and a step per slot, a mask a few bit operations.
    #[inline(always)]
    fn of(piece: Piece<P>) -> Self {
        // SAFETY: the walk handed the piece out (`Walk`'s contract).
        unsafe {
            match piece {
                Piece::Run(run) => Self::at(run.ptrs, run.next, run.end, 0),
                Piece::Bits(bits) if bits.bits == u64::MAX => {
                    Self::at(bits.ptrs, bits.base, bits.base + 64, 0)
                }
                Piece::Bits(bits) => Self::at(bits.ptrs, bits.base, bits.base, bits.bits),
            }
        }
    }

    /// The same end with its positions kept as `Q2`.
    #[inline(always)]
    fn with_pos<Q2: RunPos<T, P>>(self) -> End<T, P, Q2> {
        if self.is_empty() {
            return End::empty(self.ptrs);
        }
        // `last` names the run's last slot (its first `run_len() - 1` below
        // it) or the mask's bit 0, of a piece the walk handed out.
        // SAFETY: so `last` was made from `ptrs`, and so are the indices.
        unsafe {
            let last = self.last.index(self.ptrs);
            if self.bits != 0 {
                End::at(self.ptrs, last, last, self.bits)
            } else {
                End::at(self.ptrs, last + 1 - self.run_len(), last + 1, 0)
            }
        }
    }

    /// Whether the run holds a slot.
    #[inline(always)]
    fn in_run(&self) -> bool {
        self.before.precedes(self.last)
    }

    /// The number of slots in the run.
    #[inline(always)]
    fn run_len(&self) -> usize {
        if self.in_run() {
            self.before.distance(self.last)
        } else {
            0
        }
    }

    /// Whether no slot is left.
    #[inline(always)]
    fn is_empty(&self) -> bool {
        !self.in_run() && self.bits == 0
    }

    /// Takes the lowest slot left, if any, as its position.
    #[cfg(test)]
    fn take_first_pos(&mut self) -> Option<Q> {
        if self.in_run() {
            self.before = self.before.step();
            Some(self.before)
        } else if self.bits != 0 {
            Some(self.take_masked())
        } else {
            None
        }
    }

    /// Takes the mask's lowest slot left, whose position becomes `before`
    /// (not below `last`, so the run stays empty): every way `next()`
    /// takes a slot then leaves the slot's position in `before`, and a loop
    /// keeps the two as one value (see the type's docs). The mask must not
    /// be empty.
    #[inline(always)]
    fn take_masked(&mut self) -> Q {
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        // SAFETY: the bit's slot is in the mask's piece.
        let taken = unsafe { self.last.add(bit) };
        self.before = taken;
        taken
    }

    /// Takes the highest slot left, if any, as its position.
    #[cfg(test)]
    fn take_last_pos(&mut self) -> Option<Q> {
        if self.in_run() {
            let taken = self.last;
            self.last = taken.step_back();
            Some(taken)
        } else if self.bits != 0 {
            let bit = 63 - self.bits.leading_zeros() as usize;
            self.bits ^= 1 << bit;
            // SAFETY: the bit's slot is in the mask's piece.
            Some(unsafe { self.last.add(bit) })
        } else {
            None
        }
    }

    /// Folds `f` over the slots left, lowest first.
    #[inline]
    fn fold<B>(self, init: B, f: &mut impl SlotFold<T, P, Q, B>) -> B {
        let mut acc = init;
        if self.in_run() {
            // The end is consumed: the run left is folded once.
            // SAFETY: `last`, the run's last slot, was made from `ptrs`.
            acc = unsafe {
                let past = self.last.index(self.ptrs) + 1;
                fold_run::<T, P, Q, B>(self.ptrs, past - self.run_len(), past, acc, f)
            };
        }
        let mut bits = self.bits;
        if bits != 0 {
            // SAFETY: the position of bit 0, made from `ptrs`.
            let base = unsafe { self.last.index(self.ptrs) };
            while bits != 0 {
                acc = f.at_index(acc, self.ptrs, base + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
        acc
    }
}

/// A container's way of finding its live slots: it hands out the occupied
/// slots of the part of the storage it has not handed out yet, as pieces
/// from either end, and folds over all of them at once. The walk keeps no
/// count of its own: the cursor tells it how many occupied slots it has
/// left (`left`), which lets a walk hand out a rest that is all occupied
/// as one run without reading it, and stop at the last live slot.
///
/// # Safety
///
/// - Every index a piece (or `fold`'s closure) names is an occupied slot
///   of the borrowed storage, reached through the piece's pointers (see
///   [`SlotPtrs`]).
/// - Over the walk's life, `front`, `back` and `fold` together name each
///   occupied slot at most once: the walk hands out from the bottom of its
///   part at the front and from the top at the back, and shrinks the part
///   past what it handed out.
/// - `front` hands out pieces in ascending order, each above every piece
///   `front` handed out before; `back` in descending order, each below
///   every piece `back` handed out before. Once either returns `None`,
///   the walk has nothing left: both return `None` from then on, and
///   `fold` folds nothing.
/// - `fold` folds over the indices left, ascending.
/// - `left` is the number of occupied slots the walk has not handed out,
///   exactly, unless the walk is a part of one split for parallel
///   iteration that says its counts are bounds (counting would cost a
///   pass): then an upper bound, which it must not rely on for more.
pub unsafe trait Walk<T>: Sized {
    /// The pointers of the pieces.
    type Ptrs: SlotPtrs<T>;

    /// Pointers for an end that holds nothing (never read).
    fn no_ptrs(&self) -> Self::Ptrs;

    /// The next piece from the bottom, or `None` if there is none left;
    /// `left` occupied slots are left.
    fn front(&mut self, left: usize) -> Option<Piece<Self::Ptrs>>;

    /// The next piece from the top, or `None` if there is none left.
    fn back(&mut self, left: usize) -> Option<Piece<Self::Ptrs>>;

    /// Folds `f` over the `left` occupied slots left, ascending: a run
    /// known to be all occupied with [`fold_run`], the others by flat
    /// index.
    fn fold<B, Q: RunPos<T, Self::Ptrs>>(
        self,
        left: usize,
        init: B,
        f: &mut impl SlotFold<T, Self::Ptrs, Q, B>,
    ) -> B;

    /// Cuts the walk, which has `left` occupied slots, into two over
    /// disjoint slots, the left part's all below the right part's, each
    /// with its count (exact if the walk stays exact, else a bound); or
    /// gives it back whole.
    #[cfg(any(test, feature = "rayon"))]
    fn split(self, left: usize) -> ((Self, usize), Option<(Self, usize)>);
}

/// Which end of a cursor a refill serves: [`Lowest`] (the front, for
/// `next`) or [`Highest`] (the back, for `next_back`), so that the refill
/// is written once for both.
trait EndSide {
    /// The walk's next piece from this side.
    fn piece<T, W: Walk<T>>(walk: &mut W, left: usize) -> Option<Piece<W::Ptrs>>;
    /// Empties the opposite end in place once this end has taken over
    /// what it held: its run closes where this side would take next.
    fn empty_opposite<T, P: SlotPtrs<T>, Q: RunPos<T, P>>(opposite: &mut End<T, P, Q>);
}

/// The front's side: pieces from the bottom, lowest slot first.
enum Lowest {}

/// The back's side: pieces from the top, highest slot first.
enum Highest {}

impl EndSide for Lowest {
    #[inline(always)]
    fn piece<T, W: Walk<T>>(walk: &mut W, left: usize) -> Option<Piece<W::Ptrs>> {
        walk.front(left)
    }
    #[inline(always)]
    fn empty_opposite<T, P: SlotPtrs<T>, Q: RunPos<T, P>>(back: &mut End<T, P, Q>) {
        back.before = back.last;
        back.bits = 0;
    }
}

impl EndSide for Highest {
    #[inline(always)]
    fn piece<T, W: Walk<T>>(walk: &mut W, left: usize) -> Option<Piece<W::Ptrs>> {
        walk.back(left)
    }
    #[inline(always)]
    fn empty_opposite<T, P: SlotPtrs<T>, Q: RunPos<T, P>>(front: &mut End<T, P, Q>) {
        front.last = front.before;
        front.bits = 0;
    }
}

/// The unit pointer of a walk's pieces, the position a cursor for values
/// alone keeps (see [`RunPos`]).
pub(crate) type UnitOf<T, W> = *mut <<W as Walk<T>>::Ptrs as SlotPtrs<T>>::Unit;

/// Iterates the live slots a walk finds as `(flat index, generation,
/// value)`, from both ends, with the values made as `R` (`&'a T` or
/// `&'a mut T`), the positions of the ends' runs kept as `Q` (flat
/// indices by default; see [`RunPos`]).
pub(crate) struct Cursor<'a, T, W: Walk<T>, R, Q: RunPos<T, W::Ptrs> = usize> {
    /// The piece `next()` takes from.
    front: End<T, W::Ptrs, Q>,
    /// The piece `next_back()` takes from.
    back: End<T, W::Ptrs, Q>,
    /// The live values left but for the runs of the two ends: what the
    /// walk has left plus the bits of the two masks. A run is counted off
    /// whole when an end takes it, a bit when it is taken, so that no step
    /// counts the bits of a mask (a population count is a dozen
    /// instructions where the target has no instruction for it).
    /// Invariant: exact when the walk is; else an upper bound.
    remaining: usize,
    /// The slots not yet handed to either end. Invariant: everything
    /// `front` holds lies below everything the walk has left, and that
    /// below everything `back` holds; the two ends hold distinct occupied
    /// slots.
    walk: W,
    _values: PhantomData<(&'a T, R)>,
}

// SAFETY: the cursor hands out `R`s to distinct values of the storage it
// borrows; the walk reads only headers and state words, never a value.
// So it may be sent wherever an `R` may.
unsafe impl<T, W: Walk<T>, R: Send, Q: RunPos<T, W::Ptrs>> Send for Cursor<'_, T, W, R, Q> {}
// SAFETY: a shared cursor gives access to nothing but its own fields.
unsafe impl<T, W: Walk<T>, R: Sync, Q: RunPos<T, W::Ptrs>> Sync for Cursor<'_, T, W, R, Q> {}

impl<'a, T, W: Walk<T> + Clone, Q: RunPos<T, W::Ptrs>> Clone for Cursor<'a, T, W, &'a T, Q> {
    fn clone(&self) -> Self {
        Cursor {
            front: self.front,
            back: self.back,
            remaining: self.remaining,
            walk: self.walk.clone(),
            _values: PhantomData,
        }
    }
}

impl<'a, T, W: Walk<T>, R: ValueRef<T>, Q: RunPos<T, W::Ptrs>> Cursor<'a, T, W, R, Q> {
    /// A cursor over what `walk` finds, `len` live values (exact if the
    /// walk is, else a bound).
    ///
    /// # Safety
    ///
    /// The walk's storage is borrowed for `'a`: shared if `R` is `&'a T`
    /// (nothing writes the values), exclusive if `R` is `&'a mut T`
    /// (nothing else reaches them).
    #[inline]
    pub(crate) unsafe fn new(walk: W, len: usize) -> Self {
        let ptrs = walk.no_ptrs();
        Cursor {
            front: End::empty(ptrs),
            back: End::empty(ptrs),
            remaining: len,
            walk,
            _values: PhantomData,
        }
    }

    /// The same cursor with the positions of its runs kept as `Q2`: a
    /// cursor for values alone steps unit pointers (see [`RunPos`]).
    #[inline]
    pub(crate) fn with_pos<Q2: RunPos<T, W::Ptrs>>(self) -> Cursor<'a, T, W, R, Q2> {
        Cursor {
            front: self.front.with_pos(),
            back: self.back.with_pos(),
            remaining: self.remaining,
            walk: self.walk,
            _values: PhantomData,
        }
    }

    /// Live values left (exact when the walk is).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.remaining + self.front.run_len() + self.back.run_len()
    }

    /// Occupied slots the walk has left, given the bits `other` (the end
    /// not being refilled) holds; the end being refilled is empty.
    #[inline(always)]
    fn walk_left(remaining: usize, other: &End<T, W::Ptrs, Q>) -> usize {
        if other.bits == 0 {
            remaining
        } else {
            remaining.saturating_sub(other.bits.count_ones() as usize)
        }
    }

    /// The next piece for end `E` (the front for [`Lowest`], the back for
    /// [`Highest`]), not empty, with a run counted off whole (a mask's bits
    /// are counted off as they are taken); or, when the walk is done, what
    /// `other` (the opposite end) holds, if anything (its run was counted
    /// when that end took it). Nothing is taken: `next()` goes round again
    /// and takes the first slot the way it takes every other, so that its
    /// item is made in one place. (Taken here, the slot's item was made on
    /// this path too, and the optimizer merged the two into one read after
    /// them: through an address kept in a register, where a run's own read
    /// adds the index to the base in the load; a `for` loop over a `Hive`
    /// with keys took 11 instructions an item where `IdTable`'s took 8.)
    ///
    /// Inlined whole: the end is then given back in registers, so a loop
    /// keeps it there and its `next()` is the compare and increment of a
    /// run, or the bit steps of a mask; a refill called out of line, or
    /// one that borrowed the end, kept it in memory, a store and a reload
    /// per value.
    #[inline(always)]
    fn refill<E: EndSide>(
        walk: &mut W,
        other: &mut End<T, W::Ptrs, Q>,
        remaining: &mut usize,
    ) -> Option<End<T, W::Ptrs, Q>> {
        loop {
            let Some(piece) = E::piece(walk, Self::walk_left(*remaining, other)) else {
                // Emptied in place, not replaced by `End::empty`: its
                // positions then stay what they were, and a `for` loop over
                // values needs no register copies on every item to merge
                // this path's constants into the loop (1.5x faster).
                let rest = *other;
                E::empty_opposite(other);
                return (!rest.is_empty()).then_some(rest);
            };
            let end = End::of(piece);
            if !end.is_empty() {
                *remaining = remaining.saturating_sub(end.run_len());
                return Some(end);
            }
        }
    }

    /// Folds `f` over every item left, in order: the front's piece, the
    /// walk's own fold, the back's piece.
    #[inline]
    pub(crate) fn fold_items<B>(self, init: B, f: impl FnMut(B, (usize, u32, R)) -> B) -> B {
        let mut take = TakeItems {
            f,
            _items: PhantomData,
        };
        let mut left = self.remaining;
        for bits in [self.front.bits, self.back.bits] {
            if bits != 0 {
                left = left.saturating_sub(bits.count_ones() as usize);
            }
        }
        let acc = self.front.fold(init, &mut take);
        let acc = self.walk.fold::<B, Q>(left, acc, &mut take);
        self.back.fold(acc, &mut take)
    }
}

/// The [`SlotFold`] of [`Cursor::fold_items`]: makes each slot's item as
/// an `R` and hands it to the caller's closure.
struct TakeItems<F, R> {
    f: F,
    _items: PhantomData<fn() -> R>,
}

impl<T, P, Q, R, B, F> SlotFold<T, P, Q, B> for TakeItems<F, R>
where
    P: SlotPtrs<T>,
    Q: RunPos<T, P>,
    R: ValueRef<T>,
    F: FnMut(B, (usize, u32, R)) -> B,
{
    #[inline(always)]
    fn at_index(&mut self, acc: B, ptrs: P, index: usize) -> B {
        // SAFETY: an end or the walk's fold names an occupied slot reached
        // through these pointers, once (`End::ptrs`, the walk's contract).
        (self.f)(acc, unsafe { item(ptrs, index) })
    }

    #[inline(always)]
    fn at_pos(&mut self, acc: B, ptrs: P, at: Q) -> B {
        // SAFETY: as in `at_index`, by its position.
        (self.f)(acc, unsafe { at.item(ptrs) })
    }
}

impl<'a, T, W: Walk<T>, R: ValueRef<T>, Q: RunPos<T, W::Ptrs>> Iterator for Cursor<'a, T, W, R, Q> {
    type Item = (usize, u32, R);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        // The run's way and the mask's way each return their own item.
        // Merged into one read after the two, the loop's registers were
        // shuffled on every item to meet the other path (a `for` loop over
        // a full table took up to 1.5x SlotMap's time); with only the run's
        // path apart, a loop over a table with holes was 1.5-2x slower. A
        // refill takes nothing: the loop goes round and takes the new
        // piece's first slot one of the two ways (see `refill`). The refill
        // is marked rare, so that the allocator favours the other two.
        loop {
            self.front.ptrs.hint_not_null();
            if self.front.in_run() {
                // The run's next slot; the run now starts past it (`End::before`).
                let taken = self.front.before.step();
                self.front.before = taken;
                taken.hint_not_null();
                // The run moved past `taken`: it is taken once.
                // SAFETY: an occupied slot of the front's run (`End::ptrs`).
                return Some(unsafe { taken.item(self.front.ptrs) });
            }
            if self.front.bits != 0 {
                self.remaining -= 1;
                let taken = self.front.take_masked();
                taken.hint_not_null();
                // SAFETY: a set bit of the front's mask: an occupied slot reached
                // through its pointers (`End::ptrs`); the bit is cleared: taken once.
                return Some(unsafe { taken.item(self.front.ptrs) });
            }
            refill_is_rare();
            self.front =
                Self::refill::<Lowest>(&mut self.walk, &mut self.back, &mut self.remaining)?;
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let len = self.len();
        (len, Some(len))
    }

    #[inline]
    fn fold<B, F: FnMut(B, Self::Item) -> B>(self, init: B, f: F) -> B {
        self.fold_items(init, f)
    }
}

impl<'a, T, W: Walk<T>, R: ValueRef<T>, Q: RunPos<T, W::Ptrs>> DoubleEndedIterator
    for Cursor<'a, T, W, R, Q>
{
    #[inline(always)]
    fn next_back(&mut self) -> Option<Self::Item> {
        // As `next`, from the top.
        loop {
            self.back.ptrs.hint_not_null();
            if self.back.in_run() {
                let taken = self.back.last;
                self.back.last = taken.step_back();
                taken.hint_not_null();
                // SAFETY: as in `next`, the top of the back's run, which now
                // ends below it: taken once.
                return Some(unsafe { taken.item(self.back.ptrs) });
            }
            if self.back.bits != 0 {
                let bit = 63 - self.back.bits.leading_zeros() as usize;
                self.back.bits ^= 1 << bit;
                self.remaining -= 1;
                self.back.last.hint_not_null();
                // SAFETY: as in `next`, the highest set bit of the back's mask.
                return Some(unsafe { self.back.last.add(bit).item(self.back.ptrs) });
            }
            refill_is_rare();
            self.back =
                Self::refill::<Highest>(&mut self.walk, &mut self.front, &mut self.remaining)?;
        }
    }
}

// Exact for every cursor a container hands out (their walks are exact);
// the parts of a split `Pool` walk have a bound instead, but they are only
// folded, never asked their length.
impl<T, W: Walk<T>, R: ValueRef<T>, Q: RunPos<T, W::Ptrs>> ExactSizeIterator
    for Cursor<'_, T, W, R, Q>
{
}

// A walk that has returned `None` keeps returning it (the walk's
// contract), and so do the ends once empty.
impl<T, W: Walk<T>, R: ValueRef<T>, Q: RunPos<T, W::Ptrs>> core::iter::FusedIterator
    for Cursor<'_, T, W, R, Q>
{
}

#[cfg(any(test, feature = "rayon"))]
impl<'a, T, W: Walk<T>, R: ValueRef<T>, Q: RunPos<T, W::Ptrs>> super::SplitCursor
    for Cursor<'a, T, W, R, Q>
{
    type Item = (usize, u32, R);

    /// Cuts the walk (see [`Walk::split`]); a cursor whose ends hold
    /// anything is not cut (parallel iteration cuts only fresh cursors).
    fn split_part(self) -> (Self, Option<Self>) {
        if !self.front.is_empty() || !self.back.is_empty() {
            return (self, None);
        }
        let ((left, left_len), right) = self.walk.split(self.remaining);
        // SAFETY: the parts hold disjoint slots of the same borrowed
        // storage (the walk's contract), so each is handed out once.
        unsafe {
            (
                Self::new(left, left_len),
                right.map(|(right, right_len)| Self::new(right, right_len)),
            )
        }
    }

    #[inline]
    fn fold_part<B>(self, init: B, f: impl FnMut(B, Self::Item) -> B) -> B {
        self.fold_items(init, f)
    }
}

/// Checks a shared cursor against `expected` (its `(index, generation,
/// value)` items in order): `next()` alone, `next_back()` alone, the two
/// taken in turns by a seeded pattern until they meet, and a fold after a
/// few steps from each end, with `len` and `size_hint` checked after every
/// step. `make` gives a fresh cursor each time.
#[cfg(test)]
pub(crate) fn check_cursor<'a, V, C>(make: impl Fn() -> C, expected: &[(usize, u32, V)])
where
    V: Copy + PartialEq + core::fmt::Debug + 'a,
    C: DoubleEndedIterator<Item = (usize, u32, &'a V)> + ExactSizeIterator,
{
    use alloc::vec::Vec;
    let plain = |(index, generation, value): (usize, u32, &V)| (index, generation, *value);
    let check_len = |cursor: &C, left: usize| {
        assert_eq!(cursor.len(), left);
        assert_eq!(cursor.size_hint(), (left, Some(left)));
    };
    // Forward, then fused.
    let mut cursor = make();
    for (taken, want) in expected.iter().enumerate() {
        check_len(&cursor, expected.len() - taken);
        assert_eq!(cursor.next().map(plain), Some(*want));
    }
    check_len(&cursor, 0);
    assert!(cursor.next().is_none() && cursor.next_back().is_none() && cursor.next().is_none());
    // Backward.
    let mut cursor = make();
    for (taken, want) in expected.iter().rev().enumerate() {
        check_len(&cursor, expected.len() - taken);
        assert_eq!(cursor.next_back().map(plain), Some(*want));
    }
    assert!(cursor.next_back().is_none() && cursor.next().is_none());
    // Both ends in turns, meeting anywhere in the middle.
    let seeds = if cfg!(miri) { 1 } else { 8u64 };
    for seed in 0..seeds {
        let mut cursor = make();
        let (mut low, mut high) = (0, expected.len());
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        while low < high {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if state % 3 == 0 {
                high -= 1;
                assert_eq!(cursor.next_back().map(plain), Some(expected[high]));
            } else {
                assert_eq!(cursor.next().map(plain), Some(expected[low]));
                low += 1;
            }
            check_len(&cursor, high - low);
        }
        assert!(cursor.next().is_none() && cursor.next_back().is_none());
    }
    // A fold after steps from both ends sees exactly what is left.
    for (front, back) in [(0, 0), (1, 0), (0, 1), (3, 2), (70, 70)] {
        let mut cursor = make();
        let front = front.min(expected.len());
        let back = back.min(expected.len() - front);
        for _ in 0..front {
            cursor.next();
        }
        for _ in 0..back {
            cursor.next_back();
        }
        let rest: Vec<_> = cursor.fold(Vec::new(), |mut items, item| {
            items.push(plain(item));
            items
        });
        assert_eq!(rest, expected[front..expected.len() - back]);
    }
}

/// [`check_cursor`] for the same cursors with their runs kept as unit
/// pointers and as indices with their units ([`Cursor::with_pos`]), made
/// fresh, and made after a few steps from each end (the ends' pieces
/// converted mid-way).
#[cfg(test)]
pub(crate) fn check_by_unit<'a, T, W: Walk<T> + 'a>(
    make: impl Fn() -> Cursor<'a, T, W, &'a T>,
    expected: &[(usize, u32, T)],
) where
    T: Copy + PartialEq + core::fmt::Debug + 'a,
{
    check_by_pos::<T, W, UnitOf<T, W>>(&make, expected);
    check_by_pos::<T, W, IndexedOf<T, W>>(&make, expected);
}

/// [`check_by_unit`] for one kind of position.
#[cfg(test)]
fn check_by_pos<'a, T, W: Walk<T> + 'a, Q: RunPos<T, W::Ptrs>>(
    make: &impl Fn() -> Cursor<'a, T, W, &'a T>,
    expected: &[(usize, u32, T)],
) where
    T: Copy + PartialEq + core::fmt::Debug + 'a,
{
    use alloc::vec::Vec;
    check_cursor(|| make().with_pos::<Q>(), expected);
    for steps in [1, 2, 3, 65] {
        let front = steps.min(expected.len());
        let back = steps.min(expected.len() - front);
        let mut cursor = make();
        for _ in 0..front {
            cursor.next();
        }
        for _ in 0..back {
            cursor.next_back();
        }
        let converted = cursor.with_pos::<Q>();
        assert_eq!(converted.len(), expected.len() - front - back);
        let rest: Vec<(usize, u32, T)> = converted
            .map(|(index, generation, &value)| (index, generation, value))
            .collect();
        assert_eq!(rest, expected[front..expected.len() - back]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::table::RawTable;

    /// A fold that collects the flat indices it is given.
    struct Indices;

    impl SlotFold<(), (), usize, alloc::vec::Vec<usize>> for Indices {
        fn at_index(
            &mut self,
            mut acc: alloc::vec::Vec<usize>,
            (): (),
            index: usize,
        ) -> alloc::vec::Vec<usize> {
            acc.push(index);
            acc
        }
        fn at_pos(
            &mut self,
            acc: alloc::vec::Vec<usize>,
            (): (),
            at: usize,
        ) -> alloc::vec::Vec<usize> {
            self.at_index(acc, (), at)
        }
    }

    // SAFETY: no pointers at all: for the tests of `End` over flat
    // indices, which never reach a slot.
    unsafe impl SlotPtrs<()> for () {
        type Unit = u32;
        const INLINE_UNIT_FOLD: bool = false;
        unsafe fn unit_at(self, _: usize) -> NonNull<u32> {
            unreachable!("flat indices only")
        }
        unsafe fn index_of(self, _: NonNull<u32>) -> usize {
            unreachable!("flat indices only")
        }
        unsafe fn state_of(self, _: NonNull<u32>, _: usize) -> *const u32 {
            unreachable!("flat indices only")
        }
        unsafe fn payload_of(self, _: NonNull<u32>) -> *mut Payload<()> {
            unreachable!("flat indices only")
        }
        unsafe fn state_at(self, _: usize) -> *const u32 {
            unreachable!("flat indices only")
        }
        unsafe fn payload_at(self, _: usize) -> *mut Payload<()> {
            unreachable!("flat indices only")
        }
    }

    #[test]
    fn an_end_yields_its_piece_from_both_ends() {
        let patterns = [
            1u64,
            u64::MAX,
            1 << 63,
            0x8000_0000_0000_0001,
            0xF0F0_0000_0000_0F0F,
            0x0123_4567_89AB_CDEF,
            !1,
            u64::MAX >> 1,
        ];
        for pattern in patterns {
            let expected: alloc::vec::Vec<usize> = (0..64)
                .filter(|&i| pattern >> i & 1 == 1)
                .map(|i| i + 100)
                .collect();
            let piece = || {
                Piece::Bits(Bits {
                    ptrs: (),
                    base: 100,
                    bits: pattern,
                })
            };
            let mut up = End::<(), (), usize>::of(piece());
            let found: alloc::vec::Vec<usize> =
                core::iter::from_fn(|| up.take_first_pos()).collect();
            assert_eq!(found, expected);
            assert!(up.is_empty());
            let mut down = End::<(), (), usize>::of(piece());
            let mut found: alloc::vec::Vec<usize> =
                core::iter::from_fn(|| down.take_last_pos()).collect();
            found.reverse();
            assert_eq!(found, expected);
            let folded =
                End::<(), (), usize>::of(piece()).fold(alloc::vec::Vec::new(), &mut Indices);
            assert_eq!(folded, expected);
        }
        let mut run = End::<(), (), usize>::of(Piece::Run(Run {
            ptrs: (),
            next: 5,
            end: 9,
        }));
        assert_eq!(run.take_last_pos(), Some(8));
        assert_eq!(run.take_first_pos(), Some(5));
        // Slots 6 and 7 are left: after 5, up to 7.
        assert_eq!((run.before, run.last, run.run_len()), (5, 7, 2));
        assert_eq!(run.take_first_pos(), Some(6));
        assert_eq!(run.take_last_pos(), Some(7));
        assert!(run.is_empty() && run.take_first_pos().is_none());
        // A run from slot 0 starts after the wrapped position before it.
        let mut from_zero = End::<(), (), usize>::of(Piece::Run(Run {
            ptrs: (),
            next: 0,
            end: 2,
        }));
        assert_eq!(from_zero.run_len(), 2);
        assert_eq!(from_zero.take_last_pos(), Some(1));
        assert_eq!(from_zero.take_last_pos(), Some(0));
        assert!(from_zero.is_empty() && from_zero.take_first_pos().is_none());
    }

    /// The patterns of holes the container walks are checked against:
    /// none, all, alternate, runs ending at word and block boundaries.
    const PATTERNS: [fn(usize) -> bool; 8] = [
        |_| true,
        |_| false,
        |i| i % 2 == 0,
        |i| i % 17 == 3 || i > 150,
        |i| i < 64 || (128..200).contains(&i),
        |i| i % 64 == 63 || i % 64 == 0,
        |i| (60..70).contains(&(i % 128)),
        |i| i % 20 == 0,
    ];

    /// The patterns a walk test runs over `len` slots for its value type
    /// `half` (0 or 1): all of them. Under Miri, every other one, and over
    /// the long table half of those: the first two for one value type, the
    /// last two for the other, so that the pair walks each (a long table's
    /// checks take about 3 s of Miri's clock a pattern).
    fn patterns(len: usize, half: usize) -> impl Iterator<Item = fn(usize) -> bool> {
        let runs = move |i: usize| !cfg!(miri) || (i % 2 == 0 && (len < 64 || i / 4 == half));
        PATTERNS
            .into_iter()
            .enumerate()
            .filter(move |&(i, _)| runs(i))
            .map(|(_, pattern)| pattern)
    }

    /// The table sizes of the walk tests: runs ending before, at and past
    /// 64-slot words and blocks (fewer under Miri).
    const LENS: &[usize] = if cfg!(miri) {
        &[1, 130]
    } else {
        &[0, 1, 63, 64, 65, 130, 300]
    };

    /// A pool's walk over every pattern of holes, values made by `value`
    /// (the test's value type `half`: see [`patterns`]).
    fn pool_patterns<V: Copy + PartialEq + core::fmt::Debug>(value: fn(usize) -> V, half: usize) {
        use crate::raw::pool::RawPool;
        use crate::raw::KeyLimits;
        for &len in LENS {
            for pattern in patterns(len, half) {
                // Blocks of 16 slots: runs cross and end at block edges.
                let mut pool = RawPool::<V>::new(KeyLimits::of::<crate::PoolKey>(), 4);
                let keys: alloc::vec::Vec<_> = (0..len)
                    .map(|i| pool.try_insert_with(|_, _| value(i)).expect("room"))
                    .collect();
                for &(index, generation) in &keys {
                    if !pattern(index) {
                        pool.remove(index, generation);
                    }
                }
                let expected: alloc::vec::Vec<(usize, u32, V)> = keys
                    .iter()
                    .filter(|key| pattern(key.0))
                    .map(|&(index, generation)| (index, generation, value(index)))
                    .collect();
                // Collected through `fold`.
                let folded: alloc::vec::Vec<_> = pool
                    .iter()
                    .map(|(index, generation, &v)| (index, generation, v))
                    .collect();
                assert_eq!(folded, expected);
                check_cursor(|| pool.iter(), &expected);
                check_by_unit(|| pool.iter(), &expected);
                check_exclusive_rev(pool.iter_mut(), &expected);
            }
        }
    }

    /// The exclusive cursor `cursor`, taken from the back, yields each
    /// slot of `expected` once, with its value.
    fn check_exclusive_rev<'a, V: Copy + PartialEq + core::fmt::Debug + 'a>(
        cursor: impl DoubleEndedIterator<Item = (usize, u32, &'a mut V)>,
        expected: &[(usize, u32, V)],
    ) {
        let mut taken = 0;
        for (index, generation, slot_value) in cursor.rev() {
            let at = expected.len() - 1 - taken;
            assert_eq!((index, generation, *slot_value), expected[at]);
            taken += 1;
        }
        assert_eq!(taken, expected.len());
    }

    #[test]
    fn pool_walks_every_pattern() {
        pool_patterns(|i| i as u64, 0);
        // 12-byte values: the cursors with keys step units beside indices.
        pool_patterns(|i| [i as u32, 3, !(i as u32)], 1);
    }

    /// A hive's walk over every pattern of holes, values made by `value`
    /// (and by `value(5000 + n)` for the values that refill freed slots;
    /// the test's value type `half`: see [`patterns`]).
    fn hive_patterns<V: Copy + PartialEq + core::fmt::Debug>(value: fn(usize) -> V, half: usize) {
        use crate::raw::hive::RawHive;
        use crate::raw::KeyLimits;
        for &len in LENS {
            for pattern in patterns(len, half) {
                // Blocks from 4 to 64 slots.
                let mut hive = RawHive::<V>::new(KeyLimits::of::<crate::Id>(), 2, 6);
                let keys: alloc::vec::Vec<_> = (0..len)
                    .map(|n| hive.try_insert_with(|_, _| value(n)).expect("room"))
                    .collect();
                for (n, &(index, generation)) in keys.iter().enumerate() {
                    if !pattern(n) {
                        hive.remove(index, generation);
                    }
                }
                // Some values go back into freed slots, which then have bits
                // where their block's appended run had none.
                let mut refill = alloc::vec::Vec::new();
                for n in 0..len / 7 {
                    refill.push(hive.try_insert_with(|_, _| value(5000 + n)).expect("room"));
                }
                let mut expected: alloc::vec::Vec<(usize, u32, V)> =
                    keys.iter()
                        .enumerate()
                        .filter(|&(n, _)| pattern(n))
                        .map(|(n, &(index, generation))| (index, generation, value(n)))
                        .chain(
                            refill.iter().enumerate().map(|(n, &(index, generation))| {
                                (index, generation, value(5000 + n))
                            }),
                        )
                        .collect();
                expected.sort_unstable_by_key(|&(index, _, _)| index);
                // Collected through `fold`.
                let folded: alloc::vec::Vec<_> = hive
                    .iter()
                    .map(|(index, generation, &v)| (index, generation, v))
                    .collect();
                assert_eq!(folded, expected);
                check_cursor(|| hive.iter(), &expected);
                check_by_unit(|| hive.iter(), &expected);
                check_exclusive_rev(hive.iter_mut(), &expected);
            }
        }
    }

    #[test]
    fn hive_walks_every_pattern() {
        hive_patterns(|n| n as u64, 0);
        // 12-byte values, as for the pool.
        hive_patterns(|n| [n as u32, 3, !(n as u32)], 1);
    }
}
