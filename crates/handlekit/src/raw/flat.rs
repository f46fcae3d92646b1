//! `FlatSlots`: the slots of a `Pool`. Their payloads lie in blocks of one
//! size that never move, laid end to end over the flat indices and reached
//! through a directory of block pointers; their state words lie in one
//! array over all the flat indices. And `FlatWalk`, iteration over them.
//!
//! Flat index `index` has its state word at `states + index` and its
//! payload in block `index >> shift`. A block is a bare array of payloads,
//! with no header, no occupancy bits and no counters. Everything a pool
//! counts lives in this one struct (`used`, `slots`) or in `RawPool`. So an
//! operation by key checks the index against `used`, reads the state word
//! at an address that needs no directory, and only then the directory
//! entry (8 bytes per block) and the payload. The slots ever used are the
//! flat indices `0..used`, initialized.
//!
//! Why one state array: the generation check, which decides everything a
//! lookup does, then waits on one load, as in `IdTable`, and the payload's
//! block is found beside it. With a state array per block, a lookup took
//! 18 instructions to `IdTable`'s 11 and a removal 33 to its 25 (callgrind,
//! the `instructions` example). The state array grows by doubling and is
//! copied when it does; the values never move, which is what a pool
//! promises.
//!
//! Why no occupancy bits: `Pool` is the allocator of seed 001, made to
//! insert and remove fast and to keep its values in place. Clearing and
//! setting a bit on every removal and reuse measured 0.5 to 0.8 ns per
//! removal in `IdTable` (the same word loop). The state words, in an array
//! of their own, are the occupancy instead: `FlatWalk` turns 64 of them
//! into a mask at a time, as `StoreWalk` does for the slot store.
//!
//! # Why raw pointers
//!
//! As for `Block` (see `block.rs`): the slots are reached only through the
//! pointers their arrays were allocated with, and references are made to
//! the parts of one slot at a time, never to an array. A pointer from
//! [`FlatSlots::value_ptr`] therefore stays valid (under Stacked Borrows
//! and Tree Borrows, which Miri checks) while other slots are read and
//! written, and while the state array is reallocated.

use alloc::collections::TryReserveError;
use alloc::vec::Vec;
use core::marker::PhantomData;
use core::mem;
use core::ptr::{self, NonNull};

use super::bitset::{pop_lowest, WORD_BITS};
use super::cursor::{fold_run, Bits, Cursor, Piece, Run, RunPos, SlotFold, SlotPtrs, Walk};
use super::layout::{allocate_uninit, free_uninit, FlatBases, StateWords};
use super::slot::{Payload, Slot, SlotMut, SlotRef, NO_SLOT};
use super::state_mask::{occupied_mask, partial_occupied_mask};

/// Slots over the flat indices `0..slots`, of which `0..used` have been
/// used: one array of state words, and payloads in blocks of `1 << shift`
/// (the last may be shorter).
pub(crate) struct FlatSlots<T> {
    /// The state words of the flat indices `0..states.capacity()`.
    /// Invariant: the words of `0..used` are initialized, each describing
    /// its slot's payload as `Slot::state` says; the others are not;
    /// `slots <= states.capacity()`.
    states: StateWords,
    /// Each block's payloads, moved back by the block's first flat index
    /// (as `Split::flat` does): the payload of flat index `index` in
    /// block `b` is at `blocks[b].wrapping_add(index)`. Invariant:
    /// `blocks[b].wrapping_add(b << shift)` was made by
    /// `allocate_uninit(self.block_len(b))`, is freed only in `Drop` and is
    /// never moved or reallocated; the payloads of `0..used` are
    /// initialized, the others are not; no reference to a whole block is
    /// ever made, only to single payloads.
    blocks: Vec<*mut Payload<T>>,
    /// Slots per block, as a power of two. Invariant: `shift <= 31`.
    shift: u32,
    /// Slots of all blocks. Invariant: 0 if there is no block; else every
    /// block but the last has `1 << shift` slots and the last has
    /// `1..=1 << shift`; `slots <= u32::MAX`, so a flat index fits in a
    /// `u32` other than `NO_SLOT`.
    slots: usize,
    /// Slots ever used. Invariant: `used <= slots`.
    used: usize,
    /// Where `append` writes the payload: slot `used` has its payload at
    /// `append_payloads.wrapping_add(used)`. Kept so that an append reads
    /// neither `shift` nor the directory, and its stores do not wait on a
    /// directory load. Invariant: if `used < append_end`, this is
    /// `blocks[b]` for the block `b` that holds `used`; else unused.
    append_payloads: *mut Payload<T>,
    /// Invariant: `used <= append_end <= slots`; if `used < append_end`,
    /// it is the end of the block that holds `used`.
    append_end: usize,
    /// Owns `Slot<T>` values (for the drop checker and auto traits).
    _owns: PhantomData<Slot<T>>,
}

// SAFETY: the slots are owned as by a `Vec<Slot<T>>`; sending the table
// sends the values.
unsafe impl<T: Send> Send for FlatSlots<T> {}
// SAFETY: shared access hands out only `&T` and raw pointers (whose use is
// the caller's, as documented on `value_ptr`).
unsafe impl<T: Sync> Sync for FlatSlots<T> {}

impl<T> FlatSlots<T> {
    /// No blocks yet; blocks will have `1 << shift` slots.
    pub(crate) const fn new(shift: u32) -> Self {
        assert!(shift <= 31, "block size above 2^31 slots");
        FlatSlots {
            states: StateWords::new(),
            blocks: Vec::new(),
            shift,
            slots: 0,
            used: 0,
            append_payloads: ptr::null_mut(),
            append_end: 0,
            _owns: PhantomData,
        }
    }

    /// Slots per block, as a power of two.
    #[inline]
    pub(crate) fn shift(&self) -> u32 {
        self.shift
    }

    /// Slots of all blocks.
    #[inline]
    pub(crate) fn slots(&self) -> usize {
        self.slots
    }

    /// Slots ever used: the flat indices `0..used()`.
    #[inline]
    pub(crate) fn used(&self) -> usize {
        self.used
    }

    /// Blocks allocated.
    #[inline]
    pub(crate) fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// Heap bytes: the state array, the payloads and the directory.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.states.heap_bytes()
            + self.slots * mem::size_of::<Payload<T>>()
            + self.blocks.capacity() * mem::size_of::<*mut Payload<T>>()
    }

    /// Slots of block `b`, which must exist.
    fn block_len(&self, b: usize) -> usize {
        debug_assert!(b < self.blocks.len());
        if b + 1 == self.blocks.len() {
            self.slots - (b << self.shift)
        } else {
            1 << self.shift
        }
    }

    /// Whether a block can follow the last one (which must then be of
    /// full length).
    #[inline]
    pub(crate) fn can_add_block(&self) -> bool {
        self.slots == self.blocks.len() << self.shift
    }

    /// Allocates a block of `len` never-used slots after the others.
    ///
    /// # Panics
    ///
    /// If `len` is 0 or more than `1 << shift`, if the last block is
    /// shorter than that ([`can_add_block`](Self::can_add_block)), or if
    /// the slots would pass `u32::MAX`.
    pub(crate) fn try_add_block(&mut self, len: usize) -> Result<(), TryReserveError> {
        assert!(len > 0 && len <= 1 << self.shift, "block of {len} slots");
        assert!(self.can_add_block(), "block after a short block");
        assert!(self.slots + len <= u32::MAX as usize, "slots past u32::MAX");
        self.blocks.try_reserve(1)?;
        self.push_block(len);
        Ok(())
    }

    /// Allocates a block of `len` slots after the others, with room for
    /// its state words; the directory must have room for its entry.
    fn push_block(&mut self, len: usize) {
        debug_assert!(self.blocks.len() < self.blocks.capacity());
        // Doubling, so that adding blocks one by one copies each word O(1)
        // times.
        self.states.reserve(self.slots + len);
        let start = self.blocks.len() << self.shift;
        let payloads = allocate_uninit::<Payload<T>>(len);
        self.blocks.push(payloads.as_ptr().wrapping_sub(start));
        self.slots += len;
    }

    /// Makes room for blocks up to `slots` slots in all, exactly: the state
    /// array and the directory entries, so that adding those blocks copies
    /// nothing.
    pub(crate) fn reserve_exact(&mut self, slots: usize) -> Result<(), TryReserveError> {
        let blocks = slots.div_ceil(1 << self.shift);
        self.blocks
            .try_reserve_exact(blocks.saturating_sub(self.blocks.len()))?;
        self.states.reserve_exact(slots);
        Ok(())
    }

    /// Allocates a block of `len` never-used slots after the others, as
    /// [`try_add_block`](Self::try_add_block) does, with a directory entry
    /// of exactly the room it needs (for a fixed pool's one block);
    /// running out of memory is handled as by `Vec::push`.
    pub(crate) fn add_block(&mut self, len: usize) {
        self.blocks.reserve_exact(1);
        if self.try_add_block(len).is_err() {
            unreachable!("room for the block was reserved");
        }
    }

    /// The state word and payload of the used slot at `index`, if there is
    /// one; both initialized, as the state word says.
    #[inline]
    fn parts(&self, index: usize) -> Option<(*mut u32, *mut Payload<T>)> {
        if index >= self.used {
            return None;
        }
        // SAFETY: just checked.
        Some(unsafe { self.parts_unchecked(index) })
    }

    /// [`parts`](Self::parts) without the check against `used`: the one
    /// place that turns a flat index into slot pointers.
    ///
    /// # Safety
    ///
    /// `index` must be below `used`.
    #[inline]
    unsafe fn parts_unchecked(&self, index: usize) -> (*mut u32, *mut Payload<T>) {
        debug_assert!(index < self.used);
        let b = index >> self.shift;
        debug_assert!(b < self.blocks.len() && index - (b << self.shift) < self.block_len(b));
        // SAFETY: `index < used <= slots <= states.capacity()` (invariants
        // on `used` and `states`): in the state array.
        let state = unsafe { self.states.as_ptr().add(index) };
        // Blocks lie end to end from 0 (invariant on `slots`), so `index <
        // used <= slots` lies in block `b`.
        // SAFETY: so `b < blocks.len()`.
        let payloads = unsafe { *self.blocks.get_unchecked(b) };
        // In block `b`, so this leads back into its payloads (invariant on
        // `blocks`).
        (state, payloads.wrapping_add(index))
    }

    /// The used slot at `index`, if any.
    #[inline]
    pub(crate) fn slot(&self, index: usize) -> Option<SlotRef<'_, T>> {
        let (state, payload) = self.parts(index)?;
        // The references cover one slot and live no longer than `&self`,
        // during which nothing writes to it.
        // SAFETY: a used slot is initialized, its state word describing it.
        Some(unsafe { SlotRef::from_parts(&*state, &*payload) })
    }

    /// The used slot at `index`, if any, mutably.
    #[inline]
    pub(crate) fn slot_mut(&mut self, index: usize) -> Option<SlotMut<'_, T>> {
        let (state, payload) = self.parts(index)?;
        // SAFETY: as in `slot`; `&mut self` makes these the only
        // references into the slot.
        Some(unsafe { SlotMut::from_parts(&mut *state, &mut *payload) })
    }

    /// The used slot at `index`, mutably, without a bounds check (the
    /// free-list pop path).
    ///
    /// # Safety
    ///
    /// `index` must be below `used`.
    #[inline]
    pub(crate) unsafe fn slot_mut_unchecked(&mut self, index: usize) -> SlotMut<'_, T> {
        // SAFETY: the caller guarantees `index < used`.
        let (state, payload) = unsafe { self.parts_unchecked(index) };
        // SAFETY: as in `slot_mut`.
        unsafe { SlotMut::from_parts(&mut *state, &mut *payload) }
    }

    /// A pointer to the value named by `(index, generation)`, if live.
    #[inline]
    fn live_value(&self, index: usize, generation: u32) -> Option<*mut T> {
        let (state, payload) = self.parts(index)?;
        // A used slot's state word is initialized, and no `&mut` to it
        // exists while `self` is borrowed; `payload` is the slot's, in a
        // block's payloads.
        // SAFETY: so `matched_value`'s conditions hold.
        unsafe { Slot::<T>::matched_value(state, payload, generation) }
    }

    /// Whether `(index, generation)` names a live value.
    #[inline]
    pub(crate) fn is_live(&self, index: usize, generation: u32) -> bool {
        self.live_value(index, generation).is_some()
    }

    /// The value named by `(index, generation)`.
    #[inline]
    pub(crate) fn value(&self, index: usize, generation: u32) -> Option<&T> {
        let value = self.live_value(index, generation)?;
        // The slot matched a generation, so it is occupied and its value is
        // initialized (the invariant on `Slot::state`).
        // SAFETY: initialized, as just said; `&self` keeps every `&mut` to
        // it away for the borrow.
        Some(unsafe { &*value })
    }

    /// The value named by `(index, generation)`, mutably.
    #[inline]
    pub(crate) fn value_mut(&mut self, index: usize, generation: u32) -> Option<&mut T> {
        let value = self.live_value(index, generation)?;
        // SAFETY: occupied, as in `value`; `&mut self` makes the reference
        // unique.
        Some(unsafe { &mut *value })
    }

    /// A pointer to the value named by `(index, generation)`. It stays
    /// valid until that value is taken out or the table is dropped: blocks
    /// never move, and other slots are only ever reached through their own
    /// parts (see the module docs).
    #[inline]
    pub(crate) fn value_ptr(&self, index: usize, generation: u32) -> Option<NonNull<T>> {
        NonNull::new(self.live_value(index, generation)?)
    }

    /// The value at `index`.
    ///
    /// # Safety
    ///
    /// Slot `index` must be used and occupied.
    #[inline]
    pub(crate) unsafe fn value_unchecked(&self, index: usize) -> &T {
        debug_assert!(self.slot(index).is_some_and(SlotRef::is_occupied));
        // SAFETY: the caller guarantees `index < used`.
        let (_, payload) = unsafe { self.parts_unchecked(index) };
        // SAFETY: occupied (the caller's guarantee), so the value is
        // initialized; `&self` keeps writers away.
        unsafe { &*Payload::value_ptr(payload) }
    }

    /// The value at `index`, mutably.
    ///
    /// # Safety
    ///
    /// Slot `index` must be used and occupied.
    #[inline]
    pub(crate) unsafe fn value_unchecked_mut(&mut self, index: usize) -> &mut T {
        debug_assert!(self.slot(index).is_some_and(SlotRef::is_occupied));
        // SAFETY: the caller guarantees `index < used`.
        let (_, payload) = unsafe { self.parts_unchecked(index) };
        // SAFETY: as in `value_unchecked`; `&mut self` makes it unique.
        unsafe { &mut *Payload::value_ptr(payload) }
    }

    /// Mutable references to `N` distinct live values, each named by
    /// `(index, generation)`, or `None` if any is not live or two name the
    /// same slot.
    pub(crate) fn values_disjoint_mut<const N: usize>(
        &mut self,
        keys: [(usize, u32); N],
    ) -> Option<[&mut T; N]> {
        let mut values = [core::ptr::null_mut(); N];
        for (n, &(index, generation)) in keys.iter().enumerate() {
            values[n] = self.live_value(index, generation)?;
            // Two live keys with one slot are the same key.
            if keys[..n].iter().any(|&(other, _)| other == index) {
                return None;
            }
        }
        // Each pointer comes from its block's storage, with no reference to
        // a block in between, and `&mut self` outlives them all.
        // Every value above is live (initialized) and named once, and nothing
        // else reaches them while `self` is borrowed mutably.
        // SAFETY: so these are references to distinct, initialized values.
        Some(values.map(|value| unsafe { &mut *value }))
    }

    /// Takes the value named by `(index, generation)` out, if live, leaving
    /// the slot vacant with that generation as its last and the free-list
    /// link `next_free`.
    #[inline]
    pub(crate) fn take(&mut self, index: usize, generation: u32, next_free: u32) -> Option<T> {
        let (state, payload) = self.parts(index)?;
        // SAFETY: a used slot's state word is initialized.
        if unsafe { *state } != Slot::<T>::matched_generation(generation) {
            super::cold_path();
            return None;
        }
        // SAFETY: the slot is occupied (it matched a generation), and
        // `&mut self` makes these the only references into it.
        Some(unsafe { SlotMut::from_parts(&mut *state, &mut *payload).vacate(next_free) })
    }

    /// Whether [`append`](Self::append) can write in the block it last
    /// wrote to, with no call to [`seek_append`](Self::seek_append).
    #[inline]
    pub(crate) fn can_append_in_place(&self) -> bool {
        self.used < self.append_end
    }

    /// Points `append` at the block that holds slot `used`; false if every
    /// slot has been used (a block must be added first).
    #[cold]
    pub(crate) fn seek_append(&mut self) -> bool {
        if self.used == self.slots {
            return false;
        }
        let b = self.used >> self.shift;
        self.append_payloads = self.blocks[b];
        self.append_end = (b << self.shift) + self.block_len(b);
        true
    }

    /// Writes a slot at `used` and moves `used` on; returns its index.
    ///
    /// # Panics
    ///
    /// If every slot has been used (a block must be added first).
    #[inline]
    pub(crate) fn append(&mut self, state: u32, payload: Payload<T>) -> usize {
        if !self.can_append_in_place() {
            assert!(self.seek_append(), "append past the last block");
        }
        let index = self.used;
        // `used < append_end`, so the append base is the directory entry
        // of the block that holds `index` (invariant on `append_payloads`),
        // and `index < slots <= states.capacity()`.
        let payload_at = self.append_payloads.wrapping_add(index);
        // SAFETY: so both are in their arrays, and not initialized (`index
        // >= used`): writing drops nothing.
        unsafe {
            self.states.as_ptr().add(index).write(state);
            payload_at.write(payload);
        }
        self.used = index + 1;
        index
    }

    /// The lowest occupied index at or after `from`.
    pub(crate) fn next_occupied(&self, from: usize) -> Option<usize> {
        (from..self.used).find(|&index| self.slot(index).is_some_and(SlotRef::is_occupied))
    }

    /// Links every vacant used slot whose generation is below
    /// `max_generation` into a free list in index order (lowest first),
    /// and returns its head, the number of vacant slots and how many of
    /// them were left out (retired). One pass over the used slots,
    /// backwards, a block at a time; only vacant slots are written.
    pub(crate) fn link_vacant(&mut self, max_generation: u32) -> (u32, usize, usize) {
        let (mut head, mut vacant, mut retired) = (NO_SLOT, 0, 0);
        for b in (0..self.blocks.len()).rev() {
            let base = b << self.shift;
            let end = self.used.min(base + self.block_len(b));
            // A block at a time, so the directory is read once per block.
            let payloads = self.blocks[b];
            for index in (base..end).rev() {
                // `index < used` lies in block `b`, so its state word and
                // payload are initialized (invariants on `states`, `blocks`).
                // SAFETY: and `&mut self` makes these the only references.
                let slot = unsafe {
                    SlotMut::from_parts(
                        &mut *self.states.as_ptr().add(index),
                        &mut *payloads.wrapping_add(index),
                    )
                };
                let (occupied, generation) =
                    (slot.as_ref().is_occupied(), slot.as_ref().generation());
                if occupied {
                    continue;
                }
                vacant += 1;
                if generation >= max_generation {
                    retired += 1;
                    continue;
                }
                slot.set_next_free(head);
                // Below `slots <= u32::MAX` (invariant on `slots`).
                head = index as u32;
            }
        }
        (head, vacant, retired)
    }

    /// Drops every value, leaving the slots vacant with their generations
    /// and no links. If a `Drop` panics, the others are still dropped and
    /// the panic then propagates (a second panic aborts).
    pub(crate) fn drop_values(&mut self) {
        super::finish_on_panic(self, Self::drop_values_unguarded);
    }

    /// Drops every value; a panicking `Drop` stops it, leaving the rest in
    /// place and consistent.
    fn drop_values_unguarded(&mut self) {
        for index in 0..self.used {
            if let Some(slot) = self.slot_mut(index) {
                if slot.as_ref().is_occupied() {
                    // Vacated before the drop, so a panicking `Drop` cannot
                    // repeat it.
                    // SAFETY: the slot is occupied, as just checked.
                    drop(unsafe { slot.vacate(NO_SLOT) });
                }
            }
        }
    }

    /// Iterates the `len` live values (`len` must be their number).
    #[inline]
    pub(crate) fn iter(&self, len: usize) -> FlatIter<'_, T> {
        // SAFETY: `&self` keeps the slots from being written.
        unsafe { Cursor::new(FlatWalk::new(self), len) }
    }

    /// Iterates the `len` live values mutably.
    #[inline]
    pub(crate) fn iter_mut(&mut self, len: usize) -> FlatIterMut<'_, T> {
        // The values are reached through the blocks' raw pointers only,
        // exclusively, since `self` is borrowed mutably for the cursor's
        // lifetime.
        // SAFETY: as just said.
        unsafe { Cursor::new(FlatWalk::new(self), len) }
    }

    /// Checks the invariants of the directory and the counts; the caller
    /// checks the slots.
    pub(crate) fn check_invariants(&self) {
        assert!(self.used <= self.slots, "used past the slots");
        assert!(
            self.slots <= self.states.capacity(),
            "state array too short"
        );
        assert!(
            self.used <= self.append_end && self.append_end <= self.slots,
            "append end out of place"
        );
        if self.used < self.append_end {
            let b = self.used >> self.shift;
            assert_eq!(
                self.append_end,
                (b << self.shift) + self.block_len(b),
                "append end"
            );
            assert_eq!(self.append_payloads, self.blocks[b], "append base");
        }
        assert!(self.slots <= u32::MAX as usize, "slots past u32::MAX");
        match self.blocks.len() {
            0 => assert_eq!(self.slots, 0, "slots without blocks"),
            n => {
                let last = self.slots - ((n - 1) << self.shift);
                assert!(
                    (1..=1 << self.shift).contains(&last),
                    "last block of {last} slots"
                );
            }
        }
    }
}

impl<T> Drop for FlatSlots<T> {
    fn drop(&mut self) {
        /// Frees the blocks, after dropping whatever values remain (all of
        /// them if no `Drop` panicked).
        struct Free<'a, T>(&'a mut FlatSlots<T>);
        impl<T> Drop for Free<'_, T> {
            fn drop(&mut self) {
                if mem::needs_drop::<T>() {
                    self.0.drop_values_unguarded();
                }
                let slots = &mut *self.0;
                for b in 0..slots.blocks.len() {
                    let len = slots.block_len(b);
                    let first = slots.blocks[b].wrapping_add(b << slots.shift);
                    // Freeing drops no value twice: every value was dropped
                    // above, and the blocks are not used again. `first` is
                    // what `allocate_uninit(len)` made for block `b`.
                    // SAFETY: so not null (invariant on `blocks`), freed once.
                    unsafe { free_uninit(NonNull::new_unchecked(first), len) };
                }
            }
        }
        let free = Free(self);
        // Values without drop glue need no visit.
        if mem::needs_drop::<T>() {
            free.0.drop_values_unguarded();
        }
        drop(free);
    }
}

impl<T: Clone> Clone for FlatSlots<T> {
    /// A copy with the same blocks, generations, links and values. If a
    /// `clone` panics, the copy holds the slots copied so far and is
    /// dropped with them.
    fn clone(&self) -> Self {
        let mut copy = FlatSlots::new(self.shift);
        copy.blocks.reserve_exact(self.blocks.len());
        copy.states.reserve_exact(self.slots);
        for b in 0..self.blocks.len() {
            copy.push_block(self.block_len(b));
        }
        for index in 0..self.used {
            let Some(from) = self.slot(index) else {
                unreachable!("used slot {index} missing")
            };
            let (state, payload) = from.cloned_parts();
            copy.append(state, payload);
        }
        copy
    }
}

/// The walk of a [`FlatSlots`] for a [`Cursor`]: the occupied slots of
/// `next..end`, up to 64 state words of one block at a time turned into a
/// mask (as [`StoreWalk`](super::scan::StoreWalk) does for a slot store),
/// so a pass reads 4 bytes per vacant slot and no branch depends on each
/// slot's occupancy; or a block's share of a rest that the count says is
/// all occupied, as one run.
pub struct FlatWalk<'a, T> {
    /// The state array of the table borrowed for `'a`.
    states: *mut u32,
    /// The directory of that table.
    blocks: &'a [*mut Payload<T>],
    shift: u32,
    /// The first flat index not handed out. Invariant: `next <= end <=
    /// used`, and every index in `next..end` is an initialized slot of
    /// `blocks`, not yet handed out.
    next: usize,
    /// Past the last flat index not handed out.
    end: usize,
    /// Whether the counts the walk is given are exact: a part of a walk
    /// split for parallel iteration has only a bound (counting the live
    /// values on each side would cost a pass over their state words).
    exact: bool,
}

impl<T> Clone for FlatWalk<'_, T> {
    fn clone(&self) -> Self {
        FlatWalk { ..*self }
    }
}

/// Shared iteration.
pub(crate) type FlatIter<'a, T> = Cursor<'a, T, FlatWalk<'a, T>, &'a T>;
/// Exclusive iteration.
pub(crate) type FlatIterMut<'a, T> = Cursor<'a, T, FlatWalk<'a, T>, &'a mut T>;

impl<'a, T> FlatWalk<'a, T> {
    /// Walks the slots `0..used` of `slots`.
    #[inline]
    fn new(slots: &'a FlatSlots<T>) -> Self {
        FlatWalk {
            states: slots.states.as_ptr(),
            blocks: &slots.blocks,
            shift: slots.shift,
            next: 0,
            end: slots.used,
            exact: true,
        }
    }

    /// The slots of block `block`, addressed by flat index.
    #[inline(always)]
    fn bases(&self, block: usize) -> FlatBases<T> {
        FlatBases::new(self.states, self.blocks[block])
    }

    /// The occupied slots of `start..start + len` (`len <= 64`, within
    /// `next..end` before the caller moved them, and one block) as a mask
    /// from `start`.
    #[inline(always)]
    fn load(&self, start: usize, len: usize) -> Piece<FlatBases<T>> {
        debug_assert!(len <= WORD_BITS);
        let ptrs = self.bases(start >> self.shift);
        // The state words of `start..start + len` are initialized, in one
        // block, and not written while the walk borrows the table.
        // SAFETY: `start + len <= used` (the invariant on `next`), within
        // the block whose flat bases `ptrs` are.
        let states = unsafe { core::slice::from_raw_parts(ptrs.state_at(start), len) };
        let bits = match states.first_chunk::<WORD_BITS>() {
            Some(chunk) => occupied_mask(chunk),
            None => partial_occupied_mask(states),
        };
        Piece::Bits(Bits {
            ptrs,
            base: start,
            bits,
        })
    }
}

// SAFETY: every index handed out lies in `next..end`, which shrinks past
// it at once, from the bottom in `front` and from the top in `back`, so
// each is handed out once and in order; a mask has a bit only for a state
// word with the vacant bit clear, and a run covers slots an exact count
// says are occupied. The pointers of a piece are its block's flat bases,
// and no piece crosses a block.
unsafe impl<T> Walk<T> for FlatWalk<'_, T> {
    type Ptrs = FlatBases<T>;

    #[inline(always)]
    fn no_ptrs(&self) -> FlatBases<T> {
        FlatBases::NONE
    }

    #[inline(always)]
    fn front(&mut self, left: usize) -> Option<Piece<FlatBases<T>>> {
        if left == 0 || self.next >= self.end {
            self.next = self.end;
            return None;
        }
        let start = self.next;
        let block = start >> self.shift;
        let block_end = ((block + 1) << self.shift).min(self.end);
        if self.exact && left == self.end - start {
            self.next = block_end;
            return Some(Piece::Run(Run {
                ptrs: self.bases(block),
                next: start,
                end: block_end,
            }));
        }
        let len = (block_end - start).min(WORD_BITS);
        self.next = start + len;
        Some(self.load(start, len))
    }

    #[inline(always)]
    fn back(&mut self, left: usize) -> Option<Piece<FlatBases<T>>> {
        if left == 0 || self.next >= self.end {
            self.end = self.next;
            return None;
        }
        let end = self.end;
        let block = (end - 1) >> self.shift;
        let block_start = (block << self.shift).max(self.next);
        if self.exact && left == end - self.next {
            self.end = block_start;
            return Some(Piece::Run(Run {
                ptrs: self.bases(block),
                next: block_start,
                end,
            }));
        }
        let start = end.saturating_sub(WORD_BITS).max(block_start);
        self.end = start;
        Some(self.load(start, end - start))
    }

    /// Folds over the slots left. A rest that is all occupied (a table with
    /// no holes, or past the last one) runs as a plain loop per block, and
    /// so does each run of 64 occupied slots.
    #[inline]
    fn fold<B, Q: RunPos<T, FlatBases<T>>>(
        self,
        left: usize,
        init: B,
        f: &mut impl SlotFold<T, FlatBases<T>, Q, B>,
    ) -> B {
        let mut acc = init;
        let mut remaining = left;
        let mut next = self.next;
        // A block at a time, so that its directory entry is read once and
        // each run of 64 slots costs only its mask and its set bits.
        while remaining != 0 && next < self.end {
            let block = next >> self.shift;
            let ptrs = self.bases(block);
            let block_end = ((block + 1) << self.shift).min(self.end);
            while next < block_end {
                if self.exact && remaining == self.end - next {
                    return Self::fold_dense::<B, Q>(self, next, acc, f);
                }
                let len = (block_end - next).min(WORD_BITS);
                // The state words of `next..next + len` are initialized, in
                // this block, and not written while the walk borrows the
                // table.
                // SAFETY: `next + len <= end <= used`, within this block.
                let states = unsafe { core::slice::from_raw_parts(ptrs.state_at(next), len) };
                let mut word = match states.first_chunk::<WORD_BITS>() {
                    Some(chunk) => occupied_mask(chunk),
                    None => partial_occupied_mask(states),
                };
                if word == u64::MAX {
                    for bit in 0..WORD_BITS {
                        acc = f.at_index(acc, ptrs, next + bit);
                    }
                    remaining = remaining.saturating_sub(WORD_BITS);
                } else {
                    while word != 0 {
                        acc = f.at_index(acc, ptrs, next + pop_lowest(&mut word));
                        remaining = remaining.saturating_sub(1);
                    }
                    if remaining == 0 {
                        return acc;
                    }
                }
                next += len;
            }
        }
        acc
    }

    /// Cuts `next..end` at the block boundary nearest below its middle.
    /// The parts' counts are upper bounds (see `exact`).
    #[cfg(any(test, feature = "rayon"))]
    fn split(self, left: usize) -> ((Self, usize), Option<(Self, usize)>) {
        let middle = self.next + (self.end - self.next) / 2;
        let cut = (middle >> self.shift) << self.shift;
        if cut <= self.next {
            return ((self, left), None);
        }
        // Disjoint index ranges: each slot is still handed out once, by
        // one part.
        let left_part = FlatWalk {
            end: cut,
            exact: false,
            ..self
        };
        let right = FlatWalk {
            next: cut,
            exact: false,
            ..self
        };
        (
            (left_part, left.min(cut - self.next)),
            Some((right, left.min(self.end - cut))),
        )
    }
}

impl<T> FlatWalk<'_, T> {
    /// Folds over `next..end`, which the exact count says is all occupied,
    /// a block at a time, as plain counted loops.
    #[inline]
    fn fold_dense<B, Q: RunPos<T, FlatBases<T>>>(
        self,
        mut next: usize,
        init: B,
        f: &mut impl SlotFold<T, FlatBases<T>, Q, B>,
    ) -> B {
        let mut acc = init;
        while next < self.end {
            let block = next >> self.shift;
            let ptrs = self.bases(block);
            let block_end = ((block + 1) << self.shift).min(self.end);
            // The count says `next..end` is all occupied (the caller's check).
            // SAFETY: so this block's part of it is a run, handed out once.
            acc = unsafe { fold_run::<T, _, Q, B>(ptrs, next, block_end, acc, f) };
            next = block_end;
        }
        acc
    }
}
