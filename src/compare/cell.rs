//! A cell: one target's results for one step, reduced to medians, costs,
//! latency and counters, then compared with the base's cell (ratios,
//! intervals, p-values from the rank-sum or the within-run test).

use super::*;
use crate::measure::{paired, steady};

pub use super::parts::*;
pub use super::significance::{Method, Significance};

impl Cell {
    /// The band a change must pass and an equivalence must stay inside:
    /// 0.95–1.05, or the A/A floor of its comparison where that is wider
    /// (identical runs lay that far apart).
    pub fn band(&self) -> (f64, f64) {
        let floor = self.test.noise_floor.unwrap_or(0.0);
        (SLOWER.min(1.0 / (1.0 + floor)), FASTER.max(1.0 + floor))
    }

    /// The band as a verdict reads it, against ratios rounded to two
    /// decimals: where an A/A floor widened it, its edges put half a
    /// hundredth past the floor's printed value, so that a copy's own
    /// ratio, inside the floor as computed, never rounds past it
    /// (regression: an A/A copy's update-index, `1.17 (1.06–1.28)` against
    /// a floor of ±16.5%, was coloured faster). The plain band is as it is.
    pub fn judged_band(&self) -> (f64, f64) {
        let (lo, hi) = self.band();
        let lo = if lo < SLOWER {
            ((lo * 100.0).floor() - 0.5) / 100.0
        } else {
            lo
        };
        let hi = if hi > FASTER {
            ((hi * 100.0).ceil() + 0.5) / 100.0
        } else {
            hi
        };
        (lo, hi)
    }

    /// The throughput change as the report judges it: changed, the same,
    /// or undecided (and why); `None` for a base's own cell, and a cell
    /// with no ratio. A q-step whose background writes missed the SLA is
    /// not judged: its queries ran against less write load than asked.
    pub fn verdict(&self) -> Option<Verdict> {
        if self.judgement.is_base {
            return None;
        }
        let rel = self.test.relative?;
        if self.judgement.load_missed() {
            return Some(Verdict::Undecided);
        }
        if self.judgement.short_window {
            return Some(Verdict::TooShort);
        }
        if self.judgement.disturbed.is_some() || self.judgement.base_disturbed {
            return Some(Verdict::Disturbed);
        }
        let (lo, hi) = self.judged_band();
        let v = band_verdict(rel, lo, hi);
        // A window that drifts by d puts the ratio anywhere within a
        // factor 1 + d of its figure: a change that stays past the same
        // edge across that range is a change whatever part of the window
        // is read (an insert step 10× faster whose throughput fell 20% as
        // its table grew); anything nearer the band is not judged.
        let f = 1.0 + self.judgement.drift;
        let outlasts_drift = v.is_change()
            && band_verdict(rel * f, lo, hi) == v
            && band_verdict(rel / f, lo, hi) == v;
        if (self.judgement.unsteady.is_some() || self.judgement.base_unsteady) && !outlasts_drift {
            return Some(Verdict::Unsteady);
        }
        let Some(sig) = &self.test.significance else {
            return Some(Verdict::Untested);
        };
        let Some(i) = sig.interval else {
            // No interval (Fieller's, for a base indistinguishable from
            // 0): the p-value alone can show a change, never sameness.
            return Some(if v.is_change() && sig.p_value < stats::ALPHA {
                v
            } else {
                Verdict::Undecided
            });
        };
        // Changed: past the band, and the interval clear of 1 (which is
        // the test's p below its level).
        if v.is_change() && (i.hi < 1.0 || i.lo > 1.0) {
            return Some(v);
        }
        // The same: the two one-sided tests' whole interval inside the
        // band, as printed.
        let e = sig.equivalence.unwrap_or(i);
        if band_verdict(e.lo, lo, hi) == Verdict::Same
            && band_verdict(e.hi, lo, hi) == Verdict::Same
        {
            return Some(Verdict::Same);
        }
        Some(Verdict::Undecided)
    }
}

pub(super) fn cell<'a>(results: impl Iterator<Item = &'a StepResult>) -> Cell {
    let mut results: Vec<&StepResult> = results.collect();
    results.sort_by_key(|s| s.id.repeat);
    let finished: Vec<&&StepResult> = results.iter().filter(|s| s.failed.is_none()).collect();
    // Figures from the quiet windows only, when a side has any: a window
    // another program shared measures that program too, and `--confirm`
    // adds repeats precisely so that each side has quiet ones to pair. A
    // disturbed window counts only when no quiet one is left.
    // One judgement for every consumer: a window too short to judge, or
    // stalled against its siblings, is no more quiet than a disturbed one.
    let judged = crate::results::judge::judge(&finished.iter().map(|s| **s).collect::<Vec<_>>());
    let quiet: Vec<&&StepResult> = finished
        .iter()
        .zip(&judged)
        .filter(|(_, j)| j.is_quiet())
        .map(|(s, _)| *s)
        .collect();
    let disturbed_left_out = (finished.len() - quiet.len()) * usize::from(!quiet.is_empty());
    // Why each window used is not quiet (none, when quiet ones are used).
    let ok_why: Vec<Option<&str>> = if quiet.is_empty() {
        judged
            .iter()
            .map(|j| j.is_disturbed().then(|| j.why()).flatten())
            .collect()
    } else {
        Vec::new()
    };
    let ok = if quiet.is_empty() { finished } else { quiet };
    let rates: BTreeMap<Rate, f64> = Rate::ALL
        .iter()
        .filter_map(|&k| {
            let mut v: Vec<f64> = ok.iter().filter_map(|s| k.of(&s.metrics)).collect();
            Some((k, median(&mut v)?))
        })
        .collect();
    let throughputs: Vec<f64> = ok.iter().map(|s| s.throughput).collect();
    let cost_samples: BTreeMap<Cost, Vec<(u32, f64)>> = Cost::ALL
        .iter()
        .filter_map(|&k| {
            let v: Vec<(u32, f64)> = ok
                .iter()
                .filter_map(|s| Some((s.id.repeat, k.of(&s.metrics)?)))
                .collect();
            (!v.is_empty()).then_some((k, v))
        })
        .collect();
    let costs = cost_medians(&cost_samples);
    let mut p99: Vec<f64> = ok
        .iter()
        .filter_map(|s| s.latency.get("event").map(|l| l.p99_us))
        .collect();
    let (unsteady, drift, warming_secs) = steadiness(&ok);
    Cell {
        figures: Figures {
            throughput: median(&mut throughputs.clone()),
            throughput_interval: stats::median_interval(&throughputs),
            throughputs,
            rounds: ok.iter().map(|s| s.id.repeat).collect(),
            repeats: ok.len(),
            last_repeat: results.iter().map(|s| s.id.repeat).max().unwrap_or(0),
            failed: if ok.is_empty() {
                results.iter().find_map(|s| s.failed.clone())
            } else {
                None
            },
            p99_us: median(&mut p99),
            errors: results.iter().flat_map(|s| s.errors.values()).sum(),
            db_bytes_after: median_u64(ok.iter().filter_map(|s| s.metrics.db_bytes_after)),
            server_rss_peak_bytes: median_u64(
                ok.iter().filter_map(|s| s.metrics.server_rss_peak_bytes),
            ),
            window_secs: median(&mut ok.iter().map(|s| s.secs).collect::<Vec<f64>>()),
            clients: ok.first().map_or(0, |s| s.id.at.clients),
            second_rates: match ok.as_slice() {
                [one] => one.second_rates(),
                _ => Vec::new(),
            },
        },
        hardware: Hardware {
            costs,
            costs_relative: BTreeMap::new(),
            costs_p: BTreeMap::new(),
            cost_samples,
            cpu_util_pct: rates.get(&Rate::CpuPct).copied(),
            own_cpu_pct: median(
                &mut ok
                    .iter()
                    .filter_map(|s| Some(s.metrics.own_cpu_us_per_op? * s.throughput / 1e4))
                    .collect::<Vec<f64>>(),
            ),
            usable_cores: usable_cores(&ok),
            disk_util_pct: median(
                &mut ok
                    .iter()
                    .filter_map(|s| Some(s.metrics.disk.as_ref()?.util_pct))
                    .collect::<Vec<f64>>(),
            ),
            rates,
            rates_relative: BTreeMap::new(),
        },
        internals: Internals {
            statements: statement_latency(&ok),
            counters_per_op: counters_per_op(&ok),
            counters_moved: Vec::new(),
            waits: super::waits::of(&ok),
            server_statements: super::statements::of(&ok),
            plans: first_plans(&ok),
            plans_differ: Vec::new(),
            profile: None,
        },
        // Filled in once compared with the base.
        test: Test::default(),
        judgement: Judgement {
            judged: None,
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
            disturbed: disturbed_of(&ok_why, ok.len()),
            disturbed_left_out,
            base_disturbed: false,
            short_window: false,
            unsteady,
            base_unsteady: false,
            is_base: false,
            drift,
            warming_secs,
            others_share_pct: median(
                &mut ok
                    .iter()
                    .filter_map(|s| s.metrics.interference.as_ref()?.others_share_pct)
                    .collect::<Vec<f64>>(),
            ),
        },
    }
}

/// Each cost's median over its samples.
pub fn cost_medians(samples: &BTreeMap<Cost, Vec<(u32, f64)>>) -> BTreeMap<Cost, f64> {
    samples
        .iter()
        .filter_map(|(k, v)| Some((*k, median(&mut v.iter().map(|x| x.1).collect::<Vec<_>>())?)))
        .collect()
}

/// Each statement class's latency, medians over the repeats.
pub(super) fn statement_latency(ok: &[&&StepResult]) -> BTreeMap<String, StatementLatency> {
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
pub(super) fn counters_per_op(ok: &[&&StepResult]) -> BTreeMap<String, f64> {
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
pub(super) fn counters_moved(c: &Cell, base: &Cell) -> Vec<(String, f64)> {
    let rate = |x: &Cell, v: f64| v * x.figures.throughput.unwrap_or(0.0);
    let mut moved: Vec<(String, f64)> = c
        .internals
        .counters_per_op
        .iter()
        .filter_map(|(k, &v)| {
            let b = *base.internals.counters_per_op.get(k)?;
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

/// The plans of the first repeat that asked for them.
fn first_plans(ok: &[&&StepResult]) -> Vec<crate::measure::plans::StatementPlan> {
    ok.iter()
        .find(|s| !s.plans.is_empty())
        .map(|s| s.plans.clone())
        .unwrap_or_default()
}

/// The statements this cell's step planned differently from its base's.
fn plans_differ(
    mine: &[crate::measure::plans::StatementPlan],
    base: &[crate::measure::plans::StatementPlan],
) -> Vec<PlanDiff> {
    crate::measure::plans::differing(mine, base)
        .into_iter()
        .map(|(sql, b, m)| {
            let raw = |ps: &[crate::measure::plans::StatementPlan]| {
                ps.iter()
                    .find(|p| p.sql == sql)
                    .map_or(String::new(), |p| p.plan.clone())
            };
            PlanDiff {
                sql: sql.to_string(),
                base_shape: b.to_string(),
                shape: m.to_string(),
                base_plan: raw(base),
                plan: raw(mine),
            }
        })
        .collect()
}

/// Why a cell's figure is disturbed: when every window it rests on was
/// (quiet ones, when there are any, are the only ones used).
pub(super) fn disturbed_of(ok_why: &[Option<&str>], ok: usize) -> Option<String> {
    let why: Vec<&str> = ok_why.iter().flatten().copied().collect();
    if why.is_empty() || 2 * why.len() < ok {
        return None;
    }
    Some(match ok {
        1 => why[0].to_string(),
        n => format!("{} of {n} repeats; {}", why.len(), why[0]),
    })
}

/// The cores a step's clients can use (one per client, no more than the
/// machine's), median over the repeats.
fn usable_cores(ok: &[&&StepResult]) -> Option<f64> {
    median(
        &mut ok
            .iter()
            .filter_map(|s| {
                // The machine's CPUs as the sampler counted them; for
                // results recorded before it did, from the window's
                // CPU time.
                let cores = s
                    .metrics
                    .interference
                    .as_ref()
                    .and_then(|i| i.cores)
                    .or_else(|| {
                        let sys = s.metrics.system.as_ref()?;
                        (s.secs > 0.0).then(|| (sys.cpu_secs.all() / s.secs).round())
                    })?;
                Some(cores.min(f64::from(s.id.at.clients)))
            })
            .collect::<Vec<f64>>(),
    )
}

/// Why a cell's windows are not steady (any of them never became
/// steady: one such window makes the median a mix of a level and a
/// ramp), how far the worst of them drifted, and the warm-up MSER-5 cut
/// from them (median of the windows that had one).
fn steadiness(ok: &[&&StepResult]) -> (Option<String>, f64, Option<f64>) {
    let found: Vec<steady::Steady> = ok
        .iter()
        .filter_map(|s| steady::mser(&s.second_rates()))
        .collect();
    let bad: Vec<&steady::Steady> = found.iter().filter(|st| st.never_steady).collect();
    let unsteady = bad
        .iter()
        .max_by(|a, b| a.trend.abs().total_cmp(&b.trend.abs()))
        .map(|worst| match ok.len() {
            1 => worst.describe(),
            n => format!("{} of {n} repeats; {}", bad.len(), worst.describe()),
        });
    let mut warming: Vec<f64> = found
        .iter()
        .map(|st| st.warming_secs() as f64)
        .filter(|&w| w > 0.0)
        .collect();
    let drift = bad.iter().map(|st| st.trend.abs()).fold(0.0, f64::max);
    (unsteady, drift, median(&mut warming))
}

/// Fills a cell's ratios against its base and, when both have repeats,
/// each cost's p-value (the throughput's test is in the verdicts module, which reads cells).
pub(super) fn compare(c: &mut Cell, base: &Cell, is_base: bool) {
    c.judgement.is_base = is_base;
    c.test.relative = ratio(c.figures.throughput, base.figures.throughput);
    c.judgement.base_sla_missed = !is_base && base.judgement.sla_missed.is_some();
    c.judgement.base_disturbed = !is_base && base.judgement.disturbed.is_some();
    c.judgement.base_unsteady = !is_base && base.judgement.unsteady.is_some();
    if !is_base {
        c.judgement.drift = c.judgement.drift.max(base.judgement.drift);
    }
    let short = |x: &Cell| x.figures.window_secs.is_some_and(|w| w < SHORT_WINDOW_SECS);
    c.judgement.short_window = !is_base && (short(c) || short(base));
    c.hardware.rates_relative = Rate::ALL
        .iter()
        .filter_map(|k| {
            Some((
                *k,
                ratio(
                    c.hardware.rates.get(k).copied(),
                    base.hardware.rates.get(k).copied(),
                )?,
            ))
        })
        .collect();
    if !is_base {
        c.internals.counters_moved = counters_moved(c, base);
        c.internals.plans_differ = plans_differ(&c.internals.plans, &base.internals.plans);
        if let (Some(s), Some(bs)) = (
            c.internals.server_statements.as_mut(),
            base.internals.server_statements.as_ref(),
        ) {
            super::statements::compare(s, bs);
        }
        if let (Some(w), Some(bw)) = (c.internals.waits.as_mut(), base.internals.waits.as_ref()) {
            super::waits::compare(
                w,
                bw,
                c.figures.clients,
                (c.figures.throughput, base.figures.throughput),
            );
        }
    }
    c.hardware.costs_relative = Cost::ALL
        .iter()
        .filter_map(|k| {
            Some((
                *k,
                ratio(
                    c.hardware.costs.get(k).copied(),
                    base.hardware.costs.get(k).copied(),
                )?,
            ))
        })
        .collect();
    if is_base {
        return;
    }
    // The throughput's test takes every cell of the study at once (each
    // cell's variance is moderated by the others': the verdicts module);
    // a cost's is the cell's own.
    // Paired by round only where both cells carry their rounds (a
    // history's sides are builds of different runs).
    let by_round = !c.figures.rounds.is_empty() && !base.figures.rounds.is_empty();
    c.hardware.costs_p = c
        .hardware
        .cost_samples
        .iter()
        .filter_map(|(k, v)| Some((*k, cost_p(v, base.hardware.cost_samples.get(k)?, by_round)?)))
        .collect();
}

/// A cost's two-sided p against the base's, with two or more repeats a
/// side: the t on logs (paired by round when `by_round`) where every
/// figure is positive, the rank sum where some cost is 0 (no log).
fn cost_p(mine: &[(u32, f64)], base: &[(u32, f64)], by_round: bool) -> Option<f64> {
    if mine.len() < 2 || base.len() < 2 {
        return None;
    }
    let v = |x: &[(u32, f64)]| x.iter().map(|p| p.1).collect::<Vec<f64>>();
    let sample = if by_round {
        paired::Sample::of(mine, base)
    } else {
        paired::Sample::unpaired(&v(mine), &v(base))
    };
    if let Some(s) = sample {
        return paired::test(&s, None, stats::ALPHA).map(|t| t.p_value);
    }
    stats::rank_sum_p(&v(mine), &v(base))
}

impl Cell {
    /// Whether this window or its base's was disturbed: every figure of
    /// the comparison is then marked as such in every output.
    pub fn is_disturbed(&self) -> bool {
        self.judgement.disturbed.is_some() || self.judgement.base_disturbed
    }

    /// A throughput ratio's verdict by the thresholds alone, for a cell
    /// with no significance to go by (one repeat, no within-run test).
    pub fn ratio_verdict(&self) -> Option<Verdict> {
        self.test.relative.map(super::verdict)
    }

    /// Cost `k` against the base's: `None` when it is too small at the
    /// step's rate to matter (0.02 against 0.07 KiB written per point
    /// query is background noise, not a win) or was not compared; with
    /// repeats, `Unsure` unless the change is significant.
    pub fn cost_verdict(&self, k: Cost, base: &Cell) -> Option<Verdict> {
        let rel = *self.hardware.costs_relative.get(&k)?;
        // The machine's figure from a window another program shared
        // measures that program too: marked, never coloured.
        if k.machine_wide()
            && (self.judgement.disturbed.is_some() || base.judgement.disturbed.is_some())
        {
            return Some(Verdict::Disturbed);
        }
        if !super::explain::cost_matters(k, self, base) {
            return None;
        }
        Some(super::judged(
            super::cost_verdict(rel),
            self.hardware.costs_p.get(&k).copied(),
        ))
    }

    /// The cost whose ratio moved furthest from 1, among those that
    /// matter at the step's rate (the overview's tooltip names it).
    pub fn moved_most(&self, base: &Cell) -> Option<(Cost, f64)> {
        self.hardware
            .costs_relative
            .iter()
            .filter(|(k, _)| super::explain::cost_matters(**k, self, base))
            .filter(|(k, _)| !super::explain::superseded(**k, self))
            .map(|(k, r)| (*k, *r))
            .max_by(|a, b| a.1.ln().abs().total_cmp(&b.1.ln().abs()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unsteady(rel: f64, drift: f64) -> Option<Verdict> {
        Cell {
            test: Test {
                relative: Some(rel),
                ..Default::default()
            },
            judgement: Judgement {
                unsteady: Some("1 of 2 repeats; still warming up: throughput fell 17%".into()),
                drift,
                ..Default::default()
            },
            ..Cell::default()
        }
        .verdict()
    }

    #[test]
    fn an_insert_ten_times_faster_whose_window_drifted_is_still_judged() {
        // bench/time_to_verdict.py: SQLite's insert with synchronous=off
        // at 10.6× the default, one of its 30 s windows falling 22% as
        // the table grew, was "not steady" and lost its verdict.
        assert_eq!(unsteady(10.6, 0.22), Some(Verdict::Untested));
        assert_eq!(unsteady(0.5, 0.22), Some(Verdict::Untested));
    }

    #[test]
    fn a_change_the_drift_could_make_is_not_judged() {
        assert_eq!(unsteady(1.0, 0.12), Some(Verdict::Unsteady));
        assert_eq!(unsteady(1.12, 0.12), Some(Verdict::Unsteady));
        assert_eq!(unsteady(0.9, 0.12), Some(Verdict::Unsteady));
        let base_only = Cell {
            test: Test {
                relative: Some(1.12),
                ..Default::default()
            },
            judgement: Judgement {
                base_unsteady: true,
                drift: 0.12,
                ..Default::default()
            },
            ..Cell::default()
        };
        assert_eq!(base_only.verdict(), Some(Verdict::Unsteady));
    }
}
