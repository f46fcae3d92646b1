//! The entry API shared by both secondary maps.

use core::fmt;

use crate::Key;

/// What a map must offer for the entry API. Implemented by
/// [`SecondaryMap`](crate::SecondaryMap) and
/// [`SparseSecondaryMap`](crate::SparseSecondaryMap); not meant to be
/// implemented elsewhere.
pub trait EntryTarget {
    /// The key type.
    type Key: Key;
    /// The value type.
    type Value;

    /// `Some(true)` if `key` has a value, `Some(false)` if a value could be
    /// inserted for it, `None` if the key is stale or invalid for this map.
    #[doc(hidden)]
    fn entry_state(&self, key: Self::Key) -> Option<bool>;
    #[doc(hidden)]
    fn entry_get(&self, key: Self::Key) -> Option<&Self::Value>;
    #[doc(hidden)]
    fn entry_get_mut(&mut self, key: Self::Key) -> Option<&mut Self::Value>;
    #[doc(hidden)]
    fn entry_insert(&mut self, key: Self::Key, value: Self::Value) -> Option<Self::Value>;
    #[doc(hidden)]
    fn entry_remove(&mut self, key: Self::Key) -> Option<Self::Value>;
}

/// A view into one key of a secondary map; see `entry` on
/// [`SecondaryMap`](crate::SecondaryMap::entry) and
/// [`SparseSecondaryMap`](crate::SparseSecondaryMap::entry).
pub enum Entry<'a, M: EntryTarget> {
    /// The key has a value.
    Occupied(OccupiedEntry<'a, M>),
    /// The key has no value yet.
    Vacant(VacantEntry<'a, M>),
}

/// An entry with a value.
pub struct OccupiedEntry<'a, M: EntryTarget> {
    map: &'a mut M,
    key: M::Key,
}

/// An entry without a value.
pub struct VacantEntry<'a, M: EntryTarget> {
    map: &'a mut M,
    key: M::Key,
}

/// The entry for `key`, or `None` if the key is stale.
pub(crate) fn entry<M: EntryTarget>(map: &mut M, key: M::Key) -> Option<Entry<'_, M>> {
    Some(match map.entry_state(key)? {
        true => Entry::Occupied(OccupiedEntry { map, key }),
        false => Entry::Vacant(VacantEntry { map, key }),
    })
}

#[cold]
fn lost(key: impl fmt::Debug) -> ! {
    unreachable!("entry for {key:?} lost its value")
}

impl<'a, M: EntryTarget> Entry<'a, M> {
    /// The entry's key.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut names = handlekit::SecondaryMap::new();
    /// assert_eq!(names.entry(key).unwrap().key(), key);
    /// # names.insert(key, 0);
    /// ```
    pub fn key(&self) -> M::Key {
        match self {
            Entry::Occupied(entry) => entry.key,
            Entry::Vacant(entry) => entry.key,
        }
    }

    /// The value, inserting `default` first if there is none.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut hits = handlekit::SecondaryMap::new();
    /// *hits.entry(key).unwrap().or_insert(0) += 1;
    /// *hits.entry(key).unwrap().or_insert(0) += 1;
    /// assert_eq!(hits[key], 2);
    /// ```
    pub fn or_insert(self, default: M::Value) -> &'a mut M::Value {
        self.or_insert_with(|| default)
    }

    /// The value, inserting `make()` first if there is none.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut names = handlekit::SecondaryMap::new();
    /// names.entry(key).unwrap().or_insert_with(|| String::from("x"));
    /// assert_eq!(names[key], "x");
    /// ```
    pub fn or_insert_with(self, make: impl FnOnce() -> M::Value) -> &'a mut M::Value {
        match self {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => entry.insert(make()),
        }
    }

    /// The value, inserting `make(key)` first if there is none.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut owners = handlekit::SecondaryMap::new();
    /// let owner = *owners.entry(key).unwrap().or_insert_with_key(|key| key);
    /// assert_eq!(owner, key);
    /// ```
    pub fn or_insert_with_key(self, make: impl FnOnce(M::Key) -> M::Value) -> &'a mut M::Value {
        match self {
            Entry::Occupied(entry) => entry.into_mut(),
            Entry::Vacant(entry) => {
                let key = entry.key;
                entry.insert(make(key))
            }
        }
    }

    /// The value, inserting the default first if there is none.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut lists: handlekit::SecondaryMap<_, Vec<u8>> = handlekit::SecondaryMap::new();
    /// lists.entry(key).unwrap().or_default().push(1);
    /// assert_eq!(lists[key], [1]);
    /// ```
    pub fn or_default(self) -> &'a mut M::Value
    where
        M::Value: Default,
    {
        self.or_insert_with(Default::default)
    }

    /// Runs `f` on the value if there is one.
    ///
    /// ```
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut counts = handlekit::SecondaryMap::new();
    /// counts.insert(key, 1);
    /// counts.entry(key).unwrap().and_modify(|n| *n += 1).or_insert(0);
    /// assert_eq!(counts[key], 2);
    /// ```
    #[must_use]
    pub fn and_modify(mut self, f: impl FnOnce(&mut M::Value)) -> Self {
        if let Entry::Occupied(entry) = &mut self {
            f(entry.get_mut());
        }
        self
    }
}

impl<'a, M: EntryTarget> OccupiedEntry<'a, M> {
    /// The entry's key.
    ///
    /// ```
    /// use handlekit::secondary::Entry;
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// if let Some(Entry::Occupied(entry)) = map.entry(key) {
    ///     assert_eq!(entry.key(), key);
    /// }
    /// ```
    pub fn key(&self) -> M::Key {
        self.key
    }

    /// The value.
    ///
    /// ```
    /// use handlekit::secondary::Entry;
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// if let Some(Entry::Occupied(entry)) = map.entry(key) {
    ///     assert_eq!(*entry.get(), 1);
    /// }
    /// ```
    pub fn get(&self) -> &M::Value {
        match self.map.entry_get(self.key) {
            Some(value) => value,
            None => lost(self.key),
        }
    }

    /// The value, mutably.
    ///
    /// ```
    /// use handlekit::secondary::Entry;
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// if let Some(Entry::Occupied(mut entry)) = map.entry(key) {
    ///     *entry.get_mut() = 2;
    /// }
    /// assert_eq!(map[key], 2);
    /// ```
    pub fn get_mut(&mut self) -> &mut M::Value {
        match self.map.entry_get_mut(self.key) {
            Some(value) => value,
            None => lost(self.key),
        }
    }

    /// The value, borrowed for as long as the map.
    ///
    /// ```
    /// use handlekit::secondary::Entry;
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// if let Some(Entry::Occupied(entry)) = map.entry(key) {
    ///     *entry.into_mut() += 1;
    /// }
    /// assert_eq!(map[key], 2);
    /// ```
    pub fn into_mut(self) -> &'a mut M::Value {
        match self.map.entry_get_mut(self.key) {
            Some(value) => value,
            None => lost(self.key),
        }
    }

    /// Replaces the value and returns the old one.
    ///
    /// ```
    /// use handlekit::secondary::Entry;
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// if let Some(Entry::Occupied(mut entry)) = map.entry(key) {
    ///     assert_eq!(entry.insert(5), 1);
    /// }
    /// ```
    pub fn insert(&mut self, value: M::Value) -> M::Value {
        core::mem::replace(self.get_mut(), value)
    }

    /// Removes the value and returns it with its key.
    ///
    /// ```
    /// use handlekit::secondary::Entry;
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SparseSecondaryMap::new();
    /// map.insert(key, 'v');
    /// if let Some(Entry::Occupied(entry)) = map.entry(key) {
    ///     assert_eq!(entry.remove_entry(), (key, 'v'));
    /// }
    /// assert!(map.is_empty());
    /// ```
    pub fn remove_entry(self) -> (M::Key, M::Value) {
        let key = self.key;
        (key, self.remove())
    }

    /// Removes the value and returns it.
    ///
    /// ```
    /// use handlekit::secondary::Entry;
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// map.insert(key, 1);
    /// if let Some(Entry::Occupied(entry)) = map.entry(key) {
    ///     assert_eq!(entry.remove(), 1);
    /// }
    /// assert!(map.is_empty());
    /// ```
    pub fn remove(self) -> M::Value {
        match self.map.entry_remove(self.key) {
            Some(value) => value,
            None => lost(self.key),
        }
    }
}

impl<'a, M: EntryTarget> VacantEntry<'a, M> {
    /// The entry's key.
    ///
    /// ```
    /// use handlekit::secondary::Entry;
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map: handlekit::SecondaryMap<_, u8> = handlekit::SecondaryMap::new();
    /// if let Some(Entry::Vacant(entry)) = map.entry(key) {
    ///     assert_eq!(entry.key(), key);
    /// }
    /// ```
    pub fn key(&self) -> M::Key {
        self.key
    }

    /// Inserts the value and returns it, mutably.
    ///
    /// ```
    /// use handlekit::secondary::Entry;
    /// let mut table = handlekit::IdTable::new();
    /// let key = table.insert(());
    /// let mut map = handlekit::SecondaryMap::new();
    /// if let Some(Entry::Vacant(entry)) = map.entry(key) {
    ///     *entry.insert(1) += 1;
    /// }
    /// assert_eq!(map[key], 2);
    /// ```
    pub fn insert(self, value: M::Value) -> &'a mut M::Value {
        self.map.entry_insert(self.key, value);
        match self.map.entry_get_mut(self.key) {
            Some(value) => value,
            None => lost(self.key),
        }
    }
}

impl<M: EntryTarget> fmt::Debug for Entry<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entry::Occupied(entry) => f.debug_tuple("Occupied").field(&entry.key).finish(),
            Entry::Vacant(entry) => f.debug_tuple("Vacant").field(&entry.key).finish(),
        }
    }
}

impl<M: EntryTarget> fmt::Debug for OccupiedEntry<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OccupiedEntry")
            .field("key", &self.key)
            .finish()
    }
}

impl<M: EntryTarget> fmt::Debug for VacantEntry<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VacantEntry")
            .field("key", &self.key)
            .finish()
    }
}
