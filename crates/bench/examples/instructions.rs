//! The loops of the comparison runner's write and lookup workloads, one
//! per process, for counting instructions with callgrind:
//!
//! ```sh
//! cargo build --release -p handlekit-bench --example instructions
//! valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*measured*' \
//!     target/release/examples/instructions remove IdTable 100000
//! ```
//!
//! Only the measured section (a function whose name has `measured` in it)
//! is counted, so the setup is left out; divide by N for the count per
//! operation. Workloads: `insert`, `reinsert`, `remove`, `get`,
//! `get_stale` (every key stale, its slot refilled), `churn`,
//! `values` (one pass summing the values, all live), `keyed` (one `iter()`
//! pass over (key, value) pairs), and both passes after removing half
//! (`values_half`, `keyed_half`) or 95% (`values_sparse`, `keyed_sparse`)
//! of the values at random; divide the passes by the live count. The same
//! with the prefix `for_` (`for_values`, `for_keyed_half`, ...) is a `for`
//! loop handing each item to `black_box`: the cost of `next()`; with the
//! prefix `each_` (`each_values`, `each_keyed_half`, ...) the same body
//! through `for_each`: the fold's own loop; `sum_keyed` (and
//! `sum_keyed_half`, `sum_keyed_sparse`) is a `for` loop over `iter()`
//! adding each value and its key's bits, the runner's `iter.sum.for` body.
//! Containers: `IdTable`, `IdTable32`, `LookupTable`, `PackedTable`, `Hive`,
//! `Pool`, `SlotMap`, `HopSlotMap`, `DenseSlotMap`, `thunderdome`, `slab`,
//! `pulz-arena` and `Vec` (`Vec` only for the workloads that remove nothing), over `u64`
//! or, with the suffix `64B` (`PackedTable64B`), the runner's 64-byte
//! values; `SecondaryCell` and `slotmap-SecondaryCell` (the runner's
//! secondary-map containers, which compute each insertion's key in the
//! loop); and the secondary maps `SecondaryMap` and `slotmap-SecondaryMap`,
//! over `u64` or, with the suffix `64B`, 64-byte values (`insert`: the keys
//! of a primary table in order into an empty map; `remove`: all, shuffled;
//! `get`: random keys).

use std::hint::black_box;

use handlekit_bench::containers::{Blob64, Container, Value};
use handlekit_bench::workloads::{self, Fill, Rng};

#[inline(never)]
fn measured_insert<V: Value, C: Container<V>>(n: usize) -> C {
    let mut c = C::new();
    for i in 0..n as u64 {
        black_box(c.insert(V::make(i)));
    }
    c
}

#[inline(never)]
fn measured_reinsert<V: Value, C: Container<V>>(c: &mut C, n: usize) {
    for i in 0..n as u64 {
        black_box(c.insert(V::make(i)));
    }
}

#[inline(never)]
fn measured_remove<V: Value, C: Container<V>>(c: &mut C, keys: &[C::Key]) {
    for &key in keys {
        black_box(c.remove(key));
    }
}

#[inline(never)]
fn measured_get<V: Value, C: Container<V>>(c: &C, keys: &[C::Key]) -> u64 {
    let mut sum = 0u64;
    for &key in keys {
        sum = sum.wrapping_add(c.get(key).map_or(0, Value::weight));
    }
    sum
}

#[inline(never)]
fn measured_churn<V: Value, C: Container<V>>(c: &mut C, keys: &mut [C::Key], picks: &[usize]) {
    for (step, &pick) in picks.iter().enumerate() {
        black_box(c.remove(keys[pick]));
        keys[pick] = c.insert(V::make(step as u64));
    }
}

#[inline(never)]
fn measured_keyed<V: Value, C: Container<V>>(c: &C) -> u64 {
    c.keyed_sum()
}

#[inline(never)]
fn measured_values<V: Value, C: Container<V>>(c: &C) -> u64 {
    c.sum()
}

/// A `for` loop over `(key, value)` with an opaque body: what `next()`
/// costs per item.
#[inline(never)]
fn measured_for_keyed<V: Value, C: Container<V>>(c: &C) {
    for item in c.iter() {
        black_box(item);
    }
}

/// A `for` loop over `(key, value)` adding each value's weight and its
/// key's bits: the runner's own `iter.sum.for` loop (`workloads::for_sum`).
#[inline(never)]
fn measured_sum_keyed<V: Value, C: Container<V>>(c: &C) -> u64 {
    workloads::for_sum::<_, 0>(
        || c.iter(),
        |(k, v)| v.weight().wrapping_add(C::key_bits(*k)),
    )
}

/// A `for` loop over the values with an opaque body.
#[inline(never)]
fn measured_for_values<V: Value, C: Container<V>>(c: &C) {
    for value in c.values() {
        black_box(value);
    }
}

/// `for_each` over the values with an opaque body, the runner's own
/// (`workloads::each_opaque`: each value stored to a sink the optimizer
/// must assume is read): the fold's own loop.
#[inline(never)]
fn measured_each_values<V: Value, C: Container<V>>(c: &C) {
    black_box(workloads::each_opaque::<_, 0>(|| c.values()));
}

/// `for_each` over `(key, value)` with the same opaque body.
#[inline(never)]
fn measured_each_keyed<V: Value, C: Container<V>>(c: &C) {
    black_box(workloads::each_opaque::<_, 0>(|| c.iter()));
}

#[inline(never)]
fn measured_get_stale<V: Value, C: Container<V>>(c: &C, keys: &[C::Key]) -> usize {
    let mut found = 0usize;
    for &key in keys {
        found += usize::from(c.get(key).is_some());
    }
    found
}

fn run<V: Value, C: Container<V>>(work: &str, n: usize) {
    if std::env::var_os("SHOW_ADDRESS").is_some() {
        // Where the measured function starts, to find it in a disassembly.
        let address = match work {
            "insert" => measured_insert::<V, C> as fn(usize) -> C as usize,
            "reinsert" => measured_reinsert::<V, C> as fn(&mut C, usize) as usize,
            "remove" => measured_remove::<V, C> as fn(&mut C, &[C::Key]) as usize,
            "get" => measured_get::<V, C> as fn(&C, &[C::Key]) -> u64 as usize,
            "get_stale" => measured_get_stale::<V, C> as fn(&C, &[C::Key]) -> usize as usize,
            "churn" => measured_churn::<V, C> as fn(&mut C, &mut [C::Key], &[usize]) as usize,
            w if w.starts_with("keyed") => measured_keyed::<V, C> as fn(&C) -> u64 as usize,
            w if w.starts_with("for_keyed") => measured_for_keyed::<V, C> as fn(&C) as usize,
            w if w.starts_with("sum_keyed") => measured_sum_keyed::<V, C> as fn(&C) -> u64 as usize,
            w if w.starts_with("for_values") => measured_for_values::<V, C> as fn(&C) as usize,
            w if w.starts_with("each_values") => measured_each_values::<V, C> as fn(&C) as usize,
            w if w.starts_with("each_keyed") => measured_each_keyed::<V, C> as fn(&C) as usize,
            _ => measured_values::<V, C> as fn(&C) -> u64 as usize,
        };
        println!("{address:#x}");
        return;
    }
    let mut rng = Rng::new(7);
    let fill = workloads::fill::<V, C>;
    match work {
        "insert" => drop(black_box(measured_insert::<V, C>(n))),
        "reinsert" => measured_reinsert(&mut workloads::emptied::<V, C>(n, &mut rng), n),
        "remove" => {
            let (mut c, mut keys) = fill(n);
            rng.shuffle(&mut keys);
            measured_remove(&mut c, &keys);
        }
        "get" => {
            let (c, keys) = fill(n);
            black_box(measured_get(
                &c,
                &workloads::random_lookups(&keys, &mut rng),
            ));
        }
        "get_stale" => {
            // As the runner: every key stale, its slot refilled.
            let (c, stale) = workloads::refilled::<V, C>(n, &mut rng);
            black_box(measured_get_stale(&c, &stale));
        }
        "churn" => {
            let (mut c, mut keys) = fill(n);
            let picks: Vec<usize> = (0..n).map(|_| rng.below(n)).collect();
            measured_churn(&mut c, &mut keys, &picks);
        }
        w if ["keyed", "values"].iter().any(|walk| {
            w.trim_start_matches("for_")
                .trim_start_matches("each_")
                .trim_start_matches("sum_")
                .starts_with(walk)
        }) =>
        {
            let (mut c, keys) = fill(n);
            let thinned = if work.ends_with("half") {
                Fill::Half
            } else if work.ends_with("sparse") {
                Fill::Sparse
            } else {
                Fill::Full
            };
            workloads::thin_out(&mut c, keys, thinned.removed(), &mut rng);
            match work.split('_').next() {
                Some("keyed") => drop(black_box(measured_keyed(&c))),
                Some("values") => drop(black_box(measured_values(&c))),
                _ if work.starts_with("for_keyed") => measured_for_keyed(&c),
                _ if work.starts_with("sum_keyed") => drop(black_box(measured_sum_keyed(&c))),
                _ if work.starts_with("each_values") => measured_each_values(&c),
                _ if work.starts_with("each_keyed") => measured_each_keyed(&c),
                _ => measured_for_values(&c),
            }
        }
        _ => panic!("unknown workload {work}"),
    }
}

/// The secondary maps: `insert` fills an empty map with the keys of a
/// primary table in order, `remove` empties a filled map in random order,
/// `get` looks up random keys of a filled map.
trait Secondary: Default {
    type Key: Copy;
    type Value;
    fn primary_keys(n: usize) -> Vec<Self::Key>;
    fn put(&mut self, key: Self::Key, value: u64) -> Option<Self::Value>;
    fn take(&mut self, key: Self::Key) -> Option<Self::Value>;
    fn peek(&self, key: Self::Key) -> Option<u64>;
}

macro_rules! secondary {
    ($map:ty, $key:ty, $value:ty, $primary:expr) => {
        impl Secondary for $map {
            type Key = $key;
            type Value = $value;
            fn primary_keys(n: usize) -> Vec<$key> {
                let mut primary = $primary;
                (0..n).map(|_| primary.insert(())).collect()
            }
            #[inline(always)]
            fn put(&mut self, key: $key, value: u64) -> Option<$value> {
                self.insert(
                    key,
                    <$value as handlekit_bench::containers::Value>::make(value),
                )
            }
            #[inline(always)]
            fn take(&mut self, key: $key) -> Option<$value> {
                self.remove(key)
            }
            #[inline(always)]
            fn peek(&self, key: $key) -> Option<u64> {
                self.get(key)
                    .map(handlekit_bench::containers::Value::weight)
            }
        }
    };
}

secondary!(
    handlekit::SecondaryMap<handlekit::Id, u64>,
    handlekit::Id,
    u64,
    handlekit::IdTable::<()>::new()
);
secondary!(
    handlekit::SecondaryMap<handlekit::Id, Blob64>,
    handlekit::Id,
    Blob64,
    handlekit::IdTable::<()>::new()
);
secondary!(
    slotmap::SecondaryMap<slotmap::DefaultKey, u64>,
    slotmap::DefaultKey,
    u64,
    slotmap::SlotMap::<slotmap::DefaultKey, ()>::new()
);
secondary!(
    slotmap::SecondaryMap<slotmap::DefaultKey, Blob64>,
    slotmap::DefaultKey,
    Blob64,
    slotmap::SlotMap::<slotmap::DefaultKey, ()>::new()
);

#[inline(never)]
fn measured_secondary_insert<M: Secondary>(map: &mut M, keys: &[M::Key]) {
    for (i, &key) in keys.iter().enumerate() {
        black_box(map.put(key, i as u64));
    }
}

#[inline(never)]
fn measured_secondary_remove<M: Secondary>(map: &mut M, keys: &[M::Key]) {
    for &key in keys {
        black_box(map.take(key));
    }
}

#[inline(never)]
fn measured_secondary_get<M: Secondary>(map: &M, keys: &[M::Key]) -> u64 {
    let mut sum = 0u64;
    for &key in keys {
        sum = sum.wrapping_add(map.peek(key).unwrap_or(0));
    }
    sum
}

fn run_secondary<M: Secondary>(work: &str, n: usize) {
    if std::env::var_os("SHOW_ADDRESS").is_some() {
        let address = match work {
            "insert" => measured_secondary_insert::<M> as fn(&mut M, &[M::Key]) as usize,
            "remove" => measured_secondary_remove::<M> as fn(&mut M, &[M::Key]) as usize,
            _ => measured_secondary_get::<M> as fn(&M, &[M::Key]) -> u64 as usize,
        };
        println!("{address:#x}");
        return;
    }
    let mut keys = M::primary_keys(n);
    let mut map = M::default();
    match work {
        "insert" => measured_secondary_insert(&mut map, &keys),
        "remove" | "get" => {
            for (i, &key) in keys.iter().enumerate() {
                map.put(key, i as u64);
            }
            let mut rng = Rng::new(7);
            if work == "remove" {
                rng.shuffle(&mut keys);
                measured_secondary_remove(&mut map, &keys);
            } else {
                let lookups: Vec<M::Key> = (0..n).map(|_| keys[rng.below(n)]).collect();
                black_box(measured_secondary_get(&map, &lookups));
            }
        }
        _ => panic!("secondary maps run insert, remove and get only"),
    }
    black_box(map);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (work, container) = (args[1].as_str(), args[2].as_str());
    let n: usize = args.get(3).map_or(100_000, |s| s.parse().expect("N"));
    // A table name with the suffix `64B` holds 64-byte values.
    if let Some(table) = container.strip_suffix("64B") {
        if run_table::<Blob64>(table, work, n) {
            return;
        }
    } else if run_table::<u64>(container, work, n) {
        return;
    }
    match container {
        // The runner's secondary-map cells (keys computed in the loop).
        "SecondaryCell" => run::<u64, handlekit_bench::containers::HkSecondary<u64>>(work, n),
        "slotmap-SecondaryCell" => {
            run::<u64, handlekit_bench::containers::SlotmapSecondary<u64>>(work, n);
        }
        "SecondaryMap" => run_secondary::<handlekit::SecondaryMap<handlekit::Id, u64>>(work, n),
        "SecondaryMap64B" => {
            run_secondary::<handlekit::SecondaryMap<handlekit::Id, Blob64>>(work, n);
        }
        "slotmap-SecondaryMap" => {
            run_secondary::<slotmap::SecondaryMap<slotmap::DefaultKey, u64>>(work, n);
        }
        "slotmap-SecondaryMap64B" => {
            run_secondary::<slotmap::SecondaryMap<slotmap::DefaultKey, Blob64>>(work, n);
        }
        _ => panic!("unknown container {container}"),
    }
}

/// Runs `work` on the table named `table` holding `V`s; false if no table
/// has that name.
fn run_table<V: Value>(table: &str, work: &str, n: usize) -> bool {
    #[allow(deprecated)]
    type Hop<V> = slotmap::HopSlotMap<slotmap::DefaultKey, V>;
    match table {
        "IdTable" => run::<V, handlekit::IdTable<V, handlekit::Id>>(work, n),
        "IdTable32" => run::<V, handlekit::IdTable<V, handlekit::Id32>>(work, n),
        "PackedTable" => run::<V, handlekit::PackedTable<V, handlekit::Id>>(work, n),
        "LookupTable" => run::<V, handlekit::LookupTable<V, handlekit::Id>>(work, n),
        "Hive" => run::<V, handlekit::Hive<V, handlekit::Id>>(work, n),
        "Pool" => run::<V, handlekit::Pool<V, handlekit::PoolKey>>(work, n),
        "Vec" => run::<V, handlekit_bench::containers::PlainVec<V>>(work, n),
        "HopSlotMap" => run::<V, Hop<V>>(work, n),
        "SlotMap" => run::<V, slotmap::SlotMap<slotmap::DefaultKey, V>>(work, n),
        "DenseSlotMap" => run::<V, slotmap::DenseSlotMap<slotmap::DefaultKey, V>>(work, n),
        "thunderdome" => run::<V, thunderdome::Arena<V>>(work, n),
        "slab" => run::<V, slab::Slab<V>>(work, n),
        "pulz-arena" => run::<V, pulz_arena::Arena<V>>(work, n),
        _ => return false,
    }
    true
}
