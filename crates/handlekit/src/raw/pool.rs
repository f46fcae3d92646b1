//! `RawPool`: the typed free-list block allocator of seed 001 (`fl_create`,
//! `fl_malloc`, `fl_free`), with generations.
//!
//! Memory comes in blocks of `1 << shift` slots that never move
//! ([`FlatSlots`]). A slot is named by its *flat index* `block << shift |
//! offset`. The free list is threaded through the vacant slots' own memory
//! (the slot's union holds the next flat index), so it costs no memory of
//! its own. Allocation pops the free list, else takes the next never-used
//! slot, else adds a block; freeing pushes on the list. Both are O(1).
//!
//! Unlike the C version, a new block is not pushed on the free list slot by
//! slot: its slots are handed out in order, so adding a block is one
//! allocation and no O(block) loop over links or slots.
//!
//! All of this is safe code over `FlatSlots`, but for the keys it hands
//! out (`take_next_keyed`, `keyed_iter`), which rest on its limits.

use core::marker::PhantomData;

use super::block::block_shift_for;
use super::flat::{FlatIter, FlatIterMut, FlatSlots};
use super::keyed::TakeSlots;
use super::slot::{Payload, Slot, NO_SLOT, SWEEP};
use super::storage::PoolBlocks;
use super::table::RawTable;
#[cfg(feature = "serde")]
use super::BuildError;
use super::KeyLimits;
use crate::{CapacityError, Key};

/// Blocks plus a free list.
pub struct RawPool<T, K = crate::PoolKey> {
    /// The slots. Invariant: `slots.slots() <= limits.max_slots`; a fixed
    /// pool has one block of exactly its capacity, or none if that is 0.
    slots: FlatSlots<T>,
    /// First slot of the free list, `NO_SLOT` or `SWEEP`. Invariant: the
    /// list, linked through the slots' `next_free` and ending in `NO_SLOT`
    /// or `SWEEP`, then (if it ends in `SWEEP`) the slots `sweep..used()`,
    /// hold exactly the vacant used slots whose generation is below
    /// `limits.max_generation`, each once.
    free_head: u32,
    /// Where the refill of an emptied pool goes on (see `refill_emptied`):
    /// while the free list ends in `SWEEP`, `sweep < used()`, and the slots
    /// `sweep..used()` follow the list; otherwise unused.
    sweep: usize,
    /// Vacant used slots (on the free list or retired), so that the number
    /// of live values is `used() - vacant`. Counting these rather than the
    /// live values keeps an append free of any counter but `used`.
    vacant: usize,
    /// Vacant used slots whose generation reached `limits.max_generation`:
    /// never reused, so no key is issued twice.
    retired: usize,
    /// The lowest `vacant` has been since the free list was last put in
    /// index order. When an insertion finds the pool empty, `vacant` has
    /// since grown from here to `used()`, so at least `used() - vacant_low`
    /// slots were pushed on the list: the rebuild runs only if that is at
    /// least half the used slots (see `refill_emptied`). Tracking the low
    /// mark on the pop path costs a compare, where counting pushes would
    /// cost `remove` a counter update.
    vacant_low: usize,
    /// Set for a pool that must never allocate after construction (see
    /// the invariant on `slots`).
    fixed: Option<usize>,
    /// Invariant: no wider than `KeyLimits::of::<K>()` (the constructors
    /// make it so), so every slot's parts make a valid `K`.
    limits: KeyLimits,
    _key: PhantomData<fn() -> K>,
}

/// `log2` of the default block size for `T`: as many slots as fit in 64 KiB,
/// rounded down to a power of two and kept within 64..=16384. Big enough
/// that carving a block (one allocation) costs little per insert; small
/// enough that a pool of a few values does not hold much more.
pub(crate) const fn default_shift<T>() -> u32 {
    block_shift_for::<T>(64 * 1024, 64, 16384)
}

impl<T, K: Key> RawPool<T, K> {
    /// An empty pool with blocks of `1 << shift` slots; allocates nothing.
    ///
    /// # Panics
    ///
    /// If `limits` allow more than `K` does.
    pub(crate) const fn new(limits: KeyLimits, shift: u32) -> Self {
        // No slot's index may be a list end (`NO_SLOT` or `SWEEP`).
        let limits = KeyLimits::within::<K>(limits).below_list_ends();
        RawPool {
            slots: FlatSlots::new(shift),
            free_head: NO_SLOT,
            sweep: 0,
            vacant: 0,
            retired: 0,
            vacant_low: 0,
            fixed: None,
            limits,
            _key: PhantomData,
        }
    }

    /// A pool with room for exactly `capacity` values, allocated now, that
    /// never allocates again.
    ///
    /// # Panics
    ///
    /// If `capacity` is more than the key can index.
    pub(crate) fn with_fixed_capacity(limits: KeyLimits, capacity: usize) -> Self {
        let limits = limits.below_list_ends();
        assert!(
            capacity <= limits.max_slots,
            "fixed capacity {capacity} exceeds the {} slots the key type can index",
            limits.max_slots
        );
        let shift = capacity.next_power_of_two().trailing_zeros();
        let mut pool = Self::new(limits, shift);
        pool.fixed = Some(capacity);
        if capacity > 0 {
            pool.slots.add_block(capacity);
        }
        pool
    }
}

impl<T, K> RawPool<T, K> {
    /// Slots per block.
    #[inline]
    pub(crate) fn block_size(&self) -> usize {
        1 << self.slots.shift()
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.used() - self.vacant
    }

    /// Slots ever used: flat indices `0..used()`.
    #[inline]
    pub(crate) fn used(&self) -> usize {
        self.slots.used()
    }

    /// The slots ever used, in index order.
    #[cfg(feature = "serde")]
    pub(crate) fn used_slots(&self) -> impl Iterator<Item = super::slot::SlotRef<'_, T>> {
        (0..self.used()).filter_map(|index| self.slots.slot(index))
    }

    /// Makes sure `FlatSlots::append` can write without seeking: the
    /// one check on the append path, with the rest out of line.
    #[inline]
    fn ensure_append_room(&mut self) -> Result<(), CapacityError> {
        if self.slots.can_append_in_place() {
            Ok(())
        } else {
            self.make_append_room()
        }
    }

    /// Moves the append position to the block that holds the next
    /// never-used slot, adding that block if every slot is used.
    #[cold]
    #[inline(never)]
    fn make_append_room(&mut self) -> Result<(), CapacityError> {
        if !self.slots.seek_append() {
            self.add_block()?;
            let placed = self.slots.seek_append();
            debug_assert!(placed, "no room after adding a block");
        }
        Ok(())
    }

    /// Adds a block, or says why it cannot.
    #[cold]
    fn add_block(&mut self) -> Result<(), CapacityError> {
        if let Some(fixed) = self.fixed {
            return Err(CapacityError::fixed(fixed));
        }
        let slots = self.slots.slots();
        if slots >= self.limits.max_slots {
            return Err(CapacityError::index_space(self.limits.max_slots));
        }
        // Only the block that reaches `max_slots` is short, and none
        // follows it (checked above).
        let len = self.block_size().min(self.limits.max_slots - slots);
        self.slots
            .try_add_block(len)
            .map_err(|_| CapacityError::alloc())
    }

    /// Called when an insertion that reuses a slot finds the pool empty.
    /// Puts the free list back in index order, so that refilling the pool
    /// walks its blocks forwards instead of in the random order of the
    /// removals (a cache miss per insert in a big pool): with no retired
    /// slot, every used slot is vacant and listed, so the list becomes a
    /// sweep of them from slot 0 (it ends in `SWEEP` at once), two writes;
    /// else the list is rebuilt, O(used). Either runs only after at least
    /// `used / 2` pushes (so the rebuild costs O(1) per removal, amortized,
    /// and the keys a pool hands out do not depend on which way it took).
    /// It waits for the refill rather than running when the last value is
    /// removed, so that `remove` calls nothing and a pool emptied and then
    /// dropped never pays for it.
    #[cold]
    #[inline(never)]
    fn refill_emptied(&mut self) {
        let used = self.used();
        if used - self.vacant_low < used / 2 {
            return;
        }
        if self.retired == 0 {
            self.free_head = SWEEP;
            self.sweep = 0;
            self.vacant_low = self.vacant;
        } else {
            self.rebuild_free_list();
        }
    }

    /// [`try_insert_with`](RawTable::try_insert_with) into the sweep's next
    /// slot (the free list ends in `SWEEP` at its head).
    #[inline(always)]
    fn sweep_with(&mut self, make: impl FnOnce(usize, u32) -> T) -> (usize, u32) {
        let index = self.sweep;
        debug_assert!(index < self.used());
        // The slots `sweep..used()` are vacant used slots below the last
        // generation (invariant on `free_head`); the link is unused.
        // SAFETY: so this one is.
        let (generation, _) = unsafe { self.reuse_with(index, make) };
        self.sweep = index + 1;
        if self.sweep == self.used() {
            self.free_head = NO_SLOT;
        }
        (index, generation)
    }

    /// Puts `make(index, last + 1)` into vacant used slot `index`, whose
    /// last occupant had generation `last`, and counts it; gives the
    /// generation and the free-list link the slot held (read before `make`
    /// runs). The caller files the slot off the list or the sweep.
    ///
    /// # Safety
    ///
    /// Slot `index` is used, vacant and below `limits.max_generation`.
    #[inline(always)]
    unsafe fn reuse_with(
        &mut self,
        index: usize,
        make: impl FnOnce(usize, u32) -> T,
    ) -> (u32, u32) {
        debug_assert!(index < self.used());
        // SAFETY: the caller's guarantee: the slot is used.
        let slot = unsafe { self.slots.slot_mut_unchecked(index) };
        let (next, generation) = {
            let slot = slot.as_ref();
            // SAFETY: and vacant.
            (unsafe { slot.next_free_unchecked() }, slot.generation() + 1)
        };
        let value = make(index, generation);
        slot.occupy(generation, value);
        self.vacant -= 1;
        if self.vacant < self.vacant_low {
            self.vacant_low = self.vacant;
        }
        (generation, next)
    }

    /// Removes the value at the lowest occupied flat index at or after
    /// `from`.
    pub(crate) fn take_next(&mut self, from: usize) -> Option<(usize, u32, T)>
    where
        K: Key,
    {
        let index = self.slots.next_occupied(from)?;
        let generation = self.slots.slot(index)?.generation();
        let value = RawTable::remove(self, index, generation)?;
        Some((index, generation, value))
    }

    /// Drops every value; generations are kept, so old keys stay stale. If
    /// a `Drop` panics, the rest are still dropped and the pool is left
    /// empty and consistent; then the panic propagates.
    pub(crate) fn clear(&mut self) {
        /// Relinks the free list, even if a `Drop` panicked.
        struct Settle<'a, T, K>(&'a mut RawPool<T, K>);
        impl<T, K> Drop for Settle<'_, T, K> {
            fn drop(&mut self) {
                self.0.rebuild_free_list();
            }
        }
        let settle = Settle(self);
        settle.0.slots.drop_values();
        drop(settle);
    }

    /// Rebuilds the free list in index order (lowest first) and recounts
    /// `vacant` and `retired`.
    fn rebuild_free_list(&mut self) {
        let (head, vacant, retired) = self.slots.link_vacant(self.limits.max_generation);
        self.free_head = head;
        self.vacant = vacant;
        self.retired = retired;
        self.vacant_low = vacant;
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
        self.ensure_append_room().map_err(BuildError::Capacity)?;
        let (state, payload) = match value {
            Some(value) => (
                Slot::<T>::occupied_state(generation),
                Payload::occupied(value),
            ),
            None => (
                Slot::<T>::vacant_state(generation),
                Payload::vacant(NO_SLOT),
            ),
        };
        self.slots.append(state, payload);
        Ok(())
    }

    /// Links the free list and counts the vacant and retired slots after
    /// the last [`push_used`](Self::push_used).
    #[cfg(feature = "serde")]
    pub(crate) fn finish_build(&mut self) {
        self.rebuild_free_list();
    }
}

impl<T: Clone, K> Clone for RawPool<T, K> {
    /// A copy with the same blocks, generations and free list, so it issues
    /// the same keys. A fixed pool's copy is fixed too. If a `clone` panics,
    /// the values cloned so far are dropped.
    fn clone(&self) -> Self {
        RawPool {
            slots: self.slots.clone(),
            free_head: self.free_head,
            sweep: self.sweep,
            vacant: self.vacant,
            retired: self.retired,
            vacant_low: self.vacant_low,
            fixed: self.fixed,
            limits: self.limits,
            _key: PhantomData,
        }
    }
}

// SAFETY: every index and generation the pool hands out is one of its
// own slots, made within its limits, which are no wider than those of `K`;
// its passes walk its own blocks.
#[allow(private_interfaces)]
unsafe impl<T, K: Key> RawTable<T> for RawPool<T, K> {
    type Blocks = PoolBlocks;

    const EMPTY: Self = RawPool::new(KeyLimits::of::<K>(), default_shift::<T>());

    #[inline]
    fn iter(&self) -> FlatIter<'_, T> {
        self.slots.iter(self.len())
    }

    #[inline]
    fn iter_mut(&mut self) -> FlatIterMut<'_, T> {
        let len = self.len();
        self.slots.iter_mut(len)
    }

    /// Adds blocks until `additional` more values fit without allocating.
    /// Blocks added before a failure stay.
    fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        let short = additional.saturating_sub(self.capacity() - self.len());
        if short != 0 && self.fixed.is_none() {
            // The state array and the directory for all the blocks below at
            // once, rather than doubling as they come.
            let slots = short
                .div_ceil(self.block_size())
                .saturating_mul(self.block_size())
                .saturating_add(self.slots.slots())
                .min(self.limits.max_slots);
            self.slots
                .reserve_exact(slots)
                .map_err(|_| CapacityError::alloc())?;
        }
        while self.capacity() - self.len() < additional {
            self.add_block()?;
        }
        Ok(())
    }

    /// Inserts `make(index, generation)` and returns `(index, generation)`.
    /// If `make` panics, no value is added (a block added for it stays).
    // Forced, as `SlotArena::try_insert_with` is (see there): a value
    // passed to a call that is not inlined is built in memory and copied.
    #[inline(always)]
    fn try_insert_with(
        &mut self,
        make: impl FnOnce(usize, u32) -> T,
    ) -> Result<(usize, u32), CapacityError> {
        if self.free_head == NO_SLOT {
            let index = self.used();
            self.ensure_append_room()?;
            // A never-used slot has no generation or link to read: its first
            // occupant gets generation 1.
            let value = make(index, 1);
            self.slots
                .append(Slot::<T>::occupied_state(1), Payload::occupied(value));
            return Ok((index, 1));
        }
        if self.vacant == self.used() {
            self.refill_emptied();
        }
        if self.free_head == SWEEP {
            // Laid out after the list's way: a sweep runs once a pool's
            // worth of insertions after the pool emptied.
            super::cold_path();
            return Ok(self.sweep_with(make));
        }
        let index = self.free_head as usize;
        // The free list holds vacant used slots below the last generation
        // (the invariant on `free_head`).
        // SAFETY: so its head is one.
        let (generation, next) = unsafe { self.reuse_with(index, make) };
        self.free_head = next;
        Ok((index, generation))
    }

    /// The `(index, generation)` the next insertion gets, or the error it
    /// fails with. Adds no value; it may add the block the insertion needs
    /// and put an emptied pool's free list in order, as an insertion would.
    /// [`try_insert_with`](Self::try_insert_with) right after it fills this
    /// very spot. For fallible constructors, which must know the key first.
    fn next_spot(&mut self) -> Result<(usize, u32), CapacityError> {
        if self.free_head == NO_SLOT {
            self.ensure_append_room()?;
            return Ok((self.used(), 1));
        }
        if self.vacant == self.used() {
            self.refill_emptied();
        }
        let index = match self.free_head {
            SWEEP => self.sweep,
            head => head as usize,
        };
        let last = self.slots.slot(index).map_or(0, |slot| slot.generation());
        Ok((index, last + 1))
    }

    #[inline]
    fn contains(&self, index: usize, generation: u32) -> bool {
        self.slots.is_live(index, generation)
    }

    #[inline]
    fn get(&self, index: usize, generation: u32) -> Option<&T> {
        self.slots.value(index, generation)
    }

    #[inline]
    fn get_mut(&mut self, index: usize, generation: u32) -> Option<&mut T> {
        self.slots.value_mut(index, generation)
    }

    #[inline]
    fn get_ptr(&self, index: usize, generation: u32) -> Option<core::ptr::NonNull<T>> {
        self.slots.value_ptr(index, generation)
    }

    /// The value at `index`.
    ///
    /// # Safety
    ///
    /// Slot `index` must be used and occupied.
    #[inline]
    unsafe fn get_unchecked(&self, index: usize) -> &T {
        // SAFETY: the caller's guarantee is `value_unchecked`'s.
        unsafe { self.slots.value_unchecked(index) }
    }

    /// The value at `index`, mutably.
    ///
    /// # Safety
    ///
    /// Slot `index` must be used and occupied.
    #[inline]
    unsafe fn get_unchecked_mut(&mut self, index: usize) -> &mut T {
        // SAFETY: the caller's guarantee is `value_unchecked_mut`'s.
        unsafe { self.slots.value_unchecked_mut(index) }
    }

    fn get_disjoint_mut<const N: usize>(&mut self, keys: [(usize, u32); N]) -> Option<[&mut T; N]> {
        self.slots.values_disjoint_mut(keys)
    }

    /// Removes and returns the value named by `(index, generation)`.
    // Forced, as `SlotArena::remove` is: a call returns the value through
    // memory, and the fast path is small. It calls nothing: a call in a
    // loop of removals, even one never taken, makes the compiler keep
    // `free_head` and `vacant` in memory instead of registers, which cost
    // 3.1 ns per removal against 1.9 at 1000 `u64`s.
    #[inline(always)]
    fn remove(&mut self, index: usize, generation: u32) -> Option<T> {
        // Linked as the new head at once; a retired slot's link is unused.
        // Whether the slot retires is known from the key before the value
        // is read (a matching key's generation is the slot's), so each way
        // reads it and nothing branches between the read and the return:
        // filed after the read, a 64-byte value was copied through the
        // stack twice (callgrind, 1,000 removals: 53 instructions a
        // removal, 43 so; `u64`: 28, 26 so). `take_next` and `retain`
        // remove through it too.
        if Slot::<T>::matched_generation(generation) >= self.limits.max_generation {
            super::cold_path();
            let value = self.slots.take(index, generation, self.free_head)?;
            self.vacant += 1;
            self.retired += 1;
            return Some(value);
        }
        let value = self.slots.take(index, generation, self.free_head)?;
        self.vacant += 1;
        // A used index is below `slots <= u32::MAX` and is not `NO_SLOT`
        // (invariant on `FlatSlots::slots`).
        self.free_head = index as u32;
        Some(value)
    }

    /// Keeps the values for which `keep(index, generation, &mut value)` is
    /// true, in index order. If `keep` or a `Drop` panics, the values not
    /// yet visited stay.
    fn retain(&mut self, mut keep: impl FnMut(usize, u32, &mut T) -> bool) {
        for index in 0..self.used() {
            let Some(slot) = self.slots.slot_mut(index) else {
                break;
            };
            let generation = slot.as_ref().generation();
            let Some(value) = slot.get_mut() else {
                continue;
            };
            if keep(index, generation, value) {
                continue;
            }
            let Some(value) = RawTable::remove(self, index, generation) else {
                unreachable!("slot {index} was occupied")
            };
            // Dropped last: the pool is consistent if it panics.
            drop(value);
        }
    }

    /// Values the pool can hold without allocating.
    #[inline]
    fn capacity(&self) -> usize {
        self.slots.slots() - self.retired
    }

    #[inline]
    fn fixed_capacity(&self) -> Option<usize> {
        self.fixed
    }

    #[inline]
    fn retired(&self) -> usize {
        self.retired
    }

    /// Heap bytes held by the blocks and their directory.
    fn heap_bytes(&self) -> usize {
        self.slots.heap_bytes()
    }

    /// Blocks allocated.
    #[inline]
    fn block_count(&self) -> usize {
        self.slots.block_count()
    }

    /// Checks every invariant; panics on the first one broken. O(slots).
    fn check_invariants(&self) {
        self.slots.check_invariants();
        let (slots, used) = (self.slots.slots(), self.used());
        assert!(slots <= self.limits.max_slots, "slots past the index space");
        if let Some(fixed) = self.fixed {
            assert_eq!(slots, fixed, "fixed pool changed size");
            assert!(self.block_count() <= 1, "fixed pool grew a block");
        }
        let (mut vacant, mut retired) = (0, 0);
        for index in 0..used {
            let Some(slot) = self.slots.slot(index) else {
                panic!("used slot {index} missing");
            };
            assert!(slot.generation() <= self.limits.max_generation);
            if slot.is_occupied() {
                assert!(
                    slot.generation() >= 1,
                    "occupied slot {index} has generation 0"
                );
            } else {
                vacant += 1;
                if slot.generation() >= self.limits.max_generation {
                    retired += 1;
                }
            }
        }
        assert!(
            self.slots.slot(used).is_none(),
            "never-used slot {used} readable"
        );
        assert_eq!(vacant, self.vacant, "vacant count");
        assert_eq!(retired, self.retired, "retired count");
        assert!(
            self.vacant_low <= self.vacant,
            "low mark above the vacant count"
        );
        let mut seen = alloc::vec![false; used];
        let mut listed = 0;
        // Checks a listed (or swept) slot; gives its link.
        let mut visit = |index: usize| {
            assert!(index < used, "free list holds never-used slot {index}");
            assert!(!seen[index], "free list cycle or duplicate at {index}");
            seen[index] = true;
            let Some(slot) = self.slots.slot(index) else {
                panic!("free list past the slots");
            };
            assert!(!slot.is_occupied(), "free list holds occupied slot {index}");
            assert!(slot.generation() < self.limits.max_generation);
            listed += 1;
            slot.next_free()
        };
        let mut cursor = self.free_head;
        while cursor != NO_SLOT && cursor != SWEEP {
            cursor = visit(cursor as usize);
        }
        if cursor == SWEEP {
            assert!(self.sweep < used, "sweep past the used slots");
            for index in self.sweep..used {
                visit(index);
            }
        }
        assert_eq!(
            listed + self.retired,
            self.vacant,
            "a vacant slot is neither free nor retired"
        );
    }
}
// SAFETY: the pool's slots, under the generations they held; its limits
// are those of `K` or narrower.
unsafe impl<T, K: Key> TakeSlots<T> for RawPool<T, K> {
    type Key = K;
    #[inline]
    fn take_slot(&mut self, from: usize) -> Option<(usize, u32, T)> {
        RawPool::take_next(self, from)
    }
    #[inline]
    fn len(&self) -> usize {
        RawPool::len(self)
    }
    fn clear(&mut self) {
        RawPool::clear(self);
    }
}
