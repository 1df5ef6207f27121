//! One connection's thread: set up (connect, prepare), wait for the shared
//! start, then run events until the step's stop, recording each in the
//! thread's own [`Recorder`]. This loop is the client's hot path: it takes
//! no lock and allocates nothing per event; it touches shared memory only
//! to publish its event count (relaxed) and to look for a stop.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::pacer::{Pace, Pacer};
use super::{Shared, MAX_CONSECUTIVE_FAILURES};
use crate::db::Conn;
use crate::measure::Recorder;
use crate::plan::Stop;
use crate::workload::{dist, Client, ClientCtx};

/// Thread `i`: client `i / roles`, role `i % roles`. Returns its recorder,
/// why it stopped early (if it did), and when it left its loop.
pub(super) fn thread(sh: &Shared, i: usize) -> (Recorder, Option<String>, Instant) {
    let n_roles = sh.roles.len();
    let role = sh.roles[i % n_roles];
    // The client's number in the whole step (this process may run a share
    // of its clients): what its ids and seed are drawn by.
    let client = sh.global[i] / n_roles;
    let ctx = ClientCtx {
        index: client as u32,
        role: i % n_roles,
        shared: sh.client_state[client].clone(),
        table_options: sh.table_options.clone(),
    };
    let setup = open(sh, i, &ctx, 0);
    let setup = match setup {
        Ok(x) => Some(x),
        Err(e) => {
            let mut slot = sh.setup_error.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert(format!("client {}: {}", client + 1, e.message));
            sh.abort.store(true, Ordering::Relaxed);
            None
        }
    };
    sh.ready.wait();
    sh.go.wait();
    let mut rec = Recorder::new(sh.classes.len(), sh.expected_secs);
    if sh.class_series {
        rec.keep_class_seconds(sh.classes.len());
    }
    let mut reason = None;
    // The connection outlives the loop: it is closed only after the
    // sampler's last reading (below).
    let mut held = None;
    if let (Some(mut both), false) = (setup, sh.abort.load(Ordering::Relaxed)) {
        reason = events(sh, i, &ctx, &mut both, &mut rec);
        both.1.done(both.0.as_mut());
        held = Some(both);
    }
    let finished = Instant::now();
    if role.measured {
        sh.measured_left.fetch_sub(1, Ordering::Relaxed);
    }
    sh.done.fetch_add(1, Ordering::Relaxed);
    // A server process that ends (a PostgreSQL backend when its client
    // disconnects) while the sampler reads the server's process tree can
    // drop out of both readings' sums; disconnecting after the last
    // reading keeps the window's server CPU whole.
    while held.is_some() && !sh.closed.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(held);
    (rec, reason, finished)
}

/// A connection and the workload's client on it: the `n`th of thread
/// `i`, each drawing its own ids (the first as a thread always has).
fn open(
    sh: &Shared,
    i: usize,
    ctx: &ClientCtx,
    n: u64,
) -> crate::db::DbResult<(Box<dyn Conn>, Box<dyn Client>)> {
    let spec = sh.spec;
    let rng = dist::rng(spec.seed ^ (n << 40), sh.global[i] as u64);
    let connect = || {
        let mut conn = spec.driver.connect()?;
        conn.set_plain(spec.plain);
        Ok(conn)
    };
    let mut conn = connect()?;
    let dialect = spec.driver.dialect();
    let more = (0..spec.workload.more_connections(dialect))
        .map(|_| connect())
        .collect::<crate::db::DbResult<Vec<_>>>()?;
    let client = spec
        .workload
        .client(conn.as_mut(), more, dialect, &spec.scale, rng, ctx)?;
    Ok((conn, client))
}

/// Whether no measured client has finished an event in the window yet,
/// nor failed one.
fn nothing_measured(sh: &Shared) -> bool {
    sh.counters
        .iter()
        .zip(&sh.measured)
        .all(|(c, m)| !*m || c.0.load(Ordering::Relaxed) == 0)
        && sh.failed_any.load(Ordering::Relaxed) == 0
}

/// The event loop. Returns why the connection stopped early, if it did.
fn events(
    sh: &Shared,
    i: usize,
    ctx: &ClientCtx,
    held: &mut (Box<dyn Conn>, Box<dyn Client>),
    rec: &mut Recorder,
) -> Option<String> {
    let mut opened = 0u64;
    let spec = sh.spec;
    let n_roles = sh.roles.len();
    let role = sh.roles[i % n_roles];
    let t0 = *sh.start.get().expect("start is set before go");
    let window = t0 + spec.warmup;
    // A step that stops by event count splits the count among the
    // measured connections.
    // Over the whole step's measured connections, wherever they run.
    let gi = sh.global[i];
    let per_client = sh.roles.iter().filter(|r| r.measured).count();
    let mine = (gi / n_roles * per_client
        + sh.roles[..gi % n_roles]
            .iter()
            .filter(|r| r.measured)
            .count()) as u64;
    let quota = match spec.stop {
        Stop::Events(total) if role.measured => {
            let m = (spec.clients as usize * per_client).max(1) as u64;
            total / m + u64::from(mine < total % m)
        }
        _ => u64::MAX,
    };
    let end = match spec.stop {
        Stop::Time(d) => window + d,
        Stop::Events(_) => t0 + Duration::from_secs(365 * 86400),
    };
    // A timed window in which no event both started and finished (every
    // client stalled across it: an fsync, a lock, a busy machine) goes on
    // until one does, for up to ten times its length (5 s at least, a
    // minute at most): the step is then measured over a longer window,
    // which its notes say, rather than failed with nothing measured.
    let grace = match spec.stop {
        Stop::Time(d) => (d * 10).clamp(Duration::from_secs(5), Duration::from_secs(60)),
        Stop::Events(_) => Duration::ZERO,
    };
    let mut pacer = role.rate.map(|r| {
        if role.burst {
            Pacer::bursts(r, t0)
        } else {
            Pacer::new(r, t0)
        }
    });
    let mut failures = 0u32;
    loop {
        if spec.interrupt.load(Ordering::Relaxed) || sh.abort.load(Ordering::Relaxed) {
            return None;
        }
        if !role.measured && sh.measured_left.load(Ordering::Relaxed) == 0 && held.1.caught_up() {
            return None;
        }
        // A paced event starts when it was due: its response time counts
        // from then, so a late server's lag is in it.
        let due = match pacer.as_mut().map(|p| p.next(end)) {
            None => None,
            Some(Pace::Wait) => continue,
            Some(Pace::Done) => return None,
            Some(Pace::Go { due, lag }) => {
                rec.lag_ns = lag.as_nanos() as u64;
                Some(due)
            }
        };
        let now = Instant::now();
        if now >= end && !(now < end + grace && nothing_measured(sh)) {
            return None;
        }
        if !rec.active && now >= window {
            rec.activate(window);
        }
        if rec.active && rec.events + rec.failed_events >= quota {
            return None;
        }
        let started = due.unwrap_or(now);
        let outcome = held.1.event(held.0.as_mut(), rec);
        // sysbench's --reconnect: a new connection (and its prepared
        // statements) after every event, in the window, outside the
        // event's latency.
        if spec.reconnect && outcome.is_ok() {
            opened += 1;
            match open(sh, i, ctx, opened) {
                Ok(both) => *held = both,
                Err(e) => {
                    return Some(format!(
                        "client {} could not reconnect: {}",
                        sh.global[i] / n_roles + 1,
                        e.message
                    ))
                }
            }
        }
        match outcome {
            Ok(()) => {
                failures = 0;
                if rec.active {
                    rec.event(started, Instant::now());
                    sh.counters[i].0.store(rec.events, Ordering::Relaxed);
                }
            }
            Err(kind) => {
                failures += 1;
                if rec.active {
                    rec.failed_events += 1;
                    sh.failed_any.fetch_add(1, Ordering::Relaxed);
                }
                if kind.is_fatal() || failures >= MAX_CONSECUTIVE_FAILURES {
                    let why = rec.last_sample().unwrap_or(kind.name());
                    return Some(format!(
                        "client {} ({}) stopped after {failures} failed events in a row: {why}",
                        sh.global[i] / n_roles + 1,
                        role.name
                    ));
                }
            }
        }
        rec.lag_ns = 0;
    }
}
