//! [`SparseSecondaryMap`]: a sparse set keyed by the keys of another table.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::fmt;
use core::ops::{Index, IndexMut};

use super::entry::{self, Entry, EntryTarget};
use super::missing;
use crate::key::max_generation;
use crate::packed_table;
use crate::raw::dense::{Dense, Positions};
use crate::raw::KeyLimits;
use crate::{CapacityError, Key};

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

/// Iterator over `(key, &value)` in dense order.
pub type SparseIter<'a, K, V> = packed_table::Iter<'a, V, K>;
/// Iterator over `(key, &mut value)` in dense order.
pub type SparseIterMut<'a, K, V> = packed_table::IterMut<'a, V, K>;
/// Removing iterator over `(key, value)`.
pub type SparseDrain<'a, K, V> = packed_table::Drain<'a, V, K>;
/// Owning iterator over `(key, value)`.
pub type SparseIntoIter<K, V> = packed_table::IntoIter<V, K>;

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
        self.set(
            key.index(),
            ABSENT | crate::raw::keyed::lookup_generation(key),
        );
    }
}

/// A sparse secondary map: values for the keys of another table, packed
/// tight, found through a paged sparse array.
///
/// This is the sparse set of EnTT and friends. The sparse side is split into
/// 4 KiB pages (1024 indices each) that are allocated on first use, so a
/// few keys with large indices cost a few pages, not an array as long as
/// the biggest index. Values sit in one `Vec` in insertion order (removal
/// swaps the last one in), so iteration is a slice walk:
/// [`as_slice`](Self::as_slice). This is the storage the entity-component
/// store builds on.
///
/// Memory: `size_of::<K>() + size_of::<V>()` per value, plus 4 KiB per page
/// touched. A sparse entry without a value remembers the generation of the
/// last key whose value left it, so generations compare exactly as in
/// [`SecondaryMap`](crate::SecondaryMap). At most 2³¹ values.
///
/// # Examples
///
/// ```
/// use handlekit::{IdTable, SparseSecondaryMap};
///
/// let mut entities = IdTable::new();
/// let mut velocity = SparseSecondaryMap::new();
/// let a = entities.insert("a");
/// let b = entities.insert("b");
/// velocity.insert(b, 2.0f32);
/// assert_eq!(velocity.get(a), None);
/// assert_eq!(velocity.as_slice(), [2.0]);
/// ```
pub struct SparseSecondaryMap<K: Key, V> {
    pages: Pages,
    /// Invariant: `pages` maps the index of each `dense.keys[p]` to `p`, and
    /// no other index to anything.
    dense: Dense<K, V>,
}

impl<K: Key, V> SparseSecondaryMap<K, V> {
    /// An empty map.
    ///
    /// ```
    /// let map: handlekit::SparseSecondaryMap<handlekit::Id, u8> = handlekit::SparseSecondaryMap::new();
    /// assert!(map.is_empty());
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        SparseSecondaryMap {
            pages: Pages { pages: Vec::new() },
            dense: Dense::new(),
        }
    }

    /// An empty map with room for `capacity` values.
    ///
    /// ```
    /// let map: handlekit::SparseSecondaryMap<handlekit::Id, u8> = handlekit::SparseSecondaryMap::with_capacity(8);
    /// assert!(map.capacity() >= 8);
    /// ```
    #[must_use]
    pub fn with_capacity(capacity: usize) -> Self {
        SparseSecondaryMap {
            pages: Pages::default(),
            dense: Dense::with_capacity(capacity),
        }
    }

    /// The number of values.
    ///
    /// ```
    /// let map: handlekit::SparseSecondaryMap<handlekit::Id, u8> = Default::default();
    /// assert_eq!(map.len(), 0);
    /// ```
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.dense.len()
    }

    /// Whether the map holds no values.
    ///
    /// ```
    /// let map: handlekit::SparseSecondaryMap<handlekit::Id, u8> = Default::default();
    /// assert!(map.is_empty());
    /// ```
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.dense.len() == 0
    }

    /// The number of values the dense side holds without reallocating.
    ///
    /// ```
    /// let map: handlekit::SparseSecondaryMap<handlekit::Id, u8> = handlekit::SparseSecondaryMap::with_capacity(4);
    /// assert!(map.capacity() >= 4);
    /// ```
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.dense.values.capacity().min(self.dense.keys.capacity())
    }

    /// Makes room for at least `additional` more values on the dense side.
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

    /// Makes room for at least `additional` more values on the dense side,
    /// or returns a [`CapacityError`]: when the map would hold more values
    /// than the key type has indices, or when the allocation fails.
    ///
    /// ```
    /// handlekit::define_key! { struct Tiny(u32; index_bits = 4); }
    /// let mut map = handlekit::SparseSecondaryMap::<Tiny, u8>::new();
    /// assert!(map.try_reserve(16).is_ok());
    /// assert!(map.try_reserve(17).unwrap_err().is_index_space());
    /// ```
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), CapacityError> {
        let max_slots = KeyLimits::of::<K>().max_slots;
        if additional > max_slots.saturating_sub(self.dense.len()) {
            return Err(CapacityError::index_space(max_slots));
        }
        self.dense
            .keys
            .try_reserve(additional)
            .and_then(|()| self.dense.values.try_reserve(additional))
            .map_err(|_| CapacityError::alloc())
    }

    /// Whether the key's index and generation are ones a table could issue.
    #[inline]
    fn in_range(key: K) -> bool {
        let generation = crate::raw::keyed::lookup_generation(key);
        key.index() < KeyLimits::of::<K>().max_slots
            && generation >= 1
            && generation <= max_generation(K::GENERATION_BITS)
    }

    /// Whether `insert(key, _)` would store a value for a key that has none.
    #[cfg(feature = "serde")]
    fn entry_allowed(&self, key: K) -> bool {
        matches!(<Self as EntryTarget>::entry_state(self, key), Some(false))
    }

    /// The dense position of `key`'s value.
    #[inline]
    fn find(&self, key: K) -> Option<usize> {
        let position = self.pages.get(key.index())?;
        (self.dense.keys[position] == key).then_some(position)
    }

    /// Inserts `value` for `key` and returns the value it had, if any.
    /// Generations are compared as in [`SecondaryMap::insert`]: a newer key
    /// of the same slot replaces the older value; a stale or out-of-range
    /// key inserts nothing and gives `None`.
    ///
    /// [`SecondaryMap::insert`]: crate::SecondaryMap::insert
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// assert_eq!(map.insert(key, 1), None);
    /// assert_eq!(map.insert(key, 2), Some(1));
    /// ```
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if !Self::in_range(key) {
            return None;
        }
        match self.pages.get(key.index()) {
            Some(position) => {
                let stored = self.dense.keys[position];
                if stored == key {
                    Some(core::mem::replace(&mut self.dense.values[position], value))
                } else if stored.generation() < crate::raw::keyed::lookup_generation(key) {
                    self.dense.keys[position] = key;
                    drop(core::mem::replace(&mut self.dense.values[position], value));
                    None
                } else {
                    None
                }
            }
            None => {
                let last = self.pages.last_generation(key.index()).unwrap_or(0);
                if crate::raw::keyed::lookup_generation(key) < last || self.dense.len() >= MAX_LEN {
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

    /// Whether `key` has a value.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// assert!(map.contains_key(key));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains_key(&self, key: K) -> bool {
        self.find(key).is_some()
    }

    /// The value for `key`.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.get(key), Some(&1));
    /// ```
    #[inline]
    #[must_use]
    pub fn get(&self, key: K) -> Option<&V> {
        self.dense.values.get(self.find(key)?)
    }

    /// The value for `key`, mutably.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// *map.get_mut(key).unwrap() += 1;
    /// assert_eq!(map[key], 2);
    /// ```
    #[inline]
    #[must_use]
    pub fn get_mut(&mut self, key: K) -> Option<&mut V> {
        let position = self.find(key)?;
        self.dense.values.get_mut(position)
    }

    /// Mutable references to the values of `N` keys at once, or `None` if
    /// any key has no value or two keys are the same.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let (a, b) = (table.insert(()), table.insert(()));
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(a, 1);
    /// map.insert(b, 2);
    /// let [x, y] = map.get_disjoint_mut([a, b]).unwrap();
    /// core::mem::swap(x, y);
    /// assert_eq!((map[a], map[b]), (2, 1));
    /// ```
    #[must_use]
    pub fn get_disjoint_mut<const N: usize>(&mut self, keys: [K; N]) -> Option<[&mut V; N]> {
        let mut positions = [0usize; N];
        for (slot, key) in positions.iter_mut().zip(keys) {
            *slot = self.find(key)?;
        }
        self.dense.values.get_disjoint_mut(positions).ok()
    }

    /// The value for `key`, without checking the key.
    ///
    /// # Safety
    ///
    /// `key` must have a value in this map: exactly when
    /// [`contains_key`](Self::contains_key) would return `true`.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// // SAFETY: `key` was just given a value.
    /// assert_eq!(unsafe { *map.get_unchecked(key) }, 1);
    /// ```
    #[inline]
    #[must_use]
    pub unsafe fn get_unchecked(&self, key: K) -> &V {
        debug_assert!(
            self.contains_key(key),
            "get_unchecked with key {key:?}, which has no value"
        );
        // The caller guarantees `key` has a value, so its page entry holds
        // the value's position, which is below `len` (the index's
        // invariant).
        // SAFETY: so the entry exists and the position is in bounds.
        unsafe {
            let position = self.pages.get(key.index()).unwrap_unchecked();
            self.dense.values.get_unchecked(position)
        }
    }

    /// The value for `key`, mutably, without checking the key.
    ///
    /// # Safety
    ///
    /// `key` must have a value in this map.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// // SAFETY: `key` was just given a value.
    /// unsafe { *map.get_unchecked_mut(key) = 2 };
    /// assert_eq!(map[key], 2);
    /// ```
    #[inline]
    #[must_use]
    pub unsafe fn get_unchecked_mut(&mut self, key: K) -> &mut V {
        debug_assert!(
            self.contains_key(key),
            "get_unchecked_mut with key {key:?}, which has no value"
        );
        // As in `get_unchecked`: the entry exists and holds a position
        // below `len`.
        // SAFETY: so the entry exists and the position is in bounds.
        unsafe {
            let position = self.pages.get(key.index()).unwrap_unchecked();
            self.dense.values.get_unchecked_mut(position)
        }
    }

    /// Mutable references to the values of `N` keys at once, without
    /// checking the keys.
    ///
    /// # Safety
    ///
    /// Every key must have a value in this map, and no two keys may be
    /// equal: exactly when [`get_disjoint_mut`](Self::get_disjoint_mut)
    /// would return `Some`.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let (a, b) = (table.insert(()), table.insert(()));
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(a, 1);
    /// map.insert(b, 2);
    /// // SAFETY: `a` and `b` have values and are distinct.
    /// let [x, y] = unsafe { map.get_disjoint_unchecked_mut([a, b]) };
    /// core::mem::swap(x, y);
    /// assert_eq!((map[a], map[b]), (2, 1));
    /// ```
    #[must_use]
    pub unsafe fn get_disjoint_unchecked_mut<const N: usize>(
        &mut self,
        keys: [K; N],
    ) -> [&mut V; N] {
        debug_assert!(
            self.get_disjoint_mut(keys).is_some(),
            "get_disjoint_unchecked_mut with a key without a value, or a repeated key, in {keys:?}"
        );
        // Every key has a value (the caller's guarantee), so its page
        // entry holds its position; distinct such keys have distinct
        // positions below `len` (the pages map each key to its own).
        // SAFETY: so every entry exists, and the positions are in bounds
        // and distinct.
        unsafe {
            let positions = keys.map(|key| self.pages.get(key.index()).unwrap_unchecked());
            self.dense.values.get_disjoint_unchecked_mut(positions)
        }
    }

    /// Removes the value for `key` and returns it; the last value moves
    /// into its place.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.remove(key), Some(1));
    /// assert!(map.is_empty());
    /// ```
    pub fn remove(&mut self, key: K) -> Option<V> {
        let position = self.find(key)?;
        self.pages.set(
            key.index(),
            ABSENT | crate::raw::keyed::lookup_generation(key),
        );
        Some(self.dense.swap_remove(position, &mut self.pages))
    }

    /// The entry for `key`, or `None` if the key is stale or out of range.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.entry(key).unwrap().or_insert_with(Vec::new).push(1);
    /// assert_eq!(map[key], [1]);
    /// ```
    pub fn entry(&mut self, key: K) -> Option<Entry<'_, Self>> {
        entry::entry(self, key)
    }

    /// Removes every value; allocated pages are kept.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(table.insert(()), 1);
    /// map.clear();
    /// assert!(map.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.forget_all();
        self.dense.clear();
    }

    /// Points every sparse entry of a live key at nothing.
    fn forget_all(&mut self) {
        for &key in &self.dense.keys {
            self.pages.set(
                key.index(),
                ABSENT | crate::raw::keyed::lookup_generation(key),
            );
        }
    }

    /// Keeps only the values for which `keep(key, &mut value)` is true, in
    /// dense order, keeping the order of those that stay.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// for n in 0..4 {
    ///     map.insert(table.insert(()), n);
    /// }
    /// map.retain(|_, n| *n % 2 == 0);
    /// assert_eq!(map.as_slice(), [0, 2]);
    /// ```
    pub fn retain(&mut self, keep: impl FnMut(K, &mut V) -> bool) {
        self.dense.retain(&mut self.pages, keep);
    }

    /// Removes every value and yields it with its key, in dense order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.drain().collect::<Vec<_>>(), [(key, 1)]);
    /// ```
    pub fn drain(&mut self) -> SparseDrain<'_, K, V> {
        self.forget_all();
        self.dense.keys.drain(..).zip(self.dense.values.drain(..))
    }

    /// Iterates `(key, &value)` in dense order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.iter().collect::<Vec<_>>(), [(key, &1)]);
    /// ```
    pub fn iter(&self) -> SparseIter<'_, K, V> {
        self.dense
            .keys
            .iter()
            .copied()
            .zip(self.dense.values.iter())
    }

    /// Iterates `(key, &mut value)` in dense order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// map.iter_mut().for_each(|(_, v)| *v = 3);
    /// assert_eq!(map[key], 3);
    /// ```
    pub fn iter_mut(&mut self) -> SparseIterMut<'_, K, V> {
        self.dense
            .keys
            .iter()
            .copied()
            .zip(self.dense.values.iter_mut())
    }

    /// Iterates the keys in dense order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.keys().collect::<Vec<_>>(), [key]);
    /// ```
    pub fn keys(&self) -> packed_table::Keys<'_, K> {
        self.dense.keys.iter().copied()
    }

    /// Iterates the values in dense order: a slice iterator.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(table.insert(()), 1);
    /// assert_eq!(map.values().sum::<i32>(), 1);
    /// ```
    pub fn values(&self) -> packed_table::Values<'_, V> {
        self.dense.values.iter()
    }

    /// Iterates the values mutably in dense order: a slice iterator.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(table.insert(()), 1);
    /// map.values_mut().for_each(|v| *v = 0);
    /// assert_eq!(map.as_slice(), [0]);
    /// ```
    pub fn values_mut(&mut self) -> packed_table::ValuesMut<'_, V> {
        self.dense.values.iter_mut()
    }

    /// The values, packed, in dense order.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(table.insert(()), 'x');
    /// assert_eq!(map.as_slice(), ['x']);
    /// ```
    #[must_use]
    pub fn as_slice(&self) -> &[V] {
        &self.dense.values
    }

    /// The key of each value, in dense order.
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
        &self.dense.keys
    }

    /// Pages of the sparse array allocated so far (4 KiB each).
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
        self.pages.allocated_pages()
    }

    /// Checks internal invariants; panics if one is broken. For tests and
    /// fuzzing; not part of the stable API.
    #[doc(hidden)]
    pub fn check_invariants(&self) {
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

impl<K: Key, V> EntryTarget for SparseSecondaryMap<K, V> {
    type Key = K;
    type Value = V;

    fn entry_state(&self, key: K) -> Option<bool> {
        if !Self::in_range(key) {
            return None;
        }
        match self.pages.get(key.index()) {
            None => {
                let last = self.pages.last_generation(key.index()).unwrap_or(0);
                (crate::raw::keyed::lookup_generation(key) >= last && self.dense.len() < MAX_LEN)
                    .then_some(false)
            }
            Some(position) => {
                let stored = self.dense.keys[position];
                if crate::raw::keyed::lookup_generation(key) < stored.generation() {
                    None
                } else {
                    Some(stored == key)
                }
            }
        }
    }

    fn entry_get(&self, key: K) -> Option<&V> {
        self.get(key)
    }

    fn entry_get_mut(&mut self, key: K) -> Option<&mut V> {
        self.get_mut(key)
    }

    fn entry_insert(&mut self, key: K, value: V) -> Option<V> {
        self.insert(key, value)
    }

    fn entry_remove(&mut self, key: K) -> Option<V> {
        self.remove(key)
    }
}

impl<K: Key, V> Default for SparseSecondaryMap<K, V> {
    /// ```
    /// let map: handlekit::SparseSecondaryMap<handlekit::Id32, u8> = Default::default();
    /// assert!(map.is_empty());
    /// ```
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Key, V: Clone> Clone for SparseSecondaryMap<K, V> {
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.clone()[key], 1);
    /// ```
    fn clone(&self) -> Self {
        SparseSecondaryMap {
            pages: self.pages.clone(),
            dense: self.dense.clone(),
        }
    }
}

impl<K: Key, V: fmt::Debug> fmt::Debug for SparseSecondaryMap<K, V> {
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(table.insert(()), 'a');
    /// assert_eq!(format!("{map:?}"), "{Id(0v1): 'a'}");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Key, V: PartialEq> PartialEq for SparseSecondaryMap<K, V> {
    /// Equal when the same keys hold equal values, whatever the order.
    ///
    /// ```
    /// let map: handlekit::SparseSecondaryMap<handlekit::Id, u8> = Default::default();
    /// assert_eq!(map, map.clone());
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(key, value)| other.get(key) == Some(value))
    }
}

impl<K: Key, V: Eq> Eq for SparseSecondaryMap<K, V> {}

impl<K: Key, V> Index<K> for SparseSecondaryMap<K, V> {
    type Output = V;

    /// # Panics
    ///
    /// If `key` has no value.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map[key], 1);
    /// ```
    #[track_caller]
    fn index(&self, key: K) -> &V {
        match self.get(key) {
            Some(value) => value,
            None => missing(key),
        }
    }
}

impl<K: Key, V> IndexMut<K> for SparseSecondaryMap<K, V> {
    /// # Panics
    ///
    /// If `key` has no value.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// map[key] = 2;
    /// assert_eq!(map[key], 2);
    /// ```
    #[track_caller]
    fn index_mut(&mut self, key: K) -> &mut V {
        match self.get_mut(key) {
            Some(value) => value,
            None => missing(key),
        }
    }
}

impl<K: Key, V> Extend<(K, V)> for SparseSecondaryMap<K, V> {
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.extend([(key, 1)]);
    /// assert_eq!(map[key], 1);
    /// ```
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, pairs: I) {
        for (key, value) in pairs {
            self.insert(key, value);
        }
    }
}

impl<K: Key, V> FromIterator<(K, V)> for SparseSecondaryMap<K, V> {
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let map: handlekit::SparseSecondaryMap<_, _> = [(key, 1)].into_iter().collect();
    /// assert_eq!(map[key], 1);
    /// ```
    fn from_iter<I: IntoIterator<Item = (K, V)>>(pairs: I) -> Self {
        let mut map = Self::new();
        map.extend(pairs);
        map
    }
}

impl<'a, K: Key, V> IntoIterator for &'a SparseSecondaryMap<K, V> {
    type Item = (K, &'a V);
    type IntoIter = SparseIter<'a, K, V>;

    fn into_iter(self) -> SparseIter<'a, K, V> {
        self.iter()
    }
}

impl<'a, K: Key, V> IntoIterator for &'a mut SparseSecondaryMap<K, V> {
    type Item = (K, &'a mut V);
    type IntoIter = SparseIterMut<'a, K, V>;

    fn into_iter(self) -> SparseIterMut<'a, K, V> {
        self.iter_mut()
    }
}

impl<K: Key, V> IntoIterator for SparseSecondaryMap<K, V> {
    type Item = (K, V);
    type IntoIter = SparseIntoIter<K, V>;

    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 1);
    /// assert_eq!(map.into_iter().collect::<Vec<_>>(), [(key, 1)]);
    /// ```
    fn into_iter(self) -> SparseIntoIter<K, V> {
        self.dense.keys.into_iter().zip(self.dense.values)
    }
}

#[cfg(feature = "rayon")]
mod par {
    use rayon::prelude::*;

    use super::SparseSecondaryMap;
    use crate::packed_table::{ParIter, ParIterMut};
    use crate::Key;

    impl<K: Key, V: Sync> SparseSecondaryMap<K, V> {
        /// Iterates `(key, &value)` in parallel with rayon.
        ///
        /// ```
        /// use rayon::prelude::*;
        /// let mut table = handlekit::IdTable::new();
        /// let mut map = handlekit::SparseSecondaryMap::new();
        /// map.insert(table.insert(()), 3u64);
        /// assert_eq!(map.par_iter().map(|(_, v)| v).sum::<u64>(), 3);
        /// ```
        pub fn par_iter(&self) -> ParIter<'_, V, K> {
            self.dense
                .keys
                .par_iter()
                .copied()
                .zip(self.dense.values.par_iter())
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
            self.dense
                .keys
                .par_iter()
                .copied()
                .zip(self.dense.values.par_iter_mut())
        }
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use alloc::vec::Vec;
    use core::marker::PhantomData;

    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{SparseSecondaryMap, ABSENT, PAGE_BITS};
    use crate::Key;

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
            for (page_index, page) in self.pages.pages.iter().enumerate() {
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
                if !SparseSecondaryMap::<K, V>::in_range(key) {
                    return Err(D::Error::custom(format_args!(
                        "vacated key {key:?} out of range"
                    )));
                }
                map.pages.set(
                    key.index(),
                    ABSENT | crate::raw::keyed::lookup_generation(key),
                );
            }
            for (key, value) in entries {
                if map.contains_key(key) || !map.entry_allowed(key) {
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
