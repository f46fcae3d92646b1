//! Serde support: a table serializes as its reuse policy, its slots, each
//! slot as `(generation, Option<value>)`, and its detached slots as
//! `(index, generation)` pairs, so a round trip keeps every key valid,
//! every stale key stale and every detached key detached. Data without the
//! `detached` field (written before it existed) reads as none detached. Deserialization validates everything
//! (see `serde_util`); the free list is rebuilt in index order. A fixed
//! capacity is not part of the serialized form: the result can grow.

use alloc::vec::Vec;
use core::marker::PhantomData;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::IdTable;
use crate::serde_util::{restore_detached, ArenaOf, DetachedRef, SlotsRef};
use crate::{Key, Reuse};

#[derive(Serialize)]
#[serde(rename = "IdTable", bound(serialize = "T: Serialize"))]
struct Repr<'a, T> {
    reuse: Reuse,
    slots: SlotsRef<'a, T>,
    detached: DetachedRef<'a, T>,
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
    #[serde(default)]
    detached: Vec<(u32, u32)>,
}

impl<T: Serialize, K: Key> Serialize for IdTable<T, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Repr {
            reuse: self.arena.reuse(),
            slots: SlotsRef(self.arena.slot_refs()),
            detached: DetachedRef(&self.arena),
        }
        .serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for IdTable<T, K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Owned {
            reuse,
            slots,
            detached,
        } = Owned::<T, K>::deserialize(deserializer)?;
        let mut arena = slots.0;
        restore_detached::<T, _, D::Error>(&mut arena, &detached)?;
        arena.set_reuse(reuse);
        Ok(IdTable {
            arena,
            _key: PhantomData,
        })
    }
}
