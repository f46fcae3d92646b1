//! `#[derive(Bundle)]` and `#[derive(DynamicBundleClone)]`: named, tuple,
//! unit and generic structs spawned, inserted, removed and batch-spawned
//! as the tuples of their field types are; the duplicate-type panic; drop
//! counts. (The derives' error messages are checked by `derive_ui.rs`.)
#![cfg(feature = "macros")]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use handlekit_ecs::{
    Bundle, Component, DynamicBundleClone, EntityBuilder, EntityBuilderClone, World,
};

mod common;
use common::Counted;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Pos(f32, f32);

#[derive(Clone, Copy, Debug, PartialEq)]
struct Vel(f32, f32);

#[derive(Bundle, DynamicBundleClone, Clone, Debug, PartialEq)]
struct Mover {
    pos: Pos,
    vel: Vel,
    name: String,
}

#[derive(Bundle, Debug, PartialEq)]
struct Pair(u8, char);

#[derive(Bundle, DynamicBundleClone, Clone, Debug, PartialEq)]
struct Marker;

#[derive(Bundle, Debug, PartialEq)]
struct Empty {}

#[derive(Bundle, DynamicBundleClone, Clone, Debug, PartialEq)]
struct Generic<T, const N: usize>
where
    T: Component,
{
    value: T,
    array: [u16; N],
}

/// Field names that are also the names of the generated code's parameters.
#[derive(Bundle, Clone, Debug, PartialEq)]
struct Shadowing {
    world: u8,
    entity: u16,
    row: u32,
    builder: u64,
    out: i8,
    bundles: i16,
}

#[derive(Bundle, Debug, PartialEq)]
struct Twelve(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64, char, bool);

/// Past the largest tuple.
#[derive(Bundle, Debug, PartialEq)]
struct Fourteen {
    a: u8,
    b: u16,
    c: u32,
    d: u64,
    e: i8,
    f: i16,
    g: i32,
    h: i64,
    i: f32,
    j: f64,
    k: char,
    l: bool,
    m: String,
    n: Vec<u8>,
}

fn fourteen(i: u8) -> Fourteen {
    Fourteen {
        a: i,
        b: 2,
        c: 3,
        d: 4,
        e: 5,
        f: 6,
        g: 7,
        h: 8,
        i: 9.0,
        j: 10.0,
        k: 'k',
        l: true,
        m: format!("m{i}"),
        n: vec![i],
    }
}

#[derive(Bundle)]
struct FourteenTwice(
    u8,
    u16,
    u32,
    u64,
    i8,
    i16,
    i32,
    i64,
    f32,
    f64,
    char,
    bool,
    (),
    u8,
);

#[derive(Bundle)]
struct Twice {
    a: u32,
    b: u32,
}

#[test]
fn named_struct_spawns_and_removes() {
    let mut world = World::new();
    let mover = Mover {
        pos: Pos(1.0, 2.0),
        vel: Vel(0.5, 0.0),
        name: "ship".into(),
    };
    let e = world.spawn(mover.clone());
    assert_eq!(*world.get::<Pos>(e).unwrap(), Pos(1.0, 2.0));
    assert_eq!(*world.get::<String>(e).unwrap(), "ship");
    for (p, v) in world.query_mut::<(&mut Pos, &Vel)>() {
        p.0 += v.0;
    }
    let taken = world.remove::<Mover>(e).unwrap();
    assert_eq!(
        taken,
        Mover {
            pos: Pos(1.5, 2.0),
            ..mover
        }
    );
    assert!(!world.has::<Pos>(e) && world.contains(e));
    assert!(world.remove::<Mover>(e).is_err());
}

#[test]
fn tuple_unit_and_empty_structs() {
    let mut world = World::new();
    let e = world.spawn(Pair(7, 'x'));
    assert_eq!(world.remove::<Pair>(e), Ok(Pair(7, 'x')));
    // A derived unit struct is the empty bundle, as `()` is.
    let m = world.spawn(Marker);
    assert!(!world.has::<Marker>(m));
    assert_eq!(world.remove::<Marker>(m), Ok(Marker));
    let tagged = world.spawn((Marker,));
    assert!(world.has::<Marker>(tagged));
    let n = world.spawn(Empty {});
    assert!(world.contains(n));
    world.insert(n, Pair(1, 'a')).unwrap();
    assert_eq!(*world.get::<char>(n).unwrap(), 'a');
}

#[test]
fn generic_struct() {
    let mut world = World::new();
    let e = world.spawn(Generic {
        value: String::from("g"),
        array: [1, 2, 3],
    });
    assert_eq!(*world.get::<[u16; 3]>(e).unwrap(), [1, 2, 3]);
    let g = world.remove::<Generic<String, 3>>(e).unwrap();
    assert_eq!(g.value, "g");
    let es = world.spawn_batch((0..10u64).map(|i| Generic {
        value: i,
        array: [i as u16; 2],
    }));
    assert_eq!(*world.get::<u64>(es[9]).unwrap(), 9);
    assert_eq!(world.count::<[u16; 2]>(), 10);
}

#[test]
fn shadowing_field_names() {
    let mut world = World::new();
    let value = Shadowing {
        world: 1,
        entity: 2,
        row: 3,
        builder: 4,
        out: 5,
        bundles: 6,
    };
    let e = world.spawn(value.clone());
    assert_eq!(*world.get::<u64>(e).unwrap(), 4);
    let es = world.spawn_batch((0..3).map(|i| Shadowing {
        world: i,
        entity: 0,
        row: 0,
        builder: 0,
        out: 0,
        bundles: 0,
    }));
    assert_eq!(*world.get::<u8>(es[2]).unwrap(), 2);
    assert_eq!(world.remove::<Shadowing>(e), Ok(value));
}

#[test]
fn twelve_fields() {
    let mut world = World::new();
    let value = Twelve(1, 2, 3, 4, 5, 6, 7, 8, 9.0, 10.0, 'c', true);
    let e = world.spawn(value);
    assert!(*world.get::<bool>(e).unwrap());
    assert_eq!(
        world.remove::<Twelve>(e),
        Ok(Twelve(1, 2, 3, 4, 5, 6, 7, 8, 9.0, 10.0, 'c', true))
    );
}

#[test]
fn more_fields_than_the_largest_tuple() {
    let mut world = World::new();
    let e = world.spawn(fourteen(1));
    assert_eq!(*world.get::<String>(e).unwrap(), "m1");
    let es = world.spawn_batch((0..5).map(fourteen));
    assert_eq!(es.len(), 5);
    assert_eq!(*world.get::<Vec<u8>>(es[4]).unwrap(), [4]);
    world.insert(es[0], fourteen(9)).unwrap();
    assert_eq!(world.remove::<Fourteen>(es[0]), Ok(fourteen(9)));
    assert!(world.remove::<Fourteen>(es[0]).is_err());
    let mut builder = EntityBuilder::new();
    builder.add_bundle(fourteen(7));
    let f = world.spawn(builder.build());
    assert_eq!(world.remove::<Fourteen>(f), Ok(fourteen(7)));
    assert_eq!(world.count::<u8>(), 5);
    world.check_invariants();
}

#[test]
#[should_panic(expected = "the bundle has the component type u8 twice")]
fn duplicate_type_past_the_largest_tuple_panics() {
    World::new().spawn(FourteenTwice(
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9.0,
        10.0,
        'c',
        true,
        (),
        2,
    ));
}

#[test]
fn derived_and_tuple_agree_in_batches() {
    let n = if cfg!(miri) { 70 } else { 1000 };
    let mut a = World::new();
    let mut b = World::new();
    let ea = a.spawn_batch((0..n).map(|i| Pair(i as u8, 'p')));
    let eb = b.spawn_batch((0..n).map(|i| (i as u8, 'p')));
    assert_eq!(ea, eb);
    for (&x, &y) in ea.iter().zip(&eb) {
        assert_eq!(*a.get::<u8>(x).unwrap(), *b.get::<u8>(y).unwrap());
    }
    a.check_invariants();
}

#[test]
#[should_panic(expected = "the bundle has the component type u32 twice")]
fn duplicate_type_panics_on_spawn() {
    World::new().spawn(Twice { a: 1, b: 2 });
}

#[test]
#[should_panic(expected = "the bundle has the component type u32 twice")]
fn duplicate_type_panics_on_spawn_batch() {
    World::new().spawn_batch([Twice { a: 1, b: 2 }]);
}

#[test]
#[should_panic(expected = "the bundle has the component type u32 twice")]
fn duplicate_type_panics_on_remove() {
    let mut world = World::new();
    let e = world.spawn((1u32,));
    let _ = world.remove::<Twice>(e);
}

#[test]
#[should_panic(expected = "the bundle has the component type u32 twice")]
fn duplicate_type_panics_in_builder() {
    EntityBuilder::new().add_bundle(Twice { a: 1, b: 2 });
}

#[test]
fn duplicate_type_spawns_nothing() {
    let mut world = World::new();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        world.spawn(Twice { a: 1, b: 2 })
    }));
    assert!(result.is_err());
    assert!(world.is_empty());
}

#[test]
fn derived_bundles_in_builders() {
    let mut builder = EntityBuilder::new();
    builder.add(9u8).add_bundle(Pair(1, 'q'));
    assert_eq!(builder.get::<&u8>(), Some(&1));
    let mut prefab = EntityBuilderClone::new();
    prefab
        .add_bundle(Generic {
            value: 3i32,
            array: [0u16; 1],
        })
        .add_bundle(Marker);
    let prefab = prefab.build();
    let mut world = World::new();
    let e = world.spawn(&prefab);
    assert_eq!(*world.get::<i32>(e).unwrap(), 3);
    // A unit struct that derives `Bundle` is a bundle of no components
    // (as in hecs), not a component: a tag component derives nothing.
    assert!(!world.has::<Marker>(e));
    world.insert(e, builder.build()).unwrap();
    assert_eq!(*world.get::<char>(e).unwrap(), 'q');
}

#[derive(Bundle, DynamicBundleClone, Clone)]
struct WithCounted {
    counted: Counted,
    tag: u8,
}

#[test]
fn derived_bundles_drop_each_component_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let bundle = WithCounted {
        counted: Counted(drops.clone(), 0),
        tag: 1,
    };
    let e = world.spawn(bundle.clone());
    let f = world.spawn(bundle.clone());
    world.insert(f, bundle.clone()).unwrap(); // replaces: one drop
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    let taken = world.remove::<WithCounted>(e).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(taken);
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    let mut prefab = EntityBuilderClone::new();
    prefab.add_bundle(bundle);
    let prefab = prefab.build();
    world.spawn(&prefab);
    drop(prefab);
    drop(world);
    // f's, the prefab's, the prefab's entity's.
    assert_eq!(drops.load(Ordering::SeqCst), 5);
}
