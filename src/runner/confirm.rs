//! `relbench run --confirm DIR`: more repeats of the steps a report could
//! not judge (disturbed windows, or undecided cells: neither a change
//! nor the same shown), added to the same results so the report tightens.
//!
//! A step runs on the data the sequence left before it, so each target
//! starts afresh and replays the steps before the last one to confirm
//! that change the data (loads, writes, settles); read-only steps that are
//! not asked for are skipped, since they leave the data as they found it.
//! Replayed steps are not recorded. Targets are interleaved round by
//! round, as a run interleaves repeats. Which steps need it is the
//! comparison's answer (the command line asks `compare`); this file only
//! chooses the jobs, and the one sequencer runs them as a run would
//! (hooks, health checks, restarts and all).

use super::sequence::{Job, Keeping};
use crate::plan::schedule::{Execution, Schedule, StepId};

/// One step of one target to repeat: the executions of every repeat
/// of it share its target and step identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// The plan's target, as its executions' identities name it.
    pub target: String,
    pub at: StepId,
    /// How many more repeats it needs.
    pub rounds: u32,
}

pub struct ConfirmOptions {
    /// The run's plan compiled again from its record.
    pub schedule: Schedule,
    /// URL targets' passwords, taken from the environment.
    pub secrets: crate::db::Secrets,
    pub needs: Vec<Need>,
    /// The first repeat number the new results take (one past the run's
    /// highest).
    pub first_repeat: u32,
    /// An adaptive run's round (`repeats = "auto"`), not `--confirm`:
    /// its results are noted as such.
    pub adaptive: bool,
}

/// The jobs of the confirmation rounds: per round and target, the wanted
/// executions kept and the ones before them that change the data replayed.
pub(super) fn jobs(opts: &ConfirmOptions) -> Vec<Job> {
    let schedule = &opts.schedule;
    let rounds = opts.needs.iter().map(|n| n.rounds).max().unwrap_or(0);
    let mut out = Vec::new();
    for round in 0..rounds {
        let repeat = opts.first_repeat + round;
        for ti in schedule.round_order(repeat) {
            let sequence: Vec<_> = schedule.of(ti, 1).collect();
            let wanted = |e: &Execution| {
                opts.needs
                    .iter()
                    .any(|n| n.target == e.id.target && n.at == e.id.at && round < n.rounds)
            };
            let Some(last) = sequence
                .iter()
                .filter(|e| wanted(e))
                .map(|e| e.id.seq)
                .max()
            else {
                continue;
            };
            let first = out.len();
            for e in sequence.iter().filter(|e| e.id.seq <= last) {
                let keep = wanted(e);
                if keep || e.changes_data {
                    out.push(Job {
                        exec: schedule.as_repeat(e, repeat),
                        keep,
                        done: false,
                        announce: None,
                    });
                }
            }
            let name = &schedule.targets[ti].name;
            out[first].announce = Some(banner(name, &out[first..]));
        }
    }
    out
}

/// A confirmation keeps only what it measured (a target that does not
/// start, or steps after a failure, are said and left for the next
/// round), notes each result as a confirmation's, and removes the data it
/// made for itself when it is stopped.
const KEEPING: Keeping = Keeping {
    failures: false,
    data_on_interrupt: false,
    note: Some((
        "confirm",
        "a confirmation repeat (relbench run --confirm): the target started afresh and replayed \
         the steps before this one that change the data",
    )),
};

/// An adaptive run's round keeps as a confirmation does, and says so.
const ADAPTIVE_KEEPING: Keeping = Keeping {
    note: Some((
        "adaptive",
        "an adaptive repeat (repeats = \"auto\"): added because the cell's verdict was still open; \
         the target started afresh and replayed the steps before this one that change the data",
    )),
    ..KEEPING
};

/// What a confirmation's round keeps, or an adaptive run's.
pub(super) fn keeping(adaptive: bool) -> Keeping {
    if adaptive {
        ADAPTIVE_KEEPING
    } else {
        KEEPING
    }
}

/// `[target] confirming (repeat 3): scan c4 → (insert c4, replayed)`.
fn banner(target: &str, jobs: &[Job]) -> String {
    let first_left = &jobs.iter().find(|j| !j.done).expect("a job is left").exec;
    format!(
        "[{target}] confirming (repeat {}): {}",
        first_left.id.repeat,
        jobs.iter()
            .map(|j| {
                let s = format!("{} c{}", j.exec.id.at.step.label(), j.exec.id.at.clients);
                if j.keep {
                    s
                } else {
                    format!("({s}, replayed)")
                }
            })
            .collect::<Vec<_>>()
            .join(" → ")
    )
}
