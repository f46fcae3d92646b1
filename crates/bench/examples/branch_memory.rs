//! Why the runner's half-removed cells at N = 1000 say little: the branch
//! predictor learns a small table's pattern of holes.
//!
//! ```sh
//! cargo run --release -p handlekit-bench --example branch_memory
//! ```
//!
//! The runner times a pass over the same table again and again. SlotMap's
//! pass branches on every slot ("occupied?"), and with half the slots
//! vacant at random that branch is a coin toss, unless the predictor has
//! seen the same outcomes before: then it replays them. This example times
//! passes of SlotMap and IdTable over half-full tables of 1,000 slots two
//! ways: over one table every pass (as the runner does), and over 64
//! tables with different holes in turn (so no pattern repeats within the
//! predictor's memory). The two containers take turns a stretch of
//! consecutive passes at a time, as the runner's slices do, and each
//! figure is the fastest stretch. SlotMap's pass over a table with no holes
//! is timed alongside, per slot: when its half-full pass costs no more a
//! slot than that, its test of each slot is being predicted.
//!
//! Two bodies: a keyed `fold` (each value plus its key's bits) and a `for`
//! loop summing `values()`.
//!
//! On the development machine (two runs), SlotMap's `for` loop over one
//! half-full table took 0.31-0.33 ns a slot, as over a full table
//! (0.32-0.34), and IdTable's 0.77-0.78 ns a live value: SlotMap / IdTable
//! 0.81-0.85, as in the runner's cell. Over 64 tables in turn SlotMap's
//! took 2.9-3.1 ns a slot, IdTable's 1.03 a live value (its 64 tables no
//! longer fit in the core's cache): 5.7-5.9. The keyed `fold`: 1.01-1.53
//! over one table, 6.6 over 64.

use std::hint::black_box;
use std::time::Instant;

use handlekit::{IdTable, Key};
use handlekit_bench::workloads::Rng;
use slotmap::{DefaultKey, SlotMap};

const SLOTS: usize = 1000;
const TABLES: usize = 64;
/// Passes a container makes before the other takes its turn.
const STRETCH: usize = 64;
/// Turns each container takes, per table arrangement and body.
const TURNS: usize = 300;

/// A SlotMap and an IdTable with the same values and the same holes:
/// `SLOTS` inserted, then (if `half`) a random half of them removed. All
/// are inserted before any is removed: removing each value right after
/// its insertion would let the next insertion take its slot back, and
/// leave a table with no holes.
fn tables(rng: &mut Rng, half: bool) -> (SlotMap<DefaultKey, u64>, IdTable<u64>) {
    let mut slot_map = SlotMap::new();
    let mut table = IdTable::new();
    let mut keys: Vec<_> = (0..SLOTS as u64)
        .map(|i| (slot_map.insert(i), table.insert(i)))
        .collect();
    if half {
        rng.shuffle(&mut keys);
        for (a, b) in keys.drain(..SLOTS / 2) {
            slot_map.remove(a);
            table.remove(b);
        }
    }
    (slot_map, table)
}

#[inline(never)]
fn slot_map_keyed(map: &SlotMap<DefaultKey, u64>) -> u64 {
    map.iter().fold(0u64, |sum, (key, value)| {
        sum.wrapping_add(*value)
            .wrapping_add(slotmap::Key::data(&key).as_ffi())
    })
}

#[inline(never)]
fn id_table_keyed(table: &IdTable<u64>) -> u64 {
    table.iter().fold(0u64, |sum, (key, value)| {
        sum.wrapping_add(*value).wrapping_add(key.to_bits())
    })
}

#[inline(never)]
fn slot_map_values(map: &SlotMap<DefaultKey, u64>) -> u64 {
    let mut sum = 0u64;
    for value in map.values() {
        sum = sum.wrapping_add(*value);
    }
    sum
}

#[inline(never)]
fn id_table_values(table: &IdTable<u64>) -> u64 {
    let mut sum = 0u64;
    for value in table.values() {
        sum = sum.wrapping_add(*value);
    }
    sum
}

/// The fastest stretch of `STRETCH` passes of `pass` over `pick(p)` for
/// pass `p`, in ns per pass, over `TURNS` turns interleaved with `other`.
fn fastest_stretches<A, B>(
    pick_a: impl Fn(usize) -> A,
    pass_a: impl Fn(A) -> u64,
    pick_b: impl Fn(usize) -> B,
    pass_b: impl Fn(B) -> u64,
) -> (f64, f64) {
    let (mut best_a, mut best_b) = (f64::INFINITY, f64::INFINITY);
    let mut pass = 0;
    for _ in 0..TURNS {
        let start = Instant::now();
        for p in pass..pass + STRETCH {
            black_box(pass_a(black_box(pick_a(p))));
        }
        best_a = best_a.min(start.elapsed().as_nanos() as f64 / STRETCH as f64);
        let start = Instant::now();
        for p in pass..pass + STRETCH {
            black_box(pass_b(black_box(pick_b(p))));
        }
        best_b = best_b.min(start.elapsed().as_nanos() as f64 / STRETCH as f64);
        pass += STRETCH;
    }
    (best_a, best_b)
}

/// A pass over a table.
type Pass<C> = fn(&C) -> u64;
/// A loop body: its name, and its pass over each container.
type Body = (
    &'static str,
    Pass<SlotMap<DefaultKey, u64>>,
    Pass<IdTable<u64>>,
);

fn main() {
    let mut rng = Rng::new(7);
    let half: Vec<_> = (0..TABLES).map(|_| tables(&mut rng, true)).collect();
    let (full_map, _) = tables(&mut rng, false);
    let live = |t: usize| half[t].1.len() as f64;
    let mean_live = (0..TABLES).map(live).sum::<f64>() / TABLES as f64;
    println!(
        "half-full tables of {SLOTS} slots ({mean_live:.0} live on average); fastest of {TURNS} stretches of {STRETCH} passes"
    );
    let bodies: [Body; 2] = [
        ("keyed fold", slot_map_keyed, id_table_keyed),
        ("values for loop", slot_map_values, id_table_values),
    ];
    for (body, slot_map_pass, id_table_pass) in bodies {
        let (full_ns, _) =
            fastest_stretches(|_| &full_map, slot_map_pass, |_| &full_map, slot_map_pass);
        println!(
            "{body}: SlotMap over a full table {:.3} ns a slot",
            full_ns / SLOTS as f64
        );
        for (label, tables_used) in [("one table, every pass", 1), ("64 tables in turn", TABLES)] {
            let (slot_map_ns, id_table_ns) = fastest_stretches(
                |p| &half[p % tables_used].0,
                slot_map_pass,
                |p| &half[p % tables_used].1,
                id_table_pass,
            );
            let lives = if tables_used == 1 { live(0) } else { mean_live };
            println!(
                "  {label:>22}: SlotMap {:.3} ns a slot ({:.2} a live value), IdTable {:.2} a live value; SlotMap / IdTable = {:.2}",
                slot_map_ns / SLOTS as f64,
                slot_map_ns / lives,
                id_table_ns / lives,
                slot_map_ns / id_table_ns
            );
        }
    }
}
