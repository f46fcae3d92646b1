//! The ECS workloads on handlekit-ecs: `for` loops over `query_mut` for
//! the passes (and its `for_each` for the second form), `par_for_each`
//! for `heavy_compute`, `query` on a shared world under `rayon::join` for
//! `schedule`, the plain `insert_one` / `remove_one` / `get` / `get_mut` /
//! `has` calls (and a `ColumnMut` held across `add_remove`'s loops, and a
//! query's `get`, as second rows), and `collect` after despawning.

use std::hint::black_box;

use handlekit_ecs::serialize::{Components, Registry};
use handlekit_ecs::{Entity, Order, World};

use super::data::{self, Data, Position, Rotation, Transform, Velocity, SA, SB, SC, SD, SE};
use super::{
    random_gets, sum_lookups, DespawnFront, EcsWorkload, Peer, Prepared, SimpleWorld as _,
    SpawnBatch,
};
use crate::workloads::{Form, Rng};

/// The ECS section's workloads on handlekit-ecs, on its world.
pub(super) type Handlekit = World;

impl Peer for Handlekit {
    /// The crate docs' first example: a `for` loop over `query_mut` (or its
    /// `for_each`).
    fn simple_iter(mut world: World, n: usize, form: Form) -> Prepared {
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
        crate::for_each_frag_type!(|F| world.spawn_batch(data::frag_bundles::<F>()));
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
        let mut world = World::simple(n);
        Some(Prepared::on_pool(n, move || {
            world
                .query_mut::<(&mut Position, &mut Transform)>()
                .par_for_each(|(p, t)| data::heavy(p, t));
        }))
    }

    /// The three systems as a scheduler would run them (see
    /// [`joined_schedule`](super::joined_schedule)), each taking the
    /// run-time borrows of its columns on the shared world.
    fn schedule(n_each: usize) -> Prepared {
        super::joined_schedule::<World>(
            n_each,
            |world| world.query::<(&mut SA, &mut SB)>().for_each(swap),
            |world| {
                world.query::<(&mut SC, &mut SD)>().for_each(swap);
                world.query::<(&mut SC, &mut SE)>().for_each(swap);
            },
        )
    }

    /// Saves the world and loads it into a new one, through a registry that
    /// names the four component types (as hecs's column format does with its
    /// context): postcard for binary, JSON for text.
    fn serialize(n: usize, text: bool) -> Option<Prepared> {
        let world = World::simple(n);
        let registry = Registry::new()
            .component::<Transform>("transform")
            .component::<Position>("position")
            .component::<Rotation>("rotation")
            .component::<Velocity>("velocity");
        Some(Prepared::once(n, move || {
            let loaded = if text {
                let json = serde_json::to_vec(&registry.save(&world)).expect("serialize");
                load(&registry, &mut serde_json::Deserializer::from_slice(&json))
            } else {
                let bytes = postcard::to_allocvec(&registry.save(&world)).expect("serialize");
                load(&registry, &mut postcard::Deserializer::from_bytes(&bytes))
            };
            assert_eq!(loaded.len(), world.len());
            black_box(loaded);
        }))
    }

    /// The plain calls, `insert_one` / `remove_one`.
    fn add_remove(n: usize) -> Prepared {
        add_remove_with(n, false)
    }

    /// The plain `World::get` (for `random_get_call` as well).
    fn random_get(n: usize, rng: &mut Rng) -> Prepared {
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

/// Loads the world `registry` saved: trusted data (the runner loads what it
/// saved), so with no memory limit (`Load::max_memory`), as peers load.
fn load<'de, C: Components>(
    registry: &Registry<C>,
    deserializer: impl serde::Deserializer<'de>,
) -> World {
    use serde::de::DeserializeSeed;
    registry
        .load()
        .max_memory(usize::MAX)
        .deserialize(deserializer)
        .expect("deserialize")
}

/// `add_remove` with the plain per-entity calls (`insert_one` /
/// `remove_one`, as hecs users write it), or with a `ColumnMut` held across
/// both loops (as shipyard holds its `ViewMut`).
fn add_remove_with(n: usize, column: bool) -> Prepared {
    let (mut world, entities) = super::spawned::<World, _>((0..n).map(|i| (SA(i as f32),)));
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
    // A pass per idiom, each one loop, as a user writes it and as the peers'
    // rows are made (one closure matching on the idiom compiled the four
    // loops into one function).
    match workload {
        EcsWorkload::RandomGetQuery => random_gets(n, rng, |world: &mut World, lookups| {
            let mut positions = world.query::<&Position>();
            sum_lookups(lookups, |e| positions.get(e).map_or(0.0, |p| p.0.x));
        }),
        EcsWorkload::RandomGetMut => random_gets(n, rng, |world: &mut World, lookups| {
            sum_lookups(lookups, |e| {
                world.get_mut::<Position>(e).map_or(0.0, |p| p.0.x)
            });
        }),
        EcsWorkload::RandomHas => random_gets(n, rng, |world: &mut World, lookups| {
            sum_lookups(lookups, |e| f32::from(u8::from(world.has::<Position>(e))));
        }),
        _ => random_gets(n, rng, |world: &mut World, lookups| {
            sum_lookups(lookups, |e| world.get::<Position>(e).map_or(0.0, |p| p.0.x));
        }),
    }
}

/// Spawns one entity at a time, so that no vector of entities counts in
/// the peak.
pub(super) fn despawn_front(n: usize) -> DespawnFront {
    super::despawn_front_with(
        n,
        Entity::from_bits(1 << 32).expect("generation 1"),
        |handles| {
            let mut world = World::new();
            for slot in handles {
                *slot = world.spawn(data::simple());
            }
            world
        },
        |world, front| {
            for &e in front {
                world.despawn(e).expect("alive");
            }
            // Collect until nothing is left to collect.
            while world.row_count() > world.len() {
                world.collect(4096, Order::Preserve);
            }
        },
        |world| Some(world.len()),
        "collect(4096, Order::Preserve) until no dead row is left",
    )
}

/// A world of `n` rows, half of them dead (chosen at random), with the
/// components of `random_get`.
pub(super) fn half_dead_world(n: usize, rng: &mut Rng) -> World {
    let (mut world, mut entities) = super::spawned::<World, _>(
        (0..n).map(|_| (Position(data::Vec3::X), Velocity(data::Vec3::X))),
    );
    rng.shuffle(&mut entities);
    for &e in &entities[..n / 2] {
        world.despawn(e).expect("alive");
    }
    world
}

/// `schedule`'s system body, for `for_each`.
#[inline(always)]
fn swap<X: AsMut<f32>, Y: AsMut<f32>>((x, y): (&mut X, &mut Y)) {
    data::swap(x, y);
}

impl<B: handlekit_ecs::Bundle> SpawnBatch<B> for World {
    type Entity = Entity;

    fn batch(&mut self, bundles: impl Iterator<Item = B>) -> impl Iterator<Item = Entity> {
        self.spawn_batch(bundles).into_iter()
    }
}
