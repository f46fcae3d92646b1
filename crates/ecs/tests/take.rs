//! `World::take`: every component moves out once, the handle goes stale,
//! and the taken components spawn in another world (dense and sparse
//! columns, types the other world has not seen, drops counted).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use handlekit_ecs::{ComponentError, Storage, World};

mod common;
use common::Counted;

#[test]
fn taken_components_move_to_another_world() {
    let mut from = World::new();
    from.register::<char>(Storage::Sparse);
    let keep = from.spawn((1u8, 'k'));
    let moved = from.spawn((2u8, 'm', String::from("s")));
    let taken = from.take(moved).unwrap();
    assert!(taken.has::<u8>() && taken.has::<char>() && taken.has::<String>());
    assert!(!taken.has::<u16>());
    assert!(!from.contains(moved));
    assert_eq!(
        from.get::<u8>(moved).err(),
        Some(ComponentError::NoSuchEntity)
    );
    assert_eq!(
        (
            from.count::<u8>(),
            from.count::<char>(),
            from.count::<String>()
        ),
        (1, 1, 0)
    );
    assert_eq!(*from.get::<char>(keep).unwrap(), 'k');
    from.check_invariants();

    let mut to = World::new();
    to.spawn((9u8,));
    let e = to.spawn(taken);
    assert_eq!(*to.get::<u8>(e).unwrap(), 2);
    assert_eq!(*to.get::<char>(e).unwrap(), 'm');
    assert_eq!(*to.get::<String>(e).unwrap(), "s");
    to.check_invariants();
}

#[test]
fn take_of_a_dead_or_foreign_entity_fails() {
    let mut world = World::new();
    let e = world.spawn((1u8,));
    world.despawn(e).unwrap();
    assert!(world.take(e).is_err());
    let mut other = World::new();
    let foreign = other.spawn((1u8,));
    let _ = other.spawn((2u8,));
    // `foreign` names index 0 at generation 1, dead in `world`.
    assert!(world.take(foreign).is_err());
    assert_eq!(world.len(), 0);
}

#[test]
fn every_component_is_dropped_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let e = world.spawn((Counted(drops.clone(), 1),));
    let taken = world.take(e).unwrap();
    assert_eq!(drops.load(Ordering::Relaxed), 0, "moved, not dropped");
    drop(taken);
    assert_eq!(drops.load(Ordering::Relaxed), 1);

    let e = world.spawn((Counted(drops.clone(), 2), 7u64));
    let taken = world.take(e).unwrap();
    let back = world.spawn(taken);
    assert_eq!(world.get::<Counted>(back).unwrap().1, 2);
    assert_eq!(drops.load(Ordering::Relaxed), 1);
    drop(world);
    assert_eq!(drops.load(Ordering::Relaxed), 2);
}

#[test]
fn a_reserved_entity_can_be_taken_after_its_flush() {
    let mut world = World::new();
    let reserved = world.reserve_entity();
    let taken = world.take(reserved).unwrap();
    assert_eq!(taken.component_types().count(), 0);
    assert!(!world.contains(reserved));
}

#[test]
fn take_then_insert_onto_a_live_entity() {
    let mut world = World::new();
    let a = world.spawn((1u8, 'a'));
    let b = world.spawn((2u16,));
    let taken = world.take(a).unwrap();
    world.insert(b, taken).unwrap();
    assert_eq!(
        (
            *world.get::<u8>(b).unwrap(),
            *world.get::<char>(b).unwrap(),
            *world.get::<u16>(b).unwrap()
        ),
        (1, 'a', 2)
    );
    world.check_invariants();
}
