//! The comparison model, computed once: read results directories, pick a
//! base target, and compare every other target with it.
//!
//! [`build`] turns results into a [`Report`]: absolute and relative
//! throughput, costs per operation and their ratios, intervals and
//! p-values, the Insert Benchmark's SLA rows and response-time ranges,
//! per-second series, latency percentiles and the summary's sentences.
//! Every format in `render` only lays out what this model holds, so every
//! format shows the same figures, and `report.json` is this model. The
//! comparison never talks to a database.

mod aa;
mod adaptive;
mod build;
mod cell;
mod hosts;
mod parts;
mod significance;
mod targets;
mod verdicts;

mod campaign;
pub mod cause;
mod cost;
mod explain;
pub mod gate;
pub mod linkbench;
pub mod profile;
mod series;
mod setting;
pub mod statements;
mod summary;
pub mod tpcc;
pub mod waits;

pub use campaign::{TimelineCell, TimelineRow};
pub use cost::{Cost, Rate};
pub use explain::{
    cost_matters, costs_moved, explain, superseded, CPU_BOUND_PCT, IO_BOUND_PCT, OWN_CPU_BOUND_PCT,
    UNEXPLAINED_P,
};
pub use hosts::HostOffset;
pub use series::{
    ClassLine, DbSizeStep, InterferenceRow, Percentiles, ProblemRow, RateLine, ResponseRow,
    RowSeries, SlaRow,
};
pub use summary::SummaryLine;

use std::collections::BTreeMap;

use anyhow::{bail, Context};
use serde::Serialize;

use std::path::Path;

use crate::measure::stats;
use crate::metrics::host::HostFacts;
use crate::plan::{Step, StepId, StepKind};
use crate::results::{LoadedRun, RunStatus, StepResult, Unit};
use crate::workload::Group;
pub use adaptive::{Open, WindowSplit};
pub use build::{build, build_all, build_subset, Comparison, ComparisonSpec};
use build::{row_title, step_rows};
use cell::{cell, compare};
pub use cell::{
    cost_medians, Cell, Figures, Hardware, Internals, Judgement, Method, PlanDiff, Significance,
    StatementLatency, Test,
};
use targets::column_order;
pub use targets::{RunMeta, TargetMeta, UnknownBase};

/// One target's figures from its step results, as a report's cell holds
/// them (the history keeps one per repeat).
pub fn cell_of<'a>(results: impl Iterator<Item = &'a StepResult>) -> Cell {
    cell(results)
}

/// Compares two cells as a report compares a target with its base, and
/// says in one sentence what moved (the history's change points use it
/// with the builds on either side as target and base).
pub fn explain_change(c: &mut Cell, base: &Cell) -> String {
    compare(c, base, false);
    verdicts::test_pair(c, base);
    let rel = c.test.relative.unwrap_or(1.0);
    explain(rel, c, base)
}

/// A window shorter than this is too short to judge a change by: the
/// sampler's floor (the machine's CPU is counted in 10 ms ticks; a
/// connection's set-up and the first statement's planning are a large part
/// of it).
pub const SHORT_WINDOW_SECS: f64 = crate::metrics::MIN_WINDOW_SECS;

/// Throughput ratios at or below this are regressions, at or above
/// [`FASTER`] improvements (for costs the other way round).
pub const SLOWER: f64 = 0.95;
pub const FASTER: f64 = 1.05;

/// What a report says of a change: *changed* (`Worse`, `Better`: past
/// the band and shown so by its test), *same* (`Same`: its interval lies
/// inside the band: equivalence shown, never read off a point estimate),
/// or *undecided* (every other variant: the test could not tell, or the
/// cell could not be judged, each saying why). Only the first three are
/// answers; the colours are the seeds' (red ≤ 0.95, green ≥ 1.05) on
/// changed cells alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Worse,
    Same,
    Better,
    /// Tested, but neither past the band with its interval clear of 1 nor
    /// inside the band: more repeats (or quieter windows) would decide.
    Undecided,
    /// Not judged: other programs or the hypervisor took enough of the
    /// machine, in this target's window or its base's, to explain it.
    Disturbed,
    /// Not judged: the target's or the base's window was too short to
    /// measure ([`SHORT_WINDOW_SECS`]).
    TooShort,
    /// No test could judge it: one repeat, and windows too short for the
    /// within-run test (or no A/A copies). Never counted as slower,
    /// faster or the same; `run --confirm` adds the repeats it needs.
    Untested,
    /// Not judged: a window of the target or its base never became
    /// steady (`measure::steady`); more repeats would not settle it, a
    /// longer warm-up or step would.
    Unsteady,
}

impl Verdict {
    /// Slower or faster, shown.
    pub fn is_change(self) -> bool {
        matches!(self, Verdict::Worse | Verdict::Better)
    }

    /// Changed or the same: an answer. Everything else is undecided.
    pub fn is_decided(self) -> bool {
        matches!(self, Verdict::Worse | Verdict::Better | Verdict::Same)
    }
}

/// Classifies a ratio by the band alone (higher is better), as printed:
/// on the ratio rounded to two decimals, so a cell that reads 0.95 is
/// always past the threshold, in every table and format. A point says
/// where a ratio lies, never that it is the same: [`Cell::verdict`]
/// decides that from the interval.
pub fn verdict(relative: f64) -> Verdict {
    band_verdict(relative, SLOWER, FASTER)
}

/// [`verdict`] against a band of its own (the A/A floor's, where that is
/// wider than 5%).
pub fn band_verdict(relative: f64, slower: f64, faster: f64) -> Verdict {
    let relative = printed(relative);
    if relative <= slower {
        Verdict::Worse
    } else if relative >= faster {
        Verdict::Better
    } else {
        Verdict::Same
    }
}

/// A ratio as the tables print it, to two decimals: what every verdict
/// reads, so that what is printed and what is judged agree.
pub(crate) fn printed(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Classifies a cost ratio (lower is better).
pub fn cost_verdict(relative: f64) -> Verdict {
    match verdict(relative) {
        Verdict::Worse => Verdict::Better,
        Verdict::Better => Verdict::Worse,
        v => v,
    }
}

/// A cost's verdict: past a threshold and, when both sides have
/// repeats, significant; otherwise `Undecided`.
pub fn judged(v: Verdict, p_value: Option<f64>) -> Verdict {
    match (v, p_value) {
        (Verdict::Worse | Verdict::Better, Some(p)) if p >= stats::ALPHA => Verdict::Undecided,
        (v, _) => v,
    }
}

/// `a ÷ b`, when both are measured and `b` is not zero.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() => Some(a / b),
        _ => None,
    }
}

pub use crate::measure::stats::median;

/// The median of whole numbers, rounded (a median of two halfway apart
/// is their mean); `None` of none.
fn median_u64(values: impl Iterator<Item = u64>) -> Option<u64> {
    let mut v: Vec<f64> = values.map(|b| b as f64).collect();
    median(&mut v).map(|m| m.round() as u64)
}

impl Row {
    /// The step as tables show it: `scan (warm)`, and `scan (warm) #2`
    /// the second time the sequence runs it.
    pub fn title(&self) -> String {
        row_title(&self.id.step, self.id.occurrence)
    }
}

/// A step's identity in report.json: its `phase` (with phases), the
/// `step` as a whole, its `occurrence` and `clients` beside it.
pub(crate) fn step_fields<S: serde::Serializer>(id: &StepId, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct View<'a> {
        #[serde(skip_serializing_if = "Option::is_none")]
        phase: &'a Option<String>,
        step: &'a Step,
        occurrence: u32,
        clients: u32,
    }
    View {
        phase: &id.phase,
        step: &id.step,
        occurrence: id.occurrence,
        clients: id.clients,
    }
    .serialize(s)
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub seq: usize,
    /// What the row is of: the step at its client count, which every
    /// cell's results share (written as `step`, `occurrence`, `clients`
    /// and, with phases, `phase`, as report.json always had them).
    #[serde(flatten, serialize_with = "step_fields")]
    pub id: StepId,
    pub group: Group,
    pub unit: Unit,
    /// One per target, in [`Report::targets`] order.
    pub cells: Vec<Cell>,
    /// Per-second throughput, latency percentiles and per-class series.
    pub series: RowSeries,
    /// The spread of identical runs on this step, for the comparison's
    /// first base run more than once as A/A copies: the largest ÷ the
    /// smallest of the copies' throughputs over the windows no other
    /// program disturbed, less 1. A change within it is not coloured.
    /// (Each cell carries the floor of its own comparison.)
    pub noise_floor: Option<f64>,
    /// The base has A/A copies, but too few undisturbed ones on this step
    /// for a floor.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub noise_floor_disturbed: bool,
    /// The spread of the base measured on several hosts (shards): the
    /// largest ÷ the smallest of their quiet throughputs, less 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_floor: Option<f64>,
}

/// What measuring disturbed windows again took over the results read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Retried {
    /// Disturbed windows measured again.
    pub windows: usize,
    /// Step results that had one or more.
    pub steps: usize,
    /// Of those, the ones whose last window was quiet.
    pub settled: usize,
    /// The waits, warm-ups and windows they took, in seconds.
    pub secs: f64,
}

/// A base that measured nothing, so nothing could be compared with it.
#[derive(Debug, Clone, Serialize)]
pub struct BaseFailed {
    pub base: String,
    /// Its first failure's message.
    pub why: Option<String>,
    /// A target with figures, to pass as `--base` instead.
    pub instead: Option<String>,
}

/// A step left out of the summary's counts: another program or the
/// hypervisor took enough of the machine while it ran, or its window was
/// too short to measure.
#[derive(Debug, Clone, Serialize)]
pub struct NotJudged {
    pub step: String,
    pub clients: u32,
    pub relative: f64,
    /// Whose window and what took the machine.
    pub why: String,
}

/// A change of one step against the base, for the summary.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub step: String,
    pub clients: u32,
    pub relative: f64,
    /// The cost behind it, in words, led by its most likely cause.
    pub explanation: String,
    /// Its causes, ranked (`compare::cause`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<cause::Cause>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TargetSummary {
    pub target: String,
    /// Steps past a threshold that no test could judge.
    #[serde(default)]
    pub untested: usize,
    /// Those steps, with what their costs say, furthest from 1 first.
    #[serde(default)]
    pub untested_changes: Vec<Change>,
    /// The A/A copy of this target, when it is one.
    pub copy_of: Option<String>,
    /// The target it is compared with.
    pub base: String,
    pub compared: usize,
    pub slower: usize,
    pub faster: usize,
    /// Shown the same: the interval inside the band (or the A/A floor).
    pub same: usize,
    /// Tested but neither changed nor shown the same, each with what
    /// would decide it.
    pub undecided: Vec<NotJudged>,
    /// Not judged: the target or its base missed the Insert Benchmark's SLA.
    pub unjudged: usize,
    /// Not judged: the target's or its base's window was disturbed.
    pub disturbed: Vec<NotJudged>,
    /// Not judged: the target's or its base's window was too short to
    /// measure (never the worst or the best).
    pub too_short: Vec<NotJudged>,
    /// Not judged: a window of the target or its base never became
    /// steady.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unsteady: Vec<NotJudged>,
    /// Steps whose measured window began before the warm-up had ended,
    /// in words (MSER-5's cut).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warming: Vec<String>,
    pub worst: Option<Change>,
    pub best: Option<Change>,
    /// Regressions, worst first.
    pub regressions: Vec<Change>,
    /// Improvements, best first.
    pub wins: Vec<Change>,
    /// Steps that failed for this target.
    pub failed: Vec<String>,
    /// Insert Benchmark q-steps whose background inserts missed the SLA.
    pub sla_failed: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The base as asked for: a target's name, or a plan name that is the
    /// base on each host.
    pub base: String,
    pub runs: Vec<RunMeta>,
    pub targets: Vec<TargetMeta>,
    /// Each target's base, by index into `targets` (a base is its own).
    pub base_of: Vec<usize>,
    /// The hosts, in order of first appearance; two or more make column
    /// groups.
    pub hosts: Vec<String>,
    /// With the base on several hosts: each host's base against the
    /// others'.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub host_offsets: Vec<HostOffset>,
    /// A host whose base is off from the others, in words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub host_notes: Vec<String>,
    pub rows: Vec<Row>,
    pub summary: Vec<TargetSummary>,
    /// The summary in sentences, as every format prints it.
    pub summary_lines: Vec<SummaryLine>,
    /// The database size after each step of the first repeat.
    pub db_size: Vec<DbSizeStep>,
    /// A campaign's steps in run order across phases, intervals and
    /// maintenance steps, with sizes (empty for a plain sequence).
    pub timeline: Vec<TimelineRow>,
    /// The Insert Benchmark's q-steps against their background-write SLA.
    pub sla: Vec<SlaRow>,
    /// The Insert Benchmark's response-time ranges.
    pub response_times: Vec<ResponseRow>,
    /// LinkBench's own tables (empty when it did not run).
    #[serde(skip_serializing_if = "linkbench::View::is_empty")]
    pub linkbench: linkbench::View,
    /// TPC-C's own tables (empty when it did not run).
    #[serde(skip_serializing_if = "tpcc::View::is_empty")]
    pub tpcc: tpcc::View,
    /// Failed steps and errors, with the first message of each kind.
    pub problems: Vec<ProblemRow>,
    /// What else used the machine during each step window.
    pub interference: Vec<InterferenceRow>,
    /// Disturbed windows the run measured again at once, and what that
    /// took.
    pub retried: Retried,
    /// An adaptive run's bounds and what it decided (`repeats = "auto"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveView>,
    /// A base with no figure on any step (its server never started, or
    /// every step failed): why, and a target that could be the base.
    pub base_failed: Vec<BaseFailed>,
    /// Every step result, by target index: the per-repeat measurements the
    /// CSV lists one per line (JSON has their figures in the cells).
    #[serde(skip)]
    pub steps: Vec<(usize, StepResult)>,
    /// For each of `steps`, the index of its row in `rows` (settle steps
    /// have none).
    #[serde(skip)]
    pub step_rows: Vec<Option<usize>>,
}

/// An adaptive run's bounds, and its record once it has decided.
#[derive(Debug, Clone, Serialize)]
pub struct AdaptiveView {
    pub bounds: crate::plan::Adaptive,
    pub record: Option<crate::results::adaptive::AdaptiveRecord>,
}

/// A step of a target the report could not judge, for `run --confirm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsettled {
    /// Index into [`Report::targets`].
    pub target: usize,
    /// The step, as the schedule names it.
    pub at: StepId,
    /// Repeats measured so far.
    pub repeats: usize,
    /// The repeats that would decide it, when its test could say (an
    /// undecided cell's `repeats_needed`).
    pub wants: Option<u32>,
    /// Why, in words.
    pub why: String,
}

/// How a report groups its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Grouping {
    /// By what a step does: point, range, range with aggregation, writes.
    #[default]
    Kind,
    /// By where it runs in the sequence: before the write-heavy steps,
    /// those, after them, and the inserts and deletes at the end.
    Position,
}

impl Report {
    /// Regroups the rows by `g` (they are built by kind). By position, a
    /// step the sequence runs twice, such as point-query before and after
    /// the writes, is in both halves.
    pub fn regroup(&mut self, g: Grouping) {
        if g == Grouping::Kind {
            return;
        }
        let is_write = |r: &Row| r.group == Group::Write;
        let reads = |r: &&Row| !is_write(r) && !matches!(r.group, Group::Load | Group::Insert);
        let Some(first_write) = self
            .rows
            .iter()
            .filter(|r| is_write(r))
            .map(|r| r.seq)
            .min()
        else {
            return;
        };
        // Writes after the last read that follows the first write are the
        // inserts and deletes at the end; with no read after the writes,
        // every write is write-heavy.
        let last_read = self
            .rows
            .iter()
            .filter(reads)
            .map(|r| r.seq)
            .filter(|s| *s > first_write)
            .max()
            .unwrap_or(usize::MAX);
        for r in &mut self.rows {
            r.group = match r.group {
                Group::Load | Group::Insert => r.group,
                Group::Write if r.seq > last_read => Group::InsertDelete,
                Group::Write => Group::WriteHeavy,
                _ if r.seq < first_write => Group::Before,
                _ => Group::After,
            };
        }
        let order = |g: Group| Group::ALL.iter().position(|x| *x == g).unwrap_or(0);
        self.rows
            .sort_by_key(|r| (order(r.group), r.seq, r.id.clients));
        // The per-step lookup follows the rows.
        self.step_rows = step_rows(&self.rows, &self.steps);
    }

    /// The steps whose verdict more repeats could settle, for each target
    /// and its base: a disturbed window, or a change past the thresholds
    /// that the repeats (or the seconds of one window) cannot tell from
    /// noise.
    pub fn unsettled(&self) -> Vec<Unsettled> {
        let mut out: Vec<Unsettled> = Vec::new();
        for row in &self.rows {
            for (ti, c) in row.cells.iter().enumerate() {
                let wants = c.test.significance.as_ref().and_then(|s| s.repeats_needed);
                let why = match c.verdict() {
                    Some(Verdict::Disturbed) => "disturbed",
                    // A missed SLA is the target's result, not noise.
                    Some(Verdict::Undecided)
                        if c.judgement.sla_missed.is_none()
                            && !c.judgement.base_sla_missed
                            && c.judgement.rate_missed.is_none() =>
                    {
                        // At the band's edge no number of repeats decides
                        // it: the report says so, and repeats are not spent.
                        if wants.is_none() {
                            continue;
                        }
                        "undecided"
                    }
                    Some(Verdict::Untested) => "not tested",
                    _ => continue,
                };
                for t in [ti, self.base_of[ti]] {
                    let cell = &row.cells[t];
                    // A disturbed cell's windows are no quiet repeats: it
                    // wants them all.
                    let repeats = if why == "disturbed" {
                        0
                    } else {
                        cell.figures.repeats
                    };
                    // A base several cells need gets the most any of them wants.
                    if let Some(u) = out.iter_mut().find(|u| u.target == t && u.at == row.id) {
                        u.wants = u.wants.max(wants);
                        u.repeats = u.repeats.min(repeats);
                    } else {
                        out.push(Unsettled {
                            target: t,
                            at: row.id.clone(),
                            repeats,
                            wants,
                            why: format!(
                                "{} ({} c{}: {why})",
                                self.targets[t].name,
                                row.title(),
                                row.id.clients
                            ),
                        });
                    }
                }
            }
        }
        out
    }

    pub fn is_base(&self, ti: usize) -> bool {
        self.base_of[ti] == ti
    }

    /// Several hosts: tables put each host's targets under its name.
    pub fn by_host(&self) -> bool {
        self.hosts.len() > 1
    }

    /// Target indices with the targets of one host together, hosts in
    /// order of first appearance.
    pub fn columns(&self) -> Vec<usize> {
        column_order(&self.targets, &self.hosts)
    }

    pub fn rows_in(&self, g: Group) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(move |r| r.group == g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_are_inclusive() {
        assert_eq!(verdict(0.95), Verdict::Worse);
        assert_eq!(verdict(0.956), Verdict::Same);
        assert_eq!(verdict(1.044), Verdict::Same);
        assert_eq!(verdict(1.05), Verdict::Better);
        // Costs: more is worse.
        assert_eq!(cost_verdict(1.37), Verdict::Worse);
        assert_eq!(cost_verdict(0.6), Verdict::Better);
    }

    /// Regression: 0.95 was red in one cell and plain in another of the
    /// same column (0.9496 and 0.9504 both print as 0.95).
    #[test]
    fn a_ratio_is_judged_as_it_is_printed() {
        assert_eq!(verdict(0.9496), Verdict::Worse);
        assert_eq!(verdict(0.9504), Verdict::Worse);
        assert_eq!(verdict(1.0496), Verdict::Better);
        assert_eq!(cost_verdict(1.0496), Verdict::Worse);
        assert_eq!(cost_verdict(0.9504), Verdict::Better);
    }

    #[test]
    fn ratios_need_both_figures_and_a_nonzero_base() {
        assert_eq!(ratio(Some(77.0), Some(100.0)), Some(0.77));
        assert_eq!(ratio(Some(1.0), Some(0.0)), None);
        assert_eq!(ratio(None, Some(1.0)), None);
        assert_eq!(ratio(Some(1.0), None), None);
    }

    #[test]
    fn medians_of_odd_and_even_samples() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }

    /// A significance with the interval `lo`–`hi` (95%).
    fn tested(lo: f64, hi: f64) -> Option<Significance> {
        Some(Significance::paired(lo, hi, 3.0, 4))
    }

    fn judged(rel: f64, lo: f64, hi: f64) -> Option<Verdict> {
        Cell {
            test: Test {
                relative: Some(rel),
                significance: tested(lo, hi),
                ..Default::default()
            },
            ..Cell::default()
        }
        .verdict()
    }

    /// Regression: untested ratios (one repeat, short windows) were
    /// counted and coloured as slower or faster, and a 1.01 with no test
    /// was counted "within 5%".
    #[test]
    fn a_change_no_test_could_judge_is_untested_never_the_same() {
        for rel in [0.6, 1.01] {
            let c = Cell {
                test: Test {
                    relative: Some(rel),
                    ..Default::default()
                },
                ..Cell::default()
            };
            assert_eq!(c.verdict(), Some(Verdict::Untested), "{rel}");
        }
    }

    /// Regression: `0.96 (0.72–1.27)` and `0.97 (0.72–1.32)` on MySQL
    /// 5.6 → 5.7 were counted "within 5%", read off the point estimate.
    #[test]
    fn the_same_is_shown_by_the_interval_never_read_off_the_ratio() {
        assert_eq!(judged(0.96, 0.72, 1.27), Some(Verdict::Undecided));
        assert_eq!(judged(0.97, 0.72, 1.32), Some(Verdict::Undecided));
        assert_eq!(judged(1.00, 0.97, 1.03), Some(Verdict::Same));
        // A significant change smaller than the band is the same.
        assert_eq!(judged(0.97, 0.96, 0.98), Some(Verdict::Same));
        // As printed: an interval that reaches 0.95 or 1.05 is not inside.
        assert_eq!(judged(1.00, 0.9504, 1.03), Some(Verdict::Undecided));
        assert_eq!(judged(1.00, 0.96, 1.0496), Some(Verdict::Undecided));
    }

    /// Regression: the same was read off the 95% interval (each side
    /// tested at 2.5%), so a cell of a quick run whose rounds lay 1–5%
    /// apart, `0.99 (0.98–1.05)`, stayed undecided though two one-sided
    /// tests at 5% reject a change of 5% either way (0.99–1.04 at 90%;
    /// bench/paired_reference.py). Each side's level is the test's.
    #[test]
    fn the_same_is_two_one_sided_tests_at_the_level_of_the_test() {
        let mut c = Cell {
            test: Test {
                relative: Some(1.014),
                significance: tested(0.978, 1.052),
                ..Default::default()
            },
            ..Cell::default()
        };
        assert_eq!(c.verdict(), Some(Verdict::Undecided));
        let equivalence = stats::Interval {
            lo: 0.986,
            hi: 1.044,
            level: 0.90,
        };
        c.test.significance.as_mut().unwrap().equivalence = Some(equivalence);
        assert_eq!(c.verdict(), Some(Verdict::Same));
        let sig = c.test.significance.as_ref().unwrap();
        assert_eq!(sig.shown(Verdict::Same), Some(equivalence));
        assert_eq!(sig.shown(Verdict::Undecided), sig.interval);
        // A change past the band is still read off the 95% interval.
        c.test.relative = Some(0.93);
        c.test.significance.as_mut().unwrap().interval = Some(stats::Interval {
            lo: 0.86,
            hi: 1.01,
            level: 0.95,
        });
        c.test.significance.as_mut().unwrap().equivalence = Some(stats::Interval {
            lo: 0.87,
            hi: 0.99,
            level: 0.90,
        });
        assert_eq!(c.verdict(), Some(Verdict::Undecided));
    }

    /// Regression (fresh-clone CI): an A/A copy's update-index printed
    /// `1.17 (1.06–1.28)` and was coloured faster against its own floor
    /// of ±16.5%: a ratio inside the floor rounded past it.
    #[test]
    fn an_aa_copys_ratio_inside_its_floor_never_rounds_past_it() {
        let c = Cell {
            test: Test {
                relative: Some(1.1652),
                significance: tested(1.06, 1.28),
                noise_floor: Some(0.1652),
            },
            ..Cell::default()
        };
        assert_eq!(c.verdict(), Some(Verdict::Undecided));
        let c = Cell {
            test: Test {
                relative: Some(1.0 / 1.1652),
                significance: tested(0.78, 0.94),
                noise_floor: Some(0.1652),
            },
            ..Cell::default()
        };
        assert_eq!(c.verdict(), Some(Verdict::Undecided));
        // Without a floor the band is 0.95–1.05 to the hundredth.
        assert_eq!(judged(0.95, 0.90, 0.97), Some(Verdict::Worse));
        assert_eq!(judged(1.05, 1.02, 1.08), Some(Verdict::Better));
    }

    #[test]
    fn a_change_is_past_the_band_with_its_interval_clear_of_1() {
        assert_eq!(judged(0.60, 0.55, 0.66), Some(Verdict::Worse));
        assert_eq!(judged(1.97, 1.86, 2.54), Some(Verdict::Better));
        // Past the band, but the interval holds 1: undecided.
        assert_eq!(judged(0.93, 0.85, 1.02), Some(Verdict::Undecided));
        // Clear of 1 but not past the band, nor inside it.
        assert_eq!(judged(0.97, 0.93, 0.99), Some(Verdict::Undecided));
    }

    #[test]
    fn a_disturbed_cell_is_not_judged_and_an_aa_spread_widens_the_band() {
        let mut c = Cell {
            test: Test {
                relative: Some(0.6),
                significance: tested(0.5, 0.7),
                ..Default::default()
            },
            ..Cell::default()
        };
        assert_eq!(c.verdict(), Some(Verdict::Worse));
        c.judgement.base_disturbed = true;
        assert_eq!(c.verdict(), Some(Verdict::Disturbed));
        // Identical runs 7% apart: a 0.94 clear of 1 is not a change,
        // and the same once its interval lies within 7%.
        let mut c = Cell {
            test: Test {
                relative: Some(0.94),
                noise_floor: Some(0.07),
                significance: tested(0.935, 0.95),
            },
            ..Cell::default()
        };
        assert_eq!(c.verdict(), Some(Verdict::Same));
        c.test.significance = tested(0.90, 0.97);
        assert_eq!(c.verdict(), Some(Verdict::Undecided));
        c.test.relative = Some(0.9);
        c.test.significance = tested(0.85, 0.92);
        assert_eq!(c.verdict(), Some(Verdict::Worse));
    }
}
