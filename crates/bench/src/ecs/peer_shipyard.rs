//! The ECS workloads on shipyard (sparse sets): `bulk_add_entity`, views
//! borrowed once per pass (a `for` loop over `iter()`, and its
//! `for_each`), `par_iter` for `heavy_compute`, and a workload
//! for `schedule` (shipyard runs its systems in parallel where their
//! borrows allow).

use std::hint::black_box;

use rayon::iter::ParallelIterator;
use shipyard::track::Untracked;
use shipyard::{
    Component, EntitiesViewMut, EntityId, Get as _, IntoIter, Remove as _, View, ViewMut, Workload,
    World,
};

use super::data::{self, Data, Position, Transform, Velocity, SA, SB, SC, SD, SE};
use super::{each, sum_lookups, DespawnFront, Peer, Prepared, SimpleWorld as _, SpawnBatch};
use crate::workloads::{Form, Rng};

/// The ECS section's workloads on shipyard, on its world.
pub(super) type Shipyard = World;

impl Peer for Shipyard {
    /// Views borrowed once per pass; a `for` loop over the pair's `iter()`, or
    /// its `for_each`.
    fn simple_iter(world: World, n: usize, form: Form) -> Prepared {
        Prepared::passes(n, move || {
            world.run(|mut p: ViewMut<Position>, v: View<Velocity>| {
                let items = (&mut p, &v).iter();
                each(items, form, |(p, v)| {
                    p.0 += v.0;
                })
            });
        })
    }

    fn frag_iter(form: Form) -> Prepared {
        let mut world = World::new();
        let mut n = 0;
        crate::for_each_frag_type!(
            |F| n += world.bulk_add_entity(data::frag_bundles::<F>()).count()
        );
        Prepared::passes(n, move || {
            world.run(|mut d: ViewMut<Data>| {
                let items = (&mut d).iter();
                each(items, form, |d| {
                    d.0 *= 2.0;
                })
            });
        })
    }

    fn heavy_compute(n: usize) -> Option<Prepared> {
        let world = World::simple(n);
        Some(Prepared::on_pool(n, move || {
            world.run(|mut p: ViewMut<Position>, mut t: ViewMut<Transform>| {
                (&mut p, &mut t)
                    .par_iter()
                    .for_each(|(p, t)| data::heavy(p, t));
            });
        }))
    }

    fn schedule(n_each: usize) -> Prepared {
        let mut world = World::new();
        crate::for_each_schedule_kind!(|kind| world.bulk_add_entity((0..n_each).map(|_| kind)));
        Workload::new("schedule")
            .with_system(swap::<SA, SB>)
            .with_system(swap::<SC, SD>)
            .with_system(swap::<SC, SE>)
            .add_to_world(&world)
            .expect("a new workload");
        Prepared::on_pool(4 * n_each, move || {
            world.run_workload("schedule").expect("the workload runs");
        })
    }

    fn add_remove(n: usize) -> Prepared {
        let (world, entities) = super::spawned::<World, _>((0..n).map(|i| (SA(i as f32),)));
        Prepared::once(n, move || {
            world.run(|entities_view: EntitiesViewMut, mut b: ViewMut<SB>| {
                for &e in &entities {
                    entities_view.add_component(e, &mut b, SB(0.0));
                }
                for &e in &entities {
                    black_box(b.remove(e));
                }
            });
        })
    }

    fn random_get(n: usize, rng: &mut Rng) -> Prepared {
        super::random_gets(n, rng, |world: &mut World, lookups| {
            world.run(|p: View<Position>| {
                sum_lookups(lookups, |e| p.get(e).map_or(0.0, |p| p.0.x));
            });
        })
    }

    /// `World::get`, which borrows the storage for the one call.
    fn random_get_call(n: usize, rng: &mut Rng) -> Prepared {
        super::random_gets(n, rng, |world: &mut World, lookups| {
            sum_lookups(lookups, |e| {
                world.get::<&Position>(e).map_or(0.0, |p| p.0.x)
            });
        })
    }
}

/// A `schedule` system: swaps `X` and `Y` on every entity with both.
fn swap<X, Y>(mut x: ViewMut<X>, mut y: ViewMut<Y>)
where
    X: Component<Tracking = Untracked> + AsMut<f32> + Send + Sync,
    Y: Component<Tracking = Untracked> + AsMut<f32> + Send + Sync,
{
    (&mut x, &mut y).iter().for_each(|(x, y)| data::swap(x, y));
}

pub(super) fn despawn_front(n: usize) -> DespawnFront {
    super::despawn_front_batch(
        n,
        EntityId::dead(),
        |world: &mut World, e| assert!(world.delete_entity(e)),
        |_| None,
        "delete_entity only (shipyard has no shrink call)",
    )
}

/// shipyard's `BulkInsert` (what `bulk_add_entity` asks of a bundle) is not
/// public, so the batch spawn is implemented for each bundle the shared
/// setup spawns.
macro_rules! spawn_batch {
    ($($bundle:ty),*) => {$(
        impl SpawnBatch<$bundle> for World {
            type Entity = EntityId;

            fn batch(
                &mut self,
                bundles: impl Iterator<Item = $bundle>,
            ) -> impl Iterator<Item = EntityId> {
                self.bulk_add_entity(bundles)
            }
        }
    )*};
}

spawn_batch!(data::Simple, (Position, Velocity), (SA,));
