//! An adaptive run's cells (`repeats = "auto"`): the level each is
//! judged at (the look its data reached spends part of 5%:
//! `measure::sequential`), and which of them are still open — the cells
//! an adaptive run adds repeats to, most open first.
//!
//! A cell is *open* while it is undecided: neither changed (past the
//! band, its interval clear of 1) nor the same (its interval inside the
//! band, ±5% or the A/A floor where that is wider). The run stops adding
//! repeats when every cell is changed or the same, or at its maximum.
//! An open cell that the maximum repeats would not decide (its variance
//! as now, the degrees of freedom they add, the last look's level:
//! `Significance::repeats_needed`) is not *decidable*: repeats there
//! would be spent without an answer, so the run leaves it undecided and
//! says so. A/A copies are not open cells: they measure the noise the
//! others are judged by. A disturbed or untested cell is open too (a
//! quiet repeat may settle it); a window that never became steady, one
//! too short to judge, or a missed SLA or rate is left as not judgeable:
//! repeats would not change that.

use super::cell::Cell;
use super::{Report, Row, Verdict};
use crate::measure::sequential::{self, WindowNoise};
use crate::plan::{Adaptive, StepId};

/// The look a cell's data reached: the round its latest window came from
/// (the minimum's repeats are the first look), within `1..=looks`.
fn look_of(cell: &Cell, base: &Cell, bounds: Adaptive) -> u32 {
    let last = cell.figures.last_repeat.max(base.figures.last_repeat);
    (last + 1)
        .saturating_sub(bounds.min)
        .clamp(1, bounds.looks())
}

/// The level an adaptive run judges cell `ti` of `row` at: the one the
/// look its data reached spends.
pub(super) fn level_of(row: &Row, ti: usize, base: usize, bounds: Adaptive) -> f64 {
    sequential::level(
        look_of(&row.cells[ti], &row.cells[base], bounds),
        bounds.looks(),
    )
}

/// The level of an adaptive run's last look: the repeats that would
/// decide a cell are counted at it.
pub(super) fn last_level(bounds: Adaptive) -> f64 {
    sequential::level(bounds.looks(), bounds.looks())
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
    /// Whether repeats up to the adaptive run's maximum would decide it
    /// (`Significance::repeats_needed` at most the maximum). Such a cell
    /// is left undecided otherwise; repeats there would be spent without
    /// an answer.
    pub decidable: bool,
}

/// How far, in ln(ratio), a ratio lies from the nearer edge of its band
/// or, past the band, from 1: what its interval must clear.
fn to_clear(rel: f64, edges: [f64; 2]) -> f64 {
    if rel <= edges[0] || rel >= edges[1] {
        return rel.ln().abs();
    }
    edges
        .iter()
        .map(|e| (rel / e).ln().abs())
        .fold(f64::INFINITY, f64::min)
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
                let Some(rel) = c.test.relative else { continue };
                let name = format!(
                    "{} ({} c{})",
                    self.targets[ti].name,
                    row.title(),
                    row.id.clients
                );
                let verdict = c.verdict();
                let (openness, why, decidable) = match verdict {
                    Some(Verdict::Disturbed) => (0.0, format!("{name}: disturbed"), true),
                    Some(Verdict::Untested) => (0.0, format!("{name}: {rel:.2} not tested"), true),
                    Some(_) if c.judgement.load_missed() => continue,
                    Some(Verdict::Undecided) => {
                        let Some(sig) = c.test.significance.as_ref() else {
                            continue;
                        };
                        let Some(i) = sig.interval else { continue };
                        let (lo, hi) = c.band();
                        let half = ((i.hi / i.lo).ln() / 2.0).max(1e-12);
                        let max = bounds.map_or(0, |a| a.max);
                        (
                            to_clear(rel, [lo, hi]) / half,
                            format!(
                                "{name}: {rel:.2} ({:.2}–{:.2}) undecided: neither past {lo:.2}/{hi:.2} with its interval clear of 1 nor inside them",
                                i.lo, i.hi
                            ),
                            sig.repeats_needed.is_some_and(|n| n <= max),
                        )
                    }
                    Some(_) | None => continue,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Figures;

    #[test]
    fn an_interval_must_clear_the_nearer_edge_inside_the_band_and_1_past_it() {
        let band = [0.95, 1.05];
        assert!((to_clear(0.99, band) - (0.99f64 / 0.95).ln()).abs() < 1e-12);
        assert!((to_clear(1.03, band) - (1.05f64 / 1.03).ln()).abs() < 1e-12);
        assert!((to_clear(0.93, band) - 0.93f64.ln().abs()).abs() < 1e-12);
        assert!((to_clear(1.2, band) - 1.2f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn a_cells_look_is_the_round_its_latest_window_came_from() {
        let bounds = Adaptive {
            min: 2,
            max: 6,
            budget_secs: None,
        };
        let at = |last_repeat| Cell {
            figures: Figures {
                last_repeat,
                ..Default::default()
            },
            ..Cell::default()
        };
        assert_eq!(look_of(&at(2), &at(2), bounds), 1);
        assert_eq!(look_of(&at(2), &at(4), bounds), 3);
        assert_eq!(look_of(&at(5), &at(3), bounds), 4);
        assert_eq!(look_of(&at(9), &at(2), bounds), 5);
        assert_eq!(look_of(&at(0), &at(1), bounds), 1);
    }
}
