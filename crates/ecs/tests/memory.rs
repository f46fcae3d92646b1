//! After the oldest 90% are despawned and collected, the world's committed
//! memory falls to the live rows plus at most two partly used 2 MiB chunks
//! per array, and the entity table keeps only its pages of live indices
//! (virtual memory only). The goal (resident memory ≤ 15%
//! of the peak at 1,000,000 entities) is for the benchmark runner, which
//! measures resident memory; at this test's size the chunk rounding
//! dominates.

use handlekit_ecs::{Order, World};

#[test]
fn despawn_front_gives_memory_back() {
    if !handlekit::vm_vec::VIRTUAL_MEMORY || cfg!(miri) {
        return;
    }
    let n = 400_000u32;
    let mut world = World::with_max_rows(1 << 20);
    let es = world.spawn_batch((0..n).map(|i| (u64::from(i), [i as f32; 16])));
    let peak = world.memory_bytes();
    for &e in &es[..(n as usize) * 9 / 10] {
        world.despawn(e).unwrap();
    }
    // Despawning grows the free set a little.
    let despawned = world.memory_bytes();
    let mut released = 0;
    loop {
        let done = world.collect(4096, Order::Any);
        released += done.released;
        if world.row_count() == world.len() {
            break;
        }
    }
    let after = world.memory_bytes();
    assert_eq!(despawned - after, released);
    let live = es.len() - es.len() * 9 / 10;
    let live_bytes = live * (8 + 8 + 64) + live / 8;
    // Rows, alive bits, and two columns: each at most two partial chunks;
    // the entity table: the live indices' pages and a bit per free index.
    let chunk = 2 << 20;
    let table = (live + 1024) * 8 + es.len() / 8 + 4096;
    assert!(
        after <= live_bytes + table + 4 * 2 * chunk,
        "after collection {after} bytes, live {live_bytes}, peak {peak}"
    );
    assert!(
        after * 2 < peak,
        "after collection {after} bytes, peak {peak}"
    );
    let sum: u64 = world.query_mut::<&u64>().into_iter().sum();
    let expected: u64 = (u64::from(n) * 9 / 10..u64::from(n)).sum();
    assert_eq!(sum, expected);
}
