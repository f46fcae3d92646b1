//! The ECS workloads on handlekit-ecs: `query_mut(..).for_each` for the
//! passes, `par_for_each` for `heavy_compute`, `query` on a shared world
//! under `rayon::join` for `schedule`, a `ColumnMut` held across
//! `add_remove`'s loops, and `collect` after despawning.

use std::hint::black_box;

use handlekit_ecs::serialize::Registry;
use handlekit_ecs::{Entity, Order, World};

use std::time::Instant;

use super::data::{self, Data, Position, Rotation, Transform, Velocity, SA, SB, SC, SD, SE};
use super::{on_pool, DespawnFront, Probe};
use crate::workloads::{time, time_passes, Budget, Rng, Timed};

pub(super) fn simple_insert(n: usize) -> Timed {
    time(n, || {
        let mut world = World::new();
        world.spawn_batch((0..n).map(|_| data::simple()));
        black_box(&world);
    })
}

/// A world of `n` simple entities.
fn simple_world(n: usize) -> World {
    let mut world = World::new();
    world.spawn_batch((0..n).map(|_| data::simple()));
    world
}

pub(super) fn simple_iter(n: usize, budget: Budget) -> Timed {
    let mut world = simple_world(n);
    time_passes(n, budget, || {
        world
            .query_mut::<(&mut Position, &Velocity)>()
            .for_each(|(p, v)| p.0 += v.0);
    })
}

pub(super) fn frag_iter(budget: Budget) -> Timed {
    let mut world = World::new();
    macro_rules! spawn {
        ($ty:path) => {
            world.spawn_batch((0..data::FRAG_PER_TYPE).map(|_| ($ty(0.0), Data(1.0))));
        };
    }
    crate::for_each_frag_type!(spawn);
    let n = world.len();
    time_passes(n, budget, || {
        world.query_mut::<&mut Data>().for_each(|d| d.0 *= 2.0);
    })
}

pub(super) fn heavy_compute(n: usize, budget: Budget) -> Timed {
    let mut world = simple_world(n);
    on_pool(|| {
        time_passes(n, budget, || {
            world
                .query_mut::<(&mut Position, &mut Transform)>()
                .par_for_each(|(p, t)| data::heavy(p, t));
        })
    })
}

/// Swaps the values of two `f32` components.
macro_rules! swap {
    ($x:ident, $y:ident) => {
        |(x, y): (&mut $x, &mut $y)| std::mem::swap(&mut x.0, &mut y.0)
    };
}

pub(super) fn schedule(n_each: usize, budget: Budget) -> Timed {
    let mut world = World::new();
    world.spawn_batch((0..n_each).map(|_| (SA(0.0), SB(0.0))));
    world.spawn_batch((0..n_each).map(|_| (SA(0.0), SB(0.0), SC(0.0))));
    world.spawn_batch((0..n_each).map(|_| (SA(0.0), SB(0.0), SC(0.0), SD(0.0))));
    world.spawn_batch((0..n_each).map(|_| (SA(0.0), SB(0.0), SC(0.0), SE(0.0))));
    let world = &world;
    // The three systems, scheduled as a scheduler would: A↔B on its own
    // thread, C↔D and C↔E (both write C) one after the other on another.
    // Each takes the run-time borrows of its columns on the shared world.
    on_pool(|| {
        time_passes(4 * n_each, budget, || {
            rayon::join(
                || world.query::<(&mut SA, &mut SB)>().for_each(swap!(SA, SB)),
                || {
                    world.query::<(&mut SC, &mut SD)>().for_each(swap!(SC, SD));
                    world.query::<(&mut SC, &mut SE)>().for_each(swap!(SC, SE));
                },
            );
        })
    })
}

/// `n` entities with `SA`, and their handles.
fn base_world(n: usize) -> (World, Vec<Entity>) {
    let mut world = World::new();
    let entities = world.spawn_batch((0..n).map(|i| (SA(i as f32),)));
    (world, entities)
}

pub(super) fn add_remove(n: usize) -> Timed {
    let (mut world, entities) = base_world(n);
    time(n, || {
        // The column held across both loops, as shipyard holds its ViewMut.
        let mut b = world.column_mut::<SB>();
        for &e in &entities {
            b.insert(e, SB(0.0)).expect("alive");
        }
        for &e in &entities {
            black_box(b.remove(e).expect("has SB"));
        }
    })
}

pub(super) fn random_get(n: usize, rng: &mut Rng, budget: Budget) -> Timed {
    let mut world = World::new();
    let entities = world.spawn_batch((0..n).map(|i| {
        (
            Position(data::Vec3 {
                x: i as f32,
                ..data::Vec3::X
            }),
            Velocity(data::Vec3::X),
        )
    }));
    let lookups: Vec<Entity> = (0..n).map(|_| entities[rng.below(n)]).collect();
    time_passes(n, budget, || {
        let mut positions = world.query::<&Position>();
        let mut sum = 0.0f32;
        for &e in &lookups {
            sum += positions.get(e).map_or(0.0, |p| p.0.x);
        }
        black_box(sum);
    })
}

/// Saves the world and loads it into a new one, through a registry that
/// names the four component types (as hecs's column format does with its
/// context): postcard for binary, JSON for text.
pub(super) fn serialize(n: usize, text: bool) -> Timed {
    use serde::de::DeserializeSeed;
    let world = simple_world(n);
    let registry = Registry::new()
        .component::<Transform>("transform")
        .component::<Position>("position")
        .component::<Rotation>("rotation")
        .component::<Velocity>("velocity");
    time(n, || {
        let loaded: World = if text {
            let json = serde_json::to_vec(&registry.save(&world)).expect("serialize");
            let mut deserializer = serde_json::Deserializer::from_slice(&json);
            registry
                .load()
                .deserialize(&mut deserializer)
                .expect("deserialize")
        } else {
            let bytes = postcard::to_allocvec(&registry.save(&world)).expect("serialize");
            let mut deserializer = postcard::Deserializer::from_bytes(&bytes);
            registry
                .load()
                .deserialize(&mut deserializer)
                .expect("deserialize")
        };
        assert_eq!(loaded.len(), world.len());
        black_box(loaded);
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
