//! `SlotArena`: an array of slots with holes, a free list threaded through the
//! vacant slots, and an occupancy bitset. It speaks in raw `(index,
//! generation)` pairs; the typed tables above it convert keys.

use alloc::vec::Vec;
use core::marker::PhantomData;
use core::mem;

use super::bitset::{BitIter, Occupancy};
use super::slot::{Slot, NO_SLOT};
use crate::key::max_generation;
use crate::{CapacityError, Key, Reuse};

/// What a key type allows: how many slots it can index and how many
/// generations it can tell apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyLimits {
    /// Slots the key can index. Never above `u32::MAX`, so index
    /// `u32::MAX` stays free to mark the end of a free list.
    pub(crate) max_slots: usize,
    /// The last generation a slot may be given before it retires.
    pub(crate) max_generation: u32,
}

impl KeyLimits {
    /// The limits of key type `K`.
    #[inline]
    pub(crate) const fn of<K: Key>() -> Self {
        let by_bits: u64 = if K::INDEX_BITS >= 32 {
            u32::MAX as u64
        } else {
            1u64 << K::INDEX_BITS
        };
        let max_slots = if by_bits > usize::MAX as u64 {
            usize::MAX
        } else {
            by_bits as usize
        };
        KeyLimits {
            max_slots,
            max_generation: max_generation(K::GENERATION_BITS),
        }
    }
}

/// The shared core of the slot-based tables.
pub(crate) struct SlotArena<T> {
    /// The slots. Invariant: every index below `slots.len()` is `< max_slots`
    /// and so fits in a `u32` other than `NO_SLOT`.
    slots: Vec<Slot<T>>,
    /// Invariant: bit `i` is set iff `slots[i]` is occupied, and no bit at
    /// or past `slots.len()` is set.
    occupied: Occupancy,
    /// Number of occupied slots (set bits in `occupied`).
    len: usize,
    /// First slot of the free list, or `NO_SLOT`. Invariant: the free list
    /// holds exactly the vacant slots whose generation is below
    /// `limits.max_generation`, each once, linked through `next_free`.
    free_head: u32,
    /// Last slot of the free list, or `NO_SLOT` when it is empty.
    free_tail: u32,
    /// Number of slots on the free list.
    free_len: usize,
    /// Vacant slots whose generation reached `limits.max_generation`. They
    /// are never reused, so no key is ever issued twice.
    retired: usize,
    /// Where freed slots join the free list.
    reuse: Reuse,
    /// Set for tables that must never reallocate: the number of slots the
    /// allocation was made for. `slots.capacity()` is at least this.
    fixed_capacity: Option<usize>,
    limits: KeyLimits,
}

impl<T> SlotArena<T> {
    /// An empty arena.
    #[inline]
    pub(crate) const fn new(limits: KeyLimits) -> Self {
        SlotArena {
            slots: Vec::new(),
            occupied: Occupancy::new(),
            len: 0,
            free_head: NO_SLOT,
            free_tail: NO_SLOT,
            free_len: 0,
            retired: 0,
            reuse: Reuse::Lifo,
            fixed_capacity: None,
            limits,
        }
    }

    /// An empty arena with room for `capacity` slots.
    pub(crate) fn with_capacity(limits: KeyLimits, capacity: usize) -> Self {
        let capacity = capacity.min(limits.max_slots);
        SlotArena {
            slots: Vec::with_capacity(capacity),
            occupied: Occupancy::with_capacity(capacity),
            ..Self::new(limits)
        }
    }

    /// An empty arena that allocates room for `capacity` slots now and never
    /// reallocates.
    pub(crate) fn with_fixed_capacity(limits: KeyLimits, capacity: usize) -> Self {
        assert!(
            capacity <= limits.max_slots,
            "fixed capacity {capacity} exceeds the {} slots the key type can index",
            limits.max_slots
        );
        let mut arena = Self::with_capacity(limits, capacity);
        arena.occupied.grow_to(capacity);
        arena.fixed_capacity = Some(capacity);
        arena
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn retired(&self) -> usize {
        self.retired
    }

    #[inline]
    pub(crate) fn reuse(&self) -> Reuse {
        self.reuse
    }

    #[inline]
    pub(crate) fn set_reuse(&mut self, reuse: Reuse) {
        self.reuse = reuse;
    }

    /// The fixed capacity, for an arena that never reallocates.
    #[inline]
    pub(crate) fn fixed_capacity(&self) -> Option<usize> {
        self.fixed_capacity
    }

    /// Values the arena can hold without reallocating.
    #[inline]
    pub(crate) fn capacity(&self) -> usize {
        let slots = match self.fixed_capacity {
            Some(fixed) => fixed,
            None => self.slots.capacity(),
        };
        slots.min(self.limits.max_slots) - self.retired
    }

    /// The most slots this arena may ever have.
    #[inline]
    fn slot_limit(&self) -> usize {
        match self.fixed_capacity {
            Some(fixed) => fixed,
            None => self.limits.max_slots,
        }
    }

    /// The error for an arena that cannot add a slot.
    #[cold]
    fn full_error(&self) -> CapacityError {
        match self.fixed_capacity {
            Some(fixed) => CapacityError::fixed(fixed),
            None => CapacityError::index_space(self.limits.max_slots),
        }
    }

    /// Makes room for `additional` more values without reallocating.
    pub(crate) fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        let reusable = match self.reuse {
            Reuse::Lifo => self.free_len,
            Reuse::Fifo { min_free } => self.free_len.saturating_sub(min_free as usize),
        };
        let limit = self.slot_limit();
        let growable = limit - self.slots.len();
        // Past the limit the table dips into a FIFO reserve, so only a
        // shortfall of all free slots is an error.
        if additional.saturating_sub(self.free_len) > growable {
            return Err(self.full_error());
        }
        let new_slots = additional.saturating_sub(reusable).min(growable);
        if self.fixed_capacity.is_some() {
            return Ok(());
        }
        let target = self.slots.len() + new_slots;
        self.slots
            .try_reserve(new_slots)
            .map_err(|_| CapacityError::alloc())?;
        self.occupied
            .try_reserve_for(target)
            .map_err(|_| CapacityError::alloc())
    }

    /// Frees unused memory. Slots are never dropped, so that no stale key
    /// can come back to life; a fixed-capacity arena keeps its allocation.
    pub(crate) fn shrink_to_fit(&mut self) {
        if self.fixed_capacity.is_none() {
            self.slots.shrink_to_fit();
            self.occupied.shrink_to_fit();
        }
    }

    /// Whether `(index, generation)` names a live value.
    #[inline]
    pub(crate) fn contains(&self, index: usize, generation: u32) -> bool {
        self.slots
            .get(index)
            .is_some_and(|slot| slot.matches(generation))
    }

    #[inline]
    pub(crate) fn get(&self, index: usize, generation: u32) -> Option<&T> {
        self.slots.get(index)?.get_if(generation)
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, index: usize, generation: u32) -> Option<&mut T> {
        self.slots.get_mut(index)?.get_mut_if(generation)
    }

    /// The value in slot `index`.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be occupied.
    #[inline]
    pub(crate) unsafe fn get_unchecked(&self, index: usize) -> &T {
        debug_assert!(self.slots.get(index).is_some_and(Slot::is_occupied));
        // SAFETY: the caller guarantees slot `index` exists and is occupied.
        unsafe { self.slots.get_unchecked(index).value_unchecked() }
    }

    /// The value in slot `index`.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be occupied.
    #[inline]
    pub(crate) unsafe fn get_unchecked_mut(&mut self, index: usize) -> &mut T {
        debug_assert!(self.slots.get(index).is_some_and(Slot::is_occupied));
        // SAFETY: the caller guarantees slot `index` exists and is occupied.
        unsafe { self.slots.get_unchecked_mut(index).value_unchecked_mut() }
    }

    /// Mutable references to `N` distinct live values, or `None` if any key
    /// is not live or two keys name the same slot.
    pub(crate) fn get_disjoint_mut<const N: usize>(
        &mut self,
        keys: [(usize, u32); N],
    ) -> Option<[&mut T; N]> {
        for (n, &(index, generation)) in keys.iter().enumerate() {
            if !self.contains(index, generation) {
                return None;
            }
            // Two live keys with one index are the same key.
            if keys[..n].iter().any(|&(other, _)| other == index) {
                return None;
            }
        }
        let base = self.slots.as_mut_ptr();
        // SAFETY: every index is in bounds and occupied (checked above) and
        // the indices are pairwise distinct, so the references are to
        // distinct initialized values, derived from one pointer without
        // intermediate references to the slots. `&mut self` is held for the
        // references' lifetime.
        Some(core::array::from_fn(|n| unsafe {
            &mut *Slot::value_ptr(base.add(keys[n].0))
        }))
    }

    /// The slot the next insertion would reuse, if any.
    #[inline]
    fn reusable_slot(&self) -> Option<usize> {
        if self.free_head == NO_SLOT {
            return None;
        }
        let reuse_now = match self.reuse {
            Reuse::Lifo => true,
            Reuse::Fifo { min_free } => {
                self.free_len > min_free as usize || self.slots.len() >= self.slot_limit()
            }
        };
        reuse_now.then_some(self.free_head as usize)
    }

    /// Inserts the value `make(index, generation)` and returns its
    /// `(index, generation)`. If `make` panics, the arena is unchanged.
    ///
    /// The common case, reusing the head of a LIFO free list, is kept small
    /// enough to inline into big callers; everything else is out of line.
    #[inline]
    pub(crate) fn try_insert_with(
        &mut self,
        make: impl FnOnce(usize, u32) -> T,
    ) -> Result<(usize, u32), CapacityError> {
        if matches!(self.reuse, Reuse::Lifo) {
            if self.free_head != NO_SLOT {
                return Ok(self.fill_free_head(make));
            }
            if self.fixed_capacity.is_none() && self.slots.len() < self.limits.max_slots {
                return Ok(self.append(make));
            }
        }
        self.insert_general(make)
    }

    /// Appends a new slot holding `make(index, 1)`; the caller checked the
    /// slot limit.
    #[inline(always)]
    fn append(&mut self, make: impl FnOnce(usize, u32) -> T) -> (usize, u32) {
        let index = self.slots.len();
        let value = make(index, 1);
        // The bitset covers every slot, so it only needs a new word when
        // the index starts one.
        if index % super::bitset::WORD_BITS == 0 {
            self.occupied.grow_to(index + 1);
        }
        self.slots.push(Slot::new_occupied(1, value));
        self.occupied.insert(index);
        self.len += 1;
        (index, 1)
    }

    /// Pops the head of the free list (which must not be empty) and fills
    /// it with `make(index, generation)`.
    #[inline(always)]
    fn fill_free_head(&mut self, make: impl FnOnce(usize, u32) -> T) -> (usize, u32) {
        let index = self.free_head as usize;
        let slot = &mut self.slots[index];
        // SAFETY: the free list holds only vacant slots (the invariant on
        // `free_head`), and the caller checked it is not empty.
        let next = unsafe { slot.next_free_unchecked() };
        let generation = slot.generation() + 1;
        let value = make(index, generation);
        slot.occupy(generation, value);
        self.free_head = next;
        if next == NO_SLOT {
            self.free_tail = NO_SLOT;
        }
        self.free_len -= 1;
        self.occupied.insert(index);
        self.len += 1;
        (index, generation)
    }

    /// Every insertion but the LIFO reuse fast path: FIFO reuse, and
    /// appending a new slot.
    #[inline(never)]
    fn insert_general(
        &mut self,
        make: impl FnOnce(usize, u32) -> T,
    ) -> Result<(usize, u32), CapacityError> {
        if self.reusable_slot().is_some() {
            Ok(self.fill_free_head(make))
        } else {
            if self.slots.len() >= self.slot_limit() {
                return Err(self.full_error());
            }
            Ok(self.append(make))
        }
    }

    /// Removes and returns the value named by `(index, generation)`.
    #[inline]
    pub(crate) fn remove(&mut self, index: usize, generation: u32) -> Option<T> {
        let max_generation = self.limits.max_generation;
        let lifo = matches!(self.reuse, Reuse::Lifo);
        let free_head = self.free_head;
        let slot = self.slots.get_mut(index)?;
        if !slot.matches(generation) {
            return None;
        }
        if lifo && slot.generation() < max_generation {
            // The common case: push the slot on the LIFO free list.
            // SAFETY: the slot matched a generation, so it is occupied.
            let value = unsafe { slot.vacate(free_head) };
            self.free_head = index as u32;
            if self.free_tail == NO_SLOT {
                self.free_tail = index as u32;
            }
            self.free_len += 1;
            self.occupied.remove(index);
            self.len -= 1;
            Some(value)
        } else {
            // SAFETY: slot `index` exists and is occupied (it matched a
            // generation, and only occupied slots match).
            Some(unsafe { self.detach_general(index) })
        }
    }

    /// Takes the value out of slot `index`, frees the slot (or retires it)
    /// and keeps every invariant.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be occupied.
    #[inline]
    unsafe fn detach(&mut self, index: usize) -> T {
        debug_assert!(self.slots.get(index).is_some_and(Slot::is_occupied));
        // SAFETY: the caller guarantees the slot exists and is occupied.
        let slot = unsafe { self.slots.get_unchecked_mut(index) };
        // SAFETY: as above.
        let value = unsafe { slot.vacate(NO_SLOT) };
        let generation = slot.generation();
        self.occupied.remove(index);
        self.len -= 1;
        if generation >= self.limits.max_generation {
            self.retired += 1;
        } else {
            self.push_free(index);
        }
        value
    }

    /// [`detach`](Self::detach), out of line, for the paths `remove` keeps
    /// out of its fast path.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be occupied.
    #[inline(never)]
    unsafe fn detach_general(&mut self, index: usize) -> T {
        // SAFETY: the caller's guarantee is `detach`'s.
        unsafe { self.detach(index) }
    }

    /// Puts vacant slot `index` on the free list, where the policy says.
    #[inline]
    fn push_free(&mut self, index: usize) {
        let index32 = index as u32;
        match self.reuse {
            Reuse::Lifo => {
                self.slots[index].set_next_free(self.free_head);
                self.free_head = index32;
                if self.free_tail == NO_SLOT {
                    self.free_tail = index32;
                }
            }
            Reuse::Fifo { .. } => {
                self.slots[index].set_next_free(NO_SLOT);
                if self.free_tail == NO_SLOT {
                    self.free_head = index32;
                } else {
                    let tail = self.free_tail as usize;
                    self.slots[tail].set_next_free(index32);
                }
                self.free_tail = index32;
            }
        }
        self.free_len += 1;
    }

    /// Rebuilds the free list from scratch, in index order, and recounts the
    /// retired slots.
    fn rebuild_free_list(&mut self) {
        self.free_head = NO_SLOT;
        self.free_tail = NO_SLOT;
        self.free_len = 0;
        self.retired = 0;
        let mut next = NO_SLOT;
        for index in (0..self.slots.len()).rev() {
            let slot = &mut self.slots[index];
            if slot.is_occupied() {
                continue;
            }
            if slot.generation() >= self.limits.max_generation {
                self.retired += 1;
                continue;
            }
            slot.set_next_free(next);
            if next == NO_SLOT {
                self.free_tail = index as u32;
            }
            next = index as u32;
            self.free_len += 1;
        }
        self.free_head = next;
    }

    /// Drops every value, leaving the slots vacant with their generations.
    /// The free list is left stale; callers rebuild or discard it.
    ///
    /// If a value's `Drop` panics, the values not yet dropped stay in the
    /// arena, consistent, and the caller's guard finishes the job.
    fn drop_values(&mut self) {
        let mut from = 0;
        while let Some(index) = self.occupied.next_set(from) {
            from = index + 1;
            self.occupied.remove(index);
            self.len -= 1;
            // SAFETY: the bit was set, so the slot exists and is occupied;
            // it is marked vacant before the value is dropped, so a panic in
            // `Drop` cannot lead to a second drop.
            drop(unsafe { self.slots[index].vacate(NO_SLOT) });
        }
    }

    /// Drops every value; every slot keeps its generation, so old keys stay
    /// stale. If a `Drop` panics, the rest are still dropped and the panic
    /// then propagates (a second panic aborts, as for `Vec`).
    pub(crate) fn clear(&mut self) {
        /// Finishes the clear if a value's `Drop` panics.
        struct Guard<'a, T>(&'a mut SlotArena<T>);
        impl<T> Drop for Guard<'_, T> {
            fn drop(&mut self) {
                self.0.drop_values();
                self.0.rebuild_free_list();
            }
        }
        let guard = Guard(self);
        guard.0.drop_values();
        guard.0.rebuild_free_list();
        mem::forget(guard);
    }

    /// Keeps only the values for which `keep(index, generation, &mut value)`
    /// is true. If `keep` or a `Drop` panics, the values not yet visited
    /// stay in the arena.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(usize, u32, &mut T) -> bool) {
        let words = self.occupied.words().len();
        for word_index in 0..words {
            let mut word = self.occupied.words()[word_index];
            while word != 0 {
                let index = word_index * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                let slot = &mut self.slots[index];
                let generation = slot.generation();
                // SAFETY: the bit was set, so the slot is occupied.
                let value = unsafe { slot.value_unchecked_mut() };
                if !keep(index, generation, value) {
                    // SAFETY: still occupied: `keep` had no access to the
                    // arena.
                    drop(unsafe { self.detach(index) });
                }
            }
        }
    }

    /// Iterates the live values in index order.
    #[inline]
    pub(crate) fn iter(&self) -> RawIter<'_, T> {
        RawCursor {
            bits: BitIter::new(self.occupied.words(), self.len),
            access: Shared(&self.slots),
        }
    }

    /// Iterates the live values in index order, mutably.
    #[inline]
    pub(crate) fn iter_mut(&mut self) -> RawIterMut<'_, T> {
        RawCursor {
            bits: BitIter::new(self.occupied.words(), self.len),
            access: Exclusive {
                len: self.slots.len(),
                slots: self.slots.as_mut_ptr(),
                _marker: PhantomData,
            },
        }
    }

    /// Removes the value at the lowest occupied index at or after `from`.
    #[inline]
    pub(crate) fn take_next(&mut self, from: usize) -> Option<(usize, u32, T)> {
        let index = self.occupied.next_set(from)?;
        let generation = self.slots[index].generation();
        // SAFETY: the bit was set, so the slot exists and is occupied.
        let value = unsafe { self.detach(index) };
        Some((index, generation, value))
    }

    /// The slots, for code that walks them all (parallel iteration,
    /// serialization). Exposes only safe accessors.
    #[inline]
    #[cfg(any(feature = "serde", feature = "rayon"))]
    pub(crate) fn slots(&self) -> &[Slot<T>] {
        &self.slots
    }

    /// The slots, mutably. The state of a slot cannot be changed through
    /// this; only values can be reached.
    #[inline]
    #[cfg(feature = "rayon")]
    pub(crate) fn slots_mut(&mut self) -> &mut [Slot<T>] {
        &mut self.slots
    }

    #[cfg(feature = "serde")]
    /// Appends an occupied slot; for deserialization. Checks the limits.
    pub(crate) fn push_occupied(&mut self, generation: u32, value: T) -> Result<(), BuildError> {
        self.check_push(generation)?;
        if generation == 0 {
            return Err(BuildError::Generation(generation));
        }
        let index = self.slots.len();
        self.occupied.grow_to(index + 1);
        self.slots.push(Slot::new_occupied(generation, value));
        self.occupied.insert(index);
        self.len += 1;
        Ok(())
    }

    #[cfg(feature = "serde")]
    /// Appends a vacant slot whose last generation was `generation`; for
    /// deserialization. Call [`SlotArena::finish_build`] after the last one.
    pub(crate) fn push_vacant(&mut self, generation: u32) -> Result<(), BuildError> {
        self.check_push(generation)?;
        self.occupied.grow_to(self.slots.len() + 1);
        self.slots.push(Slot::new_vacant(generation, NO_SLOT));
        Ok(())
    }

    #[cfg(feature = "serde")]
    fn check_push(&self, generation: u32) -> Result<(), BuildError> {
        if self.slots.len() >= self.limits.max_slots {
            return Err(BuildError::TooManySlots(self.limits.max_slots));
        }
        if generation > self.limits.max_generation {
            return Err(BuildError::Generation(generation));
        }
        Ok(())
    }

    #[cfg(feature = "serde")]
    /// Links the free list after a series of `push_*` calls.
    pub(crate) fn finish_build(&mut self) {
        self.rebuild_free_list();
    }

    /// Checks every invariant of the arena and panics with a description of
    /// the first one broken. O(slots); for tests and fuzzing.
    pub(crate) fn check_invariants(&self) {
        let slots = self.slots.len();
        assert!(
            slots <= self.limits.max_slots,
            "more slots than the key can index"
        );
        if let Some(fixed) = self.fixed_capacity {
            assert!(slots <= fixed, "fixed capacity exceeded");
            assert!(self.slots.capacity() >= fixed, "fixed allocation shrank");
        }
        let mut occupied = 0;
        let mut retired = 0;
        for (index, slot) in self.slots.iter().enumerate() {
            assert_eq!(
                slot.is_occupied(),
                self.occupied.contains(index),
                "occupancy bit of slot {index} disagrees with its state"
            );
            assert!(slot.generation() <= self.limits.max_generation);
            if slot.is_occupied() {
                assert!(
                    slot.generation() >= 1,
                    "occupied slot {index} has generation 0"
                );
                occupied += 1;
            } else if slot.generation() >= self.limits.max_generation {
                retired += 1;
            }
        }
        assert!(
            self.occupied.next_set(slots).is_none(),
            "occupancy bit set past the last slot"
        );
        assert_eq!(occupied, self.len, "len disagrees with the occupied slots");
        assert_eq!(retired, self.retired, "retired count is wrong");
        let mut seen = alloc::vec![false; slots];
        let mut cursor = self.free_head;
        let mut last = NO_SLOT;
        let mut listed = 0;
        while cursor != NO_SLOT {
            let index = cursor as usize;
            assert!(index < slots, "free list points past the slots");
            assert!(
                !seen[index],
                "free list has a cycle or a duplicate at {index}"
            );
            seen[index] = true;
            let slot = &self.slots[index];
            assert!(!slot.is_occupied(), "free list holds occupied slot {index}");
            assert!(
                slot.generation() < self.limits.max_generation,
                "free list holds retired slot {index}"
            );
            listed += 1;
            last = cursor;
            cursor = slot.next_free();
        }
        assert_eq!(last, self.free_tail, "free list tail is wrong");
        assert_eq!(listed, self.free_len, "free list length is wrong");
        assert_eq!(
            occupied + retired + listed,
            slots,
            "a vacant slot is neither free nor retired"
        );
    }

    /// Drops every value and forgets every slot, as if new. Old keys may
    /// become valid again, so this is only for an arena that is about to be
    /// overwritten.
    fn reset(&mut self) {
        self.clear();
        self.slots.clear();
        self.occupied.clear();
        if let Some(fixed) = self.fixed_capacity {
            self.occupied.grow_to(fixed);
        }
        self.free_head = NO_SLOT;
        self.free_tail = NO_SLOT;
        self.free_len = 0;
        self.retired = 0;
    }
}

#[cfg(feature = "serde")]
/// Why a series of `push_*` calls could not build an arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BuildError {
    /// More slots than the key type can index.
    TooManySlots(usize),
    /// A generation out of range.
    Generation(u32),
}

#[cfg(feature = "serde")]
impl core::fmt::Display for BuildError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            BuildError::TooManySlots(max) => {
                write!(f, "more slots than the key type can index ({max})")
            }
            BuildError::Generation(generation) => {
                write!(
                    f,
                    "slot generation {generation} is out of range for the key type"
                )
            }
        }
    }
}

impl<T> Drop for SlotArena<T> {
    fn drop(&mut self) {
        if !mem::needs_drop::<T>() {
            return;
        }
        /// Keeps dropping if a value's `Drop` panics.
        struct Guard<'a, T>(&'a mut SlotArena<T>);
        impl<T> Drop for Guard<'_, T> {
            fn drop(&mut self) {
                self.0.drop_values();
            }
        }
        let guard = Guard(self);
        guard.0.drop_values();
        mem::forget(guard);
    }
}

impl<T: Clone> Clone for SlotArena<T> {
    fn clone(&self) -> Self {
        let mut out = SlotArena {
            slots: Vec::with_capacity(self.fixed_capacity.unwrap_or(self.slots.len())),
            occupied: Occupancy::new(),
            ..Self::new(self.limits)
        };
        out.fixed_capacity = self.fixed_capacity;
        out.clone_slots_from(self);
        out
    }

    fn clone_from(&mut self, source: &Self) {
        self.reset();
        self.limits = source.limits;
        self.fixed_capacity = source.fixed_capacity;
        if self.fixed_capacity.is_none() {
            self.slots.reserve(source.slots.len());
        } else if let Some(fixed) = self.fixed_capacity {
            self.slots.reserve(fixed);
        }
        self.clone_slots_from(source);
    }
}

impl<T: Clone> SlotArena<T> {
    /// Appends clones of `source`'s slots to this empty arena and copies its
    /// free list. If a `clone` panics, this arena keeps the slots cloned so
    /// far, with a free list rebuilt from them, so it stays a sound table.
    fn clone_slots_from(&mut self, source: &Self) {
        /// Repairs the free list and counts if a `clone` panics.
        struct Guard<'a, T>(&'a mut SlotArena<T>);
        impl<T> Drop for Guard<'_, T> {
            fn drop(&mut self) {
                self.0.rebuild_free_list();
            }
        }
        debug_assert!(self.slots.is_empty() && self.len == 0);
        self.reuse = source.reuse;
        self.occupied
            .grow_to(source.slots.len().max(self.fixed_capacity.unwrap_or(0)));
        let guard = Guard(self);
        for (index, slot) in source.slots.iter().enumerate() {
            guard.0.slots.push(slot.clone());
            if slot.is_occupied() {
                guard.0.occupied.insert(index);
                guard.0.len += 1;
            }
        }
        mem::forget(guard);
        self.free_head = source.free_head;
        self.free_tail = source.free_tail;
        self.free_len = source.free_len;
        self.retired = source.retired;
    }
}

/// How a [`RawCursor`] reaches the slots: shared or exclusive.
///
/// # Safety
///
/// `item` may only be called with indices that are in bounds and name
/// occupied slots, each at most once for an exclusive access.
pub(crate) unsafe trait SlotAccess<'a> {
    /// What the cursor yields for a value.
    type Value;

    /// The generation and value of slot `index`.
    ///
    /// # Safety
    ///
    /// `index` is in bounds and occupied, and (for exclusive access) not
    /// yielded before.
    unsafe fn item(&self, index: usize) -> (u32, Self::Value);
}

/// Shared access to a slot array.
pub(crate) struct Shared<'a, T>(&'a [Slot<T>]);

impl<T> Clone for Shared<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Shared<'_, T> {}

// SAFETY: shared references to occupied slots' values; any number may
// coexist.
unsafe impl<'a, T> SlotAccess<'a> for Shared<'a, T> {
    type Value = &'a T;

    #[inline]
    unsafe fn item(&self, index: usize) -> (u32, &'a T) {
        debug_assert!(index < self.0.len());
        // SAFETY: the caller guarantees `index` is in bounds.
        let slot = unsafe { self.0.get_unchecked(index) };
        // SAFETY: the caller guarantees the slot is occupied.
        (slot.generation(), unsafe { slot.value_unchecked() })
    }
}

/// Exclusive access to a slot array borrowed mutably for `'a`. Deliberately
/// not `Clone`: two copies could hand out the same `&mut T`.
pub(crate) struct Exclusive<'a, T> {
    /// Start of the array; derived from a `&'a mut [Slot<T>]`.
    slots: *mut Slot<T>,
    len: usize,
    _marker: PhantomData<&'a mut [Slot<T>]>,
}

// SAFETY: `Exclusive` is a `&mut [Slot<T>]` in disguise: it hands out
// `&mut T` to distinct slots, so it may cross threads when `T: Send`.
unsafe impl<T: Send> Send for Exclusive<'_, T> {}
// SAFETY: shared access to it gives no access to the values.
unsafe impl<T: Sync> Sync for Exclusive<'_, T> {}

// SAFETY: each index is yielded at most once (the trait's contract), so the
// `&mut T` handed out never alias; they are derived from the raw pointer
// without a reference to the whole array, so earlier ones stay valid.
unsafe impl<'a, T> SlotAccess<'a> for Exclusive<'a, T> {
    type Value = &'a mut T;

    #[inline]
    unsafe fn item(&self, index: usize) -> (u32, &'a mut T) {
        debug_assert!(index < self.len);
        // SAFETY: the caller guarantees `index` is in bounds, occupied and
        // not yielded before.
        unsafe {
            let slot = self.slots.add(index);
            let generation = (*slot).generation();
            (generation, &mut *Slot::value_ptr(slot))
        }
    }
}

/// Iterates live values in index order as `(index, generation, value)`.
pub(crate) struct RawCursor<'a, A> {
    bits: BitIter<'a>,
    /// Invariant: every index `bits` yields is in bounds and names an
    /// occupied slot (the invariant on `SlotArena::occupied`), each once.
    access: A,
}

/// Shared iteration.
pub(crate) type RawIter<'a, T> = RawCursor<'a, Shared<'a, T>>;
/// Exclusive iteration.
pub(crate) type RawIterMut<'a, T> = RawCursor<'a, Exclusive<'a, T>>;

impl<A: Clone> Clone for RawCursor<'_, A> {
    fn clone(&self) -> Self {
        RawCursor {
            bits: self.bits.clone(),
            access: self.access.clone(),
        }
    }
}

impl<'a, A: SlotAccess<'a>> RawCursor<'a, A> {
    /// Live values left.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.bits.len()
    }

    /// Folds over the remaining values with the word-at-a-time fast path.
    #[inline]
    pub(crate) fn fold_items<B>(
        self,
        init: B,
        mut f: impl FnMut(B, (usize, u32, A::Value)) -> B,
    ) -> B {
        let access = &self.access;
        self.bits.fold_indices(init, |acc, index| {
            // SAFETY: `index` comes from the bitset (the invariant on
            // `access`), and `fold_indices` yields each index once.
            let (generation, value) = unsafe { access.item(index) };
            f(acc, (index, generation, value))
        })
    }
}

impl<'a, A: SlotAccess<'a>> Iterator for RawCursor<'a, A> {
    type Item = (usize, u32, A::Value);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let index = self.bits.next_index()?;
        // SAFETY: `index` comes from the bitset (the invariant on `access`),
        // and `next_index` yields each index once.
        let (generation, value) = unsafe { self.access.item(index) };
        Some((index, generation, value))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.bits.len(), Some(self.bits.len()))
    }
}
