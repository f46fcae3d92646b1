//! Resident memory (`/proc/self/statm`) of `despawn_front`: 1,000,000
//! entities with a 64-byte and a 12-byte component, the oldest 90%
//! despawned, then collected until no dead row is left. Alone in its binary,
//! so no other test's memory is counted. Linux only, not under Miri.
//!
//! The figures go to stdout (`cargo test --test resident -- --nocapture`).
//! The assertion is the goal: after collection the world holds at
//! most 15% of what it added to the process (10.4% measured: 9.2 of 88.1
//! MiB). The columns and row arrays give back every dead page at the
//! front (whole chunks, and the dead pages of the chunk the window starts
//! in), and the entity table the pages of its 512 free indices, so what
//! stays is the live entities' rows and components (about 8 MiB here), the
//! live indices' pages of the entity table and a bit per free index.

#[test]
#[cfg(target_os = "linux")]
fn despawn_front_resident_memory() {
    if cfg!(miri) || !handlekit::vm_vec::VIRTUAL_MEMORY {
        return;
    }
    fn resident() -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
        let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
        // In 4 KiB units whatever the page size: only the ratio is checked.
        pages * 4096
    }
    use handlekit_ecs::{Order, World};
    let n = 1_000_000u32;
    let base = resident();
    let mut world = World::with_max_rows(1 << 21);
    for i in 0..n {
        world.spawn(([i as f32; 16], [i as f32; 3]));
    }
    let peak = resident() - base;
    let oldest: Vec<handlekit_ecs::Entity> = world
        .query::<handlekit_ecs::Entity>()
        .iter()
        .take(n as usize * 9 / 10)
        .collect();
    for e in oldest {
        world.despawn(e).unwrap();
    }
    while world.row_count() > world.len() {
        world.collect(4096, Order::Any);
    }
    let after = resident().saturating_sub(base);
    println!(
        "despawn_front 1M: peak {} KiB, after collection {} KiB ({:.1}%), world.memory_bytes {} KiB",
        peak >> 10,
        after >> 10,
        after as f64 * 100.0 / peak as f64,
        world.memory_bytes() >> 10
    );
    assert!(after * 100 <= peak * 15, "after {after}, peak {peak}");
}
