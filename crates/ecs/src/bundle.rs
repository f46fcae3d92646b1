//! Bundles: tuples of components, spawned, inserted and removed together.

use std::any::{type_name, TypeId};

use crate::storage::BatchWriter;
use crate::world::{disjoint_columns, typed_column, Component, World};
use crate::Entity;

/// A tuple of up to 12 components of distinct types (`()` for none), spawned,
/// inserted or removed together. Implemented for tuples by one macro; the
/// methods are not part of the public API.
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// let e = world.spawn((1u8, 2u16, 3u32, 4u64, 5i8, 6i16, 7i32, 8i64, 9f32, 10f64, 'c', "s"));
/// assert_eq!(world.remove::<(u8, char)>(e), Ok((1, 'c')));
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
}

/// Panics if `ids` has a duplicate.
#[track_caller]
fn check_unique(ids: &[(TypeId, &'static str)]) {
    for (i, (id, name)) in ids.iter().enumerate() {
        if ids[..i].iter().any(|(other, _)| other == id) {
            panic!("handlekit-ecs: the bundle has the component type {name} twice");
        }
    }
}

/// Whether `entity` has a `T`.
fn has<T: Component>(world: &World, entity: Entity, row: usize) -> Result<(), &'static str> {
    match world.column_index::<T>() {
        Some(index) if world.columns[index].storage.contains(entity, row) => Ok(()),
        _ => Err(type_name::<T>()),
    }
}

macro_rules! bundle_tuple {
    ($(($name:ident, $writer:ident)),*) => {
        impl<$($name: Component),*> Bundle for ($($name,)*) {
            #[allow(unused_variables)]
            fn check_unique() {
                check_unique(&[$((TypeId::of::<$name>(), type_name::<$name>())),*]);
            }

            #[allow(unused_variables, non_snake_case)]
            fn put(self, world: &mut World, entity: Entity, row: usize) {
                let ($($name,)*) = self;
                $(drop(world.storage_mut::<$name>().insert(entity, row, $name));)*
            }

            #[allow(unused_variables)]
            fn has_all(world: &World, entity: Entity, row: usize) -> Result<(), &'static str> {
                $(has::<$name>(world, entity, row)?;)*
                Ok(())
            }

            #[allow(unused_variables, clippy::unused_unit)]
            fn take(world: &mut World, entity: Entity, row: usize) -> Self {
                ($(world
                    .storage_mut::<$name>()
                    .remove(entity, row)
                    .expect("handlekit-ecs: has_all said the component is there"),)*)
            }

            #[allow(unused_variables, unused_mut, non_snake_case)]
            fn spawn_batch(
                world: &mut World,
                bundles: impl Iterator<Item = Self>,
                out: &mut Vec<Entity>,
            ) {
                let indices = [$(world.column_or_register::<$name>()),*];
                let additional = bundles.size_hint().0;
                let (mut rows, columns) = world.batch_parts(additional);
                let start = rows.start();
                let additional = additional.min(rows.room());
                let [$($writer),*] = disjoint_columns(columns, indices);
                $(let mut $writer = BatchWriter::new(typed_column::<$name>($writer), start, additional);)*
                for bundle in bundles {
                    let (entity, row) = rows.alloc();
                    let ($($name,)*) = bundle;
                    $($writer.put(entity, row, $name);)*
                    out.push(entity);
                }
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
