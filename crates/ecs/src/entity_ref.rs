//! One entity of a shared world, whatever its components: [`EntityRef`]
//! (from [`World::entity`] and [`World::iter`]), and the guard of a
//! component borrowed mutably through it, [`RefMut`].

use crate::access::HeldBorrow;
use crate::query::{Query, QueryIter};
use crate::world::{Component, Ref, World};
use crate::{Entity, NoSuchEntity};

/// A live entity of a shared world, through which any of its components can
/// be borrowed. From [`World::entity`] and [`World::iter`]. Borrows no
/// column itself: each [`get`](Self::get) takes its column's run-time
/// borrow, held by the guard it returns.
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// let e = world.spawn((1u32, 'a'));
/// let entity = world.entity(e).unwrap();
/// assert_eq!(entity.entity(), e);
/// assert!(entity.has::<u32>() && !entity.has::<u8>());
/// *entity.get::<&mut u32>().unwrap() += 1;
/// assert_eq!(*entity.get::<&u32>().unwrap(), 2);
/// assert!(entity.get::<&u8>().is_none());
/// ```
#[derive(Clone, Copy)]
pub struct EntityRef<'w> {
    world: &'w World,
    entity: Entity,
    /// The entity's row. Invariant: `world.row_of(entity) == Ok(row)`; it
    /// stays so for `'w`, as rows change only under `&mut World`.
    row: usize,
}

impl std::fmt::Debug for EntityRef<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("EntityRef").field(&self.entity).finish()
    }
}

impl<'w> EntityRef<'w> {
    /// The entity.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn(());
    /// assert_eq!(world.entity(e).unwrap().entity(), e);
    /// ```
    #[must_use]
    pub fn entity(&self) -> Entity {
        self.entity
    }

    /// Whether the entity has a `T`. Takes no borrow.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8,));
    /// let entity = world.entity(e).unwrap();
    /// assert!(entity.has::<u8>() && !entity.has::<u16>());
    /// ```
    #[must_use]
    pub fn has<T: Component>(&self) -> bool {
        self.world
            .typed::<T>()
            .is_some_and(|(_, storage)| storage.has(self.entity, self.row))
    }

    /// Whether the entity matches the query `Q` (has every component it
    /// requires, none it excludes). Takes no borrow and makes no item.
    ///
    /// ```
    /// use handlekit_ecs::Without;
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8,));
    /// let entity = world.entity(e).unwrap();
    /// assert!(entity.satisfies::<(&mut u8, Without<u16>)>());
    /// assert!(!entity.satisfies::<&u16>());
    /// ```
    #[must_use]
    pub fn satisfies<Q: Query>(&self) -> bool {
        let Some(fetch) = Q::fetch(self.world) else {
            return false;
        };
        // `mask` reads presence bits only: no component is read, so no
        // column borrow is needed.
        // SAFETY: `fetch` came from the world, borrowed shared and unchanged
        // for this call; the row is alive (the invariant of `row`).
        unsafe {
            Q::mask(
                &fetch,
                self.row / crate::storage::WORD,
                crate::storage::bit(self.row),
            ) != 0
        }
    }

    /// The entity's `T`, borrowed as `T` says: `get::<&C>()` returns a
    /// [`Ref<C>`](Ref) (a shared borrow of `C`'s column), `get::<&mut
    /// C>()` a [`RefMut<C>`](RefMut) (its exclusive borrow), each held
    /// until the guard is dropped; `None` if the entity has no `C`.
    ///
    /// This is hecs's shape. [`World::get`] differs: it names the
    /// component type itself (`world.get::<C>(e)`), and
    /// [`World::get_mut`] takes `&mut World` and returns a plain `&mut C`.
    ///
    /// # Panics
    ///
    /// If the column is already borrowed incompatibly (by a query or
    /// another guard); the message names the type.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((String::from("a"),));
    /// let entity = world.entity(e).unwrap();
    /// entity.get::<&mut String>().unwrap().push('b');
    /// assert_eq!(&*entity.get::<&String>().unwrap(), "ab");
    /// ```
    #[must_use]
    #[track_caller]
    pub fn get<T: ComponentRef<'w>>(&self) -> Option<T::Ref> {
        T::get_from(*self)
    }
}

mod sealed {
    /// Keeps [`ComponentRef`](super::ComponentRef) to this crate's impls.
    pub trait Sealed {}
    impl<T> Sealed for &T {}
    impl<T> Sealed for &mut T {}
}

/// `&T` or `&mut T`: how [`EntityRef::get`] borrows a component. Sealed;
/// its method is not part of the public API.
///
/// ```
/// fn first<'w, T: handlekit_ecs::ComponentRef<'w>>(e: handlekit_ecs::EntityRef<'w>) -> Option<T::Ref> {
///     e.get::<T>()
/// }
/// let mut world = handlekit_ecs::World::new();
/// let e = world.spawn((1u8,));
/// assert_eq!(*first::<&u8>(world.entity(e).unwrap()).unwrap(), 1);
/// ```
pub trait ComponentRef<'w>: sealed::Sealed {
    /// The guard: [`Ref`] or [`RefMut`].
    type Ref;
    /// The component type.
    type Component: Component;
    /// Borrows the entity's component. Not part of the public API.
    #[doc(hidden)]
    fn get_from(entity: EntityRef<'w>) -> Option<Self::Ref>;
}

impl<'w, T: Component> ComponentRef<'w> for &'w T {
    type Ref = Ref<'w, T>;
    type Component = T;
    #[track_caller]
    fn get_from(entity: EntityRef<'w>) -> Option<Ref<'w, T>> {
        let (held, storage) = entity.world.held::<T, false>()?;
        let value = storage.get(entity.entity, entity.row)?;
        Some(Ref { value, held })
    }
}

impl<'w, T: Component> ComponentRef<'w> for &'w mut T {
    type Ref = RefMut<'w, T>;
    type Component = T;
    #[track_caller]
    fn get_from(entity: EntityRef<'w>) -> Option<RefMut<'w, T>> {
        // The column's exclusive borrow is held by the guard as long as the
        // item lives: no other reference to the value.
        let (held, _) = entity.world.held::<T, true>()?;
        let fetch = <&mut T as Query>::fetch(entity.world)?;
        // SAFETY: `fetch` came from the world, borrowed for 'w; the row is
        // alive (the invariant of `row`).
        let value = unsafe { <&mut T as Query>::get_one(&fetch, entity.row) }?;
        Some(RefMut { value, held })
    }
}

/// An exclusive borrow of one component, from [`EntityRef::get`] with
/// `&mut T`: the column stays borrowed exclusively until the guard is
/// dropped.
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// let e = world.spawn((1u32,));
/// let mut x = world.entity(e).unwrap().get::<&mut u32>().unwrap();
/// *x += 1;
/// drop(x);
/// assert_eq!(*world.get::<u32>(e).unwrap(), 2);
/// ```
pub struct RefMut<'w, T: ?Sized> {
    /// The value, under `held`: the exclusive borrow of its column.
    value: &'w mut T,
    held: HeldBorrow<'w, true>,
}

impl<'w, T: ?Sized> RefMut<'w, T> {
    /// A guard of a part of the value (a field, an element), holding the
    /// same borrow. An associated function, as `std::cell::RefMut::map`.
    ///
    /// ```
    /// use handlekit_ecs::RefMut;
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn(([1u8, 2, 3],));
    /// let entity = world.entity(e).unwrap();
    /// let mut last = RefMut::map(entity.get::<&mut [u8; 3]>().unwrap(), |a| &mut a[2]);
    /// *last = 9;
    /// drop(last);
    /// assert_eq!(*world.get::<[u8; 3]>(e).unwrap(), [1, 2, 9]);
    /// ```
    pub fn map<U: ?Sized>(orig: RefMut<'w, T>, f: impl FnOnce(&mut T) -> &mut U) -> RefMut<'w, U> {
        // The borrow passes to the new guard, or is given back if `f`
        // panics.
        let RefMut { value, held } = orig;
        RefMut {
            value: f(value),
            held,
        }
    }
}

impl<T: ?Sized> std::ops::Deref for RefMut<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value
    }
}

impl<T: ?Sized> std::ops::DerefMut for RefMut<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.value
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for RefMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (*self.value).fmt(f)
    }
}

/// The live entities of a world, in row order, as [`EntityRef`]s. From
/// [`World::iter`].
///
/// ```
/// let mut world = handlekit_ecs::World::new();
/// world.spawn((1u8,));
/// let it: handlekit_ecs::Iter<'_> = world.iter();
/// assert_eq!(it.len(), 1);
/// ```
pub struct Iter<'w> {
    world: &'w World,
    entities: QueryIter<'w, Entity>,
    /// The live entities not yet yielded.
    left: usize,
}

impl<'w> Iterator for Iter<'w> {
    type Item = EntityRef<'w>;

    #[inline]
    fn next(&mut self) -> Option<EntityRef<'w>> {
        let entity = self.entities.next()?;
        self.left -= 1;
        let row = self
            .world
            .row_of(entity)
            .expect("handlekit-ecs: a live row's entity is alive");
        Some(EntityRef {
            world: self.world,
            entity,
            row,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Iter<'_> {}
impl std::iter::FusedIterator for Iter<'_> {}

impl std::fmt::Debug for Iter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Iter").field("left", &self.left).finish()
    }
}

impl World {
    /// The live `entity`, through which any of its components can be
    /// borrowed (see [`EntityRef`]). Borrows nothing yet.
    ///
    /// # Errors
    ///
    /// [`NoSuchEntity`] if the entity is not alive, or reserved and not yet
    /// [flushed](World::flush).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8,));
    /// assert!(world.entity(e).unwrap().has::<u8>());
    /// world.despawn(e).unwrap();
    /// assert!(world.entity(e).is_err());
    /// ```
    pub fn entity(&self, entity: Entity) -> Result<EntityRef<'_>, NoSuchEntity> {
        let row = self.row_of(entity)?;
        Ok(EntityRef {
            world: self,
            entity,
            row,
        })
    }

    /// Every live entity, in row order (creation order until
    /// [`collect`](World::collect) moves rows), as an [`EntityRef`].
    /// Entities reserved and not yet [flushed](World::flush) are not
    /// included. Prefer a [`query`](World::query) to read components of
    /// many entities.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let a = world.spawn((1u8,));
    /// let b = world.spawn(());
    /// let all: Vec<_> = world.iter().map(|e| (e.entity(), e.has::<u8>())).collect();
    /// assert_eq!(all, [(a, true), (b, false)]);
    /// ```
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            world: self,
            entities: crate::query::entities(self),
            left: self.len(),
        }
    }
}

impl<'w> IntoIterator for &'w World {
    type Item = EntityRef<'w>;
    type IntoIter = Iter<'w>;
    fn into_iter(self) -> Iter<'w> {
        self.iter()
    }
}
