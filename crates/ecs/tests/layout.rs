//! Where a world's dense columns put their first rows: each column starts a
//! different distance into its page-aligned reservation (its stagger), so
//! that the slots of one row in two columns do not share their low address
//! bits. Checked through item addresses, and with the stagger's wrapped row
//! base across collection, clear and spawns after them.

use handlekit_ecs::{Order, World};

#[derive(Debug, Clone, Copy, PartialEq)]
struct P([f32; 3]);
#[derive(Debug, Clone, Copy, PartialEq)]
struct V([f32; 3]);
#[derive(Debug, Clone, Copy, PartialEq)]
struct W(u64);

/// The address of the first row's `T`, within its 4 KiB page.
fn page_offset<T: Send + Sync + 'static>(world: &World) -> usize {
    let first = world.query::<&T>().iter().next().map(|t| t as *const T);
    first.expect("a row") as usize % 4096
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the heap fallback places columns as the allocator does"
)]
fn columns_start_at_different_page_offsets() {
    let mut world = World::new();
    world.spawn_batch((0..1000u32).map(|i| (W(i.into()), P([i as f32; 3]), V([1.0; 3]))));
    let offsets = [
        page_offset::<W>(&world),
        page_offset::<P>(&world),
        page_offset::<V>(&world),
    ];
    for (i, a) in offsets.iter().enumerate() {
        for b in &offsets[i + 1..] {
            assert!(a.abs_diff(*b) >= 256, "{offsets:?}");
        }
    }
}

#[test]
fn staggered_columns_keep_their_rows() {
    let n = if cfg!(miri) { 300 } else { 5000 };
    let mut world = World::with_max_rows(4 * n);
    let es = world.spawn_batch((0..n).map(|i| (W(i as u64), P([i as f32; 3]))));
    // A column made later, for rows past the front.
    for (i, &e) in es.iter().enumerate().skip(n / 3) {
        world.insert_one(e, V([i as f32; 3])).unwrap();
    }
    let check = |world: &World| {
        for (w, p, v) in world.query::<(&W, &P, Option<&V>)>().iter() {
            assert_eq!(p.0[0], w.0 as f32);
            if let Some(v) = v {
                assert_eq!(v.0[0], w.0 as f32);
            }
        }
    };
    check(&world);
    // Despawn the front half and collect: the columns' fronts move.
    for &e in &es[..n / 2] {
        world.despawn(e).unwrap();
    }
    while world.row_count() > world.len() {
        world.collect(256, Order::Preserve);
    }
    check(&world);
    assert_eq!(world.query::<&V>().iter().count(), n - n / 2);
    let more =
        world.spawn_batch((n..n + 100).map(|i| (W(i as u64), P([i as f32; 3]), V([i as f32; 3]))));
    check(&world);
    world.clear();
    assert!(!world.contains(more[0]));
    world.spawn_batch((0..n).map(|i| (W(i as u64), P([i as f32; 3]), V([i as f32; 3]))));
    check(&world);
    assert_eq!(world.query::<&V>().iter().count(), n);
}
