//! Serde support: a table serializes as its reuse policy and its slots, each
//! slot as `(generation, Option<value>)`, so a round trip keeps every key
//! valid and every stale key stale.
//!
//! Deserialization trusts nothing: every generation is range-checked, the
//! slot count is bounded by the key type, the free list and counts are
//! rebuilt from the slots rather than read, and no allocation is sized from
//! an untrusted length.

use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

use super::IdTable;
use crate::raw::{KeyLimits, SlotArena};
use crate::{Key, Reuse};

/// The serialized slots, borrowed from a table.
struct SlotsRef<'a, T>(&'a SlotArena<T>);

impl<T: Serialize> Serialize for SlotsRef<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let slots = self.0.slots();
        let mut seq = serializer.serialize_seq(Some(slots.len()))?;
        for slot in slots {
            seq.serialize_element(&(slot.generation(), slot.get()))?;
        }
        seq.end()
    }
}

impl<T: Serialize, K: Key> Serialize for IdTable<T, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut state = serializer.serialize_struct("IdTable", 2)?;
        state.serialize_field("reuse", &self.arena.reuse())?;
        state.serialize_field("slots", &SlotsRef(&self.arena))?;
        state.end()
    }
}

/// Deserializes the slot sequence straight into an arena.
struct SlotsSeed<T> {
    limits: KeyLimits,
    _value: PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> de::DeserializeSeed<'de> for SlotsSeed<T> {
    type Value = SlotArena<T>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<SlotArena<T>, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for SlotsSeed<T> {
    type Value = SlotArena<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of (generation, optional value) slots")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SlotArena<T>, A::Error> {
        // Never trust the length hint for more than a small allocation.
        let hint = seq.size_hint().unwrap_or(0).min(4096);
        let mut arena = SlotArena::with_capacity(self.limits, hint);
        while let Some((generation, value)) = seq.next_element::<(u32, Option<T>)>()? {
            let pushed = match value {
                Some(value) => arena.push_occupied(generation, value),
                None => arena.push_vacant(generation),
            };
            pushed.map_err(de::Error::custom)?;
        }
        Ok(arena)
    }
}

#[derive(Clone, Copy)]
enum Field {
    Reuse,
    Slots,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`reuse` or `slots`")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Field, E> {
                match name {
                    "reuse" => Ok(Field::Reuse),
                    "slots" => Ok(Field::Slots),
                    other => Err(de::Error::unknown_field(other, FIELDS)),
                }
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

const FIELDS: &[&str] = &["reuse", "slots"];

/// The key type's marker, kept `Send`/`Sync` whatever `K` is.
type KeyMarker<K> = fn(K) -> K;

struct TableVisitor<T, K>(PhantomData<(T, KeyMarker<K>)>);

impl<'de, T: Deserialize<'de>, K: Key> Visitor<'de> for TableVisitor<T, K> {
    type Value = IdTable<T, K>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an IdTable")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<IdTable<T, K>, A::Error> {
        let reuse: Reuse = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &self))?;
        let arena = seq
            .next_element_seed(SlotsSeed {
                limits: KeyLimits::of::<K>(),
                _value: PhantomData,
            })?
            .ok_or_else(|| de::Error::invalid_length(1, &self))?;
        Ok(IdTable::from_arena(arena, reuse))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IdTable<T, K>, A::Error> {
        let mut reuse = None;
        let mut arena = None;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Reuse if reuse.is_some() => return Err(de::Error::duplicate_field("reuse")),
                Field::Slots if arena.is_some() => return Err(de::Error::duplicate_field("slots")),
                Field::Reuse => reuse = Some(map.next_value()?),
                Field::Slots => {
                    arena = Some(map.next_value_seed(SlotsSeed {
                        limits: KeyLimits::of::<K>(),
                        _value: PhantomData,
                    })?);
                }
            }
        }
        let reuse = reuse.ok_or_else(|| de::Error::missing_field("reuse"))?;
        let arena = arena.ok_or_else(|| de::Error::missing_field("slots"))?;
        Ok(IdTable::from_arena(arena, reuse))
    }
}

impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for IdTable<T, K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct("IdTable", FIELDS, TableVisitor(PhantomData))
    }
}

impl<T, K: Key> IdTable<T, K> {
    fn from_arena(mut arena: SlotArena<T>, reuse: Reuse) -> Self {
        arena.set_reuse(reuse);
        arena.finish_build();
        IdTable {
            arena,
            _key: PhantomData,
        }
    }
}
