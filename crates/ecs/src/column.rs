//! [`ColumnMut`]: one component type's storage held across a loop of
//! inserts, removals and lookups by entity; [`Column`]: a shared borrow of
//! one, with its values as slices ([`Column::runs`]).

use std::any::type_name;

use crate::entities::EntityTable;
use crate::storage::{ColumnRuns, TypedStorage};
use crate::world::{full_row, Component};
use crate::{ComponentError, Entity, NoSuchEntity, World};

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

/// A shared borrow of one component type's storage, from [`World::column`]:
/// lookups by entity, and the values as slices ([`runs`](Self::runs)), for
/// example to upload them to a GPU. The column stays borrowed (shared) until
/// the guard is dropped, as under a [`World::query`] of `&T`.
///
/// ```
/// use handlekit_ecs::World;
///
/// let mut world = World::new();
/// let e = world.spawn((1.5f32,));
/// let column = world.column::<f32>();
/// assert_eq!(column.get(e), Some(&1.5));
/// assert_eq!(column.len(), 1);
/// ```
pub struct Column<'w, T> {
    world: &'w World,
    /// The column's index in the world and its storage, or `None` if the
    /// world has none for `T`. Invariant: while this guard lives, the
    /// column's borrow flag is held shared by it.
    storage: Option<(usize, &'w TypedStorage<T>)>,
}

impl World {
    /// `T`'s storage (registered dense if it has none), held across a loop
    /// of inserts, removals and lookups by entity: the fastest way to add or
    /// remove one component type on many entities, as the type is resolved
    /// once. See [`ColumnMut`].
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let es = world.spawn_batch((0..10u32).map(|i| (i,)));
    /// let mut flags = world.column_mut::<bool>();
    /// for &e in &es {
    ///     flags.insert(e, true).unwrap();
    /// }
    /// for &e in &es[..5] {
    ///     assert_eq!(flags.remove(e), Ok(true));
    /// }
    /// assert_eq!(world.count::<bool>(), 5);
    /// ```
    #[inline]
    pub fn column_mut<T: Component>(&mut self) -> ColumnMut<'_, T> {
        self.flush();
        let front = self.rows.front_position();
        let (entities, storage) = self.entities_and_storage_mut::<T>();
        ColumnMut::new(entities, front, storage)
    }

    /// A shared borrow of `T`'s storage: see [`Column`]. A type with no
    /// column gives an empty one (nothing is registered).
    ///
    /// # Panics
    ///
    /// If the column is borrowed mutably (by a query of `&mut T` on another
    /// thread, say); the message names the type.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn_batch((0..3u32).map(|i| (i,)));
    /// let column = world.column::<u32>();
    /// let values: Vec<u32> = column.runs().flat_map(|(_, v)| v).copied().collect();
    /// assert_eq!(values, [0, 1, 2]);
    /// assert!(world.column::<u8>().is_empty());
    /// ```
    #[track_caller]
    #[must_use]
    pub fn column<T: Component>(&self) -> Column<'_, T> {
        let storage = self.column_index::<T>().map(|index| {
            let column = &self.columns[index];
            if !column.flag.try_shared() {
                crate::access::borrow_conflict(column.name, false);
            }
            let (_, storage) = self
                .typed::<T>()
                .unwrap_or_else(|| unreachable!("the column of a registered type"));
            (index, storage)
        });
        Column {
            world: self,
            storage,
        }
    }
}

impl<'w, T: Component> Column<'w, T> {
    /// `entity`'s component, if it is alive and has one.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((7u8,));
    /// let f = world.spawn(());
    /// let column = world.column::<u8>();
    /// assert_eq!((column.get(e), column.get(f)), (Some(&7), None));
    /// ```
    #[must_use]
    pub fn get(&self, entity: Entity) -> Option<&T> {
        let (_, storage) = self.storage?;
        let row = full_row(
            self.world.rows.front_position(),
            self.world.entities.get(entity)?,
        );
        storage.get(entity, row)
    }

    /// Whether `entity` is alive and has the component.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((7u8,));
    /// assert!(world.column::<u8>().contains(e));
    /// ```
    #[must_use]
    pub fn contains(&self, entity: Entity) -> bool {
        self.get(entity).is_some()
    }

    /// How many entities have the component.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// world.spawn_batch((0..4u8).map(|i| (i,)));
    /// assert_eq!(world.column::<u8>().len(), 4);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.storage
            .map_or(0, |(_, storage)| crate::storage::AnyStorage::len(storage))
    }

    /// Whether no entity has the component.
    ///
    /// ```
    /// assert!(handlekit_ecs::World::new().column::<u8>().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The components with their entities, as runs of slices in row order
    /// (the order of queries): each run is the entities of consecutive live
    /// rows that have the component and their values, two slices of one
    /// length. A dense column gives runs as long as the rows allow, ready
    /// to copy in one go (to a GPU buffer, say); a sparse set gives one run
    /// per entity. See [`ColumnRuns`].
    ///
    /// ```
    /// use handlekit_ecs::World;
    ///
    /// #[derive(Clone, Copy, Debug, PartialEq)]
    /// struct Pos([f32; 2]);
    ///
    /// let mut world = World::new();
    /// let es = world.spawn_batch((0..100).map(|i| (Pos([i as f32, 0.0]),)));
    /// world.despawn(es[10]).unwrap();
    /// let column = world.column::<Pos>();
    /// let mut upload: Vec<Pos> = Vec::new();
    /// for (entities, values) in column.runs() {
    ///     assert_eq!(entities.len(), values.len());
    ///     upload.extend_from_slice(values);
    /// }
    /// assert_eq!(column.runs().count(), 2);
    /// assert_eq!(upload.len(), 99);
    /// ```
    pub fn runs(&self) -> ColumnRuns<'_, T> {
        let world = self.world;
        let view = self
            .storage
            .map(|(_, storage)| storage.view(world.rows_view(), world.len()));
        // The view and the window come from `world`, which `self` borrows
        // shared (unchanged) for the iterator's life.
        // SAFETY: and `self` holds the column's flag shared (`storage`).
        unsafe {
            ColumnRuns::new(
                view,
                world.rows_view(),
                world.alive.as_slice(),
                world.alive.front_position(),
            )
        }
    }
}

impl<T> Drop for Column<'_, T> {
    fn drop(&mut self) {
        if let Some((index, _)) = self.storage {
            self.world.columns[index].flag.release_shared();
        }
    }
}

impl<T> std::fmt::Debug for Column<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Column")
            .field("type", &type_name::<T>())
            .finish_non_exhaustive()
    }
}
