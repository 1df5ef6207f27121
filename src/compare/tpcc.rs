//! TPC-C's own tables, computed once: the load's rate, each run's tpmC
//! (new-order transactions a minute) and tpmTotal with its relative
//! throughput and verdict, each transaction's share and response times
//! (p50, p90 — the specification's bound — p95, p99, max), the new
//! orders rolled back on an unused item, and whether consistency
//! conditions 1–4 held after the run.

use serde::Serialize;

use super::{median, Row, Verdict};
use crate::measure::LatencySummary;
use crate::results::StepResult;
use crate::workload::tpcc::step::{LOAD_CLASSES, TX_CLASSES};
use crate::workload::tpcc::Kind;
use crate::workload::Group;

/// Everything the report shows of TPC-C (empty when no step ran).
#[derive(Debug, Clone, Default, Serialize)]
pub struct View {
    pub load: Vec<LoadRow>,
    pub runs: Vec<RunRow>,
    pub transactions: Vec<TxRow>,
    pub checks: Vec<CheckRow>,
}

impl View {
    pub fn is_empty(&self) -> bool {
        self.load.is_empty() && self.runs.is_empty() && self.checks.is_empty()
    }
}

/// One target's load, medians over repeats.
#[derive(Debug, Clone, Serialize)]
pub struct LoadRow {
    pub target: String,
    pub clients: u32,
    pub rows: u64,
    pub secs: f64,
    pub rows_per_sec: f64,
    pub relative: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

/// One run step (or interval) of one target.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    pub step: String,
    pub clients: u32,
    pub target: String,
    /// New-order transactions completed a minute (those rolled back on an
    /// unused item included: they complete as the specification's profile
    /// ends them), median over repeats.
    pub tpmc: f64,
    /// Every transaction completed a minute.
    pub tpm_total: f64,
    /// Transactions a second ÷ the base's, and the cell's verdict.
    pub relative: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// New orders rolled back, % of new orders (the specification: 1%).
    pub rollback_pct: Option<f64>,
    /// Transactions that failed (deadlocks, serialization failures).
    pub errors: u64,
}

/// One transaction type of one run step, for one target.
#[derive(Debug, Clone, Serialize)]
pub struct TxRow {
    pub step: String,
    pub clients: u32,
    pub target: String,
    pub transaction: &'static str,
    /// Completed, over all repeats.
    pub count: u64,
    pub share_pct: f64,
    /// Response times, µs, medians over repeats; p90 is absent from
    /// results written before it was kept.
    pub p50_us: f64,
    pub p90_us: Option<f64>,
    pub p95_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub errors: u64,
    /// p90 ÷ the base's for the same transaction: above 1 is slower.
    pub p90_relative: Option<f64>,
}

/// Consistency conditions 1–4 of one target, over its repeats.
#[derive(Debug, Clone, Serialize)]
pub struct CheckRow {
    pub target: String,
    pub warehouses: u64,
    /// Conditions that did not hold.
    pub broken: u64,
    /// What broke them, or why the check did not run.
    pub message: Option<String>,
    pub failed: bool,
}

fn kind_of(r: &Row) -> Option<Kind> {
    crate::workload::tpcc::kind(r.id.step.name())
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
    let results = |row: &Row, ti: usize, ok: bool| super::series::results_at(steps, row, ti, ok);
    for row in rows.iter().filter(|r| r.group == Group::Tpcc) {
        let Some(kind) = kind_of(row) else { continue };
        let mut per_target: Vec<Vec<TxRow>> = Vec::new();
        for (ti, name) in names.iter().enumerate() {
            let rs = results(row, ti, kind != Kind::Check);
            if rs.is_empty() {
                per_target.push(Vec::new());
                continue;
            }
            match kind {
                Kind::Load => v.load.push(load_row(row, ti, name, &rs)),
                Kind::Run => {
                    v.runs.push(run_row(row, ti, name, &rs));
                    per_target.push(tx_rows(row, name, &rs));
                }
                Kind::Check => v.checks.push(check_row(name, &rs)),
            }
        }
        if kind == Kind::Run {
            relative_to_base(&mut per_target, base_of);
            v.transactions.extend(per_target.into_iter().flatten());
        }
    }
    v
}

fn med(it: impl Iterator<Item = f64>) -> f64 {
    median(&mut it.collect::<Vec<_>>()).unwrap_or(0.0)
}

fn tally(s: &StepResult, key: &str) -> u64 {
    s.tallies.get(key).copied().unwrap_or(0)
}

fn load_row(row: &Row, ti: usize, name: &str, rs: &[&StepResult]) -> LoadRow {
    let rows = med(rs.iter().map(|s| {
        LOAD_CLASSES
            .iter()
            .map(|c| tally(s, &format!("{c}/rows")))
            .sum::<u64>() as f64
    }));
    let secs = med(rs.iter().map(|s| s.secs));
    LoadRow {
        target: name.to_string(),
        clients: row.id.clients,
        rows: rows.round() as u64,
        secs,
        rows_per_sec: row.cells[ti].figures.throughput.unwrap_or(0.0),
        relative: row.cells[ti].test.relative,
        verdict: row.cells[ti].verdict(),
    }
}

/// Completed transactions of `class` in one result.
fn count(s: &StepResult, class: &str) -> u64 {
    s.latency.get(class).map_or(0, |l| l.count)
}

fn run_row(row: &Row, ti: usize, name: &str, rs: &[&StepResult]) -> RunRow {
    let per_min = |s: &StepResult, n: u64| {
        if s.secs > 0.0 {
            n as f64 * 60.0 / s.secs
        } else {
            0.0
        }
    };
    let new_orders: u64 = rs.iter().map(|s| count(s, TX_CLASSES[0])).sum();
    let rolled: u64 = rs
        .iter()
        .map(|s| tally(s, &format!("{}/not-found", TX_CLASSES[0])))
        .sum();
    let cell = &row.cells[ti];
    RunRow {
        step: row.title(),
        clients: row.id.clients,
        target: name.to_string(),
        tpmc: med(rs.iter().map(|s| per_min(s, count(s, TX_CLASSES[0])))),
        tpm_total: med(rs.iter().map(|s| {
            let all = TX_CLASSES.iter().map(|c| count(s, c)).sum();
            per_min(s, all)
        })),
        relative: cell.test.relative,
        verdict: cell.verdict(),
        rollback_pct: (new_orders > 0).then(|| 100.0 * rolled as f64 / new_orders as f64),
        errors: rs.iter().map(|s| s.failed_events).sum(),
    }
}

/// Each transaction type's count, share and response times.
fn tx_rows(row: &Row, name: &str, rs: &[&StepResult]) -> Vec<TxRow> {
    let total: u64 = rs
        .iter()
        .map(|s| TX_CLASSES.iter().map(|c| count(s, c)).sum::<u64>())
        .sum();
    let mut out = Vec::new();
    for class in TX_CLASSES {
        let ls: Vec<&LatencySummary> = rs.iter().filter_map(|s| s.latency.get(class)).collect();
        let n: u64 = ls.iter().map(|l| l.count).sum();
        let errors: u64 = rs
            .iter()
            .flat_map(|s| s.errors.iter())
            .filter(|(k, _)| k.split('/').next() == Some(class))
            .map(|(_, n)| n)
            .sum();
        if n == 0 && errors == 0 {
            continue;
        }
        let m = |f: fn(&LatencySummary) -> f64| med(ls.iter().map(|l| f(l)));
        let p90: Vec<f64> = ls.iter().filter_map(|l| l.p90_us).collect();
        out.push(TxRow {
            step: row.title(),
            clients: row.id.clients,
            target: name.to_string(),
            transaction: class,
            count: n,
            share_pct: if total > 0 {
                100.0 * n as f64 / total as f64
            } else {
                0.0
            },
            p50_us: m(|l| l.p50_us),
            p90_us: (!p90.is_empty()).then(|| med(p90.into_iter())),
            p95_us: m(|l| l.p95_us),
            p99_us: m(|l| l.p99_us),
            max_us: m(|l| l.max_us),
            errors,
            p90_relative: None,
        });
    }
    out
}

/// Each transaction's p90 against its base's.
fn relative_to_base(per_target: &mut [Vec<TxRow>], base_of: &[usize]) {
    for ti in 0..per_target.len() {
        let b = base_of[ti];
        if b == ti {
            continue;
        }
        let base: Vec<(&'static str, Option<f64>)> = per_target[b]
            .iter()
            .map(|t| (t.transaction, t.p90_us))
            .collect();
        for t in &mut per_target[ti] {
            if let Some((_, Some(p90))) = base.iter().find(|(x, _)| *x == t.transaction) {
                t.p90_relative = t.p90_us.filter(|_| *p90 > 0.0).map(|x| x / p90);
            }
        }
    }
}

fn check_row(name: &str, all: &[&StepResult]) -> CheckRow {
    let failed = all.iter().find_map(|s| s.failed.clone());
    let sample = all
        .iter()
        .flat_map(|s| s.error_samples.iter())
        .find(|(k, _)| k.starts_with("check/"))
        .map(|(_, m)| m.clone());
    CheckRow {
        target: name.to_string(),
        warehouses: all
            .iter()
            .map(|s| tally(s, "check/rows"))
            .max()
            .unwrap_or(0),
        broken: all.iter().map(|s| tally(s, "check/wrong")).sum(),
        failed: failed.is_some(),
        message: failed.or(sample),
    }
}

impl LoadRow {
    pub fn verdict(&self) -> Option<Verdict> {
        self.verdict
    }
}

impl RunRow {
    pub fn verdict(&self) -> Option<Verdict> {
        self.verdict
    }
}
