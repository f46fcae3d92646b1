//! Goal checks over the spread of ratios measured side by side.
//!
//! Every repeat of a row measures all its containers one after another, so
//! sample `r` of one cell and sample `r` of another are a pair: their
//! ratio is a figure that one burst of noise hits on both sides alike. A
//! goal cell is the list of those per-repeat ratios. It is **met** only
//! when its worst repeat meets the goal, **missed** only when its best
//! repeat misses it, and **within noise** when the spread straddles the
//! goal.

use crate::Cell;

/// How a goal cell stands against its bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Every repeat meets the goal.
    Met,
    /// Some repeats meet it, some do not.
    WithinNoise,
    /// No repeat meets it.
    Missed,
}

impl Verdict {
    /// The word the report prints.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Met => "MET",
            Verdict::WithinNoise => "within noise",
            Verdict::Missed => "MISSED",
        }
    }

    /// The verdict of a goal over its cells: missed if any cell is missed,
    /// met if all are met, else within noise; `None` without cells.
    pub fn of_all(verdicts: impl IntoIterator<Item = Verdict>) -> Option<Verdict> {
        let mut all: Option<Verdict> = None;
        for verdict in verdicts {
            all = Some(match (all, verdict) {
                (_, Verdict::Missed) | (Some(Verdict::Missed), _) => Verdict::Missed,
                (None | Some(Verdict::Met), Verdict::Met) => Verdict::Met,
                _ => Verdict::WithinNoise,
            });
        }
        all
    }
}

/// What a goal asks of a figure.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The figure (a time ratio: ours ÷ theirs) is at most this.
    AtMost(f64),
    /// The figure (a speed-up: theirs ÷ ours) is at least this.
    AtLeast(f64),
}

impl Bound {
    fn holds(self, figure: f64) -> bool {
        match self {
            Bound::AtMost(limit) => figure <= limit,
            Bound::AtLeast(limit) => figure >= limit,
        }
    }

    /// The verdict of a spread: met when its worst end holds, missed when
    /// its best end fails.
    pub fn verdict(self, spread: Spread) -> Verdict {
        let (worst, best) = match self {
            Bound::AtMost(_) => (spread.high, spread.low),
            Bound::AtLeast(_) => (spread.low, spread.high),
        };
        if self.holds(worst) {
            Verdict::Met
        } else if self.holds(best) {
            Verdict::WithinNoise
        } else {
            Verdict::Missed
        }
    }
}

/// A figure over the repeats: its median and its range.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Spread {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

impl Spread {
    /// The spread of some figures (none: `None`).
    pub fn of(figures: &[f64]) -> Option<Spread> {
        let mut sorted: Vec<f64> = figures.iter().copied().filter(|f| f.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        Some(Spread {
            median: crate::median(&sorted),
            low: sorted[0],
            high: sorted[sorted.len() - 1],
        })
    }

    /// One figure, measured once.
    pub fn single(figure: f64) -> Spread {
        Spread {
            median: figure,
            low: figure,
            high: figure,
        }
    }

    /// The per-repeat ratios of `ours` against the fastest of `others` in
    /// the same repeat: `ours ÷ theirs`, or `theirs ÷ ours` for a
    /// `speedup`. `None` if `others` is empty.
    pub fn per_repeat(ours: &Cell, others: &[&Cell], speedup: bool) -> Option<Spread> {
        let repeats = others
            .iter()
            .map(|c| c.samples.len())
            .min()?
            .min(ours.samples.len());
        let ratios: Vec<f64> = (0..repeats)
            .map(|r| {
                let theirs = others
                    .iter()
                    .map(|c| c.samples[r])
                    .min_by(f64::total_cmp)
                    .expect("others is not empty");
                if speedup {
                    theirs / ours.samples[r]
                } else {
                    ours.samples[r] / theirs
                }
            })
            .collect();
        Spread::of(&ratios)
    }

    /// `median [low–high]`, or the median alone when the range is a point.
    pub fn text(self) -> String {
        if self.low == self.high {
            format!("{:.2}", self.median)
        } else {
            format!("{:.2} [{:.2}–{:.2}]", self.median, self.low, self.high)
        }
    }
}

/// One cell of a goal check.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GoalRow {
    /// The container (or contender) the goal is about.
    pub subject: &'static str,
    /// The workload of the cell.
    pub cell: &'static str,
    pub value_type: &'static str,
    pub n: usize,
    /// The median of the per-repeat figures.
    pub figure: f64,
    /// The lowest and highest per-repeat figure.
    pub low: f64,
    pub high: f64,
    pub bound: Bound,
    pub verdict: Verdict,
    /// Whether the row counts towards the goal's verdict (`IdTable<Id32>`
    /// is shown beside `IdTable<Id>` for information).
    pub counts: bool,
    /// Whether the row stands in the way of its goal being met: false for
    /// a counting row that is not `Met`. Set by [`Goal::new`], once the
    /// row's `counts` is final, for readers of `report.json` that check
    /// rows one by one (a goal is met when every row passes).
    pub pass: bool,
}

impl GoalRow {
    pub fn new(
        subject: &'static str,
        cell: &'static str,
        value_type: &'static str,
        n: usize,
        spread: Spread,
        bound: Bound,
    ) -> GoalRow {
        GoalRow {
            subject,
            cell,
            value_type,
            n,
            figure: spread.median,
            low: spread.low,
            high: spread.high,
            bound,
            verdict: bound.verdict(spread),
            counts: true,
            pass: false,
        }
    }

    pub fn spread(&self) -> Spread {
        Spread {
            median: self.figure,
            low: self.low,
            high: self.high,
        }
    }
}

/// A goal from the issue tracker, checked against this run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Goal {
    pub goal: String,
    pub rows: Vec<GoalRow>,
    /// `None` when the run did not measure what the goal needs.
    pub verdict: Option<Verdict>,
    /// Why the goal is not measured, when that is on purpose; shown with
    /// the verdict.
    pub note: Option<String>,
}

impl Goal {
    /// A goal over its rows: the verdict of the rows that count.
    pub fn new(goal: String, mut rows: Vec<GoalRow>) -> Goal {
        for row in &mut rows {
            row.pass = !row.counts || row.verdict == Verdict::Met;
        }
        let verdict = Verdict::of_all(rows.iter().filter(|r| r.counts).map(|r| r.verdict));
        Goal {
            goal,
            rows,
            verdict,
            note: None,
        }
    }
}

/// The verdict's word, or "not measured".
pub fn verdict_word(verdict: Option<Verdict>) -> &'static str {
    verdict.map_or("not measured", Verdict::word)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::containers::Family;

    fn cell(container: &'static str, samples: &[f64]) -> Cell {
        Cell::new(
            "get",
            container,
            Family::Handlekit,
            "u64",
            1000,
            samples.to_vec(),
        )
    }

    /// Per-repeat ratios from `low` to `high`, the median halfway.
    fn spread(low: f64, high: f64) -> Spread {
        Spread {
            median: (low + high) / 2.0,
            low,
            high,
        }
    }

    /// `bound`'s verdict on each of `spreads`.
    fn verdicts(bound: Bound, spreads: &[Spread]) -> Vec<Verdict> {
        spreads
            .iter()
            .map(|&spread| bound.verdict(spread))
            .collect()
    }

    #[test]
    fn at_most_is_met_only_when_the_worst_repeat_meets_it() {
        use Verdict::*;
        let spreads = [
            spread(0.8, 1.0),
            spread(0.9, 1.1),
            spread(1.01, 1.3),
            Spread::single(1.0),
            Spread::single(1.001),
        ];
        let expected = [Met, WithinNoise, Missed, Met, Missed];
        assert_eq!(verdicts(Bound::AtMost(1.0), &spreads), expected);
    }

    #[test]
    fn at_least_is_met_only_when_the_worst_repeat_meets_it() {
        use Verdict::*;
        let spreads = [spread(2.0, 3.0), spread(1.9, 2.1), spread(1.0, 1.99)];
        assert_eq!(
            verdicts(Bound::AtLeast(2.0), &spreads),
            [Met, WithinNoise, Missed]
        );
    }

    #[test]
    fn a_goal_is_missed_if_one_cell_is_met_if_all_are() {
        use Verdict::*;
        assert_eq!(Verdict::of_all([]), None);
        assert_eq!(Verdict::of_all([Met, Met]), Some(Met));
        assert_eq!(Verdict::of_all([Met, WithinNoise, Met]), Some(WithinNoise));
        assert_eq!(Verdict::of_all([WithinNoise, Missed, Met]), Some(Missed));
        assert_eq!(Verdict::of_all([Missed, Met]), Some(Missed));
    }

    #[test]
    fn rows_that_do_not_count_leave_the_verdict_alone() {
        let met = Spread::single(0.5);
        let missed = Spread::single(1.5);
        let mut info = GoalRow::new("IdTable<Id32>", "get", "u64", 1, missed, Bound::AtMost(1.0));
        info.counts = false;
        let main = GoalRow::new("IdTable<Id>", "get", "u64", 1, met, Bound::AtMost(1.0));
        let goal = Goal::new("g".into(), vec![main, info]);
        assert_eq!(goal.verdict, Some(Verdict::Met));
        assert!(goal.rows.iter().all(|row| row.pass));
        let missed_row = GoalRow::new("IdTable<Id>", "get", "u64", 1, missed, Bound::AtMost(1.0));
        let goal = Goal::new("g".into(), vec![missed_row]);
        assert_eq!(
            (goal.verdict, goal.rows[0].pass),
            (Some(Verdict::Missed), false)
        );
        assert_eq!(Goal::new("g".into(), Vec::new()).verdict, None);
    }

    #[test]
    fn ratios_pair_the_samples_of_one_repeat_against_the_fastest_peer() {
        // Repeat 0 was slow for everyone: ours 2.0 against peers 2.0 and
        // 4.0. Repeat 1: ours 1.0 against 0.5 and 2.0. Repeat 2: 1.0
        // against 1.25 and 1.0.
        let ours = cell("IdTable<Id>", &[2.0, 1.0, 1.0]);
        let a = cell("SlotMap", &[2.0, 0.5, 1.25]);
        let b = cell("HopSlotMap", &[4.0, 2.0, 1.0]);
        let spread = Spread::per_repeat(&ours, &[&a, &b], false).unwrap();
        assert_eq!(spread.low, 1.0);
        assert_eq!(spread.high, 2.0);
        assert_eq!(spread.median, 1.0);
        // Ratios of medians would have said 1.0 ÷ 1.25 = 0.8 and met a
        // goal that two repeats out of three missed.
        assert_eq!(Bound::AtMost(1.0).verdict(spread), Verdict::WithinNoise);
        let speedup = Spread::per_repeat(&ours, &[&b], true).unwrap();
        assert_eq!((speedup.low, speedup.median, speedup.high), (1.0, 2.0, 2.0));
        assert!(Spread::per_repeat(&ours, &[], false).is_none());
        // The cell keeps its samples in repeat order.
        assert_eq!(a.samples, [2.0, 0.5, 1.25]);
        assert_eq!((a.min_ns, a.median_ns, a.max_ns), (0.5, 1.25, 2.0));
    }

    #[test]
    fn spread_text_shows_the_range() {
        assert_eq!(Spread::single(0.5).text(), "0.50");
        let spread = Spread::of(&[0.9, 1.1, 1.0]).unwrap();
        assert_eq!(spread.text(), "1.00 [0.90–1.10]");
    }
}
