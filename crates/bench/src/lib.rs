//! The handlekit comparison harness: one [`containers::Container`]
//! trait over handlekit's containers and their peers, the workloads written
//! once over it, and the report. The runner (`src/main.rs`, the main job)
//! and the criterion benches (`benches/`) both use it, so they measure the
//! same code.

// The harness is internal tooling: its items are documented where it helps.
#![allow(missing_docs)]
// slotmap's HopSlotMap is deprecated upstream but still a peer to beat.
#![allow(deprecated)]

pub mod alloc;
pub mod containers;
pub mod ecs;
pub mod grid;
pub mod report;
pub mod skipfield;
pub mod workloads;

use std::path::PathBuf;
use std::time::Duration;

use containers::{
    BTreeIds, Container, Family, HashIds, HkSecondary, PlainVec, SlotmapSecondary, Value,
};
use handlekit::{Hive, Id, Id32, IdTable, LookupTable, PackedTable, Pool};
use workloads::{Budget, Rng, Workload};

/// One container at one value type: what the runner can do with it.
pub struct Entry {
    pub container: &'static str,
    pub family: Family,
    pub value_type: &'static str,
    pub can_remove: bool,
    /// The only workloads it runs, if not all.
    pub only: Option<&'static [Workload]>,
    /// One sample: ns per operation.
    pub sample: fn(Workload, usize, u64, Budget) -> f64,
    /// One timed run of a workload, with its own setup: (time, operations).
    pub run: fn(Workload, usize, &mut Rng) -> (Duration, u64),
    /// Bytes per value after N inserts.
    pub memory: fn(usize) -> f64,
}

pub fn entry<V: Value, C: Container<V>>() -> Entry {
    Entry {
        container: C::NAME,
        family: C::FAMILY,
        value_type: V::NAME,
        can_remove: C::CAN_REMOVE,
        only: C::ONLY,
        sample: workloads::sample::<V, C>,
        run: workloads::timed_run::<V, C>,
        memory: workloads::bytes_per_value::<V, C>,
    }
}

impl Entry {
    /// Whether the container takes part in `workload`.
    pub fn runs(&self, workload: Workload) -> bool {
        (self.can_remove || !workload.needs_remove())
            && self.only.is_none_or(|only| only.contains(&workload))
    }
}

/// Every container, for one value type.
pub fn entries_for<V: Value>() -> Vec<Entry> {
    vec![
        entry::<V, IdTable<V, Id>>(),
        entry::<V, IdTable<V, Id32>>(),
        entry::<V, LookupTable<V, Id>>(),
        entry::<V, PackedTable<V, Id>>(),
        entry::<V, Pool<V>>(),
        entry::<V, Hive<V>>(),
        entry::<V, slotmap::SlotMap<slotmap::DefaultKey, V>>(),
        entry::<V, slotmap::HopSlotMap<slotmap::DefaultKey, V>>(),
        entry::<V, slotmap::DenseSlotMap<slotmap::DefaultKey, V>>(),
        entry::<V, thunderdome::Arena<V>>(),
        entry::<V, generational_arena::Arena<V>>(),
        entry::<V, slab::Slab<V>>(),
        entry::<V, BTreeIds<V>>(),
        entry::<V, HashIds<V>>(),
        entry::<V, PlainVec<V>>(),
        entry::<V, HkSecondary<V>>(),
        entry::<V, SlotmapSecondary<V>>(),
    ]
}

/// Run settings, from the command line.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Config {
    pub sizes: Vec<usize>,
    pub repeats: u32,
    pub warmup: bool,
    pub min_time_ms: u64,
    pub filter: Vec<String>,
    pub mode: &'static str,
    pub seed: u64,
    #[serde(skip)]
    pub out_dir: PathBuf,
    #[serde(skip)]
    pub progress: bool,
}

/// One measured cell.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Cell {
    pub workload: &'static str,
    pub container: &'static str,
    pub family: Family,
    pub value_type: &'static str,
    pub n: usize,
    pub median_ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub samples: Vec<f64>,
}

/// Memory use of one container.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Memory {
    pub container: &'static str,
    pub value_type: &'static str,
    pub n: usize,
    pub bytes_per_value: f64,
}

/// The median of sorted values (the mean of the middle two for an even
/// count).
pub fn median(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    }
}
