//! Stale, forged and foreign handles give `None` or `Err`, never another
//! entity's components.

use handlekit_ecs::{ComponentError, Entity, NoSuchEntity, Order, Storage, World};

#[test]
fn stale_after_despawn_and_reuse() {
    let mut world = World::new();
    world.register::<u64>(Storage::Sparse);
    let old = world.spawn((1u32, 10u64));
    world.despawn(old).unwrap();
    let new = world.spawn((2u32, 20u64));
    assert_eq!(new.index(), old.index(), "the slot is reused");
    assert_ne!(new, old);
    assert_eq!(
        world.get::<u32>(old).err(),
        Some(ComponentError::NoSuchEntity)
    );
    assert!(world.get::<u64>(old).is_err());
    assert!(world.get_mut::<u32>(old).is_err());
    assert_eq!(world.despawn(old), Err(NoSuchEntity));
    assert_eq!(world.insert_one(old, 3u32), Err(NoSuchEntity));
    assert!(world.remove_one::<u32>(old).is_err());
    assert!(world.query_one::<&u32>(old).is_err());
    assert!(world.query_one_mut::<&u32>(old).is_err());
    assert!(!world.has::<u32>(old));
    assert_eq!(*world.get::<u32>(new).unwrap(), 2);
    assert_eq!(*world.get::<u64>(new).unwrap(), 20);
}

#[test]
fn stale_after_collection() {
    for order in [Order::Any, Order::Preserve] {
        let mut world = World::new();
        let n: u32 = if cfg!(miri) { 150 } else { 300 };
        let es = world.spawn_batch((0..n).map(|i| (i,)));
        for &e in es.iter().step_by(2) {
            world.despawn(e).unwrap();
        }
        while world.row_count() > world.len() {
            let before = world.row_count();
            world.collect(64, order);
            if world.row_count() == before {
                // `Preserve` cannot get past a live run at the front longer
                // than the budget.
                world.compact();
            }
        }
        for (i, &e) in es.iter().enumerate() {
            if i % 2 == 0 {
                assert!(world.get::<u32>(e).is_err());
            } else {
                assert_eq!(*world.get::<u32>(e).unwrap(), i as u32);
            }
        }
        // New entities reuse the slots, old handles stay stale.
        world.spawn_batch((1000..1150u32).map(|i| (i,)));
        for &e in es.iter().step_by(2) {
            assert!(world.get::<u32>(e).is_err());
        }
        world.compact();
        for &e in es.iter().step_by(2) {
            assert!(!world.contains(e));
        }
    }
}

/// Pages of 512 free indices are zeroed by `collect` and reused later:
/// every handle ever issued stays stale once despawned, through any number
/// of rounds, and a forged handle with any generation near the ones issued
/// names a live entity or nothing.
#[test]
fn stale_across_entity_table_pages() {
    const PAGE: usize = 512;
    // Under Miri, one round over two pages (the first all despawned).
    let (rounds, pages) = if cfg!(miri) { (1, 2) } else { (8, 3) };
    // Under Miri, every fourth handle is looked up (see below).
    let every = if cfg!(miri) { 4 } else { 1 };
    let mut world = World::new();
    let mut live: Vec<(Entity, u32)> = Vec::new();
    let mut dead: Vec<Entity> = Vec::new();
    let mut seed = 7u64;
    let mut next_value = 0u32;
    for round in 0..rounds {
        // Spawn `pages` pages' worth, despawn whole pages of indices and a
        // scattering of others.
        for _ in 0..pages * PAGE {
            let e = world.spawn((next_value,));
            live.push((e, next_value));
            next_value += 1;
        }
        live.retain(|&(e, _)| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            let page = e.index() / PAGE;
            let gone = (page + round) % 3 == 0 || (seed >> 60) == 0;
            if gone {
                world.despawn(e).unwrap();
                dead.push(e);
            }
            !gone
        });
        // Sweep the whole table (and the rows), a page budget at a time.
        // Under Miri once: a call sweeps both pages, and moves every live
        // row (3 s of Miri's clock); the sweep past a zeroed page runs in
        // the `compact` at the end.
        for _ in 0..if cfg!(miri) { 1 } else { 64 } {
            world.collect(4096, Order::Any);
        }
        world.check_invariants();
        // Under Miri, the live entities' bits sorted rather than hashed
        // (hashing them took 3.4 s of Miri's clock).
        let mut live_bits: Vec<u64> = Vec::new();
        let live_set: std::collections::HashSet<Entity> = if cfg!(miri) {
            live_bits = live.iter().map(|&(e, _)| e.to_bits()).collect();
            live_bits.sort_unstable();
            Default::default()
        } else {
            live.iter().map(|&(e, _)| e).collect()
        };
        // Under Miri, every fourth dead handle (of the zeroed page and of
        // the other), and the forged neighbours of every sixteenth.
        for (i, &e) in dead.iter().enumerate() {
            if i % every != 0 {
                continue;
            }
            assert!(!world.contains(e) && world.get::<u32>(e).is_err(), "{e:?}");
            if i % (every * every) != 0 {
                continue;
            }
            for generation in e.generation().saturating_sub(2)..e.generation() + 3 {
                let forged = Entity::from_bits(e.index() as u64 | u64::from(generation) << 32);
                if let Some(forged) = forged {
                    let owned = if cfg!(miri) {
                        live_bits.binary_search(&forged.to_bits()).is_ok()
                    } else {
                        live_set.contains(&forged)
                    };
                    assert_eq!(world.contains(forged), owned, "{forged:?}");
                }
            }
        }
        // Under Miri, every fourth live entity.
        for &(e, value) in live.iter().step_by(every) {
            assert_eq!(*world.get::<u32>(e).unwrap(), value);
        }
    }
    // Everything despawned and swept: the table keeps a bit per index.
    for (e, _) in live.drain(..) {
        world.despawn(e).unwrap();
        dead.push(e);
    }
    world.compact();
    world.check_invariants();
    assert!(dead.iter().step_by(every).all(|&e| !world.contains(e)));
    let fresh = world.spawn((1u32,));
    assert!(!dead.contains(&fresh));
    assert_eq!(fresh.index(), 0, "the lowest free index first");
}

#[test]
fn forged_bits() {
    let mut world = World::new();
    let e = world.spawn((7u8,));
    for bits in [
        0,
        1,
        u64::MAX,
        e.to_bits() + 1,
        e.to_bits() + (1 << 32),
        1 << 63,
        (1 << 32) | 12345,
    ] {
        if let Some(forged) = Entity::from_bits(bits) {
            if forged != e {
                assert!(!world.contains(forged));
                assert!(world.get::<u8>(forged).is_err());
                assert!(world.despawn(forged).is_err());
            }
        }
    }
    assert!(world.contains(e));
}

#[test]
fn foreign_handles() {
    let mut ours = World::new();
    let mut theirs = World::new();
    for i in 0..10u32 {
        theirs.spawn((i,));
    }
    let foreign = theirs.spawn((99u32,));
    // No entity of ours has that index: the handle names nothing here.
    ours.spawn((1u32,));
    assert!(!ours.contains(foreign));
    assert!(ours.get::<u32>(foreign).is_err());
    assert!(ours.despawn(foreign).is_err());
}

#[test]
fn clear_makes_handles_stale() {
    let mut world = World::new();
    let es = world.spawn_batch((0..100u32).map(|i| (i, i as f32)));
    world.clear();
    let fresh = world.spawn_batch((0..100u32).map(|i| (i,)));
    for e in es {
        assert!(!world.contains(e));
        assert!(world.get::<f32>(e).is_err());
    }
    assert_eq!(world.query::<&u32>().iter().count(), fresh.len());
}

#[test]
fn rows_full() {
    let mut world = World::with_max_rows(4);
    let es = world.spawn_batch((0..4u8).map(|i| (i,)));
    assert!(world.try_spawn((9u8,)).is_err());
    world.despawn(es[0]).unwrap();
    assert!(
        world.try_spawn((9u8,)).is_err(),
        "dead rows count until collected"
    );
    world.collect(1, Order::Any);
    world.try_spawn((9u8,)).unwrap();
}

#[test]
#[should_panic(expected = "4 rows")]
fn spawn_past_max_rows_panics_naming_the_limit() {
    let mut world = World::with_max_rows(4);
    world.spawn_batch((0..5u8).map(|i| (i,)));
}

#[test]
#[should_panic(expected = "u8 twice")]
fn duplicate_component_in_bundle_panics() {
    World::new().spawn((1u8, 2u8));
}

#[test]
fn option_entity_is_eight_bytes() {
    assert_eq!(size_of::<Option<Entity>>(), 8);
    assert_eq!(size_of::<Entity>(), 8);
}

/// 4 KiB: a column's slack past `max_rows` is then 80 rows.
struct Big([u64; 512]);

#[test]
fn idle_column_follows_the_front() {
    // A column used once, then idle while the world churns through many
    // times its row limit: inserting again must not fill the skipped rows.
    let mut world = World::with_max_rows(64);
    let first = world.spawn((Big([1; 512]), 1u16));
    world.remove_one::<Big>(first).unwrap();
    world.despawn(first).unwrap();
    // Past `max_rows` + the column's slack (144 rows) several times.
    let churn: u32 = if cfg!(miri) { 400 } else { 2000 };
    for i in 0..churn {
        let e = world.spawn((i as u16,));
        world.despawn(e).unwrap();
        if world.row_count() == 64 {
            world.collect(64, Order::Any);
        }
    }
    let e = world.spawn((Big([7; 512]),));
    assert_eq!(world.get::<Big>(e).unwrap().0[511], 7);
}

#[test]
#[should_panic(expected = "at most 2^31 rows")]
fn more_than_2_pow_31_rows_is_refused() {
    let _ = World::with_max_rows((1 << 31) + 1);
}

/// Lookups by entity through a query skip the presence word of a column
/// that every live row has (no dead row in the window, as many components
/// as live entities); every other case reads it. Both must agree with the
/// components each entity really has.
#[test]
fn lookups_with_and_without_presence_words() {
    let mut world = World::new();
    // Under Miri, a word and a half of rows: each check finds every entity
    // and its position among them, 4 s of Miri's clock for 200.
    let n: u32 = if cfg!(miri) { 100 } else { 200 };
    let es = world.spawn_batch((0..n).map(|i| (i,)));
    let check = |world: &World, with_char: &[Entity]| {
        let mut q = world.query::<(Entity, &u32, Option<&char>)>();
        for &e in &es {
            let alive = world.contains(e);
            let got = q.get(e);
            assert_eq!(got.is_some(), alive);
            if let Some((entity, &value, c)) = got {
                assert_eq!(entity, e);
                assert_eq!(value, es.iter().position(|&x| x == e).unwrap() as u32);
                assert_eq!(c.is_some(), with_char.contains(&e));
            }
        }
        let mut chars = world.query::<&char>();
        for &e in &es {
            assert_eq!(
                chars.get(e).is_some(),
                with_char.contains(&e) && world.contains(e)
            );
        }
    };
    // Every row alive, every entity with a u32: the u32 column is full.
    check(&world, &[]);
    // A char on some: that column is not full.
    let some = [es[3], es[70], es[n as usize - 1]];
    for &e in &some {
        world.insert_one(e, 'x').unwrap();
    }
    check(&world, &some);
    // Dead rows in the window: the presence words decide for every column.
    for &e in &es[..n as usize - 3] {
        if !some.contains(&e) {
            world.despawn(e).unwrap();
        }
    }
    world.despawn(es[3]).unwrap();
    world.spawn((7u32,));
    assert_eq!((world.len(), world.count::<char>()), (5, 2));
    check(&world, &some);
    // Collected: no dead row is left, and the full column is found again.
    while world.row_count() > world.len() {
        world.collect(64, Order::Preserve);
    }
    check(&world, &some);
    assert_eq!(world.get::<u32>(es[70]).map(|v| *v), Ok(70));
}

/// What `get`, `get_mut` and `has` say of every handle, against the
/// expected `u32` (or none) of each.
fn check_lookups(world: &mut World, expected: &[(Entity, Option<u32>)]) {
    for &(e, value) in expected {
        assert_eq!(world.has::<u32>(e), value.is_some(), "has of {e:?}");
        assert_eq!(world.get::<u32>(e).ok().map(|r| *r), value, "get of {e:?}");
        assert_eq!(
            world.get_mut::<u32>(e).ok().map(|r| *r),
            value,
            "get_mut of {e:?}"
        );
    }
}

/// `get_mut` and `has` skip the presence word when every live entity has
/// the component (no dead row, as many values as entities); each step here
/// moves the world into or out of that state, and stale, reserved and
/// forged handles stay unanswered either way.
#[test]
fn lookups_with_and_without_the_component_in_every_row() {
    let mut world = World::new();
    // Under Miri, 70 entities (rows in two words): every step checks every
    // entity, 1.5 s of Miri's clock for 200.
    let n: u32 = if cfg!(miri) { 70 } else { 200 };
    let mut expected: Vec<(Entity, Option<u32>)> =
        (0..n).map(|i| (world.spawn((i,)), Some(i))).collect();
    // Every live entity has a `u32`.
    check_lookups(&mut world, &expected);
    // A dead row: the window holds more rows than there are entities.
    let gone = expected[10].0;
    world.despawn(gone).unwrap();
    expected[10].1 = None;
    check_lookups(&mut world, &expected);
    // Collected: no dead row, every entity has a `u32` again.
    while world.row_count() > world.len() {
        world.collect(4096, Order::Preserve);
    }
    check_lookups(&mut world, &expected);
    // One entity without a `u32`: as many rows as entities, one value fewer.
    let plain = world.spawn((1u8,));
    expected.push((plain, None));
    check_lookups(&mut world, &expected);
    // It gets one: every entity has a `u32` again.
    world.insert_one(plain, 7u32).unwrap();
    expected.last_mut().unwrap().1 = Some(7);
    check_lookups(&mut world, &expected);
    // Taken off another: one value fewer again.
    let bare = expected[0].0;
    assert_eq!(world.remove_one::<u32>(bare), Ok(0));
    expected[0].1 = None;
    check_lookups(&mut world, &expected);
    world.insert_one(bare, 0u32).unwrap();
    expected[0].1 = Some(0);
    check_lookups(&mut world, &expected);
    // A reserved entity is not alive to these calls until a flush.
    let reserved = world.reserve_entity();
    check_lookups(&mut world, &[(reserved, None)]);
    check_lookups(&mut world, &expected);
    // Forged handles: past the table, and another generation of a live one.
    let live = expected[5].0;
    for bits in [
        u64::MAX >> 1,
        live.to_bits() + (1 << 32),
        (1 << 32) | 100_000,
    ] {
        if let Some(forged) = Entity::from_bits(bits) {
            check_lookups(&mut world, &[(forged, None)]);
        }
    }
    check_lookups(&mut world, &expected);
}
