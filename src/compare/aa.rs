//! What a run's A/A copies say beyond each row's floor: how far two
//! windows of the same work lie apart, measured on every quiet pair of a
//! copy and its original, so that a comparison of one window a side can
//! be tested at all (see [`within`]).
//!
//! The pairs are pooled over the steps of one copy group (a row has one
//! pair per copy: too few for a variance) and kept per group, never
//! across groups: PostgreSQL's windows say nothing of MariaDB's. A pair
//! never tests itself: an A/A copy's own cell is tested against the other
//! pairs, as a target's would be, which is what the calibration measures.

use super::cell::{Method, Significance};
use super::{Row, TargetMeta};
use crate::measure::within::{self, Between, LogRatio};

/// One quiet A/A pair: its row, the copy, and its log ratio.
struct Pair {
    row: usize,
    copy: usize,
    ratio: LogRatio,
}

/// Every quiet pair of a copy and its original with one window a side.
fn pairs(rows: &[Row], targets: &[TargetMeta]) -> Vec<Pair> {
    let mut out = Vec::new();
    for (ri, row) in rows.iter().enumerate() {
        for (j, t) in targets.iter().enumerate() {
            let Some(o) = t.copy_of else { continue };
            let (c, b) = (&row.cells[j], &row.cells[o]);
            if c.judgement.disturbed.is_some() || b.judgement.disturbed.is_some() {
                continue;
            }
            if let Some(ratio) = within::log_ratio(&c.figures.second_rates, &b.figures.second_rates)
            {
                out.push(Pair {
                    row: ri,
                    copy: j,
                    ratio,
                });
            }
        }
    }
    out
}

/// Fills the significance of every cell with one window on a side (no
/// rank test over repeats) from its seconds and the between-window
/// variance of the A/A pairs of its own copy group and its base's; leaves
/// it empty, untested, where those groups have too few quiet pairs.
pub(super) fn test_single_windows(rows: &mut [Row], targets: &[TargetMeta], base_of: &[usize]) {
    let all = pairs(rows, targets);
    let group_of = |t: usize| targets[t].copy_of.unwrap_or(t);
    for (ri, row) in rows.iter_mut().enumerate() {
        // Tested against the cells as they were, then filled in.
        let mut found = Vec::new();
        for (ti, (cell, &b)) in row.cells.iter().zip(base_of).enumerate() {
            let base = &row.cells[b];
            if b == ti || cell.test.significance.is_some() || cell.test.relative.is_none() {
                continue;
            }
            let groups = [group_of(ti), group_of(b)];
            let null: Vec<LogRatio> = all
                .iter()
                .filter(|p| groups.contains(&group_of(p.copy)))
                .filter(|p| !(p.row == ri && p.copy == ti))
                .map(|p| p.ratio)
                .collect();
            let Some(between) = Between::from_pairs(&null) else {
                continue;
            };
            let Some(w) = within::within_run(
                &cell.figures.second_rates,
                &base.figures.second_rates,
                &between,
            ) else {
                continue;
            };
            found.push((
                ti,
                Significance {
                    method: Method::PerSecond,
                    p_value: w.p_value,
                    interval: w.interval,
                    equivalence: w.equivalence,
                    repeats_needed: None,
                    aa_pairs: Some(between.pairs),
                    df: None,
                    rounds: None,
                },
            ));
        }
        for (ti, s) in found {
            row.cells[ti].test.significance = Some(s);
        }
    }
}
