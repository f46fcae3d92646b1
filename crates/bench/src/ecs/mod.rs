//! The runner's ECS section (issue 21): the workloads of the community's
//! ECS benchmark suite (rust-gamedev/ecs_bench_suite) on its data, plus
//! `simple_iter` and `add_remove` at a million entities, a random `get`,
//! and seed 004's `despawn_front` and `collect_pause`, on handlekit-ecs and
//! its peers hecs (archetype tables), bevy_ecs (tables, and sparse sets for
//! a second `add_remove` row) and shipyard (sparse sets). A loop over
//! plain `Vec`s is the physical bound of `simple_iter`.
//!
//! Each contender uses its own fastest idiom (`query_mut`, batch spawning,
//! cached query states, views borrowed once per pass); the code of each is
//! in its own module. The cells are sampled like the core cells: the
//! contenders of a cell interleaved, the median of several samples.

pub mod data;
mod hk;
mod peer_bevy;
mod peer_hecs;
mod peer_legion;
mod peer_planck;
mod peer_shipyard;
mod peer_specs;

/// hecs's column-format round trip of `serialize_*`, for the
/// `ecs_instructions` example.
pub use peer_hecs::round_trip as hecs_serialize_round_trip;

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::containers::Family;
use crate::goals::{Bound, Goal, GoalRow, Spread};
use crate::text::{escape, median_cell, ratio_cell, Row};
use crate::workloads::{random_lookups, time, time_passes, Budget, Form, Rng, Timed};
use crate::Cell;

/// The value-type column of ECS cells: `--filter ecs` picks the section.
pub const SECTION: &str = "ecs";

/// What an ECS cell measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcsWorkload {
    SimpleInsert,
    /// `simple_iter` as a `for` loop over the query (the headline).
    SimpleIter,
    /// `simple_iter` through the query's `for_each`.
    SimpleIterEach,
    /// `frag_iter` as a `for` loop over the query.
    FragIter,
    /// `frag_iter` through the query's `for_each`.
    FragIterEach,
    HeavyCompute,
    Schedule,
    /// `add_remove` with handlekit-ecs's plain calls, `insert_one` /
    /// `remove_one` (the peers in their own idioms).
    AddRemove,
    /// `add_remove` with a `ColumnMut` held across the loops
    /// (handlekit-ecs only).
    AddRemoveColumn,
    /// `random_get` with handlekit-ecs's plain `World::get`.
    RandomGet,
    /// `random_get` with a call that borrows for the one lookup, on a world
    /// that may be shared: each contender's per-entity get (handlekit-ecs
    /// and hecs: `World::get`; the others: their nearest call).
    RandomGetCall,
    /// `random_get` through a query borrowed once per pass (handlekit-ecs
    /// only).
    RandomGetQuery,
    /// `random_get` with `World::get_mut` (handlekit-ecs only).
    RandomGetMut,
    /// `random_get` asking `World::has` (handlekit-ecs only).
    RandomHas,
    SerializeBinary,
    SerializeText,
}

impl EcsWorkload {
    pub const ALL: [EcsWorkload; 16] = [
        EcsWorkload::SimpleInsert,
        EcsWorkload::SimpleIter,
        EcsWorkload::SimpleIterEach,
        EcsWorkload::FragIter,
        EcsWorkload::FragIterEach,
        EcsWorkload::HeavyCompute,
        EcsWorkload::Schedule,
        EcsWorkload::AddRemove,
        EcsWorkload::AddRemoveColumn,
        EcsWorkload::RandomGet,
        EcsWorkload::RandomGetCall,
        EcsWorkload::RandomGetQuery,
        EcsWorkload::RandomGetMut,
        EcsWorkload::RandomHas,
        EcsWorkload::SerializeBinary,
        EcsWorkload::SerializeText,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EcsWorkload::SimpleInsert => "simple_insert",
            EcsWorkload::SimpleIter => "simple_iter",
            EcsWorkload::SimpleIterEach => "simple_iter_each",
            EcsWorkload::FragIter => "frag_iter",
            EcsWorkload::FragIterEach => "frag_iter_each",
            EcsWorkload::HeavyCompute => "heavy_compute",
            EcsWorkload::Schedule => "schedule",
            EcsWorkload::AddRemove => "add_remove",
            EcsWorkload::AddRemoveColumn => "add_remove_column",
            EcsWorkload::RandomGet => "random_get",
            EcsWorkload::RandomGetCall => "random_get_call",
            EcsWorkload::RandomGetQuery => "random_get_query",
            EcsWorkload::RandomGetMut => "random_get_mut",
            EcsWorkload::RandomHas => "random_has",
            EcsWorkload::SerializeBinary => "serialize_binary",
            EcsWorkload::SerializeText => "serialize_text",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            EcsWorkload::SimpleInsert => "ns per entity: new world, spawn N, drop",
            EcsWorkload::SimpleIter => "ns per entity: position += velocity, a `for` loop over the query",
            EcsWorkload::SimpleIterEach => "ns per entity: position += velocity, the query's `for_each`",
            EcsWorkload::FragIter => "ns per entity: data *= 2 over 26 types × 20 entities, a `for` loop",
            EcsWorkload::FragIterEach => "ns per entity: data *= 2 over 26 types × 20 entities, `for_each`",
            EcsWorkload::HeavyCompute => {
                "ns per entity, parallel: invert a 4×4 matrix 100 times, transform"
            }
            EcsWorkload::Schedule => "ns per entity: swap A↔B, C↔D, C↔E over N/4 each of 4 kinds",
            EcsWorkload::AddRemove => {
                "ns per entity: add B to each, then remove it (handlekit-ecs: insert_one / remove_one)"
            }
            EcsWorkload::AddRemoveColumn => {
                "ns per entity: add B to each, then remove it, through a ColumnMut held across the loops"
            }
            EcsWorkload::RandomGet => {
                "ns per lookup of a component by entity, random order (handlekit-ecs: World::get)"
            }
            EcsWorkload::RandomGetCall => {
                "ns per lookup by entity with a call that borrows for that lookup alone (handlekit-ecs and hecs: World::get)"
            }
            EcsWorkload::RandomGetQuery => "ns per lookup through a query borrowed once per pass",
            EcsWorkload::RandomGetMut => "ns per lookup with World::get_mut",
            EcsWorkload::RandomHas => "ns per World::has",
            EcsWorkload::SerializeBinary => "ns per entity: serialize (postcard) and load",
            EcsWorkload::SerializeText => "ns per entity: serialize (JSON) and load",
        }
    }

    /// The form of a pass workload: a `for` loop, or `for_each` (`Fold`).
    pub fn form(self) -> Form {
        match self {
            EcsWorkload::SimpleIterEach | EcsWorkload::FragIterEach => Form::Fold,
            _ => Form::For,
        }
    }

    /// The headline workload of this one's row: the forms of a workload
    /// are measured side by side, in one row of the plan.
    pub fn row(self) -> EcsWorkload {
        use EcsWorkload as W;
        match self {
            W::SimpleIterEach => W::SimpleIter,
            W::FragIterEach => W::FragIter,
            W::AddRemoveColumn => W::AddRemove,
            W::RandomGetQuery | W::RandomGetMut | W::RandomHas => W::RandomGet,
            other => other,
        }
    }

    /// The rows handlekit-ecs alone runs: its second idioms.
    fn handlekit_only(self) -> bool {
        matches!(
            self,
            EcsWorkload::AddRemoveColumn
                | EcsWorkload::RandomGetQuery
                | EcsWorkload::RandomGetMut
                | EcsWorkload::RandomHas
        )
    }
}

/// The ECS peers of rust-gamedev/ecs_bench_suite that do not build here,
/// with the reason: the report gives each one line. Every peer builds on
/// Rust 1.95 from crates.io (hecs 0.11, bevy_ecs 0.20, shipyard 0.11,
/// legion 0.4, specs 0.20, planck_ecs 1.2), so the list is empty; a peer
/// that stops building moves here, out of `Cargo.toml` and the contenders.
pub const PEERS_NOT_BUILT: &[(&str, &str)] = &[];

/// The two seed-004 measurements that are not a cell of the table above.
pub const SCALE_NAMES: [&str; 2] = ["despawn_front", "collect_pause"];

/// Who runs an ECS workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contender {
    Handlekit,
    Hecs,
    Bevy,
    /// bevy_ecs with the added component in `SparseSet` storage
    /// (`add_remove` only).
    BevySparse,
    Shipyard,
    Legion,
    Specs,
    Planck,
    /// Plain `Vec`s: the physical bound (`simple_iter` only).
    Vec,
}

impl Contender {
    pub const ALL: [Contender; 9] = [
        Contender::Handlekit,
        Contender::Hecs,
        Contender::Bevy,
        Contender::BevySparse,
        Contender::Shipyard,
        Contender::Legion,
        Contender::Specs,
        Contender::Planck,
        Contender::Vec,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Contender::Handlekit => HANDLEKIT,
            Contender::Hecs => "hecs",
            Contender::Bevy => "bevy_ecs",
            Contender::BevySparse => "bevy_ecs(sparse)",
            Contender::Shipyard => "shipyard",
            Contender::Legion => "legion",
            Contender::Specs => "specs",
            Contender::Planck => "planck_ecs",
            Contender::Vec => "Vec",
        }
    }

    pub fn family(self) -> Family {
        match self {
            Contender::Handlekit => Family::Handlekit,
            Contender::Vec => Family::Bound,
            _ => Family::Generational,
        }
    }

    /// Whether it runs `workload` at all.
    pub fn runs(self, workload: EcsWorkload) -> bool {
        use EcsWorkload as W;
        let serialize = matches!(workload, W::SerializeBinary | W::SerializeText);
        match self {
            Contender::Handlekit => true,
            _ if workload.handlekit_only() => false,
            Contender::Vec => matches!(workload, W::SimpleIter | W::SimpleIterEach),
            Contender::BevySparse => workload == W::AddRemove,
            // hecs has a whole-world serializer (its column format), and
            // the goal is against hecs; the others run no serialization.
            Contender::Hecs => true,
            // The suite has no planck_ecs `heavy_compute` (its joins have
            // no parallel form).
            Contender::Planck => !serialize && workload != W::HeavyCompute,
            Contender::Bevy | Contender::Shipyard | Contender::Legion | Contender::Specs => {
                !serialize
            }
        }
    }

    /// Whether it holds `n` entities: planck_ecs's default 16-bit keys
    /// (the suite's setting) hold 65,536.
    pub fn holds(self, n: usize) -> bool {
        self != Contender::Planck || n <= 1 << 16
    }

    /// Sets up `workload` at `n` for this contender.
    fn prepare(self, workload: EcsWorkload, n: usize, rng: &mut Rng) -> Option<Prepared> {
        match self {
            Contender::Handlekit => prepare::<hk::Handlekit>(workload, n, rng),
            Contender::Hecs => prepare::<peer_hecs::Hecs>(workload, n, rng),
            Contender::Bevy => prepare::<peer_bevy::Bevy>(workload, n, rng),
            Contender::BevySparse => {
                (workload == EcsWorkload::AddRemove).then(|| peer_bevy::add_remove_sparse(n))
            }
            Contender::Shipyard => prepare::<peer_shipyard::Shipyard>(workload, n, rng),
            Contender::Legion => prepare::<peer_legion::Legion>(workload, n, rng),
            Contender::Specs => prepare::<peer_specs::Specs>(workload, n, rng),
            Contender::Planck => prepare::<peer_planck::Planck>(workload, n, rng),
            Contender::Vec => plain_vec_iter(n, workload.form()),
        }
    }
}

/// A contender of the section: the suite's workloads written in its own
/// idioms, each returning its measured section with the setup done. The
/// dispatch from a workload, the timing and the `for` / `for_each` choice
/// are shared (see [`prepare`] and [`each`]).
///
/// A contender implements it on its world of simple entities:
/// `simple_insert` times making (and dropping) one.
pub(crate) trait Peer: SimpleWorld + Sized + 'static {
    /// `position += velocity` over the `n` simple entities of `world`.
    fn simple_iter(world: Self, n: usize, form: Form) -> Prepared;
    /// `data *= 2` over the 26 fragmenting types.
    fn frag_iter(form: Form) -> Prepared;
    /// The parallel `heavy_compute`, where the contender has a parallel
    /// pass.
    fn heavy_compute(_n: usize) -> Option<Prepared> {
        None
    }
    /// The three swapping systems over `n_each` entities of each kind.
    fn schedule(n_each: usize) -> Prepared;
    /// Add `SB` to `n` entities, then remove it.
    fn add_remove(n: usize) -> Prepared;
    /// `n` lookups of `Position` in random order.
    fn random_get(n: usize, rng: &mut Rng) -> Prepared;
    /// The same lookups, each through a call that borrows for it alone
    /// (what a per-entity `get` on a shared world costs): `random_get`
    /// itself where its lookup is such a call.
    fn random_get_call(n: usize, rng: &mut Rng) -> Prepared {
        Self::random_get(n, rng)
    }
    /// A round trip through a whole-world serializer, where the contender
    /// has one.
    fn serialize(_n: usize, _text: bool) -> Option<Prepared> {
        None
    }
    /// Rows of the contender's own (handlekit-ecs's second idioms).
    fn other(_workload: EcsWorkload, _n: usize, _rng: &mut Rng) -> Option<Prepared> {
        None
    }
}

/// Sets up `workload` at `n` on `P`; `None` for a workload it does not
/// run.
fn prepare<P: Peer>(workload: EcsWorkload, n: usize, rng: &mut Rng) -> Option<Prepared> {
    use EcsWorkload as W;
    match workload {
        W::SimpleInsert => Some(Prepared::once(n, move || {
            black_box(P::simple(n));
        })),
        W::SimpleIter | W::SimpleIterEach => Some(P::simple_iter(P::simple(n), n, workload.form())),
        W::FragIter | W::FragIterEach => Some(P::frag_iter(workload.form())),
        W::HeavyCompute => P::heavy_compute(n),
        W::Schedule => Some(P::schedule(n / 4)),
        W::AddRemove => Some(P::add_remove(n)),
        W::RandomGet => Some(P::random_get(n, rng)),
        W::RandomGetCall => Some(P::random_get_call(n, rng)),
        W::SerializeBinary | W::SerializeText => P::serialize(n, workload == W::SerializeText),
        _ => P::other(workload, n, rng),
    }
}

/// A pass over `items` in `form`: a `for` loop calling `body`, or
/// `items.into_iter().for_each(body)`. Inlined, the `for` loop is the loop a user
/// writes with `body` as its block.
#[inline(always)]
pub(crate) fn each<I: IntoIterator>(items: I, form: Form, mut body: impl FnMut(I::Item)) {
    match form {
        Form::For => {
            for item in items {
                body(item);
            }
        }
        Form::Fold => items.into_iter().for_each(body),
    }
}

/// A world that spawns bundles of type `B` in one batch (handlekit-ecs's,
/// hecs's and bevy's `spawn_batch`, shipyard's `bulk_add_entity`): what
/// the setup code the peers share needs of them.
pub(crate) trait SpawnBatch<B>: Default {
    type Entity: Copy;
    /// Spawns `bundles`; their entities, in order (hecs and bevy spawn as
    /// the iterator is consumed, and the rest when it is dropped).
    fn batch(&mut self, bundles: impl Iterator<Item = B>) -> impl Iterator<Item = Self::Entity>;
}

/// A new world of `bundles`, spawned in one batch, and their entities.
pub(crate) fn spawned<W: SpawnBatch<B>, B>(
    bundles: impl Iterator<Item = B>,
) -> (W, Vec<W::Entity>) {
    let mut world = W::default();
    let entities = world.batch(bundles).collect();
    (world, entities)
}

/// A contender's world of simple entities.
pub(crate) trait SimpleWorld {
    /// A new world of `n` simple entities, spawned the contender's fastest
    /// way.
    fn simple(n: usize) -> Self;
}

/// One batch, where the contender spawns batches.
impl<W: SpawnBatch<data::Simple>> SimpleWorld for W {
    fn simple(n: usize) -> W {
        let mut world = W::default();
        drop(world.batch((0..n).map(|_| data::simple())));
        world
    }
}

/// `schedule` on a contender with no scheduler (handlekit-ecs, hecs): a new
/// world of `n_each` entities of each kind, spawned in batches, and the
/// plan a scheduler would run, on rayon's pool: `ab` (A↔B) on its own
/// thread, `cd_ce` (C↔D then C↔E, both write C) on another.
pub(crate) fn joined_schedule<W>(
    n_each: usize,
    ab: impl Fn(&W) + Send + Sync + 'static,
    cd_ce: impl Fn(&W) + Send + Sync + 'static,
) -> Prepared
where
    W: SpawnBatch<(data::SA, data::SB)>
        + SpawnBatch<(data::SA, data::SB, data::SC)>
        + SpawnBatch<(data::SA, data::SB, data::SC, data::SD)>
        + SpawnBatch<(data::SA, data::SB, data::SC, data::SE)>
        + Send
        + Sync
        + 'static,
{
    let mut world = W::default();
    crate::for_each_schedule_kind!(|kind| drop(world.batch((0..n_each).map(|_| kind))));
    Prepared::on_pool(4 * n_each, move || {
        let world = &world;
        rayon::join(|| ab(world), || cd_ce(world));
    })
}

/// `despawn_front` on a contender that spawns in batches and has no call to
/// give memory back: `despawn` despawns one entity.
pub(crate) fn despawn_front_batch<W: SpawnBatch<data::Simple>>(
    n: usize,
    placeholder: W::Entity,
    mut despawn: impl FnMut(&mut W, W::Entity),
    left: impl FnOnce(&mut W) -> Option<usize>,
    release: &'static str,
) -> DespawnFront {
    let spawn = |handles: &mut [W::Entity]| {
        let mut world = W::default();
        for (slot, e) in handles
            .iter_mut()
            .zip(world.batch((0..n).map(|_| data::simple())))
        {
            *slot = e;
        }
        world
    };
    let despawn_all = |world: &mut W, front: &[W::Entity]| {
        for &e in front {
            despawn(world, e);
        }
    };
    despawn_front_with(n, placeholder, spawn, despawn_all, left, release)
}

/// A `random_get` row on a contender that spawns in batches: `pass` looks
/// up the entities of `lookups` (see [`located_world`]).
pub(crate) fn random_gets<W: SpawnBatch<(data::Position, data::Velocity)> + 'static>(
    n: usize,
    rng: &mut Rng,
    mut pass: impl FnMut(&mut W, &[W::Entity]) + 'static,
) -> Prepared {
    let (mut world, lookups) = located_world::<W>(n, rng);
    Prepared::passes(n, move || pass(&mut world, &lookups))
}

/// `random_get`'s setup: a new world of `n` located entities, spawned in
/// one batch, and the order of the lookups (see [`random_lookups`]).
pub(crate) fn located_world<W: SpawnBatch<(data::Position, data::Velocity)>>(
    n: usize,
    rng: &mut Rng,
) -> (W, Vec<W::Entity>) {
    let (world, entities) = spawned((0..n).map(data::located));
    (world, random_lookups(&entities, rng))
}

/// A `random_get` pass: `x_of` each of `lookups` (a peer's lookup of
/// `Position`, its `x`, 0 where none is found), summed and kept from the
/// optimizer. Inlined, it is the loop a user writes with the lookup as its
/// block, as [`each`] is.
#[inline(always)]
pub(crate) fn sum_lookups<E: Copy>(lookups: &[E], mut x_of: impl FnMut(E) -> f32) {
    let mut sum = 0.0f32;
    for &e in lookups {
        sum += x_of(e);
    }
    black_box(sum);
}

/// Seed 004's `despawn_front` on one contender: `spawn` makes a world of
/// `n` simple entities and writes their entities to the handles (allocated
/// before the probe starts, so not counted); `despawn` despawns the
/// oldest 90% of them and gives memory back as the contender can (timed);
/// `left` counts the live entities, where the contender can tell.
pub(crate) fn despawn_front_with<W, E: Copy>(
    n: usize,
    placeholder: E,
    spawn: impl FnOnce(&mut [E]) -> W,
    despawn: impl FnOnce(&mut W, &[E]),
    left: impl FnOnce(&mut W) -> Option<usize>,
    release: &'static str,
) -> DespawnFront {
    let mut handles = vec![placeholder; n];
    let probe = Probe::start();
    let mut world = spawn(&mut handles);
    let peak = probe.read();
    let despawned = n - n / 10;
    let start = Instant::now();
    despawn(&mut world, &handles[..despawned]);
    let elapsed = start.elapsed();
    let after = probe.read();
    if let Some(left) = left(&mut world) {
        assert_eq!(left, n - despawned);
    }
    drop(world);
    DespawnFront {
        peak,
        after,
        elapsed,
        despawned,
        release,
    }
}

const HANDLEKIT: &str = "handlekit-ecs";

/// Every name the filter may pick: the contenders and the two
/// `collect_pause` rows.
pub fn container_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Contender::ALL.iter().map(|c| c.name()).collect();
    names.extend(PAUSE_ORDERS.iter().map(|(name, _)| *name));
    names
}

/// Every workload name of the section.
pub fn workload_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = EcsWorkload::ALL.iter().map(|w| w.name()).collect();
    names.extend(SCALE_NAMES);
    names
}

/// The sizes of the section in one mode.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Sizes {
    /// The suite's size: 10,000 entities.
    pub small: usize,
    /// Beyond the suite: 1,000,000 entities.
    pub large: usize,
    /// `heavy_compute` and the serialization workloads: 1,000.
    pub heavy: usize,
    /// `despawn_front`: 1,000,000.
    pub despawn: usize,
    /// `collect_pause`: 100,000 and 10,000,000 rows.
    pub pause: [usize; 2],
}

impl Sizes {
    pub fn for_mode(mode: &str) -> Sizes {
        match mode {
            "smoke" => Sizes {
                small: 256,
                large: 2048,
                heavy: 64,
                despawn: 8192,
                pause: [8192, 65_536],
            },
            "quick" => Sizes {
                small: 10_000,
                large: 100_000,
                heavy: 1000,
                despawn: 100_000,
                pause: [100_000, 1_000_000],
            },
            _ => Sizes {
                small: 10_000,
                large: 1_000_000,
                heavy: 1000,
                despawn: 1_000_000,
                pause: [100_000, 10_000_000],
            },
        }
    }

    /// The entity counts `workload` runs at.
    pub fn of(&self, workload: EcsWorkload) -> Vec<usize> {
        match workload {
            EcsWorkload::SimpleInsert => vec![self.small],
            EcsWorkload::SimpleIter
            | EcsWorkload::SimpleIterEach
            | EcsWorkload::AddRemove
            | EcsWorkload::AddRemoveColumn
            | EcsWorkload::RandomGet
            | EcsWorkload::RandomGetCall
            | EcsWorkload::RandomGetQuery
            | EcsWorkload::RandomGetMut
            | EcsWorkload::RandomHas => vec![self.small, self.large],
            EcsWorkload::FragIter | EcsWorkload::FragIterEach => {
                vec![26 * data::FRAG_PER_TYPE]
            }
            EcsWorkload::HeavyCompute
            | EcsWorkload::SerializeBinary
            | EcsWorkload::SerializeText => vec![self.heavy],
            // N/4 entities of each of the four kinds.
            EcsWorkload::Schedule => vec![4 * self.small],
        }
    }
}

/// A contender's measured section, its setup done: a closure that owns
/// the world (and whatever else the contender keeps between passes), and
/// how it is timed.
pub(crate) struct Prepared {
    /// Operations one run of the section does.
    ops: usize,
    section: Section,
}

enum Section {
    /// Timed once (it changes the world or makes one).
    Once(Box<dyn FnMut()>),
    /// Repeated on the same setup up to the budget.
    Passes(Box<dyn FnMut()>),
    /// Repeated on a thread of rayon's pool (see [`on_pool`]).
    PoolPasses(Box<dyn FnMut() + Send>),
}

impl Prepared {
    pub(crate) fn once(ops: usize, section: impl FnMut() + 'static) -> Prepared {
        Prepared {
            ops,
            section: Section::Once(Box::new(section)),
        }
    }

    pub(crate) fn passes(ops: usize, section: impl FnMut() + 'static) -> Prepared {
        Prepared {
            ops,
            section: Section::Passes(Box::new(section)),
        }
    }

    pub(crate) fn on_pool(ops: usize, section: impl FnMut() + Send + 'static) -> Prepared {
        Prepared {
            ops,
            section: Section::PoolPasses(Box::new(section)),
        }
    }

    /// Runs the section as its kind asks.
    fn time(self, budget: Budget) -> Timed {
        let ops = self.ops;
        match self.section {
            Section::Once(section) => time(ops, section),
            Section::Passes(section) => time_passes(ops, budget, section),
            Section::PoolPasses(section) => on_pool(move || time_passes(ops, budget, section)),
        }
    }
}

/// One run of `workload` on `contender` at `n`, with its own setup.
fn run(
    contender: Contender,
    workload: EcsWorkload,
    n: usize,
    rng: &mut Rng,
    budget: Budget,
) -> Timed {
    contender
        .prepare(workload, n, rng)
        .unwrap_or_else(|| unreachable!("{} does not run {}", contender.name(), workload.name()))
        .time(budget)
}

/// The physical bound of `simple_iter`: two `Vec`s zipped, in a `for` loop
/// or `for_each`.
fn plain_vec_iter(n: usize, form: Form) -> Option<Prepared> {
    let (_, position, _, velocity) = data::simple();
    let mut positions = vec![position; n];
    let velocities = vec![velocity; n];
    Some(Prepared::passes(n, move || {
        let pairs = positions.iter_mut().zip(&velocities);
        each(pairs, form, |(p, v)| p.0 += v.0);
        black_box(&positions);
    }))
}

/// One sample: ns per operation, repeating the run (each with its own
/// setup) until the budget's time is reached.
pub fn sample(
    contender: Contender,
    workload: EcsWorkload,
    n: usize,
    seed: u64,
    budget: Budget,
) -> f64 {
    budget.sample(seed, |rng| run(contender, workload, n, rng, budget))
}

/// Memory a world holds, as the system and the allocator see it.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Footprint {
    /// Growth of the process's resident memory (`/proc/self/statm`), after
    /// the C allocator was asked to give its free memory back
    /// (`malloc_trim`); `None` where it cannot be read.
    pub resident: Option<usize>,
    /// Growth of the bytes allocated through the global allocator (the
    /// counting allocator; handlekit-ecs's columns are mapped directly and
    /// do not show here).
    pub heap: usize,
}

/// The baseline of a memory measurement.
pub(crate) struct Probe {
    resident: Option<usize>,
    heap: usize,
}

impl Probe {
    /// Trims the C allocator and notes the process's memory.
    pub(crate) fn start() -> Probe {
        crate::alloc::trim();
        Probe {
            resident: resident_bytes(),
            heap: crate::alloc::live_bytes(),
        }
    }

    /// The growth since [`start`](Self::start), after trimming again.
    pub(crate) fn read(&self) -> Footprint {
        crate::alloc::trim();
        Footprint {
            resident: resident_bytes()
                .zip(self.resident)
                .map(|(now, then)| now.saturating_sub(then)),
            heap: crate::alloc::live_bytes().saturating_sub(self.heap),
        }
    }
}

/// Runs `timed` on a thread of rayon's pool, where a rayon-based scheduler
/// runs its systems: a `rayon::join` in them then starts on a worker (one
/// half runs at once, an idle worker steals the other) instead of on the
/// main thread, which would sleep through every pass and be woken after
/// it. Timed from the main thread, `schedule` measured that wake-up: its
/// cells jumped between 0.3 and 1.0 ns per entity from run to run, for
/// every contender. For the contenders whose systems run on rayon
/// (handlekit-ecs, hecs, shipyard); bevy_ecs has its own executor.
pub(crate) fn on_pool<R: Send>(timed: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| timed())
}

/// The process's resident memory, from `/proc/self/statm`.
pub fn resident_bytes() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * crate::alloc::page_size())
}

/// What a contender's `despawn_front` did.
pub(crate) struct DespawnFront {
    peak: Footprint,
    after: Footprint,
    elapsed: Duration,
    despawned: usize,
    release: &'static str,
}

/// One contender's `despawn_front`: spawn N simple entities, despawn the
/// oldest 90%, give memory back as the contender can.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DespawnRow {
    pub container: &'static str,
    pub n: usize,
    pub peak: Footprint,
    pub after: Footprint,
    /// `after.resident ÷ peak.resident`.
    pub resident_ratio: Option<f64>,
    /// ns per despawned entity, despawn and collection together (one run).
    pub ns_per_despawn: f64,
    /// What the contender did to give memory back.
    pub release: &'static str,
}

impl DespawnRow {
    /// The row's figures as the terminal and Markdown tables print them:
    /// contender, N, peak and after resident MiB, after ÷ peak, peak and
    /// after heap MiB, ns per despawn, release.
    fn fields(&self) -> [String; 9] {
        [
            self.container.to_owned(),
            self.n.to_string(),
            mib(self.peak.resident),
            mib(self.after.resident),
            self.resident_ratio
                .map_or_else(|| "-".into(), |r| format!("{:.1}%", 100.0 * r)),
            format!("{:.1}", self.peak.heap as f64 / MIB),
            format!("{:.1}", self.after.heap as f64 / MIB),
            format!("{:.1}", self.ns_per_despawn),
            self.release.to_owned(),
        ]
    }
}

/// The orders `collect_pause` measures, as the names of its rows.
///
/// `Order::Any` only: it frees every row it examines, so successive calls
/// each meet fresh half-dead rows. `Order::Preserve` compacts the live rows
/// it finds at the front of the window, so in a half-dead world the next
/// calls meet a growing live run until a whole budget is live and a call
/// frees nothing (as `World::collect` documents); timed that way, its
/// calls measure that state, not a pause.
pub const PAUSE_ORDERS: [(&str, handlekit_ecs::Order); 1] =
    [("collect(Any)", handlekit_ecs::Order::Any)];

/// The rows one `collect(PAUSE_BUDGET, ..)` examines.
pub const PAUSE_BUDGET: usize = 4096;

/// What an ECS goal cell is measured against (in the same row, so side
/// by side).
#[derive(Clone, Copy)]
enum Others {
    /// The fastest peer of a workload, in each repeat.
    Peers(&'static str),
    /// One contender's cell of a workload.
    Cell(&'static str, &'static str),
}

/// Everything the ECS section measured.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct EcsResults {
    pub sizes: Option<Sizes>,
    pub cells: Vec<Cell>,
    pub despawn_front: Vec<DespawnRow>,
    /// `collect_pause`: workload `collect_pause`, container the order, ns
    /// per call.
    pub collect_pause: Vec<Cell>,
}

/// Runs `despawn_front` on `contender` (one run: the figures are memory,
/// and the time is informative).
pub fn despawn_front(contender: Contender, n: usize) -> Option<DespawnRow> {
    let done = match contender {
        Contender::Handlekit => hk::despawn_front(n),
        Contender::Hecs => peer_hecs::despawn_front(n),
        Contender::Bevy => peer_bevy::despawn_front(n),
        Contender::Shipyard => peer_shipyard::despawn_front(n),
        // Seed 004's measurement of the stores the section started with.
        Contender::BevySparse
        | Contender::Legion
        | Contender::Specs
        | Contender::Planck
        | Contender::Vec => return None,
    };
    let resident_ratio = done
        .after
        .resident
        .zip(done.peak.resident)
        .filter(|&(_, peak)| peak > 0)
        .map(|(after, peak)| after as f64 / peak as f64);
    Some(DespawnRow {
        container: contender.name(),
        n,
        peak: done.peak,
        after: done.after,
        resident_ratio,
        ns_per_despawn: done.elapsed.as_nanos() as f64 / done.despawned.max(1) as f64,
        release: done.release,
    })
}

/// `collect_pause`: worlds of `sizes` rows with a random half dead, one
/// per order and size; `repeats` interleaved samples of the time of one
/// `collect(PAUSE_BUDGET, order)` each. A world is rebuilt (untimed) once
/// calls have examined half of its first rows, so every call meets rows of
/// the same density.
pub fn collect_pause(
    orders: &[(&'static str, handlekit_ecs::Order)],
    sizes: [usize; 2],
    repeats: usize,
    seed: u64,
) -> Vec<Cell> {
    let mut rng = Rng::new(seed);
    type Pause = (
        &'static str,
        handlekit_ecs::Order,
        usize,
        handlekit_ecs::World,
        usize,
    );
    let mut worlds: Vec<Pause> = Vec::new();
    for &(name, order) in orders {
        for n in sizes {
            worlds.push((name, order, n, hk::half_dead_world(n, &mut rng), 0));
        }
    }
    let mut samples = vec![Vec::new(); worlds.len()];
    for repeat in 0..repeats {
        for offset in 0..worlds.len() {
            let slot = (offset + repeat) % worlds.len();
            let (_, order, n, world, calls) = &mut worlds[slot];
            if *calls >= (*n / 2 / PAUSE_BUDGET).max(1) {
                *world = hk::half_dead_world(*n, &mut rng);
                *calls = 0;
            }
            *calls += 1;
            let start = Instant::now();
            let done = world.collect(PAUSE_BUDGET, *order);
            let elapsed = start.elapsed();
            black_box(done);
            samples[slot].push(elapsed.as_nanos() as f64);
        }
    }
    worlds
        .iter()
        .zip(samples)
        .map(|((name, _, n, _, _), mut values)| {
            values.sort_by(f64::total_cmp);
            Cell {
                workload: "collect_pause",
                container: name,
                family: Family::Handlekit,
                value_type: SECTION,
                n: *n,
                median_ns: crate::median(&values),
                min_ns: values[0],
                max_ns: values[values.len() - 1],
                samples: values,
            }
        })
        .collect()
}

impl EcsResults {
    fn cell(&self, workload: &str, container: &str, n: usize) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.workload == workload && c.container == container && c.n == n)
    }

    /// The fastest peer's cell (not handlekit, not the `Vec` bound).
    fn best_peer(&self, workload: &str, n: usize) -> Option<&Cell> {
        self.peers(workload, n)
            .into_iter()
            .min_by(|a, b| a.median_ns.total_cmp(&b.median_ns))
    }

    /// The peers' cells of a row (not handlekit, not the `Vec` bound).
    fn peers(&self, workload: &str, n: usize) -> Vec<&Cell> {
        self.cells
            .iter()
            .filter(|c| c.workload == workload && c.n == n)
            .filter(|c| c.family == Family::Generational)
            .collect()
    }

    fn sizes_of(&self, workload: &str) -> Vec<usize> {
        let mut sizes: Vec<usize> = self
            .cells
            .iter()
            .chain(&self.collect_pause)
            .filter(|c| c.workload == workload)
            .map(|c| c.n)
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    fn is_empty(&self) -> bool {
        self.cells.is_empty() && self.despawn_front.is_empty() && self.collect_pause.is_empty()
    }

    /// A goal of `subject` against the fastest of `others` in each repeat,
    /// at every size of `workload` measured: the figure is `subject ÷
    /// others`, per repeat.
    fn ratio_goal(
        &self,
        goal: String,
        workload: &'static str,
        subject: &'static str,
        others: Others,
        limit: f64,
    ) -> Goal {
        let mut rows = Vec::new();
        for n in self.sizes_of(workload) {
            let Some(ours) = self.cell(workload, subject, n) else {
                continue;
            };
            let theirs = match others {
                Others::Peers(workload) => self.peers(workload, n),
                Others::Cell(workload, container) => {
                    self.cell(workload, container, n).into_iter().collect()
                }
            };
            if let Some(spread) = Spread::per_repeat(ours, &theirs, false) {
                rows.push(GoalRow::new(
                    subject,
                    ours.workload,
                    SECTION,
                    n,
                    spread,
                    Bound::AtMost(limit),
                ));
            }
        }
        Goal::new(goal, rows)
    }

    /// Issue 21's goals, as ratios from this run.
    pub fn goals(&self) -> Vec<Goal> {
        if self.is_empty() {
            return Vec::new();
        }
        use EcsWorkload as W;
        let mut goals = Vec::new();
        // Issue 31, goal 2: `for` loops over queries, the headline.
        for (looped, each) in [
            (W::SimpleIter, W::SimpleIterEach),
            (W::FragIter, W::FragIterEach),
        ] {
            let (name, each) = (looped.name(), each.name());
            goals.push(self.ratio_goal(
                format!("ECS {name}, `for` loops: handlekit-ecs ≤ 1.0× the fastest peer's `for` loop (figure: ÷ fastest peer)"),
                name,
                HANDLEKIT,
                Others::Peers(name),
                1.0,
            ));
            goals.push(self.ratio_goal(
                format!("ECS {name}: handlekit-ecs's `for` loop ≤ 1.1× its own `for_each` (figure: for ÷ for_each, side by side)"),
                name,
                HANDLEKIT,
                Others::Cell(each, HANDLEKIT),
                1.1,
            ));
            goals.push(self.ratio_goal(
                format!("ECS {each}, `for_each`: handlekit-ecs ≤ 1.0× the fastest peer's `for_each` (figure: ÷ fastest peer)"),
                each,
                HANDLEKIT,
                Others::Peers(each),
                1.0,
            ));
        }
        for workload in [W::SimpleIter, W::SimpleIterEach] {
            let name = workload.name();
            goals.push(self.ratio_goal(
                format!("ECS {name}: handlekit-ecs ≤ 1.2× the same loop over plain Vecs (figure: ÷ Vec)"),
                name,
                HANDLEKIT,
                Others::Cell(name, "Vec"),
                1.2,
            ));
        }
        for workload in [W::SimpleInsert, W::HeavyCompute, W::Schedule] {
            let name = workload.name();
            goals.push(self.ratio_goal(
                format!(
                    "ECS {name}: handlekit-ecs ≤ 1.0× the fastest peer (figure: ÷ fastest peer)"
                ),
                name,
                HANDLEKIT,
                Others::Peers(name),
                1.0,
            ));
        }
        // Issue 31, goal 3: the plain per-entity calls against every peer
        // in its own idiom, and `ColumnMut` well ahead.
        let calls = [
            (W::AddRemove, W::AddRemove, "insert_one / remove_one", 1.0),
            (W::AddRemoveColumn, W::AddRemove, "ColumnMut", 0.7),
            (W::RandomGet, W::RandomGet, "World::get", 1.0),
            (
                W::RandomGetCall,
                W::RandomGetCall,
                "World::get against the peers' per-call lookups",
                1.0,
            ),
            (W::RandomGetMut, W::RandomGet, "World::get_mut", 1.0),
            (W::RandomHas, W::RandomGet, "World::has", 1.0),
            (W::RandomGetQuery, W::RandomGet, "a query's get", 1.0),
        ];
        for (ours, row, idiom, limit) in calls {
            let (name, row) = (ours.name(), row.name());
            goals.push(self.ratio_goal(
                format!("ECS {row}, {idiom}: handlekit-ecs ≤ {limit:.1}× the fastest peer (every peer in its own idiom; figure: ÷ fastest peer)"),
                name,
                HANDLEKIT,
                Others::Peers(row),
                limit,
            ));
        }
        for workload in [W::SerializeBinary, W::SerializeText] {
            let name = workload.name();
            goals.push(self.ratio_goal(
                format!("ECS {name}: handlekit-ecs ≤ 1.0× hecs (figure: handlekit-ecs ÷ hecs)"),
                name,
                HANDLEKIT,
                Others::Cell(name, "hecs"),
                1.0,
            ));
        }
        let rows: Vec<GoalRow> = self
            .despawn_front
            .iter()
            .filter(|row| row.container == HANDLEKIT)
            .filter_map(|row| {
                row.resident_ratio.map(|figure| {
                    GoalRow::new(
                        HANDLEKIT,
                        "despawn_front",
                        SECTION,
                        row.n,
                        Spread::single(figure),
                        Bound::AtMost(0.15),
                    )
                })
            })
            .collect();
        goals.push(Goal::new(
            "ECS despawn_front: after collection, handlekit-ecs's resident memory ≤ 15% of its peak (one run; figure: after ÷ peak)".into(),
            rows,
        ));
        let mut rows = Vec::new();
        for (name, _) in PAUSE_ORDERS {
            let pause = |n: usize| {
                self.collect_pause
                    .iter()
                    .find(|c| c.container == name && c.n == n)
            };
            let sizes = self.sizes_of("collect_pause");
            if let (Some(&small), Some(&large)) = (sizes.first(), sizes.last())
                && let (Some(small), Some(large)) = (pause(small), pause(large))
                && large.n > small.n
                && let Some(spread) = Spread::per_repeat(large, &[small], false)
            {
                rows.push(GoalRow::new(
                    HANDLEKIT,
                    name,
                    SECTION,
                    large.n,
                    spread,
                    Bound::AtMost(1.2),
                ));
            }
        }
        goals.push(Goal::new(
            format!(
                "ECS collect_pause: one collect({PAUSE_BUDGET}, ..) in the largest world ≤ 1.2× in the smallest (figure: largest ÷ smallest, per order)"
            ),
            rows,
        ));
        goals
    }

    /// The contenders in table order.
    fn contenders(&self) -> Vec<&'static str> {
        Contender::ALL
            .iter()
            .map(|c| c.name())
            .filter(|name| self.cells.iter().any(|c| c.container == *name))
            .collect()
    }

    /// For each workload: its rows (label, one entry per contender, ratio).
    fn tables(&self) -> Vec<(EcsWorkload, Vec<Row>)> {
        let contenders = self.contenders();
        let mut tables = Vec::new();
        for workload in EcsWorkload::ALL {
            let name = workload.name();
            let mut rows = Vec::new();
            for n in self.sizes_of(name) {
                let best = self
                    .cells
                    .iter()
                    .filter(|c| c.workload == name && c.n == n)
                    .min_by(|a, b| a.median_ns.total_cmp(&b.median_ns))
                    .map(|c| c.container);
                let cells = contenders
                    .iter()
                    .map(|&contender| median_cell(self.cell(name, contender, n), best))
                    .collect();
                let ratio = ratio_cell(self.cell(name, HANDLEKIT, n), self.best_peer(name, n));
                rows.push((format!("N={n}"), cells, ratio));
            }
            if !rows.is_empty() {
                tables.push((workload, rows));
            }
        }
        tables
    }

    pub fn terminal(&self) -> String {
        self.render(&Terminal)
    }

    pub fn markdown(&self) -> String {
        self.render(&Markdown)
    }

    pub fn html(&self) -> String {
        self.render(&Html)
    }

    /// The section in `layout`'s form (nothing if nothing was measured):
    /// the introduction, the peers, a table per workload, and seed 004's
    /// tables where they have rows.
    fn render(&self, layout: &dyn Layout) -> String {
        let mut out = String::new();
        if self.is_empty() {
            return out;
        }
        layout.intro(&mut out);
        for line in peers_not_built() {
            layout.note(&mut out, &line);
        }
        let contenders = self.contenders();
        for (workload, rows) in self.tables() {
            layout.table(&mut out, workload, &contenders, &rows);
        }
        if !self.despawn_front.is_empty() {
            layout.despawn_front(&mut out, &self.despawn_front);
        }
        if !self.collect_pause.is_empty() {
            layout.collect_pause(&mut out, &self.collect_pause);
        }
        out
    }

    /// For `--smoke`: every cell of the plan has a finite number, and the
    /// seed-004 rows are there.
    pub fn smoke_check(&self, planned: usize) -> Result<(), String> {
        if self.cells.len() != planned {
            return Err(format!(
                "ECS: {} cells, {planned} planned",
                self.cells.len()
            ));
        }
        for cell in self.cells.iter().chain(&self.collect_pause) {
            if !(cell.median_ns.is_finite() && cell.median_ns > 0.0) {
                return Err(format!(
                    "ECS {} {} N={}: not a time ({})",
                    cell.workload, cell.container, cell.n, cell.median_ns
                ));
            }
        }
        for row in &self.despawn_front {
            if row.peak.resident.is_some_and(|peak| peak == 0) {
                return Err(format!(
                    "ECS despawn_front {}: no resident growth",
                    row.container
                ));
            }
        }
        Ok(())
    }
}

/// One of the forms the ECS section is written in (terminal, Markdown,
/// HTML): [`EcsResults::render`] walks the section's parts in order, and
/// the form writes each its way.
trait Layout {
    /// The heading and what the tables show.
    fn intro(&self, out: &mut String);
    /// A line about the peers (those that do not build here).
    fn note(&self, out: &mut String, line: &str);
    /// A workload's table: a column per contender, a row per size.
    fn table(&self, out: &mut String, workload: EcsWorkload, contenders: &[&str], rows: &[Row]);
    /// Seed 004's `despawn_front`, a row per contender.
    fn despawn_front(&self, out: &mut String, rows: &[DespawnRow]);
    /// Seed 004's `collect_pause`, a row per order (at least one).
    fn collect_pause(&self, out: &mut String, cells: &[Cell]);
}

/// The section as the runner prints it.
struct Terminal;

impl Layout for Terminal {
    fn intro(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "\nECS section — median ns, * = best in row, ratio = handlekit-ecs ÷ fastest peer (Vec is the bound, not a peer)"
        );
    }

    fn note(&self, out: &mut String, line: &str) {
        let _ = writeln!(out, "{line}");
    }

    fn table(&self, out: &mut String, workload: EcsWorkload, contenders: &[&str], rows: &[Row]) {
        let _ = writeln!(out, "\n{} ({})", workload.name(), workload.unit());
        crate::text::terminal_table(out, 12, contenders, rows);
    }

    fn despawn_front(&self, out: &mut String, rows: &[DespawnRow]) {
        let _ = writeln!(
            out,
            "\ndespawn_front (spawn N simple entities, despawn the oldest 90%, give memory back; MiB of growth over the start)"
        );
        let _ = writeln!(
            out,
            "  {:<14} {:>9} {:>12} {:>12} {:>8} {:>10} {:>10} {:>11}  release",
            "", "N", "peak RSS", "after RSS", "after/pk", "peak heap", "after heap", "ns/despawn"
        );
        for row in rows {
            let [container, n, peak, after, ratio, peak_heap, after_heap, ns, release] =
                row.fields();
            let _ = writeln!(
                out,
                "  {container:<14} {n:>9} {peak:>12} {after:>12} {ratio:>8} {peak_heap:>10} \
                 {after_heap:>10} {ns:>11}  {release}"
            );
        }
    }

    fn collect_pause(&self, out: &mut String, cells: &[Cell]) {
        let _ = writeln!(
            out,
            "\ncollect_pause (µs for one collect({PAUSE_BUDGET}, ..), half the rows dead, median of {} calls)",
            cells[0].samples.len()
        );
        for cell in cells {
            let [order, rows, median, min, max] = pause_fields(cell);
            let _ = writeln!(
                out,
                "  {order:<18} rows={rows:<9} {median:>9} µs (min {min}, max {max})"
            );
        }
    }
}

/// The section of `report.md`.
struct Markdown;

impl Layout for Markdown {
    fn intro(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "\n## ECS section\n\nThe workloads of rust-gamedev/ecs_bench_suite on its data, and seed 004's. Each \
             contender uses its own fastest idiom. `*` marks the best cell of a row; the last column is \
             handlekit-ecs ÷ the fastest peer (`Vec` is the physical bound, not a peer)."
        );
    }

    fn note(&self, out: &mut String, line: &str) {
        let _ = writeln!(out, "\n{line}");
    }

    fn table(&self, out: &mut String, workload: EcsWorkload, contenders: &[&str], rows: &[Row]) {
        let _ = writeln!(out, "\n### {} ({})\n", workload.name(), workload.unit());
        crate::text::markdown_table(out, contenders, "handlekit-ecs ÷ fastest peer", rows);
    }

    fn despawn_front(&self, out: &mut String, rows: &[DespawnRow]) {
        let _ = writeln!(
            out,
            "\n### despawn_front\n\nSpawn N simple entities, despawn the oldest 90%, give memory back as the \
             contender can. Resident: growth of the process's resident memory over the start (after \
             `malloc_trim`); heap: growth of the bytes allocated through the global allocator (handlekit-ecs's \
             columns are mapped directly, so they show in the resident figure only).\n\n\
             | contender | N | peak resident MiB | after MiB | after ÷ peak | peak heap MiB | after heap MiB | ns per despawn | release |\n\
             | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
        );
        for row in rows {
            let _ = writeln!(out, "| {} |", row.fields().join(" | "));
        }
    }

    fn collect_pause(&self, out: &mut String, cells: &[Cell]) {
        let _ = writeln!(
            out,
            "\n### collect_pause\n\nOne `collect({PAUSE_BUDGET}, ..)` in a world with half its rows dead (at \
             random); median of {} calls.\n\n| order | rows | median µs | min µs | max µs |\n| --- | --- | --- | --- | --- |",
            cells[0].samples.len()
        );
        for cell in cells {
            let _ = writeln!(out, "| {} |", pause_fields(cell).join(" | "));
        }
    }
}

/// The section of `report.html`.
struct Html;

impl Layout for Html {
    fn intro(&self, out: &mut String) {
        out.push_str("<h2>ECS section</h2><p>The workloads of rust-gamedev/ecs_bench_suite on its data, and seed 004's; median ns. \
                      * marks the best of a row; the last column is handlekit-ecs ÷ the fastest peer (Vec is the bound).</p>\n");
    }

    fn note(&self, out: &mut String, line: &str) {
        let _ = writeln!(out, "<p>{}</p>", escape(line));
    }

    fn table(&self, out: &mut String, workload: EcsWorkload, contenders: &[&str], rows: &[Row]) {
        let _ = write!(
            out,
            "<h3>{} <small>({})</small></h3><table><tr><th></th>",
            workload.name(),
            escape(workload.unit())
        );
        for name in contenders {
            let _ = write!(out, "<th>{}</th>", escape(name));
        }
        out.push_str("<th>handlekit-ecs ÷ fastest peer</th></tr>");
        for (label, cells, ratio) in rows {
            let _ = write!(out, "<tr><td>{label}</td>");
            for cell in cells {
                let _ = write!(out, "<td>{cell}</td>");
            }
            let _ = write!(out, "<td>{}</td></tr>", escape(ratio));
        }
        out.push_str("</table>\n");
    }

    fn despawn_front(&self, out: &mut String, rows: &[DespawnRow]) {
        out.push_str("<h3>despawn_front</h3><table><tr><th>contender</th><th>N</th><th>peak resident MiB</th>\
                      <th>after MiB</th><th>after ÷ peak</th><th>peak heap MiB</th><th>after heap MiB</th>\
                      <th>ns per despawn</th><th>release</th></tr>");
        for row in rows {
            let fields = row.fields();
            let (release, figures) = fields.split_last().expect("nine fields");
            let _ = write!(
                out,
                "<tr>{}<td style=\"text-align:left\">{}</td></tr>",
                html_cells(figures),
                escape(release)
            );
        }
        out.push_str("</table>\n");
    }

    fn collect_pause(&self, out: &mut String, cells: &[Cell]) {
        let _ = write!(
            out,
            "<h3>collect_pause</h3><table><tr><th>order</th><th>rows</th><th>median µs</th><th>min µs</th><th>max µs</th></tr>"
        );
        for cell in cells {
            let _ = write!(out, "<tr>{}</tr>", html_cells(&pause_fields(cell)));
        }
        out.push_str("</table>\n");
    }
}

/// One line per peer that does not build here, or one saying they all do.
fn peers_not_built() -> Vec<String> {
    if PEERS_NOT_BUILT.is_empty() {
        return vec![
            "Every ECS peer of ecs_bench_suite measured here builds on this toolchain (hecs, bevy_ecs, shipyard, legion, specs, planck_ecs).".into(),
        ];
    }
    PEERS_NOT_BUILT
        .iter()
        .map(|(peer, why)| format!("{peer}: not measured, it does not build here ({why})."))
        .collect()
}

/// A `collect_pause` cell's figures as the tables print them: order, rows,
/// and the median, lowest and highest µs.
fn pause_fields(cell: &Cell) -> [String; 5] {
    [
        cell.container.to_owned(),
        cell.n.to_string(),
        format!("{:.1}", cell.median_ns / 1e3),
        format!("{:.1}", cell.min_ns / 1e3),
        format!("{:.1}", cell.max_ns / 1e3),
    ]
}

/// `cells` as the cells of an HTML table row, escaped.
fn html_cells(cells: &[String]) -> String {
    cells
        .iter()
        .map(|c| format!("<td>{}</td>", escape(c)))
        .collect()
}

const MIB: f64 = (1 << 20) as f64;

fn mib(bytes: Option<usize>) -> String {
    bytes.map_or_else(|| "-".into(), |b| format!("{:.1}", b as f64 / MIB))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_shares_a_row_with_its_headline() {
        for workload in EcsWorkload::ALL {
            let row = workload.row();
            assert_eq!(row.row(), row, "{}", workload.name());
            // A row's forms run at the sizes of its headline.
            assert_eq!(
                Sizes::for_mode("full").of(workload),
                Sizes::for_mode("full").of(row)
            );
        }
        assert_eq!(EcsWorkload::SimpleIterEach.row(), EcsWorkload::SimpleIter);
        assert_eq!(EcsWorkload::SimpleIter.form(), Form::For);
        assert_eq!(EcsWorkload::FragIterEach.form(), Form::Fold);
        assert_eq!(EcsWorkload::AddRemoveColumn.row(), EcsWorkload::AddRemove);
    }

    #[test]
    fn second_idioms_are_handlekit_only_and_every_peer_runs_the_headlines() {
        for workload in EcsWorkload::ALL {
            assert!(Contender::Handlekit.runs(workload));
            for peer in Contender::ALL {
                if peer != Contender::Handlekit && workload.handlekit_only() {
                    assert!(!peer.runs(workload), "{} {}", peer.name(), workload.name());
                }
            }
        }
        for peer in [
            Contender::Hecs,
            Contender::Bevy,
            Contender::Shipyard,
            Contender::Legion,
            Contender::Specs,
            Contender::Planck,
        ] {
            for workload in [
                EcsWorkload::SimpleIter,
                EcsWorkload::SimpleIterEach,
                EcsWorkload::FragIter,
                EcsWorkload::FragIterEach,
                EcsWorkload::AddRemove,
                EcsWorkload::RandomGet,
                EcsWorkload::RandomGetCall,
            ] {
                assert!(peer.runs(workload), "{} {}", peer.name(), workload.name());
            }
        }
        assert!(Contender::Planck.holds(10_000) && !Contender::Planck.holds(1_000_000));
        assert!(Contender::Specs.holds(1_000_000));
    }
}
