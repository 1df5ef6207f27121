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

use super::cell::{Cell, Method, Significance};
use super::{Report, Row, TargetMeta, Verdict, FASTER, SLOWER};
use crate::measure::sequential::{self, WindowNoise};
use crate::plan::{Adaptive, StepId};

/// The look a cell's data reached: the round its latest window came from
/// (the minimum's repeats are the first look), within `1..=looks`.
fn look_of(cell: &Cell, base: &Cell, bounds: Adaptive) -> u32 {
    let last = cell.last_repeat.max(base.last_repeat);
    (last + 1)
        .saturating_sub(bounds.min)
        .clamp(1, bounds.looks())
}

/// Tests every compared cell by the sequential rule, each at the level of
/// the look its data reached. The A/A windows of a cell's own copy group
/// and its base's give the variance beside the cell's own repeats.
pub(super) fn test_cells(
    rows: &mut [Row],
    targets: &[TargetMeta],
    base_of: &[usize],
    bounds: Adaptive,
) {
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
            let alpha = sequential::level(look_of(c, base, bounds), bounds.looks());
            if let Some(s) = sequential::test(&c.throughputs, &base.throughputs, aa, alpha) {
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
    /// Whether repeats up to the adaptive run's maximum can change what
    /// the report says of it: not when the ratio lies nearer the edge than
    /// the interval the maximum would leave
    /// (`measure::sequential::half_width_at`: the variance as now, more
    /// repeats and degrees of freedom, the last look's level) and, if it
    /// lies past the edge without significance, nearer 1 too. Such a cell
    /// stays as the report judges it now; repeats there would be spent
    /// without an answer.
    pub decidable: bool,
}

/// How far, in ln(ratio), a ratio lies from the nearer edge of its band.
fn nearest_edge(rel: f64, edges: [f64; 2]) -> f64 {
    edges
        .iter()
        .map(|e| (rel / e).ln().abs())
        .fold(f64::INFINITY, f64::min)
}

/// Whether repeats that leave an interval of half-width `at_max` (in
/// ln(ratio)) could change what the report says of a cell at `rel`: its
/// interval could clear the band's edge, or — when the ratio lies past
/// the edge but is not significant (`unsure`) — clear 1, which turns
/// "not significant" into the change a fixed run with those repeats
/// would call.
fn decidable(rel: f64, edges: [f64; 2], at_max: f64, unsure: bool) -> bool {
    let to_one = if unsure { rel.ln().abs() } else { 0.0 };
    nearest_edge(rel, edges) >= at_max || to_one >= at_max
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
                let verdict = c.verdict();
                let (openness, why, decidable) = match verdict {
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
                        let n = (c.repeats as f64, row.cells[b].repeats as f64);
                        let at_max = match (bounds, sig.df) {
                            (Some(a), Some(df)) => sequential::half_width_at(
                                half,
                                df,
                                n,
                                f64::from(a.max),
                                1.0 - i.level,
                                sequential::level(a.looks(), a.looks()),
                            ),
                            _ => 0.0,
                        };
                        (
                            nearest_edge(rel, edges) / half,
                            format!(
                                "{name}: {rel:.2} ({:.2}–{:.2}) straddles {edge:.2}",
                                i.lo, i.hi
                            ),
                            decidable(rel, edges, at_max, verdict == Some(Verdict::Unsure)),
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

#[cfg(test)]
mod tests {
    use super::*;

    const BAND: [f64; 2] = [SLOWER, FASTER];

    #[test]
    fn a_ratio_past_the_edge_not_yet_significant_is_not_given_up() {
        // 0.93 lies 0.021 from 0.95: six repeats' ±0.04 cannot clear the
        // edge, but can clear 1 (0.073 away), which is what a fixed run of
        // six repeats would call "slower" (the cells the equal split left
        // "not significant" in bench/time_to_verdict.py).
        assert!(decidable(0.93, BAND, 0.04, true));
        // Once significant, only the edge is left to clear.
        assert!(!decidable(0.93, BAND, 0.04, false));
        // A ratio further from 1 than the maximum's interval could ever
        // tell apart stays as judged.
        assert!(!decidable(0.94, BAND, 0.07, true));
        // Inside the band, clearing the edge is the only question.
        assert!(decidable(0.99, BAND, 0.03, false));
        assert!(!decidable(0.97, BAND, 0.03, false));
    }

    #[test]
    fn a_cells_look_is_the_round_its_latest_window_came_from() {
        let bounds = Adaptive {
            min: 2,
            max: 6,
            budget_secs: None,
        };
        let at = |last_repeat| Cell {
            last_repeat,
            ..Cell::default()
        };
        assert_eq!(look_of(&at(2), &at(2), bounds), 1);
        assert_eq!(look_of(&at(2), &at(4), bounds), 3);
        assert_eq!(look_of(&at(5), &at(3), bounds), 4);
        assert_eq!(look_of(&at(9), &at(2), bounds), 5);
        assert_eq!(look_of(&at(0), &at(1), bounds), 1);
    }
}
