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

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::SlotTable;
use crate::layout::Layout;
use crate::raw::buf::BufLayout;
use crate::raw::SlotArena;
use crate::serde_util::{
    restore_detached, restore_free_order, ArenaOf, DetachedRef, FreeOrder, FreeRef, SlotsRef,
};
use crate::{Key, Reuse};

#[derive(Serialize)]
#[serde(rename = "IdTable", bound(serialize = "T: Serialize"))]
struct Repr<'a, T, K, L: BufLayout> {
    reuse: Reuse,
    slots: SlotsRef<'a, T, L>,
    detached: DetachedRef<'a, T, K, L>,
    free: FreeRef<'a, T, K, L>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    rename = "IdTable",
    bound(deserialize = "T: Deserialize<'de>")
)]
struct Owned<T, K: Key, L: BufLayout> {
    reuse: Reuse,
    slots: ArenaOf<T, K, L>,
    #[serde(default)]
    detached: Vec<(u32, u32)>,
    #[serde(default)]
    free: Option<FreeOrder>,
}

/// Serializes the slot core of an `IdTable`, in either slot layout (a
/// [`LookupTable`](crate::LookupTable) is written exactly as an `IdTable`).
pub(crate) fn serialize_arena<T: Serialize, K, L: BufLayout, S: Serializer>(
    arena: &SlotArena<T, K, L>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    Repr {
        reuse: arena.reuse(),
        slots: SlotsRef(arena.slot_refs()),
        detached: DetachedRef(arena),
        free: FreeRef(arena),
    }
    .serialize(serializer)
}

/// Reads what [`serialize_arena`] wrote, for keys `K`, into either slot
/// layout, validating every part.
pub(crate) fn deserialize_arena<'de, T: Deserialize<'de>, K: Key, L: BufLayout, D>(
    deserializer: D,
) -> Result<SlotArena<T, K, L>, D::Error>
where
    D: Deserializer<'de>,
{
    let Owned {
        reuse,
        slots,
        detached,
        free,
    } = Owned::<T, K, L>::deserialize(deserializer)?;
    let mut arena = slots.0;
    restore_detached::<T, _, _, D::Error>(&mut arena, &detached)?;
    arena.set_reuse(reuse);
    restore_free_order::<T, _, _, D::Error>(&mut arena, free.as_ref())?;
    Ok(arena)
}

impl<T: Serialize, K: Key, L: Layout> Serialize for SlotTable<T, K, L> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_arena(&self.raw, serializer)
    }
}

impl<'de, T: Deserialize<'de>, K: Key, L: Layout> Deserialize<'de> for SlotTable<T, K, L> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(SlotTable::from_raw(deserialize_arena::<T, K, L, D>(
            deserializer,
        )?))
    }
}
