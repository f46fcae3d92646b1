//! The ECS workloads on handlekit-ecs: `for` loops over `query_mut` for
//! the passes (and its `for_each` for the second form), `par_for_each`
//! for `heavy_compute`, `query` on a shared world under `rayon::join` for
//! `schedule`, the plain `insert_one` / `remove_one` / `get` / `get_mut` /
//! `has` calls (and a `ColumnMut` held across `add_remove`'s loops, and a
//! query's `get`, as second rows), and `collect` after despawning.

use std::hint::black_box;

use handlekit_ecs::serialize::Registry;
use handlekit_ecs::{Entity, Order, World};

use std::time::Instant;

use super::data::{self, Data, Position, Rotation, Transform, Velocity, SA, SB, SC, SD, SE};
use super::{DespawnFront, EcsWorkload, Peer, Prepared, Probe};
use crate::workloads::{Form, Rng};

/// The ECS section's workloads on handlekit-ecs.
pub(super) struct Handlekit;

impl Peer for Handlekit {
    type World = World;

    /// A world of `n` simple entities.
    fn simple_world(n: usize) -> Self::World {
        let mut world = World::new();
        world.spawn_batch((0..n).map(|_| data::simple()));
        world
    }

    /// The crate docs' first example: a `for` loop over `query_mut` (or its
    /// `for_each`).
    fn simple_iter(n: usize, form: Form) -> Prepared {
        let mut world = Self::simple_world(n);
        Prepared::passes(n, move || {
            let query = world.query_mut::<(&mut Position, &Velocity)>();
            match form {
                Form::For => {
                    for (p, v) in query {
                        p.0 += v.0;
                    }
                }
                Form::Fold => query.for_each(|(p, v)| p.0 += v.0),
            }
        })
    }

    fn frag_iter(form: Form) -> Prepared {
        let mut world = World::new();
        macro_rules! spawn {
            ($ty:path) => {
                world.spawn_batch((0..data::FRAG_PER_TYPE).map(|_| ($ty(0.0), Data(1.0))));
            };
        }
        crate::for_each_frag_type!(spawn);
        Prepared::passes(world.len(), move || {
            let query = world.query_mut::<&mut Data>();
            match form {
                Form::For => {
                    for d in query {
                        d.0 *= 2.0;
                    }
                }
                Form::Fold => query.for_each(|d| d.0 *= 2.0),
            }
        })
    }

    fn heavy_compute(n: usize) -> Option<Prepared> {
        let mut world = Self::simple_world(n);
        Some(Prepared::on_pool(n, move || {
            world
                .query_mut::<(&mut Position, &mut Transform)>()
                .par_for_each(|(p, t)| data::heavy(p, t));
        }))
    }

    fn schedule(n_each: usize) -> Prepared {
        let mut world = World::new();
        world.spawn_batch((0..n_each).map(|_| (SA(0.0), SB(0.0))));
        world.spawn_batch((0..n_each).map(|_| (SA(0.0), SB(0.0), SC(0.0))));
        world.spawn_batch((0..n_each).map(|_| (SA(0.0), SB(0.0), SC(0.0), SD(0.0))));
        world.spawn_batch((0..n_each).map(|_| (SA(0.0), SB(0.0), SC(0.0), SE(0.0))));
        // The three systems, scheduled as a scheduler would: A↔B on its own
        // thread, C↔D and C↔E (both write C) one after the other on another.
        // Each takes the run-time borrows of its columns on the shared world.
        Prepared::on_pool(4 * n_each, move || {
            let world = &world;
            rayon::join(
                || world.query::<(&mut SA, &mut SB)>().for_each(swap!(SA, SB)),
                || {
                    world.query::<(&mut SC, &mut SD)>().for_each(swap!(SC, SD));
                    world.query::<(&mut SC, &mut SE)>().for_each(swap!(SC, SE));
                },
            );
        })
    }

    /// Saves the world and loads it into a new one, through a registry that
    /// names the four component types (as hecs's column format does with its
    /// context): postcard for binary, JSON for text.
    fn serialize(n: usize, text: bool) -> Option<Prepared> {
        use serde::de::DeserializeSeed;
        let world = Self::simple_world(n);
        let registry = Registry::new()
            .component::<Transform>("transform")
            .component::<Position>("position")
            .component::<Rotation>("rotation")
            .component::<Velocity>("velocity");
        // The runner loads what it saved: trusted data, with no memory limit
        // (`Load::max_memory`), as peers load.
        Some(Prepared::once(n, move || {
            let loaded: World = if text {
                let json = serde_json::to_vec(&registry.save(&world)).expect("serialize");
                let mut deserializer = serde_json::Deserializer::from_slice(&json);
                registry
                    .load()
                    .max_memory(usize::MAX)
                    .deserialize(&mut deserializer)
                    .expect("deserialize")
            } else {
                let bytes = postcard::to_allocvec(&registry.save(&world)).expect("serialize");
                let mut deserializer = postcard::Deserializer::from_bytes(&bytes);
                registry
                    .load()
                    .max_memory(usize::MAX)
                    .deserialize(&mut deserializer)
                    .expect("deserialize")
            };
            assert_eq!(loaded.len(), world.len());
            black_box(loaded);
        }))
    }

    /// The plain calls, `insert_one` / `remove_one`.
    fn add_remove(n: usize) -> Prepared {
        add_remove_with(n, false)
    }

    /// The plain `World::get`.
    fn random_get(n: usize, rng: &mut Rng) -> Prepared {
        lookups(n, rng, EcsWorkload::RandomGet)
    }

    /// The plain `World::get`, as in `random_get`.
    fn random_get_call(n: usize, rng: &mut Rng) -> Prepared {
        lookups(n, rng, EcsWorkload::RandomGet)
    }

    /// The second idioms: a `ColumnMut`, `get_mut`, `has`, a query's `get`.
    fn other(workload: EcsWorkload, n: usize, rng: &mut Rng) -> Option<Prepared> {
        match workload {
            EcsWorkload::AddRemoveColumn => Some(add_remove_with(n, true)),
            EcsWorkload::RandomGetQuery | EcsWorkload::RandomGetMut | EcsWorkload::RandomHas => {
                Some(lookups(n, rng, workload))
            }
            _ => None,
        }
    }
}

/// `add_remove` with the plain per-entity calls (`insert_one` /
/// `remove_one`, as hecs users write it), or with a `ColumnMut` held across
/// both loops (as shipyard holds its `ViewMut`).
fn add_remove_with(n: usize, column: bool) -> Prepared {
    let mut world = World::new();
    let entities = world.spawn_batch((0..n).map(|i| (SA(i as f32),)));
    Prepared::once(n, move || {
        if column {
            let mut b = world.column_mut::<SB>();
            for &e in &entities {
                b.insert(e, SB(0.0)).expect("alive");
            }
            for &e in &entities {
                black_box(b.remove(e).expect("has SB"));
            }
        } else {
            for &e in &entities {
                world.insert_one(e, SB(0.0)).expect("alive");
            }
            for &e in &entities {
                black_box(world.remove_one::<SB>(e).expect("has SB"));
            }
        }
    })
}

/// `random_get` with the plain calls: `get` (the headline), `get_mut` or
/// `has`; or `RandomGetQuery`: `get` on a query borrowed once per pass.
fn lookups(n: usize, rng: &mut Rng, workload: EcsWorkload) -> Prepared {
    let mut world = World::new();
    let entities = world.spawn_batch((0..n).map(data::located));
    let lookups: Vec<Entity> = (0..n).map(|_| entities[rng.below(n)]).collect();
    Prepared::passes(n, move || {
        let mut sum = 0.0f32;
        match workload {
            EcsWorkload::RandomGetQuery => {
                let mut positions = world.query::<&Position>();
                for &e in &lookups {
                    sum += positions.get(e).map_or(0.0, |p| p.0.x);
                }
            }
            EcsWorkload::RandomGetMut => {
                for &e in &lookups {
                    sum += world.get_mut::<Position>(e).map_or(0.0, |p| p.0.x);
                }
            }
            EcsWorkload::RandomHas => {
                for &e in &lookups {
                    sum += f32::from(u8::from(world.has::<Position>(e)));
                }
            }
            _ => {
                for &e in &lookups {
                    sum += world.get::<Position>(e).map_or(0.0, |p| p.0.x);
                }
            }
        }
        black_box(sum);
    })
}

pub(super) fn despawn_front(n: usize) -> DespawnFront {
    let placeholder = Entity::from_bits(1 << 32).expect("generation 1");
    let mut handles = vec![placeholder; n];
    let probe = Probe::start();
    let mut world = World::new();
    for slot in &mut handles {
        *slot = world.spawn(data::simple());
    }
    let peak = probe.read();
    let despawned = n - n / 10;
    let start = Instant::now();
    for &e in &handles[..despawned] {
        world.despawn(e).expect("alive");
    }
    // Collect until nothing is left to collect.
    while world.row_count() > world.len() {
        world.collect(4096, Order::Preserve);
    }
    let elapsed = start.elapsed();
    let after = probe.read();
    assert_eq!(world.len(), n - despawned);
    drop(world);
    DespawnFront {
        peak,
        after,
        elapsed,
        despawned,
        release: "collect(4096, Order::Preserve) until no dead row is left",
    }
}

/// A world of `n` rows, half of them dead (chosen at random), with the
/// components of `random_get`.
pub(super) fn half_dead_world(n: usize, rng: &mut Rng) -> World {
    let mut world = World::new();
    let mut entities =
        world.spawn_batch((0..n).map(|_| (Position(data::Vec3::X), Velocity(data::Vec3::X))));
    rng.shuffle(&mut entities);
    for &e in &entities[..n / 2] {
        world.despawn(e).expect("alive");
    }
    world
}
