//! Why `iter_keyed_half` at N = 1000 says little: the branch predictor
//! learns a small table's pattern of holes.
//!
//! ```sh
//! cargo run --release -p handlekit-bench --example branch_memory
//! ```
//!
//! The runner times a pass over the same table again and again. SlotMap's
//! pass branches on every slot ("occupied?"), and with half the slots
//! vacant at random that branch is a coin toss, unless the predictor has
//! seen the same 1,000 outcomes before: then it replays them. This example
//! times keyed passes of SlotMap and IdTable over half-full tables of
//! 1,000 slots two ways, interleaved: over one table every pass (as the
//! runner does), and over 64 tables with different holes in turn (so no
//! pattern repeats within the predictor's memory). IdTable's pass does
//! not branch per slot, so only SlotMap's time should change between the
//! two.

use std::hint::black_box;
use std::time::Instant;

use handlekit::{IdTable, Key};
use handlekit_bench::workloads::Rng;
use slotmap::{DefaultKey, SlotMap};

const SLOTS: usize = 1000;
const TABLES: usize = 64;
const PASSES: usize = 20_000;

/// A SlotMap and an IdTable with the same values and the same holes:
/// `SLOTS` inserted, then each removed with probability one half.
fn half_full(rng: &mut Rng) -> (SlotMap<DefaultKey, u64>, IdTable<u64>) {
    let mut slot_map = SlotMap::new();
    let mut table = IdTable::new();
    for i in 0..SLOTS as u64 {
        let a = slot_map.insert(i);
        let b = table.insert(i);
        if rng.below(2) == 0 {
            slot_map.remove(a);
            table.remove(b);
        }
    }
    (slot_map, table)
}

#[inline(never)]
fn slot_map_pass(map: &SlotMap<DefaultKey, u64>) -> u64 {
    map.iter().fold(0u64, |sum, (key, value)| {
        sum.wrapping_add(*value)
            .wrapping_add(slotmap::Key::data(&key).as_ffi())
    })
}

#[inline(never)]
fn id_table_pass(table: &IdTable<u64>) -> u64 {
    table.iter().fold(0u64, |sum, (key, value)| {
        sum.wrapping_add(*value).wrapping_add(key.to_bits())
    })
}

fn main() {
    let mut rng = Rng::new(7);
    let tables: Vec<_> = (0..TABLES).map(|_| half_full(&mut rng)).collect();
    println!("keyed passes over half-full tables of {SLOTS} slots, {PASSES} passes each way");
    for (label, rotate) in [
        ("one table, every pass", false),
        ("64 tables in turn", true),
    ] {
        let (mut slot_map_ns, mut id_table_ns, mut live) = (0u128, 0u128, 0usize);
        for pass in 0..PASSES {
            let (slot_map, table) = &tables[if rotate { pass % TABLES } else { 0 }];
            live += table.len();
            let start = Instant::now();
            black_box(slot_map_pass(black_box(slot_map)));
            slot_map_ns += start.elapsed().as_nanos();
            let start = Instant::now();
            black_box(id_table_pass(black_box(table)));
            id_table_ns += start.elapsed().as_nanos();
        }
        let per = |ns: u128| ns as f64 / live as f64;
        println!(
            "{label:>22}: SlotMap {:.2} ns per live value, IdTable {:.2}; SlotMap / IdTable = {:.2}",
            per(slot_map_ns),
            per(id_table_ns),
            slot_map_ns as f64 / id_table_ns as f64
        );
    }
}
