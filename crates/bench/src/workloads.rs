//! The workloads, written once over [`Container`], and the timing loop.

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::containers::{Container, Value};

/// What a cell measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    Insert,
    Reinsert,
    Remove,
    Get,
    GetStale,
    IterFull,
    IterHalf,
    IterSparse,
    IterKeyedFull,
    IterKeyedHalf,
    IterKeyedSparse,
    Churn,
    Mixed,
}

impl Workload {
    pub const ALL: [Workload; 13] = [
        Workload::Insert,
        Workload::Reinsert,
        Workload::Remove,
        Workload::Get,
        Workload::GetStale,
        Workload::IterFull,
        Workload::IterHalf,
        Workload::IterSparse,
        Workload::IterKeyedFull,
        Workload::IterKeyedHalf,
        Workload::IterKeyedSparse,
        Workload::Churn,
        Workload::Mixed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::Insert => "insert",
            Workload::Reinsert => "reinsert",
            Workload::Remove => "remove",
            Workload::Get => "get",
            Workload::GetStale => "get_stale",
            Workload::IterFull => "iter_full",
            Workload::IterHalf => "iter_half",
            Workload::IterSparse => "iter_sparse",
            Workload::IterKeyedFull => "iter_keyed_full",
            Workload::IterKeyedHalf => "iter_keyed_half",
            Workload::IterKeyedSparse => "iter_keyed_sparse",
            Workload::Churn => "churn",
            Workload::Mixed => "mixed",
        }
    }

    /// What one operation is, for the report.
    pub fn unit(self) -> &'static str {
        match self {
            Workload::Insert | Workload::Reinsert => "ns per insert",
            Workload::Remove => "ns per remove",
            Workload::Get | Workload::GetStale => "ns per lookup",
            Workload::IterFull
            | Workload::IterHalf
            | Workload::IterSparse
            | Workload::IterKeyedFull
            | Workload::IterKeyedHalf
            | Workload::IterKeyedSparse => "ns per live element",
            Workload::Churn => "ns per remove+insert step",
            Workload::Mixed => "ns per operation (80% get, 10% insert, 10% remove)",
        }
    }

    /// Whether a container that cannot remove can run this.
    pub fn needs_remove(self) -> bool {
        !matches!(
            self,
            Workload::Insert | Workload::Get | Workload::IterFull | Workload::IterKeyedFull
        )
    }
}

/// A small, fast, seeded generator (SplitMix64), so runs repeat.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound` (`bound > 0`).
    #[inline]
    pub fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// One timed section: how long it took and how many operations it did.
#[derive(Clone, Copy, Default)]
pub(crate) struct Timed {
    pub(crate) elapsed: Duration,
    pub(crate) ops: u64,
}

/// Inserts `n` values and returns the container and the keys in order.
fn fill<V: Value, C: Container<V>>(n: usize) -> (C, Vec<C::Key>) {
    let mut container = C::new();
    let keys = (0..n as u64)
        .map(|i| container.insert(V::make(i)))
        .collect();
    (container, keys)
}

/// Removes a random `fraction` of `keys` from `container`, and returns the
/// keys that stay live.
fn thin_out<V: Value, C: Container<V>>(
    container: &mut C,
    mut keys: Vec<C::Key>,
    fraction: f64,
    rng: &mut Rng,
) -> Vec<C::Key> {
    rng.shuffle(&mut keys);
    let remove = (keys.len() as f64 * fraction) as usize;
    for key in keys.drain(..remove) {
        container.remove(key);
    }
    keys
}

pub(crate) fn time(ops: usize, section: impl FnOnce()) -> Timed {
    let start = Instant::now();
    section();
    Timed {
        elapsed: start.elapsed(),
        ops: ops as u64,
    }
}

/// The shortest stretch [`time_passes`] times with one pair of clock
/// reads. Reading the clock costs tens of nanoseconds, which is a third of
/// a sparse pass over 1000 slots (50 live values): timed one by one, such
/// passes measured the clock as much as the container, and every
/// container's cell moved towards the same constant.
const MIN_TIMED: Duration = Duration::from_micros(5);

/// Times a section that leaves the container unchanged (a lookup or
/// iteration pass), repeating it on the same setup until the budget's time
/// is reached. Rebuilding the container for every pass would make setup,
/// not measurement, the cost of a cell: a sparse iteration pass over 1M
/// slots takes well under a millisecond, its setup hundreds.
///
/// Passes shorter than [`MIN_TIMED`] are timed in groups, doubling the
/// group until one takes that long.
pub(crate) fn time_passes(ops: usize, budget: Budget, mut section: impl FnMut()) -> Timed {
    let mut total = Timed::default();
    let mut passes = 0;
    let mut group = 1u32;
    while passes < budget.max_rounds && (passes == 0 || total.elapsed < budget.min_time) {
        let this_group = group.min(budget.max_rounds - passes);
        let start = Instant::now();
        for _ in 0..this_group {
            section();
        }
        let elapsed = start.elapsed();
        total.elapsed += elapsed;
        total.ops += ops as u64 * u64::from(this_group);
        passes += this_group;
        if elapsed < MIN_TIMED {
            group = group.saturating_mul(2);
        }
    }
    total
}

/// Runs the measured section of `workload` once, with its own setup.
/// Sections that leave the container unchanged repeat within the setup
/// until `budget` is reached (see [`time_passes`]).
fn run_once<V: Value, C: Container<V>>(
    workload: Workload,
    n: usize,
    rng: &mut Rng,
    budget: Budget,
) -> Timed {
    match workload {
        Workload::Insert => {
            let mut container = C::new();
            let timed = time(n, || {
                for i in 0..n as u64 {
                    black_box(container.insert(V::make(i)));
                }
            });
            drop(black_box(container));
            timed
        }
        Workload::Reinsert => {
            let (mut container, mut keys) = fill::<V, C>(n);
            rng.shuffle(&mut keys);
            for key in keys {
                container.remove(key);
            }
            time(n, || {
                for i in 0..n as u64 {
                    black_box(container.insert(V::make(i)));
                }
            })
        }
        Workload::Remove => {
            let (mut container, mut keys) = fill::<V, C>(n);
            rng.shuffle(&mut keys);
            time(n, || {
                for &key in &keys {
                    black_box(container.remove(key));
                }
            })
        }
        Workload::Get => {
            let (container, keys) = fill::<V, C>(n);
            let lookups: Vec<C::Key> = (0..n).map(|_| keys[rng.below(n)]).collect();
            time_passes(n, budget, || {
                let mut sum = 0u64;
                for &key in &lookups {
                    sum = sum.wrapping_add(container.get(key).map_or(0, Value::weight));
                }
                black_box(sum);
            })
        }
        Workload::GetStale => {
            let (mut container, mut stale) = fill::<V, C>(n);
            rng.shuffle(&mut stale);
            for &key in &stale {
                container.remove(key);
            }
            // Refill, so the stale keys' slots hold new values.
            for i in 0..n as u64 {
                container.insert(V::make(i));
            }
            rng.shuffle(&mut stale);
            let mut found = 0usize;
            let timed = time_passes(n, budget, || {
                for &key in &stale {
                    found += usize::from(container.get(key).is_some());
                }
                black_box(found);
            });
            assert!(
                found == 0 || C::FAMILY == crate::containers::Family::Plain,
                "{} resolved {found} stale keys",
                C::NAME
            );
            timed
        }
        Workload::IterFull | Workload::IterKeyedFull => {
            let (container, _keys) = fill::<V, C>(n);
            let keyed = workload == Workload::IterKeyedFull;
            time_passes(n, budget, || {
                black_box(if keyed {
                    container.keyed_sum()
                } else {
                    container.sum()
                });
            })
        }
        Workload::IterHalf
        | Workload::IterSparse
        | Workload::IterKeyedHalf
        | Workload::IterKeyedSparse => {
            let fraction = if matches!(workload, Workload::IterHalf | Workload::IterKeyedHalf) {
                0.5
            } else {
                0.95
            };
            let keyed = matches!(
                workload,
                Workload::IterKeyedHalf | Workload::IterKeyedSparse
            );
            let (mut container, keys) = fill::<V, C>(n);
            let live = thin_out(&mut container, keys, fraction, rng);
            time_passes(live.len().max(1), budget, || {
                black_box(if keyed {
                    container.keyed_sum()
                } else {
                    container.sum()
                });
            })
        }
        Workload::Churn => {
            let (mut container, mut keys) = fill::<V, C>(n);
            let picks: Vec<usize> = (0..n).map(|_| rng.below(n)).collect();
            time(n, || {
                for (step, &pick) in picks.iter().enumerate() {
                    let key = keys[pick];
                    black_box(container.remove(key));
                    keys[pick] = container.insert(V::make(step as u64));
                }
            })
        }
        Workload::Mixed => {
            let (mut container, mut keys) = fill::<V, C>(n);
            let script: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
            time(n, || {
                let mut sum = 0u64;
                for &roll in &script {
                    let pick = ((u128::from(roll >> 8) * keys.len() as u128) >> 56) as usize;
                    match roll % 10 {
                        0 => keys.push(container.insert(V::make(roll))),
                        1 if !keys.is_empty() => {
                            let key = keys.swap_remove(pick);
                            black_box(container.remove(key));
                        }
                        _ if !keys.is_empty() => {
                            let key = keys[pick];
                            sum = sum.wrapping_add(container.get(key).map_or(0, Value::weight));
                        }
                        _ => {}
                    }
                }
                black_box(sum);
            })
        }
    }
}

/// One timed run of `workload` on container `C`, with its own setup:
/// the time of the measured section and the operations it did.
pub fn timed_run<V: Value, C: Container<V>>(
    workload: Workload,
    n: usize,
    rng: &mut Rng,
) -> (Duration, u64) {
    let one_pass = Budget {
        min_time: Duration::ZERO,
        max_rounds: 1,
    };
    let timed = run_once::<V, C>(workload, n, rng, one_pass);
    (timed.elapsed, timed.ops)
}

/// How long to keep repeating a small workload within one sample.
#[derive(Clone, Copy)]
pub struct Budget {
    /// Repeat the workload until its timed sections add up to this.
    pub min_time: Duration,
    /// But never more than this many times.
    pub max_rounds: u32,
}

/// One sample of `workload` on container `C`: nanoseconds per operation.
/// Small sizes repeat the workload (each time with fresh setup) until the
/// timed sections reach the budget.
pub fn sample<V: Value, C: Container<V>>(
    workload: Workload,
    n: usize,
    seed: u64,
    budget: Budget,
) -> f64 {
    let mut rng = Rng::new(seed);
    let mut total = Timed::default();
    let mut rounds = 0;
    while rounds < budget.max_rounds && (rounds == 0 || total.elapsed < budget.min_time) {
        let timed = run_once::<V, C>(workload, n, &mut rng, budget);
        total.elapsed += timed.elapsed;
        total.ops += timed.ops;
        rounds += 1;
    }
    total.elapsed.as_nanos() as f64 / total.ops.max(1) as f64
}

/// Bytes the container holds per live value after `n` insertions.
pub fn bytes_per_value<V: Value, C: Container<V>>(n: usize) -> f64 {
    let before = crate::alloc::live_bytes();
    let mut container = C::new();
    for i in 0..n as u64 {
        container.insert(V::make(i));
    }
    let after = crate::alloc::live_bytes();
    assert_eq!(container.len(), n);
    drop(black_box(container));
    after.saturating_sub(before) as f64 / n.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_passes_groups_short_passes_and_counts_every_one() {
        let budget = Budget {
            min_time: Duration::from_secs(3600),
            max_rounds: 1000,
        };
        let mut runs = 0u32;
        let timed = time_passes(7, budget, || runs += 1);
        // A pass that takes nanoseconds is grouped, but the rounds cap is
        // still exact and every pass is counted.
        assert_eq!(runs, 1000);
        assert_eq!(timed.ops, 7 * 1000);
    }

    #[test]
    fn time_passes_stops_at_the_time_budget() {
        let budget = Budget {
            min_time: Duration::from_micros(200),
            max_rounds: u32::MAX,
        };
        let mut runs = 0u64;
        let timed = time_passes(1, budget, || {
            let start = Instant::now();
            while start.elapsed() < Duration::from_micros(50) {}
            runs += 1;
        });
        // Passes of at least 50 us are never grouped (they exceed
        // MIN_TIMED), so the loop stops at the first pass that reaches the
        // budget: after at most four.
        assert!(timed.elapsed >= budget.min_time);
        assert_eq!(timed.ops, runs);
        assert!((1..=4).contains(&runs), "{runs} passes");
    }
}
