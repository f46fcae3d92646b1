//! An entity-component store on `handlekit`, after seed 004's DBECS design:
//! struct-of-arrays columns held directly in virtual memory, rows that are
//! born at the back and die at the front, a garbage collection whose pause
//! is bounded by a budget, and sparse sets for rare components.
//!
//! ```
//! use handlekit_ecs::{Order, World};
//!
//! #[derive(Debug, PartialEq)]
//! struct Pos([f32; 3]);
//! struct Vel([f32; 3]);
//!
//! let mut world = World::new();
//! let ship = world.spawn((Pos([0.0; 3]), Vel([1.0, 0.0, 0.0])));
//! let rock = world.spawn((Pos([9.0; 3]),));
//!
//! // A system: streams the two columns, nothing else. Every live row has
//! // both here, so the loop is one counted loop over the two columns.
//! for (p, v) in world.query_mut::<(&mut Pos, &Vel)>() {
//!     for i in 0..3 {
//!         p.0[i] += v.0[i];
//!     }
//! }
//! assert_eq!(*world.get::<Pos>(ship).unwrap(), Pos([1.0, 0.0, 0.0]));
//!
//! world.despawn(rock).unwrap(); // marks its row dead; nothing moves
//! world.collect(4096, Order::Preserve); // a bounded pause; memory goes back
//! assert!(world.get::<Pos>(rock).is_err()); // the handle is stale
//! ```
//!
//! # Storage
//!
//! A [`World`] keeps:
//!
//! - an **entity table** from [`Entity`] index to row: the generational
//!   index that makes a handle resolve to its row in O(1), reading one
//!   8-byte slot (the generation beside the row), and detects stale
//!   handles. Rows move under [`World::collect`]; handles do not. A free
//!   index keeps its last generation, flagged so that no handle matches
//!   it; a spawn takes the lowest free index (found in a bitmap of free
//!   indices with a summary level per 64 words), at the next generation.
//!   An index is reused 2³¹ − 1 times, then retired. Collection zeroes the
//!   pages of the table whose 512 indices are all free, which gives their
//!   memory back, and records each page's highest generation: the page's
//!   next entities start above it, so its old handles stay stale.
//! - a **row window** `[front, next)`: row → entity in a
//!   [`VmVec`](handlekit::VmVec), and one *alive* bit per row. A new entity
//!   takes row `next`; despawning clears its alive bit; collection moves the
//!   front forward and gives whole dead pages back to the system.
//! - per **dense** component type (the default), a column: a `VmVec` of
//!   slots with one slot per row, from the column's first row to the last
//!   row that ever held the component (made up to the end of that row's
//!   64-row presence word, so that inserts in row order write in place),
//!   plus one *presence* bit per row. The
//!   column reserves address space for [`World::max_rows`] components and
//!   commits memory only as rows reach it; growing never copies. Where the
//!   target has no virtual memory, and under Miri, `VmVec`'s heap fallback
//!   serves (it allocates the whole reservation up front, which is why
//!   [`DEFAULT_MAX_ROWS`] is small there).
//! - per **sparse** component type ([`World::register`] with
//!   [`Storage::Sparse`]), a sparse set: the values packed in one array and
//!   an array indexed by entity index that finds them, sized to what the
//!   set holds (at most 8 entries per value, 1024 at least); the rare
//!   entity whose index lies past it is found in a hash map.
//!
//! # Queries
//!
//! A [`Query`] is a tuple of `&A`, `&mut A`, `Option<&A>`,
//! `Option<&mut A>`, [`Entity`], [`With<A>`], [`Without<A>`] and
//! [`Or<L, R>`](Or), or a struct or enum with `#[derive(Query)]` (feature
//! `macros`), which runs the code of the tuple of its field types. It ANDs the
//! alive word with each required dense column's presence word, 64 rows at a
//! time, and visits the set bits; a sparse requirement tests the rows'
//! entities in its set. Words that are all ones are runs of rows that
//! [`QueryBorrow::for_each`] and [`QueryMut::for_each`] visit as plain
//! loops over consecutive slots of each column, without bit tests, each
//! column's slot found once for the run; they visit only the words from
//! each required dense column's first component to its last presence word
//! (a column made after rows existed starts at the world's front, but its
//! views leave out the zero words below its first component); and when
//! every live row matches (each required column dense and on every live
//! row, the window free of dead rows) the whole window is one loop over
//! slices, as an archetype table's. With dense columns only, a word costs
//! a load and an AND per required column.
//!
//! The iterator of a query ([`QueryIter`], behind a `for` loop over
//! [`World::query_mut`] or [`QueryBorrow::iter`]) walks the same words: it
//! keeps the current run of matching rows (whole matching words, or the
//! whole window) as a position and an end, so that each item costs a
//! compare, an increment and the fetches, takes the matching rows of a
//! word that is not all set one bit at a time, and finds the next run out
//! of line. When the whole window is one run the `for` loop is a counted
//! loop over slices that the compiler unrolls and vectorizes, as a loop
//! over `Vec`s.
//!
//! **Which idiom is fastest.** `for_each` (on [`QueryMut`] or
//! [`QueryBorrow`]), or any iterator method that folds (`fold`, `sum`,
//! `count`, `Iterator::for_each`), is the fastest way through a query: it
//! visits runs of whole matching words as loops over slices and the other
//! words as tight bit loops, with no per-item state to keep. A `for` loop
//! is the same loop when the query matches every live row of a window
//! without dead rows (the usual case after [`World::collect`], and for
//! components every entity has). Over windows with holes (dead rows not
//! yet collected, a component on some rows only) it pays a few
//! instructions per item that `for_each` does not (the `for` loop's
//! state lives between items): 1.3–2.8× `for_each`'s time with 1/8 to 7/8
//! of 100,000 rows dead at random, measured here; use `for_each` there.
//! For
//! lookups by handle, [`QueryBorrow::get`] is fastest (the type and the
//! borrow resolved once for the query), then [`ColumnMut`] (one component
//! type resolved once for a loop of inserts, removals and lookups), then
//! the plain calls [`World::get_mut`], [`World::has`], [`World::insert_one`]
//! and [`World::remove_one`] (each finds the type's column, a few
//! nanoseconds), and [`World::get`], which also takes and releases the
//! column's borrow flag (two atomic operations) per call.
//!
//! [`World::query`] works on a `&World` and checks borrows at run time, one
//! flag per column (shared for `&A`, exclusive for `&mut A`), so systems on
//! disjoint columns can run at once; a conflict panics with a message naming
//! the component type, never undefined behaviour, unless no live entity can
//! match both queries (hecs's rule; see [`World::query`]). [`World::query_mut`] works
//! on a `&mut World` and checks nothing at run time.
//!
//! Single components: [`World::get`] returns a [`Ref`] guard that holds a
//! shared borrow of the column (so it works on a shared world and conflicts
//! with a `&mut` query); [`World::get_mut`] takes `&mut World` and returns a
//! plain `&mut T`. For many lookups by handle, [`QueryBorrow::get`] looks
//! entities up through a query's held borrows, with no type lookup and no
//! borrow flag per call; a loop of [`World::get_mut`] or [`World::has`]
//! calls also takes no borrow, and finds the type's column once. Each of
//! these took about 1 ns a lookup among 10,000 entities on the development
//! machine, where [`World::get`]'s two atomic operations per call made it
//! about 11 ns.
//!
//! # Collection
//!
//! [`World::collect`]`(budget, order)` examines at most `budget` rows from
//! the front. It moves the live entities among them out of the way
//! ([`Order::Any`]: to the back of the world; [`Order::Preserve`]: to the end
//! of the examined range, keeping creation order), then drops the dead
//! prefix of every array, which gives whole dead pages back to the system
//! (whole 2 MiB chunks, and within the chunk the window starts in, its dead
//! pages once 64 KiB of them gather).
//! Its cost depends on the budget and the number of dense component types,
//! not on the size of the world. [`World::compact`] collects everything and
//! moves every array back to the start of its reservation (with `mremap` on
//! Linux, no copying). When a window reaches the end of its reservation, it
//! is moved back the same way.
//!
//! # Memory
//!
//! Per row: an [`Entity`] (8 bytes) in the row window, one alive bit, and for
//! each dense component type one presence bit. Per dense component:
//! `size_of::<T>()` bytes in its column, in every row between the column's
//! first and last component (a row without the component leaves its slot
//! unwritten, so a run of such rows a page long or longer costs no resident
//! memory; shorter holes cost their bytes). Per sparse component: the value,
//! an [`Entity`] (8 bytes) and 4 bytes in the index array, which grows to the
//! highest entity index that had the component, up to 8 entries per value
//! held (1024 at least; past it an index costs an entry of a hash map, about
//! 9 bytes, and its lookups a hash). Per entity index: 8
//! bytes in the entity table (the generation and the low 32 bits of the
//! row) and a bit in its free set; once [`World::collect`] has swept a page
//! of 512 free indices, those cost the bit alone. Per world: the map from
//! component type to column, 8 KiB (a fixed table of 256 slots, so that a
//! type's slot is found at a constant offset), and past 128 component types
//! a hash-map entry for each further one. Address space: every
//! dense column reserves `max_rows × size_of::<T>()` bytes (rounded up to
//! 2 MiB) when it is first used, the entity table `max_rows × 9` bytes.
//!
//! # Complexity
//!
//! | operation | cost |
//! | --- | --- |
//! | `spawn`, `insert`, `remove` | O(components in the bundle); no entity moves |
//! | `despawn` | O(component types of the world) (a bit test each, a drop for each the entity has); no entity moves |
//! | `get`, `contains` | O(1): the entity table, then one slot (dense) or two array reads (sparse) |
//! | query | O(rows / 64 × required columns + matches); sparse requirements add a lookup per candidate row |
//! | `collect(budget, _)` | O(budget × dense component types), and `budget / 64` pages of the entity table |
//! | `compact` | O(rows × dense component types) |
//!
//! # How it differs
//!
//! - **Archetype tables** (hecs, bevy's tables, flecs) keep one table per set
//!   of component types. Iteration streams each table, but adding or
//!   removing a component moves the entity, with all its components, to
//!   another table. Here an entity never changes rows when its components
//!   change: adding or removing a dense component writes a slot and a bit.
//!   The price is holes: a column has a slot for every row between its first
//!   and last component, and a query skips the rows that lack a component a
//!   word at a time rather than not seeing them at all.
//! - **Sparse sets** (shipyard, EnTT, bevy's `SparseSet` storage) add and
//!   remove in O(1) as well, but iterating several component types means
//!   walking one set and looking the others up entity by entity, and the
//!   packed arrays are reordered by swap-removal. Here dense columns share
//!   the row index, so a multi-component query reads the columns side by
//!   side. Sparse sets remain available per type, for rare components.
//! - **Memory** is given back from the front, in whole pages, by a
//!   collection whose pause the caller bounds; neither hecs nor bevy nor
//!   shipyard returns the memory of despawned entities without a full
//!   rebuild.
//!
//! # Choosing
//!
//! Use a [`World`] when entities carry varying sets of components that
//! systems read by type. For one kind of object with one value type, a
//! `handlekit` container is simpler and smaller: an
//! [`IdTable`](handlekit::IdTable) when values must not move, a
//! [`PackedTable`](handlekit::PackedTable) for the fastest iteration.
//!
//! # Fast paths
//!
//! - [`World::spawn_batch`] resolves each component type's column once per
//!   batch, pushes the values in one loop and sets the alive and presence
//!   bits a word at a time at the end: use it to spawn many entities of one
//!   bundle type.
//! - [`World::column_mut`] holds one component type's storage across a
//!   loop ([`ColumnMut`]): adding, removing or reading that component on
//!   many entities then costs the entity-table lookup and a slot and a bit
//!   per call, with no type lookup (as shipyard's `ViewMut`).
//! - [`QueryBorrow::get`] looks many entities up through one query's
//!   borrows: the entity table's slot, then the component. A dense column
//!   that every live entity has (in a world with no dead row left to
//!   collect) needs no presence bit test.
//! - [`World::spawn_batch`] prepares the memory of the whole batch at once
//!   (`VmVec::reserve`: one system call per array on Linux rather than a
//!   page fault per page).
//! - A world's arrays are reserved with
//!   [`VmVec::with_max_capacity_recycled`](handlekit::VmVec::with_max_capacity_recycled):
//!   when a world is dropped, the reservations of its arrays whose front
//!   was never released go to a bounded process-wide spare list with their
//!   memory, and the next world of the same shape (the same `max_rows`
//!   and component sizes: a level reloaded, a save loaded again) takes
//!   them, costing no system call and no page fault, as a `Vec` reuses
//!   freed heap memory. A fresh world costs two reservations plus two per
//!   dense component type (each a `mmap`, an `mprotect` when first
//!   written, and a `munmap` when dropped).
//!
//! ```
//! use handlekit_ecs::World;
//! struct Burning;
//! let mut world = World::new();
//! let es = world.spawn_batch((0..1000u32).map(|i| (i, i as f32)));
//! let mut burning = world.column_mut::<Burning>();
//! for &e in es.iter().step_by(2) {
//!     burning.insert(e, Burning).unwrap();
//! }
//! assert_eq!(world.count::<Burning>(), 500);
//! ```
//!
//! # Bundles and builders
//!
//! [`World::spawn`] and [`World::insert`] take any [`DynamicBundle`]:
//!
//! - a tuple of up to 12 components, or a struct with
//!   `#[derive(Bundle)]` (its fields are the components; feature `macros`,
//!   on by default), which runs the same code as the tuple of its field
//!   types. Both are [`Bundle`]s, which [`World::spawn_batch`] and
//!   [`World::remove`] take too;
//! - an [`EntityBuilder`]'s [`build`](EntityBuilder::build): components
//!   added one at a time, of types chosen at run time, held type-erased in
//!   one buffer that the builder reuses for the next entity;
//! - a `&`[`BuiltEntityClone`], a prefab from an [`EntityBuilderClone`]
//!   (or a struct with `#[derive(DynamicBundleClone)]` added to one), which
//!   spawns clones of its components each time.
//!
//! ```
//! # #[cfg(feature = "macros")] {
//! use handlekit_ecs::{Bundle, EntityBuilder, EntityBuilderClone, World};
//!
//! #[derive(Bundle)]
//! struct Ship {
//!     pos: [f32; 2],
//!     hull: u32,
//! }
//!
//! let mut world = World::new();
//! let ship = world.spawn(Ship { pos: [0.0; 2], hull: 100 });
//!
//! let mut builder = EntityBuilder::new();
//! builder.add([5.0f32, 5.0]);
//! if world.get::<u32>(ship).is_ok() {
//!     builder.add(50u32);
//! }
//! let wreck = world.spawn(builder.build());
//!
//! let mut rock = EntityBuilderClone::new();
//! rock.add([9.0f32; 2]).add("rock");
//! let rock = rock.build();
//! let rocks: Vec<_> = (0..3).map(|_| world.spawn(&rock)).collect();
//! assert_eq!(world.count::<[f32; 2]>(), 5);
//! assert_eq!(*world.get::<u32>(wreck).unwrap(), 50);
//! assert_eq!(*world.get::<&str>(rocks[2]).unwrap(), "rock");
//! # }
//! ```
//!
//! # Deferred changes
//!
//! A [`CommandBuffer`] records spawns, despawns, insertions and removals
//! while the world is borrowed (during a query) and applies them afterwards
//! with [`CommandBuffer::run_on`].
//!
//! [`World::reserve_entity`] and [`World::reserve_entities`] hand out
//! entities from a shared world (lock-free, from any thread): exactly the
//! entities as many spawns would make, which become real entities with no
//! component at the next [`World::flush`]. Every `&mut World` call that
//! changes the entity table flushes first (one predictable branch), and
//! the calls that name an entity (`insert`, `insert_one`, ...) flush when
//! the entity is not found, so [`CommandBuffer::insert`] on a reserved
//! entity spawns it, and later commands can name it.
//!
//! ```
//! use handlekit_ecs::{CommandBuffer, Entity, World};
//! struct Parent(Entity);
//! let mut world = World::new();
//! world.spawn_batch((0..3u32).map(|i| (i,)));
//! let mut commands = CommandBuffer::new();
//! for (e, _) in world.query::<(Entity, &u32)>().iter() {
//!     let child = world.reserve_entity();
//!     commands.insert(child, (Parent(e),));
//! }
//! commands.run_on(&mut world);
//! for (child, parent) in world.query::<(Entity, &Parent)>().iter() {
//!     assert!(world.has::<u32>(parent.0) && !world.has::<u32>(child));
//! }
//! assert_eq!(world.len(), 6);
//! ```
//!
//! # Other ways in
//!
//! - [`World::entity`] gives an [`EntityRef`], through which any component
//!   is borrowed as hecs does (`get::<&T>()` → [`Ref`], `get::<&mut T>()`
//!   → [`RefMut`]); [`World::iter`] yields one per live entity.
//! - [`World::query_many_mut`] and [`QueryBorrow::get_disjoint_mut`] give
//!   the items of several entities at once (and panic if one is named
//!   twice).
//! - [`Or`] matches the entities that match either of two terms.
//! - [`QueryBorrow::iter_batched`] and [`QueryMut::into_iter_batched`] cut
//!   a query into [`Batch`]es of `n` items for a thread pool of your own.
//!
//! # Saving and loading
//!
//! With the `serde` feature, a `serialize::Registry` names the component
//! types that are saved, each under a stable name; it serializes a `&World`
//! with any serde format and deserializes into a new [`World`]. Entities
//! keep their ids and the entity table its generations, so the loaded
//! world spawns the entities the saved one would have; each type keeps its
//! [`Storage`]; live entities keep their order. Hostile input is refused
//! with the format's error, with bounded allocation. See the `serialize` module for
//! the format.
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! use handlekit_ecs::{serialize::Registry, World};
//! use serde::de::DeserializeSeed;
//!
//! #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
//! struct Pos([f32; 3]);
//!
//! let registry = Registry::new().component::<Pos>("pos");
//! let mut world = World::new();
//! let e = world.spawn((Pos([1.0, 2.0, 3.0]),));
//! let json = serde_json::to_string(&registry.save(&world)).unwrap();
//! let mut loaded = registry
//!     .load()
//!     .deserialize(&mut serde_json::Deserializer::from_str(&json))
//!     .unwrap();
//! assert_eq!(*loaded.get::<Pos>(e).unwrap(), Pos([1.0, 2.0, 3.0]));
//! assert_eq!(loaded.spawn(()), world.spawn(()));
//! # }
//! ```
//!
//! # Panic safety
//!
//! A panicking `Drop` of a component never causes a double drop. In
//! [`World::despawn`], [`World::clear`], [`World::collect`] and the world's
//! drop, the other components are still dropped and the first panic
//! propagates afterwards. A despawn whose `Drop` panicked leaves nothing
//! behind that a later call would drop twice.
//!
//! # Features
//!
//! - `std` (default): required; forwarded to `handlekit`.
//! - `macros` (default): `#[derive(Bundle)]`,
//!   `#[derive(DynamicBundleClone)]` and `#[derive(Query)]` (a struct or
//!   enum as a named query), from the `handlekit-ecs-macros` crate. The generated code names this crate `::handlekit_ecs`, so a
//!   dependency renamed in `Cargo.toml` cannot use them.
//! - `serde`: [`Entity`] serializes as its bits, and a whole world saves
//!   and loads through a `serialize::Registry` that names the saved
//!   component types (see the `serialize` module): entities keep their ids
//!   and the entity table its generations, so a loaded world spawns the
//!   entities the saved one would have.
//! - `rayon`: `QueryBorrow::par_for_each` and `QueryMut::par_for_each`:
//!   each of rayon's threads claims runs of rows that shrink as the pass
//!   goes on, so the threads finish close together even when the work per
//!   row is heavy or uneven, and a cheap pass takes a few claims per
//!   thread.
//!
//! # Implementation
//!
//! The unsafe code lives in the storage module (dense columns, sparse sets,
//! borrow flags and the raw views queries read through), in the fetch
//! functions of the query module, which only call the storage module's
//! `unsafe fn`s, and in the builder module (the entity builders' buffer of
//! type-erased components). Values sit in `UnsafeCell`s so that a query holding a
//! column's exclusive flag may write through a shared world. The operations
//! that do not need a component's type (drop a row's component, move a row,
//! release the front, clear) go through one object-safe trait, so the world
//! itself is not generic. `ARCHITECTURE.md` in the repository lists the
//! invariants.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![doc(test(attr(deny(warnings))))]

/// Calls `$impl!` once per tuple size the crate implements its traits for,
/// 0 to 12, with the elements as `(TypeParam, binding)` pairs: the tuple
/// impls are written once (as hecs writes them), in `bundle.rs` and
/// `query.rs`.
macro_rules! for_each_tuple {
    ($impl:ident) => {
        for_each_tuple!(@ $impl []
            (A, a) (B, b) (C, c) (D, d) (E, e) (F, f)
            (G, g) (H, h) (I, i) (J, j) (K, k) (L, l));
    };
    (@ $impl:ident [$($done:tt)*]) => {
        $impl!($($done)*);
    };
    (@ $impl:ident [$($done:tt)*] $next:tt $($rest:tt)*) => {
        $impl!($($done)*);
        for_each_tuple!(@ $impl [$($done)* $next] $($rest)*);
    };
}

mod access;
mod builder;
mod bundle;
mod column;
mod command;
mod entities;
mod entity;
mod entity_ref;
mod error;
mod far_map;
mod groups;
pub mod guide;
mod query;
#[cfg(feature = "serde")]
pub mod serialize;
mod storage;
mod take;
mod world;

/// The proptest settings of the unit tests, shared with the integration
/// tests.
#[cfg(test)]
#[path = "../tests/common/config.rs"]
mod test_config;

#[doc(hidden)]
pub use access::{Access, Accesses};
pub use builder::{
    Builder, BuilderRef, BuilderRefShared, BuiltEntity, BuiltEntityClone, EntityBuilder,
    EntityBuilderClone,
};
pub use bundle::{Bundle, DynamicBundle, DynamicBundleClone};
pub use column::{Column, ColumnMut};
pub use command::CommandBuffer;
pub use entity::Entity;
pub use entity_ref::{ComponentRef, EntityRef, Iter, RefMut};
pub use error::{ComponentError, NoSuchEntity, SpawnError};
#[doc(hidden)]
pub use groups::Required;
/// `#[derive(Bundle)]`, `#[derive(DynamicBundleClone)]` and
/// `#[derive(Query)]` (feature `macros`, on by default): see the traits of
/// the same names.
#[cfg(feature = "macros")]
pub use handlekit_ecs_macros::{Bundle, DynamicBundleClone, Query};
#[doc(hidden)]
pub use query::{EntityFetch, Fetch, OptionFetch};

/// What the derives' generated code calls; not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::bundle::{check_unique_types, has, put_one, spawn_each, take_one, TupleBundle};
    pub use crate::query::{assert_query, FirstOf, FromItem, QueryShape};
}
pub use query::{
    Batch, BatchedIter, Filter, Or, Query, QueryBorrow, QueryIter, QueryMut, QueryOne, With,
    Without,
};
pub use storage::ColumnRuns;
pub use storage::Storage;
pub use take::TakenEntity;
pub use world::{Collected, Component, Order, Ref, World, DEFAULT_MAX_ROWS};

/// The crate README's example, run as a doc test (the root README's ECS
/// section carries the same block; `tests/readme.rs` checks they agree).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
