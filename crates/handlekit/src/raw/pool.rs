//! `RawPool`: the typed free-list block allocator of seed 001 (`fl_create`,
//! `fl_malloc`, `fl_free`), with generations.
//!
//! Memory comes in [`Block`]s of `1 << shift` slots that never move. A slot
//! is named by its *flat index* `block << shift | offset`. The free list is
//! threaded through the vacant slots' own memory (the slot's union holds the
//! next flat index), so it costs no memory of its own. Allocation pops the
//! free list, else appends to the last block (the only one with never-used
//! slots), else carves a new block; freeing pushes on the list. Both are
//! O(1).
//!
//! Unlike the C version, a new block is not pushed on the free list slot by
//! slot: its slots are handed out in order by [`Block::append`], so carving
//! a block is one allocation and no O(block) loop over links or slots.
//!
//! All of this is safe code over `Block`.

use alloc::collections::VecDeque;

use super::block::{Block, BlockTable};
use super::flat::FlatBlocks;
use super::layout::Interleaved;
use super::slot::{Slot, NO_SLOT};
#[cfg(feature = "serde")]
use super::BuildError;
use super::KeyLimits;
use crate::CapacityError;

/// Blocks plus a free list.
pub(crate) struct RawPool<T> {
    /// The blocks, end to end over the flat indices and used in order (see
    /// `FlatBlocks`), with the directory that lookups go through.
    /// Invariant: `blocks.slots() <= limits.max_slots <= u32::MAX`, so
    /// every flat index fits in a `u32` other than `NO_SLOT`.
    blocks: FlatBlocks<T>,
    /// Blocks allocated ahead by `try_reserve`, never used and not yet in
    /// `blocks` (no key can name them). Invariant: the first has base
    /// `blocks.slots()`, each next one follows the one before it, and all but
    /// the last have `1 << shift` slots; the last ends at most at
    /// `limits.max_slots`. A block joins `blocks` from the front when the
    /// last one is used up, so the append path never looks here.
    reserved: VecDeque<Block<T>>,
    /// First slot of the free list, or `NO_SLOT`. Invariant: the list holds
    /// exactly the vacant used slots whose generation is below
    /// `limits.max_generation`, each once, linked through their `next_free`.
    free_head: u32,
    /// Vacant used slots (on the free list or retired), so that the number
    /// of live values (the sum of the blocks' `live`) is `used() - vacant`.
    /// Counting these rather than the live values keeps an append free of
    /// any counter but the block's cursor.
    vacant: usize,
    /// Vacant used slots whose generation reached `limits.max_generation`:
    /// never reused, so no key is issued twice.
    retired: usize,
    /// The lowest `vacant` has been since the free list was last put in
    /// index order. When a removal empties the pool, `vacant` has since
    /// grown from here to `used()`, so at least `used() - vacant_low`
    /// slots were pushed on the list: the rebuild runs only if that is at
    /// least half the used slots (see `block_emptied`). Tracking the low
    /// mark on the pop path costs a compare, where counting pushes would
    /// cost `remove` a counter update.
    vacant_low: usize,
    /// Set for a pool that must never allocate after construction: its one
    /// block (if the capacity is not 0) has exactly this many slots, and no
    /// block is ever added.
    fixed: Option<usize>,
    limits: KeyLimits,
}

impl<T> RawPool<T> {
    /// An empty pool with blocks of `1 << shift` slots; allocates nothing.
    pub(crate) const fn new(limits: KeyLimits, shift: u32) -> Self {
        RawPool {
            blocks: FlatBlocks::new(shift),
            reserved: VecDeque::new(),
            free_head: NO_SLOT,
            vacant: 0,
            retired: 0,
            vacant_low: 0,
            fixed: None,
            limits,
        }
    }

    /// A pool with room for exactly `capacity` values, allocated now, that
    /// never allocates again.
    ///
    /// # Panics
    ///
    /// If `capacity` is more than the key can index.
    pub(crate) fn with_fixed_capacity(limits: KeyLimits, capacity: usize) -> Self {
        assert!(
            capacity <= limits.max_slots,
            "fixed capacity {capacity} exceeds the {} slots the key type can index",
            limits.max_slots
        );
        let shift = capacity.next_power_of_two().trailing_zeros();
        let mut pool = Self::new(limits, shift);
        pool.fixed = Some(capacity);
        if capacity > 0 {
            pool.blocks.push(Block::new(capacity, 0));
        }
        pool
    }

    /// Slots per block.
    #[inline]
    pub(crate) fn block_size(&self) -> usize {
        1 << self.blocks.shift()
    }

    /// Blocks allocated.
    #[inline]
    pub(crate) fn block_count(&self) -> usize {
        self.blocks.len() + self.reserved.len()
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.used() - self.vacant
    }

    /// Slots ever used: flat indices `0..used()` (every block but the last
    /// is used up).
    #[inline]
    pub(crate) fn used(&self) -> usize {
        self.blocks.used()
    }

    #[inline]
    pub(crate) fn retired(&self) -> usize {
        self.retired
    }

    #[inline]
    pub(crate) fn fixed_capacity(&self) -> Option<usize> {
        self.fixed
    }

    /// Values the pool can hold without allocating.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        self.blocks.slots() + self.reserved_slots() - self.retired
    }

    /// Slots in the reserved blocks.
    fn reserved_slots(&self) -> usize {
        self.reserved.iter().map(Block::len).sum()
    }

    /// Heap bytes held by the blocks (slots and occupancy words) and the
    /// block list.
    pub(crate) fn heap_bytes(&self) -> usize {
        let block_bytes = |blocks: &mut dyn Iterator<Item = &Block<T>>| {
            blocks.map(Block::heap_bytes).sum::<usize>()
        };
        block_bytes(&mut self.blocks.iter())
            + block_bytes(&mut self.reserved.iter())
            + self.blocks.list_bytes()
            + self.reserved.capacity() * core::mem::size_of::<Block<T>>()
    }

    /// The slots ever used, block by block, in index order.
    #[cfg(feature = "serde")]
    pub(crate) fn used_slots(&self) -> impl Iterator<Item = super::slot::SlotRef<'_, T>> {
        self.blocks.iter().flat_map(Block::used_slots)
    }

    /// Inserts `make(index, generation)` and returns `(index, generation)`.
    /// If `make` panics, no value is added (a block carved for it stays).
    // Forced, as `SlotArena::try_insert_with` is (see there): a value
    // passed to a call that is not inlined is built in memory and copied.
    #[inline(always)]
    pub(crate) fn try_insert_with(
        &mut self,
        make: impl FnOnce(usize, u32) -> T,
    ) -> Result<(usize, u32), CapacityError> {
        if self.free_head == NO_SLOT {
            if !self.blocks.last().is_some_and(Block::has_fresh) {
                self.carve()?;
            }
            let Some(block) = self.blocks.as_mut_slice().last_mut() else {
                unreachable!("no block after carving")
            };
            // A never-used slot has no generation or link to read: its first
            // occupant gets generation 1.
            let index = block.base() + block.fresh();
            let value = make(index, 1);
            block.append(1, value);
            return Ok((index, 1));
        }
        let index = self.free_head as usize;
        let (b, i) = self.split(index);
        let Some(block) = self.blocks.as_mut_slice().get_mut(b) else {
            unreachable!("free slot {index} past the blocks")
        };
        let (next, generation) = block.slot(i).map_or((NO_SLOT, 1), |slot| {
            (slot.next_free(), slot.generation() + 1)
        });
        let value = make(index, generation);
        block.occupy(i, generation, value);
        self.free_head = next;
        self.vacant -= 1;
        if self.vacant < self.vacant_low {
            self.vacant_low = self.vacant;
        }
        Ok((index, generation))
    }

    /// Adds a block to the table, a reserved one if there is one, or says
    /// why it cannot.
    #[cold]
    #[inline(never)]
    fn carve(&mut self) -> Result<(), CapacityError> {
        let (block, was_reserved) = match self.reserved.pop_front() {
            Some(block) => (block, true),
            None => (self.new_block(self.blocks.slots())?, false),
        };
        if let Err((block, _)) = self.blocks.try_push(block) {
            if was_reserved {
                // Into the place it was just taken from: no allocation.
                self.reserved.push_front(block);
            }
            return Err(CapacityError::alloc());
        }
        Ok(())
    }

    /// A never-used block with base `base`, the next flat index after every
    /// block, or why there can be none.
    fn new_block(&self, base: usize) -> Result<Block<T>, CapacityError> {
        if let Some(fixed) = self.fixed {
            return Err(CapacityError::fixed(fixed));
        }
        if base >= self.limits.max_slots {
            return Err(CapacityError::index_space(self.limits.max_slots));
        }
        let len = self.block_size().min(self.limits.max_slots - base);
        Ok(Block::new(len, base))
    }

    /// Allocates blocks ahead until `additional` more values fit without
    /// allocating. Blocks allocated before a failure stay.
    pub(crate) fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        let mut next_base = self.blocks.slots() + self.reserved_slots();
        while self.capacity() - self.len() < additional {
            let block = self.new_block(next_base)?;
            self.reserved
                .try_reserve(1)
                .map_err(|_| CapacityError::alloc())?;
            next_base += block.len();
            self.reserved.push_back(block);
        }
        Ok(())
    }

    /// Files the just-vacated slot `i` of block `b` with `generation`: on
    /// the free list, or retired if its generation ran out.
    #[inline]
    fn release(&mut self, b: usize, i: usize, generation: u32) {
        if generation >= self.limits.max_generation {
            self.retired += 1;
        } else if let Some(block) = self.blocks.as_mut_slice().get_mut(b) {
            block.set_next_free(i, self.free_head);
            self.free_head = (block.base() + i) as u32;
        }
    }

    /// Removes and returns the value named by `(index, generation)`.
    // Forced, as `SlotArena::remove` is: a call returns the value through
    // memory, and the fast path is small.
    #[inline(always)]
    pub(crate) fn remove(&mut self, index: usize, generation: u32) -> Option<T> {
        // Through the header, not the directory: removal needs the block's
        // occupancy words and counters anyway (measured: checking through
        // the directory first cost more than it saved).
        let (b, i) = self.split(index);
        let block = self.blocks.as_mut_slice().get_mut(b)?;
        let generation = Slot::<T>::matched_generation(generation);
        // Linked as the new head at once; a retired slot's link is unused.
        let value = block.take(i, generation, self.free_head)?;
        // Only a removal that empties its block can empty the pool; the
        // block's header is already in cache, the pool's last block may not be.
        let block_emptied = block.live() == 0;
        self.vacant += 1;
        if generation >= self.limits.max_generation {
            self.retired += 1;
        } else {
            // `index` named a slot of block `b`, so it is below
            // `blocks.slots() <= u32::MAX` and is not `NO_SLOT`.
            self.free_head = index as u32;
        }
        if block_emptied {
            self.block_emptied();
        }
        Some(value)
    }

    /// Called when `remove` took the last value of a block. If that was the
    /// last value of the pool, puts the free list back in index order, so
    /// that refilling the pool walks its blocks forwards instead of in the
    /// random order of the removals (a cache miss per insert in a big
    /// pool). The O(used) rebuild runs only after at least `used / 2`
    /// pushes, so it costs O(1) per removal, amortized.
    #[cold]
    #[inline(never)]
    fn block_emptied(&mut self) {
        let used = self.used();
        if self.vacant == used && used - self.vacant_low >= used / 2 {
            self.rebuild_free_list();
        }
    }

    /// Removes the value at the lowest occupied flat index at or after
    /// `from`.
    pub(crate) fn take_next(&mut self, from: usize) -> Option<(usize, u32, T)> {
        let (mut b, mut i) = self.split(from);
        while let Some(block) = self.blocks.as_mut_slice().get_mut(b) {
            if let Some((slot, generation, value)) = block.take_next(i) {
                self.vacant += 1;
                self.release(b, slot, generation);
                return Some(((b << self.blocks.shift()) + slot, generation, value));
            }
            b += 1;
            i = 0;
        }
        None
    }

    /// Keeps the values for which `keep(index, generation, &mut value)` is
    /// true, in index order. If `keep` or a `Drop` panics, the values not
    /// yet visited stay.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(usize, u32, &mut T) -> bool) {
        let max_generation = self.limits.max_generation;
        let RawPool {
            blocks,
            free_head,
            vacant,
            retired,
            ..
        } = self;
        for block in blocks.as_mut_slice().iter_mut() {
            let base = block.base();
            block.retain(
                |i, generation, value| keep(base + i, generation, value),
                |block, i, generation, value| {
                    *vacant += 1;
                    if generation >= max_generation {
                        *retired += 1;
                    } else {
                        block.set_next_free(i, *free_head);
                        *free_head = (base + i) as u32;
                    }
                    // Dropped last: the pool is consistent if it panics.
                    drop(value);
                },
            );
        }
    }

    /// Drops every value; generations are kept, so old keys stay stale. If
    /// a `Drop` panics, the rest are still dropped and the pool is left
    /// empty and consistent; then the panic propagates.
    pub(crate) fn clear(&mut self) {
        self.clear_then(Self::rebuild_free_list);
    }

    /// Rebuilds the free list in index order (lowest first) and recounts
    /// `vacant` and `retired`.
    fn rebuild_free_list(&mut self) {
        let max_generation = self.limits.max_generation;
        let mut head = NO_SLOT;
        let mut retired = 0;
        let used = self.used();
        for block in self.blocks.as_mut_slice().iter_mut().rev() {
            // Bases are flat indices below `blocks.slots() <= u32::MAX`.
            let base = block.base() as u32;
            let (linked, retired_here) = block.link_vacant(head, base, max_generation);
            head = linked;
            retired += retired_here;
        }
        self.free_head = head;
        self.retired = retired;
        let live: usize = self.blocks.iter().map(Block::live).sum();
        self.vacant = used - live;
        self.vacant_low = self.vacant;
    }

    /// Appends a used slot, occupied by `value` or vacant if `None`, with
    /// `generation`; for deserialization. Call
    /// [`finish_build`](Self::finish_build) after the last one.
    #[cfg(feature = "serde")]
    pub(crate) fn push_used(
        &mut self,
        generation: u32,
        value: Option<T>,
    ) -> Result<(), BuildError> {
        let lowest = u32::from(value.is_some());
        if generation < lowest || generation > self.limits.max_generation {
            return Err(BuildError::Generation(generation));
        }
        if !self.blocks.last().is_some_and(Block::has_fresh) {
            self.carve().map_err(BuildError::Capacity)?;
        }
        let Some(block) = self.blocks.as_mut_slice().last_mut() else {
            unreachable!("no block after carving")
        };
        match value {
            Some(value) => {
                block.append(generation, value);
            }
            None => block.push_vacant(generation),
        }
        Ok(())
    }

    /// Links the free list and counts the vacant and retired slots after
    /// the last [`push_used`](Self::push_used).
    #[cfg(feature = "serde")]
    pub(crate) fn finish_build(&mut self) {
        self.rebuild_free_list();
    }

    /// Checks every invariant; panics on the first one broken. O(slots).
    pub(crate) fn check_invariants(&self) {
        self.blocks.check_invariants();
        let mut live = 0;
        for block in self.blocks.iter() {
            block.check_invariants();
            live += block.live();
        }
        let mut next_base = self.blocks.slots();
        for (n, block) in self.reserved.iter().enumerate() {
            assert_eq!(block.base(), next_base, "base of reserved block {n}");
            assert_eq!(block.fresh(), 0, "reserved block {n} used");
            if n + 1 < self.reserved.len() {
                assert_eq!(block.len(), self.block_size(), "short reserved block {n}");
            }
            next_base += block.len();
        }
        assert!(
            next_base <= self.limits.max_slots,
            "reserved past the index space"
        );
        if self.fixed.is_some() {
            assert!(self.reserved.is_empty(), "fixed pool reserved a block");
        }
        assert!(self.blocks.slots() <= self.limits.max_slots);
        assert_eq!(live, self.len(), "vacant count");
        assert!(
            self.vacant_low <= self.vacant,
            "low mark above the vacant count"
        );
        let used = self.used();
        if let Some(fixed) = self.fixed {
            assert_eq!(self.blocks.slots(), fixed, "fixed pool changed size");
            assert!(self.blocks.len() <= 1, "fixed pool grew a block");
        }
        let slot = |index: usize| {
            let (b, i) = self.split(index);
            self.blocks.get(b).and_then(|block| block.slot(i))
        };
        let mut retired = 0;
        for index in 0..self.blocks.slots() {
            let Some(s) = slot(index) else {
                assert!(index >= used, "used slot {index} missing");
                continue;
            };
            assert!(index < used, "never-used slot {index} readable");
            assert!(s.generation() <= self.limits.max_generation);
            if !s.is_occupied() && s.generation() >= self.limits.max_generation {
                retired += 1;
            }
        }
        assert_eq!(retired, self.retired, "retired count");
        let mut seen = alloc::vec![false; used];
        let mut cursor = self.free_head;
        let mut listed = 0;
        while cursor != NO_SLOT {
            let index = cursor as usize;
            assert!(index < used, "free list holds never-used slot {index}");
            assert!(!seen[index], "free list cycle or duplicate at {index}");
            seen[index] = true;
            let Some(s) = slot(index) else {
                panic!("free list past the slots");
            };
            assert!(!s.is_occupied(), "free list holds occupied slot {index}");
            assert!(s.generation() < self.limits.max_generation);
            listed += 1;
            cursor = s.next_free();
        }
        assert_eq!(
            self.len() + self.retired + listed,
            used,
            "a used vacant slot is neither free nor retired"
        );
    }
}

impl<T> BlockTable<T> for RawPool<T> {
    type Layout = Interleaved<T>;

    #[inline]
    fn blocks(&self) -> &[Block<T>] {
        &self.blocks
    }

    #[inline]
    fn blocks_mut(&mut self) -> &mut [Block<T>] {
        self.blocks.as_mut_slice()
    }

    #[inline]
    fn shift(&self) -> u32 {
        self.blocks.shift()
    }

    #[inline]
    fn live(&self) -> usize {
        self.len()
    }

    // The lookups by key go through the directory (see `flat.rs`).

    #[inline]
    fn contains(&self, index: usize, generation: u32) -> bool {
        self.blocks.is_live(index, generation)
    }

    #[inline]
    fn get(&self, index: usize, generation: u32) -> Option<&T> {
        self.blocks.value(index, generation)
    }

    #[inline]
    fn get_mut(&mut self, index: usize, generation: u32) -> Option<&mut T> {
        self.blocks.value_mut(index, generation)
    }

    #[inline]
    fn get_ptr(&self, index: usize, generation: u32) -> Option<core::ptr::NonNull<T>> {
        self.blocks.value_ptr(index, generation)
    }
}

impl<T: Clone> Clone for RawPool<T> {
    /// A copy with the same blocks, generations and free list, so it issues
    /// the same keys. A fixed pool's copy is fixed too. If a `clone` panics,
    /// the values cloned so far are dropped.
    fn clone(&self) -> Self {
        let blocks = self.blocks.clone();
        // Reserved blocks hold nothing to copy.
        let reserved = self
            .reserved
            .iter()
            .map(|block| Block::new(block.len(), block.base()))
            .collect();
        RawPool {
            blocks,
            reserved,
            free_head: self.free_head,
            vacant: self.vacant,
            retired: self.retired,
            vacant_low: self.vacant_low,
            fixed: self.fixed,
            limits: self.limits,
        }
    }
}
