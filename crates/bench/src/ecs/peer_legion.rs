//! The ECS workloads on legion (archetypes), as ecs_bench_suite's legion
//! module writes them: `extend` with structure-of-arrays batches, a packed
//! world, a prepared `Query` run with `for_each_mut` (and, for the `for`
//! form, a `for` loop over `iter_mut`), `par_for_each_mut`, `#[system]`s in
//! a `Schedule`, and an entry per entity for `add_remove` and lookups.

use legion::storage::PackOptions;
use legion::{
    system, Entity, EntityStore, IntoQuery, IntoSoa, Read, Resources, Schedule, World, Write,
};

use super::data::{self, Data, Position, Transform, Velocity, SA, SB, SC, SD, SE};
use super::{sum_lookups, Peer, Prepared, SimpleWorld};
use crate::workloads::{Form, Rng};

/// The suite's legion `simple_insert`: one structure-of-arrays batch.
impl SimpleWorld for World {
    fn simple(n: usize) -> Self {
        let (transform, position, rotation, velocity) = data::simple();
        let mut world = World::default();
        world.extend(
            (
                vec![transform; n],
                vec![position; n],
                vec![rotation; n],
                vec![velocity; n],
            )
                .into_soa(),
        );
        world
    }
}

/// The ECS section's workloads on legion, on its world.
pub(super) type Legion = World;

impl Peer for Legion {
    fn simple_iter(mut world: World, n: usize, form: Form) -> Prepared {
        world.pack(PackOptions::force());
        let mut query = <(Read<Velocity>, Write<Position>)>::query();
        Prepared::passes(n, move || match form {
            Form::For => {
                for (v, p) in query.iter_mut(&mut world) {
                    p.0 += v.0;
                }
            }
            Form::Fold => query.for_each_mut(&mut world, |(v, p)| p.0 += v.0),
        })
    }

    fn frag_iter(form: Form) -> Prepared {
        let mut world = World::default();
        crate::for_each_frag_type!(|F| world.extend(data::frag_bundles::<F>()));
        world.pack(PackOptions::force());
        let mut query = Write::<Data>::query();
        Prepared::passes(world.len(), move || match form {
            Form::For => {
                for d in query.iter_mut(&mut world) {
                    d.0 *= 2.0;
                }
            }
            Form::Fold => query.for_each_mut(&mut world, |d| d.0 *= 2.0),
        })
    }

    fn heavy_compute(n: usize) -> Option<Prepared> {
        let mut world = World::default();
        world.extend((0..n).map(|_| data::simple()));
        world.pack(PackOptions::force());
        let mut query = <(Write<Position>, Write<Transform>)>::query();
        Some(Prepared::on_pool(n, move || {
            query.par_for_each_mut(&mut world, |(p, t)| data::heavy(p, t));
        }))
    }

    fn schedule(n_each: usize) -> Prepared {
        let mut world = World::default();
        crate::for_each_schedule_kind!(|kind| world.extend((0..n_each).map(|_| kind)));
        world.pack(PackOptions::force());
        let mut schedule = Schedule::builder()
            .add_system(ab_system())
            .add_system(cd_system())
            .add_system(ce_system())
            .build();
        let mut resources = Resources::default();
        // legion's `Schedule` is not `Send`: it runs from the main thread, as
        // in the suite, and hands its systems to rayon's pool.
        Prepared::passes(4 * n_each, move || {
            schedule.execute(&mut world, &mut resources);
        })
    }

    fn add_remove(n: usize) -> Prepared {
        let mut world = World::default();
        let entities = world.extend((0..n).map(|i| (SA(i as f32),))).to_vec();
        Prepared::once(n, move || {
            for &e in &entities {
                world.entry(e).expect("alive").add_component(SB(0.0));
            }
            for &e in &entities {
                world.entry(e).expect("alive").remove_component::<SB>();
            }
        })
    }

    fn random_get(n: usize, rng: &mut Rng) -> Prepared {
        let mut world = World::default();
        let entities: Vec<Entity> = world.extend((0..n).map(data::located)).to_vec();
        let lookups = crate::workloads::random_lookups(&entities, rng);
        Prepared::passes(n, move || {
            sum_lookups(&lookups, |e| {
                world
                    .entry_ref(e)
                    .ok()
                    .and_then(|entry| entry.get_component::<Position>().ok().map(|p| p.0.x))
                    .unwrap_or(0.0)
            });
        })
    }
    // legion's `random_get` is already a call per lookup (`entry_ref`), so
    // it is its `random_get_call` as well.
}

#[system(for_each)]
fn ab(a: &mut SA, b: &mut SB) {
    std::mem::swap(&mut a.0, &mut b.0);
}

#[system(for_each)]
fn cd(c: &mut SC, d: &mut SD) {
    std::mem::swap(&mut c.0, &mut d.0);
}

#[system(for_each)]
fn ce(c: &mut SC, e: &mut SE) {
    std::mem::swap(&mut c.0, &mut e.0);
}
