//! The core of [`SparseSecondaryMap`](super::SparseSecondaryMap): a sparse
//! set keyed by the keys of another table, its values packed.

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::key::max_generation;
use crate::packed_table;
use crate::raw::dense::{Dense, DenseEntries, Positions};
use crate::raw::keyed::lookup_generation;
use crate::raw::KeyLimits;
use crate::{CapacityError, Key};

use super::{MapCore, SecondaryStorage, Sparse, SparseSecondaryMap};

/// Index bits resolved by one page of the sparse array.
const PAGE_BITS: u32 = 10;
/// Entries per page: 1024 `u32`s, 4 KiB.
const PAGE_LEN: usize = 1 << PAGE_BITS;
/// Set in a sparse entry with no value; the low 31 bits then hold the
/// generation of the last key whose value left (0 if none), so an older key
/// stays stale, as in the dense map. Without it, the entry is a position.
const ABSENT: u32 = 1 << 31;
/// Dense positions must stay below `ABSENT`.
const MAX_LEN: usize = ABSENT as usize;

/// One page of the sparse array.
type Page = Box<[u32; PAGE_LEN]>;

impl SecondaryStorage for Sparse {
    type Map<K: Key, V> = SparseCore<K, V>;
    type Iter<'a, K: Key, V: 'a> = packed_table::Iter<'a, V, K>;
    type IterMut<'a, K: Key, V: 'a> = packed_table::IterMut<'a, V, K>;
    type Keys<'a, K: Key, V: 'a> = packed_table::Keys<'a, K>;
    type Values<'a, K: Key, V: 'a> = packed_table::Values<'a, V>;
    type ValuesMut<'a, K: Key, V: 'a> = packed_table::ValuesMut<'a, V>;
    type Drain<'a, K: Key, V: 'a> = packed_table::Drain<'a, V, K>;
    type IntoIter<K: Key, V> = packed_table::IntoIter<V, K>;
}

/// The paged sparse array: slot index → dense position.
#[derive(Clone, Default)]
struct Pages {
    /// Invariant: entry `i & 1023` of page `i >> 10` is the dense position
    /// of the value whose key has index `i`, or `ABSENT | last_generation`.
    /// Pages are allocated on first use.
    pages: Vec<Option<Page>>,
}

impl Pages {
    /// The raw entry for `index` (`ABSENT` if its page is not allocated).
    #[inline]
    fn raw(&self, index: usize) -> u32 {
        match self.pages.get(index >> PAGE_BITS) {
            Some(Some(page)) => page[index & (PAGE_LEN - 1)],
            _ => ABSENT,
        }
    }

    /// The dense position for `index`, if it has a value.
    #[inline]
    fn get(&self, index: usize) -> Option<usize> {
        let entry = self.raw(index);
        (entry & ABSENT == 0).then_some(entry as usize)
    }

    /// The generation of the last key whose value left `index`, if it has
    /// no value now.
    #[inline]
    fn last_generation(&self, index: usize) -> Option<u32> {
        let entry = self.raw(index);
        (entry & ABSENT != 0).then_some(entry & !ABSENT)
    }

    /// The entry for `index`, allocating its page if needed.
    fn entry(&mut self, index: usize) -> &mut u32 {
        let page_index = index >> PAGE_BITS;
        if self.pages.len() <= page_index {
            self.pages.resize_with(page_index + 1, || None);
        }
        let page = self.pages[page_index].get_or_insert_with(|| Box::new([ABSENT; PAGE_LEN]));
        &mut page[index & (PAGE_LEN - 1)]
    }

    fn set(&mut self, index: usize, position: u32) {
        *self.entry(index) = position;
    }

    fn allocated_pages(&self) -> usize {
        self.pages.iter().filter(|page| page.is_some()).count()
    }
}

impl<K: Key> Positions<K> for Pages {
    #[inline]
    fn set_position(&mut self, key: K, position: usize) {
        self.set(key.index(), position as u32);
    }

    #[inline]
    fn forget(&mut self, key: K) {
        self.set(key.index(), ABSENT | lookup_generation(key));
    }
}

/// The sparse map's pages and packed values.
#[derive(Clone)]
pub struct SparseCore<K: Key, V> {
    pages: Pages,
    /// Invariant: `pages` maps the index of each `dense.keys[p]` to `p`, and
    /// no other index to anything.
    dense: Dense<K, V>,
}

impl<K: Key, V> SparseCore<K, V> {
    /// Whether the key's index and generation are ones a table could issue.
    #[inline]
    fn in_range(key: K) -> bool {
        let generation = lookup_generation(key);
        key.index() < KeyLimits::of::<K>().max_slots
            && generation >= 1
            && generation <= max_generation(K::GENERATION_BITS)
    }

    /// The dense position of `key`'s value. (A position past the keys
    /// cannot happen, by the invariant on `dense`; answering `None` for it
    /// rather than panicking lets `get_unchecked` drop the check.)
    #[inline]
    fn find(&self, key: K) -> Option<usize> {
        let position = self.pages.get(key.index())?;
        (self.dense.keys.get(position) == Some(&key)).then_some(position)
    }

    /// Points every sparse entry of a live key at nothing.
    fn forget_all(&mut self) {
        for &key in &self.dense.keys {
            self.pages.set(key.index(), ABSENT | lookup_generation(key));
        }
    }
}

impl<K: Key, V> MapCore<K, V, Sparse> for SparseCore<K, V> {
    const EMPTY: Self = SparseCore {
        pages: Pages { pages: Vec::new() },
        dense: Dense::new(),
    };

    fn with_capacity(capacity: usize) -> Self {
        SparseCore {
            pages: Pages::default(),
            dense: Dense::with_capacity(capacity),
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.dense.len()
    }

    fn capacity(&self) -> usize {
        self.dense.values.capacity().min(self.dense.keys.capacity())
    }

    fn insert(&mut self, key: K, value: V) -> Option<V> {
        if !Self::in_range(key) {
            return None;
        }
        match self.pages.get(key.index()) {
            Some(position) => {
                let stored = self.dense.keys[position];
                if stored == key {
                    Some(core::mem::replace(&mut self.dense.values[position], value))
                } else if stored.generation() < lookup_generation(key) {
                    self.dense.keys[position] = key;
                    drop(core::mem::replace(&mut self.dense.values[position], value));
                    None
                } else {
                    None
                }
            }
            None => {
                let last = self.pages.last_generation(key.index()).unwrap_or(0);
                if lookup_generation(key) < last || self.dense.len() >= MAX_LEN {
                    return None;
                }
                self.dense.reserve_one();
                let position = self.dense.len() as u32;
                self.pages.set(key.index(), position);
                self.dense.push(key, value);
                None
            }
        }
    }

    #[inline]
    fn contains_key(&self, key: K) -> bool {
        self.find(key).is_some()
    }

    #[inline]
    fn get(&self, key: K) -> Option<&V> {
        self.dense.values.get(self.find(key)?)
    }

    #[inline]
    fn get_mut(&mut self, key: K) -> Option<&mut V> {
        let position = self.find(key)?;
        self.dense.values.get_mut(position)
    }

    fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut V; N]> {
        let mut positions = [0usize; N];
        for (slot, key) in positions.iter_mut().zip(keys) {
            *slot = self.find(key)?;
        }
        self.dense.values.get_disjoint_mut(positions).ok()
    }

    fn remove(&mut self, key: K) -> Option<V> {
        let position = self.find(key)?;
        self.pages.set(key.index(), ABSENT | lookup_generation(key));
        Some(self.dense.swap_remove(position, &mut self.pages))
    }

    fn entry_state(&self, key: K) -> Option<bool> {
        if !Self::in_range(key) {
            return None;
        }
        match self.pages.get(key.index()) {
            None => {
                let last = self.pages.last_generation(key.index()).unwrap_or(0);
                (lookup_generation(key) >= last && self.dense.len() < MAX_LEN).then_some(false)
            }
            Some(position) => {
                let stored = self.dense.keys[position];
                if lookup_generation(key) < stored.generation() {
                    None
                } else {
                    Some(stored == key)
                }
            }
        }
    }

    fn clear(&mut self) {
        self.forget_all();
        self.dense.clear();
    }

    fn retain(&mut self, keep: impl FnMut(K, &mut V) -> bool) {
        self.dense.retain(&mut self.pages, keep);
    }

    fn drain(&mut self) -> packed_table::Drain<'_, V, K> {
        self.forget_all();
        self.dense.keys.drain(..).zip(self.dense.values.drain(..))
    }

    fn iter(&self) -> packed_table::Iter<'_, V, K> {
        DenseEntries::new(&self.dense.keys, &self.dense.values)
    }

    fn iter_mut(&mut self) -> packed_table::IterMut<'_, V, K> {
        DenseEntries::new_mut(&self.dense.keys, &mut self.dense.values)
    }

    fn keys(&self) -> packed_table::Keys<'_, K> {
        self.dense.keys.iter().copied()
    }

    fn values(&self) -> packed_table::Values<'_, V> {
        self.dense.values.iter()
    }

    fn values_mut(&mut self) -> packed_table::ValuesMut<'_, V> {
        self.dense.values.iter_mut()
    }

    fn into_iter(self) -> packed_table::IntoIter<V, K> {
        self.dense.keys.into_iter().zip(self.dense.values)
    }

    fn check_invariants(&self) {
        assert_eq!(self.dense.keys.len(), self.dense.values.len());
        let mut live = 0;
        for page in self.pages.pages.iter().flatten() {
            live += page.iter().filter(|&&entry| entry & ABSENT == 0).count();
        }
        assert_eq!(live, self.dense.len(), "sparse entries and values disagree");
        for (position, &key) in self.dense.keys.iter().enumerate() {
            assert_eq!(
                self.find(key),
                Some(position),
                "{key:?} is not found at its position"
            );
        }
    }
}

impl<K: Key, V> SparseSecondaryMap<K, V> {
    /// Makes room for at least `additional` more values on the packed
    /// side. (Sparse map only.)
    ///
    /// # Panics
    ///
    /// If the key type cannot have that many values, or the allocation
    /// fails; see [`try_reserve`](Self::try_reserve).
    ///
    /// ```
    /// let mut map = handlekit::SparseSecondaryMap::<handlekit::Id, u8>::new();
    /// map.reserve(100);
    /// assert!(map.capacity() >= 100);
    /// ```
    pub fn reserve(&mut self, additional: usize) {
        if let Err(err) = self.try_reserve(additional) {
            panic!("SparseSecondaryMap::reserve({additional}): {err}");
        }
    }

    /// Makes room for at least `additional` more values on the packed
    /// side, or returns a [`CapacityError`]: when the map would hold more
    /// values than the key type has indices, or when the allocation fails.
    /// (Sparse map only.)
    ///
    /// ```
    /// handlekit::define_key! { struct Tiny(u32; index_bits = 4); }
    /// let mut map = handlekit::SparseSecondaryMap::<Tiny, u8>::new();
    /// assert!(map.try_reserve(16).is_ok());
    /// assert!(map.try_reserve(17).unwrap_err().is_index_space());
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        let dense = &mut self.map.dense;
        let max_slots = KeyLimits::of::<K>().max_slots;
        if additional > max_slots.saturating_sub(dense.len()) {
            return Err(CapacityError::index_space(max_slots));
        }
        dense
            .keys
            .try_reserve(additional)
            .and_then(|()| dense.values.try_reserve(additional))
            .map_err(|_| CapacityError::alloc())
    }

    /// The values, packed, in the map's order. (Sparse map only.)
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(table.insert(()), 'x');
    /// assert_eq!(map.as_slice(), ['x']);
    /// ```
    #[must_use]
    pub fn as_slice(&self) -> &[V] {
        &self.map.dense.values
    }

    /// The key of each value, in the map's order. (Sparse map only.)
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 'x');
    /// assert_eq!(map.key_slice(), [key]);
    /// ```
    #[must_use]
    pub fn key_slice(&self) -> &[K] {
        &self.map.dense.keys
    }

    /// Pages of the sparse array allocated so far (4 KiB each). (Sparse
    /// map only.)
    ///
    /// ```
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// let far = handlekit::Id::from_parts(1_000_000, 1).unwrap();
    /// # use handlekit::Key;
    /// map.insert(far, ());
    /// assert_eq!(map.allocated_pages(), 1);
    /// ```
    #[must_use]
    pub fn allocated_pages(&self) -> usize {
        self.map.pages.allocated_pages()
    }
}

#[cfg(feature = "rayon")]
mod par {
    use rayon::prelude::*;

    use crate::packed_table::{ParIter, ParIterMut};
    use crate::{Key, SparseSecondaryMap};

    impl<K: Key, V: Sync> SparseSecondaryMap<K, V> {
        /// Iterates `(key, &value)` in parallel with rayon, splitting the
        /// packed values.
        ///
        /// ```
        /// use rayon::prelude::*;
        /// let mut table = handlekit::IdTable::new();
        /// let mut map = handlekit::SparseSecondaryMap::new();
        /// map.insert(table.insert(()), 3u64);
        /// assert_eq!(map.par_iter().map(|(_, v)| v).sum::<u64>(), 3);
        /// ```
        pub fn par_iter(&self) -> ParIter<'_, V, K> {
            let dense = &self.map.dense;
            dense.keys.par_iter().copied().zip(dense.values.par_iter())
        }
    }

    impl<K: Key, V: Send> SparseSecondaryMap<K, V> {
        /// Iterates `(key, &mut value)` in parallel with rayon.
        ///
        /// ```
        /// use rayon::prelude::*;
        /// let mut table = handlekit::IdTable::new();
        /// let key = table.insert(());
        /// let mut map = handlekit::SparseSecondaryMap::new();
        /// map.insert(key, 3u64);
        /// map.par_iter_mut().for_each(|(_, v)| *v += 1);
        /// assert_eq!(map[key], 4);
        /// ```
        pub fn par_iter_mut(&mut self) -> ParIterMut<'_, V, K> {
            let dense = &mut self.map.dense;
            dense
                .keys
                .par_iter()
                .copied()
                .zip(dense.values.par_iter_mut())
        }
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use alloc::vec::Vec;
    use core::marker::PhantomData;

    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{SparseCore, ABSENT, PAGE_BITS};
    use crate::secondary::MapCore;
    use crate::{Key, SparseSecondaryMap};

    #[derive(Serialize)]
    #[serde(
        rename = "SparseSecondaryMap",
        bound(serialize = "K: Serialize, V: Serialize")
    )]
    struct Repr<'a, K, V> {
        /// `(key, value)` in dense order.
        entries: Vec<(K, &'a V)>,
        /// For each empty entry that remembers a generation, the key that
        /// last left it, so older keys stay stale after a round trip.
        vacated: Vec<K>,
    }

    #[derive(Deserialize)]
    #[serde(
        deny_unknown_fields,
        rename = "SparseSecondaryMap",
        bound(deserialize = "K: Deserialize<'de>, V: Deserialize<'de>")
    )]
    struct Owned<K, V> {
        entries: Vec<(K, V)>,
        vacated: Vec<K>,
        #[serde(skip)]
        _key: PhantomData<K>,
    }

    impl<K: Key + Serialize, V: Serialize> Serialize for SparseSecondaryMap<K, V> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut vacated = Vec::new();
            for (page_index, page) in self.map.pages.pages.iter().enumerate() {
                let Some(page) = page else { continue };
                for (offset, &entry) in page.iter().enumerate() {
                    let generation = entry & !ABSENT;
                    if entry & ABSENT != 0 && generation != 0 {
                        let index = (page_index << PAGE_BITS) | offset;
                        vacated.push(K::__from_table_parts(index as u32, generation));
                    }
                }
            }
            Repr {
                entries: self.iter().collect(),
                vacated,
            }
            .serialize(serializer)
        }
    }

    /// Deserializes through the same checks as `insert`: out-of-range keys
    /// are refused, and generations compare as on any insertion. A key
    /// listed twice, or a stale entry, is an error.
    impl<'de, K: Key + Deserialize<'de>, V: Deserialize<'de>> Deserialize<'de>
        for SparseSecondaryMap<K, V>
    {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            let Owned {
                entries, vacated, ..
            } = Owned::<K, V>::deserialize(deserializer)?;
            let mut map = SparseSecondaryMap::with_capacity(entries.len());
            for key in vacated {
                if !SparseCore::<K, V>::in_range(key) {
                    return Err(D::Error::custom(format_args!(
                        "vacated key {key:?} out of range"
                    )));
                }
                map.map.pages.set(
                    key.index(),
                    ABSENT | crate::raw::keyed::lookup_generation(key),
                );
            }
            for (key, value) in entries {
                if map.map.entry_state(key) != Some(false) {
                    return Err(D::Error::custom(format_args!(
                        "entry for {key:?} is stale, out of range or listed twice"
                    )));
                }
                map.insert(key, value);
            }
            Ok(map)
        }
    }
}
