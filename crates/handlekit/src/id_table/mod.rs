//! [`IdTable`]: the array with holes behind generational keys, a
//! [`SlotTable`] over a slot layout. The methods every table has are in
//! `table.rs`; this file holds what only the two slot layouts have (the
//! [`Reuse`] policy, detaching, a fixed capacity, shrinking).

pub use crate::iter::{Iter, IterMut, Keys, Values, ValuesMut};
use crate::layout::{Layout, Split};
use crate::raw::{KeyLimits, SlotArena};
pub use crate::table::SlotTable;
use crate::{Id, Key, Reuse};

#[cfg(feature = "serde")]
pub(crate) mod serde_impl;

#[cfg(feature = "rayon")]
pub use crate::slot_par::{ParIter, ParIterMut};

/// An array with holes: values stay where they are inserted, and a
/// generational key finds them with one bounds check and one compare.
///
/// Each slot has a 32-bit state word (a vacant bit plus the generation) in
/// one array and its value in a second, parallel array. A lookup reads the
/// state word and the value, two loads whose addresses depend only on the
/// key, so they overlap. Vacant slots hold the free-list link in the
/// value's own memory. The state words are also the occupancy: a write
/// changes its own slot and nothing else, and iteration turns 64 state
/// words into a mask at a time and reads only the live values.
///
/// | operation | cost |
/// | --- | --- |
/// | `insert`, `remove`, `get`, `contains_key` | O(1) |
/// | iteration | O(len + slots), reading 4 bytes per slot and the live values |
/// | `clear`, `retain` | O(slots) |
///
/// Memory: `4 + P` bytes per slot, where `P` is `max(size_of::<T>(), 4)`
/// rounded up to `max(align_of::<T>(), 4)` (12 bytes for `u64`). Slots are never returned to the allocator (that would let stale
/// keys come back to life), so memory follows the peak number of values.
///
/// # Stale keys
///
/// Removing a value bumps its slot's generation, so every key to it goes
/// stale: `get` returns `None` and `Index` panics. A slot whose generation
/// reaches [`Key::MAX_GENERATION`] is *retired*: it keeps its memory and is
/// never reused, so a stale key never names a later value, whatever the key
/// width and the [`Reuse`] policy. See [`IdTable::retired_count`].
///
/// # Examples
///
/// ```
/// use handlekit::IdTable;
///
/// let mut table = IdTable::new();
/// let a = table.insert("apple");
/// let b = table.insert("banana");
/// assert_eq!(table[a], "apple");
///
/// assert_eq!(table.remove(a), Some("apple"));
/// assert_eq!(table.get(a), None); // stale
///
/// let c = table.insert("cherry"); // reuses a's slot, with a new generation
/// assert_eq!(table.get(a), None);
/// assert_eq!(table[c], "cherry");
/// assert_eq!(table.values().copied().collect::<Vec<_>>(), ["cherry", "banana"]);
/// # let _ = b;
/// ```
pub type IdTable<T, K = Id> = SlotTable<T, K, Split>;

impl<T, K: Key, L: Layout> SlotTable<T, K, L> {
    /// Creates an empty table with the given slot [`Reuse`] policy.
    ///
    /// ```
    /// use handlekit::{IdTable, Reuse};
    /// let table: IdTable<u32> = IdTable::with_reuse(Reuse::Fifo { min_free: 1024 });
    /// assert_eq!(table.reuse(), Reuse::Fifo { min_free: 1024 });
    /// ```
    #[must_use]
    pub fn with_reuse(reuse: Reuse) -> Self {
        let mut table = Self::default();
        table.raw.set_reuse(reuse);
        table
    }

    /// Creates an empty table that allocates room for `capacity` values now
    /// and never reallocates: the address of a value stays fixed for as long
    /// as it lives. When it is full, [`try_insert`](Self::try_insert)
    /// returns a [`CapacityError`](crate::CapacityError).
    ///
    /// # Panics
    ///
    /// If `capacity` is more than the key type can index.
    ///
    /// ```
    /// use handlekit::IdTable;
    /// let mut table: IdTable<u64> = IdTable::with_fixed_capacity(2);
    /// let a = table.insert(1);
    /// let address = &table[a] as *const u64;
    /// table.insert(2);
    /// assert!(table.try_insert(3).is_err());
    /// assert_eq!(&table[a] as *const u64, address);
    /// ```
    #[must_use]
    pub fn with_fixed_capacity(capacity: usize) -> Self {
        SlotTable::from_raw(SlotArena::with_fixed_capacity(
            KeyLimits::of::<K>(),
            capacity,
        ))
    }

    /// The slot [`Reuse`] policy.
    ///
    /// ```
    /// assert_eq!(handlekit::IdTable::<u8>::new().reuse(), handlekit::Reuse::Lifo);
    /// ```
    #[must_use]
    pub fn reuse(&self) -> Reuse {
        self.raw.reuse()
    }

    /// Changes the slot [`Reuse`] policy. Slots freed from now on follow the
    /// new policy; the free list keeps its order.
    ///
    /// ```
    /// use handlekit::{IdTable, Reuse};
    /// let mut table: IdTable<u8> = IdTable::with_fixed_capacity(64);
    /// table.set_reuse(Reuse::Fifo { min_free: 8 });
    /// assert_eq!(table.reuse(), Reuse::Fifo { min_free: 8 });
    /// ```
    pub fn set_reuse(&mut self, reuse: Reuse) {
        self.raw.set_reuse(reuse);
    }

    /// Frees spare capacity. Slots that once held values are kept (their
    /// generations guard stale keys); a fixed-capacity table keeps its
    /// allocation.
    ///
    /// ```
    /// let mut table: handlekit::IdTable<u8> = handlekit::IdTable::with_capacity(100);
    /// table.insert(1);
    /// table.shrink_to_fit();
    /// assert!(table.capacity() >= 1);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.raw.shrink_to_fit();
    }

    /// Mutable references to the values of `N` keys at once, without
    /// checking the keys.
    ///
    /// # Safety
    ///
    /// Every key must name a live value of this table, and no two keys may
    /// be equal: exactly when [`get_disjoint_mut`](Self::get_disjoint_mut)
    /// would return `Some`.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let a = table.insert(1);
    /// let b = table.insert(2);
    /// // SAFETY: `a` and `b` are live and distinct.
    /// let [x, y] = unsafe { table.get_disjoint_unchecked_mut([a, b]) };
    /// core::mem::swap(x, y);
    /// assert_eq!((table[a], table[b]), (2, 1));
    /// ```
    #[must_use]
    pub unsafe fn get_disjoint_unchecked_mut<const N: usize>(
        &mut self,
        keys: [K; N],
    ) -> [&mut T; N] {
        debug_assert!(
            self.get_disjoint_mut(keys).is_some(),
            "get_disjoint_unchecked_mut with a dead or repeated key in {keys:?}"
        );
        // Live keys with one index are one key, so distinct live keys have
        // distinct indices.
        // SAFETY: the caller guarantees every key is live and distinct.
        unsafe {
            self.raw
                .get_disjoint_unchecked_mut(keys.map(|key| key.index()))
        }
    }

    /// Takes the value for `key` out but keeps its slot reserved: `key`
    /// names no value (`get` gives `None`, `len` drops by one) until
    /// [`reattach`](Self::reattach) puts a value back under it, and no
    /// insertion is given the slot in the meantime. `None` if the key is
    /// stale or foreign.
    ///
    /// A detached slot stays detached through [`clear`](Self::clear),
    /// `clone` and serialization (with the `serde` feature).
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(String::from("borrowed"));
    /// let mut value = table.detach(key).unwrap();
    /// assert_eq!(table.get(key), None);
    /// let other = table.insert(String::new()); // never key's slot
    /// assert_ne!(other, key);
    /// value.push('!');
    /// table.reattach(key, value);
    /// assert_eq!(table[key], "borrowed!");
    /// ```
    pub fn detach(&mut self, key: K) -> Option<T> {
        self.raw.detach_slot(key.index(), key.generation())
    }

    /// Puts `value` back under a key [`detach`](Self::detach) took a value
    /// from; the key is valid again.
    ///
    /// # Panics
    ///
    /// If `key` is not detached (it names a live value, is stale or
    /// foreign, or was reattached already).
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// let value = table.detach(key).unwrap();
    /// table.reattach(key, value + 1);
    /// assert_eq!(table[key], 2);
    /// ```
    ///
    /// ```should_panic
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// table.reattach(key, 2); // live, not detached: panics
    /// ```
    #[track_caller]
    pub fn reattach(&mut self, key: K, value: T) {
        if self
            .raw
            .reattach_slot(key.index(), key.generation(), value)
            .is_err()
        {
            not_detached("IdTable", key);
        }
    }

    /// Whether `key` is detached: [`detach`](Self::detach) took its value
    /// and [`reattach`](Self::reattach) has not put one back.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(1);
    /// assert!(!table.is_detached(key));
    /// table.detach(key);
    /// assert!(table.is_detached(key));
    /// ```
    #[must_use]
    pub fn is_detached(&self, key: K) -> bool {
        self.raw.is_detached(key.index(), key.generation())
    }
}

/// The panic of `reattach` with a key that is not detached.
#[cold]
#[track_caller]
pub(crate) fn not_detached<K: Key>(table: &str, key: K) -> ! {
    panic!("{table}::reattach: key {key:?} is not detached (it is live, stale, foreign, or reattached already)")
}

/// Removing iterator over `(key, value)`; see [`SlotTable::drain`]
/// ([`iter::Drain`](crate::iter::Drain) over the table's slots).
pub type Drain<'a, T, K = Id, L = Split> = crate::iter::Drain<'a, T, K, SlotArena<T, K, L>>;

/// Owning iterator over `(key, value)`; see [`SlotTable::into_iter`]
/// ([`iter::IntoIter`](crate::iter::IntoIter) over the table's slots).
pub type IntoIter<T, K = Id, L = Split> = crate::iter::IntoIter<T, K, SlotArena<T, K, L>>;

#[cfg(test)]
mod split_tests {
    use super::*;
    use alloc::vec::Vec;

    /// Parallel iteration's parts, split as far as they go, cover every
    /// value once and in order, for shared and exclusive access: cut at
    /// 64-slot chunks of the state words, with no hole (where each part
    /// walks its rest as a range) and then with holes.
    #[test]
    fn split_parts_cover_every_value_once() {
        // Just past the size below which a walk is not cut, to keep the
        // test quick under Miri.
        let slots = crate::raw::scan::JUST_PAST_SPLIT as u64;
        let gap = slots / 2..slots / 2 + slots / 20;
        let mut table: IdTable<u64> = IdTable::from_iter_values(0..slots);
        for round in 0..2 {
            let (expected, parts) = crate::raw::check_split_round!(table.raw);
            assert_eq!(expected.len(), table.len());
            assert!(parts > 1, "round {round}: {parts} part");
            let bumped: Vec<u64> = table.values().copied().collect();
            assert_eq!(bumped, expected.iter().map(|e| e.2 + 1).collect::<Vec<_>>());
            let keys: Vec<Id> = table.keys().collect();
            for (i, &key) in keys.iter().enumerate() {
                if i % 3 == 0 || gap.contains(&(i as u64)) {
                    table.remove(key);
                }
            }
        }
        let empty: IdTable<u64> = IdTable::new();
        assert_eq!(crate::raw::check_split_shared(empty.raw.iter(), &[]), 1);
    }
}
