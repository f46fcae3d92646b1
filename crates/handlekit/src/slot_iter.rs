//! The key of a table's own slot, which every iterator and lookup that
//! hands out keys makes.

use crate::Key;

/// The key for a slot index and generation that a container's own slots
/// hold.
///
/// # Safety
///
/// `index` and `generation` must name a value the container holds (or
/// held), with its limits taken from `K` (`KeyLimits::of::<K>()`): then
/// the index is below `2^INDEX_BITS` and the generation lies in
/// `1..=max_generation(GENERATION_BITS)`, as
/// [`Key::__from_table_parts_unchecked`] requires. Every occupied slot of
/// the raw layer holds such a generation (generations start at 1, never
/// pass the limit, and deserialization refuses 0 and larger ones), and
/// every index is below the container's `max_slots`.
#[inline]
pub(crate) unsafe fn table_key<K: Key>(index: usize, generation: u32) -> K {
    debug_assert!(K::from_parts(index, generation).is_some());
    // SAFETY: the caller's guarantee is the method's.
    unsafe { K::__from_table_parts_unchecked(index as u32, generation) }
}
