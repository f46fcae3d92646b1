//! Serde support: a table serializes as its reuse policy and its slots, each
//! slot as `(generation, Option<value>)`, so a round trip keeps every key
//! valid and every stale key stale. Deserialization validates everything
//! (see `serde_util`); the free list is rebuilt in index order. A fixed
//! capacity is not part of the serialized form: the result can grow.

use core::marker::PhantomData;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::IdTable;
use crate::serde_util::{ArenaOf, SlotsRef};
use crate::{Key, Reuse};

#[derive(Serialize)]
#[serde(rename = "IdTable", bound(serialize = "T: Serialize"))]
struct Repr<'a, T> {
    reuse: Reuse,
    slots: SlotsRef<'a, T>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    rename = "IdTable",
    bound(deserialize = "T: Deserialize<'de>")
)]
struct Owned<T, K: Key> {
    reuse: Reuse,
    slots: ArenaOf<T, K>,
}

impl<T: Serialize, K: Key> Serialize for IdTable<T, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Repr {
            reuse: self.arena.reuse(),
            slots: SlotsRef(self.arena.slot_refs()),
        }
        .serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for IdTable<T, K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Owned { reuse, slots } = Owned::<T, K>::deserialize(deserializer)?;
        let mut arena = slots.0;
        arena.set_reuse(reuse);
        Ok(IdTable {
            arena,
            _key: PhantomData,
        })
    }
}
