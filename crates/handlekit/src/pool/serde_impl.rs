//! Serde support: a pool serializes as its used slots in index order, each
//! as `(generation, Option<value>)` (the format of an `IdTable`'s slots), so
//! a round trip keeps every key valid and every stale key stale.
//! Deserialization validates every generation and the slot count, rebuilds
//! the free list in index order, and allocates blocks only as slots arrive.
//!
//! The block size and a fixed capacity are not part of the serialized form
//! (a key's flat index does not depend on them): the result has the default
//! block size and can grow. Reading a block size from untrusted input would
//! let a few bytes ask for a block of 2³¹ slots.

use core::marker::PhantomData;

use serde::de::DeserializeSeed;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Pool;
use crate::raw::pool::default_shift;
use crate::raw::pool::RawPool;
use crate::raw::KeyLimits;
use crate::serde_util::{serialize_slots, SlotsInto};
use crate::Key;

/// The used slots of a pool, borrowed for serialization.
struct UsedSlots<'a, T, K>(&'a RawPool<T, K>);

impl<T: Serialize, K> Serialize for UsedSlots<'_, T, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_slots(serializer, self.0.used(), self.0.used_slots())
    }
}

#[derive(Serialize)]
#[serde(rename = "Pool", bound(serialize = "T: Serialize"))]
struct Repr<'a, T, K> {
    slots: UsedSlots<'a, T, K>,
}

/// A pool deserialized for key type `K`, with its free list built.
struct PoolOf<T, K>(RawPool<T, K>, PhantomData<fn(K) -> K>);

impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for PoolOf<T, K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut raw = RawPool::new(KeyLimits::of::<K>(), default_shift::<T>());
        SlotsInto(&mut raw, PhantomData).deserialize(deserializer)?;
        raw.finish_build();
        Ok(PoolOf(raw, PhantomData))
    }
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    rename = "Pool",
    bound(deserialize = "T: Deserialize<'de>")
)]
struct Owned<T, K: Key> {
    slots: PoolOf<T, K>,
}

impl<T: Serialize, K: Key> Serialize for Pool<T, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Repr {
            slots: UsedSlots(&self.raw),
        }
        .serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for Pool<T, K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Owned { slots } = Owned::<T, K>::deserialize(deserializer)?;
        Ok(Pool::from_raw(slots.0))
    }
}
