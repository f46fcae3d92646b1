//! `Block<T>`: one block of a `Hive`, a fixed run of slots that never
//! moves, with everything the hive keeps about it in one cache line; and
//! `BlocksWalk`, iteration over a list of blocks.
//!
//! This is the storage of `Hive`'s blocks (`Pool` keeps bare blocks, see
//! `flat.rs`): the payloads of a block are allocated once and freed when
//! the block is dropped, never reallocated, so a pointer to a value stays
//! valid while the value lives. Its state words lie in the hive's one
//! array over all its flat indices (`StateWords`), which may move when it
//! grows (no pointer to a state word is handed out); the hive then gives
//! every block the new array (`set_states`).
//!
//! # One line per block, addressed by flat index
//!
//! A block is 64 bytes, aligned to a cache line, and holds all that an
//! operation by key reads or writes about it: the pointers of its storage,
//! the end of its used slots, its free list, its counts, its floor and its
//! links in the hive's list of blocks with room. So an insertion or a
//! removal reads one line of the hive's block table, then the slot. (A
//! lookup by key reads no block: the hive checks the state word in its
//! array and finds the payload through its chunk directory, `hive.rs`.)
//!
//! The storage pointers are *flat*: moved back by the block's first flat
//! index (see `FlatBases`), so the slot of flat index `index` is at
//! `states + index` and `payloads + index`, with no offset to work out. The
//! free list links flat indices too, and so does the end of the used slots
//! (`end`), so a key's index is checked against the block with one compare
//! (the hive found the block from the index, so the index is at or past
//! the block's first).
//!
//! # Vacancy bits
//!
//! Iteration skips vacant slots with one bit per slot, 64 at a time, as
//! it did with occupancy bits: over a sparse hive a pass reads a bit per
//! slot, not a 4-byte state word (measured: a `for` loop over a hive with
//! 95% of its values removed took about half an `IdTable`'s time, and a
//! `Pool`, which turns state words into masks, 1.2 times it). The bits say
//! which *used* slots are *vacant*: a never-used slot has no bit to set, so
//! appending a value writes no bit, and only a removal sets one and a
//! reuse clears one. The slots past `end` are masked off by the walk. (The
//! occupancy bits they replace needed the appended run to be marked before
//! a removal in it, a compare and a cold call on every removal.)
//!
//! # Appending
//!
//! A block is used from the front: the slots at `end..limit` have never
//! held a value, and their payloads are not initialized; their state words
//! are `VACANT`, written by the hive before the block is made (4 bytes a
//! slot), so that a lookup by key may read the state word of any index of
//! the block's range and needs no compare with the moving `end`. An append
//! fills slot `end`, moves `end` on and counts the value: no bit.
//!
//! # Refilling an emptied block
//!
//! A block's free list takes its slots last-freed first, so after a run of
//! removals in random order it leads through the block at random, each
//! step reading the link of the slot before: over a block larger than the
//! caches, a chain of dependent misses (an emptied hive of 1M 64-byte
//! values refilled at about 100 ns an insertion). So when an insertion
//! finds a block with no value left and no retired slot, it first turns
//! the list into a *sweep*: the list ends in `SWEEP` at once, and the
//! insertions take the used slots from `base` on, in slot order, each one
//! generation on from its own last (every used slot is vacant and was
//! listed, so the sweep takes the same slots the list held). Slots freed
//! during the sweep go on the list before it, as with `IdTable`'s refill of
//! an emptied table (`SlotArena::sweep`). Starting the sweep is two
//! writes; checking for it costs a listed insertion one compare of the
//! live count, and an append or a removal nothing.
//!
//! # Why raw pointers
//!
//! The slots are reached only through the raw pointers the allocations
//! were made from, and references are made to the parts of one slot at a
//! time, never to a whole array (but for the hive's fill of a range's
//! state words before a block is made over it). A pointer handed out by
//! the hive's `get_ptr` (made from a copy of a chunk's first payload)
//! carries that same provenance, so no later access to *another* slot of
//! the block (which would retag a `&mut [Slot<T>]` covering the whole
//! block, were the block a `Box<[Slot<T>]>`) can invalidate it. This is what makes `get_ptr`'s promise hold under Stacked
//! Borrows and Tree Borrows, which Miri checks.

use alloc::boxed::Box;
use core::marker::PhantomData;
use core::mem;
use core::ptr;

use super::bitset::WORD_BITS;
use super::cursor::{fold_run, fold_word, Bits, Cursor, Piece, Run, RunPos, SlotFold, Walk};
use super::layout::{allocate_uninit, free_uninit, slot_bytes, FlatBases};
use super::slot::{Payload, Slot, SlotMut, SlotRef, NO_SLOT, SWEEP, VACANT};

/// The end of the hive's list of blocks with room (`Block::next`, and
/// `Block::prev` of its first block).
pub(crate) const NO_BLOCK: u32 = u32::MAX;

/// `Block::prev` of a block that is not on the hive's list of blocks with
/// room.
pub(crate) const NOT_LISTED: u32 = u32::MAX - 1;

/// A slot of a [`Block`] that holds a live value, found by
/// [`Block::held`]: its flat index and generation and the pointers to its
/// parts, for [`Block::take_held`].
pub(crate) struct HeldSlot<T> {
    /// The slot's flat index.
    index: usize,
    /// Its generation, which its state word holds.
    generation: u32,
    /// Its state word.
    state: *mut u32,
    /// Its payload, which holds the value.
    payload: *mut Payload<T>,
}

/// One block of a hive: `limit - base` slots at a fixed address over the
/// flat indices `base..limit`, of which `base..end` have been used, with
/// its vacancy bits, its free list, its counts and its links in the hive's
/// list of blocks with room. A block of no slots is a *freed range*: it
/// keeps only its floor.
#[repr(C, align(64))]
pub struct Block<T> {
    /// The slots, by flat index: the payloads in an allocation of the
    /// block's own (`allocate_uninit(limit - base)`, moved back by `base`;
    /// freed in `Drop`, never reallocated or moved while the block lives),
    /// the state words in the hive's one array (see `Block::new`); for a
    /// freed range, `FlatBases::NONE`. Invariant: the slots of the flat
    /// indices `base..end` are initialized; of the others, the state words
    /// are `VACANT` (so that the hive's lookup by key can read any state
    /// word of its array: a key's generation never matches a vacant word)
    /// and the payloads are not initialized; no reference to a whole array
    /// is ever made, only to the parts of single slots.
    ptrs: FlatBases<T>,
    /// Past the last used slot, as a flat index. Invariant: `base <= end
    /// <= limit`; the slots `end..limit` have never held a value: their
    /// state words are `VACANT`, their payloads uninitialized.
    end: u32,
    /// The first slot (flat index) of the block's free list, `NO_SLOT`
    /// or `SWEEP`. Invariant: the list, linked through `next_free` and
    /// ending in `NO_SLOT` or `SWEEP`, then (if it ends in `SWEEP`) the
    /// slots `sweep..end`, hold exactly the vacant used slots whose
    /// generation is below the hive's `max_generation`, each once.
    /// Insertion trusts this: it reads the head's state word and link, or
    /// the sweep's state word, unchecked.
    free_head: u32,
    /// Vacancy bits, by flat index: bit `index % 64` of the word at
    /// `vacancy.wrapping_add(index / 64)` stands for flat index `index`.
    /// The words, from `Block::new`, cover `base - base % 64..limit`
    /// (`vacancy_words`); null for a freed range. Invariant: for a used
    /// slot (`base..end`), the bit is set iff the slot is vacant; every
    /// other bit is clear.
    vacancy: *mut u64,
    /// The number of occupied slots (used slots whose vacancy bit is
    /// clear). Kept rather than the vacant count so that a block with no
    /// value left is found with one compare (see `restart_if_emptied`).
    live: u32,
    /// Past the last slot, as a flat index. Invariant: `limit <= SWEEP`,
    /// so no slot's index is a list end (`SWEEP` or `NO_SLOT`).
    limit: u32,
    /// Where the sweep of an emptied block goes on, as a flat index (see
    /// "Refilling an emptied block" above): while the free list ends in
    /// `SWEEP`, `base <= sweep < end`, and the slots `sweep..end` follow
    /// the list; otherwise unused. Not beside `live`: the compiler then
    /// merged the sweep's two counter updates into one 8-byte vector
    /// store, which the next insertion's 4-byte load of `sweep` waited on
    /// (a refill of `u64`s took 3.2 ns an insertion instead of 2.1).
    sweep: u32,
    /// The flat index of the first slot.
    base: u32,
    /// The generation every slot starts at: its first occupant gets
    /// `floor + 1`. Invariant: every used slot's generation is above it. For a
    /// freed range, the floor of the next block over it: the highest
    /// generation the range ever issued.
    floor: u32,
    /// Vacant used slots whose generation reached the hive's
    /// `max_generation`: never reused. Invariant: `live() + retired + (slots
    /// on the free list) == end - base`.
    retired: u32,
    /// The block before this one on the hive's list of blocks with room
    /// (`NO_BLOCK` for the first), or `NOT_LISTED`. The hive's invariant:
    /// listed iff the block has a free slot ([`has_room`](Self::has_room)).
    pub(super) prev: u32,
    /// The block after this one on that list, or `NO_BLOCK`.
    pub(super) next: u32,
    /// Owns `Slot<T>` values (for the drop checker and auto traits).
    _owns: PhantomData<Slot<T>>,
}

// One cache line per block, as the module docs promise.
const _: () = assert!(mem::size_of::<Block<u64>>() == 64 && mem::align_of::<Block<u64>>() == 64);

// SAFETY: a block owns its slots like a `Box<[Slot<T>]>` would; sending it
// sends the values.
unsafe impl<T: Send> Send for Block<T> {}
// SAFETY: shared access to a block gives only shared access to its values
// (`&self` methods hand out `&T`, and raw pointers whose use is the
// caller's responsibility).
unsafe impl<T: Sync> Sync for Block<T> {}

/// The number of vacancy words of a block of `len` slots from flat index
/// `base`: one bit for every flat index of `base - base % 64..base + len`.
fn vacancy_words(base: usize, len: usize) -> usize {
    (base % WORD_BITS + len).div_ceil(WORD_BITS)
}

/// Whether a block whose free list starts at `free_head` and whose
/// never-used slots start at `end` (below `limit`) can take an insertion:
/// the rule of [`Block::has_room`], also applied by [`Block::insert_with`]
/// to the values it holds in registers after its writes.
#[inline(always)]
fn room(free_head: u32, end: u32, limit: u32) -> bool {
    free_head != NO_SLOT || end < limit
}

impl<T> Block<T> {
    /// A block of `len` never-used slots over the flat indices from
    /// `base`, whose first occupants get generation `floor + 1`: its
    /// payloads in an allocation of their own, not initialized; its state
    /// words in the hive's array, `states` (indexed by flat index); its
    /// vacancy words zeroed.
    ///
    /// # Safety
    ///
    /// For every `index` in `base..base + len`, `states.wrapping_add(index)`
    /// is a valid state word, initialized to `VACANT`, written by nothing
    /// but this block and read only by it and the hive's lookups, until the
    /// block is dropped or given another array
    /// ([`set_states`](Self::set_states)).
    ///
    /// # Panics
    ///
    /// If `len` is 0 or `base + len` is above `SWEEP` (`u32::MAX - 1`).
    pub(crate) unsafe fn new(base: usize, len: usize, floor: u32, states: *mut u32) -> Self {
        assert!(len > 0, "a block of no slots");
        let limit = base
            .checked_add(len)
            .filter(|&limit| limit <= SWEEP as usize)
            .unwrap_or_else(|| panic!("block of {len} slots from {base} past index {SWEEP}"));
        let words = alloc::vec![0u64; vacancy_words(base, len)].into_boxed_slice();
        let words = Box::into_raw(words).cast::<u64>();
        let payloads = allocate_uninit::<Payload<T>>(len).as_ptr();
        // A freed range given its storage: every other field starts as one.
        let mut block = Block::freed(base, floor);
        block.ptrs = FlatBases::new(states, payloads.wrapping_sub(base));
        block.vacancy = words.wrapping_sub(base / WORD_BITS);
        block.limit = limit as u32;
        block
    }

    /// A freed range at flat index `base`, which keeps only its floor: the
    /// next block over it starts its slots above `floor`.
    pub(crate) fn freed(base: usize, floor: u32) -> Self {
        Block {
            ptrs: FlatBases::NONE,
            end: base as u32,
            free_head: NO_SLOT,
            sweep: base as u32,
            vacancy: ptr::null_mut(),
            live: 0,
            limit: base as u32,
            base: base as u32,
            floor,
            retired: 0,
            prev: NOT_LISTED,
            next: NO_BLOCK,
            _owns: PhantomData,
        }
    }

    /// Gives the block the hive's state array after it moved.
    ///
    /// # Safety
    ///
    /// As for [`new`](Self::new), but for the initial `VACANT`: `states`
    /// leads from each of the block's flat indices to a word holding what
    /// the old array held there.
    pub(crate) unsafe fn set_states(&mut self, states: *mut u32) {
        if self.len() > 0 {
            self.ptrs = FlatBases::new(states, self.ptrs.payload_ptr(0));
        }
    }

    /// The flat index of slot 0.
    #[inline]
    pub(crate) fn base(&self) -> usize {
        self.base as usize
    }

    /// Past the last slot, as a flat index (`base` for a freed range).
    #[inline]
    pub(crate) fn limit(&self) -> u32 {
        self.limit
    }

    /// The storage's flat bases (`FlatBases::NONE` for a freed range): the
    /// state words of `base..limit` are initialized, the payloads of the
    /// used slots (see the invariant on the field).
    #[inline]
    pub(crate) fn flat_bases(&self) -> FlatBases<T> {
        self.ptrs
    }

    /// Number of slots (0 for a freed range).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        (self.limit - self.base) as usize
    }

    /// Number of slots in use since the block was made (the others have
    /// never held a value).
    #[cfg(feature = "serde")]
    #[inline]
    pub(crate) fn fresh(&self) -> usize {
        (self.end - self.base) as usize
    }

    /// The first slot of the free list, or `NO_SLOT`.
    #[inline(always)]
    pub(crate) fn free_head(&self) -> u32 {
        self.free_head
    }

    /// Whether a never-used slot is left.
    #[inline(always)]
    pub(crate) fn has_fresh(&self) -> bool {
        self.end < self.limit
    }

    /// Whether an insertion can go here: a slot on the free list or a
    /// never-used one.
    #[inline(always)]
    pub(crate) fn has_room(&self) -> bool {
        room(self.free_head, self.end, self.limit)
    }

    /// Number of occupied slots.
    #[inline]
    pub(crate) fn live(&self) -> usize {
        self.live as usize
    }

    /// The generation the block's slots start above.
    #[inline]
    pub(crate) fn floor(&self) -> u32 {
        self.floor
    }

    /// Number of retired slots.
    #[inline]
    pub(crate) fn retired(&self) -> usize {
        self.retired as usize
    }

    /// Whether the block has slots and every one retired: it can never
    /// take a value again (and holds none).
    #[inline]
    pub(crate) fn is_spent(&self) -> bool {
        self.limit > self.base && self.retired == self.limit - self.base
    }

    /// Whether this block is on the hive's list of blocks with room.
    #[inline]
    pub(crate) fn is_listed(&self) -> bool {
        self.prev != NOT_LISTED
    }

    /// Bytes of heap memory the block holds (payloads and vacancy words;
    /// the state words are the hive's).
    pub(crate) fn heap_bytes(&self) -> usize {
        let len = self.len();
        if len == 0 {
            return 0;
        }
        len * mem::size_of::<Payload<T>>() + vacancy_words(self.base(), len) * mem::size_of::<u64>()
    }

    /// The state word and payload of flat index `index`, if it is a used
    /// slot of this block; both initialized, as the state word says.
    ///
    /// # Safety
    ///
    /// `index` is at or past the block's first slot (`base`): the hive
    /// finds the block from the index.
    #[inline(always)]
    unsafe fn used_parts(&self, index: usize) -> Option<(*mut u32, *mut Payload<T>)> {
        debug_assert!(index >= self.base());
        if index < self.end as usize {
            Some((self.ptrs.state_ptr(index), self.ptrs.payload_ptr(index)))
        } else {
            None
        }
    }

    /// Slot `index`, which must be used (`base..end`).
    #[inline]
    fn slot_at(&self, index: usize) -> SlotRef<'_, T> {
        assert!(
            (self.base()..self.end as usize).contains(&index),
            "slot {index} not used"
        );
        let (state, payload) = (self.ptrs.state_ptr(index), self.ptrs.payload_ptr(index));
        // The references cover one slot's parts and live no longer than
        // `&self`, during which nothing writes to the block.
        // SAFETY: a used slot is in the storage and initialized (invariant
        // on `ptrs`), and its state word describes the payload.
        unsafe { SlotRef::from_parts(&*state, &*payload) }
    }

    /// Slot `index`, which must be used, mutably.
    #[inline]
    fn slot_mut_at(&mut self, index: usize) -> SlotMut<'_, T> {
        assert!(
            (self.base()..self.end as usize).contains(&index),
            "slot {index} not used"
        );
        let (state, payload) = (self.ptrs.state_ptr(index), self.ptrs.payload_ptr(index));
        // SAFETY: as in `slot_at`; `&mut self` makes these the only
        // references into the slot.
        unsafe { SlotMut::from_parts(&mut *state, &mut *payload) }
    }

    /// The word of vacancy bits that holds flat index `index`'s bit, and
    /// that bit.
    #[inline(always)]
    fn vacancy_bit(&self, index: usize) -> (*mut u64, u64) {
        (
            self.vacancy.wrapping_add(index / WORD_BITS),
            1 << (index % WORD_BITS),
        )
    }

    /// Sets the vacancy bit of used slot `index`.
    #[inline(always)]
    fn set_vacant_bit(&mut self, index: usize) {
        debug_assert!((self.base()..self.end as usize).contains(&index));
        let (word, bit) = self.vacancy_bit(index);
        // SAFETY: a used slot's word is one of the block's vacancy words
        // (invariant on `vacancy`), and `&mut self` makes the access unique.
        unsafe { *word |= bit };
    }

    /// Clears the vacancy bit of used slot `index`.
    #[inline(always)]
    fn clear_vacant_bit(&mut self, index: usize) {
        debug_assert!((self.base()..self.end as usize).contains(&index));
        let (word, bit) = self.vacancy_bit(index);
        // SAFETY: as in `set_vacant_bit`.
        unsafe { *word &= !bit };
    }

    /// The vacancy word `word` (a flat word index: flat indices `64 *
    /// word..`), which must hold a used slot's bit.
    #[inline(always)]
    fn vacancy_word(&self, word: usize) -> u64 {
        Self::vacancy_at(self.vacancy, word)
    }

    /// Word `word` of the vacancy words at `vacancy` (a block's, copied out
    /// so that a loop need not read the header again); the one read of a
    /// vacancy word. The word must hold a used slot's bit.
    #[inline(always)]
    fn vacancy_at(vacancy: *const u64, word: usize) -> u64 {
        // A word with a used slot's bit is one of the block's vacancy words
        // (invariant on `vacancy`).
        // SAFETY: so it is allocated, and not written while it is borrowed.
        unsafe { *vacancy.wrapping_add(word) }
    }

    /// Vacancy word `word` (flat indices `64 * word..64 * word + 64`)
    /// inverted: a bit is set for each occupied used slot, and for each
    /// index that is not a used slot (the caller cuts those off). The word
    /// must hold a used slot's bit.
    #[inline(always)]
    fn occupied_word(vacancy: *const u64, word: usize) -> u64 {
        !Self::vacancy_at(vacancy, word)
    }

    /// The occupied used slots among the flat indices `start..stop`, which
    /// lie in one 64-slot word and in `base..end`: a mask from that word's
    /// first index (`start / 64 * 64`).
    #[inline(always)]
    fn occupied_in(vacancy: *const u64, start: usize, stop: usize) -> u64 {
        debug_assert!(start < stop && (stop - 1) / WORD_BITS == start / WORD_BITS);
        let word = start / WORD_BITS;
        let high = stop - word * WORD_BITS; // 1..=64
        Self::occupied_word(vacancy, word)
            & (!0u64 << (start % WORD_BITS))
            & (!0u64 >> (WORD_BITS - high))
    }

    /// The value in slot `index`.
    ///
    /// # Safety
    ///
    /// Slot `index` must be a used, occupied slot of this block.
    #[inline]
    pub(crate) unsafe fn get_unchecked(&self, index: usize) -> &T {
        debug_assert!(self.slot_at(index).is_occupied());
        // SAFETY: the caller guarantees the slot is used and occupied, so
        // in the storage with its value initialized.
        unsafe { &*Payload::value_ptr(self.ptrs.payload_ptr(index)) }
    }

    /// The value in slot `index`, mutably.
    ///
    /// # Safety
    ///
    /// Slot `index` must be a used, occupied slot of this block.
    #[inline]
    pub(crate) unsafe fn get_unchecked_mut(&mut self, index: usize) -> &mut T {
        debug_assert!(self.slot_at(index).is_occupied());
        // SAFETY: as in `get_unchecked`; `&mut self` makes it unique.
        unsafe { &mut *Payload::value_ptr(self.ptrs.payload_ptr(index)) }
    }

    /// If the block has no value left and no retired slot (which a sweep
    /// would have to skip), turns its free list, which holds a slot, into
    /// a sweep from `base` (see "Refilling an emptied block" above) and
    /// returns `true`. Every used slot is then vacant and listed, so the
    /// sweep takes the same slots; the links are dropped, not rewritten.
    /// Called on the way to a listed slot only: an append and a removal do
    /// not reach it.
    #[inline(always)]
    fn restart_if_emptied(&mut self) -> bool {
        debug_assert!(self.free_head < SWEEP);
        let restart = self.live == 0 && self.retired == 0;
        if restart {
            // The list holds a slot, so one is used: `base < end`.
            self.free_head = SWEEP;
            self.sweep = self.base;
        }
        restart
    }

    /// The `(index, generation)` the next insertion gets: the head of the
    /// free list, else the sweep's next slot, else the first never-used
    /// slot (after starting an emptied block over, as the insertion
    /// would). The block must have room.
    #[inline]
    pub(crate) fn next_spot(&mut self) -> (usize, u32) {
        let index = match self.free_head {
            NO_SLOT => return (self.end as usize, self.floor + 1),
            SWEEP => self.sweep as usize,
            head => {
                if self.restart_if_emptied() {
                    self.sweep as usize
                } else {
                    head as usize
                }
            }
        };
        (index, self.slot_at(index).generation() + 1)
    }

    /// Puts `make(index, generation)` into the next spot (see
    /// [`next_spot`](Self::next_spot)) and returns that spot, and whether
    /// the block still [has room](Self::has_room) after it (decided from
    /// the values the insertion read, which `has_room` would read again
    /// past the writes). `make` runs before any slot or count changes, so
    /// if it panics the block holds what it held (an emptied block may
    /// have been made a sweep, which takes the same slots).
    ///
    /// # Panics
    ///
    /// If the block has no room.
    #[inline(always)]
    pub(crate) fn insert_with(&mut self, make: impl FnOnce(usize, u32) -> T) -> (usize, u32, bool) {
        // An append first: the common way while a hive grows.
        match self.free_head {
            NO_SLOT => self.append_with(make),
            SWEEP => {
                // Laid out after the other two ways: a sweep runs once a
                // block's worth of insertions after a block emptied.
                super::cold_path();
                self.sweep_with(make)
            }
            head => {
                if self.restart_if_emptied() {
                    return self.sweep_with(make);
                }
                self.unlink_with(head, make)
            }
        }
    }

    /// [`insert_with`](Self::insert_with) into the free list's head,
    /// `head` (a slot, not a list end).
    #[inline(always)]
    fn unlink_with(&mut self, head: u32, make: impl FnOnce(usize, u32) -> T) -> (usize, u32, bool) {
        let index = head as usize;
        // The free list holds vacant used slots of this block below the
        // last generation (the invariant on `free_head`).
        // SAFETY: so the head is one.
        let (generation, next) = unsafe { self.reuse_with(index, make) };
        self.free_head = next;
        (index, generation, room(next, self.end, self.limit))
    }

    /// [`insert_with`](Self::insert_with) into the sweep's next slot (the
    /// free list ends in `SWEEP` at its head).
    #[inline(always)]
    fn sweep_with(&mut self, make: impl FnOnce(usize, u32) -> T) -> (usize, u32, bool) {
        let (index, end) = (self.sweep as usize, self.end);
        debug_assert!(self.base() <= index && index < end as usize);
        // The slots `sweep..end` are vacant used slots below the last
        // generation (the invariant on `free_head`); the link is unused.
        // SAFETY: so this one is.
        let (generation, _) = unsafe { self.reuse_with(index, make) };
        let next = index as u32 + 1;
        self.sweep = next;
        // The list stays `SWEEP` until the sweep reaches `end`.
        let head = if next < end {
            SWEEP
        } else {
            self.free_head = NO_SLOT;
            NO_SLOT
        };
        (index, generation, room(head, end, self.limit))
    }

    /// Puts `make(index, last + 1)` into vacant used slot `index`, whose
    /// last occupant had generation `last`, counting it and clearing its
    /// vacancy bit; gives the generation and the free-list link the slot
    /// held (read before `make` runs). The caller files the slot off the
    /// list or the sweep.
    ///
    /// # Safety
    ///
    /// Slot `index` is a used, vacant slot of this block whose generation
    /// is below the hive's `max_generation` (so `last + 1` is a
    /// generation).
    #[inline(always)]
    unsafe fn reuse_with(
        &mut self,
        index: usize,
        make: impl FnOnce(usize, u32) -> T,
    ) -> (u32, u32) {
        debug_assert!(!self.slot_at(index).is_occupied());
        debug_assert!(self.slot_at(index).generation() >= self.floor);
        let (state, payload) = (self.ptrs.state_ptr(index), self.ptrs.payload_ptr(index));
        // A vacant used slot's parts are initialized (the caller's
        // guarantee), the state word `VACANT | last` and the payload a
        // link, and nothing else reaches them.
        // SAFETY: so both reads are of initialized memory.
        let (generation, next) =
            unsafe { ((*state & !VACANT) + 1, *Payload::next_free_ptr(payload)) };
        let value = make(index, generation);
        // SAFETY: the slot is vacant (its link read above is no value to
        // drop): writing the payload, then the state word, occupies it.
        unsafe {
            payload.write(Payload::occupied(value));
            state.write(Slot::<T>::occupied_state(generation));
        }
        self.live += 1;
        self.clear_vacant_bit(index);
        (generation, next)
    }

    /// [`insert_with`](Self::insert_with) into the first never-used slot.
    #[inline(always)]
    fn append_with(&mut self, make: impl FnOnce(usize, u32) -> T) -> (usize, u32, bool) {
        let index = self.end as usize;
        let limit = self.limit as usize;
        assert!(index < limit, "insert into a full block");
        let generation = self.floor + 1;
        let value = make(index, generation);
        // `base <= end < limit`: a slot of the storage, never used, so
        // not initialized, and writing it drops nothing.
        // SAFETY: as just said.
        unsafe {
            self.ptrs.payload_ptr(index).write(Payload::occupied(value));
            self.ptrs
                .state_ptr(index)
                .write(Slot::<T>::occupied_state(generation));
        }
        self.end = index as u32 + 1;
        self.live += 1;
        (
            index,
            generation,
            room(NO_SLOT, index as u32 + 1, limit as u32),
        )
    }

    /// Takes the value named by `(index, generation)` out, if it is live:
    /// the slot is left vacant (counted, with its vacancy bit) and linked
    /// to the free list's head, but not yet filed: the caller then calls
    /// [`push_free`](Self::push_free) or [`count_retired`](Self::count_retired)
    /// (so that one compare of the generation decides both the block's and
    /// the hive's filing). `generation` must be the slot's own
    /// (`Slot::matched_generation` of the key's). (The value is returned
    /// alone: a `(u32, T)` pair made the compiler shuffle large values
    /// through misaligned stack copies.)
    ///
    /// # Safety
    ///
    /// `index` is at or past `base`.
    #[inline(always)]
    pub(crate) unsafe fn take(&mut self, index: usize, generation: u32) -> Option<T> {
        debug_assert_eq!(generation, Slot::<T>::matched_generation(generation));
        // SAFETY: the caller's guarantee.
        let (state, payload) = unsafe { self.used_parts(index) }?;
        // SAFETY: a used slot's state word is initialized.
        if unsafe { *state } != generation {
            super::cold_path();
            return None;
        }
        // Linked to the free list's head at once (a retired slot's link is
        // never read), so the slot is written once.
        let free_head = self.free_head;
        // SAFETY: the slot matched a generation, so it is occupied; `&mut self`
        // makes these the only references into it.
        let value = unsafe { SlotMut::from_parts(&mut *state, &mut *payload).vacate(free_head) };
        self.live -= 1;
        self.set_vacant_bit(index);
        Some(value)
    }

    /// The parts of the slot `(index, generation)` names, if it holds a
    /// live value of this block: [`take`](Self::take) in two steps, for
    /// values returned through memory (see [`take_held`](Self::take_held)).
    /// `generation` must be the slot's own (`Slot::matched_generation` of
    /// the key's).
    ///
    /// # Safety
    ///
    /// `index` is at or past `base`.
    #[inline(always)]
    pub(crate) unsafe fn held(&self, index: usize, generation: u32) -> Option<HeldSlot<T>> {
        debug_assert_eq!(generation, Slot::<T>::matched_generation(generation));
        // SAFETY: the caller's guarantee.
        let (state, payload) = unsafe { self.used_parts(index) }?;
        // SAFETY: a used slot's state word is initialized.
        if unsafe { *state } != generation {
            super::cold_path();
            return None;
        }
        Some(HeldSlot {
            index,
            generation,
            state,
            payload,
        })
    }

    /// Takes the value out of the slot [`held`](Self::held) found: the
    /// slot is left vacant (counted, with its vacancy bit) and linked to
    /// `link`, and not filed: the caller has filed it already (set the free
    /// list's head with [`set_free_head`](Self::set_free_head), or counted
    /// it retired), so that no branch lies between the read of the value
    /// and its return. (With one, a value too large for registers was
    /// copied through the stack twice.) The slot's parts come from `held`,
    /// not found again.
    ///
    /// # Safety
    ///
    /// `slot` was found by `held` on this block, with nothing taken from
    /// the slot and no slot added to or dropped from the block since.
    #[inline(always)]
    pub(crate) unsafe fn take_held(&mut self, slot: HeldSlot<T>, link: u32) -> T {
        let HeldSlot {
            index,
            generation,
            state,
            payload,
        } = slot;
        debug_assert!(self.slot_at(index).is_occupied());
        // The value is read once: the slot is marked vacant next. The slot
        // is used and occupied, its state word the generation `held` read
        // (the caller's guarantee).
        // SAFETY: so, with `&mut self`, these are its only pointers in use.
        let value = unsafe {
            let value = Payload::value_ptr(payload).read();
            Payload::next_free_ptr(payload).write(link);
            state.write(Slot::<T>::vacant_state(generation));
            value
        };
        self.live -= 1;
        self.set_vacant_bit(index);
        value
    }

    /// Sets the free list's head: to a slot just taken by
    /// [`take_held`](Self::take_held) (and so linked to the old head), or
    /// to the head it already is (when the slot retired).
    ///
    /// # Safety
    ///
    /// `head` is the list's head, or a used slot of this block that is
    /// vacant, below the last generation and linked to the head: the free
    /// list is what `insert_with` reads slots from without checking them.
    #[inline(always)]
    pub(crate) unsafe fn set_free_head(&mut self, head: u32) {
        debug_assert!(
            head == self.free_head
                || (self.slot_at(head as usize).next_free() == self.free_head
                    && !self.slot_at(head as usize).is_occupied())
        );
        self.free_head = head;
    }

    /// Makes slot `index`, just taken (see [`take`](Self::take)) with a
    /// generation below `max_generation`, the head of the free list (it
    /// is linked to the old head).
    #[inline(always)]
    pub(crate) fn push_free(&mut self, index: usize) {
        debug_assert_eq!(self.slot_at(index).next_free(), self.free_head);
        self.free_head = index as u32;
    }

    /// Counts slot `index`, just taken (see [`take`](Self::take)) at
    /// `max_generation`, as retired.
    #[inline(always)]
    pub(crate) fn count_retired(&mut self) {
        self.retired += 1;
    }

    /// Files used slot `index`, just vacated with `generation` and linked
    /// to the free list's head: on the free list or retired, with its
    /// vacancy bit and count.
    #[inline(always)]
    fn file(&mut self, index: usize, generation: u32, max_generation: u32) {
        if generation < max_generation {
            self.free_head = index as u32;
        } else {
            self.retired += 1;
        }
        self.live -= 1;
        self.set_vacant_bit(index);
    }

    /// The lowest occupied slot at or after flat index `from`.
    fn next_occupied(&self, from: usize) -> Option<usize> {
        let (mut start, end) = (from.max(self.base()), self.end as usize);
        while start < end {
            let stop = ((start / WORD_BITS + 1) * WORD_BITS).min(end);
            let occupied = Self::occupied_in(self.vacancy, start, stop);
            if occupied != 0 {
                return Some(start / WORD_BITS * WORD_BITS + occupied.trailing_zeros() as usize);
            }
            start = stop;
        }
        None
    }

    /// Takes the value out of the lowest occupied slot at or after flat
    /// index `from`, filing the slot as [`take`](Self::take) does:
    /// `(index, generation, value)`.
    pub(crate) fn take_next(
        &mut self,
        from: usize,
        max_generation: u32,
    ) -> Option<(usize, u32, T)> {
        let index = self.next_occupied(from)?;
        let generation = self.slot_at(index).generation();
        let head = self.free_head;
        // SAFETY: its vacancy bit is clear, so the used slot is occupied.
        let value = unsafe { self.slot_mut_at(index).vacate(head) };
        self.file(index, generation, max_generation);
        Some((index, generation, value))
    }

    /// Calls `visit(index, generation, &mut value)` for each value in slot
    /// order; each time it returns `false`, the value is taken out and its
    /// slot filed (as [`take`](Self::take) does), and then `evicted(generation,
    /// value)` is called with it (to count it and drop it). If either
    /// closure panics, the values not yet visited stay in place and the
    /// block is consistent.
    pub(crate) fn retain(
        &mut self,
        max_generation: u32,
        mut visit: impl FnMut(usize, u32, &mut T) -> bool,
        mut evicted: impl FnMut(u32, T),
    ) {
        let (mut start, end) = (self.base(), self.end as usize);
        while start < end {
            let word_base = start / WORD_BITS * WORD_BITS;
            let stop = (word_base + WORD_BITS).min(end);
            // The occupied slots of this word as they were before its pass:
            // each is visited once, and only that pass vacates them.
            let mut occupied = Self::occupied_in(self.vacancy, start, stop);
            while occupied != 0 {
                let index = word_base + occupied.trailing_zeros() as usize;
                occupied &= occupied - 1;
                let generation = self.slot_at(index).generation();
                // SAFETY: the slot is used and occupied, as said; `&mut
                // self` makes the reference unique.
                let value = unsafe { &mut *Payload::value_ptr(self.ptrs.payload_ptr(index)) };
                if !visit(index, generation, value) {
                    let head = self.free_head;
                    // SAFETY: occupied, as said, and vacated only here.
                    let value = unsafe { self.slot_mut_at(index).vacate(head) };
                    self.file(index, generation, max_generation);
                    evicted(generation, value);
                }
            }
            start = stop;
        }
    }

    /// Drops every value, leaving the slots vacant with their generations
    /// and no links (not on the free list: call
    /// [`rebuild_free_list`](Self::rebuild_free_list) after). If a `Drop`
    /// panics, the others are still dropped and the panic then propagates
    /// (a second panic aborts).
    pub(crate) fn drop_values(&mut self) {
        if self.live() == 0 {
            return;
        }
        super::finish_on_panic(self, Self::drop_values_unguarded);
    }

    /// Drops every value; a panicking `Drop` stops it, leaving the rest in
    /// place and consistent (the vacated slots counted and marked).
    fn drop_values_unguarded(&mut self) {
        let mut from = self.base();
        while let Some(index) = self.next_occupied(from) {
            from = index + 1;
            // Vacated before the drop, so a panicking `Drop` cannot repeat it.
            // SAFETY: its vacancy bit is clear, so the used slot is occupied.
            let value = unsafe { self.slot_mut_at(index).vacate(NO_SLOT) };
            self.live -= 1;
            self.set_vacant_bit(index);
            drop(value);
        }
    }

    /// Links the vacant used slots in slot order (the lowest becomes the
    /// head) and counts those whose generation reached `max_generation` as
    /// retired, instead of linking them. One pass over the used slots,
    /// backwards; only vacant slots are written, so no pointer to a live
    /// value is disturbed.
    pub(crate) fn rebuild_free_list(&mut self, max_generation: u32) {
        let (mut head, mut retired) = (NO_SLOT, 0);
        for index in (self.base()..self.end as usize).rev() {
            let slot = self.slot_mut_at(index);
            let (occupied, generation) = (slot.as_ref().is_occupied(), slot.as_ref().generation());
            if occupied {
                continue;
            }
            if generation >= max_generation {
                retired += 1;
                continue;
            }
            slot.set_next_free(head);
            head = index as u32;
        }
        self.free_head = head;
        self.retired = retired;
    }

    /// The highest generation of any slot ever used, or the floor: a block
    /// made later over the same index range must start above it.
    pub(crate) fn max_generation(&self) -> u32 {
        self.used_slots()
            .map(SlotRef::generation)
            .fold(self.floor, u32::max)
    }

    /// The slots ever used (`base..end`), in order.
    #[inline]
    pub(crate) fn used_slots(&self) -> impl ExactSizeIterator<Item = SlotRef<'_, T>> {
        (self.base()..self.end as usize).map(|index| self.slot_at(index))
    }

    /// Appends a slot with `state` and `payload` (used by clone and
    /// deserialization), counting and marking it if it is vacant. The
    /// slot is not filed: the caller sets the free list.
    ///
    /// # Panics
    ///
    /// If no never-used slot is left.
    fn push_slot(&mut self, state: u32, payload: Payload<T>) {
        let index = self.end as usize;
        assert!(index < self.limit as usize, "push to a full block");
        // SAFETY: `base <= end < limit`: in the storage, and not
        // initialized, so writing drops nothing.
        unsafe {
            self.ptrs.state_ptr(index).write(state);
            self.ptrs.payload_ptr(index).write(payload);
        }
        self.end += 1;
        if state & VACANT == 0 {
            self.live += 1;
        } else {
            self.set_vacant_bit(index);
        }
    }

    /// Appends an occupied slot of `generation` (for deserialization).
    #[cfg(feature = "serde")]
    pub(crate) fn push_occupied(&mut self, generation: u32, value: T) {
        self.push_slot(
            Slot::<T>::occupied_state(generation),
            Payload::occupied(value),
        );
    }

    /// Appends a vacant slot whose last occupant had `generation`, as if
    /// its occupants had come and gone (for deserialization; not linked:
    /// rebuild the free list after).
    #[cfg(feature = "serde")]
    pub(crate) fn push_vacant(&mut self, generation: u32) {
        self.push_slot(
            Slot::<T>::vacant_state(generation),
            Payload::vacant(NO_SLOT),
        );
    }

    /// Checks the block's invariants but the free list's and the listing
    /// (the hive's); panics on the first one broken. Gives the number of
    /// vacant used slots whose generation is below `max_generation`.
    pub(crate) fn check_invariants(&self, max_generation: u32) -> usize {
        assert!(
            self.base <= self.end && self.end <= self.limit,
            "used slots"
        );
        let len = self.len();
        if len == 0 {
            assert!(self.vacancy.is_null(), "freed range with vacancy words");
            assert_eq!((self.free_head, self.live, self.retired), (NO_SLOT, 0, 0));
            return 0;
        }
        let (mut vacant, mut retired, mut listable) = (0, 0, 0);
        for index in self.base()..self.end as usize {
            let slot = self.slot_at(index);
            let (word, bit) = self.vacancy_bit(index);
            // SAFETY: a used slot's vacancy word is the block's.
            let marked = unsafe { *word } & bit != 0;
            assert_eq!(!slot.is_occupied(), marked, "vacancy bit of slot {index}");
            assert!(
                slot.generation() > self.floor,
                "slot {index} at or below the floor"
            );
            assert!(slot.generation() <= max_generation);
            if !slot.is_occupied() {
                vacant += 1;
                if slot.generation() >= max_generation {
                    retired += 1;
                } else {
                    listable += 1;
                }
            }
        }
        for index in self.end as usize..self.limit as usize {
            // Every state word below `limit` is initialized (invariant on
            // `ptrs`), and `&self` keeps writers away.
            // SAFETY: so the read is of an initialized `u32`.
            let state = unsafe { *self.ptrs.state_ptr(index) };
            assert_eq!(state, VACANT, "state word of never-used slot {index}");
        }
        // No bit for a slot that is not used: the never-used slots and the
        // flat indices of the first word before `base`.
        let base = self.base();
        for word in base / WORD_BITS..(base + len).div_ceil(WORD_BITS) {
            let first = word * WORD_BITS;
            let mut used = 0u64;
            for bit in 0..WORD_BITS {
                if (base..self.end as usize).contains(&(first + bit)) {
                    used |= 1 << bit;
                }
            }
            assert_eq!(
                self.vacancy_word(word) & !used,
                0,
                "vacancy bit of an unused slot"
            );
        }
        assert_eq!(
            (self.end - self.base) as usize - vacant,
            self.live as usize,
            "live count"
        );
        assert_eq!(retired, self.retired as usize, "retired count");
        // The free list, then the sweep: exactly the listable slots, each
        // once.
        let mut seen = alloc::vec![false; len];
        let mut on_list = 0;
        let mut visit = |index: usize| {
            assert!(
                (base..self.end as usize).contains(&index),
                "free list holds slot {index}, not a used one"
            );
            assert!(!seen[index - base], "free list cycle at {index}");
            seen[index - base] = true;
            let slot = self.slot_at(index);
            assert!(!slot.is_occupied() && slot.generation() < max_generation);
            on_list += 1;
        };
        let mut cursor = self.free_head;
        while cursor != NO_SLOT && cursor != SWEEP {
            visit(cursor as usize);
            cursor = self.slot_at(cursor as usize).next_free();
        }
        if cursor == SWEEP {
            assert!(
                base <= self.sweep as usize && self.sweep < self.end,
                "sweep of the block at {base} past its used slots"
            );
            (self.sweep as usize..self.end as usize).for_each(&mut visit);
        }
        assert_eq!(on_list, listable, "free list of the block at {base}");
        listable
    }
}

impl<T> Drop for Block<T> {
    fn drop(&mut self) {
        /// Frees the storage, after dropping whatever values remain (all
        /// of them if no `Drop` panicked).
        struct Free<'a, T>(&'a mut Block<T>);
        impl<T> Drop for Free<'_, T> {
            fn drop(&mut self) {
                let block = &mut *self.0;
                // Values without drop glue need no visit: freeing the
                // memory is all there is to do.
                if mem::needs_drop::<T>() {
                    block.drop_values_unguarded();
                }
                let (base, len) = (block.base(), block.len());
                if len == 0 {
                    return;
                }
                // Freeing drops no value twice: every value was dropped
                // above, and the block is not used again.
                // The payloads are `allocate_uninit(len)` moved back by `base`
                // and `vacancy` the boxed words moved back by `base / 64`
                // (`Block::new`); the state words are the hive's.
                // SAFETY: so these free what `Block::new` allocated, once.
                unsafe {
                    let payloads = block.ptrs.payload_ptr(base);
                    free_uninit(ptr::NonNull::new_unchecked(payloads), len);
                    let words = block.vacancy.wrapping_add(base / WORD_BITS);
                    drop(Box::from_raw(ptr::slice_from_raw_parts_mut(
                        words,
                        vacancy_words(base, len),
                    )));
                }
            }
        }
        let free = Free(self);
        if mem::needs_drop::<T>() {
            free.0.drop_values_unguarded();
        }
        drop(free);
    }
}

impl<T: Clone> Block<T> {
    /// A copy with the same slots, generations, links, values, counts,
    /// floor and listing, its state words in `states`. If a `clone`
    /// panics, the copy holds the slots copied so far, consistently, and
    /// is dropped with them.
    ///
    /// # Safety
    ///
    /// As for [`new`](Self::new), for a block of this one's flat indices,
    /// but for the initial `VACANT`: the words of the slots this block has
    /// never used must hold what this block's hold (`VACANT`), the others
    /// any initialized value (the copy writes them).
    pub(crate) unsafe fn clone_onto(&self, states: *mut u32) -> Self {
        if self.len() == 0 {
            return Block::freed(self.base(), self.floor);
        }
        // The caller's guarantee holds but for the words of this block's
        // used slots, which `new` wants `VACANT`: `push_slot` writes each of
        // them below before anything reads it.
        // SAFETY: so `new`'s conditions hold for every word read.
        let mut copy = unsafe { Block::new(self.base(), self.len(), self.floor, states) };
        for from in self.used_slots() {
            let (state, payload) = from.cloned_parts();
            copy.push_slot(state, payload);
        }
        copy.free_head = self.free_head;
        copy.sweep = self.sweep;
        copy.retired = self.retired;
        copy.prev = self.prev;
        copy.next = self.next;
        copy
    }
}

/// `log2` of the number of slots of `T` that fit in `bytes`, kept within
/// `min..=max` (powers of two) and rounded down to a power of two: the
/// default block sizes of `Pool` and `Hive`.
pub(crate) const fn block_shift_for<T>(bytes: usize, min: usize, max: usize) -> u32 {
    let slot = slot_bytes::<T>();
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

/// The part of one block that a [`BlocksWalk`] has not handed out: the
/// flat indices `next..end` of its used slots.
///
/// Three words: the walk's two parts are live through a `for` loop over a
/// hive, and with the block's storage pointers, vacancy words and fullness
/// copied in (six words a part), the loop ran out of registers and copied
/// two of them back and forth on every item. The header is read again
/// only when a piece is taken.
struct BlockPart<T> {
    /// The block, or null for [`EMPTY`](Self::EMPTY). Invariant: a part
    /// that is not empty, or that was opened from a block, names a block of
    /// the walk's slice, borrowed as long as the walk.
    block: *const Block<T>,
    /// The first flat index not handed out.
    next: usize,
    /// Past the last flat index not handed out. Invariant: `next..end`
    /// lies in the block's used slots.
    end: usize,
}

impl<T> BlockPart<T> {
    /// Nothing.
    const EMPTY: Self = BlockPart {
        block: ptr::null(),
        next: 0,
        end: 0,
    };

    /// The whole of `block`.
    #[inline]
    fn open(block: &Block<T>) -> Self {
        BlockPart {
            block,
            next: block.base(),
            end: block.end as usize,
        }
    }

    /// The part's block header. The part must have been opened from a
    /// block (so not [`EMPTY`](Self::EMPTY)), as every part that is not
    /// empty was; it may be empty since.
    #[inline(always)]
    fn block(&self) -> &Block<T> {
        debug_assert!(!self.block.is_null(), "a part never opened");
        // SAFETY: not null, so a block of the walk's slice, borrowed as
        // long as the walk (the invariant on `block`).
        unsafe { &*self.block }
    }

    /// Whether every slot of the part is occupied (its block has no vacant
    /// slot): then the part is one run, read without its bits. The part
    /// must have been opened (see [`block`](Self::block)).
    #[inline(always)]
    fn is_full(&self) -> bool {
        let block = self.block();
        block.live == block.end - block.base
    }

    /// Whether nothing is left.
    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.next >= self.end
    }

    /// The occupied slots of the word holding flat index `start`, from
    /// `start` to `stop` (within that word), as a piece.
    #[inline(always)]
    fn bits(&self, start: usize, stop: usize) -> Piece<FlatBases<T>> {
        let block = self.block();
        Piece::Bits(Bits {
            ptrs: block.ptrs,
            base: start / WORD_BITS * WORD_BITS,
            bits: Block::<T>::occupied_in(block.vacancy, start, stop),
        })
    }

    /// All that is left of a full part, as one run; the part is then empty.
    #[inline(always)]
    fn take_whole(&mut self) -> Piece<FlatBases<T>> {
        let run = Run {
            ptrs: self.block().ptrs,
            next: self.next,
            end: self.end,
        };
        self.next = self.end;
        Piece::Run(run)
    }

    /// The lowest piece left (the part must not be empty): the whole part
    /// if it is full, else the rest of one 64-slot word.
    #[inline(always)]
    fn take_front(&mut self) -> Piece<FlatBases<T>> {
        if self.is_full() {
            return self.take_whole();
        }
        let start = self.next;
        let stop = ((start / WORD_BITS + 1) * WORD_BITS).min(self.end);
        self.next = stop;
        self.bits(start, stop)
    }

    /// The highest piece left (the part must not be empty).
    #[inline(always)]
    fn take_back(&mut self) -> Piece<FlatBases<T>> {
        if self.is_full() {
            return self.take_whole();
        }
        let stop = self.end;
        let start = ((stop - 1) / WORD_BITS * WORD_BITS).max(self.next);
        self.end = start;
        self.bits(start, stop)
    }

    /// Occupied slots left.
    #[cfg(any(test, feature = "rayon"))]
    fn count(&self) -> usize {
        let mut part = *self;
        let mut count = 0;
        while !part.is_empty() {
            count += match part.take_front() {
                Piece::Run(run) => run.end - run.next,
                Piece::Bits(bits) => bits.bits.count_ones() as usize,
            };
        }
        count
    }

    /// Folds `f` over the occupied slots left, in order. A full part and
    /// full words are plain counted loops, which the compiler can unroll
    /// or vectorize.
    #[inline]
    fn fold<B, Q: RunPos<T, FlatBases<T>>>(
        self,
        init: B,
        f: &mut impl SlotFold<T, FlatBases<T>, Q, B>,
    ) -> B {
        let mut acc = init;
        if self.is_empty() {
            return acc;
        }
        let Block { ptrs, vacancy, .. } = *self.block();
        if self.is_full() {
            // SAFETY: a full part is a run of occupied slots of the block,
            // handed out here once.
            return unsafe { fold_run::<T, _, Q, B>(ptrs, self.next, self.end, acc, f) };
        }
        let (start, end) = (self.next, self.end);
        let (first, last) = (start / WORD_BITS, (end - 1) / WORD_BITS);
        // Only the first and the last word are cut, each by one mask; the
        // words between are read whole (cutting every word with shifts
        // took half again the instructions of a sparse pass).
        let head = !0u64 << (start % WORD_BITS);
        let tail = !0u64 >> (WORD_BITS - 1 - (end - 1) % WORD_BITS);
        let mut word = Block::<T>::occupied_word(vacancy, first) & head;
        for w in first..last {
            // This word's share of `start..end` (all of it but for the first).
            // SAFETY: so its bits are occupied slots this part hands out once.
            acc = unsafe { fold_word::<T, _, Q, B>(ptrs, word, w * WORD_BITS, acc, f) };
            word = Block::<T>::occupied_word(vacancy, w + 1);
        }
        // SAFETY: as above, for the last word's share.
        unsafe { fold_word::<T, _, Q, B>(ptrs, word & tail, last * WORD_BITS, acc, f) }
    }
}

/// The walk of a list of blocks for a [`Cursor`], in block then slot
/// order, by flat index: a block with no vacant slot as one run, the
/// others as masks of their vacancy words (inverted, and cut to the used
/// slots).
pub struct BlocksWalk<'a, T> {
    /// What the front has left of the block it is in.
    front: BlockPart<T>,
    /// What the back has left of the block it is in.
    back: BlockPart<T>,
    /// The blocks between the two, not yet opened.
    rest: core::slice::Iter<'a, Block<T>>,
}

impl<T> Clone for BlocksWalk<'_, T> {
    fn clone(&self) -> Self {
        BlocksWalk {
            front: self.front,
            back: self.back,
            rest: self.rest.clone(),
        }
    }
}

impl<T> Clone for BlockPart<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for BlockPart<T> {}

/// Shared iteration over blocks.
pub(crate) type BlocksIter<'a, T> = Cursor<'a, T, BlocksWalk<'a, T>, &'a T>;
/// Exclusive iteration over blocks.
pub(crate) type BlocksIterMut<'a, T> = Cursor<'a, T, BlocksWalk<'a, T>, &'a mut T>;

impl<'a, T> BlocksWalk<'a, T> {
    /// Walks `blocks`.
    #[inline]
    fn new(blocks: &'a [Block<T>]) -> Self {
        BlocksWalk {
            front: BlockPart::EMPTY,
            back: BlockPart::EMPTY,
            rest: blocks.iter(),
        }
    }
}

/// Iterates `blocks`, which hold exactly `len` values in all.
#[inline]
pub(crate) fn iter<T>(blocks: &[Block<T>], len: usize) -> BlocksIter<'_, T> {
    // SAFETY: `&blocks` keeps the values from being written; `len` is the
    // caller's exact count.
    unsafe { Cursor::new(BlocksWalk::new(blocks), len) }
}

/// Iterates `blocks` mutably; they hold exactly `len` values in all.
#[inline]
pub(crate) fn iter_mut<T>(blocks: &mut [Block<T>], len: usize) -> BlocksIterMut<'_, T> {
    // The block headers are only read from here on; the values are
    // reached through each block's raw storage pointers, exclusively,
    // since `blocks` is borrowed mutably for the cursor's life.
    let blocks: &[Block<T>] = blocks;
    // SAFETY: as just said.
    unsafe { Cursor::new(BlocksWalk::new(blocks), len) }
}

/// The next piece for one end of a [`BlocksWalk`] (`near`; `far` is the
/// other end): from `near`'s part, else from the next block `next_block`
/// opens on its side, else, with no block between the two ends, from what
/// `far` holds, which `near` takes over while `far` is emptied in place
/// (its fields kept, so a loop merges no constants into them: see the
/// cursor's refill). Written once for both ends: the front passes
/// `Iterator::next` and `take_front`, the back `next_back` and `take_back`.
#[inline(always)]
fn next_piece<'a, T>(
    near: &mut BlockPart<T>,
    far: &mut BlockPart<T>,
    rest: &mut core::slice::Iter<'a, Block<T>>,
    next_block: fn(&mut core::slice::Iter<'a, Block<T>>) -> Option<&'a Block<T>>,
    take: fn(&mut BlockPart<T>) -> Piece<FlatBases<T>>,
) -> Option<Piece<FlatBases<T>>> {
    loop {
        if !near.is_empty() {
            return Some(take(near));
        } else if let Some(block) = next_block(rest) {
            if block.live() != 0 {
                *near = BlockPart::open(block);
            }
        } else {
            *near = *far;
            far.next = far.end;
            if near.is_empty() {
                return None;
            }
        }
    }
}

// SAFETY: `open` gives a block's used slots `base..end`, handed out as one
// run when the block has no vacant slot (`vacant == 0`, so every used slot
// is occupied) and otherwise as masks of its vacancy words, inverted and
// cut to the part (a clear bit of a used slot is an occupied slot); all
// are initialized and reached through the block's flat bases. Each block
// is opened once (the front and the back take blocks from the two ends of
// `rest`), and within a part the front takes from the bottom and the back
// from the top, each piece leaving the part at once, so every slot is
// handed out once and in order. A part moves whole from one end to the
// other only when `rest` is empty.
unsafe impl<T> Walk<T> for BlocksWalk<'_, T> {
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
        next_piece(
            &mut self.front,
            &mut self.back,
            &mut self.rest,
            Iterator::next,
            BlockPart::take_front,
        )
    }

    #[inline(always)]
    fn back(&mut self, left: usize) -> Option<Piece<FlatBases<T>>> {
        if left == 0 {
            return None;
        }
        next_piece(
            &mut self.back,
            &mut self.front,
            &mut self.rest,
            DoubleEndedIterator::next_back,
            BlockPart::take_back,
        )
    }

    /// Folds over the slots left, block by block, with the word-at-a-time
    /// fast path inside each block.
    #[inline]
    fn fold<B, Q: RunPos<T, FlatBases<T>>>(
        self,
        left: usize,
        init: B,
        f: &mut impl SlotFold<T, FlatBases<T>, Q, B>,
    ) -> B {
        let mut acc = init;
        if left == 0 {
            return acc;
        }
        let (front, back) = (self.front, self.back);
        acc = front.fold::<B, Q>(acc, f);
        for block in self.rest {
            if block.live() != 0 {
                acc = BlockPart::open(block).fold::<B, Q>(acc, f);
            }
        }
        back.fold::<B, Q>(acc, f)
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
        debug_assert_eq!(
            left,
            blocks
                .iter()
                .map(|b| BlockPart::open(b).count())
                .sum::<usize>()
        );
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
