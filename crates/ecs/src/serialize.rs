//! Saving and loading a whole [`World`] (feature `serde`).
//!
//! Components are stored by type, and a world does not know how to
//! serialize a type or what to call it in a file: a [`Registry`], built once,
//! names each component type that is saved. [`Registry::save`] gives a
//! [`Serialize`] view of a world; [`Registry::load`] gives a
//! [`DeserializeSeed`] that builds a new world. Any serde format works
//! (binary ones such as postcard or bincode, text ones such as JSON or
//! RON).
//!
//! ```
//! use handlekit_ecs::serialize::Registry;
//! use handlekit_ecs::{Storage, World};
//! use serde::de::DeserializeSeed;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Position([f32; 3]);
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Burning;
//!
//! // Once, at start-up: the saved types and their stable names.
//! let registry = Registry::new()
//!     .component::<Position>("position")
//!     .component::<Burning>("burning");
//!
//! let mut world = World::new();
//! world.register::<Burning>(Storage::Sparse);
//! let a = world.spawn((Position([1.0, 2.0, 3.0]),));
//! let b = world.spawn((Position([0.0; 3]), Burning));
//! world.despawn(a).unwrap();
//!
//! let json = serde_json::to_string(&registry.save(&world)).unwrap();
//! let mut loaded: World = registry
//!     .load()
//!     .deserialize(&mut serde_json::Deserializer::from_str(&json))
//!     .unwrap();
//!
//! assert_eq!(*loaded.get::<Position>(b).unwrap(), Position([0.0; 3]));
//! assert!(loaded.has::<Burning>(b) && !loaded.contains(a));
//! assert_eq!(loaded.storage_of::<Burning>(), Some(Storage::Sparse));
//! // The loaded world hands out the ids the saved one would have.
//! assert_eq!(loaded.spawn(()), world.spawn(()));
//! ```
//!
//! # What is kept
//!
//! - **Entities**: every live entity with its id (index and generation), and
//!   the whole entity table: the generations of free and retired indices.
//!   A world reuses the lowest free index first, so the generations settle
//!   which entities the next spawns get: those the saved world's would have
//!   (hecs#332 asks for this).
//! - **Components** of the registered types, and each type's storage
//!   ([`Storage::Dense`] or [`Storage::Sparse`]).
//! - **Row order**: the live entities keep their relative order (so queries
//!   visit them in the same order). Dead rows are not saved: the loaded
//!   world is compact, with its rows from 0.
//!
//! Not kept: the maximum row count (the loader chooses it with
//! [`Load::max_rows`]; it is a property of the reservation, not of the
//! contents), and components of types the registry does not name. Saving a
//! world that holds components of an unregistered type fails, unless the
//! type is [`skip`](Registry::skip)ped.
//!
//! # Format
//!
//! A world serializes as a struct `World` with two fields:
//!
//! - `entities`: the entity table, a struct `Entities` with
//!   - `slots`: the generation of every index (a free index's last one),
//!     as `(generation, count)` runs of equal generations;
//!   - `rows`: the index of each saved row's entity, in row order, as
//!     `(first index, count)` runs of consecutive indices. The entity of a
//!     row is that index at its slot's generation; the indices not named
//!     are the free ones.
//!
//!   A world whose indices were never reused and whose rows are in index
//!   order (one that only spawned) writes a run or two whatever its size.
//! - `components`: a map from each registered name to the component's
//!   storage, an enum `Dense` or `Sparse` whose content is a struct with
//!   `runs`, the rows that have the component as `(first row, count)`
//!   pairs in ascending order, and `values`, the components of those rows
//!   in order.
//!
//! In JSON a world of one entity with a position reads:
//!
//! ```text
//! {"entities":{"slots":[[1,1]],"rows":[[0,1]]},
//!  "components":{"position":{"Dense":{"runs":[[0,1]],"values":[[1.0,2.0,3.0]]}}}}
//! ```
//!
//! # Untrusted data
//!
//! Loading checks everything and returns the format's error for data a
//! world cannot have, never panics or builds an inconsistent world: a
//! truncated input; a generation of 0 or above 2³¹ − 1; an empty run, an
//! entity in two rows, an index past the slots; more entities than the
//! maximum row count; a component name the registry does not know, or one
//! given twice; runs out of order, overlapping (a component given twice)
//! or past the live rows (a component for a dead row); fewer or more
//! values than the runs name.
//!
//! Memory is bounded by the input, at default settings as well. A format
//! lets a few bytes name many entities (a run of a million indices is two
//! numbers), so the loader checks what the counts the data names would
//! build before it builds anything:
//!
//! - **The memory limit**: the entity table, rows and columns a load builds
//!   take at most [`Load::max_memory`] bytes, [`DEFAULT_MAX_MEMORY`]
//!   (512 KiB) unless the caller raises it. The loader estimates each part
//!   from its counts (an entity table from its indices and rows, a column
//!   from its runs) and refuses, with an error naming the limit, data whose
//!   world would take more. So at default settings one load allocates at
//!   most 64 times the input's size plus 1 MiB (the test
//!   `tests/load_memory.rs` checks it with a counting allocator, on saves
//!   crafted to amplify and on randomly damaged ones). A program that loads
//!   its own large worlds raises the limit, for example to 64 times the
//!   input's size.
//! - **Counts**: at most the maximum row count of entities, and at most as
//!   many slots as the entity table of a world of that many rows holds (an
//!   eighth more than the rows, and 1024: a world has no more slots than it
//!   had live entities at once, plus its retired indices, so only a world
//!   saved with a larger maximum can be refused for its slots).
//! - **Nothing is allocated from a length the input claims**: every array
//!   grows as its elements arrive. Runs of generations or rows are stored
//!   as read; the slots and rows they stand for are built only after the
//!   checks above.
//! - **Sparse sets** size their index to the values they hold, not to the
//!   largest entity index they hold: a sparse component of one entity at
//!   index 18 million takes a few bytes.
//!
//! Not counted: the heap the components' own values own (a `String`'s
//! bytes, a `Vec`'s elements), which the format reads from the input (and
//! which serde preallocates from a claimed length only up to 1 MiB), and,
//! on targets without virtual memory, the reservation of the world's
//! [maximum row count](Load::max_rows), which the heap fallback allocates
//! up front.

use std::any::{type_name, TypeId};
use std::fmt;
use std::marker::PhantomData;

// The entity table's `(generation, count)` runs, read back checked in
// themselves and stored as read.
use handlekit::lookup_table::Runs as GenerationRuns;
use handlekit::Key;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, MapAccess,
    SeqAccess, VariantAccess, Visitor,
};
use serde::ser::{self, SerializeMap, SerializeSeq, SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use crate::entities::EntityTable;
use crate::query::for_each_word;
use crate::storage::Storage;
use crate::storage::{BatchWriter, WORD};
use crate::world::{max_entity_slots, Component, World, DEFAULT_MAX_ROWS};
use crate::{Entity, With};

/// The component types a world is saved with, each under a stable name;
/// built once with [`Registry::new`] and [`component`](Registry::component).
/// See the [module docs](self) for an example and the format.
///
/// The type parameter lists the registered types (a chain of hidden
/// types); a function that builds a registry can return
/// `Registry<impl Components>`, and [`registry_type!`](crate::registry_type)
/// names the type (for a struct field).
///
/// ```
/// use handlekit_ecs::serialize::{Components, Registry};
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Health(u32);
///
/// fn registry() -> Registry<impl Components> {
///     Registry::new().component::<Health>("health")
/// }
/// assert_eq!(registry().names().collect::<Vec<_>>(), ["health"]);
/// ```
pub struct Registry<C = ()> {
    /// The typed chain that serializes and deserializes each type.
    components: C,
    /// Every registered type with its name, in registration order; names
    /// and types are distinct.
    names: Vec<(String, TypeId)>,
    /// Types whose components are not saved ([`skip`](Self::skip)).
    skipped: Vec<TypeId>,
}

impl Registry {
    /// A registry with no component type.
    ///
    /// ```
    /// let registry = handlekit_ecs::serialize::Registry::new();
    /// assert_eq!(registry.names().count(), 0);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Registry {
            components: (),
            names: Vec::new(),
            skipped: Vec::new(),
        }
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

impl<C> fmt::Debug for Registry<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("names", &self.names().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl<C> Registry<C> {
    /// The registered names, in registration order.
    ///
    /// ```
    /// let registry = handlekit_ecs::serialize::Registry::new().component::<u8>("byte");
    /// assert_eq!(registry.names().next(), Some("byte"));
    /// ```
    pub fn names(&self) -> impl Iterator<Item = &str> + '_ {
        self.names.iter().map(|(name, _)| name.as_str())
    }

    /// The registered type of `name`.
    fn type_of(&self, name: &str) -> Option<TypeId> {
        self.names.iter().find(|(n, _)| n == name).map(|&(_, t)| t)
    }

    /// The name of registered type `ty`.
    fn name_of(&self, ty: TypeId) -> Option<&str> {
        self.names
            .iter()
            .find(|&&(_, t)| t == ty)
            .map(|(name, _)| name.as_str())
    }
}

impl<C: Components> Registry<C> {
    /// Adds component type `T`, saved under `name`. The name is what the
    /// saved data calls the type: keep it stable across versions of the
    /// program (a renamed Rust type can keep its name).
    ///
    /// # Panics
    ///
    /// If `name` or `T` is registered already (or `T` is skipped).
    ///
    /// ```
    /// use handlekit_ecs::serialize::Registry;
    /// let registry = Registry::new().component::<u32>("score").component::<String>("name");
    /// assert_eq!(registry.names().collect::<Vec<_>>(), ["score", "name"]);
    /// ```
    #[must_use]
    #[track_caller]
    pub fn component<T>(mut self, name: impl Into<String>) -> Registry<(Entry<T>, C)>
    where
        T: Component + Serialize + DeserializeOwned,
    {
        let name = name.into();
        let ty = TypeId::of::<T>();
        if let Some((_, other)) = self.names.iter().find(|(n, _)| *n == name) {
            let what = if *other == ty {
                "this type"
            } else {
                "another type"
            };
            panic!("handlekit-ecs: the component name {name:?} is registered already (for {what})");
        }
        if self.names.iter().any(|&(_, t)| t == ty) || self.skipped.contains(&ty) {
            panic!(
                "handlekit-ecs: the component type {} is registered already",
                type_name::<T>()
            );
        }
        self.names.push((name, ty));
        Registry {
            components: (Entry(PhantomData), self.components),
            names: self.names,
            skipped: self.skipped,
        }
    }

    /// Leaves the components of type `T` out of saved worlds (caches,
    /// handles to resources of this run). Saving a world that holds
    /// components of a type that is neither registered nor skipped fails.
    ///
    /// # Panics
    ///
    /// If `T` is registered.
    ///
    /// ```
    /// use handlekit_ecs::{serialize::Registry, World};
    /// struct Cache; // say, a handle to this run's GPU buffers
    /// let mut world = World::new();
    /// world.spawn((1u32, Cache));
    /// let strict = Registry::new().component::<u32>("score");
    /// assert!(serde_json::to_string(&strict.save(&world)).is_err());
    /// let lenient = Registry::new().component::<u32>("score").skip::<Cache>();
    /// assert!(serde_json::to_string(&lenient.save(&world)).is_ok());
    /// ```
    #[must_use]
    #[track_caller]
    pub fn skip<T: Component>(mut self) -> Self {
        let ty = TypeId::of::<T>();
        assert!(
            !self.names.iter().any(|&(_, t)| t == ty),
            "handlekit-ecs: the component type {} is registered, it cannot be skipped",
            type_name::<T>()
        );
        if !self.skipped.contains(&ty) {
            self.skipped.push(ty);
        }
        self
    }

    /// A view of `world` that serializes it whole (see the [module
    /// docs](self) for the format).
    ///
    /// Serializing borrows each saved column shared, as
    /// [`World::query`] does, so it panics if a query on another thread
    /// holds one of them mutably. It fails (with the format's error) if the
    /// world holds components of a type that is neither registered nor
    /// [`skip`](Self::skip)ped.
    ///
    /// ```
    /// use handlekit_ecs::{serialize::Registry, World};
    /// let registry = Registry::new().component::<u32>("score");
    /// let mut world = World::new();
    /// world.spawn((7u32,));
    /// let json = serde_json::to_string(&registry.save(&world)).unwrap();
    /// assert!(json.contains(r#""score":{"Dense":{"runs":[[0,1]],"values":[7]}}"#));
    /// ```
    #[must_use]
    pub fn save<'a>(&'a self, world: &'a World) -> Save<'a, C> {
        Save {
            registry: self,
            world,
        }
    }

    /// A seed that deserializes a world saved with [`save`](Self::save)
    /// into a new [`World`] with [`DEFAULT_MAX_ROWS`] rows (see
    /// [`Load::max_rows`]). Use it with the format's deserializer:
    ///
    /// ```
    /// use handlekit_ecs::{serialize::Registry, World};
    /// use serde::de::DeserializeSeed;
    ///
    /// let registry = Registry::new().component::<u32>("score");
    /// let json = r#"{"entities":{"slots":[[1,1]],"rows":[[0,1]]},
    ///               "components":{"score":{"Dense":{"runs":[[0,1]],"values":[7]}}}}"#;
    /// let world: World = registry
    ///     .load()
    ///     .deserialize(&mut serde_json::Deserializer::from_str(json))
    ///     .unwrap();
    /// assert_eq!(world.query::<&u32>().iter().copied().collect::<Vec<_>>(), [7]);
    /// ```
    #[must_use]
    pub fn load(&self) -> Load<'_, C> {
        Load {
            registry: self,
            max_rows: DEFAULT_MAX_ROWS,
            max_memory: DEFAULT_MAX_MEMORY,
        }
    }
}

/// The type of the [`Registry`] that registers the listed component types
/// in this order (with [`Registry::component`]): a name for it, to keep a
/// registry in a struct field or a `static`-like place without spelling its
/// chain of hidden types. The registry costs what the one the builder
/// returns costs: it is the same type.
///
/// ```
/// use handlekit_ecs::serialize::Registry;
/// use handlekit_ecs::{registry_type, World};
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Health(u32);
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Name(String);
///
/// struct Game {
///     world: World,
///     registry: registry_type![Health, Name],
/// }
///
/// let game = Game {
///     world: World::new(),
///     registry: Registry::new()
///         .component::<Health>("health")
///         .component::<Name>("name"),
/// };
/// assert_eq!(game.registry.names().collect::<Vec<_>>(), ["health", "name"]);
/// assert!(serde_json::to_string(&game.registry.save(&game.world)).is_ok());
/// ```
#[macro_export]
macro_rules! registry_type {
    ($($component:ty),* $(,)?) => {
        $crate::__registry_chain!([$($component),*] ())
    };
}

/// Builds the chain of [`registry_type!`]. Not part of the public API.
#[doc(hidden)]
#[macro_export]
macro_rules! __registry_chain {
    ([] $chain:ty) => {
        $crate::serialize::Registry<$chain>
    };
    ([$first:ty $(, $rest:ty)*] $chain:ty) => {
        $crate::__registry_chain!([$($rest),*] ($crate::serialize::Entry<$first>, $chain))
    };
}

/// One registered component type `T` in a [`Registry`]'s chain. Not part of
/// the public API.
#[doc(hidden)]
pub struct Entry<T>(PhantomData<fn() -> T>);

mod sealed {
    pub trait Sealed {}
    impl Sealed for () {}
    impl<T, C> Sealed for (super::Entry<T>, C) {}
}

/// The chain of component types a [`Registry`] holds: `()` or
/// `(Entry<T>, rest)`, made by [`Registry::component`]. Sealed; its methods
/// are not part of the public API. Name it to return a registry:
/// `Registry<impl Components>`.
pub trait Components: sealed::Sealed {
    /// Calls `f` with the chain's type whose id is `ty`, or returns `None`
    /// if `ty` is not in the chain. Not part of the public API.
    #[doc(hidden)]
    fn with_type<F: TypeFn>(&self, ty: TypeId, f: F) -> Option<F::Output>;
}

impl Components for () {
    fn with_type<F: TypeFn>(&self, _: TypeId, _: F) -> Option<F::Output> {
        None
    }
}

impl<T, C> Components for (Entry<T>, C)
where
    T: Component + Serialize + DeserializeOwned,
    C: Components,
{
    fn with_type<F: TypeFn>(&self, ty: TypeId, f: F) -> Option<F::Output> {
        if ty == TypeId::of::<T>() {
            Some(f.call::<T>())
        } else {
            self.1.with_type(ty, f)
        }
    }
}

/// What is done with one registered component type, found by its id with
/// [`Components::with_type`]: saving its column, or loading it. Not part of
/// the public API.
#[doc(hidden)]
pub trait TypeFn {
    /// What the call returns.
    type Output;
    /// Does it for the type `T`.
    fn call<T: Component + Serialize + DeserializeOwned>(self) -> Self::Output;
}

/// Serializes the column of the type it is called with as the map entry
/// `name`.
struct SaveEntry<'a, M> {
    name: &'a str,
    world: &'a World,
    ranks: &'a Ranks<'a>,
    map: &'a mut M,
}

impl<M: SerializeMap> TypeFn for SaveEntry<'_, M> {
    type Output = Result<(), M::Error>;

    fn call<T: Component + Serialize + DeserializeOwned>(self) -> Self::Output {
        let column = ColumnRef::<T> {
            world: self.world,
            ranks: self.ranks,
            _type: PhantomData,
        };
        self.map.serialize_entry(self.name, &column)
    }
}

/// Deserializes the map value `name` as the column of the type it is
/// called with, into `world`.
struct LoadEntry<'a, 'de, A> {
    name: &'a str,
    map: &'a mut A,
    world: &'a mut World,
    budget: &'a Budget,
    _de: PhantomData<&'de ()>,
}

impl<'de, A: MapAccess<'de>> TypeFn for LoadEntry<'_, 'de, A> {
    type Output = Result<(), A::Error>;

    fn call<T: Component + Serialize + DeserializeOwned>(self) -> Self::Output {
        self.map.next_value_seed(ColumnSeed::<T> {
            name: self.name,
            world: self.world,
            budget: self.budget,
            _type: PhantomData,
        })
    }
}

/// The row each live row of a world gets in the saved world: its rank
/// among the live rows. Not part of the public API.
#[doc(hidden)]
pub struct Ranks<'a> {
    /// The world's front row.
    front: usize,
    /// The alive words, from the word of `front`.
    alive: &'a [u64],
    /// The word of `alive[0]`.
    first_word: usize,
    /// Live rows in the words before each word of `alive`, or `None` if the
    /// window has no dead row (the rank is then `row - front`).
    before: Option<Vec<u32>>,
}

impl<'a> Ranks<'a> {
    fn new(world: &'a World) -> Self {
        let alive = world.alive.as_slice();
        let before = (world.row_count() != world.len()).then(|| {
            let mut count = 0u32;
            alive
                .iter()
                .map(|word| {
                    let at = count;
                    count += word.count_ones();
                    at
                })
                .collect()
        });
        Ranks {
            front: world.rows.front_position(),
            alive,
            first_word: world.alive.front_position(),
            before,
        }
    }

    /// The saved row of the live `row`. Below 2³¹, as every row count.
    #[inline]
    fn rank(&self, row: usize) -> u32 {
        match &self.before {
            // Truncation cannot happen: the window holds at most 2^31 rows.
            None => (row - self.front) as u32,
            Some(before) => {
                let i = row / WORD - self.first_word;
                let below = self.alive[i] & (crate::storage::bit(row) - 1);
                before[i] + below.count_ones()
            }
        }
    }
}

/// A world, serialized whole with a [`Registry`]: from [`Registry::save`].
pub struct Save<'a, C> {
    registry: &'a Registry<C>,
    world: &'a World,
}

impl<C> fmt::Debug for Save<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Save")
            .field("registry", self.registry)
            .field("world", self.world)
            .finish()
    }
}

impl<C: Components> Serialize for Save<'_, C> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let world = self.world;
        // The saved columns, in the world's registration order.
        let mut saved = Vec::new();
        for (ty, type_name, _, stored) in world.column_types() {
            match self.registry.name_of(ty) {
                Some(name) => saved.push((ty, name)),
                None if stored == 0 || self.registry.skipped.contains(&ty) => {}
                None => {
                    return Err(ser::Error::custom(format_args!(
                        "the world holds components of type {type_name}, \
                         which the registry neither names nor skips"
                    )))
                }
            }
        }
        let ranks = Ranks::new(world);
        let mut out = serializer.serialize_struct("World", 2)?;
        out.serialize_field("entities", &EntitiesRef { world })?;
        out.serialize_field(
            "components",
            &ColumnsRef {
                registry: self.registry,
                world,
                ranks: &ranks,
                saved: &saved,
            },
        )?;
        out.end()
    }
}

/// The entity table: the generation of every index as runs, then the
/// index of each saved row's entity, as runs of consecutive indices.
struct EntitiesRef<'a> {
    world: &'a World,
}

impl Serialize for EntitiesRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("Entities", 2)?;
        out.serialize_field("slots", &GenerationRunsRef(self.world))?;
        out.serialize_field("rows", &RowRunsRef(self.world))?;
        out.end()
    }
}

/// Calls `f` with the entity of each live row, in row order, until it
/// returns `false`.
fn for_each_live(world: &World, mut f: impl FnMut(Entity) -> bool) {
    let rows = world.rows.as_slice();
    if world.row_count() == world.len() {
        // No dead row in the window.
        for &entity in rows {
            if !f(entity) {
                return;
            }
        }
        return;
    }
    let front = world.rows.front_position();
    let first_word = world.alive.front_position();
    for (i, &word) in world.alive.as_slice().iter().enumerate() {
        let base = (first_word + i) * WORD;
        let mut bits = word;
        while bits != 0 {
            let row = base + bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if !f(rows[row - front]) {
                return;
            }
        }
    }
}

/// The generation of every entity index, as `(generation, count)` runs.
struct GenerationRunsRef<'a>(&'a World);

impl Serialize for GenerationRunsRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        handlekit::lookup_table::serialize_runs(serializer, |f| {
            self.0.entities.for_each_generation_run(f);
        })
    }
}

/// The index of each live row's entity, in row order, as `(first index,
/// count)` runs of consecutive indices.
struct RowRunsRef<'a>(&'a World);

impl RowRunsRef<'_> {
    /// Calls `f` with each run until it returns `false`.
    fn for_each(&self, mut f: impl FnMut(u32, u32) -> bool) {
        let mut run: Option<(u32, u32)> = None;
        let mut go_on = true;
        for_each_live(self.0, |entity| {
            // Entity indices have 32 bits.
            let index = entity.index() as u32;
            match &mut run {
                Some((first, count)) if first.checked_add(*count) == Some(index) => *count += 1,
                _ => {
                    if let Some((first, count)) = run.replace((index, 1)) {
                        go_on = f(first, count);
                    }
                }
            }
            go_on
        });
        if let (true, Some((first, count))) = (go_on, run) {
            f(first, count);
        }
    }
}

impl Serialize for RowRunsRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        handlekit::lookup_table::serialize_runs(serializer, |f| self.for_each(f))
    }
}

/// The saved columns, as a map from name to column.
struct ColumnsRef<'a, C> {
    registry: &'a Registry<C>,
    world: &'a World,
    ranks: &'a Ranks<'a>,
    saved: &'a [(TypeId, &'a str)],
}

impl<C: Components> Serialize for ColumnsRef<'_, C> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.saved.len()))?;
        for &(ty, name) in self.saved {
            let entry = SaveEntry {
                name,
                world: self.world,
                ranks: self.ranks,
                map: &mut map,
            };
            self.registry
                .components
                .with_type(ty, entry)
                .unwrap_or_else(|| Err(ser::Error::custom("a registered type has no entry")))?;
        }
        map.end()
    }
}

/// One column: its storage, as an enum whose content is the runs and the
/// values.
struct ColumnRef<'a, T> {
    world: &'a World,
    ranks: &'a Ranks<'a>,
    _type: PhantomData<fn() -> T>,
}

impl<T: Component + Serialize> Serialize for ColumnRef<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let world = self.world;
        let runs = Runs::<T> {
            world,
            ranks: self.ranks,
            _type: PhantomData,
        };
        // A first pass counts the runs and values, so that the runs are
        // written from the presence words again rather than collected into
        // a vector: no allocation between the serializer's growths of its
        // output.
        let (mut count, mut values) = (0, 0);
        runs.for_each(|_, n| {
            count += 1;
            values += n as usize;
        });
        let data = ColumnData {
            runs: RunsRef { runs, count },
            values: Values::<T> {
                world,
                len: values,
                _type: PhantomData,
            },
        };
        match world.storage_of::<T>() {
            Some(Storage::Sparse) => {
                serializer.serialize_newtype_variant("Storage", 1, "Sparse", &data)
            }
            _ => serializer.serialize_newtype_variant("Storage", 0, "Dense", &data),
        }
    }
}

/// The saved rows with a `T`, as runs `(first saved row, count)` in
/// ascending order, read from the presence words a word at a time.
struct Runs<'a, T> {
    world: &'a World,
    ranks: &'a Ranks<'a>,
    _type: PhantomData<fn() -> T>,
}

impl<T: Component> Runs<'_, T> {
    /// Calls `f` with each run, adjacent ones merged.
    fn for_each(&self, mut f: impl FnMut(u32, u32)) {
        let mut current: Option<(u32, u32)> = None;
        let mut extend = |rank: u32, count: u32| match &mut current {
            Some((start, n)) if *start + *n == rank => *n += count,
            _ => {
                if let Some((start, n)) = current.replace((rank, count)) {
                    f(start, n);
                }
            }
        };
        for_each_word::<With<T>>(self.world, |base, mut bits| {
            if self.ranks.before.is_some() {
                // Dead rows in the window: ranks skip them, row by row.
                while bits != 0 {
                    let row = base + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    extend(self.ranks.rank(row), 1);
                }
                return;
            }
            // Every row of the window is alive: a run of set bits is a run
            // of saved rows.
            while bits != 0 {
                let skip = bits.trailing_zeros();
                let ones = (!(bits >> skip)).trailing_zeros();
                let row = base + skip as usize;
                extend(self.ranks.rank(row), ones);
                // `skip + ones <= 64`; a shift by 64 would overflow.
                bits = bits
                    .checked_shr(skip + ones)
                    .map_or(0, |b| b << (skip + ones));
            }
        });
        if let Some((start, n)) = current {
            f(start, n);
        }
    }
}

/// The runs of a column as a sequence of `count` pairs.
struct RunsRef<'a, T> {
    runs: Runs<'a, T>,
    count: usize,
}

impl<T: Component> Serialize for RunsRef<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.count))?;
        let mut result = Ok(());
        self.runs.for_each(|start, n| {
            if result.is_ok() {
                result = seq.serialize_element(&(start, n));
            }
        });
        result?;
        seq.end()
    }
}

/// The content of a saved column.
struct ColumnData<'a, T> {
    runs: RunsRef<'a, T>,
    values: Values<'a, T>,
}

impl<T: Component + Serialize> Serialize for ColumnData<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_struct("Column", 2)?;
        out.serialize_field("runs", &self.runs)?;
        out.serialize_field("values", &self.values)?;
        out.end()
    }
}

/// The components of a column in row order (`len` of them).
struct Values<'a, T> {
    world: &'a World,
    len: usize,
    _type: PhantomData<fn() -> T>,
}

impl<T: Component + Serialize> Serialize for Values<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len))?;
        let mut error = None;
        let mut written = 0;
        self.world.query::<&T>().for_each(|value| {
            if error.is_none() {
                match seq.serialize_element(value) {
                    Ok(()) => written += 1,
                    Err(e) => error = Some(e),
                }
            }
        });
        if let Some(error) = error {
            return Err(error);
        }
        // The runs were counted from the same rows under the same borrow of
        // the world.
        debug_assert_eq!(written, self.len);
        seq.end()
    }
}

/// A world deserialized with a [`Registry`]: from [`Registry::load`]; a
/// [`DeserializeSeed`] whose value is a new [`World`].
pub struct Load<'r, C> {
    registry: &'r Registry<C>,
    max_rows: usize,
    /// The most bytes the loaded world may take ([`Load::max_memory`]).
    max_memory: usize,
}

impl<C> fmt::Debug for Load<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Load")
            .field("registry", self.registry)
            .field("max_rows", &self.max_rows)
            .field("max_memory", &self.max_memory)
            .finish()
    }
}

impl<C> Load<'_, C> {
    /// Loads into a world with room for `max_rows` rows (see
    /// [`World::with_max_rows`]); data with more entities is refused.
    ///
    /// # Panics
    ///
    /// When deserializing, as [`World::with_max_rows`] (more than 2³¹ rows,
    /// or no address space).
    ///
    /// ```
    /// use handlekit_ecs::{serialize::Registry, World};
    /// use serde::de::DeserializeSeed;
    ///
    /// let registry = Registry::new();
    /// let mut world = World::new();
    /// world.spawn_batch((0..3).map(|_| ()));
    /// let json = serde_json::to_string(&registry.save(&world)).unwrap();
    /// let load = |max_rows| {
    ///     registry
    ///         .load()
    ///         .max_rows(max_rows)
    ///         .deserialize(&mut serde_json::Deserializer::from_str(&json))
    /// };
    /// assert_eq!(load(3).unwrap().max_rows(), 3);
    /// assert!(load(2).is_err());
    /// ```
    #[must_use]
    pub fn max_rows(mut self, max_rows: usize) -> Self {
        self.max_rows = max_rows;
        self
    }

    /// Loads worlds that take at most `bytes` of memory; data that would
    /// build a larger one is refused with an error that names this limit.
    /// The default, [`DEFAULT_MAX_MEMORY`], is 512 KiB: a save read from an
    /// untrusted source cannot make a load take much more memory than its
    /// own size (see [Untrusted data](self#untrusted-data)). A program that
    /// loads larger worlds raises the limit, for example to 64 times the
    /// size of the input, or to `usize::MAX` for its own files.
    ///
    /// The memory counted is what the world holds once loaded (its entity
    /// table, rows and columns, estimated from the counts the data names
    /// before anything is built), not the heap the components' own values
    /// own (a `String`'s bytes), which the format reads from the input.
    ///
    /// ```
    /// use handlekit_ecs::{serialize::Registry, World};
    /// use serde::de::DeserializeSeed;
    ///
    /// let registry = Registry::new().component::<u64>("id");
    /// let mut world = World::new();
    /// world.spawn_batch((0..100_000u64).map(|i| (i,)));
    /// let bytes = postcard::to_allocvec(&registry.save(&world)).unwrap();
    /// let load = |max_memory| {
    ///     registry
    ///         .load()
    ///         .max_memory(max_memory)
    ///         .deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
    /// };
    /// // 100,000 entities with a `u64` each take about 2.5 MiB.
    /// assert!(load(handlekit_ecs::serialize::DEFAULT_MAX_MEMORY).is_err());
    /// assert_eq!(load(64 * bytes.len()).unwrap().len(), 100_000);
    /// ```
    #[must_use]
    pub fn max_memory(mut self, bytes: usize) -> Self {
        self.max_memory = bytes;
        self
    }
}

/// The memory a [`Load`] may build by default: 512 KiB (see
/// [`Load::max_memory`]).
///
/// ```
/// assert_eq!(handlekit_ecs::serialize::DEFAULT_MAX_MEMORY, 512 << 10);
/// ```
pub const DEFAULT_MAX_MEMORY: usize = 512 << 10;

/// What a load may still build: [`Load::max_memory`] less what the
/// entity table and the columns read so far take. Not part of the public
/// API.
#[doc(hidden)]
pub struct Budget {
    /// The bytes not yet spent.
    left: std::cell::Cell<usize>,
    /// The limit, for the error.
    limit: usize,
}

impl Budget {
    fn new(limit: usize) -> Self {
        Budget {
            left: std::cell::Cell::new(limit),
            limit,
        }
    }

    /// Spends `bytes` for `what`, or fails if fewer are left.
    fn spend<E: de::Error>(&self, bytes: usize, what: fmt::Arguments<'_>) -> Result<(), E> {
        match self.left.get().checked_sub(bytes) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => Err(E::custom(format_args!(
                "{what} would take {bytes} bytes, past the loader's limit of {} bytes \
                 ({} bytes left; raise it with Load::max_memory)",
                self.limit,
                self.left.get()
            ))),
        }
    }
}

/// The bytes a loaded entity table of `slots` indices and `rows` rows
/// takes, with the buffer that sorts rows given out of index order: 8 per
/// index (and a bit for a free one) and 8 per row (and its alive bit), 4
/// more per index for the sort, and a page for each of the three arrays.
fn entities_bytes(slots: u64, rows: u64, ascending: bool) -> u64 {
    let sort = if ascending { 0 } else { 4 };
    slots * (9 + sort) + rows * 9 + 3 * 4096
}

/// The bytes a loaded column of `T` takes, with `values` values in rows
/// up to `end`: a dense column's slots up to its last row, its presence
/// bits and the pages at their ends; a sparse set's values and owners
/// (twice, as vectors grow), its flat index (up to 8 entries per value,
/// twice) and its map, and a page.
fn column_bytes<T>(storage: Storage, values: u64, end: u64) -> u64 {
    let size = size_of::<T>() as u64;
    match storage {
        Storage::Dense => end * size + end / 8 + 3 * 4096,
        Storage::Sparse => values * (2 * (size + 8) + 64 + 20) + 8192,
    }
}

impl<'de, C: Components> DeserializeSeed<'de> for Load<'_, C> {
    type Value = World;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<World, D::Error> {
        Struct(self).deserialize(deserializer)
    }
}

impl<'de, C: Components> Visitor<'de> for Load<'_, C> {
    type Value = World;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(<Self as TwoFields<'de>>::EXPECTING)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<World, A::Error> {
        Struct(self).visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<World, A::Error> {
        Struct(self).visit_map(map)
    }
}

#[derive(Deserialize, Clone, Copy)]
#[serde(field_identifier, rename_all = "lowercase")]
enum WorldField {
    Entities,
    Components,
}

impl<'de, C: Components> TwoFields<'de> for Load<'_, C> {
    type Value = World;
    type Field = WorldField;
    const NAME: &'static str = "World";
    const FIELDS: &'static [&'static str; 2] = &["entities", "components"];
    const EXPECTING: &'static str = "a world: its entity table, then its components";
    const OUT_OF_ORDER: &'static str = "the entities must come before the components";

    fn read<F: Fields<'de>>(self, mut fields: F) -> Result<World, F::Error> {
        // The components are read into the world the entities make.
        let budget = Budget::new(self.max_memory);
        let mut world = fields.next(Struct(EntitiesSeed {
            max_rows: self.max_rows,
            budget: &budget,
        }))?;
        fields.next(ColumnsSeed {
            registry: self.registry,
            world: &mut world,
            budget: &budget,
        })?;
        fields.end()?;
        Ok(world)
    }
}

/// A saved struct of two fields (a world, its entity table, a column's
/// content), read in order: the second field is read with what the first
/// gave, so it must come second (as `save` writes it). Deserialized as a
/// [`Struct`].
trait TwoFields<'de>: Sized {
    type Value;
    /// The fields' identifiers.
    type Field: Deserialize<'de> + FieldIndex;
    /// The struct's name and its fields' names, in order.
    const NAME: &'static str;
    const FIELDS: &'static [&'static str; 2];
    /// What a visitor of the struct expects.
    const EXPECTING: &'static str;
    /// The error for the second field given before the first.
    const OUT_OF_ORDER: &'static str;

    /// Reads both fields with [`Fields::next`], then checks
    /// [`Fields::end`].
    fn read<F: Fields<'de>>(self, fields: F) -> Result<Self::Value, F::Error>;
}

/// The place of a field among its struct's fields.
trait FieldIndex: Copy {
    fn index(self) -> usize;
}

impl FieldIndex for WorldField {
    fn index(self) -> usize {
        self as usize
    }
}

/// The fields of a [`TwoFields`] struct, as a sequence or as a map.
trait Fields<'de> {
    type Error: de::Error;
    /// The value of the next field, read with `seed`.
    fn next<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Self::Error>;
    /// Checks that no field follows.
    fn end(self) -> Result<(), Self::Error>;
}

/// The fields of a struct saved as a sequence (by binary formats): each in
/// its place.
struct SeqFields<A> {
    seq: A,
    read: usize,
    expecting: &'static str,
}

impl<'de, A: SeqAccess<'de>> Fields<'de> for SeqFields<A> {
    type Error = A::Error;

    fn next<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        let value = self
            .seq
            .next_element_seed(seed)?
            .ok_or_else(|| de::Error::invalid_length(self.read, &self.expecting))?;
        self.read += 1;
        Ok(value)
    }

    fn end(self) -> Result<(), A::Error> {
        // The length of a sequence is the format's to check.
        Ok(())
    }
}

/// The fields of struct `T` saved as a map (by text formats): by name,
/// each once and in order.
struct MapFields<A, T> {
    map: A,
    read: usize,
    _struct: PhantomData<fn() -> T>,
}

impl<'de, A: MapAccess<'de>, T: TwoFields<'de>> Fields<'de> for MapFields<A, T> {
    type Error = A::Error;

    fn next<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        match self.map.next_key::<T::Field>()?.map(FieldIndex::index) {
            Some(i) if i == self.read => {}
            Some(i) if i < self.read => return Err(de::Error::duplicate_field(T::FIELDS[i])),
            Some(_) => return Err(de::Error::custom(T::OUT_OF_ORDER)),
            None => return Err(de::Error::missing_field(T::FIELDS[self.read])),
        }
        self.read += 1;
        self.map.next_value_seed(seed)
    }

    fn end(mut self) -> Result<(), A::Error> {
        match self.map.next_key::<T::Field>()? {
            None => Ok(()),
            Some(field) => Err(de::Error::duplicate_field(T::FIELDS[field.index()])),
        }
    }
}

/// A [`TwoFields`] struct as a seed and its visitor.
struct Struct<T>(T);

impl<'de, T: TwoFields<'de>> DeserializeSeed<'de> for Struct<T> {
    type Value = T::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T::Value, D::Error> {
        deserializer.deserialize_struct(T::NAME, T::FIELDS, self)
    }
}

impl<'de, T: TwoFields<'de>> Visitor<'de> for Struct<T> {
    type Value = T::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T::Value, A::Error> {
        self.0.read(SeqFields {
            seq,
            read: 0,
            expecting: T::EXPECTING,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T::Value, A::Error> {
        self.0.read(MapFields::<A, T> {
            map,
            read: 0,
            _struct: PhantomData,
        })
    }
}

/// Deserializes the entity table into a world of its live entities (rows
/// from 0, no component yet).
struct EntitiesSeed<'b> {
    max_rows: usize,
    budget: &'b Budget,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(field_identifier, rename_all = "lowercase")]
enum EntitiesField {
    Slots,
    Rows,
}

impl FieldIndex for EntitiesField {
    fn index(self) -> usize {
        self as usize
    }
}

impl<'de> TwoFields<'de> for EntitiesSeed<'_> {
    type Value = World;
    type Field = EntitiesField;
    const NAME: &'static str = "Entities";
    const FIELDS: &'static [&'static str; 2] = &["slots", "rows"];
    const EXPECTING: &'static str = "an entity table: its slots, then its rows";
    const OUT_OF_ORDER: &'static str = "the entity table's slots must come before its rows";

    fn read<F: Fields<'de>>(self, mut fields: F) -> Result<World, F::Error> {
        let slots: GenerationRuns = fields.next(PhantomData)?;
        self.check_slots(&slots)?;
        let rows = fields.next(Seq(RunsSeed(RowRuns {
            max_rows: self.max_rows,
            slots: slots.total(),
            rows: 0,
        })))?;
        fields.end()?;
        world_of(self.max_rows, self.budget, &slots, &rows)
    }
}

impl EntitiesSeed<'_> {
    /// Bounds the index count, which a few bytes of runs can make as large
    /// as they like, before anything is allocated for the indices: at most
    /// what the entity table of a world of `max_rows` rows holds.
    fn check_slots<E: de::Error>(&self, slots: &GenerationRuns) -> Result<(), E> {
        let bound = max_entity_slots(self.max_rows);
        if slots.total() > bound as u64 {
            return Err(E::custom(format_args!(
                "{} entity indices, for at most {bound} in a world of {} rows",
                slots.total(),
                self.max_rows
            )));
        }
        Ok(())
    }
}

/// Checks each `(first, count)` run a [`RunsSeed`] reads, in order.
trait RunCheck {
    /// What a visitor of the runs expects.
    const EXPECTING: &'static str;
    fn check<E: de::Error>(&mut self, first: u32, count: u32) -> Result<(), E>;
}

/// A visitor of a sequence as a seed that asks for one.
struct Seq<V>(V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for Seq<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        deserializer.deserialize_seq(self.0)
    }
}

/// Runs checked by `C` as they are read, and stored as they are: bounded
/// by the size of the input. Read as a [`Seq`].
struct RunsSeed<C>(C);

impl<'de, C: RunCheck> Visitor<'de> for RunsSeed<C> {
    type Value = Vec<(u32, u32)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(C::EXPECTING)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut runs = Vec::new();
        while let Some((first, count)) = seq.next_element::<(u32, u32)>()? {
            self.0.check(first, count)?;
            runs.push((first, count));
        }
        Ok(runs)
    }
}

/// The rows of the entity table: `(first index, count)` runs, each of at
/// least one index below the slot count, at most `max_rows` indices in
/// all (`rows` so far).
struct RowRuns {
    max_rows: usize,
    slots: u64,
    rows: u64,
}

impl RunCheck for RowRuns {
    const EXPECTING: &'static str = "a sequence of (first index, count) runs of the rows' entities";

    fn check<E: de::Error>(&mut self, first: u32, count: u32) -> Result<(), E> {
        let end = u64::from(first) + u64::from(count);
        if count == 0 {
            return Err(E::custom(format_args!(
                "an empty run of rows at index {first}"
            )));
        }
        if end > self.slots {
            return Err(E::custom(format_args!(
                "the rows' entities {first}..{end} go past the {} slots",
                self.slots
            )));
        }
        self.rows += u64::from(count);
        if self.rows > self.max_rows as u64 {
            return Err(E::custom(format_args!(
                "more entities than the {} rows",
                self.max_rows
            )));
        }
        Ok(())
    }
}

/// The entities of the rows, in row order: the index of each from the
/// rows' runs, its generation from the slots' runs (stepped through while
/// the indices ascend, searched for when they jump).
struct RowEntities<'a> {
    rows: std::slice::Iter<'a, (u32, u32)>,
    /// The runs of generations and the first index of each.
    generations: &'a [(u32, u32)],
    starts: Vec<u64>,
    /// The next index of the current row run, and its end.
    index: u64,
    end: u64,
    /// The generation run holding `index` (if `index < run_end`), its
    /// generation and end.
    run: usize,
    generation: u32,
    run_end: u64,
    /// The first index whose generation makes no entity, if any.
    bad: Option<u64>,
}

impl<'a> RowEntities<'a> {
    fn new(rows: &'a [(u32, u32)], generations: &'a [(u32, u32)]) -> Self {
        let mut start = 0u64;
        let starts = generations
            .iter()
            .map(|&(_, count)| {
                let at = start;
                start += u64::from(count);
                at
            })
            .collect();
        RowEntities {
            rows: rows.iter(),
            generations,
            starts,
            index: 0,
            end: 0,
            run: 0,
            generation: 0,
            run_end: 0,
            bad: None,
        }
    }
}

impl Iterator for RowEntities<'_> {
    type Item = Entity;

    #[inline]
    fn next(&mut self) -> Option<Entity> {
        if self.index == self.end {
            let &(first, count) = self.rows.next()?;
            (self.index, self.end) = (u64::from(first), u64::from(first) + u64::from(count));
            if self.index < self.run_end && self.index < self.starts[self.run] {
                // A jump back: look the run up again below.
                self.run_end = 0;
            }
        }
        let index = self.index;
        // Within a row run the indices ascend: only the end of the current
        // generation run needs checking.
        if index >= self.run_end {
            // The rows' runs are below the slot count, which the runs of
            // generations add up to: some run holds `index`.
            self.run = self.starts.partition_point(|&start| start <= index) - 1;
            self.generation = self.generations[self.run].0;
            self.run_end = self.starts[self.run] + u64::from(self.generations[self.run].1);
        }
        self.index += 1;
        let entity = usize::try_from(index)
            .ok()
            .and_then(|index| Entity::from_parts(index, self.generation));
        if entity.is_none() {
            self.bad = Some(index);
        }
        entity
    }
}

/// The world of a deserialized entity table: `slots` (bounded) and the
/// rows' runs of entity indices (checked in themselves). Refuses an entity
/// in two rows; the table refuses generations it cannot have.
fn world_of<E: de::Error>(
    max_rows: usize,
    budget: &Budget,
    slots: &GenerationRuns,
    rows: &[(u32, u32)],
) -> Result<World, E> {
    let ascending = rows
        .windows(2)
        .all(|pair| u64::from(pair[0].0) + u64::from(pair[0].1) <= u64::from(pair[1].0));
    // The counts are checked against `max_rows`, and the bytes they take
    // against the budget, before anything is built.
    let row_count: u64 = rows.iter().map(|&(_, count)| u64::from(count)).sum();
    let bytes = entities_bytes(slots.total(), row_count, ascending);
    budget.spend(
        usize::try_from(bytes).unwrap_or(usize::MAX),
        format_args!(
            "an entity table of {} indices and {row_count} rows",
            slots.total()
        ),
    )?;
    let max_slots = max_entity_slots(max_rows);
    // Row of each live index, in ascending index order.
    let entities = if ascending {
        // Distinct indices, rows in index order: no buffer.
        let live = rows
            .iter()
            .flat_map(|&(first, count)| first as usize..first as usize + count as usize)
            .zip(0u32..);
        EntityTable::from_generation_runs(max_slots, slots.as_slice(), live)
    } else {
        // The index count is bounded (`check_slots`).
        const NONE: u32 = u32::MAX;
        let mut row_of = vec![NONE; slots.total() as usize];
        let mut row = 0u32;
        for &(first, count) in rows {
            let first = first as usize;
            // `RowRunsSeed` checked the run against the index count.
            for (index, slot) in (first..).zip(&mut row_of[first..first + count as usize]) {
                if *slot != NONE {
                    return Err(E::custom(format_args!(
                        "entity index {index} is in rows {} and {row}",
                        *slot
                    )));
                }
                *slot = row;
                row += 1;
            }
        }
        let live = row_of
            .iter()
            .enumerate()
            .filter(|&(_, &row)| row != NONE)
            .map(|(index, &row)| (index, row));
        EntityTable::from_generation_runs(max_slots, slots.as_slice(), live)
    }
    .map_err(E::custom)?;
    // The table accepted every live index's generation, so each row makes
    // an entity; an error stays possible in principle.
    let mut row_entities = RowEntities::new(rows, slots.as_slice());
    let world = World::from_rows(max_rows, entities, row_entities.by_ref());
    match row_entities.bad {
        Some(index) => Err(E::custom(format_args!(
            "entity index {index} has no valid generation"
        ))),
        None => Ok(world),
    }
}

/// Deserializes the map of columns into a world.
struct ColumnsSeed<'w, 'r, C> {
    registry: &'r Registry<C>,
    world: &'w mut World,
    budget: &'w Budget,
}

impl<'de, C: Components> DeserializeSeed<'de> for ColumnsSeed<'_, '_, C> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de, C: Components> Visitor<'de> for ColumnsSeed<'_, '_, C> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map from component names to columns")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(ty) = map.next_key_seed(NameSeed(self.registry))? {
            let name = self.registry.name_of(ty).unwrap_or("?");
            let entry = LoadEntry {
                name,
                map: &mut map,
                world: &mut *self.world,
                budget: self.budget,
                _de: PhantomData,
            };
            // `type_of` found the name, so some entry has its type.
            self.registry
                .components
                .with_type(ty, entry)
                .unwrap_or_else(|| {
                    Err(de::Error::custom(format_args!(
                        "component {name:?} has no type in the registry"
                    )))
                })?;
        }
        Ok(())
    }
}

/// A component name, looked up in the registry without allocating.
struct NameSeed<'r, C>(&'r Registry<C>);

impl<'de, C: Components> DeserializeSeed<'de> for NameSeed<'_, C> {
    type Value = TypeId;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<TypeId, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<C: Components> Visitor<'_> for NameSeed<'_, C> {
    type Value = TypeId;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a component name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<TypeId, E> {
        self.0.type_of(name).ok_or_else(|| {
            E::custom(format_args!(
                "unknown component {name:?} (not in the registry)"
            ))
        })
    }
}

/// Deserializes one column of type `T`: registers `T` with the saved
/// storage, then reads the runs and the values into it.
struct ColumnSeed<'a, T> {
    name: &'a str,
    world: &'a mut World,
    budget: &'a Budget,
    _type: PhantomData<fn() -> T>,
}

#[derive(Deserialize)]
#[serde(variant_identifier)]
enum StorageTag {
    Dense,
    Sparse,
}

impl<'de, T: Component + DeserializeOwned> DeserializeSeed<'de> for ColumnSeed<'_, T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_enum("Storage", &["Dense", "Sparse"], self)
    }
}

impl<'de, T: Component + DeserializeOwned> Visitor<'de> for ColumnSeed<'_, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a column: Dense or Sparse")
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        let (tag, variant) = data.variant::<StorageTag>()?;
        let storage = match tag {
            StorageTag::Dense => Storage::Dense,
            StorageTag::Sparse => Storage::Sparse,
        };
        if !self.world.register::<T>(storage) {
            return Err(de::Error::custom(format_args!(
                "component {:?} is given twice",
                self.name
            )));
        }
        variant.newtype_variant_seed(Struct(ColumnDataSeed::<T> {
            name: self.name,
            storage,
            world: self.world,
            budget: self.budget,
            _type: PhantomData,
        }))
    }
}

/// The content of a column: `runs`, then `values`.
struct ColumnDataSeed<'a, T> {
    name: &'a str,
    storage: Storage,
    world: &'a mut World,
    budget: &'a Budget,
    _type: PhantomData<fn() -> T>,
}

impl<T> ColumnDataSeed<'_, T> {
    /// Spends the bytes the column of `runs` will take.
    fn spend<E: de::Error>(&self, runs: &[(u32, u32)]) -> Result<(), E> {
        let values: u64 = runs.iter().map(|&(_, count)| u64::from(count)).sum();
        let end = runs
            .last()
            .map_or(0, |&(start, count)| u64::from(start) + u64::from(count));
        let bytes = column_bytes::<T>(self.storage, values, end);
        self.budget.spend(
            usize::try_from(bytes).unwrap_or(usize::MAX),
            format_args!("component {:?} of {values} values", self.name),
        )
    }
}

#[derive(Deserialize, Clone, Copy)]
#[serde(field_identifier, rename_all = "lowercase")]
enum ColumnField {
    Runs,
    Values,
}

impl FieldIndex for ColumnField {
    fn index(self) -> usize {
        self as usize
    }
}

impl<'de, T: Component + DeserializeOwned> TwoFields<'de> for ColumnDataSeed<'_, T> {
    type Value = ();
    type Field = ColumnField;
    const NAME: &'static str = "Column";
    const FIELDS: &'static [&'static str; 2] = &["runs", "values"];
    const EXPECTING: &'static str = "a column's runs, then its values";
    const OUT_OF_ORDER: &'static str = "a column's runs must come before its values";

    fn read<F: Fields<'de>>(self, mut fields: F) -> Result<(), F::Error> {
        let runs = fields.next(Seq(RunsSeed(ColumnRuns {
            live: self.world.len() as u64,
            end: 0,
        })))?;
        self.spend(&runs)?;
        fields.next(Seq(ValuesSeed::<T> {
            runs: &runs,
            world: self.world,
            _type: PhantomData,
        }))?;
        fields.end()
    }
}

/// A column's runs, checked against the number of `live` rows: each
/// `(first row, count)` has `count >= 1`, starts at or after the `end` of
/// the one before (ascending, no overlap: no component twice) and ends at
/// or below the live rows (no component for a dead row). So there are at
/// most as many runs as live rows.
struct ColumnRuns {
    live: u64,
    end: u64,
}

impl RunCheck for ColumnRuns {
    const EXPECTING: &'static str = "a sequence of (first row, count) runs";

    fn check<E: de::Error>(&mut self, start: u32, count: u32) -> Result<(), E> {
        let live = self.live;
        let (start64, stop) = (u64::from(start), u64::from(start) + u64::from(count));
        if count == 0 {
            return Err(E::custom(format_args!("an empty run at row {start}")));
        }
        if start64 < self.end {
            return Err(E::custom(format_args!(
                "the run at row {start} overlaps or precedes the one before \
                 (a component given twice, or runs out of order)"
            )));
        }
        if stop > live {
            return Err(E::custom(format_args!(
                "the run of rows {start}..{stop} goes past the {live} live rows \
                 (a component for a dead row)"
            )));
        }
        self.end = stop;
        Ok(())
    }
}

/// The error for a column whose values end after `read` of `expected`.
#[cold]
fn too_few<E: de::Error>(read: usize, expected: usize) -> E {
    E::invalid_length(read, &&*format!("{expected} values"))
}

/// A column's values, one for each row of its runs, put into the world.
/// Read as a [`Seq`].
struct ValuesSeed<'a, T> {
    runs: &'a [(u32, u32)],
    world: &'a mut World,
    _type: PhantomData<fn() -> T>,
}

impl<'de, T: Component + DeserializeOwned> Visitor<'de> for ValuesSeed<'_, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value for each row of the runs")
    }

    // Not inlined: one function per column type keeps the value loop out
    // of the loader's large body, where it compiled to about twice the
    // instructions per value (callgrind).
    #[inline(never)]
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let expected: usize = self.runs.iter().map(|&(_, count)| count as usize).sum();
        let (rows, storage) = self.world.rows_and_storage_mut::<T>();
        let mut read = 0;
        for &(start, count) in self.runs {
            let (start, end) = (start as usize, start as usize + count as usize);
            // The runs are checked: ascending, not overlapping, within the
            // live rows, so each starts at or past the column's last slot
            // and a dense column takes the run's values as pushes (its
            // presence bits set a word at a time when the writer drops, also
            // when a value fails to deserialize).
            let mut writer = BatchWriter::new(storage, start, end - start);
            writer.put_each(&rows[start..end], || match seq.next_element::<T>()? {
                Some(value) => {
                    read += 1;
                    Ok(value)
                }
                None => Err(too_few::<A::Error>(read, expected)),
            })?;
        }
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(de::Error::custom(format_args!(
                "more values than the {expected} rows of the runs"
            )));
        }
        Ok(())
    }
}
