//! The runner: walks a plan's step executions in order, target by target,
//! and writes each step's result the moment it ends. Sequencing only: it
//! opens each target through `db::open`, runs each step through one shape
//! ([`step::measure_step`]), and owns the lifecycle around them (starting
//! afresh before a step that creates tables, `--resume`, a server that dies,
//! and stopping cleanly on Ctrl-C: the step in flight is dropped, everything
//! written before it stays). It names no engine and no workload.

mod confirm;
mod hooks;
mod progress;
mod restart;
mod step;

pub use confirm::{confirm, ConfirmOptions, Need};
pub use progress::Progress;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::db::{self, Dirs, ErrorKind, Target};
use crate::metrics::{self, host, Probe};
use crate::plan::{Execution, Maint, Plan, TargetSpec, When};
use crate::results::{self, RunInfo, RunStatus, TargetRecord, SCHEMA_VERSION};
use crate::util::{unix_now, utc_iso};
use crate::Interrupted;
use step::{blank_result, measure_step, StepCtx};

/// Set by the Ctrl-C handler; every loop that can take long checks it.
pub static INTERRUPT: AtomicBool = AtomicBool::new(false);

pub struct RunOptions {
    pub plan: Plan,
    pub plan_source: String,
    pub plan_text: String,
    /// Relative paths in the plan are resolved against this directory.
    pub plan_dir: PathBuf,
    pub out: PathBuf,
    pub resume: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// Every step ran; some may have failed (their results say why).
    Complete {
        failed_steps: usize,
    },
    Interrupted,
}

pub(crate) fn interrupted() -> bool {
    INTERRUPT.load(Ordering::Relaxed)
}

pub fn run(opts: &RunOptions, ui: &mut Progress) -> anyhow::Result<RunEnd> {
    let out = &opts.out;
    // Held until the run returns: no other relbench writes here meanwhile.
    let _lock = results::lock_run(out)?;
    let mut info = prepare_out_dir(opts)?;
    let plan = &opts.plan;
    plan.register_workloads();
    let execs = plan.executions();
    // A step is done when it has a successful result: a failed one, one
    // that never ran, or a damaged file runs (again) on --resume, once.
    // Each file is read once, here: what this run writes is not asked again.
    let succeeded: Vec<bool> = execs
        .iter()
        .map(|e| {
            let file = out.join(results::step_file(
                &plan.targets[e.target].name,
                e.repeat,
                e.seq,
                &e.step.label(),
                e.clients,
            ));
            file.exists() && results::read_step(&file).is_ok_and(|r| r.failed.is_none())
        })
        .collect();
    let done = |e: &Execution| {
        execs
            .iter()
            .position(|x| std::ptr::eq(x, e))
            .is_some_and(|i| succeeded[i])
    };
    let remaining = execs.iter().filter(|e| !done(e)).count();
    ui.line(&format!(
        "relbench: {} — {} target{}, {} step runs{}, about {} plus loads; results in {}",
        opts.plan_source,
        plan.targets.len(),
        if plan.targets.len() == 1 { "" } else { "s" },
        execs.len(),
        if remaining < execs.len() {
            format!(" ({remaining} left to run)")
        } else {
            String::new()
        },
        human_secs(plan.estimated_secs()),
        out.display()
    ));

    for why in plan.skipped() {
        ui.line(&format!("relbench: {why}"));
    }
    let mut failed_steps = 0;
    for repeat in 1..=plan.repeats {
        for (ti, target) in plan.targets.iter().enumerate() {
            let mine: Vec<&Execution> = execs
                .iter()
                .filter(|e| e.repeat == repeat && e.target == ti)
                .collect();
            if mine.iter().all(|e| done(e)) {
                continue;
            }
            let dirs = Dirs {
                plan_dir: opts.plan_dir.clone(),
                out: opts.out.clone(),
            };
            let first_left = mine.iter().find(|e| !done(e)).expect("a step is left");
            // A run resumed in a later phase starts the server under that
            // phase's settings.
            let opened = db::open(
                &settings_at(plan, target, first_left.seq),
                &dirs,
                &mut |line| ui.line(line),
            );
            let mut driver = match opened {
                Ok(d) => d,
                Err(err) if target.engine.is_server() => {
                    // The server would not start: record it against the
                    // target's first step left and go on with the others.
                    let mut r = blank_result(plan, target, first_left);
                    r.failed = Some(format!("{err:#}"));
                    ui.warn(&format!("[{}] FAILED to start: {err:#}", target.name));
                    results::write_step(out, &r)?;
                    failed_steps += 1;
                    continue;
                }
                Err(err) => return Err(err),
            };
            let started = mine.iter().any(|e| done(e));
            let loads = plan.loads();
            let first_table = &plan.tables_for_settle().0[0];
            let has_data = driver.has_data(first_table);
            // A finished step that dropped or emptied the tables left no
            // data on purpose.
            let dropped = mine
                .iter()
                .any(|e| done(e) && e.step.maintenance().is_some_and(|m| !m.keeps_rows()));
            if !loads && !has_data && !dropped && plan.uses_suite_tables() {
                bail!(
                    "target \"{}\": the plan has no step that creates the tables (\"load\"), so it runs on \
                     tables that exist already, but {first_table} is not there; put \"load\" first in `steps` (without a plan: pass --load)",
                    target.name
                );
            }
            // A resumed target whose data is gone (its server died, or its
            // start failed and was cleaned up) is made again: the step that
            // creates the tables runs again, and its result says why.
            let reload = loads && started && !has_data && !dropped;
            // The plan's own workloads' set-up, once per target and repeat.
            let mut set_up: Vec<String> = Vec::new();
            if reload {
                ui.warn(&format!(
                    "[{}] the data the earlier steps ran on is gone: creating it again before the steps left",
                    target.name
                ));
            }
            if loads && (!started || reload) {
                remove_earlier_data(driver.as_ref(), target)?;
            }
            record_target(
                &mut info,
                target,
                driver.as_ref(),
                &probe_of(driver.as_ref()),
            )?;
            results::write_atomic(&out.join("run.json"), &info)?;

            let mut gone: Option<String> = None;
            for e in mine {
                let again = reload && e.step.creates_tables();
                if done(e) && !again {
                    continue;
                }
                if let Some(why) = &gone {
                    // Not run: said in its result, so that the report shows
                    // the hole and --resume runs it.
                    ui.warn(&format!(
                        "[{}] skipping {}: {why}",
                        target.name,
                        e.step.label()
                    ));
                    let mut r = blank_result(plan, target, e);
                    r.failed = Some(format!("not run: {why}"));
                    results::write_step(out, &r)?;
                    failed_steps += 1;
                    continue;
                }
                if target.engine.is_server() && e.step.maintenance() != Some(Maint::Restart) {
                    wait_serving(driver.as_ref(), ui, &target.name);
                }
                let mut before =
                    hooks::run(plan, target, driver.as_ref(), e, When::Before, out, ui)?;
                if before.failed.is_none() {
                    if let Err(why) =
                        set_up_workload(plan, driver.as_ref(), e, &mut set_up, &mut before.notes)
                    {
                        before.failed = Some(why);
                    }
                }
                let measured = if let Some(why) = before.failed {
                    let mut r = blank_result(plan, target, e);
                    r.failed = Some(why);
                    Ok(r)
                } else if e.step.maintenance() == Some(Maint::Restart) {
                    let spec = settings_at(plan, target, e.seq);
                    restart::restart(plan, &spec, &mut driver, &dirs, e, ui)
                } else {
                    let probe = probe_of(driver.as_ref());
                    let cx = StepCtx {
                        plan,
                        target,
                        db: driver.as_ref(),
                        probe: &probe,
                    };
                    measure_step(&cx, e, ui)
                };
                let mut result = match measured {
                    Ok(r) => r,
                    Err(err) if err.is::<Interrupted>() || interrupted() => {
                        return finish_interrupted(&mut info, out, ui);
                    }
                    Err(err) => return Err(err),
                };
                if interrupted() {
                    return finish_interrupted(&mut info, out, ui);
                }
                result.notes.extend(before.notes);
                if again {
                    result.notes.insert(
                        "reloaded".into(),
                        "ran again on --resume: the data the earlier load made was gone".into(),
                    );
                }
                if result.failed.is_none() {
                    let after = hooks::run(plan, target, driver.as_ref(), e, When::After, out, ui)?;
                    result.notes.extend(after.notes);
                    result.failed = after.failed;
                }
                if result.failed.is_some() {
                    failed_steps += 1;
                    if e.step.maintenance() == Some(Maint::Restart) {
                        ui.warn(&format!(
                            "[{}] {}",
                            target.name,
                            result.failed.as_deref().unwrap_or_default()
                        ));
                        gone = Some(format!(
                            "the server did not come back after the restart of step {}",
                            e.seq
                        ));
                    } else if let Some(h) = driver.health() {
                        // The server died: say so in the step, and stop
                        // sending it work.
                        result.failed =
                            Some(format!("{}; {h}", result.failed.take().unwrap_or_default()));
                        ui.warn(&format!("[{}] {h}", target.name));
                        gone = Some("the server died".into());
                    } else if e.step.creates_tables() {
                        gone = Some("the step that creates the tables failed".into());
                    }
                }
                results::write_step(out, &result)?;
            }
            // The next load starts from nothing, so the data is not needed;
            // a managed server is stopped here.
            driver.cleanup(loads)?;
        }
    }
    // Embedded targets kept their files here; remove the folder once empty.
    let _ = std::fs::remove_dir(out.join("data"));
    info.status = RunStatus::Complete;
    info.finished = Some(utc_iso(unix_now()));
    results::write_atomic(&out.join("run.json"), &info)?;
    Ok(RunEnd::Complete { failed_steps })
}

/// Runs the set-up statements of the plan's own workload before the first
/// step that uses it, as the benchmark user (the tables are its own),
/// outside the measured window; their time goes in the step's notes.
pub(super) fn set_up_workload(
    plan: &Plan,
    db: &dyn Target,
    e: &Execution,
    done: &mut Vec<String>,
    notes: &mut std::collections::BTreeMap<String, String>,
) -> Result<(), String> {
    let crate::plan::StepKind::Workload(name) = &e.step.kind else {
        return Ok(());
    };
    let Some(spec) = plan.workloads.iter().find(|w| &w.name == name) else {
        return Ok(());
    };
    if done.contains(name) {
        return Ok(());
    }
    done.push(name.clone());
    let statements = spec.setup.for_dialect(db.dialect());
    if statements.is_empty() {
        return Ok(());
    }
    let t0 = Instant::now();
    let mut conn = db
        .connect()
        .map_err(|err| format!("setting up workload {name}: {err}"))?;
    for sql in statements {
        conn.batch(sql)
            .map_err(|err| format!("setting up workload {name}: {sql}: {err}"))?;
    }
    notes.insert(
        "setup".into(),
        format!(
            "workload {name}: {} statements in {:.3} s, before the step",
            statements.len(),
            t0.elapsed().as_secs_f64()
        ),
    );
    Ok(())
}

/// The target as it runs at step `seq`: its own settings, changed by the
/// last phase before it that restarted the server.
fn settings_at(plan: &Plan, target: &TargetSpec, seq: usize) -> TargetSpec {
    plan.server_at(seq)
        .map_or_else(|| target.clone(), |c| c.apply(target))
}

/// Empties a target before a sequence that creates its tables.
fn remove_earlier_data(driver: &dyn Target, target: &TargetSpec) -> anyhow::Result<()> {
    driver.reset().with_context(|| {
        format!(
            "target \"{}\": removing the data of an earlier run",
            target.name
        )
    })
}

/// How long a step waits for its server to accept work again (a crashed
/// PostgreSQL backend takes the server through a short recovery).
const SERVING_WAIT: Duration = Duration::from_secs(60);

/// Waits, up to [`SERVING_WAIT`], until the server takes a connection: a
/// step that starts during a recovery would fail for nothing. A server
/// that is gone is not waited for, nor one that answers but refuses the
/// login (waiting would not change its mind): the step fails and says why.
fn wait_serving(db: &dyn Target, ui: &Progress, name: &str) {
    let t0 = Instant::now();
    let mut said = false;
    while db.health().is_none() && t0.elapsed() < SERVING_WAIT && !interrupted() {
        match db.connect() {
            Ok(_) => return,
            Err(e) if e.kind != ErrorKind::Connection => return,
            Err(_) => {}
        }
        if !said {
            ui.line(&format!(
                "[{name}] waiting for the server to accept connections again"
            ));
            said = true;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn finish_interrupted(info: &mut RunInfo, out: &Path, ui: &mut Progress) -> anyhow::Result<RunEnd> {
    ui.finish_step(
        "interrupted: the step in flight was dropped; every finished step is kept",
        true,
    );
    info.status = RunStatus::Interrupted;
    info.finished = Some(utc_iso(unix_now()));
    results::write_atomic(&out.join("run.json"), info)?;
    Ok(RunEnd::Interrupted)
}

/// Creates the results directory, or checks that `--resume` continues the
/// same plan, and returns the run's record.
fn prepare_out_dir(opts: &RunOptions) -> anyhow::Result<RunInfo> {
    let out = &opts.out;
    let run_json = out.join("run.json");
    if opts.resume {
        let mut info = results::read_run_info(out)
            .with_context(|| format!("nothing to resume in {}", out.display()))?;
        if info.plan != opts.plan {
            bail!(
                "the plan differs from the one the run in {} started with; resume it without a plan \
                 (`relbench run --resume --out {}`) or start a new run",
                out.display(),
                out.display()
            );
        }
        info.status = RunStatus::Running;
        info.finished = None;
        results::write_atomic(&run_json, &info)?;
        return Ok(info);
    }
    if run_json.exists() {
        bail!(
            "{} already holds a run; finish it with `relbench run --resume --out {}`, or pick a new directory with --out",
            out.display(),
            out.display()
        );
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let info = RunInfo {
        schema_version: SCHEMA_VERSION,
        relbench_version: env!("CARGO_PKG_VERSION").to_string(),
        status: RunStatus::Running,
        started: utc_iso(unix_now()),
        finished: None,
        host: host::facts(),
        plan_source: opts.plan_source.clone(),
        plan_text: opts.plan_text.clone(),
        plan_dir: opts.plan_dir.display().to_string(),
        plan: opts.plan.clone(),
        targets: Vec::new(),
    };
    results::write_atomic(&run_json, &info)?;
    Ok(info)
}

/// What the sampler reads for a target: the devices under its data and its
/// server's processes.
fn probe_of(driver: &dyn Target) -> Probe {
    let devices = if !driver.runs_here() {
        Err("the server runs on another host".to_string())
    } else {
        match driver.data_dir() {
            Some(d) => metrics::device::devices_of(&d),
            None => {
                Err("relbench does not know where a server it did not start keeps its data".into())
            }
        }
    };
    Probe {
        devices,
        server_pid: driver.server_pid(),
        server_elsewhere_here: driver.runs_here()
            && driver.engine().is_server()
            && driver.server_pid().is_none(),
    }
}

fn record_target(
    info: &mut RunInfo,
    target: &TargetSpec,
    driver: &dyn Target,
    probe: &Probe,
) -> anyhow::Result<()> {
    let mut facts = driver.facts().with_context(|| {
        format!(
            "target \"{}\": reading its version and configuration",
            target.name
        )
    })?;
    // With the settings, so the report's "settings that differ" shows a
    // comparison of table options as what it is.
    if let Some(o) = &target.table_options {
        facts
            .config
            .insert("relbench.table_options".into(), o.clone());
    }
    // A preloaded allocator, as the server's memory map shows it: a
    // comparison of allocators must not rest on an LD_PRELOAD that did
    // not take.
    if let crate::plan::Access::Managed(m) = &target.access {
        if let Some(lib) = &m.malloc {
            let maps = driver
                .server_pid()
                .and_then(|pid| std::fs::read_to_string(format!("/proc/{pid}/maps")).ok());
            let name = lib.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let seen = match maps {
                Some(m)
                    if m.lines()
                        .any(|l| l.ends_with(name) || l.contains(&format!("/{name}"))) =>
                {
                    "loaded"
                }
                Some(_) => "NOT in the server's memory map",
                None => "not checked: the server's memory map could not be read",
            };
            facts.config.insert(
                "relbench.malloc".into(),
                format!("{} ({seen})", lib.display()),
            );
        }
    }
    let record = TargetRecord {
        name: target.name.clone(),
        engine: target.engine,
        facts,
        filesystem: driver.data_dir().and_then(|d| host::filesystem_of(&d)),
        devices: probe.devices.as_ref().ok().cloned(),
        devices_not_measured: probe.devices.as_ref().err().cloned(),
    };
    match info.targets.iter_mut().find(|t| t.name == target.name) {
        Some(t) => *t = record,
        None => info.targets.push(record),
    }
    Ok(())
}

fn human_secs(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}
