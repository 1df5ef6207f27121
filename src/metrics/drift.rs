//! The machine's own speed, probed: one thread pinned to each CPU this
//! process may use, each running point queries on an in-memory SQLite
//! table of its own (a B-tree lookup and SQLite's virtual machine: the
//! branches, caches and core a database's lookups spend their time in),
//! counting the queries it completes in each tick. The same work every
//! tick, so what the counts vary by is the machine: the hypervisor's
//! share of the host's cores, which a guest's steal time does not always
//! show. (A pointer chase through 32 MiB was tried first: waiting on
//! memory, it wandered a third as much as SQLite's lookups did on the same
//! VM, `bench/drift_sqlite.py`, and said a study needs a third of the
//! rounds it does.) `measure::drift` says what the spread allows a study.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::Context;
use rand::{Rng, SeedableRng};

/// Rows of each thread's table (sysbench's columns), about 4 MiB.
const ROWS: i64 = 20_000;
/// Queries between looks at the clock.
const STEPS: u32 = 64;

/// What the probe counted.
#[derive(Debug, Clone)]
pub struct Probe {
    pub tick_secs: f64,
    /// Per CPU (its number), the chase steps of each tick.
    pub counts: Vec<(usize, Vec<f64>)>,
    /// Steal time the kernel counted over the probe, as a share of the
    /// CPUs' time; `None` where `/proc/stat` is not read.
    pub steal_pct: Option<f64>,
}

/// The CPUs this process may run on (its affinity: `taskset`, a cgroup's
/// cpuset).
pub fn cpus() -> anyhow::Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, filled by the call.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r != 0 {
        return Err(std::io::Error::last_os_error())
            .context("reading this process's CPUs (sched_getaffinity)");
    }
    Ok((0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

fn pin(cpu: usize) -> std::io::Result<()> {
    // SAFETY: as in `cpus`; the set names one CPU this process may use.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A thread's table: sysbench's sbtest1 of [`ROWS`] rows, in memory.
fn table() -> rusqlite::Result<rusqlite::Connection> {
    let c = rusqlite::Connection::open_in_memory()?;
    c.execute_batch(
        "CREATE TABLE sbtest1 (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, c TEXT NOT NULL, pad TEXT NOT NULL)",
    )?;
    let t = c.unchecked_transaction()?;
    {
        let mut ins = t.prepare("INSERT INTO sbtest1 VALUES (?1, ?2, ?3, ?4)")?;
        let (c120, p60) = ("x".repeat(119), "y".repeat(59));
        for id in 1..=ROWS {
            ins.execute(rusqlite::params![id, (id * 7919) % ROWS + 1, c120, p60])?;
        }
    }
    t.commit()?;
    Ok(c)
}

/// Probes every CPU at once for `secs`, in ticks of `tick_secs`; stops
/// early (with what it counted) when `interrupt` is set.
pub fn run(secs: f64, tick_secs: f64, interrupt: &AtomicBool) -> anyhow::Result<Probe> {
    let cpus = cpus()?;
    let ticks = (secs / tick_secs).round().max(1.0) as usize;
    let barrier = Arc::new(Barrier::new(cpus.len() + 1));
    let start = Arc::new(std::sync::OnceLock::<Instant>::new());
    let before = super::procfs::read_stat();
    let counts = std::thread::scope(|s| -> anyhow::Result<Vec<(usize, Vec<f64>)>> {
        let handles: Vec<_> = cpus
            .iter()
            .map(|&cpu| {
                let (barrier, start) = (barrier.clone(), start.clone());
                s.spawn(move || -> anyhow::Result<Vec<f64>> {
                    let pinned = pin(cpu);
                    let db = table();
                    // Every table built; then the first tick's start set.
                    barrier.wait();
                    barrier.wait();
                    pinned.with_context(|| format!("pinning the probe's thread to CPU {cpu}"))?;
                    let db = db.context("making the probe's in-memory SQLite table")?;
                    let mut point = db.prepare("SELECT c FROM sbtest1 WHERE id = ?1")?;
                    let mut rng = rand::rngs::SmallRng::seed_from_u64(cpu as u64 + 1);
                    let t0 = *start.get().expect("set before the barrier opens");
                    let tick = Duration::from_secs_f64(tick_secs);
                    let mut out = vec![0.0; ticks];
                    let mut bytes = 0usize;
                    for (k, slot) in out.iter_mut().enumerate() {
                        let end = t0 + tick * (k as u32 + 1);
                        let mut n = 0u64;
                        while Instant::now() < end {
                            for _ in 0..STEPS {
                                let id = rng.random_range(1..=ROWS);
                                bytes += point.query_row([id], |r| {
                                    r.get_ref(0).map(|v| v.as_bytes().map_or(0, <[u8]>::len))
                                })?;
                            }
                            n += u64::from(STEPS);
                        }
                        *slot = n as f64;
                        if interrupt.load(Ordering::Relaxed) {
                            break;
                        }
                    }
                    std::hint::black_box(bytes);
                    Ok(out)
                })
            })
            .collect();
        // Every buffer built before the first tick starts.
        barrier.wait();
        start.set(Instant::now() + Duration::from_millis(10)).ok();
        barrier.wait();
        cpus.iter()
            .zip(handles)
            .map(|(&cpu, h)| {
                let counts = h
                    .join()
                    .map_err(|_| anyhow::anyhow!("the probe's thread on CPU {cpu} panicked"))??;
                Ok((cpu, counts))
            })
            .collect()
    })?;
    let after = super::procfs::read_stat();
    let steal_pct = before.zip(after).and_then(|(a, b)| {
        let total = |s: &super::procfs::SystemStat| {
            s.user + s.nice + s.system + s.idle + s.iowait + s.irq + s.softirq + s.steal
        };
        let all = total(&b).checked_sub(total(&a))?;
        (all > 0).then(|| 100.0 * b.steal.saturating_sub(a.steal) as f64 / all as f64)
    });
    // Ticks an interrupt cut short are dropped from every CPU alike.
    let done = counts
        .iter()
        .map(|(_, c)| c.iter().take_while(|n| **n > 0.0).count())
        .min()
        .unwrap_or(0);
    Ok(Probe {
        tick_secs,
        counts: counts
            .into_iter()
            .map(|(cpu, mut c)| {
                c.truncate(done);
                (cpu, c)
            })
            .collect(),
        steal_pct,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_table_answers_every_id() {
        let db = table().unwrap();
        let n: i64 = db
            .query_row(
                "SELECT count(*) FROM sbtest1 WHERE length(c) = 119",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, ROWS);
    }

    #[test]
    fn this_process_has_a_cpu() {
        assert!(!cpus().unwrap().is_empty());
    }
}
