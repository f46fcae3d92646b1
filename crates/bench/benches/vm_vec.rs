//! Criterion benchmarks for `VmVec` against the standard containers:
//! pushing `u64`s (against `Vec` with and without a reserve), and removing
//! the front 10% of a touched array (`VmVec::drain_front`, which releases
//! the dead chunks, against `VecDeque::drain(..n)` and `Vec::drain(..n)`).
//!
//! ```text
//! cargo bench -p handlekit-bench --bench vm_vec                      # 64 MiB arrays
//! HANDLEKIT_VMVEC_MIB=1024 cargo bench -p handlekit-bench --bench vm_vec
//! ```
//!
//! The closing figures (1 GiB, with resident memory) come from
//! `cargo run --release -p handlekit-bench --example vm_vec`.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::collections::VecDeque;
use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, Criterion, Throughput,
};
use handlekit::VmVec;

fn elements() -> usize {
    let mib: usize = std::env::var("HANDLEKIT_VMVEC_MIB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    mib * (1 << 20) / 8
}

fn push(c: &mut Criterion) {
    let n = elements();
    let mut group = c.benchmark_group(format!("vm_vec/push/{}MiB", (n * 8) >> 20));
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("VmVec", |b| {
        b.iter(|| {
            let mut v = VmVec::with_max_capacity(n).expect("reserve");
            for i in 0..n as u64 {
                v.push(i);
            }
            black_box(v)
        });
    });
    group.bench_function("Vec", |b| {
        b.iter(|| {
            let mut v = Vec::new();
            for i in 0..n as u64 {
                v.push(i);
            }
            black_box(v)
        });
    });
    group.bench_function("Vec::with_capacity", |b| {
        b.iter(|| {
            let mut v = Vec::with_capacity(n);
            for i in 0..n as u64 {
                v.push(i);
            }
            black_box(v)
        });
    });
    group.finish();
}

/// Times `drain` on a fresh `setup()` each iteration; the collection is
/// returned, so that its drop is not timed.
fn bench_drain<C>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    setup: impl Fn() -> C,
    mut drain: impl FnMut(&mut C),
) {
    group.bench_function(name, |b| {
        b.iter_batched(
            &setup,
            |mut c| {
                drain(&mut c);
                c
            },
            BatchSize::PerIteration,
        );
    });
}

/// [`bench_drain`] on a std collection `C` of `0..n`.
fn bench_std_drain<C: FromIterator<u64>>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    n: usize,
    drain: impl FnMut(&mut C),
) {
    bench_drain(group, name, || (0..n as u64).collect(), drain);
}

fn drain_front_tenth(c: &mut Criterion) {
    let n = elements();
    let cut = n / 10;
    let mut group = c.benchmark_group(format!("vm_vec/drain_front_10pct/{}MiB", (n * 8) >> 20));
    group.throughput(Throughput::Elements(cut as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    bench_drain(
        &mut group,
        "VmVec::drain_front",
        || {
            let mut v = VmVec::with_max_capacity(n).expect("reserve");
            v.extend(0..n as u64);
            v
        },
        |v| {
            v.drain_front(cut);
        },
    );
    bench_std_drain(&mut group, "VecDeque::drain", n, |d: &mut VecDeque<u64>| {
        d.drain(..cut);
    });
    bench_std_drain(&mut group, "Vec::drain", n, |v: &mut Vec<u64>| {
        v.drain(..cut);
    });
    group.finish();
}

criterion_group!(benches, push, drain_front_tenth);
criterion_main!(benches);
