//! Differential fuzzing of `handlekit_ecs::World` against a model: a
//! `HashMap` of each entity's components and the exact row order (a
//! `VecDeque` of rows, `None` for a dead one). `B` is sparse; `C` owns a
//! `Box`, so sanitizers see double drops and leaks. A serde round trip
//! (postcard or JSON) is an operation: the loaded world must hold the same
//! entities and components and spawn the entities the saved one would. And
//! a saved world with one byte overwritten must load as an error or as a
//! consistent world, and the load must allocate at most 64 times the
//! input's size plus 1 MiB of heap (issue 33; a counting allocator).

#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};

use arbitrary::Arbitrary;
use handlekit_ecs::serialize::{Components, Registry};
use handlekit_ecs::{CommandBuffer, Entity, Order, Storage, With, Without, World};
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeSeed;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct A(u32);
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct B(u16);
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct C(Box<u8>);

/// The system allocator, counting the bytes allocated now and at the peak.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grow(bytes: usize) {
    let now = NOW.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: forwards to the system allocator; the counters do not touch the
// memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded, same contract.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grow(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded, same contract.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded, same contract.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            grow(new_size);
            NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Loads `bytes` as `load` does, and checks that the load's heap peak is
/// within 64 times the input's size plus 1 MiB (the default memory limit).
fn load_bounded(bytes: &[u8], postcard: bool) -> Option<World> {
    let base = NOW.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let world = load(bytes, postcard);
    let peak = PEAK.load(Ordering::Relaxed) - base;
    assert!(
        peak <= 64 * bytes.len() + (1 << 20),
        "a load of {} bytes allocated {peak} bytes",
        bytes.len()
    );
    world
}

fn registry() -> Registry<impl Components> {
    Registry::new()
        .component::<A>("a")
        .component::<B>("b")
        .component::<C>("c")
}

fn save(world: &World, postcard: bool) -> Vec<u8> {
    let registry = registry();
    if postcard {
        postcard::to_allocvec(&registry.save(world)).unwrap()
    } else {
        serde_json::to_vec(&registry.save(world)).unwrap()
    }
}

fn load(bytes: &[u8], postcard: bool) -> Option<World> {
    let registry = registry();
    let load = registry.load().max_rows(MAX_ROWS);
    if postcard {
        load.deserialize(&mut postcard::Deserializer::from_bytes(bytes))
            .ok()
    } else {
        load.deserialize(&mut serde_json::Deserializer::from_slice(bytes))
            .ok()
    }
}

/// Every live entity with its components, in row order.
fn contents(world: &World) -> Vec<(Entity, Row)> {
    world
        .query::<(Entity, Option<&A>, Option<&B>, Option<&C>)>()
        .iter()
        .map(|(e, a, b, c)| (e, (a.copied(), b.copied(), c.map(|c| *c.0))))
        .collect()
}

#[derive(Arbitrary, Debug)]
enum Op {
    Spawn(Option<u32>, Option<u16>, Option<u8>),
    /// Spawn this many (mod 700, as far as the rows allow) entities with an
    /// `A`: enough for whole pages of the entity table.
    SpawnMany(u16),
    Despawn(u8),
    /// Despawn the known entities `start..start + len` (mod the count):
    /// whole pages of indices become free for `collect` to zero.
    DespawnRun(u16, u16),
    InsertA(u8, u32),
    InsertB(u8, u16),
    InsertC(u8, u8),
    RemoveA(u8),
    RemoveB(u8),
    RemoveAc(u8),
    /// `exchange::<(B,), (C,)>`: takes B off and puts a C on.
    ExchangeBc(u8, u8),
    /// Queries, by `iter`, `for` loops and `for_each`; a `fold` takes over
    /// from `next` after this many items.
    Query(u8),
    Collect(u8, bool),
    Compact,
    Clear,
    Forged(u64),
    DeferredDespawn(u8),
    /// Save and load (postcard if set, else JSON), then spawn this many
    /// entities (mod 4) in the saved and the loaded world.
    RoundTrip(bool, u8),
    /// Save (postcard if set), overwrite one byte, load.
    Corrupt(bool, u16, u8),
}

const MAX_ROWS: usize = 1100;

type Row = (Option<A>, Option<B>, Option<u8>);

fuzz_target!(|ops: Vec<Op>| {
    let mut world = World::with_max_rows(MAX_ROWS);
    world.register::<B>(Storage::Sparse);
    let mut live: HashMap<Entity, Row> = HashMap::new();
    let mut rows: VecDeque<Option<Entity>> = VecDeque::new();
    let mut known: Vec<Entity> = Vec::new();
    let pick =
        |known: &[Entity], i: u8| (!known.is_empty()).then(|| known[usize::from(i) % known.len()]);
    for op in ops {
        match op {
            Op::Spawn(a, b, c) => {
                let r = world.try_spawn(());
                assert_eq!(r.is_ok(), rows.len() < MAX_ROWS);
                if let Ok(e) = r {
                    if let Some(a) = a {
                        world.insert_one(e, A(a)).unwrap();
                    }
                    if let Some(b) = b {
                        world.insert_one(e, B(b)).unwrap();
                    }
                    if let Some(c) = c {
                        world.insert_one(e, C(Box::new(c))).unwrap();
                    }
                    live.insert(e, (a.map(A), b.map(B), c));
                    rows.push_back(Some(e));
                    known.push(e);
                }
            }
            Op::SpawnMany(n) => {
                let n = (usize::from(n) % 700).min(MAX_ROWS - rows.len());
                let first = known.len() as u32;
                let es = world.spawn_batch((0..n as u32).map(|i| (A(first + i),)));
                for (i, &e) in es.iter().enumerate() {
                    live.insert(e, (Some(A(first + i as u32)), None, None));
                    rows.push_back(Some(e));
                }
                known.extend(es);
            }
            Op::DespawnRun(start, len) => {
                if known.is_empty() {
                    continue;
                }
                let start = usize::from(start) % known.len();
                let end = (start + usize::from(len)).min(known.len());
                for &e in &known[start..end] {
                    assert_eq!(world.despawn(e).is_ok(), live.remove(&e).is_some());
                    if let Some(row) = rows.iter_mut().find(|r| **r == Some(e)) {
                        *row = None;
                    }
                }
            }
            Op::Despawn(i) | Op::DeferredDespawn(i) => {
                let Some(e) = pick(&known, i) else { continue };
                if matches!(op, Op::Despawn(_)) {
                    assert_eq!(world.despawn(e).is_ok(), live.contains_key(&e));
                } else {
                    let mut commands = CommandBuffer::new();
                    for (x, ()) in world.query::<(Entity, With<A>)>().iter() {
                        if x == e {
                            commands.despawn(x);
                        }
                    }
                    commands.despawn(e);
                    commands.run_on(&mut world);
                }
                if live.remove(&e).is_some() {
                    *rows.iter_mut().find(|r| **r == Some(e)).unwrap() = None;
                }
            }
            Op::InsertA(i, v) => {
                let Some(e) = pick(&known, i) else { continue };
                assert_eq!(world.insert_one(e, A(v)).is_ok(), live.contains_key(&e));
                if let Some(x) = live.get_mut(&e) {
                    x.0 = Some(A(v));
                }
            }
            Op::InsertB(i, v) => {
                let Some(e) = pick(&known, i) else { continue };
                assert_eq!(world.insert(e, (B(v),)).is_ok(), live.contains_key(&e));
                if let Some(x) = live.get_mut(&e) {
                    x.1 = Some(B(v));
                }
            }
            Op::InsertC(i, v) => {
                let Some(e) = pick(&known, i) else { continue };
                assert_eq!(
                    world.insert_one(e, C(Box::new(v))).is_ok(),
                    live.contains_key(&e)
                );
                if let Some(x) = live.get_mut(&e) {
                    x.2 = Some(v);
                }
            }
            Op::RemoveA(i) => {
                let Some(e) = pick(&known, i) else { continue };
                let expected = live.get_mut(&e).and_then(|x| x.0.take());
                assert_eq!(world.remove_one::<A>(e).ok(), expected);
            }
            Op::RemoveB(i) => {
                let Some(e) = pick(&known, i) else { continue };
                let expected = live.get_mut(&e).and_then(|x| x.1.take());
                assert_eq!(world.remove_one::<B>(e).ok(), expected);
            }
            Op::RemoveAc(i) => {
                let Some(e) = pick(&known, i) else { continue };
                let expected = match live.get_mut(&e) {
                    Some(x) if x.0.is_some() && x.2.is_some() => {
                        Some((x.0.take().unwrap(), x.2.take().unwrap()))
                    }
                    _ => None,
                };
                let got = world.remove::<(A, C)>(e).ok().map(|(a, c)| (a, *c.0));
                assert_eq!(got, expected);
            }
            Op::ExchangeBc(i, v) => {
                let Some(e) = pick(&known, i) else { continue };
                let expected = live.get_mut(&e).and_then(|x| {
                    let b = x.1.take()?;
                    x.2 = Some(v);
                    Some(b)
                });
                let got = world
                    .exchange::<(B,), _>(e, (C(Box::new(v)),))
                    .ok()
                    .map(|(b,)| b);
                assert_eq!(got, expected);
            }
            Op::Query(split) => {
                let expected: Vec<(Entity, A, Option<B>)> = rows
                    .iter()
                    .flatten()
                    .filter_map(|e| {
                        let x = &live[e];
                        (x.0.is_some() && x.2.is_none()).then(|| (*e, x.0.unwrap(), x.1))
                    })
                    .collect();
                let got: Vec<_> = world
                    .query::<(Entity, &A, Option<&B>, Without<C>)>()
                    .iter()
                    .map(|(e, a, b, ())| (e, *a, b.copied()))
                    .collect();
                assert_eq!(got, expected);
                // A `for` loop, `for_each`, and `next` then `fold`, with
                // `size_hint` bracketing what is left.
                let mut via_for = Vec::new();
                for (e, a, b, ()) in world.query_mut::<(Entity, &A, Option<&B>, Without<C>)>() {
                    via_for.push((e, *a, b.copied()));
                }
                assert_eq!(via_for, expected);
                let mut via_for_each = Vec::new();
                world
                    .query_mut::<(Entity, &A, Option<&B>, Without<C>)>()
                    .for_each(|(e, a, b, ())| via_for_each.push((e, *a, b.copied())));
                assert_eq!(via_for_each, expected);
                let mut it = world
                    .query_mut::<(Entity, &A, Option<&B>, Without<C>)>()
                    .into_iter();
                let mut joined = Vec::new();
                for _ in 0..usize::from(split) {
                    let (lo, hi) = it.size_hint();
                    let left = expected.len() - joined.len();
                    assert!(lo <= left && hi.is_some_and(|hi| hi >= left));
                    let Some((e, a, b, ())) = it.next() else {
                        break;
                    };
                    joined.push((e, *a, b.copied()));
                }
                let joined = it.fold(joined, |mut v, (e, a, b, ())| {
                    v.push((e, *a, b.copied()));
                    v
                });
                assert_eq!(joined, expected);
                // Dense columns only (runs over whole words and the window).
                let expected: Vec<(A, u8)> = rows
                    .iter()
                    .flatten()
                    .filter_map(|e| {
                        let x = &live[e];
                        x.0.zip(x.2)
                    })
                    .collect();
                let mut via_for = Vec::new();
                for (a, c) in world.query::<(&A, &C)>().iter() {
                    via_for.push((*a, *c.0));
                }
                assert_eq!(via_for, expected);
                let mut via_for_each = Vec::new();
                world
                    .query_mut::<(&A, &C)>()
                    .for_each(|(a, c)| via_for_each.push((*a, *c.0)));
                assert_eq!(via_for_each, expected);
                world
                    .query_mut::<(&mut A, With<B>)>()
                    .for_each(|(a, ())| a.0 = a.0.wrapping_add(1));
                for x in live.values_mut() {
                    if let (Some(a), Some(_)) = (&mut x.0, x.1) {
                        a.0 = a.0.wrapping_add(1);
                    }
                }
            }
            Op::Collect(budget, any) => {
                let budget = usize::from(budget);
                let examined = budget.min(rows.len());
                let kept: Vec<Entity> = rows.iter().take(examined).flatten().copied().collect();
                let any = any && rows.len() + kept.len() <= MAX_ROWS;
                let done = world.collect(budget, if any { Order::Any } else { Order::Preserve });
                assert_eq!(done.examined, examined);
                rows.drain(..examined);
                if any {
                    rows.extend(kept.into_iter().map(Some));
                } else {
                    for e in kept.into_iter().rev() {
                        rows.push_front(Some(e));
                    }
                }
            }
            Op::Compact => {
                world.compact();
                rows.retain(Option::is_some);
            }
            Op::Clear => {
                world.clear();
                live.clear();
                rows.clear();
            }
            Op::RoundTrip(postcard, spawns) => {
                let mut loaded = load(&save(&world, postcard), postcard).unwrap();
                assert_eq!(contents(&loaded), contents(&world));
                assert_eq!(loaded.storage_of::<B>(), world.storage_of::<B>());
                // Both worlds spawn: the saved one still counts its dead rows.
                let room = MAX_ROWS - rows.len();
                rows.retain(Option::is_some);
                for _ in 0..usize::from(spawns % 4).min(room) {
                    let e = loaded.spawn(());
                    assert_eq!(world.spawn(()), e);
                    live.insert(e, (None, None, None));
                    rows.push_back(Some(e));
                    known.push(e);
                }
                world = loaded;
            }
            Op::Corrupt(postcard, at, byte) => {
                let mut bytes = save(&world, postcard);
                if !bytes.is_empty() {
                    let at = usize::from(at) % bytes.len();
                    bytes[at] = byte;
                }
                if let Some(mut other) = load_bounded(&bytes, postcard) {
                    // Whatever loaded is a consistent world: it saves and
                    // loads back to itself, and works.
                    let again = load(&save(&other, postcard), postcard).unwrap();
                    assert_eq!(contents(&again), contents(&other));
                    assert_eq!(other.len(), other.row_count());
                    if other.row_count() < MAX_ROWS {
                        let e = other.spawn((A(1), B(2), C(Box::new(3))));
                        assert_eq!(other.get::<A>(e).map(|a| *a), Ok(A(1)));
                        other.despawn(e).unwrap();
                    }
                    other.collect(usize::MAX, Order::Any);
                }
            }
            Op::Forged(bits) => {
                if let Some(e) = Entity::from_bits(bits) {
                    assert_eq!(world.contains(e), live.contains_key(&e));
                }
            }
        }
        world.check_invariants();
        assert_eq!(world.len(), live.len());
        assert_eq!(world.row_count(), rows.len());
        let order: Vec<Entity> = rows.iter().flatten().copied().collect();
        assert_eq!(world.query::<Entity>().iter().collect::<Vec<_>>(), order);
        for &e in &known {
            let got = (
                world.get::<A>(e).ok().map(|r| *r),
                world.get::<B>(e).ok().map(|r| *r),
                world.get::<C>(e).ok().map(|r| *r.0),
            );
            let want = live.get(&e).copied().unwrap_or((None, None, None));
            assert_eq!(got, want);
            // `get_mut` and `has` find the type's slot without a branch:
            // dense `A` and `C`, sparse `B`, and `u64`, never registered.
            let got_mut = (
                world.get_mut::<A>(e).ok().map(|r| *r),
                world.get_mut::<B>(e).ok().map(|r| *r),
                world.get_mut::<C>(e).ok().map(|r| *r.0),
            );
            assert_eq!(got_mut, want);
            let has = (world.has::<A>(e), world.has::<B>(e), world.has::<C>(e));
            assert_eq!(has, (want.0.is_some(), want.1.is_some(), want.2.is_some()));
            assert!(!world.has::<u64>(e) && world.get_mut::<u64>(e).is_err());
        }
    }
});
