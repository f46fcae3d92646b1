//! The ECS workloads on shipyard (sparse sets): `bulk_add_entity`, views
//! borrowed once per pass (a `for` loop over `iter()`, and its
//! `for_each`), `par_iter` for `heavy_compute`, and a workload
//! for `schedule` (shipyard runs its systems in parallel where their
//! borrows allow).

use std::hint::black_box;
use std::time::Instant;

use rayon::iter::ParallelIterator;
use shipyard::{
    EntitiesViewMut, EntityId, Get as _, IntoIter, Remove as _, View, ViewMut, Workload, World,
};

use super::data::{self, Data, Position, Transform, Velocity, SA, SB, SC, SD, SE};
use super::{each, DespawnFront, Peer, Prepared, Probe};
use crate::workloads::{Form, Rng};

/// The ECS section's workloads on shipyard.
pub(super) struct Shipyard;

impl Peer for Shipyard {
    type World = World;

    fn simple_world(n: usize) -> Self::World {
        let mut world = World::new();
        world.bulk_add_entity((0..n).map(|_| data::simple()));
        world
    }

    /// Views borrowed once per pass; a `for` loop over the pair's `iter()`, or
    /// its `for_each`.
    fn simple_iter(n: usize, form: Form) -> Prepared {
        let world = Self::simple_world(n);
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
        macro_rules! spawn {
            ($ty:path) => {
                n += world
                    .bulk_add_entity((0..data::FRAG_PER_TYPE).map(|_| ($ty(0.0), Data(1.0))))
                    .count();
            };
        }
        crate::for_each_frag_type!(spawn);
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
        let world = Self::simple_world(n);
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
        world.bulk_add_entity((0..n_each).map(|_| (SA(0.0), SB(0.0))));
        world.bulk_add_entity((0..n_each).map(|_| (SA(0.0), SB(0.0), SC(0.0))));
        world.bulk_add_entity((0..n_each).map(|_| (SA(0.0), SB(0.0), SC(0.0), SD(0.0))));
        world.bulk_add_entity((0..n_each).map(|_| (SA(0.0), SB(0.0), SC(0.0), SE(0.0))));
        Workload::new("schedule")
            .with_system(ab)
            .with_system(cd)
            .with_system(ce)
            .add_to_world(&world)
            .expect("a new workload");
        Prepared::on_pool(4 * n_each, move || {
            world.run_workload("schedule").expect("the workload runs");
        })
    }

    fn add_remove(n: usize) -> Prepared {
        let mut world = World::new();
        let entities: Vec<EntityId> = world
            .bulk_add_entity((0..n).map(|i| (SA(i as f32),)))
            .collect();
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
        let mut world = World::new();
        let entities: Vec<EntityId> = world.bulk_add_entity((0..n).map(data::located)).collect();
        let lookups: Vec<EntityId> = (0..n).map(|_| entities[rng.below(n)]).collect();
        Prepared::passes(n, move || {
            world.run(|p: View<Position>| {
                let mut sum = 0.0f32;
                for &e in &lookups {
                    sum += p.get(e).map_or(0.0, |p| p.0.x);
                }
                black_box(sum);
            });
        })
    }

    /// `World::get`, which borrows the storage for the one call.
    fn random_get_call(n: usize, rng: &mut Rng) -> Prepared {
        let mut world = World::new();
        let entities: Vec<EntityId> = world.bulk_add_entity((0..n).map(data::located)).collect();
        let lookups: Vec<EntityId> = (0..n).map(|_| entities[rng.below(n)]).collect();
        Prepared::passes(n, move || {
            let mut sum = 0.0f32;
            for &e in &lookups {
                sum += world.get::<&Position>(e).map_or(0.0, |p| p.0.x);
            }
            black_box(sum);
        })
    }
}

fn ab(mut a: ViewMut<SA>, mut b: ViewMut<SB>) {
    (&mut a, &mut b)
        .iter()
        .for_each(|(a, b)| std::mem::swap(&mut a.0, &mut b.0));
}

fn cd(mut c: ViewMut<SC>, mut d: ViewMut<SD>) {
    (&mut c, &mut d)
        .iter()
        .for_each(|(c, d)| std::mem::swap(&mut c.0, &mut d.0));
}

fn ce(mut c: ViewMut<SC>, mut e: ViewMut<SE>) {
    (&mut c, &mut e)
        .iter()
        .for_each(|(c, e)| std::mem::swap(&mut c.0, &mut e.0));
}

pub(super) fn despawn_front(n: usize) -> DespawnFront {
    let mut handles = vec![EntityId::dead(); n];
    let probe = Probe::start();
    let mut world = World::new();
    for (slot, e) in handles
        .iter_mut()
        .zip(world.bulk_add_entity((0..n).map(|_| data::simple())))
    {
        *slot = e;
    }
    let peak = probe.read();
    let despawned = n - n / 10;
    let start = Instant::now();
    for &e in &handles[..despawned] {
        assert!(world.delete_entity(e));
    }
    let elapsed = start.elapsed();
    let after = probe.read();
    drop(world);
    DespawnFront {
        peak,
        after,
        elapsed,
        despawned,
        release: "delete_entity only (shipyard has no shrink call)",
    }
}
