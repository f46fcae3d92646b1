//! [`ColumnMut`]: one component type's storage held across a loop of
//! inserts, removals and lookups by entity.

use std::any::type_name;

use crate::entities::EntityTable;
use crate::storage::TypedStorage;
use crate::world::{full_row, Component};
use crate::{ComponentError, Entity, NoSuchEntity};

/// One component type's storage, borrowed from an exclusively borrowed
/// world (from [`World::column_mut`](crate::World::column_mut)) so that a
/// loop adding, removing or reading that component on many entities
/// resolves the type once, not per call (as shipyard's `ViewMut` or bevy's
/// `Query` held across a loop). Each call costs the entity-table lookup and
/// the slot and bit (dense) or the sparse-set operation; no entity moves.
///
/// ```
/// use handlekit_ecs::World;
/// #[derive(Debug, PartialEq)]
/// struct Health(u32);
///
/// let mut world = World::new();
/// let es = world.spawn_batch((0..100u32).map(|i| (i,)));
/// let mut health = world.column_mut::<Health>();
/// for &e in &es {
///     health.insert(e, Health(10)).unwrap();
/// }
/// assert_eq!(health.len(), 100);
/// assert_eq!(health.remove(es[3]), Ok(Health(10)));
/// assert!(health.remove(es[3]).is_err());
/// drop(health);
/// assert!(!world.has::<Health>(es[3]) && world.has::<Health>(es[4]));
/// ```
pub struct ColumnMut<'w, T> {
    /// The world's entity table (entity → low 32 bits of its row).
    entities: &'w EntityTable,
    /// The world's front row, which restores a row from its low bits.
    front: usize,
    /// `T`'s storage.
    storage: &'w mut TypedStorage<T>,
}

impl<'w, T: Component> ColumnMut<'w, T> {
    pub(crate) fn new(
        entities: &'w EntityTable,
        front: usize,
        storage: &'w mut TypedStorage<T>,
    ) -> Self {
        ColumnMut {
            entities,
            front,
            storage,
        }
    }

    /// The row of a live entity.
    #[inline]
    fn row_of(&self, entity: Entity) -> Result<usize, NoSuchEntity> {
        let low = self.entities.get(entity).ok_or(NoSuchEntity)?;
        Ok(full_row(self.front, low))
    }

    /// Puts `value` on `entity` and returns the value it replaces, as
    /// [`World::insert_one`](crate::World::insert_one) (which drops it).
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if the entity is not alive (the value is dropped).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn(());
    /// let mut column = world.column_mut::<u8>();
    /// assert_eq!(column.insert(e, 1), Ok(None));
    /// assert_eq!(column.insert(e, 2), Ok(Some(1)));
    /// ```
    #[inline]
    pub fn insert(&mut self, entity: Entity, value: T) -> Result<Option<T>, NoSuchEntity> {
        let row = self.row_of(entity)?;
        Ok(self.storage.insert(entity, row, value))
    }

    /// Takes `T` off `entity`, as [`World::remove_one`](crate::World::remove_one).
    ///
    /// # Errors
    ///
    /// [`ComponentError::NoSuchEntity`], or
    /// [`ComponentError::MissingComponent`] if the entity has no `T`.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((5u8,));
    /// let mut column = world.column_mut::<u8>();
    /// assert_eq!(column.remove(e), Ok(5));
    /// assert!(column.remove(e).is_err());
    /// ```
    #[inline]
    pub fn remove(&mut self, entity: Entity) -> Result<T, ComponentError> {
        let row = self.row_of(entity)?;
        self.storage
            .remove(entity, row)
            .ok_or(ComponentError::MissingComponent(type_name::<T>()))
    }

    /// The `T` of `entity`, if it is alive and has one.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((5u8,));
    /// assert_eq!(world.column_mut::<u8>().get(e), Some(&5));
    /// ```
    #[inline]
    #[must_use]
    pub fn get(&self, entity: Entity) -> Option<&T> {
        let row = self.row_of(entity).ok()?;
        self.storage.get(entity, row)
    }

    /// The `T` of `entity`, mutably, if it is alive and has one.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((5u8,));
    /// *world.column_mut::<u8>().get_mut(e).unwrap() += 1;
    /// assert_eq!(*world.get::<u8>(e).unwrap(), 6);
    /// ```
    #[inline]
    pub fn get_mut(&mut self, entity: Entity) -> Option<&mut T> {
        let row = self.row_of(entity).ok()?;
        self.storage.get_mut(entity, row)
    }

    /// Whether `entity` is alive and has a `T`.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((5u8,));
    /// assert!(world.column_mut::<u8>().contains(e));
    /// ```
    #[inline]
    #[must_use]
    pub fn contains(&self, entity: Entity) -> bool {
        self.get(entity).is_some()
    }

    /// The number of live entities with a `T`.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn((5u8,));
    /// assert_eq!(world.column_mut::<u8>().len(), 1);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        crate::storage::AnyStorage::len(&*self.storage)
    }

    /// Whether no entity has a `T`.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// assert!(world.column_mut::<u8>().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> std::fmt::Debug for ColumnMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ColumnMut")
            .field("type", &type_name::<T>())
            .finish_non_exhaustive()
    }
}
