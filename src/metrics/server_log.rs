//! The server host's side of a step split over client hosts: `relbench
//! sample` reads the machine and the server's process tree every few
//! hundredths of a second into a log of cumulative counters (one JSON
//! line each, so a sampler stopped hard loses one line at most), and a
//! merge of client shares cuts each step's measured window out of it,
//! interpolating the counters at the window's two edges, to divide the
//! server's CPU, the machine's context switches and the datadir's IO by
//! the operations every share did together.

use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::device::Devices;
use super::host::HostFacts;
use super::procfs;

/// The log's file in the sampler's directory.
pub const LOG_FILE: &str = "server-samples.jsonl";

/// The log's first line: what was sampled, where.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Header {
    pub pid: u32,
    pub devices: Option<Devices>,
    pub host: HostFacts,
    pub every_ms: u64,
    /// Clock ticks per second of `busy_ticks` and `total_ticks`.
    pub ticks_per_sec: f64,
}

/// Cumulative counters at one moment.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Reading {
    /// Unix time on this host's clock, which is the server's.
    pub t: f64,
    /// Machine CPU, all CPUs: busy (user, nice, system, irq, softirq) and
    /// in all, in clock ticks.
    pub busy_ticks: u64,
    pub total_ticks: u64,
    pub ctxt: u64,
    /// The server's process tree, user + system seconds (reaped children
    /// included); `None` once it is gone.
    pub server_cpu_secs: Option<f64>,
    /// The datadir's devices: reads, 512-byte sectors read, writes,
    /// sectors written.
    pub disk: Option<[u64; 4]>,
}

/// One reading now.
pub fn read(pid: u32, devices: Option<&Devices>) -> Option<Reading> {
    let s = procfs::read_stat()?;
    let busy = s.user + s.nice + s.system + s.irq + s.softirq;
    Some(Reading {
        t: crate::util::unix_now(),
        busy_ticks: busy,
        total_ticks: busy + s.idle + s.iowait + s.steal,
        ctxt: s.ctxt,
        server_cpu_secs: procfs::read_tree(pid).map(|t| t.cpu_secs),
        disk: devices
            .and_then(|d| procfs::read_diskstats(&d.devices))
            .map(|d| [d.reads, d.read_sectors, d.writes, d.write_sectors]),
    })
}

/// Appends lines to the log.
pub struct Writer(std::fs::File);

impl Writer {
    /// Creates the log in `dir` with its header; an existing log is not
    /// overwritten.
    pub fn create(dir: &Path, header: &Header) -> anyhow::Result<Writer> {
        use std::os::unix::fs::OpenOptionsExt;
        // Made or checked as results directories are, and the log created
        // new, never through a link: `sample` runs as root beside a server.
        crate::util::secure_dir(dir, &[crate::util::my_uid()], "the sampler's --out")?;
        let path = dir.join(LOG_FILE);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .with_context(|| {
                format!(
                    "{} exists: give the sampler a directory of its own (--out)",
                    path.display()
                )
            })?;
        let mut w = Writer(file);
        w.line(header)?;
        Ok(w)
    }

    pub fn line<T: Serialize>(&mut self, v: &T) -> anyhow::Result<()> {
        let mut text = serde_json::to_vec(v)?;
        text.push(b'\n');
        self.0.write_all(&text).context("writing the sample log")
    }
}

/// A log read back: its header and readings in time order (a last line
/// cut short is left out).
pub fn load(dir: &Path) -> anyhow::Result<(Header, Vec<Reading>)> {
    let path = dir.join(LOG_FILE);
    let file = std::fs::File::open(&path).with_context(|| {
        format!(
            "reading {}: give the directory `relbench sample --out DIR` wrote",
            path.display()
        )
    })?;
    let mut lines = std::io::BufReader::new(file).lines();
    let header: Header = serde_json::from_str(&lines.next().context("the sample log is empty")??)
        .with_context(|| {
        format!("{} does not start with a sampler's header", path.display())
    })?;
    // Figures are divided by these: a damaged header would make them
    // nonsense, not an error (regression: −23.95 µs/op CPU, unsaid).
    if !(header.ticks_per_sec.is_finite() && header.ticks_per_sec > 0.0) || header.every_ms == 0 {
        anyhow::bail!(
            "{}: its header says {} clock ticks a second and a reading every {} ms, which no sampler \
             wrote: the log is damaged; sample again with `relbench sample`",
            path.display(),
            header.ticks_per_sec,
            header.every_ms
        );
    }
    let mut readings: Vec<Reading> = Vec::new();
    for line in lines {
        match serde_json::from_str(&line?) {
            Ok(r) => readings.push(r),
            Err(_) => break,
        }
    }
    readings.sort_by(|a, b| a.t.total_cmp(&b.t));
    Ok((header, readings))
}

/// What the server host did over one window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowUse {
    pub server_cpu_secs: Option<f64>,
    pub machine_cpu_secs: f64,
    pub ctxt: f64,
    /// Reads, KiB read, writes, KiB written.
    pub disk: Option<[f64; 4]>,
}

/// The counters' growth from `a` to `b` (Unix times, this host's clock),
/// each counter interpolated between the readings around each edge;
/// `None` when the log does not cover the window.
pub fn window(header: &Header, log: &[Reading], a: f64, b: f64) -> Option<WindowUse> {
    let at = |t: f64| -> Option<[Option<f64>; 8]> {
        let i = log.partition_point(|r| r.t <= t);
        let (r0, r1) = (log.get(i.checked_sub(1)?)?, log.get(i)?);
        let w = if r1.t > r0.t {
            (t - r0.t) / (r1.t - r0.t)
        } else {
            0.0
        };
        let lerp = |x: f64, y: f64| x + (y - x) * w;
        let opt = |x: Option<f64>, y: Option<f64>| Some(lerp(x?, y?));
        let d = |k: usize| opt(r0.disk.map(|d| d[k] as f64), r1.disk.map(|d| d[k] as f64));
        Some([
            Some(lerp(r0.busy_ticks as f64, r1.busy_ticks as f64)),
            Some(lerp(r0.ctxt as f64, r1.ctxt as f64)),
            opt(r0.server_cpu_secs, r1.server_cpu_secs),
            d(0),
            d(1),
            d(2),
            d(3),
            None,
        ])
    };
    let (x, y) = (at(a)?, at(b)?);
    // Counters only grow: a fall is a damaged or mixed-up log, not a
    // figure.
    let delta = |k: usize| Some(y[k]? - x[k]?).filter(|d| *d >= 0.0);
    let kb = |sectors: f64| sectors / 2.0;
    Some(WindowUse {
        server_cpu_secs: delta(2),
        machine_cpu_secs: delta(0)? / header.ticks_per_sec,
        ctxt: delta(1)?,
        disk: match (delta(3), delta(4), delta(5), delta(6)) {
            (Some(r), Some(rs), Some(w), Some(ws)) => Some([r, kb(rs), w, kb(ws)]),
            _ => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_between_readings_takes_the_counters_at_its_edges() {
        let r = |t: f64, busy: u64, cpu: f64| Reading {
            t,
            busy_ticks: busy,
            total_ticks: busy * 2,
            ctxt: busy * 10,
            server_cpu_secs: Some(cpu),
            disk: Some([busy, busy * 8, 0, 0]),
        };
        let log = [r(10.0, 0, 0.0), r(11.0, 100, 0.5), r(12.0, 300, 1.5)];
        let h = Header {
            pid: 1,
            devices: None,
            host: crate::metrics::host::facts(),
            every_ms: 1000,
            ticks_per_sec: 100.0,
        };
        let w = window(&h, &log, 10.5, 11.5).unwrap();
        // 50 ticks in the first half, 100 in the second.
        assert!((w.machine_cpu_secs - 1.5).abs() < 1e-9);
        assert!((w.server_cpu_secs.unwrap() - 0.75).abs() < 1e-9);
        assert!((w.ctxt - 1500.0).abs() < 1e-9);
        assert!((w.disk.unwrap()[1] - 600.0).abs() < 1e-9);
        // Not covered: before the first reading or after the last.
        assert!(window(&h, &log, 9.0, 11.0).is_none());
        assert!(window(&h, &log, 11.0, 12.5).is_none());
    }
}
