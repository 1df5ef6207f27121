//! The load generator: one OS thread and one connection per client, a shared
//! start, warm-up excluded from the figures, stop by time or by event count.
//!
//! Threads share nothing on the hot path but a relaxed per-thread progress
//! counter (read by the progress display) and the interrupt flag; everything
//! measured lives in each thread's [`Recorder`] and is merged at the end.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::db::Driver;
use crate::measure::{merge, Merged, Recorder};
use crate::metrics;
use crate::plan::Stop;
use crate::workload::{dist, ClientCtx, Scale, Workload};

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
}

/// What the progress display is told a few times a second.
pub struct Live {
    pub elapsed: Duration,
    /// Warm-up plus duration, when the step stops by time.
    pub total: Option<Duration>,
    pub warming_up: bool,
    /// Events measured so far.
    pub events: u64,
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

pub fn run(spec: &StepSpec<'_>, live: &mut dyn FnMut(&Live)) -> Measured {
    let roles = spec.workload.roles(&spec.scale);
    // One thread per client and role: client c's role r is thread
    // c × roles + r.
    let n = spec.clients as usize * roles.len();
    let measured: Vec<bool> = (0..n).map(|i| roles[i % roles.len()].measured).collect();
    let measured_n = measured.iter().filter(|m| **m).count().max(1);
    let shared: Vec<_> = (0..spec.clients).map(|_| spec.workload.shared()).collect();
    let table_options = spec.driver.table_options();
    let classes = spec.workload.meta().classes;
    let class_series = spec.workload.meta().class_series;
    let dialect = spec.driver.dialect();
    let expected_secs = match spec.stop {
        Stop::Time(d) => d.as_secs() as usize + 1,
        Stop::Events(_) => 60,
    };
    let counters: Vec<Padded> = (0..n).map(|_| Padded::default()).collect();
    let ready = Barrier::new(n + 1);
    let go = Barrier::new(n + 1);
    let start: OnceLock<Instant> = OnceLock::new();
    let abort = AtomicBool::new(false);
    let done = AtomicUsize::new(0);
    // Measured connections still running: the others stop when it is 0.
    let measured_left = AtomicUsize::new(measured_n);
    // Set once the sampler has taken its last reading.
    let closed = AtomicBool::new(false);
    let setup_error: Mutex<Option<String>> = Mutex::new(None);

    let (recorders, abort_reasons, secs, sampled) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (classes, counters) = (&classes, &counters);
                let (ready, go, start, abort, done, setup_error) =
                    (&ready, &go, &start, &abort, &done, &setup_error);
                let (measured_left, measured, closed) = (&measured_left, &measured, &closed);
                let n_roles = roles.len();
                let role = roles[i % n_roles];
                let ctx = ClientCtx {
                    index: (i / n_roles) as u32,
                    role: i % n_roles,
                    shared: shared[i / n_roles].clone(),
                    table_options: table_options.clone(),
                };
                s.spawn(move || {
                    let rng = dist::rng(spec.seed, i as u64);
                    let setup = spec.driver.connect().and_then(|mut conn| {
                        let client =
                            spec.workload
                                .client(conn.as_mut(), dialect, &spec.scale, rng, &ctx)?;
                        Ok((conn, client))
                    });
                    let setup = match setup {
                        Ok(x) => Some(x),
                        Err(e) => {
                            let mut slot = setup_error.lock().unwrap_or_else(|p| p.into_inner());
                            slot.get_or_insert(format!("client {}: {}", i / n_roles + 1, e.message));
                            abort.store(true, Ordering::Relaxed);
                            None
                        }
                    };
                    ready.wait();
                    go.wait();
                    let mut rec = Recorder::new(classes.len(), expected_secs);
                    if class_series {
                        rec.keep_class_seconds(classes.len());
                    }
                    let mut reason = None;
                    // The connection outlives the loop: it is closed only
                    // after the sampler's last reading (below).
                    let mut held = None;
                    if let (Some((mut conn, mut client)), false) =
                        (setup, abort.load(Ordering::Relaxed))
                    {
                        let t0 = *start.get().expect("start is set before go");
                        let window = t0 + spec.warmup;
                        let mine = measured.iter().take(i).filter(|m| **m).count() as u64;
                        let quota = match spec.stop {
                            Stop::Events(total) if role.measured => {
                                let m = measured_n as u64;
                                total / m + u64::from(mine < total % m)
                            }
                            _ => u64::MAX,
                        };
                        let end = match spec.stop {
                            Stop::Time(d) => window + d,
                            Stop::Events(_) => t0 + Duration::from_secs(365 * 86400),
                        };
                        // Open loop: event k is due at t0 + k / rate.
                        let interval = role.rate.map(|r| Duration::from_secs_f64(1.0 / r));
                        let mut due = t0;
                        let mut failures = 0u32;
                        loop {
                            if spec.interrupt.load(Ordering::Relaxed) || abort.load(Ordering::Relaxed) {
                                break;
                            }
                            if !role.measured
                                && measured_left.load(Ordering::Relaxed) == 0
                                && client.caught_up()
                            {
                                break;
                            }
                            if interval.is_some() {
                                // Sleep in slices so a stop is noticed.
                                let now = Instant::now();
                                if due > now {
                                    std::thread::sleep((due - now).min(Duration::from_millis(50)));
                                    if Instant::now() < due {
                                        continue;
                                    }
                                }
                                if due >= end {
                                    break;
                                }
                            }
                            let now = Instant::now();
                            if now >= end {
                                break;
                            }
                            if !rec.active && now >= window {
                                rec.activate(window);
                            }
                            if rec.active && rec.events + rec.failed_events >= quota {
                                break;
                            }
                            let started = match interval {
                                Some(iv) => {
                                    rec.lag_ns = now.saturating_duration_since(due).as_nanos() as u64;
                                    let intended = due;
                                    due += iv;
                                    intended
                                }
                                None => now,
                            };
                            match client.event(conn.as_mut(), &mut rec) {
                                Ok(()) => {
                                    failures = 0;
                                    if rec.active {
                                        rec.event(started, Instant::now());
                                        counters[i].0.store(rec.events, Ordering::Relaxed);
                                    }
                                }
                                Err(kind) => {
                                    failures += 1;
                                    if rec.active {
                                        rec.failed_events += 1;
                                    }
                                    if kind.is_fatal() || failures >= MAX_CONSECUTIVE_FAILURES {
                                        let why = rec.last_sample().unwrap_or(kind.name());
                                        reason = Some(format!(
                                            "client {} ({}) stopped after {failures} failed events in a row: {why}",
                                            i / n_roles + 1,
                                            role.name
                                        ));
                                        break;
                                    }
                                }
                            }
                            rec.lag_ns = 0;
                        }
                        held = Some((conn, client));
                    }
                    let finished = Instant::now();
                    if role.measured {
                        measured_left.fetch_sub(1, Ordering::Relaxed);
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                    // A server process that ends (a PostgreSQL backend when
                    // its client disconnects) while the sampler reads the
                    // server's process tree can drop out of both readings'
                    // sums; disconnecting after the last reading keeps the
                    // window's server CPU whole.
                    while held.is_some() && !closed.load(Ordering::Acquire) {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    drop(held);
                    (rec, reason, finished)
                })
            })
            .collect();

        ready.wait();
        let t0 = Instant::now();
        start.set(t0).expect("start is set once");
        go.wait();
        let window = t0 + spec.warmup;
        let total = match spec.stop {
            Stop::Time(d) => Some(spec.warmup + d),
            Stop::Events(_) => None,
        };
        let mut sampler = Some(metrics::Sampler::start(spec.probe.clone(), window));
        let mut sampled = None;
        // A step that stops by event count ends when its clients do; a
        // short tick lets the sampler's last snapshot follow them closely.
        let tick = match spec.stop {
            Stop::Time(_) => Duration::from_millis(200),
            Stop::Events(_) => Duration::from_millis(20),
        };
        while done.load(Ordering::Relaxed) < n {
            let now = Instant::now();
            if let Some(tot) = total {
                if now >= t0 + tot {
                    if let Some(s) = sampler.take() {
                        sampled = Some(s.finish());
                    }
                }
            }
            let events = counters
                .iter()
                .zip(&measured)
                .filter(|(_, m)| **m)
                .map(|(c, _)| c.0.load(Ordering::Relaxed))
                .sum();
            live(&Live {
                elapsed: now - t0,
                total,
                warming_up: now < window,
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
            std::thread::sleep(
                next.saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(1)),
            );
        }
        if let Some(s) = sampler.take() {
            sampled = Some(s.finish());
        }
        closed.store(true, Ordering::Release);
        let mut recs = Vec::with_capacity(n);
        let mut reasons = Vec::new();
        let mut last_finish = window;
        for (h, m) in handles.into_iter().zip(&measured) {
            let (rec, reason, finished) = h.join().expect("client thread panicked");
            recs.push(rec);
            reasons.extend(reason);
            if *m {
                last_finish = last_finish.max(finished);
            }
        }
        let secs = match spec.stop {
            Stop::Time(d) => d.as_secs_f64(),
            Stop::Events(_) => last_finish.saturating_duration_since(window).as_secs_f64(),
        };
        (recs, reasons, secs, sampled.unwrap_or_default())
    });

    let mut aborted = setup_error.into_inner().unwrap_or_else(|p| p.into_inner());
    if aborted.is_none() && !abort_reasons.is_empty() {
        aborted = Some(abort_reasons.join("; "));
    }
    Measured {
        secs,
        merged: merge(&classes, &recorders, &measured),
        sampled,
        aborted,
    }
}
