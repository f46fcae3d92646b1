//! Criterion benchmarks of the secondary maps against slotmap's: attaching
//! a `u64` to every key of a primary table, then looking it up, summing it
//! and removing it.
//!
//! ```text
//! cargo bench -p handlekit-bench --bench secondary
//! cargo bench -p handlekit-bench --bench secondary -- 'get/'
//! HANDLEKIT_BENCH_SIZES=1000,100000 cargo bench -p handlekit-bench --bench secondary
//! ```
//!
//! Benchmark ids are `<operation>/<map>/<N>`, where N is the number of keys
//! the primary table issued. Every map gets all N keys:
//! - `insert`: attach a value to each key, in the order the keys were
//!   issued, into an empty map;
//! - `get`: N lookups of random keys;
//! - `remove`: detach every key, in random order;
//! - `iterate`: sum all N values.
//!
//! Setup (the primary table, the map, the shuffled keys) is not timed, nor
//! is dropping the map after `insert` and `remove`.

// `criterion_group!` generates an undocumented function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BenchmarkGroup, BenchmarkId, Criterion, Throughput,
};
use handlekit_bench::workloads::Rng;

const DEFAULT_SIZES: &[usize] = &[1_000, 100_000];
const SEED: u64 = 0x5EC0_DA27;

fn sizes() -> Vec<usize> {
    std::env::var("HANDLEKIT_BENCH_SIZES")
        .ok()
        .map(|text| {
            text.split(',')
                .filter_map(|w| w.trim().replace('_', "").parse().ok())
                .collect()
        })
        .unwrap_or_else(|| DEFAULT_SIZES.to_vec())
}

/// A secondary map as the benchmarks see it.
trait Secondary: Sized {
    type Key: Copy;
    const NAME: &'static str;
    /// `n` keys issued by a primary table of the matching kind.
    fn primary_keys(n: usize) -> Vec<Self::Key>;
    fn new() -> Self;
    fn insert(&mut self, key: Self::Key, value: u64);
    fn get(&self, key: Self::Key) -> Option<&u64>;
    fn remove(&mut self, key: Self::Key) -> Option<u64>;
    fn sum(&self) -> u64;
}

macro_rules! secondary {
    ($map:ty, $key:ty, $name:literal, $primary:expr) => {
        impl Secondary for $map {
            type Key = $key;
            const NAME: &'static str = $name;
            fn primary_keys(n: usize) -> Vec<$key> {
                let mut primary = $primary;
                (0..n).map(|_| primary.insert(())).collect()
            }
            fn new() -> Self {
                <$map>::new()
            }
            #[inline(always)]
            fn insert(&mut self, key: $key, value: u64) {
                black_box(<$map>::insert(self, key, value));
            }
            #[inline(always)]
            fn get(&self, key: $key) -> Option<&u64> {
                <$map>::get(self, key)
            }
            #[inline(always)]
            fn remove(&mut self, key: $key) -> Option<u64> {
                <$map>::remove(self, key)
            }
            #[inline(always)]
            fn sum(&self) -> u64 {
                self.values().fold(0, |acc, v| acc.wrapping_add(*v))
            }
        }
    };
}

secondary!(
    handlekit::SecondaryMap<handlekit::Id, u64>,
    handlekit::Id,
    "handlekit::SecondaryMap",
    handlekit::IdTable::<()>::new()
);
secondary!(
    handlekit::SparseSecondaryMap<handlekit::Id, u64>,
    handlekit::Id,
    "handlekit::SparseSecondaryMap",
    handlekit::IdTable::<()>::new()
);
secondary!(
    slotmap::SecondaryMap<slotmap::DefaultKey, u64>,
    slotmap::DefaultKey,
    "slotmap::SecondaryMap",
    slotmap::SlotMap::<slotmap::DefaultKey, ()>::new()
);
secondary!(
    slotmap::SparseSecondaryMap<slotmap::DefaultKey, u64>,
    slotmap::DefaultKey,
    "slotmap::SparseSecondaryMap",
    slotmap::SlotMap::<slotmap::DefaultKey, ()>::new()
);

/// A map holding a value for every key.
fn filled<M: Secondary>(keys: &[M::Key]) -> M {
    let mut map = M::new();
    for (i, &key) in keys.iter().enumerate() {
        map.insert(key, i as u64);
    }
    map
}

fn shuffled<T: Copy>(items: &[T], seed: u64) -> Vec<T> {
    let mut items = items.to_vec();
    Rng::new(seed).shuffle(&mut items);
    items
}

/// Times `section` on fresh setup for each of `iterations`. What the
/// section returns (the map) is dropped after the clock stops: freeing
/// the map is not part of the operation measured.
fn timed<S, R>(
    iterations: u64,
    mut setup: impl FnMut() -> S,
    mut section: impl FnMut(S) -> R,
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iterations {
        let state = setup();
        let start = Instant::now();
        let result = section(state);
        total += start.elapsed();
        drop(black_box(result));
    }
    total
}

fn bench_map<M: Secondary>(group: &mut BenchmarkGroup<'_, WallTime>, operation: &str, n: usize) {
    let keys = M::primary_keys(n);
    group.throughput(Throughput::Elements(n as u64));
    let id = BenchmarkId::new(M::NAME, n);
    match operation {
        "insert" => group.bench_function(id, |b| {
            b.iter_custom(|iterations| {
                timed(iterations, M::new, |mut map| {
                    for (i, &key) in keys.iter().enumerate() {
                        map.insert(key, i as u64);
                    }
                    map
                })
            });
        }),
        "get" => {
            let map = filled::<M>(&keys);
            let mut rng = Rng::new(SEED);
            let lookups: Vec<M::Key> = (0..n).map(|_| keys[rng.below(n)]).collect();
            group.bench_function(id, |b| {
                b.iter(|| {
                    let mut sum = 0u64;
                    for &key in &lookups {
                        sum = sum.wrapping_add(map.get(key).copied().unwrap_or(0));
                    }
                    sum
                });
            })
        }
        "remove" => {
            let order = shuffled(&keys, SEED);
            group.bench_function(id, |b| {
                b.iter_custom(|iterations| {
                    timed(
                        iterations,
                        || filled::<M>(&keys),
                        |mut map| {
                            for &key in &order {
                                black_box(map.remove(key));
                            }
                            map
                        },
                    )
                });
            })
        }
        "iterate" => {
            let map = filled::<M>(&keys);
            group.bench_function(id, |b| b.iter(|| map.sum()))
        }
        _ => unreachable!("unknown operation {operation}"),
    };
}

fn secondary_maps(c: &mut Criterion) {
    for operation in ["insert", "get", "remove", "iterate"] {
        let mut group = c.benchmark_group(operation);
        group.sample_size(20);
        group.warm_up_time(Duration::from_millis(300));
        group.measurement_time(Duration::from_secs(2));
        for n in sizes() {
            let g = &mut group;
            bench_map::<handlekit::SecondaryMap<handlekit::Id, u64>>(g, operation, n);
            bench_map::<slotmap::SecondaryMap<slotmap::DefaultKey, u64>>(g, operation, n);
            bench_map::<handlekit::SparseSecondaryMap<handlekit::Id, u64>>(g, operation, n);
            bench_map::<slotmap::SparseSecondaryMap<slotmap::DefaultKey, u64>>(g, operation, n);
        }
        group.finish();
    }
}

criterion_group!(benches, secondary_maps);
criterion_main!(benches);
