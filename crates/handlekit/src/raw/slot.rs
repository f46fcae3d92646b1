//! One slot: a 32-bit state word beside a union of the value and a free-list
//! link.
//!
//! The state word encodes both occupancy and generation, so checking a key
//! against a slot is a single compare of two `u32`s, and a live lookup reads
//! one slot: the state word and the value share a cache line.

use core::mem::ManuallyDrop;

/// Set in the state word of every vacant slot.
pub(crate) const VACANT: u32 = 1 << 31;

/// The end of a free list.
pub(crate) const NO_SLOT: u32 = u32::MAX;

/// A slot's payload: the value while occupied, the next free slot while
/// vacant. Which field is live is told by [`Slot::state`].
union Payload<T> {
    value: ManuallyDrop<T>,
    next_free: u32,
}

/// One slot of a table.
pub(crate) struct Slot<T> {
    /// Occupancy and generation.
    ///
    /// Invariant:
    /// - occupied: `state` is the current generation, in `1..VACANT`, and
    ///   `payload.value` is initialized;
    /// - vacant: `state == VACANT | last`, where `last` is the generation of
    ///   the last occupant (0 if none), and `payload.next_free` is
    ///   initialized (it is meaningful only while the slot is on the free
    ///   list).
    state: u32,
    /// See [`Slot::state`].
    payload: Payload<T>,
}

impl<T> Slot<T> {
    /// A new occupied slot.
    #[inline]
    pub(crate) fn new_occupied(generation: u32, value: T) -> Self {
        debug_assert!(generation != 0 && generation & VACANT == 0);
        Slot {
            state: generation,
            payload: Payload {
                value: ManuallyDrop::new(value),
            },
        }
    }

    /// A new vacant slot whose last occupant had generation `last`.
    #[inline]
    pub(crate) fn new_vacant(last: u32, next_free: u32) -> Self {
        debug_assert!(last & VACANT == 0);
        Slot {
            state: VACANT | last,
            payload: Payload { next_free },
        }
    }

    /// Whether the slot holds a value.
    #[inline]
    pub(crate) fn is_occupied(&self) -> bool {
        self.state & VACANT == 0
    }

    /// The generation of the current occupant, or of the last one if the
    /// slot is vacant (0 if it never held a value).
    #[inline]
    pub(crate) fn generation(&self) -> u32 {
        self.state & !VACANT
    }

    /// The generation of a slot that `matches(generation)`: a key's
    /// generation without the bit `matches` ignores. A container files a
    /// slot it took a value from by this, never by the key's raw bits.
    #[inline]
    pub(crate) const fn matched_generation(generation: u32) -> u32 {
        generation & !VACANT
    }

    /// Whether a key with generation `generation` names the current
    /// occupant. Any `u32` is accepted: the top bit is masked off so that
    /// an untrusted generation can never match a vacant slot.
    #[inline]
    pub(crate) fn matches(&self, generation: u32) -> bool {
        self.state == Self::matched_generation(generation)
    }

    /// The value, if the slot is occupied.
    #[inline]
    pub(crate) fn get(&self) -> Option<&T> {
        if self.is_occupied() {
            // SAFETY: an occupied slot's `value` field is initialized (the
            // invariant on `state`).
            Some(unsafe { &self.payload.value })
        } else {
            None
        }
    }

    /// The value, if the slot is occupied.
    #[inline]
    pub(crate) fn get_mut(&mut self) -> Option<&mut T> {
        if self.is_occupied() {
            // SAFETY: as in `get`.
            Some(unsafe { &mut self.payload.value })
        } else {
            None
        }
    }

    /// The value, if `generation` names the current occupant.
    #[inline]
    pub(crate) fn get_if(&self, generation: u32) -> Option<&T> {
        if self.matches(generation) {
            // SAFETY: `matches` is true only for an occupied slot, whose
            // value is initialized.
            Some(unsafe { &self.payload.value })
        } else {
            None
        }
    }

    /// The value, if `generation` names the current occupant.
    #[inline]
    pub(crate) fn get_mut_if(&mut self, generation: u32) -> Option<&mut T> {
        if self.matches(generation) {
            // SAFETY: as in `get_if`.
            Some(unsafe { &mut self.payload.value })
        } else {
            None
        }
    }

    /// The value of an occupied slot.
    ///
    /// # Safety
    ///
    /// The slot must be occupied.
    #[inline]
    pub(crate) unsafe fn value_unchecked(&self) -> &T {
        debug_assert!(self.is_occupied());
        // SAFETY: the caller guarantees the slot is occupied.
        unsafe { &self.payload.value }
    }

    /// The value of an occupied slot.
    ///
    /// # Safety
    ///
    /// The slot must be occupied.
    #[inline]
    pub(crate) unsafe fn value_unchecked_mut(&mut self) -> &mut T {
        debug_assert!(self.is_occupied());
        // SAFETY: the caller guarantees the slot is occupied.
        unsafe { &mut self.payload.value }
    }

    /// A raw pointer to the value of the slot behind `slot`, made without
    /// creating a reference to the slot (so pointers to distinct slots of
    /// one array can be handed out together).
    ///
    /// # Safety
    ///
    /// `slot` must point to a live `Slot<T>` that is occupied, and the
    /// caller must respect aliasing when using the pointer.
    #[inline]
    pub(crate) unsafe fn value_ptr(slot: *mut Self) -> *mut T {
        // `addr_of_mut!` only computes a field address, and `ManuallyDrop<T>`
        // is `repr(transparent)`, so the cast is sound.
        // SAFETY: the caller guarantees `slot` points to a live slot.
        unsafe { core::ptr::addr_of_mut!((*slot).payload.value).cast::<T>() }
    }

    /// The next free slot. Meaningful only while the slot is on a free list.
    #[inline]
    pub(crate) fn next_free(&self) -> u32 {
        if self.is_occupied() {
            NO_SLOT
        } else {
            // SAFETY: a vacant slot's `next_free` field is initialized (the
            // invariant on `state`).
            unsafe { self.payload.next_free }
        }
    }

    /// The next free slot of a slot known to be vacant.
    ///
    /// # Safety
    ///
    /// The slot must be vacant.
    #[inline]
    pub(crate) unsafe fn next_free_unchecked(&self) -> u32 {
        debug_assert!(!self.is_occupied());
        // SAFETY: the caller guarantees the slot is vacant, so `next_free`
        // is the initialized field.
        unsafe { self.payload.next_free }
    }

    /// Sets the free-list link of a vacant slot. Does nothing to an
    /// occupied slot (whose payload holds a value).
    #[inline]
    pub(crate) fn set_next_free(&mut self, next: u32) {
        if !self.is_occupied() {
            self.payload.next_free = next;
        }
    }

    /// Puts a value into a vacant slot and gives it `generation`.
    #[inline]
    pub(crate) fn occupy(&mut self, generation: u32, value: T) {
        // Occupying an occupied slot would leak its value, not corrupt
        // memory; the arena never does it.
        debug_assert!(!self.is_occupied(), "occupy of an occupied slot");
        debug_assert!(generation != 0 && generation & VACANT == 0);
        // Writing a `Copy`-free union field through assignment would drop
        // the old field if it had drop glue; `ManuallyDrop` has none, so a
        // plain assignment is correct and drops nothing.
        self.payload.value = ManuallyDrop::new(value);
        self.state = generation;
    }

    /// Takes the value out of an occupied slot and leaves it vacant with
    /// the free-list link `next_free`. The generation is kept as "last".
    ///
    /// # Safety
    ///
    /// The slot must be occupied.
    #[inline]
    pub(crate) unsafe fn vacate(&mut self, next_free: u32) -> T {
        debug_assert!(self.is_occupied());
        // `value` is read exactly once: the state is marked vacant next.
        // SAFETY: the caller guarantees the slot is occupied (`value` is set).
        let value = unsafe { ManuallyDrop::take(&mut self.payload.value) };
        self.state |= VACANT;
        self.payload.next_free = next_free;
        value
    }
}

impl<T: Clone> Clone for Slot<T> {
    fn clone(&self) -> Self {
        match self.get() {
            Some(value) => Slot::new_occupied(self.state, value.clone()),
            None => Slot::new_vacant(self.generation(), self.next_free()),
        }
    }
}

// `Slot` has no `Drop`: the owner of an array of slots drops the values of
// occupied slots itself (see `SlotArena`'s `Drop`).
