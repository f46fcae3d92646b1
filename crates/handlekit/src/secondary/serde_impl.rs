//! Serde support for [`SecondaryMap`]: its slots, each as
//! `(generation, Option<value>)`, validated on the way in like a table's.

use core::marker::PhantomData;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::SecondaryMap;
use crate::serde_util::{ArenaOf, SlotsRef};
use crate::Key;

impl<K: Key, V: Serialize> Serialize for SecondaryMap<K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        SlotsRef(self.store.slot_refs()).serialize(serializer)
    }
}

impl<'de, K: Key, V: Deserialize<'de>> Deserialize<'de> for SecondaryMap<K, V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let ArenaOf(arena, _) = ArenaOf::<V, K>::deserialize(deserializer)?;
        Ok(SecondaryMap {
            store: crate::raw::KeyedStore::from_arena(arena),
            _key: PhantomData,
        })
    }
}
