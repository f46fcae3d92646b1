//! Serde helpers shared by the tables: a run of slots serializes as a
//! sequence of `(generation, Option<payload>)`, one per slot, and
//! deserializes into a [`SlotSink`] (a slot arena, a pool, a hive block)
//! with every generation range-checked, the slot count bounded by the key
//! type, the free lists and counts rebuilt rather than read, and no
//! allocation sized from an untrusted length. The order of a slot arena's
//! free list is written beside its slots ([`FreeRef`]) and put back,
//! validated, after the rebuild ([`restore_free_order`]).

use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, Serializer};

use crate::raw::buf::BufLayout;
use crate::raw::pool::RawPool;
use crate::raw::slot::SlotRef;
use crate::raw::store::SlotRefs;
use crate::raw::{BuildError, KeyLimits, SlotArena};
use crate::Key;

/// Slots, borrowed for serialization.
pub(crate) struct SlotsRef<'a, T, L: BufLayout = crate::raw::buf::SplitLayout>(
    pub(crate) SlotRefs<'a, T, L>,
);

impl<T: Serialize, L: BufLayout> Serialize for SlotsRef<'_, T, L> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_slots(serializer, self.0.len(), self.0.clone())
    }
}

/// Serializes `len` slots (what `slots` yields) as a sequence of
/// `(generation, Option<&T>)`.
pub(crate) fn serialize_slots<'a, S: Serializer, T: Serialize + 'a>(
    serializer: S,
    len: usize,
    slots: impl IntoIterator<Item = SlotRef<'a, T>>,
) -> Result<S::Ok, S::Error> {
    let mut seq = serializer.serialize_seq(Some(len))?;
    for slot in slots {
        seq.serialize_element(&(slot.generation(), slot.get()))?;
    }
    seq.end()
}

/// Something a deserialized run of slots is appended to, one slot at a
/// time, in index order. Each call validates what it is given.
pub(crate) trait SlotSink<T> {
    /// Appends a slot: occupied by `value`, or vacant if `None`, with
    /// `generation` (the last occupant's, for a vacant slot).
    fn push_slot(&mut self, generation: u32, value: Option<T>) -> Result<(), BuildError>;
}

impl<T, K: Key, L: BufLayout> SlotSink<T> for SlotArena<T, K, L> {
    fn push_slot(&mut self, generation: u32, value: Option<T>) -> Result<(), BuildError> {
        match value {
            Some(value) => self.push_occupied(generation, value),
            None => self.push_vacant(generation),
        }
    }
}

impl<T, K: Key> SlotSink<T> for RawPool<T, K> {
    fn push_slot(&mut self, generation: u32, value: Option<T>) -> Result<(), BuildError> {
        self.push_used(generation, value)
    }
}

/// Deserializes a sequence of `(generation, Option<T>)` slots into a sink.
pub(crate) struct SlotsInto<'s, S, T>(pub(crate) &'s mut S, pub(crate) PhantomData<fn() -> T>);

impl<'de, S: SlotSink<T>, T: Deserialize<'de>> DeserializeSeed<'de> for SlotsInto<'_, S, T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, S: SlotSink<T>, T: Deserialize<'de>> Visitor<'de> for SlotsInto<'_, S, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence of (generation, optional value) slots")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some((generation, value)) = seq.next_element::<(u32, Option<T>)>()? {
            self.0
                .push_slot(generation, value)
                .map_err(de::Error::custom)?;
        }
        Ok(())
    }
}

/// The detached slots of an arena, serialized as a sequence of
/// `(index, generation)`: the slot index and the generation of the detached
/// key. The slot itself serializes as a vacant slot at the last generation.
pub(crate) struct DetachedRef<'a, T, K, L: BufLayout = crate::raw::buf::SplitLayout>(
    pub(crate) &'a SlotArena<T, K, L>,
);

impl<T, K, L: BufLayout> Serialize for DetachedRef<'_, T, K, L> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.detached_slots())
    }
}

/// Marks the deserialized `(index, generation)` pairs detached in `arena`
/// (built already), validating each.
pub(crate) fn restore_detached<T, K, L: BufLayout, E: de::Error>(
    arena: &mut SlotArena<T, K, L>,
    detached: &[(u32, u32)],
) -> Result<(), E> {
    for &(index, generation) in detached {
        arena
            .restore_detached(index, generation)
            .map_err(E::custom)?;
    }
    Ok(())
}

/// The order of an arena's free list, serialized as `{ list, refill }`:
/// the listed free slots from the head (the next insertion's) to the
/// tail, and where the refill of an emptied table goes on if the list ends
/// in it (else `None`). Written by the tables whose keys come from a
/// [`SlotArena`] (`IdTable`, `PackedTable`), so that a round-tripped table
/// hands out the keys the original would have.
pub(crate) struct FreeRef<'a, T, K, L: BufLayout = crate::raw::buf::SplitLayout>(
    pub(crate) &'a SlotArena<T, K, L>,
);

impl<T, K, L: BufLayout> Serialize for FreeRef<'_, T, K, L> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Read back as an `Option` (data written before the order was has
        // none): a format without field names needs its tag.
        serializer.serialize_some(&FreeStruct(self.0))
    }
}

/// The `{ list, refill }` struct of [`FreeRef`].
struct FreeStruct<'a, T, K, L: BufLayout>(&'a SlotArena<T, K, L>);

impl<T, K, L: BufLayout> Serialize for FreeStruct<'_, T, K, L> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut free = serializer.serialize_struct("FreeList", 2)?;
        free.serialize_field("list", &FreeListRef(self.0))?;
        free.serialize_field("refill", &self.0.refill_start())?;
        free.end()
    }
}

/// The listed free slots, as a sequence of known length.
struct FreeListRef<'a, T, K, L: BufLayout>(&'a SlotArena<T, K, L>);

impl<T, K, L: BufLayout> Serialize for FreeListRef<'_, T, K, L> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // Some formats need the length first: walk the list twice.
        let mut seq = serializer.serialize_seq(Some(self.0.free_list().count()))?;
        for index in self.0.free_list() {
            seq.serialize_element(&index)?;
        }
        seq.end()
    }
}

/// A deserialized free-list order (see [`FreeRef`]). The list's `Vec` grows
/// as indices arrive (serde preallocates only a bounded amount from a
/// length hint), and [`restore_free_order`] refuses a list longer than the
/// slots before it allocates anything.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename = "FreeList")]
pub(crate) struct FreeOrder {
    list: alloc::vec::Vec<u32>,
    refill: Option<u32>,
}

/// Puts the saved free-list order back into `arena`, which was built (its
/// free list rebuilt in index order) and given its reuse policy; with no
/// saved order (data written before the order was), keeps the rebuilt one.
/// Refuses an order the arena cannot have (see
/// `SlotArena::restore_free_order`).
pub(crate) fn restore_free_order<T, K, L: BufLayout, E: de::Error>(
    arena: &mut SlotArena<T, K, L>,
    free: Option<&FreeOrder>,
) -> Result<(), E> {
    match free {
        Some(free) => arena
            .restore_free_order(&free.list, free.refill)
            .map_err(E::custom),
        None => Ok(()),
    }
}

/// A slot arena deserialized for key type `K`, with its free list built.
pub(crate) struct ArenaOf<T, K, L: BufLayout = crate::raw::buf::SplitLayout>(
    pub(crate) SlotArena<T, K, L>,
    pub(crate) PhantomData<fn(K) -> K>,
);

impl<'de, T: Deserialize<'de>, K: Key, L: BufLayout> Deserialize<'de> for ArenaOf<T, K, L> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Nothing is reserved from the length hint: the slots vector grows
        // as slots arrive.
        let mut arena = SlotArena::with_capacity(KeyLimits::of::<K>(), 0);
        SlotsInto(&mut arena, PhantomData).deserialize(deserializer)?;
        arena.finish_build();
        Ok(ArenaOf(arena, PhantomData))
    }
}
