//! Reserving entities from a shared world (`World::reserve_entity`,
//! `reserve_entities`, `flush`) and naming them in commands.
//!
//! The model test runs every operation on the world under test and on a
//! shadow world that spawns where the other reserves: since reservations
//! are exactly the entities the same number of spawns would have made, the
//! two must hand out the same entities, whatever the interleaving of
//! reservations, spawns, despawns, collections and flushes.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

use handlekit_ecs::{CommandBuffer, Entity, Order, World};
use proptest::prelude::*;

mod common;

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn reserved_entities_become_empty_entities_on_flush() {
    let mut world = World::new();
    let a = world.spawn((1u8,));
    let r = world.reserve_entity();
    assert_ne!(r, a);
    assert!(world.contains(r), "a reserved entity is contained at once");
    assert_eq!(world.len(), 1, "but not counted before the flush");
    assert!(world.get::<u8>(r).is_err());
    assert!(world.entity(r).is_err());
    assert_eq!(world.iter().count(), 1);
    world.flush();
    assert_eq!(world.len(), 2);
    assert!(world.contains(r));
    let e = world.entity(r).unwrap();
    assert!(!e.has::<u8>());
    let all: Vec<Entity> = world.query_mut::<Entity>().into_iter().collect();
    assert_eq!(all, [a, r]);
    world.check_invariants();
    // A second flush has nothing to do.
    world.flush();
    assert_eq!(world.len(), 2);
}

#[test]
fn reservations_are_the_entities_spawns_would_make() {
    let mut reserving = World::new();
    let mut spawning = World::new();
    for world in [&mut reserving, &mut spawning] {
        let es: Vec<Entity> = (0..10u32).map(|i| world.spawn((i,))).collect();
        for &e in es.iter().step_by(3) {
            world.despawn(e).unwrap();
        }
    }
    let reserved: Vec<Entity> = (0..6).map(|_| reserving.reserve_entity()).collect();
    let spawned: Vec<Entity> = (0..6).map(|_| spawning.spawn(())).collect();
    assert_eq!(reserved, spawned);
    // Freed indices first, lowest first, at their next generation.
    assert_eq!(
        reserved.iter().map(|e| e.index()).collect::<Vec<_>>(),
        [0, 3, 6, 9, 10, 11]
    );
    assert!(reserved[..4].iter().all(|e| e.generation() == 2));
    assert!(reserved[4..].iter().all(|e| e.generation() == 1));
}

#[test]
fn reserve_entities_matches_one_at_a_time() {
    let mut many = World::new();
    let mut single = World::new();
    for world in [&mut many, &mut single] {
        let es = world.spawn_batch((0..200u32).map(|i| (i,)));
        for &e in es.iter().filter(|e| e.index() % 7 != 0) {
            world.despawn(e).unwrap();
        }
    }
    // In two calls, so the second starts in the middle of the free set.
    let mut a: Vec<Entity> = many.reserve_entities(50).collect();
    let it = many.reserve_entities(150);
    assert_eq!(it.len(), 150);
    a.extend(it);
    let b: Vec<Entity> = (0..200).map(|_| single.reserve_entity()).collect();
    assert_eq!(a, b);
    assert_eq!(a.iter().collect::<HashSet<_>>().len(), 200);
    many.flush();
    single.flush();
    assert_eq!(many.len(), single.len());
    assert!(a.iter().all(|&e| many.contains(e) && single.contains(e)));
    many.check_invariants();
}

#[test]
fn contains_tells_reserved_from_other_entities() {
    let mut world = World::new();
    let es: Vec<Entity> = (0..4u8).map(|i| world.spawn((i,))).collect();
    world.despawn(es[1]).unwrap();
    world.despawn(es[2]).unwrap();
    let r = world.reserve_entity(); // index 1
    assert_eq!(r.index(), 1);
    // The stale handle of index 1, the free index 2 at its next generation
    // (not reserved yet), and a new index past the reservations.
    assert!(world.contains(r));
    assert!(!world.contains(es[1]));
    let next_of_2 = Entity::from_bits(2 | u64::from(es[2].generation() + 1) << 32).unwrap();
    assert!(!world.contains(next_of_2));
    let new = Entity::from_bits(4 | 1 << 32).unwrap();
    assert!(!world.contains(new));
    let r2 = world.reserve_entity();
    let r3 = world.reserve_entity();
    assert_eq!((r2, r3), (next_of_2, new));
    assert!(world.contains(next_of_2) && world.contains(new));
    let beyond = Entity::from_bits(5 | 1 << 32).unwrap();
    assert!(!world.contains(beyond));
    world.flush();
    assert!(world.contains(r) && world.contains(r2) && world.contains(r3));
    assert!(!world.contains(beyond));
}

#[test]
fn mutating_calls_flush_first() {
    let mut world = World::new();
    let r = world.reserve_entity();
    world.insert_one(r, 5u32).unwrap(); // spawns it
    assert_eq!(*world.get::<u32>(r).unwrap(), 5);

    let r = world.reserve_entity();
    world.insert(r, (1u8, 'x')).unwrap();
    assert_eq!(*world.get::<char>(r).unwrap(), 'x');

    let r = world.reserve_entity();
    assert_eq!(
        world.remove_one::<u8>(r),
        Err(handlekit_ecs::ComponentError::MissingComponent("u8"))
    );
    assert!(
        world.entity(r).is_ok(),
        "the failed remove still flushed it"
    );

    let r = world.reserve_entity();
    world.despawn(r).unwrap();
    assert!(!world.contains(r));

    let r = world.reserve_entity();
    let s = world.spawn(());
    assert_ne!(r, s);
    assert!(world.entity(r).is_ok() && world.entity(s).is_ok());

    // `get_mut` does not flush: a reserved entity is not there yet for
    // it, as for `get`, and stays reserved.
    let r = world.reserve_entity();
    assert_eq!(
        world.get_mut::<u8>(r),
        Err(handlekit_ecs::ComponentError::NoSuchEntity)
    );
    assert!(world.get::<u8>(r).is_err() && !world.has::<u8>(r));
    assert!(world.contains(r) && world.entity(r).is_err());
    world.flush();
    assert!(world.entity(r).is_ok());
    assert_eq!(
        world.get_mut::<u8>(r),
        Err(handlekit_ecs::ComponentError::MissingComponent("u8"))
    );

    let r = world.reserve_entity();
    world.collect(16, Order::Any);
    assert!(world.entity(r).is_ok());

    let r = world.reserve_entity();
    let es = world.spawn_batch((0..3u8).map(|i| (i,)));
    assert!(!es.contains(&r));
    assert!(world.entity(r).is_ok());

    let r = world.reserve_entity();
    world.clear();
    assert!(
        !world.contains(r),
        "clear flushes, then despawns everything"
    );
    world.check_invariants();

    // A stale entity stays an error, reservations or not.
    let gone = world.spawn(());
    world.despawn(gone).unwrap();
    let _ = world.reserve_entity();
    assert!(world.insert_one(gone, 1u8).is_err());
    assert!(world.despawn(gone).is_err());
    world.check_invariants();
}

#[test]
fn command_buffers_name_reserved_entities() {
    let mut world = World::new();
    world.spawn_batch((0..5u32).map(|i| (i,)));
    let mut commands = CommandBuffer::new();
    let mut children = Vec::new();
    for (e, &x) in world.query::<(Entity, &u32)>().iter() {
        let child = world.reserve_entity();
        children.push((e, child, x));
        commands.insert(child, (x + 100, e));
        commands.insert_one(child, 'c');
    }
    commands.run_on(&mut world);
    assert_eq!(world.len(), 10);
    for (parent, child, x) in children {
        assert_eq!(*world.get::<u32>(child).unwrap(), x + 100);
        assert_eq!(*world.get::<Entity>(child).unwrap(), parent);
        assert_eq!(*world.get::<char>(child).unwrap(), 'c');
    }
    // A reserved entity despawned by a command before any insert.
    let r = world.reserve_entity();
    commands.despawn(r);
    commands.insert_one(r, 1u8); // does nothing: it is gone
    commands.run_on(&mut world);
    assert!(!world.contains(r));
    world.check_invariants();
}

#[test]
fn reservations_past_max_rows_panic_and_reserve_nothing() {
    let mut world = World::with_max_rows(4);
    world.spawn(());
    world.spawn(());
    let a = world.reserve_entity();
    let err = catch_unwind(AssertUnwindSafe(|| world.reserve_entities(2).count())).unwrap_err();
    let message = panic_message(err);
    assert!(
        message.contains("no room for 2 more reserved entities"),
        "{message}"
    );
    assert!(message.contains("max_rows 4"), "{message}");
    let b = world.reserve_entity(); // the last row
    let err = catch_unwind(AssertUnwindSafe(|| world.reserve_entity())).unwrap_err();
    assert!(panic_message(err).contains("no room for 1 more"));
    world.flush();
    assert_eq!(world.len(), 4);
    assert!(world.contains(a) && world.contains(b));
    world.check_invariants();
}

#[test]
fn reserving_from_many_threads_gives_distinct_entities() {
    let threads = if cfg!(miri) { 3 } else { 4 };
    let per_thread = if cfg!(miri) { 20 } else { 2_000 };
    let mut world = World::new();
    let mut shadow = World::new();
    for w in [&mut world, &mut shadow] {
        let es = w.spawn_batch((0..per_thread as u32).map(|i| (i,)));
        for &e in es.iter().step_by(2) {
            w.despawn(e).unwrap();
        }
    }
    let reserved: Vec<Entity> = std::thread::scope(|scope| {
        let world = &world;
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut mine = Vec::new();
                    for i in 0..per_thread {
                        if (i + t) % 3 == 0 {
                            mine.extend(world.reserve_entities(2));
                        } else {
                            mine.push(world.reserve_entity());
                        }
                        assert!(world.contains(*mine.last().unwrap()));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let set: HashSet<Entity> = reserved.iter().copied().collect();
    assert_eq!(set.len(), reserved.len(), "every reservation is distinct");
    // The same entities as that many spawns, whichever thread got which.
    let spawned: HashSet<Entity> = (0..reserved.len()).map(|_| shadow.spawn(())).collect();
    assert_eq!(set, spawned);
    world.flush();
    assert_eq!(world.len(), shadow.len());
    assert!(reserved.iter().all(|&e| world.entity(e).is_ok()));
    world.check_invariants();
}

#[test]
fn reserved_indices_in_swept_pages_get_newer_generations() {
    let mut world = World::new();
    // Under Miri, two pages of 512 indices (zeroed together): spawning and
    // despawning an entity takes 6 ms of Miri's clock.
    let n = if cfg!(miri) { 1024 } else { 2048 };
    let es = world.spawn_batch((0..n).map(|i| (i,)));
    for &e in &es {
        world.despawn(e).unwrap();
    }
    // Zeroes the entity table's pages of free indices.
    world.compact();
    world.collect(usize::MAX, Order::Any);
    let r = world.reserve_entity();
    assert_eq!(r.index(), 0);
    assert!(r.generation() > es[0].generation());
    assert!(world.contains(r) && !world.contains(es[0]));
    world.flush();
    assert!(world.contains(r) && !world.contains(es[0]));
    world.check_invariants();
}

#[derive(Clone, Debug)]
enum Op {
    Spawn,
    SpawnBatch(u16),
    Despawn(usize),
    DespawnMost,
    Reserve,
    ReserveMany(u8),
    Flush,
    InsertOnReserved(usize),
    Collect(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => Just(Op::Spawn),
        1 => (1..700u16).prop_map(Op::SpawnBatch),
        3 => any::<usize>().prop_map(Op::Despawn),
        1 => Just(Op::DespawnMost),
        4 => Just(Op::Reserve),
        2 => (0..40u8).prop_map(Op::ReserveMany),
        2 => Just(Op::Flush),
        2 => any::<usize>().prop_map(Op::InsertOnReserved),
        1 => (1..2000u16).prop_map(Op::Collect),
    ]
}

proptest! {
    #![proptest_config(common::proptest_config(4, 128))]

    /// Reservations, spawns, despawns, collections and flushes, against a
    /// shadow world that spawns where this one reserves, and a set of the
    /// live entities.
    #[test]
    fn reservations_match_a_spawning_shadow(ops in proptest::collection::vec(op(), 1..if cfg!(miri) { 12 } else { 60 })) {
        let mut world = World::new();
        let mut shadow = World::new();
        let mut live: Vec<Entity> = Vec::new();
        let mut dead: Vec<Entity> = Vec::new();
        let mut outstanding: Vec<Entity> = Vec::new();
        let len = ops.len();
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Spawn => {
                    let e = world.spawn((1u32,));
                    prop_assert_eq!(e, shadow.spawn((1u32,)));
                    live.append(&mut outstanding);
                    live.push(e);
                }
                Op::SpawnBatch(n) => {
                    let n = if cfg!(miri) { n % 20 } else { n };
                    let es = world.spawn_batch((0..u32::from(n)).map(|i| (i,)));
                    prop_assert_eq!(&es, &shadow.spawn_batch((0..u32::from(n)).map(|i| (i,))));
                    live.append(&mut outstanding);
                    live.extend(es);
                }
                Op::Despawn(i) => {
                    live.append(&mut outstanding);
                    if !live.is_empty() {
                        let e = live.swap_remove(i % live.len());
                        prop_assert!(world.despawn(e).is_ok());
                        prop_assert!(shadow.despawn(e).is_ok());
                        dead.push(e);
                    } else if let Some(&e) = dead.last() {
                        prop_assert!(world.despawn(e).is_err());
                    }
                }
                Op::DespawnMost => {
                    live.append(&mut outstanding);
                    let keep = live.len() / 10;
                    for e in live.drain(keep..) {
                        world.despawn(e).unwrap();
                        shadow.despawn(e).unwrap();
                        dead.push(e);
                    }
                }
                Op::Reserve => {
                    let e = world.reserve_entity();
                    prop_assert_eq!(e, shadow.spawn(()));
                    outstanding.push(e);
                }
                Op::ReserveMany(n) => {
                    let es: Vec<Entity> = world.reserve_entities(u32::from(n)).collect();
                    let expected: Vec<Entity> = (0..n).map(|_| shadow.spawn(())).collect();
                    prop_assert_eq!(&es, &expected);
                    outstanding.extend(es);
                }
                Op::Flush => {
                    world.flush();
                    live.append(&mut outstanding);
                }
                Op::InsertOnReserved(i) => {
                    if !outstanding.is_empty() {
                        let e = outstanding[i % outstanding.len()];
                        prop_assert!(world.insert_one(e, 7u32).is_ok());
                        prop_assert!(shadow.insert_one(e, 7u32).is_ok());
                        prop_assert_eq!(*world.get::<u32>(e).unwrap(), 7);
                        live.append(&mut outstanding);
                    }
                }
                Op::Collect(budget) => {
                    world.collect(usize::from(budget), Order::Any);
                    shadow.collect(usize::from(budget), Order::Any);
                    live.append(&mut outstanding);
                }
            }
            // Under Miri, after every few operations and the last (see
            // `check_after`).
            if !common::check_after(step, len) {
                continue;
            }
            prop_assert_eq!(world.len() + outstanding.len(), shadow.len());
            prop_assert_eq!(world.len(), live.len());
            for &e in live.iter().chain(&outstanding) {
                prop_assert!(world.contains(e));
            }
            for &e in &outstanding {
                prop_assert!(world.entity(e).is_err());
            }
            for &e in dead.iter().rev().take(50) {
                prop_assert!(!world.contains(e));
            }
            world.check_invariants();
        }
        world.flush();
        live.append(&mut outstanding);
        let all: HashSet<Entity> = world.iter().map(|e| e.entity()).collect();
        prop_assert_eq!(all, live.iter().copied().collect::<HashSet<_>>());
        prop_assert_eq!(world.len(), shadow.len());
    }
}
