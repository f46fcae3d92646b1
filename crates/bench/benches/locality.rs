//! Visiting a 1M-element array through a list of indices: sorted (a
//! sequential sweep) against shuffled (a random walk through memory), and
//! what it costs to restore the order with a radix sort
//! (`handlekit::sort_indices`, `handlekit::sort_keys`, both `radsort`)
//! against the standard library's sorts.
//!
//! ```text
//! cargo bench -p handlekit-bench --bench locality
//! ```

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion, Throughput,
};
use handlekit::{Id, IdTable, Key};
use handlekit_bench::workloads::Rng;

const N: usize = 1_000_000;
const SEED: u64 = 0x10CA_1174;

/// A 64-byte element: one cache line.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Line {
    value: u64,
    _rest: [u64; 7],
}

fn shuffled_indices() -> Vec<u32> {
    let mut indices: Vec<u32> = (0..N as u32).collect();
    Rng::new(SEED).shuffle(&mut indices);
    indices
}

fn visit(c: &mut Criterion) {
    let shuffled = shuffled_indices();
    let mut sorted = shuffled.clone();
    handlekit::sort_indices(&mut sorted);

    let mut group = c.benchmark_group("visit_1M");
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(N as u64));

    let words: Vec<u64> = (0..N as u64).collect();
    for (order, indices) in [("sorted", &sorted), ("shuffled", &shuffled)] {
        group.bench_function(format!("u64/{order}"), |b| {
            b.iter(|| {
                let mut sum = 0u64;
                for &i in indices.iter() {
                    sum = sum.wrapping_add(words[i as usize]);
                }
                black_box(sum)
            });
        });
    }
    drop(words);

    let lines: Vec<Line> = (0..N as u64)
        .map(|value| Line {
            value,
            _rest: [0; 7],
        })
        .collect();
    for (order, indices) in [("sorted", &sorted), ("shuffled", &shuffled)] {
        group.bench_function(format!("line64/{order}"), |b| {
            b.iter(|| {
                let mut sum = 0u64;
                for &i in indices.iter() {
                    sum = sum.wrapping_add(lines[i as usize].value);
                }
                black_box(sum)
            });
        });
    }
    drop(lines);

    // The same through handlekit keys into an `IdTable`.
    let mut table = IdTable::with_capacity(N);
    let mut keys: Vec<Id> = (0..N as u64).map(|v| table.insert(v)).collect();
    Rng::new(SEED).shuffle(&mut keys);
    let shuffled_keys = keys.clone();
    handlekit::sort_keys(&mut keys);
    for (order, keys) in [("sorted", &keys), ("shuffled", &shuffled_keys)] {
        group.bench_function(format!("IdTable_u64/{order}"), |b| {
            b.iter(|| {
                let mut sum = 0u64;
                for &key in keys.iter() {
                    sum = sum.wrapping_add(table[key]);
                }
                black_box(sum)
            });
        });
    }
    group.finish();
}

fn sort(c: &mut Criterion) {
    let shuffled = shuffled_indices();
    let mut group = c.benchmark_group("sort_1M");
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(N as u64));
    bench_sort(&mut group, "u32/sort_indices_radsort", &shuffled, |v| {
        handlekit::sort_indices(v)
    });
    bench_sort(&mut group, "u32/std_sort_unstable", &shuffled, |v| {
        v.sort_unstable()
    });
    let keys: Vec<Id> = shuffled
        .iter()
        .map(|&i| Id::from_parts(i as usize, 1).expect("a key"))
        .collect();
    bench_sort(&mut group, "Id/sort_keys_radsort", &keys, |v| {
        handlekit::sort_keys(v)
    });
    bench_sort(&mut group, "Id/std_sort_by_key", &keys, |v| {
        v.sort_by_key(|key| key.index())
    });
    bench_sort(&mut group, "Id/std_sort_unstable_by_key", &keys, |v| {
        v.sort_unstable_by_key(|key| key.index())
    });
    group.finish();
}

criterion_group!(benches, visit, sort);
criterion_main!(benches);

/// Times `sort` on a fresh copy of `input` each batch.
fn bench_sort<T: Clone>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    input: &[T],
    mut sort: impl FnMut(&mut Vec<T>),
) {
    group.bench_function(name, |b| {
        b.iter_batched_ref(|| input.to_vec(), &mut sort, BatchSize::LargeInput);
    });
}
