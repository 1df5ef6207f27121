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

use super::events::{Event, Sinks, StepFiles};
use super::record::RunRecord;
use super::sequence::{self, Job, Keeping};
use super::{finish, Progress, RunEnd};
use crate::plan::schedule::{Execution, Schedule, StepId};
use crate::results;

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
    pub out: std::path::PathBuf,
    /// The run's plan compiled again from its record.
    pub schedule: Schedule,
    /// URL targets' passwords, taken from the environment.
    pub secrets: crate::db::Secrets,
    pub needs: Vec<Need>,
    /// The first repeat number the new results take (one past the run's
    /// highest).
    pub first_repeat: u32,
    /// Go on on a machine the run was not measured on, recorded as a
    /// host of its own (`--new-host`).
    pub new_host: bool,
    /// An adaptive run's round (`repeats = "auto"`), not `--confirm`:
    /// its results are noted as such.
    pub adaptive: bool,
}

/// The jobs of the confirmation rounds: per round and target, the wanted
/// executions kept and the ones before them that change the data replayed.
fn jobs(opts: &ConfirmOptions) -> Vec<Job> {
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

/// Runs the confirmation rounds; returns how many results it added.
pub fn confirm(opts: &ConfirmOptions, ui: &mut Progress) -> anyhow::Result<(RunEnd, usize)> {
    let out = &opts.out;
    let _lock = results::lock_run(out)?;
    let mut info = results::read_run_info(out)?;
    let host = super::host_place(
        &mut info,
        &crate::metrics::host::facts(),
        opts.new_host,
        out,
    )?;
    let plan_dir = std::path::PathBuf::from(&info.plan_dir);
    // The run itself was complete, and stays so if the confirmation
    // stops: only the confirmation stopped (what it added is kept).
    let mut record = RunRecord::begin(out.clone(), info, results::RunStatus::Complete)?;
    // The targets' facts are the run's, read when it ran.
    record.takes_targets = false;
    let jobs = jobs(opts);
    let dirs = crate::db::Dirs {
        plan_dir,
        out: out.clone(),
        data: record.info.data_dir.clone(),
        secrets: opts.secrets.clone(),
    };
    let mut files = StepFiles {
        out: out.clone(),
        host,
    };
    let mut sinks = Sinks::new(vec![&mut files, &mut record]);
    let keeping = if opts.adaptive {
        ADAPTIVE_KEEPING
    } else {
        KEEPING
    };
    let ran = sequence::run(&opts.schedule, &dirs, &jobs, keeping, &mut sinks, ui);
    let ran = match ran {
        Ok(ran) => ran,
        Err(e) => {
            let _ = sinks.emit(&Event::Ended(results::RunStatus::Failed));
            return Err(e);
        }
    };
    Ok((finish(&mut sinks, out, ui, ran.end)?, ran.written))
}
