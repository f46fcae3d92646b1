//! Deferred changes: record during iteration, apply afterwards.

use std::fmt;

use crate::bundle::Bundle;
use crate::world::{Component, World};
use crate::Entity;

/// One recorded change.
type Command = Box<dyn FnOnce(&mut World) + Send + Sync>;

/// Spawns, despawns, insertions and removals recorded while a world is
/// borrowed (during a query, say) and applied to it afterwards with
/// [`run_on`](Self::run_on), in the order they were recorded.
///
/// Each command is a boxed closure (one allocation per command). Commands on
/// an entity that is no longer alive when they run do nothing; removals of
/// components the entity lacks do nothing.
///
/// ```
/// use handlekit_ecs::{CommandBuffer, Entity, World};
///
/// struct Health(i32);
/// struct Dead;
///
/// let mut world = World::new();
/// let a = world.spawn((Health(0),));
/// let b = world.spawn((Health(5),));
///
/// let mut commands = CommandBuffer::new();
/// for (e, h) in world.query::<(Entity, &Health)>().iter() {
///     if h.0 <= 0 {
///         commands.insert_one(e, Dead);
///         commands.spawn((Health(10),)); // a replacement
///     }
/// }
/// assert_eq!(commands.len(), 2);
/// commands.run_on(&mut world);
/// assert!(commands.is_empty());
/// assert!(world.has::<Dead>(a) && !world.has::<Dead>(b));
/// assert_eq!(world.len(), 3);
/// ```
#[derive(Default)]
pub struct CommandBuffer {
    commands: Vec<Command>,
}

impl fmt::Debug for CommandBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandBuffer")
            .field("len", &self.commands.len())
            .finish()
    }
}

impl CommandBuffer {
    /// An empty buffer.
    ///
    /// ```
    /// assert!(handlekit_ecs::CommandBuffer::new().is_empty());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        CommandBuffer::default()
    }

    /// The number of recorded commands.
    ///
    /// ```
    /// let mut commands = handlekit_ecs::CommandBuffer::new();
    /// commands.spawn((1u8,));
    /// assert_eq!(commands.len(), 1);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether no command is recorded.
    ///
    /// ```
    /// assert!(handlekit_ecs::CommandBuffer::new().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// Records a spawn (see [`World::spawn`], which panics when the rows
    /// are full; so does [`run_on`](Self::run_on) then).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let mut commands = handlekit_ecs::CommandBuffer::new();
    /// commands.spawn((1u8, 'x'));
    /// commands.run_on(&mut world);
    /// assert_eq!(world.len(), 1);
    /// ```
    pub fn spawn(&mut self, bundle: impl Bundle) {
        self.commands.push(Box::new(move |world: &mut World| {
            world.spawn(bundle);
        }));
    }

    /// Records a despawn.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8,));
    /// let mut commands = handlekit_ecs::CommandBuffer::new();
    /// commands.despawn(e);
    /// commands.despawn(e); // the second does nothing
    /// commands.run_on(&mut world);
    /// assert!(!world.contains(e));
    /// ```
    pub fn despawn(&mut self, entity: Entity) {
        self.commands.push(Box::new(move |world: &mut World| {
            // A dead entity: nothing to do.
            let _ = world.despawn(entity);
        }));
    }

    /// Records an insertion of a bundle (see [`World::insert`]). On an
    /// entity from [`World::reserve_entity`] it spawns that entity with the
    /// bundle when the buffer runs: that is how a command names an entity
    /// that does not exist yet, and how later commands refer to it.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn(());
    /// let mut commands = handlekit_ecs::CommandBuffer::new();
    /// commands.insert(e, (1u8, 2u16));
    /// commands.run_on(&mut world);
    /// assert_eq!(*world.get::<u16>(e).unwrap(), 2);
    /// ```
    ///
    /// A deferred spawn that later commands name:
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let mut commands = handlekit_ecs::CommandBuffer::new();
    /// let child = world.reserve_entity();
    /// commands.insert(child, (1u8,));
    /// commands.insert_one(child, 'c');
    /// commands.run_on(&mut world);
    /// assert_eq!(*world.get::<char>(child).unwrap(), 'c');
    /// ```
    pub fn insert(&mut self, entity: Entity, bundle: impl Bundle) {
        self.commands.push(Box::new(move |world: &mut World| {
            let _ = world.insert(entity, bundle);
        }));
    }

    /// Records an insertion of one component (see [`World::insert_one`]).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn(());
    /// let mut commands = handlekit_ecs::CommandBuffer::new();
    /// commands.insert_one(e, 5u32);
    /// commands.run_on(&mut world);
    /// assert_eq!(*world.get::<u32>(e).unwrap(), 5);
    /// ```
    pub fn insert_one<T: Component>(&mut self, entity: Entity, component: T) {
        self.commands.push(Box::new(move |world: &mut World| {
            let _ = world.insert_one(entity, component);
        }));
    }

    /// Records a removal of the components of bundle type `B` (dropped when
    /// the command runs; nothing is removed unless the entity has them all,
    /// as in [`World::remove`]).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8, 2u16));
    /// let mut commands = handlekit_ecs::CommandBuffer::new();
    /// commands.remove::<(u8, u16)>(e);
    /// commands.run_on(&mut world);
    /// assert!(!world.has::<u8>(e) && !world.has::<u16>(e));
    /// ```
    pub fn remove<B: Bundle>(&mut self, entity: Entity) {
        self.commands.push(Box::new(move |world: &mut World| {
            let _ = world.remove::<B>(entity);
        }));
    }

    /// Records a removal of one component (dropped when the command runs).
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let e = world.spawn((1u8,));
    /// let mut commands = handlekit_ecs::CommandBuffer::new();
    /// commands.remove_one::<u8>(e);
    /// commands.run_on(&mut world);
    /// assert!(!world.has::<u8>(e));
    /// ```
    pub fn remove_one<T: Component>(&mut self, entity: Entity) {
        self.commands.push(Box::new(move |world: &mut World| {
            let _ = world.remove_one::<T>(entity);
        }));
    }

    /// Applies the recorded commands to `world` in order, and empties the
    /// buffer. If a command panics, the commands after it are dropped
    /// unapplied and the buffer is left empty.
    ///
    /// ```
    /// let mut world = handlekit_ecs::World::new();
    /// let mut commands = handlekit_ecs::CommandBuffer::new();
    /// commands.spawn((1u8,));
    /// commands.run_on(&mut world);
    /// commands.run_on(&mut world); // empty now: nothing happens
    /// assert_eq!(world.len(), 1);
    /// ```
    pub fn run_on(&mut self, world: &mut World) {
        for command in std::mem::take(&mut self.commands) {
            command(world);
        }
    }

    /// Drops every recorded command unapplied.
    ///
    /// ```
    /// let mut commands = handlekit_ecs::CommandBuffer::new();
    /// commands.spawn((1u8,));
    /// commands.clear();
    /// assert!(commands.is_empty());
    /// ```
    pub fn clear(&mut self) {
        self.commands.clear();
    }
}
