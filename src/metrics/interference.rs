//! Interference: what else used the machine while a step ran, and how
//! steady the step's throughput was. From the sampler's readings: the CPU
//! that neither the server nor relbench used, split into kernel threads
//! (mostly IO write-back on the benchmark's behalf) and other programs,
//! named; steal; and the per-second throughput's dispersion. A step is
//! *disturbed* when other programs or the hypervisor took a share of the
//! machine large enough to move its throughput past the report's
//! thresholds; the report then does not judge it.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::procfs::ProcCpu;
use super::sampler::other_cpu_secs;
use super::vmstat::r3;
use super::{Sampled, MIN_WINDOW_SECS};

/// Other programs' share of the machine (all CPUs over the window) at or
/// above which a step is disturbed, in %. The report calls a step slower
/// or faster at ±5%; a CPU-bound step that loses 5% of the machine to
/// another program can move by about that much, so at this share a
/// change of that size can no longer be told from the interference.
pub const DISTURBED_SHARE_PCT: f64 = 5.0;

/// The benchmark's device busy at or above this (iostat's %util) makes
/// other programs' disk IO a disturbance: below it the device had room.
pub const DISK_BUSY_PCT: f64 = 20.0;

/// The share of the bytes the device moved that no process caused, in %,
/// at or above which a step on a busy device is disturbed, when those
/// bytes are also more than the benchmark's own: the kernel writing back
/// pages dirtied before the window (an earlier step's load, a program
/// that has exited). The filesystem's journal is no process's either, and
/// grows with the benchmark's own commits: 5–12% of the bytes on MariaDB's
/// quiet write steps, 32% on SQLite's rollback-journal commits (a file
/// created and deleted per commit), but less than the benchmark's own
/// bytes in every window measured.
pub const DISTURBED_KERNEL_IO_SHARE_PCT: f64 = 25.0;

/// Other programs' share of the bytes the device moved at or above which
/// a step on a busy device is disturbed, in %: their IO queued with the
/// benchmark's, and its latency and fsyncs paid for it.
pub const DISTURBED_IO_SHARE_PCT: f64 = 10.0;

/// Steal at or above which a step is disturbed, in % of the machine.
/// Higher than for other programs because on a VM the hypervisor's work
/// for the guest's own IO shows as steal: on this project's Firecracker
/// VMs, with nothing else running, PostgreSQL's write steps saw 3.1–5.4%
/// steal and its read steps 0.1–0.2%. At 10% the steal is more than the
/// benchmark's own IO explains there.
pub const DISTURBED_STEAL_PCT: f64 = 10.0;

/// The share of a window, in %, a CPU limit may hold relbench's threads
/// back before the window is disturbed: every thread stops for the rest of
/// the period, so even a little shows in latency.
pub const DISTURBED_THROTTLED_PCT: f64 = 1.0;

/// How far the attribution can be off, in % of the machine, for a window
/// of `secs`: CPU time is counted in 10 ms ticks, and each of the busy
/// total and the processes' sums can be a tick per CPU off at each edge.
/// A window is disturbed only past the threshold plus this (2% of the
/// machine for one second, 0.2% for ten).
pub fn tick_allowance_pct(secs: f64) -> f64 {
    2.0 * 0.01 / secs * 100.0
}

/// A process other than the server and relbench, and its CPU over the
/// window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OtherProcess {
    pub pid: u32,
    pub name: String,
    /// In % of one core, over the window.
    pub cpu_pct: f64,
}

/// A process other than the server and relbench, and the storage IO it
/// caused over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OtherIo {
    pub pid: u32,
    pub name: String,
    /// Megabytes read from and written to storage (write-back of its
    /// dirty pages included).
    pub mb: f64,
}

/// What else used the machine over a step's measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Interference {
    /// CPU used by neither the server nor relbench (nor interrupts), in %
    /// of one core: other programs plus kernel threads.
    pub other_cpu_pct: Option<f64>,
    /// Of that, kernel threads' (write-back, journal, reclaim), in % of
    /// one core: work mostly done for the benchmark's own IO.
    pub kernel_threads_cpu_pct: Option<f64>,
    /// Other programs' share of the machine (CPUs × window), in %: the
    /// figure the disturbed test uses.
    pub others_share_pct: Option<f64>,
    /// Steal, in % of the machine.
    pub steal_pct: Option<f64>,
    /// The programs that used most CPU, largest first (at least 1% of a
    /// core each).
    pub top: Vec<OtherProcess>,
    /// Per-second throughput over the window's whole seconds: coefficient
    /// of variation, the slowest second ÷ the median second, and seconds
    /// with no event completed.
    pub throughput_cv: Option<f64>,
    pub worst_second_vs_median: Option<f64>,
    pub stalls: u32,
    /// Other programs' storage IO over the window, in MB, the programs
    /// that caused most (at least 1 MB each), and how busy the benchmark's
    /// device was and how many MB it moved, for judging again. `None`
    /// where the device or the processes' IO could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub others_io_mb: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub top_io: Vec<OtherIo>,
    /// What the device moved that no process caused over the window, in
    /// MB: the kernel's write-back of pages dirtied before it, and the
    /// journal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_io_mb: Option<f64>,
    /// What the server and relbench caused over the window, in MB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub own_io_mb: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_util_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_mb: Option<f64>,
    /// The machine's CPUs and the window's length, for judging again.
    pub cores: Option<f64>,
    pub window_secs: Option<f64>,
    /// How long relbench's own threads woke late over the window, in all
    /// and the longest once, in seconds: time relbench was stopped,
    /// descheduled or swapped out ([`super::sampler::Late`]). `None` in
    /// results measured before it was kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relbench_late_secs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relbench_late_max_secs: Option<f64>,
    /// How far the window ran past its planned length to finish its last
    /// event, and the step's 99th percentile event, in seconds: a last
    /// event hundreds of times slower than the others is a stall.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overrun_secs: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_p99_secs: Option<f64>,
    /// How long the CPU limit relbench runs under (a container's
    /// `limits.cpu`, a cgroup quota) held its threads back over the
    /// window, in seconds; `None` with no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled_secs: Option<f64>,
    /// relbench ran in a container: CPU the machine's counters show but
    /// no visible process used is other containers'.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_container: bool,
    /// Why the step is disturbed, when it is (by the thresholds of the
    /// relbench that measured it; a report judges again by its own,
    /// [`Interference::judge`]).
    pub disturbed: Option<String>,
    /// Why it could not be judged, when it could not.
    pub not_judged: Option<String>,
}

fn r2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// A process's storage IO over a window: pid, name, bytes.
type IoUse = (u32, String, u64);

/// What the processes did between two scans.
struct Others {
    /// Kernel threads' CPU (children of kthreadd, pid 2), in seconds.
    kernel: f64,
    /// Every other program's CPU, largest first.
    cpu: Vec<(u32, String, f64)>,
    /// Every other program's storage IO, largest first.
    io: Vec<IoUse>,
    /// The storage IO of `exclude_roots` and their descendants, in bytes.
    own_io: u64,
}

/// The processes other than `exclude_roots` and their descendants, with
/// the CPU each used between the two scans (kernel threads summed apart),
/// and the storage IO each caused, in bytes.
fn others_with_io(first: &[ProcCpu], last: &[ProcCpu], exclude_roots: &[u32]) -> Others {
    let parent: BTreeMap<u32, u32> = first.iter().chain(last).map(|p| (p.pid, p.ppid)).collect();
    let excluded = |mut pid: u32| {
        let mut seen = BTreeSet::new();
        while pid > 1 && seen.insert(pid) {
            if exclude_roots.contains(&pid) {
                return true;
            }
            pid = parent.get(&pid).copied().unwrap_or(0);
        }
        false
    };
    let before: BTreeMap<u32, (f64, u64)> = first
        .iter()
        .map(|p| (p.pid, (p.cpu_secs, p.io_bytes)))
        .collect();
    let mut kernel = 0.0;
    let mut list = Vec::new();
    let mut io = Vec::new();
    let mut own_io = 0;
    for p in last {
        // A process born during the window used all its CPU and IO in it.
        let (cpu0, io0) = before.get(&p.pid).copied().unwrap_or((0.0, 0));
        let used = (p.cpu_secs - cpu0).max(0.0);
        let bytes = p.io_bytes.saturating_sub(io0);
        if excluded(p.pid) {
            own_io += bytes;
            continue;
        }
        if bytes > 0 && p.pid != 2 && p.ppid != 2 {
            io.push((p.pid, p.name.clone(), bytes));
        }
        if used <= 0.0 {
            continue;
        }
        if p.pid == 2 || p.ppid == 2 {
            kernel += used;
        } else {
            list.push((p.pid, p.name.clone(), used));
        }
    }
    list.sort_by(|a, b| b.2.total_cmp(&a.2));
    io.sort_by_key(|x| std::cmp::Reverse(x.2));
    Others {
        kernel,
        cpu: list,
        io,
        own_io,
    }
}

/// Per-second throughput dispersion over whole seconds: (CV, slowest ÷
/// median, seconds with nothing done).
fn dispersion(per_second: &[u64], secs: f64) -> Option<(f64, f64, u32)> {
    let whole = (secs.floor() as usize).min(per_second.len());
    let v: Vec<f64> = per_second[..whole].iter().map(|&n| n as f64).collect();
    if v.len() < 3 {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let mut sorted = v.clone();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let median = if v.len() % 2 == 1 {
        sorted[v.len() / 2]
    } else {
        (sorted[v.len() / 2 - 1] + sorted[v.len() / 2]) / 2.0
    };
    let worst = if median > 0.0 {
        sorted[0] / median
    } else {
        0.0
    };
    let stalls = v.iter().filter(|x| **x == 0.0).count() as u32;
    Some((var.sqrt() / mean, worst, stalls))
}

/// What else used the machine over the window `sampled` covers, and the
/// dispersion of the step's per-second event counts `per_second` over a
/// window of `secs`.
/// `stall` is how far a timed window ran past its planned length and the
/// step's 99th percentile event, in seconds; `profiler_cpu_secs` is what
/// relbench's own profiler used in it (not another program's).
pub fn assess(
    sampled: &Sampled,
    per_second: &[u64],
    secs: f64,
    stall: Option<(f64, f64)>,
    profiler_cpu_secs: Option<f64>,
) -> Interference {
    let mut out = Interference {
        relbench_late_secs: Some(r3(sampled.late.secs)),
        relbench_late_max_secs: Some(r3(sampled.late.max_secs)),
        overrun_secs: stall.map(|s| r3(s.0)),
        event_p99_secs: stall.map(|s| s.1),
        in_container: super::cgroup::in_container(),
        ..Interference::default()
    };
    if let (Some(a), Some(b)) = (&sampled.first, &sampled.last) {
        if let (Some(x), Some(y)) = (a.throttled_secs, b.throttled_secs) {
            out.throttled_secs = Some(r3((y - x).max(0.0)));
        }
    }
    if let Some((cv, worst, stalls)) = dispersion(per_second, secs) {
        out.throughput_cv = Some((cv * 1e4).round() / 1e4);
        out.worst_second_vs_median = Some((worst * 1e4).round() / 1e4);
        out.stalls = stalls;
    }
    let w = sampled.window();
    let (Some(a), Some(b), Some(sys)) = (&sampled.first, &sampled.last, w.system.as_ref()) else {
        out.disturbed = Some(
            "relbench took no reading of the machine at this window's edges: it did not get the CPU, \
             or the window never began"
                .into(),
        );
        return out;
    };
    let cores = sys.cpu_secs.all() / w.secs.max(1e-9);
    let capacity = sys.cpu_secs.all().max(1e-9);
    out.steal_pct = Some(r2(100.0 * sys.cpu_secs.steal / capacity));
    out.cores = Some(r2(cores));
    out.window_secs = Some((w.secs * 1e3).round() / 1e3);
    // The profiler is relbench's own child, which the aggregate counts as
    // another program: its CPU (13% of a core at 499 Hz) voided every
    // profiled repeat's comparison on a 2-core machine.
    let others = other_cpu_secs(a, b, Some(sys), sampled.server_unknown)
        .map(|o| (o - profiler_cpu_secs.unwrap_or(0.0)).max(0.0));
    let Some(other) = others else {
        out.not_judged = Some(
            "the server runs on this machine but relbench does not know its processes, so its CPU cannot be told from other programs'"
                .into(),
        );
        // Steal is still the machine's to judge.
        out.disturbed = out.judge().0;
        return out;
    };
    let mut roots = vec![std::process::id()];
    roots.extend(sampled.server_pid);
    let Others {
        kernel,
        cpu: list,
        io,
        own_io,
    } = others_with_io(&sampled.procs_first, &sampled.procs_last, &roots);
    if let Some(d) = &w.disk {
        let mb = |b: u64| b as f64 / 1e6;
        let others_mb = mb(io.iter().map(|x| x.2).sum());
        out.others_io_mb = Some(r2(others_mb));
        let moved = (d.read_kb + d.write_kb) / 1e3;
        out.kernel_io_mb = Some(r2((moved - others_mb - mb(own_io)).max(0.0)));
        out.own_io_mb = Some(r2(mb(own_io)));
        out.top_io = io
            .iter()
            .filter(|x| mb(x.2) >= 1.0)
            .take(3)
            .map(|(pid, name, b)| OtherIo {
                pid: *pid,
                name: name.clone(),
                mb: r2(mb(*b)),
            })
            .collect();
        out.device_util_pct = Some(r2(d.util_pct));
        out.device_mb = Some(r2((d.read_kb + d.write_kb) / 1e3));
    }
    // The scan misses processes that ended inside the window; the
    // aggregate does not, so programs get the aggregate less the kernel
    // threads.
    let kernel = kernel.min(other);
    // The aggregate subtracts interrupt time, which some kernels also
    // charge to the process that was running (without
    // IRQ_TIME_ACCOUNTING): with loopback networking it then reads low
    // (a burner at 40% of a core read as 14% beside PostgreSQL). The
    // programs the scans name are a floor that does not depend on it.
    let named: f64 = list.iter().map(|x| x.2).sum();
    let programs = (other - kernel).max(named);
    let other = other.max(programs + kernel);
    out.other_cpu_pct = Some(r2(100.0 * other / w.secs));
    out.kernel_threads_cpu_pct = Some(r2(100.0 * kernel / w.secs));
    let share = 100.0 * programs / capacity;
    out.others_share_pct = Some(r2(share));
    out.top = list
        .into_iter()
        .map(|(pid, name, used)| OtherProcess {
            pid,
            name,
            cpu_pct: r2(100.0 * used / w.secs),
        })
        .filter(|p| p.cpu_pct >= 1.0)
        .take(3)
        .collect();
    let (disturbed, not_judged) = out.judge();
    out.disturbed = disturbed;
    out.not_judged = not_judged;
    out
}

impl Interference {
    /// Why the window is disturbed by the thresholds above, or why it
    /// could not be judged; (`None`, `None`) for a quiet window. Reports
    /// call this rather than trusting the stored verdict, so results
    /// measured under other thresholds are judged alike.
    pub fn judge(&self) -> (Option<String>, Option<String>) {
        let (Some(secs), Some(cores)) = (self.window_secs, self.cores) else {
            return (self.disturbed.clone(), self.not_judged.clone());
        };
        // relbench itself not running is judged first, on any window: it
        // needs no CPU ticks, and a window it spent stopped is no
        // measurement of the benchmark however short it is.
        let mut why = Vec::new();
        if let Some(reason) = self.relbench_stalled(secs) {
            why.push(reason);
        }
        if let Some(reason) = self.overran() {
            why.push(reason);
        }
        if let Some(reason) = self.throttled(secs) {
            why.push(reason);
        }
        if secs < MIN_WINDOW_SECS {
            return if why.is_empty() {
                (
                    None,
                    Some(format!(
                        "the window ({:.0} ms) is too short for the 10 ms ticks CPU is counted in",
                        secs * 1e3
                    )),
                )
            } else {
                (Some(why.join("; ")), None)
            };
        }
        let slack = tick_allowance_pct(secs);
        let steal = self.steal_pct.unwrap_or(0.0);
        let share = self.others_share_pct.unwrap_or(0.0);
        if share >= DISTURBED_SHARE_PCT + slack {
            let named: Vec<String> = self
                .top
                .iter()
                .map(|p| format!("{} (pid {}) {:.0}% of a core", p.name, p.pid, p.cpu_pct))
                .collect();
            why.push(format!(
                "other programs used {share:.0}% of the machine ({:.2} of its {cores:.0} cores){}",
                share / 100.0 * cores,
                if !named.is_empty() {
                    format!(": {}", named.join(", "))
                } else if self.in_container {
                    ": other containers' (relbench runs in a container, which cannot see their processes \
                     to name them)"
                        .to_string()
                } else {
                    String::new()
                }
            ));
        }
        if steal >= DISTURBED_STEAL_PCT + slack {
            why.push(format!("the hypervisor stole {steal:.0}% of the machine"));
        }
        // Other programs' disk IO, on a device the benchmark kept busy.
        // (A process's IO does not say which device it went to: on a
        // machine with several disks this can blame a program that wrote
        // elsewhere while the benchmark's own disk was busy.)
        if let (Some(others), Some(util), Some(moved)) =
            (self.others_io_mb, self.device_util_pct, self.device_mb)
        {
            let share = if moved > 0.0 {
                100.0 * (others / moved).min(1.0)
            } else {
                0.0
            };
            let kernel = self.kernel_io_mb.unwrap_or(0.0);
            let kernel_share = if moved > 0.0 {
                100.0 * (kernel / moved).min(1.0)
            } else {
                0.0
            };
            let own = self.own_io_mb.unwrap_or(0.0);
            if util >= DISK_BUSY_PCT
                && kernel >= 1.0
                && kernel_share >= DISTURBED_KERNEL_IO_SHARE_PCT
                && kernel > own
            {
                why.push(format!(
                    "the kernel wrote back {kernel:.0} MB no process in the window caused \
                     ({kernel_share:.0}% of what the disk moved, more than the benchmark's own \
                     {own:.0} MB) while it was {util:.0}% busy"
                ));
            }
            if util >= DISK_BUSY_PCT && others >= 1.0 && share >= DISTURBED_IO_SHARE_PCT {
                let named: Vec<String> = self
                    .top_io
                    .iter()
                    .map(|p| format!("{} (pid {}) {:.0} MB", p.name, p.pid, p.mb))
                    .collect();
                why.push(format!(
                    "other programs moved {others:.0} MB on the disk while it was {util:.0}% busy{}",
                    if named.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", named.join(", "))
                    }
                ));
            }
        }
        let unknown = self
            .others_share_pct
            .is_none()
            .then(|| self.not_judged.clone())
            .flatten();
        ((!why.is_empty()).then(|| why.join("; ")), unknown)
    }

    /// Why relbench itself did not run for a share of the window that
    /// disturbs it, when it did not: its threads woke late in all by
    /// [`DISTURBED_SHARE_PCT`] of the window or more.
    fn relbench_stalled(&self, secs: f64) -> Option<String> {
        let late = self.relbench_late_secs?;
        let share = 100.0 * late / secs.max(1e-9);
        (share >= DISTURBED_SHARE_PCT).then(|| {
            format!(
                "relbench itself did not get the CPU for {:.0} ms of the {:.0} ms window ({share:.0}%; \
                 the longest wait {:.0} ms): it was stopped, descheduled or swapped out",
                late * 1e3,
                secs * 1e3,
                self.relbench_late_max_secs.unwrap_or(late) * 1e3
            )
        })
    }

    /// Why the CPU limit's throttling disturbed the window, when it held
    /// relbench's threads back for [`DISTURBED_THROTTLED_PCT`] of it or
    /// more: the window measured the limit (the machine's CPUs were free,
    /// so nothing else shows it).
    fn throttled(&self, secs: f64) -> Option<String> {
        let held = self.throttled_secs?;
        let share = 100.0 * held / secs.max(1e-9);
        (share >= DISTURBED_THROTTLED_PCT).then(|| {
            format!(
                "the CPU limit relbench runs under (its cgroup's quota: a container's limits.cpu) throttled it \
                 for {:.0} ms of the {:.0} ms window ({share:.1}%): raise the limit, or give the shard whole \
                 CPUs with requests equal to limits",
                held * 1e3,
                secs * 1e3
            )
        })
    }

    /// Why the window's overrun is a stall, when it is: the window ran
    /// past its planned length by [`DISTURBED_SHARE_PCT`] of it or more,
    /// and by more than [`STALL_VS_P99`] times the step's 99th
    /// percentile event (a scan that takes longer than the window
    /// overruns by its own length, and that is no stall).
    fn overran(&self) -> Option<String> {
        let (over, p99, secs) = (self.overrun_secs?, self.event_p99_secs?, self.window_secs?);
        let planned = secs - over;
        (planned > 0.0
            && 100.0 * over / planned >= DISTURBED_SHARE_PCT
            && over > STALL_VS_P99 * p99)
            .then(|| {
                format!(
                    "the window ran {:.0} ms past its planned {:.0} ms to finish an event, {:.0}× the \
                     step's 99th percentile ({}): a stall",
                    over * 1e3,
                    planned * 1e3,
                    over / p99.max(1e-9),
                    crate::measure::units::fmt_latency(p99 * 1e6)
                )
            })
    }
}

/// How many times the step's 99th percentile event the window's overrun
/// must be to be a stall.
pub const STALL_VS_P99: f64 = 20.0;

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: u32, ppid: u32, name: &str, cpu: f64) -> ProcCpu {
        ProcCpu {
            pid,
            ppid,
            name: name.into(),
            cpu_secs: cpu,
            io_bytes: 0,
        }
    }

    /// Regression: an Insert Benchmark window was judged quiet (4.3% of
    /// the CPU to others) while another program kept the disk 39% busy.
    #[test]
    fn other_programs_disk_io_on_a_busy_device_disturbs_a_step() {
        let quiet_cpu = Interference {
            others_share_pct: Some(1.0),
            steal_pct: Some(0.0),
            cores: Some(2.0),
            window_secs: Some(8.0),
            others_io_mb: Some(400.0),
            top_io: vec![OtherIo {
                pid: 9,
                name: "dd".into(),
                mb: 400.0,
            }],
            device_util_pct: Some(39.0),
            device_mb: Some(900.0),
            ..Interference::default()
        };
        let why = quiet_cpu.judge().0.unwrap();
        assert!(why.contains("dd (pid 9) 400 MB"), "{why}");
        // An idle device had room for it; a trickle is no disturbance.
        let idle = Interference {
            device_util_pct: Some(5.0),
            ..quiet_cpu.clone()
        };
        assert_eq!(idle.judge().0, None);
        let trickle = Interference {
            others_io_mb: Some(2.0),
            ..quiet_cpu
        };
        assert_eq!(trickle.judge().0, None);
    }

    /// The kernel writing back pages no process in the window dirtied (an
    /// earlier step's load) is named, like another program; the journal's
    /// small share of the benchmark's own writes is not.
    #[test]
    fn kernel_write_back_on_a_busy_device_disturbs_a_step_and_the_journal_does_not() {
        let write_back = Interference {
            others_share_pct: Some(1.0),
            steal_pct: Some(0.0),
            cores: Some(2.0),
            window_secs: Some(8.0),
            others_io_mb: Some(0.0),
            kernel_io_mb: Some(300.0),
            device_util_pct: Some(45.0),
            device_mb: Some(400.0),
            ..Interference::default()
        };
        let why = write_back.judge().0.unwrap();
        assert!(why.contains("kernel wrote back 300 MB"), "{why}");
        let journal = Interference {
            kernel_io_mb: Some(20.0),
            ..write_back.clone()
        };
        assert_eq!(journal.judge().0, None);
        // Regression: SQLite's rollback-journal commits (a file created
        // and deleted per commit) had the filesystem's journal move 32% of
        // the bytes, no process's, and the window was called disturbed.
        let commits = Interference {
            kernel_io_mb: Some(25.0),
            own_io_mb: Some(53.0),
            device_mb: Some(78.0),
            ..write_back
        };
        assert_eq!(commits.judge().0, None);
    }

    #[test]
    fn a_windows_own_io_is_told_from_other_programs() {
        let io = |pid, ppid, name: &str, bytes| ProcCpu {
            io_bytes: bytes,
            ..p(pid, ppid, name, 0.0)
        };
        let first = [io(10, 1, "relbench", 0), io(11, 10, "mariadbd", 1000)];
        let last = [
            io(10, 1, "relbench", 0),
            io(11, 10, "mariadbd", 5000),
            io(12, 1, "dd", 700),
            io(13, 2, "kworker/u4:2", 900),
        ];
        let o = others_with_io(&first, &last, &[10]);
        assert_eq!(o.own_io, 4000);
        assert_eq!(o.io, vec![(12, "dd".to_string(), 700)]);
    }

    #[test]
    fn the_server_relbench_and_their_children_are_not_others() {
        let first = [
            p(10, 1, "relbench", 5.0),
            p(11, 10, "mariadbd", 20.0),
            p(12, 1, "burner", 1.0),
            p(13, 2, "kworker/0:1", 0.1),
        ];
        let last = [
            p(10, 1, "relbench", 6.0),
            p(11, 10, "mariadbd", 25.0),
            p(12, 1, "burner", 4.0),
            p(13, 2, "kworker/0:1", 0.3),
            p(14, 12, "child", 0.5),
        ];
        let o = others_with_io(&first, &last, &[10]);
        assert!((o.kernel - 0.2).abs() < 1e-9);
        let names: Vec<(&str, f64)> = o.cpu.iter().map(|(_, n, c)| (n.as_str(), *c)).collect();
        assert_eq!(names, vec![("burner", 3.0), ("child", 0.5)]);
    }

    /// Regression: on a quiet VM, PostgreSQL's write steps saw 3–5.4%
    /// steal from the hypervisor's own IO work and were called disturbed.
    #[test]
    fn steal_from_the_guests_own_io_does_not_disturb_a_step() {
        let quiet_writes = Interference {
            others_share_pct: Some(0.0),
            steal_pct: Some(5.37),
            cores: Some(2.0),
            window_secs: Some(8.0),
            ..Interference::default()
        };
        assert_eq!(quiet_writes.judge(), (None, None));
        let stolen = Interference {
            steal_pct: Some(12.0),
            ..quiet_writes.clone()
        };
        assert!(stolen.judge().0.unwrap().contains("stole 12%"));
        let busy = Interference {
            others_share_pct: Some(5.0),
            top: vec![OtherProcess {
                pid: 7,
                name: "yes".into(),
                cpu_pct: 10.0,
            }],
            ..quiet_writes.clone()
        };
        // 5% at 8 s is past 5% + 0.25%? No: it takes 5.25%.
        assert_eq!(busy.judge().0, None);
        let busy = Interference {
            others_share_pct: Some(5.3),
            ..busy
        };
        let why = busy.judge().0.unwrap();
        assert!(
            why.contains("5% of the machine (0.11 of its 2 cores): yes (pid 7)"),
            "{why}"
        );
        // One second: 5% is within the ticks' 2% of the threshold.
        let short = Interference {
            window_secs: Some(1.0),
            ..busy.clone()
        };
        assert_eq!(short.judge(), (None, None));
        let shorter = Interference {
            window_secs: Some(0.1),
            ..busy
        };
        assert!(shorter.judge().1.unwrap().contains("too short"));
    }

    #[test]
    fn dispersion_uses_whole_seconds_and_counts_stalls() {
        let (cv, worst, stalls) = dispersion(&[100, 100, 0, 100, 7], 4.3).unwrap();
        assert_eq!(stalls, 1);
        assert_eq!(worst, 0.0);
        // Mean 75, sample standard deviation 50.
        assert!((cv - 50.0 / 75.0).abs() < 1e-9, "{cv}");
        assert!(dispersion(&[1, 2], 2.0).is_none(), "too few seconds");
    }
}
