//! The figures behind the report's charts and its Insert Benchmark and
//! error tables, computed from the step results once, here, so that the
//! renderers only lay them out and `report.json` carries every one:
//! per-second throughput, latency percentiles, per-class write rates and
//! slowest responses, database size after each step, SLA rows,
//! response-time ranges and failures.

use serde::Serialize;

use super::median;
use crate::measure::{LatencySummary, IB_BOUNDS_US};
use crate::results::StepResult;
use crate::workload::insert;

/// A second of a window counts when at least this share of it was
/// measured: a sliver of a second says more about timer placement than
/// about the server.
const MIN_COVERED: f64 = 0.5;

/// One target's results (`ti`) of one row, in repeat order: every one,
/// or only those that did not fail (`kept_only`). A family's own tables
/// (LinkBench's, TPC-C's) read their figures from these.
pub(super) fn results_at<'a>(
    steps: &'a [(usize, StepResult)],
    row: &super::Row,
    ti: usize,
    kept_only: bool,
) -> Vec<&'a StepResult> {
    let mut r: Vec<&StepResult> = steps
        .iter()
        .filter(|(t, s)| *t == ti && s.id.at == row.id && (!kept_only || s.failed.is_none()))
        .map(|(_, s)| s)
        .collect();
    r.sort_by_key(|s| s.id.repeat);
    r
}

/// One target's throughput in each second of one repeat's window.
#[derive(Debug, Clone, Serialize)]
pub struct RateLine {
    /// Index into `Report::targets`.
    pub target: usize,
    pub repeat: u32,
    /// (seconds into the window, at the middle of the second covered;
    /// throughput in the row's unit).
    pub points: Vec<(f64, f64)>,
}

/// p50, p95, p99 and max of one event, µs: medians over the repeats.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Percentiles {
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// One target's statement class over an Insert Benchmark step (its first
/// repeat): rows (or queries) per second, and the slowest response of
/// each second.
#[derive(Debug, Clone, Serialize)]
pub struct ClassLine {
    pub target: usize,
    pub class: String,
    pub rate: Vec<(f64, f64)>,
    pub max_us: Vec<(f64, f64)>,
}

/// The series of one row (step × clients).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RowSeries {
    /// Lines of two or more points, per target and repeat.
    pub rates: Vec<RateLine>,
    /// The longest measured window of the row, s.
    pub secs: f64,
    /// Per target with a recorded latency.
    pub latency: Vec<(usize, Percentiles)>,
    /// Insert Benchmark steps only.
    pub classes: Vec<ClassLine>,
    /// The longest first-repeat window, s (the class charts' x-axis).
    pub class_secs: f64,
}

/// The database size after one step of the first repeat.
#[derive(Debug, Clone, Serialize)]
pub struct DbSizeStep {
    pub seq: usize,
    /// The step's title (`scan (warm)`).
    pub step: String,
    pub clients: u32,
    /// Per target, in `Report::targets` order; `None` where not measured.
    pub bytes: Vec<Option<u64>>,
}

/// An Insert Benchmark q-step's background writes against their target.
#[derive(Debug, Clone, Serialize)]
pub struct SlaRow {
    pub step: String,
    pub target: usize,
    pub repeat: u32,
    pub target_rows_per_sec: f64,
    pub insert_rows_per_sec: f64,
    pub delete_rows_per_sec: f64,
    /// Share of the target rate the inserts reached.
    pub achieved: f64,
    /// The step's query throughput.
    pub queries_per_sec: f64,
    pub passed: bool,
}

/// How many responses of one operation fell in each of the Insert
/// Benchmark's ranges (`IB_BOUNDS_US`, then "more"), all repeats together.
#[derive(Debug, Clone, Serialize)]
pub struct ResponseRow {
    pub step: String,
    pub target: usize,
    pub operation: String,
    pub counts: Vec<u64>,
    pub max_us: f64,
}

/// A failed step, or a kind of error a step met.
#[derive(Debug, Clone, Serialize)]
pub struct ProblemRow {
    pub target: usize,
    pub step: String,
    pub clients: u32,
    pub repeat: u32,
    /// "step failed", or the statement class and error kind.
    pub what: String,
    /// How many errors of that kind; `None` for a failed step.
    pub count: Option<u64>,
    pub message: String,
}

/// A step result's throughput in each second of its window. The last
/// second is usually partial, so it is scaled by the part it covers;
/// rows per event turn events into the step's unit.
fn rate_points(s: &StepResult) -> Vec<(f64, f64)> {
    if s.per_second.is_empty() || s.events == 0 {
        return Vec::new();
    }
    let per_event = s.throughput * s.secs / s.events as f64;
    let points: Vec<(f64, f64)> = s
        .per_second
        .iter()
        .enumerate()
        .filter_map(|(i, &c)| {
            let covered = (s.secs - i as f64).clamp(0.0, 1.0);
            (covered >= MIN_COVERED)
                .then(|| (i as f64 + covered / 2.0, c as f64 * per_event / covered))
        })
        .collect();
    thin(&points, false)
}

/// The most points a per-second line keeps in the report: a day-long step
/// has 86,400 seconds, which no chart can show and no reader wants in
/// report.json. The step's file keeps every second.
pub const MAX_POINTS: usize = 720;

/// `points` in at most [`MAX_POINTS`] buckets of whole seconds: each
/// bucket's mean (throughput) or its largest value (a maximum latency), at
/// the bucket's middle.
fn thin(points: &[(f64, f64)], largest: bool) -> Vec<(f64, f64)> {
    if points.len() <= MAX_POINTS {
        return points.to_vec();
    }
    let per = points.len().div_ceil(MAX_POINTS);
    points
        .chunks(per)
        .map(|c| {
            let t = (c[0].0 + c[c.len() - 1].0) / 2.0;
            let v = if largest {
                c.iter().map(|p| p.1).fold(f64::MIN, f64::max)
            } else {
                c.iter().map(|p| p.1).sum::<f64>() / c.len() as f64
            };
            (t, v)
        })
        .collect()
}

/// Each percentile's median over the repeats' event latency.
fn percentiles<'a>(results: impl Iterator<Item = &'a StepResult>) -> Option<Percentiles> {
    let lats: Vec<&LatencySummary> = results.filter_map(|s| s.latency.get("event")).collect();
    if lats.is_empty() {
        return None;
    }
    let pick = |f: fn(&LatencySummary) -> f64| {
        median(&mut lats.iter().map(|l| f(l)).collect::<Vec<_>>()).unwrap_or(0.0)
    };
    Some(Percentiles {
        p50_us: pick(|l| l.p50_us),
        p95_us: pick(|l| l.p95_us),
        p99_us: pick(|l| l.p99_us),
        max_us: pick(|l| l.max_us),
    })
}

/// The per-class lines of one step result. A write statement is a batch
/// of rows: the load steps' event, or the q-steps' background batch.
fn class_lines(ti: usize, s: &StepResult) -> Vec<ClassLine> {
    let batch = s
        .sla
        .as_ref()
        .map(|sla| sla.rows_per_commit as f64)
        .filter(|n| *n > 0.0)
        .or(s.rows_per_event.map(|n| n as f64))
        .unwrap_or(1.0);
    s.class_seconds
        .iter()
        .map(|(class, series)| {
            let per = if insert::WRITES.contains(&class.as_str()) {
                batch
            } else {
                1.0
            };
            let mut rate = Vec::new();
            let mut max_us = Vec::new();
            for (i, x) in series.iter().enumerate() {
                let covered = (s.secs - i as f64).clamp(0.0, 1.0);
                if covered < MIN_COVERED {
                    continue;
                }
                let t = i as f64 + covered / 2.0;
                rate.push((t, x.n as f64 * per / covered));
                if x.n > 0 {
                    max_us.push((t, x.max_us));
                }
            }
            ClassLine {
                target: ti,
                class: class.clone(),
                rate: thin(&rate, false),
                max_us: thin(&max_us, true),
            }
        })
        .collect()
}

/// The series of one row, from each target's results for it (`results(ti)`
/// gives them in repeat order, failed ones left out).
pub fn row_series<'a, I: Iterator<Item = &'a StepResult>>(
    cols: &[usize],
    results: impl Fn(usize) -> I,
) -> RowSeries {
    let rates: Vec<RateLine> = cols
        .iter()
        .flat_map(|&ti| {
            results(ti).map(move |s| RateLine {
                target: ti,
                repeat: s.id.repeat,
                points: rate_points(s),
            })
        })
        .filter(|l| l.points.len() >= 2)
        .collect();
    let secs = cols
        .iter()
        .flat_map(|&ti| results(ti).map(|s| s.secs))
        .fold(1.0, f64::max);
    let latency = cols
        .iter()
        .filter_map(|&ti| Some((ti, percentiles(results(ti))?)))
        .collect();
    let firsts: Vec<(usize, &StepResult)> = cols
        .iter()
        .filter_map(|&ti| Some((ti, results(ti).next()?)))
        .collect();
    let mut classes: Vec<ClassLine> = firsts
        .iter()
        .flat_map(|(ti, s)| class_lines(*ti, s))
        .collect();
    if classes.iter().all(|l| l.rate.len() < 2) {
        classes.clear();
    }
    let class_secs = firsts.iter().map(|(_, s)| s.secs).fold(1.0, f64::max);
    RowSeries {
        rates,
        secs,
        latency,
        classes,
        class_secs,
    }
}

/// The database size after each step of the first repeat, per target.
pub fn db_size(targets: usize, steps: &[(usize, StepResult)]) -> Vec<DbSizeStep> {
    let mut seq: Vec<DbSizeStep> = Vec::new();
    for (_, s) in steps.iter().filter(|(_, s)| s.id.repeat == 1) {
        if !seq
            .iter()
            .any(|k| k.seq == s.id.seq && k.clients == s.id.at.clients)
        {
            seq.push(DbSizeStep {
                seq: s.id.seq,
                step: s.id.at.step.title(),
                clients: s.id.at.clients,
                bytes: vec![None; targets],
            });
        }
    }
    seq.sort_by(|a, b| (a.seq, &a.step, a.clients).cmp(&(b.seq, &b.step, b.clients)));
    for (ti, s) in steps.iter().filter(|(_, s)| s.id.repeat == 1) {
        if let Some(k) = seq
            .iter_mut()
            .find(|k| k.seq == s.id.seq && k.clients == s.id.at.clients)
        {
            if k.bytes[*ti].is_none() {
                k.bytes[*ti] = s.metrics.db_bytes_after;
            }
        }
    }
    if seq.iter().all(|k| k.bytes.iter().all(Option::is_none)) {
        seq.clear();
    }
    seq
}

pub fn sla_rows(steps: &[(usize, StepResult)]) -> Vec<SlaRow> {
    steps
        .iter()
        .filter_map(|(ti, s)| {
            let sla = s.sla.as_ref()?;
            Some(SlaRow {
                step: s.id.at.step.title(),
                target: *ti,
                repeat: s.id.repeat,
                target_rows_per_sec: sla.target_rows_per_sec,
                insert_rows_per_sec: sla.insert_rows_per_sec,
                delete_rows_per_sec: sla.delete_rows_per_sec,
                achieved: sla.achieved,
                queries_per_sec: s.throughput,
                passed: sla.passed,
            })
        })
        .collect()
}

/// The Insert Benchmark's response-time ranges of one row and target, per
/// operation, all repeats together.
pub fn response_rows<'a>(
    title: &str,
    ti: usize,
    results: impl Iterator<Item = &'a StepResult>,
) -> Vec<ResponseRow> {
    let results: Vec<&StepResult> = results.collect();
    insert::CLASSES
        .into_iter()
        .filter_map(|class| {
            let mut counts = vec![0u64; IB_BOUNDS_US.len() + 1];
            let mut max_us: f64 = 0.0;
            for s in &results {
                if let Some(l) = s.latency.get(class) {
                    for (i, (_, n)) in l.ranges.iter().enumerate() {
                        counts[i] += n;
                    }
                    max_us = max_us.max(l.max_us);
                }
            }
            (counts.iter().sum::<u64>() > 0).then(|| ResponseRow {
                step: title.to_string(),
                target: ti,
                operation: class.to_string(),
                counts,
                max_us,
            })
        })
        .collect()
}

/// What else used the machine during one step window.
#[derive(Debug, Clone, Serialize)]
pub struct InterferenceRow {
    pub target: usize,
    pub step: String,
    pub clients: u32,
    pub repeat: u32,
    pub secs: f64,
    /// Other programs' share of the machine, %.
    pub others_share_pct: Option<f64>,
    /// Kernel threads, % of one core.
    pub kernel_threads_cpu_pct: Option<f64>,
    /// Steal, % of the machine.
    pub steal_pct: Option<f64>,
    /// The programs that used most, as `name (pid) N% of a core`.
    pub top: Vec<String>,
    pub throughput_cv: Option<f64>,
    pub worst_second_vs_median: Option<f64>,
    pub stalls: u32,
    pub disturbed: Option<String>,
    pub not_judged: Option<String>,
}

/// Every measured window's interference, in run order.
pub fn interference(steps: &[(usize, StepResult)]) -> Vec<InterferenceRow> {
    steps
        .iter()
        .filter(|(_, s)| s.failed.is_none())
        .filter_map(|(ti, s)| {
            let i = s.metrics.interference.as_ref()?;
            let (disturbed, not_judged) = i.judge();
            Some(InterferenceRow {
                target: *ti,
                step: s.id.at.step.title(),
                clients: s.id.at.clients,
                repeat: s.id.repeat,
                secs: s.secs,
                others_share_pct: i.others_share_pct,
                kernel_threads_cpu_pct: i.kernel_threads_cpu_pct,
                steal_pct: i.steal_pct,
                top: i
                    .top
                    .iter()
                    .map(|p| format!("{} ({}) {:.0}% of a core", p.name, p.pid, p.cpu_pct))
                    .collect(),
                throughput_cv: i.throughput_cv,
                worst_second_vs_median: i.worst_second_vs_median,
                stalls: i.stalls,
                disturbed,
                not_judged,
            })
        })
        .collect()
}

/// Steps with errors or failures, with the first message of each kind.
pub fn problems(steps: &[(usize, StepResult)]) -> Vec<ProblemRow> {
    let mut rows = Vec::new();
    for (ti, s) in steps {
        let row = |what: String, count: Option<u64>, message: String| ProblemRow {
            target: *ti,
            step: s.id.at.step.title(),
            clients: s.id.at.clients,
            repeat: s.id.repeat,
            what,
            count,
            message,
        };
        if let Some(f) = &s.failed {
            rows.push(row("step failed".into(), None, f.clone()));
        }
        for (key, n) in &s.errors {
            let sample = s.error_samples.get(key).cloned().unwrap_or_default();
            rows.push(row(key.clone(), Some(*n), sample));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_of_seconds_is_thinned_to_a_readable_line() {
        let points: Vec<(f64, f64)> = (0..86_400)
            .map(|i| (i as f64 + 0.5, (i % 10) as f64))
            .collect();
        let mean = thin(&points, false);
        assert!(mean.len() <= MAX_POINTS, "{}", mean.len());
        // Buckets of 120 s: the mean of 0..9, twelve times over.
        assert!((mean[0].1 - 4.5).abs() < 1e-9);
        assert_eq!(thin(&points, true)[0].1, 9.0);
        assert_eq!(thin(&points[..100], false).len(), 100);
    }
}
