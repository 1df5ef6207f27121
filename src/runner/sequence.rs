//! The one sequencer: a run, a resumed run and a confirmation all hand it
//! a list of jobs (executions, each kept or replayed, some already done)
//! and it runs them target by target in the same way — the server opened
//! under the settings of the first step left, the data removed before a
//! sequence that creates it, the hooks, the plan's own workloads' set-up,
//! a wait for a recovering server, the restart step, the health check
//! after a failure, Ctrl-C. Only what it writes differs: a run writes
//! every kept result, failures included, and the steps a dead server
//! leaves as "not run"; a confirmation writes only the kept results it
//! measured, each with a note.

use anyhow::bail;

use super::barrier::{Barrier, BarrierError};
use super::events::{Event, Sinks};
use super::step::{blank_result, measure_step, StepCtx};
use super::{
    hooks, interrupted, probe_of, remove_earlier_data, restart, set_up_workload, target_record,
    wait_serving, RunEnd,
};
use crate::db::spec::TargetSpec;
use crate::db::{self, Dirs, Target};
use crate::plan::schedule::{ClientShare, Execution, Schedule};
use crate::results::{self, TargetRecord, STATEMENTS};
use crate::workload::maint::Maint;
use crate::workload::Statements;
use crate::Interrupted;

/// One execution to run.
pub(super) struct Job {
    pub exec: Execution,
    /// Its result is recorded; a replayed job only puts the data in the
    /// state the kept one after it needs.
    pub keep: bool,
    /// It has a successful result already (`--resume`): not run again,
    /// unless the data it made is gone.
    pub done: bool,
    /// Said as its target's group begins (a confirmation's round: what it
    /// keeps and what it replays).
    pub announce: Option<String>,
}

/// What the caller keeps of what happens, decided where the jobs are
/// made (a run's, a confirmation's): the loop only follows it.
#[derive(Clone, Copy)]
pub(super) struct Keeping {
    /// Failures are results: a target whose server does not start, and
    /// the steps a dead server leaves, are recorded as failed (a run's,
    /// so the report shows the hole and `--resume` runs it). Otherwise
    /// only what was measured is kept, and the rest is said.
    pub failures: bool,
    /// A target's data stays on Ctrl-C (a run's, for `--resume`);
    /// otherwise it was made for this alone and goes.
    pub data_on_interrupt: bool,
    /// A note every kept result carries.
    pub note: Option<(&'static str, &'static str)>,
}

/// What the loop did.
pub(super) struct Ran {
    pub end: RunEnd,
    /// Results written.
    pub written: usize,
}

/// Runs the jobs, grouped by target and repeat in the order given.
pub(super) fn run(
    schedule: &Schedule,
    dirs: &Dirs,
    jobs: &[Job],
    keeping: Keeping,
    sinks: &mut Sinks,
) -> anyhow::Result<Ran> {
    let mut run = Loop {
        schedule,
        dirs,
        keeping,
        sinks,
        tally: Tally::default(),
    };
    for group in
        jobs.chunk_by(|a, b| a.exec.target == b.exec.target && a.exec.id.repeat == b.exec.id.repeat)
    {
        if group.iter().all(|j| j.done) {
            continue;
        }
        if run.group(group)? == Flow::Interrupted {
            return Ok(Ran {
                end: RunEnd::Interrupted,
                written: run.tally.written,
            });
        }
    }
    let t = run.tally;
    Ok(Ran {
        end: RunEnd::Complete {
            failed_steps: t.failed_steps,
            not_run: t.not_run,
            not_started: t.not_started,
        },
        written: t.written,
    })
}

/// What the loop has done so far, for the run's end.
#[derive(Default)]
struct Tally {
    failed_steps: usize,
    not_run: usize,
    not_started: Vec<String>,
    written: usize,
    /// Seconds the windows measured again have taken, against the
    /// plan's `max_extra`.
    spent: f64,
}

/// Whether the loop goes on after a group or a job.
#[derive(PartialEq, Eq)]
enum Flow {
    On,
    Interrupted,
}

/// The loop's surroundings, the same for every group.
struct Loop<'a, 's> {
    schedule: &'a Schedule,
    dirs: &'a Dirs,
    keeping: Keeping,
    sinks: &'a mut Sinks<'s>,
    tally: Tally,
}

/// One group's target as it runs: its server, the other client shares,
/// what the group has set up, and why the rest of it cannot run.
struct Group<'a> {
    target: &'a TargetSpec,
    driver: Box<dyn Target>,
    barrier: Option<Barrier>,
    share: Option<ClientShare>,
    /// This process runs the group's loads, maintenance and hooks (no
    /// other shares, or the first of them).
    leads: bool,
    /// The target's data is made again before the steps left.
    reload: bool,
    /// The plan's own workloads set up, once per target and repeat.
    set_up: Vec<String>,
    /// Why the group's later steps cannot run (its server died).
    gone: Option<String>,
}

impl Loop<'_, '_> {
    /// Runs one target's jobs of one repeat.
    fn group(&mut self, jobs: &[Job]) -> anyhow::Result<Flow> {
        let target = &self.schedule.targets[jobs[0].exec.target];
        let first_left = &jobs.iter().find(|j| !j.done).expect("a job is left").exec;
        if let Some(a) = &jobs[0].announce {
            self.sinks.line(a);
        }
        let Some(driver) = self.open(target, first_left)? else {
            return Ok(Flow::On);
        };
        // The other client shares' processes, met in the target database.
        let share = self.schedule.rendezvous.as_ref().map(|rv| rv.share);
        let leads = first_left.leads();
        let barrier = match &self.schedule.rendezvous {
            Some(rv) => Some(Barrier::open(driver.as_ref(), rv)?),
            None => None,
        };
        let mut g = Group {
            target,
            driver,
            barrier,
            share,
            leads,
            reload: false,
            set_up: Vec::new(),
            gone: None,
        };
        g.reload = self.prepare_data(&g, jobs)?;
        let mut record = target_record(target, g.driver.as_ref(), &probe_of(g.driver.as_ref()))?;
        record_statements(&mut record, jobs);
        self.sinks.emit(&Event::TargetOpened(&record))?;
        for job in jobs {
            if self.job(&mut g, job)? == Flow::Interrupted {
                return Ok(interrupted_here(
                    g.driver,
                    self.keeping,
                    self.schedule.loads,
                ));
            }
        }
        // No share's cleanup takes the tables from under another's last
        // step.
        if let (Some(b), Some(last)) = (&g.barrier, jobs.last()) {
            let end = format!("{}/r{}:end", target.name, last.exec.id.repeat);
            match b.meet(&end, false).and_then(|_| b.leave(&end)) {
                Ok(true) => self.sinks.line(&format!(
                    "[{}] every client share is done: the barrier's rows are deleted from relbench_barrier \
                     in the target database (the empty table stays; drop it when no study runs)",
                    target.name
                )),
                Ok(false) => {}
                Err(why) => self.sinks.warn(&format!(
                    "[{}] {why}; the barrier's rows stay in relbench_barrier in the target database (a share \
                     that comes late fails on them): once every share has stopped, delete them with \
                     DELETE FROM relbench_barrier WHERE barrier = '{}'",
                    target.name,
                    crate::util::printable(b.id(), 64)
                )),
            }
        }
        // The next load starts from nothing, so the data is not needed;
        // a managed server is stopped here.
        g.driver.cleanup(self.schedule.loads)?;
        Ok(Flow::On)
    }

    /// The target opened under the settings of its first step left (a
    /// run resumed in a later phase starts the server under that phase's
    /// settings), and a server by URL reached; `None` when it could not
    /// start and the loop goes on without it.
    fn open(
        &mut self,
        target: &TargetSpec,
        first_left: &Execution,
    ) -> anyhow::Result<Option<Box<dyn Target>>> {
        let sinks = &mut *self.sinks;
        let driver = match db::open(&first_left.settings, self.dirs, &mut |line| {
            sinks.line(line)
        }) {
            Ok(d) => d,
            Err(err) if !self.keeping.failures => {
                sinks.warn(&format!(
                    "[{}] could not start, nothing confirmed for it this round: {err:#}",
                    target.name
                ));
                return Ok(None);
            }
            Err(err) if target.engine.is_server() => {
                // The server would not start: record it against the
                // target's first step left and go on with the others.
                let mut r = blank_result(first_left);
                r.failed = Some(format!("{err:#}"));
                sinks.warn(&format!(
                    "[{}] FAILED to start (no step of it ran): {err:#}",
                    target.name
                ));
                sinks.emit(&Event::Finished(&r))?;
                if !self.tally.not_started.contains(&target.name) {
                    self.tally.not_started.push(target.name.clone());
                }
                return Ok(None);
            }
            Err(err) => return Err(err),
        };
        // A server by URL: reached before anything asks it for tables, so
        // that one that is down, or refuses relbench, says so.
        if target.engine.is_server() {
            if let Err(e) = driver.connect() {
                bail!(
                    "target \"{}\": cannot connect: {e}; check that the server runs and that its URL, user and \
                     password are right, then run again (`--resume` keeps what was measured)",
                    target.name
                );
            }
        }
        Ok(Some(driver))
    }

    /// Checks the tables the group runs on, and removes the data of an
    /// earlier run before a group that makes it; whether the data is made
    /// again (a resumed target whose data is gone).
    fn prepare_data(&mut self, g: &Group, jobs: &[Job]) -> anyhow::Result<bool> {
        let (target, driver) = (g.target, g.driver.as_ref());
        let started = jobs.iter().any(|j| j.done);
        let loads = self.schedule.loads;
        // A finished step that dropped or emptied the tables left no
        // data on purpose.
        let dropped = jobs
            .iter()
            .any(|j| j.done && j.exec.maintenance().is_some_and(|m| !m.keeps_rows()));
        let has_data = self
            .schedule
            .needs_table
            .as_deref()
            .map_or(true, |t| driver.has_data(t));
        if !loads && !has_data && !dropped {
            bail!(
                "target \"{}\": the plan has no step that creates the tables (\"load\"), so it runs on \
                 tables that exist already, but {} is not there; put \"load\" first in `steps` (without a plan: pass --load)",
                target.name,
                self.schedule.needs_table.as_deref().unwrap_or_default()
            );
        }
        // A resumed target whose data is gone (its server died, or its
        // start failed and was cleaned up) is made again: the step that
        // creates the tables runs again, and its result says why.
        let reload = loads && started && !has_data && !dropped;
        if reload {
            self.sinks.warn(&format!(
                "[{}] the data the earlier steps ran on is gone: creating it again before the steps left",
                target.name
            ));
        }
        if loads && (!started || reload) && g.leads {
            remove_earlier_data(driver, target)?;
        }
        Ok(reload)
    }

    /// Runs one job of a group: its hooks, set-up and measurement, and
    /// hands its result to the sinks when it is kept.
    fn job(&mut self, g: &mut Group, job: &Job) -> anyhow::Result<Flow> {
        let e = &job.exec;
        let again = g.reload && e.creates_tables;
        if job.done && !again {
            return Ok(Flow::On);
        }
        if let Some(why) = &g.gone {
            if self.keeping.failures && job.keep {
                // Not run: said in its result, so that the report shows
                // the hole and --resume runs it.
                self.sinks.warn(&format!(
                    "[{}] skipping {}: {why}",
                    g.target.name,
                    e.id.at.step.label()
                ));
                let mut r = blank_result(e);
                r.failed = Some(format!("not run: {why}"));
                self.sinks.emit(&Event::Finished(&r))?;
                self.tally.not_run += 1;
            }
            return Ok(Flow::On);
        }
        if g.target.engine.is_server() && e.maintenance() != Some(Maint::Restart) {
            wait_serving(g.driver.as_ref(), self.sinks, &g.target.name);
        }
        if self.left_to_the_leader(g, e)? {
            return Ok(Flow::On);
        }
        let mut result = match self.measure(g, e) {
            Ok(r) => r,
            Err(err) if err.is::<Interrupted>() || interrupted() => return Ok(Flow::Interrupted),
            Err(err) => return Err(err),
        };
        if interrupted() {
            return Ok(Flow::Interrupted);
        }
        // A profile goes out whether or not the result is kept: the
        // profiled repeat runs for nothing else.
        if let Some(p) = result.profile.take() {
            self.sinks.emit(&Event::Profiled(&e.id, &p))?;
        }
        if again {
            result.notes.insert(
                "reloaded".into(),
                "ran again on --resume: the data the earlier load made was gone".into(),
            );
        }
        if result.failed.is_none() {
            let after = hooks::run(
                g.driver.as_ref(),
                e,
                &e.after,
                "after",
                &self.dirs.out,
                self.sinks,
            )?;
            result.notes.extend(after.notes);
            result.failed = after.failed;
        }
        if result.failed.is_some() {
            self.tally.failed_steps += usize::from(job.keep);
            g.gone = self.why_the_rest_cannot_run(g, job, &mut result);
        }
        if !job.keep {
            return Ok(Flow::On);
        }
        if let Some((key, note)) = self.keeping.note {
            result.notes.insert(key.into(), note.into());
        }
        self.sinks.emit(&Event::Finished(&result))?;
        self.tally.written += 1;
        Ok(Flow::On)
    }

    /// With other client shares: meets them before the step (every share
    /// has finished the step before; only the leading share creates,
    /// loads, maintains and runs hooks). Whether this share's part of the
    /// step ends here (the meeting failed, or the step is the leader's).
    fn left_to_the_leader(&mut self, g: &Group, e: &Execution) -> anyhow::Result<bool> {
        let (Some(b), Some(share)) = (&g.barrier, g.share) else {
            return Ok(false);
        };
        let met = b.meet(&format!("{}:begin", e.id), false);
        // Ctrl-C while waiting ends the run as interrupted, not as a
        // failed step of a complete run.
        if matches!(met, Err(BarrierError::Interrupted)) || (met.is_err() && interrupted()) {
            bail!(Interrupted);
        }
        if met.is_ok() && !e.leader_only() {
            return Ok(false);
        }
        let mut r = blank_result(e);
        r.failed = met.err().map(|e| e.to_string());
        r.client_share = Some(results::ShareStep {
            by_leader: r.failed.is_none(),
            ..results::ShareStep::new(share, e.id.at.clients)
        });
        self.tally.failed_steps += usize::from(r.failed.is_some());
        self.sinks.emit(&Event::Finished(&r))?;
        self.tally.written += 1;
        Ok(true)
    }

    /// The step itself: its before hooks and set-up, then the restart or
    /// the measured window (measured again when another program
    /// disturbed it and the step allows).
    fn measure(&mut self, g: &mut Group, e: &Execution) -> anyhow::Result<results::StepResult> {
        let out = &self.dirs.out;
        // A following share's executions have no hooks (the schedule's
        // doing); its set-up is the leader's.
        let mut before = hooks::run(g.driver.as_ref(), e, &e.before, "before", out, self.sinks)?;
        if before.failed.is_none() && e.leads() {
            if let Err(why) =
                set_up_workload(g.driver.as_ref(), e, &mut g.set_up, &mut before.notes)
            {
                before.failed = Some(format!("{why:#}"));
            }
        }
        let mut r = if let Some(why) = before.failed {
            let mut r = blank_result(e);
            r.failed = Some(why);
            r
        } else if e.maintenance() == Some(Maint::Restart) {
            restart::restart(&mut g.driver, self.dirs, e, self.sinks)?
        } else {
            let probe = probe_of(g.driver.as_ref());
            let profiles = match e.profile {
                Some(_) => Some(results::profiles::dir(out)?),
                None => None,
            };
            let cx = StepCtx {
                db: g.driver.as_ref(),
                probe: &probe,
                barrier: g.barrier.as_ref(),
                share: g.share,
                profiles: profiles.as_deref(),
            };
            let r = measure_step(&cx, e, self.sinks)?;
            // A window measured again would be one share's alone.
            match g.share {
                Some(_) => r,
                None => again_if_disturbed(
                    &cx,
                    e,
                    r,
                    &self.schedule.retry,
                    &mut self.tally.spent,
                    self.sinks,
                )?,
            }
        };
        r.notes.extend(before.notes);
        Ok(r)
    }

    /// After a failed step: why the group's later steps cannot run, if
    /// they cannot (the restart did not bring the server back, the server
    /// died, the tables were not made, a replayed step failed).
    fn why_the_rest_cannot_run(
        &mut self,
        g: &Group,
        job: &Job,
        r: &mut results::StepResult,
    ) -> Option<String> {
        let (e, name) = (&job.exec, &g.target.name);
        let gone = if e.maintenance() == Some(Maint::Restart) {
            self.sinks.warn(&format!(
                "[{name}] {}",
                r.failed.as_deref().unwrap_or_default()
            ));
            Some(format!(
                "the server did not come back after the restart of step {}",
                e.id.seq
            ))
        } else if let Some(h) = g.driver.health() {
            // The server died: say so in the step, and stop sending it
            // work.
            r.failed = Some(format!("{}; {h}", r.failed.take().unwrap_or_default()));
            self.sinks.warn(&format!("[{name}] {h}"));
            Some("the server died".into())
        } else if e.creates_tables {
            Some("the step that creates the tables failed".into())
        } else if !job.keep {
            Some(format!("the replayed step {} failed", e.id.at.step.label()))
        } else {
            None
        };
        // Steps that will not run and are not recorded are said.
        if !self.keeping.failures && gone.is_some() {
            self.sinks.warn(&format!(
                "[{name}] {} failed, so the steps after it are not confirmed this round",
                e.id.at.step.label()
            ));
        }
        gone
    }
}

/// Ctrl-C: a run keeps the target's data for `--resume` (the server is
/// stopped as the driver drops); a confirmation's data was made for it
/// alone and goes.
fn interrupted_here(driver: Box<dyn Target>, keeping: Keeping, loads: bool) -> Flow {
    if !keeping.data_on_interrupt {
        let _ = driver.cleanup(loads);
    }
    Flow::Interrupted
}

/// A window another program disturbed is measured again, at once, after
/// the plan's wait: the machine is often quiet a few seconds later. Up to
/// the execution's `retries` times and the plan's `max_extra` seconds in
/// all; every disturbed window is kept in the result (`retried`), and the
/// last one measured is the step's figures.
fn again_if_disturbed(
    cx: &StepCtx,
    e: &Execution,
    mut r: crate::results::StepResult,
    retry: &crate::plan::schedule::Retry,
    spent: &mut f64,
    sinks: &mut Sinks,
) -> anyhow::Result<crate::results::StepResult> {
    let crate::plan::schedule::Work::Workload(w) = &e.work else {
        return Ok(r);
    };
    let mut kept = Vec::new();
    let mut extra = 0.0;
    while kept.len() < w.retries as usize && r.failed.is_none() {
        let Some(why) = r
            .metrics
            .interference
            .as_ref()
            .and_then(|i| i.disturbed.clone())
        else {
            break;
        };
        let cost = retry.wait_secs + w.warmup.as_secs_f64() + r.secs;
        if *spent + cost > retry.max_extra_secs || interrupted() {
            break;
        }
        sinks.line(&format!(
            "{}: disturbed ({why}); measuring it again in {:.0} s",
            e.label(),
            retry.wait_secs
        ));
        let t0 = std::time::Instant::now();
        while t0.elapsed().as_secs_f64() < retry.wait_secs {
            if interrupted() {
                bail!(Interrupted);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let mut attempt = crate::results::Attempt {
            started: r.started,
            secs: r.secs,
            throughput: r.throughput,
            events: r.events,
            disturbed: why,
            cost_secs: 0.0,
        };
        r = measure_step(cx, e, sinks)?;
        let took = t0.elapsed().as_secs_f64();
        attempt.cost_secs = (took * 1e3).round() / 1e3;
        kept.push(attempt);
        *spent += took;
        extra += took;
    }
    if !kept.is_empty() {
        r.notes.insert(
            "retried".into(),
            format!(
                "{} disturbed window(s) measured again, {extra:.1} s in all; this is the window of try {}{}",
                kept.len(),
                kept.len() + 1,
                if r.metrics.interference.as_ref().is_some_and(|i| i.disturbed.is_some()) {
                    ", still disturbed"
                } else {
                    ", quiet"
                }
            ),
        );
        r.retried = kept;
    }
    Ok(r)
}

/// Steps whose statements go otherwise than their benchmark sends them
/// (LinkBench or the Insert Benchmark prepared, sysbench's as text), with
/// the target's settings: "settings that differ" then says that a run with
/// prepared statements is compared with one without.
fn record_statements(record: &mut TargetRecord, jobs: &[Job]) {
    let mut by: std::collections::BTreeMap<Statements, Vec<&str>> = Default::default();
    for j in jobs {
        let step = &j.exec.id.at.step;
        if let Some(how) = step.statements_departure() {
            let list = by.entry(how).or_default();
            if !list.contains(&step.name()) {
                list.push(step.name());
            }
        }
    }
    if by.is_empty() {
        return;
    }
    let value = by
        .iter()
        .map(|(how, steps)| format!("{}: {}", how.name(), steps.join(", ")))
        .collect::<Vec<_>>()
        .join("; ");
    record.set_fact(STATEMENTS, value);
}
