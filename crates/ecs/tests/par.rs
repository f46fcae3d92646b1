//! `par_for_each` visits each matching row once, whatever the cut between
//! threads: worlds of a few rows, of partial words at either end (dead rows
//! at the front, a tail past the last full word), with components on some
//! rows only, with a sparse column, and on pools of several sizes.
#![cfg(feature = "rayon")]

use handlekit_ecs::{Storage, World};

#[derive(Debug, Clone, Copy, PartialEq)]
struct Count(u32);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Id(usize);
#[derive(Debug, Clone, Copy, PartialEq)]
struct Tag;

/// Adds one to the `Count` of every entity with an `Id` (and a `Tag` if
/// `tagged`) through `par_for_each`, on a pool of `threads`.
fn bump(world: &mut World, threads: usize, tagged: bool) {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        if tagged {
            world
                .query_mut::<(&mut Count, &Id, &Tag)>()
                .par_for_each(|(c, _, _)| c.0 += 1);
        } else {
            world
                .query::<(&mut Count, &Id)>()
                .par_for_each(|(c, _)| c.0 += 1);
        }
    });
}

/// Each entity's count, by id.
fn counts(world: &mut World) -> Vec<(usize, u32)> {
    let mut out: Vec<(usize, u32)> = world
        .query_mut::<(&Id, &Count)>()
        .into_iter()
        .map(|(id, c)| (id.0, c.0))
        .collect();
    out.sort_unstable();
    out
}

#[test]
fn each_row_once_with_partial_words_and_tails() {
    let sizes: &[usize] = if cfg!(miri) {
        &[0, 1, 63, 65, 200]
    } else {
        &[0, 1, 63, 64, 65, 127, 128, 1000, 4097, 20_011]
    };
    for &n in sizes {
        for dead_front in [0, 5, 70] {
            for threads in [1, 2, 3] {
                let mut world = World::new();
                let filler = world.spawn_batch((0..dead_front).map(|_| (Count(0),)));
                world.spawn_batch((0..n).map(|i| (Count(0), Id(i))));
                for e in filler {
                    world.despawn(e).unwrap();
                }
                bump(&mut world, threads, false);
                bump(&mut world, threads, false);
                let got = counts(&mut world);
                assert_eq!(got.len(), n);
                assert!(
                    got.iter().all(|&(_, c)| c == 2),
                    "n {n}, dead front {dead_front}, {threads} threads"
                );
            }
        }
    }
}

#[test]
fn each_matching_row_once_with_gaps_and_a_sparse_column() {
    let n = if cfg!(miri) { 300 } else { 5000 };
    for sparse in [false, true] {
        let mut world = World::new();
        if sparse {
            world.register::<Tag>(Storage::Sparse);
        }
        let es = world.spawn_batch((0..n).map(|i| (Count(0), Id(i))));
        for (i, &e) in es.iter().enumerate() {
            if i % 3 == 0 || (1000..1300).contains(&i) {
                world.insert_one(e, Tag).unwrap();
            }
        }
        for threads in [2, 3] {
            bump(&mut world, threads, true);
        }
        for (id, count) in counts(&mut world) {
            let tagged = id % 3 == 0 || (1000..1300).contains(&id);
            assert_eq!(
                count,
                if tagged { 2 } else { 0 },
                "row {id}, sparse {sparse}"
            );
        }
    }
}
