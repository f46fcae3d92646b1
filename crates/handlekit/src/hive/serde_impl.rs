//! Serde support: a hive serializes as its block sizes and its blocks in
//! order, each block as its floor (the generation its never-used slots
//! start from) and its used slots as `(generation, Option<value>)`; a freed
//! range is a floor with no slots. A round trip keeps every key valid and
//! every stale key stale.
//!
//! Deserialization validates the block sizes, every generation (above its
//! block's floor, within the key's range) and the index space, then
//! rebuilds the free lists in slot order and the lists of blocks. Each block
//! is allocated with exactly the slots the input used, never the block size
//! the input names: a few bytes cannot ask for a block of 2³¹ slots. The
//! result may therefore have less spare room than the original; it grows
//! as usual. The bookkeeping of the index space the input names (the chunk
//! directories, state words to the end of a block's last chunk) is taken
//! from an allowance that grows with the input (`RawHive::load_allowance`),
//! so input naming vast freed ranges is refused, not obeyed. What is left
//! of it after the last block writes the state words of freed ranges
//! (`RawHive::finish_build`), so that lookups there need no directory
//! load first.

use alloc::vec::Vec;

use serde::de::Error as _;
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Hive;
use crate::raw::block::Block;
use crate::raw::hive::RawHive;
use crate::raw::{BuildError, KeyLimits};
use crate::serde_util::serialize_slots;
use crate::Key;

/// The blocks of a hive, borrowed for serialization.
struct BlocksRef<'a, T, K>(&'a RawHive<T, K>);

impl<T: Serialize, K> Serialize for BlocksRef<'_, T, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let blocks = self.0.blocks_with_floors();
        let mut seq = serializer.serialize_seq(Some(blocks.len()))?;
        for (floor, block) in blocks {
            seq.serialize_element(&(floor, BlockSlots(block)))?;
        }
        seq.end()
    }
}

/// The used slots of one block, borrowed for serialization.
struct BlockSlots<'a, T>(&'a Block<T>);

impl<T: Serialize> Serialize for BlockSlots<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_slots(serializer, self.0.fresh(), self.0.used_slots())
    }
}

#[derive(Serialize)]
#[serde(rename = "Hive", bound(serialize = "T: Serialize"))]
struct Repr<'a, T, K> {
    block_sizes: (usize, usize),
    blocks: BlocksRef<'a, T, K>,
}

/// One block as read: its floor and its used slots.
type BlockParts<T> = (u32, Vec<(u32, Option<T>)>);

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    rename = "Hive",
    bound(deserialize = "T: Deserialize<'de>")
)]
struct Owned<T> {
    block_sizes: (usize, usize),
    blocks: Vec<BlockParts<T>>,
}

impl<T: Serialize, K: Key> Serialize for Hive<T, K> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Repr {
            block_sizes: self.raw.block_sizes(),
            blocks: BlocksRef(&self.raw),
        }
        .serialize(serializer)
    }
}

/// `log2` of a block size from the input, which must be a power of two in
/// `1..=2^31`.
fn block_shift(slots: usize) -> Result<u32, BuildError> {
    if slots.is_power_of_two() && slots <= 1 << 31 {
        Ok(slots.trailing_zeros())
    } else {
        Err(BuildError::Layout(
            "block sizes must be powers of two in 1..=2^31",
        ))
    }
}

impl<'de, T: Deserialize<'de>, K: Key> Deserialize<'de> for Hive<T, K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let Owned {
            block_sizes: (min, max),
            blocks,
        } = Owned::<T>::deserialize(deserializer)?;
        let build = || -> Result<RawHive<T, K>, BuildError> {
            let (min_shift, shift) = (block_shift(min)?, block_shift(max)?);
            if min_shift > shift {
                return Err(BuildError::Layout("smallest block size above the largest"));
            }
            let mut raw = RawHive::new(KeyLimits::of::<K>(), min_shift, shift);
            let slots = blocks.iter().map(|(_, slots)| slots.len()).sum();
            let mut allowance = RawHive::<T, K>::load_allowance(blocks.len(), slots);
            for (floor, slots) in blocks {
                raw.push_block(floor, slots, &mut allowance)?;
            }
            raw.finish_build(allowance);
            Ok(raw)
        };
        let raw = build().map_err(D::Error::custom)?;
        Ok(Hive::from_raw(raw))
    }
}
