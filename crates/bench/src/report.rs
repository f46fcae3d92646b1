//! Turning cells into a report: terminal table, `report.json`, `report.md`
//! and `report.html` (with hand-written SVG charts).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::containers::Family;
use crate::ecs::EcsResults;
use crate::text::{escape, format_ns, median_cell, ratio_cell, Row};
use crate::workloads::{Body, Fill, Form, Pass, Walk, Workload};
use crate::{Cell, Config, Entry, Memory};

/// The machine and revision a report was made on.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub os: &'static str,
    pub arch: &'static str,
    pub git_revision: String,
    /// The allocator and its settings (see `alloc::keep_freed_memory`).
    pub allocator: &'static str,
}

impl Machine {
    fn detect() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find(|line| line.starts_with("model name"))
                    .and_then(|line| line.split(':').nth(1))
                    .map(|name| name.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .ok()
                .filter(|out| out.status.success())
                .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        };
        let mut git_revision =
            git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
        if git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty()) {
            git_revision.push_str("-dirty");
        }
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
            git_revision,
            allocator: crate::alloc::regime(),
        }
    }
}

use crate::goals::{verdict_word, Bound, Spread, Verdict};
pub use crate::goals::{Goal, GoalRow};

#[derive(Clone, Debug, serde::Serialize)]
pub struct Report {
    pub generated_unix: u64,
    pub machine: Machine,
    pub config: Config,
    pub duration_s: f64,
    pub cells: Vec<Cell>,
    pub memory: Vec<Memory>,
    /// The ECS section (issue 21).
    pub ecs: EcsResults,
    pub goals: Vec<Goal>,
}

/// The handlekit containers the goals are checked for.
const SUBJECTS: [&str; 2] = ["IdTable<Id>", "IdTable<Id32>"];

/// Who a goal cell is measured against.
#[derive(Clone, Copy)]
enum Against {
    /// One named container.
    Container(&'static str),
    /// The fastest container of these families, in each repeat.
    Fastest(&'static [Family]),
}

/// A goal about some containers' cells against others of the same row.
struct Rule {
    text: String,
    /// The workloads whose cells the goal covers.
    workloads: Vec<&'static str>,
    /// The containers the goal is about, and whether each counts towards
    /// the verdict (a second key type is shown for information).
    subjects: Vec<(&'static str, bool)>,
    against: Against,
    /// The figure is `theirs ÷ ours` (how many times faster) instead of
    /// `ours ÷ theirs`.
    speedup: bool,
    /// The bound at a size: `AtMost` for time ratios, `AtLeast` for
    /// speed-ups.
    bound: fn(usize) -> Bound,
    /// Only the largest size of the run.
    only_largest: bool,
}

impl Rule {
    /// A goal of `subject` against `against` in `workloads`.
    fn new(
        text: String,
        workloads: &[&'static str],
        subject: &'static str,
        against: Against,
        bound: fn(usize) -> Bound,
    ) -> Rule {
        Rule {
            text,
            workloads: workloads.to_vec(),
            subjects: vec![(subject, true)],
            against,
            speedup: false,
            bound,
            only_largest: false,
        }
    }

    /// The same goal for `IdTable<Id>`, with `IdTable<Id32>` shown beside.
    fn id_table(mut self) -> Rule {
        self.subjects = vec![(SUBJECTS[0], true), (SUBJECTS[1], false)];
        self
    }

    fn speedup(mut self) -> Rule {
        self.speedup = true;
        self
    }

    fn largest(mut self) -> Rule {
        self.only_largest = true;
        self
    }
}

/// The names of the passes of `fill` in `form`, one per walk and body
/// (`opaque_only`: the `black_box` body alone).
fn passes(fill: Fill, form: Form, opaque_only: bool) -> Vec<&'static str> {
    Pass::all()
        .filter(|p| p.fill == fill && p.form == form)
        .filter(|p| !opaque_only || p.body == Body::Opaque)
        .map(Pass::name)
        .collect()
}

/// The name of one pass.
fn pass(walk: Walk, body: Body, form: Form, fill: Fill) -> &'static str {
    Pass {
        walk,
        body,
        form,
        fill,
    }
    .name()
}

impl Report {
    pub fn new(
        config: Config,
        cells: Vec<Cell>,
        memory: Vec<Memory>,
        ecs: EcsResults,
        duration: Duration,
    ) -> Self {
        let mut report = Report {
            generated_unix: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            machine: Machine::detect(),
            config,
            duration_s: duration.as_secs_f64(),
            cells,
            memory,
            ecs,
            goals: Vec::new(),
        };
        report.goals = report.check_goals();
        report.goals.extend(report.ecs.goals());
        report
    }

    fn cell(&self, workload: &str, container: &str, value_type: &str, n: usize) -> Option<&Cell> {
        self.cells.iter().find(|c| {
            c.workload == workload
                && c.container == container
                && c.value_type == value_type
                && c.n == n
        })
    }

    /// The fastest cell of a row among containers of the given families.
    fn best(
        &self,
        workload: &str,
        value_type: &str,
        n: usize,
        families: &[Family],
    ) -> Option<&Cell> {
        self.cells
            .iter()
            .filter(|c| c.workload == workload && c.value_type == value_type && c.n == n)
            .filter(|c| families.contains(&c.family))
            .min_by(|a, b| a.median_ns.total_cmp(&b.median_ns))
    }

    /// The distinct (value type, N) rows measured for a workload.
    fn rows(&self, workload: &str) -> Vec<(&'static str, usize)> {
        let mut rows: Vec<(&'static str, usize)> = self
            .cells
            .iter()
            .filter(|c| c.workload == workload)
            .map(|c| (c.value_type, c.n))
            .collect();
        rows.sort_by_key(|&(value, n)| (value != "u64", n));
        rows.dedup();
        rows
    }

    /// Checks `rule` on every cell it covers.
    fn check(&self, rule: Rule) -> Goal {
        let largest = self.config.sizes.iter().copied().max().unwrap_or(0);
        let mut rows = Vec::new();
        for &workload in &rule.workloads {
            for (value_type, n) in self.rows(workload) {
                if rule.only_largest && n != largest {
                    continue;
                }
                let others: Vec<&Cell> = match rule.against {
                    Against::Container(name) => self
                        .cell(workload, name, value_type, n)
                        .into_iter()
                        .collect(),
                    Against::Fastest(families) => self
                        .cells
                        .iter()
                        .filter(|c| c.workload == workload && c.value_type == value_type)
                        .filter(|c| c.n == n && families.contains(&c.family))
                        .collect(),
                };
                for &(subject, counts) in &rule.subjects {
                    let Some(ours) = self.cell(workload, subject, value_type, n) else {
                        continue;
                    };
                    if let Some(spread) = Spread::per_repeat(ours, &others, rule.speedup) {
                        let mut row = GoalRow::new(
                            subject,
                            ours.workload,
                            value_type,
                            n,
                            spread,
                            (rule.bound)(n),
                        );
                        row.counts = counts;
                        rows.push(row);
                    }
                }
            }
        }
        Goal::new(rule.text, rows)
    }

    fn check_goals(&self) -> Vec<Goal> {
        const GENERATIONAL: &[Family] = &[Family::Generational];
        let mut rules = Vec::new();
        // Issue 31, goal 1: passes over the core tables in both forms, the
        // `for` loop first (the headline).
        for form in [Form::For, Form::Fold] {
            let form_name = match form {
                Form::For => "`for` loops",
                Form::Fold => "`fold` / `for_each`",
            };
            let full = passes(Fill::Full, form, false);
            let mut rule = Rule::new(
                format!("no holes, {form_name}: IdTable and LookupTable ≤ 1.0× SlotMap (every walk and body; figure: ÷ SlotMap)"),
                &full,
                SUBJECTS[0],
                Against::Container("SlotMap"),
                |_| Bound::AtMost(1.0),
            );
            rule.subjects = vec![
                (SUBJECTS[0], true),
                ("LookupTable", true),
                (SUBJECTS[1], false),
            ];
            rules.push(rule);
            rules.push(Rule::new(
                format!("no holes, {form_name}: PackedTable ≤ 1.0× DenseSlotMap (figure: ÷ DenseSlotMap)"),
                &full,
                "PackedTable",
                Against::Container("DenseSlotMap"),
                |_| Bound::AtMost(1.0),
            ));
            let mut rule = Rule::new(
                format!(
                    "no holes, {form_name}: Hive and Pool ≤ 1.2× IdTable (figure: ÷ IdTable<Id>)"
                ),
                &full,
                "Hive",
                Against::Container(SUBJECTS[0]),
                |_| Bound::AtMost(1.2),
            );
            rule.subjects = vec![("Hive", true), ("Pool", true)];
            rules.push(rule);
            // The goal against a `Vec`, and the nearest goal its
            // note proposes for the keyed walks: a generational key's own
            // floor, the same loop written by hand over a `Vec` and its
            // generations.
            for (against, text) in [
                ("Vec", "the same loop over a Vec (figure: ÷ Vec)"),
                (
                    "Vec+generations",
                    "the same loop over a Vec with its generations, written by hand (proposed; figure: ÷ Vec+generations)",
                ),
            ] {
                rules.push(
                    Rule::new(
                        format!("no holes, opaque body, {form_name}: IdTable ≤ 1.1× {text}"),
                        &passes(Fill::Full, form, true),
                        SUBJECTS[0],
                        Against::Container(against),
                        |_| Bound::AtMost(1.1),
                    )
                    .id_table(),
                );
            }
            let mut holes = passes(Fill::Half, form, false);
            holes.extend(passes(Fill::Sparse, form, false));
            rules.push(
                Rule::new(
                    format!("half and 95% removed, {form_name}: IdTable ≥ 2× faster than SlotMap at 100k and more, ≥ 1.5× below (figure: SlotMap ÷ IdTable)"),
                    &holes,
                    SUBJECTS[0],
                    Against::Container("SlotMap"),
                    |n| Bound::AtLeast(if n >= 100_000 { 2.0 } else { 1.5 }),
                )
                .id_table()
                .speedup(),
            );
            // The nearest goal the notes propose for the half-removed
            // cells below 100k: the same lead over tables whose holes the
            // branch predictor has not learned (64 walked in turn; see
            // `Fill::Rotating`).
            rules.push(
                Rule::new(
                    format!("half removed, 64 tables walked in turn, {form_name}: IdTable ≥ 1.5× faster than SlotMap (proposed; figure: SlotMap ÷ IdTable)"),
                    &passes(Fill::Rotating, form, false),
                    SUBJECTS[0],
                    Against::Container("SlotMap"),
                    |_| Bound::AtLeast(1.5),
                )
                .id_table()
                .speedup(),
            );
        }
        // Issue 31, goal 4: lookups and writes against the peers' bests.
        rules.push(
            Rule::new(
                "get: IdTable ≤ 1.0× pulz-arena (figure: ÷ pulz-arena)".into(),
                &["get"],
                SUBJECTS[0],
                Against::Container("pulz-arena"),
                |_| Bound::AtMost(1.0),
            )
            .id_table(),
        );
        rules.push(
            Rule::new(
                "reinsert (insert into freed slots): IdTable ≤ 1.0× HopSlotMap (figure: ÷ HopSlotMap)".into(),
                &["reinsert"],
                SUBJECTS[0],
                Against::Container("HopSlotMap"),
                |_| Bound::AtMost(1.0),
            )
            .id_table(),
        );
        // Issue 31's goal 4 for Hive. Its insertion is checked into freed
        // slots too (`reinsert`, the peers' benchmark's `InsertUsed`): an
        // emptied block refills by a sweep in slot order, where following
        // its free list in the order of removal took up to 30x IdTable's
        // time.
        for workload in ["insert", "reinsert", "remove", "get"] {
            rules.push(Rule::new(
                format!("{workload}: Hive ≤ 1.5× IdTable (figure: Hive ÷ IdTable<Id>)"),
                &[workload],
                "Hive",
                Against::Container(SUBJECTS[0]),
                |_| Bound::AtMost(1.5),
            ));
        }
        // The nearest goal a hive's removal can meet while it keeps a free
        // list per block (seed 001's nested free lists): prototypes with one
        // free list for the whole hive reached 1.1-1.7x, with the block
        // lists 2.1-2.4x (crates/bench/FINDINGS.md, "`Hive`'s removals").
        // Removal-heavy users are steered to Pool, whose removal has the
        // goal "≤ IdTable".
        rules.push(Rule::new(
            "remove: Hive ≤ 2.5× IdTable (proposed; figure: Hive ÷ IdTable<Id>)".into(),
            &["remove"],
            "Hive",
            Against::Container(SUBJECTS[0]),
            |_| Bound::AtMost(2.5),
        ));
        // Issue 22: the core tables at or ahead of the fastest generational
        // peer on every common operation.
        for workload in ["insert", "reinsert", "remove", "churn", "get", "get_stale"] {
            rules.push(
                Rule::new(
                    format!("{workload}: IdTable ≤ 1.0× the fastest generational peer"),
                    &[workload],
                    SUBJECTS[0],
                    Against::Fastest(GENERATIONAL),
                    |_| Bound::AtMost(1.0),
                )
                .id_table(),
            );
        }
        rules.push(
            Rule::new(
                "get: IdTable ≤ 1.15× Vec at the largest N".into(),
                &["get"],
                SUBJECTS[0],
                Against::Container("Vec"),
                |_| Bound::AtMost(1.15),
            )
            .id_table()
            .largest(),
        );
        // The passes of the goals before issue 31 were `fold`s: `values`
        // summed, and `iter` summed with the keys' bits.
        let values_fold = |fill| pass(Walk::Values, Body::Sum, Form::Fold, fill);
        let iter_fold = |fill| pass(Walk::Iter, Body::Sum, Form::Fold, fill);
        for workload in [
            values_fold(Fill::Half),
            values_fold(Fill::Sparse),
            iter_fold(Fill::Half),
            iter_fold(Fill::Sparse),
        ] {
            rules.push(
                Rule::new(
                    format!(
                        "{workload}: IdTable ≥ 2× faster than SlotMap (figure: SlotMap ÷ IdTable)"
                    ),
                    &[workload],
                    SUBJECTS[0],
                    Against::Container("SlotMap"),
                    |_| Bound::AtLeast(2.0),
                )
                .id_table()
                .speedup(),
            );
        }
        for workload in [values_fold(Fill::Half), values_fold(Fill::Sparse)] {
            rules.push(
                Rule::new(
                    format!("{workload}: IdTable ≥ 1.3× faster than HopSlotMap (figure: HopSlotMap ÷ IdTable)"),
                    &[workload],
                    SUBJECTS[0],
                    Against::Container("HopSlotMap"),
                    |_| Bound::AtLeast(1.3),
                )
                .id_table()
                .speedup(),
            );
        }
        rules.push(
            Rule::new(
                format!("{}: IdTable ≤ 1.0× SlotMap", iter_fold(Fill::Full)),
                &[iter_fold(Fill::Full)],
                SUBJECTS[0],
                Against::Container("SlotMap"),
                |_| Bound::AtMost(1.0),
            )
            .id_table(),
        );
        rules.push(Rule::new(
            format!("{}: PackedTable ≤ 1.05× Vec", values_fold(Fill::Full)),
            &[values_fold(Fill::Full)],
            "PackedTable",
            Against::Container("Vec"),
            |_| Bound::AtMost(1.05),
        ));
        rules.push(
            Rule::new(
                format!("{}: IdTable ≤ 1.2× Vec", values_fold(Fill::Full)),
                &[values_fold(Fill::Full)],
                SUBJECTS[0],
                Against::Container("Vec"),
                |_| Bound::AtMost(1.2),
            )
            .id_table(),
        );
        for workload in ["insert", "remove", "get"] {
            rules.push(Rule::new(
                format!("{workload}: PackedTable ≤ 1.0× DenseSlotMap (figure: PackedTable ÷ DenseSlotMap)"),
                &[workload],
                "PackedTable",
                Against::Container("DenseSlotMap"),
                |_| Bound::AtMost(1.0),
            ));
        }
        rules.push(Rule::new(
            "remove: PackedTable ≤ 1.5× IdTable (figure: PackedTable ÷ IdTable)".into(),
            &["remove"],
            "PackedTable",
            Against::Container(SUBJECTS[0]),
            |_| Bound::AtMost(1.5),
        ));
        rules.push(
            Rule::new(
                "get: IdTable ≥ 40× faster than BTreeMap+Box at the largest N (seed 000's claim; figure: BTreeMap ÷ IdTable)".into(),
                &["get"],
                SUBJECTS[0],
                Against::Container("BTreeMap+Box"),
                |_| Bound::AtLeast(40.0),
            )
            .id_table()
            .speedup()
            .largest(),
        );
        // Issue 5: the containers with stable addresses. Hive walks the
        // same occupancy words as IdTable with the same code, so against
        // IdTable the goal is parity (issue 22), not "ahead".
        rules.push(Rule::new(
            format!("{}: Hive ≤ 1.2× Vec", values_fold(Fill::Full)),
            &[values_fold(Fill::Full)],
            "Hive",
            Against::Container("Vec"),
            |_| Bound::AtMost(1.2),
        ));
        for workload in [values_fold(Fill::Half), values_fold(Fill::Sparse)] {
            rules.push(Rule::new(
                format!(
                    "{workload}: Hive within 1.05× of IdTable<Id> (figure: Hive ÷ IdTable<Id>)"
                ),
                &[workload],
                "Hive",
                Against::Container(SUBJECTS[0]),
                |_| Bound::AtMost(1.05),
            ));
            rules.push(Rule::new(
                format!("{workload}: Hive ahead of SlotMap (figure: Hive ÷ SlotMap)"),
                &[workload],
                "Hive",
                Against::Container("SlotMap"),
                |_| Bound::AtMost(1.0),
            ));
        }
        for container in ["Hive", "Pool"] {
            for fill in Fill::ALL {
                let workload = iter_fold(fill);
                rules.push(Rule::new(
                    format!("{workload}: {container} ≤ 1.2× IdTable (figure: {container} ÷ IdTable<Id>)"),
                    &[workload],
                    container,
                    Against::Container(SUBJECTS[0]),
                    |_| Bound::AtMost(1.2),
                ));
            }
        }
        // Issue 22: the dense secondary map against slotmap's.
        for workload in ["insert", "remove"] {
            rules.push(Rule::new(
                format!("{workload}: SecondaryMap ≤ 1.0× slotmap::SecondaryMap (figure: SecondaryMap ÷ slotmap::SecondaryMap)"),
                &[workload],
                "SecondaryMap",
                Against::Container("slotmap::SecondaryMap"),
                |_| Bound::AtMost(1.0),
            ));
        }
        for workload in ["insert", "remove"] {
            rules.push(Rule::new(
                format!("{workload}: Pool ≤ IdTable (figure: Pool ÷ IdTable)"),
                &[workload],
                "Pool",
                Against::Container(SUBJECTS[0]),
                |_| Bound::AtMost(1.0),
            ));
        }
        rules.into_iter().map(|rule| self.check(rule)).collect()
    }

    /// The containers in report order.
    fn containers(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        for cell in &self.cells {
            if !names.contains(&cell.container) {
                names.push(cell.container);
            }
        }
        names
    }

    /// The containers with a cell in `workload`, in report order (the
    /// secondary maps run only some workloads).
    fn containers_in(&self, workload: &str) -> Vec<&'static str> {
        self.containers()
            .into_iter()
            .filter(|&name| {
                self.cells
                    .iter()
                    .any(|c| c.workload == workload && c.container == name)
            })
            .collect()
    }

    fn workloads(&self) -> Vec<Workload> {
        Workload::all()
            .filter(|w| self.cells.iter().any(|c| c.workload == w.name()))
            .collect()
    }

    /// One table row per (value type, N): the median of every container,
    /// the best marked, and handlekit's ratio to the best peer.
    fn table_rows(&self, workload: &str) -> Vec<Row> {
        let containers = self.containers_in(workload);
        let mut out = Vec::new();
        for (value_type, n) in self.rows(workload) {
            let best = self
                .best(
                    workload,
                    value_type,
                    n,
                    &[
                        Family::Handlekit,
                        Family::Generational,
                        Family::Plain,
                        Family::Map,
                        Family::Bound,
                    ],
                )
                .map(|c| c.container);
            let cells = containers
                .iter()
                .map(|&name| median_cell(self.cell(workload, name, value_type, n), best))
                .collect();
            let ours = self.best(workload, value_type, n, &[Family::Handlekit]);
            let peer = self.best(
                workload,
                value_type,
                n,
                &[Family::Generational, Family::Plain, Family::Map],
            );
            let ratio = ratio_cell(ours, peer);
            out.push((format!("{value_type} N={n}"), cells, ratio));
        }
        out
    }

    pub fn terminal_table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "handlekit comparison — {} mode, median of {} samples, * = best in row, ratio = best handlekit ÷ best peer (< 1: handlekit faster)",
            self.config.mode, self.config.repeats
        );
        for workload in self.workloads() {
            let containers = self.containers_in(workload.name());
            let _ = writeln!(out, "\n{} ({})", workload.name(), workload.unit());
            let rows = self.table_rows(workload.name());
            crate::text::terminal_table(&mut out, 14, &containers, &rows);
        }
        let _ = writeln!(out, "\nbytes per value after N inserts");
        for memory in &self.memory {
            let _ = writeln!(
                out,
                "  {:<20} {:<4} N={:<8} {:>8.1}",
                memory.container, memory.value_type, memory.n, memory.bytes_per_value
            );
        }
        out.push_str(&self.ecs.terminal());
        let _ = writeln!(
            out,
            "\ngoals (each cell: the median of its per-repeat ratios [lowest–highest]; MET when the worst repeat meets the goal, MISSED when the best misses it, else within noise; cells that are MET are counted, the others listed)"
        );
        for goal in &self.goals {
            let _ = writeln!(out, "  [{}] {}", verdict_word(goal.verdict), goal.goal);
            if let Some(note) = &goal.note {
                let _ = writeln!(out, "      {note}");
            }
            if !goal.rows.is_empty() {
                let _ = writeln!(out, "      {}", tally(goal));
            }
            for row in goal
                .rows
                .iter()
                .filter(|r| r.counts && r.verdict != Verdict::Met)
            {
                let _ = writeln!(out, "      {}", row_text(row));
            }
        }
        out
    }

    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# handlekit comparison report\n");
        let _ = writeln!(
            out,
            "Revision `{}` on {} ({} cores, {} {}). Mode `{}`, sizes {:?}, {} samples per cell, median shown. \
             Containers are interleaved within each cell. `*` marks the best cell of a row; the last column is \
             the best handlekit container divided by the best peer (below 1: handlekit is faster). Run took {:.0} s. \
             Allocator: {}.\n",
            self.machine.git_revision,
            self.machine.cpu,
            self.machine.cores,
            self.machine.os,
            self.machine.arch,
            self.config.mode,
            self.config.sizes,
            self.config.repeats,
            self.duration_s,
            self.machine.allocator
        );
        let _ = writeln!(out, "## Goals\n");
        let _ = writeln!(
            out,
            "Each goal cell is the median of its per-repeat ratios, with the lowest and highest in brackets \
             (the containers of a row are measured side by side in every repeat). A cell is MET when its \
             worst repeat meets the goal, MISSED when its best repeat misses it, and within noise when the \
             spread straddles the goal; a goal is MISSED if any cell is, MET if all are. Rows marked (info) \
             do not count.\n"
        );
        let _ = writeln!(out, "| verdict | goal | cells |\n| --- | --- | --- |");
        for goal in &self.goals {
            let mut figures = vec![tally(goal)];
            figures.extend(goal.rows.iter().map(row_text));
            if let Some(note) = &goal.note {
                figures.push(note.clone());
            }
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                verdict_word(goal.verdict),
                goal.goal,
                figures.join("; ")
            );
        }
        for workload in self.workloads() {
            let containers = self.containers_in(workload.name());
            let _ = writeln!(out, "\n## {} ({})\n", workload.name(), workload.unit());
            crate::text::markdown_table(
                &mut out,
                &containers,
                "handlekit ÷ best peer",
                &self.table_rows(workload.name()),
            );
        }
        out.push_str(&self.ecs.markdown());
        let _ = writeln!(out, "\n## Memory: bytes per value after N inserts\n");
        let _ = writeln!(
            out,
            "| container | value | N | bytes per value |\n| --- | --- | --- | --- |"
        );
        for memory in &self.memory {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} |",
                memory.container, memory.value_type, memory.n, memory.bytes_per_value
            );
        }
        out
    }

    pub fn html(&self) -> String {
        let mut out = String::new();
        out.push_str(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>handlekit comparison</title>\n\
             <style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}\
             table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\
             .chart{display:inline-block;margin:8px}h2{margin-top:1.5em}\
             table.heat td{text-align:center;min-width:78px}table.heat small{color:#444}</style></head><body>\n",
        );
        let _ = writeln!(
            out,
            "<h1>handlekit comparison</h1><p>Revision <code>{}</code>, {} ({} cores). Mode {}, {} samples per cell; \
             charts show the median ns per operation against N, both axes logarithmic. Allocator: {}.</p>",
            escape(&self.machine.git_revision),
            escape(&self.machine.cpu),
            self.machine.cores,
            self.config.mode,
            self.config.repeats,
            escape(self.machine.allocator)
        );
        out.push_str(&self.heat_map());
        let containers = self.containers();
        for workload in self.workloads() {
            let _ = writeln!(
                out,
                "<h2>{} <small>({})</small></h2>",
                workload.name(),
                workload.unit()
            );
            for value_type in ["u64", "64B"] {
                if let Some(svg) = self.chart(workload.name(), value_type, &containers) {
                    let _ = writeln!(out, "<div class=\"chart\">{svg}</div>");
                }
            }
        }
        out.push_str(&self.ecs.html());
        out.push_str("<h2>Goals</h2><table><tr><th>verdict</th><th>goal</th><th>figures</th></tr>");
        for goal in &self.goals {
            let mut figures = vec![tally(goal)];
            figures.extend(goal.rows.iter().map(row_text));
            if let Some(note) = &goal.note {
                figures.push(note.clone());
            }
            let _ = write!(
                out,
                "<tr><td>{}</td><td style=\"text-align:left\">{}</td><td style=\"text-align:left\">{}</td></tr>",
                verdict_word(goal.verdict),
                escape(&goal.goal),
                escape(&figures.join("; "))
            );
        }
        out.push_str("</table></body></html>\n");
        out
    }

    /// The page's first picture: for every workload (rows) and value type
    /// and N (columns), the best handlekit container's time ÷ the best
    /// peer's (`Vec`, the physical bound, is not a peer). Green below 1
    /// (handlekit faster), red above, deeper the further from 1; each cell
    /// names the two containers.
    fn heat_map(&self) -> String {
        let peers = [Family::Generational, Family::Plain, Family::Map];
        let mut columns: Vec<(&'static str, usize)> =
            self.cells.iter().map(|c| (c.value_type, c.n)).collect();
        columns.sort_by_key(|&(value, n)| (value != "u64", n));
        columns.dedup();
        let mut out = String::from(
            "<h2>At a glance: best handlekit ÷ best peer</h2>\n<p>Each cell is the median time of the fastest \
             handlekit container divided by that of the fastest peer (slotmap, thunderdome, generational-arena, slab, \
             BTreeMap, HashMap) in the same run. Below 1 (green), handlekit is faster.</p>\n\
             <table class=\"heat\"><tr><th>workload</th>",
        );
        for (value_type, n) in &columns {
            let _ = write!(out, "<th>{value_type}<br>N={n}</th>");
        }
        out.push_str("</tr>\n");
        for workload in self.workloads() {
            let name = workload.name();
            let _ = write!(out, "<tr><th style=\"text-align:left\">{name}</th>");
            for &(value_type, n) in &columns {
                let ours = self.best(name, value_type, n, &[Family::Handlekit]);
                let theirs = self.best(name, value_type, n, &peers);
                match (ours, theirs) {
                    (Some(ours), Some(theirs)) => {
                        let ratio = ours.median_ns / theirs.median_ns;
                        let _ = write!(
                            out,
                            "<td style=\"background:{}\" title=\"{} {} ns, {} {} ns\"><b>{ratio:.2}</b><br><small>{}<br>vs {}</small></td>",
                            heat_color(ratio),
                            escape(ours.container),
                            format_ns(ours.median_ns),
                            escape(theirs.container),
                            format_ns(theirs.median_ns),
                            escape(ours.container),
                            escape(theirs.container),
                        );
                    }
                    _ => out.push_str("<td>–</td>"),
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        out
    }

    /// A log-log line chart of ns/op against N, one line per container.
    fn chart(
        &self,
        workload: &str,
        value_type: &str,
        containers: &[&'static str],
    ) -> Option<String> {
        let cells: Vec<&Cell> = self
            .cells
            .iter()
            .filter(|c| c.workload == workload && c.value_type == value_type && c.median_ns > 0.0)
            .collect();
        if cells.is_empty() {
            return None;
        }
        let (width, height) = (520.0, 300.0);
        let (left, right, top, bottom) = (60.0, 150.0, 24.0, 40.0);
        let log = |v: f64| v.max(1e-3).log10();
        let (mut x_lo, mut x_hi) = (f64::MAX, f64::MIN);
        let (mut y_lo, mut y_hi) = (f64::MAX, f64::MIN);
        for cell in &cells {
            x_lo = x_lo.min(log(cell.n as f64));
            x_hi = x_hi.max(log(cell.n as f64));
            y_lo = y_lo.min(log(cell.median_ns));
            y_hi = y_hi.max(log(cell.median_ns));
        }
        if x_hi - x_lo < 1e-9 {
            x_lo -= 0.5;
            x_hi += 0.5;
        }
        y_lo = y_lo.floor();
        y_hi = y_hi.ceil().max(y_lo + 1.0);
        let plot_w = width - left - right;
        let plot_h = height - top - bottom;
        let px = |n: f64| left + (log(n) - x_lo) / (x_hi - x_lo) * plot_w;
        let py = |ns: f64| top + (1.0 - (log(ns) - y_lo) / (y_hi - y_lo)) * plot_h;
        let mut svg = String::new();
        let _ = write!(
            svg,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-size=\"11\">\
             <text x=\"{left}\" y=\"15\" font-weight=\"bold\">{workload}, {value_type}</text>\
             <rect x=\"{left}\" y=\"{top}\" width=\"{plot_w}\" height=\"{plot_h}\" fill=\"none\" stroke=\"#888\"/>"
        );
        let mut decade = y_lo;
        while decade <= y_hi + 1e-9 {
            let y = py(10f64.powf(decade));
            let _ = write!(
                svg,
                "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
                 <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                left + plot_w,
                left - 4.0,
                y + 4.0,
                format_ns(10f64.powf(decade))
            );
            decade += 1.0;
        }
        let mut sizes: Vec<usize> = cells.iter().map(|c| c.n).collect();
        sizes.sort_unstable();
        sizes.dedup();
        for &n in &sizes {
            let x = px(n as f64);
            let _ = write!(
                svg,
                "<text x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{n}</text>",
                top + plot_h + 16.0
            );
        }
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">N</text>",
            left + plot_w / 2.0,
            height - 6.0
        );
        for (index, name) in containers.iter().enumerate() {
            let mut points: Vec<&&Cell> = cells.iter().filter(|c| c.container == *name).collect();
            if points.is_empty() {
                continue;
            }
            points.sort_by_key(|c| c.n);
            let color = PALETTE[index % PALETTE.len()];
            let path: Vec<String> = points
                .iter()
                .map(|c| format!("{:.1},{:.1}", px(c.n as f64), py(c.median_ns)))
                .collect();
            let dash = if name.starts_with("IdTable") {
                ""
            } else {
                " stroke-dasharray=\"4 2\""
            };
            let _ = write!(
                svg,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>",
                path.join(" ")
            );
            for point in &path {
                let (x, y) = point.split_once(',').unwrap_or(("0", "0"));
                let _ = write!(
                    svg,
                    "<circle cx=\"{x}\" cy=\"{y}\" r=\"2.5\" fill=\"{color}\"/>"
                );
            }
            let legend_y = top + 12.0 * index as f64 + 8.0;
            let legend_x = left + plot_w + 10.0;
            let _ = write!(
                svg,
                "<line x1=\"{legend_x}\" x2=\"{}\" y1=\"{legend_y}\" y2=\"{legend_y}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\
                 <text x=\"{}\" y=\"{}\">{}</text>",
                legend_x + 16.0,
                legend_x + 20.0,
                legend_y + 4.0,
                escape(name)
            );
        }
        svg.push_str("</svg>");
        Some(svg)
    }

    /// Writes `report.json`, `report.md` and `report.html` into `dir`.
    pub fn write(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let files = [
            ("report.json", json),
            ("report.md", self.markdown()),
            ("report.html", self.html()),
        ];
        let mut written = Vec::new();
        for (name, contents) in files {
            let path = dir.join(name);
            std::fs::write(&path, contents)?;
            written.push(path);
        }
        Ok(written)
    }

    /// For `--smoke`: every container produced a number for every workload
    /// it can run, at every size, and `report.json` parses back.
    pub fn smoke_check(&self, entries: &[Entry], dir: &Path) -> Result<(), String> {
        if self.config.filter.is_empty() {
            for entry in entries {
                for workload in Workload::all() {
                    if !entry.runs(workload) {
                        continue;
                    }
                    for &n in &self.config.sizes {
                        match self.cell(workload.name(), entry.container, entry.value_type, n) {
                            Some(cell) if cell.median_ns.is_finite() && cell.median_ns >= 0.0 => {}
                            Some(cell) => {
                                return Err(format!(
                                    "{} {} {} N={n}: not a number ({})",
                                    workload.name(),
                                    entry.container,
                                    entry.value_type,
                                    cell.median_ns
                                ))
                            }
                            None => {
                                return Err(format!(
                                    "{} {} {} N={n}: no cell",
                                    workload.name(),
                                    entry.container,
                                    entry.value_type
                                ))
                            }
                        }
                    }
                }
            }
        }
        let text = std::fs::read_to_string(dir.join("report.json")).map_err(|e| e.to_string())?;
        let parsed: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("report.json: {e}"))?;
        let cells = parsed["cells"].as_array().map_or(0, Vec::len);
        if cells != self.cells.len() {
            return Err(format!(
                "report.json holds {cells} cells, expected {}",
                self.cells.len()
            ));
        }
        if self
            .goals
            .iter()
            .any(|g| g.verdict.is_none() && g.note.is_none())
            && self.config.filter.is_empty()
        {
            return Err("a goal could not be evaluated".into());
        }
        Ok(())
    }
}

const PALETTE: [&str; 12] = [
    "#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#000000", "#aec7e8",
];

/// The background of a heat-map cell: white at a ratio of 1, green below
/// (full at 4× faster), red above (full at 4× slower), on a log scale.
fn heat_color(ratio: f64) -> String {
    let strength = (ratio.ln().abs() / 4f64.ln()).min(1.0);
    let fade = (255.0 - 140.0 * strength).round() as u8;
    if ratio <= 1.0 {
        format!("rgb({fade},255,{fade})")
    } else {
        format!("rgb(255,{fade},{fade})")
    }
}

/// How many of a goal's cells are met, within noise and missed.
fn tally(goal: &Goal) -> String {
    let count = |verdict| {
        goal.rows
            .iter()
            .filter(|r| r.counts && r.verdict == verdict)
            .count()
    };
    format!(
        "{} cells: {} met, {} within noise, {} missed",
        goal.rows.iter().filter(|r| r.counts).count(),
        count(Verdict::Met),
        count(Verdict::WithinNoise),
        count(Verdict::Missed)
    )
}

/// One goal cell: who, where, the spread, and the verdict unless met.
pub(crate) fn row_text(row: &GoalRow) -> String {
    let mark = match (row.counts, row.verdict) {
        (false, _) => " (info)",
        (true, Verdict::Met) => "",
        (true, Verdict::WithinNoise) => " (within noise)",
        (true, Verdict::Missed) => " (MISSED)",
    };
    format!(
        "{} {} {} N={}: {}{mark}",
        row.subject,
        row.cell,
        row.value_type,
        row.n,
        row.spread().text()
    )
}
