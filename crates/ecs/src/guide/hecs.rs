//! # Switching from hecs
//!
//! This page maps the public items of `hecs` 0.11 to their counterparts in
//! handlekit-ecs, says where the two behave differently, and lists what has
//! no counterpart yet. Every example is a doc test run against this version
//! of the crate. A short section at the end is for bevy_ecs users.
//!
//! Most hecs code ports by changing the crate name. The differences that
//! change code are few:
//!
//! - [`World::get`] takes the component type, not a reference type:
//!   `world.get::<Pos>(e)` where hecs writes `world.get::<&Pos>(e)`, and
//!   mutable access is [`World::get_mut`] on a `&mut World`, which returns
//!   a plain `&mut T` (no guard). [`EntityRef::get`] keeps hecs's shape
//!   (`get::<&T>` / `get::<&mut T>`).
//! - [`World::spawn_batch`] returns the handles as a `Vec<Entity>`, not an
//!   iterator that spawns as it goes.
//! - [`World::clear`] keeps every old handle stale: ids do not repeat after
//!   it, where hecs's `clear` lets them repeat.
//!
//! ```
//! # #[cfg(feature = "macros")] {
//! use handlekit_ecs::{Bundle, World};
//!
//! #[derive(Debug, PartialEq)]
//! struct Pos(f32);
//! struct Vel(f32);
//!
//! #[derive(Bundle)]
//! struct Body {
//!     pos: Pos,
//!     vel: Vel,
//! }
//!
//! let mut world = World::new();
//! let a = world.spawn((Pos(0.0), Vel(1.0)));
//! let b = world.spawn(Body { pos: Pos(5.0), vel: Vel(-1.0) });
//! for (pos, vel) in world.query_mut::<(&mut Pos, &Vel)>() {
//!     pos.0 += vel.0;
//! }
//! assert_eq!(*world.get::<Pos>(a).unwrap(), Pos(1.0)); // hecs: get::<&Pos>
//! assert_eq!(*world.get::<Pos>(b).unwrap(), Pos(4.0));
//! # }
//! ```
//!
//! ## The world
//!
//! | hecs | handlekit-ecs | notes |
//! | --- | --- | --- |
//! | `World::new`, `len`, `is_empty`, `contains`, `clear` | [`World::new`], [`len`](crate::World::len), [`is_empty`](crate::World::is_empty), [`contains`](crate::World::contains), [`clear`](crate::World::clear) | `clear` keeps old handles stale (see above) |
//! | `spawn`, `spawn_batch`, `despawn` | [`spawn`](crate::World::spawn), [`spawn_batch`](crate::World::spawn_batch) (returns `Vec<Entity>`), [`despawn`](crate::World::despawn) | also [`try_spawn`](crate::World::try_spawn), which reports a full world instead of panicking |
//! | `insert`, `insert_one`, `remove`, `remove_one` | [`insert`](crate::World::insert), [`insert_one`](crate::World::insert_one), [`remove`](crate::World::remove), [`remove_one`](crate::World::remove_one) | same shapes |
//! | `get::<&T>`, `get::<&mut T>` | [`get::<T>`](crate::World::get) (a [`Ref`](crate::Ref) guard on a `&World`), [`get_mut::<T>`](crate::World::get_mut) (a `&mut T` on a `&mut World`) | see [Single components](#single-components) |
//! | `satisfies::<Q>(e)` | [`EntityRef::satisfies`] | through [`World::entity`] |
//! | `entity(e)` → `EntityRef` | [`World::entity`] → [`EntityRef`] (`entity`, `has`, `satisfies`, `get::<&T>`, `get::<&mut T>`) | |
//! | `iter()` | [`World::iter`] (an exact-size iterator of [`EntityRef`]s); `&World` is `IntoIterator` | in row order, not by archetype |
//! | `query`, `query_mut`, `query_one`, `query_one_mut` | [`query`](crate::World::query), [`query_mut`](crate::World::query_mut), [`query_one`](crate::World::query_one), [`query_one_mut`](crate::World::query_one_mut) | same shapes; see [Queries](#queries) |
//! | `query_many_mut::<Q, N>` | [`World::query_many_mut`] (and `query_disjoint_mut`) | panics when an entity is named twice, as hecs does |
//! | `reserve_entity`, `reserve_entities`, `flush` | [`reserve_entity`](crate::World::reserve_entity), [`reserve_entities`](crate::World::reserve_entities), [`flush`](crate::World::flush) | from a `&World`, lock-free; the calls that change the entity table flush first |
//! | `view::<Q>()`, `view_mut::<Q>()`, `View::get` | [`QueryBorrow::get`] on a query borrowed once | the column lookups and the borrow are paid once per query, as a view's are |
//! | `column::<T>()` (`ArchetypeColumn`) | [`World::column`] → [`Column`](crate::Column), whose [`runs`](crate::Column::runs) yields `(&[Entity], &[T])` | one column per type, not one per archetype |
//! | `take(e)` → `TakenEntity` | [`World::take`](crate::World::take) → [`TakenEntity`](crate::TakenEntity) | owns its components (no borrow of the world); another world's `spawn` takes it |
//! | `exchange`, `exchange_one` | [`exchange`](crate::World::exchange), [`exchange_one`](crate::World::exchange_one) | same shapes; no entity moves, so it costs what `remove` then `insert` cost |
//! | `spawn_at(e, ..)`, `find_entity_from_id`, `freelist` / `set_freelist` | no counterpart | [`serialize`](crate::serialize) keeps handles across a save and load |
//! | `reserve::<B>(n)` | not needed | columns reserve address space for [`World::max_rows`] rows and commit memory as rows reach it: growing never copies |
//! | `archetypes()`, `Archetype`, `archetypes_generation` | no counterpart | there are no archetypes (see [Storage](#storage)) |
//! | `spawn_column_batch`, `ColumnBatch`, `ColumnBatchBuilder`, `BatchWriter` | [`World::spawn_batch`] | `spawn_batch` already writes column by column (each column resolved once per batch) |
//! | `ChangeTracker`, `Changes` | no counterpart | |
//!
//! ## Bundles and builders
//!
//! | hecs | handlekit-ecs | notes |
//! | --- | --- | --- |
//! | `Bundle` for tuples, `#[derive(Bundle)]` | [`Bundle`](trait@crate::Bundle), [`#[derive(Bundle)]`](derive@crate::Bundle) (feature `macros`, **on by default**; hecs's is off) | a derived bundle spawns exactly as its tuple does; a type named twice panics |
//! | `DynamicBundle`, `DynamicBundleClone`, `#[derive(DynamicBundleClone)]` | [`DynamicBundle`](crate::DynamicBundle), [`DynamicBundleClone`](trait@crate::DynamicBundleClone) and its derive | what [`World::spawn`] and [`World::insert`] take |
//! | `EntityBuilder`, `BuiltEntity` | [`EntityBuilder`](crate::EntityBuilder), [`BuiltEntity`](crate::BuiltEntity) | `add`, `add_bundle`, `has`, `get::<&T>`, `get_mut::<&mut T>`, `build`, `clear`, `component_types` |
//! | `EntityBuilderClone`, `BuiltEntityClone` | [`EntityBuilderClone`](crate::EntityBuilderClone), [`BuiltEntityClone`](crate::BuiltEntityClone) | prefabs: `world.spawn(&prefab)` spawns a clone |
//! | `MissingComponent`, `bundle_satisfies_query` | [`ComponentError::MissingComponent`] | |
//!
//! ```
//! use handlekit_ecs::{EntityBuilder, EntityBuilderClone, World};
//!
//! let mut world = World::new();
//! let mut builder = EntityBuilder::new();
//! builder.add(1u8).add("name");
//! assert_eq!(builder.get::<&u8>(), Some(&1));
//! let e = world.spawn(builder.build());
//! assert_eq!(*world.get::<&str>(e).unwrap(), "name");
//!
//! let mut prefab = EntityBuilderClone::new();
//! prefab.add(String::from("orc")).add(100u32);
//! let orc = prefab.build();
//! let (a, b) = (world.spawn(&orc), world.spawn(&orc));
//! assert_eq!(*world.get::<u32>(a).unwrap(), *world.get::<u32>(b).unwrap());
//! ```
//!
//! ## Queries
//!
//! | hecs | handlekit-ecs | notes |
//! | --- | --- | --- |
//! | `&T`, `&mut T`, `Option<&T>`, `Option<&mut T>`, `Entity`, `With`, `Without`, tuples | the same, as [`Query`](crate::Query) elements | tuples of up to 12 |
//! | `Or<L, R>` (`Left`, `Right`, `Both`) | [`Or`](crate::Or) | its rows are visited one at a time |
//! | `#[derive(Query)]` (structs, and enums whose first matching variant wins) | [`#[derive(Query)]`](derive@crate::Query) (feature `macros`, on by default) | one lifetime parameter, as hecs's; a struct runs the loop of the tuple of its field types; an enum's rows are visited one at a time; filters (`With<T>`, `Without<T>`) may be fields |
//! | `QueryBorrow` (`iter`, `with`, `without`, `get`) | [`QueryBorrow`] (`iter`, `for_each`, `get`, `get_disjoint_mut`) | narrow with `With` / `Without` inside the tuple |
//! | `QueryBorrow::iter_batched`, `QueryMut::into_iter_batched`, `Batch`, `BatchedIter` | [`QueryBorrow::iter_batched`], [`QueryMut::into_iter_batched`], [`Batch`](crate::Batch), [`BatchedIter`](crate::BatchedIter) | batches are never empty and full but the last; they are `Send` where the items are |
//! | `QueryMut`, `QueryIter`, `QueryOne` | [`QueryMut`](crate::QueryMut), [`QueryIter`](crate::QueryIter), [`QueryOne`](crate::QueryOne) | |
//! | `PreparedQuery`, `PreparedView` | [`QueryBorrow`] | a query's column lookups are a few nanoseconds; there is no archetype list to cache |
//! | `Query`, `Fetch`, `Access` (traits for new query kinds) | [`Query`](crate::Query) (sealed in practice: its methods are hidden) | |
//!
//! **Which loop is fastest.** `for` loops over [`World::query_mut`] and
//! [`QueryBorrow::iter`] are the loops users write, and the runner measures
//! them first; `for_each` on the same query visits runs of matching rows as
//! plain loops over slices, and is the fastest way through a column with
//! holes (dead rows not yet collected, a component on some rows only).
//!
//! ```
//! use handlekit_ecs::{Or, World};
//!
//! let mut world = World::new();
//! world.spawn((1u8,));
//! world.spawn((2u16,));
//! world.spawn((3u8, 4u16));
//! let mut sum = 0;
//! for either in world.query::<Or<&u8, &u16>>().iter() {
//!     match either {
//!         Or::Left(a) => sum += u32::from(*a),
//!         Or::Right(b) => sum += u32::from(*b),
//!         Or::Both(a, b) => sum += u32::from(*a) * u32::from(*b),
//!     }
//! }
//! assert_eq!(sum, 1 + 2 + 12);
//!
//! let mut query = world.query::<&u8>();
//! let batches: Vec<usize> = query.iter_batched(1).map(|batch| batch.len()).collect();
//! assert_eq!(batches, [1, 1]);
//! ```
//!
//! A derived query, as hecs's: a struct of query terms, or an enum whose
//! variants are alternatives (the first one an entity matches gives its
//! item).
//!
//! ```
//! # #[cfg(feature = "macros")] {
//! use handlekit_ecs::{Entity, Query, With, World};
//!
//! struct Pos(f32);
//! struct Vel(f32);
//! struct Player;
//!
//! #[derive(Query)]
//! struct Movement<'a> {
//!     pos: &'a mut Pos,
//!     vel: &'a Vel,
//! }
//!
//! #[derive(Query)]
//! enum Named<'a> {
//!     Player(Entity, With<Player>),
//!     Placed { pos: &'a Pos },
//! }
//!
//! let mut world = World::new();
//! let p = world.spawn((Pos(0.0), Vel(1.0), Player));
//! world.spawn((Pos(3.0),));
//! for Movement { pos, vel } in world.query_mut::<Movement>() {
//!     pos.0 += vel.0;
//! }
//! let mut names = Vec::new();
//! for named in world.query::<Named>().iter() {
//!     match named {
//!         Named::Player(e, _) => names.push(format!("player {}", e == p)),
//!         Named::Placed { pos } => names.push(format!("at {}", pos.0)),
//!     }
//! }
//! assert_eq!(names, ["player true", "at 3"]);
//! # }
//! ```
//!
//! ## Single components
//!
//! | hecs | handlekit-ecs |
//! | --- | --- |
//! | `world.get::<&T>(e)` → `Ref<T>` | [`world.get::<T>(e)`](crate::World::get) → [`Ref<T>`](crate::Ref) |
//! | `world.get::<&mut T>(e)` → `RefMut<T>` | [`world.get_mut::<T>(e)`](crate::World::get_mut) → `&mut T` on a `&mut World`, or [`world.entity(e)?.get::<&mut T>()`](crate::EntityRef::get) → [`RefMut<T>`](crate::RefMut) on a `&World` |
//! | `Ref::map`, `RefMut::map`, `Ref: Clone` | [`Ref::map`](crate::Ref::map), [`RefMut::map`](crate::RefMut::map), `Ref: Clone` |
//! | `ComponentError`, `NoSuchEntity`, `QueryOneError` | [`ComponentError`] (`NoSuchEntity`, `MissingComponent`), [`NoSuchEntity`](crate::NoSuchEntity) |
//!
//! A [`Ref`](crate::Ref) holds a shared borrow of its column, so each
//! [`World::get`] takes and gives back the column's borrow flag (two atomic
//! operations, most of its cost: about 11 ns a call among 10,000 entities
//! here, where hecs's `World::get` took about 30). In a loop of lookups,
//! borrow a query once and call [`QueryBorrow::get`] (hecs's `View::get`),
//! or call [`World::get_mut`] (on a `&mut World`) or [`World::has`], which
//! take no borrow: each took about 1 ns a call or less in the same
//! measurement, and a loop of them finds the column once.
//!
//! ```
//! use handlekit_ecs::World;
//!
//! let mut world = World::new();
//! let e = world.spawn((7u32,));
//! *world.get_mut::<u32>(e).unwrap() += 1; // hecs: *world.get::<&mut u32>(e)? += 1
//! let entity = world.entity(e).unwrap();
//! *entity.get::<&mut u32>().unwrap() += 1; // hecs's shape, through EntityRef
//! let mut positions = world.query::<&u32>();
//! assert_eq!(positions.get(e), Some(&9)); // a view's lookup
//! ```
//!
//! ## Commands
//!
//! | hecs | handlekit-ecs |
//! | --- | --- |
//! | `CommandBuffer::new`, `insert`, `insert_one`, `remove`, `remove_one`, `despawn`, `spawn`, `run_on`, `clear` | [`CommandBuffer`](crate::CommandBuffer): the same names |
//! | `CommandBuffer::insert` on a reserved entity | the same: the entity is spawned when the buffer runs |
//! | `CommandBuffer::queue` (a closure) | no counterpart yet |
//!
//! ```
//! use handlekit_ecs::{CommandBuffer, World};
//!
//! let mut world = World::new();
//! let mut commands = CommandBuffer::new();
//! let later = world.reserve_entity(); // from a &World, during a system
//! commands.insert(later, (1u8,));
//! commands.run_on(&mut world);
//! assert_eq!(*world.get::<u8>(later).unwrap(), 1);
//! ```
//!
//! ## Borrows
//!
//! Both check borrows at run time for queries on a `&World` and not at all
//! on a `&mut World`. hecs tracks a borrow per archetype column; here there
//! is one flag per component type. Two [`World::query`]s that would write
//! one component type coexist when no live entity can match both (hecs's
//! rule; `With` and `Without` terms count, as an archetype's types do in
//! hecs), in either order: a writer made after disjoint readers joins them.
//! They share the column's flag, held exclusively for all of them, so a
//! guard ([`World::get`]) on that column panics while they live, where hecs
//! checks a guard against its entity's archetype only. A conflict panics
//! with a message naming the type, never undefined behaviour.
//!
//! ## Storage
//!
//! hecs groups entities by archetype (their set of component types) and
//! moves an entity's components to another table when that set changes.
//! handlekit-ecs has no archetypes: each component type has one column
//! indexed by row ([`Storage::Dense`](crate::Storage::Dense), the default)
//! or a sparse set ([`Storage::Sparse`](crate::Storage::Sparse), for rare
//! or often added and removed components; see [`World::register`]).
//! Adding or removing a component writes that column and nothing else; a
//! query ANDs the columns' presence bits 64 rows at a time. Despawning
//! marks a row dead without moving anything; [`World::collect`] compacts
//! the rows within a budget and gives whole pages back to the system.
//!
//! ## Serialization
//!
//! hecs's `serialize::row` and `serialize::column` (the user writes the
//! per-component glue) correspond to [`serialize`](crate::serialize): name
//! the component types in a registry once, and the whole world (handles,
//! storage kinds, row order) saves and loads. A load from untrusted bytes
//! is bounded in memory (see `Load::max_memory`).
//!
//! ## For bevy_ecs users
//!
//! | bevy_ecs | handlekit-ecs |
//! | --- | --- |
//! | `StorageType::Table` | [`Storage::Dense`](crate::Storage::Dense): a column per type, indexed by row, no archetype tables |
//! | `StorageType::SparseSet` | [`Storage::Sparse`](crate::Storage::Sparse) |
//! | `World::spawn`, `entity`, `entity_mut`, `despawn` | [`World::spawn`], [`World::entity`], [`World::get_mut`] / [`World::insert`], [`World::despawn`] |
//! | `Query<(&A, &mut B), With<C>>` in a system | `world.query_mut::<(&A, &mut B, With<C>)>()` in a function that takes `&mut World` |
//! | `Commands` | [`CommandBuffer`](crate::CommandBuffer) with [`World::reserve_entity`] |
//! | schedules, systems as functions with parameters, resources, events, change detection (`Changed`, `Added`), observers, hierarchy | no counterpart: handlekit-ecs is a store, not a framework |
//!
//! [`World::get`]: crate::World::get
//! [`World::get_mut`]: crate::World::get_mut
//! [`World::has`]: crate::World::has
//! [`EntityRef::get`]: crate::EntityRef::get
//! [`EntityRef::satisfies`]: crate::EntityRef::satisfies
//! [`EntityRef`]: crate::EntityRef
//! [`World::spawn_batch`]: crate::World::spawn_batch
//! [`World::spawn`]: crate::World::spawn
//! [`World::insert`]: crate::World::insert
//! [`World::despawn`]: crate::World::despawn
//! [`World::clear`]: crate::World::clear
//! [`World::entity`]: crate::World::entity
//! [`World::iter`]: crate::World::iter
//! [`World::query`]: crate::World::query
//! [`World::query_mut`]: crate::World::query_mut
//! [`World::query_many_mut`]: crate::World::query_many_mut
//! [`World::column`]: crate::World::column
//! [`World::max_rows`]: crate::World::max_rows
//! [`World::collect`]: crate::World::collect
//! [`World::register`]: crate::World::register
//! [`World::reserve_entity`]: crate::World::reserve_entity
//! [`World::new`]: crate::World::new
//! [`QueryBorrow`]: crate::QueryBorrow
//! [`QueryBorrow::get`]: crate::QueryBorrow::get
//! [`QueryBorrow::iter`]: crate::QueryBorrow::iter
//! [`QueryBorrow::iter_batched`]: crate::QueryBorrow::iter_batched
//! [`QueryMut::into_iter_batched`]: crate::QueryMut::into_iter_batched
//! [`ComponentError`]: crate::ComponentError
//! [`ComponentError::MissingComponent`]: crate::ComponentError::MissingComponent
