//! One run session: a results directory held from the first step to the
//! last round. The first pass (or `--resume`), `--confirm`'s rounds and an
//! adaptive run's rounds are passes of one session: they hear one list of
//! sinks, assembled here and nowhere else (the step files, the profiles,
//! the record, then the caller's), and `Ended` fires once, when the
//! session ends — so a sink that acts on the run's end (`run --history`)
//! sees every round's results, and a confirmation's profiles are kept as a
//! run's are. Regressions: `run --history` with `repeats = "auto"` stored
//! only the minimum repeats; a confirmation round's inline profiles were
//! emitted and dropped.

use std::path::{Path, PathBuf};

use anyhow::bail;

use super::confirm::{self, ConfirmOptions};
use super::events::{Event, ProfileFiles, Sink, Sinks, StepFiles, Tone};
use super::record::RunRecord;
use super::sequence::{self, Job, Keeping, Ran};
use super::{host_place, interrupted, prepare_out_dir, RunEnd, RunOptions};
use crate::db::{Dirs, Secrets};
use crate::measure::units::human_secs;
use crate::plan::schedule::Schedule;
use crate::results::{self, RunStatus};

/// A results directory taken for a run and its rounds.
pub struct Session<'a> {
    out: PathBuf,
    /// Held for the session's length: no other relbench writes here.
    _lock: results::RunLock,
    files: StepFiles,
    profiles: ProfileFiles,
    record: RunRecord,
    more: Vec<&'a mut dyn Sink>,
    ended: bool,
}

impl<'a> Session<'a> {
    /// Takes `opts.out` for a new run, or for `--resume` of the run in it;
    /// `more` hear every event after the step files and the record.
    pub fn start(opts: &RunOptions, more: Vec<&'a mut dyn Sink>) -> anyhow::Result<Self> {
        let out = &opts.out;
        let lock = results::lock_run(out)?;
        let mut info = prepare_out_dir(opts)?;
        if opts.record.data_dir.is_some() {
            info.data_dir = opts.record.data_dir.clone();
        }
        let host = if opts.resume {
            host_place(&mut info, &opts.record.host, opts.new_host, out)?
        } else {
            None
        };
        let record = match RunRecord::begin(out.clone(), info, RunStatus::Failed) {
            Err(e) if !opts.resume && crate::util::disk_full(&e) => {
                // Nothing measured, nothing to resume: the same command again.
                bail!(
                    "writing {}: the disk is full before anything was measured; free space and run the same \
                     command again (there is nothing to resume yet)",
                    out.join(results::RUN_FILE).display()
                );
            }
            r => r?,
        };
        Ok(Self::with(out, lock, host, record, more))
    }

    /// Takes the finished run in `out` again for more rounds
    /// (`--confirm`): its record keeps the targets' facts read when it
    /// ran, and an error leaves it complete (only the rounds stopped).
    pub fn reopen(out: &Path, new_host: bool, more: Vec<&'a mut dyn Sink>) -> anyhow::Result<Self> {
        let lock = results::lock_run(out)?;
        let mut info = results::read_run_info(out)?;
        let host = host_place(&mut info, &crate::metrics::host::facts(), new_host, out)?;
        let mut record = RunRecord::begin(out.to_path_buf(), info, RunStatus::Complete)?;
        record.takes_targets = false;
        Ok(Self::with(out, lock, host, record, more))
    }

    fn with(
        out: &Path,
        lock: results::RunLock,
        host: Option<u32>,
        record: RunRecord,
        more: Vec<&'a mut dyn Sink>,
    ) -> Self {
        Session {
            out: out.to_path_buf(),
            _lock: lock,
            files: StepFiles {
                out: out.to_path_buf(),
                host,
            },
            profiles: ProfileFiles {
                out: out.to_path_buf(),
            },
            record,
            more,
            ended: false,
        }
    }

    /// A line for whoever watches the session (the terminal, `--events`).
    pub fn say(&mut self, tone: Tone, msg: &str) {
        self.sinks().tell(&Event::Said(tone, msg));
    }

    /// Every sink of the session, in the order each event reaches them:
    /// the step files first, so the record never names a result that is
    /// not on disk.
    fn sinks(&mut self) -> Sinks<'_> {
        let mut all: Vec<&mut dyn Sink> =
            vec![&mut self.files, &mut self.profiles, &mut self.record];
        all.extend(self.more.iter_mut().map(|s| &mut **s as &mut dyn Sink));
        Sinks::new(all)
    }

    /// The first pass: every execution of the plan that has no successful
    /// result yet.
    pub fn run(&mut self, opts: &RunOptions) -> anyhow::Result<RunEnd> {
        let schedule = &opts.schedule;
        let jobs = first_pass(schedule, &self.out);
        let remaining = jobs.iter().filter(|j| !j.done).count();
        let info = &self.record.info;
        let mut said = vec![format!(
            "relbench: {} — {} target{}, {} step runs{}, about {} plus loads; results in {}",
            info.plan_source,
            schedule.targets.len(),
            if schedule.targets.len() == 1 { "" } else { "s" },
            jobs.len(),
            if remaining < jobs.len() {
                format!(" ({remaining} left to run)")
            } else {
                String::new()
            },
            human_secs(schedule.estimated_secs),
            self.out.display()
        )];
        said.extend(
            schedule
                .skipped
                .iter()
                .map(|why| format!("relbench: {why}")),
        );
        if !info.plan.seed_fixed {
            said.push(format!(
                "relbench: seed {} (drawn for this run and recorded; `seed = {}` in the plan repeats it)",
                info.plan.seed, info.plan.seed
            ));
        }
        let mut sinks = self.sinks();
        for line in &said {
            sinks.line(line);
        }
        drop(sinks);
        // A run records its failures as results (the report shows the
        // holes, `--resume` runs them) and keeps a target's data on Ctrl-C.
        let keeping = Keeping {
            failures: true,
            data_on_interrupt: true,
            note: None,
        };
        let ran = self.pass(schedule, &opts.plan_dir, &opts.secrets, &jobs, keeping)?;
        Ok(ran.end)
    }

    /// Rounds of more repeats of the steps `opts.needs` names; returns how
    /// the rounds ended and how many results they added.
    pub fn confirm(&mut self, opts: &ConfirmOptions) -> anyhow::Result<(RunEnd, usize)> {
        // The targets' facts are the run's, read when it ran.
        self.record.takes_targets = false;
        let plan_dir = PathBuf::from(&self.record.info.plan_dir);
        let jobs = confirm::jobs(opts);
        let keeping = confirm::keeping(opts.adaptive);
        let ran = self.pass(&opts.schedule, &plan_dir, &opts.secrets, &jobs, keeping)?;
        Ok((ran.end, ran.written))
    }

    /// Runs one pass's jobs through the one sequencer. An error after
    /// Ctrl-C is the interruption's doing (a statement or a connection cut
    /// short as the run stopped): the pass is interrupted, resumable, not
    /// failed. Any other error ends the session as failed, so that `report`
    /// and a later `--resume` know.
    fn pass(
        &mut self,
        schedule: &Schedule,
        plan_dir: &Path,
        secrets: &Secrets,
        jobs: &[Job],
        keeping: Keeping,
    ) -> anyhow::Result<Ran> {
        let dirs = Dirs {
            plan_dir: plan_dir.to_path_buf(),
            out: self.out.clone(),
            data: self.record.info.data_dir.clone(),
            secrets: secrets.clone(),
        };
        let mut sinks = self.sinks();
        let ran = sequence::run(schedule, &dirs, jobs, keeping, &mut sinks);
        let ran = match ran {
            Err(e) if interrupted() => {
                sinks.warn(&format!("stopped by Ctrl-C while: {e:#}"));
                Ran {
                    end: RunEnd::Interrupted,
                    written: 0,
                }
            }
            Err(e) => {
                drop(sinks);
                self.fail();
                return Err(e);
            }
            Ok(ran) => ran,
        };
        if ran.end == RunEnd::Interrupted {
            sinks.warn("interrupted: the step in flight was dropped; every finished step is kept");
        }
        // An error a sink gave on a line or a tick stops the run here.
        sinks.emit_pending()?;
        Ok(ran)
    }

    fn fail(&mut self) {
        if !self.ended {
            self.ended = true;
            let _ = self.sinks().emit(&Event::Ended(RunStatus::Failed));
        }
    }

    /// Ends the session the way its last pass ended: `Ended` goes out,
    /// once.
    pub fn end(mut self, end: &RunEnd) -> anyhow::Result<()> {
        self.ended = true;
        if *end == RunEnd::Interrupted {
            return self.sinks().emit(&Event::Ended(RunStatus::Interrupted));
        }
        // Embedded targets kept their files here; remove the folder once empty.
        let _ = std::fs::remove_dir(self.out.join("data"));
        self.sinks().emit(&Event::Ended(RunStatus::Complete))
    }
}

impl Drop for Session<'_> {
    /// A session left by an error between passes (an adaptive round that
    /// could not be chosen) ends as failed, not "running".
    fn drop(&mut self) {
        self.fail();
    }
}

/// The first pass's jobs: a step is done when it has a successful result;
/// a failed one, one that never ran, or a damaged file runs (again) on
/// `--resume`, once. Each file is read once, here: what this run writes is
/// not asked again.
fn first_pass(schedule: &Schedule, out: &Path) -> Vec<Job> {
    schedule
        .executions
        .iter()
        .map(|e| {
            // The profiled repeat's executions are done when their
            // profile is on disk; their results are not kept.
            let done = if e.measured {
                let file = out.join(results::step_file(&e.id));
                file.exists() && results::read_step(&file).is_ok_and(|r| r.failed.is_none())
            } else {
                out.join(results::profiles::record_file(&e.id)).exists()
            };
            Job {
                exec: e.clone(),
                keep: e.measured,
                done,
                announce: None,
            }
        })
        .collect()
}
