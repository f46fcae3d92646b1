//! hecs's borrow rule: queries that would borrow one column incompatibly
//! coexist when no live entity matches both; otherwise today's panic.

use std::panic::{catch_unwind, AssertUnwindSafe};

use handlekit_ecs::{Entity, Storage, With, Without, World};
use proptest::prelude::*;

mod common;
use common::{panic_message, panic_of};

#[derive(Debug, PartialEq)]
struct Name(&'static str);
struct Player;
struct Enemy;

fn players_and_enemies() -> (World, Entity, Entity) {
    let mut world = World::new();
    let p = world.spawn((Name("p"), Player, 1u32));
    let e = world.spawn((Name("e"), Enemy, 2u32));
    (world, p, e)
}

#[test]
fn writers_of_one_column_coexist_when_no_entity_matches_both() {
    let (world, p, e) = players_and_enemies();
    let mut players = world.query::<(&mut Name, With<Player>)>();
    let mut enemies = world.query::<(&mut Name, &u32, With<Enemy>)>();
    for (name, ()) in players.iter() {
        for (other, n, ()) in enemies.iter() {
            assert_eq!(*n, 2);
            other.0 = "enemy";
        }
        name.0 = "player";
    }
    drop((players, enemies));
    assert_eq!(*world.get::<Name>(p).unwrap(), Name("player"));
    assert_eq!(*world.get::<Name>(e).unwrap(), Name("enemy"));
}

#[test]
fn nested_loops_over_disjoint_queries() {
    let mut world = World::new();
    world.spawn((42i32, true));
    world.spawn((17i32, "abc"));
    // An entity that would match both, despawned: only live rows count.
    let both = world.spawn((12i32, false, "def"));
    world.despawn(both).unwrap();
    let mut visits = 0;
    for _ in world.query::<(&mut i32, &&str)>().iter() {
        for (x, _) in world.query::<(&mut i32, &bool)>().iter() {
            *x += 1;
            visits += 1;
        }
    }
    assert_eq!(visits, 1);
}

#[test]
fn overlapping_writers_still_panic_with_todays_message() {
    let (world, _, _) = players_and_enemies();
    let _all = world.query::<&mut Name>();
    let message = panic_message(|| world.query::<(&mut Name, With<Enemy>)>());
    assert!(
        message.contains("cannot borrow")
            && message.contains("Name")
            && message.contains("mutably"),
        "{message}"
    );
    let message = panic_message(|| world.query::<(&Name, With<Player>)>());
    assert!(message.contains("already borrowed mutably"), "{message}");
}

#[test]
fn a_joiner_is_checked_against_every_member() {
    let mut world = World::new();
    world.spawn((Name("a"), 1u8));
    world.spawn((Name("b"), 2u16));
    world.spawn((Name("c"), 3u32));
    let a = world.query::<(&mut Name, &u8)>();
    let b = world.query::<(&mut Name, &u16)>();
    // Disjoint from `a`, not from `b`.
    let message = panic_message(|| world.query::<(&mut Name, With<u16>)>());
    assert!(message.contains("Name"), "{message}");
    // Readers that overlap only readers join; one that overlaps a writer
    // does not.
    let c = world.query::<(&Name, &u32)>();
    let message = panic_message(|| world.query::<(&Name, &u8)>());
    assert!(message.contains("Name"), "{message}");
    drop(a);
    // The group still holds the column: guards and other queries are
    // refused until its last member goes.
    let message = panic_message(|| world.query::<(&mut Name, With<u16>)>());
    assert!(message.contains("Name"), "{message}");
    drop((b, c));
    let _all = world.query::<&mut Name>();
}

#[test]
fn the_flag_is_given_back_when_the_last_member_goes() {
    let (world, p, _) = players_and_enemies();
    let a = world.query::<(&mut Name, With<Player>)>();
    let b = world.query::<(&mut Name, With<Enemy>)>();
    let message = panic_message(|| world.get::<Name>(p));
    assert!(message.contains("already borrowed mutably"), "{message}");
    drop(a);
    assert!(catch_unwind(AssertUnwindSafe(|| world.get::<Name>(p))).is_err());
    drop(b);
    assert_eq!(*world.get::<Name>(p).unwrap(), Name("p"));
    let _all = world.query::<&mut Name>();
}

#[test]
fn a_refused_query_gives_back_what_it_took() {
    let (world, p, _) = players_and_enemies();
    let a = world.query::<(&mut Name, With<Player>)>();
    // Takes `u32` (shared) and starts a group on `Player`... then fails on
    // `Name`.
    let message = panic_message(|| world.query::<(&u32, &mut Player, &mut Name)>());
    assert!(message.contains("Name"), "{message}");
    drop(a);
    let _w = world.query::<(&mut u32, &mut Player, &mut Name)>();
    assert!(catch_unwind(AssertUnwindSafe(|| world.get::<Name>(p))).is_err());
}

#[test]
fn a_writer_joins_disjoint_readers_that_came_first() {
    let (world, p, e) = players_and_enemies();
    let mut players = world.query::<(&Name, With<Player>)>();
    let mut more_players = world.query::<(&Name, &u32, Without<Enemy>)>();
    let mut enemies = world.query::<(&mut Name, With<Enemy>)>();
    let mut seen = Vec::new();
    for (name, ()) in players.iter() {
        for (other, ()) in enemies.iter() {
            other.0 = "enemy";
        }
        seen.push(name.0);
    }
    assert_eq!(seen, ["p"]);
    assert_eq!(more_players.iter().count(), 1);
    // While the group holds the flag, guards and overlapping queries are
    // refused; a disjoint reader still joins.
    assert!(panic_of(|| world.get::<Name>(p).map(|_| ())).is_some());
    let message = panic_message(|| world.query::<&Name>());
    assert!(message.contains("Name"), "{message}");
    let mut late_player = world.query::<(&Name, With<Player>)>();
    assert_eq!(late_player.iter().count(), 1);
    drop((players, enemies, more_players, late_player));
    // Every borrow given back: a writer of the whole column gets it.
    let mut all = world.query::<&mut Name>();
    assert_eq!(all.iter().count(), 2);
    drop(all);
    assert_eq!(*world.get::<Name>(e).unwrap(), Name("enemy"));
}

#[test]
fn a_writer_never_joins_readers_it_overlaps_or_a_guard() {
    let (world, p, _) = players_and_enemies();
    let readers = world.query::<(&Name, &u32)>();
    // "e" matches both: refused, and the readers keep their borrow.
    let message = panic_message(|| world.query::<(&mut Name, With<Enemy>)>());
    assert!(message.contains("Name"), "{message}");
    assert_eq!(*world.get::<Name>(p).unwrap(), Name("p"));
    drop(readers);
    // A guard's shared borrow is not a registered reader's: refused.
    let _players = world.query::<(&Name, With<Player>)>();
    let guard = world.get::<Name>(p).unwrap();
    let message = panic_message(|| world.query::<(&mut Name, With<Enemy>)>());
    assert!(message.contains("Name"), "{message}");
    drop(guard);
    let _enemies = world.query::<(&mut Name, With<Enemy>)>();
}

#[test]
fn a_refused_writer_gives_the_readers_their_flag_back() {
    let (world, p, e) = players_and_enemies();
    let players = world.query::<(&Name, With<Player>)>();
    let guard = world.get::<u32>(e).unwrap();
    // `Name` turns to the readers' group, then `u32` is held by a guard:
    // refused, and `Name` is the readers' shared borrow again.
    let message = panic_message(|| world.query::<(&mut Name, &mut u32, With<Enemy>)>());
    assert!(message.contains("u32"), "{message}");
    assert_eq!(*world.get::<Name>(p).unwrap(), Name("p"));
    drop((players, guard));
    let _all = world.query::<(&mut Name, &mut u32)>();
}

#[test]
fn guards_and_query_one_never_join() {
    let (world, p, e) = players_and_enemies();
    let guard = world.get::<Name>(e).unwrap();
    assert!(catch_unwind(AssertUnwindSafe(
        || world.query::<(&mut Name, With<Player>)>()
    ))
    .is_err());
    drop(guard);
    let one = world.query_one::<&mut Name>(e).unwrap();
    assert!(catch_unwind(AssertUnwindSafe(
        || world.query::<(&mut Name, With<Player>)>()
    ))
    .is_err());
    drop(one);
    let _q = world.query::<(&mut Name, With<Player>)>();
    assert!(catch_unwind(AssertUnwindSafe(|| world
        .query_one::<&mut Name>(p)
        .map(|_| ())))
    .is_err());
}

#[test]
fn sparse_and_unregistered_requirements() {
    let mut world = World::new();
    world.register::<Player>(Storage::Sparse);
    world.spawn((Name("p"), Player));
    world.spawn((Name("e"), Enemy));
    let _a = world.query::<(&mut Name, &Player)>();
    let _b = world.query::<(&mut Name, With<Enemy>)>();
    // A type no entity has ever had: the query matches nothing.
    let _c = world.query::<(&mut Name, &u64)>();
    // Disjoint from `_a` through `Without`, but "e" matches it and `_b`.
    assert!(catch_unwind(AssertUnwindSafe(
        || world.query::<(&mut Name, Without<Player>)>()
    ))
    .is_err());
}

#[test]
fn without_proves_writers_disjoint() {
    let (world, p, e) = players_and_enemies();
    let mut not_enemies = world.query::<(&mut Name, Without<Enemy>)>();
    let mut enemies = world.query::<(&mut Name, With<Enemy>)>();
    for (name, ()) in not_enemies.iter() {
        for (other, ()) in enemies.iter() {
            other.0 = "enemy";
        }
        name.0 = "not an enemy";
    }
    drop((not_enemies, enemies));
    assert_eq!(*world.get::<Name>(p).unwrap(), Name("not an enemy"));
    assert_eq!(*world.get::<Name>(e).unwrap(), Name("enemy"));
    // A type no entity has: `Without` of it excludes nothing.
    let _all_but_u64 = world.query::<(&mut Name, Without<u64>)>();
    let message = panic_message(|| world.query::<(&mut Name, With<Player>)>());
    assert!(message.contains("Name"), "{message}");
}

#[test]
fn disjoint_writers_on_several_threads() {
    let mut world = World::new();
    let n = if cfg!(miri) { 40 } else { 4000 };
    for i in 0..n {
        if i % 2 == 0 {
            world.spawn((i, Player));
        } else {
            world.spawn((i, Enemy));
        }
    }
    let rounds = if cfg!(miri) { 3 } else { 200 };
    std::thread::scope(|s| {
        let world = &world;
        let players = s.spawn(move || {
            for _ in 0..rounds {
                for (x, ()) in world.query::<(&mut u32, With<Player>)>().iter() {
                    *x += 2;
                }
            }
        });
        let enemies = s.spawn(move || {
            for _ in 0..rounds {
                for (x, ()) in world.query::<(&mut u32, With<Enemy>)>().iter() {
                    *x += 2;
                }
            }
        });
        players.join().unwrap();
        enemies.join().unwrap();
    });
    let sum: u32 = world.query_mut::<&u32>().into_iter().sum();
    assert_eq!(sum, (0..n).sum::<u32>() + 2 * rounds * n);
    // And the flag is free again.
    let _all = world.query::<&mut u32>();
}

#[test]
fn overlapping_writers_on_two_threads_never_both_get_through() {
    let mut world = World::new();
    world.spawn((1u32, Player, Enemy));
    let rounds = if cfg!(miri) { 4 } else { 100 };
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        let (world, barrier) = (&world, &barrier);
        let run = move |player: bool| {
            let mut got = 0;
            for _ in 0..rounds {
                barrier.wait();
                let result = catch_unwind(AssertUnwindSafe(|| {
                    if player {
                        let mut q = world.query::<(&mut u32, With<Player>)>();
                        barrier.wait();
                        q.iter().for_each(|(x, ())| *x += 1);
                    } else {
                        let mut q = world.query::<(&mut u32, With<Enemy>)>();
                        barrier.wait();
                        q.iter().for_each(|(x, ())| *x += 1);
                    }
                }));
                if result.is_ok() {
                    got += 1;
                } else {
                    // The other holds it: meet it at its second wait.
                    barrier.wait();
                }
            }
            got
        };
        let a = s.spawn(move || run(true));
        let b = s.spawn(move || run(false));
        let (a, b) = (a.join().unwrap(), b.join().unwrap());
        // Each round exactly one of them gets the column.
        assert_eq!(a + b, rounds);
    });
}

proptest! {
    // Three cases under Miri, where each takes about 1.5 s of its clock
    // whatever its size (a world with four new types); the tests above
    // cover conflicts and joins one by one.
    #![proptest_config(common::proptest_config(3, 256))]

    /// Two writers of `u32`, each requiring a random set of three marker
    /// types and excluding at most one, over a random world: they coexist
    /// exactly when no live entity matches both, and then each writes its
    /// own entities.
    #[test]
    fn coexist_exactly_when_no_entity_matches_both(
        entities in proptest::collection::vec((0..8u8, any::<bool>()), 1..if cfg!(miri) { 12 } else { 80 }),
        first in (0..8u8, 0..4usize),
        second in (0..8u8, 0..4usize),
        first_reads in any::<bool>(),
    ) {
        let mut world = World::new();
        let mut masks = Vec::new();
        for (i, &(mask, dead)) in entities.iter().enumerate() {
            let e = world.spawn((i as u32,));
            if mask & 1 != 0 { world.insert_one(e, 0u8).unwrap(); }
            if mask & 2 != 0 { world.insert_one(e, 0u16).unwrap(); }
            if mask & 4 != 0 { world.insert_one(e, 0u64).unwrap(); }
            if dead { world.despawn(e).unwrap(); } else { masks.push(mask); }
        }
        // The marker bit each exclusion choice names (0: none).
        const EXCLUDED: [u8; 4] = [0, 1, 2, 4];
        let matches = |m: u8, (required, excluded): (u8, usize)| {
            m & required == required && m & EXCLUDED[excluded] == 0
        };
        let overlap = masks.iter().any(|&m| matches(m, first) && matches(m, second));
        let expected: usize = [first, second]
            .iter()
            .map(|&q| masks.iter().filter(|&&m| matches(m, q)).count())
            .sum();
        let result = catch_unwind(AssertUnwindSafe(|| {
            // The first only reads, or writes too: a writer joins readers
            // that came first as it joins writers.
            let mut a = if first_reads { reader(&world, first) } else { writer(&world, first) };
            let mut b = writer(&world, second);
            // Both hold their borrows throughout.
            a.bump() + b.bump()
        }));
        prop_assert_eq!(result.is_ok(), !overlap);
        if let Ok(n) = result {
            prop_assert_eq!(n, expected);
        }
        // Either way every borrow was given back.
        prop_assert_eq!(world.query::<&mut u32>().iter().count(), masks.len());
    }
}

/// A writer of `u32` requiring the markers of `required` and excluding
/// the one `excluded` names (0: none, then `u8`, `u16`, `u64`).
fn writer(world: &World, query: (u8, usize)) -> Box<dyn Writer + '_> {
    by_exclusion::<&'static mut u32>(world, query)
}

/// As [`writer`], a query that reads the `u32`s.
fn reader(world: &World, query: (u8, usize)) -> Box<dyn Writer + '_> {
    by_exclusion::<&'static u32>(world, query)
}

fn by_exclusion<U: Touch>(
    world: &World,
    (required, excluded): (u8, usize),
) -> Box<dyn Writer + '_> {
    match excluded {
        0 => with_mask::<U, ()>(world, required),
        1 => with_mask::<U, Without<u8>>(world, required),
        2 => with_mask::<U, Without<u16>>(world, required),
        _ => with_mask::<U, Without<u64>>(world, required),
    }
}

/// A query of `U` (`&u32` or `&mut u32`) requiring the markers of `mask`,
/// with the filter `X`.
fn with_mask<U: Touch, X: handlekit_ecs::Query + 'static>(
    world: &World,
    mask: u8,
) -> Box<dyn Writer + '_> {
    match mask {
        0 => Box::new(world.query::<(U, (), X)>()),
        1 => Box::new(world.query::<(U, With<u8>, X)>()),
        2 => Box::new(world.query::<(U, With<u16>, X)>()),
        3 => Box::new(world.query::<(U, (With<u8>, With<u16>), X)>()),
        4 => Box::new(world.query::<(U, With<u64>, X)>()),
        5 => Box::new(world.query::<(U, (With<u8>, With<u64>), X)>()),
        6 => Box::new(world.query::<(U, (With<u16>, With<u64>), X)>()),
        _ => Box::new(world.query::<(U, (With<u8>, With<u16>, With<u64>), X)>()),
    }
}

/// A query writing `u32`, type-erased for the test.
trait Writer {
    /// Adds one to every `u32` it matches; returns how many.
    fn bump(&mut self) -> usize;
}

/// What a query of the test does with each `u32` it yields.
trait Touch: handlekit_ecs::Query + 'static {
    fn touch(item: Self::Item<'_>);
}

impl Touch for &'static mut u32 {
    fn touch(item: &mut u32) {
        *item += 1;
    }
}

impl Touch for &'static u32 {
    fn touch(_: &u32) {}
}

impl<U: Touch, W: handlekit_ecs::Query, X: handlekit_ecs::Query> Writer
    for handlekit_ecs::QueryBorrow<'_, (U, W, X)>
{
    fn bump(&mut self) -> usize {
        let mut n = 0;
        for (x, _, _) in self.iter() {
            U::touch(x);
            n += 1;
        }
        n
    }
}
