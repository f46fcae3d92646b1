//! One slot: a 32-bit state word and a union of the value and a free-list
//! link.
//!
//! The state word encodes both occupancy and generation, so checking a key
//! against a slot is a single compare of two `u32`s.
//!
//! The two parts need not sit side by side. [`Slot`] keeps them together,
//! so a live lookup reads one slot and the state word shares the value's
//! cache line (the tables and `Pool`). A `Hive` block keeps all state
//! words in one array and all payloads in another, so iterating the values
//! reads values only. Both are handled through the views [`SlotRef`] and
//! [`SlotMut`], which hold a reference to each part: the rules of a slot
//! are written once, there.

use core::mem::ManuallyDrop;

/// Set in the state word of every vacant slot.
pub(crate) const VACANT: u32 = 1 << 31;

/// The end of a free list.
pub(crate) const NO_SLOT: u32 = u32::MAX;

/// The end of a free list after which a run of vacant slots in index
/// order is free too, from a position the container keeps (its *sweep*):
/// the refill of an emptied table (`SlotArena::sweep`) or block
/// (`Block::sweep`), taken in slot order rather than by links in the order
/// of removal. No slot has this index (see `KeyLimits::below_list_ends`).
pub(crate) const SWEEP: u32 = u32::MAX - 1;

/// A slot's payload: the value while occupied, the next free slot while
/// vacant. Which field is live is told by the slot's state word.
pub union Payload<T> {
    value: ManuallyDrop<T>,
    next_free: u32,
}

impl<T> Payload<T> {
    /// The payload of an occupied slot.
    #[inline]
    pub(crate) fn occupied(value: T) -> Self {
        Payload {
            value: ManuallyDrop::new(value),
        }
    }

    /// The payload of a vacant slot.
    #[inline]
    pub(crate) fn vacant(next_free: u32) -> Self {
        Payload { next_free }
    }

    /// A raw pointer to the value field of the payload behind `payload`,
    /// made without creating a reference (so pointers to distinct payloads
    /// of one array can be handed out together).
    ///
    /// # Safety
    ///
    /// `payload` must point into a live allocation of at least one
    /// `Payload<T>`; whether the value is initialized is the caller's to
    /// know before reading through the result.
    #[inline]
    pub(crate) unsafe fn value_ptr(payload: *mut Self) -> *mut T {
        // `addr_of_mut!` only computes a field address, and `ManuallyDrop<T>`
        // is `repr(transparent)`, so the cast is sound.
        // SAFETY: the caller guarantees `payload` points to a live payload.
        unsafe { core::ptr::addr_of_mut!((*payload).value).cast::<T>() }
    }

    /// A raw pointer to the free-list link field of the payload behind
    /// `payload`, made without creating a reference.
    ///
    /// # Safety
    ///
    /// As for [`value_ptr`](Self::value_ptr); the link is initialized only
    /// while the slot is vacant.
    #[inline]
    pub(crate) unsafe fn next_free_ptr(payload: *mut Self) -> *mut u32 {
        // SAFETY: the caller guarantees `payload` points to a live payload.
        unsafe { core::ptr::addr_of_mut!((*payload).next_free) }
    }
}

/// One slot of a table, its two parts side by side.
pub struct Slot<T> {
    /// Occupancy and generation.
    ///
    /// Invariant (of every state word, wherever it is stored):
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

/// A shared view of one slot: its state word and its payload, wherever
/// each is stored.
pub(crate) struct SlotRef<'a, T> {
    /// Invariant: describes `payload` as `Slot::state` says.
    state: &'a u32,
    payload: &'a Payload<T>,
}

impl<T> Clone for SlotRef<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SlotRef<'_, T> {}

/// An exclusive view of one slot.
pub(crate) struct SlotMut<'a, T> {
    /// Invariant: describes `payload` as `Slot::state` says.
    state: &'a mut u32,
    payload: &'a mut Payload<T>,
}

impl<T> Slot<T> {
    /// A new occupied slot.
    #[inline]
    pub(crate) fn new_occupied(generation: u32, value: T) -> Self {
        debug_assert!(generation != 0 && generation & VACANT == 0);
        Slot {
            state: generation,
            payload: Payload::occupied(value),
        }
    }

    /// A new vacant slot whose last occupant had generation `last`.
    #[inline]
    pub(crate) fn new_vacant(last: u32, next_free: u32) -> Self {
        debug_assert!(last & VACANT == 0);
        Slot {
            state: VACANT | last,
            payload: Payload::vacant(next_free),
        }
    }

    /// The state word of an occupied slot.
    #[inline]
    pub(crate) fn occupied_state(generation: u32) -> u32 {
        debug_assert!(generation != 0 && generation & VACANT == 0);
        generation
    }

    /// The state word of a vacant slot whose last occupant had generation
    /// `last`.
    #[inline]
    pub(crate) fn vacant_state(last: u32) -> u32 {
        debug_assert!(last & VACANT == 0);
        VACANT | last
    }

    /// The slot as a view.
    #[inline]
    pub(crate) fn as_ref(&self) -> SlotRef<'_, T> {
        SlotRef {
            state: &self.state,
            payload: &self.payload,
        }
    }

    /// A raw pointer to the state word of the slot behind `slot`, made
    /// without creating a reference.
    ///
    /// # Safety
    ///
    /// `slot` must point into a live allocation of at least one `Slot<T>`.
    #[inline]
    pub(crate) unsafe fn state_ptr(slot: *mut Self) -> *mut u32 {
        // SAFETY: the caller guarantees `slot` points to a live slot;
        // `addr_of_mut!` only computes the field's address.
        unsafe { core::ptr::addr_of_mut!((*slot).state) }
    }

    /// A raw pointer to the payload of the slot behind `slot`, made
    /// without creating a reference.
    ///
    /// # Safety
    ///
    /// `slot` must point into a live allocation of at least one `Slot<T>`.
    #[inline]
    pub(crate) unsafe fn payload_ptr(slot: *mut Self) -> *mut Payload<T> {
        // SAFETY: the caller guarantees `slot` points to a live slot;
        // `addr_of_mut!` only computes the field's address.
        unsafe { core::ptr::addr_of_mut!((*slot).payload) }
    }

    /// The generation of a slot that `matches(generation)`: a key's
    /// generation without the bit `matches` ignores. A container files a
    /// slot it took a value from by this, never by the key's raw bits.
    #[inline]
    pub(crate) const fn matched_generation(generation: u32) -> u32 {
        generation & !VACANT
    }

    /// The value of the slot whose state word is at `state` and payload at
    /// `payload`, if the word is `matched_generation(generation)`: the one
    /// compare of the pool's lookup by key (the hive's, in `hive.rs`, is
    /// written out, to reach its payload by an in-bounds offset from its
    /// chunk's). A miss is marked rare, so that the compiler
    /// branches rather than making the value's address wait for the
    /// compare (a conditional move), which would hold back the next load;
    /// and the value's pointer is said not null, so an `Option<&T>` made
    /// from it needs no null check.
    ///
    /// # Safety
    ///
    /// `state` points to an initialized state word that nothing writes
    /// while this runs, and `payload` to the same slot's payload, inside
    /// its storage (so not at address 0).
    #[inline(always)]
    pub(crate) unsafe fn matched_value(
        state: *const u32,
        payload: *mut Payload<T>,
        generation: u32,
    ) -> Option<*mut T> {
        // SAFETY: the caller's guarantee: the word is initialized and not
        // being written.
        if unsafe { *state } == Self::matched_generation(generation) {
            // SAFETY: the caller's guarantee: inside the storage.
            unsafe { core::hint::assert_unchecked(!payload.is_null()) };
            // The word has the vacant bit clear, so the slot is occupied
            // and its payload is a value.
            // SAFETY: `payload` is the slot's payload, in its storage.
            Some(unsafe { Payload::value_ptr(payload) })
        } else {
            super::cold_path();
            None
        }
    }

    /// See [`SlotRef::generation`].
    #[inline]
    pub(crate) fn generation(&self) -> u32 {
        self.as_ref().generation()
    }

    /// See [`SlotRef::get`].
    #[inline]
    pub(crate) fn get(&self) -> Option<&T> {
        self.as_ref().get()
    }

    /// See [`SlotRef::next_free`].
    #[inline]
    pub(crate) fn next_free(&self) -> u32 {
        self.as_ref().next_free()
    }
}

impl<'a, T> SlotRef<'a, T> {
    /// A view of the slot made of `state` and `payload`.
    ///
    /// # Safety
    ///
    /// `state` must describe `payload` as the invariant on `Slot::state`
    /// says.
    #[inline]
    pub(crate) unsafe fn from_parts(state: &'a u32, payload: &'a Payload<T>) -> Self {
        SlotRef { state, payload }
    }

    /// Whether the slot holds a value.
    #[inline]
    pub(crate) fn is_occupied(self) -> bool {
        *self.state & VACANT == 0
    }

    /// The generation of the current occupant, or of the last one if the
    /// slot is vacant (0 if it never held a value).
    #[inline]
    pub(crate) fn generation(self) -> u32 {
        *self.state & !VACANT
    }

    /// Whether a key with generation `generation` names the current
    /// occupant. Any `u32` is accepted: the top bit is masked off so that
    /// an untrusted generation can never match a vacant slot.
    #[inline]
    pub(crate) fn matches(self, generation: u32) -> bool {
        *self.state == Slot::<T>::matched_generation(generation)
    }

    /// The value, if the slot is occupied.
    #[inline]
    pub(crate) fn get(self) -> Option<&'a T> {
        if self.is_occupied() {
            // SAFETY: an occupied slot's `value` field is initialized (the
            // invariant on `state`).
            Some(unsafe { &self.payload.value })
        } else {
            None
        }
    }

    /// The next free slot of a slot known to be vacant.
    ///
    /// # Safety
    ///
    /// The slot must be vacant.
    #[inline]
    pub(crate) unsafe fn next_free_unchecked(self) -> u32 {
        debug_assert!(!self.is_occupied());
        // SAFETY: the caller guarantees the slot is vacant, so `next_free`
        // is the initialized field.
        unsafe { self.payload.next_free }
    }

    /// The next free slot. Meaningful only while the slot is on a free list.
    #[inline]
    pub(crate) fn next_free(self) -> u32 {
        if self.is_occupied() {
            NO_SLOT
        } else {
            // SAFETY: a vacant slot's `next_free` field is initialized (the
            // invariant on `state`).
            unsafe { self.payload.next_free }
        }
    }
}

impl<T: Clone> SlotRef<'_, T> {
    /// The state word and payload of a copy of this slot: the same
    /// generation, and a clone of the value or the same free-list link. For
    /// cloning a container whose slots are written part by part.
    pub(crate) fn cloned_parts(self) -> (u32, Payload<T>) {
        match self.get() {
            Some(value) => (
                Slot::<T>::occupied_state(self.generation()),
                Payload::occupied(value.clone()),
            ),
            None => (
                Slot::<T>::vacant_state(self.generation()),
                Payload::vacant(self.next_free()),
            ),
        }
    }
}

impl<'a, T> SlotMut<'a, T> {
    /// An exclusive view of the slot made of `state` and `payload`.
    ///
    /// # Safety
    ///
    /// `state` must describe `payload` as the invariant on `Slot::state`
    /// says.
    #[inline]
    pub(crate) unsafe fn from_parts(state: &'a mut u32, payload: &'a mut Payload<T>) -> Self {
        SlotMut { state, payload }
    }

    /// A shared view of the same slot.
    #[inline]
    pub(crate) fn as_ref(&self) -> SlotRef<'_, T> {
        SlotRef {
            state: self.state,
            payload: self.payload,
        }
    }

    /// The value, if the slot is occupied.
    #[inline]
    pub(crate) fn get_mut(self) -> Option<&'a mut T> {
        if self.as_ref().is_occupied() {
            // SAFETY: an occupied slot's `value` field is initialized.
            Some(unsafe { &mut self.payload.value })
        } else {
            None
        }
    }

    /// Sets the free-list link of a vacant slot. Does nothing to an
    /// occupied slot (whose payload holds a value).
    #[inline]
    pub(crate) fn set_next_free(self, next: u32) {
        if !self.as_ref().is_occupied() {
            self.payload.next_free = next;
        }
    }

    /// Puts a value into a vacant slot and gives it `generation`.
    #[inline]
    pub(crate) fn occupy(self, generation: u32, value: T) {
        // Occupying an occupied slot would leak its value, not corrupt
        // memory; no container does it.
        debug_assert!(!self.as_ref().is_occupied(), "occupy of an occupied slot");
        // Writing a `Copy`-free union field through assignment would drop
        // the old field if it had drop glue; `ManuallyDrop` has none, so a
        // plain assignment is correct and drops nothing.
        self.payload.value = ManuallyDrop::new(value);
        *self.state = Slot::<T>::occupied_state(generation);
    }

    /// Takes the value out of an occupied slot and leaves it vacant with
    /// the free-list link `next_free`. The generation is kept as "last".
    ///
    /// # Safety
    ///
    /// The slot must be occupied.
    #[inline]
    pub(crate) unsafe fn vacate(self, next_free: u32) -> T {
        debug_assert!(self.as_ref().is_occupied());
        // `value` is read exactly once: the state is marked vacant next.
        // SAFETY: the caller guarantees the slot is occupied (`value` is set).
        let value = unsafe { ManuallyDrop::take(&mut self.payload.value) };
        *self.state |= VACANT;
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
