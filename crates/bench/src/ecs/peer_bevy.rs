//! The ECS workloads on bevy_ecs (tables, and sparse sets for the second
//! `add_remove` row): `spawn_batch`, cached `QueryState`s, `par_iter_mut`
//! for `heavy_compute`, and a `Schedule` on the multi-threaded executor.

use bevy_ecs::bundle::{Bundle, NoBundleEffect};
use bevy_ecs::component::{Component as BevyComponent, Mutable};
use bevy_ecs::entity::Entity;
use bevy_ecs::prelude::{Query, Schedule, World};
use bevy_ecs::schedule::MultiThreadedExecutor;

use super::data::{self, Data, Position, SparseB, Transform, Velocity, SA, SB, SC, SD, SE};
use super::{each, sum_lookups, DespawnFront, Peer, Prepared, SimpleWorld as _, SpawnBatch};
use crate::workloads::{Form, Rng};

/// Starts bevy's compute pool (which `par_iter_mut` needs) once.
fn task_pool() {
    bevy_tasks::ComputeTaskPool::get_or_init(bevy_tasks::TaskPool::default);
}

/// The ECS section's workloads on bevy_ecs, on its world.
pub(super) type Bevy = World;

impl Peer for Bevy {
    /// A cached `QueryState`, iterated with a `for` loop or `for_each`.
    fn simple_iter(mut world: World, n: usize, form: Form) -> Prepared {
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
        crate::for_each_frag_type!(|F| world.spawn_batch(data::frag_bundles::<F>()));
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
        let mut world = World::simple(n);
        let mut query = world.query::<(&mut Position, &mut Transform)>();
        Some(Prepared::passes(n, move || {
            query
                .par_iter_mut(&mut world)
                .for_each(|(mut p, mut t)| data::heavy(&mut p, &mut t));
        }))
    }

    fn schedule(n_each: usize) -> Prepared {
        let mut world = World::new();
        crate::for_each_schedule_kind!(|kind| world.spawn_batch((0..n_each).map(|_| kind)));
        let mut schedule = Schedule::default();
        schedule.set_executor(MultiThreadedExecutor::new());
        schedule.add_systems((swap::<SA, SB>, swap::<SC, SD>, swap::<SC, SE>));
        // The first run builds the schedule; it is not measured.
        schedule.run(&mut world);
        Prepared::passes(4 * n_each, move || schedule.run(&mut world))
    }

    fn add_remove(n: usize) -> Prepared {
        add_remove_with::<SB>(n)
    }

    fn random_get(n: usize, rng: &mut Rng) -> Prepared {
        let (mut world, lookups) = super::located_world::<World>(n, rng);
        let mut query = world.query::<&Position>();
        Prepared::passes(n, move || {
            sum_lookups(&lookups, |e| query.get(&world, e).map_or(0.0, |p| p.0.x));
        })
    }

    /// `World::get` on `&World` (bevy checks no borrow at run time: only
    /// `&mut World` can write outside systems).
    fn random_get_call(n: usize, rng: &mut Rng) -> Prepared {
        super::random_gets(n, rng, |world: &mut World, lookups| {
            sum_lookups(lookups, |e| world.get::<Position>(e).map_or(0.0, |p| p.0.x));
        })
    }
}

/// A `schedule` system: swaps `X` and `Y` on every entity with both.
fn swap<X, Y>(mut query: Query<(&mut X, &mut Y)>)
where
    X: BevyComponent<Mutability = Mutable> + AsMut<f32>,
    Y: BevyComponent<Mutability = Mutable> + AsMut<f32>,
{
    query
        .iter_mut()
        .for_each(|(mut x, mut y)| data::swap(&mut *x, &mut *y));
}

/// `add_remove` with `B` in tables (`SB`) or in a sparse set (`SparseB`).
fn add_remove_with<B: BevyComponent + From<f32>>(n: usize) -> Prepared {
    let (mut world, entities) = super::spawned::<World, _>((0..n).map(|i| (SA(i as f32),)));
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
    super::despawn_front_batch(
        n,
        Entity::PLACEHOLDER,
        |world: &mut World, e| assert!(world.despawn(e)),
        |world| Some(world.query::<&Position>().iter(world).count()),
        "despawn only (bevy_ecs has no shrink call)",
    )
}

impl<B: Bundle<Effect: NoBundleEffect>> SpawnBatch<B> for World {
    type Entity = Entity;

    fn batch(&mut self, bundles: impl Iterator<Item = B>) -> impl Iterator<Item = Entity> {
        self.spawn_batch(bundles)
    }
}
