//! How fast can any `for` loop over `(key, &value)` items with an opaque
//! body be, next to the same loop over a `Vec`'s `(index, &value)`?
//!
//! A generational key carries its slot's generation, which the loop must
//! load and store beside the index; a `Vec`'s index is a counter. This
//! example times, side by side in one process, the `for` loops over
//! `u64` values that the runner's `iter.bb.for.full` cells compare:
//!
//! - `Vec` `iter().enumerate()`: two stores an item (index, reference);
//! - the floor for a split 64-bit key, written by hand over a `Vec` and a
//!   parallel array of generations: a load and three stores an item (the
//!   key's two 32-bit halves, as [`Id`] keeps them, and the reference);
//! - the floor for a key merged into one 64-bit word: a load, a shift and
//!   an or, two stores;
//! - `IdTable<u64>` (`Id`) and `IdTable<u64, Id32>` `iter()`, and the
//!   same loop over a `Pool<u64>` and a `Hive<u64>` (stable addresses, the
//!   storage in blocks).
//!
//! ```sh
//! cargo run --release -p handlekit-bench --example keyed_floor
//! # the same with every loop starting a 64-byte line, so that no loop
//! # straddles one (code placement held still):
//! RUSTFLAGS="-C llvm-args=-align-loops=64" cargo run --release \
//!     -p handlekit-bench --example keyed_floor --target-dir target/aligned
//! ```
//!
//! Each figure is the median of 31 timed passes of ns per item; the
//! ratios are to the `Vec` loop of the same size.
//!
//! What it showed on the development machine (AMD EPYC, two stores a
//! cycle), loops aligned: the `Vec` loop takes one cycle an item (0.31
//! ns), the split-key floor and `IdTable<u64>` 1.5 cycles (0.46 ns, 1.5×),
//! the merged-key floor 0.50 ns (1.64×: one store fewer, two instructions
//! more). So no loop that hands out a 64-bit generational key reaches 1.1×
//! the `Vec` loop here, and `IdTable`'s is at the floor. In a default
//! build a loop that straddles a 64-byte line of code takes two cycles an
//! item, whichever loop it is (this example's own `Vec` loop did so in one
//! build); that is the runner's 2.0× for `iter.bb.for.full`.
//!
//! `Pool` and `Hive`, loops aligned, 5 runs of each binary alternated
//! (ratio to `IdTable<Id>` in the same run, median [range], 1k / 100k):
//! at f4829a9, where a refill takes no slot, `Pool` 1.00 [1.00–1.05] /
//! 1.02 [0.95–1.07], `Hive` 1.07 [1.00–1.09] / 1.09 [1.04–1.15]; with the
//! library of 402ce25 (this example's loops), `Pool` 1.34 [1.22–1.43] /
//! 1.29 [1.11–1.35], `Hive` 1.25 [1.19–1.45] / 1.35 [0.68–1.46].

use std::hint::black_box;
use std::time::Instant;

use handlekit::{Hive, Id, Id32, IdTable, Key, Pool};
use handlekit_bench::workloads::Sink;

/// A key laid out as [`Id`] is: index, then generation, 32 bits each.
#[derive(Clone, Copy)]
#[repr(C)]
struct SplitKey {
    index: u32,
    generation: u32,
}

#[inline(never)]
fn vec_loop(values: &[u64]) {
    let mut sink = Sink::new();
    for item in values.iter().enumerate() {
        sink.take(item);
    }
}

#[inline(never)]
fn split_floor(values: &[u64], generations: &[u32]) {
    let mut sink = Sink::new();
    for (index, (value, &generation)) in values.iter().zip(generations).enumerate() {
        let key = SplitKey {
            index: index as u32,
            generation,
        };
        sink.take((key, value));
    }
}

#[inline(never)]
fn merged_floor(values: &[u64], generations: &[u32]) {
    let mut sink = Sink::new();
    for (index, (value, &generation)) in values.iter().zip(generations).enumerate() {
        let key = (u64::from(generation) << 32) | index as u64;
        sink.take((key, value));
    }
}

/// A container's keyed `for` loop, one copy per container: the iterator is
/// made inside the loop's function, as a user's loop makes it.
#[inline(never)]
fn table_loop<'a, C, I: Iterator>(table: &'a C, iter: impl FnOnce(&'a C) -> I) {
    let mut sink = Sink::new();
    for item in iter(table) {
        sink.take(item);
    }
}

/// ns per item of `pass` over `n` items: the median of 31 timed passes,
/// each repeated until it has run for about a millisecond.
fn time_per_item(n: usize, mut pass: impl FnMut()) -> f64 {
    let reps = (1_000_000 / n).max(1);
    for _ in 0..reps {
        pass();
    }
    let mut samples: Vec<f64> = (0..31)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..reps {
                pass();
            }
            start.elapsed().as_nanos() as f64 / (reps * n) as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    println!(
        "| N | Vec | split key floor | merged key floor | IdTable<Id> | IdTable<Id32> | Pool | Hive |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for n in [1_000usize, 100_000] {
        let values: Vec<u64> = (0..n as u64).collect();
        let generations: Vec<u32> = vec![1; n];
        let table: IdTable<u64> = values.iter().copied().collect();
        let table32: IdTable<u64, Id32> = values.iter().copied().collect();
        let pool: Pool<u64> = values.iter().copied().collect();
        let hive: Hive<u64> = values.iter().copied().collect();
        assert_eq!((table.len(), pool.len(), hive.len()), (n, n, n));
        assert!(table.keys().all(|key: Id| key.generation() == 1));
        // Rounds of the loops, one after another, so that a slow stretch
        // of the shared machine falls on every loop alike.
        let mut figures = [[0.0f64; 7]; 3];
        for round in &mut figures {
            round[0] = time_per_item(n, || vec_loop(black_box(&values)));
            round[1] = time_per_item(n, || split_floor(black_box(&values), &generations));
            round[2] = time_per_item(n, || merged_floor(black_box(&values), &generations));
            round[3] = time_per_item(n, || table_loop(black_box(&table), IdTable::iter));
            round[4] = time_per_item(n, || table_loop(black_box(&table32), IdTable::iter));
            round[5] = time_per_item(n, || table_loop(black_box(&pool), Pool::iter));
            round[6] = time_per_item(n, || table_loop(black_box(&hive), Hive::iter));
        }
        let median = |column: usize| {
            let mut of: Vec<f64> = figures.iter().map(|round| round[column]).collect();
            of.sort_by(f64::total_cmp);
            of[1]
        };
        let vec = median(0);
        let cell =
            |column: usize| format!("{:.2} ns ({:.2}×)", median(column), median(column) / vec);
        let cells: Vec<String> = (1..7).map(cell).collect();
        println!("| {n} | {vec:.2} ns | {} |", cells.join(" | "));
    }
}
