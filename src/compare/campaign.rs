//! A campaign's timeline: every step of the sequence in run order, across
//! phases (with where each begins and the server settings it brought),
//! the intervals of long steps, and the timed maintenance steps and
//! restarts, each target's figure beside its base's, and the database's
//! allocated and apparent size after each. Built only when the plan has
//! phases, intervals or maintenance steps: a plain sequence reads better
//! by group.

use serde::Serialize;

use super::{median, Verdict};
use crate::measure::size::DbSize;
use crate::plan::{Maint, StepId, StepKind};
use crate::results::{StepResult, Unit};

#[derive(Debug, Clone, Serialize)]
pub struct TimelineRow {
    pub seq: usize,
    /// The step at its client count, in its phase.
    #[serde(flatten, serialize_with = "super::step_fields")]
    pub id: StepId,
    pub title: String,
    /// Set on a phase's first row: the phase and the server settings it
    /// brought, in words.
    pub phase_begins: Option<String>,
    /// A step whose figure is its duration (maintenance, restart, settle),
    /// not a throughput.
    pub timed: bool,
    pub unit: Unit,
    /// One per target, in `Report::targets` order.
    pub cells: Vec<TimelineCell>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct TimelineCell {
    /// Median over the repeats that succeeded.
    pub throughput: Option<f64>,
    pub secs: Option<f64>,
    /// Throughput ÷ the base's; for a timed step, seconds ÷ the base's.
    pub relative: Option<f64>,
    /// After the step, in the first repeat that succeeded.
    pub size: Option<DbSize>,
    /// Of `size`: the tables and indexes, allocated and apparent, and the
    /// logs' allocated bytes.
    pub data_allocated: Option<u64>,
    pub data_apparent: Option<u64>,
    pub logs_allocated: Option<u64>,
    /// The data's (all but the logs) allocated bytes ÷ the base's: what
    /// compression saves; the logs are sized by the configuration.
    pub data_allocated_relative: Option<f64>,
    /// The data's apparent bytes ÷ the base's.
    pub data_apparent_relative: Option<f64>,
    /// The first failure's message, when no repeat succeeded.
    pub failed: Option<String>,
}

/// Whether a run's steps make a campaign worth a timeline.
pub fn is_campaign(steps: &[(usize, StepResult)]) -> bool {
    steps.iter().any(|(_, s)| {
        s.id.at.phase.is_some()
            || s.id.at.step.interval.is_some()
            || s.id.at.step.maintenance().is_some()
    })
}

/// The timeline of `steps` (target index, result), with each target
/// against `base_of[target]`.
pub fn timeline(
    targets: usize,
    base_of: &[usize],
    steps: &[(usize, StepResult)],
) -> Vec<TimelineRow> {
    if !is_campaign(steps) {
        return Vec::new();
    }
    let mut rows: Vec<TimelineRow> = Vec::new();
    for (_, s) in steps {
        if rows.iter().any(|r| r.seq == s.id.seq && r.id == s.id.at) {
            continue;
        }
        rows.push(TimelineRow {
            seq: s.id.seq,
            id: s.id.at.clone(),
            title: s.id.at.step.title(),
            phase_begins: None,
            timed: matches!(
                s.id.at.step.kind,
                StepKind::Maintenance(_) | StepKind::Settle
            ),
            unit: s.unit,
            cells: vec![TimelineCell::default(); targets],
        });
    }
    rows.sort_by_key(|r| (r.seq, r.id.clients));
    let mut last_phase: Option<String> = None;
    for r in &mut rows {
        if r.id.phase.is_some() && r.id.phase != last_phase {
            let settings = steps
                .iter()
                .find(|(_, s)| s.id.seq == r.seq)
                .and_then(|(_, s)| s.server_settings.clone());
            let restarts = r.id.step.maintenance() == Some(Maint::Restart);
            let p = r.id.phase.clone().unwrap_or_default();
            r.phase_begins = Some(match settings {
                Some(s) if restarts => format!("{p} (server restarted: {s})"),
                Some(s) => format!("{p} (server as it runs: {s})"),
                None if restarts => {
                    format!("{p} (server restarted with the target's own settings)")
                }
                None => p,
            });
            last_phase = r.id.phase.clone();
        }
        for (ti, cell) in r.cells.iter_mut().enumerate() {
            let mine: Vec<&StepResult> = steps
                .iter()
                .filter(|(t, s)| *t == ti && s.id.seq == r.seq && s.id.at == r.id)
                .map(|(_, s)| s)
                .collect();
            let mut ok: Vec<&StepResult> = mine
                .iter()
                .copied()
                .filter(|s| s.failed.is_none())
                .collect();
            ok.sort_by_key(|s| s.id.repeat);
            if ok.is_empty() {
                cell.failed = mine.iter().find_map(|s| s.failed.clone());
                continue;
            }
            if !r.timed {
                cell.throughput = median(&mut ok.iter().map(|s| s.throughput).collect::<Vec<_>>());
            }
            cell.secs = median(&mut ok.iter().map(|s| s.secs).collect::<Vec<_>>());
            cell.size = ok.iter().find_map(|s| s.metrics.db_size_after);
            cell.data_allocated = cell.size.map(|s| s.data_allocated());
            cell.data_apparent = cell.size.map(|s| s.data_apparent());
            cell.logs_allocated = cell.size.map(|s| s.logs_allocated);
        }
        let plain = r.cells.clone();
        for (ti, cell) in r.cells.iter_mut().enumerate() {
            let b = &plain[base_of[ti]];
            let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                _ => None,
            };
            cell.relative = if r.timed {
                ratio(cell.secs, b.secs)
            } else {
                ratio(cell.throughput, b.throughput)
            };
            let size =
                |c: &TimelineCell, f: fn(&DbSize) -> u64| c.size.as_ref().map(|s| f(s) as f64);
            cell.data_allocated_relative = ratio(
                size(cell, DbSize::data_allocated),
                size(b, DbSize::data_allocated),
            );
            cell.data_apparent_relative = ratio(
                size(cell, DbSize::data_apparent),
                size(b, DbSize::data_apparent),
            );
        }
    }
    rows
}

impl TimelineCell {
    /// Against the base: throughput above 1 is faster; for a timed step
    /// (`timed`), a duration that grew is the regression.
    pub fn verdict(&self, timed: bool) -> Option<Verdict> {
        self.relative
            .map(|v| super::verdict(if timed { 1.0 / v } else { v }))
    }
}
