//! `World::column::<T>().runs()`: a column's values as slices with their
//! entities (issue 33), checked against queries on random worlds.

use std::panic::{catch_unwind, AssertUnwindSafe};

use handlekit_ecs::{Entity, Order, Storage, World};
use proptest::prelude::*;

mod common;

#[derive(Clone, Copy, Debug, PartialEq)]
struct A(u32);
#[derive(Clone, Copy, Debug, PartialEq)]
struct B(u64);
/// Owns heap memory: Miri sees a read of a dropped value.
#[derive(Clone, Debug, PartialEq)]
struct C(Box<u16>);

#[derive(Clone, Debug)]
enum Op {
    Spawn(bool, bool, bool),
    SpawnMany(u8),
    Despawn(u8),
    InsertA(u8, u32),
    RemoveA(u8),
    InsertB(u8, u64),
    RemoveB(u8),
    RemoveC(u8),
    Collect(u8),
    Compact,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(a, b, c)| Op::Spawn(a, b, c)),
        1 => any::<u8>().prop_map(Op::SpawnMany),
        3 => any::<u8>().prop_map(Op::Despawn),
        2 => (any::<u8>(), any::<u32>()).prop_map(|(i, v)| Op::InsertA(i, v)),
        2 => any::<u8>().prop_map(Op::RemoveA),
        2 => (any::<u8>(), any::<u64>()).prop_map(|(i, v)| Op::InsertB(i, v)),
        1 => any::<u8>().prop_map(Op::RemoveB),
        1 => any::<u8>().prop_map(Op::RemoveC),
        1 => any::<u8>().prop_map(Op::Collect),
        1 => Just(Op::Compact),
    ]
}

/// Operations per case: fewer under Miri.
fn ops() -> std::ops::Range<usize> {
    if cfg!(miri) {
        0..20
    } else {
        0..60
    }
}

/// The runs of `T` agree with a query of `(Entity, &T)`: the same pairs in
/// the same order, each run two slices of one non-zero length; a sparse
/// set's runs have one entity each. Returns the number of runs.
fn check<T: handlekit_ecs::Component + PartialEq + std::fmt::Debug>(world: &World) -> usize {
    let mut query = world.query::<(Entity, &T)>();
    let expected: Vec<(Entity, &T)> = query.iter().collect();
    let column = world.column::<T>();
    let mut got = Vec::new();
    let mut runs = 0;
    for (entities, values) in column.runs() {
        assert_eq!(entities.len(), values.len());
        assert!(!entities.is_empty());
        if world.storage_of::<T>() == Some(Storage::Sparse) {
            assert_eq!(entities.len(), 1);
        }
        got.extend(entities.iter().copied().zip(values));
        runs += 1;
    }
    assert_eq!(got, expected);
    assert_eq!(column.len(), expected.len());
    for &(e, value) in &expected {
        assert_eq!(column.get(e), Some(value));
    }
    runs
}

proptest! {
    #![proptest_config(common::proptest_config(3, 256))]

    #[test]
    fn runs_agree_with_queries(ops in prop::collection::vec(op(), ops())) {
        let mut world = World::with_max_rows(if cfg!(miri) { 512 } else { 4096 });
        world.register::<B>(Storage::Sparse);
        let mut known: Vec<Entity> = Vec::new();
        // Runs `f` on a known entity picked by `i`, if there is one; its
        // result is ignored (the entity may be dead).
        let on = |world: &mut World, known: &[Entity], i: u8, f: &dyn Fn(&mut World, Entity)| {
            if !known.is_empty() {
                f(world, known[usize::from(i) % known.len()]);
            }
        };
        let len = ops.len();
        for (step, op) in ops.into_iter().enumerate() {
            match op {
                Op::Spawn(a, b, c) => {
                    let e = world.spawn(());
                    if a {
                        world.insert_one(e, A(e.index() as u32)).unwrap();
                    }
                    if b {
                        world.insert_one(e, B(e.index() as u64)).unwrap();
                    }
                    if c {
                        world.insert_one(e, C(Box::new(e.index() as u16))).unwrap();
                    }
                    known.push(e);
                }
                Op::SpawnMany(n) => {
                    let most = if cfg!(miri) { 40 } else { 150 };
                    let n = usize::from(n % most).min(world.max_rows() - world.row_count());
                    known.extend(world.spawn_batch((0..n as u32).map(|i| (A(i), C(Box::new(i as u16))))));
                }
                Op::Despawn(i) => on(&mut world, &known, i, &|w, e| _ = w.despawn(e)),
                Op::InsertA(i, v) => on(&mut world, &known, i, &|w, e| _ = w.insert_one(e, A(v))),
                Op::RemoveA(i) => on(&mut world, &known, i, &|w, e| _ = w.remove_one::<A>(e)),
                Op::InsertB(i, v) => on(&mut world, &known, i, &|w, e| _ = w.insert_one(e, B(v))),
                Op::RemoveB(i) => on(&mut world, &known, i, &|w, e| _ = w.remove_one::<B>(e)),
                Op::RemoveC(i) => on(&mut world, &known, i, &|w, e| _ = w.remove_one::<C>(e)),
                Op::Collect(budget) => {
                    let order = if budget % 2 == 0 { Order::Any } else { Order::Preserve };
                    if world.row_count() * 2 <= world.max_rows() {
                        world.collect(usize::from(budget), order);
                    }
                }
                Op::Compact => {
                    world.compact();
                }
            }
            // Under Miri, after every few operations and the last (each
            // check reads every entity of every column).
            if !common::check_after(step, len) {
                continue;
            }
            check::<A>(&world);
            check::<B>(&world);
            check::<C>(&world);
            check::<u8>(&world); // never registered
        }
    }
}

#[test]
fn a_spawned_column_is_one_run() {
    let mut world = World::new();
    let n = if cfg!(miri) { 200 } else { 10_000 };
    let es = world.spawn_batch((0..n).map(|i| (A(i), B(u64::from(i)))));
    assert_eq!(check::<A>(&world), 1);
    let column = world.column::<A>();
    let (entities, values) = column.runs().next().unwrap();
    assert_eq!(entities, &es[..]);
    assert_eq!(values.iter().map(|a| a.0).sum::<u32>(), (0..n).sum());
    drop(column);
    // One row without the component in the middle splits it in two; dead
    // rows split it as well.
    world.remove_one::<A>(es[100]).unwrap();
    assert_eq!(check::<A>(&world), 2);
    world.despawn(es[150]).unwrap();
    assert_eq!(check::<A>(&world), 3);
    // Runs cross the 64-row words: none ends at a word boundary here.
    let column = world.column::<A>();
    let lengths: Vec<usize> = column.runs().map(|(e, _)| e.len()).collect();
    assert_eq!(lengths, [100, 49, n as usize - 151]);
}

#[test]
fn the_column_is_borrowed_while_the_guard_lives() {
    let mut world = World::new();
    world.spawn((A(1),));
    let column = world.column::<A>();
    let conflict = catch_unwind(AssertUnwindSafe(|| drop(world.query::<&mut A>())));
    assert!(conflict.is_err());
    // Shared borrows coexist.
    assert_eq!(world.query::<&A>().iter().count(), 1);
    drop(column);
    assert_eq!(world.query::<&mut A>().iter().count(), 1);
    let query = world.query::<&mut A>();
    let conflict = catch_unwind(AssertUnwindSafe(|| drop(world.column::<A>())));
    assert!(conflict.is_err());
    drop(query);
    assert_eq!(world.column::<A>().runs().count(), 1);
}
