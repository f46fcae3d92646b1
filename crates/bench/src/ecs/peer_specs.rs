//! The ECS workloads on specs (storages per component, joined by bit
//! sets), as ecs_bench_suite's specs module writes them: entities built
//! with `create_entity().with(..)`, `VecStorage`s (`DenseVecStorage` for
//! the fragmenting types), a `for` loop over a `join()` of the storages
//! (and `for_each` on it), `par_join` for `heavy_compute`, a `Dispatcher`
//! run with `dispatch_par` for `schedule`, and a `WriteStorage` held
//! across `add_remove`'s loops.

use std::hint::black_box;

use rayon::iter::ParallelIterator;
use specs::{
    Builder, Component, Dispatcher, DispatcherBuilder, Entity, Join, ParJoin, ReadStorage, System,
    VecStorage, World, WorldExt, WriteStorage,
};

use super::data::{self, Data, Position, Rotation, Transform, Velocity, SA, SB, SC, SD, SE};
use super::{each, sum_lookups, Peer, Prepared, SimpleWorld};
use crate::workloads::{Form, Rng};

/// `n` simple entities, one `create_entity` each.
impl SimpleWorld for World {
    fn simple(n: usize) -> Self {
        let mut world = World::new();
        world.register::<Transform>();
        world.register::<Position>();
        world.register::<Rotation>();
        world.register::<Velocity>();
        for _ in 0..n {
            let (transform, position, rotation, velocity) = data::simple();
            world
                .create_entity()
                .with(transform)
                .with(position)
                .with(rotation)
                .with(velocity)
                .build();
        }
        world
    }
}

/// The ECS section's workloads on specs, on its world.
pub(super) type Specs = World;

impl Peer for Specs {
    fn simple_iter(mut world: World, n: usize, form: Form) -> Prepared {
        Prepared::passes(n, move || {
            world.exec(
                |(mut velocity, mut position): (WriteStorage<Velocity>, WriteStorage<Position>)| {
                    let items = (&mut velocity, &mut position).join();
                    each(items, form, |(v, p)| {
                        p.0 += v.0;
                    })
                },
            );
        })
    }

    fn frag_iter(form: Form) -> Prepared {
        let mut world = World::new();
        world.register::<Data>();
        crate::for_each_frag_type!(|F| {
            world.register::<F>();
            for (f, d) in data::frag_bundles::<F>() {
                world.create_entity().with(f).with(d).build();
            }
        });
        Prepared::passes(26 * data::FRAG_PER_TYPE, move || {
            world.exec(|mut data: WriteStorage<Data>| {
                let items = (&mut data).join();
                each(items, form, |d| {
                    d.0 *= 2.0;
                })
            });
        })
    }

    fn heavy_compute(n: usize) -> Option<Prepared> {
        let mut world = World::simple(n);
        Some(Prepared::on_pool(n, move || {
            world.exec(
                |(mut position, mut transform): (
                    WriteStorage<Position>,
                    WriteStorage<Transform>,
                )| {
                    (&mut position, &mut transform)
                        .par_join()
                        .for_each(|(p, t)| data::heavy(p, t));
                },
            );
        }))
    }

    fn schedule(n_each: usize) -> Prepared {
        let mut world = World::new();
        let mut dispatcher: Dispatcher<'static, 'static> = DispatcherBuilder::new()
            .with(Swap::<SA, SB>(Default::default()), "ab", &[])
            .with(Swap::<SC, SD>(Default::default()), "cd", &[])
            .with(Swap::<SC, SE>(Default::default()), "ce", &[])
            .build();
        dispatcher.setup(&mut world);
        for _ in 0..n_each {
            world.create_entity().with(SA(0.0)).with(SB(0.0)).build();
        }
        for _ in 0..n_each {
            world
                .create_entity()
                .with(SA(0.0))
                .with(SB(0.0))
                .with(SC(0.0))
                .build();
        }
        for last in [0, 1] {
            for _ in 0..n_each {
                let builder = world
                    .create_entity()
                    .with(SA(0.0))
                    .with(SB(0.0))
                    .with(SC(0.0));
                if last == 0 {
                    builder.with(SD(0.0)).build();
                } else {
                    builder.with(SE(0.0)).build();
                }
            }
        }
        // The dispatcher runs its systems on its own thread pool.
        Prepared::passes(4 * n_each, move || dispatcher.dispatch_par(&world))
    }

    fn add_remove(n: usize) -> Prepared {
        let mut world = World::new();
        world.register::<SA>();
        let entities: Vec<Entity> = (0..n)
            .map(|i| world.create_entity().with(SA(i as f32)).build())
            .collect();
        world.register::<SB>();
        Prepared::once(n, move || {
            let mut b = world.write_storage::<SB>();
            for &e in &entities {
                b.insert(e, SB(0.0)).expect("alive");
            }
            for &e in &entities {
                black_box(b.remove(e));
            }
        })
    }

    fn random_get(n: usize, rng: &mut Rng) -> Prepared {
        let (world, lookups) = located_world(n, rng);
        Prepared::passes(n, move || {
            let positions: ReadStorage<Position> = world.read_storage();
            sum_lookups(&lookups, |e| positions.get(e).map_or(0.0, |p| p.0.x));
        })
    }

    /// `World::read_storage` (a run-time borrow of the storage) for each
    /// lookup.
    fn random_get_call(n: usize, rng: &mut Rng) -> Prepared {
        let (world, lookups) = located_world(n, rng);
        Prepared::passes(n, move || {
            sum_lookups(&lookups, |e| {
                let positions: ReadStorage<Position> = world.read_storage();
                positions.get(e).map_or(0.0, |p| p.0.x)
            });
        })
    }
}

/// `random_get`'s world of `n` located entities, one `create_entity` each,
/// and the order of the lookups.
fn located_world(n: usize, rng: &mut Rng) -> (World, Vec<Entity>) {
    let mut world = World::new();
    world.register::<Position>();
    world.register::<Velocity>();
    let entities: Vec<Entity> = (0..n)
        .map(|i| {
            let (position, velocity) = data::located(i);
            world.create_entity().with(position).with(velocity).build()
        })
        .collect();
    let lookups = crate::workloads::random_lookups(&entities, rng);
    (world, lookups)
}

/// A system that swaps the values of two `f32` components, as the suite's
/// `ABSystem`, `CDSystem` and `CESystem` do.
struct Swap<X, Y>(std::marker::PhantomData<(X, Y)>);

impl<'a, X, Y> System<'a> for Swap<X, Y>
where
    X: Component<Storage = VecStorage<X>> + AsMut<f32> + Send + Sync,
    Y: Component<Storage = VecStorage<Y>> + AsMut<f32> + Send + Sync,
{
    type SystemData = (WriteStorage<'a, X>, WriteStorage<'a, Y>);

    fn run(&mut self, (mut xs, mut ys): Self::SystemData) {
        for (x, y) in (&mut xs, &mut ys).join() {
            data::swap(x, y);
        }
    }
}
