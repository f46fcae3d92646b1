//! Error types.

use std::fmt;

/// The entity is not alive in this world: despawned, never spawned here, or
/// forged.
///
/// ```
/// use handlekit_ecs::{NoSuchEntity, World};
/// let mut world = World::new();
/// let e = world.spawn((1u8,));
/// world.despawn(e).unwrap();
/// assert_eq!(world.despawn(e), Err(NoSuchEntity));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NoSuchEntity;

impl fmt::Display for NoSuchEntity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("no such entity")
    }
}

impl std::error::Error for NoSuchEntity {}

/// Why a component could not be read or removed.
///
/// ```
/// use handlekit_ecs::{ComponentError, World};
/// let mut world = World::new();
/// let e = world.spawn((1u8,));
/// assert!(matches!(world.get::<u16>(e), Err(ComponentError::MissingComponent(_))));
/// world.despawn(e).unwrap();
/// assert_eq!(world.get::<u8>(e).err(), Some(ComponentError::NoSuchEntity));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComponentError {
    /// The entity is not alive.
    NoSuchEntity,
    /// The entity lacks the component (the name of its type).
    MissingComponent(&'static str),
}

impl fmt::Display for ComponentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComponentError::NoSuchEntity => f.write_str("no such entity"),
            ComponentError::MissingComponent(name) => {
                write!(f, "the entity has no {name} component")
            }
        }
    }
}

impl std::error::Error for ComponentError {}

impl From<NoSuchEntity> for ComponentError {
    fn from(NoSuchEntity: NoSuchEntity) -> Self {
        ComponentError::NoSuchEntity
    }
}

/// A spawn that did not fit.
///
/// ```
/// use handlekit_ecs::{SpawnError, World};
/// let mut world = World::with_max_rows(2);
/// world.spawn((1u8,));
/// world.spawn((2u8,));
/// assert_eq!(world.try_spawn((3u8,)), Err(SpawnError::RowsFull { max_rows: 2 }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SpawnError {
    /// The row window holds the world's maximum row count. Dead rows count
    /// until [`World::collect`](crate::World::collect) or
    /// [`World::compact`](crate::World::compact) gives them back.
    RowsFull {
        /// The maximum row count the world was made with.
        max_rows: usize,
    },
    /// The entity table has no index left: every index it reserves (one
    /// per row, an eighth more and 1024) is live or retired (an index
    /// retires after 2³¹ − 1 reuses).
    EntitiesFull,
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::RowsFull { max_rows } => write!(
                f,
                "the world's {max_rows} rows are in use (dead rows count until collected)"
            ),
            SpawnError::EntitiesFull => f.write_str("no entity index left"),
        }
    }
}

impl std::error::Error for SpawnError {}
