//! Costs per operation: what the sampler saw over a step's measured window,
//! divided by the work the step did, with a note for every figure that
//! could not be measured and why. This is the one place a per-op cost is
//! computed; the report only compares them.

use crate::measure::units::four_digits;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::device::Devices;
use super::interference::Interference;
use super::sampler::{DiskFigures, SamplerCost, SecondSample, SystemFigures};
use super::{Sampled, MIN_CPU_SECS, MIN_WINDOW_SECS};

/// Measurements of the machine over the step's measured window (warm-up
/// excluded), from the sampler. A figure that could not be measured is
/// absent (null), never 0; the step's `notes` say why.
///
/// "Per op" is per unit of the step's throughput: per operation, or per
/// row for steps counted in rows (load, scan).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct StepMetrics {
    /// Busy CPU of the whole machine (vmstat's us + sy, all CPUs) per op, µs.
    pub cpu_us_per_op: Option<f64>,
    /// CPU of a managed server's processes per op, µs.
    pub server_cpu_us_per_op: Option<f64>,
    /// CPU of relbench (its client threads; with an embedded engine, the
    /// engine too), less the sampler's own, per op, µs.
    pub client_cpu_us_per_op: Option<f64>,
    /// CPU the benchmark itself used per op, µs: server plus client, as
    /// their processes account it (with an embedded engine, relbench's),
    /// so another program on the machine does not count. `None` when the
    /// server's processes are not measured.
    pub own_cpu_us_per_op: Option<f64>,
    /// Context switches of the whole machine per op.
    pub cs_per_op: Option<f64>,
    /// Context switches of the benchmark's own threads per op: the
    /// server's and relbench's (with an embedded engine, relbench's), as
    /// the own CPU is counted. `None` when the server's are not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_cs_per_op: Option<f64>,
    /// Of those, the voluntary ones (a thread waiting: fsync, a lock, the
    /// network) and the involuntary ones (a thread preempted), per op.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_vcs_per_op: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_ivcs_per_op: Option<f64>,
    /// Read and write requests completed, and KiB moved, by the devices
    /// under the datadir, per op.
    pub reads_per_op: Option<f64>,
    pub read_kb_per_op: Option<f64>,
    pub writes_per_op: Option<f64>,
    pub write_kb_per_op: Option<f64>,
    pub client_cpu_secs: Option<f64>,
    pub server_cpu_secs: Option<f64>,
    pub system: Option<SystemFigures>,
    pub disk: Option<DiskFigures>,
    pub server_rss_peak_bytes: Option<u64>,
    pub client_rss_peak_bytes: Option<u64>,
    /// Apparent bytes (file lengths), as `db_size_*.apparent`; kept for
    /// readers of version 3.
    pub db_bytes_before: Option<u64>,
    pub db_bytes_after: Option<u64>,
    /// Apparent and allocated, logs apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_size_before: Option<crate::measure::size::DbSize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_size_after: Option<crate::measure::size::DbSize>,
    /// The sampler's own CPU over the window.
    pub sampler: Option<SamplerCost>,
    /// Unix time the measured window (and the per-second series) began.
    pub window_start: Option<f64>,
    /// One row a second over the window (on disk as columns).
    #[serde(with = "crate::metrics::columns")]
    pub per_second: Vec<SecondSample>,
    /// The engine's counters before and after the step.
    pub counters: Option<CounterDeltas>,
    /// What else used the machine over the window, and how steady the
    /// throughput was.
    pub interference: Option<Interference>,
    /// The server's own count of the work relbench counted over the
    /// window, when its counters say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_count: Option<ServerTally>,
    /// Where the server's threads waited over the window, per unit of
    /// the step's work, by the server's own accounting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<crate::measure::waits::WaitsPerOp>,
    /// What each statement did over the window, per call, by the server's
    /// own accounting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statements: Option<crate::measure::statements::StatementsPerCall>,
}

/// Relbench's count of a window's work beside the server's.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerTally {
    /// The server's counters summed, in words.
    pub counters: String,
    pub of: crate::measure::Counted,
    pub server: f64,
    pub relbench: f64,
    /// How far the two may lie apart, as a fraction of relbench's count:
    /// 1%, or the share of the window the server may publish its counts
    /// late by (PostgreSQL: a second), whichever is more.
    #[serde(default)]
    pub tolerance: f64,
}

impl ServerTally {
    /// How far apart the two counts are past which a step says so: a
    /// counter read a millisecond off the window's edge moves it by a
    /// few hundredths of a percent.
    pub const AGREE_WITHIN: f64 = 0.01;

    /// The tolerance for a window of `secs` over which the server
    /// publishes its counts up to `lag_secs` late.
    pub fn tolerance_for(secs: f64, lag_secs: f64) -> f64 {
        if secs > 0.0 {
            Self::AGREE_WITHIN.max(lag_secs / secs)
        } else {
            Self::AGREE_WITHIN
        }
    }

    /// The server's count over relbench's, less one.
    pub fn off(&self) -> Option<f64> {
        (self.relbench > 0.0).then(|| self.server / self.relbench - 1.0)
    }

    /// A sentence when the two disagree past [`Self::AGREE_WITHIN`].
    pub fn disagreement(&self) -> Option<String> {
        let off = self.off()?;
        let within = self.tolerance.max(Self::AGREE_WITHIN);
        (off.abs() > within).then(|| {
            format!(
                "the server counted {:.0} {} over the window ({}), relbench {:.0}: {:+.1}%, past the {:.1}% \
                 they agree within when every event is counted once (another client on the server, or \
                 events lost or counted twice)",
                self.server,
                self.of.name(),
                self.counters,
                self.relbench,
                off * 100.0,
                within * 100.0
            )
        })
    }
}

/// An engine's counters read before and after a step, raw, and what
/// changed (after − before, the keys whose value moved).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CounterDeltas {
    pub source: String,
    pub delta: BTreeMap<String, f64>,
    pub before: BTreeMap<String, f64>,
    pub after: BTreeMap<String, f64>,
}

impl CounterDeltas {
    pub fn new(
        source: String,
        before: BTreeMap<String, f64>,
        after: BTreeMap<String, f64>,
    ) -> Self {
        let delta = after
            .iter()
            .filter_map(|(k, a)| {
                let d = a - before.get(k)?;
                (d != 0.0).then(|| (k.clone(), (d * 1e6).round() / 1e6))
            })
            .collect();
        CounterDeltas {
            source,
            delta,
            before,
            after,
        }
    }
}

/// Where the step ran, for deciding which figures describe it.
#[derive(Debug, Clone, Copy)]
pub struct Scope {
    /// The database does its work on this machine.
    pub here: bool,
    /// The engine runs inside relbench (no server process).
    pub embedded: bool,
}

/// The benchmark's own CPU per op from its parts: the server's plus the
/// client's (with an embedded engine, the client's alone). Also fills it
/// in for results recorded before it was.
pub fn own_cpu_per_op(m: &StepMetrics, embedded: bool) -> Option<f64> {
    if embedded {
        m.client_cpu_us_per_op
    } else {
        m.server_cpu_us_per_op
            .zip(m.client_cpu_us_per_op)
            .map(|(s, c)| four_digits(s + c))
    }
}

/// The step's machine figures: totals, costs per unit of work (`ops`, or
/// `None` for a step with no operations to divide by, such as settle),
/// and the per-second series; for each figure that is missing, a note
/// (key, why) for the step's results.
pub fn measure(
    sampled: &Sampled,
    ops: Option<f64>,
    scope: Scope,
    devices: &Result<Devices, crate::measure::Unmeasured>,
) -> (StepMetrics, Vec<(&'static str, String)>) {
    let w = sampled.window();
    let per_op = |v: f64| ops.filter(|n| *n > 0.0).map(|n| four_digits(v / n));
    let ticks_enough = w.secs >= MIN_WINDOW_SECS;

    let mut m = StepMetrics {
        client_cpu_secs: w.client_cpu_secs,
        server_cpu_secs: w.server_cpu_secs,
        client_cpu_us_per_op: w.client_cpu_secs.and_then(|c| per_op(c * 1e6)),
        server_cpu_us_per_op: w.server_cpu_secs.and_then(|c| per_op(c * 1e6)),
        ..StepMetrics::default()
    };
    m.own_cpu_us_per_op = own_cpu_per_op(&m, scope.embedded);
    let own_cs = match (scope.embedded, w.client_cs, w.server_cs) {
        (true, Some(c), _) => Some(c),
        (false, Some(c), Some(s)) => Some(c.plus(s)),
        _ => None,
    };
    m.own_cs_per_op = own_cs.and_then(|c| per_op(c.total() as f64));
    m.own_vcs_per_op = own_cs.and_then(|c| per_op(c.voluntary as f64));
    m.own_ivcs_per_op = own_cs.and_then(|c| per_op(c.involuntary as f64));
    if scope.here {
        // /proc/stat counts CPU in 10 ms ticks: a window of a few ticks per
        // CPU gives 0 or double the truth (a 12 ms l.i0 read 0 µs per row).
        if ticks_enough {
            m.cpu_us_per_op = w.system.as_ref().and_then(|s| per_op(s.busy_secs * 1e6));
        }
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
    let disk_missing = w.disk.is_none();
    m.system = w.system;
    m.disk = w.disk;
    m.sampler = w.sampler;
    m.window_start = sampled.started_unix.map(|t| (t * 1e3).round() / 1e3);
    m.server_rss_peak_bytes = sampled.server_rss_peak;
    m.client_rss_peak_bytes = sampled.client_rss_peak;
    m.per_second = sampled.series.clone();

    let mut notes = Vec::new();
    let mut note = |k: &'static str, v: String| notes.push((k, format!("not measured: {v}")));
    if w.secs == 0.0 {
        note(
            "sampler",
            "the step ended before its measured window began".into(),
        );
        return (m, notes);
    }
    if w.client_cpu_secs.is_none() {
        note(
            "client_cpu",
            format!("the window used less than {MIN_CPU_SECS} s of CPU"),
        );
    }
    if !scope.embedded && w.server_cpu_secs.is_none() {
        note(
            "server_cpu",
            "the server is not a process relbench started on this machine".into(),
        );
    }
    if !scope.here {
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
                MIN_WINDOW_SECS * 1e3
            ),
        );
    }
    if let Err(why) = devices {
        note("disk", why.to_string());
    } else if disk_missing {
        note("disk", "/proc/diskstats could not be read".into());
    }
    (m, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_count_past_its_tolerance_is_said_and_one_within_it_is_not() {
        let t = |server: f64, tolerance: f64| ServerTally {
            counters: "Com_select".into(),
            of: crate::measure::Counted::Statements,
            server,
            relbench: 100_000.0,
            tolerance,
        };
        assert!(t(99_500.0, 0.01).disagreement().is_none());
        let said = t(97_000.0, 0.01).disagreement().unwrap();
        assert!(said.contains("-3.0%") && said.contains("1.0%"), "{said}");
        // PostgreSQL over a 20 s window: a second's lag is 5%.
        let pg = ServerTally::tolerance_for(20.0, 1.0);
        assert!((pg - 0.05).abs() < 1e-9);
        assert!(t(97_000.0, pg).disagreement().is_none());
        assert_eq!(
            ServerTally::tolerance_for(500.0, 1.0),
            ServerTally::AGREE_WITHIN
        );
    }
}
