//! `SlotStore`: slots, each a state word and a payload, in one buffer laid
//! out as its [`BufLayout`] says (state words apart from the payloads, or
//! beside them), plus a count. It knows how to find, iterate, take out,
//! drop and clone values, but not which slot to use next: that is the
//! free list's business (`SlotArena`), or the caller's (a secondary map
//! puts values at the index of a foreign key).
//!
//! The state words are the occupancy (their top bit marks a vacant slot),
//! so a write touches a slot's own state word and payload and nothing
//! else. A pass ([`StoreWalk`] under a [`Cursor`]) reads the state words
//! 64 at a time and only live payloads (in the interleaved layout, the
//! state words are read one by one, so every slot's line is touched).
//!
//! Every method reaches a slot through its index (`BufPtrs`), so one body
//! serves both layouts; the layout only chooses where the index leads and
//! how a pass walks.

use alloc::collections::TryReserveError;
use core::marker::PhantomData;
use core::mem;

use super::buf::{BufLayout, BufPtrs, SlotBuf, SplitLayout, StateView};
use super::cursor::Cursor;
use super::scan::StoreWalk;
use super::slot::{Payload, Slot, SlotMut, SlotRef, NO_SLOT, VACANT};

/// Slots, which of them hold values, and how many do.
pub struct SlotStore<T, L: BufLayout = SplitLayout> {
    /// The slots, in one allocation: the state word of every slot, as
    /// `Slot::state` describes it (the generation while occupied,
    /// `VACANT | last` while vacant), and its payload (the value while
    /// occupied, the free-list link while vacant).
    /// Invariant: the state word of slot `i` describes payload `i`.
    buf: SlotBuf<T, L>,
    /// Number of vacant slots, so that `len` is `slot_count - vacant`.
    /// Counting the vacant slots rather than the occupied ones keeps the
    /// append path free of a counter update (a dependency chain from one
    /// insert to the next).
    ///
    /// Invariant: exactly the number of state words with `VACANT` set.
    /// Iteration relies on it for soundness: a walk that has as many
    /// occupied slots left as slots left walks them as a plain range
    /// (`StoreWalk`), without reading their state words.
    vacant: usize,
}

impl<T, L: BufLayout> SlotStore<T, L> {
    #[inline]
    pub(crate) const fn new() -> Self {
        SlotStore {
            buf: SlotBuf::new(),
            vacant: 0,
        }
    }

    /// An empty store with room for `capacity` slots.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let mut store = Self::new();
        store.buf.reserve_exact(capacity);
        store
    }

    /// Occupied slots.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.buf.len() - self.vacant
    }

    /// All slots, occupied or not.
    #[inline]
    pub(crate) fn slot_count(&self) -> usize {
        self.buf.len()
    }

    /// Slots the allocation can hold.
    #[inline]
    pub(crate) fn slot_capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Bytes of the allocation.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.buf.heap_bytes()
    }

    /// Makes room for `additional` more slots.
    pub(crate) fn try_reserve_slots(&mut self, additional: usize) -> Result<(), TryReserveError> {
        self.buf.try_reserve(additional)
    }

    /// Makes room for exactly `additional` more slots (a fixed-capacity
    /// table allocates once).
    pub(crate) fn reserve_exact(&mut self, additional: usize) {
        self.buf.reserve_exact(additional);
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.buf.shrink_to_fit();
    }

    /// Makes room for one more slot; the append path's slow side. Doubling,
    /// as `Vec::push` does, and from 64 slots: with `Vec`'s start at 4 the
    /// reallocations of a table's first thousand inserts cost 0.5 ns per
    /// insert (1.86 against SlotMap's 1.30 at 1k `u64`; from 64, 1.5).
    #[inline(always)]
    fn grow_for_push(&mut self) {
        self.buf.grow_for_push(self.buf.len().max(64));
    }

    /// Appends a slot made of `state` and `payload`.
    #[inline(always)]
    fn push_parts(&mut self, state: u32, payload: Payload<T>) -> usize {
        if self.buf.len() == self.buf.capacity() {
            // Rare (the buffer doubles): marked so, the write below is
            // laid out as the fall-through of a loop of appends.
            super::cold_path();
            self.grow_for_push();
        }
        // SAFETY: the buffer has room for one more slot (grown above if
        // it had none).
        unsafe { self.push_parts_unchecked(state, payload) }
    }

    /// Appends a slot made of `state` and `payload` into room the buffer
    /// has, and returns its index.
    ///
    /// # Safety
    ///
    /// `slot_count() < slot_capacity()`.
    #[inline(always)]
    unsafe fn push_parts_unchecked(&mut self, state: u32, payload: Payload<T>) -> usize {
        let index = self.buf.len();
        debug_assert!(index < self.buf.capacity());
        // The writes initialize slot `index` before the length covers it.
        // SAFETY: `index < capacity` (the caller's guarantee), so the
        // buffer has room for slot `index`.
        unsafe {
            self.buf.state_ptr(index).write(state);
            self.buf.payload_ptr(index).write(payload);
            self.buf.set_len(index + 1);
        }
        index
    }

    /// The state words of the slots, read one at a time.
    #[inline(always)]
    pub(crate) fn states(&self) -> StateView<'_, T, L> {
        self.buf.states()
    }

    /// The slot at `index`.
    #[inline]
    pub(crate) fn slot(&self, index: usize) -> Option<SlotRef<'_, T>> {
        if index >= self.buf.len() {
            return None;
        }
        // The state word describes the payload (the invariant on `buf`).
        // SAFETY: `index < len`, so both parts are initialized; `&self`
        // keeps them from being written.
        unsafe {
            Some(SlotRef::from_parts(
                &*self.buf.state_ptr(index),
                &*self.buf.payload_ptr(index),
            ))
        }
    }

    /// The slot at `index`, for its value or free-list link. A slot's state
    /// cannot be changed through `SlotMut` from outside the raw layer.
    #[inline]
    pub(crate) fn slot_mut(&mut self, index: usize) -> Option<SlotMut<'_, T>> {
        if index >= self.buf.len() {
            return None;
        }
        // SAFETY: as in `slot`; a slot's state word and payload do not
        // overlap (the layout's contract), so the two borrows are distinct.
        unsafe {
            Some(SlotMut::from_parts(
                &mut *self.buf.state_ptr(index),
                &mut *self.buf.payload_ptr(index),
            ))
        }
    }

    /// The slots in index order, for serialization.
    #[cfg(feature = "serde")]
    pub(crate) fn slot_refs(&self) -> SlotRefs<'_, T, L> {
        SlotRefs {
            store: self,
            next: 0,
        }
    }

    #[inline]
    pub(crate) fn contains(&self, index: usize, generation: u32) -> bool {
        self.buf
            .states()
            .get_apart(index)
            .is_some_and(|state| state == Slot::<T>::matched_generation(generation))
    }

    #[inline]
    pub(crate) fn get(&self, index: usize, generation: u32) -> Option<&T> {
        if self.contains(index, generation) {
            // SAFETY: slot `index` exists and matched a generation, so it
            // is occupied.
            Some(unsafe { self.get_unchecked(index) })
        } else {
            None
        }
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, index: usize, generation: u32) -> Option<&mut T> {
        if self.contains(index, generation) {
            // SAFETY: as in `get`.
            Some(unsafe { self.get_unchecked_mut(index) })
        } else {
            None
        }
    }

    /// Whether slot `index` exists and is occupied.
    #[inline]
    fn is_occupied(&self, index: usize) -> bool {
        self.state(index).is_some_and(|state| state & VACANT == 0)
    }

    /// Whether slot `index` exists and is vacant.
    #[inline]
    fn is_vacant(&self, index: usize) -> bool {
        self.state(index).is_some_and(|state| state & VACANT != 0)
    }

    /// The state word of slot `index`, if it exists.
    #[inline]
    fn state(&self, index: usize) -> Option<u32> {
        self.buf.states().get(index)
    }

    /// The value in slot `index`.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be occupied.
    #[inline]
    pub(crate) unsafe fn get_unchecked(&self, index: usize) -> &T {
        debug_assert!(self.is_occupied(index));
        // SAFETY: the caller guarantees slot `index` exists (so does its
        // payload) and is occupied (so the value is initialized).
        unsafe { &*Payload::value_ptr(self.buf.payload_ptr(index)) }
    }

    /// The value in slot `index`.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be occupied.
    #[inline]
    pub(crate) unsafe fn get_unchecked_mut(&mut self, index: usize) -> &mut T {
        debug_assert!(self.is_occupied(index));
        // SAFETY: as in `get_unchecked`, through the unique borrow.
        unsafe { &mut *Payload::value_ptr(self.buf.payload_ptr(index)) }
    }

    /// Mutable references to `N` distinct live values, or `None` if any
    /// `(index, generation)` is not live or two name the same slot.
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
        let ptrs = self.buf.ptrs();
        // The references come from the buffer's pointers, with no
        // reference to the whole array in between, and `&mut self`
        // outlives them.
        // SAFETY: every index is in bounds, occupied and distinct (above).
        Some(core::array::from_fn(|n| unsafe {
            &mut *Payload::value_ptr(ptrs.payload(keys[n].0))
        }))
    }

    /// Mutable references to the values of `N` slots, without checks: the
    /// pointer part of [`get_disjoint_mut`](Self::get_disjoint_mut).
    ///
    /// # Safety
    ///
    /// Every index must name an existing, occupied slot, and no two may be
    /// equal.
    pub(crate) unsafe fn get_disjoint_unchecked_mut<const N: usize>(
        &mut self,
        indices: [usize; N],
    ) -> [&mut T; N] {
        debug_assert!(indices
            .iter()
            .enumerate()
            .all(|(n, &index)| self.is_occupied(index) && !indices[..n].contains(&index)));
        let ptrs = self.buf.ptrs();
        // The references come from the buffer's pointers, with no
        // reference to the whole array in between, and `&mut self`
        // outlives them.
        // SAFETY: every index is in bounds, occupied and distinct (the
        // caller's guarantee).
        core::array::from_fn(|n| unsafe { &mut *Payload::value_ptr(ptrs.payload(indices[n])) })
    }

    /// [`push_occupied_with`](Self::push_occupied_with) into room the
    /// buffer has: no capacity check.
    ///
    /// # Safety
    ///
    /// `slot_count() < slot_capacity()`.
    #[inline(always)]
    pub(crate) unsafe fn push_occupied_unchecked(
        &mut self,
        generation: u32,
        make: impl FnOnce(usize) -> T,
    ) -> usize {
        debug_assert!(self.buf.len() < self.buf.capacity());
        let value = make(self.buf.len());
        // SAFETY: the caller's guarantee (`make` cannot reach the store).
        unsafe {
            self.push_parts_unchecked(
                Slot::<T>::occupied_state(generation),
                Payload::occupied(value),
            )
        }
    }

    /// Appends an occupied slot holding `make(index)` with `generation`,
    /// and returns its index. If `make` panics, nothing changes.
    #[inline(always)]
    pub(crate) fn push_occupied_with(
        &mut self,
        generation: u32,
        make: impl FnOnce(usize) -> T,
    ) -> usize {
        let index = self.buf.len();
        let value = make(index);
        self.push_parts(
            Slot::<T>::occupied_state(generation),
            Payload::occupied(value),
        )
    }

    /// Appends a vacant slot whose last occupant had `generation`.
    #[inline]
    pub(crate) fn push_vacant(&mut self, generation: u32, next_free: u32) {
        self.push_parts(
            Slot::<T>::vacant_state(generation),
            Payload::vacant(next_free),
        );
        self.vacant += 1;
    }

    /// The state word of slot `index`, without a bounds check.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist.
    #[inline(always)]
    pub(crate) unsafe fn state_unchecked(&self, index: usize) -> u32 {
        debug_assert!(index < self.buf.len());
        // SAFETY: the caller guarantees the slot exists.
        unsafe { self.buf.states().get_unchecked(index) }
    }

    /// Puts `value` into vacant slot `index` with `generation`.
    ///
    /// # Panics
    ///
    /// If the slot does not exist or is occupied.
    #[inline]
    pub(crate) fn occupy(&mut self, index: usize, generation: u32, value: T) {
        let state = self.buf.states().get(index);
        assert!(
            state.is_some_and(|state| state & VACANT != 0),
            "occupying a missing or occupied slot"
        );
        // SAFETY: the slot exists and is vacant (checked above).
        unsafe { self.occupy_unchecked(index, generation, value) };
    }

    /// Makes `last` the last generation of vacant slot `index` (a detached
    /// slot is parked at the limit, where nothing reuses it). Does nothing
    /// to an occupied slot or a missing one.
    pub(crate) fn set_vacant_generation(&mut self, index: usize, last: u32) {
        debug_assert!(last & VACANT == 0);
        if self.is_vacant(index) {
            // A vacant slot's state word only changes its generation.
            // SAFETY: `index < len` (checked above), and `&mut self` is the
            // only access.
            unsafe { self.buf.state_ptr(index).write(VACANT | last) };
        }
    }

    /// The free-list link and generation of vacant slot `index`, without
    /// a bounds check (the free-list pop path).
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be vacant.
    #[inline(always)]
    pub(crate) unsafe fn vacant_parts_unchecked(&self, index: usize) -> (u32, u32) {
        debug_assert!(self.is_vacant(index));
        // SAFETY: the caller guarantees the slot exists and is vacant, so
        // `next_free` is the payload's initialized field.
        unsafe {
            let state = self.buf.state_ptr(index).read();
            let next = Payload::next_free_ptr(self.buf.payload_ptr(index)).read();
            // The state is `VACANT | last`, so subtracting the flag leaves
            // `last`; unlike a mask, the caller's `+ 1` folds into it.
            (next, state.wrapping_sub(VACANT))
        }
    }

    /// Puts `value` into vacant slot `index` with `generation`, without
    /// bounds checks (the free-list pop path, where the free list's
    /// invariant already names a vacant slot).
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be vacant.
    #[inline(always)]
    pub(crate) unsafe fn occupy_unchecked(&mut self, index: usize, generation: u32, value: T) {
        debug_assert!(self.is_vacant(index));
        // SAFETY: the caller guarantees the slot exists; it is vacant, so
        // overwriting the payload drops nothing.
        unsafe {
            self.buf.payload_ptr(index).write(Payload::occupied(value));
            self.buf
                .state_ptr(index)
                .write(Slot::<T>::occupied_state(generation));
        }
        self.vacant -= 1;
    }

    /// Takes the value out of slot `index`, leaving it vacant with its
    /// generation kept as "last" and the free-list link `next_free`.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be occupied.
    #[inline(always)]
    pub(crate) unsafe fn vacate(&mut self, index: usize, next_free: u32) -> T {
        debug_assert!(self.is_occupied(index));
        // The value is read once; the state is marked vacant and the link
        // written right after, so it is never read again.
        // SAFETY: the caller guarantees the slot exists and is occupied.
        unsafe {
            let payload = self.buf.payload_ptr(index);
            let value = Payload::value_ptr(payload).read();
            *self.buf.state_ptr(index) |= VACANT;
            payload.write(Payload::vacant(next_free));
            self.vacant += 1;
            value
        }
    }

    /// Removes the value named by `(index, generation)`, leaving the slot
    /// vacant with that generation as its last.
    #[inline]
    pub(crate) fn remove(&mut self, index: usize, generation: u32) -> Option<T> {
        if !self.contains(index, generation) {
            return None;
        }
        // SAFETY: the slot exists and matched a generation, so it is
        // occupied.
        Some(unsafe { self.vacate(index, NO_SLOT) })
    }

    /// Removes the value at the lowest occupied index at or after `from`.
    #[inline]
    pub(crate) fn take_next(&mut self, from: usize) -> Option<(usize, u32, T)> {
        let index = self.next_occupied(from)?;
        // SAFETY: `next_occupied` found the slot, so it exists and is
        // occupied (its state word is its generation).
        unsafe {
            let generation = self.state_unchecked(index);
            Some((index, generation, self.vacate(index, NO_SLOT)))
        }
    }

    /// Keeps the values for which `keep(index, generation, &mut value)` is
    /// true; see [`retain_with`](Self::retain_with).
    pub(crate) fn retain(&mut self, keep: impl FnMut(usize, u32, &mut T) -> bool) {
        Self::retain_with(self, keep, |store, index| {
            // SAFETY: `retain_with` evicts only occupied slots it just
            // visited.
            drop(unsafe { store.vacate(index, NO_SLOT) });
        });
    }

    /// Appends never-used vacant slots until there are `slots`.
    pub(crate) fn grow_vacant_to(&mut self, slots: usize) {
        let count = self.buf.len();
        if slots > count {
            self.buf.reserve(slots - count);
            while self.buf.len() < slots {
                self.push_vacant(0, NO_SLOT);
            }
        }
    }

    /// The lowest occupied index at or after `from`.
    #[inline]
    pub(crate) fn next_occupied(&self, from: usize) -> Option<usize> {
        let states = self.buf.states();
        // SAFETY: every index of the range is below `len`.
        (from..states.len()).find(|&index| unsafe { states.get_unchecked(index) } & VACANT == 0)
    }

    /// Calls `visit(index, generation, &mut value)` for every value in index
    /// order; whenever it returns `false`, calls `evict(self, index)`, which
    /// must vacate that slot (and may do free-list work). If either panics,
    /// the values not yet visited stay in place.
    pub(crate) fn retain_with<S: AsMut<Self>>(
        owner: &mut S,
        mut visit: impl FnMut(usize, u32, &mut T) -> bool,
        mut evict: impl FnMut(&mut S, usize),
    ) {
        let slots = owner.as_mut().slot_count();
        for index in 0..slots {
            let store = owner.as_mut();
            let Some(state) = store.buf.states().get(index) else {
                break;
            };
            if state & VACANT != 0 {
                continue;
            }
            // Each index is visited once, so nothing vacated it yet.
            // SAFETY: the state word says the slot is occupied.
            let value = unsafe { store.get_unchecked_mut(index) };
            if !visit(index, state, value) {
                evict(owner, index);
            }
        }
    }

    /// Sets the free-list link of every vacant slot whose generation is
    /// below `max_generation`, in index order, and returns the head of
    /// that list and how many vacant slots were left out (retired).
    pub(crate) fn link_vacant(&mut self, max_generation: u32) -> (u32, usize) {
        // One pass with the list's head in a local: no field write per
        // slot.
        let (mut head, mut retired) = (NO_SLOT, 0);
        for index in (0..self.buf.len()).rev() {
            // SAFETY: `index < len`, so the state word is initialized.
            let state = unsafe { self.buf.state_ptr(index).read() };
            if state & VACANT == 0 {
                continue;
            }
            if state & !VACANT >= max_generation {
                retired += 1;
                continue;
            }
            // The slot is vacant: its payload is the link, which has no
            // drop glue to run.
            // SAFETY: `index < len`, and `&mut self` is the only access.
            unsafe { self.buf.payload_ptr(index).write(Payload::vacant(head)) };
            head = index as u32;
        }
        (head, retired)
    }

    /// Drops every value, leaving the slots vacant with their generations
    /// and no free-list links. If a `Drop` panics, the others are still
    /// dropped and the panic then propagates (a second panic aborts, as for
    /// `Vec`).
    pub(crate) fn drop_values(&mut self) {
        super::finish_on_panic(self, Self::drop_values_unguarded);
    }

    /// Drops every value; a panicking `Drop` stops it with the rest still
    /// in place and consistent.
    fn drop_values_unguarded(&mut self) {
        let mut index = 0;
        while self.len() != 0 {
            let Some(found) = self.next_occupied(index) else {
                break;
            };
            index = found + 1;
            // Vacated before the drop, so a panicking `Drop` cannot repeat it.
            // SAFETY: `next_occupied` found the slot occupied.
            drop(unsafe { self.vacate(found, NO_SLOT) });
        }
    }

    /// Drops every value and forgets every slot.
    pub(crate) fn reset(&mut self) {
        self.drop_values();
        // SAFETY: no slots is a valid length; the payloads have no drop
        // glue left (every value was dropped above).
        unsafe { self.buf.set_len(0) };
        self.vacant = 0;
    }

    /// Iterates the live values in index order.
    #[inline]
    pub(crate) fn iter(&self) -> RawIter<'_, T, L> {
        // SAFETY: `&self` keeps the slots from being written; the vacant
        // count is exact (the invariant on `vacant`).
        unsafe { Cursor::new(StoreWalk::new(self.buf.states()), self.len()) }
    }

    /// Iterates the live values in index order, mutably.
    #[inline]
    pub(crate) fn iter_mut(&mut self) -> RawIterMut<'_, T, L> {
        let len = self.len();
        // The state words are only read from here on; the values are
        // reached through the buffer's pointers, exclusively, since `self`
        // is borrowed mutably for the cursor's life.
        let buf: &SlotBuf<T, L> = &self.buf;
        // SAFETY: nothing else reaches the values while `self` is borrowed
        // mutably; the count is exact (the invariant on `vacant`).
        unsafe { Cursor::new(StoreWalk::new(buf.states()), len) }
    }

    /// Exclusive access to the slots for handing out `&mut` to values in
    /// an order the caller chooses (the lists of `IndexLists` walk it along
    /// their links); see [`Exclusive::value_at`].
    #[inline]
    pub(crate) fn exclusive(&mut self) -> Exclusive<'_, T, L> {
        Exclusive::over(&mut self.buf)
    }

    /// Checks the storage invariants; panics on the first one broken.
    pub(crate) fn check_invariants(&self) {
        assert!(
            self.buf.len() <= self.buf.capacity(),
            "more slots than the buffer holds"
        );
        let states = self.buf.states();
        let mut occupied = 0;
        for index in 0..states.len() {
            let state = states.get(index).expect("index below len");
            if state & VACANT == 0 {
                assert!(state >= 1, "occupied slot {index} has generation 0");
                occupied += 1;
            }
        }
        assert_eq!(
            occupied,
            self.len(),
            "vacant count disagrees with the slots"
        );
    }
}

impl<T, L: BufLayout> AsMut<SlotStore<T, L>> for SlotStore<T, L> {
    fn as_mut(&mut self) -> &mut SlotStore<T, L> {
        self
    }
}

impl<T, L: BufLayout> Drop for SlotStore<T, L> {
    fn drop(&mut self) {
        if mem::needs_drop::<T>() {
            self.drop_values();
        }
    }
}

impl<T: Clone, L: BufLayout> SlotStore<T, L> {
    /// Appends clones of `source`'s slots (free-list links included) to
    /// this empty store. If a `clone` panics, this store holds the slots
    /// cloned so far, consistent, and drops their values normally.
    pub(crate) fn clone_slots_from(&mut self, source: &Self) {
        debug_assert!(self.buf.len() == 0 && self.vacant == 0);
        let additional = source.slot_count().saturating_sub(self.buf.capacity());
        self.reserve_exact(additional);
        for index in 0..source.slot_count() {
            let Some(slot) = source.slot(index) else {
                break;
            };
            let (state, payload) = slot.cloned_parts();
            self.push_parts(state, payload);
            if state & VACANT != 0 {
                self.vacant += 1;
            }
        }
    }
}

impl<T: Clone, L: BufLayout> Clone for SlotStore<T, L> {
    fn clone(&self) -> Self {
        let mut out = SlotStore::new();
        out.clone_slots_from(self);
        out
    }
}

/// The slots of a store as views, in index order.
#[cfg(feature = "serde")]
pub(crate) struct SlotRefs<'a, T, L: BufLayout = SplitLayout> {
    store: &'a SlotStore<T, L>,
    /// The next slot to yield.
    next: usize,
}

#[cfg(feature = "serde")]
impl<T, L: BufLayout> Clone for SlotRefs<'_, T, L> {
    fn clone(&self) -> Self {
        SlotRefs {
            store: self.store,
            next: self.next,
        }
    }
}

#[cfg(feature = "serde")]
impl<'a, T, L: BufLayout> Iterator for SlotRefs<'a, T, L> {
    type Item = SlotRef<'a, T>;

    fn next(&mut self) -> Option<SlotRef<'a, T>> {
        let slot = self.store.slot(self.next)?;
        self.next += 1;
        Some(slot)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.store.slot_count().saturating_sub(self.next);
        (left, Some(left))
    }
}

#[cfg(feature = "serde")]
impl<T, L: BufLayout> ExactSizeIterator for SlotRefs<'_, T, L> {}

/// Exclusive access to a store's slots, borrowed mutably for `'a`: it
/// reads their state words and hands out `&mut` to their values.
/// Deliberately not `Clone`: two copies could hand out the same `&mut T`.
pub(crate) struct Exclusive<'a, T, L: BufLayout = SplitLayout> {
    /// Derived from a `&'a mut SlotBuf` (see `over`): slots `0..len` are
    /// initialized, nothing else reaches them for `'a`, and the access
    /// itself never writes a state word.
    ptrs: BufPtrs<T, L>,
    /// Slots in use.
    len: usize,
    _marker: PhantomData<&'a mut [Payload<T>]>,
}

// SAFETY: `Exclusive` is a `&mut [Payload<T>]` (plus shared state words)
// in disguise: it hands out `&mut T` to distinct slots, so it may cross
// threads when `T: Send`.
unsafe impl<T: Send, L: BufLayout> Send for Exclusive<'_, T, L> {}
// SAFETY: shared access to it gives no access to the values.
unsafe impl<T: Sync, L: BufLayout> Sync for Exclusive<'_, T, L> {}

impl<'a, T, L: BufLayout> Exclusive<'a, T, L> {
    /// Exclusive access to the slots in use of `buf`.
    #[inline]
    fn over(buf: &'a mut SlotBuf<T, L>) -> Self {
        Exclusive {
            ptrs: buf.ptrs(),
            len: buf.len(),
            _marker: PhantomData,
        }
    }

    /// The state words, for a walk over the slots: the access never writes
    /// them, and nothing else reaches them for `'a`.
    #[inline]
    fn states(&self) -> StateView<'a, T, L> {
        // SAFETY: slots `0..len` are initialized, and their state words
        // are not written for `'a` (the invariant on `ptrs`).
        unsafe { StateView::new(self.ptrs, self.len) }
    }

    /// The value in slot `index`, if that slot exists and is occupied.
    ///
    /// # Safety
    ///
    /// No reference obtained from this access for slot `index` may still be
    /// alive: the caller asks for each index at most once.
    #[inline]
    pub(crate) unsafe fn value_at(&self, index: usize) -> Option<&'a mut T> {
        let state = self.states().get(index)?;
        if state & VACANT != 0 {
            return None;
        }
        // The `&mut` is unique because the caller asks for each index at
        // most once, and it is derived from the raw pointer without a
        // reference to the whole array, so earlier ones stay valid.
        // SAFETY: the slot exists and is occupied, so its value is
        // initialized.
        Some(unsafe { &mut *Payload::value_ptr(self.ptrs.payload(index)) })
    }
}

/// Shared iteration over a store.
pub(crate) type RawIter<'a, T, L = SplitLayout> = Cursor<'a, T, StoreWalk<'a, T, L>, &'a T>;
/// Exclusive iteration over a store.
pub(crate) type RawIterMut<'a, T, L = SplitLayout> = Cursor<'a, T, StoreWalk<'a, T, L>, &'a mut T>;
