//! The ECS workloads on planck_ecs (a storage per component, joined by
//! bit sets), as ecs_bench_suite's planck_ecs module writes them: entities
//! from `Entities::create`, one `Components` per type, a `for` loop over
//! `join!` (and `for_each` on it), systems in a `Dispatcher` run with
//! `run_par`, and `Components::insert` / `remove` for `add_remove`. The
//! suite has no planck_ecs `heavy_compute`.

use std::hint::black_box;

// As the suite's module does: `join!` expands to other macros and trait
// methods of the crate, which must all be in scope.
use planck_ecs::*;

use super::data::{self, Data, Position, Rotation, Transform, Velocity, SA, SB, SC, SD, SE};
use super::{each, sum_lookups, Peer, Prepared, SimpleWorld};
use crate::workloads::{Form, Rng};

/// The simple entities: one storage per component.
pub(super) struct Simple {
    transforms: Components<Transform>,
    positions: Components<Position>,
    rotations: Components<Rotation>,
    velocities: Components<Velocity>,
}

impl SimpleWorld for Simple {
    fn simple(n: usize) -> Self {
        let mut entities = Entities::default();
        let mut simple = Simple {
            transforms: Components::default(),
            positions: Components::default(),
            rotations: Components::default(),
            velocities: Components::default(),
        };
        for _ in 0..n {
            let e = entities.create();
            let (transform, position, rotation, velocity) = data::simple();
            simple.transforms.insert(e, transform);
            simple.positions.insert(e, position);
            simple.rotations.insert(e, rotation);
            simple.velocities.insert(e, velocity);
        }
        simple
    }
}

/// The ECS section's workloads on planck_ecs, on its world.
pub(super) type Planck = Simple;

impl Peer for Planck {
    fn simple_iter(mut simple: Simple, n: usize, form: Form) -> Prepared {
        Prepared::passes(n, move || {
            let velocities = &mut simple.velocities;
            let positions = &mut simple.positions;
            let items = join!(&mut velocities && &mut positions);
            each(items, form, |(v, mut p)| {
                p.as_mut().expect("joined").0 += v.expect("joined").0;
            })
        })
    }

    fn frag_iter(form: Form) -> Prepared {
        let mut world = World::default();
        world.initialize::<Entities>();
        world.initialize::<Components<Data>>();
        crate::for_each_frag_type!(|F| {
            world.initialize::<Components<F>>();
            for (f, d) in data::frag_bundles::<F>() {
                let e = world.get_mut::<Entities>().expect("initialized").create();
                put(&world, e, f);
                put(&world, e, d);
            }
        });
        Prepared::passes(26 * data::FRAG_PER_TYPE, move || {
            let mut storage = world.get_mut::<Components<Data>>().expect("initialized");
            let data = &mut *storage;
            let items = join!(&mut data);
            each(items, form, |d| {
                d.0 *= 2.0;
            })
        })
    }

    fn schedule(n_each: usize) -> Prepared {
        let mut world = World::default();
        world.initialize::<Entities>();
        world.initialize::<Components<SA>>();
        world.initialize::<Components<SB>>();
        world.initialize::<Components<SC>>();
        world.initialize::<Components<SD>>();
        world.initialize::<Components<SE>>();
        for kind in 0..4 {
            for _ in 0..n_each {
                let e = world.get_mut::<Entities>().expect("initialized").create();
                put(&world, e, SA(0.0));
                put(&world, e, SB(0.0));
                match kind {
                    0 => {}
                    1 => put(&world, e, SC(0.0)),
                    2 => {
                        put(&world, e, SC(0.0));
                        put(&world, e, SD(0.0));
                    }
                    _ => {
                        put(&world, e, SC(0.0));
                        put(&world, e, SE(0.0));
                    }
                }
            }
        }
        let mut dispatcher = DispatcherBuilder::new()
            .add(swap_system::<SA, SB>)
            .add(swap_system::<SC, SD>)
            .add(swap_system::<SC, SE>)
            .build(&mut world);
        // planck_ecs's dispatcher runs its systems on rayon's pool.
        Prepared::on_pool(4 * n_each, move || {
            dispatcher.run_par(&world).expect("the systems run");
        })
    }

    fn add_remove(n: usize) -> Prepared {
        let mut a = Components::<SA>::default();
        let mut b = Components::<SB>::default();
        let handles = create(&mut Entities::default(), n, |e, i| {
            a.insert(e, SA(i as f32));
        });
        Prepared::once(n, move || {
            for &e in &handles {
                black_box(b.insert(e, SB(0.0)));
            }
            for &e in &handles {
                black_box(b.remove(e));
            }
            black_box(&a);
        })
    }

    fn random_get(n: usize, rng: &mut Rng) -> Prepared {
        let mut positions = Components::<Position>::default();
        let mut velocities = Components::<Velocity>::default();
        let handles = create(&mut Entities::default(), n, |e, i| {
            let (position, velocity) = data::located(i);
            positions.insert(e, position);
            velocities.insert(e, velocity);
        });
        let lookups = crate::workloads::random_lookups(&handles, rng);
        Prepared::passes(n, move || {
            sum_lookups(&lookups, |e| positions.get(e).map_or(0.0, |p| p.0.x));
        })
    }

    /// `World::get::<Components<_>>` (a run-time borrow of the storage)
    /// for each lookup.
    fn random_get_call(n: usize, rng: &mut Rng) -> Prepared {
        let mut world = World::default();
        world.initialize::<Entities>();
        world.initialize::<Components<Position>>();
        world.initialize::<Components<Velocity>>();
        let mut entities = world.get_mut::<Entities>().expect("initialized");
        let handles = create(&mut entities, n, |e, i| {
            let (position, velocity) = data::located(i);
            put(&world, e, position);
            put(&world, e, velocity);
        });
        drop(entities);
        let lookups = crate::workloads::random_lookups(&handles, rng);
        Prepared::passes(n, move || {
            sum_lookups(&lookups, |e| {
                let positions = world.get::<Components<Position>>().expect("initialized");
                positions.get(e).map_or(0.0, |p| p.0.x)
            });
        })
    }
}

/// A `schedule` system: swaps `X` and `Y` on every entity with both.
fn swap_system<X, Y>(x: &mut Components<X>, y: &mut Components<Y>) -> SystemResult
where
    X: AsMut<f32> + Send + Sync + 'static,
    Y: AsMut<f32> + Send + Sync + 'static,
{
    for (x, y) in join!(&mut x && &mut y) {
        data::swap(x.expect("joined"), y.expect("joined"));
    }
    Ok(())
}

/// `n` new entities from `entities`, each handed to `insert` with its index.
fn create(entities: &mut Entities, n: usize, mut insert: impl FnMut(Entity, usize)) -> Vec<Entity> {
    (0..n)
        .map(|i| {
            let e = entities.create();
            insert(e, i);
            e
        })
        .collect()
}

/// Inserts a component of type `T` for `e` into `world`'s storage.
fn put<T: Send + Sync + 'static>(world: &World, e: Entity, value: T) {
    world
        .get_mut::<Components<T>>()
        .expect("initialized")
        .insert(e, value);
}
