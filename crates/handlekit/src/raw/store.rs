//! `SlotStore`: slots plus an occupancy bitset and a count. It knows how to
//! find, iterate, take out, drop and clone values, but not which slot to use
//! next: that is the free list's business (`SlotArena`), or the caller's
//! (a secondary map puts values at the index of a foreign key).

use alloc::collections::TryReserveError;
use alloc::vec::Vec;
use core::marker::PhantomData;
use core::mem;

use super::bitset::{BitIter, Occupancy, WORD_BITS};
use super::slot::{Slot, NO_SLOT};

/// Slots, which of them hold values, and how many do.
pub(crate) struct SlotStore<T> {
    /// The slots.
    slots: Vec<Slot<T>>,
    /// Invariant: for `i < bits_end`, bit `i` is set iff `slots[i]` is
    /// occupied, and the bitset covers slot `i`; no bit at or past
    /// `bits_end` is set.
    occupied: Occupancy,
    /// Where the occupancy bits end. Invariant: `bits_end <= slots.len()`,
    /// and every slot at `bits_end..slots.len()` (the *tail*) is occupied.
    ///
    /// Appending an occupied slot only pushes it: the tail counts as
    /// occupied without bits, and iteration walks it as a plain range.
    /// Bits are written for the tail (`flush_tail`) when something needs
    /// them: vacating a tail slot, appending a vacant slot, `retain`,
    /// dropping the values. Every read-modify-write of a field or a bitset
    /// word on the append path is a dependency chain from one insert to the
    /// next; without them an append is as cheap as `Vec::push`.
    bits_end: usize,
    /// Number of vacant slots, so that `len` is `slots.len() - vacant`.
    /// Counting the vacant slots rather than the occupied ones keeps the
    /// append path free of a counter update, for the same reason.
    vacant: usize,
}

impl<T> SlotStore<T> {
    #[inline]
    pub(crate) const fn new() -> Self {
        SlotStore {
            slots: Vec::new(),
            occupied: Occupancy::new(),
            bits_end: 0,
            vacant: 0,
        }
    }

    /// An empty store with room for `capacity` slots.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        SlotStore {
            slots: Vec::with_capacity(capacity),
            occupied: Occupancy::with_capacity(capacity),
            bits_end: 0,
            vacant: 0,
        }
    }

    /// Occupied slots.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.slots.len() - self.vacant
    }

    /// All slots, occupied or not.
    #[inline]
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
    }

    /// Slots the allocation can hold.
    #[inline]
    pub(crate) fn slot_capacity(&self) -> usize {
        self.slots.capacity()
    }

    /// Makes room for `additional` more slots.
    pub(crate) fn try_reserve_slots(&mut self, additional: usize) -> Result<(), TryReserveError> {
        self.slots.try_reserve(additional)?;
        self.occupied
            .try_reserve_for(self.slots.len().saturating_add(additional))
    }

    /// Extends the bitset to cover `slots` slots, so appends up to there
    /// never reallocate it.
    pub(crate) fn cover_bits(&mut self, slots: usize) {
        self.occupied.grow_to(slots);
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        self.slots.shrink_to_fit();
        self.occupied.shrink_to_fit();
    }

    /// The slot at `index`.
    #[inline]
    pub(crate) fn slot(&self, index: usize) -> Option<&Slot<T>> {
        self.slots.get(index)
    }

    /// The slot at `index`, for its free-list link. A slot's state cannot
    /// be changed through `&mut Slot` from outside the raw layer.
    #[inline]
    pub(crate) fn slot_mut(&mut self, index: usize) -> Option<&mut Slot<T>> {
        self.slots.get_mut(index)
    }

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
        let base = self.slots.as_mut_ptr();
        // The references come from one pointer, with no reference to the
        // whole array in between, and `&mut self` outlives them.
        // SAFETY: every index is in bounds, occupied and distinct (above).
        Some(core::array::from_fn(|n| unsafe {
            &mut *Slot::value_ptr(base.add(keys[n].0))
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
        debug_assert!(indices.iter().enumerate().all(|(n, &index)| {
            self.slots.get(index).is_some_and(Slot::is_occupied) && !indices[..n].contains(&index)
        }));
        let base = self.slots.as_mut_ptr();
        // The references come from one pointer, with no reference to the
        // whole array in between, and `&mut self` outlives them.
        // SAFETY: every index is in bounds, occupied and distinct (the
        // caller's guarantee).
        core::array::from_fn(|n| unsafe { &mut *Slot::value_ptr(base.add(indices[n])) })
    }

    /// Appends an occupied slot holding `make(index)` with `generation`,
    /// and returns its index. If `make` panics, nothing changes.
    #[inline(always)]
    pub(crate) fn push_occupied_with(
        &mut self,
        generation: u32,
        make: impl FnOnce(usize) -> T,
    ) -> usize {
        let index = self.slots.len();
        let value = make(index);
        // The new slot joins the tail, which needs no bits.
        self.slots.push(Slot::new_occupied(generation, value));
        index
    }

    /// Appends a vacant slot whose last occupant had `generation`.
    #[cfg(feature = "serde")]
    pub(crate) fn push_vacant(&mut self, generation: u32, next_free: u32) {
        // A vacant slot cannot join the tail, so the tail gets its bits.
        self.flush_tail();
        let index = self.slots.len();
        self.occupied.grow_to(index + 1);
        self.slots.push(Slot::new_vacant(generation, next_free));
        self.bits_end = index + 1;
        self.vacant += 1;
    }

    /// Writes the occupancy bits of the tail, so that the bits cover every
    /// slot (`bits_end == slots.len()`). O(tail / 64), and at most once per
    /// appended slot: the tail only grows by appends.
    #[cold]
    #[inline(never)]
    fn flush_tail(&mut self) {
        let end = self.slots.len();
        if self.bits_end < end {
            self.occupied.grow_to(end);
            self.occupied.insert_range(self.bits_end, end);
            self.bits_end = end;
        }
    }

    /// Puts `value` into vacant slot `index` with `generation`.
    ///
    /// # Panics
    ///
    /// If the slot does not exist. (Occupying an occupied slot is a bug
    /// that would leak its value; debug builds assert against it.)
    #[inline(always)]
    pub(crate) fn occupy(&mut self, index: usize, generation: u32, value: T) {
        debug_assert!(
            index < self.bits_end,
            "occupying a tail slot, which is occupied"
        );
        self.slots[index].occupy(generation, value);
        // A vacant slot is below `bits_end` (the tail is all occupied), so
        // the bitset covers it; the checked insert keeps even a misuse
        // memory-safe.
        self.occupied.insert(index);
        self.vacant -= 1;
    }

    /// The free-list link and generation of vacant slot `index`, without
    /// a bounds check (the free-list pop path).
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be vacant.
    #[inline(always)]
    pub(crate) unsafe fn vacant_parts_unchecked(&self, index: usize) -> (u32, u32) {
        debug_assert!(self
            .slots
            .get(index)
            .is_some_and(|slot| !slot.is_occupied()));
        // SAFETY: the caller guarantees the slot exists.
        let slot = unsafe { self.slots.get_unchecked(index) };
        // SAFETY: the caller guarantees the slot is vacant.
        (unsafe { slot.next_free_unchecked() }, slot.generation())
    }

    /// [`occupy`](Self::occupy) without bounds checks, for the free-list
    /// pop path, where the free list's invariant already names a vacant
    /// slot.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be vacant.
    #[inline(always)]
    pub(crate) unsafe fn occupy_unchecked(&mut self, index: usize, generation: u32, value: T) {
        debug_assert!(self
            .slots
            .get(index)
            .is_some_and(|slot| !slot.is_occupied()));
        debug_assert!(index < self.bits_end);
        // SAFETY: the caller guarantees the slot exists.
        unsafe { self.slots.get_unchecked_mut(index) }.occupy(generation, value);
        // A vacant slot is below `bits_end`, since the tail is all occupied.
        // SAFETY: the bitset covers every slot below `bits_end` (invariant).
        unsafe { self.occupied.insert_unchecked(index) };
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
        debug_assert!(self.slots.get(index).is_some_and(Slot::is_occupied));
        if index >= self.bits_end {
            // A tail slot is about to be vacant; the tail must be all
            // occupied, so it becomes bits first.
            self.flush_tail();
        }
        // SAFETY: the caller guarantees the slot exists and is occupied.
        let value = unsafe { self.slots.get_unchecked_mut(index).vacate(next_free) };
        // SAFETY: `index` is a slot (the caller's guarantee) below
        // `bits_end` (ensured above), which the bitset covers.
        unsafe { self.occupied.remove_unchecked(index) };
        self.vacant += 1;
        value
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
        let generation = self.slots[index].generation();
        // SAFETY: the bit was set, so the slot exists and is occupied.
        let value = unsafe { self.vacate(index, NO_SLOT) };
        Some((index, generation, value))
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
        if slots > self.slots.len() {
            // Vacant slots cannot join the tail, so the tail gets its bits.
            self.flush_tail();
            self.slots.reserve(slots - self.slots.len());
            self.occupied.grow_to(slots);
            self.vacant += slots - self.slots.len();
            while self.slots.len() < slots {
                self.slots.push(Slot::new_vacant(0, NO_SLOT));
            }
            self.bits_end = slots;
        }
    }

    /// The lowest occupied index at or after `from`.
    #[inline]
    pub(crate) fn next_occupied(&self, from: usize) -> Option<usize> {
        // No bit is set at or past `bits_end`, and every tail slot is
        // occupied.
        self.occupied.next_set(from).or_else(|| {
            let index = from.max(self.bits_end);
            (index < self.slots.len()).then_some(index)
        })
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
        // The walk below reads bits only.
        owner.as_mut().flush_tail();
        let words = owner.as_mut().occupied.words().len();
        for word_index in 0..words {
            let mut word = owner.as_mut().occupied.words()[word_index];
            while word != 0 {
                let index = word_index * WORD_BITS + word.trailing_zeros() as usize;
                word &= word - 1;
                let slot = &mut owner.as_mut().slots[index];
                let generation = slot.generation();
                // Each index is visited once, so nothing vacated it yet.
                // SAFETY: the bit was set, so the slot is occupied.
                let value = unsafe { slot.value_unchecked_mut() };
                if !visit(index, generation, value) {
                    evict(owner, index);
                }
            }
        }
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
        // Vacating a tail slot would flush the tail anyway; doing it first
        // keeps the loop to bits.
        self.flush_tail();
        let mut from = 0;
        while let Some(index) = self.occupied.next_set(from) {
            from = index + 1;
            // Vacated before the drop, so a panicking `Drop` cannot repeat it.
            // SAFETY: the bit was set, so the slot exists and is occupied.
            drop(unsafe { self.vacate(index, NO_SLOT) });
        }
    }

    /// Drops every value and forgets every slot.
    pub(crate) fn reset(&mut self) {
        self.drop_values();
        self.slots.clear();
        self.bits_end = 0;
        self.vacant = 0;
        self.occupied.clear();
    }

    /// The occupied indices: the bits, then the tail. Takes the fields it
    /// reads rather than `&self`, so `iter_mut` can borrow the slots too.
    #[inline]
    fn bit_iter(
        occupied: &Occupancy,
        bits_end: usize,
        slot_count: usize,
        vacant: usize,
    ) -> BitIter<'_> {
        let tail = bits_end..slot_count;
        // The bitset covers every slot below `bits_end` (the invariant on
        // `occupied`); the words past it hold no bits and are not walked.
        let words = &occupied.words()[..bits_end.div_ceil(WORD_BITS)];
        BitIter::with_tail(words, slot_count - vacant - tail.len(), tail)
    }

    /// Iterates the live values in index order.
    #[inline]
    pub(crate) fn iter(&self) -> RawIter<'_, T> {
        RawCursor {
            bits: Self::bit_iter(&self.occupied, self.bits_end, self.slots.len(), self.vacant),
            access: Shared(&self.slots),
        }
    }

    /// Iterates the live values in index order, mutably.
    #[inline]
    pub(crate) fn iter_mut(&mut self) -> RawIterMut<'_, T> {
        RawCursor {
            bits: Self::bit_iter(&self.occupied, self.bits_end, self.slots.len(), self.vacant),
            access: Exclusive {
                len: self.slots.len(),
                slots: self.slots.as_mut_ptr(),
                _marker: PhantomData,
            },
        }
    }

    /// Exclusive access to the slots for handing out `&mut` to values in
    /// an order the caller chooses (the lists of `IndexLists` walk it along
    /// their links); see [`Exclusive::value_at`].
    #[inline]
    pub(crate) fn exclusive(&mut self) -> Exclusive<'_, T> {
        Exclusive {
            len: self.slots.len(),
            slots: self.slots.as_mut_ptr(),
            _marker: PhantomData,
        }
    }

    /// The slots, for serialization. Exposes only safe accessors.
    #[inline]
    #[cfg(feature = "serde")]
    pub(crate) fn slots(&self) -> &[Slot<T>] {
        &self.slots
    }

    /// The slots, mutably, for changing values and the free-list links of
    /// vacant slots. Callers must not occupy or vacate a slot through this:
    /// the occupancy bits and `len` would no longer agree with the slots,
    /// and the iterators rely on that agreement.
    #[inline]
    pub(crate) fn slots_mut(&mut self) -> &mut [Slot<T>] {
        &mut self.slots
    }

    /// Checks the storage invariants; panics on the first one broken.
    pub(crate) fn check_invariants(&self) {
        assert!(
            self.bits_end <= self.slots.len(),
            "bits end past the last slot"
        );
        assert!(
            self.occupied.words().len() * WORD_BITS >= self.bits_end,
            "the bitset does not cover the slots below bits_end"
        );
        let mut occupied = 0;
        for (index, slot) in self.slots.iter().enumerate() {
            if index < self.bits_end {
                assert_eq!(
                    slot.is_occupied(),
                    self.occupied.contains(index),
                    "occupancy bit of slot {index} disagrees with its state"
                );
            } else {
                assert!(slot.is_occupied(), "tail slot {index} is vacant");
            }
            if slot.is_occupied() {
                assert!(
                    slot.generation() >= 1,
                    "occupied slot {index} has generation 0"
                );
                occupied += 1;
            }
        }
        assert!(
            self.occupied.next_set(self.bits_end).is_none(),
            "occupancy bit set at or past bits_end"
        );
        assert_eq!(
            occupied,
            self.len(),
            "vacant count disagrees with the slots"
        );
    }
}

impl<T> AsMut<SlotStore<T>> for SlotStore<T> {
    fn as_mut(&mut self) -> &mut SlotStore<T> {
        self
    }
}

impl<T> Drop for SlotStore<T> {
    fn drop(&mut self) {
        if mem::needs_drop::<T>() {
            self.drop_values();
        }
    }
}

impl<T: Clone> SlotStore<T> {
    /// Appends clones of `source`'s slots (free-list links included) to
    /// this empty store. If a `clone` panics, this store holds the slots
    /// cloned so far, consistent, and drops their values normally.
    pub(crate) fn clone_slots_from(&mut self, source: &Self) {
        debug_assert!(self.slots.is_empty() && self.vacant == 0);
        self.slots.reserve(source.slots.len());
        self.occupied.grow_to(source.slots.len());
        for (index, slot) in source.slots.iter().enumerate() {
            self.slots.push(slot.clone());
            // Every slot gets its bit, so there is no tail.
            self.bits_end = index + 1;
            if slot.is_occupied() {
                self.occupied.insert(index);
            } else {
                self.vacant += 1;
            }
        }
    }
}

impl<T: Clone> Clone for SlotStore<T> {
    fn clone(&self) -> Self {
        let mut out = SlotStore::new();
        out.clone_slots_from(self);
        out
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

/// An access that the two parts of a cursor split for parallel iteration
/// can each hold.
#[cfg(any(test, feature = "rayon"))]
pub(crate) trait SplitAccess<'a>: SlotAccess<'a> + Sized {
    /// A second access to the same slots.
    ///
    /// # Safety
    ///
    /// The two accesses together are asked for each index at most once, as
    /// one exclusive access would be (each part of a split walk asks only
    /// for its own indices).
    unsafe fn duplicate(&self) -> Self;
}

/// Shared access to a slot array.
pub(crate) struct Shared<'a, T>(&'a [Slot<T>]);

#[cfg(any(test, feature = "rayon"))]
impl<'a, T> SplitAccess<'a> for Shared<'a, T> {
    #[inline]
    unsafe fn duplicate(&self) -> Self {
        *self
    }
}

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

#[cfg(any(test, feature = "rayon"))]
impl<'a, T> SplitAccess<'a> for Exclusive<'a, T> {
    #[inline]
    unsafe fn duplicate(&self) -> Self {
        // Two copies of one exclusive access are sound only while they are
        // never asked for the same index, which the caller guarantees.
        Exclusive {
            slots: self.slots,
            len: self.len,
            _marker: PhantomData,
        }
    }
}

// SAFETY: `Exclusive` is a `&mut [Slot<T>]` in disguise: it hands out
// `&mut T` to distinct slots, so it may cross threads when `T: Send`.
unsafe impl<T: Send> Send for Exclusive<'_, T> {}
// SAFETY: shared access to it gives no access to the values.
unsafe impl<T: Sync> Sync for Exclusive<'_, T> {}

impl<'a, T> Exclusive<'a, T> {
    /// The value in slot `index`, if that slot exists and is occupied.
    ///
    /// # Safety
    ///
    /// No reference obtained from this access for slot `index` may still be
    /// alive: the caller asks for each index at most once.
    #[inline]
    pub(crate) unsafe fn value_at(&self, index: usize) -> Option<&'a mut T> {
        if index >= self.len {
            return None;
        }
        // SAFETY: `index < len`, so the pointer stays inside the array.
        let slot = unsafe { self.slots.add(index) };
        // SAFETY: `slot` points to a live slot, and no reference into it is
        // alive (the caller's guarantee), so a short shared borrow is fine.
        if !unsafe { (*slot).is_occupied() } {
            return None;
        }
        // The `&mut` is unique because the caller asks for each index at
        // most once, and it is derived from the raw pointer without a
        // reference to the whole array, so earlier ones stay valid.
        // SAFETY: the slot is occupied, so its value is initialized.
        Some(unsafe { &mut *Slot::value_ptr(slot) })
    }
}

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
    /// occupied slot (the invariant on `SlotStore::occupied`), each once.
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
    /// A cursor yielding the slots of `access` whose bits `bits` holds.
    ///
    /// # Safety
    ///
    /// Every index `bits` yields must be in bounds for `access` and name an
    /// occupied slot, each once.
    #[inline]
    pub(crate) unsafe fn from_parts(bits: BitIter<'a>, access: A) -> Self {
        RawCursor { bits, access }
    }

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

#[cfg(any(test, feature = "rayon"))]
impl<'a, A: SplitAccess<'a>> super::SplitCursor for RawCursor<'a, A> {
    type Item = (usize, u32, A::Value);

    /// Cuts the walk at a word of the bitset, or in the bit-less tail (see
    /// [`BitIter::split`]).
    fn split_part(self) -> (Self, Option<Self>) {
        let (left, right) = self.bits.split();
        let Some(right) = right else {
            return (
                RawCursor {
                    bits: left,
                    access: self.access,
                },
                None,
            );
        };
        // SAFETY: the two walks yield disjoint sets of indices (`split`),
        // so the two accesses are never asked for the same one.
        let access = unsafe { self.access.duplicate() };
        (
            RawCursor {
                bits: left,
                access: self.access,
            },
            Some(RawCursor {
                bits: right,
                access,
            }),
        )
    }

    #[inline]
    fn fold_part<B>(self, init: B, f: impl FnMut(B, Self::Item) -> B) -> B {
        self.fold_items(init, f)
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
