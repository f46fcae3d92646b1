//! [`KeyedStore`], a secondary map's slot store: a `SlotStore` whose
//! occupied slots all hold checked parts of keys `K` ([`Parts`]), so that
//! it hands out keys `K` (its passes and the values it gives up).

use core::marker::PhantomData;

use super::keyed::{table_key, Keyed, Parts, TakeSlots};
use crate::Key;

/// A slot store whose occupied slots all hold parts of keys `K`: the store
/// of a `SecondaryMap`, which takes its keys from a table. Reading goes
/// through `Deref`; whatever occupies a slot takes checked [`Parts`].
pub struct KeyedStore<T, K> {
    /// Invariant: every occupied slot's index and generation make a valid
    /// `K` (`table_key`).
    store: super::SlotStore<T>,
    _key: PhantomData<fn() -> K>,
}

impl<T, K> core::ops::Deref for KeyedStore<T, K> {
    type Target = super::SlotStore<T>;

    #[inline(always)]
    fn deref(&self) -> &super::SlotStore<T> {
        &self.store
    }
}

impl<T: Clone, K> Clone for KeyedStore<T, K> {
    fn clone(&self) -> Self {
        KeyedStore {
            store: self.store.clone(),
            _key: PhantomData,
        }
    }
}

impl<T, K: Key> KeyedStore<T, K> {
    /// An empty store.
    #[inline]
    pub(crate) const fn new() -> Self {
        KeyedStore {
            store: super::SlotStore::new(),
            _key: PhantomData,
        }
    }

    /// An empty store with room for `capacity` slots.
    #[inline]
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        KeyedStore {
            store: super::SlotStore::with_capacity(capacity),
            _key: PhantomData,
        }
    }

    /// The slots of `arena`, whose parts are those of keys `K`.
    #[cfg(feature = "serde")]
    pub(crate) fn from_arena(arena: super::SlotArena<T, K>) -> Self {
        KeyedStore {
            store: arena.into_store(),
            _key: PhantomData,
        }
    }

    /// See [`SlotStore::try_reserve_slots`](super::SlotStore::try_reserve_slots).
    #[inline]
    pub(crate) fn try_reserve_slots(
        &mut self,
        additional: usize,
    ) -> Result<(), alloc::collections::TryReserveError> {
        self.store.try_reserve_slots(additional)
    }

    /// Appends slot `parts.index()`, which must be the next one, occupied by
    /// `value` under `parts.generation()`.
    ///
    /// # Panics
    ///
    /// If `parts.index()` is not the slot count (the caller checked it, so
    /// the compare folds into its own).
    #[inline(always)]
    pub(crate) fn push_occupied(&mut self, parts: Parts<K>, value: T) {
        assert!(parts.index() == self.store.slot_count());
        self.store.push_occupied_with(parts.generation(), |_| value);
    }

    /// Occupies the vacant slot `parts.index()` with `value` under
    /// `parts.generation()` (see [`SlotStore::occupy`](super::SlotStore::occupy)).
    #[inline]
    pub(crate) fn occupy(&mut self, parts: Parts<K>, value: T) {
        self.store.occupy(parts.index(), parts.generation(), value);
    }

    /// Makes slots exist up to `slots` (vacant).
    #[inline]
    pub(crate) fn grow_vacant_to(&mut self, slots: usize) {
        self.store.grow_vacant_to(slots);
    }

    /// See [`SlotStore::get_mut`](super::SlotStore::get_mut).
    #[inline]
    pub(crate) fn get_mut(&mut self, index: usize, generation: u32) -> Option<&mut T> {
        self.store.get_mut(index, generation)
    }

    /// See [`SlotStore::get_disjoint_mut`](super::SlotStore::get_disjoint_mut).
    #[inline]
    pub(crate) fn get_disjoint_mut<const N: usize>(
        &mut self,
        pairs: [(usize, u32); N],
    ) -> Option<[&mut T; N]> {
        self.store.get_disjoint_mut(pairs)
    }

    /// See [`SlotStore::remove`](super::SlotStore::remove).
    #[inline]
    pub(crate) fn remove(&mut self, index: usize, generation: u32) -> Option<T> {
        self.store.remove(index, generation)
    }

    /// Drops every value.
    #[inline]
    pub(crate) fn drop_values(&mut self) {
        self.store.drop_values();
    }

    /// Keeps the values for which `keep(key, value)` holds.
    #[inline]
    pub(crate) fn retain_keyed(&mut self, mut keep: impl FnMut(K, &mut T) -> bool) {
        self.store.retain(|index, generation, value| {
            // SAFETY: an occupied slot of this store (its invariant).
            keep(unsafe { table_key(index, generation) }, value)
        });
    }

    /// A pass over the values, mutably.
    #[inline]
    pub(crate) fn iter_mut(&mut self) -> super::store::RawIterMut<'_, T> {
        self.store.iter_mut()
    }

    /// A pass over `(key, &value)`.
    #[inline]
    pub(crate) fn keyed_iter(&self) -> Keyed<super::store::RawIter<'_, T>, K> {
        // SAFETY: the cursor walks this store's occupied slots.
        unsafe { Keyed::new(self.store.iter()) }
    }

    /// A pass over `(key, &mut value)`.
    #[inline]
    pub(crate) fn keyed_iter_mut(&mut self) -> Keyed<super::store::RawIterMut<'_, T>, K> {
        // SAFETY: the cursor walks this store's occupied slots.
        unsafe { Keyed::new(self.store.iter_mut()) }
    }
}

// SAFETY: the store's slots, under the generations their values held,
// which fit `K` (the invariant on `store`).
unsafe impl<T, K: Key> TakeSlots<T> for KeyedStore<T, K> {
    type Key = K;
    #[inline]
    fn take_slot(&mut self, from: usize) -> Option<(usize, u32, T)> {
        self.store.take_next(from)
    }
    #[inline]
    fn len(&self) -> usize {
        self.store.len()
    }
    fn clear(&mut self) {
        self.store.drop_values();
    }
}
