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
//!   their own memory; a generation per slot detects stale keys. The state
//!   words (generation plus a vacant bit) sit in an array of their own, so
//!   a write touches its slot only, and iteration turns 64 state words into
//!   a mask at a time and reads only live values.
//! - [`LookupTable`]: `IdTable`'s slot core (free list, reuse, retirement,
//!   stale keys) with each state word beside its value, so a lookup, an
//!   insertion or a removal reads one slot, one cache line, where
//!   `IdTable` reads a state word and a value from two arrays. Its passes
//!   read every slot. For indexes looked up far more often than iterated
//!   (the entity table of `handlekit-ecs` is one).
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
//! - [`Hive`]: seed 001's *nested free lists*, the design of C++'s
//!   `std::hive`. Blocks grow geometrically (64 slots up to a cap), each
//!   threads its own free list through its vacant slots and keeps a 64-bit
//!   vacancy word per 64 slots; the hive keeps the list of blocks with
//!   room, and keeps a block that empties for reuse until
//!   [`Hive::shrink_to_fit`] (as `std::hive` keeps reserved blocks). Values
//!   never move, so [`Hive::get_ptr`] is stable like [`Pool`]'s. The
//!   generations of all blocks lie in one array, as a [`Pool`]'s do, and
//!   each block's values in an allocation of their own, so iterating the
//!   values reads nothing else (measured as fast as a `Vec`).
//! - [`VmVec`]: an array held directly in virtual memory (seed 004's DBECS).
//!   It reserves address space for its maximum size, commits memory as
//!   pushes reach it, gives the pages of removed front elements back to the
//!   system, and moves its live window back with `mremap` instead of
//!   copying. Elements never move while they live (except through the
//!   explicit `rebase` and compaction calls).
//! - [`IndexLists`]: many singly linked lists in one node array (seed 001's
//!   *linked index lists*). A list is a 4-byte [`Head`] the user stores
//!   anywhere (a million lists, one per grid cell, cost 4 MB); a node is a
//!   value and a 32-bit link, so moving a node between lists rewrites a few
//!   integers and never moves the value. [`IndexLists::compact`] lays every
//!   list out contiguously again.
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
//! # Iterating: `for` loops and folds
//!
//! Every container's iterators are double-ended with an exact length
//! ([`iter`] holds them). A `for` loop costs, per live value, one compare
//! and one increment while the iterator is in a run of live slots (a
//! table with no holes is one run), or a few bit operations in a 64-slot
//! mask of a table with holes; it never reads a vacant slot's value. An
//! iterator of values alone (`values`, `values_mut`) steps the values' own
//! addresses, as a slice's iterator does, so its loop is a slice's loop;
//! one that hands out keys steps the slot index, which the key needs. So a
//! plain `for` loop is the fast way to visit every value:
//!
//! ```
//! use handlekit::Key;
//!
//! let mut table: handlekit::IdTable<u64> = (0..1000).collect();
//! let mut total = 0;
//! for (key, value) in &table {
//!     total += value + key.index() as u64;
//! }
//! # assert_eq!(total, 2 * 499_500);
//! for value in table.values_mut() {
//!     *value *= 2;
//! }
//! ```
//!
//! Where a difference remains, it is for reductions: `fold`, `for_each`,
//! `sum`, `count` and the adapters built on them run the storage's own
//! word-at-a-time loop, which the compiler can unroll and vectorize, so a
//! sum over a table with no holes runs several times faster through
//! `table.values().sum()` (or `.fold`) than through a `for` loop that adds
//! one value at a time. Over a table with no holes, a `for` loop over
//! `values()` takes 0.3–0.7× `slotmap`'s time and one over `keys()` less
//! than it; one over `iter()` is level with it at 1k values and faster
//! from 100k; the reductions take several times less. Over a table with
//! holes, both are several times faster than `slotmap`'s from 100k slots
//! on (`slotmap` reads every slot and tests it). In a small table with
//! holes that is walked again and again (1k slots, half removed), the
//! branch predictor learns `slotmap`'s test, which then costs it no more
//! than a table with no holes, and the two are about level: over `u64`
//! values, `IdTable`'s `for` loops ran at 0.75–1.46× `slotmap`'s speed
//! there and its folds at 0.96–1.68×, in one full run of the runner; over
//! 64 such tables in turn, whose holes the predictor cannot all learn, its
//! `for` loop over `values()` ran 5.7–5.9× faster (the `branch_memory`
//! example of the benchmark crate). The comparison runner's report
//! measures both side by side.
//!
//! # Skipping holes: bit masks against a skipfield
//!
//! [`Hive`] finds live values with one vacancy bit per slot (a block with
//! no vacant slot is walked as a plain run): iteration reads a 64-bit word
//! and visits its clear bits with `trailing_zeros`, so it
//! costs one word read per 64 slots plus a few instructions per live value,
//! and a run of holes costs O(run / 64). [`IdTable`] makes the same mask
//! from its state words, 64 at a time (a few vector instructions per 256
//! bytes of state words), so its writes need no bit of their own.
//! `plf::hive` (and the `std::hive` proposal) uses a *jump-counting
//! skipfield* instead: a 16-bit counter per slot where the first and last
//! slot of every run of holes hold the run's length, so a run of any length
//! is skipped in O(1), but every visited element reads its counter, and the
//! next position depends on that read. Masks spend 1 bit per slot instead
//! of 16. Measured here (`benches/skipfield.rs`, the same values under both
//! schemes), [`Hive`] was faster than the skipfield in every pattern tried,
//! from full blocks (16× at 100k `u64`) to 90% holes in runs of ~300; the
//! bare masks, without `Hive`'s split layout, lost one cell (a full array
//! of 64-byte values at 1M slots, bound by memory bandwidth). See [`Hive`]
//! for the figures.
//!
//! # Memory per slot
//!
//! An [`IdTable`] slot is a 32-bit state word in one array and, in another,
//! a union of the value and a 32-bit free-list link: `4 + P` bytes, where
//! `P` is `max(size_of::<T>(), 4)` rounded up to `max(align_of::<T>(), 4)`
//! (8 bytes for `u32`, 12 for `u64` and for `[u8; 5]`, 68 for a 64-byte
//! value). No padding goes between the state word and the value, so that is
//! at most slotmap's `SlotMap` (16 bytes for `u64`, 72 for a 64-byte value
//! aligned to 8). A [`LookupTable`] slot holds the same two parts side by
//! side, rounded up to the alignment of `max(align_of::<T>(), 4)` (8 bytes
//! for `u32`, 16 for `u64`, as slotmap's). A [`PackedTable`] spends `size_of::<T>() + size_of::<K>()`
//! per value on the dense side and 8 bytes per slot on the sparse side (the
//! state word and the dense position side by side, so a lookup reads one
//! cache line there). An
//! [`IndexLists`] node is a slot holding the value and a 4-byte link: `4 +
//! size_of::<T>() + 4` rounded as above (24 bytes for a 16-byte particle);
//! each list costs its 4-byte [`Head`]. A [`Pool`] slot costs what an
//! `IdTable` slot does (12 bytes for `u64`): its state word sits in one
//! array over all blocks, which grows by doubling as a `Vec` does, and its
//! payload in a block that never moves; plus an 8-byte directory entry per
//! block.
//! A [`Hive`] keeps the state words of all its blocks in one array (grown
//! a block at a time) and each block's payloads in an
//! allocation of their own, so a slot costs `4 + max(size_of::<T>(), 4)`
//! bytes with no padding between the two (12 bytes for `u64`) and a bit
//! (its vacancy bit), plus a 64-byte header per block, 12 bytes per chunk
//! of its index space (of `max(64, first block size)` indices) and the
//! unused tail of the last block. [`Hive::shrink_to_fit`] frees an empty
//! block's payloads but keeps its state words (4 bytes a slot), which keep
//! its old keys stale.
//!
//! A [`VmVec`] costs `size_of::<T>()` per element, with nothing per
//! element beside it: its resident memory is the committed 2 MiB chunks
//! between its first and last element (at most one partly used chunk at
//! each end), whatever it held before. It costs address space instead: the
//! whole maximum capacity, rounded up to 2 MiB, from the start. Front removals free whole chunks;
//! the heap fallback (see Features) allocates the whole capacity up front
//! and frees nothing before it is dropped.
//!
//! # Complexity
//!
//! | | insert | remove | get | iterate |
//! | --- | --- | --- | --- | --- |
//! | [`IdTable`] | O(1) | O(1) | O(1), one slot read | O(len + slots/64) |
//! | [`LookupTable`] | O(1) | O(1) | O(1), one slot read (one cache line) | O(slots), every slot read |
//! | [`PackedTable`] | O(1) | O(1), moves one value | O(1), two reads | O(len), a slice |
//! | [`SecondaryMap`] | O(1)\* | O(1) | O(1), one slot read | O(len + slots/64) |
//! | [`SparseSecondaryMap`] | O(1)\* | O(1), moves one value | O(1), three reads | O(len), a slice |
//! | [`Pool`] | O(1)† | O(1) | O(1), block directory + one slot read | O(used slots), a state word each |
//! | [`Hive`] | O(1)† | O(1)‡ | O(1), chunk directory + state word + value (two cache lines) | O(len + slots/64 + blocks), values only |
//! | [`IndexLists`] | O(1) at a front | O(1) at a front, else O(position) | O(1), one slot read | O(list length) per list |
//! | [`VmVec`] | `push` O(1), never moves | `pop_front` O(1) | O(1), an index | O(len), a slice |
//!
//! \* amortized; the dense secondary map grows to the highest index.
//! † a new block is one allocation (for a `Pool`, sometimes a second: its
//! state array doubles, copying 4 bytes per slot), and no value ever moves.
//! ‡ a removal frees a block it empties only if every slot of it retired:
//! O(block size) to record its highest generation, paid for by the
//! allocation of that block (`shrink_to_fit` pays the same per block).
//!
//! [`VmVec`] also has `drain_front(n)` (O(n) drops, one release call for the
//! dead chunks), `compact_front(budget, ..)` (O(budget), whatever the
//! length) and `rebase` (on Linux one `mremap` per dead-prefix-sized piece,
//! whole pages, no copying; elsewhere O(len)).
//!
//! # Choosing a container
//!
//! | you need | use |
//! | --- | --- |
//! | fast lookups, values that never move, iteration that skips holes | [`IdTable`] |
//! | addresses that stay fixed as well, with a known maximum | [`IdTable::with_fixed_capacity`], [`Pool::with_fixed_capacity`] or [`Hive::with_fixed_capacity`] (one allocation up front, none after) |
//! | addresses that stay fixed while the number of values grows without bound, and inserts and removals as cheap as an [`IdTable`]'s; the stable-address container for removal-heavy work | [`Pool`] (iteration checks every used slot) |
//! | the same, with memory that grows with the number of values and is handed back on request (blocks double up to a cap; emptied blocks stay for reuse until `shrink_to_fit` frees their values, keeping 4 bytes a slot), or iteration as fast as a `Vec`'s over values that never move | [`Hive`] (its passes over half-empty or sparse tables took 0.3 to 1.2 times an [`IdTable`]'s time in one full run of the comparison runner, median 0.76, since it reads a bit per slot where [`IdTable`] reads a 4-byte state word; but its insertions took 1.0 to 1.5 times an [`IdTable`]'s, its lookups 1.4 to 1.6 (a directory read more) and its removals 1.3 to 2.7 (each lists the slot on its block's own free list, seed 001's nested free lists): for work that removes about as often as it iterates, choose [`Pool`]) |
//! | lookups by key above all (an index from a key to where something lives), over a table too big for the cache, and few passes | [`LookupTable`] (one cache line per lookup, insertion or removal; in one full run of the comparison runner at 1,000,000 values, removals took 0.96 (`u64`) and 0.97 (64 bytes) times the fastest generational peer's time where `IdTable` took 1.23 and 0.98, lookups 1.08 and 1.08 where `IdTable` took 1.36 and 1.00, and remove-then-insert steps 1.01 and 0.99 where `IdTable` took 1.16 and 0.93 (a 64-byte value spans two cache lines in either layout, so there the two are level); its passes read every slot, and so does a lookup with a stale key, where `IdTable` reads a 4-byte state word) |
//! | the fastest iteration, or control over the order of values | [`PackedTable`] |
//! | 32-bit keys | any table with [`Id32`], or your own [`define_key!`] |
//! | data for most keys of another table | [`SecondaryMap`] |
//! | data for a few keys, or iteration over just those | [`SparseSecondaryMap`] |
//! | a queue or log that grows at the back and dies at the front, with indexing, stable addresses and memory that follows the live part | [`VmVec`] |
//! | many small, very dynamic groups of values (grid cells, buckets, adjacency), moved between groups every frame | [`IndexLists`], with a [`Head`] per group |
//! | a list of keys or indices visited in memory order again | [`sort_keys`] / [`sort_indices`] (radix sorts) |
//!
//! Choose [`VmVec`] over `Vec` when elements must not move while the array
//! grows, or when the front dies and its memory should go back; over
//! `VecDeque` when you need one contiguous slice and stable addresses. It
//! is no faster to push than a `Vec` (both take a page fault per 4 KiB
//! page; see the README's figures), needs a maximum size up front, and
//! spends a system call per 2 MiB committed or released. With many small
//! arrays, or no virtual memory, prefer `Vec`.
//!
//! # Coming from slotmap
//!
//! Every call of `slotmap` 1.x has a counterpart here with the same
//! meaning: `SlotMap` and `HopSlotMap` become [`IdTable`], `DenseSlotMap`
//! becomes [`PackedTable`], the secondary maps keep their names,
//! `new_key_type!` becomes [`define_key!`]. The tables take the value type
//! first (`IdTable<V, K>`), generations retire instead of wrapping, and
//! detached slots survive serialization. [`guide::slotmap`] maps every
//! item and method, with examples.
//!
//! # Features
//!
//! - `std` (default): nothing yet beyond `alloc`; implied by `rayon`.
//! - `vm` (default): [`VmVec`] on virtual memory, through rustix (Linux,
//!   Android, macOS, iOS, FreeBSD, NetBSD, DragonFly BSD) or windows-sys
//!   (Windows). It does not need `std`. Without it, on other targets and
//!   under Miri, [`VmVec`] is a heap fallback with the same API and address
//!   stability ([`vm_vec::VIRTUAL_MEMORY`] tells which).
//! - `serde`: `Serialize`/`Deserialize` for keys (as their bits) and tables
//!   (validated on the way in). [`IdTable`], [`PackedTable`] and
//!   [`IndexLists`] keep the order of their free list, so a loaded table
//!   hands out the same keys as the saved one would have; [`Pool`] and
//!   [`Hive`] rebuild theirs in slot order.
//! - `rayon`: `par_iter` and `par_iter_mut` on [`IdTable`], [`PackedTable`],
//!   [`SecondaryMap`], [`SparseSecondaryMap`], [`Pool`] and [`Hive`]. The
//!   work is cut between threads where the storage divides: at a chunk of
//!   64 state words (`IdTable`, `SecondaryMap`), at a block
//!   (`Pool`, `Hive`), anywhere in the dense arrays (`PackedTable`,
//!   `SparseSecondaryMap`); each part is walked as a sequential pass would.
//! - `radsort` (default): [`sort_keys`] and [`sort_indices`], radix sorts by
//!   the `radsort` crate (small, no dependencies, `no_std`).
//!
//! The crate is `no_std` with `alloc`.
//!
//! # Implementation
//!
//! The unsafe code that touches slot memory lives in one private module,
//! the raw slot layer: a `Slot` (the tagged union), a `SlotStore` (state
//! words and payloads in one allocation, the state words doubling as the
//! occupancy that iteration scans; lookup, iteration, drop, clone) and a
//! `SlotArena` (a store plus the free list, reuse policy and retirement).
//! The store's layout is a type parameter: the state words in an area of
//! their own, which a pass scans 64 at a time (`IdTable`, the secondary
//! map, `IndexLists`), or each beside its payload, so a lookup reads one
//! cache line (the sparse side of `PackedTable`, which is only looked up);
//! the policy is the same code for both.
//! The arena's fast paths check one compare each: the reuse policy and the
//! retirement limit are folded into two numbers, and an insertion into an
//! empty LIFO table resets its free list in O(1) to a refill that takes
//! its slots in index order (so refilling walks memory forwards, without a
//! rebuild pass, and no removal checks whether it emptied the table). The public
//! containers are safe code over it; the only `unsafe` above it are the
//! `*_unchecked` methods (which forward to it, or index a packed table's
//! value array without bounds checks), and [`IndexLists`]' mutable
//! list iterator, which asks the raw layer for each node of a list once and
//! relies on the lists being acyclic (an invariant every operation keeps
//! and deserialization checks); and [`PackedTable`]'s lookups and removals
//! for the key types of [`define_key!`] (which promise, with `unsafe`, that
//! a key built from a table's index and generation gives them back), which
//! use the dense position a live slot holds without a bounds check: with
//! such keys no user key can make a slot point past the values (a
//! hand-written [`Key`] gets every position checked). A 64-bit key split
//! in the middle ([`Id`], [`PoolKey`], and any `define_key!` type written
//! `(u64; index_bits = 32)`) is stored as two `u32` halves, so a lookup
//! loads the index and the generation of a key with one instruction each,
//! as slotmap's keys do. [`IndexLists`] keeps
//! its nodes in the same slot arena as [`IdTable`]. The packed containers
//! share a second core (`Dense`: keys and values with swap-remove, retain
//! and sort), safe code but for the unchecked swap-remove those removals
//! use. The stable-address containers ([`Pool`], [`Hive`]) keep their
//! slots in runs allocated once and reached only through the pointer each
//! was allocated with, so a pointer to one value survives any access to the
//! others: `Pool` in `FlatSlots` (one state array, bare payload blocks
//! behind a directory), `Hive` in `Block`s (payloads with vacancy words and
//! a 64-byte header of their own; the state words in one array, as
//! `Pool`'s, found with the payload through a chunk directory). [`VmVec`] keeps its own two layers: the
//! operating-system calls (one `Region` per backend) and the window of live
//! elements over it, which holds all of its unsafe code. `ARCHITECTURE.md`
//! in the repository lists the invariants.

#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![doc(test(attr(deny(warnings))))]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod error;
pub mod guide;
pub mod hive;
pub mod id_table;
pub mod index_lists;
pub mod iter;
mod key;
pub mod layout;
#[cfg(feature = "radsort")]
mod locality;
pub mod lookup_table;
pub mod packed_table;
pub mod pool;
mod raw;
mod reuse;
pub mod secondary;
#[cfg(feature = "serde")]
mod serde_util;

#[cfg(feature = "rayon")]
mod slot_par;
mod stable;
mod storage;
mod table;
pub mod vm_vec;

pub use error::CapacityError;
pub use hive::Hive;
pub use id_table::IdTable;
pub use index_lists::{Head, IndexLists, LinkError};
#[doc(hidden)]
pub use key::__private;
pub use key::{max_generation, Id, Id32, Key, PoolKey};
#[cfg(feature = "radsort")]
pub use locality::{sort_indices, sort_keys};
pub use lookup_table::LookupTable;
pub use packed_table::PackedTable;
pub use pool::Pool;
pub use reuse::Reuse;
pub use secondary::{SecondaryMap, SecondaryTable, SparseSecondaryMap};
pub use stable::StableTable;
pub use table::SlotTable;
pub use vm_vec::VmVec;

/// The README's examples, run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

/// The crate README's example (the one a package shows), run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct CrateReadmeDoctests;
