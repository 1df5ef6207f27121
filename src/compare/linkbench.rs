//! LinkBench's own tables, computed once: the load's rate (nodes, links
//! and all rows a second), requests a second per target and interval, each
//! operation type's share, latency percentiles, errors and not-found count,
//! and whether the counts agreed with the links after the run. Relative
//! figures are target ÷ its base.

use serde::Serialize;

use super::{median, median_u64, Row, Verdict};
use crate::results::StepResult;
use crate::workload::linkbench::{Kind, LOAD_CLASSES, OPS};
use crate::workload::Group;

/// Everything the report shows of LinkBench (empty when no step ran).
#[derive(Debug, Clone, Default, Serialize)]
pub struct View {
    pub load: Vec<LoadRow>,
    pub requests: Vec<RequestRow>,
    pub ops: Vec<OpRow>,
    pub checks: Vec<CheckRow>,
}

impl View {
    pub fn is_empty(&self) -> bool {
        self.load.is_empty() && self.requests.is_empty() && self.checks.is_empty()
    }
}

/// One target's load: rows of each table, medians over repeats.
#[derive(Debug, Clone, Serialize)]
pub struct LoadRow {
    pub target: String,
    pub clients: u32,
    pub nodes: u64,
    pub links: u64,
    pub counts: u64,
    pub secs: f64,
    pub nodes_per_sec: f64,
    pub links_per_sec: f64,
    /// All rows inserted a second (the step's throughput).
    pub rows_per_sec: f64,
    /// `rows_per_sec` ÷ the base's.
    pub relative: Option<f64>,
    /// The step's cell's verdict (changed, the same or undecided).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

/// Requests a second of one request step (or one interval of it).
#[derive(Debug, Clone, Serialize)]
pub struct RequestRow {
    pub step: String,
    pub clients: u32,
    pub target: String,
    pub ops_per_sec: f64,
    pub relative: Option<f64>,
    /// The step's cell's verdict (changed, the same or undecided).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// Operations that failed (after the retries the original also makes).
    pub errors: u64,
}

/// One operation type of one request step, for one target.
#[derive(Debug, Clone, Serialize)]
pub struct OpRow {
    pub step: String,
    pub clients: u32,
    pub target: String,
    pub op: &'static str,
    /// Completed, over all repeats.
    pub count: u64,
    /// Its share of the completed operations, %.
    pub share_pct: f64,
    /// Latency percentiles and mean, µs, medians over repeats. p25 and
    /// p75 are absent from results written before schema version 5.
    pub p25_us: Option<f64>,
    pub p50_us: f64,
    pub p75_us: Option<f64>,
    pub p95_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
    pub errors: u64,
    /// Operations that found nothing to read or change.
    pub not_found: u64,
    /// p50 and p99 ÷ the base's for the same operation.
    pub p50_relative: Option<f64>,
    pub p99_relative: Option<f64>,
}

/// The consistency check of one target, over all its repeats.
#[derive(Debug, Clone, Serialize)]
pub struct CheckRow {
    pub target: String,
    pub ids: u64,
    /// (id1, link_type) pairs whose count disagreed with the visible links.
    pub wrong: u64,
    /// The check itself failed (its message).
    pub failed: Option<String>,
}

fn kind_of(r: &Row) -> Option<Kind> {
    crate::workload::linkbench::kind(r.id.step.name())
}

/// The view from the report's rows and every step result (`steps`: by
/// target index). `names`: the targets; `base_of`: each one's base.
pub fn view(
    names: &[String],
    base_of: &[usize],
    rows: &[Row],
    steps: &[(usize, StepResult)],
) -> View {
    let mut v = View::default();
    let results = |row: &Row, ti: usize| super::series::results_at(steps, row, ti, true);
    for row in rows.iter().filter(|r| r.group == Group::LinkBench) {
        let Some(kind) = kind_of(row) else { continue };
        match kind {
            Kind::Load => {
                for (ti, name) in names.iter().enumerate() {
                    let rs = results(row, ti);
                    if !rs.is_empty() {
                        v.load.push(load_row(row, ti, name, &rs));
                    }
                }
            }
            Kind::Request => {
                let mut per_target: Vec<Vec<OpRow>> = Vec::new();
                for (ti, name) in names.iter().enumerate() {
                    let cell = &row.cells[ti];
                    let rs = results(row, ti);
                    if let Some(t) = cell.figures.throughput {
                        v.requests.push(RequestRow {
                            step: row.title(),
                            clients: row.id.clients,
                            target: name.clone(),
                            ops_per_sec: t,
                            relative: cell.test.relative,
                            verdict: cell.verdict(),
                            errors: rs.iter().map(|s| s.failed_events).sum(),
                        });
                    }
                    per_target.push(op_rows(row, name, &rs));
                }
                relative_to_base(&mut per_target, base_of);
                v.ops.extend(per_target.into_iter().flatten());
            }
            Kind::Check => {
                for (ti, name) in names.iter().enumerate() {
                    let all = super::series::results_at(steps, row, ti, false);
                    if !all.is_empty() {
                        v.checks.push(check_row(name, &all));
                    }
                }
            }
        }
    }
    v
}

/// A target's load: what it made, how fast.
fn load_row(row: &Row, ti: usize, name: &str, rs: &[&StepResult]) -> LoadRow {
    let tally = |class: &str| {
        let key = format!("{class}/rows");
        median_u64(rs.iter().map(|s| s.tallies.get(&key).copied().unwrap_or(0))).unwrap_or(0)
    };
    let secs = median(&mut rs.iter().map(|s| s.secs).collect::<Vec<_>>()).unwrap_or(0.0);
    let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let (nodes, links, counts) = (
        tally(LOAD_CLASSES[0]),
        tally(LOAD_CLASSES[1]),
        tally(LOAD_CLASSES[2]),
    );
    LoadRow {
        target: name.to_string(),
        clients: row.id.clients,
        nodes,
        links,
        counts,
        secs,
        nodes_per_sec: rate(nodes),
        links_per_sec: rate(links),
        rows_per_sec: row.cells[ti].figures.throughput.unwrap_or(0.0),
        relative: row.cells[ti].test.relative,
        verdict: row.cells[ti].verdict(),
    }
}

/// A target's operations in a request step: each one's share and
/// latencies, over its repeats.
fn op_rows(row: &Row, name: &str, rs: &[&StepResult]) -> Vec<OpRow> {
    let title = row.title();
    let mut ops = Vec::new();
    let total: u64 = rs
        .iter()
        .flat_map(|s| OPS.iter().filter_map(|o| s.latency.get(*o)))
        .map(|l| l.count)
        .sum();
    for op in OPS {
        let ls: Vec<_> = rs.iter().filter_map(|s| s.latency.get(op)).collect();
        let count: u64 = ls.iter().map(|l| l.count).sum();
        let errors: u64 = rs
            .iter()
            .flat_map(|s| s.errors.iter())
            .filter(|(k, _)| k.split('/').next() == Some(op))
            .map(|(_, n)| n)
            .sum();
        if count == 0 && errors == 0 {
            continue;
        }
        let m = |f: fn(&crate::measure::LatencySummary) -> f64| {
            median(&mut ls.iter().map(|l| f(l)).collect::<Vec<_>>()).unwrap_or(0.0)
        };
        let q = |f: fn(&crate::measure::LatencySummary) -> Option<f64>| {
            median(&mut ls.iter().filter_map(|l| f(l)).collect::<Vec<_>>())
        };
        let key = format!("{op}/not-found");
        ops.push(OpRow {
            step: title.clone(),
            clients: row.id.clients,
            target: name.to_string(),
            op,
            count,
            share_pct: if total > 0 {
                100.0 * count as f64 / total as f64
            } else {
                0.0
            },
            p25_us: q(|l| l.p25_us),
            p50_us: m(|l| l.p50_us),
            p75_us: q(|l| l.p75_us),
            p95_us: m(|l| l.p95_us),
            p99_us: m(|l| l.p99_us),
            max_us: m(|l| l.max_us),
            mean_us: m(|l| l.mean_us),
            errors,
            not_found: rs
                .iter()
                .map(|s| s.tallies.get(&key).copied().unwrap_or(0))
                .sum(),
            p50_relative: None,
            p99_relative: None,
        });
    }
    ops
}

/// Each operation's median and p99 against its base's.
fn relative_to_base(per_target: &mut [Vec<OpRow>], base_of: &[usize]) {
    for ti in 0..per_target.len() {
        let b = base_of[ti];
        if b == ti {
            continue;
        }
        let base: Vec<(&'static str, f64, f64)> = per_target[b]
            .iter()
            .map(|o| (o.op, o.p50_us, o.p99_us))
            .collect();
        for o in &mut per_target[ti] {
            if let Some((_, p50, p99)) = base.iter().find(|(op, ..)| *op == o.op) {
                o.p50_relative = (*p50 > 0.0).then(|| o.p50_us / p50);
                o.p99_relative = (*p99 > 0.0).then(|| o.p99_us / p99);
            }
        }
    }
}

/// A target's check of the loaded graph.
fn check_row(name: &str, all: &[&StepResult]) -> CheckRow {
    let sum = |key: &str| -> u64 {
        all.iter()
            .map(|s| s.tallies.get(key).copied().unwrap_or(0))
            .sum()
    };
    CheckRow {
        target: name.to_string(),
        ids: sum("check/rows"),
        wrong: sum("check/wrong"),
        failed: all.iter().find_map(|s| s.failed.clone()),
    }
}

impl LoadRow {
    /// The load rate against the base's, as its cell is judged.
    pub fn verdict(&self) -> Option<Verdict> {
        self.verdict
    }
}

impl RequestRow {
    /// Requests a second against the base's, as its cell is judged.
    pub fn verdict(&self) -> Option<Verdict> {
        self.verdict
    }
}
