//! `relbench run --confirm DIR`: more repeats of the steps a report could
//! not judge (disturbed windows, or changes past the thresholds that are
//! not significant), added to the same results so the report tightens.
//!
//! A step runs on the data the sequence left before it, so each target
//! starts afresh and replays the steps before the last one to confirm
//! that change the data (loads, writes, settles); read-only steps that are
//! not asked for are skipped, since they leave the data as they found it.
//! Replayed steps are not recorded. Targets are interleaved round by
//! round, as a run interleaves repeats. Which steps need it is the
//! comparison's answer (the command line asks `compare`); this file only
//! sequences.

use super::step::{measure_step, StepCtx};
use super::{
    finish_interrupted, interrupted, probe_of, remove_earlier_data, wait_serving, Progress, RunEnd,
};
use crate::db::{self, Dirs};
use crate::plan::{Execution, Maint, StepKind};
use crate::results;
use crate::Interrupted;

/// One step of one target to repeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// Index into the plan's targets.
    pub target: usize,
    /// Position in the sequence.
    pub seq: usize,
    pub clients: u32,
    /// How many more repeats it needs.
    pub rounds: u32,
}

pub struct ConfirmOptions {
    pub out: std::path::PathBuf,
    pub needs: Vec<Need>,
    /// The first repeat number the new results take (one past the run's
    /// highest).
    pub first_repeat: u32,
}

/// Runs the confirmation rounds; returns how many results it added.
pub fn confirm(opts: &ConfirmOptions, ui: &mut Progress) -> anyhow::Result<(RunEnd, usize)> {
    let out = &opts.out;
    let _lock = results::lock_run(out)?;
    let mut info = results::read_run_info(out)?;
    let plan_dir = std::path::PathBuf::from(&info.plan_dir);
    // The plan as the run parsed it (its paths already resolved).
    let plan = info.plan.clone();
    plan.register_workloads();
    info.status = results::RunStatus::Running;
    info.finished = None;
    results::write_atomic(&out.join("run.json"), &info)?;
    let rounds = opts.needs.iter().map(|n| n.rounds).max().unwrap_or(0);
    let sequence: Vec<Execution> = plan
        .executions()
        .into_iter()
        .filter(|e| e.repeat == 1)
        .collect();
    let mut added = 0;
    let mut failed_steps = 0;
    for round in 0..rounds {
        let repeat = opts.first_repeat + round;
        for (ti, target) in plan.targets.iter().enumerate() {
            let wanted = |e: &Execution| {
                opts.needs.iter().any(|n| {
                    n.target == ti && n.seq == e.seq && n.clients == e.clients && round < n.rounds
                })
            };
            let Some(last) = sequence
                .iter()
                .filter(|e| e.target == ti && wanted(e))
                .map(|e| e.seq)
                .max()
            else {
                continue;
            };
            let chosen: Vec<(&Execution, bool)> = sequence
                .iter()
                .filter(|e| e.target == ti && e.seq <= last)
                .filter_map(|e| {
                    if wanted(e) {
                        return Some((e, true));
                    }
                    let changes = match &e.step.kind {
                        StepKind::Load | StepKind::Settle => true,
                        StepKind::Workload(_) => {
                            e.step.workload().is_some_and(|w| w.meta().changes_data())
                        }
                        // A restart brings the phase's settings; the
                        // others change the tables or their indexes.
                        StepKind::Maintenance(m) => *m != Maint::Analyze,
                    };
                    changes.then_some((e, false))
                })
                .collect();
            ui.line(&format!(
                "[{}] confirming (repeat {repeat}): {}",
                target.name,
                chosen
                    .iter()
                    .map(|(e, keep)| {
                        let s = format!("{} c{}", e.step.label(), e.clients);
                        if *keep {
                            s
                        } else {
                            format!("({s}, replayed)")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" → ")
            ));
            let dirs = Dirs {
                plan_dir: plan_dir.clone(),
                out: out.clone(),
            };
            let mut driver = match db::open(target, &dirs, &mut |line| ui.line(line)) {
                Ok(d) => d,
                Err(err) => {
                    ui.warn(&format!(
                        "[{}] could not start, nothing confirmed for it this round: {err:#}",
                        target.name
                    ));
                    continue;
                }
            };
            let loads = plan.loads();
            if loads {
                remove_earlier_data(driver.as_ref(), target)?;
            }
            let mut set_up: Vec<String> = Vec::new();
            for (e, keep) in chosen {
                if target.engine.is_server() && e.step.maintenance() != Some(Maint::Restart) {
                    wait_serving(driver.as_ref(), ui, &target.name);
                }
                let mut e = e.clone();
                e.repeat = repeat;
                // The plan's own workloads make their tables again on the
                // target that started afresh.
                let mut notes = std::collections::BTreeMap::new();
                let setup =
                    super::set_up_workload(&plan, driver.as_ref(), &e, &mut set_up, &mut notes);
                let measured = if let Err(why) = setup {
                    let mut r = super::step::blank_result(&plan, target, &e);
                    r.failed = Some(why);
                    Ok(r)
                } else if e.step.maintenance() == Some(Maint::Restart) {
                    let spec = super::settings_at(&plan, target, e.seq);
                    super::restart::restart(&plan, &spec, &mut driver, &dirs, &e, ui)
                } else {
                    let probe = probe_of(driver.as_ref());
                    let cx = StepCtx {
                        plan: &plan,
                        target,
                        db: driver.as_ref(),
                        probe: &probe,
                    };
                    measure_step(&cx, &e, ui)
                };
                let mut r = match measured {
                    Ok(r) => r,
                    Err(err) if err.is::<Interrupted>() || interrupted() => {
                        let _ = driver.cleanup(loads);
                        return Ok((finish_interrupted(&mut info, out, ui)?, added));
                    }
                    Err(err) => return Err(err),
                };
                if interrupted() {
                    let _ = driver.cleanup(loads);
                    return Ok((finish_interrupted(&mut info, out, ui)?, added));
                }
                r.notes.extend(notes);
                if r.failed.is_some() {
                    failed_steps += usize::from(keep);
                    if !keep || e.step.creates_tables() {
                        ui.warn(&format!(
                            "[{}] {} failed, so the steps after it are not confirmed this round",
                            target.name,
                            e.step.label()
                        ));
                        if keep {
                            results::write_step(out, &r)?;
                            added += 1;
                        }
                        break;
                    }
                }
                if keep {
                    r.notes.insert(
                        "confirm".into(),
                        "a confirmation repeat (relbench run --confirm): the target started afresh and replayed \
                         the steps before this one that change the data"
                            .into(),
                    );
                    results::write_step(out, &r)?;
                    added += 1;
                }
            }
            driver.cleanup(loads)?;
        }
    }
    // Embedded targets kept their files here; remove the folder once empty.
    let _ = std::fs::remove_dir(out.join("data"));
    info.status = results::RunStatus::Complete;
    info.finished = Some(crate::util::utc_iso(crate::util::unix_now()));
    results::write_atomic(&out.join("run.json"), &info)?;
    Ok((RunEnd::Complete { failed_steps }, added))
}
