//! Conflicting run-time borrows panic, naming the component type, also in
//! queries of many columns.

use handlekit_ecs::World;

struct Position(#[allow(dead_code)] f32);
struct Velocity(#[allow(dead_code)] f32);

fn world() -> World {
    let mut world = World::new();
    world.spawn((Position(0.0), Velocity(1.0)));
    world
}

#[test]
fn disjoint_and_shared_borrows_coexist() {
    let world = world();
    let a = world.query::<&Position>();
    let b = world.query::<&Position>();
    let c = world.query::<&mut Velocity>();
    let r = world.get::<Position>(
        world
            .query::<handlekit_ecs::Entity>()
            .iter()
            .next()
            .unwrap(),
    );
    drop((a, b, c, r));
    // Released: a mutable borrow works now.
    let _ = world.query::<(&mut Position, &mut Velocity)>();
}

#[test]
#[should_panic(expected = "Position")]
fn mut_while_shared() {
    let world = world();
    let _a = world.query::<&Position>();
    let _b = world.query::<&mut Position>();
}

#[test]
#[should_panic(expected = "Velocity")]
fn shared_while_mut() {
    let world = world();
    let _a = world.query::<(&Position, &mut Velocity)>();
    let _b = world.query::<&Velocity>();
}

#[test]
#[should_panic(expected = "Position")]
fn within_one_query() {
    let world = world();
    let _ = world.query::<(&Position, &mut Position)>();
}

#[test]
#[should_panic(expected = "Position")]
fn within_one_query_mut() {
    let mut world = world();
    let _ = world.query_mut::<(&mut Position, &mut Position)>();
}

#[test]
#[should_panic(expected = "Position")]
fn get_while_mut_query() {
    let world = world();
    let e = world
        .query::<handlekit_ecs::Entity>()
        .iter()
        .next()
        .unwrap();
    let _q = world.query::<&mut Position>();
    let _r = world.get::<Position>(e);
}

#[test]
fn failed_borrow_releases_what_it_took() {
    let world = world();
    let held = world.query::<&mut Velocity>();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = world.query::<(&mut Position, &Velocity)>();
    }));
    assert!(result.is_err());
    drop(held);
    // Position was taken then given back when Velocity failed.
    let _ = world.query::<(&mut Position, &mut Velocity)>();
}

/// The first entity of `world()`.
fn first(world: &World) -> handlekit_ecs::Entity {
    world
        .query::<handlekit_ecs::Entity>()
        .iter()
        .next()
        .unwrap()
}

#[test]
fn refused_gets_leave_the_flag_free() {
    let world = world();
    let e = first(&world);
    let held = world.query::<&mut Position>();
    // Each refused `get` counts itself in and out again.
    for _ in 0..3 {
        let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            drop(world.get::<Position>(e));
        }));
        assert!(refused.is_err());
    }
    drop(held);
    // Free again: shared borrows stack, then an exclusive one is granted.
    let a = world.get::<Position>(e).unwrap();
    let b = world.get::<Position>(e).unwrap();
    assert_eq!((a.0, b.0), (0.0, 0.0));
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        drop(world.query::<&mut Position>());
    }));
    assert!(
        refused.is_err(),
        "an exclusive borrow beside two shared ones"
    );
    drop((a, b));
    drop(world.query::<&mut Position>());
}

#[test]
fn gets_racing_an_exclusive_borrow_leave_the_flag_free() {
    // Threads take shared borrows while another takes and gives back the
    // exclusive one; every borrow is granted or refused, and at the end
    // the flag is free.
    let rounds = if cfg!(miri) { 3 } else { 2000 };
    let world = world();
    let e = first(&world);
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..rounds {
                if let Ok(q) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    world.query::<&mut Position>()
                })) {
                    drop(q);
                }
            }
        });
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..rounds {
                    if let Ok(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        world.get::<Position>(e).map(|p| p.0)
                    })) {
                        assert_eq!(p.unwrap(), 0.0);
                    }
                }
            });
        }
    });
    let q = world.query::<&mut Position>();
    drop(q);
    assert_eq!(world.get::<Position>(e).unwrap().0, 0.0);
}

#[test]
fn threads_on_disjoint_columns() {
    let mut world = World::new();
    let n: u32 = if cfg!(miri) { 100 } else { 1000 };
    world.spawn_batch((0..n).map(|i| (Position(i as f32), Velocity(1.0), 0u32)));
    std::thread::scope(|s| {
        let w = &world;
        s.spawn(move || w.query::<&mut Position>().for_each(|p| p.0 += 1.0));
        s.spawn(move || {
            w.query::<(&Velocity, &mut u32)>()
                .for_each(|(v, n)| *n += v.0 as u32)
        });
    });
    assert_eq!(world.query_mut::<&u32>().into_iter().sum::<u32>(), n);
}

#[cfg(feature = "rayon")]
#[test]
#[cfg_attr(
    miri,
    ignore = "rayon's crossbeam-epoch casts integers to pointers, unsupported under strict provenance"
)]
fn par_for_each_matches_for_each() {
    let n = 100_000;
    let mut world = World::with_max_rows(n + 64);
    let es = world.spawn_batch((0..n).map(|i| (i as u64, 0u32)));
    // Holes: every third entity despawned, every fifth loses its u64.
    for (i, &e) in es.iter().enumerate() {
        if i % 3 == 0 {
            world.despawn(e).unwrap();
        } else if i % 5 == 0 {
            world.remove_one::<u64>(e).unwrap();
        }
    }
    world.spawn_batch((0..10u32).map(|i| (i,)));
    world
        .query::<(&u64, Option<&mut u32>)>()
        .par_for_each(|(x, n)| {
            if let Some(n) = n {
                *n += *x as u32;
            }
        });
    assert!(world
        .query::<(&u64, &u32)>()
        .iter()
        .all(|(x, n)| *n == *x as u32));
    let mut sequential = 0u64;
    world.query::<&u64>().for_each(|x| sequential += x);
    let total = std::sync::atomic::AtomicU64::new(0);
    world.query::<&u64>().par_for_each(|x| {
        total.fetch_add(*x, std::sync::atomic::Ordering::Relaxed);
    });
    assert_eq!(total.into_inner(), sequential);
}

#[test]
fn filters_run_beside_a_writer_of_their_column() {
    // `With<T>` and `Without<T>` borrow nothing: they read presence bits
    // only, which no `&World` query writes.
    let mut world = World::new();
    let n: u32 = if cfg!(miri) { 70 } else { 1000 };
    world.spawn_batch((0..n).map(|i| (Position(i as f32), 0u32)));
    std::thread::scope(|s| {
        let w = &world;
        s.spawn(move || w.query::<&mut Position>().for_each(|p| p.0 += 1.0));
        s.spawn(move || {
            w.query::<(
                &mut u32,
                handlekit_ecs::With<Position>,
                handlekit_ecs::Without<Velocity>,
            )>()
            .for_each(|(x, (), ())| *x += 1)
        });
    });
    assert_eq!(world.query_mut::<&u32>().into_iter().sum::<u32>(), n);
}

/// Eight component types, for queries of many columns.
#[derive(Debug, PartialEq)]
struct C0(u8);
#[derive(Debug, PartialEq)]
struct C1(u8);
#[derive(Debug, PartialEq)]
struct C2(u8);
#[derive(Debug, PartialEq)]
struct C3(u8);
#[derive(Debug, PartialEq)]
struct C4(u8);
#[derive(Debug, PartialEq)]
struct C5(u8);
#[derive(Debug, PartialEq)]
struct C6(u8);
#[derive(Debug, PartialEq)]
struct C7(u8);

fn wide_world() -> World {
    let mut world = World::new();
    world.spawn((C0(0), C1(1), C2(2), C3(3), C4(4), C5(5), C6(6), C7(7)));
    world
}

type Wide<'a> = (
    &'a C0,
    &'a C1,
    &'a C2,
    &'a C3,
    &'a C4,
    &'a C5,
    &'a mut C6,
    &'a mut C7,
);

#[test]
fn a_query_of_many_columns_borrows_and_releases_them_all() {
    let world = wide_world();
    {
        let mut q = world.query::<Wide<'_>>();
        let (c0, .., c6, c7) = q.iter().next().unwrap();
        assert_eq!((c0, &*c6, &*c7), (&C0(0), &C6(6), &C7(7)));
    }
    // All eight released.
    let _ = world.query::<(&mut C0, &mut C5, &mut C7)>();
}

#[test]
fn a_query_of_more_columns_than_kept_inline_releases_them_all() {
    // Nine accesses (`C0` read twice): past the eight a query keeps
    // without an allocation.
    let world = wide_world();
    {
        let mut q = world.query::<(Wide<'_>, &C0)>();
        let ((c0, ..), again) = q.iter().next().unwrap();
        assert_eq!((c0, again), (&C0(0), &C0(0)));
    }
    let _ = world.query::<(&mut C0, &mut C6, &mut C7)>();
}

#[test]
#[should_panic(expected = "C7")]
fn a_conflict_in_a_wide_query_names_its_type() {
    let world = wide_world();
    let _a = world.query::<&C7>();
    let _b = world.query::<Wide<'_>>();
}

#[test]
#[should_panic(expected = "C7")]
fn a_wide_query_naming_a_column_twice_panics() {
    let mut world = wide_world();
    let _ = world.query_mut::<(Wide<'_>, &C7)>();
}

#[test]
fn a_failed_wide_borrow_releases_what_it_took() {
    let world = wide_world();
    let held = world.query::<&C7>();
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = world.query::<Wide<'_>>();
    }));
    assert!(failed.is_err());
    drop(held);
    let _ = world.query::<(&mut C0, &mut C6, &mut C7)>();
}
