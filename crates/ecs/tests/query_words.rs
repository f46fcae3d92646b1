//! The word ranges queries visit: a column made after rows exist starts at
//! the world's front but its views leave out the zero words below its first
//! component, and the loop over a query whose views are all dense reads the
//! presence words unchecked. Checked against a row-by-row count, with
//! components added below the first one later, after collection and clear,
//! and with sparse columns and filters in the query.

use handlekit_ecs::{Entity, Order, Storage, With, Without, World};

#[derive(Debug, Clone, Copy, PartialEq)]
struct A(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct B(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct S(u32);

/// The entities with an `A` and a `B`, by the three ways to iterate.
fn with_a_and_b(world: &mut World) -> Vec<Entity> {
    let mut by_for_each = Vec::new();
    world
        .query::<(Entity, &A, &B)>()
        .for_each(|(e, _, _)| by_for_each.push(e));
    let by_iter: Vec<Entity> = world
        .query_mut::<(Entity, &mut A, &B)>()
        .into_iter()
        .map(|(e, _, _)| e)
        .collect();
    assert_eq!(by_for_each, by_iter);
    #[cfg(feature = "rayon")]
    {
        let by_par = std::sync::Mutex::new(Vec::new());
        world
            .query::<(Entity, &A, &B)>()
            .par_for_each(|(e, _, _)| by_par.lock().unwrap().push(e));
        let mut by_par = by_par.into_inner().unwrap();
        by_par.sort_by_key(|e| e.to_bits());
        let mut sorted = by_iter.clone();
        sorted.sort_by_key(|e| e.to_bits());
        assert_eq!(by_par, sorted);
    }
    by_iter
}

#[test]
fn late_column_then_components_below_its_first() {
    let mut world = World::new();
    let old = world.spawn_batch((0..300u32).map(|i| (A(i),)));
    let new = world.spawn_batch((0..200u32).map(|i| (A(i), B(i))));
    assert_eq!(with_a_and_b(&mut world), new);
    // Below the column's first component, in words the views left out.
    world.insert_one(old[3], B(3)).unwrap();
    world.insert_one(old[130], B(130)).unwrap();
    let mut expected = vec![old[3], old[130]];
    expected.extend(&new);
    assert_eq!(with_a_and_b(&mut world), expected);
    // One-entity lookups agree.
    let mut q = world.query::<(&A, &B)>();
    assert_eq!(q.get(old[3]), Some((&A(3), &B(3))));
    assert_eq!(q.get(old[4]), None);
}

#[test]
fn emptied_column_then_a_component_below_its_old_first() {
    let mut world = World::new();
    let old = world.spawn_batch((0..300u32).map(|i| (A(i),)));
    let new = world.spawn_batch((0..200u32).map(|i| (A(i), B(i))));
    for &e in &new {
        world.remove_one::<B>(e).unwrap();
    }
    assert!(with_a_and_b(&mut world).is_empty());
    // The column has no component left; these rows' slots exist (made
    // empty when the batch skipped them), and lie below its first batch.
    {
        let mut column = world.column_mut::<B>();
        column.insert(old[200], B(1)).unwrap();
        column.insert(old[7], B(2)).unwrap();
        column.insert(new[5], B(3)).unwrap();
    }
    assert_eq!(with_a_and_b(&mut world), [old[7], old[200], new[5]]);
    // A push past the last slot.
    let late = world.spawn((A(0), B(4)));
    assert_eq!(with_a_and_b(&mut world), [old[7], old[200], new[5], late]);
}

#[test]
fn after_collect_and_clear() {
    let mut world = World::new();
    let old = world.spawn_batch((0..500u32).map(|i| (A(i),)));
    let new = world.spawn_batch((0..100u32).map(|i| (A(i), B(i))));
    for &e in &old[..400] {
        world.despawn(e).unwrap();
    }
    while world.row_count() > world.len() {
        world.collect(64, Order::Preserve);
    }
    assert_eq!(with_a_and_b(&mut world), new);
    world.insert_one(old[450], B(0)).unwrap();
    let mut expected = vec![old[450]];
    expected.extend(&new);
    assert_eq!(with_a_and_b(&mut world), expected);
    world.clear();
    assert!(with_a_and_b(&mut world).is_empty());
    let first = world.spawn_batch((0..70u32).map(|i| (A(i),)));
    let both = world.spawn_batch((0..70u32).map(|i| (A(i), B(i))));
    world.insert_one(first[0], B(0)).unwrap();
    let mut expected = vec![first[0]];
    expected.extend(&both);
    assert_eq!(with_a_and_b(&mut world), expected);
}

#[test]
fn sparse_columns_and_filters_take_the_checked_path() {
    let mut world = World::new();
    world.register::<S>(Storage::Sparse);
    let plain = world.spawn_batch((0..200u32).map(|i| (A(i),)));
    let tagged = world.spawn_batch((0..200u32).map(|i| (A(i), B(i), S(i))));
    world.insert_one(plain[1], S(1)).unwrap();
    let n = world.query::<(&A, &S)>().iter().count();
    assert_eq!(n, 201);
    let mut count = 0;
    world.query::<(&A, &S)>().for_each(|_| count += 1);
    assert_eq!(count, 201);
    let mut with_b = 0;
    world
        .query::<(&A, With<B>, Without<S>)>()
        .for_each(|_| with_b += 1);
    assert_eq!(with_b, 0);
    let mut without_b = Vec::new();
    world
        .query::<(Entity, &A, Without<B>)>()
        .for_each(|(e, _, ())| without_b.push(e));
    assert_eq!(without_b, plain);
    let mut with_s = 0;
    world.query::<(&B, With<S>)>().for_each(|_| with_s += 1);
    assert_eq!(with_s, tagged.len());
}
