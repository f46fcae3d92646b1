//! A model test: a world against a `HashMap<Entity, (Option<A>, Option<B>,
//! Option<C>)>` plus the exact row order, driven by proptest. `B` is sparse;
//! `C` counts its drops. With the `serde` feature, one operation saves the
//! world (JSON or postcard) and goes on with the loaded one, after checking
//! that the loaded world spawns the entities the saved one would have.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use handlekit_ecs::{CommandBuffer, Entity, Order, Storage, With, Without, World};
use proptest::prelude::*;

mod common;

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct A(u32);
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
struct B(u64);

/// A dense component that counts its drops.
#[derive(Debug)]
struct C(u32, Arc<AtomicUsize>);

impl Drop for C {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::Relaxed);
    }
}

thread_local! {
    /// The drop counter of the running case, for deserialized `C`s.
    static DROPS: std::cell::RefCell<Option<Arc<AtomicUsize>>> = const { std::cell::RefCell::new(None) };
}

/// A `C` serializes as its number; a deserialized one counts its drops on
/// the running case's counter.
impl serde::Serialize for C {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for C {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = u32::deserialize(deserializer)?;
        let drops = DROPS.with(|d| d.borrow().clone()).expect("no running case");
        Ok(C(value, drops))
    }
}

type Components = (Option<A>, Option<B>, Option<u32>);

#[derive(Clone, Debug)]
enum Op {
    Spawn(Option<u32>, Option<u64>, Option<u32>),
    Despawn(usize),
    InsertA(usize, u32),
    InsertB(usize, u64),
    InsertC(usize, u32),
    RemoveA(usize),
    RemoveB(usize),
    RemoveC(usize),
    RemoveAb(usize),
    /// `exchange_one::<A, C>`: takes A off, puts a C on (only when A is there).
    ExchangeAc(usize, u32),
    /// `exchange::<(B,), (A, C)>`.
    ExchangeBac(usize, u32),
    /// `spawn_batch` of `n` entities with (A, B, C), as many as fit.
    SpawnBatch(usize, u32),
    /// Through a `ColumnMut<B>` (sparse) and a `ColumnMut<A>` (dense): insert
    /// on one entity, remove from another, read a third.
    Columns(usize, usize, usize, u32),
    Get(usize),
    Query,
    QueryMutAddA,
    QueryOne(usize),
    Collect(usize, bool),
    Compact,
    Clear,
    Forged(u64),
    Commands(usize, usize, u32),
    /// Save and load the world (postcard if set, else JSON); then spawn
    /// this many entities in both and despawn every other one of them
    /// (without `serde`, nothing).
    #[cfg_attr(not(feature = "serde"), allow(dead_code))]
    RoundTrip(bool, usize),
}

fn op() -> impl Strategy<Value = Op> {
    let i = 0..64usize;
    prop_oneof![
        8 => (any::<Option<u32>>(), any::<Option<u64>>(), any::<Option<u32>>())
            .prop_map(|(a, b, c)| Op::Spawn(a, b, c)),
        4 => i.clone().prop_map(Op::Despawn),
        2 => (i.clone(), any::<u32>()).prop_map(|(e, v)| Op::InsertA(e, v)),
        2 => (i.clone(), any::<u64>()).prop_map(|(e, v)| Op::InsertB(e, v)),
        2 => (i.clone(), any::<u32>()).prop_map(|(e, v)| Op::InsertC(e, v)),
        1 => i.clone().prop_map(Op::RemoveA),
        1 => i.clone().prop_map(Op::RemoveB),
        1 => i.clone().prop_map(Op::RemoveC),
        1 => i.clone().prop_map(Op::RemoveAb),
        1 => (i.clone(), any::<u32>()).prop_map(|(e, v)| Op::ExchangeAc(e, v)),
        1 => (i.clone(), any::<u32>()).prop_map(|(e, v)| Op::ExchangeBac(e, v)),
        1 => (0..70usize, any::<u32>()).prop_map(|(n, v)| Op::SpawnBatch(n, v)),
        2 => (i.clone(), i.clone(), i.clone(), any::<u32>())
            .prop_map(|(a, b, c, v)| Op::Columns(a, b, c, v)),
        2 => i.clone().prop_map(Op::Get),
        1 => Just(Op::Query),
        1 => Just(Op::QueryMutAddA),
        1 => i.clone().prop_map(Op::QueryOne),
        2 => (0..80usize, any::<bool>()).prop_map(|(b, o)| Op::Collect(b, o)),
        1 => Just(Op::Compact),
        1 => (0..20u8).prop_map(|x| if x == 0 { Op::Clear } else { Op::Query }),
        1 => any::<u64>().prop_map(Op::Forged),
        2 => (i.clone(), i.clone(), any::<u32>()).prop_map(|(a, b, v)| Op::Commands(a, b, v)),
        1 => (any::<bool>(), 0..4usize).prop_map(|(p, n)| Op::RoundTrip(p, n)),
    ]
}

const MAX_ROWS: usize = 150;

struct Model {
    live: HashMap<Entity, Components>,
    /// The row window: `None` for a dead row.
    rows: VecDeque<Option<Entity>>,
    /// Every entity ever spawned (ops pick from it, live or not).
    known: Vec<Entity>,
}

fn pick(known: &[Entity], i: usize) -> Option<Entity> {
    (!known.is_empty()).then(|| known[i % known.len()])
}

/// Inserts `value` on `e`, which succeeds exactly if the model has `e`
/// live, and then `set`s the model's entry of `e`: the insert ops.
fn insert_one<T: handlekit_ecs::Component>(
    world: &mut World,
    m: &mut Model,
    e: Entity,
    value: T,
    set: impl FnOnce(&mut Components),
) {
    let r = world.insert_one(e, value);
    assert_eq!(r.is_ok(), m.live.contains_key(&e));
    if let Some(entry) = m.live.get_mut(&e) {
        set(entry);
    }
}

/// The items of `it`: `n` by `next`, checking that `size_hint` brackets
/// what is left of the `total` it yields, then the rest by `fold`.
fn next_then_fold<I: Iterator>(mut it: I, n: usize, total: usize) -> Vec<I::Item> {
    let mut out = Vec::new();
    for _ in 0..n {
        let (lo, hi) = it.size_hint();
        let left = total - out.len();
        assert!(lo <= left && hi.is_some_and(|hi| hi >= left));
        out.push(it.next().unwrap());
    }
    it.fold(out, |mut v, item| {
        v.push(item);
        v
    })
}

fn check(world: &mut World, model: &Model) {
    world.check_invariants();
    assert_eq!(world.len(), model.live.len());
    assert_eq!(world.row_count(), model.rows.len());
    for &e in &model.known {
        let expected = model.live.get(&e);
        assert_eq!(world.contains(e), expected.is_some(), "{e:?}");
        let got = (
            world.get::<A>(e).ok().map(|r| *r),
            world.get::<B>(e).ok().map(|r| *r),
            world.get::<C>(e).ok().map(|r| r.0),
        );
        let want = expected.copied().unwrap_or((None, None, None));
        assert_eq!(got, want, "{e:?}");
        // The per-entity calls that find the type's slot without a branch
        // (`B` is sparse, `u16` never registered) agree with `get`.
        let got_mut = (
            world.get_mut::<A>(e).ok().map(|r| *r),
            world.get_mut::<B>(e).ok().map(|r| *r),
            world.get_mut::<C>(e).ok().map(|r| r.0),
        );
        assert_eq!(got_mut, want, "{e:?}");
        let has = (world.has::<A>(e), world.has::<B>(e), world.has::<C>(e));
        assert_eq!(
            has,
            (want.0.is_some(), want.1.is_some(), want.2.is_some()),
            "{e:?}"
        );
        assert!(!world.has::<u16>(e) && world.get_mut::<u16>(e).is_err());
    }
    // Row order: every query visits live entities in row order.
    let order: Vec<Entity> = model.rows.iter().flatten().copied().collect();
    let got: Vec<Entity> = world.query::<Entity>().iter().collect();
    assert_eq!(got, order);
}

/// Saves the world and loads it back; checks that the loaded world spawns
/// (and, after despawns, spawns again) exactly the entities the saved one
/// does, then goes on with the loaded world. The spawned entities that stay
/// are recorded in the model. Returns the number of `C`s deserialized.
#[cfg(feature = "serde")]
fn round_trip(world: &mut World, m: &mut Model, postcard: bool, spawns: usize) -> usize {
    use handlekit_ecs::serialize::Registry;
    use serde::de::DeserializeSeed;

    let registry = Registry::new()
        .component::<A>("a")
        .component::<B>("b")
        .component::<C>("c");
    let load = registry.load().max_rows(MAX_ROWS);
    let mut loaded = if postcard {
        let bytes = postcard::to_allocvec(&registry.save(world)).unwrap();
        load.deserialize(&mut postcard::Deserializer::from_bytes(&bytes))
            .unwrap()
    } else {
        let json = serde_json::to_string(&registry.save(world)).unwrap();
        load.deserialize(&mut serde_json::Deserializer::from_str(&json))
            .unwrap()
    };
    assert_eq!(loaded.storage_of::<B>(), Some(Storage::Sparse));
    // The saved world still counts its dead rows (the model's `None`s), so
    // its room bounds the spawns made in both worlds; the loaded world is
    // compact, as dead rows are not saved.
    let room = MAX_ROWS - m.rows.len();
    m.rows.retain(Option::is_some);
    let spawns = spawns.min(room);
    let mut new = Vec::new();
    for _ in 0..spawns {
        let e = loaded.spawn(());
        assert_eq!(world.spawn(()), e, "the loaded world spawns another entity");
        new.push(e);
    }
    for (k, &e) in new.iter().enumerate() {
        if k % 2 == 1 {
            world.despawn(e).unwrap();
            loaded.despawn(e).unwrap();
        }
    }
    if !new.is_empty() && spawns < room {
        let e = loaded.spawn(());
        assert_eq!(
            world.spawn(()),
            e,
            "the loaded world respawns another entity"
        );
        new.push(e);
    }
    for (k, &e) in new.iter().enumerate() {
        let stays = k % 2 == 0 || k == spawns;
        m.rows.push_back(stays.then_some(e));
        if stays {
            m.live.insert(e, (None, None, None));
        }
        m.known.push(e);
    }
    let made = loaded.count::<C>();
    *world = loaded;
    made
}

fn run(ops: Vec<Op>) {
    let drops = Arc::new(AtomicUsize::new(0));
    DROPS.with(|d| *d.borrow_mut() = Some(drops.clone()));
    let mut made_c = 0usize;
    let mut world = World::with_max_rows(MAX_ROWS);
    assert!(world.register::<B>(Storage::Sparse));
    let mut m = Model {
        live: HashMap::new(),
        rows: VecDeque::new(),
        known: Vec::new(),
    };
    let len = ops.len();
    for (step, op) in ops.into_iter().enumerate() {
        match op {
            Op::Spawn(a, b, c) => {
                let full = m.rows.len() >= MAX_ROWS;
                let result = if let (Some(a), Some(b), Some(c)) = (a, b, c) {
                    made_c += 1;
                    world.try_spawn((A(a), B(b), C(c, drops.clone())))
                } else {
                    world.try_spawn(()).inspect(|&e| {
                        if let Some(a) = a {
                            world.insert_one(e, A(a)).unwrap();
                        }
                        if let Some(b) = b {
                            world.insert(e, (B(b),)).unwrap();
                        }
                        if let Some(c) = c {
                            made_c += 1;
                            world.insert_one(e, C(c, drops.clone())).unwrap();
                        }
                    })
                };
                match result {
                    Ok(e) => {
                        assert!(!full);
                        m.live.insert(e, (a.map(A), b.map(B), c));
                        m.rows.push_back(Some(e));
                        m.known.push(e);
                    }
                    Err(_) => {
                        assert!(full);
                        if a.is_some() && b.is_some() && c.is_some() {
                            // The bundle was dropped.
                        }
                    }
                }
            }
            Op::Despawn(i) => {
                let Some(e) = pick(&m.known, i) else { continue };
                let expected = m.live.remove(&e).is_some();
                assert_eq!(world.despawn(e).is_ok(), expected);
                if expected {
                    let slot = m.rows.iter_mut().find(|r| **r == Some(e)).unwrap();
                    *slot = None;
                }
            }
            Op::InsertC(i, v) => {
                let Some(e) = pick(&m.known, i) else { continue };
                made_c += 1;
                insert_one(&mut world, &mut m, e, C(v, drops.clone()), |x| {
                    x.2 = Some(v)
                });
            }
            Op::InsertA(i, v) => {
                let Some(e) = pick(&m.known, i) else { continue };
                insert_one(&mut world, &mut m, e, A(v), |x| x.0 = Some(A(v)));
            }
            Op::InsertB(i, v) => {
                let Some(e) = pick(&m.known, i) else { continue };
                insert_one(&mut world, &mut m, e, B(v), |x| x.1 = Some(B(v)));
            }
            Op::RemoveA(i) => {
                let Some(e) = pick(&m.known, i) else { continue };
                let got = world.remove_one::<A>(e).ok();
                let expected = m.live.get_mut(&e).and_then(|x| x.0.take());
                assert_eq!(got, expected);
            }
            Op::RemoveB(i) => {
                let Some(e) = pick(&m.known, i) else { continue };
                let got = world.remove::<(B,)>(e).ok().map(|(b,)| b);
                let expected = m.live.get_mut(&e).and_then(|x| x.1.take());
                assert_eq!(got, expected);
            }
            Op::RemoveC(i) => {
                let Some(e) = pick(&m.known, i) else { continue };
                let got = world.remove_one::<C>(e).ok().map(|c| c.0);
                let expected = m.live.get_mut(&e).and_then(|x| x.2.take());
                assert_eq!(got, expected);
            }
            Op::RemoveAb(i) => {
                let Some(e) = pick(&m.known, i) else { continue };
                let got = world.remove::<(A, B)>(e).ok();
                let expected = match m.live.get_mut(&e) {
                    Some(x) if x.0.is_some() && x.1.is_some() => {
                        Some((x.0.take().unwrap(), x.1.take().unwrap()))
                    }
                    _ => None,
                };
                assert_eq!(got, expected);
            }
            Op::ExchangeAc(i, v) => {
                let Some(e) = pick(&m.known, i) else { continue };
                made_c += 1;
                let got = world.exchange_one::<A, C>(e, C(v, drops.clone())).ok();
                let expected = m.live.get_mut(&e).and_then(|x| {
                    let a = x.0.take()?;
                    x.2 = Some(v);
                    Some(a)
                });
                assert_eq!(got, expected);
            }
            Op::ExchangeBac(i, v) => {
                let Some(e) = pick(&m.known, i) else { continue };
                made_c += 1;
                let got = world
                    .exchange::<(B,), _>(e, (A(v), C(v, drops.clone())))
                    .ok()
                    .map(|(b,)| b);
                let expected = m.live.get_mut(&e).and_then(|x| {
                    let b = x.1.take()?;
                    x.0 = Some(A(v));
                    x.2 = Some(v);
                    Some(b)
                });
                assert_eq!(got, expected);
            }
            Op::SpawnBatch(n, v) => {
                let n = n.min(MAX_ROWS - m.rows.len());
                made_c += n;
                let es = world.spawn_batch(
                    (0..n as u32).map(|k| (A(v ^ k), B(u64::from(k)), C(k, drops.clone()))),
                );
                assert_eq!(es.len(), n);
                for (k, e) in (0..n as u32).zip(es) {
                    m.live
                        .insert(e, (Some(A(v ^ k)), Some(B(u64::from(k))), Some(k)));
                    m.rows.push_back(Some(e));
                    m.known.push(e);
                }
            }
            Op::Columns(i, j, k, v) => {
                let (Some(ei), Some(ej), Some(ek)) =
                    (pick(&m.known, i), pick(&m.known, j), pick(&m.known, k))
                else {
                    continue;
                };
                let mut bs = world.column_mut::<B>();
                let old = m.live.get(&ei).map(|x| x.1);
                assert_eq!(bs.insert(ei, B(u64::from(v))).ok(), old);
                if let Some(entry) = m.live.get_mut(&ei) {
                    entry.1 = Some(B(u64::from(v)));
                }
                let expected = m.live.get_mut(&ej).and_then(|x| x.1.take());
                assert_eq!(bs.remove(ej).ok(), expected);
                assert_eq!(bs.get(ek).copied(), m.live.get(&ek).and_then(|x| x.1));
                let mut as_ = world.column_mut::<A>();
                let old = m.live.get(&ek).map(|x| x.0);
                assert_eq!(as_.insert(ek, A(v)).ok(), old);
                if let Some(entry) = m.live.get_mut(&ek) {
                    entry.0 = Some(A(v));
                }
                let expected = m.live.get_mut(&ei).and_then(|x| x.0.take());
                assert_eq!(as_.remove(ei).ok(), expected);
                if let Some(a) = as_.get_mut(ej) {
                    a.0 = a.0.wrapping_add(1);
                }
                if let Some(Some(a)) = m.live.get_mut(&ej).map(|x| x.0.as_mut()) {
                    a.0 = a.0.wrapping_add(1);
                }
                assert_eq!(
                    as_.contains(ej),
                    m.live.get(&ej).is_some_and(|x| x.0.is_some())
                );
            }
            Op::Get(i) => {
                let Some(e) = pick(&m.known, i) else { continue };
                let expected = m.live.get(&e).and_then(|x| x.0);
                assert_eq!(world.get::<A>(e).ok().map(|r| *r), expected);
                if let Ok(a) = world.get_mut::<A>(e) {
                    assert_eq!(Some(*a), expected);
                }
            }
            Op::Query => {
                let order: Vec<Entity> = m.rows.iter().flatten().copied().collect();
                // (Entity, &A, Option<&B>) over entities without C.
                let expected: Vec<(Entity, A, Option<B>)> = order
                    .iter()
                    .filter_map(|e| {
                        let x = &m.live[e];
                        (x.0.is_some() && x.2.is_none()).then(|| (*e, x.0.unwrap(), x.1))
                    })
                    .collect();
                let mut q = world.query::<(Entity, &A, Option<&B>, Without<C>)>();
                let got: Vec<_> = q.iter().map(|(e, a, b, ())| (e, *a, b.copied())).collect();
                assert_eq!(got, expected);
                let mut via_for_each = Vec::new();
                q.for_each(|(e, a, b, ())| via_for_each.push((e, *a, b.copied())));
                assert_eq!(via_for_each, expected);
                drop(q);
                // A `for` loop over `query_mut` yields the same, and so does
                // a fold after some `next` calls; `size_hint` brackets what
                // is left.
                let mut via_for = Vec::new();
                for (e, a, b, ()) in world.query_mut::<(Entity, &A, Option<&B>, Without<C>)>() {
                    via_for.push((e, *a, b.copied()));
                }
                assert_eq!(via_for, expected);
                let it = world.query_mut::<(Entity, &A, Option<&B>, Without<C>)>();
                let it = it.into_iter().map(|(e, a, b, ())| (e, *a, b.copied()));
                assert_eq!(
                    next_then_fold(it, expected.len() / 2, expected.len()),
                    expected
                );
                // Dense columns only: (&A, &C), by `for` and `for_each`.
                let expected: Vec<(A, u32)> = order
                    .iter()
                    .filter_map(|e| {
                        let x = &m.live[e];
                        x.0.zip(x.2)
                    })
                    .collect();
                let mut via_for = Vec::new();
                for (a, c) in world.query::<(&A, &C)>().iter() {
                    via_for.push((*a, c.0));
                }
                assert_eq!(via_for, expected);
                let mut via_for_each = Vec::new();
                world
                    .query_mut::<(&A, &C)>()
                    .for_each(|(a, c)| via_for_each.push((*a, c.0)));
                assert_eq!(via_for_each, expected);
                // Sparse required: (&B, With<C>).
                let expected: Vec<B> = order
                    .iter()
                    .filter_map(|e| {
                        let x = &m.live[e];
                        x.2.and(x.1)
                    })
                    .collect();
                let got: Vec<B> = world
                    .query::<(&B, With<C>)>()
                    .iter()
                    .map(|(b, ())| *b)
                    .collect();
                assert_eq!(got, expected);
            }
            Op::QueryMutAddA => {
                world
                    .query_mut::<(&mut A, With<B>)>()
                    .for_each(|(a, ())| a.0 = a.0.wrapping_add(1));
                for x in m.live.values_mut() {
                    if let (Some(a), Some(_)) = (&mut x.0, x.1) {
                        a.0 = a.0.wrapping_add(1);
                    }
                }
            }
            Op::QueryOne(i) => {
                let Some(e) = pick(&m.known, i) else { continue };
                let expected = m.live.get(&e).map(|x| x.0.zip(x.2));
                let got = world
                    .query_one::<(&A, &C)>(e)
                    .ok()
                    .map(|mut q| q.get().map(|(a, c)| (*a, c.0)));
                assert_eq!(got, expected);
                let got = world
                    .query_one_mut::<(&mut A, &C)>(e)
                    .ok()
                    .map(|(a, c)| (*a, c.0));
                assert_eq!(got, expected.flatten());
            }
            Op::Collect(budget, any) => {
                let examined = budget.min(m.rows.len());
                let live: Vec<Entity> = m.rows.iter().take(examined).flatten().copied().collect();
                let any = any && m.rows.len() + live.len() <= MAX_ROWS;
                let done = world.collect(budget, if any { Order::Any } else { Order::Preserve });
                assert_eq!(done.examined, examined);
                m.rows.drain(..examined);
                if any {
                    assert_eq!(done.moved, live.len());
                    m.rows.extend(live.into_iter().map(Some));
                } else {
                    for e in live.into_iter().rev() {
                        m.rows.push_front(Some(e));
                    }
                }
            }
            Op::Compact => {
                world.compact();
                m.rows.retain(Option::is_some);
            }
            Op::Clear => {
                world.clear();
                m.live.clear();
                m.rows.clear();
            }
            Op::Commands(i, j, v) => {
                let (Some(d), Some(t)) = (pick(&m.known, i), pick(&m.known, j)) else {
                    continue;
                };
                let spawn = m.rows.len() < MAX_ROWS;
                let mut commands = CommandBuffer::new();
                // Recorded while the world is borrowed by a query.
                for e in world.query::<Entity>().iter() {
                    if e == d {
                        commands.despawn(e);
                    }
                }
                commands.insert_one(t, A(v));
                if spawn {
                    commands.spawn((A(v), B(u64::from(v))));
                }
                let before: Vec<Entity> = world.query::<Entity>().iter().collect();
                commands.run_on(&mut world);
                if m.live.remove(&d).is_some() {
                    *m.rows.iter_mut().find(|r| **r == Some(d)).unwrap() = None;
                }
                if let Some(x) = m.live.get_mut(&t) {
                    x.0 = Some(A(v));
                }
                if spawn {
                    let after: Vec<Entity> = world.query::<Entity>().iter().collect();
                    let new = *after.iter().find(|e| !before.contains(e)).unwrap();
                    m.live
                        .insert(new, (Some(A(v)), Some(B(u64::from(v))), None));
                    m.rows.push_back(Some(new));
                    m.known.push(new);
                }
            }
            #[cfg(feature = "serde")]
            Op::RoundTrip(postcard, spawns) => {
                made_c += round_trip(&mut world, &mut m, postcard, spawns);
            }
            #[cfg(not(feature = "serde"))]
            Op::RoundTrip(..) => {}
            Op::Forged(bits) => {
                if let Some(e) = Entity::from_bits(bits) {
                    assert_eq!(world.contains(e), m.live.contains_key(&e));
                    assert_eq!(
                        world.get::<A>(e).ok().map(|r| *r),
                        m.live.get(&e).and_then(|x| x.0)
                    );
                }
            }
        }
        if !common::check_after(step, len) {
            continue;
        }
        check(&mut world, &m);
        let live_c = m.live.values().filter(|x| x.2.is_some()).count();
        assert_eq!(
            drops.load(Ordering::Relaxed) + live_c,
            made_c,
            "C leaked or dropped twice"
        );
    }
    drop(world);
    assert_eq!(drops.load(Ordering::Relaxed), made_c);
}

proptest! {
    #![proptest_config(common::proptest_config(3, 256))]

    #[test]
    fn world_matches_model(ops in prop::collection::vec(op(), 0..if cfg!(miri) { 40 } else { 400 })) {
        run(ops);
    }
}

/// `for_each` resolves the views once per word whose 64 rows all match and
/// walks the other words bit by bit: over full words, partial words and a
/// sparse column, every element kind (`Entity`, `&mut`, `&`, `Option`,
/// filters) yields what `iter` yields, in the same order.
#[test]
fn for_each_over_full_and_partial_words_matches_iter() {
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct D(u32);
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct E(u16);
    let n = if cfg!(miri) { 200 } else { 1000 };
    let mut world = World::with_max_rows(n);
    world.register::<B>(Storage::Sparse);
    let es = world.spawn_batch((0..n as u32).map(|i| (A(i), D(i * 2))));
    for (i, &e) in es.iter().enumerate() {
        // Full words up to row 128; then holes of every kind.
        if i >= 128 && i % 3 == 0 {
            world.remove_one::<D>(e).unwrap();
        }
        if i % 5 == 0 {
            world.insert_one(e, B(i as u64)).unwrap();
        }
        if i >= 64 && i % 7 == 0 {
            world.insert_one(e, E(i as u16)).unwrap();
        }
        if i >= 150 && i % 11 == 0 {
            world.despawn(e).unwrap();
        }
    }
    type Q<'a> = (
        Entity,
        &'a mut A,
        &'a D,
        Option<&'a B>,
        Option<&'a mut E>,
        With<D>,
        Without<C>,
    );
    type Seen = (Entity, A, D, Option<B>, Option<E>);
    let expected: Vec<Seen> = world
        .query::<Q<'_>>()
        .iter()
        .map(|(e, a, d, b, x, (), ())| (e, *a, *d, b.copied(), x.copied()))
        .collect();
    assert!(expected.len() > 128);
    let mut got = Vec::new();
    world.query::<Q<'_>>().for_each(|(e, a, d, b, x, (), ())| {
        a.0 += 1;
        let before = x.map(|x| {
            x.0 += 1;
            E(x.0 - 1)
        });
        got.push((e, A(a.0 - 1), *d, b.copied(), before));
    });
    assert_eq!(got, expected);
    // The writes reached every visited row.
    let mut via_query_mut = Vec::new();
    world
        .query_mut::<(Entity, &A, Option<&E>, With<D>)>()
        .for_each(|(e, a, x, ())| via_query_mut.push((e, *a, x.copied())));
    let bumped: Vec<_> = expected
        .iter()
        .map(|&(e, a, _, _, x)| (e, A(a.0 + 1), x.map(|x| E(x.0 + 1))))
        .collect();
    assert_eq!(via_query_mut, bumped);
}
