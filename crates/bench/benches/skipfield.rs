//! Skipping holes while iterating: a jump-counting skipfield (the scheme of
//! `plf::hive` / `std::hive`) against occupancy bit masks, over the same
//! slots (`handlekit_bench::skipfield`), and a real `handlekit::Hive` with
//! the same slots removed. Each contestant sums the live values of `n`
//! slots (live or erased) in blocks of 8192 slots; throughput is per slot.
//!
//! ```text
//! cargo bench -p handlekit-bench --bench skipfield
//! ```

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use handlekit::Hive;
use handlekit_bench::containers::{Blob64, Value};
use handlekit_bench::skipfield::{
    split_blocks, LiveSlots, MaskBlock, Pattern, SkipfieldBlock, BLOCK_SLOTS,
};

const SIZES: [usize; 2] = [100_000, 1_000_000];
const SEED: u64 = 0x5C1F_F1E1D;

/// A hive holding `make(i)` for every live `i`, built by inserting all `n`
/// values into an empty hive and removing the erased ones by key.
/// The sum of the weights of every live value in `blocks`.
fn sum_blocks<V: Value, B: LiveSlots<V>>(blocks: &[B]) -> u64 {
    blocks.iter().fold(0u64, |acc, block| {
        block.fold(acc, |a, v| a.wrapping_add(v.weight()))
    })
}

fn hive_with<V: Value>(live: &[bool]) -> Hive<V> {
    let mut hive = Hive::new();
    let keys: Vec<_> = (0..live.len() as u64)
        .map(|i| hive.insert(V::make(i)))
        .collect();
    for (key, _) in keys.iter().zip(live).filter(|&(_, &l)| !l) {
        hive.remove(*key).expect("a live key");
    }
    hive
}

fn bench_type<V: Value>(c: &mut Criterion) {
    for n in SIZES {
        let label = if n >= 1_000_000 {
            format!("{}M", n / 1_000_000)
        } else {
            format!("{}k", n / 1000)
        };
        let mut group = c.benchmark_group(format!("skipfield_{}_{label}", V::NAME));
        group.sample_size(20);
        group.warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(2));
        group.throughput(Throughput::Elements(n as u64));
        for pattern in Pattern::ALL {
            let live = pattern.generate(n, SEED);
            let make = |i: usize| V::make(i as u64);
            let skip = split_blocks(&live, BLOCK_SLOTS, make, SkipfieldBlock::new);
            let masks = split_blocks(&live, BLOCK_SLOTS, make, MaskBlock::new);
            let hive = hive_with::<V>(&live);

            // All three hold the same live values.
            let want: u64 = (0..n as u64)
                .filter(|&i| live[i as usize])
                .map(|i| V::make(i).weight())
                .fold(0, u64::wrapping_add);
            let sum_skip = sum_blocks(&skip);
            let sum_masks = sum_blocks(&masks);
            let sum_hive = hive.values().fold(0u64, |a, v| a.wrapping_add(v.weight()));
            assert_eq!((sum_skip, sum_masks, sum_hive), (want, want, want));
            assert_eq!(hive.len(), live.iter().filter(|&&l| l).count());

            let name = pattern.name();
            group.bench_function(format!("{name}/skipfield"), |b| {
                b.iter(|| black_box(sum_blocks(black_box(&skip))));
            });
            group.bench_function(format!("{name}/masks"), |b| {
                b.iter(|| black_box(sum_blocks(black_box(&masks))));
            });
            group.bench_function(format!("{name}/hive"), |b| {
                b.iter(|| {
                    let hive = black_box(&hive);
                    let sum = hive.values().fold(0u64, |a, v| a.wrapping_add(v.weight()));
                    black_box(sum)
                });
            });
        }
        group.finish();
    }
}

fn skipfield(c: &mut Criterion) {
    bench_type::<u64>(c);
    bench_type::<Blob64>(c);
}

criterion_group!(benches, skipfield);
criterion_main!(benches);
