//! PostgreSQL's own accounting: its waits over a window, sampled — the
//! benchmark's backends' `wait_event` in pg_stat_activity, read every so
//! often by a connection of relbench's own (PostgreSQL keeps no totals of
//! time waited, so a wait event's time is the number of backends seen in
//! it times the time between readings) — and what each statement did,
//! from pg_stat_statements where it is loaded.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::wire::WireConn;
use crate::db::WaitSampling;
use crate::measure::statements::{Statements, CALLS};
use crate::measure::waits::{Wait, Waits};
use crate::measure::Unmeasured;

/// Samples the waits of `database`'s active client backends (the
/// sampler's own left out) every `every`, once started, until stopped.
pub(super) fn sampling(mut w: WireConn, database: &str, every: Duration) -> WaitSampling {
    let sql = format!(
        "SELECT wait_event_type || ':' || wait_event, count(*) FROM pg_stat_activity \
         WHERE datname = '{}' AND pid <> pg_backend_pid() AND state = 'active' \
         AND backend_type = 'client backend' AND wait_event IS NOT NULL GROUP BY 1",
        database.replace('\'', "''")
    );
    WaitSampling::ready(move |stop: &AtomicBool| {
        let mut events: BTreeMap<String, Wait> = BTreeMap::new();
        let (mut last, mut readings) = (Instant::now(), 0u64);
        while !stop.load(Ordering::Relaxed) {
            let rows = w.query_text(&sql)?;
            // Each reading stands for the time since the one before: a
            // sampler that woke late weighs its reading by how late.
            let now = Instant::now();
            let dt_us = (now - last).as_secs_f64() * 1e6;
            last = now;
            readings += 1;
            for r in rows {
                let (Some(Some(name)), Some(Some(n))) = (r.first(), r.get(1)) else {
                    continue;
                };
                let n: f64 = n.parse().unwrap_or(0.0);
                events.entry(name.clone()).or_default().us += n * dt_us;
            }
            std::thread::sleep(every.saturating_sub(now.elapsed()));
        }
        Ok(Waits {
            source: format!(
                "pg_stat_activity.wait_event of the benchmark's backends, sampled every {} ms ({readings} readings)",
                every.as_millis()
            ),
            events,
        })
    })
}

/// What each of the benchmark user's statements did in this database, from
/// pg_stat_statements (times in µs). A server relbench started with the
/// library preloaded (`[internals] pg_stat_statements = true`) gets the
/// extension created here; any other is read as it is.
pub(super) fn statements(
    w: &mut WireConn,
    user: &str,
    version: u32,
    managed: bool,
) -> Result<Statements, Unmeasured> {
    // Before 13, one time: execution's (planning not counted apart).
    let times = if version >= 130000 {
        "total_plan_time * 1000, total_exec_time * 1000"
    } else {
        "0, total_time * 1000"
    };
    let sql = format!(
        "SELECT query, calls, rows, shared_blks_hit, shared_blks_read, shared_blks_dirtied, \
         shared_blks_written, temp_blks_written, {times} FROM pg_stat_statements \
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
         AND userid = (SELECT oid FROM pg_roles WHERE rolname = '{}')",
        user.replace('\'', "''")
    );
    let rows = match w.query_text(&sql) {
        Ok(r) => r,
        Err(e) => {
            let preloaded = w
                .query_text("SHOW shared_preload_libraries")
                .ok()
                .and_then(|r| r.first()?.first().cloned().flatten())
                .is_some_and(|l| l.split(',').any(|x| x.trim() == "pg_stat_statements"));
            if !preloaded {
                return Err(Unmeasured::new(
                    "pg_stat_statements is not loaded \
                     ([internals] pg_stat_statements = true loads it in a server relbench starts)",
                ));
            }
            if !managed {
                return Err(Unmeasured::new(format!(
                    "pg_stat_statements not readable: {e}"
                )));
            }
            w.execute_text("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                .and_then(|_| w.query_text(&sql))
                .map_err(|e| Unmeasured::new(format!("pg_stat_statements not readable: {e}")))?
        }
    };
    const FIGURES: [&str; 9] = [
        CALLS,
        "rows",
        "shared_blks_hit",
        "shared_blks_read",
        "shared_blks_dirtied",
        "shared_blks_written",
        "temp_blks_written",
        "plan_us",
        "exec_us",
    ];
    let mut by: std::collections::BTreeMap<String, std::collections::BTreeMap<String, f64>> =
        Default::default();
    for r in rows {
        let Some(Some(q)) = r.first() else { continue };
        let e = by.entry(q.clone()).or_default();
        // A statement planned apart per user or top level is summed.
        for (i, name) in FIGURES.iter().enumerate() {
            let v: f64 = r
                .get(i + 1)
                .and_then(|v| v.as_deref()?.parse().ok())
                .unwrap_or(0.0);
            *e.entry(name.to_string()).or_default() += v;
        }
    }
    Ok(Statements {
        source: "pg_stat_statements".into(),
        by,
        if_none: "pg_stat_statements.track = none counts nothing: set it to top",
    })
}
