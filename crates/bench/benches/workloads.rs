//! Criterion benchmarks over the runner's own workloads and containers, for
//! day-to-day work on one workload: the same code as `cargo run --release`,
//! with criterion's statistics and history.
//!
//! ```text
//! cargo bench -p handlekit-bench --bench workloads                  # everything
//! cargo bench -p handlekit-bench --bench workloads -- 'get/u64'     # a filter
//! HANDLEKIT_BENCH_SIZES=1000,100000 cargo bench -p handlekit-bench --bench workloads
//! ```
//!
//! Benchmark ids are `<workload>/<value type>/<container>/<N>`. Each
//! iteration runs the workload's setup untimed and times only its measured
//! section (`iter_custom`), exactly as the runner does; the throughput is
//! the workload's operation count at full `N` (for the passes over half
//! and sparse tables, `*.half` and `*.sparse`, divide by the live count to
//! compare with the runner).
//! `HANDLEKIT_BENCH_CONTAINERS=IdTable,SlotMap` keeps only the containers
//! whose name contains one of the words.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use handlekit_bench::containers::{Blob64, Value};
use handlekit_bench::workloads::{Rng, Workload};
use handlekit_bench::{entries_for, Entry};

const DEFAULT_SIZES: &[usize] = &[1_000, 100_000];
const SEED: u64 = 0x5EED_0F4A_11D5;

fn list_from_env(name: &str) -> Option<Vec<String>> {
    std::env::var(name)
        .ok()
        .map(|text| text.split(',').map(str::trim).map(String::from).collect())
}

fn sizes() -> Vec<usize> {
    list_from_env("HANDLEKIT_BENCH_SIZES")
        .map(|words| {
            words
                .iter()
                .filter_map(|w| w.replace('_', "").parse().ok())
                .collect()
        })
        .unwrap_or_else(|| DEFAULT_SIZES.to_vec())
}

fn bench_entries(c: &mut Criterion, entries: &[Entry], value_type: &str) {
    let wanted = list_from_env("HANDLEKIT_BENCH_CONTAINERS");
    for workload in Workload::all() {
        let mut group = c.benchmark_group(format!("{}/{value_type}", workload.name()));
        group.sample_size(20);
        group.warm_up_time(Duration::from_millis(300));
        group.measurement_time(Duration::from_secs(2));
        for &n in &sizes() {
            group.throughput(Throughput::Elements(n as u64));
            for entry in entries {
                if !entry.runs(workload) {
                    continue;
                }
                if let Some(words) = &wanted
                    && !words.iter().any(|w| entry.container.contains(w.as_str()))
                {
                    continue;
                }
                let run = entry.run;
                group.bench_function(BenchmarkId::new(entry.container, n), |b| {
                    b.iter_custom(|iterations| {
                        let mut rng = Rng::new(SEED);
                        (0..iterations).map(|_| run(workload, n, &mut rng).0).sum()
                    });
                });
            }
        }
        group.finish();
    }
}

fn u64_values(c: &mut Criterion) {
    bench_entries(c, &entries_for::<u64>(), u64::NAME);
}

fn blob_values(c: &mut Criterion) {
    bench_entries(c, &entries_for::<Blob64>(), Blob64::NAME);
}

criterion_group!(benches, u64_values, blob_values);
criterion_main!(benches);
