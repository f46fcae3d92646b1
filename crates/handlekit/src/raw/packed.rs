//! `Packed`: the two halves of a [`PackedTable`](crate::PackedTable), a
//! slot arena of dense positions (the sparse side) and the dense keys and
//! values, as one type, so that the invariant tying them together is kept
//! here and the table's unchecked positions rest on this file alone. Every
//! change to either half goes through a method below; the table reads the
//! halves through `sparse()` and `dense()` and writes values in place
//! through `values_mut()`, which moves nothing.

#[cfg(feature = "serde")]
use alloc::string::String;
use alloc::vec;
use core::cmp::Ordering;

use super::dense::{Dense, Positions};
use super::keyed::lookup_generation;
#[cfg(feature = "serde")]
use super::table::RawTable;
use super::{InterleavedLayout, KeyLimits, SlotArena};
use crate::{CapacityError, Key, Reuse};

/// A packed table's sparse and dense sides.
pub(crate) struct Packed<T, K: Key> {
    /// Slot per key, holding the key's dense position. Invariant: an
    /// occupied slot holds a position below `dense.len()`, and with a
    /// trusted key type (`TRUSTED`) `dense.keys[p]` names the slot that
    /// holds `p` (`len` live slots, a bijection onto `0..len`).
    sparse: SlotArena<u32, K, InterleavedLayout>,
    /// Invariant: `keys.len() == values.len()` (every push follows
    /// `reserve_one` or fits a fixed capacity, so none stops halfway).
    dense: Dense<K, T>,
}

impl<T, K: Key> Packed<T, K> {
    /// Whether the key type vouches for its parts ([`Key::__PARTS_TRUST`]).
    /// Then the invariant on `sparse` holds whatever keys a user passes,
    /// and the positions it gives are used unchecked. What keeps it:
    ///
    /// - A user's key only ever finds an occupied slot (the slot core's
    ///   generation compare), whose position is in range.
    /// - The dense keys are the sparse arena's own (from its insertion) or
    ///   the very key `reattach` filled the slot under, so each names its
    ///   slot; removals and moves take the slot apart through them exactly.
    /// - Every change to the two sides completes without a call into user
    ///   code in between (values are made before and dropped after), and
    ///   `retain`, `clone_from` and `clear` keep or restore it on a panic.
    ///
    /// With an untrusted key type a lying key could leave a slot pointing
    /// past the values, so every position is checked instead.
    pub(crate) const TRUSTED: bool = K::__PARTS_TRUST.0;

    /// An empty table.
    pub(crate) const fn new() -> Self {
        Packed {
            sparse: SlotArena::new(KeyLimits::of::<K>()),
            dense: Dense::new(),
        }
    }

    /// An empty table with room for `capacity` values.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Packed {
            sparse: SlotArena::with_capacity(KeyLimits::of::<K>(), capacity),
            dense: Dense::with_capacity(capacity),
        }
    }

    /// A table that allocates room for `capacity` values now and never
    /// reallocates.
    pub(crate) fn with_fixed_capacity(capacity: usize) -> Self {
        Packed {
            sparse: SlotArena::with_fixed_capacity(KeyLimits::of::<K>(), capacity),
            dense: Dense::with_capacity(capacity),
        }
    }

    /// The table over `sparse` and `values`, if every live slot points at
    /// a distinct position below `values.len()` and there are as many
    /// live slots as values (for deserialization).
    #[cfg(feature = "serde")]
    pub(crate) fn from_parts(
        sparse: SlotArena<u32, K, InterleavedLayout>,
        values: alloc::vec::Vec<T>,
    ) -> Result<Self, String> {
        use alloc::format;
        if sparse.len() != values.len() {
            return Err(format!(
                "{} live slots but {} values",
                sparse.len(),
                values.len()
            ));
        }
        let mut keys: alloc::vec::Vec<Option<K>> = alloc::vec![None; values.len()];
        for (key, &position) in sparse.keyed_iter() {
            let entry = keys
                .get_mut(position as usize)
                .ok_or_else(|| format!("position {position} out of range"))?;
            if entry.is_some() {
                return Err(format!("position {position} used twice"));
            }
            *entry = Some(key);
        }
        // All `len` positions are filled: `len` live slots, none twice.
        let keys = keys.into_iter().flatten().collect();
        Ok(Packed {
            sparse,
            dense: Dense { keys, values },
        })
    }

    /// The sparse side, to read.
    #[inline(always)]
    pub(crate) fn sparse(&self) -> &SlotArena<u32, K, InterleavedLayout> {
        &self.sparse
    }

    /// The dense side, to read.
    #[inline(always)]
    pub(crate) fn dense(&self) -> &Dense<K, T> {
        &self.dense
    }

    /// The values in dense order, to write in place.
    #[inline(always)]
    pub(crate) fn values_mut(&mut self) -> &mut [T] {
        &mut self.dense.values
    }

    /// The keys and the values in dense order, the values to write in
    /// place.
    #[inline(always)]
    pub(crate) fn slices_mut(&mut self) -> (&[K], &mut [T]) {
        (&self.dense.keys, &mut self.dense.values)
    }

    /// The dense keys and values, taken apart.
    #[inline]
    pub(crate) fn into_dense(self) -> Dense<K, T> {
        self.dense
    }

    /// See [`SlotArena::set_reuse`].
    pub(crate) fn set_reuse(&mut self, reuse: Reuse) {
        self.sparse.set_reuse(reuse);
    }

    /// Makes room for `additional` more values on both sides (the dense
    /// side of a fixed table has it already).
    pub(crate) fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        self.sparse.try_reserve(additional)?;
        if self.sparse.fixed_capacity().is_none() {
            self.dense
                .values
                .try_reserve(additional)
                .map_err(|_| CapacityError::alloc())?;
            self.dense
                .keys
                .try_reserve(additional)
                .map_err(|_| CapacityError::alloc())?;
        }
        Ok(())
    }

    /// Frees unused capacity, unless the table is fixed.
    pub(crate) fn shrink_to_fit(&mut self) {
        if self.sparse.fixed_capacity().is_none() {
            self.sparse.shrink_to_fit();
            self.dense.values.shrink_to_fit();
            self.dense.keys.shrink_to_fit();
        }
    }

    /// Removes every value.
    pub(crate) fn clear(&mut self) {
        // Invalidate the keys first, so a panicking `Drop` below leaves a
        // consistent (empty) table.
        self.sparse.clear();
        self.dense.clear();
    }

    /// Inserts `make(key)` and returns `key`, or fails if the table is
    /// full (before `make` is called). Forced inline, as `IdTable`'s
    /// insertion is: out of line, the result went through memory and the
    /// table's fields were reloaded on every call (86 instructions per
    /// insert at 100k u64 against DenseSlotMap's 61).
    #[inline(always)]
    pub(crate) fn try_insert_keyed(
        &mut self,
        make: impl FnOnce(K) -> T,
    ) -> Result<K, CapacityError> {
        // Make room first, so nothing can fail once the slot is taken. A
        // fixed-capacity table has its room already and must not move.
        if self.sparse.fixed_capacity().is_none() {
            self.dense.reserve_one();
        }
        let position = self.dense.len() as u32;
        let mut value = None;
        let (_, key) = self.sparse.try_insert_at(|key| {
            value = Some(make(key));
            position
        })?;
        if let Some(value) = value {
            self.dense.push(key, value);
        }
        Ok(key)
    }

    /// The dense position of a live key.
    #[inline]
    pub(crate) fn position(&self, key: K) -> Option<usize> {
        self.sparse
            .get(key.index(), lookup_generation(key))
            .map(|&position| position as usize)
    }

    /// The dense position of a live key, where the optimizer knows it is
    /// in bounds for a trusted key type, so the callers' bounds checks
    /// fold away.
    #[inline(always)]
    fn value_position(&self, key: K) -> Option<usize> {
        let position = self.position(key)?;
        if Self::TRUSTED {
            debug_assert!(position < self.dense.values.len());
            // A key finds only an occupied slot, and with a trusted key
            // type every occupied slot holds a position below `len` (see
            // `TRUSTED`).
            // SAFETY: so `position` is in bounds.
            unsafe { core::hint::assert_unchecked(position < self.dense.values.len()) };
        }
        Some(position)
    }

    /// The value for `key`.
    #[inline]
    pub(crate) fn get(&self, key: K) -> Option<&T> {
        self.dense.values.get(self.value_position(key)?)
    }

    /// The value for `key`, mutably.
    #[inline]
    pub(crate) fn get_mut(&mut self, key: K) -> Option<&mut T> {
        let position = self.value_position(key)?;
        self.dense.values.get_mut(position)
    }

    /// Removes the value for `key`, moving the last value into its place.
    #[inline(always)]
    pub(crate) fn remove(&mut self, key: K) -> Option<T> {
        let position = self.sparse.remove(key.index(), lookup_generation(key))? as usize;
        Some(self.take_position(position))
    }

    /// Takes the value for `key` out but keeps its slot, detached.
    pub(crate) fn detach(&mut self, key: K) -> Option<T> {
        let position = self.sparse.detach_slot(key.index(), key.generation())? as usize;
        Some(self.take_position(position))
    }

    /// Puts `value` back under the detached `key`.
    ///
    /// # Panics
    ///
    /// If `key` is not detached (the caller checks first, to panic with
    /// its own message).
    pub(crate) fn reattach(&mut self, key: K, value: T) {
        // Make room first, so nothing can fail once the slot is filled. A
        // fixed-capacity table has room already: a detached slot's value
        // left the dense array.
        if self.sparse.fixed_capacity().is_none() {
            self.dense.reserve_one();
        }
        let position = self.dense.len() as u32;
        match self
            .sparse
            .reattach_slot(key.index(), key.generation(), position)
        {
            Ok(()) => self.dense.push(key, value),
            Err(_) => unreachable!("{key:?} was checked to be detached"),
        }
    }

    /// Takes the value at `position` out of the dense array, the slot that
    /// held `position` just vacated: swaps the last value into the hole
    /// and repoints its key.
    #[inline(always)]
    fn take_position(&mut self, position: usize) -> T {
        if Self::TRUSTED {
            // The slot was occupied until now, so with a trusted key type
            // `position` is below `len` (see `TRUSTED`); and the two dense
            // arrays are equally long (the invariant on `dense`).
            // SAFETY: so `position` is in bounds and the lengths agree.
            unsafe { self.dense.swap_remove_unchecked(position, &mut self.sparse) }
        } else {
            self.dense.swap_remove(position, &mut self.sparse)
        }
    }

    /// Swaps two dense positions and repoints both keys.
    pub(crate) fn swap_positions(&mut self, a: usize, b: usize) {
        self.dense.swap_positions(a, b, &mut self.sparse);
    }

    /// Keeps the values for which `keep(key, value)` holds, in order.
    pub(crate) fn retain(&mut self, keep: impl FnMut(K, &mut T) -> bool) {
        self.dense.retain(&mut self.sparse, keep);
    }

    /// Sorts the dense side (stably or not) and repoints every key.
    pub(crate) fn sort(&mut self, stable: bool, compare: impl FnMut(&T, &T) -> Ordering) {
        self.dense.sort(&mut self.sparse, stable, compare);
    }

    /// Removes every value, for a drain: the keys are invalidated first,
    /// then the dense arrays are drained.
    pub(crate) fn drain(&mut self) -> (vec::Drain<'_, K>, vec::Drain<'_, T>) {
        self.sparse.clear();
        (self.dense.keys.drain(..), self.dense.values.drain(..))
    }

    /// Gives a fixed table's dense arrays their whole capacity again (a
    /// clone allocates only what it copies).
    fn keep_fixed_allocation(&mut self) {
        if let Some(fixed) = self.sparse.fixed_capacity() {
            let spare = fixed.saturating_sub(self.dense.len());
            self.dense.keys.reserve_exact(spare);
            self.dense.values.reserve_exact(spare);
        }
    }

    /// Checks both sides and the invariant between them; panics on the
    /// first one broken.
    pub(crate) fn check_invariants(&self) {
        self.sparse.check_invariants();
        assert_eq!(
            self.dense.values.len(),
            self.dense.keys.len(),
            "values and keys differ in length"
        );
        assert_eq!(
            self.dense.values.len(),
            self.sparse.len(),
            "dense and sparse disagree on len"
        );
        for (position, &key) in self.dense.keys.iter().enumerate() {
            assert_eq!(
                self.position(key),
                Some(position),
                "key {key:?} does not point at its position"
            );
        }
    }
}

impl<T: Clone, K: Key> Clone for Packed<T, K> {
    fn clone(&self) -> Self {
        let mut copy = Packed {
            sparse: self.sparse.clone(),
            dense: self.dense.clone(),
        };
        copy.keep_fixed_allocation();
        copy
    }

    /// Copies the values first: if a `clone` panics, the table is left
    /// empty (the guard clears it), never with keys and values out of
    /// step.
    fn clone_from(&mut self, source: &Self) {
        struct Guard<'a, T, K: Key>(&'a mut Packed<T, K>);
        impl<T, K: Key> Drop for Guard<'_, T, K> {
            fn drop(&mut self) {
                self.0.clear();
            }
        }
        let guard = Guard(self);
        guard.0.dense.values.clone_from(&source.dense.values);
        core::mem::forget(guard);
        self.dense.keys.clone_from(&source.dense.keys);
        self.sparse.clone_from(&source.sparse);
        self.keep_fixed_allocation();
    }
}

/// The sparse side is the dense side's index. Its keys are the dense
/// side's own, live by the invariant on `Packed::sparse`.
impl<K: Key> Positions<K> for SlotArena<u32, K, InterleavedLayout> {
    /// With a trusted key type (`Packed::TRUSTED`) the key names its
    /// occupied slot, which is written unchecked; otherwise the slot's
    /// existence and occupancy are checked (not the generation: the dense
    /// key is live), so a lying key could only misplace a position, never
    /// touch a vacant slot's free-list link.
    #[inline]
    fn set_position(&mut self, key: K, position: usize) {
        // (A lying key of an untrusted type may name any slot.)
        debug_assert!(!K::__PARTS_TRUST.0 || self.contains(key.index(), lookup_generation(key)));
        if K::__PARTS_TRUST.0 {
            // A dense key of a trusted key type names its own slot, which
            // is occupied while the key is in the dense array (see
            // `Packed::TRUSTED`).
            // SAFETY: so slot `key.index()` exists and is occupied.
            unsafe { *self.get_unchecked_mut(key.index()) = position as u32 };
        } else if let Some(entry) = self.value_at_mut(key.index()) {
            *entry = position as u32;
        }
    }

    #[inline]
    fn forget(&mut self, key: K) {
        self.remove(key.index(), lookup_generation(key));
    }
}
