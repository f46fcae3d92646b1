//! `FlatBlocks`: blocks of one size laid end to end over the flat indices,
//! with a directory of their storage, so that a lookup by key reads one
//! pointer and the slot, not a block header first.
//!
//! A key names slot `index & mask` of block `index >> shift`. Going
//! through the block's header (`Block`, 64 bytes: storage, counters,
//! occupancy) costs a lookup a dependent load from the header, a check of
//! the block's used length, and more instructions than an `IdTable`
//! lookup. Instructions are what bound a loop of lookups that miss the
//! cache: the reorder buffer holds fewer lookups in flight when each takes
//! more of it. So the lookup here:
//! - checks the index once, against the slots ever used (every index
//!   below it names an initialized slot: the blocks are laid end to end and
//!   used in order). That bound depends only on the last block, not on the
//!   key, so it is off the path from the key to the slot, and the compiler
//!   can read it once for a whole loop of lookups;
//! - reads the block's storage from a dense array of pointers
//!   (`storage[b]`, 8 bytes each for `Interleaved`) instead of a header.
//!
//! `Pool` keeps its blocks here. In the comparison runner this took Pool
//! `get` from 1.5-1.8 times IdTable's time to 1.0-1.6. (`Hive`'s blocks do
//! not fill their index ranges and may be freed, so a bound on the index
//! alone would not do for it.)
//!
//! Removal still goes through the header: it needs the block's occupancy
//! words and live count anyway, and checking through the directory first
//! measured slower.

use alloc::collections::TryReserveError;
use alloc::vec::Vec;
use core::mem;
use core::ptr::NonNull;

use super::block::Block;
use super::layout::{Interleaved, SlotLayout};
use super::slot::{Payload, Slot};

/// Blocks of `1 << shift` slots (the last may be shorter) over the flat
/// indices `0..slots`, block `b` at `b << shift`, used in index order, with
/// their storage copied into a directory for lookups.
pub(crate) struct FlatBlocks<T, L: SlotLayout<T> = Interleaved<T>> {
    /// The blocks. Invariant: block `b` has base `b << shift`; every block
    /// but the last has exactly `1 << shift` slots, the last at most that;
    /// their total is `slots()`; every block but the last is used up (`fresh
    /// == len`), so the slots ever used are the flat indices `0..used()`.
    /// A block is never removed, replaced or swapped while it is here (the
    /// `&mut Block`s handed out must not be used to move one), since
    /// `storage` copies its pointers.
    blocks: Vec<Block<T, L>>,
    /// Invariant: `storage.len() == blocks.len()`, and `storage[b]` is
    /// `blocks[b].storage()`, valid while block `b` lives (which is as long
    /// as this table does, per the invariant on `blocks`).
    storage: Vec<L>,
    /// Slots per block, as a power of two. Invariant: `shift <= 31`.
    shift: u32,
}

// SAFETY: the directory only copies the blocks' own storage pointers, so
// the table is what its blocks are: sending it sends the values.
unsafe impl<T: Send, L: SlotLayout<T>> Send for FlatBlocks<T, L> {}
// SAFETY: as for `Block`: shared access hands out only `&T` and raw
// pointers, through the directory as through the blocks.
unsafe impl<T: Sync, L: SlotLayout<T>> Sync for FlatBlocks<T, L> {}

impl<T, L: SlotLayout<T>> FlatBlocks<T, L> {
    /// No blocks yet; blocks will have `1 << shift` slots.
    pub(crate) const fn new(shift: u32) -> Self {
        assert!(shift <= 31, "block size above 2^31 slots");
        FlatBlocks {
            blocks: Vec::new(),
            storage: Vec::new(),
            shift,
        }
    }

    /// Slots per block, as a power of two.
    #[inline]
    pub(crate) fn shift(&self) -> u32 {
        self.shift
    }

    /// Total slots of all blocks.
    #[inline]
    pub(crate) fn slots(&self) -> usize {
        self.blocks
            .last()
            .map_or(0, |block| block.base() + block.len())
    }

    /// The blocks, mutably. The caller may change what is in the blocks,
    /// never which blocks they are (see the invariant on `blocks`), and
    /// uses them in order: a block is appended to only once every block
    /// before it is used up.
    #[inline]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [Block<T, L>] {
        &mut self.blocks
    }

    /// Appends `block`, which must start at the next flat index (`slots()`),
    /// follow a used-up block of full length, and hold at most `1 << shift`
    /// slots. If memory
    /// for the directory runs out, gives the block back.
    ///
    /// # Panics
    ///
    /// If `block` does not fit as said.
    pub(crate) fn try_push(
        &mut self,
        block: Block<T, L>,
    ) -> Result<(), (Block<T, L>, TryReserveError)> {
        assert_eq!(block.base(), self.slots(), "block not at the next index");
        assert!(
            block.len() <= 1 << self.shift,
            "block longer than the block size"
        );
        assert_eq!(
            self.used(),
            self.blocks.len() << self.shift,
            "block after a short or unfinished block"
        );
        if let Err(error) = self.blocks.try_reserve(1) {
            return Err((block, error));
        }
        if let Err(error) = self.storage.try_reserve(1) {
            return Err((block, error));
        }
        self.storage.push(block.storage());
        self.blocks.push(block);
        Ok(())
    }

    /// Slots ever used: the flat indices `0..used()`.
    #[inline]
    pub(crate) fn used(&self) -> usize {
        self.blocks
            .last()
            .map_or(0, |block| block.base() + block.fresh())
    }

    /// Appends `block` as [`try_push`](Self::try_push) does; running out
    /// of memory is handled as by `Vec::push`.
    pub(crate) fn push(&mut self, block: Block<T, L>) {
        self.blocks.reserve(1);
        self.storage.reserve(1);
        if self.try_push(block).is_err() {
            unreachable!("room for the block was reserved");
        }
    }

    /// Heap bytes of the two lists (not of the blocks' slots).
    pub(crate) fn list_bytes(&self) -> usize {
        self.blocks.capacity() * mem::size_of::<Block<T, L>>()
            + self.storage.capacity() * mem::size_of::<L>()
    }

    /// Block and offset of a flat index.
    #[inline]
    fn block_and_offset(&self, index: usize) -> (usize, usize) {
        (index >> self.shift, index & ((1 << self.shift) - 1))
    }

    /// The state word and payload of the used slot at flat index `index`,
    /// if there is one. Both point into a live block's storage and are
    /// initialized (the payload as the state word says).
    #[inline]
    fn slot_parts(&self, index: usize) -> Option<(*mut u32, *mut Payload<T>)> {
        if index >= self.used() {
            return None;
        }
        let (b, i) = self.block_and_offset(index);
        debug_assert!(b < self.blocks.len() && i < self.blocks[b].fresh());
        // The blocks lie end to end from 0 and are used in order (invariant
        // on `blocks`), so `index < used()` is a used slot `i` of block `b`.
        // SAFETY: so `b < blocks.len() == storage.len()`.
        let storage = unsafe { *self.storage.get_unchecked(b) };
        // SAFETY: `storage[b]` is block `b`'s live storage, and `i` is below
        // its `fresh <= len`.
        Some(unsafe { (storage.state(i), storage.payload(i)) })
    }

    /// A pointer to the value named by `(index, generation)`, if live; with
    /// the provenance of its block's whole storage (see `block.rs`).
    #[inline]
    fn live_value(&self, index: usize, generation: u32) -> Option<*mut T> {
        let (state, payload) = self.slot_parts(index)?;
        // SAFETY: a used slot's state word is initialized (`slot_parts`);
        // no `&mut` to it exists while `self` is borrowed.
        if unsafe { *state } == Slot::<T>::matched_generation(generation) {
            // SAFETY: `payload` points into the storage.
            Some(unsafe { Payload::value_ptr(payload) })
        } else {
            // Tells the compiler a miss is rare, so that it branches
            // rather than making the value's address wait for the
            // comparison (a conditional move), which would hold back the
            // next load.
            not_found();
            None
        }
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
        // SAFETY: occupied, as in `get`; `&mut self` makes the reference
        // unique.
        Some(unsafe { &mut *value })
    }

    /// A pointer to the value named by `(index, generation)`, valid until
    /// the value is taken out or its block is dropped (see
    /// `Block::value_ptr`).
    #[inline]
    pub(crate) fn value_ptr(&self, index: usize, generation: u32) -> Option<NonNull<T>> {
        NonNull::new(self.live_value(index, generation)?)
    }

    /// Checks the invariants of the lists (each block checks its own).
    pub(crate) fn check_invariants(&self) {
        assert_eq!(self.storage.len(), self.blocks.len(), "directory length");
        let mut total = 0;
        for (b, block) in self.blocks.iter().enumerate() {
            assert_eq!(block.base(), b << self.shift, "base of block {b}");
            assert!(block.len() <= 1 << self.shift, "block {b} too long");
            if b + 1 < self.blocks.len() {
                assert_eq!(block.len(), 1 << self.shift, "short inner block {b}");
                assert_eq!(block.fresh(), block.len(), "inner block {b} not used up");
            }
            let (state, payload) = (block.storage(), self.storage[b]);
            // The same storage: the same state word for slot 0 (a block
            // of no slots has no storage to compare).
            if block.len() > 0 {
                // SAFETY: `0 < len` for both, which are the same block's.
                let same = unsafe { state.state(0) == payload.state(0) };
                assert!(same, "directory entry {b} is not the block's storage");
            }
            total += block.len();
        }
        assert_eq!(total, self.slots(), "slot total");
    }
}

/// Marks the path that calls it as rare, for the compiler's layout.
#[cold]
#[inline]
fn not_found() {}

impl<T: Clone, L: SlotLayout<T>> Clone for FlatBlocks<T, L> {
    /// Copies of the blocks, with a directory of the copies. If a `clone`
    /// panics, the values cloned so far are dropped.
    fn clone(&self) -> Self {
        let blocks = self.blocks.clone();
        let storage = blocks.iter().map(Block::storage).collect();
        FlatBlocks {
            blocks,
            storage,
            shift: self.shift,
        }
    }
}

impl<T, L: SlotLayout<T>> core::ops::Deref for FlatBlocks<T, L> {
    type Target = [Block<T, L>];

    /// The blocks, in index order. (Mutable access goes through
    /// [`as_mut_slice`](FlatBlocks::as_mut_slice), which says what it must
    /// not do.)
    #[inline]
    fn deref(&self) -> &[Block<T, L>] {
        &self.blocks
    }
}
