//! The runner: walks a plan's step executions in order, target by target,
//! and writes each step's result the moment it ends.
//!
//! It owns the lifecycle around the engine: resetting and removing the data,
//! loading, settling, `--resume`, and stopping cleanly on Ctrl-C (the step
//! in flight is dropped; everything written before it stays).

mod progress;

pub use progress::Progress;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::db::mysql::{wire, MysqlDriver};
use crate::db::postgres::{wire as pgwire, PgDriver};
use crate::db::server::{self, ServerSpec};
use crate::db::url::ServerUrl;
use crate::db::{sqlite::SqliteDriver, Driver, EngineKind};
use crate::engine::{self, StepSpec};
use crate::metrics::{self, host, Probe, Sampled, Sampler};
use crate::plan::{Access, Execution, Managed, Plan, StepKind, Stop, TargetSpec};
use crate::results::{
    self, CounterDeltas, RunInfo, RunStatus, StepKindRecord, StepMetrics, StepResult, TargetRecord,
    Unit, SCHEMA_VERSION,
};
use crate::util::{unix_now, utc_iso};
use crate::workload::{sysbench, Group, Scale};
use crate::Interrupted;

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

fn interrupted() -> bool {
    INTERRUPT.load(Ordering::Relaxed)
}

pub fn run(opts: &RunOptions, ui: &mut Progress) -> anyhow::Result<RunEnd> {
    let out = &opts.out;
    let mut info = prepare_out_dir(opts)?;
    let plan = &opts.plan;
    let execs = plan.executions();
    let done = |e: &Execution| {
        out.join(results::step_file(
            &plan.targets[e.target].name,
            e.repeat,
            e.seq,
            &e.step.label(),
            e.clients,
        ))
        .exists()
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
            let driver = match make_driver(target, opts, ui) {
                Ok(d) => d,
                Err(err) if target.engine.is_server() => {
                    // The server would not start: record it against the
                    // target's first step left and go on with the others.
                    let e = mine.iter().find(|e| !done(e)).expect("a step is left");
                    let mut r = blank_result(target, e, StepKindRecord::Load);
                    r.failed = Some(format!("{err:#}"));
                    ui.warn(&format!("[{}] FAILED to start: {err:#}", target.name));
                    results::write_atomic(&out.join(r.file_name()), &r)?;
                    failed_steps += 1;
                    continue;
                }
                Err(err) => return Err(err),
            };
            let started = mine.iter().any(|e| done(e));
            // The first step creates the tables: sysbench's load, or the
            // Insert Benchmark's l.i0.
            let loads = plan.steps.first().is_some_and(|s| {
                s.kind == StepKind::Load || s.workload().is_some_and(|w| w.creates_tables())
            });
            if !loads && !driver.has_data() {
                bail!(
                    "target \"{}\": the plan has no \"load\" step, so it runs on tables that exist already, \
                     but sbtest1 is not there; put \"load\" first in `steps`",
                    target.name
                );
            }
            if !started && loads {
                driver.reset().with_context(|| {
                    format!(
                        "target \"{}\": removing the data of an earlier run; check that its `path` names a file relbench may replace",
                        target.name
                    )
                })?;
            } else if !plan.runs_insert_benchmark() && !driver.has_data() {
                bail!(
                    "cannot resume target \"{}\": its data ({}) is gone, and the steps left depend on it; \
                     start a new run (without --resume, or with another --out)",
                    target.name,
                    driver.data_dir().map_or("?".into(), |d| d.display().to_string())
                );
            }
            let probe = probe_of(driver.as_ref());
            record_target(&mut info, target, driver.as_ref(), &probe)?;
            results::write_atomic(&out.join("run.json"), &info)?;

            let mut gone: Option<String> = None;
            for e in mine {
                if done(e) {
                    continue;
                }
                if let Some(why) = &gone {
                    ui.warn(&format!(
                        "[{}] skipping {}: {why}",
                        target.name,
                        e.step.label()
                    ));
                    continue;
                }
                let result = match run_step(plan, target, driver.as_ref(), &probe, e, ui) {
                    Ok(r) => r,
                    Err(err) if err.is::<Interrupted>() || interrupted() => {
                        return finish_interrupted(&mut info, out, ui);
                    }
                    Err(err) => return Err(err),
                };
                if interrupted() {
                    return finish_interrupted(&mut info, out, ui);
                }
                let mut result = result;
                if result.failed.is_some() {
                    failed_steps += 1;
                    if let Some(h) = driver.health() {
                        // The server died: say so in the step, and stop
                        // sending it work.
                        result.failed =
                            Some(format!("{}; {h}", result.failed.take().unwrap_or_default()));
                        ui.warn(&format!("[{}] {h}", target.name));
                        gone = Some("the server died".into());
                    } else if e.step.kind == StepKind::Load {
                        gone = Some("the load failed".into());
                    }
                }
                results::write_atomic(&out.join(result.file_name()), &result)?;
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

fn make_driver(
    target: &TargetSpec,
    opts: &RunOptions,
    ui: &Progress,
) -> anyhow::Result<Box<dyn Driver>> {
    let name = &target.name;
    match (&target.access, target.engine) {
        (Access::Embedded { path, pragmas }, EngineKind::Sqlite) => {
            let kept = path.is_some();
            let path = match path {
                Some(p) if p.is_absolute() => p.clone(),
                Some(p) => opts.plan_dir.join(p),
                None => opts.out.join("data").join(format!("{name}.db")),
            };
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {} for target \"{name}\"", dir.display()))?;
            }
            let d = SqliteDriver::new(path, pragmas.clone());
            Ok(Box::new(if kept { d.keeping() } else { d }))
        }
        (Access::Managed(m), EngineKind::Mysql | EngineKind::Mariadb) => {
            let spec = server_spec(target, m, opts);
            ui.line(&format!(
                "[{name}] starting the server from {} (datadir {})",
                m.basedir.display(),
                spec.datadir.display()
            ));
            let d = MysqlDriver::managed(
                target.engine,
                spec,
                m.socket,
                target.storage_engine.clone(),
                m.datadir.is_none(),
            )?;
            Ok(Box::new(d))
        }
        (Access::Url { url, password_env }, EngineKind::Mysql | EngineKind::Mariadb) => {
            let u = ServerUrl::parse(url, target.engine)
                .map_err(|e| anyhow::anyhow!("target \"{name}\": {e}"))?;
            let password = password_of(name, password_env)?;
            let address = match &u.socket {
                Some(s) => wire::Address::Socket(s.clone()),
                None => wire::Address::Tcp {
                    host: u.host.clone(),
                    port: u.port.unwrap_or(3306),
                },
            };
            let opts = wire::Opts {
                address,
                user: u.user.clone(),
                password,
                database: Some(u.database.clone().unwrap_or_else(|| "sbtest".into())),
            };
            Ok(Box::new(MysqlDriver::remote(
                target.engine,
                opts,
                target.storage_engine.clone(),
            )))
        }
        (Access::Managed(m), EngineKind::Postgres) => {
            let spec = server_spec(target, m, opts);
            ui.line(&format!(
                "[{name}] starting the server from {} (datadir {}, as user {})",
                m.basedir.display(),
                spec.datadir.display(),
                spec.user.as_deref().unwrap_or("?")
            ));
            Ok(Box::new(PgDriver::managed(
                spec,
                m.socket,
                m.datadir.is_none(),
            )?))
        }
        (Access::Url { url, password_env }, EngineKind::Postgres) => {
            let u = ServerUrl::parse(url, target.engine)
                .map_err(|e| anyhow::anyhow!("target \"{name}\": {e}"))?;
            let port = u.port.unwrap_or(5432);
            let address = match &u.socket {
                Some(dir) => pgwire::Address::Socket {
                    dir: dir.clone(),
                    port,
                },
                None => pgwire::Address::Tcp {
                    host: u.host.clone(),
                    port,
                },
            };
            Ok(Box::new(PgDriver::remote(pgwire::Opts {
                address,
                user: u.user.clone(),
                password: password_of(name, password_env)?,
                database: u.database.clone().unwrap_or_else(|| "sbtest".into()),
            })))
        }
        (_, engine) => bail!("target \"{name}\": engine {engine} has no driver in this build"),
    }
}

/// Starts one target's managed server as a run would, says where it
/// listens, and keeps it until stdin closes or Ctrl-C; then stops it
/// cleanly. The datadir is kept.
pub fn serve(opts: &RunOptions, name: &str) -> anyhow::Result<()> {
    let Some(target) = opts.plan.targets.iter().find(|t| t.name == name) else {
        let names: Vec<&str> = opts.plan.targets.iter().map(|t| t.name.as_str()).collect();
        bail!(
            "the plan has no target \"{name}\"; its targets are: {}",
            names.join(", ")
        );
    };
    let Access::Managed(m) = &target.access else {
        bail!("target \"{name}\" is not a managed server (it has no `basedir`)");
    };
    let spec = server_spec(target, m, opts);
    let mut srv = server::ManagedServer::start(spec, server::flavor_for(target.engine)?)?;
    println!(
        "ready target={name} port={} socket={} pid={} datadir={} log={}",
        srv.rt.port,
        srv.rt.socket.display(),
        srv.pid().unwrap_or(0),
        srv.rt.datadir.display(),
        srv.rt.log.display()
    );
    use std::io::Write as _;
    std::io::stdout().flush()?;
    let closed = std::sync::Arc::new(AtomicBool::new(false));
    let c = closed.clone();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        c.store(true, Ordering::Relaxed);
    });
    while !closed.load(Ordering::Relaxed) && !interrupted() {
        if let Some(h) = srv.health() {
            bail!(h);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    srv.stop()?;
    eprintln!(
        "stopped; the datadir is kept at {}",
        srv.rt.datadir.display()
    );
    Ok(())
}

/// The password of a URL target, from the environment variable it names.
fn password_of(name: &str, password_env: &Option<String>) -> anyhow::Result<Option<String>> {
    password_env
        .as_ref()
        .map(|v| {
            std::env::var(v).with_context(|| {
                format!("target \"{name}\": the environment variable {v} (password_env) is not set")
            })
        })
        .transpose()
}

fn server_spec(target: &TargetSpec, m: &Managed, opts: &RunOptions) -> ServerSpec {
    let mut plugins = Vec::new();
    // MyRocks must be loaded when the server starts (loading it later with
    // INSTALL SONAME crashes MariaDB 10.11), unless the config does it.
    let rocksdb = target
        .storage_engine
        .as_deref()
        .is_some_and(|e| e.eq_ignore_ascii_case("rocksdb"));
    let config_loads = m
        .config
        .as_ref()
        .and_then(|c| std::fs::read_to_string(c).ok())
        .is_some_and(|t| t.contains("ha_rocksdb"));
    if rocksdb && !config_loads && !m.args.iter().any(|a| a.contains("ha_rocksdb")) {
        plugins.push("ha_rocksdb".to_string());
    }
    ServerSpec {
        target: target.name.clone(),
        basedir: m.basedir.clone(),
        config: m.config.clone(),
        datadir: m
            .datadir
            .clone()
            .unwrap_or_else(|| absolute(&opts.out).join("data").join(&target.name)),
        port: m.port,
        // PostgreSQL refuses to run as root.
        user: m.user.clone().or_else(|| {
            // SAFETY: geteuid has no preconditions.
            let root = unsafe { libc::geteuid() } == 0;
            (target.engine == EngineKind::Postgres && root).then(|| "postgres".to_string())
        }),
        args: m.args.clone(),
        malloc: m.malloc.clone(),
        plugins,
        start_timeout: Duration::from_secs_f64(m.start_timeout_secs),
    }
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| p.to_path_buf(), |d| d.join(p))
    }
}

/// What the sampler reads for a target: the devices under its data and its
/// server's processes.
fn probe_of(driver: &dyn Driver) -> Probe {
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
    }
}

fn record_target(
    info: &mut RunInfo,
    target: &TargetSpec,
    driver: &dyn Driver,
    probe: &Probe,
) -> anyhow::Result<()> {
    let facts = driver.facts().with_context(|| {
        format!(
            "target \"{}\": reading its version and configuration",
            target.name
        )
    })?;
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

fn blank_result(target: &TargetSpec, e: &Execution, kind: StepKindRecord) -> StepResult {
    StepResult {
        schema_version: SCHEMA_VERSION,
        target: target.name.clone(),
        repeat: e.repeat,
        seq: e.seq,
        step: e.step.label(),
        kind,
        group: None,
        clients: e.clients,
        started: unix_now(),
        failed: None,
        warmup_secs: 0.0,
        secs: 0.0,
        events: 0,
        failed_events: 0,
        unit: Unit::OpsPerSec,
        rows_per_event: None,
        throughput: 0.0,
        statements: BTreeMap::new(),
        errors: BTreeMap::new(),
        error_samples: BTreeMap::new(),
        per_second: Vec::new(),
        class_seconds: BTreeMap::new(),
        sla: None,
        latency: BTreeMap::new(),
        metrics: StepMetrics::default(),
        notes: BTreeMap::new(),
    }
}

fn run_step(
    plan: &Plan,
    target: &TargetSpec,
    driver: &dyn Driver,
    probe: &Probe,
    e: &Execution,
    ui: &mut Progress,
) -> anyhow::Result<StepResult> {
    let label = format!("[{}] {} c{}", target.name, e.step.label(), e.clients);
    let before = driver.counters();
    let mut r = match &e.step.kind {
        StepKind::Load => run_load(plan, target, driver, probe, e, ui, &label),
        StepKind::Settle => run_settle(plan, target, driver, probe, e, ui, &label),
        StepKind::Workload(_) => run_workload(plan, target, driver, probe, e, ui, &label),
    }?;
    match (before, driver.counters()) {
        (None, _) | (_, None) => {
            r.notes.insert(
                "counters".into(),
                "not measured: this engine keeps no server counters".into(),
            );
        }
        (Some(Ok(b)), Some(Ok(a))) => {
            r.metrics.counters = Some(CounterDeltas::new(b.source, b.values, a.values));
        }
        (Some(Err(err)), _) | (_, Some(Err(err))) => {
            r.notes
                .insert("counters".into(), format!("not measured: {err:#}"));
        }
    }
    Ok(r)
}

fn run_load(
    plan: &Plan,
    target: &TargetSpec,
    driver: &dyn Driver,
    probe: &Probe,
    e: &Execution,
    ui: &mut Progress,
    label: &str,
) -> anyhow::Result<StepResult> {
    let mut r = blank_result(target, e, StepKindRecord::Load);
    r.group = Some(Group::Load);
    r.unit = Unit::RowsPerSec;
    r.metrics.db_bytes_before = driver.data_size();
    ui.start_step(label, None);
    let t0 = Instant::now();
    let sampler = Sampler::start(probe.clone(), t0);
    match sysbench::load::load(driver, plan.tables, plan.rows, plan.seed, &INTERRUPT) {
        Ok(o) => {
            r.secs = t0.elapsed().as_secs_f64();
            r.events = o.rows;
            r.throughput = o.rows as f64 / r.secs.max(1e-9);
            r.notes
                .insert("loader_threads".into(), o.threads.to_string());
            r.notes
                .insert("insert_secs".into(), format!("{:.3}", o.insert_secs));
            r.notes
                .insert("index_secs".into(), format!("{:.3}", o.index_secs));
            r.notes.insert(
                "rows_per_statement".into(),
                sysbench::load::ROWS_PER_STATEMENT.to_string(),
            );
            let methods: Vec<&str> = o.methods.iter().map(|m| m.name()).collect();
            r.notes.insert("load_method".into(), methods.join(", "));
            let mode = driver.load_mode();
            r.notes.insert(
                "rows_per_commit".into(),
                mode.rows_per_commit
                    .map_or_else(|| "a whole table".into(), |n| n.to_string()),
            );
            if !mode.before.is_empty() {
                r.notes
                    .insert("load_session".into(), mode.before.join("; "));
            }
        }
        Err(err) if err.is::<Interrupted>() => return Err(err),
        Err(err) => {
            r.secs = t0.elapsed().as_secs_f64();
            r.failed = Some(format!("{err:#}"));
        }
    }
    set_metrics(&mut r, driver, probe, &sampler.finish());
    r.metrics.db_bytes_after = driver.data_size();
    ui.finish_step(&step_line(label, &r), r.failed.is_some());
    Ok(r)
}

fn run_settle(
    plan: &Plan,
    target: &TargetSpec,
    driver: &dyn Driver,
    probe: &Probe,
    e: &Execution,
    ui: &mut Progress,
    label: &str,
) -> anyhow::Result<StepResult> {
    let mut r = blank_result(target, e, StepKindRecord::Settle);
    r.metrics.db_bytes_before = driver.data_size();
    let (tables, rows) = plan.tables_for_settle();
    let sleep = plan.settle.sleep(rows);
    ui.start_step(label, None);
    let t0 = Instant::now();
    // Settle has no operations to divide by, but its per-second series
    // shows the write-back and compaction it waited for.
    let sampler = Sampler::start(probe.clone(), t0);
    match driver.settle(&tables) {
        Ok(notes) => r.notes = notes,
        Err(err) => r.failed = Some(format!("{err:#}")),
    }
    r.notes.insert(
        "engine_secs".into(),
        format!("{:.3}", t0.elapsed().as_secs_f64()),
    );
    let slept = Instant::now();
    while slept.elapsed() < sleep {
        if interrupted() {
            bail!(Interrupted);
        }
        std::thread::sleep(Duration::from_millis(50).min(sleep.saturating_sub(slept.elapsed())));
    }
    r.notes
        .insert("sleep_secs".into(), format!("{:.3}", sleep.as_secs_f64()));
    r.secs = t0.elapsed().as_secs_f64();
    set_metrics(&mut r, driver, probe, &sampler.finish());
    r.metrics.db_bytes_after = driver.data_size();
    ui.finish_step(&step_line(label, &r), r.failed.is_some());
    Ok(r)
}

fn run_workload(
    plan: &Plan,
    target: &TargetSpec,
    driver: &dyn Driver,
    probe: &Probe,
    e: &Execution,
    ui: &mut Progress,
    label: &str,
) -> anyhow::Result<StepResult> {
    let w = e.step.workload().expect("validated workload");
    let mut r = blank_result(target, e, StepKindRecord::Workload);
    r.group = Some(w.group());
    let scale = Scale {
        tables: plan.tables,
        rows: plan.rows,
        // A delete step earlier in the sequence leaves holes in the ids.
        rows_may_be_missing: plan.steps[..e.seq - 1].iter().any(|s| s.name() == "delete"),
        ids: plan.distribution,
        insert: plan.insert_benchmark,
    };
    // A step with a fixed amount of work (the Insert Benchmark's loads and
    // index build) counts all of it: no warm-up, stop when it is done.
    let stop = match w.events(&scale, e.clients) {
        Some(n) => Stop::Events(n),
        None => plan.stop_for(w.duration_class()).to_stop(),
    };
    let warmup_secs = if w.warms_up() { plan.warmup_secs } else { 0.0 };
    let warmup = Duration::from_secs_f64(warmup_secs);
    r.warmup_secs = warmup_secs;
    r.rows_per_event = w.rows_per_event(&scale);
    if r.rows_per_event.is_some() {
        r.unit = Unit::RowsPerSec;
    }
    r.metrics.db_bytes_before = driver.data_size();
    ui.start_step(
        label,
        match stop {
            Stop::Time(d) => Some(warmup + d),
            Stop::Events(_) => None,
        },
    );
    let spec = StepSpec {
        driver,
        workload: w,
        scale,
        clients: e.clients,
        warmup,
        stop,
        // Each step and repeat draws its own ids, reproducibly.
        seed: plan.seed ^ ((e.seq as u64) << 32) ^ ((e.repeat as u64) << 48) ^ e.clients as u64,
        interrupt: &INTERRUPT,
        probe,
    };
    let m = engine::run(&spec, &mut |live| ui.update(live));
    if interrupted() {
        bail!(Interrupted);
    }
    r.secs = m.secs;
    r.events = m.merged.events;
    r.failed_events = m.merged.failed_events;
    let per_event = r.rows_per_event.unwrap_or(1) as f64;
    r.throughput = if m.secs > 0.0 {
        m.merged.events as f64 * per_event / m.secs
    } else {
        0.0
    };
    r.statements = m.merged.statements;
    r.errors = m.merged.errors;
    r.error_samples = m.merged.error_samples;
    r.per_second = m.merged.per_second;
    r.class_seconds = m.merged.class_seconds;
    r.latency = m.merged.latency;
    set_metrics(&mut r, driver, probe, &m.sampled);
    if let Some(rate) = crate::workload::insert::target_rate(&r.step) {
        let commit = plan.insert_benchmark.q_commit;
        r.sla = Some(sla(&r, rate, e.clients, commit));
        r.notes.insert("rows_per_commit".into(), commit.to_string());
    }
    r.failed = m.aborted.or_else(|| {
        (r.events == 0).then(|| {
            let sample = r.error_samples.values().next().cloned().unwrap_or_default();
            format!("no event completed in the measured window {sample}")
                .trim()
                .to_string()
        })
    });
    r.metrics.db_bytes_after = driver.data_size();
    ui.finish_step(&step_line(label, &r), r.failed.is_some());
    Ok(r)
}

/// The q-step's background writes against its target: rows inserted and
/// deleted over the measured window, from the statements that completed
/// (each a batch of `commit` rows).
fn sla(r: &StepResult, rate: u32, clients: u32, commit: u32) -> results::Sla {
    let rows =
        |class: &str| r.statements.get(class).copied().unwrap_or(0) as f64 * f64::from(commit);
    let per_sec = |rows: f64| if r.secs > 0.0 { rows / r.secs } else { 0.0 };
    let target = f64::from(rate) * f64::from(clients);
    let inserted = per_sec(rows("insert"));
    let achieved = inserted / target;
    results::Sla {
        rows_per_commit: commit,
        target_rows_per_sec: target,
        insert_rows_per_sec: inserted,
        delete_rows_per_sec: per_sec(rows("delete")),
        achieved,
        passed: achieved >= crate::workload::insert::SLA,
    }
}

/// The shortest window whose machine CPU (from /proc/stat ticks) is
/// reported: 25 ticks per CPU, so one tick is at most 4%.
const MIN_TICK_WINDOW_SECS: f64 = 0.25;

/// Records what the sampler saw: totals, per-op costs and the per-second
/// series; for each figure that is missing, a note that says why.
fn set_metrics(r: &mut StepResult, driver: &dyn Driver, probe: &Probe, sampled: &Sampled) {
    let w = sampled.window();
    let m = &mut r.metrics;
    // Per unit of throughput: per operation, or per row.
    let ops = r.events as f64 * r.rows_per_event.unwrap_or(1) as f64;
    let per_op = |v: f64| (ops > 0.0 && r.kind != StepKindRecord::Settle).then(|| v / ops);
    let here = driver.runs_here();
    let embedded = !driver.engine().is_server();
    m.client_cpu_secs = w.client_cpu_secs;
    m.server_cpu_secs = w.server_cpu_secs;
    m.client_cpu_us_per_op = w.client_cpu_secs.and_then(|c| per_op(c * 1e6));
    m.server_cpu_us_per_op = w.server_cpu_secs.and_then(|c| per_op(c * 1e6));
    // /proc/stat counts CPU in 10 ms ticks: a window of a few ticks per CPU
    // gives 0 or double the truth (a 12 ms l.i0 read 0 µs per row).
    let ticks_enough = w.secs >= MIN_TICK_WINDOW_SECS;
    if here && ticks_enough {
        m.cpu_us_per_op = w.system.as_ref().and_then(|s| per_op(s.busy_secs * 1e6));
    }
    if here {
        m.cs_per_op = w
            .system
            .as_ref()
            .and_then(|s| per_op(s.context_switches as f64));
    }
    if let Some(d) = &w.disk {
        m.reads_per_op = per_op(d.reads as f64);
        m.read_kb_per_op = per_op(d.read_kb);
        m.writes_per_op = per_op(d.writes as f64);
        m.write_kb_per_op = per_op(d.write_kb);
    }
    for v in [
        &mut m.cpu_us_per_op,
        &mut m.server_cpu_us_per_op,
        &mut m.client_cpu_us_per_op,
        &mut m.cs_per_op,
        &mut m.reads_per_op,
        &mut m.read_kb_per_op,
        &mut m.writes_per_op,
        &mut m.write_kb_per_op,
    ] {
        // Four significant digits: per-row figures of a scan are tiny.
        *v = v.map(|x| {
            if x == 0.0 || !x.is_finite() {
                return x;
            }
            let scale = 10f64.powi(3 - x.abs().log10().floor() as i32);
            (x * scale).round() / scale
        });
    }
    let disk_missing = w.disk.is_none();
    m.system = w.system;
    m.disk = w.disk;
    m.sampler = w.sampler;
    m.window_start = sampled.started_unix.map(|t| (t * 1e3).round() / 1e3);
    m.server_rss_peak_bytes = sampled.server_rss_peak;
    m.client_rss_peak_bytes = sampled.client_rss_peak;
    m.per_second = sampled.series.clone();

    let mut note = |k: &str, v: String| {
        r.notes.insert(k.into(), format!("not measured: {v}"));
    };
    if w.secs == 0.0 {
        note(
            "sampler",
            "the step ended before its measured window began".into(),
        );
        return;
    }
    if w.client_cpu_secs.is_none() {
        note(
            "client_cpu",
            format!(
                "the window used less than {} s of CPU",
                metrics::MIN_CPU_SECS
            ),
        );
    }
    if !embedded && w.server_cpu_secs.is_none() {
        note(
            "server_cpu",
            "the server is not a process relbench started on this machine".into(),
        );
    }
    if !here {
        note(
            "machine",
            "the server runs on another host, so this machine's CPU and context switches do not describe it".into(),
        );
    } else if !ticks_enough {
        note(
            "machine_cpu",
            format!(
                "the window ({:.0} ms) is too short for /proc/stat's 10 ms ticks; it needs {:.0} ms",
                w.secs * 1e3,
                MIN_TICK_WINDOW_SECS * 1e3
            ),
        );
    }
    if let Err(why) = &probe.devices {
        note("disk", why.clone());
    } else if disk_missing {
        note("disk", "/proc/diskstats could not be read".into());
    }
}

/// The one line a finished step leaves on the terminal.
fn step_line(label: &str, r: &StepResult) -> String {
    if let Some(f) = &r.failed {
        return format!("{label}: FAILED: {f}");
    }
    match r.kind {
        StepKindRecord::Settle => format!("{label}: {:.1} s", r.secs),
        _ => {
            let mut s = format!(
                "{label}: {} {}",
                crate::measure::units::fmt_throughput(r.throughput),
                r.unit.name()
            );
            if let Some(l) = r.latency.get("event") {
                s += &format!(", p99 {}", crate::measure::units::fmt_latency(l.p99_us));
            }
            let errors: u64 = r.errors.values().sum();
            if errors > 0 {
                s += &format!(", {errors} errors");
            }
            s
        }
    }
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
