//! The query iterator's states: a `for` loop over a query yields what
//! `for_each` yields and what a model of the rows says, over worlds with
//! every pattern of holes (runs ending at word boundaries, fully set words,
//! empty words, dead rows, sparse columns, `With`/`Without`/`Option`);
//! `size_hint` brackets the items left at every step (exactly, when the
//! whole window is one run); the iterator stays exhausted (fused); a `fold`
//! after some `next` calls yields the rest; and a panicking loop body
//! leaves the world consistent, its borrows released and no component
//! leaked or dropped twice.

use std::fmt::Debug;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use handlekit_ecs::{Entity, Storage, With, Without, World};
use proptest::prelude::*;

mod common;
use common::Counted;

#[derive(Clone, Copy, Debug, PartialEq)]
struct A(u32);
/// Dense, on some rows.
#[derive(Clone, Copy, Debug, PartialEq)]
struct D(u32);
/// Sparse.
#[derive(Clone, Copy, Debug, PartialEq)]
struct B(u32);
/// Dense, optional in the queries.
#[derive(Clone, Copy, Debug, PartialEq)]
struct E(u32);

/// What a row holds: alive, and which components.
#[derive(Clone, Copy, Debug, Default)]
struct Flags {
    alive: bool,
    a: bool,
    d: bool,
    b: bool,
    e: bool,
}

impl Flags {
    fn from_bits(bits: u8) -> Flags {
        Flags {
            alive: bits & 1 != 0,
            a: bits & 2 != 0,
            d: bits & 4 != 0,
            b: bits & 8 != 0,
            e: bits & 16 != 0,
        }
    }
}

/// A world with one row per flag (row `i` holds `A(i)`, `D(i)`, ... as its
/// flags say; dead rows are despawned after every row was spawned), and
/// the entities of the rows in row order.
fn world_of(rows: &[Flags]) -> (World, Vec<Entity>) {
    let mut world = World::with_max_rows(rows.len().max(1));
    world.register::<B>(Storage::Sparse);
    let es = world.spawn_batch((0..rows.len()).map(|_| ()));
    for (i, (&e, f)) in es.iter().zip(rows).enumerate() {
        let i = i as u32;
        if f.a {
            world.insert_one(e, A(i)).unwrap();
        }
        if f.d {
            world.insert_one(e, D(i)).unwrap();
        }
        if f.b {
            world.insert_one(e, B(i)).unwrap();
        }
        if f.e {
            world.insert_one(e, E(i)).unwrap();
        }
    }
    for (&e, f) in es.iter().zip(rows) {
        if !f.alive {
            world.despawn(e).unwrap();
        }
    }
    // Under Miri, the check at the end of `check_world` (the queries
    // between change values only) covers the world as built.
    if !cfg!(miri) {
        world.check_invariants();
    }
    (world, es)
}

/// Checks an iterator against the items it must yield: `size_hint`
/// brackets what is left at every step (and equals it if `exact`), the
/// items come in order, and the exhausted iterator stays exhausted.
fn check_iter<T: PartialEq + Debug>(mut it: impl Iterator<Item = T>, expected: &[T], exact: bool) {
    for (i, want) in expected.iter().enumerate() {
        let left = expected.len() - i;
        let (lo, hi) = it.size_hint();
        assert!(lo <= left, "lower bound {lo} > {left} left");
        assert!(
            hi.is_some_and(|hi| hi >= left),
            "upper bound {hi:?} < {left} left"
        );
        if exact {
            assert_eq!((lo, hi), (left, Some(left)));
        }
        assert_eq!(it.next().as_ref(), Some(want), "item {i}");
    }
    for _ in 0..3 {
        assert!(it.next().is_none(), "more items than expected");
        assert_eq!(it.size_hint(), (0, Some(0)));
    }
}

/// Every query of the test over `rows`: the `for` loop (through `next`) and
/// `for_each` of both `query` and `query_mut` against the model, and the
/// rest of an iterator after `split` items through `fold`.
fn check_world(rows: &[Flags], split: usize) {
    let (mut world, es) = world_of(rows);
    let live = |f: &Flags| f.alive;
    let all_dense_window = rows.iter().all(|f| f.alive);

    // &A.
    let want: Vec<A> = (0..rows.len())
        .filter(|&i| live(&rows[i]) && rows[i].a)
        .map(|i| A(i as u32))
        .collect();
    let exact = all_dense_window && rows.iter().all(|f| f.a);
    check_iter(world.query::<&A>().iter().copied(), &want, exact);
    check_iter(world.query_mut::<&A>().into_iter().copied(), &want, exact);
    let mut got = Vec::new();
    world.query::<&A>().for_each(|a| got.push(*a));
    assert_eq!(got, want);
    let mut it = world.query_mut::<&A>().into_iter();
    let mut got: Vec<A> = it.by_ref().take(split).copied().collect();
    got = it.fold(got, |mut v, a| {
        v.push(*a);
        v
    });
    assert_eq!(got, want);

    // (&mut A, &D): writes through the loop reach every matching row once.
    let want: Vec<(A, D)> = (0..rows.len())
        .filter(|&i| live(&rows[i]) && rows[i].a && rows[i].d)
        .map(|i| (A(i as u32), D(i as u32)))
        .collect();
    let mut got = Vec::new();
    for (a, d) in world.query_mut::<(&mut A, &D)>() {
        got.push((*a, *d));
        a.0 += 1_000_000;
    }
    assert_eq!(got, want);
    let mut via_for_each = Vec::new();
    world.query::<(&mut A, &D)>().for_each(|(a, d)| {
        a.0 -= 1_000_000;
        via_for_each.push((*a, *d));
    });
    assert_eq!(via_for_each, want);

    // (Entity, &A, Option<&B>, Without<E>), B sparse: not all dense.
    type Q1<'a> = (Entity, &'a A, Option<&'a B>, Without<E>);
    let want: Vec<(Entity, A, Option<B>)> = (0..rows.len())
        .filter(|&i| live(&rows[i]) && rows[i].a && !rows[i].e)
        .map(|i| (es[i], A(i as u32), rows[i].b.then_some(B(i as u32))))
        .collect();
    let seen = |(e, a, b, ()): (Entity, &A, Option<&B>, ())| (e, *a, b.copied());
    check_iter(world.query::<Q1<'_>>().iter().map(seen), &want, false);
    let mut got = Vec::new();
    world.query_mut::<Q1<'_>>().for_each(|x| got.push(seen(x)));
    assert_eq!(got, want);
    let mut q = world.query::<Q1<'_>>();
    let mut it = q.iter();
    let mut got: Vec<_> = it.by_ref().take(split).map(seen).collect();
    got = it.fold(got, |mut v, x| {
        v.push(seen(x));
        v
    });
    assert_eq!(got, want);
    drop(q);

    // (&D, With<B>): a required dense column with a sparse filter.
    let want: Vec<D> = (0..rows.len())
        .filter(|&i| live(&rows[i]) && rows[i].d && rows[i].b)
        .map(|i| D(i as u32))
        .collect();
    check_iter(
        world.query::<(&D, With<B>)>().iter().map(|(d, ())| *d),
        &want,
        false,
    );

    // &B alone (sparse): runs of one row.
    let want: Vec<B> = (0..rows.len())
        .filter(|&i| live(&rows[i]) && rows[i].b)
        .map(|i| B(i as u32))
        .collect();
    check_iter(world.query::<&B>().iter().copied(), &want, false);

    // (Entity, Option<&mut E>, With<A>, Without<D>): Option runs.
    let want: Vec<(Entity, Option<E>)> = (0..rows.len())
        .filter(|&i| live(&rows[i]) && rows[i].a && !rows[i].d)
        .map(|i| (es[i], rows[i].e.then_some(E(i as u32))))
        .collect();
    let mut got = Vec::new();
    for (e, x, (), ()) in world.query_mut::<(Entity, Option<&mut E>, With<A>, Without<D>)>() {
        got.push((e, x.map(|x| *x)));
    }
    assert_eq!(got, want);

    // Entity alone: every live row, one run when no row is dead.
    let want: Vec<Entity> = (0..rows.len())
        .filter(|&i| live(&rows[i]))
        .map(|i| es[i])
        .collect();
    check_iter(world.query::<Entity>().iter(), &want, all_dense_window);

    // A type no entity has: nothing, fused.
    struct Never;
    check_iter(world.query::<&Never>().iter().map(|_| ()), &[], true);
    world.check_invariants();
}

fn all(n: usize, f: Flags) -> Vec<Flags> {
    vec![f; n]
}

const FULL: Flags = Flags {
    alive: true,
    a: true,
    d: true,
    b: false,
    e: false,
};

/// Rows in words: `n` rows, `f(i)` for row `i`.
fn pattern(n: usize, f: impl Fn(usize) -> Flags) -> Vec<Flags> {
    (0..n).map(f).collect()
}

#[test]
fn whole_window_runs() {
    let n = if cfg!(miri) { 130 } else { 1000 };
    let lens: &[usize] = if cfg!(miri) {
        &[0, 1, 65, n]
    } else {
        &[0, 1, 63, 64, 65, 128, n]
    };
    for (k, &len) in lens.iter().enumerate() {
        // Under Miri (3.7 s of Miri's clock for the window of `n` rows),
        // one split per length, each kind once: none on the longest (one
        // fold over the whole window), past the end of the window of one
        // row, into the window of 65.
        for (kind, split) in [len / 2, 0, len + 5].into_iter().enumerate() {
            if cfg!(miri) && kind != (k + 1) % 3 {
                continue;
            }
            check_world(&all(len, FULL), split);
        }
    }
}

#[test]
fn patterns_of_holes() {
    let words = if cfg!(miri) { 2 } else { 8 };
    let n = words * 64;
    // Under Miri (3 s of Miri's clock for a pattern of two words), the
    // patterns that need no second word take one.
    let short = if cfg!(miri) { 64 } else { n };
    let patterns: Vec<(&str, Vec<Flags>)> = vec![
        // Whole words set, whole words empty.
        (
            "alternate words",
            pattern(n, |i| Flags {
                a: (i / 64) % 2 == 0,
                ..FULL
            }),
        ),
        // Runs that end exactly at word boundaries and start inside words.
        (
            "runs ending at words",
            pattern(n, |i| Flags {
                a: i % 64 >= 40,
                ..FULL
            }),
        ),
        // Runs across word boundaries.
        (
            "runs across words",
            pattern(n, |i| Flags {
                a: (i + 20) % 64 < 40,
                ..FULL
            }),
        ),
        // A full word after the first, then every third row.
        (
            "full then sparse",
            pattern(short, |i| Flags {
                a: i < 128 || i % 3 == 0,
                b: i % 5 == 0,
                e: i % 7 == 0,
                ..FULL
            }),
        ),
        // Dead rows: every live row has the components, but the window has
        // holes (no whole-window run).
        (
            "dead rows",
            pattern(short, |i| Flags {
                alive: i % 11 != 3,
                ..FULL
            }),
        ),
        // A late column: D only from the third word on.
        (
            "late column",
            pattern(n, |i| Flags {
                d: i >= 130,
                b: i % 2 == 1,
                ..FULL
            }),
        ),
        // Single rows.
        (
            "isolated rows",
            pattern(n, |i| Flags {
                a: i % 64 == 63 || i % 64 == 0,
                e: i % 64 == 0,
                ..FULL
            }),
        ),
        (
            "nothing alive",
            all(
                short,
                Flags {
                    alive: false,
                    ..FULL
                },
            ),
        ),
    ];
    // Under Miri, two patterns are left out: the late column starts past
    // two words, and the runs that end at word boundaries are those of
    // "alternate words", "runs across words" and "isolated rows" too.
    let skipped: &[&str] = if cfg!(miri) {
        &["runs ending at words", "late column"]
    } else {
        &[]
    };
    for (name, rows) in &patterns {
        if skipped.contains(name) {
            continue;
        }
        let splits: &[usize] = if cfg!(miri) {
            &[63]
        } else {
            &[0, 1, 63, 64, 100, n]
        };
        for &split in splits {
            let result = catch_unwind(|| check_world(rows, split));
            assert!(result.is_ok(), "pattern {name}, split {split}");
        }
    }
}

proptest! {
    #![proptest_config(common::proptest_config(2, 256))]

    /// Random rows, with long runs of one kind (so that whole words match
    /// or are empty) as well as noise.
    #[test]
    fn for_loop_matches_for_each_and_model(
        runs in prop::collection::vec((0u8..32, 1usize..80), 0..if cfg!(miri) { 4 } else { 12 }),
        split in 0usize..300,
    ) {
        let rows: Vec<Flags> = runs
            .iter()
            .flat_map(|&(bits, len)| std::iter::repeat_n(Flags::from_bits(bits), len))
            .collect();
        check_world(&rows, split);
    }

    #[test]
    fn for_loop_matches_model_with_noise(
        bits in prop::collection::vec(0u8..32, 0..if cfg!(miri) { 100 } else { 400 }),
        split in 0usize..300,
    ) {
        let rows: Vec<Flags> = bits.iter().map(|&b| Flags::from_bits(b)).collect();
        check_world(&rows, split);
    }
}

/// A `for` loop whose body panics part way: the items before were visited
/// once, the world is consistent, the guard's borrows are released, and
/// every component is dropped once, when the world is.
#[test]
fn panicking_loop_body() {
    let n = if cfg!(miri) { 150 } else { 1000 };
    let drops = Arc::new(AtomicUsize::new(0));
    let mut world = World::new();
    let es = world.spawn_batch((0..n as u32).map(|i| (A(i), Counted(drops.clone(), i))));
    // Holes, so that the loop crosses runs.
    for &e in es.iter().step_by(7) {
        world.remove_one::<A>(e).unwrap();
    }
    let with_a: Vec<u32> = (0..n as u32).filter(|i| i % 7 != 0).collect();
    let stop = with_a.len() / 2;
    for shared in [false, true] {
        let mut visited = Vec::new();
        let result = catch_unwind(AssertUnwindSafe(|| {
            let body = |(a, c): (&mut A, &Counted), visited: &mut Vec<u32>| {
                if visited.len() == stop {
                    panic!("the loop body panics");
                }
                assert_eq!(a.0 % 10_000, c.1);
                a.0 += 10_000;
                visited.push(c.1);
            };
            if shared {
                for item in world.query::<(&mut A, &Counted)>().iter() {
                    body(item, &mut visited);
                }
            } else {
                for item in world.query_mut::<(&mut A, &Counted)>() {
                    body(item, &mut visited);
                }
            }
        }));
        assert!(result.is_err());
        assert_eq!(visited, with_a[..stop]);
        world.check_invariants();
        // The guard's borrows were released by the unwinding.
        let bumped: Vec<u32> = world.query::<&mut A>().iter().map(|a| a.0).collect();
        assert_eq!(bumped.len(), with_a.len());
        assert_eq!(drops.load(Ordering::Relaxed), 0);
    }
    // Rows before `stop` were bumped twice, the others never.
    let values: Vec<u32> = world.query_mut::<&A>().into_iter().map(|a| a.0).collect();
    let expected: Vec<u32> = with_a
        .iter()
        .enumerate()
        .map(|(k, &i)| if k < stop { i + 20_000 } else { i })
        .collect();
    assert_eq!(values, expected);
    assert_eq!(world.count::<Counted>(), n);
    drop(world);
    assert_eq!(drops.load(Ordering::Relaxed), n);
}

/// A query iterator is `FusedIterator`, and its `size_hint` is exact over a
/// world whose every live row matches (the whole window is one run).
#[test]
fn fused_and_exact_over_a_full_window() {
    fn fused<I: std::iter::FusedIterator>(_: &I) {}
    let mut world = World::new();
    world.spawn_batch((0..300u32).map(|i| (A(i), D(i))));
    let it = world.query_mut::<(&A, &D)>().into_iter();
    fused(&it);
    assert_eq!(it.size_hint(), (300, Some(300)));
    assert_eq!(it.count(), 300);
    let mut it = world.query_mut::<&mut A>().into_iter();
    it.nth(99);
    assert_eq!(it.size_hint(), (200, Some(200)));
    assert_eq!(it.map(|a| a.0).sum::<u32>(), (100..300).sum());
}
