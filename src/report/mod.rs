//! Reports: read one or more results directories, pick a base target, and
//! compare every other target with it.
//!
//! [`build`] turns results into a [`Report`] (the comparison model: absolute
//! and relative throughput, CPU per operation, a summary in words); each
//! format renders that model and nothing else, so every format shows the
//! same figures. The report never talks to a database.

mod charts;
mod csv;
mod html;
mod json;
mod markdown;
pub mod stats;
mod tables;
mod terminal;

pub use terminal::relative_table as terminal_relative_table;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::Serialize;

use crate::metrics::host::HostFacts;
use crate::results::{LoadedRun, RunStatus, StepKindRecord, StepMetrics, StepResult, Unit};
use crate::workload::Group;

/// Throughput ratios at or below this are regressions, at or above
/// [`FASTER`] improvements (for costs the other way round).
pub const SLOWER: f64 = 0.95;
pub const FASTER: f64 = 1.05;

/// The report formats, by the name `--format` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Csv,
    Json,
    Html,
}

impl Format {
    pub const ALL: [Format; 4] = [Format::Markdown, Format::Csv, Format::Json, Format::Html];

    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "md" | "markdown" => Some(Format::Markdown),
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            "html" => Some(Format::Html),
            _ => None,
        }
    }

    pub fn file_name(self) -> &'static str {
        match self {
            Format::Markdown => "report.md",
            Format::Csv => "report.csv",
            Format::Json => "report.json",
            Format::Html => "report.html",
        }
    }

    pub fn render(self, r: &Report) -> String {
        match self {
            Format::Markdown => markdown::render(r),
            Format::Csv => csv::render(r),
            Format::Json => json::render(r),
            Format::Html => html::render(r),
        }
    }
}

/// How a ratio compares with the thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Worse,
    Same,
    Better,
    /// Past a threshold, but the repeats cannot tell it from noise.
    Unsure,
}

/// Classifies a throughput ratio (higher is better).
pub fn verdict(relative: f64) -> Verdict {
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
    pub filesystem: Option<String>,
    /// Index into [`Report::runs`].
    pub run: usize,
}

/// What the repeats say about a target's change against its base.
#[derive(Debug, Clone, Serialize)]
pub struct Significance {
    /// Two-sided p-value of the rank-sum test ([`stats`]).
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
    pub costs: BTreeMap<&'static str, f64>,
    /// Target ÷ base for each cost both have (above 1 = more cost).
    pub costs_relative: BTreeMap<&'static str, f64>,
    /// The rank test's p-value for each cost, with repeats on both sides.
    pub costs_p: BTreeMap<&'static str, f64>,
    /// Each cost per repeat, for the tests.
    #[serde(skip)]
    pub cost_samples: BTreeMap<&'static str, Vec<f64>>,
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
}

impl Cell {
    /// The throughput change as the report judges it. A q-step whose
    /// background writes missed the SLA is not judged: its queries ran
    /// against less write load than asked.
    pub fn verdict(&self) -> Option<Verdict> {
        let rel = self.relative?;
        if self.sla_missed.is_some() || self.base_sla_missed {
            return Some(Verdict::Unsure);
        }
        Some(judged(
            verdict(rel),
            self.significance.as_ref().map(|s| s.p_value),
        ))
    }
}

impl Row {
    /// The step as tables show it: `scan (warm)`, and `scan (warm) #2`
    /// the second time the sequence runs it.
    pub fn title(&self) -> String {
        match self.occurrence {
            1 => step_title(&self.step),
            n => format!("{} #{n}", step_title(&self.step)),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub seq: usize,
    /// `name` or `name.tag`.
    pub step: String,
    /// 1 the first time the step comes in the sequence, 2 the second.
    pub occurrence: usize,
    pub group: Group,
    pub clients: u32,
    pub unit: Unit,
    /// One per target, in [`Report::targets`] order.
    pub cells: Vec<Cell>,
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
    /// Every step result, with the target name used in this report.
    #[serde(skip)]
    pub steps: Vec<(usize, StepResult)>,
    /// For each of `steps`, which time its step label comes in the
    /// sequence (a sequence may run `scan.warm` twice).
    #[serde(skip)]
    pub occurrence: Vec<usize>,
}

impl Report {
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
        let mut order: Vec<usize> = (0..self.targets.len()).collect();
        order.sort_by_key(|&i| {
            self.hosts
                .iter()
                .position(|h| *h == self.targets[i].host)
                .unwrap_or(0)
        });
        order
    }

    /// The results of one row for one target, in repeat order.
    pub fn results_of<'a>(
        &'a self,
        row: &'a Row,
        ti: usize,
    ) -> impl Iterator<Item = &'a StepResult> {
        self.steps
            .iter()
            .zip(&self.occurrence)
            .filter(move |((t, s), o)| {
                *t == ti && s.step == row.step && s.clients == row.clients && **o == row.occurrence
            })
            .map(|((_, s), _)| s)
    }

    /// The row a step result belongs to.
    pub fn row_of(&self, i: usize) -> Option<&Row> {
        let s = &self.steps[i].1;
        self.rows.iter().find(|r| {
            r.step == s.step && r.clients == s.clients && r.occurrence == self.occurrence[i]
        })
    }

    pub fn rows_in(&self, g: Group) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(move |r| r.group == g)
    }
}

/// Builds the comparison from loaded runs. `base` names a target, or a
/// plan's target name that each host has (then every host's targets are
/// compared with that host's own base); it defaults to the first target.
pub fn build(runs: &[LoadedRun], base: Option<&str>) -> anyhow::Result<Report> {
    if runs.is_empty() {
        bail!("no results directories given");
    }
    let targets = name_targets(runs);
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

    let occurrence: Vec<usize> = steps
        .iter()
        .map(|(ti, s)| {
            let mut earlier: Vec<usize> = steps
                .iter()
                .filter(|(t, x)| {
                    t == ti
                        && x.repeat == s.repeat
                        && x.step == s.step
                        && x.clients == s.clients
                        && x.seq < s.seq
                })
                .map(|(_, x)| x.seq)
                .collect();
            earlier.dedup();
            earlier.len() + 1
        })
        .collect();

    // Rows: every (step, occurrence, clients) that has a group, in
    // sequence order.
    let mut keys: Vec<(usize, String, usize, u32, Group, Unit)> = Vec::new();
    for ((_, s), &occ) in steps.iter().zip(&occurrence) {
        let Some(g) = s.group else { continue };
        if s.kind == StepKindRecord::Settle {
            continue;
        }
        if !keys
            .iter()
            .any(|k| k.1 == s.step && k.2 == occ && k.3 == s.clients)
        {
            keys.push((s.seq, s.step.clone(), occ, s.clients, g, s.unit));
        }
    }
    keys.sort_by_key(|k| (k.4, k.0, k.3));
    let mut rows = Vec::new();
    for (seq, step, occ, clients, group, unit) in keys {
        let mut cells: Vec<Cell> = (0..targets.len())
            .map(|ti| {
                cell(
                    steps
                        .iter()
                        .zip(&occurrence)
                        .filter(|((t, s), o)| {
                            *t == ti && s.step == step && s.clients == clients && **o == occ
                        })
                        .map(|((_, s), _)| s),
                )
            })
            .collect();
        let plain = cells.clone();
        for (ti, c) in cells.iter_mut().enumerate() {
            compare(c, &plain[base_of[ti]], ti == base_of[ti]);
        }
        rows.push(Row {
            seq,
            step,
            occurrence: occ,
            group,
            clients,
            unit,
            cells,
        });
    }

    let summary = (0..targets.len())
        .filter(|&ti| base_of[ti] != ti)
        .map(|ti| {
            summarise(
                &targets[ti].name,
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
            host: r.info.host.clone(),
        })
        .collect();
    Ok(Report {
        base,
        runs,
        targets,
        base_of,
        hosts,
        rows,
        summary,
        steps,
        occurrence,
    })
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
                filesystem: rec
                    .and_then(|r| r.filesystem.as_ref())
                    .map(|f| format!("{} on {} ({})", f.fstype, f.device, f.mount_point)),
                run: ri,
            });
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
    let throughputs: Vec<f64> = ok.iter().map(|s| s.throughput).collect();
    let cost_samples: BTreeMap<&'static str, Vec<f64>> = COSTS
        .iter()
        .filter_map(|k| {
            let v: Vec<f64> = ok.iter().filter_map(|s| (k.get)(&s.metrics)).collect();
            (!v.is_empty()).then_some((k.key, v))
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
    }
}

/// Fills a cell's ratios against its base and, when both have repeats,
/// what the rank test says of them.
fn compare(c: &mut Cell, base: &Cell, is_base: bool) {
    c.relative = ratio(c.throughput, base.throughput);
    c.base_sla_missed = !is_base && base.sla_missed.is_some();
    c.costs_relative = COSTS
        .iter()
        .filter_map(|k| {
            Some((
                k.key,
                ratio(c.costs.get(k.key).copied(), base.costs.get(k.key).copied())?,
            ))
        })
        .collect();
    let repeated = |a: &[f64], b: &[f64]| a.len() >= 2 && b.len() >= 2;
    if is_base || !repeated(&c.throughputs, &base.throughputs) {
        return;
    }
    let p = stats::rank_sum_p(&c.throughputs, &base.throughputs).expect("two samples");
    c.significance = Some(Significance {
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

/// One cost per operation the report compares.
pub struct Cost {
    /// Name in JSON and CSV.
    pub key: &'static str,
    /// Column heading.
    pub title: &'static str,
    /// The smallest difference between two targets that counts as a
    /// change when the summary explains one: below it, a ratio of two
    /// tiny figures (0.02 against 0.01 KiB read per query) is noise.
    pub floor: f64,
    pub get: fn(&StepMetrics) -> Option<f64>,
}

/// The costs, in the order of the efficiency tables.
pub const COSTS: [Cost; 8] = [
    Cost {
        key: "cpu_us",
        title: "CPU µs",
        floor: 0.5,
        get: |m| m.cpu_us_per_op,
    },
    Cost {
        key: "server_cpu_us",
        title: "server µs",
        floor: 0.5,
        get: |m| m.server_cpu_us_per_op,
    },
    Cost {
        key: "client_cpu_us",
        title: "client µs",
        floor: 0.5,
        get: |m| m.client_cpu_us_per_op,
    },
    Cost {
        key: "cs",
        title: "cs",
        floor: 0.1,
        get: |m| m.cs_per_op,
    },
    Cost {
        key: "reads",
        title: "reads",
        floor: 0.01,
        get: |m| m.reads_per_op,
    },
    Cost {
        key: "read_kb",
        title: "read KiB",
        floor: 0.1,
        get: |m| m.read_kb_per_op,
    },
    Cost {
        key: "writes",
        title: "writes",
        floor: 0.01,
        get: |m| m.writes_per_op,
    },
    Cost {
        key: "write_kb",
        title: "write KiB",
        floor: 0.1,
        get: |m| m.write_kb_per_op,
    },
];

/// The machine-wide costs that explain a change (server and client CPU
/// are parts of `cpu_us`; request counts go with their KiB).
const EXPLAINING: [&str; 4] = ["cpu_us", "cs", "read_kb", "write_kb"];

fn cost(key: &str) -> &'static Cost {
    COSTS.iter().find(|c| c.key == key).expect("a known cost")
}

fn short(key: &str) -> &'static str {
    match key {
        "cpu_us" => "CPU/op",
        "cs" => "cs/op",
        "read_kb" => "read KiB/op",
        "write_kb" => "write KiB/op",
        _ => cost(key).title,
    }
}

/// Names the per-operation costs behind a change, from what was measured:
/// for a regression the costs that grew past the threshold, for a win the
/// ones that shrank, largest change first.
fn explain(relative: f64, c: &Cell, base: &Cell) -> String {
    let measured: Vec<(&str, f64)> = EXPLAINING
        .iter()
        .filter_map(|k| Some((*k, *c.costs_relative.get(k)?)))
        .collect();
    if measured.is_empty() {
        return "cost per operation not measured".into();
    }
    let v = verdict(relative);
    let mut moved: Vec<(&str, f64)> = measured
        .iter()
        .copied()
        .filter(|(k, r)| {
            let diff = (c.costs.get(k).copied().unwrap_or(0.0)
                - base.costs.get(k).copied().unwrap_or(0.0))
            .abs();
            let cv = judged(cost_verdict(*r), c.costs_p.get(k).copied());
            diff >= cost(k).floor
                && match v {
                    Verdict::Worse => cv == Verdict::Worse,
                    Verdict::Better => cv == Verdict::Better,
                    _ => cv == Verdict::Worse || cv == Verdict::Better,
                }
        })
        .collect();
    moved.sort_by(|a, b| b.1.ln().abs().total_cmp(&a.1.ln().abs()));
    let list = |m: &[(&str, f64)]| {
        m.iter()
            .take(3)
            .map(|(k, r)| format!("{} ×{}", short(k), fmt_ratio(*r)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let cpu = |m: &[(&str, f64)]| m.iter().any(|(k, _)| *k == "cpu_us");
    match v {
        Verdict::Worse if moved.is_empty() => {
            let cpu = measured.iter().find(|(k, _)| *k == "cpu_us");
            match cpu {
                Some((_, r)) => format!(
                    "CPU/op ×{r:.2}, and no cost per operation grew: more time spent waiting"
                ),
                None => "no measured cost per operation grew: more time spent waiting".into(),
            }
        }
        Verdict::Worse if cpu(&moved) => format!("{}: new CPU overhead", list(&moved)),
        Verdict::Worse => format!("{}: more IO or more waiting per operation", list(&moved)),
        Verdict::Better if moved.is_empty() => "less waiting, not less cost per operation".into(),
        Verdict::Better => format!("{}: less cost per operation", list(&moved)),
        _ if moved.is_empty() => "costs per operation unchanged".into(),
        _ => list(&moved),
    }
}

fn summarise(
    name: &str,
    base_name: &str,
    ti: usize,
    base: usize,
    rows: &[Row],
    steps: &[(usize, StepResult)],
) -> TargetSummary {
    let unjudged = rows
        .iter()
        .filter(|r| {
            let c = &r.cells[ti];
            c.relative.is_some() && (c.sla_missed.is_some() || c.base_sla_missed)
        })
        .count();
    let mut changes: Vec<(Verdict, Change)> = rows
        .iter()
        .filter_map(|r| {
            let c = &r.cells[ti];
            if c.sla_missed.is_some() || c.base_sla_missed {
                return None;
            }
            let rel = c.relative?;
            let v = c.verdict()?;
            Some((
                v,
                Change {
                    step: r.title(),
                    clients: r.clients,
                    relative: rel,
                    explanation: explain(rel, c, &r.cells[base]),
                },
            ))
        })
        .collect();
    let count = |v: Verdict| changes.iter().filter(|c| c.0 == v).count();
    let (slower, faster, same, unsure) = (
        count(Verdict::Worse),
        count(Verdict::Better),
        count(Verdict::Same),
        count(Verdict::Unsure),
    );
    changes.sort_by(|a, b| a.1.relative.total_cmp(&b.1.relative));
    let of = |v: Verdict| -> Vec<Change> {
        changes
            .iter()
            .filter(|c| c.0 == v)
            .map(|c| c.1.clone())
            .collect()
    };
    let failed = steps
        .iter()
        .filter(|(t, s)| *t == ti && s.failed.is_some())
        .map(|(_, s)| format!("{} c{} (repeat {})", s.step, s.clients, s.repeat))
        .collect();
    let mut wins = of(Verdict::Better);
    wins.reverse();
    let sla_failed = rows
        .iter()
        .filter_map(|r| {
            let m = r.cells[ti].sla_missed?;
            Some(format!(
                "{} ({:.0}% of the target insert rate)",
                r.title(),
                m * 100.0
            ))
        })
        .collect();
    TargetSummary {
        target: name.to_string(),
        base: base_name.to_string(),
        compared: changes.len(),
        slower,
        faster,
        same,
        unsure,
        unjudged,
        worst: changes.first().map(|c| c.1.clone()),
        best: changes.last().map(|c| c.1.clone()),
        regressions: of(Verdict::Worse),
        wins,
        failed,
        sla_failed,
    }
}

/// Reads the directories, builds the report and writes each format into
/// `out`. Returns the files written.
pub fn write(
    dirs: &[PathBuf],
    base: Option<&str>,
    out: &Path,
    formats: &[Format],
) -> anyhow::Result<(Report, Vec<PathBuf>)> {
    let runs = dirs
        .iter()
        .map(|d| crate::results::load_run(d))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let report = build(&runs, base)?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut written = Vec::new();
    if formats.contains(&Format::Markdown) {
        // The Markdown links its charts as files beside it.
        let dir = out.join(markdown::CHARTS_DIR);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        for c in charts::all(&report) {
            let path = dir.join(&c.file);
            std::fs::write(&path, &c.svg).with_context(|| format!("writing {}", path.display()))?;
        }
        written.push(dir);
    }
    for f in formats {
        let path = out.join(f.file_name());
        std::fs::write(&path, f.render(&report))
            .with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok((report, written))
}

/// The sampler's cost over a run, in words.
fn sampler_cost(run: &RunMeta) -> String {
    match run.sampler_us_per_reading {
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

/// `scan.warm` → `scan (warm)`. A workload whose own name has a dot (the
/// Insert Benchmark's `l.i0`) keeps it: `l.i1.again` → `l.i1 (again)`.
pub fn step_title(step: &str) -> String {
    let name_end = step
        .match_indices('.')
        .map(|(i, _)| i)
        .chain(std::iter::once(step.len()))
        .find(|&i| crate::workload::find(&step[..i]).is_some());
    let split = match name_end {
        Some(i) if i < step.len() => Some((&step[..i], &step[i + 1..])),
        Some(_) => None,
        None => step.split_once('.'),
    };
    match split {
        Some((n, t)) => format!("{n} ({t})"),
        None => step.to_string(),
    }
}

/// Throughput with thousands separators (two decimals below 100).
pub fn fmt_throughput(v: f64) -> String {
    if v < 100.0 {
        return format!("{v:.2}");
    }
    let s = format!("{:.0}", v);
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A ratio of costs: two decimals, or two significant digits below 0.1
/// (a cost that fell 250-fold is ×0.0040, not ×0.00).
pub fn fmt_ratio(r: f64) -> String {
    if r >= 0.1 || r == 0.0 {
        format!("{r:.2}")
    } else {
        let digits = (1 - r.log10().floor() as i32).clamp(2, 6) as usize;
        format!("{r:.digits$}")
    }
}

/// A latency in µs, in the unit that reads best.
pub fn fmt_latency(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1_000_000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

pub fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b < 1024.0 * 1024.0 {
        format!("{:.0} KiB", b / 1024.0)
    } else if b < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / 1024.0 / 1024.0)
    } else {
        format!("{:.2} GiB", b / 1024.0 / 1024.0 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_are_inclusive() {
        assert_eq!(verdict(0.95), Verdict::Worse);
        assert_eq!(verdict(0.951), Verdict::Same);
        assert_eq!(verdict(1.049), Verdict::Same);
        assert_eq!(verdict(1.05), Verdict::Better);
        // Costs: more is worse.
        assert_eq!(cost_verdict(1.37), Verdict::Worse);
        assert_eq!(cost_verdict(0.6), Verdict::Better);
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

    fn cell_with(costs: &[(&'static str, f64)], base: &[(&'static str, f64)]) -> (Cell, Cell) {
        let b = Cell {
            costs: base.iter().copied().collect(),
            ..Cell::default()
        };
        let mut c = Cell {
            costs: costs.iter().copied().collect(),
            ..Cell::default()
        };
        c.costs_relative = c
            .costs
            .iter()
            .filter_map(|(k, v)| Some((*k, ratio(Some(*v), b.costs.get(k).copied())?)))
            .collect();
        (c, b)
    }

    #[test]
    fn regressions_are_explained_by_the_cost_that_grew() {
        let (c, b) = cell_with(
            &[("cpu_us", 137.0), ("cs", 2.0)],
            &[("cpu_us", 100.0), ("cs", 2.0)],
        );
        assert_eq!(explain(0.77, &c, &b), "CPU/op ×1.37: new CPU overhead");
        let (c, b) = cell_with(
            &[("cpu_us", 100.0), ("cs", 2.0)],
            &[("cpu_us", 100.0), ("cs", 2.0)],
        );
        assert_eq!(
            explain(0.5, &c, &b),
            "CPU/op ×1.00, and no cost per operation grew: more time spent waiting"
        );
        let (c, b) = cell_with(
            &[("read_kb", 32.0), ("cpu_us", 101.0)],
            &[("read_kb", 16.0), ("cpu_us", 100.0)],
        );
        assert_eq!(
            explain(0.6, &c, &b),
            "read KiB/op ×2.00: more IO or more waiting per operation"
        );
        assert_eq!(
            explain(0.5, &Cell::default(), &Cell::default()),
            "cost per operation not measured"
        );
    }

    #[test]
    fn wins_name_the_costs_that_shrank_largest_first() {
        let (c, b) = cell_with(
            &[("cpu_us", 99.0), ("cs", 6.0), ("read_kb", 7.0)],
            &[("cpu_us", 100.0), ("cs", 10.0), ("read_kb", 10.0)],
        );
        assert_eq!(
            explain(1.5, &c, &b),
            "cs/op ×0.60, read KiB/op ×0.70: less cost per operation"
        );
    }

    #[test]
    fn tiny_costs_do_not_explain_anything() {
        // 0.02 against 0.01 KiB per query doubles, but is noise.
        let (c, b) = cell_with(
            &[("cpu_us", 50.0), ("read_kb", 0.02)],
            &[("cpu_us", 50.0), ("read_kb", 0.01)],
        );
        assert_eq!(
            explain(0.8, &c, &b),
            "CPU/op ×1.00, and no cost per operation grew: more time spent waiting"
        );
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(fmt_throughput(1234567.4), "1,234,567");
        assert_eq!(fmt_throughput(999.6), "1,000");
        assert_eq!(fmt_throughput(12.345), "12.35");
        assert_eq!(fmt_latency(250.0), "250 µs");
        assert_eq!(fmt_ratio(1.3712), "1.37");
        assert_eq!(fmt_ratio(0.004), "0.0040");
        assert_eq!(fmt_ratio(0.0123), "0.012");
        assert_eq!(fmt_latency(2500.0), "2.50 ms");
        assert_eq!(step_title("scan.warm"), "scan (warm)");
        assert_eq!(step_title("l.i0"), "l.i0");
        assert_eq!(step_title("l.i1.again"), "l.i1 (again)");
        assert_eq!(step_title("qr100"), "qr100");
    }
}
