//! Access by entity and in pieces: `World::entity` and `EntityRef`, the
//! `Ref`/`RefMut` guards, `World::iter`, `query_many_mut`,
//! `QueryBorrow::get_disjoint_mut`, the `Or` term and batched iteration.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use handlekit_ecs::{ComponentError, Entity, Or, Order, Ref, RefMut, Storage, With, World};
use proptest::prelude::*;

mod common;
use common::panic_message;

#[derive(Debug, PartialEq, Clone, Copy)]
struct A(u32);
#[derive(Debug, PartialEq, Clone, Copy)]
struct B(u64);
#[derive(Debug, PartialEq, Clone, Copy)]
struct S(i16); // registered sparse

fn world_of_three() -> (World, [Entity; 3]) {
    let mut world = World::new();
    world.register::<S>(Storage::Sparse);
    let a = world.spawn((A(1),));
    let b = world.spawn((A(2), B(20), S(-2)));
    let c = world.spawn((B(30),));
    (world, [a, b, c])
}

#[test]
fn entity_ref_reads_and_writes_components() {
    let (world, [a, b, c]) = world_of_three();
    let eb = world.entity(b).unwrap();
    assert_eq!(eb.entity(), b);
    assert!(eb.has::<A>() && eb.has::<B>() && eb.has::<S>() && !eb.has::<u8>());
    assert!(eb.satisfies::<(&A, &mut S)>());
    assert!(!world.entity(a).unwrap().satisfies::<&B>());
    assert!(
        !world.entity(a).unwrap().satisfies::<&u8>(),
        "an unregistered type"
    );
    *eb.get::<&mut S>().unwrap() = S(5);
    assert_eq!(*eb.get::<&S>().unwrap(), S(5));
    {
        let mut x = eb.get::<&mut A>().unwrap();
        x.0 += 40;
    }
    assert_eq!(*world.get::<A>(b).unwrap(), A(42));
    assert!(world.entity(c).unwrap().get::<&A>().is_none());
    assert!(world.entity(c).unwrap().get::<&mut A>().is_none());
    // A missing component gives its borrow back: a `&mut` borrow works after.
    let ec = world.entity(c).unwrap();
    assert!(ec.get::<&S>().is_none());
    assert!(ec.get::<&mut S>().is_none());
    drop(world.query::<&mut S>());
    assert!(ec.get::<&u8>().is_none(), "an unregistered type");
}

#[test]
fn entity_ref_of_dead_and_forged_entities_is_an_error() {
    let (mut world, [a, _, _]) = world_of_three();
    world.despawn(a).unwrap();
    assert!(world.entity(a).is_err());
    let forged = Entity::from_bits(999 | 1 << 32).unwrap();
    assert!(world.entity(forged).is_err());
    let reused = world.spawn(());
    assert_eq!(reused.index(), a.index());
    assert!(world.entity(a).is_err(), "a stale handle stays stale");
    assert!(world.entity(reused).is_ok());
}

#[test]
fn guards_hold_their_column_borrows() {
    let (world, [a, b, _]) = world_of_three();
    let ea = world.entity(a).unwrap();
    let shared = ea.get::<&A>().unwrap();
    let again = world.entity(b).unwrap().get::<&A>().unwrap(); // shared twice: fine
    let message = panic_message(|| world.entity(b).unwrap().get::<&mut A>());
    assert!(
        message.contains("cannot borrow") && message.contains("A"),
        "{message}"
    );
    let message = panic_message(|| world.query::<&mut A>());
    assert!(message.contains("mutably"), "{message}");
    drop((shared, again));
    let exclusive = ea.get::<&mut A>().unwrap();
    let message = panic_message(|| world.get::<A>(b));
    assert!(message.contains("already borrowed mutably"), "{message}");
    let message = panic_message(|| world.entity(a).unwrap().get::<&A>());
    assert!(message.contains("already borrowed mutably"), "{message}");
    // Other columns are free.
    assert_eq!(*world.entity(b).unwrap().get::<&B>().unwrap(), B(20));
    drop(exclusive);
    assert_eq!(world.query::<&mut A>().iter().count(), 2);
}

#[test]
fn ref_clone_and_map_keep_the_borrow_until_the_last_guard() {
    let mut world = World::new();
    let e = world.spawn(((7u8, String::from("seven")),));
    let whole = world.get::<(u8, String)>(e).unwrap();
    let copy = whole.clone();
    let name: Ref<'_, str> = Ref::map(whole, |(_, s)| s.as_str());
    assert_eq!(&*name, "seven");
    drop(copy);
    assert!(catch_unwind(AssertUnwindSafe(|| world.query::<&mut (u8, String)>())).is_err());
    drop(name);
    assert_eq!(world.query::<&mut (u8, String)>().iter().count(), 1);

    let entity = world.entity(e).unwrap();
    let mut number: RefMut<'_, u8> =
        RefMut::map(entity.get::<&mut (u8, String)>().unwrap(), |(n, _)| n);
    *number += 1;
    assert!(catch_unwind(AssertUnwindSafe(|| world.get::<(u8, String)>(e))).is_err());
    drop(number);
    assert_eq!(world.get::<(u8, String)>(e).unwrap().0, 8);
    assert_eq!(
        format!("{:?}", world.get::<(u8, String)>(e).unwrap()),
        "(8, \"seven\")"
    );
}

#[test]
fn a_panicking_map_gives_the_borrow_back() {
    let mut world = World::new();
    let e = world.spawn((1u8,));
    let message = panic_message(|| {
        let r = world.get::<u8>(e).unwrap();
        Ref::map(r, |_| -> &u8 { panic!("in map") })
    });
    assert_eq!(message, "in map");
    // The borrow was given back.
    *world.query::<&mut u8>().get(e).unwrap() = 2;
    let message = panic_message(|| {
        let r = world.entity(e).unwrap().get::<&mut u8>().unwrap();
        RefMut::map(r, |_| -> &mut u8 { panic!("in map_mut") })
    });
    assert_eq!(message, "in map_mut");
    assert_eq!(*world.get::<u8>(e).unwrap(), 2);
    *world.entity(e).unwrap().get::<&mut u8>().unwrap() = 3;
    assert_eq!(
        world
            .query_mut::<&u8>()
            .into_iter()
            .copied()
            .collect::<Vec<_>>(),
        [3]
    );
}

#[test]
fn iter_yields_every_live_entity_in_row_order() {
    let mut world = World::new();
    assert_eq!(world.iter().len(), 0);
    let es: Vec<Entity> = (0..200u32).map(|i| world.spawn((A(i),))).collect();
    for &e in es.iter().step_by(3) {
        world.despawn(e).unwrap();
    }
    let live: Vec<Entity> = es.iter().copied().filter(|e| world.contains(*e)).collect();
    let it = world.iter();
    assert_eq!(it.len(), live.len());
    let seen: Vec<Entity> = it.map(|e| e.entity()).collect();
    assert_eq!(seen, live);
    for e in &world {
        assert_eq!(
            e.get::<&A>().unwrap().0 as usize,
            es.iter().position(|&x| x == e.entity()).unwrap()
        );
    }
    world.collect(64, Order::Any);
    let mut after: Vec<Entity> = world.iter().map(|e| e.entity()).collect();
    after.sort();
    let mut sorted = live.clone();
    sorted.sort();
    assert_eq!(after, sorted);
}

#[test]
fn query_many_mut_gives_several_items() {
    let (mut world, [a, b, c]) = world_of_three();
    let dead = world.spawn((A(9),));
    world.despawn(dead).unwrap();
    let [ra, rb, rc, rd] = world.query_many_mut::<(&mut A, Option<&S>), 4>([a, b, c, dead]);
    let (xa, sa) = ra.unwrap();
    let (xb, sb) = rb.unwrap();
    assert_eq!((sa, sb), (None, Some(&S(-2))));
    std::mem::swap(xa, xb);
    assert_eq!(
        rc,
        Err(ComponentError::MissingComponent(std::any::type_name::<(
            &mut A,
            Option<&S>
        )>()))
    );
    assert_eq!(rd, Err(ComponentError::NoSuchEntity));
    assert_eq!(*world.get::<A>(a).unwrap(), A(2));
    assert_eq!(*world.get::<A>(b).unwrap(), A(1));
    // An unregistered type: every live entity misses it.
    let [r] = world.query_many_mut::<&u8, 1>([a]);
    assert!(matches!(r, Err(ComponentError::MissingComponent(_))));
    // No entity at all.
    let none: [Result<&A, _>; 0] = world.query_many_mut::<&A, 0>([]);
    assert!(none.is_empty());
    // The hecs 0.11 name.
    let [x] = world.query_disjoint_mut::<&A, 1>([a]);
    assert_eq!(x, Ok(&A(2)));
}

#[test]
fn query_many_mut_panics_on_duplicates_and_self_aliasing() {
    let (mut world, [a, b, c]) = world_of_three();
    let message = panic_message(|| {
        let _ = world.query_many_mut::<&mut A, 3>([a, b, a]);
    });
    assert!(
        message.contains("query_many_mut") && message.contains("named twice"),
        "{message}"
    );
    assert!(message.contains(&format!("{a:?}")), "{message}");
    // Many entities: the sorting check.
    let mut es = [c; 20];
    for (i, e) in es.iter_mut().enumerate() {
        *e = Entity::from_bits((i as u64 + 100) | (1 << 32)).unwrap();
    }
    es[19] = es[3];
    let message = panic_message(|| {
        let _ = world.query_many_mut::<&mut A, 20>(es);
    });
    assert!(message.contains("named twice"), "{message}");
    let message = panic_message(|| {
        let _ = world.query_many_mut::<(&mut A, &A), 1>([a]);
    });
    assert!(message.contains("cannot borrow"), "{message}");
    // Stale and forged duplicates are duplicates all the same.
    world.despawn(c).unwrap();
    assert!(catch_unwind(AssertUnwindSafe(|| {
        let _ = world.query_many_mut::<&A, 2>([c, c]);
    }))
    .is_err());
}

#[test]
fn query_many_mut_finds_reserved_entities() {
    let mut world = World::new();
    let r = world.reserve_entity();
    let [x] = world.query_many_mut::<Entity, 1>([r]);
    assert_eq!(x, Ok(r));
}

#[test]
fn get_disjoint_mut_through_a_query_borrow() {
    let (world, [a, b, c]) = world_of_three();
    let mut q = world.query::<(&mut A, Option<&mut B>)>();
    let [ra, rb, rc] = q.get_disjoint_mut([a, b, c]);
    let (xa, ba) = ra.unwrap();
    let (xb, bb) = rb.unwrap();
    assert!(rc.is_none() && ba.is_none());
    bb.unwrap().0 += u64::from(xa.0);
    std::mem::swap(xa, xb);
    let message = panic_message(|| {
        let _ = q.get_disjoint_mut([b, b]);
    });
    assert!(
        message.contains("get_disjoint_mut") && message.contains("named twice"),
        "{message}"
    );
    drop(q);
    assert_eq!(*world.get::<B>(b).unwrap(), B(21));
    assert_eq!(*world.get::<A>(a).unwrap(), A(2));
    // A query of an unregistered type matches nothing.
    let mut q = world.query::<&mut u8>();
    assert_eq!(q.get_disjoint_mut([a, b]), [None, None]);
}

#[test]
fn or_matches_either_side() {
    let (mut world, [a, b, c]) = world_of_three();
    let d = world.spawn((S(4),));
    world.spawn((7u8,)); // neither
    let found: Vec<(Entity, Or<A, S>)> = world
        .query_mut::<(Entity, Or<&A, &S>)>()
        .into_iter()
        .map(|(e, or)| (e, or.map_left(|x| *x).map_right(|y| *y)))
        .collect();
    assert_eq!(
        found,
        [
            (a, Or::Left(A(1))),
            (b, Or::Both(A(2), S(-2))),
            (d, Or::Right(S(4)))
        ]
    );
    // Writes through either side, and `Or` beside other terms.
    for (x, ()) in world.query_mut::<(Or<&mut A, &mut B>, With<B>)>() {
        match x {
            Or::Left(a) => a.0 += 1,
            Or::Right(b) => b.0 += 1,
            Or::Both(a, b) => {
                a.0 += 100;
                b.0 += 100;
            }
        }
    }
    assert_eq!(*world.get::<A>(b).unwrap(), A(102));
    assert_eq!(*world.get::<B>(c).unwrap(), B(31));
    assert_eq!(*world.get::<A>(a).unwrap(), A(1), "no B: not visited");
    // One side unregistered: the other still matches; both: nothing.
    assert_eq!(world.query_mut::<Or<&A, &u16>>().into_iter().count(), 2);
    assert_eq!(world.query_mut::<Or<&u32, &u16>>().into_iter().count(), 0);
    // `for_each`, `get` and `query_one_mut` agree with the `for` loop.
    let mut n = 0;
    world.query::<Or<&A, &B>>().for_each(|_| n += 1);
    assert_eq!(n, 3);
    assert!(world.query::<Or<&A, &B>>().get(d).is_none());
    assert!(world
        .query_one_mut::<Or<&A, &S>>(d)
        .unwrap()
        .right()
        .is_some());
    // Aliasing within the query is refused.
    let message = panic_message(|| world.query::<Or<&mut A, &A>>());
    assert!(message.contains("cannot borrow"), "{message}");
}

#[test]
fn batches_are_full_but_the_last_and_never_empty() {
    let mut world = World::new();
    assert_eq!(world.query::<&A>().iter_batched(3).count(), 0);
    let es = world.spawn_batch((0..100u32).map(|i| (A(i),)));
    for &e in es.iter().filter(|e| e.index() % 5 == 0) {
        world.despawn(e).unwrap();
    }
    let expected: Vec<u32> = world.query::<&A>().iter().map(|a| a.0).collect();
    for size in [1u32, 3, 7, 64, 79, 80, 81, 1000] {
        let batches: Vec<Vec<u32>> = world
            .query::<&A>()
            .iter_batched(size)
            .map(|b| {
                let n = b.len();
                let items: Vec<u32> = b.map(|a| a.0).collect();
                assert_eq!(items.len(), n);
                items
            })
            .collect();
        assert!(batches.iter().all(|b| !b.is_empty()));
        let (last, full) = batches.split_last().unwrap();
        assert!(full.iter().all(|b| b.len() == size as usize));
        assert!(last.len() <= size as usize);
        assert_eq!(batches.concat(), expected, "size {size}");
    }
    let message = panic_message(|| world.query::<&A>().iter_batched(0).count());
    assert!(message.contains("batch size"), "{message}");
}

#[test]
fn batches_run_on_threads() {
    let mut world = World::new();
    let n = if cfg!(miri) { 200 } else { 10_000 };
    world.spawn_batch((0..n).map(|i| (A(i), B(0))));
    let mut q = world.query::<(&A, &mut B)>();
    std::thread::scope(|s| {
        for batch in q.iter_batched(if cfg!(miri) { 70 } else { 1000 }) {
            s.spawn(move || {
                for (a, b) in batch {
                    b.0 = u64::from(a.0) * 2;
                }
            });
        }
    });
    drop(q);
    let sum: u64 = world.query_mut::<&B>().into_iter().map(|b| b.0).sum();
    assert_eq!(sum, u64::from(n) * u64::from(n - 1));
    // `QueryMut::into_iter_batched`, with holes and a sparse term.
    world.register::<S>(Storage::Sparse);
    let es: Vec<Entity> = world.query_mut::<Entity>().into_iter().collect();
    for &e in es.iter().step_by(3) {
        world.insert_one(e, S(1)).unwrap();
    }
    let batches: Vec<_> = world
        .query_mut::<(&mut A, &S)>()
        .into_iter_batched(16)
        .collect();
    let total: usize = batches.iter().map(|b| b.len()).sum();
    assert_eq!(total, es.len().div_ceil(3));
    std::thread::scope(|s| {
        for batch in batches {
            s.spawn(move || batch.for_each(|(a, _)| a.0 = 0));
        }
    });
    assert_eq!(
        world
            .query_mut::<(&A, &S)>()
            .into_iter()
            .filter(|(a, _)| a.0 == 0)
            .count(),
        total
    );
}

proptest! {
    #![proptest_config(common::proptest_config(3, 96))]

    /// `Or` and batches against a model of which entity has which
    /// component, over random spawns, inserts, removals and despawns.
    #[test]
    fn or_and_batches_match_a_model(
        ops in proptest::collection::vec((0..4u8, any::<u16>()), 1..if cfg!(miri) { 40 } else { 400 }),
        size in 1..100u32,
    ) {
        let mut world = World::new();
        world.register::<S>(Storage::Sparse);
        let mut model: HashMap<Entity, (Option<u32>, Option<i16>)> = HashMap::new();
        let mut order: Vec<Entity> = Vec::new();
        for (op, x) in ops {
            let pick = (!order.is_empty()).then(|| order[usize::from(x) % order.len()]);
            match (op, pick) {
                (0, _) | (_, None) => {
                    let e = match x % 4 {
                        0 => world.spawn((A(u32::from(x)),)),
                        1 => world.spawn((S(x as i16),)),
                        2 => world.spawn((A(u32::from(x)), S(x as i16))),
                        _ => world.spawn(()),
                    };
                    let a = (x % 4 == 0 || x % 4 == 2).then_some(u32::from(x));
                    let s = (x % 4 == 1 || x % 4 == 2).then_some(x as i16);
                    model.insert(e, (a, s));
                    order.push(e);
                }
                (1, Some(e)) => {
                    world.insert_one(e, A(u32::from(x))).unwrap();
                    model.get_mut(&e).unwrap().0 = Some(u32::from(x));
                }
                (2, Some(e)) => {
                    let _ = world.remove_one::<S>(e);
                    model.get_mut(&e).unwrap().1 = None;
                }
                (_, Some(e)) => {
                    world.despawn(e).unwrap();
                    model.remove(&e);
                    order.retain(|&o| o != e);
                }
            }
        }
        let expected: Vec<(Entity, Or<u32, i16>)> = order
            .iter()
            .filter_map(|e| {
                let (a, s) = model[e];
                Or::new(a, s).map(|or| (*e, or))
            })
            .collect();
        let got: Vec<(Entity, Or<u32, i16>)> = world
            .query_mut::<(Entity, Or<&A, &S>)>()
            .into_iter()
            .map(|(e, or)| (e, or.map_left(|a| a.0).map_right(|s| s.0)))
            .collect();
        prop_assert_eq!(&got, &expected);
        let batches: Vec<Vec<(Entity, Or<u32, i16>)>> = world
            .query::<(Entity, Or<&A, &S>)>()
            .iter_batched(size)
            .map(|b| b.map(|(e, or)| (e, or.map_left(|a| a.0).map_right(|s| s.0))).collect())
            .collect();
        prop_assert!(batches.iter().all(|b| !b.is_empty()));
        if let Some((_, full)) = batches.split_last() {
            prop_assert!(full.iter().all(|b| b.len() == size as usize));
        }
        prop_assert_eq!(batches.concat(), expected);
    }
}

#[test]
fn a_query_naming_a_type_twice_is_refused_before_the_type_has_a_column() {
    let mut world = World::new();
    let e = world.spawn(());
    let message = panic_message(|| world.query_mut::<(&mut u16, &u16)>().into_iter().count());
    assert!(message.contains("cannot borrow u16"), "{message}");
    let message = panic_message(|| world.query::<(&u16, Option<&mut u16>)>().iter().count());
    assert!(message.contains("u16"), "{message}");
    let message = panic_message(|| world.query_one_mut::<(&mut u16, &mut u16)>(e).is_ok());
    assert!(message.contains("u16"), "{message}");
    let message = panic_message(|| world.query_many_mut::<Or<&mut u16, &u16>, 1>([e]).len());
    assert!(message.contains("u16"), "{message}");
    // Shared twice is fine, with or without a column; so are other types.
    assert_eq!(world.query::<(&u16, &u16)>().iter().count(), 0);
    assert_eq!(world.query_mut::<(&mut u16, &u32)>().into_iter().count(), 0);
    // The same once the column exists.
    world.insert_one(e, 1u16).unwrap();
    let message = panic_message(|| world.query_mut::<(&mut u16, &u16)>().into_iter().count());
    assert!(message.contains("cannot borrow u16"), "{message}");
    assert_eq!(world.query::<(&u16, &u16)>().iter().count(), 1);
}
