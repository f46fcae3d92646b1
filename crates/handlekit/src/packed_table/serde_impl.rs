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
use crate::raw::dense::Dense;
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
            reuse: self.sparse.reuse(),
            slots: SlotsRef(self.sparse.slot_refs()),
            values: &self.dense.values,
            detached: DetachedRef(&self.sparse),
            free: FreeRef(&self.sparse),
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
        if sparse.len() != values.len() {
            return Err(D::Error::custom(format_args!(
                "{} live slots but {} values",
                sparse.len(),
                values.len()
            )));
        }
        // Every live slot must point at a distinct position below `len`.
        let mut keys: Vec<Option<K>> = alloc::vec![None; values.len()];
        for (key, &position) in sparse.keyed_iter() {
            let entry = keys.get_mut(position as usize).ok_or_else(|| {
                D::Error::custom(format_args!("position {position} out of range"))
            })?;
            if entry.is_some() {
                return Err(D::Error::custom(format_args!(
                    "position {position} used twice"
                )));
            }
            *entry = Some(key);
        }
        // All `len` positions are filled: `len` live slots, none twice.
        let keys = keys.into_iter().flatten().collect();
        Ok(PackedTable {
            sparse,
            dense: Dense { keys, values },
        })
    }
}
