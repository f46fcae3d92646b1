//! The raw slot layer. Every line of `unsafe` in the crate that touches slot
//! memory lives under this module; the tables above it are safe code over
//! its API, except for one caller of `Exclusive::value_at` (the mutable list
//! iterator of `IndexLists`), whose contract (each index once) rests on the
//! lists being acyclic.
//!
//! - [`slot`]: one slot, a generation-tagged union of value and free link,
//!   and the views `SlotRef`/`SlotMut` that see its two parts wherever they
//!   are stored;
//! - [`bitset`]: the occupancy bitset and its word-at-a-time iterator;
//! - [`store`]: `SlotStore`, slots plus occupancy: lookup, iteration, drop,
//!   clone;
//! - [`block`]: `Block`, a fixed run of slots that never moves, with its
//!   own occupancy words, and iteration over a list of blocks (the storage
//!   of `Hive`);
//! - [`flat`]: `FlatSlots`, bare blocks of one size laid end to end behind a
//!   directory, with no header or occupancy bits, and `FlatCursor`, which
//!   iterates them by state word (the storage of `Pool`);
//! - [`layout`]: where a block keeps its slots: side by side
//!   (`Interleaved`, for `Pool`) or as an array of state words beside an
//!   array of payloads (`Split`, for `Hive`), and the accesses that iterate
//!   either;
//! - [`hive`]: `RawHive`, blocks of growing size, each with its own free
//!   list, plus the list of blocks with room and the freed ranges;
//! - [`pool`]: `RawPool`, blocks of one size plus one free list threaded
//!   through their vacant slots;
//! - [`arena`]: `SlotArena`, a store plus the free list, reuse policy and
//!   retirement, shared by the tables that issue keys.

pub(crate) mod arena;
pub(crate) mod bitset;
pub(crate) mod block;
pub(crate) mod flat;
pub(crate) mod hive;
pub(crate) mod layout;
pub(crate) mod pool;
pub(crate) mod slot;
pub(crate) mod store;

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

#[cfg(feature = "serde")]
pub(crate) use arena::BuildError;
pub(crate) use arena::{KeyLimits, SlotArena};
pub(crate) use store::{Exclusive, RawIter, RawIterMut, SlotStore};
