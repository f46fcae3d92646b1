//! `EntityBuilder`, `EntityBuilderClone` / `BuiltEntityClone` (prefabs),
//! and spawning and inserting what they build: values, replacement, drop
//! counts (every component dropped exactly once, also when a `Drop` or a
//! `Clone` panics), alignment, and a model-based proptest against a map.

use std::any::TypeId;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use handlekit_ecs::{EntityBuilder, EntityBuilderClone, World};
use proptest::prelude::*;

mod common;

/// Counts its drops in a shared counter; its `Drop` panics if `panics`.
#[derive(Debug)]
struct Counted<const K: usize> {
    drops: Arc<AtomicUsize>,
    value: u32,
    panics: bool,
}

impl<const K: usize> Counted<K> {
    fn new(drops: &Arc<AtomicUsize>, value: u32) -> Self {
        Counted {
            drops: drops.clone(),
            value,
            panics: false,
        }
    }

    fn panicking(drops: &Arc<AtomicUsize>, value: u32) -> Self {
        let mut counted = Counted::new(drops, value);
        counted.panics = true;
        counted
    }
}

impl<const K: usize> Clone for Counted<K> {
    fn clone(&self) -> Self {
        // A clone of a panicking value does not panic.
        Counted::new(&self.drops, self.value)
    }
}

impl<const K: usize> Drop for Counted<K> {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.panics && !std::thread::panicking() {
            panic!("Counted<{K}> drop panics on purpose");
        }
    }
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

fn drops(counter: &Arc<AtomicUsize>) -> usize {
    counter.load(Ordering::SeqCst)
}

#[test]
fn spawn_from_builder_and_reuse() {
    let mut world = World::new();
    let mut builder = EntityBuilder::new();
    let mut es = Vec::new();
    for i in 0..10u32 {
        builder.add(i).add(format!("e{i}"));
        if i % 3 == 0 {
            builder.add(i as f64);
        }
        assert_eq!(builder.has::<f64>(), i % 3 == 0);
        es.push(world.spawn(builder.build()));
        assert!(!builder.has::<u32>(), "the builder is empty after a spawn");
    }
    for (i, &e) in es.iter().enumerate() {
        let i = i as u32;
        assert_eq!(*world.get::<u32>(e).unwrap(), i);
        assert_eq!(*world.get::<String>(e).unwrap(), format!("e{i}"));
        assert_eq!(world.has::<f64>(e), i % 3 == 0);
    }
    assert_eq!(world.count::<f64>(), 4);
    world.check_invariants();
}

#[test]
fn insert_from_builder_replaces() {
    let d = counter();
    let mut world = World::new();
    let e = world.spawn((Counted::<0>::new(&d, 1), 5u8));
    let mut builder = EntityBuilder::new();
    builder.add(Counted::<0>::new(&d, 2)).add('x');
    world.insert(e, builder.build()).unwrap();
    assert_eq!(drops(&d), 1, "the replaced component is dropped");
    assert_eq!(world.get::<Counted<0>>(e).unwrap().value, 2);
    assert_eq!(*world.get::<char>(e).unwrap(), 'x');
    assert_eq!(*world.get::<u8>(e).unwrap(), 5);
    // Into a dead entity: an error, and the components are dropped.
    world.despawn(e).unwrap();
    assert_eq!(drops(&d), 2);
    builder.add(Counted::<0>::new(&d, 3));
    assert!(world.insert(e, builder.build()).is_err());
    assert_eq!(drops(&d), 3);
    assert!(!builder.has::<Counted<0>>());
}

#[test]
fn get_has_and_replace() {
    let d = counter();
    let mut builder = EntityBuilder::new();
    assert_eq!(builder.get::<&u32>(), None);
    builder.add(1u32).add(Counted::<0>::new(&d, 10));
    assert!(builder.has::<u32>() && builder.has::<Counted<0>>() && !builder.has::<u64>());
    assert_eq!(builder.get::<&u32>(), Some(&1));
    *builder.get_mut::<&mut u32>().unwrap() = 7;
    assert_eq!(builder.get_mut::<&u32>(), Some(&7));
    builder.add(Counted::<0>::new(&d, 11));
    assert_eq!(drops(&d), 1, "replacing drops the old value");
    assert_eq!(builder.get::<&Counted<0>>().unwrap().value, 11);
    builder.get_mut::<&mut Counted<0>>().unwrap().value = 12;
    // Replacing keeps one entry per type.
    assert_eq!(
        builder.component_types().collect::<Vec<_>>(),
        [TypeId::of::<u32>(), TypeId::of::<Counted<0>>()]
    );
    let mut world = World::new();
    let e = world.spawn(builder.build());
    assert_eq!(world.get::<Counted<0>>(e).unwrap().value, 12);
    assert_eq!(*world.get::<u32>(e).unwrap(), 7);
    assert_eq!(drops(&d), 1);
    drop(world);
    assert_eq!(drops(&d), 2);
}

#[test]
fn add_bundle_sources() {
    let d = counter();
    let mut other = EntityBuilder::new();
    other.add(Counted::<1>::new(&d, 1)).add(2u16);
    let mut builder = EntityBuilder::new();
    builder
        .add(9u16)
        .add_bundle((1u8, 'a'))
        .add_bundle(other.build());
    assert!(!other.has::<u16>(), "moved out of the other builder");
    assert_eq!(builder.get::<&u16>(), Some(&2));
    assert_eq!(builder.get::<&u8>(), Some(&1));
    assert_eq!(builder.get::<&Counted<1>>().unwrap().value, 1);
    // A prefab adds clones.
    let mut prefab = EntityBuilderClone::new();
    prefab.add(Counted::<1>::new(&d, 5)).add(3u8);
    let prefab = prefab.build();
    builder.add_bundle(&prefab);
    assert_eq!(drops(&d), 1, "the moved-in value was replaced by the clone");
    assert_eq!(builder.get::<&Counted<1>>().unwrap().value, 5);
    assert_eq!(builder.get::<&u8>(), Some(&3));
    let mut world = World::new();
    let e = world.spawn(builder.build());
    assert_eq!(world.get::<Counted<1>>(e).unwrap().value, 5);
    drop(prefab);
    drop(world);
    assert_eq!(drops(&d), 3);
}

#[test]
fn prefab_spawns_many_clones() {
    let d = counter();
    let mut builder = EntityBuilderClone::new();
    builder
        .add(Counted::<0>::new(&d, 4))
        .add(String::from("orc"))
        .add([1.0f32; 4]);
    let prefab = builder.build();
    let mut world = World::new();
    let n = if cfg!(miri) { 20 } else { 500 };
    let es: Vec<_> = (0..n).map(|_| world.spawn(&prefab)).collect();
    assert_eq!(world.count::<String>(), n);
    world.get_mut::<String>(es[0]).unwrap().push('!');
    assert_eq!(*world.get::<String>(es[0]).unwrap(), "orc!");
    assert_eq!(*world.get::<String>(es[1]).unwrap(), "orc");
    // A clone of the prefab spawns the same.
    let copy = prefab.clone();
    drop(prefab);
    let e = world.spawn(&copy);
    assert_eq!(world.get::<Counted<0>>(e).unwrap().value, 4);
    // Insert from a prefab.
    let plain = world.spawn((1u8,));
    world.insert(plain, &copy).unwrap();
    assert_eq!(*world.get::<[f32; 4]>(plain).unwrap(), [1.0; 4]);
    assert_eq!(drops(&d), 1, "the dropped prefab's own value");
    drop(copy);
    assert_eq!(drops(&d), 2);
    drop(world);
    assert_eq!(drops(&d), 2 + n + 2);
}

#[test]
fn prefab_builder_from_prefab() {
    let mut base = EntityBuilderClone::new();
    base.add(100u32).add('b');
    let base = base.build();
    let mut boss = EntityBuilderClone::new();
    boss.add_bundle(&base).add_bundle((500u32, 2u8));
    assert_eq!(boss.get::<&u32>(), Some(&500));
    assert_eq!(boss.get::<&char>(), Some(&'b'));
    *boss.get_mut::<&mut char>().unwrap() = 'B';
    let boss = boss.build();
    let mut world = World::new();
    let a = world.spawn(&base);
    let b = world.spawn(&boss);
    assert_eq!(*world.get::<char>(a).unwrap(), 'b');
    assert_eq!(*world.get::<char>(b).unwrap(), 'B');
    assert!(!world.has::<u8>(a) && world.has::<u8>(b));
}

#[test]
fn unspawned_builders_drop_their_components_once() {
    let d = counter();
    {
        let mut builder = EntityBuilder::new();
        builder
            .add(Counted::<0>::new(&d, 0))
            .add(Counted::<1>::new(&d, 1));
    }
    assert_eq!(drops(&d), 2);
    let mut builder = EntityBuilder::new();
    builder.add(Counted::<0>::new(&d, 0));
    drop(builder.build());
    assert_eq!(drops(&d), 3, "a built entity dropped unspawned");
    builder.add(Counted::<0>::new(&d, 0)).clear();
    assert_eq!(drops(&d), 4);
    {
        let mut prefab = EntityBuilderClone::new();
        prefab.add(Counted::<0>::new(&d, 0));
        let prefab = prefab.build();
        let _copy = prefab.clone();
    }
    assert_eq!(drops(&d), 6);
    // Spawned: dropped with the world, once.
    let mut world = World::new();
    builder
        .add(Counted::<0>::new(&d, 0))
        .add(Counted::<1>::new(&d, 1));
    let e = world.spawn(builder.build());
    drop(builder);
    assert_eq!(drops(&d), 6);
    world.despawn(e).unwrap();
    assert_eq!(drops(&d), 8);
}

#[test]
fn panicking_drop_in_builder_drops_the_rest_once() {
    let d = counter();
    let mut builder = EntityBuilder::new();
    builder
        .add(Counted::<0>::new(&d, 0))
        .add(Counted::<1>::panicking(&d, 1))
        .add(Counted::<2>::new(&d, 2));
    let result = catch_unwind(AssertUnwindSafe(|| drop(builder)));
    assert!(result.is_err());
    assert_eq!(drops(&d), 3, "every component dropped once");

    // The same through `clear`, then the builder is reusable.
    let mut builder = EntityBuilder::new();
    builder
        .add(Counted::<1>::panicking(&d, 1))
        .add(Counted::<2>::new(&d, 2));
    assert!(catch_unwind(AssertUnwindSafe(|| builder.clear())).is_err());
    assert_eq!(drops(&d), 5);
    assert!(!builder.has::<Counted<2>>());
    builder.add(7u8);
    let mut world = World::new();
    let e = world.spawn(builder.build());
    assert_eq!(*world.get::<u8>(e).unwrap(), 7);
}

#[test]
fn panicking_replace_while_inserting() {
    let d = counter();
    let mut world = World::new();
    // The entity's old `Counted<1>` panics when the insert replaces it.
    let e = world.spawn((Counted::<1>::panicking(&d, 0),));
    let mut builder = EntityBuilder::new();
    builder
        .add(Counted::<0>::new(&d, 1))
        .add(Counted::<1>::new(&d, 2))
        .add(Counted::<2>::new(&d, 3));
    let result = catch_unwind(AssertUnwindSafe(|| world.insert(e, builder.build())));
    assert!(result.is_err());
    // The old value dropped (panicking), the others: put on the entity
    // before the panic, or dropped with the builder's rest.
    assert_eq!(drops(&d), 2, "the old value and the unput Counted<2>");
    assert!(!builder.has::<Counted<2>>());
    assert_eq!(world.get::<Counted<1>>(e).unwrap().value, 2);
    assert_eq!(world.get::<Counted<0>>(e).unwrap().value, 1);
    drop(world);
    assert_eq!(drops(&d), 4);
}

#[test]
fn panicking_replace_in_builder() {
    let d = counter();
    let mut builder = EntityBuilder::new();
    builder.add(Counted::<0>::panicking(&d, 0));
    let result = catch_unwind(AssertUnwindSafe(|| {
        builder.add(Counted::<0>::new(&d, 1));
    }));
    assert!(result.is_err());
    assert_eq!(drops(&d), 1);
    assert_eq!(builder.get::<&Counted<0>>().unwrap().value, 1);
    // Moving a built entity into a builder whose value panics on replace.
    let mut target = EntityBuilder::new();
    target.add(Counted::<0>::panicking(&d, 2)).add(3u8);
    let result = catch_unwind(AssertUnwindSafe(|| {
        target.add_bundle(builder.build());
    }));
    assert!(result.is_err());
    assert_eq!(drops(&d), 2);
    assert_eq!(target.get::<&Counted<0>>().unwrap().value, 1);
    drop(target);
    drop(builder);
    assert_eq!(drops(&d), 3);
}

/// A component whose clone panics once its counter reaches zero.
struct Fragile(Arc<AtomicUsize>, Arc<AtomicUsize>);

impl Clone for Fragile {
    fn clone(&self) -> Self {
        let left = self.1.load(Ordering::SeqCst);
        if left == 0 {
            panic!("Fragile clone panics on purpose");
        }
        self.1.store(left - 1, Ordering::SeqCst);
        Fragile(self.0.clone(), self.1.clone())
    }
}

impl Drop for Fragile {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn panicking_clone_leaves_no_double_drop() {
    let d = counter();
    let clones_left = Arc::new(AtomicUsize::new(1));
    let e_drops = counter();
    let mut builder = EntityBuilderClone::new();
    builder
        .add(Counted::<0>::new(&e_drops, 0))
        .add(Fragile(d.clone(), clones_left.clone()))
        .add(Counted::<1>::new(&e_drops, 1));
    let prefab = builder.build();
    let mut world = World::new();
    let a = world.spawn(&prefab); // uses the one clone
    assert!(world.has::<Fragile>(a));
    let result = catch_unwind(AssertUnwindSafe(|| world.spawn(&prefab)));
    assert!(result.is_err());
    // The entity exists with what was put before the panic.
    assert_eq!(world.len(), 2);
    // Cloning the prefab panics midway too; the clone made so far is
    // dropped once.
    let result = catch_unwind(AssertUnwindSafe(|| prefab.clone()));
    assert!(result.is_err());
    world.check_invariants();
    drop(world);
    drop(prefab);
    // Fragile: the world's one, the prefab's one.
    assert_eq!(drops(&d), 2);
    // Counted<0>: 2 in the world, 1 in the prefab, 1 in the failed prefab
    // clone; Counted<1>: 1 in the world, 1 in the prefab.
    assert_eq!(drops(&e_drops), 6);
}

#[repr(align(64))]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Aligned64(u8);

#[repr(align(16))]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Zst16;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Tag<const N: usize>(u64);

#[test]
fn alignment_and_zero_sized_types() {
    let mut builder = EntityBuilder::new();
    // A zero-sized type alone allocates nothing, then the buffer grows and
    // its alignment rises.
    builder
        .add(Zst16)
        .add(1u8)
        .add(Aligned64(2))
        .add(())
        .add(3u16);
    assert_eq!(builder.get::<&Zst16>(), Some(&Zst16));
    let aligned: &Aligned64 = builder.get::<&Aligned64>().unwrap();
    assert_eq!(aligned, &Aligned64(2));
    assert_eq!(aligned as *const Aligned64 as usize % 64, 0);
    let mut world = World::new();
    let e = world.spawn(builder.build());
    assert_eq!(*world.get::<Aligned64>(e).unwrap(), Aligned64(2));
    assert_eq!(*world.get::<u16>(e).unwrap(), 3);
    assert!(world.has::<Zst16>(e) && world.has::<()>(e));
    // After a clear, a zero-sized type of a larger alignment.
    builder.add(5u8).clear();
    builder.add(Zst16);
    assert_eq!(builder.get::<&Zst16>(), Some(&Zst16));
}

macro_rules! add_tags {
    ($builder:expr, $($n:literal)*) => {
        $($builder.add(Tag::<$n>($n));)*
    };
}

macro_rules! check_tags {
    ($world:expr, $e:expr, $($n:literal)*) => {
        $(assert_eq!(*$world.get::<Tag<$n>>($e).unwrap(), Tag::<$n>($n));)*
    };
}

#[test]
fn many_component_types_grow_the_buffer() {
    let mut builder = EntityBuilderClone::new();
    add_tags!(builder, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29);
    builder.add(Aligned64(9));
    let prefab = builder.build();
    let prefab = prefab.clone();
    let mut world = World::new();
    let e = world.spawn(&prefab);
    check_tags!(world, e, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29);
    assert_eq!(*world.get::<Aligned64>(e).unwrap(), Aligned64(9));
    assert_eq!(prefab.component_types().count(), 31);
}

#[test]
#[should_panic(expected = "the bundle has the component type u8 twice")]
fn add_bundle_with_a_duplicate_panics() {
    EntityBuilder::new().add_bundle((1u8, 2u16, 3u8));
}

#[test]
#[should_panic(expected = "the bundle has the component type u16 twice")]
fn clone_add_bundle_with_a_duplicate_panics() {
    EntityBuilderClone::new().add_bundle((1u16, 2u16));
}

#[test]
fn builders_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<EntityBuilder>();
    check::<EntityBuilderClone>();
    check::<handlekit_ecs::BuiltEntityClone>();
    check::<handlekit_ecs::BuiltEntity<'static>>();
}

#[test]
fn debug_names_the_components() {
    let mut builder = EntityBuilder::new();
    builder.add(1u8);
    assert_eq!(
        format!("{builder:?}"),
        r#"EntityBuilder { components: ["u8"] }"#
    );
}

/// One builder operation of the model test.
#[derive(Clone, Debug)]
enum Op {
    /// Add a value of the type numbered `.0` (0..4).
    Add(u8, u32),
    /// Add a two-component tuple.
    AddPair(u32, u32),
    /// Overwrite a present value through `get_mut`.
    Set(u8, u32),
    Clear,
    /// Spawn what the builder holds.
    Spawn,
    /// Insert what the builder holds on the first spawned entity.
    Insert,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..4u8, any::<u32>()).prop_map(|(t, v)| Op::Add(t, v)),
        1 => (any::<u32>(), any::<u32>()).prop_map(|(a, b)| Op::AddPair(a, b)),
        1 => (0..4u8, any::<u32>()).prop_map(|(t, v)| Op::Set(t, v)),
        1 => Just(Op::Clear),
        2 => Just(Op::Spawn),
        1 => Just(Op::Insert),
    ]
}

fn add(builder: &mut EntityBuilder, d: &Arc<AtomicUsize>, t: u8, v: u32) {
    match t {
        0 => builder.add(Tag::<0>(u64::from(v))),
        1 => builder.add(Counted::<1>::new(d, v)),
        2 => builder.add(Aligned64(v as u8)),
        _ => builder.add(String::from_iter(std::iter::repeat_n(
            's',
            (v % 5) as usize,
        ))),
    };
}

fn value(t: u8, v: u32) -> u64 {
    match t {
        0 => u64::from(v),
        1 => u64::from(v),
        2 => u64::from(v as u8),
        _ => u64::from(v % 5),
    }
}

fn read(builder: &mut EntityBuilder, t: u8) -> Option<u64> {
    match t {
        0 => builder.get::<&Tag<0>>().map(|x| x.0),
        1 => builder.get::<&Counted<1>>().map(|x| u64::from(x.value)),
        2 => builder.get::<&Aligned64>().map(|x| u64::from(x.0)),
        _ => builder.get::<&String>().map(|x| x.len() as u64),
    }
}

fn read_world(world: &World, e: handlekit_ecs::Entity, t: u8) -> Option<u64> {
    match t {
        0 => world.get::<Tag<0>>(e).ok().map(|x| x.0),
        1 => world.get::<Counted<1>>(e).ok().map(|x| u64::from(x.value)),
        2 => world.get::<Aligned64>(e).ok().map(|x| u64::from(x.0)),
        _ => world.get::<String>(e).ok().map(|x| x.len() as u64),
    }
}

fn set(builder: &mut EntityBuilder, t: u8, v: u32) -> bool {
    match t {
        0 => builder
            .get_mut::<&mut Tag<0>>()
            .map(|x| x.0 = u64::from(v))
            .is_some(),
        1 => builder
            .get_mut::<&mut Counted<1>>()
            .map(|x| x.value = v)
            .is_some(),
        2 => builder
            .get_mut::<&mut Aligned64>()
            .map(|x| x.0 = v as u8)
            .is_some(),
        _ => builder
            .get_mut::<&mut String>()
            .map(|x| *x = "s".repeat((v % 5) as usize))
            .is_some(),
    }
}

proptest! {
    #![proptest_config(common::proptest_config(4, 256))]

    /// A builder against a map of type → value, and the spawned entities
    /// against the maps they were spawned from; every `Counted` made is
    /// dropped exactly once by the end.
    #[test]
    fn builder_matches_a_map(ops in prop::collection::vec(op(), 0..if cfg!(miri) { 12 } else { 60 })) {
        let d = counter();
        let mut made = 0usize;
        let mut world = World::new();
        let mut builder = EntityBuilder::new();
        let mut model: HashMap<u8, u64> = HashMap::new();
        let mut spawned: Vec<(handlekit_ecs::Entity, HashMap<u8, u64>)> = Vec::new();
        for op in ops {
            match op {
                Op::Add(t, v) => {
                    made += usize::from(t == 1);
                    add(&mut builder, &d, t, v);
                    model.insert(t, value(t, v));
                }
                Op::AddPair(a, b) => {
                    made += 1;
                    builder.add_bundle((Tag::<0>(u64::from(a)), Counted::<1>::new(&d, b)));
                    model.insert(0, u64::from(a));
                    model.insert(1, u64::from(b));
                }
                Op::Set(t, v) => {
                    let present = set(&mut builder, t, v);
                    prop_assert_eq!(present, model.contains_key(&t));
                    if present {
                        model.insert(t, value(t, v));
                    }
                }
                Op::Clear => {
                    builder.clear();
                    model.clear();
                }
                Op::Spawn => {
                    let e = world.spawn(builder.build());
                    spawned.push((e, std::mem::take(&mut model)));
                }
                Op::Insert => match spawned.first_mut() {
                    Some((e, values)) => {
                        world.insert(*e, builder.build()).unwrap();
                        values.extend(model.drain());
                    }
                    None => {
                        builder.clear();
                        model.clear();
                    }
                },
            }
            for t in 0..4 {
                prop_assert_eq!(read(&mut builder, t), model.get(&t).copied());
            }
        }
        for (e, values) in &spawned {
            for t in 0..4 {
                prop_assert_eq!(read_world(&world, *e, t), values.get(&t).copied());
            }
        }
        world.check_invariants();
        drop(builder);
        drop(world);
        prop_assert_eq!(drops(&d), made);
    }
}

#[test]
fn sparse_and_unseen_component_types() {
    use handlekit_ecs::Storage;
    let mut world = World::new();
    assert!(world.register::<char>(Storage::Sparse));
    let mut builder = EntityBuilder::new();
    // `u128` has no storage yet: the builder's put registers it (dense).
    builder.add('s').add(7u128);
    let e = world.spawn(builder.build());
    assert_eq!(world.storage_of::<char>(), Some(Storage::Sparse));
    assert_eq!(world.storage_of::<u128>(), Some(Storage::Dense));
    assert_eq!(*world.get::<char>(e).unwrap(), 's');
    assert_eq!(*world.get::<u128>(e).unwrap(), 7);
    let mut prefab = EntityBuilderClone::new();
    prefab.add('p').add(String::from("new type"));
    let prefab = prefab.build();
    world.insert(e, &prefab).unwrap();
    assert_eq!(*world.get::<char>(e).unwrap(), 'p');
    assert_eq!(world.storage_of::<String>(), Some(Storage::Dense));
    assert_eq!(world.query_mut::<(&char, &String)>().into_iter().count(), 1);
    world.check_invariants();
}
