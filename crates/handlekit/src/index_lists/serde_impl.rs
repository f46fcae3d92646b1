//! Serde support. A pool serializes as its slots, each slot as
//! `(generation, Option<(next, value)>)`, where `next` is the slot index of
//! the next node of the list, or null at the end. A round trip keeps every
//! node at its index and generation, so every key and every head stays
//! valid (and every stale key stale). The order of the free list is
//! written beside the slots (`free`, as for `IdTable`), so a round-tripped
//! pool gives new nodes the indices and generations the original would
//! have; data without it reads with the free list rebuilt in index order.
//!
//! Deserialization validates everything: the slots and generations (see
//! `serde_util`), the node count, and the list invariant: every link names
//! a live node, no node has two predecessors, and there is no cycle. The
//! front flags are recomputed, not read.
//!
//! Heads are not part of the pool (the user keeps them); a [`Head`]
//! serializes as `Option<u32>` (the front node's index, or null) and is
//! checked when it is used, like any head.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Head, IndexLists, Link, MAX_NODES, NIL};
use crate::serde_util::{restore_free_order, ArenaOf, FreeOrder, FreeRef, SlotsRef};
use crate::Key;

impl<T: Serialize> Serialize for Link<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let next = self.next_index();
        ((next != NIL).then_some(next), &self.value).serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Link<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (next, value) = <(Option<u32>, T)>::deserialize(deserializer)?;
        let next = match next {
            None => NIL,
            Some(index) if index < NIL => index,
            Some(index) => {
                return Err(D::Error::custom(format_args!(
                    "link to node {index} is out of range"
                )))
            }
        };
        // The front flag is recomputed once every node is read.
        Ok(Link { next, value })
    }
}

#[derive(Serialize)]
#[serde(rename = "IndexLists", bound(serialize = "T: Serialize"))]
struct Repr<'a, T, K> {
    slots: SlotsRef<'a, Link<T>>,
    free: FreeRef<'a, Link<T>, K>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    rename = "IndexLists",
    bound(deserialize = "T: Deserialize<'de>")
)]
struct Owned<T, K: Key> {
    slots: ArenaOf<Link<T>, K>,
    #[serde(default)]
    free: Option<FreeOrder>,
}

impl<T: Serialize, K: Key> Serialize for IndexLists<T, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Repr {
            slots: SlotsRef(self.arena.slot_refs()),
            free: FreeRef(&self.arena),
        }
        .serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for IndexLists<T, K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Owned { slots, free } = Owned::<T, K>::deserialize(deserializer)?;
        let mut arena = slots.0;
        arena.limit_slots(MAX_NODES).map_err(D::Error::custom)?;
        restore_free_order::<Link<T>, _, _, D::Error>(&mut arena, free.as_ref())?;
        IndexLists::from_arena(arena).map_err(D::Error::custom)
    }
}

impl Serialize for Head {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (!self.is_empty()).then_some(self.0).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Head {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Option::<u32>::deserialize(deserializer)? {
            None => Ok(Head::EMPTY),
            Some(index) if index < NIL => Ok(Head::at(index)),
            Some(index) => Err(D::Error::custom(format_args!(
                "head index {index} is out of range"
            ))),
        }
    }
}
