//! Criterion benchmarks: `IdTable` (keyed by `Id` and by `Id32`) against
//! slotmap's `SlotMap` (`DefaultKey`), all holding `u64` values.
//!
//! Every container runs the same generic workload code through the small
//! [`Container`] trait, as hashbrown and smallvec do for their peers.
//!
//! Workloads, each at every size in [`SIZES`]:
//!
//! - `insert`: `N` values into an empty container, built fresh for each
//!   iteration (`iter_batched`, so building and dropping are not timed).
//! - `remove`: all `N` values of a full container, in a seeded random order.
//! - `get`: `N` lookups of live keys drawn at random (seeded); each value is
//!   read and passed to `black_box`.
//! - `iter_full`: the sum of all `N` values.
//! - `iter_half`: the sum after a seeded random half of the values was
//!   removed (`N / 2` live values among `N` slots).
//!
//! Throughput is `Elements(N)` throughout, so criterion reports elements per
//! second; for `iter_half` that is per slot of the original `N`.
//!
//! Run: `cargo bench -p handlekit-bench --bench id_table`. To change the
//! sizes without editing [`SIZES`], set `HANDLEKIT_BENCH_SIZES`, e.g.
//! `HANDLEKIT_BENCH_SIZES=1000,100000`.

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{
    criterion_main, BatchSize, BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use handlekit::{Id, Id32, IdTable};
use slotmap::{DefaultKey, SlotMap};

/// The container sizes `N` every workload runs at.
const SIZES: &[usize] = &[1_000, 100_000, 1_000_000];

/// At and above this size, criterion samples in flat mode (the same
/// iteration count per sample), which keeps long iterations in budget.
const FLAT_SAMPLING_FROM: usize = 100_000;

/// The seed of every random order and choice.
const SEED: u64 = 0x5EED_1D7A_B1E5_0001;

/// The operations the workloads need, implemented for each container.
trait Container {
    /// The container's key.
    type Key: Copy;
    /// The name in benchmark ids.
    const NAME: &'static str;
    /// An empty container.
    fn new() -> Self;
    /// Inserts `value` and returns its key.
    fn insert(&mut self, value: u64) -> Self::Key;
    /// The value for `key`, if live.
    fn get(&self, key: Self::Key) -> Option<&u64>;
    /// Removes and returns the value for `key`, if live.
    fn remove(&mut self, key: Self::Key) -> Option<u64>;
    /// The number of live values.
    fn len(&self) -> usize;
    /// The wrapping sum of all live values, on the container's fastest
    /// iteration path.
    fn sum(&self) -> u64;
}

impl Container for IdTable<u64, Id> {
    type Key = Id;
    const NAME: &'static str = "IdTable-Id";

    #[inline]
    fn new() -> Self {
        IdTable::default()
    }

    #[inline]
    fn insert(&mut self, value: u64) -> Id {
        IdTable::insert(self, value)
    }

    #[inline]
    fn get(&self, key: Id) -> Option<&u64> {
        IdTable::get(self, key)
    }

    #[inline]
    fn remove(&mut self, key: Id) -> Option<u64> {
        IdTable::remove(self, key)
    }

    #[inline]
    fn len(&self) -> usize {
        IdTable::len(self)
    }

    #[inline]
    fn sum(&self) -> u64 {
        self.values().copied().fold(0u64, u64::wrapping_add)
    }
}

impl Container for IdTable<u64, Id32> {
    type Key = Id32;
    const NAME: &'static str = "IdTable-Id32";

    #[inline]
    fn new() -> Self {
        IdTable::default()
    }

    #[inline]
    fn insert(&mut self, value: u64) -> Id32 {
        IdTable::insert(self, value)
    }

    #[inline]
    fn get(&self, key: Id32) -> Option<&u64> {
        IdTable::get(self, key)
    }

    #[inline]
    fn remove(&mut self, key: Id32) -> Option<u64> {
        IdTable::remove(self, key)
    }

    #[inline]
    fn len(&self) -> usize {
        IdTable::len(self)
    }

    #[inline]
    fn sum(&self) -> u64 {
        self.values().copied().fold(0u64, u64::wrapping_add)
    }
}

impl Container for SlotMap<DefaultKey, u64> {
    type Key = DefaultKey;
    const NAME: &'static str = "SlotMap";

    #[inline]
    fn new() -> Self {
        SlotMap::new()
    }

    #[inline]
    fn insert(&mut self, value: u64) -> DefaultKey {
        SlotMap::insert(self, value)
    }

    #[inline]
    fn get(&self, key: DefaultKey) -> Option<&u64> {
        SlotMap::get(self, key)
    }

    #[inline]
    fn remove(&mut self, key: DefaultKey) -> Option<u64> {
        SlotMap::remove(self, key)
    }

    #[inline]
    fn len(&self) -> usize {
        SlotMap::len(self)
    }

    #[inline]
    fn sum(&self) -> u64 {
        self.values().copied().fold(0u64, u64::wrapping_add)
    }
}

/// xorshift64*: a tiny seeded generator, so every container sees the same
/// random orders and choices.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..bound` (multiply-high; the bias is negligible here).
    fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// A fresh container holding `0..n`, and its keys in insertion order.
fn filled<C: Container>(n: usize) -> (C, Vec<C::Key>) {
    let mut c = C::new();
    let keys = (0..n as u64).map(|v| c.insert(v)).collect();
    (c, keys)
}

/// The keys of `filled::<C>(n)`, shuffled with the shared seed.
fn shuffled_keys<C: Container>(n: usize) -> Vec<C::Key> {
    let (_, mut keys) = filled::<C>(n);
    Rng::new(SEED).shuffle(&mut keys);
    keys
}

fn bench_insert<C: Container>(group: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    group.bench_with_input(BenchmarkId::new(C::NAME, n), &n, |b, &n| {
        b.iter_batched(
            C::new,
            |mut c| {
                for v in 0..n as u64 {
                    black_box(c.insert(v));
                }
                c
            },
            BatchSize::LargeInput,
        );
    });
}

fn bench_remove<C: Container>(group: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    let order = shuffled_keys::<C>(n);
    // Insertion is deterministic, so every fresh container issues the same
    // keys; check once that `order` names every value of one.
    let (mut check, _) = filled::<C>(n);
    assert!(order.iter().all(|&k| check.remove(k).is_some()));
    assert_eq!(check.len(), 0);
    group.bench_with_input(BenchmarkId::new(C::NAME, n), &n, |b, &n| {
        b.iter_batched(
            || filled::<C>(n).0,
            |mut c| {
                for &k in &order {
                    black_box(c.remove(k));
                }
                c
            },
            BatchSize::LargeInput,
        );
    });
}

fn bench_get<C: Container>(group: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    let (c, keys) = filled::<C>(n);
    let mut rng = Rng::new(SEED ^ 0x9E37_79B9_7F4A_7C15);
    let lookups: Vec<C::Key> = (0..n).map(|_| keys[rng.below(n)]).collect();
    group.bench_with_input(BenchmarkId::new(C::NAME, n), &n, |b, _| {
        b.iter(|| {
            for &k in &lookups {
                black_box(c.get(k).copied());
            }
        });
    });
}

fn bench_iter_full<C: Container>(group: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    let (c, _) = filled::<C>(n);
    let expected = (0..n as u64).fold(0u64, u64::wrapping_add);
    assert_eq!(c.sum(), expected);
    group.bench_with_input(BenchmarkId::new(C::NAME, n), &n, |b, _| {
        b.iter(|| black_box(black_box(&c).sum()));
    });
}

fn bench_iter_half<C: Container>(group: &mut BenchmarkGroup<'_, WallTime>, n: usize) {
    let (mut c, _) = filled::<C>(n);
    let order = shuffled_keys::<C>(n);
    for &k in &order[..n / 2] {
        c.remove(k);
    }
    assert_eq!(c.len(), n - n / 2);
    group.bench_with_input(BenchmarkId::new(C::NAME, n), &n, |b, _| {
        b.iter(|| black_box(black_box(&c).sum()));
    });
}

/// The sizes to run: `HANDLEKIT_BENCH_SIZES` (comma-separated) or [`SIZES`].
fn sizes() -> Vec<usize> {
    match std::env::var("HANDLEKIT_BENCH_SIZES") {
        Ok(list) => list
            .split(',')
            .map(|s| {
                s.trim()
                    .replace('_', "")
                    .parse()
                    .expect("HANDLEKIT_BENCH_SIZES: comma-separated sizes")
            })
            .collect(),
        Err(_) => SIZES.to_vec(),
    }
}

/// Runs one workload for every size, the three containers back to back.
macro_rules! workload {
    ($c:expr, $name:literal, $bench:ident) => {{
        let mut group = $c.benchmark_group($name);
        for n in sizes() {
            group.throughput(Throughput::Elements(n as u64));
            group.sampling_mode(if n >= FLAT_SAMPLING_FROM {
                SamplingMode::Flat
            } else {
                SamplingMode::Auto
            });
            $bench::<IdTable<u64, Id>>(&mut group, n);
            $bench::<IdTable<u64, Id32>>(&mut group, n);
            $bench::<SlotMap<DefaultKey, u64>>(&mut group, n);
        }
        group.finish();
    }};
}

fn id_table(c: &mut Criterion) {
    workload!(c, "insert", bench_insert);
    workload!(c, "remove", bench_remove);
    workload!(c, "get", bench_get);
    workload!(c, "iter_full", bench_iter_full);
    workload!(c, "iter_half", bench_iter_half);
}

/// The criterion group, in a private module: the `pub fn` that
/// `criterion_group!` generates is then not reachable, so it needs no docs.
mod harness {
    use std::time::Duration;

    use criterion::{criterion_group, Criterion};

    criterion_group! {
        name = benches;
        config = Criterion::default()
            .sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        targets = super::id_table
    }
}

criterion_main!(harness::benches);
