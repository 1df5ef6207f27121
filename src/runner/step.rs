//! One step shape: [`measure_step`] owns what every step has (the result
//! record, the database size before and after, the engine's counters, the
//! progress line, the per-op costs of what the sampler saw) and runs one of
//! three bodies inside it: a bulk load, a settle, or a workload driven by
//! the engine. A body says how much work it did and hands back the
//! sampler's window; it never writes a file.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::bail;

use super::events::{Event, Sinks};
use super::observe::{self, EngineCounters, Observer, Plans, SampledWaits};
use super::{interrupted, INTERRUPT};
use crate::db::{Driver, Target};
use crate::engine::{self, StepSpec};
use crate::measure::size::DbSize;
use crate::measure::units::{fmt_latency, fmt_throughput};
use crate::metrics::costs::{self, Scope};
use crate::metrics::interference;
use crate::metrics::{Probe, Sampled, Sampler};
use crate::plan::schedule::{Execution, StepKind, Stop, Work};
use crate::results::{
    CounterDeltas, RateOutcome, StepMetrics, StepResult, Unit, RATE_MISSED_BELOW, SCHEMA_VERSION,
};
use crate::util::unix_now;
use crate::workload::maint::Maint;
use crate::workload::{self, Window};
use crate::Interrupted;

/// What a step runs against.
pub(super) struct StepCtx<'a> {
    pub db: &'a dyn Target,
    pub probe: &'a Probe,
    /// Where this process meets the other client shares, when it runs one.
    pub barrier: Option<&'a super::barrier::Barrier>,
    pub share: Option<crate::plan::schedule::ClientShare>,
    /// Where profiles' working files go, when the run profiles.
    pub profiles: Option<&'a std::path::Path>,
}

/// What a body measured: the sampler's window, and the units of work the
/// costs are divided by (`None`: a step with no operations, like settle).
struct Done<'a> {
    sampled: Sampled,
    /// What watched the window beside the clients (a workload's only):
    /// each writes its part once the window's figures are in.
    observers: Vec<Box<dyn Observer + 'a>>,
    ops: Option<f64>,
    /// How far a timed window ran past its planned length.
    overrun_secs: Option<f64>,
}

/// A result with nothing measured yet: which step, in which phase, under
/// which server settings.
pub(super) fn blank_result(e: &Execution) -> StepResult {
    StepResult {
        schema_version: SCHEMA_VERSION,
        id: e.id.clone(),
        server_settings: e.server_settings.clone(),
        // A step that fails before it runs still has its table's row.
        group: e.group,
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
        rate: None,
        latency: BTreeMap::new(),
        tallies: BTreeMap::new(),
        metrics: StepMetrics::default(),
        notes: BTreeMap::new(),
        load_methods: Vec::new(),
        retried: Vec::new(),
        client_share: None,
        profile: None,
        plans: Vec::new(),
        host: None,
    }
}

/// Runs one step execution and returns its result (a failure inside the
/// step is in the result; an error is an interruption or a broken run).
pub(super) fn measure_step<'a>(
    cx: &StepCtx<'a>,
    e: &Execution,
    sinks: &mut Sinks,
) -> anyhow::Result<StepResult> {
    let label = e.label();
    let total = match &e.work {
        Work::Workload(w) => match w.stop {
            Stop::Time(d) => Some(w.warmup + d),
            Stop::Events(_) => None,
        },
        _ => None,
    };
    sinks.tell(&Event::StepStarted {
        id: &e.id,
        label: &label,
        total,
    });
    let mut r = blank_result(e);
    let db_size_before = cx.db.data_size();
    let before = cx.db.counters(false);
    let done = match &e.work {
        Work::Load {
            tables,
            rows,
            seed,
            random_pct,
        } => load(cx, (*tables, *rows, *seed, *random_pct), &mut r)?,
        Work::Settle { tables, sleep, max } => settle(cx, &tables.names, *sleep, *max, &mut r)?,
        Work::Workload(_) => run_workload(cx, e, &mut r, sinks)?,
        Work::Maintenance { maint, tables } => maintain(cx, *maint, &tables.names, &mut r)?,
    };
    let scope = Scope {
        here: cx.db.runs_here(),
        embedded: !cx.db.engine().is_server(),
    };
    let (metrics, notes) = costs::measure(&done.sampled, done.ops, scope, &cx.probe.devices);
    r.metrics = metrics;
    let stall = done
        .overrun_secs
        .zip(r.latency.get("event").map(|l| l.p99_us / 1e6));
    let observers_cpu = done
        .observers
        .iter()
        .filter_map(|o| o.cpu_secs())
        .reduce(|a, b| a + b);
    r.metrics.interference = Some(interference::assess(
        &done.sampled,
        &r.per_second,
        r.secs,
        stall,
        observers_cpu,
    ));
    r.notes
        .extend(notes.into_iter().map(|(k, v)| (k.to_string(), v)));
    // Only a workload's window has observers, and it always counts its
    // work.
    if let Some(work) = done.ops {
        for o in done.observers {
            o.contribute(&mut r, work);
        }
    }
    match (before, cx.db.counters(false)) {
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
    record_sizes(&mut r, db_size_before, cx.db.data_size());
    sinks.tell(&Event::StepEnded {
        id: &e.id,
        line: &step_line(&label, &r),
        failed: r.failed.is_some(),
    });
    Ok(r)
}

/// The database's size before and after a step, and the apparent bytes
/// readers of schema version 3 look for.
pub(super) fn record_sizes(r: &mut StepResult, before: Option<DbSize>, after: Option<DbSize>) {
    r.metrics.db_size_before = before;
    r.metrics.db_size_after = after;
    r.metrics.db_bytes_before = before.map(|s| s.apparent);
    r.metrics.db_bytes_after = after.map(|s| s.apparent);
}

/// Creates and fills the tables (the `load` step).
fn load(
    cx: &StepCtx,
    (tables, rows, seed, random_pct): (u32, i64, u64, u8),
    r: &mut StepResult,
) -> anyhow::Result<Done<'static>> {
    r.group = Some(workload::Group::Load);
    r.unit = Unit::RowsPerSec;
    let t0 = Instant::now();
    let sampler = Sampler::start(cx.probe.clone(), t0);
    let driver: &dyn Driver = cx.db;
    match workload::load_tables(driver, tables, rows, seed, random_pct, &INTERRUPT) {
        Ok(o) => {
            r.secs = t0.elapsed().as_secs_f64();
            r.events = o.rows;
            r.throughput = o.rows as f64 / r.secs.max(1e-9);
            r.notes = o.notes(&driver.load_mode());
            r.load_methods = o.methods.clone();
        }
        Err(err) if err.is::<Interrupted>() => return Err(err),
        Err(err) => {
            r.secs = t0.elapsed().as_secs_f64();
            r.failed = Some(format!("{err:#}"));
        }
    }
    Ok(Done {
        observers: Vec::new(),
        sampled: sampler.finish(),
        ops: Some(r.events as f64),
        overrun_secs: None,
    })
}

/// The engine's settle (analyze, flush, checkpoint), then the plan's sleep.
fn settle(
    cx: &StepCtx,
    tables: &[String],
    sleep: Duration,
    max: Duration,
    r: &mut StepResult,
) -> anyhow::Result<Done<'static>> {
    let t0 = Instant::now();
    // Settle has no operations to divide by, but its per-second series
    // shows the write-back and compaction it waited for.
    let sampler = Sampler::start(cx.probe.clone(), t0);
    match cx.db.settle(tables, max) {
        Ok(notes) => r.notes = notes,
        Err(err) => r.failed = Some(format!("{err:#}")),
    }
    r.notes.insert(
        "engine_secs".into(),
        format!("{:.3}", t0.elapsed().as_secs_f64()),
    );
    // The whole step stays within the plan's max: the sleep gets what the
    // engine's own wait left of it.
    let sleep = sleep.min(max.saturating_sub(t0.elapsed()));
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
    Ok(Done {
        observers: Vec::new(),
        sampled: sampler.finish(),
        ops: None,
        overrun_secs: None,
    })
}

/// A maintenance step's statements, one after another on one privileged
/// connection, timed together (each table's time in the notes).
fn maintain(
    cx: &StepCtx,
    m: Maint,
    tables: &[String],
    r: &mut StepResult,
) -> anyhow::Result<Done<'static>> {
    let statements = m.statements(cx.db.dialect(), tables);
    let t0 = Instant::now();
    let sampler = Sampler::start(cx.probe.clone(), t0);
    if m == Maint::DropDatabase {
        match cx.db.drop_database() {
            Ok(()) => r.events = 1,
            Err(err) => r.failed = Some(format!("{}: {err:#}", statements.join("; "))),
        }
    }
    for (i, sql) in statements
        .iter()
        .enumerate()
        .filter(|_| m != Maint::DropDatabase)
    {
        if interrupted() {
            bail!(Interrupted);
        }
        let t = Instant::now();
        if let Err(err) = cx.db.admin_sql(sql, None) {
            r.failed = Some(format!("{sql}: {err:#}"));
            break;
        }
        r.events += 1;
        r.notes.insert(
            format!("statement.{:03}", i + 1),
            format!("{sql}: {:.3} s", t.elapsed().as_secs_f64()),
        );
    }
    r.secs = t0.elapsed().as_secs_f64();
    Ok(Done {
        observers: Vec::new(),
        sampled: sampler.finish(),
        ops: None,
        overrun_secs: None,
    })
}

/// A workload driven by the engine, for a time or a number of events.
fn run_workload<'a>(
    cx: &StepCtx<'a>,
    e: &Execution,
    r: &mut StepResult,
    sinks: &mut Sinks,
) -> anyhow::Result<Done<'a>> {
    let Work::Workload(run) = &e.work else {
        unreachable!("a workload step's work is a workload")
    };
    let w = run.workload.as_ref();
    r.group = Some(w.meta().group);
    let (scale, stop, warmup) = (run.scale, run.stop, run.warmup);
    let warmup_secs = warmup.as_secs_f64();
    r.warmup_secs = warmup_secs;
    r.rows_per_event = w.rows_per_event(&scale);
    if r.rows_per_event.is_some() {
        r.unit = Unit::RowsPerSec;
    }
    // The shares' processes meet once their connections are set up: the
    // warm-up, and the window after it, start together on every host.
    let met = std::sync::Mutex::new(None);
    let point = format!("{}:go", e.id);
    let meet = |b: &super::barrier::Barrier| -> anyhow::Result<()> {
        let m = b.meet(&point, true)?;
        *met.lock().unwrap_or_else(|p| p.into_inner()) = Some(m);
        Ok(())
    };
    let rendezvous = cx.barrier.map(|b| move || meet(b));
    let spec = StepSpec {
        share: cx.share,
        rendezvous: rendezvous
            .as_ref()
            .map(|f| f as &(dyn Fn() -> anyhow::Result<()> + Sync)),
        driver: cx.db,
        workload: w,
        scale,
        clients: e.id.at.clients,
        warmup,
        stop,
        seed: run.seed,
        interrupt: &INTERRUPT,
        probe: cx.probe,
        rate: run.rate.map(|r| r as f64),
        reconnect: run.reconnect,
        plain: run.plain,
    };
    let mut observers = observers(cx, e, run);
    // Both of the engine's callbacks tell the sinks, one at a time.
    let sinks = std::cell::RefCell::new(sinks);
    let server_pid = cx.db.server_pid();
    let live = &mut |live: &engine::Live| sinks.borrow_mut().tell(&Event::Live(&e.id, live));
    let m = engine::run(&spec, live, &mut |edge| {
        observe::edge(&mut observers, edge);
        sinks.borrow_mut().tell(&match edge {
            engine::Edge::Opened => Event::WindowOpened {
                id: &e.id,
                server_pid,
            },
            engine::Edge::Closed => Event::WindowClosed(&e.id),
        });
    });
    if interrupted() {
        bail!(Interrupted);
    }
    if let Some(share) = cx.share {
        let met = met.into_inner().unwrap_or_else(|p| p.into_inner());
        r.client_share = Some(crate::results::ShareStep {
            waited_secs: met.map_or(0.0, |m| m.waited.as_secs_f64()),
            clock_offset_ms: met.and_then(|m| m.clock_offset_ms),
            ..crate::results::ShareStep::new(share, e.id.at.clients)
        });
    }
    let work = figures(r, m.merged, m.secs, m.aborted, run, e);
    Ok(Done {
        sampled: m.sampled,
        observers,
        // Per unit of throughput: per operation, or per row.
        ops: Some(work),
        overrun_secs: match stop {
            Stop::Time(d) => Some((m.secs - d.as_secs_f64()).max(0.0)),
            Stop::Events(_) => None,
        },
    })
}

/// The observers of one workload step's window, in the order they open
/// (`observe::edge` closes them in reverse).
fn observers<'a>(
    cx: &StepCtx<'a>,
    e: &Execution,
    run: &crate::plan::schedule::WorkloadRun,
) -> Vec<Box<dyn Observer + 'a>> {
    let mut list: Vec<Box<dyn Observer + 'a>> = Vec::new();
    let w = run.workload.as_ref();
    if cx.db.engine().is_server() {
        let transactional = w.meta().transactional;
        list.push(Box::new(EngineCounters::new(
            cx.db,
            transactional,
            cx.share.is_some(),
        )));
        if w.explained() {
            list.push(Box::new(Plans::capture(cx.db, run)));
        }
    }
    // Its connection opened now, before the warm-up: not at the window's
    // edge.
    if let Some(s) = e.wait_sampling.and_then(|every| cx.db.sample_waits(every)) {
        list.push(Box::new(SampledWaits::new(s)));
    }
    if let Some(p) = super::profile::Profiler::new(cx.db, cx.probe, cx.profiles, e) {
        list.push(Box::new(p));
    }
    list
}

/// The window's figures from its clients' merged measurements: length,
/// events, the rate reached, throughput, statements, latencies, the SLA,
/// and why it failed when it did. The work done (events, rows per event,
/// or the rows the clients counted) is returned, the unit of its costs.
fn figures(
    r: &mut StepResult,
    merged: crate::measure::Merged,
    secs: f64,
    aborted: Option<String>,
    run: &crate::plan::schedule::WorkloadRun,
    e: &Execution,
) -> f64 {
    let w = run.workload.as_ref();
    let stop = run.stop;
    r.secs = secs;
    if let Stop::Time(d) = stop {
        let past = secs - d.as_secs_f64();
        if past > 0.05 * d.as_secs_f64() + 0.05 {
            r.notes.insert(
                "window".into(),
                format!(
                    "the window ran {past:.1} s past the step's {:.1} s to finish the events in flight (or, when none had both started and finished in it, until one had); throughput and costs are over all {:.1} s",
                    d.as_secs_f64(),
                    secs
                ),
            );
        }
    }
    r.events = merged.events;
    r.failed_events = merged.failed_events;
    if let Some(asked) = run.rate {
        let reached = if secs > 0.0 {
            merged.events as f64 / secs
        } else {
            0.0
        };
        let asked = asked as f64;
        r.rate = Some(RateOutcome {
            asked_per_sec: asked,
            reached_per_sec: reached,
            missed: reached < RATE_MISSED_BELOW * asked,
        });
    }
    let per_event = r.rows_per_event.unwrap_or(1) as f64;
    // Work done: events, rows per event, or the rows the clients counted.
    let work = if w.counts_rows() {
        r.unit = Unit::RowsPerSec;
        merged
            .tallies
            .iter()
            .filter(|(k, _)| k.ends_with("/rows"))
            .map(|(_, n)| *n as f64)
            .sum()
    } else {
        merged.events as f64 * per_event
    };
    r.throughput = if secs > 0.0 { work / secs } else { 0.0 };
    r.statements = merged.statements;
    r.errors = merged.errors;
    r.error_samples = merged.error_samples;
    r.per_second = merged.per_second;
    r.class_seconds = merged.class_seconds;
    r.latency = merged.latency;
    r.tallies = merged.tallies;
    r.sla = w.sla(
        &run.scale,
        &Window {
            clients: e.id.at.clients,
            secs: r.secs,
            statements: &r.statements,
        },
    );
    let sample = r.error_samples.values().next().cloned().unwrap_or_default();
    r.failed = aborted.or_else(|| {
        (r.events == 0).then(|| {
            format!("no event completed in the measured window {sample}")
                .trim()
                .to_string()
        })
    });
    // A step that makes the tables (LinkBench's load, the Insert
    // Benchmark's l.i0) left rows out when a batch failed: every later
    // step would run on incomplete data. (A LinkBench load whose node
    // batches MariaDB refused ended "done" with 0 of 3,000 nodes.)
    if r.failed.is_none() && r.failed_events > 0 && w.meta().creates_tables {
        r.failed = Some(format!(
            "{} of its batches failed, so the tables are incomplete: {sample}; fix what the server \
             says and `relbench run --resume --out DIR` makes them again",
            r.failed_events
        ));
    }
    work
}

/// The one line a finished step leaves on the terminal.
fn step_line(label: &str, r: &StepResult) -> String {
    if let Some(f) = &r.failed {
        return format!("{label}: FAILED: {f}");
    }
    if matches!(
        r.id.at.step.kind,
        StepKind::Settle | StepKind::Maintenance(_)
    ) {
        return format!("{label}: {:.1} s", r.secs);
    }
    let mut s = format!(
        "{label}: {} {}",
        fmt_throughput(r.throughput),
        r.unit.name()
    );
    if let Some(l) = r.latency.get("event") {
        s += &format!(", p99 {}", fmt_latency(l.p99_us));
    }
    let errors: u64 = r.errors.values().sum();
    if errors > 0 {
        s += &format!(", {errors} errors");
    }
    if let Some(x) = &r.rate {
        s += &format!(
            ", rate {} of {} asked{}",
            fmt_throughput(x.reached_per_sec),
            fmt_throughput(x.asked_per_sec),
            if x.missed { ": MISSED" } else { "" }
        );
    }
    s
}
