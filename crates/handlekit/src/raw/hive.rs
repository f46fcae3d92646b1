//! `RawHive`: seed 001's "nested free lists". Blocks that grow
//! geometrically, each with its own free list threaded through its vacant
//! slots, and a list of the blocks that have a free slot.
//!
//! # Index space
//!
//! Every block owns an aligned range of `1 << shift` flat indices (the
//! *range*), whatever its size: block `b` starts at `b << shift`, so a flat
//! index splits into block and slot with a shift and a mask, as in
//! `RawPool`. Block `b` holds `min(1 << (min_shift + b), 1 << shift)`
//! slots (cut to the key's index space), so the first blocks are small and
//! the later ones all have the cap; the unused tail of a small block's range
//! is index space no key names.
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
//! All of this is safe code over `Block`, but for the two `*_unchecked`
//! lookups, which pass their callers' guarantee on to the block.

use alloc::vec::Vec;
use core::ptr::NonNull;

use super::block::{get_disjoint_mut, Block, BlocksIter, BlocksIterMut};
use super::layout::Split;
use super::slot::{Slot, NO_SLOT};
#[cfg(feature = "serde")]
use super::BuildError;
use super::KeyLimits;
use crate::CapacityError;

/// Marks a block that is not on the available list.
const NOT_LISTED: u32 = u32::MAX;

/// The per-block bookkeeping that `Block` does not keep.
#[derive(Clone, Copy, Debug)]
struct Meta {
    /// First slot (offset in the block) of the block's free list, or
    /// `NO_SLOT`. Invariant: the list holds exactly the vacant used slots
    /// (below the block's `fresh`) whose generation is below
    /// `limits.max_generation`, each once.
    free_head: u32,
    /// Vacant used slots whose generation reached `limits.max_generation`:
    /// never reused.
    retired: u32,
    /// Position in `RawHive::available`, or `NOT_LISTED`. Invariant: listed
    /// iff the block has a free slot (`free_head != NO_SLOT` or a
    /// never-used slot is left), and then `available[listed] == b`.
    listed: u32,
    /// The generation every slot of the block starts at: its first occupant
    /// gets `floor + 1` (0 for a range used for the first time). For a
    /// freed range (a block of length 0), the floor of the next block over
    /// it: the highest generation the range ever issued.
    floor: u32,
}

/// The list of blocks with a free slot, and a copy of its last entry (where
/// inserts go) that insert reads without a dependent load through the
/// list's buffer (measured: Hive insert of 100k `u64`, 3.89 → 3.34 ns).
/// The list changes only through `push` and `swap_remove`, which keep the
/// copy right.
#[derive(Clone)]
struct Available {
    list: Vec<u32>,
    /// Invariant: `list.last()`, or `NOT_LISTED` if `list` is empty.
    last: u32,
}

impl Available {
    const fn new() -> Self {
        Available {
            list: Vec::new(),
            last: NOT_LISTED,
        }
    }

    /// The block inserts go to.
    #[inline]
    fn last(&self) -> Option<usize> {
        (self.last != NOT_LISTED).then_some(self.last as usize)
    }

    /// Appends block `b`; returns its position.
    fn push(&mut self, b: usize) -> u32 {
        let at = self.list.len() as u32;
        self.list.push(b as u32);
        self.last = b as u32;
        at
    }

    /// Removes the entry at `at`; returns the block moved into its place.
    fn swap_remove(&mut self, at: usize) -> Option<usize> {
        self.list.swap_remove(at);
        self.last = self.list.last().copied().unwrap_or(NOT_LISTED);
        self.list.get(at).map(|&b| b as usize)
    }
}

impl Meta {
    const fn new(floor: u32) -> Self {
        Meta {
            free_head: NO_SLOT,
            retired: 0,
            listed: NOT_LISTED,
            floor,
        }
    }
}

/// Blocks of growing size, a free list per block, and the list of blocks
/// with a free slot.
pub struct RawHive<T> {
    /// The block table. Invariant: block `b` has base `b << shift` and
    /// either `size_of_block(b)` slots (allocated), or 0 (a freed range).
    /// Only a deserialized hive has shorter blocks: `1..size_of_block(b)`
    /// slots, as many as the input used, so input cannot ask for memory it
    /// does not fill.
    blocks: Vec<Block<T, Split<T>>>,
    /// Bookkeeping of block `b`. Invariant: `meta.len() == blocks.len()`.
    meta: Vec<Meta>,
    /// The blocks with a free slot, in no particular order; inserts go to
    /// the last. Invariant: exactly the allocated blocks with a free slot,
    /// each once, with `meta[b].listed` its position.
    available: Available,
    /// Freed ranges whose floor is below `limits.max_generation`, each
    /// once; the last is reused first.
    vacated: Vec<u32>,
    /// `log2` of the first block's size. Invariant: `min_shift <= shift`.
    min_shift: u32,
    /// `log2` of the largest block size and of the range of every block.
    /// Invariant: `shift <= 31`.
    shift: u32,
    /// Number of live values (sum of the blocks' `live`).
    len: usize,
    /// Slots in allocated blocks.
    slot_total: usize,
    /// Retired slots in allocated blocks (sum of `meta[b].retired`).
    retired: usize,
    /// Set by `with_fixed_capacity`: the size of the one block made then.
    /// Invariant: if set, no block but block 0 is ever allocated, and
    /// block 0 has that many slots while allocated; `grow` fails and
    /// `shrink_to_fit` keeps the block.
    fixed: Option<usize>,
    limits: KeyLimits,
}

impl<T> RawHive<T> {
    /// An empty hive whose blocks grow from `1 << min_shift` slots to
    /// `1 << shift`; allocates nothing.
    pub(crate) const fn new(limits: KeyLimits, min_shift: u32, shift: u32) -> Self {
        assert!(shift <= 31, "block size above 2^31 slots");
        assert!(min_shift <= shift, "smallest block above the largest");
        RawHive {
            blocks: Vec::new(),
            meta: Vec::new(),
            available: Available::new(),
            vacated: Vec::new(),
            min_shift,
            shift,
            len: 0,
            slot_total: 0,
            retired: 0,
            fixed: None,
            limits,
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

    /// The fixed capacity, if the hive was made with one.
    #[inline]
    pub(crate) fn fixed_capacity(&self) -> Option<usize> {
        self.fixed
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn retired(&self) -> usize {
        self.retired
    }

    /// Values the hive can hold without allocating.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.slot_total - self.retired
    }

    /// Smallest and largest block sizes.
    pub(crate) fn block_sizes(&self) -> (usize, usize) {
        (1 << self.min_shift, 1 << self.shift)
    }

    /// Blocks with slots allocated.
    pub(crate) fn block_count(&self) -> usize {
        self.blocks.iter().filter(|block| block.len() > 0).count()
    }

    /// Heap bytes held by the blocks and the tables.
    pub(crate) fn heap_bytes(&self) -> usize {
        use core::mem::size_of;
        self.blocks.iter().map(Block::heap_bytes).sum::<usize>()
            + self.blocks.capacity() * size_of::<Block<T, Split<T>>>()
            + self.meta.capacity() * size_of::<Meta>()
            + (self.available.list.capacity() + self.vacated.capacity()) * size_of::<u32>()
    }

    /// Slots of block `b` when allocated.
    fn size_of_block(&self, b: usize) -> usize {
        let shift = (self.min_shift as usize + b).min(self.shift as usize);
        (1usize << shift).min(self.limits.max_slots.saturating_sub(b << self.shift))
    }

    /// Inserts `make(index, generation)` into the last available block
    /// (allocating one if there is none) and returns `(index, generation)`.
    /// If `make` panics, no value is added (a block allocated for it stays,
    /// empty).
    // Forced, as `SlotArena::try_insert_with` is (see there): a value
    // passed to a call that is not inlined is built in memory and copied.
    #[inline(always)]
    pub(crate) fn try_insert_with(
        &mut self,
        make: impl FnOnce(usize, u32) -> T,
    ) -> Result<(usize, u32), CapacityError> {
        let b = match self.available.last() {
            Some(b) => b,
            None => self.grow()?,
        };
        let (Some(block), Some(meta)) = (self.blocks.get_mut(b), self.meta.get_mut(b)) else {
            unreachable!("available block {b} past the table")
        };
        let (i, generation) = if meta.free_head == NO_SLOT {
            // A listed block with an empty free list has a never-used slot.
            let (i, generation) = (block.fresh(), meta.floor + 1);
            let value = make(block.base() + i, generation);
            block.append(generation, value);
            (i, generation)
        } else {
            let i = meta.free_head as usize;
            let next = block.next_free(i);
            let generation = block.generation(i).unwrap_or(meta.floor) + 1;
            let value = make(block.base() + i, generation);
            block.occupy(i, generation, value);
            meta.free_head = next;
            (i, generation)
        };
        self.len += 1;
        let index = block.base() + i;
        if meta.free_head == NO_SLOT && !block.has_fresh() {
            self.unlist(b);
        }
        Ok((index, generation))
    }

    /// The `(index, generation)` the next insertion gets, or the error it
    /// fails with. Adds no value; it may allocate the block the insertion
    /// needs, as an insertion would. [`try_insert_with`](Self::try_insert_with)
    /// right after it fills this very spot. For fallible constructors,
    /// which must know the key first.
    pub(crate) fn next_spot(&mut self) -> Result<(usize, u32), CapacityError> {
        let b = match self.available.last() {
            Some(b) => b,
            None => self.grow()?,
        };
        let (Some(block), Some(meta)) = (self.blocks.get(b), self.meta.get(b)) else {
            unreachable!("available block {b} past the table")
        };
        Ok(if meta.free_head == NO_SLOT {
            (block.base() + block.fresh(), meta.floor + 1)
        } else {
            let i = meta.free_head as usize;
            (
                block.base() + i,
                block.generation(i).unwrap_or(meta.floor) + 1,
            )
        })
    }

    /// Allocates a block (over the last freed range, else a new one) and
    /// lists it; returns its number.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) -> Result<usize, CapacityError> {
        if let Some(capacity) = self.fixed {
            return Err(CapacityError::fixed(capacity));
        }
        let (b, floor) = match self.vacated.last() {
            Some(&b) => (b as usize, self.meta[b as usize].floor),
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
        let fail = |_| CapacityError::alloc();
        self.available.list.try_reserve(1).map_err(fail)?;
        if b == self.blocks.len() {
            self.blocks.try_reserve(1).map_err(fail)?;
            self.meta.try_reserve(1).map_err(fail)?;
            self.blocks.push(Block::new(0, b << self.shift));
            self.meta.push(Meta::new(0));
        } else {
            debug_assert_eq!(self.vacated.last(), Some(&(b as u32)));
            self.vacated.pop();
        }
        self.blocks[b] = Block::new(len, b << self.shift);
        self.meta[b] = Meta::new(floor);
        self.slot_total += len;
        self.list(b);
        Ok(())
    }

    /// Allocates blocks until `additional` more values fit.
    pub(crate) fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        while self.capacity() - self.len < additional {
            self.grow()?;
        }
        Ok(())
    }

    /// Puts block `b` on the available list (it must not be on it).
    fn list(&mut self, b: usize) {
        debug_assert_eq!(self.meta[b].listed, NOT_LISTED);
        self.meta[b].listed = self.available.push(b);
    }

    /// Takes block `b` off the available list, if it is on it.
    fn unlist(&mut self, b: usize) {
        let at = self.meta[b].listed;
        if at == NOT_LISTED {
            return;
        }
        self.meta[b].listed = NOT_LISTED;
        if let Some(moved) = self.available.swap_remove(at as usize) {
            self.meta[moved].listed = at;
        }
    }

    /// Files the just-vacated slot `i` of block `b` with `generation`: on
    /// the block's free list, or retired if its generation ran out; then
    /// applies the emptied-block policy.
    #[inline]
    fn release(&mut self, b: usize, i: usize, generation: u32) {
        let head = self.meta[b].free_head;
        let block = &mut self.blocks[b];
        block.set_next_free(i, head);
        let emptied = block.live() == 0;
        self.file_vacated(b, i, generation, emptied);
    }

    /// [`release`](Self::release) for a slot already linked to its block's
    /// free-list head: makes it the head (or retires it), lists the block,
    /// and applies the emptied-block policy if the block is now `emptied`.
    // Forced: `remove` took half as long again when this was a call.
    #[inline(always)]
    fn file_vacated(&mut self, b: usize, i: usize, generation: u32, emptied: bool) {
        let Some(meta) = self.meta.get_mut(b) else {
            return;
        };
        if generation >= self.limits.max_generation {
            meta.retired += 1;
            self.retired += 1;
        } else {
            meta.free_head = i as u32;
            if meta.listed == NOT_LISTED {
                self.list(b);
            }
        }
        if emptied {
            self.emptied(b);
        }
    }

    /// Block `b` just lost its last value. It stays, with its free list,
    /// for later insertions (so a hive that empties and fills again, or
    /// hovers around a block boundary, does not free and allocate in turn,
    /// as `plf::hive` keeps its reserved blocks); only
    /// [`shrink_to_fit`](Self::shrink_to_fit) frees it. A block with no
    /// slot left to give (all retired) is freed at once: it can never be
    /// used again.
    #[cold]
    fn emptied(&mut self, b: usize) {
        let meta = &self.meta[b];
        let usable = meta.free_head != NO_SLOT || self.blocks[b].has_fresh();
        if !usable {
            self.free_block(b);
        }
    }

    /// Frees the slots of empty block `b`, leaving its range with the
    /// floor that keeps its old keys stale.
    fn free_block(&mut self, b: usize) {
        debug_assert_eq!(self.blocks[b].live(), 0);
        debug_assert!(self.blocks[b].len() > 0);
        self.unlist(b);
        let floor = self.blocks[b].max_generation().max(self.meta[b].floor);
        self.slot_total -= self.blocks[b].len();
        self.retired -= self.meta[b].retired as usize;
        self.blocks[b] = Block::new(0, b << self.shift);
        self.meta[b] = Meta::new(floor);
        if floor < self.limits.max_generation {
            self.vacated.push(b as u32);
        }
    }

    /// Frees every empty block, but a fixed hive's one block.
    pub(crate) fn shrink_to_fit(&mut self) {
        if self.fixed.is_some() {
            return;
        }
        for b in 0..self.blocks.len() {
            if self.blocks[b].len() > 0 && self.blocks[b].live() == 0 {
                self.free_block(b);
            }
        }
    }

    /// Removes and returns the value named by `(index, generation)`.
    // Forced, as `SlotArena::remove` is: a call returns the value through
    // memory.
    #[inline(always)]
    pub(crate) fn remove(&mut self, index: usize, generation: u32) -> Option<T> {
        let (b, i) = self.split(index);
        let generation = Slot::<T>::matched_generation(generation);
        let (Some(block), Some(meta)) = (self.blocks.get_mut(b), self.meta.get_mut(b)) else {
            return None;
        };
        // Linked as the block's new head at once (a retired slot's link is
        // unused), so the slot is written once.
        let value = block.take(i, generation, meta.free_head)?;
        let emptied = block.live() == 0;
        self.len -= 1;
        self.file_vacated(b, i, generation, emptied);
        Some(value)
    }

    /// Removes the value at the lowest occupied flat index at or after
    /// `from`.
    pub(crate) fn take_next(&mut self, from: usize) -> Option<(usize, u32, T)> {
        let (mut b, mut i) = self.split(from);
        while let Some(block) = self.blocks.get_mut(b) {
            if let Some((slot, generation, value)) = block.take_next(i) {
                self.len -= 1;
                self.release(b, slot, generation);
                return Some(((b << self.shift) + slot, generation, value));
            }
            b += 1;
            i = 0;
        }
        None
    }

    /// Keeps the values for which `keep(index, generation, &mut value)` is
    /// true, in index order. If `keep` or a `Drop` panics, the values not
    /// yet visited stay, and the hive is consistent.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(usize, u32, &mut T) -> bool) {
        /// Applies the emptied-block policy to block `b` once its pass is
        /// over, even if the pass panicked.
        struct Settle<'a, T> {
            hive: &'a mut RawHive<T>,
            b: usize,
        }
        impl<T> Drop for Settle<'_, T> {
            fn drop(&mut self) {
                if self.hive.blocks[self.b].live() == 0 {
                    self.hive.emptied(self.b);
                }
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
                meta,
                available,
                len,
                retired,
                ..
            } = &mut *settle.hive;
            let meta = &mut meta[b];
            let base = blocks[b].base();
            blocks[b].retain(
                |i, generation, value| keep(base + i, generation, value),
                |block, i, generation, value| {
                    *len -= 1;
                    if generation >= max_generation {
                        meta.retired += 1;
                        *retired += 1;
                    } else {
                        block.set_next_free(i, meta.free_head);
                        meta.free_head = i as u32;
                        if meta.listed == NOT_LISTED {
                            meta.listed = available.push(b);
                        }
                    }
                    // Dropped last: the hive is consistent if it panics.
                    drop(value);
                },
            );
            drop(settle);
        }
    }

    /// Drops every value; then keeps the largest block (empty) and frees
    /// the others, whose ranges keep their floors so old keys stay stale.
    /// If a `Drop` panics, the rest are still dropped and the hive is left
    /// empty and consistent; then the panic propagates.
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
        self.len = 0;
        for b in 0..self.blocks.len() {
            if self.blocks[b].len() == 0 {
                continue;
            }
            self.rebuild_free_list(b);
            let meta = &self.meta[b];
            let usable = meta.free_head != NO_SLOT || self.blocks[b].has_fresh();
            if !usable {
                self.free_block(b);
            }
        }
    }

    /// Relinks block `b`'s vacant used slots in slot order,
    /// recounts its retired slots and fixes its listing.
    fn rebuild_free_list(&mut self, b: usize) {
        let max_generation = self.limits.max_generation;
        let block = &mut self.blocks[b];
        let meta = &mut self.meta[b];
        let (head, retired) = block.link_vacant(NO_SLOT, 0, max_generation);
        // At most a block's length, which fits a `u32`.
        let retired = retired as u32;
        meta.free_head = head;
        self.retired = self.retired - meta.retired as usize + retired as usize;
        meta.retired = retired;
        let has_free = head != NO_SLOT || block.has_fresh();
        if has_free && meta.listed == NOT_LISTED {
            self.list(b);
        } else if !has_free {
            self.unlist(b);
        }
    }

    /// The blocks in order, each as its floor and its used slots (none for
    /// a freed range); for serialization.
    #[cfg(feature = "serde")]
    pub(crate) fn blocks_with_floors(
        &self,
    ) -> impl ExactSizeIterator<Item = (u32, &Block<T, Split<T>>)> {
        self.blocks
            .iter()
            .zip(&self.meta)
            .map(|(block, meta)| (meta.floor, block))
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
        let mut block = Block::new(slots.len(), base);
        for (generation, value) in slots {
            match value {
                Some(value) => {
                    block.append(generation, value);
                }
                None => block.push_vacant(generation),
            }
        }
        self.blocks.push(block);
        self.meta.push(Meta::new(floor));
        Ok(())
    }

    /// Counts, links and lists everything after the last
    /// [`push_block`](Self::push_block): free lists in slot order, the
    /// available and vacated lists, and the totals.
    #[cfg(feature = "serde")]
    pub(crate) fn finish_build(&mut self) {
        let max_generation = self.limits.max_generation;
        for b in 0..self.blocks.len() {
            let len = self.blocks[b].len();
            if len == 0 {
                if self.meta[b].floor < max_generation {
                    self.vacated.push(b as u32);
                }
                continue;
            }
            self.slot_total += len;
            self.len += self.blocks[b].live();
            self.rebuild_free_list(b);
        }
    }

    /// Checks every invariant; panics on the first one broken. O(slots).
    pub(crate) fn check_invariants(&self) {
        let max_generation = self.limits.max_generation;
        assert_eq!(self.blocks.len(), self.meta.len(), "meta per block");
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
        let (mut total, mut live, mut retired_total) = (0, 0, 0);
        let mut listed_blocks = 0;
        for (b, (block, meta)) in self.blocks.iter().zip(&self.meta).enumerate() {
            block.check_invariants();
            assert_eq!(block.base(), b << self.shift, "base of block {b}");
            assert!(
                block.base() < self.limits.max_slots,
                "block {b} past the index space"
            );
            if block.len() == 0 {
                assert_eq!(meta.listed, NOT_LISTED, "freed range {b} listed");
                assert_eq!((meta.free_head, meta.retired), (NO_SLOT, 0));
                let vacated = self.vacated.iter().filter(|&&v| v as usize == b).count();
                let expected = usize::from(meta.floor < max_generation);
                assert_eq!(vacated, expected, "freed range {b} on the vacated list");
                continue;
            }
            assert!(block.len() <= self.size_of_block(b), "size of block {b}");
            assert!(
                !self.vacated.contains(&(b as u32)),
                "live block {b} vacated"
            );
            assert!(
                meta.floor < max_generation,
                "block {b} over a retired range"
            );
            total += block.len();
            live += block.live();
            let fresh = block.fresh();
            let mut retired = 0;
            for i in 0..block.len() {
                let Some(slot) = block.slot(i) else {
                    assert!(i >= fresh, "used slot {i} of block {b} missing");
                    continue;
                };
                assert!(i < fresh, "never-used slot {i} of block {b} readable");
                assert!(slot.generation() > meta.floor, "slot at or below the floor");
                assert!(slot.generation() <= max_generation);
                if !slot.is_occupied() && slot.generation() >= max_generation {
                    retired += 1;
                }
            }
            assert_eq!(retired, meta.retired as usize, "retired in block {b}");
            retired_total += retired;
            let mut seen = alloc::vec![false; fresh];
            let mut cursor = meta.free_head;
            let mut on_list = 0;
            while cursor != NO_SLOT {
                let i = cursor as usize;
                assert!(i < fresh, "free list of block {b} holds fresh slot {i}");
                assert!(!seen[i], "free list cycle in block {b} at {i}");
                seen[i] = true;
                let Some(slot) = block.slot(i) else {
                    panic!("free list past block {b}");
                };
                assert!(!slot.is_occupied() && slot.generation() < max_generation);
                on_list += 1;
                cursor = slot.next_free();
            }
            assert_eq!(
                block.live() + retired + on_list,
                fresh,
                "lost slot in block {b}"
            );
            let has_free = meta.free_head != NO_SLOT || block.has_fresh();
            if has_free {
                listed_blocks += 1;
                let at = meta.listed as usize;
                assert_eq!(
                    self.available.list.get(at),
                    Some(&(b as u32)),
                    "listing of block {b}"
                );
            } else {
                assert_eq!(meta.listed, NOT_LISTED, "full block {b} listed");
            }
        }
        assert_eq!(listed_blocks, self.available.list.len(), "available list");
        assert_eq!(
            self.available.last,
            self.available.list.last().copied().unwrap_or(NOT_LISTED),
            "insert block"
        );
        assert_eq!(total, self.slot_total, "slot total");
        assert_eq!(live, self.len, "len");
        assert_eq!(retired_total, self.retired, "retired count");
        for (n, &v) in self.vacated.iter().enumerate() {
            assert!(!self.vacated[..n].contains(&v), "range {v} vacated twice");
        }
    }
}

/// Lookup and iteration by flat index: block `b` starts at `b << shift`
/// and holds at most `1 << shift` slots.
impl<T> RawHive<T> {
    /// Block and offset of a flat index.
    #[inline]
    fn split(&self, index: usize) -> (usize, usize) {
        (index >> self.shift, index & ((1 << self.shift) - 1))
    }

    #[inline]
    pub(crate) fn contains(&self, index: usize, generation: u32) -> bool {
        let (b, i) = self.split(index);
        self.blocks
            .get(b)
            .is_some_and(|block| block.contains(i, generation))
    }

    #[inline]
    pub(crate) fn get(&self, index: usize, generation: u32) -> Option<&T> {
        let (b, i) = self.split(index);
        self.blocks.get(b)?.get(i, generation)
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, index: usize, generation: u32) -> Option<&mut T> {
        let (b, i) = self.split(index);
        self.blocks.get_mut(b)?.get_mut(i, generation)
    }

    /// A pointer to the value, valid until it is taken out or its block is
    /// dropped (see `Block::value_ptr`).
    #[inline]
    pub(crate) fn get_ptr(&self, index: usize, generation: u32) -> Option<NonNull<T>> {
        let (b, i) = self.split(index);
        self.blocks.get(b)?.value_ptr(i, generation)
    }

    /// Mutable references to `N` distinct live values.
    pub(crate) fn get_disjoint_mut<const N: usize>(
        &mut self,
        keys: [(usize, u32); N],
    ) -> Option<[&mut T; N]> {
        let at = keys.map(|(index, generation)| {
            let (b, i) = self.split(index);
            (b, i, generation)
        });
        get_disjoint_mut(&mut self.blocks, at)
    }

    /// The value at flat index `index`.
    ///
    /// # Safety
    ///
    /// The slot at `index` must exist and be occupied.
    #[inline]
    pub(crate) unsafe fn get_unchecked(&self, index: usize) -> &T {
        let (b, i) = self.split(index);
        debug_assert!(b < self.blocks.len());
        // SAFETY: the caller guarantees the slot exists, so block `b` does.
        let block = unsafe { self.blocks.get_unchecked(b) };
        // SAFETY: the caller guarantees slot `i` of it exists and is
        // occupied.
        unsafe { block.get_unchecked(i) }
    }

    /// The value at flat index `index`, mutably.
    ///
    /// # Safety
    ///
    /// The slot at `index` must exist and be occupied.
    #[inline]
    pub(crate) unsafe fn get_unchecked_mut(&mut self, index: usize) -> &mut T {
        let (b, i) = self.split(index);
        debug_assert!(b < self.blocks.len());
        // SAFETY: the caller guarantees the slot exists, so block `b` does.
        let block = unsafe { self.blocks.get_unchecked_mut(b) };
        // SAFETY: the caller guarantees slot `i` of it exists and is
        // occupied.
        unsafe { block.get_unchecked_mut(i) }
    }

    /// Iterates the live values in index order.
    #[inline]
    pub(crate) fn iter(&self) -> BlocksIter<'_, T, Split<T>> {
        super::block::iter(&self.blocks, self.len)
    }

    /// Iterates the live values in index order, mutably.
    #[inline]
    pub(crate) fn iter_mut(&mut self) -> BlocksIterMut<'_, T, Split<T>> {
        super::block::iter_mut(&mut self.blocks, self.len)
    }
}

impl<T: Clone> Clone for RawHive<T> {
    /// A copy with the same blocks, generations, free lists and lists, so
    /// it issues the same keys. If a `clone` panics, the values cloned so
    /// far are dropped.
    fn clone(&self) -> Self {
        let blocks = self.blocks.clone();
        RawHive {
            blocks,
            meta: self.meta.clone(),
            available: self.available.clone(),
            vacated: self.vacated.clone(),
            min_shift: self.min_shift,
            shift: self.shift,
            len: self.len,
            slot_total: self.slot_total,
            retired: self.retired,
            fixed: self.fixed,
            limits: self.limits,
        }
    }
}
