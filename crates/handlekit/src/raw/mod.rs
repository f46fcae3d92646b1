//! The raw slot layer. Every line of `unsafe` in the crate lives under this
//! module; the tables above it are safe code over its API.
//!
//! - [`slot`]: one slot, a generation-tagged union of value and free link;
//! - [`bitset`]: the occupancy bitset and its word-at-a-time iterator;
//! - [`arena`]: `SlotArena`, the array with holes that the tables share.

pub(crate) mod arena;
pub(crate) mod bitset;
pub(crate) mod slot;

pub(crate) use arena::{KeyLimits, RawIter, RawIterMut, SlotArena};
