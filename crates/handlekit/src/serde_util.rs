//! Serde helpers shared by the tables: a slot arena serializes as a
//! sequence of `(generation, Option<payload>)`, one per slot, and
//! deserializes with every generation range-checked, the slot count bounded
//! by the key type, the free list and counts rebuilt rather than read, and
//! no allocation sized from an untrusted length.

use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, Serializer};

use crate::raw::slot::Slot;
use crate::raw::{KeyLimits, SlotArena};
use crate::Key;

/// Slots, borrowed for serialization.
pub(crate) struct SlotsRef<'a, T>(pub(crate) &'a [Slot<T>]);

impl<T: Serialize> Serialize for SlotsRef<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let slots = self.0;
        let mut seq = serializer.serialize_seq(Some(slots.len()))?;
        for slot in slots {
            seq.serialize_element(&(slot.generation(), slot.get()))?;
        }
        seq.end()
    }
}

/// A slot arena deserialized for key type `K`, with its free list built.
pub(crate) struct ArenaOf<T, K>(pub(crate) SlotArena<T>, pub(crate) PhantomData<fn(K) -> K>);

impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for ArenaOf<T, K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(SlotsVisitor::<T, K>(PhantomData))
    }
}

/// Keeps `K` in the type without affecting auto traits.
type KeyMarker<K> = fn(K) -> K;

struct SlotsVisitor<T, K>(PhantomData<(T, KeyMarker<K>)>);

impl<'de, T: Deserialize<'de>, K: Key> Visitor<'de> for SlotsVisitor<T, K> {
    type Value = ArenaOf<T, K>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of (generation, optional value) slots")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // Never trust the length hint for more than a small allocation.
        let hint = seq.size_hint().unwrap_or(0).min(4096);
        let mut arena = SlotArena::with_capacity(KeyLimits::of::<K>(), hint);
        while let Some((generation, value)) = seq.next_element::<(u32, Option<T>)>()? {
            let pushed = match value {
                Some(value) => arena.push_occupied(generation, value),
                None => arena.push_vacant(generation),
            };
            pushed.map_err(de::Error::custom)?;
        }
        arena.finish_build();
        Ok(ArenaOf(arena, PhantomData))
    }
}
