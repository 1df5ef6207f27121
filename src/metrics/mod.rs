//! Measurements of the machine beside each step.
//!
//! For now: CPU time of the relbench process (which, for embedded SQLite,
//! is the database engine too) and facts about the host and the filesystem
//! that holds each target's data. The full sampler (system CPU, context
//! switches, disk IO, server processes) is a separate issue.

pub mod host;

/// CPU seconds below which a window's process CPU is not reported: a
/// figure of a few hundred microseconds says more about when the samples
/// were taken than about the work in between.
pub const MIN_CPU_SECS: f64 = 0.001;

/// User plus system CPU seconds this process has used, all threads,
/// including threads that have exited.
///
/// `getrusage(RUSAGE_SELF)` is used rather than `/proc/self/stat` because
/// Linux fills it from the scheduler's nanosecond runtime (microseconds
/// here), where `/proc/self/stat` rounds to 10 ms clock ticks: too coarse
/// for a short load or a one-second step.
pub fn process_cpu_secs() -> Option<f64> {
    // SAFETY: getrusage only writes into the struct we pass, which is
    // zero-initialised plain data of the right type.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return None;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Some(secs(ru.ru_utime) + secs(ru.ru_stime))
}

/// CPU seconds of process `pid` and of its children it has reaped
/// (utime + stime + cutime + cstime from `/proc/PID/stat`), in clock ticks
/// of 10 ms: fine for steps of a second or more, which is what server
/// figures are taken over.
pub fn pid_cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let ticks: u64 = rest
        .split_ascii_whitespace()
        .skip(11)
        .take(4)
        .map(|f| f.parse::<u64>().ok())
        .sum::<Option<u64>>()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    Some(ticks as f64 / if hz > 0 { hz as f64 } else { 100.0 })
}

/// CPU seconds of process `pid`, its live descendants, and the children it
/// has reaped. A PostgreSQL server is many processes; a backend that exits
/// between two samples moves from "live" into its parent's reaped time, so
/// the sum stays consistent.
pub fn tree_cpu_secs(pid: u32) -> Option<f64> {
    let mut children: std::collections::HashMap<u32, Vec<u32>> = Default::default();
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let ppid = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_ascii_whitespace().nth(1))
            .and_then(|f| f.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            children.entry(ppid).or_default().push(p);
        }
    }
    let mut total = pid_cpu_secs(pid)?;
    let mut stack: Vec<u32> = children.get(&pid).cloned().unwrap_or_default();
    while let Some(p) = stack.pop() {
        total += pid_cpu_secs(p).unwrap_or(0.0);
        stack.extend(children.get(&p).into_iter().flatten());
    }
    Some(total)
}

/// CPU used between two samples, when it is large enough to be a figure.
pub fn cpu_between(before: Option<f64>, after: Option<f64>) -> Option<f64> {
    match (before, after) {
        // getrusage has microsecond resolution; rounding drops float noise.
        (Some(a), Some(b)) if b - a >= MIN_CPU_SECS => Some(((b - a) * 1e6).round() / 1e6),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_known_work() {
        let a = process_cpu_secs().unwrap();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 300 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let b = process_cpu_secs().unwrap();
        // 300 ms of busy work on this thread; other test threads may add
        // more, never less (a little less only if this thread was preempted).
        assert!(b - a >= 0.25, "{a} -> {b}");
    }

    #[test]
    fn another_process_cpu_is_read_from_proc() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let first = pid_cpu_secs(pid).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let later = pid_cpu_secs(pid);
        child.wait().unwrap();
        // A shell counting in a loop burns CPU; once reaped it is gone.
        assert!(later.unwrap_or(first) >= first);
        assert_eq!(pid_cpu_secs(pid), None);
    }

    #[test]
    fn tiny_windows_are_not_reported_as_zero() {
        assert_eq!(cpu_between(Some(1.0), Some(1.0005)), None);
        assert_eq!(cpu_between(None, Some(1.0)), None);
        assert_eq!(cpu_between(Some(1.0), Some(1.5)), Some(0.5));
    }
}
