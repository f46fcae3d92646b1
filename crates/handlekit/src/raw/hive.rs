//! `RawHive`: seed 001's "nested free lists". Blocks that grow
//! geometrically, each with its own free list threaded through its vacant
//! slots, and a list of the blocks that have a free slot.
//!
//! # Index space
//!
//! Every block owns an aligned range of `1 << shift` flat indices (the
//! *range*), whatever its size: block `b` starts at `b << shift`, so a flat
//! index finds its block with a shift, as in `RawPool`, and the block's
//! storage pointers are flat (see `block.rs`), so the slot needs no offset.
//! Block `b` holds `min(1 << (min_shift + b), 1 << shift)` slots (cut to
//! the key's index space), so the first blocks are small and the later
//! ones all have the cap; the unused tail of a small block's range is
//! index space no key names.
//!
//! # The block table
//!
//! Everything the hive keeps per block is in the block's own 64-byte entry
//! of one table (`blocks`): the storage pointers, the end of the used
//! slots, the free list, the counts, the floor and the links of the list
//! of blocks with room. An insertion or a removal reads one entry, after
//! one bounds check. A lookup by key (`get`, `get_mut`, `contains`)
//! reads copies of the three fields it needs from arrays of their own
//! (`KeyBases`): the block's limit and its two storage pointers, each
//! found by scaling the block number inside the load.
//!
//! # Emptied blocks
//!
//! A removal that empties a block keeps it, listed with its free list;
//! `shrink_to_fit` frees empty blocks (and a removal frees a block it
//! empties whose every slot retired). A freed block's range stays in the
//! table as a zero-length block with a *floor*, the highest generation it
//! ever issued. A block made over
//! that range later starts every slot at the floor, so no old key can match
//! it. A range whose floor reached the last generation is never reused.
//!
//! All of this is safe code over `Block`, but for the calls that pass a
//! flat index to its block (whose range starts at or before the index, as
//! the block is found by the index) and the two `*_unchecked` lookups,
//! which pass their callers' guarantee on to the block.

use alloc::vec::Vec;
use core::marker::PhantomData;
use core::mem;
use core::ptr::{self, NonNull};

use super::block::{
    block_shift_for, get_disjoint_mut, Block, BlocksIter, BlocksIterMut, NOT_LISTED, NO_BLOCK,
};
use super::keyed::TakeSlots;
use super::layout::{FlatBases, Split};
use super::slot::{Payload, Slot, NO_SLOT};
use super::storage::HiveBlocks;
use super::table::RawTable;
#[cfg(feature = "serde")]
use super::BuildError;
use super::KeyLimits;
use crate::CapacityError;
use crate::Key;

/// Blocks of growing size, a free list per block, and the list of blocks
/// with a free slot.
pub struct RawHive<T, K = crate::Id> {
    /// The block table. Invariant: block `b` has base `b << shift` (below
    /// `limits.max_slots`) and either `size_of_block(b)` slots
    /// (allocated), or 0 (a freed range). Only a deserialized hive has
    /// shorter blocks: `1..size_of_block(b)` slots, as many as the input
    /// used, so input cannot ask for memory it does not fill.
    blocks: Vec<Block<T>>,
    /// What a lookup by key reads of each block, in arrays of its own.
    /// Invariant: one entry per block of `blocks`, a copy of its block's
    /// (see [`KeyBases`]).
    key_bases: KeyBases<T>,
    /// The first block of the list of blocks with a free slot (linked
    /// through `Block::next` and `Block::prev`), where inserts go; or
    /// `NO_BLOCK`. Invariant: the list holds exactly the allocated blocks
    /// with a free slot (`Block::has_room`), each once; a block's `prev`
    /// is the block before it (`NO_BLOCK` for this one), and `NOT_LISTED`
    /// for every block off the list.
    available: u32,
    /// The first of the *spent* blocks (allocated, every slot retired:
    /// they can never take a value again) that wait to be freed, linked
    /// through `Block::next`; or `NO_BLOCK`. A removal that spends a block
    /// puts it here rather than free it, so that `remove` calls nothing
    /// (a call in a caller's loop of removals makes it reload the hive's
    /// fields on every removal); the next `grow`, `shrink_to_fit` or
    /// `clear` frees them. Invariant: exactly the spent blocks, each once.
    spent: u32,
    /// Freed ranges whose floor is below `limits.max_generation`, each
    /// once; the last is reused first.
    vacated: Vec<u32>,
    /// `log2` of the first block's size. Invariant: `min_shift <= shift`.
    min_shift: u32,
    /// `log2` of the largest block size and of the range of every block.
    /// Invariant: `shift <= 31`.
    shift: u32,
    /// Number of live values (sum of the blocks' `live()`).
    len: usize,
    /// Slots in allocated blocks.
    slot_total: usize,
    /// Retired slots in allocated blocks (sum of the blocks' `retired()`).
    retired: usize,
    /// Set by `with_fixed_capacity`: the size of the one block made then.
    /// Invariant: if set, no block but block 0 is ever allocated, and
    /// block 0 has that many slots while allocated; `grow` fails and
    /// `shrink_to_fit` keeps the block.
    fixed: Option<usize>,
    /// Invariant: no wider than `KeyLimits::of::<K>()` (the constructors
    /// make it so), so every slot's parts make a valid `K`.
    limits: KeyLimits,
    _key: PhantomData<fn() -> K>,
}

/// Per block, the part a lookup by key reads, copied out of the block
/// table into three arrays indexed by block number: the block's `limit`
/// and its two flat bases. The loads scale a block number by 4 or 8 in
/// their address, where a 64-byte block entry took a shift and an add;
/// the index is checked against the block's fixed `limit`, not its moving
/// `end`, since every state word below `limit` is initialized (a
/// never-used slot's is `VACANT`, which no key matches; see `Block::ptrs`);
/// and the arrays are padded to a power of two with entries of limit 0,
/// so the block number is cut to them with a mask, not compared with
/// their length: a block number past the table lands on an entry whose
/// limit is at or below the index (see `live_value`). A loop of `get`s
/// took 19 instructions a lookup through the block table, 16 this way
/// (callgrind, 1,000 `u64`; `IdTable` 11).
struct KeyBases<T> {
    /// `limits[b]` is block `b`'s `limit` (its base for a freed range), 0
    /// past the last block. Invariant: `limits`, `states` and `payloads`
    /// have one length, 0 or a power of two; entry `b` of each is a copy
    /// of block `b`'s for every block (`set` writes all three whenever a
    /// block is made or freed), and the entries past the last block have
    /// limit 0.
    limits: Vec<u32>,
    /// The state pointer of block `b`'s `flat_bases` (null for a freed
    /// range or past the last block).
    states: Vec<*mut u32>,
    /// The payload pointer of block `b`'s `flat_bases`.
    payloads: Vec<*mut Payload<T>>,
    /// Invariant: `limits.as_ptr()`, or a static 0 while `limits` is
    /// empty: `mask + 1` limits can be read from it.
    first_limit: *const u32,
    /// `limits.len() - 1`, or 0 while it is empty.
    mask: usize,
}

// SAFETY: the pointers are copies of the blocks' own, which the hive owns
// with the values, and of the hive's own `limits`; they are read only by
// a lookup that borrows the hive, and give the access that borrow gives
// (`&T` through `&self`, `&mut T` through `&mut self`), as `Block` does.
unsafe impl<T: Send> Send for KeyBases<T> {}
// SAFETY: as above: shared access gives only `&T`.
unsafe impl<T: Sync> Sync for KeyBases<T> {}

impl<T> KeyBases<T> {
    /// No blocks.
    const EMPTY: Self = KeyBases {
        limits: Vec::new(),
        states: Vec::new(),
        payloads: Vec::new(),
        first_limit: &0,
        mask: 0,
    };

    /// The entries of `blocks`.
    fn of(blocks: &[Block<T>]) -> Self {
        let mut bases = KeyBases::EMPTY;
        for (b, block) in blocks.iter().enumerate() {
            bases.set(b, block);
        }
        bases
    }

    /// Room for the entry of block `b`, so that `set` cannot fail for it.
    fn try_reserve_for(&mut self, b: usize) -> Result<(), CapacityError> {
        let additional = (b + 1)
            .next_power_of_two()
            .saturating_sub(self.limits.len());
        let reserved = self.limits.try_reserve(additional).is_ok()
            && self.states.try_reserve(additional).is_ok()
            && self.payloads.try_reserve(additional).is_ok();
        reserved.then_some(()).ok_or_else(CapacityError::alloc)
    }

    /// Copies block `b`'s entry in, first padding the arrays to the next
    /// power of two if `b` lies past them.
    fn set(&mut self, b: usize, block: &Block<T>) {
        if b >= self.limits.len() {
            let len = (b + 1).next_power_of_two();
            self.limits.resize(len, 0);
            self.states.resize(len, ptr::null_mut());
            self.payloads.resize(len, ptr::null_mut());
            self.mask = len - 1;
        }
        let ptrs = block.flat_bases();
        self.limits[b] = block.limit();
        self.states[b] = ptrs.state_ptr(0);
        self.payloads[b] = ptrs.payload_ptr(0);
        // Taken after the last write through the vector, so no later
        // reference to its elements was made from an older pointer.
        self.first_limit = self.limits.as_ptr();
    }

    /// A pointer to the value named by `(index, generation)`, if it is
    /// live, with the provenance of its block's storage. Block `index >>
    /// shift` (whose range starts at or before `index` and ends at most at
    /// `((index >> shift) + 1) << shift`) is found without a compare with
    /// the table's length: the block number is cut by the mask, and a
    /// number past the table lands on an entry `b` below it, whose limit
    /// (at most `(b + 1) << shift`, or 0 for padding) is at or below the
    /// index, which fails the limit check.
    #[inline(always)]
    fn live_value(&self, shift: u32, index: usize, generation: u32) -> Option<*mut T> {
        let b = (index >> shift) & self.mask;
        // SAFETY: `first_limit` points to `mask + 1` limits (invariant).
        let limit = unsafe { *self.first_limit.add(b) };
        if index >= limit as usize {
            return None;
        }
        // So `b` is `index >> shift`, a block of the table (see above), and
        // an entry of each array (they have one length).
        debug_assert!(b == index >> shift && b < self.states.len());
        // SAFETY: as just said.
        let ptrs = unsafe {
            FlatBases::new(
                *self.states.get_unchecked(b),
                *self.payloads.get_unchecked(b),
            )
        };
        // Block `b` starts at `b << shift`, at or before `index`, which is
        // below its `limit`: a slot of its storage, whose state word is
        // initialized (invariant on `Block::ptrs`) and written only under
        // `&mut` to the hive, which the caller's borrow keeps away.
        // A match says the slot is used (a never-used slot's word is
        // `VACANT`, which no generation matches) and occupied.
        // SAFETY: so `matched_value`'s conditions hold.
        unsafe {
            Slot::<T>::matched_value(ptrs.state_ptr(index), ptrs.payload_ptr(index), generation)
        }
    }
}

/// `log2` of the default first block for `T`: as many slots as fit in
/// 64 KiB, rounded down to a power of two and kept within 64..=1024. Never
/// above `default_shift` (a smaller budget and cap, the same floor).
const fn default_min_shift<T>() -> u32 {
    block_shift_for::<T, Split<T>>(64 * 1024, 64, 1024)
}
/// `log2` of the default largest block for `T`: as many slots as fit in
/// 1 MiB, rounded down to a power of two and kept within 64..=8192.
const fn default_shift<T>() -> u32 {
    block_shift_for::<T, Split<T>>(1024 * 1024, 64, 8192)
}

/// An empty raw hive with the key limits of `K` and the default block
/// sizes (`Hive::with_key`, `Hive::default`).
pub(crate) const fn default_raw<T, K: Key>() -> RawHive<T, K> {
    RawHive::new(
        KeyLimits::of::<K>(),
        default_min_shift::<T>(),
        default_shift::<T>(),
    )
}

impl<T, K: Key> RawHive<T, K> {
    /// An empty hive whose blocks grow from `1 << min_shift` slots to
    /// `1 << shift`; allocates nothing.
    ///
    /// # Panics
    ///
    /// If `limits` allow more than `K` does.
    pub(crate) const fn new(limits: KeyLimits, min_shift: u32, shift: u32) -> Self {
        let limits = KeyLimits::within::<K>(limits);
        assert!(shift <= 31, "block size above 2^31 slots");
        assert!(min_shift <= shift, "smallest block above the largest");
        RawHive {
            blocks: Vec::new(),
            key_bases: KeyBases::EMPTY,
            available: NO_BLOCK,
            spent: NO_BLOCK,
            vacated: Vec::new(),
            min_shift,
            shift,
            len: 0,
            slot_total: 0,
            retired: 0,
            fixed: None,
            limits,
            _key: PhantomData,
        }
    }

    /// A hive with room for exactly `capacity` values, in one block
    /// allocated now, that never allocates another.
    ///
    /// # Panics
    ///
    /// If `capacity` is more than the key can index or above 2³¹, or the
    /// block cannot be allocated.
    pub(crate) fn with_fixed_capacity(limits: KeyLimits, capacity: usize) -> Self {
        assert!(
            capacity <= limits.max_slots && capacity <= 1 << 31,
            "fixed capacity {capacity} exceeds the {} slots the key type can index, or 2^31",
            limits.max_slots
        );
        let shift = capacity.next_power_of_two().trailing_zeros();
        let mut hive = Self::new(limits, shift, shift);
        if capacity > 0 {
            if let Err(err) = hive.make_block(0, 0, capacity) {
                panic!("{err}");
            }
        }
        hive.fixed = Some(capacity);
        hive
    }
}

impl<T, K> RawHive<T, K> {
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Smallest and largest block sizes.
    pub(crate) fn block_sizes(&self) -> (usize, usize) {
        (1 << self.min_shift, 1 << self.shift)
    }

    /// Slots of block `b` when allocated.
    fn size_of_block(&self, b: usize) -> usize {
        let shift = (self.min_shift as usize + b).min(self.shift as usize);
        (1usize << shift).min(self.limits.max_slots.saturating_sub(b << self.shift))
    }

    /// Allocates a block (over the last freed range, else a new one) and
    /// lists it; returns its number.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) -> Result<usize, CapacityError> {
        self.free_spent();
        if let Some(capacity) = self.fixed {
            return Err(CapacityError::fixed(capacity));
        }
        let (b, floor) = match self.vacated.last() {
            Some(&b) => (b as usize, self.blocks[b as usize].floor()),
            None => {
                let b = self.blocks.len();
                if b.checked_shl(self.shift)
                    .is_none_or(|base| base >= self.limits.max_slots)
                {
                    return Err(CapacityError::index_space(self.limits.max_slots));
                }
                (b, 0)
            }
        };
        self.make_block(b, floor, self.size_of_block(b))?;
        Ok(b)
    }

    /// Allocates block `b` with `len` slots, whose first occupants get
    /// generation `floor + 1`, and lists it. `b` is the last freed range in
    /// `vacated` (taken off it) or the end of the table (a new entry).
    fn make_block(&mut self, b: usize, floor: u32, len: usize) -> Result<(), CapacityError> {
        let base = b << self.shift;
        if b == self.blocks.len() {
            self.blocks
                .try_reserve(1)
                .map_err(|_| CapacityError::alloc())?;
            self.key_bases.try_reserve_for(b)?;
            self.blocks.push(Block::new(base, len, floor));
        } else {
            debug_assert_eq!(self.vacated.last(), Some(&(b as u32)));
            self.vacated.pop();
            self.blocks[b] = Block::new(base, len, floor);
        }
        self.key_bases.set(b, &self.blocks[b]);
        self.slot_total += len;
        self.list(b);
        Ok(())
    }

    /// Puts block `b` first on the list of blocks with room (it must not be
    /// on it). Calls nothing; `remove` calls it out of line (see
    /// `list_emptied`).
    #[inline(always)]
    fn list(&mut self, b: usize) {
        let first = self.available;
        if let Some(block) = self.blocks.get_mut(first as usize) {
            block.prev = b as u32;
        }
        if let Some(block) = self.blocks.get_mut(b) {
            debug_assert!(!block.is_listed());
            block.prev = NO_BLOCK;
            block.next = first;
            self.available = b as u32;
        }
    }

    /// `list`, out of line: for `remove`, which lists a block only when it
    /// gave its first slot back. Inlined there with the retiring path, the
    /// hive's fields they write were kept in registers across a caller's
    /// loop of removals, and with too few registers left that loop spilled
    /// and reloaded on every removal: 54 instructions a removal, 44 with
    /// both rare paths out of line (callgrind, 1,000 `u64`).
    #[cold]
    #[inline(never)]
    fn list_emptied(&mut self, b: usize) {
        self.list(b);
    }

    /// [`remove`](RawTable::remove) for a value too large to be returned in
    /// registers (more than two words): the slot is filed before the value
    /// is read, so that no branch lies between the read and the return,
    /// where a large value was copied through the stack twice (64-byte
    /// values, callgrind, 1,000 removals: 69 instructions a removal, 62
    /// so). A small value is read first, as `remove` does: filed first,
    /// with as many instructions, a loop of removals of `u64`s took
    /// 1.15-1.35x as long.
    #[inline(always)]
    fn remove_filed_first(&mut self, index: usize, generation: u32) -> Option<T> {
        let generation = Slot::<T>::matched_generation(generation);
        let b = index >> self.shift;
        let block = self.blocks.get_mut(b)?;
        // SAFETY: block `b` starts at `b << shift`, at or before `index`.
        let slot = unsafe { block.held(index, generation) }?;
        // As in `remove`: the slot is linked to this head.
        let head = block.free_head();
        let retires = generation >= self.limits.max_generation;
        // The common way keeps the block it found; the two rare ones, which
        // take the whole hive, find it again.
        let block = if retires {
            self.retire_taken(b);
            // SAFETY: retiring adds and drops no block.
            unsafe { self.blocks.get_unchecked_mut(b) }
        } else if head == NO_SLOT && !block.has_fresh() {
            self.list_emptied(b);
            // SAFETY: listing adds and drops no block.
            unsafe { self.blocks.get_unchecked_mut(b) }
        } else {
            block
        };
        // SAFETY: `held` found the slot in this block; filing took nothing
        // from it and adds and drops no slot.
        let value = unsafe { block.take_held(slot, head) };
        // SAFETY: the slot just taken is vacant and linked to `head`; if it
        // retired, the head stays.
        unsafe { block.set_free_head(if retires { head } else { index as u32 }) };
        self.len -= 1;
        Some(value)
    }

    /// Counts the slot just taken (or, for `remove_filed_first`, about to be
    /// taken) from block `b` at the last generation as retired, and sets a
    /// spent block aside. Out of line: rare.
    #[cold]
    #[inline(never)]
    fn retire_taken(&mut self, b: usize) {
        let block = &mut self.blocks[b];
        block.count_retired();
        self.retired += 1;
        if block.is_spent() {
            // Not listed (it has no room), so `next` is free to link it.
            block.next = self.spent;
            self.spent = b as u32;
        }
    }

    /// Takes block `b` off the list of blocks with room, if it is on it.
    #[inline]
    fn unlist(&mut self, b: usize) {
        let Some(block) = self.blocks.get_mut(b) else {
            return;
        };
        let (prev, next) = (block.prev, block.next);
        if prev == NOT_LISTED {
            return;
        }
        (block.prev, block.next) = (NOT_LISTED, NO_BLOCK);
        if let Some(block) = self.blocks.get_mut(next as usize) {
            block.prev = prev;
        }
        match self.blocks.get_mut(prev as usize) {
            Some(block) => block.next = next,
            None => self.available = next,
        }
    }

    /// Keeps the hive's counts and lists after block `b` gave up a value
    /// whose slot got `generation` and was filed (see `Block::take_next`):
    /// a retired slot is counted (and a block whose every slot retired is
    /// freed), a block that had no room before (`had_room`) is listed.
    fn filed(&mut self, b: usize, generation: u32, had_room: bool) {
        self.len -= 1;
        if generation >= self.limits.max_generation {
            self.retired += 1;
            self.settle(b);
        } else if !had_room {
            self.list(b);
        }
    }

    /// Frees the spent blocks that removals set aside (see `spent`).
    fn free_spent(&mut self) {
        while self.spent != NO_BLOCK {
            let b = self.spent as usize;
            self.spent = self.blocks[b].next;
            self.blocks[b].next = NO_BLOCK;
            self.free_block(b);
        }
    }

    /// Block `b` has no value left. It stays, with its free list, for later
    /// insertions (so a hive that empties and fills again, or hovers
    /// around a block boundary, does not free and allocate in turn, as
    /// `plf::hive` keeps its reserved blocks); only
    /// [`shrink_to_fit`](Self::shrink_to_fit) frees it. A block with no
    /// slot left to give (all retired) is freed at once: it can never be
    /// used again.
    fn settle(&mut self, b: usize) {
        if self.blocks[b].is_spent() {
            self.free_block(b);
        }
    }

    /// Frees the slots of empty block `b`, leaving its range with the
    /// floor that keeps its old keys stale.
    fn free_block(&mut self, b: usize) {
        debug_assert_eq!(self.blocks[b].live(), 0);
        debug_assert!(self.blocks[b].len() > 0);
        self.unlist(b);
        let block = &self.blocks[b];
        let floor = block.max_generation();
        self.slot_total -= block.len();
        self.retired -= block.retired();
        self.blocks[b] = Block::new(b << self.shift, 0, floor);
        self.key_bases.set(b, &self.blocks[b]);
        if floor < self.limits.max_generation {
            self.vacated.push(b as u32);
        }
    }

    /// Frees every empty block, but a fixed hive's one block unless it is
    /// spent (every slot retired).
    pub(crate) fn shrink_to_fit(&mut self) {
        self.free_spent();
        if self.fixed.is_some() {
            return;
        }
        for b in 0..self.blocks.len() {
            if self.blocks[b].len() > 0 && self.blocks[b].live() == 0 {
                self.free_block(b);
            }
        }
    }

    /// Removes the value at the lowest occupied flat index at or after
    /// `from`.
    pub(crate) fn take_next(&mut self, from: usize) -> Option<(usize, u32, T)> {
        let max_generation = self.limits.max_generation;
        for b in from >> self.shift..self.blocks.len() {
            let block = &mut self.blocks[b];
            let had_room = block.has_room();
            if let Some((index, generation, value)) = block.take_next(from, max_generation) {
                self.filed(b, generation, had_room);
                return Some((index, generation, value));
            }
        }
        None
    }

    /// Drops every value; then keeps the blocks (empty) that can take a
    /// value and frees the others (every slot retired), whose ranges keep
    /// their floors so old keys stay stale. If a `Drop` panics, the rest
    /// are still dropped and the hive is left empty and consistent; then
    /// the panic propagates.
    pub(crate) fn clear(&mut self) {
        super::finish_on_panic(self, Self::drop_values_then_reset);
    }

    /// Drops the values block by block, then `reset`s. A panicking `Drop`
    /// stops it after its block is done (`Block::drop_values` finishes the
    /// block first); run again, it skips the emptied blocks.
    fn drop_values_then_reset(&mut self) {
        for block in &mut self.blocks {
            block.drop_values();
        }
        self.reset();
    }

    /// After every value was dropped: keeps every block that can take a
    /// value, with its free list rebuilt in slot order, and frees the
    /// others (all their slots retired).
    fn reset(&mut self) {
        self.free_spent();
        self.len = 0;
        for b in 0..self.blocks.len() {
            if self.blocks[b].len() == 0 {
                continue;
            }
            self.rebuild_free_list(b);
            if !self.blocks[b].has_room() {
                self.free_block(b);
            }
        }
    }

    /// Relinks block `b`'s vacant used slots in slot order, recounts its
    /// retired slots and fixes its listing.
    fn rebuild_free_list(&mut self, b: usize) {
        let block = &mut self.blocks[b];
        let before = block.retired();
        block.rebuild_free_list(self.limits.max_generation);
        self.retired = self.retired - before + block.retired();
        let (has_room, listed) = (block.has_room(), block.is_listed());
        if has_room && !listed {
            self.list(b);
        } else if !has_room {
            self.unlist(b);
        }
    }

    /// The blocks in order, each as its floor and its used slots (none for
    /// a freed range); for serialization.
    #[cfg(feature = "serde")]
    pub(crate) fn blocks_with_floors(&self) -> impl ExactSizeIterator<Item = (u32, &Block<T>)> {
        self.blocks.iter().map(|block| (block.floor(), block))
    }

    /// Appends the next block: a freed range with `floor` if `slots` is
    /// empty, else a block of exactly `slots.len()` used slots, each
    /// `(generation, value)` (vacant if `None`), all above `floor`; for
    /// deserialization. Call [`finish_build`](Self::finish_build) after
    /// the last one.
    #[cfg(feature = "serde")]
    pub(crate) fn push_block(
        &mut self,
        floor: u32,
        slots: Vec<(u32, Option<T>)>,
    ) -> Result<(), BuildError> {
        let b = self.blocks.len();
        let base = b
            .checked_shl(self.shift)
            .filter(|&base| base < self.limits.max_slots)
            .ok_or(BuildError::TooManySlots(self.limits.max_slots))?;
        let max_generation = self.limits.max_generation;
        if floor > max_generation || (!slots.is_empty() && floor == max_generation) {
            return Err(BuildError::Generation(floor));
        }
        if slots.len() > self.size_of_block(b) {
            return Err(BuildError::Layout("more slots than the block holds"));
        }
        if let Some(&(generation, _)) = slots
            .iter()
            .find(|(generation, _)| *generation <= floor || *generation > max_generation)
        {
            return Err(BuildError::Generation(generation));
        }
        let mut block = Block::new(base, slots.len(), floor);
        for (generation, value) in slots {
            match value {
                Some(value) => block.push_occupied(generation, value),
                None => block.push_vacant(generation),
            }
        }
        self.key_bases.set(b, &block);
        self.blocks.push(block);
        Ok(())
    }

    /// Counts, links and lists everything after the last
    /// [`push_block`](Self::push_block): free lists in slot order, the
    /// list of blocks with room, the vacated ranges and the totals.
    #[cfg(feature = "serde")]
    pub(crate) fn finish_build(&mut self) {
        let max_generation = self.limits.max_generation;
        for b in 0..self.blocks.len() {
            let len = self.blocks[b].len();
            if len == 0 {
                if self.blocks[b].floor() < max_generation {
                    self.vacated.push(b as u32);
                }
                continue;
            }
            self.slot_total += len;
            self.len += self.blocks[b].live();
            self.rebuild_free_list(b);
            if self.blocks[b].is_spent() {
                self.blocks[b].next = self.spent;
                self.spent = b as u32;
            }
        }
    }
}

impl<T: Clone, K> Clone for RawHive<T, K> {
    /// A copy with the same blocks, generations, free lists and lists, so
    /// it issues the same keys. If a `clone` panics, the values cloned so
    /// far are dropped.
    fn clone(&self) -> Self {
        let blocks = self.blocks.clone();
        RawHive {
            key_bases: KeyBases::of(&blocks),
            blocks,
            available: self.available,
            spent: self.spent,
            vacated: self.vacated.clone(),
            min_shift: self.min_shift,
            shift: self.shift,
            len: self.len,
            slot_total: self.slot_total,
            retired: self.retired,
            fixed: self.fixed,
            limits: self.limits,
            _key: PhantomData,
        }
    }
}

// SAFETY: every index and generation the hive hands out is one of its
// own slots, made within its limits, which are no wider than those of `K`;
// its passes walk its own blocks.
#[allow(private_interfaces)]
unsafe impl<T, K: Key> RawTable<T> for RawHive<T, K> {
    type Blocks = HiveBlocks;

    const EMPTY: Self = default_raw::<T, K>();

    /// Iterates the live values in index order: block `b` holds flat
    /// indices from its floor, and its storage is addressed by flat index.
    #[inline]
    fn iter(&self) -> BlocksIter<'_, T> {
        super::block::iter(&self.blocks, self.len)
    }

    #[inline]
    fn iter_mut(&mut self) -> BlocksIterMut<'_, T> {
        super::block::iter_mut(&mut self.blocks, self.len)
    }

    /// Allocates blocks until `additional` more values fit.
    fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        while self.capacity() - self.len < additional {
            self.grow()?;
        }
        Ok(())
    }

    /// Inserts `make(index, generation)` into the first available block
    /// (allocating one if there is none) and returns `(index, generation)`.
    /// If `make` panics, no value is added (a block allocated for it stays,
    /// empty).
    // Forced, as `SlotArena::try_insert_with` is (see there): a value
    // passed to a call that is not inlined is built in memory and copied.
    #[inline(always)]
    fn try_insert_with(
        &mut self,
        make: impl FnOnce(usize, u32) -> T,
    ) -> Result<(usize, u32), CapacityError> {
        let b = match self.available {
            NO_BLOCK => self.grow()?,
            b => b as usize,
        };
        let Some(block) = self.blocks.get_mut(b) else {
            unreachable!("available block {b} past the table")
        };
        let spot = block.insert_with(make);
        self.len += 1;
        if !block.has_room() {
            self.unlist(b);
        }
        Ok(spot)
    }

    /// The `(index, generation)` the next insertion gets, or the error it
    /// fails with. Adds no value; it may allocate the block the insertion
    /// needs, as an insertion would. [`try_insert_with`](Self::try_insert_with)
    /// right after it fills this very spot. For fallible constructors,
    /// which must know the key first.
    fn next_spot(&mut self) -> Result<(usize, u32), CapacityError> {
        let b = match self.available {
            NO_BLOCK => self.grow()?,
            b => b as usize,
        };
        Ok(self.blocks[b].next_spot())
    }

    #[inline]
    fn contains(&self, index: usize, generation: u32) -> bool {
        self.key_bases
            .live_value(self.shift, index, generation)
            .is_some()
    }

    #[inline]
    fn get(&self, index: usize, generation: u32) -> Option<&T> {
        let value = self.key_bases.live_value(self.shift, index, generation)?;
        // The value is live, and `&self` keeps every `&mut` to it away for
        // the borrow.
        // SAFETY: so this is a shared reference to an initialized value.
        Some(unsafe { &*value })
    }

    #[inline]
    fn get_mut(&mut self, index: usize, generation: u32) -> Option<&mut T> {
        let value = self.key_bases.live_value(self.shift, index, generation)?;
        // SAFETY: live, as in `get`; `&mut self` makes the access unique.
        Some(unsafe { &mut *value })
    }

    /// A pointer to the value, valid until it is taken out or its block is
    /// dropped, whatever is done to other slots in between: it has the
    /// provenance of the block's whole storage (see `block.rs`).
    #[inline]
    fn get_ptr(&self, index: usize, generation: u32) -> Option<NonNull<T>> {
        NonNull::new(self.key_bases.live_value(self.shift, index, generation)?)
    }

    /// The value at flat index `index`.
    ///
    /// # Safety
    ///
    /// The slot at `index` must exist and be occupied.
    #[inline]
    unsafe fn get_unchecked(&self, index: usize) -> &T {
        let b = index >> self.shift;
        debug_assert!(b < self.blocks.len());
        // SAFETY: the caller guarantees the slot exists, so block `b` does.
        let block = unsafe { self.blocks.get_unchecked(b) };
        // SAFETY: the caller guarantees slot `index` of it is used and
        // occupied.
        unsafe { block.get_unchecked(index) }
    }

    /// The value at flat index `index`, mutably.
    ///
    /// # Safety
    ///
    /// The slot at `index` must exist and be occupied.
    #[inline]
    unsafe fn get_unchecked_mut(&mut self, index: usize) -> &mut T {
        let b = index >> self.shift;
        debug_assert!(b < self.blocks.len());
        // SAFETY: the caller guarantees the slot exists, so block `b` does.
        let block = unsafe { self.blocks.get_unchecked_mut(b) };
        // SAFETY: the caller guarantees slot `index` of it is used and
        // occupied.
        unsafe { block.get_unchecked_mut(index) }
    }

    /// Mutable references to `N` distinct live values.
    fn get_disjoint_mut<const N: usize>(&mut self, keys: [(usize, u32); N]) -> Option<[&mut T; N]> {
        get_disjoint_mut(&mut self.blocks, self.shift, keys)
    }

    /// Removes and returns the value named by `(index, generation)`.
    // Forced, as `SlotArena::remove` is: a call returns the value through
    // memory.
    #[inline(always)]
    fn remove(&mut self, index: usize, generation: u32) -> Option<T> {
        if mem::size_of::<T>() > 2 * mem::size_of::<usize>() {
            return self.remove_filed_first(index, generation);
        }
        let generation = Slot::<T>::matched_generation(generation);
        let max_generation = self.limits.max_generation;
        let b = index >> self.shift;
        let block = self.blocks.get_mut(b)?;
        // The slot is linked to this head (a load `take` makes anyway); if
        // there was none, the block had room only if it has a never-used
        // slot, which a removal does not change.
        let head = block.free_head();
        // SAFETY: block `b` starts at `b << shift`, at or before `index`.
        let value = unsafe { block.take(index, generation) }?;
        self.len -= 1;
        if generation < max_generation {
            block.push_free(index);
            if head == NO_SLOT && !block.has_fresh() {
                self.list_emptied(b);
            }
        } else {
            self.retire_taken(b);
        }
        Some(value)
    }

    /// Keeps the values for which `keep(index, generation, &mut value)` is
    /// true, in index order. If `keep` or a `Drop` panics, the values not
    /// yet visited stay, and the hive is consistent.
    fn retain(&mut self, mut keep: impl FnMut(usize, u32, &mut T) -> bool) {
        /// Lists block `b` if its pass gave it room, and applies the
        /// emptied-block policy, once the pass is over, even if it
        /// panicked.
        struct Settle<'a, T, K> {
            hive: &'a mut RawHive<T, K>,
            b: usize,
        }
        impl<T, K> Drop for Settle<'_, T, K> {
            fn drop(&mut self) {
                let block = &self.hive.blocks[self.b];
                if block.has_room() && !block.is_listed() {
                    self.hive.list(self.b);
                }
                self.hive.settle(self.b);
            }
        }
        let max_generation = self.limits.max_generation;
        for b in 0..self.blocks.len() {
            if self.blocks[b].live() == 0 {
                continue;
            }
            let settle = Settle { hive: self, b };
            let RawHive {
                blocks,
                len,
                retired,
                ..
            } = &mut *settle.hive;
            blocks[b].retain(
                max_generation,
                |index, generation, value| keep(index, generation, value),
                |generation, value| {
                    *len -= 1;
                    if generation >= max_generation {
                        *retired += 1;
                    }
                    // Dropped last: the hive is consistent if it panics.
                    drop(value);
                },
            );
            drop(settle);
        }
    }

    /// Values the hive can hold without allocating.
    #[inline]
    fn capacity(&self) -> usize {
        self.slot_total - self.retired
    }

    /// The fixed capacity, if the hive was made with one.
    #[inline]
    fn fixed_capacity(&self) -> Option<usize> {
        self.fixed
    }

    #[inline]
    fn retired(&self) -> usize {
        self.retired
    }

    /// Heap bytes held by the blocks and the tables.
    fn heap_bytes(&self) -> usize {
        use core::mem::size_of;
        self.blocks.iter().map(Block::heap_bytes).sum::<usize>()
            + self.blocks.capacity() * size_of::<Block<T>>()
            + self.vacated.capacity() * size_of::<u32>()
    }

    /// Blocks with slots allocated.
    fn block_count(&self) -> usize {
        self.blocks.iter().filter(|block| block.len() > 0).count()
    }

    /// Checks every invariant; panics on the first one broken. O(slots).
    fn check_invariants(&self) {
        let max_generation = self.limits.max_generation;
        assert!(self.min_shift <= self.shift && self.shift <= 31);
        if let Some(capacity) = self.fixed {
            assert!(self.blocks.len() <= 1, "fixed hive grew a block");
            if let Some(block) = self.blocks.first() {
                assert!(
                    block.len() == capacity || block.len() == 0,
                    "fixed hive's block changed size"
                );
            }
        }
        let (mut total, mut live, mut retired) = (0, 0, 0);
        let mut with_room = 0;
        let bases = &self.key_bases;
        let entries = bases.limits.len();
        assert!(
            entries == 0 || entries.is_power_of_two(),
            "key bases' length"
        );
        assert!(entries >= self.blocks.len(), "key bases' length");
        assert_eq!(
            (bases.states.len(), bases.payloads.len()),
            (entries, entries)
        );
        assert_eq!(bases.mask, entries.saturating_sub(1), "key bases' mask");
        if entries > 0 {
            assert_eq!(
                bases.first_limit,
                bases.limits.as_ptr(),
                "key bases' limits"
            );
        }
        assert!(
            bases.limits[self.blocks.len()..]
                .iter()
                .all(|&limit| limit == 0),
            "key bases' padding"
        );
        for (b, block) in self.blocks.iter().enumerate() {
            block.check_invariants(max_generation);
            let ptrs = block.flat_bases();
            assert_eq!(
                (
                    self.key_bases.limits[b],
                    self.key_bases.states[b],
                    self.key_bases.payloads[b]
                ),
                (block.limit(), ptrs.state_ptr(0), ptrs.payload_ptr(0)),
                "key bases of block {b}"
            );
            assert_eq!(block.base(), b << self.shift, "base of block {b}");
            assert!(
                block.base() < self.limits.max_slots,
                "block {b} past the index space"
            );
            if block.len() == 0 {
                assert!(!block.is_listed(), "freed range {b} listed");
                let vacated = self.vacated.iter().filter(|&&v| v as usize == b).count();
                let expected = usize::from(block.floor() < max_generation);
                assert_eq!(vacated, expected, "freed range {b} on the vacated list");
                continue;
            }
            assert!(block.len() <= self.size_of_block(b), "size of block {b}");
            assert!(
                !self.vacated.contains(&(b as u32)),
                "live block {b} vacated"
            );
            assert!(
                block.floor() < max_generation,
                "block {b} over a retired range"
            );
            total += block.len();
            live += block.live();
            retired += block.retired();
            assert_eq!(block.has_room(), block.is_listed(), "listing of block {b}");
            with_room += usize::from(block.has_room());
        }
        // The list of blocks with room, from its first block: each listed
        // block once, linked both ways.
        let (mut at, mut prev, mut listed) = (self.available, NO_BLOCK, 0);
        while at != NO_BLOCK {
            let block = &self.blocks[at as usize];
            assert!(block.is_listed(), "block {at} on the list unlisted");
            assert_eq!(block.prev, prev, "back link of block {at}");
            listed += 1;
            assert!(listed <= self.blocks.len(), "cycle in the list of blocks");
            (prev, at) = (at, block.next);
        }
        assert_eq!(listed, with_room, "list of blocks with room");
        // The spent blocks waiting to be freed: exactly the allocated blocks
        // whose every slot retired, each once.
        let (mut at, mut on_spent) = (self.spent, 0);
        while at != NO_BLOCK {
            let block = &self.blocks[at as usize];
            assert!(block.is_spent(), "block {at} on the spent list");
            assert!(!block.is_listed(), "spent block {at} listed");
            on_spent += 1;
            assert!(on_spent <= self.blocks.len(), "cycle in the spent list");
            at = block.next;
        }
        let spent = self.blocks.iter().filter(|block| block.is_spent()).count();
        assert_eq!(on_spent, spent, "spent blocks");
        assert_eq!(total, self.slot_total, "slot total");
        assert_eq!(live, self.len, "len");
        assert_eq!(retired, self.retired, "retired count");
        for (n, &v) in self.vacated.iter().enumerate() {
            assert!(!self.vacated[..n].contains(&v), "range {v} vacated twice");
        }
    }
}
// SAFETY: the hive's slots, under the generations they held; its limits
// are those of `K` or narrower.
unsafe impl<T, K: Key> TakeSlots<T> for RawHive<T, K> {
    type Key = K;
    #[inline]
    fn take_slot(&mut self, from: usize) -> Option<(usize, u32, T)> {
        RawHive::take_next(self, from)
    }
    #[inline]
    fn len(&self) -> usize {
        RawHive::len(self)
    }
    fn clear(&mut self) {
        RawHive::clear(self);
    }
}
