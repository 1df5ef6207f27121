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

use super::barrier::Barrier;
use super::step::{blank_result, measure_step, StepCtx};
use super::{
    hooks, interrupted, probe_of, record_target, remove_earlier_data, restart, set_up_workload,
    wait_serving, Progress, RunEnd,
};
use crate::db::{self, Dirs};
use crate::plan::schedule::{Execution, Schedule};
use crate::results::{self, RunInfo};
use crate::workload::maint::Maint;
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
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Run,
    Confirm,
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
    mode: Mode,
    info: &mut RunInfo,
    ui: &mut Progress,
) -> anyhow::Result<Ran> {
    let mut failed_steps = 0;
    let mut not_run = 0;
    // Seconds the windows measured again have taken, against the plan's
    // `max_extra`.
    let mut spent = 0.0;
    let mut not_started: Vec<String> = Vec::new();
    let mut written = 0;
    let out = dirs.out.as_path();
    for group in
        jobs.chunk_by(|a, b| a.exec.target == b.exec.target && a.exec.id.repeat == b.exec.id.repeat)
    {
        if group.iter().all(|j| j.done) {
            continue;
        }
        let target = &schedule.targets[group[0].exec.target];
        let first_left = &group.iter().find(|j| !j.done).expect("a job is left").exec;
        if mode == Mode::Confirm {
            ui.line(&format!(
                "[{}] confirming (repeat {}): {}",
                target.name,
                first_left.id.repeat,
                group
                    .iter()
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
            ));
        }
        // A run resumed in a later phase starts the server under that
        // phase's settings.
        let mut driver = match db::open(&first_left.settings, dirs, &mut |line| ui.line(line)) {
            Ok(d) => d,
            Err(err) if mode == Mode::Confirm => {
                ui.warn(&format!(
                    "[{}] could not start, nothing confirmed for it this round: {err:#}",
                    target.name
                ));
                continue;
            }
            Err(err) if target.engine.is_server() => {
                // The server would not start: record it against the
                // target's first step left and go on with the others.
                let mut r = blank_result(first_left);
                r.failed = Some(format!("{err:#}"));
                ui.warn(&format!(
                    "[{}] FAILED to start (no step of it ran): {err:#}",
                    target.name
                ));
                results::write_step(out, &r)?;
                if !not_started.contains(&target.name) {
                    not_started.push(target.name.clone());
                }
                continue;
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
        // The other client shares' processes, met in the target database.
        let share = schedule.rendezvous.as_ref().map(|rv| rv.share);
        let leads = share.map_or(true, |s| s.leads());
        let barrier = match &schedule.rendezvous {
            Some(rv) => Some(Barrier::open(driver.as_ref(), rv)?),
            None => None,
        };
        let started = group.iter().any(|j| j.done);
        let loads = schedule.loads;
        // A finished step that dropped or emptied the tables left no
        // data on purpose.
        let dropped = group
            .iter()
            .any(|j| j.done && j.exec.maintenance().is_some_and(|m| !m.keeps_rows()));
        let has_data = schedule
            .needs_table
            .as_deref()
            .map_or(true, |t| driver.has_data(t));
        if !loads && !has_data && !dropped {
            bail!(
                "target \"{}\": the plan has no step that creates the tables (\"load\"), so it runs on \
                 tables that exist already, but {} is not there; put \"load\" first in `steps` (without a plan: pass --load)",
                target.name,
                schedule.needs_table.as_deref().unwrap_or_default()
            );
        }
        // A resumed target whose data is gone (its server died, or its
        // start failed and was cleaned up) is made again: the step that
        // creates the tables runs again, and its result says why.
        let reload = loads && started && !has_data && !dropped;
        if reload {
            ui.warn(&format!(
                "[{}] the data the earlier steps ran on is gone: creating it again before the steps left",
                target.name
            ));
        }
        if loads && (!started || reload) && leads {
            remove_earlier_data(driver.as_ref(), target)?;
        }
        if mode == Mode::Run {
            record_target(info, target, driver.as_ref(), &probe_of(driver.as_ref()))?;
            results::write_atomic(&out.join("run.json"), &*info)?;
        }

        // The plan's own workloads' set-up, once per target and repeat.
        let mut set_up: Vec<String> = Vec::new();
        let mut gone: Option<String> = None;
        for job in group {
            let e = &job.exec;
            let again = reload && e.creates_tables;
            if job.done && !again {
                continue;
            }
            if let Some(why) = &gone {
                if mode == Mode::Confirm || !job.keep {
                    continue;
                }
                // Not run: said in its result, so that the report shows
                // the hole and --resume runs it.
                ui.warn(&format!(
                    "[{}] skipping {}: {why}",
                    target.name,
                    e.id.at.step.label()
                ));
                let mut r = blank_result(e);
                r.failed = Some(format!("not run: {why}"));
                results::write_step(out, &r)?;
                not_run += 1;
                continue;
            }
            if target.engine.is_server() && e.maintenance() != Some(Maint::Restart) {
                wait_serving(driver.as_ref(), ui, &target.name);
            }
            if let (Some(b), Some(share)) = (&barrier, share) {
                // Every share has finished the step before (the leading
                // share's load or maintenance is done); only the leading
                // share creates, loads, maintains and runs hooks.
                let met = b.meet(&format!("{}:begin", e.id), false);
                // Ctrl-C while waiting ends the run as interrupted, not
                // as a failed step of a complete run.
                if met.is_err() && crate::runner::interrupted() {
                    bail!(Interrupted);
                }
                let workload = matches!(e.work, crate::plan::schedule::Work::Workload(_));
                if met.is_err() || (!leads && !workload) {
                    let mut r = blank_result(e);
                    r.failed = met.err();
                    r.client_share = Some(results::ShareStep {
                        by_leader: r.failed.is_none(),
                        ..results::ShareStep::new(share, e.id.at.clients)
                    });
                    failed_steps += usize::from(r.failed.is_some());
                    results::write_step(out, &r)?;
                    written += 1;
                    continue;
                }
            }
            let mut before = if leads {
                hooks::run(driver.as_ref(), e, &e.before, "before", out, ui)?
            } else {
                Default::default()
            };
            if before.failed.is_none() && leads {
                if let Err(why) =
                    set_up_workload(driver.as_ref(), e, &mut set_up, &mut before.notes)
                {
                    before.failed = Some(why);
                }
            }
            let measured = if let Some(why) = before.failed {
                let mut r = blank_result(e);
                r.failed = Some(why);
                Ok(r)
            } else if e.maintenance() == Some(Maint::Restart) {
                restart::restart(&mut driver, dirs, e, ui)
            } else {
                let probe = probe_of(driver.as_ref());
                let cx = StepCtx {
                    db: driver.as_ref(),
                    probe: &probe,
                    barrier: barrier.as_ref(),
                    share,
                };
                // A window measured again would be one share's alone.
                measure_step(&cx, e, ui).and_then(|r| match share {
                    Some(_) => Ok(r),
                    None => again_if_disturbed(&cx, e, r, &schedule.retry, &mut spent, ui),
                })
            };
            let mut result = match measured {
                Ok(r) => r,
                Err(err) if err.is::<Interrupted>() || interrupted() => {
                    return Ok(interrupted_here(driver, mode, loads, written));
                }
                Err(err) => return Err(err),
            };
            if interrupted() {
                return Ok(interrupted_here(driver, mode, loads, written));
            }
            result.notes.extend(before.notes);
            if again {
                result.notes.insert(
                    "reloaded".into(),
                    "ran again on --resume: the data the earlier load made was gone".into(),
                );
            }
            if result.failed.is_none() && leads {
                let after = hooks::run(driver.as_ref(), e, &e.after, "after", out, ui)?;
                result.notes.extend(after.notes);
                result.failed = after.failed;
            }
            if result.failed.is_some() {
                failed_steps += usize::from(job.keep);
                if e.maintenance() == Some(Maint::Restart) {
                    ui.warn(&format!(
                        "[{}] {}",
                        target.name,
                        result.failed.as_deref().unwrap_or_default()
                    ));
                    gone = Some(format!(
                        "the server did not come back after the restart of step {}",
                        e.id.seq
                    ));
                } else if let Some(h) = driver.health() {
                    // The server died: say so in the step, and stop
                    // sending it work.
                    result.failed =
                        Some(format!("{}; {h}", result.failed.take().unwrap_or_default()));
                    ui.warn(&format!("[{}] {h}", target.name));
                    gone = Some("the server died".into());
                } else if e.creates_tables {
                    gone = Some("the step that creates the tables failed".into());
                } else if !job.keep {
                    gone = Some(format!("the replayed step {} failed", e.id.at.step.label()));
                }
                if mode == Mode::Confirm && gone.is_some() {
                    ui.warn(&format!(
                        "[{}] {} failed, so the steps after it are not confirmed this round",
                        target.name,
                        e.id.at.step.label()
                    ));
                }
            }
            if !job.keep {
                continue;
            }
            if mode == Mode::Confirm {
                result.notes.insert(
                    "confirm".into(),
                    "a confirmation repeat (relbench run --confirm): the target started afresh and replayed \
                     the steps before this one that change the data"
                        .into(),
                );
            }
            results::write_step(out, &result)?;
            written += 1;
            if mode == Mode::Run {
                record_load_method(info, &target.name, &result, out)?;
            }
        }
        // No share's cleanup takes the tables from under another's last
        // step.
        if let (Some(b), Some(last)) = (&barrier, group.last()) {
            let end = format!("{}/r{}:end", target.name, last.exec.id.repeat);
            if let Err(why) = b.meet(&end, false) {
                ui.warn(&format!("[{}] {why}", target.name));
            }
        }
        // The next load starts from nothing, so the data is not needed;
        // a managed server is stopped here.
        driver.cleanup(loads)?;
    }
    Ok(Ran {
        end: RunEnd::Complete {
            failed_steps,
            not_run,
            not_started,
        },
        written,
    })
}

/// Ctrl-C: a run keeps the target's data for `--resume` (the server is
/// stopped as the driver drops); a confirmation's data was made for it
/// alone and goes.
fn interrupted_here(
    driver: Box<dyn crate::db::Target>,
    mode: Mode,
    loads: bool,
    written: usize,
) -> Ran {
    if mode == Mode::Confirm {
        let _ = driver.cleanup(loads);
    }
    Ran {
        end: RunEnd::Interrupted,
        written,
    }
}

/// How a target's load put its rows in (a bulk file load, multi-row
/// INSERTs, COPY) is a fact of the target: two servers that loaded
/// differently did not do the same work, so it is recorded with its
/// settings, where "settings that differ from the base" shows it.
fn record_load_method(
    info: &mut RunInfo,
    target: &str,
    r: &crate::results::StepResult,
    out: &std::path::Path,
) -> anyhow::Result<()> {
    let Some(method) = r.notes.get("load_method").filter(|_| r.failed.is_none()) else {
        return Ok(());
    };
    let Some(t) = info.targets.iter_mut().find(|t| t.name == target) else {
        return Ok(());
    };
    if t.facts.config.get(results::LOAD_METHOD) == Some(method) {
        return Ok(());
    }
    t.facts
        .config
        .insert(results::LOAD_METHOD.into(), method.clone());
    if !t.facts.settings.is_empty() {
        t.facts
            .settings
            .insert(results::LOAD_METHOD.into(), method.clone());
    }
    results::write_atomic(&out.join("run.json"), &*info)
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
    ui: &mut Progress,
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
        ui.line(&format!(
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
        r = measure_step(cx, e, ui)?;
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
