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

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use handlekit::{Hive, IdTable, PackedTable, Pool};
use handlekit_bench::containers::Container;
use rayon::prelude::*;

const SLOTS: usize = 1_000_000;

/// Whether slot `i` stays live at `percent` occupancy: a multiplicative
/// hash, so the holes are uniform and the same for every container.
fn live(i: usize, percent: u64) -> bool {
    ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % 100 < percent
}

/// A container of `SLOTS` values, filled and then thinned to `percent`.
fn build<C: Container<u64>>(percent: u64) -> C {
    let mut container = C::new();
    let keys: Vec<C::Key> = (0..SLOTS as u64).map(|v| container.insert(v)).collect();
    for (i, &key) in keys.iter().enumerate() {
        if !live(i, percent) {
            container.remove(key).expect("a live key");
        }
    }
    container
}

fn parallel(c: &mut Criterion) {
    for percent in [5u64, 50, 100] {
        let values: Vec<u64> = (0..SLOTS as u64)
            .filter(|&v| live(v as usize, percent))
            .collect();
        let idtable: IdTable<u64> = build(percent);
        let packed: PackedTable<u64> = build(percent);
        let pool: Pool<u64> = build(percent);
        let hive: Hive<u64> = build(percent);
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
        let mut pair = |name: &str, seq: &dyn Fn() -> u64, par: &dyn Fn() -> u64| {
            group.bench_function(format!("{name}/seq"), |b| b.iter(seq));
            group.bench_function(format!("{name}/par"), |b| b.iter(par));
        };
        pair("Vec", &|| values.iter().sum(), &|| values.par_iter().sum());
        pair("IdTable", &|| idtable.values().sum(), &|| {
            idtable.par_iter().map(|(_, v)| *v).sum()
        });
        pair("PackedTable", &|| packed.values().sum(), &|| {
            packed.par_iter().map(|(_, v)| *v).sum()
        });
        pair("Pool", &|| pool.values().sum(), &|| {
            pool.par_iter().map(|(_, v)| *v).sum()
        });
        pair("Hive", &|| hive.values().sum(), &|| {
            hive.par_iter().map(|(_, v)| *v).sum()
        });
        group.finish();
    }
}

criterion_group!(benches, parallel);
criterion_main!(benches);
