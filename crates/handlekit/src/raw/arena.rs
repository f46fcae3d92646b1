//! `SlotArena`: a [`SlotStore`] plus the free list threaded through its
//! vacant slots, the reuse policy and slot retirement. It speaks in raw
//! `(index, generation)` pairs; the typed tables above it convert keys.

use alloc::collections::BTreeMap;
use core::marker::PhantomData;
use core::mem::{self, ManuallyDrop};
use core::ptr::NonNull;

use super::buf::{BufLayout, SplitLayout, StateView};
pub(crate) use super::keyed::KeyLimits;
use super::keyed::{table_key, TakeSlots};
use super::slot::{Slot, NO_SLOT, SWEEP, VACANT};
use super::store::{Exclusive, RawIter, RawIterMut, SlotStore};
use super::table::RawTable;
use crate::{CapacityError, Key, Reuse};

/// The free-list order, for serialization (`free_list`, `refill_start`,
/// `restore_free_order`).
#[cfg(feature = "serde")]
mod free_order;

/// `SlotArena::sweep` while no list ends in `SWEEP`.
const NO_SWEEP: usize = usize::MAX;

/// Whether the refill may take a vacant slot whose state word is `state`:
/// it is `VACANT | last`, and the slot retired (or is parked, detached) if
/// `last` reached `max_generation`.
#[inline(always)]
const fn refill_takes(state: u32, max_generation: u32) -> bool {
    state < VACANT | max_generation
}

/// The error of an arena that cannot add a slot.
#[cold]
fn full_error(fixed_capacity: Option<usize>, max_slots: usize) -> CapacityError {
    match fixed_capacity {
        Some(fixed) => CapacityError::fixed(fixed),
        None => CapacityError::index_space(max_slots),
    }
}

/// What `SlotArena::general_spot` decides from.
#[derive(Clone, Copy)]
struct SpotInputs {
    free_head: u32,
    sweep: usize,
    slot_count: usize,
    append_limit: usize,
    /// Whether a FIFO list would be popped now (`fifo_reuses`).
    fifo_reuses: bool,
    max_generation: u32,
    fixed_capacity: Option<usize>,
    max_slots: usize,
}

/// Where an insertion puts its value.
enum Spot {
    /// The head of a LIFO free list.
    LifoHead,
    /// The head of a FIFO free list, which also keeps its tail.
    FifoHead,
    /// The vacant slot at `sweep`, which is not retired.
    Sweep,
    /// A new slot at the end.
    Append,
}

/// The shared core of the slot-based tables. `L` lays out the slots: state
/// words apart from the payloads ([`SplitLayout`], for tables whose passes
/// scan the state words) or beside them
/// ([`InterleavedLayout`](super::buf::InterleavedLayout), for
/// `PackedTable`'s sparse side, which is only looked up); the policy here
/// is the same for both.
pub struct SlotArena<T, K, L: BufLayout = SplitLayout> {
    /// The slots. Invariant: `store.slot_count() <= append_limit <=
    /// limits.max_slots <= SWEEP`, so every index fits in a `u32` other
    /// than the two list ends `SWEEP` and `NO_SLOT`.
    store: SlotStore<T, L>,
    /// First slot of the free list, or one of its two ends: `NO_SLOT`, or
    /// `SWEEP` when the slots from `sweep` on follow the list.
    ///
    /// Invariant: the *free slots* (the vacant slots whose generation is
    /// below `limits.max_generation`) are exactly those on the list, each
    /// once, linked through `next_free`, plus, if the list ends in
    /// `SWEEP`, those at `sweep..slot_count`. Every slot at
    /// `sweep..slot_count` is vacant and none is on the list.
    ///
    /// So an emptied table under LIFO reuse resets the list to `SWEEP`
    /// with `sweep = 0` in O(1), and the refill takes slots in index order
    /// (memory forwards, instead of the random order of the removals)
    /// without a rebuild pass. The reset is lazy: the removal that empties
    /// the table pushes its slot as any other, and the next insertion (or
    /// anything that reads the order: `next_spot`, `free_list`,
    /// `set_reuse`) sees an empty LIFO table with a listed head and resets
    /// then (`list_ends`). A check on every removal cost one branch in the
    /// loop, and a small table's removal is bound by its branches.
    free_head: u32,
    /// Where the refill of an emptied table goes on (see `free_head`).
    /// Invariant: at most `slot_count` while the list ends in `SWEEP` (at
    /// `slot_count`, the next insertion that reaches the refill ends it),
    /// and `NO_SWEEP` otherwise (so the refill's inline check,
    /// `sweep < slot_count`, fails then).
    sweep: usize,
    /// Last slot of the free list, or `NO_SLOT` when it is empty. Kept only
    /// under `Reuse::Fifo` (which appends there); under `Reuse::Lifo` it is
    /// stale, and `set_reuse` recomputes it when switching to FIFO.
    free_tail: u32,
    /// Vacant slots whose generation reached `limits.max_generation`. They
    /// are never reused, so no key is ever issued twice. Counts the
    /// detached slots too (see `detached`); [`retired`](Self::retired)
    /// reports the difference.
    retired: usize,
    /// The detached slots (`detach_slot`): slot index → the generation of
    /// the detached key. Invariant: each such slot exists and is vacant
    /// with generation `limits.max_generation`, so the free list, its
    /// rebuild and the `retired` count take it for a retired slot: no
    /// insertion is ever given it, and `clear` or a rebuild keeps it
    /// detached. Only `reattach_slot` brings it back, occupied under the
    /// generation kept here, so the detached key is valid again.
    detached: ManuallyDrop<BTreeMap<u32, u32>>,
    /// Where freed slots join the free list.
    reuse: Reuse,
    /// The policy folded into two numbers, so that each fast path checks
    /// one compare. `pop_below` is `SWEEP` under LIFO (pop any listed
    /// slot) and 0 under FIFO (never pop inline). `lifo_below` is
    /// `limits.max_generation` under LIFO and 0 under FIFO: a removal
    /// whose slot's generation is below it is pushed on the LIFO list
    /// inline, any other one (FIFO, or a slot that retires) goes out of
    /// line.
    pop_below: u32,
    /// See `pop_below`.
    lifo_below: u32,
    /// Set for arenas that must never reallocate: the number of slots the
    /// allocation was made for (the store's capacity is at least this).
    fixed_capacity: Option<usize>,
    /// The most slots this arena may have: the fixed capacity, or else
    /// `limits.max_slots`.
    append_limit: usize,
    /// Slots an insertion with an empty free list may append inline, with
    /// no other check: while `slot_count < append_end`. Invariant:
    /// `append_end <= min(store.slot_capacity(), append_limit)` (an
    /// inline append writes the next slot unchecked); usually equal to it
    /// (see `bound_appends`), as lower only sends appends the checked way
    /// until the next growth sets it anew. One compare on the path of
    /// every append, where checking the limit and the buffer's room apart
    /// cost a second compare and a taken jump: in a user's loop of inserts
    /// into a growing table of 1,000 `u64`s, 1.19-1.22 times SlotMap's
    /// time with two compares, 0.95 with one (side by side, medians).
    append_end: usize,
    /// Invariant: no wider than `KeyLimits::of::<K>()` (the constructors
    /// make it so), so every slot's parts make a valid `K`.
    limits: KeyLimits,
    _key: PhantomData<fn() -> K>,
}

impl<T, K: Key, L: BufLayout> SlotArena<T, K, L> {
    /// An empty arena within `limits`, which may be narrower than those of
    /// `K` (`KeyLimits::of::<K>()`), never wider.
    ///
    /// # Panics
    ///
    /// If `limits` allow more than `K` does.
    #[inline]
    pub(crate) const fn new(limits: KeyLimits) -> Self {
        let limits = KeyLimits::within::<K>(limits);
        SlotArena {
            store: SlotStore::new(),
            free_head: NO_SLOT,
            free_tail: NO_SLOT,
            sweep: NO_SWEEP,
            retired: 0,
            detached: ManuallyDrop::new(BTreeMap::new()),
            reuse: Reuse::Lifo,
            pop_below: SWEEP,
            lifo_below: limits.max_generation,
            fixed_capacity: None,
            append_limit: limits.below_list_ends().max_slots,
            append_end: 0,
            limits: limits.below_list_ends(),
            _key: PhantomData,
        }
    }

    /// An empty arena with room for `capacity` slots.
    pub(crate) fn with_capacity(limits: KeyLimits, capacity: usize) -> Self {
        let mut arena = Self::new(limits);
        arena.store = SlotStore::with_capacity(capacity.min(limits.max_slots));
        arena.bound_appends();
        arena
    }

    /// An empty arena that allocates room for `capacity` slots now and never
    /// reallocates.
    pub(crate) fn with_fixed_capacity(limits: KeyLimits, capacity: usize) -> Self {
        assert!(
            capacity <= limits.max_slots,
            "fixed capacity {capacity} exceeds the {} slots the key type can index",
            limits.max_slots
        );
        let mut arena = Self::new(limits);
        arena.store.reserve_exact(capacity);
        arena.fix_capacity(Some(capacity));
        arena
    }
}

impl<T, K, L: BufLayout> SlotArena<T, K, L> {
    fn fix_capacity(&mut self, fixed: Option<usize>) {
        self.fixed_capacity = fixed;
        self.append_limit = fixed.unwrap_or(self.limits.max_slots);
        self.bound_appends();
    }

    /// Lets inline appends fill the buffer up to the limit (see
    /// `append_end`); to be called after the buffer's capacity or the limit
    /// changed, and required after either shrinks.
    #[inline]
    fn bound_appends(&mut self) {
        self.append_end = self.store.slot_capacity().min(self.append_limit);
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.store.len()
    }

    /// Lowers the number of slots this (growable) arena may have to
    /// `max_slots`; fails if it already has more.
    #[cfg(feature = "serde")]
    pub(crate) fn limit_slots(&mut self, max_slots: usize) -> Result<(), BuildError> {
        if self.store.slot_count() > max_slots {
            return Err(BuildError::TooManySlots(max_slots));
        }
        self.limits.max_slots = self.limits.max_slots.min(max_slots);
        self.fix_capacity(self.fixed_capacity);
        Ok(())
    }

    /// Slots retired because their generation ran out (the detached slots,
    /// which look retired to the free list, are not counted).
    #[inline]
    pub(crate) fn retired(&self) -> usize {
        self.retired - self.detached.len()
    }

    #[inline]
    pub(crate) fn reuse(&self) -> Reuse {
        self.reuse
    }

    /// Slots on the free list: every vacant slot that is not retired.
    #[inline]
    fn free_len(&self) -> usize {
        self.store.slot_count() - self.store.len() - self.retired
    }

    pub(crate) fn set_reuse(&mut self, reuse: Reuse) {
        self.reset_emptied();
        let to_fifo = matches!(reuse, Reuse::Fifo { .. }) && matches!(self.reuse, Reuse::Lifo);
        self.reuse = reuse;
        (self.pop_below, self.lifo_below) = match reuse {
            Reuse::Lifo => (SWEEP, self.limits.max_generation),
            Reuse::Fifo { .. } => (0, 0),
        };
        if to_fifo {
            if self.sweep != NO_SWEEP {
                // FIFO keeps every free slot on the list.
                self.rebuild_free_list();
            } else {
                self.free_tail = self.find_free_tail();
            }
        }
    }

    /// The last slot of the free list, found by walking it.
    fn find_free_tail(&self) -> u32 {
        let mut tail = NO_SLOT;
        let mut cursor = self.free_head;
        while let Some(slot) = self.store.slot(cursor as usize) {
            tail = cursor;
            cursor = slot.next_free();
        }
        tail
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
            None => self.store.slot_capacity(),
        };
        slots.min(self.limits.max_slots) - self.retired
    }

    /// The error for an arena that cannot add a slot.
    #[cold]
    fn full_error(&self) -> CapacityError {
        full_error(self.fixed_capacity, self.limits.max_slots)
    }

    /// Makes room for `additional` more values without reallocating.
    pub(crate) fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        let reusable = match self.reuse {
            Reuse::Lifo => self.free_len(),
            Reuse::Fifo { min_free } => self.free_len().saturating_sub(min_free as usize),
        };
        let growable = self.append_limit - self.store.slot_count();
        // Past the limit the table dips into a FIFO reserve, so only a
        // shortfall of all free slots is an error.
        if additional.saturating_sub(self.free_len()) > growable {
            return Err(self.full_error());
        }
        if self.fixed_capacity.is_some() {
            return Ok(());
        }
        let new_slots = additional.saturating_sub(reusable).min(growable);
        self.store
            .try_reserve_slots(new_slots)
            .map_err(|_| CapacityError::alloc())?;
        self.bound_appends();
        Ok(())
    }

    /// Frees unused memory. Slots are never dropped, so that no stale key
    /// can come back to life; a fixed-capacity arena keeps its allocation.
    pub(crate) fn shrink_to_fit(&mut self) {
        if self.fixed_capacity.is_none() {
            self.store.shrink_to_fit();
            self.bound_appends();
        }
    }

    #[inline]
    pub(crate) fn contains(&self, index: usize, generation: u32) -> bool {
        self.store.contains(index, generation)
    }

    #[inline]
    pub(crate) fn get(&self, index: usize, generation: u32) -> Option<&T> {
        self.store.get(index, generation)
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, index: usize, generation: u32) -> Option<&mut T> {
        self.store.get_mut(index, generation)
    }

    /// The value in slot `index`.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be occupied.
    #[inline]
    pub(crate) unsafe fn get_unchecked(&self, index: usize) -> &T {
        // SAFETY: the caller's guarantee is the store's.
        unsafe { self.store.get_unchecked(index) }
    }

    /// The value in slot `index`.
    ///
    /// # Safety
    ///
    /// Slot `index` must exist and be occupied.
    #[inline]
    pub(crate) unsafe fn get_unchecked_mut(&mut self, index: usize) -> &mut T {
        // SAFETY: the caller's guarantee is the store's.
        unsafe { self.store.get_unchecked_mut(index) }
    }

    /// The value in slot `index`, whatever its generation, if the slot is
    /// occupied.
    #[inline]
    pub(crate) fn value_at(&self, index: usize) -> Option<&T> {
        self.store.slot(index)?.get()
    }

    /// The value in slot `index`, whatever its generation, if the slot is
    /// occupied.
    #[inline]
    pub(crate) fn value_at_mut(&mut self, index: usize) -> Option<&mut T> {
        self.store.slot_mut(index)?.get_mut()
    }

    /// The generation of the value in slot `index`, if the slot is occupied.
    #[inline]
    pub(crate) fn generation_at(&self, index: usize) -> Option<u32> {
        self.store
            .slot(index)
            .filter(|slot| slot.is_occupied())
            .map(|slot| slot.generation())
    }

    /// Exclusive access for handing out `&mut` to values slot by slot; see
    /// [`Exclusive::value_at`](super::store::Exclusive::value_at).
    #[inline]
    pub(crate) fn exclusive(&mut self) -> Exclusive<'_, T, L> {
        self.store.exclusive()
    }

    #[inline]
    pub(crate) fn get_disjoint_mut<const N: usize>(
        &mut self,
        keys: [(usize, u32); N],
    ) -> Option<[&mut T; N]> {
        self.store.get_disjoint_mut(keys)
    }

    /// Mutable references to the values of `N` slots, without checks.
    ///
    /// # Safety
    ///
    /// Every index must name an existing, occupied slot, and no two may be
    /// equal.
    #[inline]
    pub(crate) unsafe fn get_disjoint_unchecked_mut<const N: usize>(
        &mut self,
        indices: [usize; N],
    ) -> [&mut T; N] {
        // SAFETY: the caller's guarantee is the store's.
        unsafe { self.store.get_disjoint_unchecked_mut(indices) }
    }

    /// The head of the free list and `sweep`, as they are or, for an empty
    /// table under LIFO reuse whose head is a listed slot, as the next
    /// insertion resets them: a refill of every slot from 0 (see
    /// `free_head`). Everything vacant is free or retired then, so this is
    /// the same set of free slots in index order.
    #[inline]
    fn list_ends(&self) -> (u32, usize) {
        if self.free_head < self.pop_below && self.store.len() == 0 {
            (SWEEP, 0)
        } else {
            (self.free_head, self.sweep)
        }
    }

    /// Applies the reset [`list_ends`](Self::list_ends) describes.
    fn reset_emptied(&mut self) {
        (self.free_head, self.sweep) = self.list_ends();
    }

    /// Whether a FIFO insertion takes the head of the free list now
    /// rather than a new slot: when more than the reserve is free, or
    /// when no slot can be added.
    #[inline]
    fn fifo_reuses(&self) -> bool {
        match self.reuse {
            Reuse::Lifo => true,
            Reuse::Fifo { min_free } => {
                self.free_len() > min_free as usize || self.store.slot_count() >= self.append_limit
            }
        }
    }

    /// Inserts the value `make(index, generation)` and returns its
    /// `(index, generation)`. If `make` panics, the arena is unchanged.
    ///
    /// The common cases, popping a LIFO free list, taking the next slot of
    /// an emptied table's refill and appending, are decided inline with
    /// one compare each, so that callers in big functions keep the arena's
    /// fields in registers; FIFO reuse, retired slots of the refill and
    /// errors are decided out of line. The out-of-line part only picks the
    /// spot and never sees `make`: were the value passed to a function
    /// that is not inlined, it would be built in memory first and copied
    /// from there on every path, and a large value built with narrow
    /// stores and copied with wide loads stalls on store forwarding (a
    /// 64-byte value took three times as long to insert).
    #[inline(always)]
    pub(crate) fn try_insert_with(
        &mut self,
        make: impl FnOnce(usize, u32) -> T,
    ) -> Result<(usize, u32), CapacityError> {
        let head = self.free_head;
        // Appending first, with one compare (see `append_end`); tested
        // first, it is laid out as the straight path. `head > SWEEP` is an
        // empty free list (`NO_SLOT`), which excludes the LIFO pop below
        // (`pop_below <= SWEEP`). Under FIFO too: with an empty list it
        // appends.
        if head > SWEEP {
            let count = self.store.slot_count();
            if count < self.append_end {
                // SAFETY: `count < append_end <= slot_capacity` (the
                // invariant on `append_end`).
                let index = unsafe {
                    self.store
                        .push_occupied_unchecked(1, |index| make(index, 1))
                };
                return Ok((index, 1));
            }
            if count < self.append_limit {
                // The buffer is full (or `append_end` was lowered): grow.
                super::cold_path();
                let index = self.store.push_occupied_with(1, |index| make(index, 1));
                self.bound_appends();
                return Ok((index, 1));
            }
        }
        // An empty table's listed slots refill in index order instead
        // (`general_spot` resets the list; see `free_head`).
        let spot = if head < self.pop_below {
            if self.store.len() != 0 {
                Spot::LifoHead
            } else {
                self.out_of_line_spot()?
            }
        } else if head == SWEEP && self.sweep_is_ready() {
            // Filled here rather than through `Spot::Sweep` below: sharing
            // that arm with the out-of-line refill made the compiler route
            // this path through a jump and extra moves (an insertion into
            // an emptied table of 1,000 `u64`s took 0.99 to 1.01 times
            // SlotMap's time that way, 0.81 to 0.85 filled here).
            return Ok(self.fill_sweep(make));
        } else {
            self.out_of_line_spot()?
        };
        Ok(match spot {
            Spot::LifoHead => self.fill_free_head(make),
            Spot::FifoHead => {
                let filled = self.fill_free_head(make);
                if self.free_head == NO_SLOT {
                    self.free_tail = NO_SLOT;
                }
                filled
            }
            Spot::Sweep => self.fill_sweep(make),
            Spot::Append => (self.store.push_occupied_with(1, |index| make(index, 1)), 1),
        })
    }

    /// Picks the spot with [`general_spot`](Self::general_spot) and keeps
    /// the list ends it returns.
    #[inline(always)]
    fn out_of_line_spot(&mut self) -> Result<Spot, CapacityError> {
        let (spot, free_head, sweep) = Self::general_spot(self.spot_inputs(), self.store.states())?;
        (self.free_head, self.sweep) = (free_head, sweep);
        Ok(spot)
    }

    /// Whether the slot at `sweep` exists and is free (not retired).
    #[inline(always)]
    fn sweep_is_ready(&self) -> bool {
        self.sweep < self.store.slot_count()
            && refill_takes(
                // SAFETY: `sweep < slot_count`, checked first.
                unsafe { self.store.state_unchecked(self.sweep) },
                self.limits.max_generation,
            )
    }

    /// Pops the head of the free list (which must not be empty) and fills
    /// it with `make(index, generation)`. Leaves `free_tail` alone: under
    /// LIFO it is not kept, and the FIFO caller settles it.
    #[inline(always)]
    fn fill_free_head(&mut self, make: impl FnOnce(usize, u32) -> T) -> (usize, u32) {
        let index = self.free_head as usize;
        // SAFETY: the free list is not empty (the caller's check) and holds
        // only existing, vacant slots (the invariant on `free_head`).
        let (next, last_generation) = unsafe { self.store.vacant_parts_unchecked(index) };
        let generation = last_generation + 1;
        let value = make(index, generation);
        // SAFETY: as above; `make` did not touch the arena.
        unsafe { self.store.occupy_unchecked(index, generation, value) };
        self.free_head = next;
        (index, generation)
    }

    /// The `(index, generation)` the next insertion would get, or the
    /// error it would fail with; changes nothing. For fallible
    /// constructors, which must know the key before anything is inserted:
    /// [`try_insert_with`](Self::try_insert_with) right after it fills this
    /// very spot (it picks the spot the same way: the head of the free list
    /// if the policy reuses now, else the refill's next free slot, else an
    /// appended slot).
    pub(crate) fn next_spot(&self) -> Result<(usize, u32), CapacityError> {
        let count = self.store.slot_count();
        let (head, sweep) = self.list_ends();
        if head == SWEEP {
            // The refill's next slot that is not retired, if any; past the
            // last one the insertion appends.
            let states = self.store.states();
            if let Some((index, state)) = (sweep.min(count)..count).find_map(|index| {
                states
                    .get(index)
                    .filter(|&state| refill_takes(state, self.limits.max_generation))
                    .map(|state| (index, state))
            }) {
                // The state is `VACANT | last`: the generation is `last + 1`.
                return Ok((index, state - (VACANT - 1)));
            }
        } else if head != NO_SLOT && (head < self.pop_below || self.fifo_reuses()) {
            let last = self
                .store
                .slot(head as usize)
                .map_or(0, |slot| slot.generation());
            return Ok((head as usize, last + 1));
        }
        if count < self.append_limit {
            Ok((count, 1))
        } else {
            Err(self.full_error())
        }
    }

    /// Fills the slot at `sweep` (which `sweep_is_ready` found free) with
    /// `make(index, generation)` and moves `sweep` on.
    #[inline(always)]
    fn fill_sweep(&mut self, make: impl FnOnce(usize, u32) -> T) -> (usize, u32) {
        let index = self.sweep;
        // Every slot from `sweep` on is vacant (the invariant on
        // `free_head`): the state is `VACANT | last`, so this is `last + 1`.
        // SAFETY: `sweep_is_ready` checked that the slot exists.
        let generation = unsafe { self.store.state_unchecked(index) } - (VACANT - 1);
        let value = make(index, generation);
        // SAFETY: as above; `make` did not touch the arena.
        unsafe { self.store.occupy_unchecked(index, generation, value) };
        // At the end of the slots the next insertion ends the refill (out
        // of line, in `general_spot`), so this path checks nothing more.
        self.sweep = index + 1;
        (index, generation)
    }

    /// What [`general_spot`](Self::general_spot) decides from, copied out
    /// of the arena.
    #[inline(always)]
    fn spot_inputs(&self) -> SpotInputs {
        let (free_head, sweep) = self.list_ends();
        SpotInputs {
            free_head,
            sweep,
            slot_count: self.store.slot_count(),
            append_limit: self.append_limit,
            fifo_reuses: self.fifo_reuses(),
            max_generation: self.limits.max_generation,
            fixed_capacity: self.fixed_capacity,
            max_slots: self.limits.max_slots,
        }
    }

    /// Where an insertion goes when the inline fast paths do not apply:
    /// FIFO reuse, a refill that meets retired slots or ends, or an error;
    /// with the new `free_head` and `sweep`.
    ///
    /// It takes copies of what it needs and the state words, not the
    /// arena: a call that is given a pointer to the arena, even on a path
    /// never taken, makes the compiler assume the arena may change on
    /// every iteration of a caller's loop of insertions, and reload each
    /// of its fields from memory there (measured: 1.5x the time per
    /// `u64` insert of SlotMap, whose loop keeps them in registers).
    #[inline(never)]
    fn general_spot(
        inputs: SpotInputs,
        states: StateView<'_, T, L>,
    ) -> Result<(Spot, u32, usize), CapacityError> {
        let SpotInputs {
            mut free_head,
            mut sweep,
            slot_count,
            ..
        } = inputs;
        if free_head == SWEEP {
            // Skip the retired slots of the refill.
            while states
                .get(sweep)
                .is_some_and(|state| !refill_takes(state, inputs.max_generation))
            {
                sweep += 1;
            }
            if sweep < slot_count {
                return Ok((Spot::Sweep, free_head, sweep));
            }
            (free_head, sweep) = (NO_SLOT, NO_SWEEP);
        }
        if free_head != NO_SLOT && inputs.fifo_reuses {
            Ok((Spot::FifoHead, free_head, sweep))
        } else if slot_count < inputs.append_limit {
            Ok((Spot::Append, free_head, sweep))
        } else {
            Err(full_error(inputs.fixed_capacity, inputs.max_slots))
        }
    }

    /// Removes and returns the value named by `(index, generation)`.
    #[inline(always)]
    pub(crate) fn remove(&mut self, index: usize, generation: u32) -> Option<T> {
        let slot = self.store.slot(index)?;
        if !slot.matches(generation) {
            return None;
        }
        // An occupied slot's state is its generation, which matched.
        let slot_generation = Slot::<T>::matched_generation(generation);
        if slot_generation < self.lifo_below {
            // The common case: push the slot on the LIFO free list.
            // SAFETY: the slot matched a generation, so it is occupied.
            let value = unsafe { self.store.vacate(index, self.free_head) };
            // Even the removal that empties the table: the next insertion
            // resets the list (see `free_head`).
            self.free_head = index as u32;
            Some(value)
        } else {
            // FIFO, or a slot that retires: still inline and free of calls
            // (a call anywhere in a caller's loop of removals makes the
            // compiler reload every field of the arena on each iteration).
            // SAFETY: slot `index` exists and is occupied (it matched a
            // generation, and only occupied slots match).
            let value = unsafe { self.store.vacate(index, NO_SLOT) };
            self.file_vacated(index, slot_generation);
            Some(value)
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
        // SAFETY: the caller's guarantee is the store's.
        let value = unsafe { self.store.vacate(index, NO_SLOT) };
        self.release(index);
        value
    }

    /// Files the just-vacated slot `index`: retired if its generation ran
    /// out, else on the free list where the policy says. The slot was
    /// occupied, so it lies below `sweep`.
    #[inline]
    fn release(&mut self, index: usize) {
        let Some(generation) = self.store.slot(index).map(|slot| slot.generation()) else {
            return;
        };
        self.file_vacated(index, generation);
    }

    /// [`release`](Self::release) with the slot's generation already read.
    #[inline(always)]
    fn file_vacated(&mut self, index: usize, generation: u32) {
        if generation >= self.limits.max_generation {
            self.retired += 1;
            return;
        }
        let index32 = index as u32;
        match self.reuse {
            Reuse::Lifo => {
                self.set_link(index, self.free_head);
                self.free_head = index32;
            }
            Reuse::Fifo { .. } => {
                self.set_link(index, NO_SLOT);
                if self.free_tail == NO_SLOT {
                    self.free_head = index32;
                } else {
                    self.set_link(self.free_tail as usize, index32);
                }
                self.free_tail = index32;
            }
        }
    }

    /// Sets the free-list link of vacant slot `index`.
    #[inline]
    fn set_link(&mut self, index: usize, next: u32) {
        if let Some(slot) = self.store.slot_mut(index) {
            slot.set_next_free(next);
        }
    }

    /// Rebuilds the free list from scratch, in index order, and recounts the
    /// retired slots. Under LIFO reuse the next insertions then fill the
    /// lowest free slots first.
    pub(crate) fn rebuild_free_list(&mut self) {
        let (head, retired) = self.store.link_vacant(self.limits.max_generation);
        self.free_head = head;
        self.retired = retired;
        self.sweep = NO_SWEEP;
        // Only FIFO reuse keeps the tail; under LIFO it is stale by design.
        self.free_tail = match self.reuse {
            Reuse::Fifo { .. } => self.find_free_tail(),
            Reuse::Lifo => NO_SLOT,
        };
    }

    /// Drops every value; every slot keeps its generation, so old keys stay
    /// stale. If a `Drop` panics, the rest are still dropped, the free list
    /// is rebuilt, and the panic then propagates.
    pub(crate) fn clear(&mut self) {
        /// Rebuilds the free list if a value's `Drop` panics.
        struct Guard<'a, T, K, L: BufLayout>(&'a mut SlotArena<T, K, L>);
        impl<T, K, L: BufLayout> Drop for Guard<'_, T, K, L> {
            fn drop(&mut self) {
                self.0.rebuild_free_list();
            }
        }
        let guard = Guard(self);
        guard.0.store.drop_values();
        // The guard's drop rebuilds the free list, panic or not.
        drop(guard);
    }

    /// Keeps only the values for which `keep(index, generation, &mut value)`
    /// is true. If `keep` or a `Drop` panics, the values not yet visited
    /// stay in the arena.
    pub(crate) fn retain(&mut self, keep: impl FnMut(usize, u32, &mut T) -> bool) {
        SlotStore::retain_with(self, keep, |arena, index| {
            // SAFETY: `retain_with` evicts only occupied slots it just
            // visited.
            drop(unsafe { arena.detach(index) });
        });
    }

    /// Takes the value named by `(index, generation)` out but keeps its
    /// slot reserved (detached): no insertion is given the slot until
    /// [`reattach_slot`](Self::reattach_slot) fills it again under the same
    /// generation. `None` if the pair names no live value.
    ///
    /// The slot is parked as a vacant slot at the last generation, which
    /// every other path (the free list and its rebuild, the retired count,
    /// `clear`, clone, serialization) already keeps out of use; the
    /// generation to restore is kept in `detached`.
    pub(crate) fn detach_slot(&mut self, index: usize, generation: u32) -> Option<T> {
        if !self.store.contains(index, generation) {
            return None;
        }
        // Insert first: if the map's allocation fails, nothing has changed.
        // An index that exists fits in a `u32` (invariant on `store`).
        self.detached.insert(index as u32, generation);
        // SAFETY: the slot exists and is occupied: it matched a generation.
        let value = unsafe { self.store.vacate(index, NO_SLOT) };
        self.store
            .set_vacant_generation(index, self.limits.max_generation);
        self.retired += 1;
        Some(value)
    }

    /// Whether `(index, generation)` names a detached slot.
    pub(crate) fn is_detached(&self, index: usize, generation: u32) -> bool {
        u32::try_from(index).is_ok_and(|index| self.detached.get(&index) == Some(&generation))
    }

    /// Puts `value` back into the detached slot `(index, generation)`, which
    /// makes that key valid again; gives the value back if the pair does
    /// not name a detached slot.
    pub(crate) fn reattach_slot(
        &mut self,
        index: usize,
        generation: u32,
        value: T,
    ) -> Result<(), T> {
        if !self.is_detached(index, generation) {
            return Err(value);
        }
        if self.sweep != NO_SWEEP && index >= self.sweep {
            // Every slot from `sweep` on must stay vacant (the invariant on
            // `free_head`): end the refill, listing its free slots.
            self.rebuild_free_list();
        }
        self.detached.remove(&(index as u32));
        self.retired -= 1;
        // The slot exists and is vacant (invariant on `detached`).
        self.store.occupy(index, generation, value);
        Ok(())
    }

    /// The detached slots, as `(index, generation)` in index order; for
    /// serialization.
    #[cfg(feature = "serde")]
    pub(crate) fn detached_slots(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.detached
            .iter()
            .map(|(&index, &generation)| (index, generation))
    }

    /// Iterates the live values in index order.
    #[inline]
    pub(crate) fn iter(&self) -> RawIter<'_, T, L> {
        self.store.iter()
    }

    /// Iterates the live values in index order, mutably.
    #[inline]
    pub(crate) fn iter_mut(&mut self) -> RawIterMut<'_, T, L> {
        self.store.iter_mut()
    }

    /// Removes the value at the lowest occupied index at or after `from`.
    #[inline]
    pub(crate) fn take_next(&mut self, from: usize) -> Option<(usize, u32, T)> {
        let index = self.store.next_occupied(from)?;
        let generation = self.store.slot(index).map_or(0, |slot| slot.generation());
        // SAFETY: the bit was set, so the slot exists and is occupied.
        let value = unsafe { self.detach(index) };
        Some((index, generation, value))
    }

    /// The slots in index order, for serialization. Exposes only safe
    /// accessors.
    #[inline]
    #[cfg(feature = "serde")]
    pub(crate) fn slot_refs(&self) -> super::store::SlotRefs<'_, T, L> {
        self.store.slot_refs()
    }

    /// Appends an occupied slot; for deserialization. Checks the limits.
    #[cfg(feature = "serde")]
    pub(crate) fn push_occupied(&mut self, generation: u32, value: T) -> Result<(), BuildError> {
        self.check_push(generation)?;
        if generation == 0 {
            return Err(BuildError::Generation(generation));
        }
        self.store.push_occupied_with(generation, |_| value);
        Ok(())
    }

    /// Appends a vacant slot whose last generation was `generation`; for
    /// deserialization. Call [`SlotArena::finish_build`] after the last one.
    #[cfg(feature = "serde")]
    pub(crate) fn push_vacant(&mut self, generation: u32) -> Result<(), BuildError> {
        self.check_push(generation)?;
        self.store.push_vacant(generation, NO_SLOT);
        Ok(())
    }

    #[cfg(feature = "serde")]
    fn check_push(&self, generation: u32) -> Result<(), BuildError> {
        if self.store.slot_count() >= self.limits.max_slots {
            return Err(BuildError::TooManySlots(self.limits.max_slots));
        }
        if generation > self.limits.max_generation {
            return Err(BuildError::Generation(generation));
        }
        Ok(())
    }

    /// Marks slot `index` detached for key generation `generation`; for
    /// deserialization, after [`finish_build`](Self::finish_build). The
    /// slot must be vacant at the last generation (as a detached slot is
    /// serialized) and not detached already, and `generation` must be one
    /// the key type can carry.
    #[cfg(feature = "serde")]
    pub(crate) fn restore_detached(
        &mut self,
        index: u32,
        generation: u32,
    ) -> Result<(), BuildError> {
        let parked = self.store.slot(index as usize).is_some_and(|slot| {
            !slot.is_occupied() && slot.generation() == self.limits.max_generation
        });
        if !parked || self.detached.contains_key(&index) {
            return Err(BuildError::Layout(
                "a detached slot must be a distinct vacant slot at the last generation",
            ));
        }
        if generation == 0 || generation > self.limits.max_generation {
            return Err(BuildError::Generation(generation));
        }
        // The rebuild counted the slot as retired, as `detach_slot` does.
        self.detached.insert(index, generation);
        Ok(())
    }

    /// The slots alone, for a container without a free list.
    #[cfg(feature = "serde")]
    pub(crate) fn into_store(mut self) -> SlotStore<T, L> {
        mem::replace(&mut self.store, SlotStore::new())
    }

    /// Links the free list after a series of `push_*` calls.
    #[cfg(feature = "serde")]
    pub(crate) fn finish_build(&mut self) {
        self.rebuild_free_list();
    }

    /// Checks every invariant of the arena and panics with a description of
    /// the first one broken. O(slots); for tests and fuzzing.
    pub(crate) fn check_invariants(&self) {
        self.store.check_invariants();
        let slots = self.store.slot_count();
        assert!(
            slots <= self.limits.max_slots,
            "more slots than the key can index"
        );
        assert_eq!(
            self.append_limit,
            self.fixed_capacity.unwrap_or(self.limits.max_slots),
            "append limit is stale"
        );
        assert!(
            self.append_end <= self.store.slot_capacity().min(self.append_limit),
            "inline appends bounded past the buffer or the limit"
        );
        if let Some(fixed) = self.fixed_capacity {
            assert!(slots <= fixed, "fixed capacity exceeded");
            assert!(
                self.store.slot_capacity() >= fixed,
                "fixed allocation shrank"
            );
        }
        let mut retired = 0;
        for index in 0..slots {
            let Some(slot) = self.store.slot(index) else {
                continue;
            };
            assert!(slot.generation() <= self.limits.max_generation);
            if !slot.is_occupied() && slot.generation() >= self.limits.max_generation {
                retired += 1;
            }
        }
        assert_eq!(retired, self.retired, "retired count is wrong");
        assert_eq!(
            (self.pop_below, self.lifo_below),
            match self.reuse {
                Reuse::Lifo => (SWEEP, self.limits.max_generation),
                Reuse::Fifo { .. } => (0, 0),
            },
            "the folded policy disagrees with the reuse policy"
        );
        for (&index, &generation) in self.detached.iter() {
            let Some(slot) = self.store.slot(index as usize) else {
                panic!("detached slot {index} does not exist");
            };
            assert!(
                !slot.is_occupied() && slot.generation() == self.limits.max_generation,
                "detached slot {index} is not parked (vacant at the last generation)"
            );
            assert!(
                (1..=self.limits.max_generation).contains(&generation),
                "detached slot {index} keeps generation {generation}, out of range"
            );
        }
        let mut seen = alloc::vec![false; slots];
        let mut cursor = self.free_head;
        let mut last = NO_SLOT;
        let mut listed = 0;
        while cursor != NO_SLOT && cursor != SWEEP {
            let index = cursor as usize;
            let Some(slot) = self.store.slot(index) else {
                panic!("free list points past the slots");
            };
            assert!(
                !seen[index],
                "free list has a cycle or a duplicate at {index}"
            );
            seen[index] = true;
            assert!(!slot.is_occupied(), "free list holds occupied slot {index}");
            assert!(
                slot.generation() < self.limits.max_generation,
                "free list holds retired slot {index}"
            );
            listed += 1;
            last = cursor;
            cursor = slot.next_free();
        }
        if matches!(self.reuse, Reuse::Fifo { .. }) {
            assert_eq!(cursor, NO_SLOT, "a FIFO list ends in the refill");
            assert_eq!(last, self.free_tail, "free list tail is wrong");
        }
        let mut swept = 0;
        if cursor == SWEEP {
            assert!(self.sweep <= slots, "the refill is past the slots");
            for (index, &listed) in seen.iter().enumerate().skip(self.sweep) {
                let slot = self.store.slot(index).expect("index below slot_count");
                assert!(!slot.is_occupied(), "refill slot {index} is occupied");
                assert!(!listed, "refill slot {index} is also listed");
                if slot.generation() < self.limits.max_generation {
                    swept += 1;
                }
            }
        } else {
            assert_eq!(self.sweep, NO_SWEEP, "a refill without a list ending in it");
        }
        assert_eq!(
            self.store.len() + retired + listed + swept,
            slots,
            "a vacant slot is neither free nor retired"
        );
    }
}

impl<T, K, L: BufLayout> Drop for SlotArena<T, K, L> {
    /// Drops the detached-slot map out of line, moved out first (the store
    /// drops the values itself). The map's own drop is a loop that is not
    /// inlined; run on the field, it is handed a pointer into the arena,
    /// and a call that may keep a pointer to the arena, even on the
    /// unwinding path of a caller's loop of insertions, makes the compiler
    /// reload every field of the arena from memory on each iteration (seen
    /// in the disassembly of a user's loop of inserts; with the map moved
    /// out, the fields stay in registers).
    #[inline]
    fn drop(&mut self) {
        drop_detached(mem::take(&mut *self.detached));
    }
}

/// Drops a detached-slot map: given by value, so that the arena it came
/// from is not handed out (see `SlotArena`'s `Drop`).
#[inline(never)]
fn drop_detached(map: BTreeMap<u32, u32>) {
    drop(map);
}

impl<T, K, L: BufLayout> AsMut<SlotStore<T, L>> for SlotArena<T, K, L> {
    fn as_mut(&mut self) -> &mut SlotStore<T, L> {
        &mut self.store
    }
}

/// Why a series of `push_*` calls could not build an arena.
#[cfg(feature = "serde")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BuildError {
    /// More slots than the key type can index.
    TooManySlots(usize),
    /// A generation out of range.
    Generation(u32),
    /// A structure the container cannot have (block sizes, a block's
    /// length or floor).
    Layout(&'static str),
    /// Room for the slots could not be made.
    Capacity(crate::CapacityError),
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
            BuildError::Layout(what) => f.write_str(what),
            BuildError::Capacity(error) => write!(f, "{error}"),
        }
    }
}

impl<T: Clone, K, L: BufLayout> Clone for SlotArena<T, K, L> {
    fn clone(&self) -> Self {
        let mut store =
            SlotStore::with_capacity(self.fixed_capacity.unwrap_or(self.store.slot_count()));
        store.clone_slots_from(&self.store);
        let mut arena = self.header();
        arena.store = store;
        arena.bound_appends();
        arena
    }

    fn clone_from(&mut self, source: &Self) {
        /// Repairs the free list and counts if a `clone` panics, so the
        /// target stays a sound arena holding what was cloned so far.
        struct Guard<'a, T, K, L: BufLayout>(&'a mut SlotArena<T, K, L>);
        impl<T, K, L: BufLayout> Drop for Guard<'_, T, K, L> {
            fn drop(&mut self) {
                self.0.rebuild_free_list();
            }
        }
        self.limits = source.limits;
        self.reuse = source.reuse;
        self.pop_below = source.pop_below;
        self.lifo_below = source.lifo_below;
        // Until the end, no slot is detached: on a panic the rebuild below
        // counts the parked slots cloned so far as retired, which is sound.
        self.detached.clear();
        self.fix_capacity(source.fixed_capacity);
        // From here on a panic (an old value's `Drop`, or a `clone`) leaves
        // the slots that exist at that point, with a rebuilt free list.
        let guard = Guard(self);
        guard.0.store.reset();
        if let Some(fixed) = guard.0.fixed_capacity {
            let _ = guard.0.store.try_reserve_slots(fixed);
        }
        guard.0.store.clone_slots_from(&source.store);
        mem::forget(guard);
        self.free_head = source.free_head;
        self.free_tail = source.free_tail;
        self.retired = source.retired;
        self.sweep = source.sweep;
        self.detached.clone_from(&source.detached);
        self.bound_appends();
    }
}

impl<T, K, L: BufLayout> SlotArena<T, K, L> {
    /// Everything but the slots, for building a copy.
    fn header<U>(&self) -> SlotArena<U, K, L> {
        SlotArena {
            store: SlotStore::new(),
            free_head: self.free_head,
            free_tail: self.free_tail,
            retired: self.retired,
            detached: self.detached.clone(),
            reuse: self.reuse,
            sweep: self.sweep,
            pop_below: self.pop_below,
            lifo_below: self.lifo_below,
            fixed_capacity: self.fixed_capacity,
            append_limit: self.append_limit,
            append_end: 0,
            limits: self.limits,
            _key: PhantomData,
        }
    }
}

/// The keyed face of the arena: what hands out keys. Every index and
/// generation here is one of the arena's own slots, made within the limits
/// of `K` (the invariant on `limits`), which is what `table_key` asks.
impl<T, K: Key, L: BufLayout> SlotArena<T, K, L> {
    /// The key of `(index, generation)`, parts of this arena's own slots.
    ///
    /// # Safety
    ///
    /// `index` and `generation` are those of a slot of this arena that
    /// holds or held a value under that generation.
    #[inline(always)]
    unsafe fn own_key(index: usize, generation: u32) -> K {
        // SAFETY: the caller's guarantee, and the arena's limits are no
        // wider than those of `K`.
        unsafe { table_key(index, generation) }
    }

    /// Inserts `make(key)` and returns its slot index and `key`, or the
    /// error of a full arena (see [`try_insert_with`](Self::try_insert_with)).
    /// The index is given apart: a hand-written key may not give it back.
    #[inline(always)]
    pub(crate) fn try_insert_at(
        &mut self,
        make: impl FnOnce(K) -> T,
    ) -> Result<(usize, K), CapacityError> {
        let (index, generation) = self.try_insert_with(|index, generation| {
            // SAFETY: the slot the insertion fills, under its new generation.
            make(unsafe { Self::own_key(index, generation) })
        })?;
        // SAFETY: as above.
        Ok((index, unsafe { Self::own_key(index, generation) }))
    }

    /// The key the next insertion will get (see
    /// [`next_spot`](Self::next_spot)).
    #[inline]
    pub(crate) fn next_key(&self) -> Result<K, CapacityError> {
        let (index, generation) = self.next_spot()?;
        // `next_spot` names a slot of this arena (an existing one or the
        // next appended, below `append_limit`).
        // SAFETY: and a generation it may take (at most `max_generation`).
        Ok(unsafe { Self::own_key(index, generation) })
    }

    /// The key of the value at `index`, if the slot is occupied.
    #[inline]
    pub(crate) fn key_at(&self, index: usize) -> Option<K> {
        let slot = self.store.slot(index)?;
        slot.is_occupied().then(|| {
            // SAFETY: an occupied slot of this arena, under its generation.
            unsafe { Self::own_key(index, slot.generation()) }
        })
    }
}

// SAFETY: the arena's slots, under the generations they held; its limits
// are those of `K` or narrower.
unsafe impl<T, K: Key, L: BufLayout> TakeSlots<T> for SlotArena<T, K, L> {
    type Key = K;
    #[inline]
    fn take_slot(&mut self, from: usize) -> Option<(usize, u32, T)> {
        SlotArena::take_next(self, from)
    }
    #[inline]
    fn len(&self) -> usize {
        SlotArena::len(self)
    }
    fn clear(&mut self) {
        SlotArena::clear(self);
    }
}

// SAFETY: every index and generation the arena hands out is one of its own
// slots (`try_insert_with` and `next_spot` name the slot they fill, and
// `retain` visits occupied slots), within its limits, which are those of
// `K`; its passes walk its own slots.
#[allow(private_interfaces)]
unsafe impl<T, K: Key, L: BufLayout> RawTable<T> for SlotArena<T, K, L> {
    type Blocks = L;

    const EMPTY: Self = SlotArena::new(KeyLimits::of::<K>());

    #[inline]
    fn iter(&self) -> RawIter<'_, T, L> {
        SlotArena::iter(self)
    }

    #[inline]
    fn iter_mut(&mut self) -> RawIterMut<'_, T, L> {
        SlotArena::iter_mut(self)
    }

    fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        SlotArena::try_reserve(self, additional)
    }

    // Forced, as the inherent `try_insert_with` is.
    #[inline(always)]
    fn try_insert_with(
        &mut self,
        make: impl FnOnce(usize, u32) -> T,
    ) -> Result<(usize, u32), CapacityError> {
        SlotArena::try_insert_with(self, make)
    }

    #[inline]
    fn next_spot(&mut self) -> Result<(usize, u32), CapacityError> {
        SlotArena::next_spot(self)
    }

    #[inline]
    fn contains(&self, index: usize, generation: u32) -> bool {
        SlotArena::contains(self, index, generation)
    }

    #[inline]
    fn get(&self, index: usize, generation: u32) -> Option<&T> {
        SlotArena::get(self, index, generation)
    }

    #[inline]
    fn get_mut(&mut self, index: usize, generation: u32) -> Option<&mut T> {
        SlotArena::get_mut(self, index, generation)
    }

    // `get_ptr` and `block_count` are the view's for block storages only
    // (`stable.rs`); a slot array answers them for completeness, but no
    // public call reaches these two.
    #[inline]
    fn get_ptr(&self, index: usize, generation: u32) -> Option<NonNull<T>> {
        SlotArena::get(self, index, generation).map(NonNull::from)
    }

    #[inline]
    unsafe fn get_unchecked(&self, index: usize) -> &T {
        // SAFETY: the caller's guarantee (an occupied slot) is the
        // inherent method's.
        unsafe { SlotArena::get_unchecked(self, index) }
    }

    #[inline]
    unsafe fn get_unchecked_mut(&mut self, index: usize) -> &mut T {
        // SAFETY: as for `get_unchecked`.
        unsafe { SlotArena::get_unchecked_mut(self, index) }
    }

    #[inline]
    fn get_disjoint_mut<const N: usize>(&mut self, keys: [(usize, u32); N]) -> Option<[&mut T; N]> {
        SlotArena::get_disjoint_mut(self, keys)
    }

    // Forced, as the view's `remove` is.
    #[inline(always)]
    fn remove(&mut self, index: usize, generation: u32) -> Option<T> {
        SlotArena::remove(self, index, generation)
    }

    fn retain(&mut self, keep: impl FnMut(usize, u32, &mut T) -> bool) {
        SlotArena::retain(self, keep);
    }

    #[inline]
    fn capacity(&self) -> usize {
        SlotArena::capacity(self)
    }

    #[inline]
    fn fixed_capacity(&self) -> Option<usize> {
        self.fixed_capacity
    }

    #[inline]
    fn retired(&self) -> usize {
        SlotArena::retired(self)
    }

    /// The slot array's allocation.
    fn heap_bytes(&self) -> usize {
        self.store.heap_bytes()
    }

    /// A slot array is one block, once allocated.
    fn block_count(&self) -> usize {
        usize::from(self.store.slot_capacity() != 0)
    }

    fn check_invariants(&self) {
        SlotArena::check_invariants(self);
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::{String, ToString};
    use alloc::vec::Vec;

    use super::{KeyLimits, SlotArena};
    use crate::raw::buf::{BufLayout, InterleavedLayout, SplitLayout};
    use crate::Reuse;

    /// Small limits, so that slots retire within a test.
    const LIMITS: KeyLimits = KeyLimits {
        max_slots: 1 << 12,
        max_generation: 6,
    };

    /// A little generator (SplitMix64), so runs repeat.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % n as u64) as usize
        }
    }

    /// What an arena looks like from outside: its live `(index,
    /// generation, value)` in index order, its retired count and the index
    /// of its next spot.
    type Seen = (Vec<(usize, u32, String)>, usize, usize);

    /// What `arena` looks like from outside (see [`Seen`]).
    fn observe<L: BufLayout>(arena: &SlotArena<String, crate::Id, L>) -> Seen {
        arena.check_invariants();
        let live: Vec<_> = arena
            .iter()
            .map(|(index, generation, value)| (index, generation, value.clone()))
            .collect();
        assert_eq!(live.len(), arena.len());
        for (index, generation, value) in &live {
            assert_eq!(arena.get(*index, *generation), Some(value));
        }
        (
            live,
            arena.retired(),
            arena.next_spot().map_or(usize::MAX, |s| s.0),
        )
    }

    /// Runs one seeded series of operations on an arena of layout `L` and
    /// returns what it saw after each (under Miri, after some).
    fn run<L: BufLayout>(seed: u64, steps: usize) -> Vec<Seen> {
        let mut rng = Rng(seed);
        let mut arena = SlotArena::<String, crate::Id, L>::new(LIMITS);
        let mut keys: Vec<(usize, u32)> = Vec::new();
        let mut detached: Vec<((usize, u32), String)> = Vec::new();
        let mut seen = Vec::new();
        for step in 0..steps {
            match rng.below(20) {
                0..=7 => {
                    let key = arena
                        .try_insert_with(|index, generation| {
                            alloc::format!("{index}v{generation}s{step}")
                        })
                        .expect("room");
                    keys.push(key);
                }
                8..=12 if !keys.is_empty() => {
                    let (index, generation) = keys.swap_remove(rng.below(keys.len()));
                    let value = arena.remove(index, generation).expect("live");
                    assert!(value.starts_with(&alloc::format!("{index}v{generation}s")));
                    // A stale key misses.
                    assert_eq!(arena.remove(index, generation), None);
                    assert!(!arena.contains(index, generation));
                }
                13 if !keys.is_empty() => {
                    let key = keys.swap_remove(rng.below(keys.len()));
                    let value = arena.detach_slot(key.0, key.1).expect("live");
                    detached.push((key, value));
                }
                14 if !detached.is_empty() => {
                    let (key, value) = detached.swap_remove(rng.below(detached.len()));
                    assert!(arena.is_detached(key.0, key.1));
                    arena.reattach_slot(key.0, key.1, value).expect("detached");
                    keys.push(key);
                }
                15 => {
                    let keep = rng.below(3);
                    arena.retain(|index, _, value| {
                        value.push('.');
                        (index + keep) % 3 != 0
                    });
                    keys.retain(|&(index, generation)| arena.contains(index, generation));
                }
                16 => {
                    let reuse = if rng.below(2) == 0 {
                        Reuse::Lifo
                    } else {
                        Reuse::Fifo {
                            min_free: rng.below(4) as u32,
                        }
                    };
                    arena.set_reuse(reuse);
                }
                17 => {
                    for (_, _, value) in arena.iter_mut() {
                        value.push('!');
                    }
                }
                18 => {
                    let copy = arena.clone();
                    assert_eq!(observe(&copy), observe(&arena));
                    arena = copy;
                    if rng.below(4) == 0 {
                        arena.shrink_to_fit();
                    }
                }
                19 if rng.below(8) == 0 => {
                    arena.clear();
                    keys.clear();
                }
                _ => {}
            }
            // Under Miri, after every third step and the last: a look
            // reads every slot, and took most of the test's time there.
            if !cfg!(miri) || step % 3 == 2 || step + 1 == steps {
                seen.push(observe(&arena));
            }
        }
        seen
    }

    /// The interleaved layout runs the same policy as the split one: the
    /// same keys, values, retirements and reuse order, step for step.
    /// Inline appends (see `append_end`) stop at the key's limit though the
    /// buffer has room past it, at a fixed capacity, and at a buffer that
    /// `shrink_to_fit` made smaller; each arena is checked after every step.
    fn appends_stay_within<L: BufLayout>() {
        let tiny = KeyLimits {
            max_slots: 5,
            max_generation: 6,
        };
        let mut limited = SlotArena::<u64, crate::Id, L>::new(tiny);
        for n in 0..5 {
            assert_eq!(
                limited.try_insert_with(|_, _| n).expect("room").0,
                n as usize
            );
            limited.check_invariants();
        }
        assert!(
            limited.store.slot_capacity() > 5,
            "the buffer has room past the limit"
        );
        assert!(limited.try_insert_with(|_, _| 5).is_err());
        limited.check_invariants();

        let mut fixed = SlotArena::<u64, crate::Id, L>::with_fixed_capacity(LIMITS, 3);
        for n in 0..3 {
            fixed.try_insert_with(|_, _| n).expect("room");
            fixed.check_invariants();
        }
        assert!(fixed.try_insert_with(|_, _| 3).is_err());

        let mut shrunk = SlotArena::<u64, crate::Id, L>::new(LIMITS);
        for n in 0..70 {
            shrunk.try_insert_with(|_, _| n).expect("room");
        }
        assert!(shrunk.store.slot_capacity() > 70);
        shrunk.shrink_to_fit();
        shrunk.check_invariants();
        for n in 70..200 {
            assert_eq!(
                shrunk.try_insert_with(|_, _| n).expect("room"),
                (n as usize, 1)
            );
            // Under Miri every tenth: each check reads every slot.
            if !cfg!(miri) || n % 10 == 0 {
                shrunk.check_invariants();
            }
        }
        shrunk.check_invariants();
        assert!((0..200).all(|n| shrunk.get(n, 1) == Some(&(n as u64))));
    }

    #[test]
    fn appends_stay_within_room_and_limit() {
        appends_stay_within::<SplitLayout>();
        appends_stay_within::<InterleavedLayout>();
    }

    #[test]
    fn both_layouts_behave_alike() {
        let (seeds, steps) = if cfg!(miri) { (1, 150) } else { (20, 800) };
        for seed in 0..seeds {
            let split = run::<SplitLayout>(seed, steps);
            let interleaved = run::<InterleavedLayout>(seed, steps);
            assert_eq!(split, interleaved, "seed {seed}");
        }
    }

    /// Iteration over an interleaved arena, split for parallel passes,
    /// yields every value once and in order (Miri checks that the `&mut`s
    /// of the parts never alias).
    #[test]
    fn interleaved_iteration_splits() {
        let slots: usize = if cfg!(miri) {
            crate::raw::scan::JUST_PAST_SPLIT
        } else {
            5000
        };
        let mut arena =
            SlotArena::<u64, crate::Id, InterleavedLayout>::new(KeyLimits::of::<crate::Id>());
        let keys: Vec<_> = (0..slots as u64)
            .map(|value| arena.try_insert_with(|_, _| value).expect("room"))
            .collect();
        for &(index, generation) in keys.iter().filter(|key| key.0 % 3 == 1) {
            arena.remove(index, generation);
        }
        let (expected, parts) = crate::raw::check_split_round!(arena);
        assert!(parts > 1);
        assert_eq!(expected.len(), (0..slots).filter(|i| i % 3 != 1).count());
        let values: Vec<u64> = arena.iter().map(|(_, _, value)| *value).collect();
        let want: Vec<u64> = expected.iter().map(|&(_, _, value)| value + 1).collect();
        assert_eq!(values, want);
        // A value's `Drop` is run once per value, through the same walk.
        let mut strings = SlotArena::<String, crate::Id, InterleavedLayout>::new(LIMITS);
        for n in 0..100 {
            strings.try_insert_with(|_, _| n.to_string()).expect("room");
        }
        strings.retain(|index, _, _| index % 2 == 0);
        assert_eq!(strings.iter().count(), 50);
        drop(strings);
    }
}
