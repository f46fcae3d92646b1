//! The core of [`SecondaryMap`](super::SecondaryMap): a slot per key index,
//! with its generation, in a [`KeyedStore`].

use crate::raw::keyed::lookup_generation;
use crate::raw::{KeyLimits, KeyedStore, Parts};
use crate::Key;

use super::{Dense, MapCore, SecondaryMap, SecondaryStorage};

/// Removing iterator over `(key, value)`; see
/// [`SecondaryMap::drain`](super::SecondaryTable::drain)
/// ([`iter::Drain`](crate::iter::Drain) over the map's slots).
pub type Drain<'a, K, V> = crate::iter::Drain<'a, V, K, KeyedStore<V, K>>;

/// Owning iterator over `(key, value)`, in index order
/// ([`iter::IntoIter`](crate::iter::IntoIter) over the map's slots).
pub type IntoIter<K, V> = crate::iter::IntoIter<V, K, KeyedStore<V, K>>;

impl SecondaryStorage for Dense {
    type Map<K: Key, V> = DenseCore<K, V>;
    type Iter<'a, K: Key, V: 'a> = crate::iter::Iter<'a, V, K>;
    type IterMut<'a, K: Key, V: 'a> = crate::iter::IterMut<'a, V, K>;
    type Keys<'a, K: Key, V: 'a> = crate::iter::Keys<'a, V, K>;
    type Values<'a, K: Key, V: 'a> = crate::iter::Values<'a, V>;
    type ValuesMut<'a, K: Key, V: 'a> = crate::iter::ValuesMut<'a, V>;
    type Drain<'a, K: Key, V: 'a> = Drain<'a, K, V>;
    type IntoIter<K: Key, V> = IntoIter<K, V>;
}

/// The dense map's slots.
#[derive(Clone)]
pub struct DenseCore<K: Key, V> {
    /// Slots by key index. Invariant: never more than the key type's
    /// `max_slots`; an occupied slot's generation is its key's.
    store: KeyedStore<V, K>,
}

/// What [`DenseCore::insert`] does with a slot other than the next one,
/// as `prepare` found it.
enum Prepared {
    /// The slot holds a newer key's value: the key is stale.
    Stale,
    /// The slot holds a value for this very key: replace it.
    Occupied,
    /// The slot exists and is vacant: fill it.
    Vacant,
}

impl<K: Key, V> DenseCore<K, V> {
    /// Readies slot `index` for a key of `generation` (in range, and not
    /// the next slot to append): makes the slot exist, and drops a value
    /// an older key left there.
    #[inline(never)]
    fn prepare(&mut self, parts: Parts<K>) -> Prepared {
        let (index, generation) = (parts.index(), parts.generation());
        self.store.grow_vacant_to(index + 1);
        let (stored, occupied) = self
            .store
            .slot(index)
            .map_or((0, false), |slot| (slot.generation(), slot.is_occupied()));
        if generation < stored {
            return Prepared::Stale;
        }
        if occupied {
            if generation == stored {
                return Prepared::Occupied;
            }
            drop(self.store.remove(index, stored));
        }
        Prepared::Vacant
    }
}

impl<K: Key, V> MapCore<K, V, Dense> for DenseCore<K, V> {
    const EMPTY: Self = DenseCore {
        store: KeyedStore::new(),
    };

    fn with_capacity(capacity: usize) -> Self {
        DenseCore {
            store: KeyedStore::with_capacity(capacity.min(KeyLimits::of::<K>().max_slots)),
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.store.len()
    }

    fn capacity(&self) -> usize {
        self.store.slot_capacity()
    }

    // Inline, with the choice of what to do with a slot other than the
    // next one out of line (`prepare`), which never sees `value`: a call
    // per insertion cost more than the append itself (59 instructions per
    // insert at 100k `u64`, against 37 inline and slotmap's 75.5), and a
    // value passed to a function that is not inlined is built in memory
    // on every path, then copied with wide loads from narrow stores, which
    // stalls on store forwarding (a 64-byte value took as long to insert
    // as with slotmap, despite a third fewer instructions). Forced: left to
    // `#[inline]`, it was not inlined.
    #[inline(always)]
    fn insert(&mut self, key: K, value: V) -> Option<V> {
        let parts = Parts::of(key)?;
        let (index, generation) = (parts.index(), parts.generation());
        if index == self.store.slot_count() {
            // The common case when keys arrive in the order a table issued
            // them: append the slot already occupied, in one write.
            self.store.push_occupied(parts, value);
            return None;
        }
        match self.prepare(parts) {
            Prepared::Stale => None,
            Prepared::Occupied => self
                .store
                .get_mut(index, generation)
                .map(|old| core::mem::replace(old, value)),
            Prepared::Vacant => {
                self.store.occupy(parts, value);
                None
            }
        }
    }

    #[inline]
    fn contains_key(&self, key: K) -> bool {
        self.store.contains(key.index(), lookup_generation(key))
    }

    #[inline]
    fn get(&self, key: K) -> Option<&V> {
        self.store.get(key.index(), lookup_generation(key))
    }

    #[inline]
    fn get_mut(&mut self, key: K) -> Option<&mut V> {
        self.store.get_mut(key.index(), lookup_generation(key))
    }

    fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut V; N]> {
        self.store
            .get_disjoint_mut(keys.map(|key| (key.index(), lookup_generation(key))))
    }

    #[inline]
    fn remove(&mut self, key: K) -> Option<V> {
        self.store.remove(key.index(), lookup_generation(key))
    }

    fn entry_state(&self, key: K) -> Option<bool> {
        Parts::of(key)?;
        let generation = lookup_generation(key);
        match self.store.slot(key.index()) {
            None => Some(false),
            Some(slot) if generation < slot.generation() => None,
            Some(slot) => Some(slot.is_occupied() && slot.generation() == generation),
        }
    }

    fn clear(&mut self) {
        self.store.drop_values();
    }

    fn retain(&mut self, keep: impl FnMut(K, &mut V) -> bool) {
        self.store.retain_keyed(keep);
    }

    fn drain(&mut self) -> Drain<'_, K, V> {
        Drain::new(&mut self.store)
    }

    fn iter(&self) -> crate::iter::Iter<'_, V, K> {
        crate::iter::Iter::new(self.store.keyed_iter())
    }

    fn iter_mut(&mut self) -> crate::iter::IterMut<'_, V, K> {
        crate::iter::IterMut::new(self.store.keyed_iter_mut())
    }

    fn keys(&self) -> crate::iter::Keys<'_, V, K> {
        crate::iter::Keys::new(self.store.keyed_iter())
    }

    fn values(&self) -> crate::iter::Values<'_, V> {
        crate::iter::Values::new(self.store.iter())
    }

    fn values_mut(&mut self) -> crate::iter::ValuesMut<'_, V> {
        crate::iter::ValuesMut::new(self.store.iter_mut())
    }

    fn into_iter(self) -> IntoIter<K, V> {
        IntoIter::new(self.store)
    }

    fn check_invariants(&self) {
        self.store.check_invariants();
        assert!(self.store.slot_count() <= KeyLimits::of::<K>().max_slots);
    }
}

impl<K: Key, V> SecondaryMap<K, V> {
    /// Makes room for keys with indices below `new_capacity`, if there is
    /// less; never shrinks. Call it with the capacity of the primary table
    /// before filling the map, so the map allocates once. Indices the key
    /// type cannot have are not allocated for. (Dense map only.)
    ///
    /// # Panics
    ///
    /// If the allocation fails.
    ///
    /// ```
    /// let table: handlekit::IdTable<u8> = handlekit::IdTable::with_capacity(100);
    /// let mut map = handlekit::SecondaryMap::<handlekit::Id, f32>::new();
    /// map.set_capacity(table.capacity());
    /// assert!(map.capacity() >= 100);
    /// map.set_capacity(10); // never shrinks
    /// assert!(map.capacity() >= 100);
    /// ```
    pub fn set_capacity(&mut self, new_capacity: usize) {
        let store = &mut self.map.store;
        let wanted = new_capacity.min(KeyLimits::of::<K>().max_slots);
        let additional = wanted.saturating_sub(store.slot_count());
        if store.try_reserve_slots(additional).is_err() {
            panic!("SecondaryMap::set_capacity({new_capacity}): allocation failed");
        }
    }
}

#[cfg(feature = "rayon")]
mod par {
    use crate::slot_par::{ParIter, ParIterMut};
    use crate::{Key, SecondaryMap};

    impl<K: Key, V: Sync> SecondaryMap<K, V> {
        /// Iterates `(key, &value)` in parallel with rayon. (Each map has
        /// its own; the sparse map's splits its packed values.)
        ///
        /// ```
        /// use rayon::prelude::*;
        /// let mut table = handlekit::IdTable::new();
        /// let mut map = handlekit::SecondaryMap::new();
        /// for n in 0..100u64 {
        ///     map.insert(table.insert(()), n);
        /// }
        /// assert_eq!(map.par_iter().map(|(_, v)| v).sum::<u64>(), 4950);
        /// ```
        pub fn par_iter(&self) -> ParIter<'_, V, K> {
            ParIter::new(self.map.store.keyed_iter())
        }
    }

    impl<K: Key, V: Send> SecondaryMap<K, V> {
        /// Iterates `(key, &mut value)` in parallel with rayon.
        ///
        /// ```
        /// use rayon::prelude::*;
        /// let mut table = handlekit::IdTable::new();
        /// let mut map = handlekit::SecondaryMap::new();
        /// let key = table.insert(());
        /// map.insert(key, 1u64);
        /// map.par_iter_mut().for_each(|(_, v)| *v += 1);
        /// assert_eq!(map[key], 2);
        /// ```
        pub fn par_iter_mut(&mut self) -> ParIterMut<'_, V, K> {
            ParIterMut::new(self.map.store.keyed_iter_mut())
        }
    }
}

/// Serde support: the map's slots, each as `(generation, Option<value>)`,
/// validated on the way in like a table's.
#[cfg(feature = "serde")]
mod serde_impl {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::DenseCore;
    use crate::secondary::SecondaryTable;
    use crate::serde_util::{ArenaOf, SlotsRef};
    use crate::{Key, SecondaryMap};

    impl<K: Key, V: Serialize> Serialize for SecondaryMap<K, V> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            SlotsRef(self.map.store.slot_refs()).serialize(serializer)
        }
    }

    impl<'de, K: Key, V: Deserialize<'de>> Deserialize<'de> for SecondaryMap<K, V> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let ArenaOf(arena, _) = ArenaOf::<V, K>::deserialize(deserializer)?;
            Ok(SecondaryTable {
                map: DenseCore {
                    store: crate::raw::KeyedStore::from_arena(arena),
                },
            })
        }
    }
}
