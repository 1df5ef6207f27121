//! PostgreSQL's waits over a window, sampled: the benchmark's backends'
//! `wait_event` in pg_stat_activity, read every so often by a connection
//! of relbench's own. PostgreSQL keeps no totals of time waited, so a wait
//! event's time is the number of backends seen in it times the time
//! between readings.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::wire::WireConn;
use crate::db::WaitSampling;
use crate::measure::waits::{Wait, Waits};

/// Samples the waits of `database`'s active client backends (the
/// sampler's own left out) every `every` until stopped.
pub(super) fn sampling(mut w: WireConn, database: &str, every: Duration) -> WaitSampling {
    let sql = format!(
        "SELECT wait_event_type || ':' || wait_event, count(*) FROM pg_stat_activity \
         WHERE datname = '{}' AND pid <> pg_backend_pid() AND state = 'active' \
         AND backend_type = 'client backend' AND wait_event IS NOT NULL GROUP BY 1",
        database.replace('\'', "''")
    );
    WaitSampling::start(move |stop: &AtomicBool| {
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
