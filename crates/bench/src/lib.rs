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
pub mod goals;
pub mod grid;
pub mod report;
pub mod skipfield;
mod text;
pub mod workloads;

use std::path::PathBuf;
use std::time::Duration;

use containers::{
    BTreeIds, Blob64, Container, Family, GenVec, HashIds, HkSecondary, PlainVec, SlotmapSecondary,
    Value,
};
use handlekit::{Hive, Id, Id32, IdTable, LookupTable, PackedTable, Pool};
use workloads::{Budget, Fill, Lookups, Passes, Placement, Rng, Workload};

/// Sets a container up for a lookup workload: [`Entry::lookups`].
pub type BuildLookups = fn(Workload, usize, u64, Placement) -> Option<Box<dyn Lookups>>;

/// One container at one value type: what the runner can do with it.
pub struct Entry {
    pub container: &'static str,
    pub family: Family,
    pub value_type: &'static str,
    pub can_remove: bool,
    /// The only workloads it runs, if not all.
    pub only: Option<&'static [Workload]>,
    /// One sample: ns per operation, its loop at the placement given.
    pub sample: fn(Workload, usize, u64, Budget, Placement) -> f64,
    /// One timed run of a workload, with its own setup: (time, operations).
    pub run: fn(Workload, usize, &mut Rng) -> (Duration, u64),
    /// Bytes per value after N inserts.
    pub memory: fn(usize) -> f64,
    /// The container with N values thinned to a fill (the removals drawn
    /// from the seed), for timing its passes with their loops at the
    /// placement given.
    pub passes: fn(Fill, usize, u64, Placement) -> Box<dyn Passes>,
    /// The container set up for a lookup workload (`get`, `get_stale`;
    /// the keys drawn from the seed), for timing it in slices; `None` for
    /// the other workloads. Its loop is at the placement given.
    pub lookups: BuildLookups,
}

/// The containers that run the [`Fill::Rotating`] passes.
const ROTATING_CONTAINERS: [&str; 3] = ["IdTable<Id>", "IdTable<Id32>", "SlotMap"];

/// The workloads of a container that runs only the keyed operations
/// ([`Container::KEYED_OPS_ONLY`]).
const KEYED_OPS: &[Workload] = &[Workload::Insert, Workload::Remove, Workload::Get];

pub fn entry<V: Value, C: Container<V> + 'static>() -> Entry {
    Entry {
        container: C::NAME,
        family: C::FAMILY,
        value_type: V::NAME,
        can_remove: C::CAN_REMOVE,
        only: C::KEYED_OPS_ONLY.then_some(KEYED_OPS),
        sample: workloads::sample::<V, C>,
        run: workloads::timed_run::<V, C>,
        memory: workloads::bytes_per_value::<V, C>,
        passes: workloads::build_passes::<V, C>,
        lookups: workloads::build_lookups::<V, C>,
    }
}

impl Entry {
    /// Whether the container takes part in `workload`.
    pub fn runs(&self, workload: Workload) -> bool {
        // The rotating passes are the proposed measure of one goal, IdTable
        // against SlotMap over tables whose holes the predictor has not
        // learned: only those two take part.
        let pass_runs = match workload {
            Workload::Pass(pass) => {
                (self.value_type != Blob64::NAME || pass.runs_over_blobs())
                    && (pass.fill != Fill::Rotating
                        || ROTATING_CONTAINERS.contains(&self.container))
            }
            _ => true,
        };
        pass_runs
            && (self.can_remove || !workload.needs_remove())
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
        entry::<V, pulz_arena::Arena<V>>(),
        entry::<V, slab::Slab<V>>(),
        entry::<V, BTreeIds<V>>(),
        entry::<V, HashIds<V>>(),
        entry::<V, PlainVec<V>>(),
        entry::<V, GenVec<V>>(),
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
    /// The time budget of one sample of a pass (on a table built once per
    /// repeat, so a pass sample needs no setup of its own).
    pub pass_min_time_ms: u64,
    /// How many slices a sample of a pass or of a lookup workload is cut
    /// into at most (fewer where a slice would have time for under 8
    /// passes): the containers of a row take turns, one slice each, and a
    /// sample is the fastest of its slices (see `pass_samples` in the
    /// runner). 1 times each sample in one stretch. `--slices`.
    pub slices: u32,
    pub filter: Vec<String>,
    pub mode: &'static str,
    pub seed: u64,
    #[serde(skip)]
    pub out_dir: PathBuf,
    #[serde(skip)]
    pub progress: bool,
    /// Whether each repeat of each row (an operation's cells at one value
    /// type and N, a group of passes, an ECS row) runs in a process of its
    /// own, started for it: so that its figures do not depend on what the
    /// run measured before it (the heap's layout, the pages it holds).
    /// `--in-process` turns it off.
    pub isolate: bool,
    /// Set in such a process: the row it runs (its place in the run's
    /// plan), whose samples it prints as JSON instead of a report.
    #[serde(skip)]
    pub row: Option<usize>,
    /// With `row`: the one repeat of the row that process runs (each
    /// repeat runs in a process of its own, so that the spread of a cell
    /// also covers what differs from process to process: some rows run
    /// at two speeds, by process); all of them if unset.
    #[serde(skip)]
    pub repeat: Option<usize>,
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
    /// One sample per repeat, in the order of the repeats: sample `r` of
    /// every cell of a row was measured in the same repeat, beside the
    /// others, so `a.samples[r] / b.samples[r]` is a ratio measured side by
    /// side.
    pub samples: Vec<f64>,
}

impl Cell {
    /// A cell of the samples (one per repeat, in order; at least one).
    pub fn new(
        workload: &'static str,
        container: &'static str,
        family: Family,
        value_type: &'static str,
        n: usize,
        samples: Vec<f64>,
    ) -> Cell {
        let mut sorted = samples.clone();
        sorted.sort_by(f64::total_cmp);
        Cell {
            workload,
            container,
            family,
            value_type,
            n,
            median_ns: median(&sorted),
            min_ns: sorted[0],
            max_ns: sorted[sorted.len() - 1],
            samples,
        }
    }
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
