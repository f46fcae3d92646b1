//! `#[derive(Query)]`: named, tuple, unit, generic and wide structs, with
//! `Entity`, `Option`, `With`/`Without`, `Or` and nested derived queries as
//! fields; enums (the first variant a row matches wins, a row matching none
//! is skipped, a unit variant matches every row); every way of running a
//! query (`for` loops, `for_each`, `get`, `query_one`, `query_one_mut`,
//! `query_many_mut`, batches); the panics of a type named twice and of a
//! borrow conflict, the same as the tuple's; hecs's borrow rule through a
//! derived query; and a proptest that a derived query yields what the
//! tuple of its field types yields, in the same order. (The derive's
//! compile errors are checked by `derive_ui.rs`.)
#![cfg(feature = "macros")]

use handlekit_ecs::{Component, ComponentError, Entity, Or, Query, Storage, With, Without, World};
use proptest::prelude::*;

mod common;
use common::panic_of;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(i32);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Vel(i32);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Health(u32);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Player;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Enemy;

#[derive(Query, Debug)]
struct Moving<'a> {
    pos: &'a mut Pos,
    vel: &'a Vel,
    e: Entity,
    health: Option<&'a Health>,
}

#[derive(Query, Debug, PartialEq)]
struct ReadPos<'a>(&'a Pos, Entity);

#[derive(Query, Debug, PartialEq)]
struct Everything;

#[derive(Query, Debug, PartialEq)]
struct Ids {
    e: Entity,
    _player: With<Player>,
}

#[derive(Query)]
struct Filtered<'a> {
    pos: &'a Pos,
    _player: With<Player>,
    _not_enemy: Without<Enemy>,
}

#[derive(Query)]
struct Generic<'a, T: Component> {
    value: &'a mut T,
    e: Entity,
}

#[derive(Query)]
struct Nested<'a> {
    inner: ReadPos<'a>,
    either: Or<&'a Vel, &'a Health>,
    pair: (&'a Pos, Option<&'a Player>),
}

#[derive(Query, Debug, PartialEq)]
enum Kind<'a> {
    Moving { pos: &'a Pos, vel: &'a Vel },
    Hurt(&'a Health),
    Still(&'a Pos),
}

#[derive(Query, Debug, PartialEq)]
enum WithFallback<'a> {
    Player(Entity, With<Player>),
    Enemy(&'a mut Pos, With<Enemy>),
    Other,
}

fn world() -> (World, [Entity; 5]) {
    let mut world = World::new();
    let a = world.spawn((Pos(1), Vel(10), Health(100)));
    let b = world.spawn((Pos(2), Vel(20), Player));
    let c = world.spawn((Pos(3), Enemy));
    let d = world.spawn((Health(4),));
    let e = world.spawn((Vel(5), Player));
    (world, [a, b, c, d, e])
}

#[test]
fn named_struct_mutates_through_query_mut() {
    let (mut world, [a, b, ..]) = world();
    let mut seen = Vec::new();
    for Moving {
        pos,
        vel,
        e,
        health,
    } in world.query_mut::<Moving>()
    {
        pos.0 += vel.0;
        seen.push((e, health.copied()));
    }
    assert_eq!(seen, [(a, Some(Health(100))), (b, None)]);
    assert_eq!(*world.get::<Pos>(a).unwrap(), Pos(11));
    assert_eq!(*world.get::<Pos>(b).unwrap(), Pos(22));
}

#[test]
fn tuple_unit_and_lifetime_free_structs() {
    let (mut world, [a, b, c, d, e]) = world();
    let read: Vec<ReadPos> = world.query_mut::<ReadPos>().into_iter().collect();
    assert_eq!(
        read,
        [
            ReadPos(&Pos(1), a),
            ReadPos(&Pos(2), b),
            ReadPos(&Pos(3), c)
        ]
    );
    assert_eq!(world.query_mut::<Everything>().into_iter().count(), 5);
    let ids: Vec<Entity> = world.query::<Ids>().iter().map(|ids| ids.e).collect();
    assert_eq!(ids, [b, e]);
    world.despawn(d).unwrap();
    assert_eq!(world.query::<Everything>().iter().count(), 4);
}

#[test]
fn filters_as_fields() {
    let (mut world, [_, b, c, ..]) = world();
    world.insert_one(c, Player).unwrap();
    let pos: Vec<Pos> = world
        .query_mut::<Filtered>()
        .into_iter()
        .map(|f| *f.pos)
        .collect();
    // `c` is a player but an enemy too.
    assert_eq!(pos, [Pos(2)]);
    assert_eq!(*world.get::<Pos>(b).unwrap(), pos[0]);
}

#[test]
fn generic_struct() {
    let (mut world, [a, b, _, d, _]) = world();
    for g in world.query_mut::<Generic<Health>>() {
        g.value.0 += 1;
    }
    assert_eq!(*world.get::<Health>(a).unwrap(), Health(101));
    assert_eq!(*world.get::<Health>(d).unwrap(), Health(5));
    let es: Vec<Entity> = world
        .query::<Generic<Pos>>()
        .iter()
        .map(|g| g.e)
        .take(2)
        .collect();
    assert_eq!(es[1], b);
}

#[test]
fn nested_queries_or_and_tuples_as_fields() {
    let (mut world, [a, b, ..]) = world();
    let mut seen = Vec::new();
    for n in world.query_mut::<Nested>() {
        let either = n.either.map_left(|v| v.0).map_right(|h| h.0);
        seen.push((
            n.inner.1,
            n.inner.0 .0,
            either,
            n.pair.0 .0,
            n.pair.1.is_some(),
        ));
    }
    assert_eq!(
        seen,
        [
            (a, 1, Or::Both(10, 100), 1, false),
            (b, 2, Or::Left(20), 2, true),
            // `c` has neither `Vel` nor `Health`: no match.
        ]
    );
}

/// Thirteen fields: more than the largest tuple, so the shape is a tuple
/// of tuples.
#[derive(Query)]
#[allow(dead_code)]
struct Wide<'a> {
    a: &'a u8,
    b: &'a u16,
    c: &'a u32,
    d: &'a u64,
    e: &'a i8,
    f: &'a i16,
    g: &'a i32,
    h: &'a i64,
    i: &'a f32,
    j: &'a f64,
    k: &'a char,
    l: &'a bool,
    m: &'a mut Pos,
}

#[test]
fn more_fields_than_the_largest_tuple() {
    let mut world = World::new();
    let e = world.spawn((
        1u8, 2u16, 3u32, 4u64, 5i8, 6i16, 7i32, 8i64, 9.0f32, 10.0f64, 'k', true,
    ));
    world.insert_one(e, Pos(0)).unwrap();
    world.spawn((1u8,));
    let mut n = 0;
    for w in world.query_mut::<Wide>() {
        w.m.0 = i32::from(*w.a) + *w.g;
        assert!(*w.l && *w.k == 'k');
        n += 1;
    }
    assert_eq!(n, 1);
    assert_eq!(*world.get::<Pos>(e).unwrap(), Pos(8));
}

#[test]
fn enum_first_variant_wins_and_rows_matching_none_are_skipped() {
    let (mut world, [a, b, c, d, e]) = world();
    let kinds: Vec<(Entity, Kind)> = world.query_mut::<(Entity, Kind)>().into_iter().collect();
    // `a` matches all three variants, `Moving` first; `e` (a `Vel` and no
    // `Pos`) matches none.
    assert_eq!(
        kinds,
        [
            (
                a,
                Kind::Moving {
                    pos: &Pos(1),
                    vel: &Vel(10)
                }
            ),
            (
                b,
                Kind::Moving {
                    pos: &Pos(2),
                    vel: &Vel(20)
                }
            ),
            (c, Kind::Still(&Pos(3))),
            (d, Kind::Hurt(&Health(4))),
        ]
    );
    let _ = e;
}

#[test]
fn enum_unit_variant_matches_every_row_and_variants_write() {
    let (mut world, [a, b, c, d, e]) = world();
    world.insert_one(c, Player).unwrap(); // a player first, then an enemy
    let mut seen = Vec::new();
    for item in world.query_mut::<WithFallback>() {
        match item {
            WithFallback::Player(e, _) => seen.push(("player", Some(e))),
            WithFallback::Enemy(pos, _) => {
                pos.0 = -1;
                seen.push(("enemy", None));
            }
            WithFallback::Other => seen.push(("other", None)),
        }
    }
    assert_eq!(
        seen,
        [
            ("other", None),
            ("player", Some(b)),
            ("player", Some(c)),
            ("other", None),
            ("player", Some(e)),
        ]
    );
    world.remove_one::<Player>(c).unwrap();
    world.query_mut::<WithFallback>().for_each(|item| {
        if let WithFallback::Enemy(pos, _) = item {
            pos.0 = -1;
        }
    });
    assert_eq!(*world.get::<Pos>(c).unwrap(), Pos(-1));
    assert_eq!(*world.get::<Pos>(a).unwrap(), Pos(1));
    let _ = d;
}

#[test]
fn for_each_get_and_query_one() {
    let (world, [a, b, c, d, _]) = world();
    let mut sum = 0;
    world.query::<Moving>().for_each(|m| {
        m.pos.0 *= 2;
        sum += m.pos.0;
    });
    assert_eq!(sum, 6);

    let mut q = world.query::<Moving>();
    assert_eq!(q.get(a).map(|m| m.pos.0), Some(2));
    assert!(q.get(c).is_none());
    let [x, y] = q.get_disjoint_mut([a, b]);
    std::mem::swap(x.unwrap().pos, y.unwrap().pos);
    drop(q);
    assert_eq!(*world.get::<Pos>(a).unwrap(), Pos(4));

    let mut kinds = world.query::<Kind>();
    assert_eq!(kinds.get(d), Some(Kind::Hurt(&Health(4))));
    drop(kinds);

    let mut one = world.query_one::<ReadPos>(c).unwrap();
    assert_eq!(one.get(), Some(ReadPos(&Pos(3), c)));
    drop(one);
    assert!(world.query_one::<ReadPos>(d).unwrap().get().is_none());
    assert!(world.query_one::<Kind>(d).unwrap().get().is_some());
}

#[test]
fn query_one_mut_errors_as_the_tuple() {
    let (mut world, [a, _, c, d, e]) = world();
    let m = world.query_one_mut::<Moving>(a).unwrap();
    m.pos.0 = 50;
    assert_eq!(*world.get::<Pos>(a).unwrap(), Pos(50));

    // A live entity that does not match: `MissingComponent`, naming the
    // query type, as the tuple's names its tuple.
    let derived = world.query_one_mut::<Moving>(c).map(|_| ());
    let tuple = world
        .query_one_mut::<(&mut Pos, &Vel, Entity, Option<&Health>)>(c)
        .map(|_| ());
    assert!(
        matches!(derived, Err(ComponentError::MissingComponent(name)) if name.contains("Moving"))
    );
    assert!(matches!(tuple, Err(ComponentError::MissingComponent(_))));
    assert!(matches!(
        world.query_one_mut::<Kind>(e),
        Err(ComponentError::MissingComponent(_))
    ));

    // A dead one: `NoSuchEntity`, as the tuple's.
    world.despawn(d).unwrap();
    assert_eq!(
        world.query_one_mut::<Kind>(d).map(|_| ()),
        Err(ComponentError::NoSuchEntity)
    );
    assert!(world.query_one::<Kind>(d).is_err());
    assert!(world.query_one::<(&Health,)>(d).is_err());

    let [x, y] = world.query_many_mut::<Kind, 2>([a, e]);
    assert!(matches!(x, Ok(Kind::Moving { .. })));
    assert!(matches!(y, Err(ComponentError::MissingComponent(_))));
}

#[test]
fn batches() {
    let mut world = World::new();
    world.spawn_batch((0..10).map(|i| (Pos(i),)));
    let sizes: Vec<usize> = world
        .query_mut::<ReadPos>()
        .into_iter_batched(4)
        .map(|b| b.count())
        .collect();
    assert_eq!(sizes, [4, 4, 2]);
}

#[derive(Query)]
#[allow(dead_code)]
struct Twice<'a> {
    a: &'a mut Pos,
    b: &'a Pos,
}

#[derive(Query)]
#[allow(dead_code)]
enum TwiceInAVariant<'a> {
    Fine(&'a Vel),
    Twice(&'a Pos, &'a mut Pos),
}

#[derive(Query)]
#[allow(dead_code)]
enum OnePerVariant<'a> {
    Reads(&'a Pos, &'a Vel),
    Writes(&'a mut Pos),
    AgainReads(&'a Pos),
}

/// The panics of `query`, `query_mut` and `query_one` of `Q`, on a world
/// with the column of `Pos` and on one without.
fn panics<Q: Query>() -> Vec<Option<String>> {
    let mut out = Vec::new();
    for with_column in [false, true] {
        let make = || {
            let mut world = World::new();
            let e = world.spawn((Vel(1),));
            if with_column {
                world.insert_one(e, Pos(1)).unwrap();
            }
            (world, e)
        };
        out.push(panic_of(|| drop(make().0.query::<Q>())));
        out.push(panic_of(|| {
            make().0.query_mut::<Q>();
        }));
        out.push(panic_of(|| {
            let (world, e) = make();
            drop(world.query_one::<Q>(e));
        }));
    }
    out
}

#[test]
fn a_type_named_twice_panics_as_the_tuple() {
    let derived = panics::<Twice>();
    let tuple = panics::<(&mut Pos, &Pos)>();
    assert_eq!(derived, tuple);
    assert!(derived.iter().all(|p| p
        .as_deref()
        .is_some_and(|m| m.contains("Pos") && m.contains("cannot borrow"))));
    // Within one variant too.
    assert_eq!(panics::<TwiceInAVariant>(), panics::<(&Pos, &mut Pos)>());
    // Across variants a type is one borrow: a row's item is one variant's.
    assert!(panics::<OnePerVariant>().iter().all(Option::is_none));
    // Beside another query term that writes it, it conflicts. (Under
    // Miri, the tuple's panics are those found above: six worlds and
    // panics take 1.4 s of Miri's clock.)
    let beside = panics::<(OnePerVariant, &Pos)>();
    let tuple = if cfg!(miri) {
        tuple
    } else {
        panics::<(&mut Pos, &Pos)>()
    };
    assert_eq!(beside, tuple);
}

#[test]
fn borrow_conflicts_as_the_tuple() {
    let (world, [a, ..]) = world();
    // The panics of a query of `&Pos` and of `get::<Vel>` while `guard`
    // is held.
    let conflict = |guard: &dyn std::any::Any| {
        let _ = guard;
        let msg = panic_of(|| drop(world.query::<&Pos>()));
        let get = panic_of(|| drop(world.get::<Vel>(a)));
        (msg, get)
    };
    let q = world.query::<Moving>();
    let derived = conflict(&());
    drop(q);
    let q = world.query::<(&mut Pos, &Vel, Entity, Option<&Health>)>();
    let tuple = conflict(&());
    drop(q);
    assert_eq!(derived, tuple);
    assert!(derived.0.unwrap().contains("Pos"));
    assert!(derived.1.is_none()); // `Vel` is only read

    // An enum borrows `Pos` exclusively if one variant writes it.
    let q = world.query::<OnePerVariant>();
    let derived = conflict(&());
    drop(q);
    assert!(derived.0.unwrap().contains("Pos"));
    // The guard's borrows are given back.
    drop(world.query::<(&mut Pos, &mut Vel)>());
}

#[derive(Query)]
#[allow(dead_code)]
struct PlayerPos<'a> {
    pos: &'a mut Pos,
    _player: With<Player>,
}

#[derive(Query)]
#[allow(dead_code)]
enum EnemyPos<'a> {
    Moving(&'a mut Pos, &'a Vel, With<Enemy>),
    Still(&'a mut Pos, With<Enemy>),
}

/// hecs's rule: two queries that write one column coexist when no entity
/// can match both, which derived queries state through their fields'
/// requirements (an enum's: those of every variant).
#[test]
fn hecs_rule_through_derived_queries() {
    let (world, [_, b, c, ..]) = world();
    let mut players = world.query::<PlayerPos>();
    for p in players.iter() {
        let mut enemies = world.query::<EnemyPos>();
        for e in enemies.iter() {
            match e {
                EnemyPos::Still(pos, _) => pos.0 += 100,
                EnemyPos::Moving(..) => unreachable!(),
            }
        }
        p.pos.0 += 1;
    }
    drop(players);
    assert_eq!(*world.get::<Pos>(b).unwrap(), Pos(3));
    assert_eq!(*world.get::<Pos>(c).unwrap(), Pos(103));
    // An entity both a player and an enemy: a conflict.
    let mut world = world;
    world.insert_one(c, Player).unwrap();
    let _players = world.query::<PlayerPos>();
    let msg = panic_of(|| drop(world.query::<EnemyPos>()));
    assert!(msg.unwrap().contains("Pos"));
}

#[cfg(feature = "rayon")]
#[test]
fn par_for_each() {
    let mut world = World::new();
    world.spawn_batch((0..1000).map(|i| (Pos(i), Vel(1))));
    world
        .query_mut::<Moving>()
        .par_for_each(|m| m.pos.0 += m.vel.0);
    let sum: i64 = world
        .query::<ReadPos>()
        .iter()
        .map(|r| i64::from(r.0 .0))
        .sum();
    assert_eq!(sum, (1..=1000).sum::<i64>());
}

// ---- The derived query against the tuple of its field types. ----

#[derive(Clone, Copy, Debug, PartialEq)]
struct A(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct B(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct C(u32);

#[derive(Query)]
struct Abc<'a> {
    e: Entity,
    a: &'a mut A,
    b: Option<&'a B>,
    _c: Without<C>,
}

type AbcTuple<'a> = (Entity, &'a mut A, Option<&'a B>, Without<C>);

#[derive(Query, Debug, PartialEq)]
enum Alt<'a> {
    Ab(&'a A, &'a B),
    C(Entity, &'a C),
    A(&'a A),
}

/// Builds a world from per-entity component masks (bit 0: `A`, 1: `B`, 2:
/// `C`, 3: despawned after spawning), `B` sparse if `sparse`.
fn random_world(rows: &[u8], sparse: bool) -> World {
    let mut world = World::new();
    if sparse {
        world.register::<B>(Storage::Sparse);
    }
    let mut dead = Vec::new();
    for (i, &bits) in rows.iter().enumerate() {
        let i = i as u32;
        let e = world.spawn(());
        if bits & 1 != 0 {
            world.insert_one(e, A(i)).unwrap();
        }
        if bits & 2 != 0 {
            world.insert_one(e, B(i * 10)).unwrap();
        }
        if bits & 4 != 0 {
            world.insert_one(e, C(i * 100)).unwrap();
        }
        if bits & 8 != 0 {
            dead.push(e);
        }
    }
    for e in dead {
        world.despawn(e).unwrap();
    }
    world
}

fn check_equivalence(rows: &[u8], sparse: bool) {
    let mut world = random_world(rows, sparse);
    type Row = (Entity, u32, Option<u32>);
    let derived: Vec<Row> = world
        .query_mut::<Abc>()
        .into_iter()
        .map(|q| (q.e, q.a.0, q.b.map(|b| b.0)))
        .collect();
    let tuple: Vec<Row> = world
        .query_mut::<AbcTuple>()
        .into_iter()
        .map(|(e, a, b, ())| (e, a.0, b.map(|b| b.0)))
        .collect();
    assert_eq!(derived, tuple);
    let mut folded = Vec::new();
    world
        .query_mut::<Abc>()
        .for_each(|q| folded.push((q.e, q.a.0, q.b.map(|b| b.0))));
    assert_eq!(folded, tuple);
    // Writes through both land on the same values.
    for q in world.query_mut::<Abc>() {
        q.a.0 += 1;
    }
    let after: Vec<u32> = world
        .query::<AbcTuple>()
        .iter()
        .map(|(_, a, _, ())| a.0)
        .collect();
    assert_eq!(
        after,
        tuple.iter().map(|&(_, a, _)| a + 1).collect::<Vec<_>>()
    );

    // The enum against the first-match rule, entity by entity.
    let entities: Vec<Entity> = world.iter().map(|r| r.entity()).collect();
    let expected: Vec<String> = entities
        .iter()
        .filter_map(|&e| {
            let a = world.get::<A>(e).ok().map(|a| a.0);
            let b = world.get::<B>(e).ok().map(|b| b.0);
            let c = world.get::<C>(e).ok().map(|c| c.0);
            match (a, b, c) {
                (Some(a), Some(b), _) => Some(format!("ab {a} {b}")),
                (_, _, Some(c)) => Some(format!("c {e:?} {c}")),
                (Some(a), _, _) => Some(format!("a {a}")),
                _ => None,
            }
        })
        .collect();
    let show = |alt: Alt| match alt {
        Alt::Ab(a, b) => format!("ab {} {}", a.0, b.0),
        Alt::C(e, c) => format!("c {e:?} {}", c.0),
        Alt::A(a) => format!("a {}", a.0),
    };
    let got: Vec<String> = world.query::<Alt>().iter().map(show).collect();
    assert_eq!(got, expected);
    let mut folded = Vec::new();
    world.query::<Alt>().for_each(|alt| folded.push(show(alt)));
    assert_eq!(folded, expected);
    let mut q = world.query::<Alt>();
    let looked_up: Vec<String> = entities
        .iter()
        .filter_map(|&e| q.get(e).map(show))
        .collect();
    assert_eq!(looked_up, expected);
}

#[test]
fn equivalence_fixed_world() {
    // A full window (one run), then whole words with holes and dead rows.
    // Under Miri (40 ms of Miri's clock a row), a full window of a word and
    // one row, and noise on part of the word after the full one.
    let full = vec![1u8; if cfg!(miri) { 65 } else { 130 }];
    check_equivalence(&full, false);
    let mut state = 0x2545_f491_u32;
    let noisy: Vec<u8> = (0..if cfg!(miri) { 100 } else { 700 })
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            if (i / 64) % 3 == 0 {
                1
            } else {
                (state % 16) as u8
            }
        })
        .collect();
    check_equivalence(&noisy, false);
    check_equivalence(&noisy, true);
}

proptest! {
    #![proptest_config(common::proptest_config(2, 128))]

    #[test]
    fn equivalence(
        rows in prop::collection::vec(0u8..16, 0..if cfg!(miri) { 80 } else { 300 }),
        sparse in any::<bool>(),
    ) {
        check_equivalence(&rows, sparse);
    }
}
