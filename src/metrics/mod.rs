//! Measurements of the machine beside each step: the sampler thread
//! (`sampler`) and what it reads (`procfs`), the devices under a datadir
//! (`device`), the facts about the host recorded once per run (`host`), and
//! the server host's continuous log for steps split over client hosts
//! (`server_log`), and profiles of a window's processes (`profile`).

pub mod build;
pub mod cgroup;
pub mod columns;
pub mod costs;
pub mod device;
pub mod drift;
pub mod host;
pub mod interference;
pub mod procfs;
pub mod profile;
pub mod sampler;
pub mod server_log;
pub mod tuning;
pub mod vmstat;

pub use sampler::{Probe, Sampled, Sampler};

/// The shortest window whose machine CPU (from /proc/stat's 10 ms ticks)
/// says anything: 25 ticks per CPU, so one tick is at most 4%. Shorter,
/// no machine CPU per op is reported, no interference judged, and the
/// report judges no change by it.
pub const MIN_WINDOW_SECS: f64 = 0.25;

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

/// relbench's context switches so far, voluntary and not, over all its
/// threads (getrusage).
pub fn process_context_switches() -> Option<procfs::Switches> {
    // SAFETY: as in `process_cpu_secs`.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    (rc == 0).then(|| procfs::Switches {
        voluntary: ru.ru_nvcsw.max(0) as u64,
        involuntary: ru.ru_nivcsw.max(0) as u64,
    })
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

    /// This thread's own CPU time, in seconds.
    fn thread_cpu_secs() -> f64 {
        let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: clock_gettime writes only into the struct passed.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
    }

    /// Regression: the work was 300 ms of wall time, and on a loaded
    /// machine (fresh-clone CI beside a compile) the thread got 0.226 s of
    /// CPU in it. The work is now 300 ms of this thread's own CPU, which
    /// the process's CPU holds whatever else runs.
    #[test]
    fn cpu_time_grows_with_known_work() {
        let a = process_cpu_secs().unwrap();
        let t0 = thread_cpu_secs();
        let mut x = 0u64;
        while thread_cpu_secs() - t0 < 0.3 {
            for _ in 0..10_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
        std::hint::black_box(x);
        let b = process_cpu_secs().unwrap();
        // Other test threads may add more, never less; the clock's ticks
        // (/proc's are 10 ms) may round it down by one.
        assert!(b - a >= 0.29, "{a} -> {b}");
    }

    #[test]
    fn tiny_windows_are_not_reported_as_zero() {
        assert_eq!(cpu_between(Some(1.0), Some(1.0005)), None);
        assert_eq!(cpu_between(None, Some(1.0)), None);
        assert_eq!(cpu_between(Some(1.0), Some(1.5)), Some(0.5));
    }
}
