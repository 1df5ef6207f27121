//! Measurements of the machine beside each step.
//!
//! For now: CPU time of the relbench process (which, for embedded SQLite,
//! is the database engine too) and facts about the host and the filesystem
//! that holds each target's data. The full sampler (system CPU, context
//! switches, disk IO, server processes) is a separate issue.

pub mod host;

use std::sync::OnceLock;

/// User plus system CPU seconds this process has used, all threads, from
/// `/proc/self/stat` (which also counts threads that have exited).
pub fn process_cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let (utime, stime) = parse_stat_times(&stat)?;
    Some((utime + stime) as f64 / clock_ticks_per_sec() as f64)
}

/// `utime` and `stime` (fields 14 and 15) of a `/proc/PID/stat` line. The
/// command name in field 2 may contain spaces, so fields are counted from
/// the last `)`.
fn parse_stat_times(stat: &str) -> Option<(u64, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut f = rest.split_ascii_whitespace().skip(11);
    Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// The kernel's USER_HZ, read from the auxiliary vector (`AT_CLKTCK`),
/// falling back to 100, which is what Linux reports on every common
/// architecture.
fn clock_ticks_per_sec() -> u64 {
    static HZ: OnceLock<u64> = OnceLock::new();
    *HZ.get_or_init(|| {
        const AT_CLKTCK: u64 = 17;
        let Ok(auxv) = std::fs::read("/proc/self/auxv") else {
            return 100;
        };
        auxv.chunks_exact(16)
            .map(|c| {
                let k = u64::from_ne_bytes(c[..8].try_into().unwrap());
                let v = u64::from_ne_bytes(c[8..].try_into().unwrap());
                (k, v)
            })
            .find(|(k, _)| *k == AT_CLKTCK)
            .map_or(100, |(_, v)| v.max(1))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let line = "42 (my (odd) cmd) S 1 42 42 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 1 0";
        assert_eq!(parse_stat_times(line), Some((250, 75)));
    }

    #[test]
    fn cpu_time_grows_with_work() {
        let a = process_cpu_secs().unwrap();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 300 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let b = process_cpu_secs().unwrap();
        // 300 ms of busy work, measured in 10 ms ticks; other test threads
        // may add more, never less.
        assert!(b - a >= 0.25, "{a} -> {b}");
        assert_eq!(clock_ticks_per_sec(), 100);
    }
}
