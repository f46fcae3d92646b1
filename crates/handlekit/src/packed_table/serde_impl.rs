//! Serde support: a table serializes as its reuse policy, its sparse slots
//! (`(generation, Option<dense position>)`) and its values in dense order, so
//! a round trip keeps every key, every stale key and the dense order; and its
//! detached slots as `(index, generation)` pairs, so detached keys stay
//! detached (data without the field reads as none detached); and the
//! order of its free list, as `IdTable` does (see `id_table::serde_impl`),
//! so a round trip hands out the same keys (data without the `free` field
//! reads with the free list rebuilt in index order).
//! Deserialization checks that the positions are exactly `0..len`, once each.

use alloc::vec::Vec;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::PackedTable;
use crate::raw::packed::Packed;
use crate::raw::InterleavedLayout;
use crate::serde_util::{
    restore_detached, restore_free_order, ArenaOf, DetachedRef, FreeOrder, FreeRef, SlotsRef,
};
use crate::{Key, Reuse};

#[derive(Serialize)]
#[serde(rename = "PackedTable", bound(serialize = "T: Serialize"))]
struct Repr<'a, T, K> {
    reuse: Reuse,
    slots: SlotsRef<'a, u32, InterleavedLayout>,
    values: &'a [T],
    detached: DetachedRef<'a, u32, K, InterleavedLayout>,
    free: FreeRef<'a, u32, K, InterleavedLayout>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    rename = "PackedTable",
    bound(deserialize = "T: Deserialize<'de>")
)]
struct Owned<T, K: Key> {
    reuse: Reuse,
    slots: ArenaOf<u32, K, InterleavedLayout>,
    values: Vec<T>,
    #[serde(default)]
    detached: Vec<(u32, u32)>,
    #[serde(default)]
    free: Option<FreeOrder>,
}

impl<T: Serialize, K: Key> Serialize for PackedTable<T, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Repr {
            reuse: self.core.sparse().reuse(),
            slots: SlotsRef(self.core.sparse().slot_refs()),
            values: &self.core.dense().values,
            detached: DetachedRef(self.core.sparse()),
            free: FreeRef(self.core.sparse()),
        }
        .serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for PackedTable<T, K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Owned {
            reuse,
            slots,
            values,
            detached,
            free,
        } = Owned::<T, K>::deserialize(deserializer)?;
        let mut sparse = slots.0;
        restore_detached::<u32, _, _, D::Error>(&mut sparse, &detached)?;
        sparse.set_reuse(reuse);
        restore_free_order::<u32, _, _, D::Error>(&mut sparse, free.as_ref())?;
        let core = Packed::from_parts(sparse, values).map_err(D::Error::custom)?;
        Ok(PackedTable { core })
    }
}
