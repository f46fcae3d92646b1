//! Serde support: a table serializes as its reuse policy, its slots, each
//! slot as `(generation, Option<value>)`, its detached slots as
//! `(index, generation)` pairs, and the order of its free list (`free`:
//! the listed slots from the head, and where the refill of an emptied
//! table goes on, if it does), so a round trip keeps every key valid,
//! every stale key stale, every detached key detached, and hands out the
//! same keys as the original would. Data without the `detached` field
//! (written before it existed) reads as none detached; data without the
//! `free` field reads with the free list rebuilt in index order.
//! Deserialization validates everything (see `serde_util`), the saved
//! free-list order included. A fixed capacity is not part of the
//! serialized form: the result can grow.

use alloc::vec::Vec;
use core::marker::PhantomData;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::IdTable;
use crate::serde_util::{
    restore_detached, restore_free_order, ArenaOf, DetachedRef, FreeOrder, FreeRef, SlotsRef,
};
use crate::{Key, Reuse};

#[derive(Serialize)]
#[serde(rename = "IdTable", bound(serialize = "T: Serialize"))]
struct Repr<'a, T> {
    reuse: Reuse,
    slots: SlotsRef<'a, T>,
    detached: DetachedRef<'a, T>,
    free: FreeRef<'a, T>,
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
    #[serde(default)]
    free: Option<FreeOrder>,
}

impl<T: Serialize, K: Key> Serialize for IdTable<T, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Repr {
            reuse: self.arena.reuse(),
            slots: SlotsRef(self.arena.slot_refs()),
            detached: DetachedRef(&self.arena),
            free: FreeRef(&self.arena),
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
            free,
        } = Owned::<T, K>::deserialize(deserializer)?;
        let mut arena = slots.0;
        restore_detached::<T, _, D::Error>(&mut arena, &detached)?;
        arena.set_reuse(reuse);
        restore_free_order::<T, _, D::Error>(&mut arena, free.as_ref())?;
        Ok(IdTable {
            arena,
            _key: PhantomData,
        })
    }
}
