//! Linux `perf` driven for one window: `perf record` (the CPU clock with
//! call chains, and the scheduler's switches) and `perf stat` (the
//! hardware's counters) attached to the profiled processes, stopped with
//! SIGINT as the window closes, then `perf script` folded.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::fold::Followed;
use super::{elf, fold, CallGraph, Counters, Meta, Mode, Profile, Scope, Settings, Unnamed};
use crate::measure::Unmeasured;

/// The hardware events counted per operation, where the host has them.
pub const HW_EVENTS: [&str; 5] = [
    "instructions",
    "cycles",
    "cache-misses",
    "dTLB-load-misses",
    "iTLB-load-misses",
];

/// A profiler running over a window.
pub struct Recording {
    scope: Scope,
    record: Child,
    stat: Option<Child>,
    /// Not counted: an inline profile's window.
    stat_skipped: bool,
    follow: Followed,
    data: PathBuf,
    stat_file: PathBuf,
    log: PathBuf,
    started: Instant,
    settings: Settings,
    mode: Mode,
    processes: usize,
}

/// What `perf` needs to be told to follow these processes.
fn pid_list(pids: &[u32]) -> String {
    pids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Starts `perf record` (and, for a profiled repeat, `perf stat`) on what
/// `follow` names, its files under `dir` (made by the caller, relbench's
/// own) named after `name`.
pub fn start(
    follow: &Followed,
    scope: Scope,
    settings: Settings,
    mode: Mode,
    dir: &Path,
    name: &str,
) -> Result<Recording, Unmeasured> {
    if follow.pids.is_empty() && follow.tids.is_empty() {
        return Err(Unmeasured::new("no process to profile"));
    }
    let data = dir.join(format!(".{name}.perf.data"));
    let log = dir.join(format!(".{name}.perf.log"));
    let stat_file = dir.join(format!(".{name}.perf.stat"));
    // Never through a link (the folder is relbench's own: `secure_dir`).
    let log_file = {
        use std::os::unix::fs::OpenOptionsExt;
        fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o644)
            .open(&log)
            .map_err(|e| Unmeasured::new(format!("{}: {e}", log.display())))?
    };
    let mut cmd = Command::new("perf");
    cmd.args(["record", "--no-buildid", "--no-buildid-cache"])
        .args(["-k", "CLOCK_MONOTONIC"])
        .arg("-e")
        .arg(format!("cpu-clock/freq={}/", settings.rate_hz))
        .args(match settings.call_graph {
            CallGraph::Fp => ["--call-graph", "fp"],
            CallGraph::Dwarf => ["--call-graph", "dwarf,16384"],
        });
    let threads = threads_of(follow);
    match scope {
        Scope::Machine => {
            if settings.off_cpu {
                // The followed threads' switches out, with their stacks;
                // back in, from the machine's switch records (a thread
                // woken on an idle CPU is switched in by the idle task,
                // whose tracepoints a machine's recording leaves out).
                cmd.args(["-e", "sched:sched_switch", "--filter"])
                    // Their switches, out and back in; their wakeups.
                    .arg(filter(&threads, |t| {
                        format!("prev_pid == {t} || next_pid == {t}")
                    }))
                    .args(["-e", WAKING, "--filter"])
                    .arg(filter(&threads, |t| format!("pid == {t}")))
                    .arg("--switch-events");
            }
            cmd.arg("-a");
        }
        Scope::Threads => {
            if settings.off_cpu {
                cmd.args(["-e", "sched:sched_switch", "-e", WAKING, "--switch-events"]);
            }
            cmd.arg("-t").arg(pid_list(&threads));
        }
    }
    cmd.arg("-o")
        .arg(&data)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log_file);
    let record = cmd.spawn().map_err(|e| {
        Unmeasured::new(if e.kind() == std::io::ErrorKind::NotFound {
            "perf is not installed: install Debian's linux-perf (apt-get install linux-perf)"
                .to_string()
        } else {
            format!("starting perf: {e}")
        })
    })?;
    // Counting per thread costs every context switch too: only where no
    // measured window is at stake.
    let stat = (mode == Mode::Separate).then(|| {
        Command::new("perf")
            .args(["stat", "-x", ",", "-e"])
            .arg(HW_EVENTS.join(","))
            .arg("-t")
            .arg(pid_list(&threads))
            .arg("-o")
            .arg(&stat_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()
    });
    Ok(Recording {
        scope,
        record,
        stat: stat.flatten(),
        stat_skipped: mode == Mode::Inline,
        data,
        stat_file,
        log,
        started: Instant::now(),
        settings,
        mode,
        processes: follow.pids.len().max(1),
        follow: follow.clone(),
    })
}

/// Every thread of the followed processes, and the followed threads.
fn threads_of(f: &Followed) -> Vec<u32> {
    let mut t: Vec<u32> = f
        .pids
        .iter()
        .flat_map(|p| {
            fs::read_dir(format!("/proc/{p}/task"))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
        })
        .chain(f.tids.iter().copied())
        .collect();
    t.sort_unstable();
    t.dedup();
    t
}

/// Who wakes a followed thread (the record is the waker's), for a sleep
/// another thread's IO ended (`fold::woken_by_io`); its call chain says
/// nothing the waker's switches do not, and would cost a chain a wakeup.
const WAKING: &str = "sched:sched_waking/call-graph=no/";

/// A tracepoint filter that keeps an event of any of these threads, each
/// thread's test written by `one`.
fn filter(threads: &[u32], one: impl Fn(u32) -> String) -> String {
    threads
        .iter()
        .map(|&t| one(t))
        .collect::<Vec<_>>()
        .join(" || ")
}

/// Asks a child to stop as with Ctrl-C and waits for it, up to `limit`;
/// then kills it.
fn interrupt_and_wait(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    // SAFETY: kill on our own child's PID, which has not been reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t0 = Instant::now();
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Recording {
    /// Whether perf has already given up (a process it was to follow
    /// exited before it attached: a server's short-lived backend), after
    /// a moment to attach.
    pub fn gave_up(&mut self) -> bool {
        std::thread::sleep(Duration::from_millis(50));
        matches!(self.record.try_wait(), Ok(Some(s)) if !s.success())
    }

    /// Stops the profiler as the window closes (what it recorded is
    /// folded later, by [`Stopped::fold`], out of the window's way).
    pub fn stop(mut self) -> Stopped {
        let secs = self.started.elapsed().as_secs_f64();
        // perf has no children: its tree's CPU is its own; perf stat's,
        // when it counts, is the profiler's too.
        let tree = |pid| crate::metrics::procfs::read_tree(pid).map(|t| t.cpu_secs);
        let own_cpu = tree(self.record.id())
            .map(|c| c + self.stat.as_ref().and_then(|s| tree(s.id())).unwrap_or(0.0));
        let status = interrupt_and_wait(&mut self.record, Duration::from_secs(60));
        let counters = match self.stat.as_mut() {
            Some(c) => {
                interrupt_and_wait(c, Duration::from_secs(10));
                read_counters(&self.stat_file)
            }
            None => Counters {
                missing: Some(if self.stat_skipped {
                    "not counted in a measured window (counting per thread slows its context switches): \
                     mode = \"separate\" counts them"
                        .into()
                } else {
                    "perf stat did not start".into()
                }),
                ..Counters::default()
            },
        };
        let log = fs::read_to_string(&self.log).unwrap_or_default();
        let error = match status {
            Some(s) if s.success() || self.data.exists() => None,
            Some(_) => Some(perf_error(&log)),
            None => Some("perf did not stop within 60 s".into()),
        };
        let denied = error.is_some() && perf_denied(&log);
        let _ = fs::remove_file(&self.log);
        let _ = fs::remove_file(&self.stat_file);
        Stopped {
            data: self.data,
            follow: self.follow,
            error,
            denied,
            meta: Meta {
                scope: Some(self.scope),
                mode: Some(self.mode),
                settings: Some(self.settings),
                secs,
                processes: self.processes,
                profiler_cpu_secs: own_cpu,
                counters,
                ..Meta::default()
            },
        }
    }
}

/// A recording stopped, not yet folded.
pub struct Stopped {
    data: PathBuf,
    follow: Followed,
    error: Option<String>,
    /// perf was not allowed to follow what it was asked to.
    denied: bool,
    meta: Meta,
}

impl Stopped {
    /// Whether perf gave up because it may not follow what it was asked
    /// to (the machine, where `perf_event_paranoid` forbids it).
    pub fn denied(&self) -> bool {
        self.denied
    }

    /// The CPU the profiler's processes used over the window.
    pub fn profiler_cpu_secs(&self) -> Option<f64> {
        self.meta.profiler_cpu_secs
    }

    /// Folds the recording (`perf script`) and removes its file. Never
    /// fails: what went wrong is the profile's `error`.
    pub fn fold(self) -> Profile {
        let mut p = match &self.error {
            Some(e) => Profile::failed(e.clone()),
            None => script(&self.data, &self.follow),
        };
        let _ = fs::remove_file(&self.data);
        let m = self.meta;
        p.meta = Meta {
            samples: p.meta.samples,
            unnamed_samples: p.meta.unnamed_samples,
            unnamed: std::mem::take(&mut p.meta.unnamed),
            off_cpu_us: p.meta.off_cpu_us,
            idle_us: p.meta.idle_us,
            open_switches: p.meta.open_switches,
            error: p.meta.error.take(),
            ..m
        };
        p
    }
}

/// `perf script` over a recording, folded.
fn script(data: &Path, follow: &Followed) -> Profile {
    let out = Command::new("perf")
        .args(["script", "--show-switch-events", "-F"])
        .arg("comm,pid,tid,time,event,trace,ip,sym,dso")
        .arg("-i")
        .arg(data)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let out = match out {
        Ok(o) if o.status.success() => o.stdout,
        Ok(o) => return Profile::failed(format!("perf script failed ({})", o.status)),
        Err(e) => return Profile::failed(format!("perf script: {e}")),
    };
    let stacks = fold::fold(&String::from_utf8_lossy(&out), follow);
    let samples = stacks.cpu.total();
    let idle_us = stacks.off.idle_us();
    let unnamed: Vec<Unnamed> = stacks
        .unnamed
        .iter()
        .map(|(object, &n)| Unnamed {
            object: object.clone(),
            samples: n,
            why: elf::why_unnamed(object),
        })
        .collect();
    Profile {
        meta: Meta {
            samples,
            unnamed_samples: unnamed.iter().map(|u| u.samples).sum(),
            unnamed,
            off_cpu_us: stacks.off.total() - idle_us,
            idle_us,
            open_switches: stacks.open_switches,
            error: (samples == 0).then(|| "no on-CPU sample in the window".to_string()),
            ..Meta::default()
        },
        cpu: stacks.cpu,
        off: stacks.off,
    }
}

/// perf's own words on why it could not record, with what to do.
fn perf_error(log: &str) -> String {
    let first = log
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message");
    if perf_denied(log) {
        format!(
            "perf may not follow these processes: {first} (run relbench as root, or \
             sysctl kernel.perf_event_paranoid=1)"
        )
    } else {
        format!("perf record failed: {first}")
    }
}

/// Whether perf's own log says it was not allowed (its words, not ours).
fn perf_denied(log: &str) -> bool {
    log.contains("perf_event_paranoid") || log.contains("Permission") || log.contains("Access")
}

/// `perf stat -x,` output: `value,unit,event,…`, a value of
/// `<not supported>` where the host cannot count the event.
fn read_counters(file: &Path) -> Counters {
    let text = fs::read_to_string(file).unwrap_or_default();
    parse_counters(&text)
}

fn parse_counters(text: &str) -> Counters {
    let mut c = Counters::default();
    let mut unsupported = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split(',').collect();
        let (Some(v), Some(ev)) = (f.first(), f.get(2)) else {
            continue;
        };
        let ev = ev.split(':').next().unwrap_or(ev).trim();
        match v.trim().parse::<f64>() {
            Ok(x) => {
                c.values.insert(ev.to_string(), x);
            }
            Err(_) => unsupported += 1,
        }
    }
    if c.values.is_empty() {
        c.missing = Some(if unsupported > 0 {
            "not available on this host (no PMU: perf counts no hardware event)".into()
        } else {
            "not counted (perf stat gave nothing)".into()
        });
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_unsupported_everywhere_say_no_pmu_and_give_no_figure() {
        let c = parse_counters(
            "# started on x\n\n<not supported>,,instructions,0,100.00,,\n<not supported>,,cycles,0,100.00,,\n",
        );
        assert!(c.values.is_empty());
        assert!(c.missing.unwrap().contains("no PMU"));
        let c =
            parse_counters("1234567,,instructions:u,1000,100.00,,\n<not counted>,,cycles,0,0,,\n");
        assert_eq!(c.values.get("instructions"), Some(&1234567.0));
        assert!(c.missing.is_none());
    }
}
