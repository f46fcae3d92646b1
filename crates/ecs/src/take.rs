//! [`World::take`]: an entity's components moved out of a world whole, as
//! a bundle another world (or this one) can spawn.

use crate::bundle::DynamicBundle;
use crate::{Entity, EntityBuilder, NoSuchEntity, World};

/// The components of an entity taken out of a world by [`World::take`]:
/// a [`DynamicBundle`] that [`World::spawn`] and [`World::insert`] accept.
/// Dropping it drops the components.
///
/// ```
/// use handlekit_ecs::World;
///
/// let mut from = World::new();
/// let e = from.spawn((1u8, String::from("moved")));
/// let taken = from.take(e).unwrap();
/// assert!(!from.contains(e));
///
/// let mut to = World::new();
/// let moved = to.spawn(taken);
/// assert_eq!(*to.get::<String>(moved).unwrap(), "moved");
/// ```
pub struct TakenEntity {
    /// The components, one per type (the world held at most one of each).
    components: EntityBuilder,
}

impl TakenEntity {
    /// Whether the taken entity had a `T`.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8,));
    /// let taken = world.take(e).unwrap();
    /// assert!(taken.has::<u8>() && !taken.has::<u16>());
    /// ```
    #[must_use]
    pub fn has<T: crate::Component>(&self) -> bool {
        self.components.has::<T>()
    }

    /// The types of the taken components, in no particular order.
    ///
    /// ```
    /// use std::any::TypeId;
    ///
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8, 2u16));
    /// let taken = world.take(e).unwrap();
    /// let mut types: Vec<TypeId> = taken.component_types().collect();
    /// types.sort();
    /// let mut expected = vec![TypeId::of::<u8>(), TypeId::of::<u16>()];
    /// expected.sort();
    /// assert_eq!(types, expected);
    /// ```
    pub fn component_types(&self) -> impl Iterator<Item = std::any::TypeId> + '_ {
        self.components.component_types()
    }
}

impl std::fmt::Debug for TakenEntity {
    /// The number of components (their types are not `Debug`).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8,));
    /// assert_eq!(format!("{:?}", world.take(e).unwrap()), "TakenEntity { components: 1 }");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TakenEntity")
            .field("components", &self.components.component_types().count())
            .finish()
    }
}

impl DynamicBundle for TakenEntity {
    #[inline]
    fn dynamic_check(&self) {
        // One component per type: a world holds at most one of each.
    }

    fn dynamic_put(mut self, world: &mut World, entity: Entity, row: usize) {
        self.components.build().dynamic_put(world, entity, row);
    }

    fn dynamic_add_to(mut self, builder: &mut EntityBuilder) {
        self.components.build().dynamic_add_to(builder);
    }
}

impl World {
    /// Despawns `entity` and returns its components, for
    /// [`spawn`](World::spawn) into another world (or back into this one,
    /// as a new entity). The entity's handle goes stale, as for
    /// [`despawn`](World::despawn).
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if `entity` is not alive.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((5u32, 'x'));
    /// let taken = world.take(e).unwrap();
    /// assert!(world.take(e).is_err()); // stale now
    /// let back = world.spawn(taken);
    /// assert_eq!((*world.get::<u32>(back).unwrap(), *world.get::<char>(back).unwrap()), (5, 'x'));
    /// ```
    pub fn take(&mut self, entity: Entity) -> Result<TakenEntity, NoSuchEntity> {
        // A reserved entity becomes real first, as `despawn` would make it.
        self.flush();
        let row = self.row_of(entity)?;
        let mut components = EntityBuilder::new();
        for (column, meta) in self.columns.iter_mut().zip(&self.metas) {
            if !column.storage.contains(entity, row) {
                continue;
            }
            let storage = &mut column.storage;
            let take = |dst: *mut u8| {
                // `dst` is the room `push_taken` made from `meta`, which
                // describes the column's type (invariant of `metas`).
                // SAFETY: so it is aligned and large enough for the value.
                unsafe { storage.take_raw(entity, row, dst) }
            };
            // `take` writes a value of `meta`'s type (or nothing, saying so),
            // which the builder owns from then on.
            // SAFETY: `meta` describes the column's type.
            unsafe { components.push_taken(meta, take) };
        }
        // Nothing is left on the entity, so no `Drop` runs here.
        self.despawn(entity)?;
        Ok(TakenEntity { components })
    }
}
