//! `spawn_batch`'s batch path: columns resolved once, values pushed in one
//! loop, alive and presence bits set a word at a time at the end. Checked
//! against single spawns, with sparse and late-registered columns, and with
//! an iterator that panics or runs past the row limit midway.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use handlekit_ecs::{Entity, Order, Storage, World};

mod common;
use common::Counted;

#[derive(Debug, PartialEq, Clone, Copy)]
struct Tag(u32);

#[test]
fn batch_matches_single_spawns() {
    let mut world = World::new();
    world.register::<Tag>(Storage::Sparse);
    // Rows of other entities first, so that the columns skip rows.
    let lone: Vec<Entity> = (0..70u64).map(|i| world.spawn((i,))).collect();
    // Batches of odd sizes, starting mid-word.
    let a = world.spawn_batch((0..130u32).map(|i| (i, Tag(i))));
    let b = world.spawn_batch((0..3u32).map(|i| (i + 1000, i as f32)));
    let c = world.spawn_batch(std::iter::empty::<(u8,)>());
    assert!(c.is_empty());
    assert_eq!(world.len(), 70 + 130 + 3);
    for (i, &e) in lone.iter().enumerate() {
        assert_eq!(*world.get::<u64>(e).unwrap(), i as u64);
        assert!(!world.has::<u32>(e));
    }
    for (i, &e) in a.iter().enumerate() {
        assert_eq!(*world.get::<u32>(e).unwrap(), i as u32);
        assert_eq!(*world.get::<Tag>(e).unwrap(), Tag(i as u32));
        assert!(!world.has::<f32>(e));
    }
    for (i, &e) in b.iter().enumerate() {
        assert_eq!(*world.get::<u32>(e).unwrap(), i as u32 + 1000);
    }
    assert_eq!((world.count::<u32>(), world.count::<Tag>()), (133, 130));
    let sum: u64 = world
        .query_mut::<&u32>()
        .into_iter()
        .map(|&x| u64::from(x))
        .sum();
    assert_eq!(sum, (0..130).sum::<u64>() + 1000 + 1001 + 1002);
    let tagged = world.query_mut::<(Entity, &Tag)>().into_iter().count();
    assert_eq!(tagged, 130);
    // Despawn and collect across the batch's rows.
    for &e in &a[..100] {
        world.despawn(e).unwrap();
    }
    world.compact();
    assert_eq!(*world.get::<u32>(a[100]).unwrap(), 100);
    assert_eq!(*world.get::<Tag>(a[129]).unwrap(), Tag(129));
}

#[test]
fn batch_after_collect_and_clear() {
    let mut world = World::new();
    // Under Miri, 300 rows (three collections): a despawn takes 4 ms of
    // Miri's clock.
    let n: u32 = if cfg!(miri) { 300 } else { 1000 };
    let es = world.spawn_batch((0..n).map(|i| (i,)));
    for &e in &es[..n as usize / 10 * 9] {
        world.despawn(e).unwrap();
    }
    while world.row_count() > world.len() {
        world.collect(128, Order::Any);
    }
    let more = world.spawn_batch((0..100u32).map(|i| (i, 'x')));
    assert_eq!(world.count::<u32>(), n as usize / 10 + 100);
    assert_eq!(*world.get::<char>(more[99]).unwrap(), 'x');
    world.clear();
    let again = world.spawn_batch((0..65u32).map(|i| (i,)));
    assert_eq!(*world.get::<u32>(again[64]).unwrap(), 64);
    assert_eq!(world.query_mut::<&u32>().into_iter().count(), 65);
}

#[test]
fn panic_midway_keeps_the_spawned_entities() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    world.spawn((7u8,));
    let result = catch_unwind(AssertUnwindSafe(|| {
        world.spawn_batch((0..100u32).map(|i| {
            assert!(i != 70, "intentional: the iterator panics");
            (i, Counted(drops.clone(), i))
        }))
    }));
    assert!(result.is_err());
    // The 70 entities spawned before the panic are whole and findable.
    assert_eq!(world.len(), 71);
    assert_eq!(world.count::<u32>(), 70);
    assert_eq!(world.count::<Counted>(), 70);
    let rows: Vec<u32> = world
        .query_mut::<(&u32, &Counted)>()
        .into_iter()
        .map(|(x, _)| *x)
        .collect();
    assert_eq!(rows, (0..70).collect::<Vec<_>>());
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(world);
    assert_eq!(drops.load(Ordering::SeqCst), 70);
}

#[test]
fn rows_full_midway_panics_with_the_limit() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::with_max_rows(100);
    let result = catch_unwind(AssertUnwindSafe(|| {
        world.spawn_batch((0..150u32).map(|i| (i, Counted(drops.clone(), i))))
    }));
    let payload = result.unwrap_err();
    let message = payload
        .downcast_ref::<String>()
        .expect("a formatted panic message");
    assert!(message.contains("100"), "{message}");
    assert_eq!(world.len(), 100);
    assert_eq!(world.count::<Counted>(), 100);
    // The bundle that did not fit was dropped.
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(world.query_mut::<&Counted>().into_iter().count(), 100);
    world.clear();
    assert_eq!(drops.load(Ordering::SeqCst), 101);
}

#[test]
fn column_mut_matches_the_world_calls() {
    let mut world = World::new();
    world.register::<Tag>(Storage::Sparse);
    let es = world.spawn_batch((0..200u32).map(|i| (i,)));
    let stale = es[5];
    world.despawn(stale).unwrap();
    // Dense: in row order (pushes), then out of order (slots in the window).
    {
        let mut column = world.column_mut::<u64>();
        assert_eq!(column.insert(stale, 1), Err(handlekit_ecs::NoSuchEntity));
        for &e in es.iter().rev().step_by(3) {
            assert_eq!(column.insert(e, 7), Ok(None));
        }
        for &e in es.iter().step_by(2) {
            if e != stale {
                column.insert(e, 9).unwrap();
            }
        }
        assert_eq!(column.get(es[0]), Some(&9));
        *column.get_mut(es[0]).unwrap() += 1;
        assert_eq!(column.remove(es[0]), Ok(10));
        assert!(column.remove(es[0]).is_err());
        assert!(column.remove(stale).is_err());
        assert!(!column.contains(es[0]) && column.get(stale).is_none());
    }
    let expected = es
        .iter()
        .enumerate()
        .filter(|&(i, &e)| e != stale && i != 0 && (i % 2 == 0 || (199 - i) % 3 == 0))
        .count();
    assert_eq!(world.count::<u64>(), expected);
    assert_eq!(world.query_mut::<&u64>().into_iter().count(), expected);
    // Sparse.
    {
        let mut tags = world.column_mut::<Tag>();
        for (i, &e) in es.iter().enumerate().skip(100) {
            tags.insert(e, Tag(i as u32)).unwrap();
        }
        assert_eq!(tags.len(), 100);
        assert_eq!(tags.remove(es[150]), Ok(Tag(150)));
        assert_eq!(tags.get(es[151]), Some(&Tag(151)));
        assert!(tags.get(es[150]).is_none() && !tags.is_empty());
    }
    assert_eq!(*world.get::<Tag>(es[199]).unwrap(), Tag(199));
    assert_eq!(world.count::<Tag>(), 99);
    world.compact();
    assert_eq!(*world.get::<u64>(es[2]).unwrap(), 9);
}

/// An insert at a dense column's next slot makes the rest of its presence
/// word's slots, empty, past the world's last row; a batch or a spawn
/// landing there writes its values in them (the batch cuts them off first
/// and pushes). Every value is found and dropped once.
#[test]
fn batch_after_inserts_that_made_empty_slots() {
    let drops = Arc::new(AtomicUsize::new(0));
    let counted = |i: u32| Counted(drops.clone(), i);
    let mut world = World::new();
    // Three rows: inserts in row order make slots up to row 63.
    let first: Vec<Entity> = (0..3u32).map(|i| world.spawn((i,))).collect();
    for (i, &e) in first.iter().enumerate() {
        world.insert_one(e, counted(i as u32)).unwrap();
    }
    // A batch from row 3, inside the made slots.
    let batch = world.spawn_batch((3..40u32).map(|i| (i, counted(i))));
    // A single spawn inside them, and one past them after another batch.
    let lone = world.spawn((40u32, counted(40)));
    let more = world.spawn_batch((41..100u32).map(|i| (i,)));
    {
        let mut column = world.column_mut::<Counted>();
        for (i, &e) in more.iter().enumerate() {
            assert_eq!(
                column
                    .insert(e, counted(41 + i as u32))
                    .map(|old| old.is_none()),
                Ok(true)
            );
        }
    }
    let last = world.spawn_batch((100..130u32).map(|i| (i, counted(i))));
    let all: Vec<Entity> = first
        .iter()
        .chain(&batch)
        .chain([&lone])
        .chain(&more)
        .chain(&last)
        .copied()
        .collect();
    assert_eq!(all.len(), 130);
    for (i, &e) in all.iter().enumerate() {
        assert_eq!(*world.get::<u32>(e).unwrap(), i as u32);
        assert_eq!(world.get::<Counted>(e).unwrap().1, i as u32, "entity {i}");
    }
    assert_eq!(world.count::<Counted>(), 130);
    let sum: u64 = world
        .query_mut::<&Counted>()
        .into_iter()
        .map(|c| u64::from(c.1))
        .sum();
    assert_eq!(sum, (0..130).sum::<u64>());
    assert_eq!(drops.load(Ordering::Relaxed), 0);
    for &e in &all[..50] {
        world.despawn(e).unwrap();
    }
    assert_eq!(drops.load(Ordering::Relaxed), 50);
    drop(world);
    assert_eq!(drops.load(Ordering::Relaxed), 130);
}
