//! The ECS workloads on bevy_ecs (tables, and sparse sets for the second
//! `add_remove` row): `spawn_batch`, cached `QueryState`s, `par_iter_mut`
//! for `heavy_compute`, and a `Schedule` on the multi-threaded executor.

use std::hint::black_box;
use std::time::Instant;

use bevy_ecs::component::Component as BevyComponent;
use bevy_ecs::entity::Entity;
use bevy_ecs::prelude::{Query, Schedule, World};
use bevy_ecs::schedule::MultiThreadedExecutor;

use super::data::{self, Data, Position, SparseB, Transform, Velocity, SA, SB, SC, SD, SE};
use super::{each, DespawnFront, Peer, Prepared, Probe};
use crate::workloads::{Form, Rng};

/// Starts bevy's compute pool (which `par_iter_mut` needs) once.
fn task_pool() {
    bevy_tasks::ComputeTaskPool::get_or_init(bevy_tasks::TaskPool::default);
}

/// The ECS section's workloads on bevy_ecs.
pub(super) struct Bevy;

impl Peer for Bevy {
    type World = World;

    fn simple_world(n: usize) -> Self::World {
        let mut world = World::new();
        world.spawn_batch((0..n).map(|_| data::simple()));
        world
    }

    /// A cached `QueryState`, iterated with a `for` loop or `for_each`.
    fn simple_iter(n: usize, form: Form) -> Prepared {
        let mut world = Self::simple_world(n);
        let mut query = world.query::<(&mut Position, &Velocity)>();
        Prepared::passes(n, move || {
            let items = query.iter_mut(&mut world);
            each(items, form, |(mut p, v)| {
                p.0 += v.0;
            })
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
        let mut query = world.query::<&mut Data>();
        Prepared::passes(26 * data::FRAG_PER_TYPE, move || {
            let items = query.iter_mut(&mut world);
            each(items, form, |mut d| {
                d.0 *= 2.0;
            })
        })
    }

    fn heavy_compute(n: usize) -> Option<Prepared> {
        task_pool();
        let mut world = Self::simple_world(n);
        let mut query = world.query::<(&mut Position, &mut Transform)>();
        Some(Prepared::passes(n, move || {
            query
                .par_iter_mut(&mut world)
                .for_each(|(mut p, mut t)| data::heavy(&mut p, &mut t));
        }))
    }

    fn schedule(n_each: usize) -> Prepared {
        let mut world = World::new();
        world.spawn_batch((0..n_each).map(|_| (SA(0.0), SB(0.0))));
        world.spawn_batch((0..n_each).map(|_| (SA(0.0), SB(0.0), SC(0.0))));
        world.spawn_batch((0..n_each).map(|_| (SA(0.0), SB(0.0), SC(0.0), SD(0.0))));
        world.spawn_batch((0..n_each).map(|_| (SA(0.0), SB(0.0), SC(0.0), SE(0.0))));
        let mut schedule = Schedule::default();
        schedule.set_executor(MultiThreadedExecutor::new());
        schedule.add_systems((ab, cd, ce));
        // The first run builds the schedule; it is not measured.
        schedule.run(&mut world);
        Prepared::passes(4 * n_each, move || schedule.run(&mut world))
    }

    fn add_remove(n: usize) -> Prepared {
        add_remove_with::<SB>(n)
    }

    fn random_get(n: usize, rng: &mut Rng) -> Prepared {
        let mut world = World::new();
        let entities: Vec<Entity> = world.spawn_batch((0..n).map(data::located)).collect();
        let lookups: Vec<Entity> = (0..n).map(|_| entities[rng.below(n)]).collect();
        let mut query = world.query::<&Position>();
        Prepared::passes(n, move || {
            let mut sum = 0.0f32;
            for &e in &lookups {
                sum += query.get(&world, e).map_or(0.0, |p| p.0.x);
            }
            black_box(sum);
        })
    }

    /// `World::get` on `&World` (bevy checks no borrow at run time: only
    /// `&mut World` can write outside systems).
    fn random_get_call(n: usize, rng: &mut Rng) -> Prepared {
        let mut world = World::new();
        let entities: Vec<Entity> = world.spawn_batch((0..n).map(data::located)).collect();
        let lookups: Vec<Entity> = (0..n).map(|_| entities[rng.below(n)]).collect();
        Prepared::passes(n, move || {
            let mut sum = 0.0f32;
            for &e in &lookups {
                sum += world.get::<Position>(e).map_or(0.0, |p| p.0.x);
            }
            black_box(sum);
        })
    }
}

fn ab(mut query: Query<(&mut SA, &mut SB)>) {
    query
        .iter_mut()
        .for_each(|(mut a, mut b)| std::mem::swap(&mut a.0, &mut b.0));
}

fn cd(mut query: Query<(&mut SC, &mut SD)>) {
    query
        .iter_mut()
        .for_each(|(mut c, mut d)| std::mem::swap(&mut c.0, &mut d.0));
}

fn ce(mut query: Query<(&mut SC, &mut SE)>) {
    query
        .iter_mut()
        .for_each(|(mut c, mut e)| std::mem::swap(&mut c.0, &mut e.0));
}

/// `add_remove` with `B` in tables (`SB`) or in a sparse set (`SparseB`).
fn add_remove_with<B: BevyComponent + From<f32>>(n: usize) -> Prepared {
    let mut world = World::new();
    let entities: Vec<Entity> = world.spawn_batch((0..n).map(|i| (SA(i as f32),))).collect();
    Prepared::once(n, move || {
        for &e in &entities {
            world.entity_mut(e).insert(B::from(0.0));
        }
        for &e in &entities {
            world.entity_mut(e).remove::<B>();
        }
    })
}

/// `add_remove` with the added component in a sparse set.
pub(super) fn add_remove_sparse(n: usize) -> Prepared {
    add_remove_with::<SparseB>(n)
}

pub(super) fn despawn_front(n: usize) -> DespawnFront {
    let mut handles = vec![Entity::PLACEHOLDER; n];
    let probe = Probe::start();
    let mut world = World::new();
    for (slot, e) in handles
        .iter_mut()
        .zip(world.spawn_batch((0..n).map(|_| data::simple())))
    {
        *slot = e;
    }
    let peak = probe.read();
    let despawned = n - n / 10;
    let start = Instant::now();
    for &e in &handles[..despawned] {
        assert!(world.despawn(e));
    }
    let elapsed = start.elapsed();
    let after = probe.read();
    assert_eq!(
        world.query::<&Position>().iter(&world).count(),
        n - despawned
    );
    drop(world);
    DespawnFront {
        peak,
        after,
        elapsed,
        despawned,
        release: "despawn only (bevy_ecs has no shrink call)",
    }
}
