//! Cache-friendly object storage behind generational handles.
//!
//! A system that owns objects hands out *keys* instead of pointers. A key
//! never dangles: once its object is removed, the key is *stale* and every
//! lookup with it fails cleanly. Lookups cost one bounds check and one
//! compare, iteration runs over contiguous memory, and values stay where
//! they were put.
//!
//! ```
//! use handlekit::IdTable;
//!
//! struct Enemy { hp: u32 }
//!
//! let mut enemies = IdTable::new();
//! let orc = enemies.insert(Enemy { hp: 30 });
//! enemies[orc].hp -= 10;
//! assert_eq!(enemies[orc].hp, 20);
//!
//! enemies.remove(orc);
//! assert!(enemies.get(orc).is_none()); // the handle is stale, not dangling
//! ```
//!
//! # Containers
//!
//! - [`IdTable`]: the *array with holes* of BitSquid's ID lookup table.
//!   Values never move; removed slots go on a free list threaded through
//!   their own memory; a generation per slot detects stale keys; a parallel
//!   occupancy bitset makes iteration skip 64 holes per word.
//! - [`PackedTable`]: the *packed array* behind an index. Values sit with no
//!   holes, so iteration is a slice walk; removal swaps the last value in;
//!   `sort_by` reorders for locality and keeps every key valid.
//! - [`SecondaryMap`]: extra data for the keys of another table, stored by
//!   slot index with the generation, so a reused slot never shows old data.
//! - [`SparseSecondaryMap`]: the same as a sparse set: paged index array,
//!   packed values.
//! - [`Pool`]: the typed free-list block allocator of seed 001. Values live
//!   in blocks that are never moved or reallocated, so
//!   [`Pool::get_ptr`] gives a pointer that stays valid until the value is
//!   removed; freed slots go on a free list threaded through their own
//!   memory. Keyed by [`PoolKey`].
//!
//! # Keys
//!
//! A key is an index and a generation packed into one integer:
//!
//! | key | bits | index bits | generation bits | slots | reuses per slot |
//! | --- | --- | --- | --- | --- | --- |
//! | [`Id`] | 64 | 32 | 32 (31 used) | 2³² − 1 | 2³¹ − 1 |
//! | [`Id32`] | 32 | 20 | 12 | 2²⁰ | 4095 |
//! | [`define_key!`] | 32 or 64 | you choose | the rest (≤ 32) | 2^index | 2^gen − 1 |
//!
//! Generation 0 is never issued, which gives keys a niche:
//! `Option<Id>` is 8 bytes and `Option<Id32>` is 4. Typed keys made with
//! [`define_key!`] keep tables apart at compile time: a table of enemies
//! does not accept a key of the table of bullets.
//!
//! # The stale-key story
//!
//! Each slot stores the generation of its occupant. Removing a value marks
//! the slot vacant; the next value in it gets the next generation, so every
//! key to the old value stops matching. A key from another table, a forged
//! key or a key from hostile serialized data is treated the same way: it
//! either names a live value of this table, or the lookup returns `None`
//! (and `Index` panics). It is never undefined behaviour.
//!
//! Generations are finite. A slot whose generation reaches
//! [`Key::MAX_GENERATION`] is **retired**: it keeps its memory and is never
//! reused, so a stale key can never come to name a later value, whatever the
//! width of the key and the [`Reuse`] policy. The price is memory: one slot
//! per retirement ([`IdTable::retired_count`]). With [`Id`] a slot must be
//! reused two billion times first; with narrow keys, use [`Reuse::Fifo`] to
//! spread reuse over many slots. The BitSquid bound, made exact: with `F`
//! slots kept free ([`Reuse::Fifo`]) and `g` generation bits, a slot is
//! reused at most once per `F + 1` insertions, so no slot retires before
//! insertion number `1 + (2^g − 2)(F + 1)`, about `F · 2^g`. (Seed 000's
//! "no inner_id collision before N · 64K creations" is the same bound for a
//! design that wraps generations instead of retiring slots.)
//!
//! # Memory per slot
//!
//! An [`IdTable`] slot is a 32-bit state word beside a union of the value and
//! a 32-bit free-list link: `4 + max(size_of::<T>(), 4)` bytes, rounded up to
//! `max(align_of::<T>(), 4)` (8 bytes for `u32`, 16 for `u64`, 12 for
//! `[u8; 5]`), plus one bit of occupancy. That is the same as slotmap's `SlotMap`. A [`PackedTable`]
//! spends `size_of::<T>() + size_of::<K>()` per value on the dense side and
//! 8 bytes plus one bit per slot on the sparse side.
//!
//! # Complexity
//!
//! | | insert | remove | get | iterate |
//! | --- | --- | --- | --- | --- |
//! | [`IdTable`] | O(1) | O(1) | O(1), one slot read | O(len + slots/64) |
//! | [`PackedTable`] | O(1) | O(1), moves one value | O(1), two reads | O(len), a slice |
//! | [`SecondaryMap`] | O(1)\* | O(1) | O(1), one slot read | O(len + slots/64) |
//! | [`SparseSecondaryMap`] | O(1)\* | O(1), moves one value | O(1), three reads | O(len), a slice |
//! | [`Pool`] | O(1)† | O(1) | O(1), block list + one slot read | O(len + slots/64 + blocks) |
//!
//! \* amortized; the dense secondary map grows to the highest index.
//! † a new block is one allocation, and no value ever moves.
//!
//! # Choosing a container
//!
//! | you need | use |
//! | --- | --- |
//! | fast lookups, values that never move, iteration that skips holes | [`IdTable`] |
//! | addresses that stay fixed as well, with a known maximum | [`IdTable::with_fixed_capacity`] or [`Pool::with_fixed_capacity`] |
//! | addresses that stay fixed while the number of values grows without bound | [`Pool`] |
//! | the fastest iteration, or control over the order of values | [`PackedTable`] |
//! | 32-bit keys | any table with [`Id32`], or your own [`define_key!`] |
//! | data for most keys of another table | [`SecondaryMap`] |
//! | data for a few keys, or iteration over just those | [`SparseSecondaryMap`] |
//!
//! # Features
//!
//! - `std` (default): nothing yet beyond `alloc`; implied by `rayon`.
//! - `serde`: `Serialize`/`Deserialize` for keys (as their bits) and tables
//!   (validated on the way in).
//! - `rayon`: `par_iter` and `par_iter_mut`.
//!
//! The crate is `no_std` with `alloc`.
//!
//! # Implementation
//!
//! The unsafe code that touches slot memory lives in one private module,
//! the raw slot layer: a `Slot` (the tagged union), an occupancy bitset, a
//! `SlotStore` (slots, occupancy, iteration, drop, clone) and a `SlotArena`
//! (a store plus the free list, reuse policy and retirement). The public
//! containers are safe code over it; the only `unsafe` above it are the
//! `*_unchecked` methods that forward to it. The packed containers share a
//! second, safe core (`Dense`: keys and values with swap-remove, retain and
//! sort). The stable-address containers share a third piece of the raw
//! layer, `Block`: a run of slots allocated once and reached only through
//! the pointer it was allocated with, so a pointer to one value survives any
//! access to the others. `ARCHITECTURE.md` in the repository lists the
//! invariants.

#![no_std]
#![cfg_attr(docsrs, feature(doc_auto_cfg))]
#![doc(test(attr(deny(warnings))))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod dense;
mod error;
pub mod id_table;
mod key;
pub mod packed_table;
pub mod pool;
mod raw;
mod reuse;
pub mod secondary;
#[cfg(feature = "serde")]
mod serde_util;
mod slot_iter;
#[cfg(feature = "rayon")]
mod slot_par;

pub use error::CapacityError;
pub use id_table::IdTable;
#[doc(hidden)]
pub use key::__private;
pub use key::{max_generation, Id, Id32, Key, PoolKey};
pub use packed_table::PackedTable;
pub use pool::Pool;
pub use reuse::Reuse;
pub use secondary::{SecondaryMap, SparseSecondaryMap};

/// The README's examples, run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
