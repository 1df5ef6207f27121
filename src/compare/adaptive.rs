//! An adaptive run's cells (`repeats = "auto"`): each tested by the
//! sequential rule (`measure::sequential`) instead of the rank-sum test,
//! and which of them are still open — the cells an adaptive run adds
//! repeats to, most open first.
//!
//! A cell is *open* while its interval straddles an edge of the band it
//! is judged by (±5%, or the A/A floor where that is wider): more repeats
//! could still move its verdict across. It is decided once the interval
//! lies inside the band (no change) or wholly past an edge (a change).
//! An open cell whose ratio lies nearer the edge than the interval the
//! run's maximum repeats would leave is not *decidable*: repeats there
//! would be spent without an answer, so the run leaves it as it is.
//! A/A copies are not open cells: they measure the noise the others
//! are judged by. A disturbed or untested cell is open too (a quiet repeat may settle
//! it); a window that never became steady, one too short to judge, or a
//! missed SLA or rate is decided as not judgeable: repeats would not
//! change that.

use super::cell::{Method, Significance};
use super::{Report, Row, TargetMeta, Verdict, FASTER, SLOWER};
use crate::measure::sequential::{self, WindowNoise};
use crate::plan::StepId;

/// Tests every compared cell by the sequential rule at `looks` looks.
/// The A/A windows of a cell's own copy group and its base's give the
/// variance beside the cell's own repeats.
pub(super) fn test_cells(rows: &mut [Row], targets: &[TargetMeta], base_of: &[usize], looks: u32) {
    let group_of = |t: usize| targets[t].copy_of.unwrap_or(t);
    // The copies' windows of the row are windows of identical work: the
    // step's own noise (pooled over rows, a write step's spread would
    // widen a point query's interval tenfold, and a point query's would
    // narrow a write step's). The target's and the base's own windows
    // are left out: the test has them already, and counting them twice
    // would double their degrees of freedom.
    let noise_of = |row: &Row, ti: usize, b: usize| {
        let mut groups = vec![group_of(ti), group_of(b)];
        groups.dedup();
        let sets: Vec<Vec<f64>> = groups
            .iter()
            .map(|&g| {
                (0..targets.len())
                    .filter(|&t| t != ti && t != b && group_of(t) == g)
                    .filter(|&t| row.cells[t].disturbed.is_none())
                    .flat_map(|t| row.cells[t].throughputs.iter().copied())
                    .collect::<Vec<f64>>()
            })
            .collect();
        WindowNoise::pooled(sets.iter().map(Vec::as_slice))
    };
    let mut found = Vec::new();
    for (ri, row) in rows.iter().enumerate() {
        for (ti, c) in row.cells.iter().enumerate() {
            let b = base_of[ti];
            if b == ti || c.relative.is_none() {
                continue;
            }
            let aa = noise_of(row, ti, b);
            let base = &row.cells[b];
            if let Some(s) = sequential::test(&c.throughputs, &base.throughputs, aa, looks) {
                found.push((ri, ti, s));
            }
        }
    }
    for (ri, ti, s) in found {
        let c = &mut rows[ri].cells[ti];
        c.significance = Some(Significance {
            method: Method::Sequential,
            p_value: s.p_value,
            interval: Some(s.interval),
            repeats_needed: None,
            aa_pairs: None,
            df: Some(s.df),
        });
    }
}

/// A cell more repeats could still decide.
#[derive(Debug, Clone, PartialEq)]
pub struct Open {
    /// Index into [`Report::targets`], and its base's.
    pub target: usize,
    pub base: usize,
    pub at: StepId,
    /// How open: the distance from the ratio to the nearest edge of the
    /// band, in half-widths of its interval (0: disturbed or untested).
    /// The smallest is the most open.
    pub openness: f64,
    /// Why, in words: `b (update-index c1): 0.96 (0.93–0.99) straddles 0.95`.
    pub why: String,
    /// Whether repeats up to the adaptive run's maximum can decide it:
    /// not when the ratio lies nearer the edge than the interval the
    /// maximum would leave (`measure::sequential::half_width_at`: the
    /// variance as now, more repeats and degrees of freedom). Such a cell
    /// stays as the report judges it now; repeats there would be spent
    /// without an answer.
    pub decidable: bool,
}

/// How a step's A/A windows spread: the variance of ln(throughput)
/// between windows of identical work beyond what each window's own
/// seconds give its mean, and that within part.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowSplit {
    pub between: f64,
    pub within: f64,
}

impl Report {
    /// The A/A copies' windows of `row` split into their between- and
    /// within-window variance; `None` without two windows of one copy
    /// group with seconds enough for the within part.
    pub fn window_split(&self, row: &Row) -> Option<WindowSplit> {
        let group_of = |t: usize| self.targets[t].copy_of.unwrap_or(t);
        let copied: Vec<usize> = (0..self.targets.len())
            .filter(|&g| self.targets.iter().any(|t| t.copy_of == Some(g)))
            .collect();
        let (mut sets, mut within) = (Vec::new(), Vec::new());
        for g in copied {
            let windows: Vec<&crate::results::StepResult> = self
                .steps
                .iter()
                .filter(|(t, s)| group_of(*t) == g && s.id.at == row.id && s.failed.is_none())
                .map(|(_, s)| s)
                .collect();
            sets.push(windows.iter().map(|s| s.throughput).collect::<Vec<f64>>());
            within.extend(windows.iter().filter_map(|s| {
                let secs = s.second_rates();
                // ln(a ÷ a) of a window with itself: twice its mean's
                // variance, its seconds' autocorrelation counted.
                crate::measure::within::log_ratio(&secs, &secs).map(|r| r.var / 2.0)
            }));
        }
        let total = WindowNoise::pooled(sets.iter().map(Vec::as_slice))?;
        if within.is_empty() {
            return None;
        }
        let within = within.iter().sum::<f64>() / within.len() as f64;
        Some(WindowSplit {
            between: (total.var - within).max(0.0),
            within,
        })
    }

    /// The cells an adaptive run should add repeats to, most open first
    /// (ties in row and target order, so the same results always give
    /// the same list).
    pub fn open_cells(&self) -> Vec<Open> {
        let bounds = self.adaptive.as_ref().map(|a| a.bounds);
        let mut out = Vec::new();
        for row in &self.rows {
            for (ti, c) in row.cells.iter().enumerate() {
                let b = self.base_of[ti];
                // An A/A copy measures the noise; it is not a question
                // the run spends repeats on.
                if b == ti || self.targets[ti].copy_of.is_some() {
                    continue;
                }
                let Some(rel) = c.relative else { continue };
                let name = format!(
                    "{} ({} c{})",
                    self.targets[ti].name,
                    row.title(),
                    row.id.clients
                );
                let (openness, why, decidable) = match c.verdict() {
                    Some(Verdict::Disturbed) => (0.0, format!("{name}: disturbed"), true),
                    Some(Verdict::Untested) => (0.0, format!("{name}: {rel:.2} not tested"), true),
                    Some(Verdict::TooShort | Verdict::Unsteady | Verdict::Noise) | None => continue,
                    Some(_)
                        if c.sla_missed.is_some()
                            || c.base_sla_missed
                            || c.rate_missed.is_some() =>
                    {
                        continue
                    }
                    Some(_) => {
                        let Some(sig) = c.significance.as_ref() else {
                            continue;
                        };
                        let Some(i) = sig.interval else { continue };
                        let floor = c.noise_floor.unwrap_or(0.0);
                        let edges = [SLOWER.min(1.0 / (1.0 + floor)), FASTER.max(1.0 + floor)];
                        let Some(edge) = edges.iter().find(|&&e| i.lo < e && e < i.hi) else {
                            continue;
                        };
                        let half = ((i.hi / i.lo).ln() / 2.0).max(1e-12);
                        let near = edges
                            .iter()
                            .map(|e| (rel / e).ln().abs())
                            .fold(f64::INFINITY, f64::min);
                        let n = (c.repeats as f64, row.cells[b].repeats as f64);
                        let at_max = match (bounds, sig.df) {
                            (Some(a), Some(df)) => {
                                sequential::half_width_at(half, df, n, f64::from(a.max), a.looks())
                            }
                            _ => 0.0,
                        };
                        (
                            near / half,
                            format!(
                                "{name}: {rel:.2} ({:.2}–{:.2}) straddles {edge:.2}",
                                i.lo, i.hi
                            ),
                            near >= at_max,
                        )
                    }
                };
                out.push(Open {
                    target: ti,
                    base: b,
                    at: row.id.clone(),
                    openness,
                    why,
                    decidable,
                });
            }
        }
        // Stable: equal openness keeps row and target order.
        out.sort_by(|a, b| a.openness.total_cmp(&b.openness));
        out
    }
}
