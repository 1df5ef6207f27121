//! The arithmetic of `vmstat` and `iostat -x` between two readings of
//! `/proc`: CPU busy is user, nice, system, irq and softirq together
//! (vmstat's us and sy), over all CPUs; reads, writes and KiB come from
//! the device's completed requests and 512-byte sectors; utilisation is
//! the time the device had IO in flight.

use serde::{Deserialize, Serialize};

use super::device::Devices;
use super::procfs::{DiskStat, SystemStat};

/// Rounds to a precision that keeps result files readable without losing
/// anything the counters could resolve.
pub(super) fn r3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// CPU seconds of the whole machine, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSecs {
    pub user: f64,
    pub nice: f64,
    pub system: f64,
    pub idle: f64,
    pub iowait: f64,
    pub irq: f64,
    pub softirq: f64,
    pub steal: f64,
}

impl CpuSecs {
    /// What vmstat calls us + sy.
    pub fn busy(&self) -> f64 {
        self.user + self.nice + self.system + self.irq + self.softirq
    }

    pub fn all(&self) -> f64 {
        self.busy() + self.idle + self.iowait + self.steal
    }
}

/// The machine over an interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SystemFigures {
    pub cpu_secs: CpuSecs,
    /// Busy CPU seconds, all CPUs together.
    pub busy_secs: f64,
    /// Busy ÷ all CPU time, in % (vmstat's us + sy).
    pub cpu_util_pct: f64,
    pub iowait_pct: f64,
    pub context_switches: u64,
    pub cs_per_sec: f64,
}

/// The datadir's devices over an interval. KiB and MiB as iostat prints
/// them (1024 bytes, 1024 KiB).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskFigures {
    pub devices: Vec<String>,
    pub resolved: String,
    pub reads: u64,
    pub read_kb: f64,
    pub writes: u64,
    pub write_kb: f64,
    pub busy_ms: u64,
    pub reads_per_sec: f64,
    pub read_mb_per_sec: f64,
    pub writes_per_sec: f64,
    pub write_mb_per_sec: f64,
    /// Time with IO in flight ÷ the interval, in % (iostat's %util).
    pub util_pct: f64,
}

/// CPU seconds by kind between two readings `secs` apart.
///
/// The kernel's tick counts are samples: on this project's VMs under load
/// they summed to about 8% less than CPUs × wall time (measured with
/// bench/sampler_accuracy.py), while their proportions matched vmstat's.
/// So, as vmstat does, each kind's share of all ticks is taken and scaled
/// to CPUs × the interval.
fn cpu_delta(a: &SystemStat, b: &SystemStat, secs: f64) -> CpuSecs {
    let all = [
        (a.user, b.user),
        (a.nice, b.nice),
        (a.system, b.system),
        (a.idle, b.idle),
        (a.iowait, b.iowait),
        (a.irq, b.irq),
        (a.softirq, b.softirq),
        (a.steal, b.steal),
    ]
    .iter()
    .map(|(x, y)| y.saturating_sub(*x))
    .sum::<u64>();
    let scale = if all > 0 {
        f64::from(b.cpus.max(1)) * secs / all as f64
    } else {
        0.0
    };
    let d = |x: u64, y: u64| r3(y.saturating_sub(x) as f64 * scale);
    CpuSecs {
        user: d(a.user, b.user),
        nice: d(a.nice, b.nice),
        system: d(a.system, b.system),
        idle: d(a.idle, b.idle),
        iowait: d(a.iowait, b.iowait),
        irq: d(a.irq, b.irq),
        softirq: d(a.softirq, b.softirq),
        steal: d(a.steal, b.steal),
    }
}

/// The machine between two readings `secs` apart.
pub fn system_between(a: &SystemStat, b: &SystemStat, secs: f64) -> SystemFigures {
    let cpu = cpu_delta(a, b, secs);
    let all = cpu.all();
    let pct = |x: f64| if all > 0.0 { r3(100.0 * x / all) } else { 0.0 };
    let cs = b.ctxt.saturating_sub(a.ctxt);
    SystemFigures {
        busy_secs: r3(cpu.busy()),
        cpu_util_pct: pct(cpu.busy()),
        iowait_pct: pct(cpu.iowait),
        context_switches: cs,
        cs_per_sec: r3(cs as f64 / secs.max(1e-9)),
        cpu_secs: cpu,
    }
}

/// The devices between two readings `secs` apart.
pub fn disk_between(a: &DiskStat, b: &DiskStat, secs: f64, devices: &Devices) -> DiskFigures {
    let secs = secs.max(1e-9);
    let reads = b.reads.saturating_sub(a.reads);
    let writes = b.writes.saturating_sub(a.writes);
    let read_kb = b.read_sectors.saturating_sub(a.read_sectors) as f64 / 2.0;
    let write_kb = b.write_sectors.saturating_sub(a.write_sectors) as f64 / 2.0;
    let busy_ms = b.busy_ms.saturating_sub(a.busy_ms);
    DiskFigures {
        devices: devices.devices.clone(),
        resolved: devices.resolved.clone(),
        reads,
        read_kb,
        writes,
        write_kb,
        busy_ms,
        reads_per_sec: r3(reads as f64 / secs),
        read_mb_per_sec: r3(read_kb / 1024.0 / secs),
        writes_per_sec: r3(writes as f64 / secs),
        write_mb_per_sec: r3(write_kb / 1024.0 / secs),
        // With several devices this is their mean utilisation.
        util_pct: r3((100.0 * busy_ms as f64
            / (secs * 1000.0)
            / devices.devices.len().max(1) as f64)
            .min(100.0)),
    }
}
