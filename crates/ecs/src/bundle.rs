//! Bundles: tuples of components, and structs that derive [`Bundle`],
//! spawned, inserted and removed together; [`DynamicBundle`], what
//! [`World::spawn`] takes (bundles and built entities), and
//! [`DynamicBundleClone`], what an [`EntityBuilderClone`] takes.

use std::any::{type_name, TypeId};

use crate::builder::{EntityBuilder, EntityBuilderClone};
use crate::storage::BatchWriter;
use crate::world::{disjoint_columns, typed_column, Component, World};
use crate::Entity;

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
    ($(($name:ident, $writer:ident)),*) => {
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

bundle_tuple!();
bundle_tuple!((A, a));
bundle_tuple!((A, a), (B, b));
bundle_tuple!((A, a), (B, b), (C, c));
bundle_tuple!((A, a), (B, b), (C, c), (D, d));
bundle_tuple!((A, a), (B, b), (C, c), (D, d), (E, e));
bundle_tuple!((A, a), (B, b), (C, c), (D, d), (E, e), (F, f));
bundle_tuple!((A, a), (B, b), (C, c), (D, d), (E, e), (F, f), (G, g));
bundle_tuple!(
    (A, a),
    (B, b),
    (C, c),
    (D, d),
    (E, e),
    (F, f),
    (G, g),
    (H, h)
);
bundle_tuple!(
    (A, a),
    (B, b),
    (C, c),
    (D, d),
    (E, e),
    (F, f),
    (G, g),
    (H, h),
    (I, i)
);
bundle_tuple!(
    (A, a),
    (B, b),
    (C, c),
    (D, d),
    (E, e),
    (F, f),
    (G, g),
    (H, h),
    (I, i),
    (J, j)
);
bundle_tuple!(
    (A, a),
    (B, b),
    (C, c),
    (D, d),
    (E, e),
    (F, f),
    (G, g),
    (H, h),
    (I, i),
    (J, j),
    (K, k)
);
bundle_tuple!(
    (A, a),
    (B, b),
    (C, c),
    (D, d),
    (E, e),
    (F, f),
    (G, g),
    (H, h),
    (I, i),
    (J, j),
    (K, k),
    (L, l)
);
