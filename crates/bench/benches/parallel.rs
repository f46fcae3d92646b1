//! Parallel iteration with rayon against a sequential pass over the same
//! container, for every container with `par_iter`, with a `Vec` of just the
//! live values as the bound. Each contestant sums the live `u64`s of 1M
//! slots at three occupancies (uniform holes); throughput is per live value.
//! The work is cut where each container's storage divides (a 64-slot word
//! of occupancy bits, a block, anywhere in a dense array), so the
//! comparison shows what that costs against a slice.
//!
//! ```text
//! cargo bench -p handlekit-bench --bench parallel
//! ```

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use handlekit::{Hive, IdTable, PackedTable, Pool};
use rayon::prelude::*;

const SLOTS: usize = 1_000_000;

/// Whether slot `i` stays live at `percent` occupancy: a multiplicative
/// hash, so the holes are uniform and the same for every container.
fn live(i: usize, percent: u64) -> bool {
    ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % 100 < percent
}

/// Fills `insert` with `SLOTS` values, then removes the ones not live.
fn build<C, K: Copy>(
    mut container: C,
    insert: impl Fn(&mut C, u64) -> K,
    remove: impl Fn(&mut C, K),
    percent: u64,
) -> C {
    let keys: Vec<K> = (0..SLOTS as u64)
        .map(|v| insert(&mut container, v))
        .collect();
    for (i, &key) in keys.iter().enumerate() {
        if !live(i, percent) {
            remove(&mut container, key);
        }
    }
    container
}

fn parallel(c: &mut Criterion) {
    for percent in [5u64, 50, 100] {
        let values: Vec<u64> = (0..SLOTS as u64)
            .filter(|&v| live(v as usize, percent))
            .collect();
        let idtable = build(
            IdTable::<u64>::new(),
            |t, v| t.insert(v),
            |t, k| {
                t.remove(k).expect("a live key");
            },
            percent,
        );
        let packed = build(
            PackedTable::<u64>::new(),
            |t, v| t.insert(v),
            |t, k| {
                t.remove(k).expect("a live key");
            },
            percent,
        );
        let pool = build(
            Pool::<u64>::new(),
            |t, v| t.insert(v),
            |t, k| {
                t.remove(k).expect("a live key");
            },
            percent,
        );
        let hive = build(
            Hive::<u64>::new(),
            |t, v| t.insert(v),
            |t, k| {
                t.remove(k).expect("a live key");
            },
            percent,
        );
        let expected: u64 = values.iter().sum();
        assert_eq!(idtable.par_iter().map(|(_, v)| *v).sum::<u64>(), expected);
        assert_eq!(packed.par_iter().map(|(_, v)| *v).sum::<u64>(), expected);
        assert_eq!(pool.par_iter().map(|(_, v)| *v).sum::<u64>(), expected);
        assert_eq!(hive.par_iter().map(|(_, v)| *v).sum::<u64>(), expected);

        let mut group = c.benchmark_group(format!("parallel_u64_1M_{percent}pct"));
        group.sample_size(20);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(2));
        group.throughput(Throughput::Elements(values.len() as u64));
        group.bench_function("Vec/seq", |b| {
            b.iter(|| black_box(&values).iter().sum::<u64>())
        });
        group.bench_function("Vec/par", |b| {
            b.iter(|| black_box(&values).par_iter().sum::<u64>())
        });
        group.bench_function("IdTable/seq", |b| {
            b.iter(|| black_box(&idtable).values().sum::<u64>())
        });
        group.bench_function("IdTable/par", |b| {
            b.iter(|| black_box(&idtable).par_iter().map(|(_, v)| *v).sum::<u64>())
        });
        group.bench_function("PackedTable/seq", |b| {
            b.iter(|| black_box(&packed).values().sum::<u64>())
        });
        group.bench_function("PackedTable/par", |b| {
            b.iter(|| black_box(&packed).par_iter().map(|(_, v)| *v).sum::<u64>())
        });
        group.bench_function("Pool/seq", |b| {
            b.iter(|| black_box(&pool).values().sum::<u64>())
        });
        group.bench_function("Pool/par", |b| {
            b.iter(|| black_box(&pool).par_iter().map(|(_, v)| *v).sum::<u64>())
        });
        group.bench_function("Hive/seq", |b| {
            b.iter(|| black_box(&hive).values().sum::<u64>())
        });
        group.bench_function("Hive/par", |b| {
            b.iter(|| black_box(&hive).par_iter().map(|(_, v)| *v).sum::<u64>())
        });
        group.finish();
    }
}

criterion_group!(benches, parallel);
criterion_main!(benches);
