//! The runner: walks a schedule's executions in order, target by target,
//! and writes each step's result the moment it ends. Sequencing only: it
//! opens each target through `db::open`, runs each step through one shape
//! ([`step::measure_step`]), and owns the lifecycle around them (starting
//! afresh before a step that creates tables, `--resume`, `--confirm`, a
//! server that dies, and stopping cleanly on Ctrl-C: the step in flight is
//! dropped, everything written before it stays). Run, resume and confirm
//! all go through the one loop in `sequence.rs`. It asks the plan nothing
//! (every execution carries what it needs) and names no engine and no
//! workload.

mod barrier;
mod confirm;
mod events;
mod hooks;
mod json_lines;
mod observe;
mod profile;
mod progress;
mod record;
mod restart;
mod sequence;
mod session;
mod step;

pub use confirm::{ConfirmOptions, Need};
pub use events::{Event, Sink, Tone};
pub use json_lines::JsonLines;
pub use progress::Progress;
pub use session::Session;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::db::{ErrorKind, Secrets, Target};
use crate::measure::Unmeasured;
use crate::metrics::{self, host, Probe};
use crate::plan::schedule::{Execution, Schedule, Work};
use crate::results::{self, RunInfo, RunStatus, TargetRecord};
use events::Sinks;

/// Set by the Ctrl-C handler; every loop that can take long checks it
/// (kept on the ground floor, where a workload's long command reads it).
pub use crate::util::INTERRUPT;

pub struct RunOptions {
    /// The plan compiled: what to run.
    pub schedule: Schedule,
    /// The run's record as it starts (the plan, its text and source, the
    /// host); on `--resume` the record on disk is kept and its plan must
    /// be this one.
    pub record: RunInfo,
    /// Relative paths in the plan are resolved against this directory.
    pub plan_dir: PathBuf,
    pub out: PathBuf,
    pub resume: bool,
    /// A run resumed on another machine than it ran on goes on there,
    /// recorded as a second host (`--new-host`), rather than refused.
    pub new_host: bool,
    /// URL targets' passwords, taken from the environment.
    pub secrets: Secrets,
}

#[derive(Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// Every step ran; some may have failed (their results say why).
    Complete {
        /// Steps that ran and failed.
        failed_steps: usize,
        /// Steps that did not run (after a server died, or the step that
        /// creates the tables failed).
        not_run: usize,
        /// Targets whose server did not start (none of their steps ran).
        not_started: Vec<String>,
    },
    Interrupted,
}

impl RunEnd {
    /// Every step ran and none failed.
    pub fn clean() -> RunEnd {
        RunEnd::Complete {
            failed_steps: 0,
            not_run: 0,
            not_started: Vec::new(),
        }
    }
}

pub(crate) fn interrupted() -> bool {
    INTERRUPT.load(Ordering::Relaxed)
}

/// Runs the plan in a session of its own, with no rounds after it;
/// `more` (the terminal's progress, the caller's own) hear the run's
/// events after the step files and the record.
pub fn run(opts: &RunOptions, more: Vec<&mut dyn Sink>) -> anyhow::Result<RunEnd> {
    let mut session = Session::start(opts, more)?;
    let end = session.run(opts)?;
    session.end(&end)?;
    Ok(end)
}

/// Runs the set-up statements of the plan's own workload before the first
/// step that uses it, as the benchmark user (the tables are its own),
/// outside the measured window; their time goes in the step's notes.
pub(super) fn set_up_workload(
    db: &dyn Target,
    e: &Execution,
    done: &mut Vec<String>,
    notes: &mut std::collections::BTreeMap<String, String>,
) -> anyhow::Result<()> {
    let Work::Workload(w) = &e.work else {
        return Ok(());
    };
    let name = e.id.at.step.name();
    if done.iter().any(|d| d == name) {
        return Ok(());
    }
    done.push(name.to_string());
    let statements = w.workload.setup(db.dialect());
    if statements.is_empty() {
        return Ok(());
    }
    let t0 = Instant::now();
    let mut conn = db
        .connect()
        .with_context(|| format!("setting up workload {name}"))?;
    for sql in statements {
        conn.batch(sql)
            .with_context(|| format!("setting up workload {name}: {sql}"))?;
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

/// Empties a target before a sequence that creates its tables.
fn remove_earlier_data(
    driver: &dyn Target,
    target: &crate::db::spec::TargetSpec,
) -> anyhow::Result<()> {
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
fn wait_serving(db: &dyn Target, sinks: &mut Sinks, name: &str) {
    let t0 = Instant::now();
    let mut said = false;
    while db.health().is_none() && t0.elapsed() < SERVING_WAIT && !interrupted() {
        match db.connect() {
            Ok(_) => return,
            Err(e) if e.kind != ErrorKind::Connection => return,
            Err(_) => {}
        }
        if !said {
            sinks.line(&format!(
                "[{name}] waiting for the server to accept connections again"
            ));
            said = true;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Which of a run's hosts this machine is, as a resumed run or a
/// confirmation goes on: `None` the one it started on, `Some(k)` its k-th
/// later one (`RunInfo::later_hosts`). A machine it has not run on is
/// refused — its windows would be read as the first machine's, against a
/// base measured there (regression: a shard requeued on another node
/// mixed two machines' windows under one host, silently) — unless
/// `new_host`, which records it.
pub(crate) fn host_place(
    info: &mut RunInfo,
    now: &host::HostFacts,
    new_host: bool,
    out: &std::path::Path,
) -> anyhow::Result<Option<u32>> {
    if info.host.same_machine(now) {
        return Ok(None);
    }
    if let Some(k) = info.later_hosts.iter().position(|h| h.same_machine(now)) {
        return Ok(Some(k as u32 + 1));
    }
    if new_host {
        info.later_hosts.push(now.clone());
        return Ok(Some(info.later_hosts.len() as u32));
    }
    let mut how = now.differences(&info.host);
    if now.hostname != info.host.hostname {
        how.insert(
            0,
            format!("host {} against {}", now.hostname, info.host.hostname),
        );
    }
    bail!(
        "the run in {} was measured on {} and this is another machine ({}): its windows would be read as \
         one machine's. Run it on {} again, start it in a new directory, or add --new-host to go on here, \
         recorded as a second host whose results are compared only with the base measured on it",
        out.display(),
        info.host.hostname,
        how.join("; "),
        info.host.hostname
    )
}

/// Checks that the results directory is new, or that `--resume`
/// continues the same plan, and returns the run's record.
fn prepare_out_dir(opts: &RunOptions) -> anyhow::Result<RunInfo> {
    let out = &opts.out;
    let run_json = out.join(results::RUN_FILE);
    if opts.resume {
        let info = results::read_run_info(out)
            .with_context(|| format!("nothing to resume in {}", out.display()))?;
        if info.plan != opts.record.plan {
            bail!(
                "the plan differs from the one the run in {} started with; resume it without a plan \
                 (`relbench run --resume --out {}`) or start a new run",
                out.display(),
                out.display()
            );
        }
        return Ok(info);
    }
    if run_json.exists() {
        let finished = results::read_run_info(out)
            .ok()
            .filter(|i| i.status == RunStatus::Complete);
        if let Some(info) = finished {
            bail!(
                "{} holds a finished run (started {}); pick a new directory with --out, \
                 add repeats where it could not judge with `relbench run --confirm {}`, \
                 or write its report again with `relbench report {}`",
                out.display(),
                info.started,
                out.display(),
                out.display()
            );
        }
        bail!(
            "{} already holds a run that did not finish; finish it with `relbench run --resume --out {}`, or pick a new directory with --out",
            out.display(),
            out.display()
        );
    }
    Ok(opts.record.clone())
}

/// What the sampler reads for a target: the devices under its data and its
/// server's processes.
fn probe_of(driver: &dyn Target) -> Probe {
    let devices = if !driver.runs_here() {
        Err(Unmeasured::new("the server runs on another host"))
    } else {
        match driver.data_dir() {
            Some(d) => metrics::device::devices_of(&d),
            None => Err(Unmeasured::new(
                "relbench does not know where a server it did not start keeps its data",
            )),
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

/// What a target is, as its opened server says: version, settings, the
/// allocator it preloaded, its filesystem and devices.
fn target_record(
    target: &crate::db::spec::TargetSpec,
    driver: &dyn Target,
    probe: &Probe,
) -> anyhow::Result<TargetRecord> {
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
    if let crate::db::spec::Access::Managed(m) = &target.access {
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
    // The build, as its running binary says: two builds of one version
    // are not one target.
    if let (crate::db::spec::Access::Managed(_), Some(pid)) = (&target.access, driver.server_pid())
    {
        facts.config.extend(crate::metrics::build::provenance(pid));
    }
    let record = TargetRecord {
        name: target.name.clone(),
        engine: target.engine,
        facts,
        filesystem: driver.data_dir().and_then(|d| host::filesystem_of(&d)),
        devices: probe.devices.as_ref().ok().cloned(),
        devices_not_measured: probe.devices.as_ref().err().map(|e| e.to_string()),
    };
    Ok(record)
}
