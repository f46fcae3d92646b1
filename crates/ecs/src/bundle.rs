//! Bundles: tuples of components, and structs that derive [`Bundle`],
//! spawned, inserted and removed together; [`DynamicBundle`], what
//! [`World::spawn`] takes (bundles and built entities), and
//! [`DynamicBundleClone`], what an [`EntityBuilderClone`] takes.

use std::any::{type_name, TypeId};

use crate::builder::{BuiltEntity, BuiltEntityClone, EntityBuilder, EntityBuilderClone};
use crate::storage::BatchWriter;
use crate::world::{disjoint_columns, typed_column, Component, World};
use crate::{ComponentError, Entity, NoSuchEntity, SpawnError};

/// A statically typed set of components of distinct types, spawned, inserted
/// or removed together: a tuple of up to 12 components (`()` for none), or
/// a struct with `#[derive(Bundle)]` (feature `macros`, on by default),
/// whose fields are the components. The methods are not part of the public
/// API: implement the trait with the derive, which forwards each method to
/// the tuple of the struct's field types, so a derived bundle runs exactly
/// the code of that tuple.
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// let e = world.spawn((1u8, 2u16, 3u32, 4u64, 5i8, 6i16, 7i32, 8i64, 9f32, 10f64, 'c', "s"));
/// assert_eq!(world.remove::<(u8, char)>(e), Ok((1, 'c')));
/// ```
///
/// Derived (named fields, tuple structs and generics; any number of fields,
/// though past 12, the largest tuple, `spawn_batch` spawns one entity at a
/// time).
/// As with a tuple, spawning, inserting or removing a bundle that names a
/// component type twice panics ("the bundle has the component type …
/// twice"), before anything is spawned. A unit struct that derives `Bundle`
/// is the empty bundle, as `()` is (as in hecs); a tag component derives
/// nothing and is spawned as `(Tag,)`.
///
/// ```
/// # #[cfg(feature = "macros")] {
/// use handlekit_ecs::{Bundle, World};
///
/// #[derive(Bundle, Debug, PartialEq)]
/// struct Body<P: handlekit_ecs::Component> {
///     pos: P,
///     mass: f32,
/// }
///
/// let mut world = World::new();
/// let e = world.spawn(Body { pos: [1u32, 2], mass: 3.0 });
/// assert_eq!(*world.get::<f32>(e).unwrap(), 3.0);
/// let body = world.remove::<Body<[u32; 2]>>(e).unwrap();
/// assert_eq!(body, Body { pos: [1, 2], mass: 3.0 });
/// # }
/// ```
pub trait Bundle: Send + Sync + 'static + Sized {
    /// Panics if the tuple has a component type twice.
    #[doc(hidden)]
    fn check_unique();
    /// Puts every component on `entity` (at `row`), dropping any it replaces.
    #[doc(hidden)]
    fn put(self, world: &mut World, entity: Entity, row: usize);
    /// `Ok` if `entity` (at `row`) has every component, else the name of the
    /// first it lacks.
    #[doc(hidden)]
    fn has_all(world: &World, entity: Entity, row: usize) -> Result<(), &'static str>;
    /// Takes every component off `entity`; [`has_all`](Self::has_all) said
    /// `Ok`.
    #[doc(hidden)]
    fn take(world: &mut World, entity: Entity, row: usize) -> Self;
    /// Spawns an entity per bundle at the back of the world and pushes its
    /// handle to `out`: each column is resolved once, then the values are
    /// written in one loop (see [`World::spawn_batch`]).
    #[doc(hidden)]
    fn spawn_batch(world: &mut World, bundles: impl Iterator<Item = Self>, out: &mut Vec<Entity>);
    /// Adds every component to `builder`, replacing any of its types there.
    #[doc(hidden)]
    fn add_to(self, builder: &mut EntityBuilder);
}

/// What [`World::spawn`] and [`World::insert`] take: a [`Bundle`] (every
/// tuple of components, every struct that derives `Bundle`), the
/// [`BuiltEntity`](crate::BuiltEntity) of an
/// [`EntityBuilder`], or a [`&BuiltEntityClone`](crate::BuiltEntityClone)
/// (which spawns clones of its components). [`EntityBuilder::add_bundle`]
/// takes one too. The methods are not part of the public API.
///
/// ```
/// use handlekit_ecs::{DynamicBundle, EntityBuilder, World};
///
/// fn spawn_two(world: &mut World, a: impl DynamicBundle, b: impl DynamicBundle) {
///     world.spawn(a);
///     world.spawn(b);
/// }
///
/// let mut world = World::new();
/// let mut builder = EntityBuilder::new();
/// builder.add(1u8);
/// spawn_two(&mut world, (2u8, 'c'), builder.build());
/// assert_eq!(world.count::<u8>(), 2);
/// ```
pub trait DynamicBundle {
    /// Panics if the bundle has a component type twice.
    #[doc(hidden)]
    fn dynamic_check(&self);
    /// Puts every component on `entity` (at `row`), dropping any it
    /// replaces; [`dynamic_check`](Self::dynamic_check) passed.
    #[doc(hidden)]
    fn dynamic_put(self, world: &mut World, entity: Entity, row: usize);
    /// Adds every component to `builder`, replacing any of its types there;
    /// [`dynamic_check`](Self::dynamic_check) passed.
    #[doc(hidden)]
    fn dynamic_add_to(self, builder: &mut EntityBuilder);
}

impl<B: Bundle> DynamicBundle for B {
    #[inline]
    fn dynamic_check(&self) {
        B::check_unique();
    }

    #[inline]
    fn dynamic_put(self, world: &mut World, entity: Entity, row: usize) {
        self.put(world, entity, row);
    }

    #[inline]
    fn dynamic_add_to(self, builder: &mut EntityBuilder) {
        self.add_to(builder);
    }
}

/// What [`EntityBuilderClone::add_bundle`] takes: components that are
/// `Clone`. Implemented for tuples of up to 12 `Clone` components, for
/// [`&BuiltEntityClone`](crate::BuiltEntityClone), and for structs with
/// `#[derive(DynamicBundleClone)]` (feature `macros`) whose fields are
/// `Clone`. The method is not part of the public API.
///
/// ```
/// # #[cfg(feature = "macros")] {
/// use handlekit_ecs::{DynamicBundleClone, EntityBuilderClone, World};
///
/// #[derive(DynamicBundleClone)]
/// struct Stats {
///     hp: u32,
///     name: String,
/// }
///
/// let mut prefab = EntityBuilderClone::new();
/// prefab.add_bundle(Stats { hp: 10, name: "orc".into() }).add_bundle((1.5f32,));
/// let orc = prefab.build();
/// let mut world = World::new();
/// let a = world.spawn(&orc);
/// let b = world.spawn(&orc);
/// assert_eq!(*world.get::<String>(a).unwrap(), "orc");
/// assert_eq!(*world.get::<u32>(b).unwrap(), 10);
/// # }
/// ```
pub trait DynamicBundleClone {
    /// Adds a clone-capable copy of every component to `builder`,
    /// replacing any of its types there.
    #[doc(hidden)]
    fn add_to_clone(self, builder: &mut EntityBuilderClone);
}

/// The world's calls that take or give bundles: spawning, adding and
/// taking off several components at once. (The calls for one component
/// are in `world.rs`, those for queries in `query.rs`.)
impl World {
    /// Spawns an entity with the components of `bundle` in the next row at
    /// the back. O(components). The bundle is a [`DynamicBundle`]: a tuple
    /// of up to 12 components (`()` for none), a struct that derives
    /// [`Bundle`], an [`EntityBuilder`](crate::EntityBuilder)'s
    /// [`build`](crate::EntityBuilder::build), or a
    /// `&`[`BuiltEntityClone`](crate::BuiltEntityClone) (a prefab: its
    /// components are cloned).
    ///
    /// # Panics
    ///
    /// If the world's rows are full (the message names the limit; see
    /// [`try_spawn`](Self::try_spawn)), or the bundle has a component type
    /// twice.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8, "name", 2.5f32));
    /// assert_eq!(*world.get::<&str>(e).unwrap(), "name");
    /// ```
    #[track_caller]
    pub fn spawn(&mut self, bundle: impl DynamicBundle) -> Entity {
        match self.try_spawn(bundle) {
            Ok(entity) => entity,
            Err(error) => panic!("handlekit-ecs: spawn: {error}"),
        }
    }

    /// Spawns an entity, or returns why it does not fit (the bundle is
    /// dropped then).
    ///
    /// # Errors
    ///
    /// [`SpawnError::RowsFull`] when the window holds
    /// [`max_rows`](Self::max_rows) rows (collect to free dead ones),
    /// [`SpawnError::EntitiesFull`] when no entity index is left.
    ///
    /// # Panics
    ///
    /// If the bundle has a component type twice.
    ///
    /// ```
    /// use handlekit_ecs::{Order, World};
    /// let mut world = World::with_max_rows(1);
    /// let e = world.try_spawn((1u8,)).unwrap();
    /// assert!(world.try_spawn((2u8,)).is_err());
    /// world.despawn(e).unwrap();
    /// world.collect(1, Order::Any); // gives the dead row back
    /// assert!(world.try_spawn((2u8,)).is_ok());
    /// ```
    pub fn try_spawn<B: DynamicBundle>(&mut self, bundle: B) -> Result<Entity, SpawnError> {
        bundle.dynamic_check();
        let (entity, row) = self.alloc_row()?;
        bundle.dynamic_put(self, entity, row);
        Ok(entity)
    }

    /// Spawns an entity per bundle, in order, and returns their handles.
    /// Faster per entity than [`spawn`](Self::spawn): each column is
    /// resolved once per batch, the values are pushed in one loop, and the
    /// alive and presence bits are set a word at a time at the end.
    ///
    /// # Panics
    ///
    /// As [`spawn`](Self::spawn). If the rows run out (or the iterator
    /// panics) midway, the entities spawned so far stay, whole.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let es = world.spawn_batch((0..100u32).map(|i| (i, i as f32)));
    /// assert_eq!(es.len(), 100);
    /// assert_eq!(*world.get::<u32>(es[7]).unwrap(), 7);
    /// ```
    #[track_caller]
    pub fn spawn_batch<B: Bundle>(&mut self, bundles: impl IntoIterator<Item = B>) -> Vec<Entity> {
        // Once for the batch, not per entity.
        B::check_unique();
        let bundles = bundles.into_iter();
        let mut out = Vec::with_capacity(bundles.size_hint().0);
        // Resolves each column once, then writes values in a tight loop;
        // the alive and presence bits are set a word at a time at the end.
        B::spawn_batch(self, bundles, &mut out);
        out
    }

    /// Adds the components of `bundle` (any [`DynamicBundle`], as for
    /// [`spawn`](Self::spawn)) to `entity`, replacing (and dropping) any it
    /// already has. No entity moves: a dense component is a slot and a bit,
    /// a sparse one a push.
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if the entity is not alive (the bundle is dropped).
    ///
    /// # Panics
    ///
    /// If the bundle has a component type twice.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8,));
    /// world.insert(e, (2u16, 3u32)).unwrap();
    /// assert_eq!(*world.get::<u32>(e).unwrap(), 3);
    /// ```
    pub fn insert<B: DynamicBundle>(
        &mut self,
        entity: Entity,
        bundle: B,
    ) -> Result<(), NoSuchEntity> {
        bundle.dynamic_check();
        let row = self.row_of_flushed(entity)?;
        bundle.dynamic_put(self, entity, row);
        Ok(())
    }

    /// Takes the components of the bundle type `B` off `entity` and returns
    /// them. Nothing is removed unless the entity has all of them.
    ///
    /// # Errors
    ///
    /// [`ComponentError::NoSuchEntity`], or
    /// [`ComponentError::MissingComponent`] naming the first component type
    /// the entity lacks.
    ///
    /// # Panics
    ///
    /// If `B` has a component type twice.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8, 2u16, 3u32));
    /// assert_eq!(world.remove::<(u8, u32)>(e), Ok((1, 3)));
    /// assert!(world.remove::<(u8, u16)>(e).is_err());
    /// assert_eq!(*world.get::<u16>(e).unwrap(), 2); // still there
    /// ```
    pub fn remove<B: Bundle>(&mut self, entity: Entity) -> Result<B, ComponentError> {
        B::check_unique();
        let row = self.row_of_flushed(entity)?;
        B::has_all(self, entity, row).map_err(ComponentError::MissingComponent)?;
        Ok(B::take(self, entity, row))
    }

    /// Takes the components of the bundle type `S` off `entity`, then adds
    /// `components` (any [`DynamicBundle`]), and returns what was taken:
    /// [`remove::<S>`](Self::remove) followed by [`insert`](Self::insert),
    /// as one call. hecs's `exchange` saves a move between archetypes this
    /// way; here no entity moves in either case, so it costs the same as the
    /// two calls.
    ///
    /// # Errors
    ///
    /// As [`remove`](Self::remove): [`ComponentError::NoSuchEntity`], or
    /// [`ComponentError::MissingComponent`] naming the first component type
    /// of `S` the entity lacks. On an error the entity is left unchanged and
    /// `components` is dropped.
    ///
    /// # Panics
    ///
    /// If `S` or `components` has a component type twice.
    ///
    /// ```
    /// struct Walking(f32);
    /// struct Flying { altitude: f32 }
    /// let mut world = handlekit_ecs::World::new();
    /// let bird = world.spawn((Walking(1.0), 'b'));
    /// let Walking(speed) = world
    ///     .exchange::<(Walking,), _>(bird, (Flying { altitude: 10.0 },))
    ///     .map(|(w,)| w)
    ///     .unwrap();
    /// assert_eq!(speed, 1.0);
    /// assert!(!world.has::<Walking>(bird));
    /// assert_eq!(world.get::<Flying>(bird).unwrap().altitude, 10.0);
    /// // It has no `Walking` any more: nothing changes.
    /// assert!(world.exchange::<(Walking,), _>(bird, (0u8,)).is_err());
    /// assert!(!world.has::<u8>(bird));
    /// ```
    pub fn exchange<S: Bundle, T: DynamicBundle>(
        &mut self,
        entity: Entity,
        components: T,
    ) -> Result<S, ComponentError> {
        S::check_unique();
        components.dynamic_check();
        let row = self.row_of_flushed(entity)?;
        S::has_all(self, entity, row).map_err(ComponentError::MissingComponent)?;
        let taken = S::take(self, entity, row);
        components.dynamic_put(self, entity, row);
        Ok(taken)
    }

    /// Takes the component `S` off `entity` and adds `component` in its
    /// place: [`exchange`](Self::exchange) for one component each way.
    ///
    /// # Errors
    ///
    /// As [`remove_one`](Self::remove_one); on an error the entity is left
    /// unchanged and `component` is dropped.
    ///
    /// ```
    /// #[derive(Debug, PartialEq)]
    /// struct Seed;
    /// struct Tree { height: u32 }
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((Seed,));
    /// assert_eq!(world.exchange_one::<Seed, _>(e, Tree { height: 1 }), Ok(Seed));
    /// assert_eq!(world.get::<Tree>(e).unwrap().height, 1);
    /// assert!(world.exchange_one::<Seed, _>(e, Tree { height: 2 }).is_err());
    /// assert_eq!(world.get::<Tree>(e).unwrap().height, 1);
    /// ```
    pub fn exchange_one<S: Component, T: Component>(
        &mut self,
        entity: Entity,
        component: T,
    ) -> Result<S, ComponentError> {
        self.exchange::<(S,), (T,)>(entity, (component,))
            .map(|(taken,)| taken)
    }
}

/// The builders' calls that take bundles. (The builders themselves, and
/// the built entities as bundles, are in `builder.rs`.)
impl EntityBuilder {
    /// Adds every component of `bundle` (a tuple, a derived
    /// [`Bundle`](crate::Bundle), another builder's
    /// [`BuiltEntity`](crate::BuiltEntity), or a
    /// `&`[`BuiltEntityClone`](crate::BuiltEntityClone), which adds clones),
    /// replacing the values of the same types. Returns the builder, for
    /// chaining.
    ///
    /// # Panics
    ///
    /// If `bundle` has a component type twice.
    ///
    /// ```
    /// use handlekit_ecs::EntityBuilder;
    /// let mut builder = EntityBuilder::new();
    /// builder.add(1u8).add_bundle((2u8, 'c')).add(0.5f32);
    /// assert_eq!(builder.get::<&u8>(), Some(&2));
    /// assert!(builder.has::<char>());
    /// ```
    #[track_caller]
    pub fn add_bundle(&mut self, bundle: impl DynamicBundle) -> &mut Self {
        bundle.dynamic_check();
        bundle.dynamic_add_to(self);
        self
    }
}

impl EntityBuilderClone {
    /// Adds every component of `bundle` (a tuple of `Clone` components, a
    /// struct deriving [`DynamicBundleClone`], or a
    /// `&`[`BuiltEntityClone`](crate::BuiltEntityClone), whose components
    /// are cloned), replacing the values of the same types. Returns the
    /// builder, for chaining.
    ///
    /// # Panics
    ///
    /// If `bundle` has a component type twice.
    ///
    /// ```
    /// use handlekit_ecs::EntityBuilderClone;
    /// let mut base = EntityBuilderClone::new();
    /// base.add(100u32).add('b');
    /// let base = base.build();
    /// let mut boss = EntityBuilderClone::new();
    /// boss.add_bundle(&base).add(500u32);
    /// assert_eq!(boss.get::<&u32>(), Some(&500));
    /// assert!(boss.has::<char>());
    /// ```
    #[track_caller]
    pub fn add_bundle(&mut self, bundle: impl DynamicBundleClone) -> &mut Self {
        bundle.add_to_clone(self);
        self
    }
}

impl DynamicBundle for BuiltEntity<'_> {
    #[inline]
    fn dynamic_check(&self) {
        // The builder's types are distinct (it replaces on `add`).
    }

    fn dynamic_put(self, world: &mut World, entity: Entity, row: usize) {
        self.put_all(world, entity, row);
    }

    fn dynamic_add_to(self, builder: &mut EntityBuilder) {
        self.move_into(builder);
    }
}

impl DynamicBundle for &BuiltEntityClone {
    #[inline]
    fn dynamic_check(&self) {
        // The prefab's types are distinct (its builder replaces on `add`).
    }

    fn dynamic_put(self, world: &mut World, entity: Entity, row: usize) {
        self.put_clones(world, entity, row);
    }

    fn dynamic_add_to(self, builder: &mut EntityBuilder) {
        self.clone_into_builder(builder);
    }
}

impl DynamicBundleClone for &BuiltEntityClone {
    fn add_to_clone(self, builder: &mut EntityBuilderClone) {
        self.clone_into_prefab(builder);
    }
}

/// Whether `ids` has a duplicate. Always inlined: a bundle's `TypeId`s are
/// constants, so the compiler folds the comparisons and a spawn pays
/// nothing for the check (out of line, it cost about 130 instructions per
/// spawn of 4 components, a fifth of the spawn; callgrind).
#[inline(always)]
fn has_duplicate<const N: usize>(ids: [TypeId; N]) -> bool {
    let mut i = 0;
    while i < N {
        let mut j = 0;
        while j < i {
            if ids[i] == ids[j] {
                return true;
            }
            j += 1;
        }
        i += 1;
    }
    false
}

/// The batch path of the tuple bundles, for items of any type that a
/// closure splits into the tuple: a tuple's own `spawn_batch` (the
/// identity), and a derived struct's (its fields, moved inside the batch
/// loop, where the compiler sees through the move: as an iterator adapter
/// mapping each struct to a tuple, the move cost about 30 instructions per
/// entity of 4 components, a seventh of the batch; callgrind). Not part of
/// the public API (reached through `__private` by the derive).
#[doc(hidden)]
pub trait TupleBundle: Bundle {
    /// Spawns an entity per item, with the components `split` makes of it,
    /// as [`Bundle::spawn_batch`] does; [`Bundle::check_unique`] passed.
    fn spawn_batch_split<T>(
        world: &mut World,
        items: impl Iterator<Item = T>,
        out: &mut Vec<Entity>,
        split: impl FnMut(T) -> Self,
    );
}

/// Panics if `ids` has a duplicate, naming it.
#[cold]
#[inline(never)]
#[track_caller]
fn check_unique(ids: &[(TypeId, &'static str)]) {
    for (i, (id, name)) in ids.iter().enumerate() {
        if ids[..i].iter().any(|(other, _)| other == id) {
            panic!("handlekit-ecs: the bundle has the component type {name} twice");
        }
    }
}

/// Puts `component` on `entity` (at `row`), dropping any `T` it replaces:
/// the one step of every bundle's `put`, the tuples' and the derived
/// structs' alike, so that a derived bundle's fields go to their columns
/// through the code its tuple runs, without being moved into a tuple first.
/// Not part of the public API (reached through `__private` by the derive).
#[doc(hidden)]
#[inline]
pub fn put_one<T: Component>(world: &mut World, entity: Entity, row: usize, component: T) {
    drop(world.storage_mut::<T>().insert(entity, row, component));
}

/// Panics if `ids` has a duplicate, naming it; the check folds away where
/// the `TypeId`s are constants (see [`has_duplicate`]). A derived bundle's
/// `check_unique`. Not part of the public API.
#[doc(hidden)]
#[inline(always)]
pub fn check_unique_types<const N: usize>(ids: [(TypeId, &'static str); N]) {
    if has_duplicate(ids.map(|(id, _)| id)) {
        check_unique(&ids);
    }
}

/// Takes the `T` off `entity` (at `row`), which [`has`] found there: the
/// step of every bundle's `take`. Not part of the public API.
#[doc(hidden)]
#[inline]
pub fn take_one<T: Component>(world: &mut World, entity: Entity, row: usize) -> T {
    world
        .storage_mut::<T>()
        .remove(entity, row)
        .expect("handlekit-ecs: has_all said the component is there")
}

/// Spawns each bundle with [`World::spawn`], pushing the entities to `out`:
/// the `spawn_batch` of a derived bundle of more fields than the largest
/// tuple, which has no batch path. Not part of the public API.
#[doc(hidden)]
#[track_caller]
pub fn spawn_each<B: Bundle>(
    world: &mut World,
    bundles: impl Iterator<Item = B>,
    out: &mut Vec<Entity>,
) {
    for bundle in bundles {
        out.push(world.spawn(bundle));
    }
}

/// `Ok` if `entity` has a `T`, else `T`'s name: the step of every bundle's
/// `has_all`. Not part of the public API.
#[doc(hidden)]
#[inline]
pub fn has<T: Component>(world: &World, entity: Entity, row: usize) -> Result<(), &'static str> {
    match world.column_index::<T>() {
        Some(index) if world.columns[index].storage.contains(entity, row) => Ok(()),
        _ => Err(type_name::<T>()),
    }
}

macro_rules! bundle_tuple {
    ($(($name:ident, $writer:ident))*) => {
        impl<$($name: Component),*> Bundle for ($($name,)*) {
            #[inline]
            fn check_unique() {
                if has_duplicate([$(TypeId::of::<$name>()),*]) {
                    check_unique(&[$((TypeId::of::<$name>(), type_name::<$name>())),*]);
                }
            }

            #[allow(unused_variables, non_snake_case)]
            fn put(self, world: &mut World, entity: Entity, row: usize) {
                let ($($name,)*) = self;
                $(put_one(world, entity, row, $name);)*
            }

            #[allow(unused_variables)]
            fn has_all(world: &World, entity: Entity, row: usize) -> Result<(), &'static str> {
                $(has::<$name>(world, entity, row)?;)*
                Ok(())
            }

            #[allow(unused_variables, clippy::unused_unit)]
            fn take(world: &mut World, entity: Entity, row: usize) -> Self {
                ($(take_one::<$name>(world, entity, row),)*)
            }

            #[allow(unused_variables, unused_mut, non_snake_case)]
            fn spawn_batch(
                world: &mut World,
                bundles: impl Iterator<Item = Self>,
                out: &mut Vec<Entity>,
            ) {
                <Self as TupleBundle>::spawn_batch_split(world, bundles, out, |bundle| bundle);
            }

            #[allow(unused_variables, non_snake_case)]
            fn add_to(self, builder: &mut EntityBuilder) {
                let ($($name,)*) = self;
                $(builder.add($name);)*
            }
        }

        impl<$($name: Component),*> TupleBundle for ($($name,)*) {
            #[allow(unused_variables, unused_mut, non_snake_case)]
            fn spawn_batch_split<T>(
                world: &mut World,
                items: impl Iterator<Item = T>,
                out: &mut Vec<Entity>,
                mut split: impl FnMut(T) -> Self,
            ) {
                let bundles = items;
                let indices = [$(world.column_or_register::<$name>()),*];
                let additional = bundles.size_hint().0;
                let (mut rows, columns) = world.batch_parts(additional);
                let start = rows.start();
                let additional = additional.min(rows.room());
                let [$($writer),*] = disjoint_columns(columns, indices);
                $(let mut $writer = BatchWriter::new(typed_column::<$name>($writer), start, additional);)*
                for item in bundles {
                    let (entity, row) = rows.alloc();
                    let ($($name,)*) = split(item);
                    $($writer.put(entity, row, $name);)*
                    out.push(entity);
                }
            }
        }

        impl<$($name: Component + Clone),*> DynamicBundleClone for ($($name,)*) {
            #[allow(unused_variables, non_snake_case)]
            fn add_to_clone(self, builder: &mut EntityBuilderClone) {
                <Self as Bundle>::check_unique();
                let ($($name,)*) = self;
                $(builder.add($name);)*
            }
        }
    };
}

for_each_tuple!(bundle_tuple);
