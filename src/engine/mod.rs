//! The load generator: one OS thread and one connection per client, a shared
//! start, warm-up excluded from the figures, stop by time or by event count.
//!
//! Threads share nothing on the hot path but a relaxed per-thread progress
//! counter (read by the progress display) and the interrupt flag; everything
//! measured lives in each thread's [`Recorder`](crate::measure::Recorder) and is merged at the end.
//!
//! Three parts: [`run`] coordinates (sets the clients up, starts them
//! together, keeps the sampler on the measured window, reports progress,
//! merges); `client` is one connection's loop; `pacer` is the open-loop
//! schedule of a connection with a fixed rate.

mod client;
mod pacer;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::db::Driver;
use crate::measure::{merge, Merged};
use crate::metrics;
use crate::plan::Stop;
use crate::workload::{Role, Scale, Workload};

/// A client that fails this many events in a row stops: the step cannot
/// measure anything (a missing table, a server gone) and spinning on errors
/// would only hide that.
const MAX_CONSECUTIVE_FAILURES: u32 = 1000;

pub struct StepSpec<'a> {
    pub driver: &'a dyn Driver,
    /// Each client runs one connection per [`Workload::roles`] entry.
    pub workload: &'a dyn Workload,
    pub scale: Scale,
    pub clients: u32,
    pub warmup: Duration,
    pub stop: Stop,
    pub seed: u64,
    pub interrupt: &'a AtomicBool,
    /// What the sampler reads beside the step.
    pub probe: &'a metrics::Probe,
    /// Open loop: events per second across all clients, each client's
    /// share started on its own schedule (a workload with one role only).
    pub rate: Option<f64>,
    /// A new connection after every event (sysbench's `--reconnect`).
    pub reconnect: bool,
    /// Statements sent as text, not prepared (sysbench's
    /// `--db-ps-mode=disable`).
    pub plain: bool,
    /// Run only this share of the clients (the others run in other
    /// processes, each client with the number and seed it has in one).
    pub share: Option<crate::plan::ClientShare>,
    /// Called once every connection here is set up, before the shared
    /// start: waits for the other shares' processes (an error aborts the
    /// step with its message).
    pub rendezvous: Option<&'a (dyn Fn() -> anyhow::Result<()> + Sync)>,
}

/// What the progress display is told a few times a second.
pub struct Live {
    pub elapsed: Duration,
    /// Warm-up plus duration, when the step stops by time.
    pub total: Option<Duration>,
    pub warming_up: bool,
    /// Time since the measured window began (zero while warming up): what
    /// a rate of the measured events is over.
    pub window: Duration,
    /// Events measured so far.
    pub events: u64,
}

/// The name of every client thread (as `/proc/PID/task/TID/comm` shows it).
pub const CLIENT_THREAD: &str = "rb-client";

/// The measured window's edges, as the coordinator passes them: what a
/// profiler follows so that it covers the window and nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    /// The window's first reading was just taken.
    Opened,
    /// Its last one was.
    Closed,
}

/// The figures of one step.
#[derive(Debug)]
pub struct Measured {
    /// Length of the measured window.
    pub secs: f64,
    pub merged: Merged,
    /// What the sampler saw over the measured window.
    pub sampled: metrics::Sampled,
    /// Why the step stopped before its end, when it did.
    pub aborted: Option<String>,
}

#[repr(align(64))]
#[derive(Default)]
struct Padded(AtomicU64);

/// What the coordinator and the client threads share.
struct Shared<'a> {
    spec: &'a StepSpec<'a>,
    roles: Vec<Role>,
    /// Per thread: its number among the whole step's threads (client ×
    /// roles + role), which differs when this process runs a share.
    global: Vec<usize>,
    /// Per thread: whether its events count (its role is measured).
    measured: Vec<bool>,
    /// Each client's state shared by its connections.
    client_state: Vec<Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>>,
    table_options: String,
    classes: Vec<&'a str>,
    class_series: bool,
    expected_secs: usize,
    /// Events measured so far, per thread, for the progress display.
    counters: Vec<Padded>,
    /// Failed events in the window, all threads: a step whose events fail
    /// is not waited on for one to succeed.
    failed_any: std::sync::atomic::AtomicU64,
    ready: Barrier,
    go: Barrier,
    start: OnceLock<Instant>,
    /// Set by a client whose set-up failed: the others do not start.
    abort: AtomicBool,
    /// Threads that have left their loop.
    done: AtomicUsize,
    /// Measured connections still running: the others stop when it is 0.
    measured_left: AtomicUsize,
    /// Set once the sampler has taken its last reading.
    closed: AtomicBool,
    setup_error: Mutex<Option<String>>,
}

/// Runs one step: every client's connections from a shared start, the
/// sampler over the measured window, until the step's stop.
/// `window` hears the measured window open and close.
pub fn run(
    spec: &StepSpec<'_>,
    live: &mut dyn FnMut(&Live),
    window: &mut dyn FnMut(Edge),
) -> Measured {
    let mut roles = spec.workload.roles(&spec.scale);
    if let (Some(rate), [role]) = (spec.rate, roles.as_mut_slice()) {
        role.rate = Some(rate / f64::from(spec.clients.max(1)));
    }
    let meta = spec.workload.meta();
    // One thread per client and role: client c's role r is thread
    // c × roles + r (of this process's clients, when it runs a share).
    let here: Vec<usize> = match spec.share {
        Some(s) => s.clients(spec.clients).map(|c| c as usize).collect(),
        None => (0..spec.clients as usize).collect(),
    };
    let n = here.len() * roles.len();
    let global: Vec<usize> = (0..n)
        .map(|i| here[i / roles.len()] * roles.len() + i % roles.len())
        .collect();
    let measured: Vec<bool> = (0..n).map(|i| roles[i % roles.len()].measured).collect();
    let measured_n = measured.iter().filter(|m| **m).count().max(1);
    let sh = Shared {
        spec,
        client_state: spec.workload.shared(&spec.scale, spec.clients),
        table_options: spec.driver.table_options(),
        classes: meta.classes,
        class_series: meta.class_series,
        expected_secs: match spec.stop {
            Stop::Time(d) => d.as_secs() as usize + 1,
            Stop::Events(_) => 60,
        },
        counters: (0..n).map(|_| Padded::default()).collect(),
        failed_any: std::sync::atomic::AtomicU64::new(0),
        ready: Barrier::new(n + 1),
        go: Barrier::new(n + 1),
        start: OnceLock::new(),
        abort: AtomicBool::new(false),
        done: AtomicUsize::new(0),
        measured_left: AtomicUsize::new(measured_n),
        closed: AtomicBool::new(false),
        setup_error: Mutex::new(None),
        roles,
        global,
        measured,
    };

    let (recorders, abort_reasons, secs, sampled) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let sh = &sh;
                // Named, so that a profile of an embedded engine follows
                // the clients alone (`CLIENT_THREAD`).
                std::thread::Builder::new()
                    .name(CLIENT_THREAD.into())
                    .spawn_scoped(s, move || client::thread(sh, i))
                    .expect("starting a client thread")
            })
            .collect();
        let sampled = coordinate(&sh, n, live, window);
        let mut recs = Vec::with_capacity(n);
        let mut reasons = Vec::new();
        let window = *sh.start.get().expect("start is set") + spec.warmup;
        let mut last_finish = window;
        for (h, m) in handles.into_iter().zip(&sh.measured) {
            let (rec, reason, finished) = h.join().expect("client thread panicked");
            recs.push(rec);
            reasons.extend(reason);
            if *m {
                last_finish = last_finish.max(finished);
            }
        }
        // The window runs until the last measured event ends: an event
        // that starts before the step's end counts in full, so the time it
        // took counts too (a 21 s scan started at 4.9 s of a 5 s step
        // would otherwise be credited to 5 s).
        let ran = last_finish.saturating_duration_since(window).as_secs_f64();
        let secs = match spec.stop {
            Stop::Time(d) => d.as_secs_f64().max(ran),
            Stop::Events(_) => ran,
        };
        (recs, reasons, secs, sampled)
    });

    let mut aborted = sh
        .setup_error
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    if aborted.is_none() && !abort_reasons.is_empty() {
        aborted = Some(abort_reasons.join("; "));
    }
    Measured {
        secs,
        merged: merge(&sh.classes, &recorders, &sh.measured),
        sampled,
        aborted,
    }
}

/// The coordinator's part while the clients run: release them together,
/// keep the sampler on the measured window (it starts when the warm-up
/// ends and takes its last reading when the window does), and tell the
/// progress display a few times a second. Returns what the sampler saw.
fn coordinate(
    sh: &Shared,
    n: usize,
    live: &mut dyn FnMut(&Live),
    edge: &mut dyn FnMut(Edge),
) -> metrics::Sampled {
    let spec = sh.spec;
    sh.ready.wait();
    // The other shares' processes: every connection of every share is set
    // up before any starts, so their windows begin together.
    if let Some(meet) = spec.rendezvous {
        if let Err(why) = meet() {
            let mut slot = sh.setup_error.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert(format!("{why:#}"));
            sh.abort.store(true, Ordering::Relaxed);
        }
    }
    let t0 = Instant::now();
    sh.start.set(t0).expect("start is set once");
    sh.go.wait();
    let window = t0 + spec.warmup;
    let total = match spec.stop {
        Stop::Time(d) => Some(spec.warmup + d),
        Stop::Events(_) => None,
    };
    // The window's first reading is taken here, synchronously, when the
    // window begins (a coordinator that woke late counts as late), and
    // its last one at its end: every window has both.
    let mut sampler: Option<metrics::Sampler> = None;
    let mut sampled = None;
    // Set once the window's last reading is taken (or the measured
    // clients finished before the window began): no window opens again.
    let mut closed = false;
    while sh.done.load(Ordering::Relaxed) < n {
        let now = Instant::now();
        let finished = sh.measured_left.load(Ordering::Relaxed) == 0;
        if !closed && !finished && sampler.is_none() && now >= window {
            sampler = Some(metrics::Sampler::start(spec.probe.clone(), window));
            edge(Edge::Opened);
        }
        // The measured window ends when the last measured event does (an
        // event in flight at the step's end finishes and counts): the
        // sampler's last snapshot follows it, so the costs cover the same
        // window as the throughput.
        if finished && !closed {
            closed = true;
            if let Some(s) = sampler.take() {
                sampled = Some(s.finish());
                edge(Edge::Closed);
            }
        }
        // Once the clients may be finishing (past the step's end, or a
        // step that stops by event count), a short tick lets the last
        // snapshot follow the last event closely.
        let tick = match total {
            Some(tot) if now < t0 + tot => Duration::from_millis(200),
            _ => Duration::from_millis(20),
        };
        let events = sh
            .counters
            .iter()
            .zip(&sh.measured)
            .filter(|(_, m)| **m)
            .map(|(c, _)| c.0.load(Ordering::Relaxed))
            .sum();
        live(&Live {
            elapsed: now - t0,
            total,
            warming_up: now < window,
            window: now.saturating_duration_since(window),
            events,
        });
        // Sleep to the next tick, but wake for the window's end so the
        // sampler's last snapshot closes the measured window closely.
        let mut next = now + tick;
        if let Some(end) = total.map(|t| t0 + t) {
            if end > now && end < next {
                next = end;
            }
        }
        // And for the window's start, to take its first reading.
        if !closed && sampler.is_none() && window > now && window < next {
            next = window;
        }
        std::thread::sleep(
            next.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1)),
        );
    }
    if let Some(s) = sampler.take() {
        sampled = Some(s.finish());
        edge(Edge::Closed);
    }
    sh.closed.store(true, Ordering::Release);
    sampled.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{Conn, DbResult, Dialect, ErrorKind};
    use crate::measure::Recorder;
    use crate::workload::{dist, Client, ClientCtx, Group, Meta, ShownStatement};

    /// A workload whose event sleeps for a fixed time: the clock is all
    /// it measures.
    struct Sleeper(Duration);

    struct SleepClient(Duration);

    impl Client for SleepClient {
        fn event(&mut self, _: &mut dyn Conn, _: &mut Recorder) -> Result<(), ErrorKind> {
            std::thread::sleep(self.0);
            Ok(())
        }
    }

    impl Workload for Sleeper {
        fn meta(&self) -> Meta<'_> {
            Meta {
                name: "sleep",
                group: Group::Range,
                duration: crate::workload::DurationClass::Read,
                about: "sleeps",
                transactional: false,
                classes: vec!["sleep"],
                warms_up: false,
                creates_tables: false,
                removes_rows: false,
                class_series: false,
            }
        }
        fn statements(&self, _: Dialect) -> Vec<ShownStatement<'_>> {
            Vec::new()
        }
        fn rows_per_event(&self, _: &Scale) -> Option<u64> {
            None
        }
        fn client(
            &self,
            _: &mut dyn Conn,
            _more: Vec<Box<dyn Conn>>,
            _: Dialect,
            _: &Scale,
            _: dist::Rng,
            _: &ClientCtx,
        ) -> DbResult<Box<dyn Client>> {
            Ok(Box::new(SleepClient(self.0)))
        }
    }

    /// One client running events of `event` for a step of one second.
    fn one_second_of(event: Duration) -> Measured {
        step_of(event, Duration::ZERO, Duration::from_secs(1))
    }

    /// One client running events of `event` after `warmup`, for `window`.
    fn step_of(event: Duration, warmup: Duration, window: Duration) -> Measured {
        let dir = tempfile::tempdir().unwrap();
        let driver = crate::db::sqlite::SqliteDriver::new(dir.path().join("t.db"), vec![]);
        let interrupt = AtomicBool::new(false);
        let probe = metrics::Probe {
            devices: Err(crate::measure::Unmeasured::new("test")),
            server_pid: None,
            server_elsewhere_here: false,
        };
        let w = Sleeper(event);
        let spec = StepSpec {
            driver: &driver,
            workload: &w,
            scale: Scale::probe(),
            clients: 1,
            warmup,
            stop: Stop::Time(window),
            rate: None,
            reconnect: false,
            plain: false,
            seed: 1,
            interrupt: &interrupt,
            probe: &probe,
            share: None,
            rendezvous: None,
        };
        run(&spec, &mut |_| {}, &mut |_| {})
    }

    /// Regression: an event in flight at the step's end counted in full
    /// while the window stayed at the step's duration (14 scans credited to
    /// a 5 s window that really lasted 26 s).
    #[test]
    fn an_event_in_flight_at_the_end_extends_the_window() {
        // Events of 700 ms: the second starts at 0.7 s and ends at 1.4 s.
        let m = one_second_of(Duration::from_millis(700));
        assert_eq!(m.merged.events, 2);
        assert!(
            m.secs >= 1.39,
            "window {} s for events ending at 1.4 s",
            m.secs
        );
        // The sampler covers the same window (its readings follow the last
        // event within a tick).
        let sampled = m.sampled.window().secs;
        assert!(sampled >= 1.35, "sampler window {sampled} s");
    }

    /// Regression: a step failed with "no event completed in the measured
    /// window" when a stall held every client across a short window (a
    /// busy machine, an fsync): the window goes on until an event has both
    /// started and finished in it.
    #[test]
    fn a_window_no_event_completed_in_goes_on_until_one_does() {
        // Events of 400 ms from t = 0, a window from 50 to 150 ms: the first
        // event straddles it, the second (0.4 to 0.8 s) is measured.
        let m = step_of(
            Duration::from_millis(400),
            Duration::from_millis(50),
            Duration::from_millis(100),
        );
        assert_eq!(m.merged.events, 1);
        assert!(
            (0.7..2.0).contains(&m.secs),
            "window {} s for an event ending at 0.8 s",
            m.secs
        );
    }

    /// Regression: scan throughput moved in steps of one table's rows per
    /// window (4 scans against 24 read as ×0.17): whole events over the
    /// nominal window. Over the window they really took, the rate is the
    /// events' own.
    #[test]
    fn scan_throughput_is_not_quantised_to_whole_scans_per_window() {
        // Scans of 400 ms: three start in the second (0, 0.4, 0.8 s) and
        // the last ends at 1.2 s, so 2.5 a second, not 3.
        let m = one_second_of(Duration::from_millis(400));
        assert_eq!(m.merged.events, 3);
        let rate = m.merged.events as f64 / m.secs;
        assert!((rate - 2.5).abs() < 0.1, "{rate} scans/s");
    }
}
