//! The main job: a side-by-side comparison of handlekit's containers with
//! their peers, written to the terminal and to `target/handlekit-report/`.
//!
//! ```text
//! cargo run --release                    # full run: N = 1e3, 1e5, 1e6
//! cargo run --release -- --quick         # small sizes, under a minute
//! cargo run --release -- --filter get,IdTable  # get, on both IdTables
//! cargo run --release -- --filter .for.,Hive     # Hive's `for` loops
//! cargo run --release -- --smoke         # CI: tiny N, one repeat, checks
//! ```

use std::ops::Range;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use handlekit_bench::containers::{Blob64, Value};
use handlekit_bench::ecs::{self, Contender, EcsResults, EcsWorkload};
use handlekit_bench::workloads::{Budget, Fill, Pass, Placement, Workload};
use handlekit_bench::{entries_for, report, Cell, Config, Entry, Memory};

#[global_allocator]
static ALLOCATOR: handlekit_bench::alloc::Counting = handlekit_bench::alloc::Counting;

const USAGE: &str = "\
handlekit comparison runner

USAGE: cargo run --release -- [OPTIONS]

OPTIONS:
  --quick            small sizes (1000, 10000), 3 repeats: under a minute
  --smoke            tiny sizes, one repeat; checks every cell and the JSON (for CI)
  --sizes A,B,...    sizes to run (default 1000,100000,1000000)
  --repeats R        samples per cell (default 5): repeats of the whole row,
                     every goal cell reports its spread over them
  --filter A,B,...   keep some cells: each word names workloads, containers or
                     value types (u64, 64B); a word equal to a name picks it
                     alone, another word every name containing it; words of
                     one kind add up, kinds narrow (.for.sparse,Hive,64B).
                     Passes are named walk.body.form.fill: walk iter,
                     iter_mut, values, values_mut or keys; body bb
                     (black_box) or sum; form for or fold; fill full,
                     half, sparse, or rotating (half removed from each of
                     64 tables walked in turn; IdTable and SlotMap, up to
                     10k) (iter.bb.for.half)
  --slices K         cut each sample of a pass or a lookup into up to K
                     slices (default 8; fewer where a slice would hold
                     under 8 passes): the containers of a row take turns a
                     slice at a time, and a sample is the fastest of its
                     slices; 1 times each sample in one stretch
  --out DIR          where to write the report (default target/handlekit-report)
  --no-progress      no progress bar
  --in-process       run every row in this process, after the others (by
                     default each repeat of a row runs in a process started
                     for it, so that its figures do not depend on what ran
                     before it, and its spread covers how processes differ)
  -h, --help         this text
";

/// The comma-separated items of `text`, empty ones skipped.
fn split_list(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').filter(|part| !part.is_empty())
}

/// A list of sizes; `1_000_000` is accepted for `1000000`.
fn parse_sizes(text: &str) -> Result<Vec<usize>, String> {
    split_list(text)
        .map(|part| {
            part.replace('_', "")
                .parse()
                .map_err(|_| format!("cannot parse {part:?}"))
        })
        .collect()
}

/// A list of filter words, kept as written (workload names have
/// underscores and dots: `iter_mut.sum.for.sparse`).
fn parse_filter(text: &str) -> Vec<String> {
    split_list(text).map(str::to_owned).collect()
}

fn parse_args() -> Result<Config, lexopt::Error> {
    use lexopt::prelude::*;
    // The workspace root is two levels above this crate.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    let default_out = root.join("target").join("handlekit-report");
    let mut config = Config {
        sizes: vec![1_000, 100_000, 1_000_000],
        repeats: 5,
        warmup: true,
        min_time_ms: 20,
        pass_min_time_ms: 10,
        slices: 8,
        filter: Vec::new(),
        mode: "full",
        seed: 0x5EED_0F4A_11D5,
        out_dir: default_out,
        progress: true,
        isolate: true,
        row: None,
        repeat: None,
    };
    let mut sizes_given = false;
    let mut repeats_given = false;
    let mut parser = lexopt::Parser::from_env();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("quick") => config.mode = "quick",
            Long("smoke") => config.mode = "smoke",
            Long("sizes") => {
                config.sizes = parse_sizes(&parser.value()?.string()?)?;
                sizes_given = true;
            }
            Long("repeats") => {
                config.repeats = parser.value()?.parse()?;
                repeats_given = true;
            }
            Long("slices") => {
                config.slices = parser.value()?.parse()?;
                if config.slices == 0 {
                    return Err("--slices must be at least 1".into());
                }
            }
            Long("filter") => config.filter = parse_filter(&parser.value()?.string()?),
            Long("out") => config.out_dir = parser.value()?.into(),
            Long("no-progress") => config.progress = false,
            Long("in-process") => config.isolate = false,
            // Internal: the runner starts a process per row with this.
            Long("row") => config.row = Some(parser.value()?.parse()?),
            Long("repeat") => config.repeat = Some(parser.value()?.parse()?),
            Short('h') | Long("help") => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            _ => return Err(arg.unexpected()),
        }
    }
    match config.mode {
        "quick" => {
            if !sizes_given {
                config.sizes = vec![1_000, 10_000];
            }
            if !repeats_given {
                config.repeats = 3;
            }
            config.min_time_ms = 1;
            config.pass_min_time_ms = 1;
        }
        "smoke" => {
            if !sizes_given {
                config.sizes = vec![64, 512];
            }
            if !repeats_given {
                config.repeats = 1;
            }
            config.warmup = false;
            config.min_time_ms = 0;
            config.pass_min_time_ms = 0;
            config.progress = false;
        }
        _ => {}
    }
    if config.sizes.is_empty() || config.repeats == 0 {
        return Err("--sizes and --repeats need at least one".into());
    }
    Ok(config)
}

/// Which cells a `--filter` keeps. Each word names workloads, containers
/// or value types: a word equal to a name picks that name alone (`insert`
/// is not `reinsert`), any other word every name that contains it
/// (`.for.`, `IdTable`). Words of one kind widen the choice, kinds narrow
/// it: `.sparse,.half,Hive,64B` keeps the sparse and half passes
/// of `Hive` over 64-byte values.
#[derive(Debug, Default)]
struct Filter {
    /// The workloads picked; empty when no word names a workload.
    workloads: Vec<&'static str>,
    /// The containers picked; empty when no word names a container.
    containers: Vec<&'static str>,
    /// The value types picked; empty when no word names one.
    value_types: Vec<&'static str>,
}

impl Filter {
    /// Sorts `words` by what they name (workloads first, then containers,
    /// then value types), or says which word names nothing.
    fn new(
        words: &[String],
        workloads: &[&'static str],
        containers: &[&'static str],
        value_types: &[&'static str],
    ) -> Result<Self, String> {
        let mut filter = Filter::default();
        for word in words {
            let kinds = [
                (workloads, &mut filter.workloads),
                (containers, &mut filter.containers),
                (value_types, &mut filter.value_types),
            ];
            // A word equal to a name of any kind picks that name alone
            // (`ecs`, the ECS section's value type, is not every container
            // whose name contains it).
            let exact_anywhere = kinds
                .iter()
                .any(|(names, _)| names.contains(&word.as_str()));
            let mut named = false;
            for (names, picked) in kinds {
                let exact = names.contains(&word.as_str());
                if exact_anywhere && !exact {
                    continue;
                }
                let hits = names.iter().filter(|name| {
                    **name == word.as_str() || (!exact && name.contains(word.as_str()))
                });
                for name in hits {
                    named = true;
                    if !picked.contains(name) {
                        picked.push(name);
                    }
                }
                if named {
                    break;
                }
            }
            if !named {
                return Err(format!(
                    "{word:?} names no workload, container or value type"
                ));
            }
        }
        Ok(filter)
    }

    /// Whether the cell of `workload` on `container` over `value_type` is
    /// kept.
    fn keeps(&self, workload: &str, container: &str, value_type: &str) -> bool {
        picked(&self.workloads, workload) && self.keeps_container(container, value_type)
    }

    /// Whether `container` over `value_type` is kept, whatever the workload.
    fn keeps_container(&self, container: &str, value_type: &str) -> bool {
        picked(&self.containers, container) && picked(&self.value_types, value_type)
    }

    /// Whether the memory table is measured: not for a filter that names
    /// workloads and no containers or value types (it takes a while at 1M
    /// values, and such a run is for timing); else for the containers kept.
    fn measures_memory(&self) -> bool {
        self.workloads.is_empty() || !self.containers.is_empty() || !self.value_types.is_empty()
    }
}

/// Whether `name` is among `picked`, or nothing of its kind was picked.
fn picked(picked: &[&str], name: &str) -> bool {
    picked.is_empty() || picked.contains(&name)
}

fn main() {
    let config = match parse_args() {
        Ok(config) => config,
        Err(err) => {
            eprintln!("error: {err}\n\n{USAGE}");
            std::process::exit(2);
        }
    };
    // Before anything is allocated in earnest: every cell then reuses warm
    // memory instead of paying page faults that depend on what ran before.
    let allocator = handlekit_bench::alloc::keep_freed_memory();
    if config.progress {
        eprintln!("allocator: {allocator}");
    }
    let started = Instant::now();
    let mut entries = entries_for::<u64>();
    entries.extend(entries_for::<Blob64>());
    let mut workload_names: Vec<&'static str> = Workload::all().map(|w| w.name()).collect();
    workload_names.extend(ecs::workload_names());
    let mut container_names: Vec<&'static str> = Vec::new();
    for name in entries
        .iter()
        .map(|entry| entry.container)
        .chain(ecs::container_names())
    {
        if !container_names.contains(&name) {
            container_names.push(name);
        }
    }
    let filter = match Filter::new(
        &config.filter,
        &workload_names,
        &container_names,
        &[u64::NAME, Blob64::NAME, ecs::SECTION],
    ) {
        Ok(filter) => filter,
        Err(problem) => {
            eprintln!("error: --filter: {problem}\n\n{USAGE}");
            std::process::exit(2);
        }
    };

    // The plan: every (operation, value type, N) cell with the containers
    // that take part in it, and every (value type, N, fill) group of passes
    // with its passes and containers.
    let mut plan: Vec<OperationRow> = Vec::new();
    let mut pass_plan: Vec<PassGroup> = Vec::new();
    for value_type in [u64::NAME, Blob64::NAME] {
        let of_type = |workload: Workload| -> Vec<usize> {
            entries
                .iter()
                .enumerate()
                .filter(|(_, e)| e.value_type == value_type && e.runs(workload))
                .filter(|(_, e)| filter.keeps(workload.name(), e.container, value_type))
                .map(|(i, _)| i)
                .collect()
        };
        for &n in &config.sizes {
            for workload in Workload::OPERATIONS {
                let members = of_type(workload);
                if !members.is_empty() {
                    plan.push(OperationRow {
                        workload,
                        value_type,
                        n,
                        members,
                    });
                }
            }
            for fill in Fill::planned().filter(|fill| fill.runs_at(n)) {
                let mut group = PassGroup {
                    value_type,
                    n,
                    fill,
                    passes: Vec::new(),
                };
                for pass in Pass::all().filter(|p| p.fill == fill) {
                    let members = of_type(Workload::Pass(pass));
                    if !members.is_empty() {
                        group.passes.push((pass, members));
                    }
                }
                if !group.passes.is_empty() {
                    pass_plan.push(group);
                }
            }
        }
    }
    // The ECS section's plan: every row (a headline workload and its other
    // forms, measured side by side) and N, with its (contender, workload)
    // members.
    let ecs_sizes = ecs::Sizes::for_mode(config.mode);
    let mut ecs_plan: Vec<EcsRow> = Vec::new();
    for headline in EcsWorkload::ALL.into_iter().filter(|w| w.row() == *w) {
        for n in ecs_sizes.of(headline) {
            let members: Vec<(Contender, EcsWorkload)> = EcsWorkload::ALL
                .into_iter()
                .filter(|w| w.row() == headline)
                .flat_map(|w| Contender::ALL.into_iter().map(move |c| (c, w)))
                .filter(|(c, w)| c.runs(*w) && c.holds(n))
                .filter(|(c, w)| filter.keeps(w.name(), c.name(), ecs::SECTION))
                .collect();
            if !members.is_empty() {
                ecs_plan.push(EcsRow {
                    headline,
                    n,
                    members,
                });
            }
        }
    }
    // Every row of the run, in the order they run: the operations, the
    // passes, the ECS rows.
    let rows: Vec<Row<'_>> = plan
        .iter()
        .map(Row::Operation)
        .chain(pass_plan.iter().map(Row::Passes))
        .chain(ecs_plan.iter().map(Row::Ecs))
        .collect();
    let runs: u64 = rows.iter().map(|row| row.runs()).sum::<u64>() * u64::from(config.repeats);
    let progress = if config.progress {
        indicatif::ProgressBar::new(runs)
    } else {
        indicatif::ProgressBar::hidden()
    };
    progress.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg} [{elapsed}<{eta}]")
            .expect("valid template"),
    );

    let budgets = Budgets {
        operation: Budget {
            min_time: Duration::from_millis(config.min_time_ms),
            max_rounds: 1000,
        },
        pass: Budget {
            min_time: Duration::from_millis(config.pass_min_time_ms),
            max_rounds: 1000,
        },
    };
    if let Some(k) = config.row {
        // A process started for one row: its samples, as JSON, and no more.
        let Some(&row) = rows.get(k) else {
            eprintln!("error: --row {k}: the plan has {} rows", rows.len());
            std::process::exit(2);
        };
        let repeats = match config.repeat {
            Some(r) => r..r + 1,
            None => 0..config.repeats as usize,
        };
        let samples = row.samples(&config, &entries, budgets, repeats, &progress);
        println!(
            "{}",
            serde_json::to_string(&samples).expect("samples serialize")
        );
        return;
    }

    let mut cells = Vec::new();
    let mut ecs_results = EcsResults {
        sizes: Some(ecs_sizes),
        ..EcsResults::default()
    };
    for (k, &row) in rows.iter().enumerate() {
        progress.set_message(row.label());
        let samples = if config.isolate {
            let mut samples = RowSamples::new();
            for repeat in 0..config.repeats as usize {
                match samples_in_own_process(k, repeat) {
                    Ok(one) => append_repeat(&mut samples, one),
                    Err(problem) => {
                        progress.finish_and_clear();
                        eprintln!(
                            "error: row {k} ({}), repeat {repeat}: {problem}",
                            row.label()
                        );
                        std::process::exit(1);
                    }
                }
                progress.inc(row.runs());
            }
            samples
        } else {
            row.samples(
                &config,
                &entries,
                budgets,
                0..config.repeats as usize,
                &progress,
            )
        };
        let new = row.cells(&entries, samples);
        match row {
            Row::Ecs(_) => ecs_results.cells.extend(new),
            _ => cells.extend(new),
        }
    }
    run_ecs_extras(&config, &filter, ecs_sizes, &mut ecs_results, &progress);
    progress.finish_and_clear();

    let mut memory = Vec::new();
    let memory_n = *config.sizes.iter().max().expect("sizes is not empty");
    for entry in &entries {
        if filter.measures_memory() && filter.keeps_container(entry.container, entry.value_type) {
            memory.push(Memory {
                container: entry.container,
                value_type: entry.value_type,
                n: memory_n,
                bytes_per_value: (entry.memory)(memory_n),
            });
        }
    }

    let report = report::Report::new(
        config.clone(),
        cells,
        memory,
        ecs_results,
        started.elapsed(),
    );
    print!("{}", report.terminal_table());
    match report.write(&config.out_dir) {
        Ok(paths) => {
            for path in paths {
                println!("wrote {}", path.display());
            }
        }
        Err(err) => {
            eprintln!("error: cannot write the report: {err}");
            std::process::exit(1);
        }
    }
    if config.mode == "smoke" {
        let ecs_planned = ecs_plan.iter().map(|row| row.members.len()).sum();
        let checked = report
            .smoke_check(&entries, &config.out_dir)
            .and_then(|()| report.ecs.smoke_check(ecs_planned));
        if let Err(problem) = checked {
            eprintln!("smoke check FAILED: {problem}");
            std::process::exit(1);
        }
        println!("smoke check passed: every container and workload produced a number, and report.json parses");
    }
    println!("total time {:.1} s", started.elapsed().as_secs_f64());
}

/// The budgets of one sample: of an operation (with its own setup), and
/// of a pass (over a table built once per repeat).
#[derive(Clone, Copy)]
struct Budgets {
    operation: Budget,
    pass: Budget,
}

/// The samples of one row: per pass (one for a row of an operation or of
/// the ECS), per member, per repeat; what a process started for the row
/// prints.
type RowSamples = Vec<Vec<Vec<f64>>>;

/// One operation's cells at one value type and N, with the containers
/// that take part (indices into the entries).
struct OperationRow {
    workload: Workload,
    value_type: &'static str,
    n: usize,
    members: Vec<usize>,
}

/// The passes over tables of one value type, size and fill, with the
/// containers of each pass (indices into the entries).
struct PassGroup {
    value_type: &'static str,
    n: usize,
    fill: Fill,
    passes: Vec<(Pass, Vec<usize>)>,
}

impl PassGroup {
    /// Every container of the group, once, in entry order.
    fn members(&self) -> Vec<usize> {
        let mut members: Vec<usize> = self
            .passes
            .iter()
            .flat_map(|(_, members)| members.iter().copied())
            .collect();
        members.sort_unstable();
        members.dedup();
        members
    }
}

/// A row of the ECS section: a workload and its other forms (the ECS
/// cells whose ratios to each other are goals), at one N, with the
/// contenders of each.
struct EcsRow {
    headline: EcsWorkload,
    n: usize,
    members: Vec<(Contender, EcsWorkload)>,
}

/// One row of the run: the unit measured side by side, and run in a
/// process of its own.
#[derive(Clone, Copy)]
enum Row<'p> {
    Operation(&'p OperationRow),
    Passes(&'p PassGroup),
    Ecs(&'p EcsRow),
}

impl Row<'_> {
    /// What the progress bar says while the row runs.
    fn label(self) -> String {
        match self {
            Row::Operation(row) => {
                format!("{} {} N={}", row.workload.name(), row.value_type, row.n)
            }
            Row::Passes(group) => {
                format!("passes {:?} {} N={}", group.fill, group.value_type, group.n)
            }
            Row::Ecs(row) => format!("ECS {} N={}", row.headline.name(), row.n),
        }
    }

    /// The samples one repeat takes.
    fn runs(self) -> u64 {
        let members = match self {
            Row::Operation(row) => row.members.len(),
            Row::Passes(group) => group.passes.iter().map(|(_, m)| m.len()).sum(),
            Row::Ecs(row) => row.members.len(),
        };
        members as u64
    }

    /// Measures `repeats` of the row here. Every repeat runs each member
    /// once, in an order rotated by the repeat, so that a burst of noise
    /// hits them all alike and the samples of a repeat are measured side
    /// by side.
    fn samples(
        self,
        config: &Config,
        entries: &[Entry],
        budgets: Budgets,
        repeats: Range<usize>,
        progress: &indicatif::ProgressBar,
    ) -> RowSamples {
        // A row of operations or of the ECS samples one member at a time.
        type Sampler<'a> = Box<dyn FnMut(usize, u64, Placement, Budget) -> f64 + 'a>;
        let (count, mut sample): (usize, Sampler<'_>) = match self {
            Row::Passes(group) => {
                return pass_samples(config, entries, group, budgets, repeats, progress)
            }
            Row::Operation(row) if matches!(row.workload, Workload::Get | Workload::GetStale) => {
                return vec![lookup_samples(
                    config,
                    entries,
                    row,
                    budgets.operation,
                    repeats,
                    progress,
                )];
            }
            Row::Operation(row) => (
                row.members.len(),
                Box::new(move |slot, seed, placement, budget| {
                    (entries[row.members[slot]].sample)(
                        row.workload,
                        row.n,
                        seed,
                        budget,
                        placement,
                    )
                }),
            ),
            Row::Ecs(row) => (
                row.members.len(),
                // The ECS workloads' loops are not placed (see
                // `workloads::place_code` for why).
                Box::new(move |slot, seed, _placement, budget| {
                    let (contender, workload) = row.members[slot];
                    ecs::sample(contender, workload, row.n, seed, budget)
                }),
            ),
        };
        vec![interleaved(
            config,
            count,
            repeats,
            progress,
            &mut sample,
            budgets.operation,
        )]
    }

    /// The row's cells, from its samples.
    fn cells(self, entries: &[Entry], samples: RowSamples) -> Vec<Cell> {
        let cell = |workload: &'static str, member: usize, value_type, n, values| {
            let entry = &entries[member];
            Cell::new(
                workload,
                entry.container,
                entry.family,
                value_type,
                n,
                values,
            )
        };
        match self {
            Row::Operation(row) => samples
                .into_iter()
                .flatten()
                .zip(&row.members)
                .map(|(values, &member)| {
                    cell(row.workload.name(), member, row.value_type, row.n, values)
                })
                .collect(),
            Row::Passes(group) => {
                let members = group.members();
                let mut cells = Vec::new();
                for ((pass, _), per_member) in group.passes.iter().zip(samples) {
                    for (values, &member) in per_member.into_iter().zip(&members) {
                        // A container that does not run this pass.
                        if !values.is_empty() {
                            cells.push(cell(
                                pass.name(),
                                member,
                                group.value_type,
                                group.n,
                                values,
                            ));
                        }
                    }
                }
                cells
            }
            Row::Ecs(row) => samples
                .into_iter()
                .flatten()
                .zip(&row.members)
                .map(|(values, &(contender, workload))| {
                    Cell::new(
                        workload.name(),
                        contender.name(),
                        contender.family(),
                        ecs::SECTION,
                        row.n,
                        values,
                    )
                })
                .collect(),
        }
    }
}

/// `repeats` of a group of passes: each repeat builds every container of
/// the group once (with the same removals), then times each pass on each
/// of them.
///
/// A pass's sample of one container is cut into up to `config.slices`
/// slices (see [`slices_for`]), and the containers take turns a slice at a
/// time (in an order rotated by the repeat, the pass and the round), so
/// that every container's slices spread over the same stretch of time.
/// The sample is the fastest slice.
/// Why: this machine runs the same loop at two or three speeds up to 1.8×
/// apart, switching every few to few hundred milliseconds (a `for` loop
/// over an `IdTable` of 100k in one process: 0.82 ns an item for 170 ms,
/// then 0.47). Timed in one stretch each, two containers of a row could
/// land on different speeds, and their ratio moved by that much from
/// repeat to repeat. Taking turns, they see more of the same speeds, and
/// the fastest slice is the one least slowed. (It narrows the spread, it
/// does not remove it: see `crates/bench/FINDINGS.md`, "How the runner
/// measures".)
fn pass_samples(
    config: &Config,
    entries: &[Entry],
    group: &PassGroup,
    budgets: Budgets,
    repeats: Range<usize>,
    progress: &indicatif::ProgressBar,
) -> RowSamples {
    let members = group.members();
    let mut samples = vec![vec![Vec::new(); members.len()]; group.passes.len()];
    for repeat in repeats {
        let mut built: Vec<_> = members
            .iter()
            .map(|&member| {
                let seed = seed_of(config, repeat);
                (entries[member].passes)(group.fill, group.n, seed, Placement::of_repeat(repeat))
            })
            .collect();
        for (p, (pass, runs)) in group.passes.iter().enumerate() {
            let running: Vec<usize> = (0..members.len())
                .filter(|&slot| runs.contains(&members[slot]))
                .collect();
            let counts: Vec<u32> = running
                .iter()
                .map(|&slot| slices_for(config.slices, budgets.pass, built[slot].warm(*pass)))
                .collect();
            let fastest = fastest_slices(&running, &counts, repeat + p, |slot, slices| {
                built[slot].slice(*pass, slice_of(budgets.pass, slices))
            });
            for (&slot, time) in running.iter().zip(fastest) {
                samples[p][slot].push(time);
                progress.inc(1);
            }
        }
    }
    samples
}

/// How many slices a member's sample of `budget` is cut into, at most
/// `most`: as many as leave every slice time for [`PASSES_A_SLICE`] of the
/// member's passes (`pass`, the time of its warming pass), and at least
/// one.
///
/// A slice must hold several passes: its first pass finds the caches
/// holding the other members' tables, and only the median of three or more
/// passes (see `time_passes`) leaves that cold pass out. Cut into 8 slices
/// regardless, a pass over 1M slots timed mostly cold passes: `IdTable`'s
/// `values` fold over a table with 95% removed took 14–27 ns a live value
/// instead of 5–6, and its lead over `SlotMap` fell from 4× to 1.5×.
fn slices_for(most: u32, budget: Budget, pass: Duration) -> u32 {
    let fit = budget.min_time.as_nanos() / (pass.as_nanos().max(1) * PASSES_A_SLICE);
    fit.clamp(1, u128::from(most)) as u32
}

/// The passes (or rounds of lookups) a slice must have time for; see
/// [`slices_for`].
const PASSES_A_SLICE: u128 = 8;

/// The budget of one of `slices` slices of a sample of `budget`.
fn slice_of(budget: Budget, slices: u32) -> Budget {
    Budget {
        min_time: budget.min_time / slices,
        max_rounds: (budget.max_rounds / slices).max(1),
    }
}

/// Times the members `running` side by side, member `running[i]` in
/// `counts[i]` slices (`slice(member, count)` times one slice of a sample
/// cut into `count`, in ns). The slices take `max(counts)` rounds; a
/// member with fewer slices has them spread over the rounds (in round `r`
/// it takes one when `r * count / rounds` steps up), so that a slow member
/// cut into fewer slices still meets the others at several times. Within
/// a round the order rotates by `rotation` and the round. Returns each
/// member's fastest slice, in the order of `running`.
fn fastest_slices(
    running: &[usize],
    counts: &[u32],
    rotation: usize,
    mut slice: impl FnMut(usize, u32) -> f64,
) -> Vec<f64> {
    debug_assert_eq!(running.len(), counts.len());
    let rounds = counts.iter().copied().max().unwrap_or(0);
    let mut fastest = vec![f64::INFINITY; running.len()];
    for round in 0..rounds {
        for offset in 0..running.len() {
            let at = (offset + rotation + round as usize) % running.len();
            let count = counts[at];
            if takes_slice(round, count, rounds) {
                fastest[at] = fastest[at].min(slice(running[at], count));
            }
        }
    }
    fastest
}

/// Whether a member cut into `count` slices takes one in round `round`
/// of `rounds` (`count <= rounds`): when `round * count / rounds` steps
/// up, so its slices spread evenly and the last round has one.
fn takes_slice(round: u32, count: u32, rounds: u32) -> bool {
    (round + 1) * count / rounds > round * count / rounds
}

/// `repeats` of a row of lookups (`get`, `get_stale`): each repeat sets up
/// every container of the row once, then times its lookups in slices, the
/// containers taking turns, as [`pass_samples`] does with passes (and for
/// the same reason). One sample per member and repeat.
fn lookup_samples(
    config: &Config,
    entries: &[Entry],
    row: &OperationRow,
    budget: Budget,
    repeats: Range<usize>,
    progress: &indicatif::ProgressBar,
) -> Vec<Vec<f64>> {
    let everyone: Vec<usize> = (0..row.members.len()).collect();
    let mut samples = vec![Vec::new(); row.members.len()];
    for repeat in repeats {
        let mut built: Vec<_> = row
            .members
            .iter()
            .map(|&member| {
                let seed = seed_of(config, repeat);
                (entries[member].lookups)(row.workload, row.n, seed, Placement::of_repeat(repeat))
                    .expect("a lookup row holds lookup workloads")
            })
            .collect();
        let counts: Vec<u32> = built
            .iter_mut()
            .map(|one| slices_for(config.slices, budget, one.warm()))
            .collect();
        let fastest = fastest_slices(&everyone, &counts, repeat, |slot, slices| {
            built[slot].slice(slice_of(budget, slices))
        });
        for (values, time) in samples.iter_mut().zip(fastest) {
            values.push(time);
            progress.inc(1);
        }
    }
    samples
}

/// The seed of repeat `repeat`: the same in every process of the run.
fn seed_of(config: &Config, repeat: usize) -> u64 {
    config.seed ^ (repeat as u64).wrapping_mul(0x9E37_79B9)
}

/// `repeats` of a row of `count` members sampled one by one (`sample(slot,
/// seed, budget)`): every repeat runs each member once, in an order
/// rotated by the repeat, so that a burst of noise hits them all alike.
/// First, one unmeasured round of each member at the row's own N warms
/// caches, branch predictors and the allocator: the heap then holds the
/// pages the row needs (freed memory is kept, see `alloc.rs`), so that no
/// repeat pays page faults the others do not.
fn interleaved(
    config: &Config,
    count: usize,
    repeats: Range<usize>,
    progress: &indicatif::ProgressBar,
    sample: &mut dyn FnMut(usize, u64, Placement, Budget) -> f64,
    budget: Budget,
) -> Vec<Vec<f64>> {
    if config.warmup {
        let once = Budget {
            min_time: Duration::ZERO,
            max_rounds: 1,
        };
        for slot in 0..count {
            sample(slot, config.seed, Placement::of_repeat(0), once);
        }
    }
    let mut samples = vec![Vec::new(); count];
    for repeat in repeats {
        for offset in 0..count {
            let slot = (offset + repeat) % count;
            let placement = Placement::of_repeat(repeat);
            samples[slot].push(sample(slot, seed_of(config, repeat), placement, budget));
            progress.inc(1);
        }
    }
    samples
}

/// Runs repeat `repeat` of row `k` of the plan in a process started for
/// it (this program, with this run's arguments and `--row k --repeat
/// repeat`), and reads its samples.
fn samples_in_own_process(k: usize, repeat: usize) -> Result<RowSamples, String> {
    let exe = std::env::current_exe().map_err(|err| format!("cannot find the runner: {err}"))?;
    let output = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .args(["--no-progress", "--row", &k.to_string()])
        .args(["--repeat", &repeat.to_string()])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|err| format!("cannot start its process: {err}"))?;
    if !output.status.success() {
        return Err(format!("its process failed ({})", output.status));
    }
    serde_json::from_slice(&output.stdout)
        .map_err(|err| format!("its process printed no samples: {err}"))
}

/// Appends one repeat's samples of a row to those of the repeats before.
fn append_repeat(samples: &mut RowSamples, repeat: RowSamples) {
    if samples.is_empty() {
        *samples = repeat;
        return;
    }
    for (per_member, new) in samples.iter_mut().zip(repeat) {
        for (values, new) in per_member.iter_mut().zip(new) {
            values.extend(new);
        }
    }
}

/// The ECS section's measures that are not rows of cells, run here after
/// the rows: `despawn_front` per contender and `collect_pause`.
fn run_ecs_extras(
    config: &Config,
    filter: &Filter,
    sizes: ecs::Sizes,
    results: &mut EcsResults,
    progress: &indicatif::ProgressBar,
) {
    progress.set_message("ECS despawn_front");
    for contender in Contender::ALL {
        if filter.keeps("despawn_front", contender.name(), ecs::SECTION) {
            results
                .despawn_front
                .extend(ecs::despawn_front(contender, sizes.despawn));
        }
    }
    progress.set_message("ECS collect_pause");
    let orders: Vec<_> = ecs::PAUSE_ORDERS
        .into_iter()
        .filter(|(name, _)| {
            filter.keeps("collect_pause", name, ecs::SECTION)
                || filter.keeps("collect_pause", Contender::Handlekit.name(), ecs::SECTION)
        })
        .collect();
    if !orders.is_empty() {
        // One call is tens of microseconds: many samples cost nothing.
        let repeats = 5 * config.repeats as usize;
        results.collect_pause = ecs::collect_pause(&orders, sizes.pause, repeats, config.seed);
    }
}

#[cfg(test)]
mod tests {
    use super::{fastest_slices, parse_filter, parse_sizes, slices_for, takes_slice, Filter};
    use handlekit_bench::workloads::Budget;
    use std::time::Duration;

    /// A member's sample is cut into as many slices as leave each time for
    /// 8 of its passes, from 1 to the most asked for.
    #[test]
    fn a_slice_has_time_for_eight_passes() {
        let budget = Budget {
            min_time: Duration::from_millis(10),
            max_rounds: 1000,
        };
        let slices = |micros| slices_for(8, budget, Duration::from_micros(micros));
        assert_eq!(slices(100), 8); // room for 12, capped at 8
        assert_eq!(slices(250), 5);
        assert_eq!(slices(600), 2);
        assert_eq!(slices(2000), 1); // a 1M-slot pass: one stretch
        assert_eq!(slices_for(4, budget, Duration::ZERO), 4);
        let no_time = Budget {
            min_time: Duration::ZERO,
            ..budget
        };
        assert_eq!(slices_for(8, no_time, Duration::from_micros(1)), 1);
    }

    /// Every member takes one slice a round, the order rotating, and
    /// keeps its fastest.
    #[test]
    fn slices_take_turns_and_keep_the_fastest() {
        let running = [4, 7, 9];
        let mut order = Vec::new();
        let fastest = fastest_slices(&running, &[3, 3, 3], 1, |member, count| {
            assert_eq!(count, 3);
            order.push(member);
            // Member 7 is fastest in its second slice, the others in their
            // first.
            let turn = order.iter().filter(|&&m| m == member).count();
            match (member, turn) {
                (7, 2) => 1.0,
                (_, 1) => 2.0 + member as f64,
                _ => 100.0,
            }
        });
        assert_eq!(fastest, [6.0, 1.0, 11.0]);
        assert_eq!(order, [7, 9, 4, 9, 4, 7, 4, 7, 9]);
    }

    /// A member cut into fewer slices takes them spread over the rounds,
    /// each timed as a slice of its own count.
    #[test]
    fn fewer_slices_spread_over_the_rounds() {
        let rounds_of = |count| -> Vec<u32> {
            (0..4)
                .filter(|&round| takes_slice(round, count, 4))
                .collect()
        };
        assert_eq!(rounds_of(4), [0, 1, 2, 3]);
        assert_eq!(rounds_of(2), [1, 3]);
        assert_eq!(rounds_of(1), [3]);
        assert_eq!(rounds_of(3), [1, 2, 3]);
        let mut taken = Vec::new();
        fastest_slices(&[10, 11, 12], &[4, 2, 1], 0, |member, count| {
            taken.push((member, count));
            1.0
        });
        for (member, count) in [(10, 4), (11, 2), (12, 1)] {
            let slices = taken.iter().filter(|&&t| t == (member, count)).count();
            assert_eq!(slices, count as usize, "member {member}");
        }
        assert_eq!(taken.len(), 7);
    }

    /// The filter over a few of the runner's names.
    fn filter_of(text: &str) -> Result<Filter, String> {
        Filter::new(
            &parse_filter(text),
            &["insert", "reinsert", "iter_half", "iter_sparse"],
            &["IdTable<Id>", "IdTable<Id32>", "Hive", "Pool"],
            &["u64", "64B"],
        )
    }

    #[test]
    fn filter_words_keep_their_underscores() {
        assert_eq!(parse_filter("iter_sparse,,Hive"), ["iter_sparse", "Hive"]);
    }

    #[test]
    fn filter_kinds_narrow_and_words_of_a_kind_widen() {
        let filter = filter_of("iter_sparse,Hive,Pool,64B").unwrap();
        assert!(filter.keeps("iter_sparse", "Hive", "64B"));
        assert!(filter.keeps("iter_sparse", "Pool", "64B"));
        assert!(!filter.keeps("iter_sparse", "Hive", "u64"));
        assert!(!filter.keeps("iter_half", "Hive", "64B"));
        assert!(!filter.keeps("iter_sparse", "IdTable<Id>", "64B"));
        assert!(filter.measures_memory());
    }

    #[test]
    fn filter_word_equal_to_a_name_picks_that_name_alone() {
        let filter = filter_of("insert").unwrap();
        assert!(filter.keeps("insert", "Hive", "u64"));
        assert!(!filter.keeps("reinsert", "Hive", "u64"));
        // A workload filter alone skips the memory table.
        assert!(!filter.measures_memory());
        // A part of a name picks every name that contains it.
        let filter = filter_of("iter_,IdTable").unwrap();
        assert!(filter.keeps("iter_half", "IdTable<Id32>", "u64"));
        assert!(!filter.keeps("insert", "IdTable<Id>", "u64"));
        assert!(!filter.keeps("iter_half", "Hive", "u64"));
    }

    #[test]
    fn filter_word_equal_to_a_name_of_a_later_kind_picks_that_name_alone() {
        // `ecs` is a value type; container names that contain it stay out.
        let filter = Filter::new(
            &parse_filter("ecs"),
            &["insert", "simple_iter"],
            &["Hive", "hecs", "bevy_ecs", "shipyard"],
            &["u64", "64B", "ecs"],
        )
        .unwrap();
        assert!(filter.keeps("simple_iter", "shipyard", "ecs"));
        assert!(filter.keeps("simple_iter", "hecs", "ecs"));
        assert!(!filter.keeps("insert", "Hive", "u64"));
        // A part of a name still picks every container containing it.
        let filter = Filter::new(
            &parse_filter("bevy"),
            &["insert"],
            &["bevy_ecs", "bevy_ecs(sparse)", "hecs"],
            &["ecs"],
        )
        .unwrap();
        assert!(filter.keeps("insert", "bevy_ecs(sparse)", "ecs"));
        assert!(!filter.keeps("insert", "hecs", "ecs"));
    }

    #[test]
    fn filter_words_pick_passes_by_their_parts() {
        use handlekit_bench::workloads::Pass;
        let passes: Vec<&'static str> = Pass::all().map(Pass::name).collect();
        assert_eq!(passes.len(), 80);
        assert!(passes.contains(&"iter.bb.for.full"));
        assert!(passes.contains(&"values_mut.sum.fold.sparse"));
        let filter =
            |text: &str| Filter::new(&parse_filter(text), &passes, &["Hive"], &["u64"]).unwrap();
        // `iter.` is the walk `iter`, not `iter_mut`.
        let iter = filter("iter.");
        assert!(iter.keeps("iter.sum.fold.half", "Hive", "u64"));
        assert!(!iter.keeps("iter_mut.sum.fold.half", "Hive", "u64"));
        // `.for.sparse` picks the `for` loops over sparse tables, of every
        // walk and body.
        let loops = filter(".for.sparse");
        assert!(loops.keeps("keys.bb.for.sparse", "Hive", "u64"));
        assert!(!loops.keeps("keys.bb.fold.sparse", "Hive", "u64"));
        assert!(!loops.keeps("keys.bb.for.full", "Hive", "u64"));
        // Two words of one kind widen.
        let both = filter(".for.,.sparse");
        assert!(both.keeps("keys.bb.fold.sparse", "Hive", "u64"));
        assert!(both.keeps("keys.bb.for.full", "Hive", "u64"));
        assert!(!both.keeps("keys.bb.fold.full", "Hive", "u64"));
        // A whole name picks that pass alone.
        let one = filter("values.sum.for.full");
        assert!(one.keeps("values.sum.for.full", "Hive", "u64"));
        assert!(!one.keeps("values.sum.fold.full", "Hive", "u64"));
    }

    #[test]
    fn filter_word_naming_nothing_is_an_error() {
        let problem = filter_of("iter_sparse,Hvie").unwrap_err();
        assert!(problem.contains("Hvie"), "{problem}");
        assert!(Filter::default().measures_memory());
        assert!(Filter::default().keeps("insert", "Hive", "64B"));
    }

    /// A row's samples reach the runner from the row's own process as
    /// JSON: every time must come back to the bit.
    #[test]
    fn row_samples_survive_their_json_exactly() {
        let samples: super::RowSamples = vec![
            vec![vec![0.1, 1.0 / 3.0, 2.5e-7], vec![]],
            vec![vec![f64::MAX, f64::MIN_POSITIVE, 123_456.789_012_345]],
        ];
        let text = serde_json::to_string(&samples).unwrap();
        let back: super::RowSamples = serde_json::from_str(&text).unwrap();
        let bits = |s: &super::RowSamples| -> Vec<u64> {
            s.iter().flatten().flatten().map(|x| x.to_bits()).collect()
        };
        assert_eq!(bits(&back), bits(&samples));
        assert_eq!(back.len(), 2);
        assert!(back[0][1].is_empty());
    }

    #[test]
    fn sizes_accept_digit_separators() {
        assert_eq!(parse_sizes("1_000,100000").unwrap(), [1000, 100_000]);
        assert!(parse_sizes("1k").is_err());
    }
}
