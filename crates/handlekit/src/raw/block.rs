//! `Block<T, L>`: a fixed run of slots that never moves, with its own
//! occupancy words and live count, its slots laid out by `L` (see
//! `layout.rs`); and `BlocksWalk`, iteration over a list of blocks.
//!
//! This is the storage of `Hive`'s blocks (`Pool` keeps bare blocks, see
//! `flat.rs`): the slots of a block are allocated once and freed when
//! the block is dropped, never reallocated, so a pointer to a value stays
//! valid while the value lives.
//!
//! # Appending
//!
//! A block is used from the front: the slots at `fresh..len` have never
//! held a value and are not even initialized, so making a block costs one
//! allocation and no pass over its slots. [`Block::append`] fills slot
//! `fresh` and moves `fresh` on, and nothing else: the appended slots
//! (`marked..fresh`) get their occupancy bits and their share of `live`
//! only when something needs them (a removal in that run, `retain`,
//! dropping the values). An append then has one counter to bump, not three
//! (the bit word, the live count and the cursor), which matters because each
//! read-modify-write of a field is a store-to-load chain from one insert to
//! the next.
//!
//! # Why raw pointers
//!
//! The slots are reached only through the raw pointers the allocations
//! were made from, and references are made to the parts of one slot at a
//! time, never to a whole array. A pointer handed out by
//! [`Block::value_ptr`] carries that same provenance, so no later access to
//! *another* slot of the block (which would retag a `&mut [Slot<T>]`
//! covering the whole block, were the block a `Box<[Slot<T>]>`) can
//! invalidate it. This is what makes `get_ptr`'s promise hold under Stacked
//! Borrows and Tree Borrows, which Miri checks.

use alloc::boxed::Box;
use core::marker::PhantomData;
use core::mem;
use core::ops::Range;
use core::ptr::NonNull;

use super::bitset::{set_bit_range, WORD_BITS};
use super::cursor::{Bits, Cursor, Piece, Run, Walk};
use super::layout::{FlatBases, SlotLayout};
use super::slot::{Payload, Slot, SlotMut, SlotRef, NO_SLOT};

/// A fixed run of `len` slots at a fixed address, stored as `L` lays them
/// out (see `layout.rs`).
pub struct Block<T, L: SlotLayout<T>> {
    /// The storage of `len` slots, made by `L::allocate(len)` (see
    /// `Block::new`) and freed in `Drop`. Invariant: the slots below
    /// `fresh` are initialized, the others are not; never reallocated or
    /// moved while the block lives; no reference to a whole array is ever
    /// made, only to the parts of single slots.
    layout: L,
    /// Number of slots. Invariant: `len <= u32::MAX as usize`.
    len: usize,
    /// Slots in use since the block was made. Invariant: `marked <= fresh
    /// <= len`; the slots at `fresh..len` have never held a value and are
    /// uninitialized.
    fresh: usize,
    /// End of the slots that have occupancy bits. Invariant: the slots at
    /// `marked..fresh` were appended and are all occupied; they have no bit
    /// and are not counted in `live`.
    marked: usize,
    /// Occupancy. Invariant: for `i < marked`, bit `i % 64` of word `i / 64`
    /// is set iff slot `i` is occupied; there are exactly `len.div_ceil(64)`
    /// words, and no bit at or past `marked` is set.
    occupied: Box<[u64]>,
    /// Number of set bits in `occupied` (the occupied slots below
    /// `marked`).
    live: usize,
    /// The flat index of slot 0: keys name slot `i` of this block by
    /// `base + i`. Set by the container, which keeps bases disjoint.
    base: usize,
    /// Owns `Slot<T>` values (for the drop checker and auto traits).
    _owns: PhantomData<Slot<T>>,
}

// SAFETY: a block owns its slots like a `Box<[Slot<T>]>` would; sending it
// sends the values.
unsafe impl<T: Send, L: SlotLayout<T>> Send for Block<T, L> {}
// SAFETY: shared access to a block gives only shared access to its values
// (`&self` methods hand out `&T` and raw pointers, whose use is the caller's
// responsibility as documented on `value_ptr`).
unsafe impl<T: Sync, L: SlotLayout<T>> Sync for Block<T, L> {}

impl<T, L: SlotLayout<T>> Block<T, L> {
    /// A block of `len` never-used slots whose slot 0 has flat index
    /// `base`. The slots are not initialized: this is an allocation or two
    /// (plus the occupancy words) and no pass over the memory.
    pub(crate) fn new(len: usize, base: usize) -> Self {
        assert!(len <= u32::MAX as usize, "block of {len} slots is too big");
        Block {
            layout: L::allocate(len),
            len,
            fresh: 0,
            marked: 0,
            occupied: alloc::vec![0u64; len.div_ceil(WORD_BITS)].into_boxed_slice(),
            live: 0,
            base,
            _owns: PhantomData,
        }
    }

    /// The flat index of slot 0.
    #[inline]
    pub(crate) fn base(&self) -> usize {
        self.base
    }

    /// Number of slots.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Number of slots in use since the block was made (the others have
    /// never held a value).
    #[inline]
    pub(crate) fn fresh(&self) -> usize {
        self.fresh
    }

    /// Whether a never-used slot is left for [`append`](Self::append).
    #[inline]
    pub(crate) fn has_fresh(&self) -> bool {
        self.fresh < self.len
    }

    /// Number of occupied slots.
    #[inline]
    pub(crate) fn live(&self) -> usize {
        self.live + (self.fresh - self.marked)
    }

    /// Bytes of heap memory the block holds (slots and occupancy words).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.len * L::SLOT_BYTES + self.occupied.len() * mem::size_of::<u64>()
    }

    /// The state word and payload of slot `i`, which must be in bounds
    /// (`i < len`); initialized only if `i < fresh`.
    #[inline]
    fn slot_parts(&self, i: usize) -> (*mut u32, *mut Payload<T>) {
        debug_assert!(i < self.len);
        // SAFETY: `i < len` (every caller checks), so both are inside the
        // storage of `len` slots.
        unsafe { (self.layout.state(i), self.layout.payload(i)) }
    }

    /// A pointer to the value of slot `i`, which must be in bounds; the
    /// value is initialized only if the slot is occupied.
    #[inline]
    fn value_ptr_at(&self, i: usize) -> *mut T {
        let (_, payload) = self.slot_parts(i);
        // SAFETY: `payload` points into the storage (`slot_parts`).
        unsafe { Payload::value_ptr(payload) }
    }

    /// Slot `i`, which must have been used (`i < fresh`).
    #[inline]
    fn slot_at(&self, i: usize) -> SlotRef<'_, T> {
        debug_assert!(i < self.fresh);
        let (state, payload) = self.slot_parts(i);
        // The references cover one slot's parts and live no longer than
        // `&self`, during which nothing writes to the block.
        // SAFETY: `i < fresh <= len`, so in bounds and initialized
        // (invariant on `layout`), and the state word describes the payload.
        unsafe { SlotRef::from_parts(&*state, &*payload) }
    }

    /// Slot `i`, if it was ever used (a never-used slot reads as absent:
    /// no key names it).
    #[inline]
    pub(crate) fn slot(&self, i: usize) -> Option<SlotRef<'_, T>> {
        if i < self.fresh {
            Some(self.slot_at(i))
        } else {
            None
        }
    }

    /// Slot `i`, if it was ever used, mutably.
    #[inline]
    fn slot_mut(&mut self, i: usize) -> Option<SlotMut<'_, T>> {
        if i < self.fresh {
            let (state, payload) = self.slot_parts(i);
            // SAFETY: in bounds and initialized, as in `slot_at`; `&mut
            // self` makes these the only references into the slot.
            Some(unsafe { SlotMut::from_parts(&mut *state, &mut *payload) })
        } else {
            None
        }
    }

    /// Writes a whole slot at `i == fresh` and moves `fresh` on.
    #[inline]
    fn push_slot(&mut self, state: u32, payload: Payload<T>) -> usize {
        let i = self.fresh;
        assert!(i < self.len, "push to a full block");
        let (state_ptr, payload_ptr) = self.slot_parts(i);
        // SAFETY: `i < len` (in the storage) and `i >= fresh` (not
        // initialized), so writing drops nothing.
        unsafe {
            state_ptr.write(state);
            payload_ptr.write(payload);
        }
        self.fresh = i + 1;
        i
    }

    /// Puts `value` with `generation` into the first never-used slot and
    /// returns that slot's offset. Only the cursor moves: the slot's bit
    /// and its share of `live` wait for [`mark`](Self::mark).
    ///
    /// # Panics
    ///
    /// If no never-used slot is left.
    #[inline]
    pub(crate) fn append(&mut self, generation: u32, value: T) -> usize {
        // The slot joins the appended run `marked..fresh`, all occupied.
        self.push_slot(
            Slot::<T>::occupied_state(generation),
            Payload::occupied(value),
        )
    }

    /// Makes the first never-used slot vacant with last generation
    /// `generation` and no link, as if its occupants had come and gone
    /// (for deserialization).
    ///
    /// # Panics
    ///
    /// If no never-used slot is left.
    #[cfg(feature = "serde")]
    pub(crate) fn push_vacant(&mut self, generation: u32) {
        // The appended run must stay all occupied: close it first.
        self.mark();
        let i = self.push_slot(
            Slot::<T>::vacant_state(generation),
            Payload::vacant(NO_SLOT),
        );
        self.marked = i + 1;
    }

    /// The slots ever used (`0..fresh`), in order.
    #[inline]
    pub(crate) fn used_slots(&self) -> impl ExactSizeIterator<Item = SlotRef<'_, T>> {
        (0..self.fresh).map(|i| self.slot_at(i))
    }

    /// Gives the appended slots (`marked..fresh`) their occupancy bits and
    /// counts them in `live`.
    #[inline]
    fn mark(&mut self) {
        if self.marked != self.fresh {
            self.mark_run();
        }
    }

    /// The out-of-line part of [`mark`](Self::mark).
    #[cold]
    #[inline(never)]
    fn mark_run(&mut self) {
        let (start, end) = (self.marked, self.fresh);
        set_bit_range(&mut self.occupied, start, end);
        self.live += end - start;
        self.marked = end;
    }

    /// Whether `(i, generation)` names a live value.
    #[inline]
    pub(crate) fn contains(&self, i: usize, generation: u32) -> bool {
        self.slot(i).is_some_and(|slot| slot.matches(generation))
    }

    /// The value named by `(i, generation)`.
    #[inline]
    pub(crate) fn get(&self, i: usize, generation: u32) -> Option<&T> {
        self.slot(i)?.get_if(generation)
    }

    /// The value named by `(i, generation)`, mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, i: usize, generation: u32) -> Option<&mut T> {
        self.slot_mut(i)?.get_mut_if(generation)
    }

    /// The value in slot `i`.
    ///
    /// # Safety
    ///
    /// Slot `i` must exist and be occupied.
    #[inline]
    pub(crate) unsafe fn get_unchecked(&self, i: usize) -> &T {
        debug_assert!(self.slot(i).is_some_and(SlotRef::is_occupied));
        // SAFETY: the caller guarantees slot `i` exists and is occupied.
        unsafe { &*self.value_ptr_at(i) }
    }

    /// The value in slot `i`, mutably.
    ///
    /// # Safety
    ///
    /// Slot `i` must exist and be occupied.
    #[inline]
    pub(crate) unsafe fn get_unchecked_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(self.slot(i).is_some_and(SlotRef::is_occupied));
        // SAFETY: the caller guarantees slot `i` exists and is occupied;
        // `&mut self` makes the reference unique.
        unsafe { &mut *self.value_ptr_at(i) }
    }

    /// A pointer to the value named by `(i, generation)`, with the
    /// provenance of the whole allocation (see the module docs): it stays
    /// valid until the value is taken out or the block is dropped, whatever
    /// is done to other slots in between.
    #[inline]
    pub(crate) fn value_ptr(&self, i: usize, generation: u32) -> Option<NonNull<T>> {
        if !self.contains(i, generation) {
            return None;
        }
        // Slot `i` exists and is occupied (it matched a generation), and
        // `value_ptr_at` makes no reference.
        NonNull::new(self.value_ptr_at(i))
    }

    /// The free-list link of vacant slot `i` (`NO_SLOT` if `i` is out of
    /// bounds or occupied).
    #[inline]
    pub(crate) fn next_free(&self, i: usize) -> u32 {
        self.slot(i).map_or(NO_SLOT, SlotRef::next_free)
    }

    /// Sets the free-list link of vacant slot `i`.
    #[inline]
    pub(crate) fn set_next_free(&mut self, i: usize, next: u32) {
        if let Some(slot) = self.slot_mut(i) {
            slot.set_next_free(next);
        }
    }

    /// The generation of slot `i` (its occupant's, or its last occupant's).
    #[inline]
    pub(crate) fn generation(&self, i: usize) -> Option<u32> {
        self.slot(i).map(SlotRef::generation)
    }

    /// Puts `value` into vacant slot `i` with `generation`. A vacant slot
    /// is below `marked` (the appended run is all occupied), so its bit is
    /// set here.
    ///
    /// # Panics
    ///
    /// If slot `i` was never used.
    #[inline]
    pub(crate) fn occupy(&mut self, i: usize, generation: u32, value: T) {
        let Some(slot) = self.slot_mut(i) else {
            panic!("slot {i} out of bounds");
        };
        slot.occupy(generation, value);
        debug_assert!(i < self.marked);
        self.occupied[i / WORD_BITS] |= 1 << (i % WORD_BITS);
        self.live += 1;
    }

    /// Takes the value out of slot `i`, leaving it vacant with its
    /// generation as "last" and the link `next_free`.
    ///
    /// # Safety
    ///
    /// Slot `i` must exist and be occupied.
    #[inline]
    pub(crate) unsafe fn vacate(&mut self, i: usize, next_free: u32) -> T {
        debug_assert!(self.slot(i).is_some_and(SlotRef::is_occupied));
        // The appended run must stay all occupied, and the bit cleared
        // below must exist.
        if i >= self.marked {
            self.mark_run();
        }
        let (state, payload) = self.slot_parts(i);
        // SAFETY: the caller guarantees slot `i` exists and is occupied;
        // `&mut self` makes the references unique.
        let value = unsafe { SlotMut::from_parts(&mut *state, &mut *payload).vacate(next_free) };
        // SAFETY: `i < fresh <= len` and there are `len.div_ceil(64)` words.
        unsafe { *self.occupied.get_unchecked_mut(i / WORD_BITS) &= !(1 << (i % WORD_BITS)) };
        self.live -= 1;
        value
    }

    /// Takes the value named by `(i, generation)` out, if it is live.
    /// Callers file the slot by `Slot::matched_generation(generation)`, not
    /// by the key's bits, which may carry one `Slot::matches` ignores. (The
    /// value is returned alone: a `(u32, T)` pair made the compiler shuffle
    /// large values through misaligned stack copies.)
    #[inline]
    pub(crate) fn take(&mut self, i: usize, generation: u32, next_free: u32) -> Option<T> {
        if !self.contains(i, generation) {
            return None;
        }
        // SAFETY: the slot exists and matched a generation, so it is
        // occupied.
        Some(unsafe { self.vacate(i, next_free) })
    }

    /// Links this block's vacant used slots in slot order in front of the
    /// list starting at `head`: the lowest slot becomes the new head. Each
    /// is linked as `index_base + slot` (a flat index for a pool, an offset
    /// for a hive). Slots whose generation reached `max_generation` are
    /// counted, not linked. Returns the new head and that count.
    ///
    /// One pass over the slot memory, backwards; only vacant slots are
    /// written, so no pointer to a live value is disturbed.
    pub(crate) fn link_vacant(
        &mut self,
        mut head: u32,
        index_base: u32,
        max_generation: u32,
    ) -> (u32, usize) {
        let mut retired = 0;
        for i in (0..self.fresh).rev() {
            let Some(slot) = self.slot(i) else { break };
            if slot.is_occupied() {
                continue;
            }
            if slot.generation() >= max_generation {
                retired += 1;
                continue;
            }
            self.set_next_free(i, head);
            head = index_base + i as u32;
        }
        (head, retired)
    }

    /// The highest generation of any slot ever used (0 if none): a block
    /// made later over the same index range must start above it.
    pub(crate) fn max_generation(&self) -> u32 {
        (0..self.fresh)
            .filter_map(|i| self.generation(i))
            .max()
            .unwrap_or(0)
    }

    /// The lowest occupied slot at or after `from`. The appended run must
    /// be marked.
    fn next_occupied(&self, from: usize) -> Option<usize> {
        debug_assert_eq!(self.marked, self.fresh);
        let mut word_index = from / WORD_BITS;
        let mut word = *self.occupied.get(word_index)? & (!0u64 << (from % WORD_BITS));
        loop {
            if word != 0 {
                return Some(word_index * WORD_BITS + word.trailing_zeros() as usize);
            }
            word_index += 1;
            word = *self.occupied.get(word_index)?;
        }
    }

    /// Takes the value out of the lowest occupied slot at or after `from`:
    /// `(slot, generation, value)`.
    pub(crate) fn take_next(&mut self, from: usize) -> Option<(usize, u32, T)> {
        self.mark();
        let i = self.next_occupied(from)?;
        let generation = self.generation(i)?;
        // SAFETY: the bit was set, so the slot exists and is occupied.
        let value = unsafe { self.vacate(i, NO_SLOT) };
        Some((i, generation, value))
    }

    /// Calls `visit(slot, generation, &mut value)` for each value in slot
    /// order; each time it returns `false`, the value is taken out, the slot
    /// left vacant with link `NO_SLOT`, and `evicted(slot, generation,
    /// value)` is called with it (to relink the slot and drop the value).
    /// If either closure panics, the values not yet visited stay in place
    /// and the block is consistent.
    pub(crate) fn retain(
        &mut self,
        mut visit: impl FnMut(usize, u32, &mut T) -> bool,
        mut evicted: impl FnMut(&mut Self, usize, u32, T),
    ) {
        self.mark();
        for word_index in 0..self.occupied.len() {
            let mut word = self.occupied[word_index];
            while word != 0 {
                let i = word_index * WORD_BITS + word.trailing_zeros() as usize;
                word &= word - 1;
                // The bit is set, so `i < marked <= fresh`: in bounds, and
                // occupied (each bit is visited once, so nothing vacated
                // the slot yet).
                let generation = self.slot_at(i).generation();
                // SAFETY: occupied, as said; `&mut self` makes the
                // reference unique.
                let keep = visit(i, generation, unsafe { &mut *self.value_ptr_at(i) });
                if !keep {
                    // SAFETY: as above; occupied, and vacated only here.
                    let value = unsafe { self.vacate(i, NO_SLOT) };
                    evicted(self, i, generation, value);
                }
            }
        }
    }

    /// Drops every value, leaving the slots vacant with their generations
    /// and no links. If a `Drop` panics, the others are still dropped and
    /// the panic then propagates (a second panic aborts).
    pub(crate) fn drop_values(&mut self) {
        if self.live() == 0 {
            return;
        }
        super::finish_on_panic(self, Self::drop_values_unguarded);
    }

    /// Drops every value; a panicking `Drop` stops it, leaving the rest in
    /// place and consistent.
    fn drop_values_unguarded(&mut self) {
        self.mark();
        let mut from = 0;
        while let Some(i) = self.next_occupied(from) {
            from = i + 1;
            // Vacated before the drop, so a panicking `Drop` cannot repeat it.
            // SAFETY: the bit was set, so the slot exists and is occupied.
            drop(unsafe { self.vacate(i, NO_SLOT) });
        }
    }

    /// Checks the block's invariants; panics on the first one broken.
    pub(crate) fn check_invariants(&self) {
        assert_eq!(self.occupied.len(), self.len.div_ceil(WORD_BITS));
        assert!(self.marked <= self.fresh && self.fresh <= self.len);
        let mut live = 0;
        for i in 0..self.fresh {
            let slot = self.slot(i).unwrap_or_else(|| unreachable!());
            let bit = self.occupied[i / WORD_BITS] & (1 << (i % WORD_BITS)) != 0;
            if i < self.marked {
                assert_eq!(slot.is_occupied(), bit, "occupancy bit of slot {i}");
                live += usize::from(bit);
            } else {
                assert!(slot.is_occupied(), "vacant slot {i} in the appended run");
            }
            if slot.is_occupied() {
                assert!(slot.generation() >= 1, "occupied slot {i} has generation 0");
            }
        }
        // No bit at or past `marked` is set: this covers the appended run,
        // the never-used slots and the padding past `len`, a word at a time.
        for (w, &word) in self.occupied.iter().enumerate() {
            let first = w * WORD_BITS;
            let past_marked = match self.marked.checked_sub(first) {
                Some(below) if below >= WORD_BITS => 0,
                Some(below) => !0u64 << below,
                None => !0,
            };
            assert_eq!(
                word & past_marked,
                0,
                "occupancy bit at or past slot {}",
                self.marked
            );
        }
        assert_eq!(live, self.live, "live count of a block");
    }
}

impl<T, L: SlotLayout<T>> Drop for Block<T, L> {
    fn drop(&mut self) {
        /// Frees the storage, after dropping whatever values remain (all
        /// of them if no `Drop` panicked).
        struct Free<'a, T, L: SlotLayout<T>>(&'a mut Block<T, L>);
        impl<T, L: SlotLayout<T>> Drop for Free<'_, T, L> {
            fn drop(&mut self) {
                // Values without drop glue need no visit: freeing the
                // memory is all there is to do.
                if mem::needs_drop::<T>() {
                    self.0.drop_values_unguarded();
                }
                // Freeing drops no value twice: every value was dropped
                // above, and the block is not used again.
                // SAFETY: `layout` came from `L::allocate(len)` in
                // `Block::new` (invariant on `layout`) and is freed once.
                unsafe { self.0.layout.deallocate(self.0.len) };
            }
        }
        let free = Free(self);
        if mem::needs_drop::<T>() {
            free.0.drop_values_unguarded();
        }
        drop(free);
    }
}

impl<T: Clone, L: SlotLayout<T>> Clone for Block<T, L> {
    /// A copy with the same length, base, generations, links and values.
    /// If a `clone` panics, the copy holds the values cloned so far,
    /// consistently, and is dropped with them.
    fn clone(&self) -> Self {
        let mut copy = Block::new(self.len, self.base);
        for from in self.used_slots() {
            let (state, payload) = from.cloned_parts();
            let i = copy.push_slot(state, payload);
            if from.is_occupied() {
                copy.occupied[i / WORD_BITS] |= 1 << (i % WORD_BITS);
                copy.live += 1;
            }
            // Every used slot is marked: the copy has no appended run.
            copy.marked = i + 1;
        }
        copy
    }
}

/// Mutable references to `N` distinct live values of `blocks`, each named
/// by `(block, slot, generation)`, or `None` if any is not live or two name
/// the same slot.
pub(crate) fn get_disjoint_mut<T, L: SlotLayout<T>, const N: usize>(
    blocks: &mut [Block<T, L>],
    at: [(usize, usize, u32); N],
) -> Option<[&mut T; N]> {
    for (n, &(b, i, generation)) in at.iter().enumerate() {
        if !blocks.get(b)?.contains(i, generation) {
            return None;
        }
        // Two live keys with one slot are the same key.
        if at[..n].iter().any(|&(ob, oi, _)| ob == b && oi == i) {
            return None;
        }
    }
    let blocks: &[Block<T, L>] = blocks;
    // Each reference comes from its block's own storage pointers, with no
    // reference to a whole array in between, and the `&mut` borrow of the
    // blocks outlives them all.
    Some(core::array::from_fn(|n| {
        let (b, i, _) = at[n];
        let value = blocks[b].value_ptr_at(i);
        // Nothing else reaches these values while `blocks` is borrowed
        // mutably.
        // SAFETY: every slot above exists, is occupied and is named once,
        // so the references are to distinct initialized values.
        unsafe { &mut *value }
    }))
}

/// `log2` of the number of slots of `T` that fit in `bytes`, kept within
/// `min..=max` (powers of two) and rounded down to a power of two: the
/// default block sizes of `Pool` and `Hive`.
pub(crate) const fn block_shift_for<T, L: SlotLayout<T>>(
    bytes: usize,
    min: usize,
    max: usize,
) -> u32 {
    let slot = L::SLOT_BYTES;
    let slot = if slot == 0 { 1 } else { slot };
    let mut slots = bytes / slot;
    if slots < min {
        slots = min;
    }
    if slots > max {
        slots = max;
    }
    usize::BITS - 1 - slots.leading_zeros()
}

/// The part of one block that a [`BlocksWalk`] has not handed out: its
/// occupancy words from `word_base` on, then its appended run.
struct BlockPart<'a, T> {
    /// The block's storage, by flat index.
    ptrs: FlatBases<T>,
    /// Occupancy words not handed out; bit `b` of word `k` stands for flat
    /// index `word_base + 64 * k + b`. Only words below the block's
    /// `marked` slot (the others are zero).
    words: &'a [u64],
    /// The flat index of bit 0 of `words[0]`.
    word_base: usize,
    /// The appended run not handed out (flat indices, all occupied, above
    /// every bit of `words`).
    tail: Range<usize>,
}

impl<T> Clone for BlockPart<'_, T> {
    fn clone(&self) -> Self {
        BlockPart {
            tail: self.tail.clone(),
            ..*self
        }
    }
}

impl<'a, T> BlockPart<'a, T> {
    /// Nothing.
    const EMPTY: Self = BlockPart {
        ptrs: FlatBases::NONE,
        words: &[],
        word_base: 0,
        tail: 0..0,
    };

    /// The whole of `block`.
    #[inline]
    fn open<L: SlotLayout<T>>(block: &'a Block<T, L>) -> Self {
        // The bits name the occupied slots below `marked`, and the
        // appended run `marked..fresh` is all occupied (invariants on
        // `occupied` and `marked`). No bit at or past `marked` is set, so
        // the words past it are not read: a block that is mostly never used
        // costs only its used words.
        // `marked <= len <= u32::MAX`, so the sum cannot overflow.
        #[allow(
            clippy::manual_div_ceil,
            reason = "div_ceil allows for the overflow, at four instructions per block"
        )]
        let marked_words = (block.marked + (WORD_BITS - 1)) / WORD_BITS;
        BlockPart {
            ptrs: block.layout.flat(block.base),
            words: &block.occupied[..marked_words],
            word_base: block.base,
            tail: block.base + block.marked..block.base + block.fresh,
        }
    }

    /// Whether nothing is left.
    #[inline]
    fn is_empty(&self) -> bool {
        self.words.is_empty() && self.tail.is_empty()
    }

    /// Occupied slots left.
    fn count(&self) -> usize {
        self.words
            .iter()
            .map(|word| word.count_ones() as usize)
            .sum::<usize>()
            + self.tail.len()
    }

    /// Folds `f` over the occupied slots left, in order. Full words and
    /// the appended run are plain counted loops, which the compiler can
    /// unroll or vectorize.
    #[inline]
    fn fold<B>(self, init: B, f: &mut impl FnMut(B, FlatBases<T>, usize) -> B) -> B {
        let mut acc = init;
        let mut base = self.word_base;
        for &word in self.words {
            if word == u64::MAX {
                // A constant trip count, not `base..base + WORD_BITS`: the
                // compiler must allow for that end wrapping, and the trip
                // count it then works out on every word took registers
                // that the sparse path below spilled to the stack (in
                // `Hive`'s block loop, six stack accesses per word).
                for bit in 0..WORD_BITS {
                    acc = f(acc, self.ptrs, base + bit);
                }
            } else {
                let mut word = word;
                while word != 0 {
                    acc = f(acc, self.ptrs, base + word.trailing_zeros() as usize);
                    word &= word - 1;
                }
            }
            base += WORD_BITS;
        }
        for index in self.tail {
            acc = f(acc, self.ptrs, index);
        }
        acc
    }
}

/// The walk of a list of blocks for a [`Cursor`], in block then slot
/// order, by flat index (slot `i` of a block is `block.base() + i`): each
/// block's occupancy words as masks, then its appended run as one run.
pub struct BlocksWalk<'a, T, L: SlotLayout<T>> {
    /// What the front has left of the block it is in.
    front: BlockPart<'a, T>,
    /// What the back has left of the block it is in.
    back: BlockPart<'a, T>,
    /// The blocks between the two, not yet opened.
    rest: core::slice::Iter<'a, Block<T, L>>,
}

impl<T, L: SlotLayout<T>> Clone for BlocksWalk<'_, T, L> {
    fn clone(&self) -> Self {
        BlocksWalk {
            front: self.front.clone(),
            back: self.back.clone(),
            rest: self.rest.clone(),
        }
    }
}

/// Shared iteration over blocks.
pub(crate) type BlocksIter<'a, T, L> = Cursor<'a, T, BlocksWalk<'a, T, L>, &'a T>;
/// Exclusive iteration over blocks.
pub(crate) type BlocksIterMut<'a, T, L> = Cursor<'a, T, BlocksWalk<'a, T, L>, &'a mut T>;

impl<'a, T, L: SlotLayout<T>> BlocksWalk<'a, T, L> {
    /// Walks `blocks`.
    #[inline]
    fn new(blocks: &'a [Block<T, L>]) -> Self {
        BlocksWalk {
            front: BlockPart::EMPTY,
            back: BlockPart::EMPTY,
            rest: blocks.iter(),
        }
    }
}

/// Iterates `blocks`, which hold exactly `len` values in all.
#[inline]
pub(crate) fn iter<T, L: SlotLayout<T>>(
    blocks: &[Block<T, L>],
    len: usize,
) -> BlocksIter<'_, T, L> {
    // SAFETY: `&blocks` keeps the values from being written; `len` is the
    // caller's exact count.
    unsafe { Cursor::new(BlocksWalk::new(blocks), len) }
}

/// Iterates `blocks` mutably; they hold exactly `len` values in all.
#[inline]
pub(crate) fn iter_mut<T, L: SlotLayout<T>>(
    blocks: &mut [Block<T, L>],
    len: usize,
) -> BlocksIterMut<'_, T, L> {
    // The block headers are only read from here on; the values are
    // reached through each block's raw storage pointers, exclusively,
    // since `blocks` is borrowed mutably for the cursor's life.
    let blocks: &[Block<T, L>] = blocks;
    // SAFETY: as just said.
    unsafe { Cursor::new(BlocksWalk::new(blocks), len) }
}

// SAFETY: `open` gives a block's occupied slots as bits of its occupancy
// words below `marked` and the run `marked..fresh`, all initialized and
// reached through the block's flat bases; each block is opened once (the
// front and the back take blocks from the two ends of `rest`), and within
// a part the front takes from the bottom and the back from the top, each
// piece leaving the part at once, so every slot is handed out once and in
// order. A part moves whole from one end to the other only when `rest` is
// empty.
unsafe impl<T, L: SlotLayout<T>> Walk<T> for BlocksWalk<'_, T, L> {
    type Ptrs = FlatBases<T>;

    #[inline(always)]
    fn no_ptrs(&self) -> FlatBases<T> {
        FlatBases::NONE
    }

    #[inline(always)]
    fn front(&mut self, left: usize) -> Option<Piece<FlatBases<T>>> {
        if left == 0 {
            return None;
        }
        loop {
            if let Some((&word, words)) = self.front.words.split_first() {
                let base = self.front.word_base;
                self.front.words = words;
                self.front.word_base += WORD_BITS;
                return Some(Piece::Bits(Bits {
                    ptrs: self.front.ptrs,
                    base,
                    bits: word,
                }));
            } else if !self.front.tail.is_empty() {
                let tail = mem::replace(&mut self.front.tail, 0..0);
                return Some(Piece::Run(Run {
                    ptrs: self.front.ptrs,
                    next: tail.start,
                    end: tail.end,
                }));
            } else if let Some(block) = self.rest.next() {
                if block.live() != 0 {
                    self.front = BlockPart::open(block);
                }
            } else {
                // No block between the two ends: the rest is the back's.
                self.front = mem::replace(&mut self.back, BlockPart::EMPTY);
                if self.front.is_empty() {
                    return None;
                }
            }
        }
    }

    #[inline(always)]
    fn back(&mut self, left: usize) -> Option<Piece<FlatBases<T>>> {
        if left == 0 {
            return None;
        }
        loop {
            if !self.back.tail.is_empty() {
                let tail = mem::replace(&mut self.back.tail, 0..0);
                return Some(Piece::Run(Run {
                    ptrs: self.back.ptrs,
                    next: tail.start,
                    end: tail.end,
                }));
            } else if let Some((&word, words)) = self.back.words.split_last() {
                self.back.words = words;
                return Some(Piece::Bits(Bits {
                    ptrs: self.back.ptrs,
                    base: self.back.word_base + words.len() * WORD_BITS,
                    bits: word,
                }));
            } else if let Some(block) = self.rest.next_back() {
                if block.live() != 0 {
                    self.back = BlockPart::open(block);
                }
            } else {
                self.back = mem::replace(&mut self.front, BlockPart::EMPTY);
                if self.back.is_empty() {
                    return None;
                }
            }
        }
    }

    /// Folds over the slots left, block by block, with the word-at-a-time
    /// fast path inside each block.
    #[inline]
    fn fold<B>(self, left: usize, init: B, mut f: impl FnMut(B, FlatBases<T>, usize) -> B) -> B {
        let mut acc = init;
        if left == 0 {
            return acc;
        }
        let (front, back) = (self.front, self.back);
        let mut left = left;
        if !back.is_empty() {
            left -= back.count();
        }
        if !front.is_empty() {
            left -= front.count();
            acc = front.fold(acc, &mut f);
        }
        for block in self.rest {
            if left == 0 {
                break;
            }
            let live = block.live();
            if live == 0 {
                continue;
            }
            left -= live;
            acc = BlockPart::open(block).fold(acc, &mut f);
        }
        back.fold(acc, &mut f)
    }

    /// Cuts the blocks not yet opened where the values before the cut
    /// first reach half of those left, so the parts hold about as many
    /// values each whatever the block sizes. A walk that has opened a
    /// block is not cut (parallel iteration cuts only fresh cursors).
    #[cfg(any(test, feature = "rayon"))]
    fn split(self, left: usize) -> ((Self, usize), Option<(Self, usize)>) {
        let blocks = self.rest.as_slice();
        if !self.front.is_empty() || !self.back.is_empty() || left < 2 {
            return ((self, left), None);
        }
        // The blocks hold `left` values in all, so the walk reaches half of
        // them before it runs out of blocks.
        let half = left.div_ceil(2);
        let (mut cut, mut before) = (0, 0);
        for block in blocks {
            if before >= half {
                break;
            }
            before += block.live();
            cut += 1;
        }
        if before == left {
            // The block that reached half holds the rest: it starts the
            // right part instead.
            cut -= 1;
            before -= blocks[cut].live();
        }
        if before == 0 {
            return ((self, left), None);
        }
        let (left_blocks, right_blocks) = blocks.split_at(cut);
        // Each block is in one part only, so each is still opened once.
        (
            (BlocksWalk::new(left_blocks), before),
            Some((BlocksWalk::new(right_blocks), left - before)),
        )
    }
}
