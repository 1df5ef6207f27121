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

mod campaign;
mod cost;
mod explain;
pub mod linkbench;
mod series;
mod summary;

pub use campaign::{TimelineCell, TimelineRow};
pub use cost::{Cost, Rate};
pub use explain::{cost_matters, superseded, CPU_BOUND_PCT, IO_BOUND_PCT};
pub use series::{
    ClassLine, DbSizeStep, InterferenceRow, Percentiles, ProblemRow, RateLine, ResponseRow,
    RowSeries, SlaRow,
};
pub use summary::SummaryLine;

use std::collections::BTreeMap;

use anyhow::{bail, Context};
use serde::Serialize;

use std::path::Path;

use crate::measure::{stats, within};
use crate::metrics::host::HostFacts;
use crate::plan::{Step, StepKind};
use crate::results::{LoadedRun, RunStatus, StepResult, Unit};
use crate::workload::Group;

/// A window shorter than this is too short to judge a change by: the
/// sampler's floor (the machine's CPU is counted in 10 ms ticks; a
/// connection's set-up and the first statement's planning are a large part
/// of it).
pub const SHORT_WINDOW_SECS: f64 = crate::metrics::MIN_WINDOW_SECS;

/// Throughput ratios at or below this are regressions, at or above
/// [`FASTER`] improvements (for costs the other way round).
pub const SLOWER: f64 = 0.95;
pub const FASTER: f64 = 1.05;

/// How a ratio compares with the thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Worse,
    Same,
    Better,
    /// Past a threshold, but the repeats cannot tell it from noise.
    Unsure,
    /// Not judged: other programs or the hypervisor took enough of the
    /// machine, in this target's window or its base's, to explain it.
    Disturbed,
    /// Within the spread of identical runs (the plan's A/A copies).
    Noise,
    /// Not judged: the target's or the base's window was too short to
    /// measure ([`SHORT_WINDOW_SECS`]).
    TooShort,
}

/// Classifies a throughput ratio (higher is better), as printed: on the
/// ratio rounded to two decimals, so a cell that reads 0.95 is always
/// past the threshold, in every table and format.
pub fn verdict(relative: f64) -> Verdict {
    let relative = (relative * 100.0).round() / 100.0;
    if relative <= SLOWER {
        Verdict::Worse
    } else if relative >= FASTER {
        Verdict::Better
    } else {
        Verdict::Same
    }
}

/// Classifies a cost ratio (lower is better).
pub fn cost_verdict(relative: f64) -> Verdict {
    match verdict(relative) {
        Verdict::Worse => Verdict::Better,
        Verdict::Better => Verdict::Worse,
        v => v,
    }
}

/// The verdict the report acts on: past a threshold and, when both sides
/// have repeats, significant by the rank test; otherwise `Unsure`.
pub fn judged(v: Verdict, p_value: Option<f64>) -> Verdict {
    match (v, p_value) {
        (Verdict::Worse | Verdict::Better, Some(p)) if p >= stats::ALPHA => Verdict::Unsure,
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

pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

fn median_u64(values: impl Iterator<Item = u64>) -> Option<u64> {
    let mut v: Vec<f64> = values.map(|b| b as f64).collect();
    median(&mut v).map(|m| m as u64)
}

#[derive(Debug, Clone, Serialize)]
pub struct RunMeta {
    pub dir: String,
    pub status: RunStatus,
    pub started: String,
    pub finished: Option<String>,
    pub relbench_version: String,
    pub plan_source: String,
    /// The plan as written (passwords never are: plans name them by
    /// environment variable).
    pub plan_text: String,
    pub host: HostFacts,
    /// The sampler's largest CPU per reading over the steps of the run, in
    /// µs (its cost, shown so the reader can judge it). Per reading, not as
    /// a share of each window: a settle of 2 ms would make two readings
    /// look like several percent of a core.
    pub sampler_us_per_reading: Option<f64>,
    /// The same in words.
    pub sampler_cost: String,
    /// Result files left out of the report, and why (damaged, copies).
    pub skipped_files: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TargetMeta {
    /// Name in this report: the plan's name, qualified by its host (or by
    /// its results directory) when two runs use the same name.
    pub name: String,
    /// The name in its plan.
    pub plan_name: String,
    /// The host the run was measured on.
    pub host: String,
    pub engine: String,
    /// An embedded engine has no server process to measure.
    pub embedded: bool,
    pub version: String,
    pub config: BTreeMap<String, String>,
    /// Every setting the server reported (not shown; compared).
    #[serde(skip)]
    pub settings: BTreeMap<String, String>,
    pub filesystem: Option<String>,
    /// How the clients reached the server ("tcp 127.0.0.1:3306, tls
    /// required"): TLS costs a point query a third more CPU, so a reader
    /// must see it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// Index into [`Report::runs`].
    pub run: usize,
    /// An A/A copy of this target (index into `targets`): the same
    /// configuration run again, interleaved, to measure the noise.
    pub copy_of: Option<usize>,
    /// Server settings (as read back from the server) whose value differs
    /// from its base's: (name, this target's, the base's; "—" when one
    /// lacks it).
    pub settings_differ: Vec<(String, String, String)>,
}

/// One statement class's latency in a cell, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StatementLatency {
    pub count: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// Which test produced a p-value and interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Mann–Whitney rank-sum over the repeats' throughputs ([`stats`]).
    RankSum,
    /// Welch's t on the per-second throughput of one window each, sizes
    /// corrected for autocorrelation, Fieller's interval ([`within`]).
    PerSecond,
}

impl Method {
    pub fn describe(self) -> &'static str {
        match self {
            Method::RankSum => "Mann–Whitney rank-sum test over the repeats, inverted for the interval",
            Method::PerSecond => {
                "Welch's t-test on the two windows' per-second throughput with sample sizes corrected for \
                 autocorrelation, Fieller's interval of the ratio"
            }
        }
    }
}

/// What the repeats (or, with one repeat each, the seconds of the two
/// windows) say about a target's change against its base.
#[derive(Debug, Clone, Serialize)]
pub struct Significance {
    pub method: Method,
    /// Two-sided p-value.
    pub p_value: f64,
    /// The interval of target ÷ base, from the same test.
    pub interval: Option<stats::Interval>,
    /// Repeats per target a rank test would need to call a change of
    /// this size significant, when this one is not.
    pub repeats_needed: Option<u32>,
}

/// One target's figures for one row, the median over repeats.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Cell {
    pub throughput: Option<f64>,
    /// Throughput of each repeat that did not fail, in repeat order.
    pub throughputs: Vec<f64>,
    /// The median's confidence interval (with two or more repeats).
    pub throughput_interval: Option<stats::Interval>,
    /// Target ÷ base.
    pub relative: Option<f64>,
    /// Set when the target and its base both have two or more repeats.
    pub significance: Option<Significance>,
    /// How many repeats were measured.
    pub repeats: usize,
    /// Why the step has no figure, when it failed in every repeat.
    pub failed: Option<String>,
    /// Cost per operation by [`Cost::key`], median over repeats; a cost
    /// that was not measured is absent.
    pub costs: BTreeMap<Cost, f64>,
    /// Target ÷ base for each cost both have (above 1 = more cost).
    pub costs_relative: BTreeMap<Cost, f64>,
    /// The rank test's p-value for each cost, with repeats on both sides.
    pub costs_p: BTreeMap<Cost, f64>,
    /// Each cost per repeat, for the tests.
    #[serde(skip)]
    pub cost_samples: BTreeMap<Cost, Vec<f64>>,
    pub p99_us: Option<f64>,
    pub errors: u64,
    /// Database size on disk after the step, and the server's peak
    /// resident memory during it (medians over repeats).
    pub db_bytes_after: Option<u64>,
    pub server_rss_peak_bytes: Option<u64>,
    /// An Insert Benchmark q-step whose background inserts missed the SLA
    /// in some repeat: the lowest share of the target rate reached.
    pub sla_missed: Option<f64>,
    /// The base missed the SLA on this step: the comparison is not fair.
    pub base_sla_missed: bool,
    /// An open-loop step (`rate`) that fell short of its rate in some
    /// repeat: the lowest share of the rate reached. Its throughput is the
    /// server's limit, not the rate asked: not judged.
    pub rate_missed: Option<f64>,
    /// Why this target's figure is disturbed (half or more of its repeats
    /// ran while other programs or steal took ≥ 5% of the machine).
    pub disturbed: Option<String>,
    /// The base's figure on this step is disturbed.
    pub base_disturbed: bool,
    /// This target's window or its base's was too short to judge by.
    pub short_window: bool,
    /// Other programs' share of the machine over the window, in %
    /// (median over repeats).
    pub others_share_pct: Option<f64>,
    /// The row's A/A noise floor (see [`Row::noise_floor`]), copied here
    /// so a cell can judge itself.
    pub noise_floor: Option<f64>,
    /// The measured window's length, the machine's CPU utilisation and
    /// the devices' (medians over repeats): what bounded the step.
    pub window_secs: Option<f64>,
    pub cpu_util_pct: Option<f64>,
    pub disk_util_pct: Option<f64>,
    /// The machine's rates over the window (medians over repeats), and
    /// target ÷ base for each.
    pub rates: BTreeMap<Rate, f64>,
    pub rates_relative: BTreeMap<Rate, f64>,
    /// Latency per statement class (and `event`), medians over repeats.
    pub statements: BTreeMap<String, StatementLatency>,
    /// The engine's counters that moved, per operation (median over
    /// repeats), and the ones that moved most against the base: (name,
    /// target ÷ base), largest first.
    pub counters_per_op: BTreeMap<String, f64>,
    pub counters_moved: Vec<(String, f64)>,
    /// Per-second throughput of a target's single repeat (whole seconds),
    /// for the within-run test.
    #[serde(skip)]
    pub second_rates: Vec<f64>,
}

impl Cell {
    /// The throughput change as the report judges it. A q-step whose
    /// background writes missed the SLA is not judged: its queries ran
    /// against less write load than asked.
    pub fn verdict(&self) -> Option<Verdict> {
        let rel = self.relative?;
        if self.sla_missed.is_some() || self.base_sla_missed || self.rate_missed.is_some() {
            return Some(Verdict::Unsure);
        }
        if self.short_window {
            return Some(Verdict::TooShort);
        }
        if self.disturbed.is_some() || self.base_disturbed {
            return Some(Verdict::Disturbed);
        }
        let v = verdict(rel);
        if let Some(floor) = self.noise_floor {
            // Symmetric: 0.97 is as far from 1 as 1/0.97.
            // (With a tolerance: the copy's own ratio is the floor.)
            if matches!(v, Verdict::Worse | Verdict::Better)
                && rel.max(1.0 / rel) - 1.0 <= floor + 1e-9
            {
                return Some(Verdict::Noise);
            }
        }
        Some(judged(v, self.significance.as_ref().map(|s| s.p_value)))
    }
}

impl Row {
    /// The step as tables show it: `scan (warm)`, and `scan (warm) #2`
    /// the second time the sequence runs it.
    pub fn title(&self) -> String {
        row_title(&self.step, self.occurrence)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub seq: usize,
    pub step: Step,
    /// 1 the first time the step comes in the sequence, 2 the second.
    pub occurrence: u32,
    pub group: Group,
    pub clients: u32,
    pub unit: Unit,
    /// One per target, in [`Report::targets`] order.
    pub cells: Vec<Cell>,
    /// Per-second throughput, latency percentiles and per-class series.
    pub series: RowSeries,
    /// The spread of identical runs on this step: for each target run
    /// more than once as A/A copies, the largest ÷ the smallest of the
    /// copies' throughputs, less 1; the largest such spread. A change
    /// within it is not coloured.
    pub noise_floor: Option<f64>,
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
    /// The cost behind it, in words.
    pub explanation: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TargetSummary {
    pub target: String,
    /// The A/A copy of this target, when it is one.
    pub copy_of: Option<String>,
    /// The target it is compared with.
    pub base: String,
    pub compared: usize,
    pub slower: usize,
    pub faster: usize,
    pub same: usize,
    /// Past a threshold but not significant over the repeats.
    pub unsure: usize,
    /// Not judged: the target or its base missed the Insert Benchmark's SLA.
    pub unjudged: usize,
    /// Past a threshold but within the A/A noise floor.
    pub noise: usize,
    /// Not judged: the target's or its base's window was disturbed.
    pub disturbed: Vec<NotJudged>,
    /// Not judged: the target's or its base's window was too short to
    /// measure (never the worst or the best).
    pub too_short: Vec<NotJudged>,
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
    /// Failed steps and errors, with the first message of each kind.
    pub problems: Vec<ProblemRow>,
    /// What else used the machine during each step window.
    pub interference: Vec<InterferenceRow>,
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

/// A step of a target the report could not judge, for `run --confirm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsettled {
    /// Index into [`Report::targets`].
    pub target: usize,
    pub seq: usize,
    pub clients: u32,
    /// Repeats measured so far.
    pub repeats: usize,
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
            .sort_by_key(|r| (order(r.group), r.seq, r.clients));
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
                let why = match c.verdict() {
                    Some(Verdict::Disturbed) => "disturbed",
                    // A missed SLA is the target's result, not noise.
                    Some(Verdict::Unsure) if c.sla_missed.is_none() && !c.base_sla_missed => {
                        "not significant"
                    }
                    _ => continue,
                };
                for t in [ti, self.base_of[ti]] {
                    let cell = &row.cells[t];
                    if !out
                        .iter()
                        .any(|u| u.target == t && u.seq == row.seq && u.clients == row.clients)
                    {
                        out.push(Unsettled {
                            target: t,
                            seq: row.seq,
                            clients: row.clients,
                            repeats: cell.repeats,
                            why: format!(
                                "{} ({} c{}: {why})",
                                self.targets[t].name,
                                row.title(),
                                row.clients
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

/// For each step result, the index of its row (settle steps have none).
fn step_rows(rows: &[Row], steps: &[(usize, StepResult)]) -> Vec<Option<usize>> {
    steps
        .iter()
        .map(|(_, s)| {
            rows.iter().position(|r| {
                r.step == s.step && r.clients == s.clients && r.occurrence == s.occurrence
            })
        })
        .collect()
}

/// `scan (warm)`, and `scan (warm) #2` the second time in the sequence.
fn row_title(step: &Step, occurrence: u32) -> String {
    match occurrence {
        1 => step.title(),
        n => format!("{} #{n}", step.title()),
    }
}

/// Target indices with the targets of one host together, hosts in order
/// of first appearance.
fn column_order(targets: &[TargetMeta], hosts: &[String]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..targets.len()).collect();
    order.sort_by_key(|&i| {
        hosts
            .iter()
            .position(|h| *h == targets[i].host)
            .unwrap_or(0)
    });
    order
}

/// Builds the comparison from loaded runs. `base` names a target, or a
/// plan's target name that each host has (then every host's targets are
/// compared with that host's own base); it defaults to the first target.
pub fn build(runs: &[LoadedRun], base: Option<&str>) -> anyhow::Result<Report> {
    build_subset(runs, base, None)
}

/// One comparison of a report with several: a title, a base and the
/// targets it shows (all, when `targets` is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComparisonSpec {
    pub title: String,
    pub base: Option<String>,
    pub targets: Vec<String>,
}

impl ComparisonSpec {
    /// A comparison against `base` of `targets` (the base among them,
    /// first when not named), titled "against BASE" when untitled.
    pub fn new(title: Option<String>, base: String, mut targets: Vec<String>) -> Self {
        if !targets.is_empty() && !targets.contains(&base) {
            targets.insert(0, base.clone());
        }
        ComparisonSpec {
            title: title.unwrap_or_else(|| format!("against {base}")),
            base: Some(base),
            targets,
        }
    }
}

/// A comparison and its model.
pub struct Comparison {
    pub title: String,
    pub report: Report,
}

/// Builds each comparison, in the order given; with none, one comparison
/// of every target against `base` (the first target when `None`).
pub fn build_all(
    runs: &[LoadedRun],
    base: Option<&str>,
    specs: &[ComparisonSpec],
) -> anyhow::Result<Vec<Comparison>> {
    if specs.is_empty() {
        let report = build(runs, base)?;
        return Ok(vec![Comparison {
            title: format!("against {}", report.base),
            report,
        }]);
    }
    specs
        .iter()
        .map(|s| {
            let subset = (!s.targets.is_empty()).then_some(s.targets.as_slice());
            let report = build_subset(runs, s.base.as_deref(), subset)
                .with_context(|| format!("comparison \"{}\"", s.title))?;
            Ok(Comparison {
                title: s.title.clone(),
                report,
            })
        })
        .collect()
}

/// [`build`] over the named targets only, in the order named (the base
/// among them; the first named is the base when none is given).
pub fn build_subset(
    runs: &[LoadedRun],
    base: Option<&str>,
    subset: Option<&[String]>,
) -> anyhow::Result<Report> {
    if runs.is_empty() {
        bail!("no results directories given");
    }
    let mut targets = name_targets(runs);
    if let Some(names) = subset {
        let all: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
        let mut chosen = Vec::new();
        for n in names {
            let found = targets
                .iter()
                .find(|t| t.name == *n)
                .or_else(|| {
                    let by_plan: Vec<&TargetMeta> =
                        targets.iter().filter(|t| t.plan_name == *n).collect();
                    (by_plan.len() == 1).then(|| by_plan[0])
                })
                .with_context(|| {
                    format!(
                        "no target \"{n}\" in these results{}; the targets are: {}",
                        crate::util::did_you_mean(n, all.iter().map(String::as_str))
                            .map(|m| format!(" (did you mean \"{m}\"?)"))
                            .unwrap_or_default(),
                        all.join(", ")
                    )
                })?;
            if !chosen.iter().any(|c: &TargetMeta| c.name == found.name) {
                chosen.push(found.clone());
            }
        }
        // A/A links point into the full list: point them into this one.
        let originals: Vec<Option<String>> = chosen
            .iter()
            .map(|c| c.copy_of.map(|o| targets[o].name.clone()))
            .collect();
        let chosen_names: Vec<String> = chosen.iter().map(|c| c.name.clone()).collect();
        for (c, o) in chosen.iter_mut().zip(originals) {
            c.copy_of = o.and_then(|n| chosen_names.iter().position(|x| *x == n));
        }
        targets = chosen;
    }
    let base = base
        .map(str::to_string)
        .or_else(|| subset.and_then(|s| s.first().cloned()));
    let base = base.as_deref();
    let mut hosts: Vec<String> = Vec::new();
    for t in &targets {
        if !hosts.contains(&t.host) {
            hosts.push(t.host.clone());
        }
    }
    let first = targets
        .first()
        .map(|t| t.plan_name.clone())
        .context("the results hold no targets")?;
    let (base, base_of) = match base {
        Some(b) => (b.to_string(), resolve_base(&targets, &hosts, b)?),
        // The first target; on several hosts each host's target of that
        // name, when every host has one.
        None => match resolve_base(&targets, &hosts, &first) {
            Ok(of) => (first, of),
            Err(_) => {
                let name = targets[0].name.clone();
                let of = resolve_base(&targets, &hosts, &name)?;
                (name, of)
            }
        },
    };

    for ti in 0..targets.len() {
        let b = base_of[ti];
        if b == ti {
            continue;
        }
        // Every setting where both servers reported them all; the
        // recorded few otherwise (older results, embedded engines).
        let whole = !targets[ti].settings.is_empty() && !targets[b].settings.is_empty();
        let (mine, theirs) = if whole {
            (&targets[ti].settings, &targets[b].settings)
        } else {
            (&targets[ti].config, &targets[b].config)
        };
        let mut keys: Vec<&String> = mine.keys().chain(theirs.keys()).collect();
        keys.sort();
        keys.dedup();
        let differ = keys
            .into_iter()
            .filter(|k| mine.get(*k) != theirs.get(*k))
            .map(|k| {
                let v =
                    |m: &BTreeMap<String, String>| m.get(k).cloned().unwrap_or_else(|| "—".into());
                (k.clone(), v(mine), v(theirs))
            })
            .collect();
        targets[ti].settings_differ = differ;
    }

    // Every step result, tagged with its target's index in the report.
    let mut steps: Vec<(usize, StepResult)> = Vec::new();
    for (ri, run) in runs.iter().enumerate() {
        for s in &run.steps {
            if let Some(ti) = targets
                .iter()
                .position(|t| t.run == ri && t.plan_name == s.target)
            {
                steps.push((ti, s.clone()));
            }
        }
    }

    // Rows: every (step, occurrence, clients) that has a group, in
    // sequence order.
    let mut keys: Vec<(usize, Step, u32, u32, Group, Unit)> = Vec::new();
    for (_, s) in &steps {
        let Some(g) = s.group else { continue };
        if s.step.kind == StepKind::Settle {
            continue;
        }
        let occ = s.occurrence;
        if !keys
            .iter()
            .any(|k| k.1 == s.step && k.2 == occ && k.3 == s.clients)
        {
            keys.push((s.seq, s.step.clone(), occ, s.clients, g, s.unit));
        }
    }
    keys.sort_by_key(|k| (k.4, k.0, k.3));
    let cols = column_order(&targets, &hosts);
    let mut rows = Vec::new();
    let mut response_times = Vec::new();
    for (seq, step, occ, clients, group, unit) in keys {
        // The results of this row for one target, in repeat order.
        let results_of = |ti: usize| {
            let mut v: Vec<&StepResult> = steps
                .iter()
                .filter(|(t, s)| {
                    *t == ti && s.step == step && s.clients == clients && s.occurrence == occ
                })
                .map(|(_, s)| s)
                .collect();
            v.sort_by_key(|s| s.repeat);
            v
        };
        let ok_of = |ti: usize| results_of(ti).into_iter().filter(|s| s.failed.is_none());
        let mut cells: Vec<Cell> = (0..targets.len())
            .map(|ti| cell(results_of(ti).into_iter()))
            .collect();
        let plain = cells.clone();
        for (ti, c) in cells.iter_mut().enumerate() {
            compare(c, &plain[base_of[ti]], ti == base_of[ti]);
        }
        let noise_floor = noise_floor(&targets, &cells);
        for c in &mut cells {
            c.noise_floor = noise_floor;
        }
        let series = series::row_series(&cols, ok_of);
        let mut response = Vec::new();
        if group == Group::Insert {
            let title = row_title(&step, occ);
            for &ti in &cols {
                response.extend(series::response_rows(&title, ti, ok_of(ti)));
            }
        }
        response_times.extend(response);
        let row = Row {
            seq,
            step,
            occurrence: occ,
            group,
            clients,
            unit,
            cells,
            series,
            noise_floor,
        };
        rows.push(row);
    }
    let step_rows = step_rows(&rows, &steps);

    let summary: Vec<TargetSummary> = (0..targets.len())
        .filter(|&ti| base_of[ti] != ti)
        .map(|ti| {
            summary::summarise(
                &targets[ti].name,
                targets[ti].copy_of.map(|o| targets[o].name.as_str()),
                &targets[base_of[ti]].name,
                ti,
                base_of[ti],
                &rows,
                &steps,
            )
        })
        .collect();
    let runs = runs
        .iter()
        .map(|r| RunMeta {
            dir: r.dir.display().to_string(),
            status: r.info.status,
            started: r.info.started.clone(),
            finished: r.info.finished.clone(),
            relbench_version: r.info.relbench_version.clone(),
            plan_source: r.info.plan_source.clone(),
            plan_text: r.info.plan_text.clone(),
            sampler_us_per_reading: r
                .steps
                .iter()
                .filter_map(|s| s.metrics.sampler.as_ref())
                .filter(|c| c.samples > 0)
                .map(|c| c.cpu_secs * 1e6 / f64::from(c.samples))
                .reduce(f64::max),
            sampler_cost: String::new(),
            skipped_files: r.skipped.clone(),
            host: r.info.host.clone(),
        })
        .map(|mut m: RunMeta| {
            m.sampler_cost = sampler_cost(m.sampler_us_per_reading);
            m
        })
        .collect();
    Ok(Report {
        base,
        runs,
        summary_lines: summary::lines(&summary),
        db_size: series::db_size(targets.len(), &steps),
        timeline: campaign::timeline(targets.len(), &base_of, &steps),
        sla: series::sla_rows(&steps),
        response_times,
        linkbench: linkbench::view(
            &targets.iter().map(|t| t.name.clone()).collect::<Vec<_>>(),
            &base_of,
            &rows,
            &steps,
        ),
        problems: series::problems(&steps),
        interference: series::interference(&steps),
        base_failed: base_failed(&targets, &base_of, &rows, &steps),
        targets,
        base_of,
        hosts,
        rows,
        summary,
        steps,
        step_rows,
    })
}

/// The bases that have no figure on any row, with why and who could be
/// the base instead.
fn base_failed(
    targets: &[TargetMeta],
    base_of: &[usize],
    rows: &[Row],
    steps: &[(usize, StepResult)],
) -> Vec<BaseFailed> {
    let measured = |ti: usize| rows.iter().any(|r| r.cells[ti].throughput.is_some());
    let mut bases: Vec<usize> = base_of.to_vec();
    bases.sort_unstable();
    bases.dedup();
    bases
        .into_iter()
        .filter(|&b| !measured(b))
        .map(|b| BaseFailed {
            base: targets[b].name.clone(),
            why: steps
                .iter()
                .find(|(t, s)| *t == b && s.failed.is_some())
                .and_then(|(_, s)| s.failed.clone()),
            instead: (0..targets.len())
                .find(|&i| i != b && targets[i].host == targets[b].host && measured(i))
                .map(|i| targets[i].name.clone()),
        })
        .collect()
}

/// The largest spread between A/A copies of one target on a row: the
/// largest ÷ the smallest throughput, less 1.
fn noise_floor(targets: &[TargetMeta], cells: &[Cell]) -> Option<f64> {
    (0..targets.len())
        .filter_map(|ti| {
            let same: Vec<f64> = (0..targets.len())
                .filter(|&j| j == ti || targets[j].copy_of == Some(ti))
                .filter_map(|j| cells[j].throughput)
                .collect();
            if same.len() < 2 {
                return None;
            }
            let (lo, hi) = same
                .iter()
                .fold((f64::MAX, f64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
            (lo > 0.0).then(|| hi / lo - 1.0)
        })
        .reduce(f64::max)
}

/// The report's target list. A plan name used by two runs is qualified by
/// the host when the runs come from different hosts, by the results
/// directory otherwise (and by its position when even that clashes).
fn name_targets(runs: &[LoadedRun]) -> Vec<TargetMeta> {
    let host_of = |ri: usize| runs[ri].info.host.hostname.clone();
    let uses: Vec<(usize, &str)> = runs
        .iter()
        .enumerate()
        .flat_map(|(ri, r)| {
            r.info
                .plan
                .targets
                .iter()
                .map(move |t| (ri, t.name.as_str()))
        })
        .collect();
    let mut targets: Vec<TargetMeta> = Vec::new();
    for (ri, run) in runs.iter().enumerate() {
        for t in &run.info.plan.targets {
            let sharing: Vec<usize> = uses
                .iter()
                .filter(|(_, n)| *n == t.name)
                .map(|(r, _)| *r)
                .collect();
            let mut name = if sharing.len() < 2 {
                t.name.clone()
            } else {
                let hosts: Vec<String> = sharing.iter().map(|&r| host_of(r)).collect();
                let distinct = hosts
                    .iter()
                    .enumerate()
                    .all(|(i, h)| !hosts[..i].contains(h));
                if distinct {
                    format!("{}/{}", host_of(ri), t.name)
                } else {
                    format!("{}/{}", dir_name(&run.dir), t.name)
                }
            };
            if targets.iter().any(|x| x.name == name) {
                name = format!("{name}#{}", ri + 1);
            }
            let rec = run.info.targets.iter().find(|r| r.name == t.name);
            targets.push(TargetMeta {
                name,
                plan_name: t.name.clone(),
                host: host_of(ri),
                engine: t.engine.name().to_string(),
                embedded: !t.engine.is_server(),
                version: rec.map_or_else(|| "not recorded".into(), |r| r.facts.version.clone()),
                config: rec.map(|r| r.facts.config.clone()).unwrap_or_default(),
                settings: rec.map(|r| r.facts.settings.clone()).unwrap_or_default(),
                filesystem: rec
                    .and_then(|r| r.filesystem.as_ref())
                    .map(|f| format!("{} on {} ({})", f.fstype, f.device, f.mount_point)),
                transport: rec.and_then(|r| r.facts.transport.clone()),
                run: ri,
                copy_of: None,
                settings_differ: Vec::new(),
            });
        }
    }
    // A/A copies point at their original, in the same run.
    for i in 0..targets.len() {
        let ri = targets[i].run;
        let spec = runs[ri]
            .info
            .plan
            .targets
            .iter()
            .find(|t| t.name == targets[i].plan_name);
        if let Some(of) = spec.and_then(|t| t.copy_of.as_deref()) {
            targets[i].copy_of = targets
                .iter()
                .position(|t| t.run == ri && t.plan_name == of);
        }
    }
    targets
}

/// Each target's base for `--base name`: the target of that report name
/// for all, or, for a plan name, the target of that name on each host.
fn resolve_base(
    targets: &[TargetMeta],
    hosts: &[String],
    name: &str,
) -> anyhow::Result<Vec<usize>> {
    if let Some(i) = targets.iter().position(|t| t.name == name) {
        return Ok(vec![i; targets.len()]);
    }
    let list = || {
        let mut names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
        for t in targets {
            if !names.contains(&t.plan_name.as_str()) && hosts.len() > 1 {
                names.push(t.plan_name.as_str());
            }
        }
        names.join(", ")
    };
    let mut per_host = Vec::new();
    for h in hosts {
        let found: Vec<usize> = (0..targets.len())
            .filter(|&i| targets[i].host == *h && targets[i].plan_name == name)
            .collect();
        match found.as_slice() {
            [i] => per_host.push((h, *i)),
            [] => {}
            several => {
                let names: Vec<&str> = several.iter().map(|&i| targets[i].name.as_str()).collect();
                bail!(
                    "--base {name}: host {h} has {} targets of that name ({}); name one of them",
                    several.len(),
                    names.join(", ")
                );
            }
        }
    }
    if per_host.is_empty() {
        bail!(
            "--base {name}: no target of that name in these results; the targets are: {}",
            list()
        );
    }
    if per_host.len() < hosts.len() {
        let missing: Vec<&str> = hosts
            .iter()
            .filter(|h| !per_host.iter().any(|(x, _)| x == h))
            .map(String::as_str)
            .collect();
        bail!(
            "--base {name}: host {} has no target of that name, so its targets have nothing to be compared with; \
             name one target as the base for all (one of: {})",
            missing.join(", "),
            list()
        );
    }
    Ok(targets
        .iter()
        .map(|t| {
            per_host
                .iter()
                .find(|(h, _)| **h == t.host)
                .map(|(_, i)| *i)
                .expect("every host has its base")
        })
        .collect())
}

fn cell<'a>(results: impl Iterator<Item = &'a StepResult>) -> Cell {
    let mut results: Vec<&StepResult> = results.collect();
    results.sort_by_key(|s| s.repeat);
    let ok: Vec<&&StepResult> = results.iter().filter(|s| s.failed.is_none()).collect();
    let rates: BTreeMap<Rate, f64> = Rate::ALL
        .iter()
        .filter_map(|&k| {
            let mut v: Vec<f64> = ok.iter().filter_map(|s| k.of(&s.metrics)).collect();
            Some((k, median(&mut v)?))
        })
        .collect();
    let throughputs: Vec<f64> = ok.iter().map(|s| s.throughput).collect();
    let cost_samples: BTreeMap<Cost, Vec<f64>> = Cost::ALL
        .iter()
        .filter_map(|&k| {
            let v: Vec<f64> = ok.iter().filter_map(|s| k.of(&s.metrics)).collect();
            (!v.is_empty()).then_some((k, v))
        })
        .collect();
    let costs = cost_samples
        .iter()
        .filter_map(|(k, v)| Some((*k, median(&mut v.clone())?)))
        .collect();
    let mut p99: Vec<f64> = ok
        .iter()
        .filter_map(|s| s.latency.get("event").map(|l| l.p99_us))
        .collect();
    Cell {
        throughput: median(&mut throughputs.clone()),
        throughput_interval: stats::median_interval(&throughputs),
        throughputs,
        relative: None,
        significance: None,
        repeats: ok.len(),
        failed: if ok.is_empty() {
            results.iter().find_map(|s| s.failed.clone())
        } else {
            None
        },
        costs,
        costs_relative: BTreeMap::new(),
        costs_p: BTreeMap::new(),
        cost_samples,
        p99_us: median(&mut p99),
        errors: results.iter().flat_map(|s| s.errors.values()).sum(),
        db_bytes_after: median_u64(ok.iter().filter_map(|s| s.metrics.db_bytes_after)),
        server_rss_peak_bytes: median_u64(
            ok.iter().filter_map(|s| s.metrics.server_rss_peak_bytes),
        ),
        sla_missed: ok
            .iter()
            .filter_map(|s| s.sla.as_ref())
            .filter(|s| !s.passed)
            .map(|s| s.achieved)
            .reduce(f64::min),
        base_sla_missed: false,
        rate_missed: ok
            .iter()
            .filter_map(|s| s.rate.as_ref())
            .filter(|r| r.missed)
            .map(|r| r.reached_per_sec / r.asked_per_sec)
            .reduce(f64::min),
        disturbed: disturbed_of(&ok),
        base_disturbed: false,
        short_window: false,
        others_share_pct: median(
            &mut ok
                .iter()
                .filter_map(|s| s.metrics.interference.as_ref()?.others_share_pct)
                .collect::<Vec<f64>>(),
        ),
        noise_floor: None,
        window_secs: median(&mut ok.iter().map(|s| s.secs).collect::<Vec<f64>>()),
        cpu_util_pct: rates.get(&Rate::CpuPct).copied(),
        disk_util_pct: median(
            &mut ok
                .iter()
                .filter_map(|s| Some(s.metrics.disk.as_ref()?.util_pct))
                .collect::<Vec<f64>>(),
        ),
        rates,
        rates_relative: BTreeMap::new(),
        statements: statement_latency(&ok),
        counters_per_op: counters_per_op(&ok),
        counters_moved: Vec::new(),
        second_rates: match ok.as_slice() {
            [one] => one.second_rates(),
            _ => Vec::new(),
        },
    }
}

/// Each statement class's latency, medians over the repeats.
fn statement_latency(ok: &[&&StepResult]) -> BTreeMap<String, StatementLatency> {
    let mut classes: Vec<&String> = ok.iter().flat_map(|s| s.latency.keys()).collect();
    classes.sort();
    classes.dedup();
    classes
        .into_iter()
        .filter_map(|k| {
            let of: Vec<&crate::measure::LatencySummary> =
                ok.iter().filter_map(|s| s.latency.get(k)).collect();
            let m = |f: fn(&crate::measure::LatencySummary) -> f64| {
                median(&mut of.iter().map(|l| f(l)).collect::<Vec<f64>>())
            };
            let count = of.iter().map(|l| l.count).sum::<u64>();
            (count > 0).then(|| {
                (
                    k.clone(),
                    StatementLatency {
                        count,
                        p50_us: m(|l| l.p50_us).unwrap_or(0.0),
                        p99_us: m(|l| l.p99_us).unwrap_or(0.0),
                        max_us: m(|l| l.max_us).unwrap_or(0.0),
                    },
                )
            })
        })
        .collect()
}

/// The engine's counters that moved, per unit of the step's work
/// (operations, or rows), medians over the repeats.
fn counters_per_op(ok: &[&&StepResult]) -> BTreeMap<String, f64> {
    let mut all: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for s in ok {
        let (Some(c), true) = (&s.metrics.counters, s.throughput > 0.0) else {
            continue;
        };
        let work = s.throughput * s.secs;
        if work <= 0.0 {
            continue;
        }
        for (k, d) in &c.delta {
            all.entry(k.clone()).or_default().push(d / work);
        }
    }
    all.into_iter()
        .filter_map(|(k, mut v)| Some((k, median(&mut v)?)))
        .collect()
}

/// The counters per operation that moved most against the base, at a
/// rate that matters (ten a second on either side), largest first.
fn counters_moved(c: &Cell, base: &Cell) -> Vec<(String, f64)> {
    let rate = |x: &Cell, v: f64| v * x.throughput.unwrap_or(0.0);
    let mut moved: Vec<(String, f64)> = c
        .counters_per_op
        .iter()
        .filter_map(|(k, &v)| {
            let b = *base.counters_per_op.get(k)?;
            let r = ratio(Some(v), Some(b))?;
            let past = verdict(r) != Verdict::Same;
            (past && (rate(c, v) >= 10.0 || rate(base, b) >= 10.0) && r > 0.0)
                .then(|| (k.clone(), r))
        })
        .collect();
    moved.sort_by(|a, b| b.1.ln().abs().total_cmp(&a.1.ln().abs()));
    moved.truncate(5);
    moved
}

/// Why a cell's figure is disturbed: when half or more of its repeats
/// were (the median then rests on a disturbed window).
fn disturbed_of(ok: &[&&StepResult]) -> Option<String> {
    let why: Vec<String> = ok
        .iter()
        .filter_map(|s| s.metrics.interference.as_ref()?.judge().0)
        .collect();
    if why.is_empty() || 2 * why.len() < ok.len() {
        return None;
    }
    Some(match ok.len() {
        1 => why[0].clone(),
        n => format!("{} of {n} repeats; {}", why.len(), why[0]),
    })
}

/// Fills a cell's ratios against its base and, when both have repeats,
/// what the rank test says of them.
fn compare(c: &mut Cell, base: &Cell, is_base: bool) {
    c.relative = ratio(c.throughput, base.throughput);
    c.base_sla_missed = !is_base && base.sla_missed.is_some();
    c.base_disturbed = !is_base && base.disturbed.is_some();
    let short = |x: &Cell| x.window_secs.is_some_and(|w| w < SHORT_WINDOW_SECS);
    c.short_window = !is_base && (short(c) || short(base));
    c.rates_relative = Rate::ALL
        .iter()
        .filter_map(|k| {
            Some((
                *k,
                ratio(c.rates.get(k).copied(), base.rates.get(k).copied())?,
            ))
        })
        .collect();
    if !is_base {
        c.counters_moved = counters_moved(c, base);
    }
    c.costs_relative = Cost::ALL
        .iter()
        .filter_map(|k| {
            Some((
                *k,
                ratio(c.costs.get(k).copied(), base.costs.get(k).copied())?,
            ))
        })
        .collect();
    let repeated = |a: &[f64], b: &[f64]| a.len() >= 2 && b.len() >= 2;
    if is_base {
        return;
    }
    if !repeated(&c.throughputs, &base.throughputs) {
        // One repeat on a side: the seconds of the two windows are the
        // only sample of the noise there is.
        if let Some(w) = within::within_run(&c.second_rates, &base.second_rates) {
            c.significance = Some(Significance {
                method: Method::PerSecond,
                p_value: w.p_value,
                interval: w.interval,
                repeats_needed: None,
            });
        }
        return;
    }
    let p = stats::rank_sum_p(&c.throughputs, &base.throughputs).expect("two samples");
    c.significance = Some(Significance {
        method: Method::RankSum,
        p_value: p,
        interval: stats::ratio_interval(&c.throughputs, &base.throughputs),
        repeats_needed: (p >= stats::ALPHA)
            .then(|| stats::repeats_needed(&c.throughputs, &base.throughputs))
            .flatten()
            .map(|n| n.max(c.repeats.min(base.repeats) as u32 + 1)),
    });
    c.costs_p = c
        .cost_samples
        .iter()
        .filter_map(|(k, v)| {
            let b = base.cost_samples.get(k)?;
            repeated(v, b).then(|| Some((*k, stats::rank_sum_p(v, b)?)))?
        })
        .collect();
}

/// The sampler's cost over a run, in words.
fn sampler_cost(us_per_reading: Option<f64>) -> String {
    match us_per_reading {
        Some(us) => format!(
            "the sampler used at most {us:.0} µs of CPU per reading, {:.3}% of one core at one reading a second",
            us / 1e4
        ),
        None => "the sampler's cost was not recorded".into(),
    }
}

fn dir_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
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

    #[test]
    fn a_disturbed_cell_is_not_judged_and_an_aa_spread_is_not_coloured() {
        let mut c = Cell {
            relative: Some(0.6),
            ..Cell::default()
        };
        assert_eq!(c.verdict(), Some(Verdict::Worse));
        c.base_disturbed = true;
        assert_eq!(c.verdict(), Some(Verdict::Disturbed));
        let mut c = Cell {
            relative: Some(0.94),
            noise_floor: Some(0.07),
            ..Cell::default()
        };
        assert_eq!(c.verdict(), Some(Verdict::Noise));
        c.relative = Some(1.0 / 0.94);
        assert_eq!(c.verdict(), Some(Verdict::Noise));
        c.relative = Some(0.9);
        assert_eq!(c.verdict(), Some(Verdict::Worse));
    }
}
