//! The raw slot layer. Every line of `unsafe` in the crate that touches slot
//! memory or makes a key lives under this module: the containers here are
//! typed by their key type and hand out keys ([`keyed`]), so the tables
//! above are safe code over its API, except for the documented
//! `*_unchecked` forwarders and one caller of `Exclusive::value_at` (the
//! mutable list iterator of `IndexLists`), whose contract (each index
//! once) rests on the lists being acyclic.
//!
//! - [`slot`]: one slot, a generation-tagged union of value and free link,
//!   and the views `SlotRef`/`SlotMut` that see its two parts wherever they
//!   are stored;
//! - [`bitset`]: the word-at-a-time iterator over 64-slot masks (a
//!   walk's, or a `Block`'s inverted vacancy words);
//! - [`scan`]: the same walk made from state words, 64 at a time (the
//!   store's occupancy), and a slot-by-slot walk for interleaved stores;
//! - [`buf`]: `SlotBuf`, the one allocation behind a store, in one of two
//!   layouts (`BufLayout`): state words in an area apart from the payloads
//!   (`SplitLayout`, the default) or each beside its payload
//!   (`InterleavedLayout`, `PackedTable`'s sparse side);
//! - [`store`]: `SlotStore`, slots in a `SlotBuf`: lookup, iteration, drop,
//!   clone;
//! - [`block`]: `Block`, a fixed run of slots that never moves, with a
//!   64-byte header of its own and vacancy words, and iteration over a
//!   list of blocks (the storage of `Hive`);
//! - [`flat`]: `FlatSlots`, one array of state words over bare payload
//!   blocks of one size, laid end to end behind a directory, with no
//!   header or occupancy bits, and `FlatWalk`, which iterates them by masks
//!   of 64 state words (the storage of `Pool`);
//! - [`layout`]: where a block keeps its slots (`Split`: an array of state
//!   words beside an array of payloads, for `Hive`), the flat bases every
//!   walk over blocks uses, and the accesses that iterate them;
//! - [`hive`]: `RawHive`, blocks of growing size, each with its own free
//!   list, plus the list of blocks with room and the freed ranges;
//! - [`pool`]: `RawPool`, blocks of one size plus one free list threaded
//!   through their vacant slots;
//! - [`arena`]: `SlotArena`, a store plus the free list, reuse policy and
//!   retirement, shared by the tables that issue keys;
//! - [`keyed`]: where keys are made: the key limits, `table_key`, the keyed
//!   cursor `Keyed`, and `KeyedStore`, a secondary map's slot store;
//! - [`dense`]: keys and values packed in two parallel arrays, and the
//!   `Positions` index that follows their moves;
//! - [`packed`]: `Packed`, a `PackedTable`'s sparse arena and dense arrays
//!   as one type, which keeps the invariant between them.

pub(crate) mod arena;
pub(crate) mod bitset;
pub(crate) mod block;
pub(crate) mod buf;
pub(crate) mod cursor;
pub(crate) mod dense;
pub(crate) mod flat;
pub(crate) mod hive;
pub(crate) mod keyed;
pub(crate) mod keyed_store;
pub(crate) mod layout;
pub(crate) mod packed;
pub(crate) mod pool;
pub(crate) mod scan;
pub(crate) mod slot;
pub(crate) mod state_mask;
pub(crate) mod storage;
pub(crate) mod store;
pub(crate) mod table;

/// Marks the path that calls it as rare, so that the compiler lays out the
/// other side of the branch as the straight line (`core::hint::cold_path`
/// is newer than the crate's minimum Rust version).
#[cold]
#[inline]
pub(crate) fn cold_path() {}

/// Runs `pass` over `target`; if it panics (a value's `Drop`), runs it
/// again from the unwinding, so that the values after the panicking one are
/// still dropped, and then lets the panic go on (a second panic aborts, as
/// for `Vec`). `pass` must leave `target` consistent where it stops and
/// must not repeat work already done (each value is vacated before it is
/// dropped).
pub(crate) fn finish_on_panic<S>(target: &mut S, pass: fn(&mut S)) {
    /// Runs the pass again while unwinding.
    struct Guard<'a, S>(&'a mut S, fn(&mut S));
    impl<S> Drop for Guard<'_, S> {
        fn drop(&mut self) {
            (self.1)(self.0);
        }
    }
    let guard = Guard(target, pass);
    (guard.1)(guard.0);
    core::mem::forget(guard);
}

/// A cursor that parallel iteration can cut in two where its storage
/// divides (a block of a `Hive` or `Pool`, a 64-slot chunk of a store's
/// state words) and fold each part on its own thread. The parts of a cursor
/// hold disjoint sets of slots, so the parts of an exclusive cursor hand
/// out `&mut T`s that never alias.
#[cfg(any(test, feature = "rayon"))]
pub(crate) trait SplitCursor: Sized {
    /// `(flat index, generation, value)`, as the cursor yields them.
    type Item;

    /// Cuts the cursor near the middle of what it has left, or gives it
    /// back whole if it is too small to cut.
    fn split_part(self) -> (Self, Option<Self>);

    /// Folds `f` over every item left, in order.
    fn fold_part<B>(self, init: B, f: impl FnMut(B, Self::Item) -> B) -> B;
}

/// Splits `cursor` until no part splits, and folds each part into a list:
/// the parts in order, as a parallel pass would see them (on one thread,
/// so that Miri checks the parts without rayon).
#[cfg(test)]
fn split_fully<C: SplitCursor>(cursor: C) -> alloc::vec::Vec<alloc::vec::Vec<C::Item>> {
    let mut parts = alloc::vec::Vec::new();
    let mut pending = alloc::vec![cursor];
    while let Some(part) = pending.pop() {
        // A cut that does not shrink its parts would split forever.
        assert!(
            parts.len() + pending.len() < 1 << 16,
            "splitting does not end"
        );
        match part.split_part() {
            (left, Some(right)) => {
                // Left is taken next, so the parts come out in order.
                pending.push(right);
                pending.push(left);
            }
            (whole, None) => {
                parts.push(whole.fold_part(alloc::vec::Vec::new(), |mut items, item| {
                    items.push(item);
                    items
                }))
            }
        }
    }
    parts
}

/// Checks the parallel split of the raw container `$raw` (one with `iter`
/// and `iter_mut` over `u64`s): its shared and its exclusive cursor, split
/// as far as they go, yield every value once and in order
/// ([`check_split_shared`], [`check_split_exclusive`], which adds 1 to each
/// value). Gives the `(index, generation, value)` list from before the
/// bump and the number of parts.
#[cfg(test)]
macro_rules! check_split_round {
    ($raw:expr) => {{
        let expected: alloc::vec::Vec<(usize, u32, u64)> = $raw
            .iter()
            .map(|(index, generation, value)| (index, generation, *value))
            .collect();
        let parts = $crate::raw::check_split_shared($raw.iter(), &expected);
        $crate::raw::check_split_exclusive($raw.iter_mut(), &expected);
        (expected, parts)
    }};
}
#[cfg(test)]
pub(crate) use check_split_round;

/// Checks that the parts of a shared cursor, split as far as they go,
/// yield `expected` between them, in order; returns how many parts there
/// were.
#[cfg(test)]
pub(crate) fn check_split_shared<'a, C>(cursor: C, expected: &[(usize, u32, u64)]) -> usize
where
    C: SplitCursor<Item = (usize, u32, &'a u64)>,
{
    let parts = split_fully(cursor);
    let items: alloc::vec::Vec<(usize, u32, u64)> = parts
        .iter()
        .flatten()
        .map(|&(index, generation, value)| (index, generation, *value))
        .collect();
    assert_eq!(items, expected);
    parts.len()
}

/// Checks that the parts of an exclusive cursor, split as far as they go,
/// yield the slots of `expected` between them, in order, and that all the
/// `&mut`s they hand out can be written while all are held (under Miri, two
/// parts reaching one slot would be undefined behaviour); adds 1 to each
/// value.
#[cfg(test)]
pub(crate) fn check_split_exclusive<'a, C>(cursor: C, expected: &[(usize, u32, u64)])
where
    C: SplitCursor<Item = (usize, u32, &'a mut u64)>,
{
    let mut items: alloc::vec::Vec<(usize, u32, &mut u64)> =
        split_fully(cursor).into_iter().flatten().collect();
    let slots: alloc::vec::Vec<(usize, u32)> = items
        .iter()
        .map(|(index, generation, _)| (*index, *generation))
        .collect();
    let want: alloc::vec::Vec<(usize, u32)> = expected
        .iter()
        .map(|&(index, generation, _)| (index, generation))
        .collect();
    assert_eq!(slots, want);
    for (_, _, value) in &mut items {
        **value += 1;
    }
}

#[cfg(feature = "serde")]
pub(crate) use arena::BuildError;
pub(crate) use arena::{KeyLimits, SlotArena};
pub(crate) use buf::InterleavedLayout;
pub use keyed::TakeSlots;
pub(crate) use keyed::{Keyed, Parts};
pub(crate) use keyed_store::KeyedStore;
pub(crate) use store::{Exclusive, SlotStore};
