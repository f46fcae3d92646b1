//! The loops of the runner's ECS section, one per process, for counting
//! instructions with callgrind (as `instructions.rs` does for the core
//! tables):
//!
//! ```sh
//! cargo build --release -p handlekit-bench --example ecs_instructions
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured*' \
//!     target/release/examples/ecs_instructions add_remove handlekit 10000
//! ```
//!
//! Only the measured section (a function whose name has `measured` in it)
//! is counted; divide by N. Workloads: `spawn` (into an existing world;
//! `insert`, the runner's `simple_insert`, also makes and drops the world),
//! `insert`, `iter` (one `simple_iter` pass), `iter_for` (the same pass
//! as a `for` loop; handlekit and hecs only), `add_remove`, `get` (a
//! query's `get` for handlekit, each peer's view or storage), `world_get`,
//! `get_mut`, `has` (handlekit-ecs's plain `World` calls, as the runner's
//! `random_get` rows make them, and hecs's `World::get`),
//! `despawn` (`despawn_front`'s despawns of the oldest 90%, one by one;
//! handlekit and hecs only),
//! `schedule` (its three systems on one thread; N entities of each kind,
//! handlekit and hecs only), `save` / `load` / `serde` (the save, the load,
//! or both, of `serialize_binary` over N simple entities; add `text` after N
//! for `serialize_text`'s JSON; `save` and `load` for handlekit only, `serde`
//! also for hecs).
//! Contenders: `handlekit`, `hecs`, `shipyard`, and for `add_remove` and
//! `get` also `planck` and `specs` (the runner's fastest peers there); for
//! `add_remove` also `handlekit-one` (the world's per-call `insert_one` /
//! `remove_one`, where `handlekit` holds a `ColumnMut` across the loop as
//! shipyard holds its `ViewMut`). `add_remove` takes `passes=P` after N:
//! P passes over one world; the count of one pass taken off is then a pass
//! whose inserts find their slots made (the runner times the first pass,
//! on a fresh world). handlekit-ecs's worlds reserve room for `2 N` rows
//! here, not `World::new`'s 2²⁴ (valgrind does not take reservations of
//! gigabytes).

use std::hint::black_box;

use handlekit_bench::ecs::data::{self, Position, Simple, Velocity, SA, SB, SC, SD, SE};
use handlekit_bench::for_each_schedule_kind;
use shipyard::{EntitiesViewMut, Get as _, IntoIter as _, Remove as _, View, ViewMut};

/// A handlekit-ecs world for `n` entities (see the module docs).
fn hk_world(n: usize) -> handlekit_ecs::World {
    handlekit_ecs::World::with_max_rows(2 * n.max(4096))
}

#[inline(never)]
fn measured_hk_spawn(world: &mut handlekit_ecs::World, n: usize) {
    world.spawn_batch((0..n).map(|_| data::simple()));
}

#[inline(never)]
fn measured_hk_insert(n: usize) {
    let mut world = hk_world(n);
    world.spawn_batch((0..n).map(|_| data::simple()));
    black_box(&world);
}

#[inline(never)]
fn measured_hk_iter(world: &mut handlekit_ecs::World) {
    world
        .query_mut::<(&mut Position, &Velocity)>()
        .for_each(|(p, v)| p.0 += v.0);
}

/// `simple_iter`'s pass as a `for` loop: the cost of `next()`.
#[inline(never)]
fn measured_hk_iter_for(world: &mut handlekit_ecs::World) {
    for (p, v) in world.query_mut::<(&mut Position, &Velocity)>() {
        p.0 += v.0;
    }
}

#[inline(never)]
fn measured_hk_add_remove(world: &mut handlekit_ecs::World, es: &[handlekit_ecs::Entity]) {
    let mut b = world.column_mut::<SB>();
    for &e in es {
        b.insert(e, SB(0.0)).unwrap();
    }
    for &e in es {
        black_box(b.remove(e).unwrap());
    }
}

/// `add_remove` through the world's per-call `insert_one` / `remove_one`.
#[inline(never)]
fn measured_hk_add_remove_one(world: &mut handlekit_ecs::World, es: &[handlekit_ecs::Entity]) {
    for &e in es {
        world.insert_one(e, SB(0.0)).unwrap();
    }
    for &e in es {
        black_box(world.remove_one::<SB>(e).unwrap());
    }
}

/// `despawn_front`'s despawns: the oldest 90% of the world, one by one.
#[inline(never)]
fn measured_hk_despawn(world: &mut handlekit_ecs::World, es: &[handlekit_ecs::Entity]) {
    for &e in es {
        world.despawn(e).unwrap();
    }
}

#[inline(never)]
fn measured_hecs_despawn(world: &mut hecs::World, es: &[hecs::Entity]) {
    for &e in es {
        world.despawn(e).unwrap();
    }
}

/// `schedule`'s three systems, one after the other on one thread.
#[inline(never)]
fn measured_hk_schedule(world: &handlekit_ecs::World) {
    world
        .query::<(&mut SA, &mut SB)>()
        .for_each(|(x, y)| std::mem::swap(&mut x.0, &mut y.0));
    world
        .query::<(&mut SC, &mut SD)>()
        .for_each(|(x, y)| std::mem::swap(&mut x.0, &mut y.0));
    world
        .query::<(&mut SC, &mut SE)>()
        .for_each(|(x, y)| std::mem::swap(&mut x.0, &mut y.0));
}

#[inline(never)]
fn measured_hecs_schedule(world: &hecs::World) {
    world
        .query::<(&mut SA, &mut SB)>()
        .iter()
        .for_each(|(x, y)| std::mem::swap(&mut x.0, &mut y.0));
    world
        .query::<(&mut SC, &mut SD)>()
        .iter()
        .for_each(|(x, y)| std::mem::swap(&mut x.0, &mut y.0));
    world
        .query::<(&mut SC, &mut SE)>()
        .iter()
        .for_each(|(x, y)| std::mem::swap(&mut x.0, &mut y.0));
}

/// The registry of the serialization workloads.
fn hk_registry() -> handlekit_ecs::serialize::Registry<impl handlekit_ecs::serialize::Components> {
    handlekit_ecs::serialize::Registry::new()
        .component::<data::Transform>("transform")
        .component::<Position>("position")
        .component::<data::Rotation>("rotation")
        .component::<Velocity>("velocity")
}

#[inline(never)]
fn measured_hk_save(world: &handlekit_ecs::World, text: bool) -> Vec<u8> {
    let registry = hk_registry();
    if text {
        serde_json::to_vec(&registry.save(world)).unwrap()
    } else {
        postcard::to_allocvec(&registry.save(world)).unwrap()
    }
}

#[inline(never)]
fn measured_hk_load(bytes: &[u8], text: bool, max_rows: usize) -> handlekit_ecs::World {
    use serde::de::DeserializeSeed;
    let registry = hk_registry();
    let load = registry.load().max_rows(max_rows).max_memory(usize::MAX);
    if text {
        load.deserialize(&mut serde_json::Deserializer::from_slice(bytes))
            .unwrap()
    } else {
        load.deserialize(&mut postcard::Deserializer::from_bytes(bytes))
            .unwrap()
    }
}

#[inline(never)]
fn measured_hecs_serde(world: &hecs::World, text: bool) {
    black_box(handlekit_bench::ecs::hecs_serialize_round_trip(world, text));
}

#[inline(never)]
fn measured_hk_get(world: &handlekit_ecs::World, es: &[handlekit_ecs::Entity]) -> f32 {
    let mut q = world.query::<&Position>();
    es.iter().map(|&e| q.get(e).map_or(0.0, |p| p.0.x)).sum()
}

/// `random_get`'s headline: the plain `World::get`, one guard per call.
#[inline(never)]
fn measured_hk_world_get(world: &handlekit_ecs::World, es: &[handlekit_ecs::Entity]) -> f32 {
    let mut sum = 0.0f32;
    for &e in es {
        sum += world.get::<Position>(e).map_or(0.0, |p| p.0.x);
    }
    sum
}

#[inline(never)]
fn measured_hk_get_mut(world: &mut handlekit_ecs::World, es: &[handlekit_ecs::Entity]) -> f32 {
    let mut sum = 0.0f32;
    for &e in es {
        sum += world.get_mut::<Position>(e).map_or(0.0, |p| p.0.x);
    }
    sum
}

#[inline(never)]
fn measured_hk_has(world: &handlekit_ecs::World, es: &[handlekit_ecs::Entity]) -> f32 {
    let mut sum = 0.0f32;
    for &e in es {
        sum += f32::from(u8::from(world.has::<Position>(e)));
    }
    sum
}

#[inline(never)]
fn measured_hecs_world_get(world: &hecs::World, es: &[hecs::Entity]) -> f32 {
    let mut sum = 0.0f32;
    for &e in es {
        sum += world.get::<&Position>(e).map_or(0.0, |p| p.0.x);
    }
    sum
}

#[inline(never)]
fn measured_planck_add_remove(b: &mut planck_ecs::Components<SB>, es: &[planck_ecs::Entity]) {
    for &e in es {
        black_box(b.insert(e, SB(0.0)));
    }
    for &e in es {
        black_box(b.remove(e));
    }
}

#[inline(never)]
fn measured_planck_get(p: &planck_ecs::Components<Position>, es: &[planck_ecs::Entity]) -> f32 {
    let mut sum = 0.0f32;
    for &e in es {
        sum += p.get(e).map_or(0.0, |p| p.0.x);
    }
    sum
}

#[inline(never)]
fn measured_specs_add_remove(world: &specs::World, es: &[specs::Entity]) {
    use specs::WorldExt as _;
    let mut b = world.write_storage::<SB>();
    for &e in es {
        b.insert(e, SB(0.0)).unwrap();
    }
    for &e in es {
        black_box(b.remove(e));
    }
}

#[inline(never)]
fn measured_specs_get(world: &specs::World, es: &[specs::Entity]) -> f32 {
    use specs::WorldExt as _;
    let p = world.read_storage::<Position>();
    let mut sum = 0.0f32;
    for &e in es {
        sum += p.get(e).map_or(0.0, |p| p.0.x);
    }
    sum
}

/// planck_ecs's entities, one storage of each of `put`'s components.
fn planck_entities(n: usize) -> Vec<planck_ecs::Entity> {
    let mut entities = planck_ecs::Entities::default();
    (0..n).map(|_| entities.create()).collect()
}

/// A specs world with `A` and `B` registered and `n` entities made by `make`.
fn specs_world<A: specs::Component + Send + Sync, B: specs::Component + Send + Sync>(
    n: usize,
    make: impl Fn(usize) -> (A, B),
) -> (specs::World, Vec<specs::Entity>)
where
    A::Storage: Default,
    B::Storage: Default,
{
    use specs::{Builder as _, WorldExt as _};
    let mut world = specs::World::new();
    world.register::<A>();
    world.register::<B>();
    let es = (0..n)
        .map(|i| {
            let (a, b) = make(i);
            world.create_entity().with(a).with(b).build()
        })
        .collect();
    (world, es)
}

#[inline(never)]
fn measured_hecs_spawn(world: &mut hecs::World, n: usize) {
    world.spawn_batch((0..n).map(|_| data::simple()));
}

#[inline(never)]
fn measured_hecs_insert(n: usize) {
    let mut world = hecs::World::new();
    world.spawn_batch((0..n).map(|_| data::simple()));
    black_box(&world);
}

#[inline(never)]
fn measured_hecs_iter(world: &mut hecs::World) {
    world
        .query_mut::<(&mut Position, &Velocity)>()
        .into_iter()
        .for_each(|(p, v)| p.0 += v.0);
}

/// `simple_iter`'s pass as a `for` loop, as the suite's hecs module writes
/// it.
#[inline(never)]
fn measured_hecs_iter_for(world: &mut hecs::World) {
    for (p, v) in world.query_mut::<(&mut Position, &Velocity)>() {
        p.0 += v.0;
    }
}

#[inline(never)]
fn measured_hecs_add_remove(world: &mut hecs::World, es: &[hecs::Entity]) {
    for &e in es {
        world.insert_one(e, SB(0.0)).unwrap();
    }
    for &e in es {
        black_box(world.remove_one::<SB>(e).unwrap());
    }
}

#[inline(never)]
fn measured_hecs_get(world: &hecs::World, es: &[hecs::Entity]) -> f32 {
    let view = world.view::<&Position>();
    es.iter().map(|&e| view.get(e).map_or(0.0, |p| p.0.x)).sum()
}

#[inline(never)]
fn measured_shipyard_spawn(world: &mut shipyard::World, n: usize) {
    world.bulk_add_entity((0..n).map(|_| data::simple()));
}

#[inline(never)]
fn measured_shipyard_insert(n: usize) {
    let mut world = shipyard::World::new();
    world.bulk_add_entity((0..n).map(|_| data::simple()));
    black_box(&world);
}

#[inline(never)]
fn measured_shipyard_iter(world: &shipyard::World) {
    world.run(|mut p: ViewMut<Position>, v: View<Velocity>| {
        (&mut p, &v).iter().for_each(|(p, v)| p.0 += v.0);
    });
}

#[inline(never)]
fn measured_shipyard_add_remove(world: &shipyard::World, es: &[shipyard::EntityId]) {
    world.run(|entities: EntitiesViewMut, mut b: ViewMut<SB>| {
        for &e in es {
            entities.add_component(e, &mut b, SB(0.0));
        }
        for &e in es {
            black_box(b.remove(e));
        }
    });
}

#[inline(never)]
fn measured_shipyard_get(world: &shipyard::World, es: &[shipyard::EntityId]) -> f32 {
    world.run(|p: View<Position>| es.iter().map(|&e| p.get(e).map_or(0.0, |p| p.0.x)).sum())
}

/// `n` handles of `entities`, in a scrambled order.
fn scrambled<E: Copy>(entities: &[E]) -> Vec<E> {
    let mut rng = handlekit_bench::workloads::Rng::new(7);
    let mut out = entities.to_vec();
    rng.shuffle(&mut out);
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (work, who) = (args[1].as_str(), args[2].as_str());
    let n: usize = args.get(3).map_or(10_000, |s| s.parse().expect("N"));
    let text = args.get(4).is_some_and(|s| s == "text");
    // `add_remove` runs this many passes over one world (`passes=2` after
    // N: with the count of one pass taken off, the steady state the runner
    // times, whose inserts find their slots made).
    let passes = args
        .get(4)
        .and_then(|s| s.strip_prefix("passes="))
        .map_or(1, |s| s.parse().expect("passes"));
    let base = |i: usize| (SA(i as f32),);
    let pv = |_| (Position(data::Vec3::X), Velocity(data::Vec3::X));
    match (work, who) {
        ("spawn", "handlekit") => {
            let mut world = hk_world(n);
            world.spawn(data::simple());
            measured_hk_spawn(&mut world, n);
        }
        ("spawn", "hecs") => {
            let mut world = hecs::World::new();
            world.spawn(data::simple());
            measured_hecs_spawn(&mut world, n);
        }
        ("spawn", "shipyard") => {
            let mut world = shipyard::World::new();
            world.add_entity(data::simple());
            measured_shipyard_spawn(&mut world, n);
        }
        ("insert", "handlekit") => measured_hk_insert(n),
        ("insert", "hecs") => measured_hecs_insert(n),
        ("insert", "shipyard") => measured_shipyard_insert(n),
        ("iter" | "iter_for", "handlekit") => {
            let mut world = hk_world(n);
            world.spawn_batch((0..n).map(|_| data::simple()));
            if work == "iter" {
                measured_hk_iter(&mut world);
            } else {
                measured_hk_iter_for(&mut world);
            }
        }
        ("iter" | "iter_for", "hecs") => {
            let mut world = hecs::World::new();
            world.spawn_batch((0..n).map(|_| -> Simple { data::simple() }));
            if work == "iter" {
                measured_hecs_iter(&mut world);
            } else {
                measured_hecs_iter_for(&mut world);
            }
        }
        ("iter", "shipyard") => {
            let mut world = shipyard::World::new();
            world.bulk_add_entity((0..n).map(|_| data::simple()));
            measured_shipyard_iter(&world);
        }
        ("add_remove", "handlekit") => {
            let mut world = hk_world(n);
            let es = world.spawn_batch((0..n).map(base));
            for _ in 0..passes {
                measured_hk_add_remove(&mut world, &es);
            }
        }
        ("add_remove", "handlekit-one") => {
            let mut world = hk_world(n);
            let es = world.spawn_batch((0..n).map(base));
            for _ in 0..passes {
                measured_hk_add_remove_one(&mut world, &es);
            }
        }
        ("add_remove", "hecs") => {
            let mut world = hecs::World::new();
            let es: Vec<_> = world.spawn_batch((0..n).map(base)).collect();
            for _ in 0..passes {
                measured_hecs_add_remove(&mut world, &es);
            }
        }
        ("add_remove", "shipyard") => {
            let mut world = shipyard::World::new();
            let es: Vec<_> = world.bulk_add_entity((0..n).map(base)).collect();
            for _ in 0..passes {
                measured_shipyard_add_remove(&world, &es);
            }
        }
        // The runner's `schedule` world: N entities of each of its kinds.
        ("schedule", "handlekit") => {
            let mut world = hk_world(4 * n);
            for_each_schedule_kind!(|kind| drop(world.spawn_batch((0..n).map(|_| kind))));
            measured_hk_schedule(&world);
        }
        ("schedule", "hecs") => {
            let mut world = hecs::World::new();
            for_each_schedule_kind!(|kind| drop(world.spawn_batch((0..n).map(|_| kind))));
            measured_hecs_schedule(&world);
        }
        ("despawn", "handlekit") => {
            let mut world = hk_world(n);
            let es = world.spawn_batch((0..n).map(|_| data::simple()));
            measured_hk_despawn(&mut world, &es[..n - n / 10]);
        }
        ("despawn", "hecs") => {
            let mut world = hecs::World::new();
            let es: Vec<_> = world.spawn_batch((0..n).map(|_| data::simple())).collect();
            measured_hecs_despawn(&mut world, &es[..n - n / 10]);
        }
        ("save" | "load" | "serde", "handlekit") => {
            let mut world = hk_world(n);
            world.spawn_batch((0..n).map(|_| data::simple()));
            let bytes = if work == "load" {
                let registry = hk_registry();
                if text {
                    serde_json::to_vec(&registry.save(&world)).unwrap()
                } else {
                    postcard::to_allocvec(&registry.save(&world)).unwrap()
                }
            } else {
                measured_hk_save(&world, text)
            };
            if work != "save" {
                black_box(measured_hk_load(&bytes, text, 2 * n.max(4096)));
            }
        }
        ("serde", "hecs") => {
            let mut world = hecs::World::new();
            world.spawn_batch((0..n).map(|_| -> Simple { data::simple() }));
            measured_hecs_serde(&world, text);
        }
        // The lookups: each contender's world of N located entities, looked
        // up in a scrambled order.
        ("get" | "world_get" | "get_mut" | "has", "handlekit") => {
            let mut world = hk_world(n);
            let es = scrambled(&world.spawn_batch((0..n).map(pv)));
            black_box(match work {
                "get" => measured_hk_get(&world, &es),
                "world_get" => measured_hk_world_get(&world, &es),
                "get_mut" => measured_hk_get_mut(&mut world, &es),
                _ => measured_hk_has(&world, &es),
            });
        }
        ("get" | "world_get", "hecs") => {
            let mut world = hecs::World::new();
            let es: Vec<_> = world.spawn_batch((0..n).map(pv)).collect();
            let es = scrambled(&es);
            black_box(if work == "get" {
                measured_hecs_get(&world, &es)
            } else {
                measured_hecs_world_get(&world, &es)
            });
        }
        ("get", "shipyard") => {
            let mut world = shipyard::World::new();
            let es: Vec<_> = world.bulk_add_entity((0..n).map(pv)).collect();
            black_box(measured_shipyard_get(&world, &scrambled(&es)));
        }
        ("add_remove", "planck") => {
            let es = planck_entities(n);
            let mut a = planck_ecs::Components::<SA>::default();
            for (i, &e) in es.iter().enumerate() {
                a.insert(e, SA(i as f32));
            }
            let mut b = planck_ecs::Components::<SB>::default();
            for _ in 0..passes {
                measured_planck_add_remove(&mut b, &es);
            }
            black_box(&a);
        }
        ("get", "planck") => {
            let es = planck_entities(n);
            let mut p = planck_ecs::Components::<Position>::default();
            let mut v = planck_ecs::Components::<Velocity>::default();
            for (i, &e) in es.iter().enumerate() {
                let (position, velocity) = pv(i);
                p.insert(e, position);
                v.insert(e, velocity);
            }
            black_box(measured_planck_get(&p, &scrambled(&es)));
            black_box(&v);
        }
        ("add_remove", "specs") => {
            use specs::WorldExt as _;
            let (mut world, es) = specs_world(n, |i| (SA(i as f32), SC(0.0)));
            world.register::<SB>();
            for _ in 0..passes {
                measured_specs_add_remove(&world, &es);
            }
        }
        ("get", "specs") => {
            let (world, es) = specs_world(n, pv);
            black_box(measured_specs_get(&world, &scrambled(&es)));
        }
        _ => panic!("unknown workload or contender: {work} {who}"),
    }
}
