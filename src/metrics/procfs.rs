//! Readers of the kernel's counters in `/proc`: the machine's CPU time and
//! context switches (`/proc/stat`), block devices (`/proc/diskstats`), and a
//! process tree's CPU time and memory (`/proc/PID/...`). Each reader parses
//! text into plain numbers; the arithmetic on them lives in `sampler`.

use std::fs;

/// Clock ticks per second of the CPU times in `/proc`.
pub fn ticks_per_sec() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz > 0 {
        hz as f64
    } else {
        100.0
    }
}

/// The machine's CPU time in clock ticks, all CPUs together (the `cpu` line
/// of `/proc/stat`), and the context switches since boot.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SystemStat {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub ctxt: u64,
    /// CPUs online (the `cpuN` lines).
    pub cpus: u32,
}

pub fn parse_stat(text: &str) -> Option<SystemStat> {
    let mut s = SystemStat::default();
    let mut seen = (false, false);
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("cpu ") {
            let v: Vec<u64> = rest
                .split_ascii_whitespace()
                .map(|f| f.parse().unwrap_or(0))
                .collect();
            let at = |i: usize| v.get(i).copied().unwrap_or(0);
            // user nice system idle iowait irq softirq steal guest guest_nice;
            // guest time is already counted in user (and guest_nice in nice).
            (s.user, s.nice, s.system, s.idle) = (at(0), at(1), at(2), at(3));
            (s.iowait, s.irq, s.softirq, s.steal) = (at(4), at(5), at(6), at(7));
            seen.0 = v.len() >= 4;
        } else if line.starts_with("cpu") && line.as_bytes().get(3).is_some_and(u8::is_ascii_digit)
        {
            s.cpus += 1;
        } else if let Some(rest) = line.strip_prefix("ctxt ") {
            s.ctxt = rest.trim().parse().ok()?;
            seen.1 = true;
        }
    }
    (seen.0 && seen.1).then_some(s)
}

pub fn read_stat() -> Option<SystemStat> {
    parse_stat(&fs::read_to_string("/proc/stat").ok()?)
}

/// One block device's counters from `/proc/diskstats`. Sectors there are
/// always 512 bytes, whatever the device's own sector size.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiskStat {
    pub reads: u64,
    pub read_sectors: u64,
    pub writes: u64,
    pub write_sectors: u64,
    /// Milliseconds during which the device had IO in flight.
    pub busy_ms: u64,
}

impl DiskStat {
    fn add(&mut self, o: &DiskStat) {
        self.reads += o.reads;
        self.read_sectors += o.read_sectors;
        self.writes += o.writes;
        self.write_sectors += o.write_sectors;
        self.busy_ms += o.busy_ms;
    }
}

/// The sum of the named devices' counters; `None` when one is missing.
pub fn parse_diskstats(text: &str, devices: &[String]) -> Option<DiskStat> {
    let mut total = DiskStat::default();
    let mut found = 0;
    for line in text.lines() {
        let f: Vec<&str> = line.split_ascii_whitespace().collect();
        if f.len() < 14 || !devices.iter().any(|d| d == f[2]) {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        total.add(&DiskStat {
            reads: n(3),
            read_sectors: n(5),
            writes: n(7),
            write_sectors: n(9),
            busy_ms: n(12),
        });
        found += 1;
    }
    (found == devices.len()).then_some(total)
}

pub fn read_diskstats(devices: &[String]) -> Option<DiskStat> {
    parse_diskstats(&fs::read_to_string("/proc/diskstats").ok()?, devices)
}

/// CPU and memory of a process and its descendants.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TreeStat {
    /// User plus system seconds of the live processes and of the children
    /// they have reaped.
    pub cpu_secs: f64,
    /// Resident memory: private and file-backed pages of every process,
    /// plus shared memory once (the largest any process maps), so a
    /// PostgreSQL buffer pool seen by every backend is not counted again
    /// for each.
    pub rss_bytes: u64,
    pub processes: u32,
}

/// utime + stime + cutime + cstime, in ticks, from `/proc/PID/stat`.
fn stat_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace()
        .skip(11)
        .take(4)
        .map(|f| f.parse::<u64>().ok())
        .sum()
}

/// (RssAnon + RssFile, RssShmem) in bytes, from `/proc/PID/status`.
fn parse_rss(status: &str) -> (u64, u64) {
    let (mut own, mut shmem) = (0, 0);
    for line in status.lines() {
        let kb = |rest: &str| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .unwrap_or(0)
                * 1024
        };
        if let Some(r) = line.strip_prefix("RssAnon:") {
            own += kb(r);
        } else if let Some(r) = line.strip_prefix("RssFile:") {
            own += kb(r);
        } else if let Some(r) = line.strip_prefix("RssShmem:") {
            shmem = kb(r);
        }
    }
    (own, shmem)
}

/// The context switches of every thread of `pid`, from each thread's
/// `status` (the process's own `status` counts its first thread only).
fn thread_switches(pid: u32) -> Switches {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Switches::default();
    };
    tasks
        .flatten()
        .filter_map(|t| fs::read_to_string(t.path().join("status")).ok())
        .map(|s| parse_switches(&s))
        .fold(Switches::default(), Switches::plus)
}

/// Context switches, told apart as the kernel counts them: *voluntary*
/// ones are a thread giving up the CPU to wait (fsync, a lock, the
/// network, a sleep), *involuntary* ones are the scheduler taking it away
/// (preemption: another thread wanted the CPU). A fall in the first is
/// less waiting; a fall in the second, a less crowded machine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Switches {
    pub voluntary: u64,
    pub involuntary: u64,
}

impl Switches {
    pub fn total(self) -> u64 {
        self.voluntary + self.involuntary
    }

    pub fn plus(self, o: Switches) -> Switches {
        Switches {
            voluntary: self.voluntary + o.voluntary,
            involuntary: self.involuntary + o.involuntary,
        }
    }

    /// `self` less `earlier`, per kind (a counter that went back gives 0).
    pub fn since(self, earlier: Switches) -> Switches {
        Switches {
            voluntary: self.voluntary.saturating_sub(earlier.voluntary),
            involuntary: self.involuntary.saturating_sub(earlier.involuntary),
        }
    }
}

/// Voluntary and nonvoluntary context switches, from a `status` file.
fn parse_switches(status: &str) -> Switches {
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    Switches {
        voluntary: field("voluntary_ctxt_switches:"),
        involuntary: field("nonvoluntary_ctxt_switches:"),
    }
}

/// Children of `pid`'s threads, from `/proc/PID/task/TID/children`, a file
/// the kernel keeps per thread: a few reads however many processes the
/// machine runs (a scan of all of `/proc` would cost more than the 0.5% of
/// a core the sampler may use on a busy machine).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        let mut path = t.path();
        path.push("children");
        if let Ok(s) = fs::read_to_string(&path) {
            out.extend(
                s.split_ascii_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    out
}

/// The threads of `pid` named `name` (their `comm`).
pub fn named_threads(pid: u32, name: &str) -> Vec<u32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out: Vec<u32> = tasks
        .flatten()
        .filter(|t| fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == name))
        .filter_map(|t| t.file_name().to_str()?.parse().ok())
        .collect();
    out.sort_unstable();
    out
}

/// `pid` and every live descendant's PID (a PostgreSQL server's backends).
pub fn tree_pids(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut stack = vec![pid];
    while let Some(p) = stack.pop() {
        // Gone, or exited and not yet reaped: nothing to follow.
        match fs::read_to_string(format!("/proc/{p}/stat")) {
            Ok(st)
                if !matches!(
                    st.rsplit(") ").next().and_then(|r| r.chars().next()),
                    Some('Z' | 'X')
                ) => {}
            _ => continue,
        }
        out.push(p);
        stack.extend(children(p));
    }
    out
}

/// `pid` and every live descendant. A backend that exits between two
/// samples moves from "live" into its parent's reaped time, so the CPU sum
/// stays consistent.
pub fn read_tree(pid: u32) -> Option<TreeStat> {
    let hz = ticks_per_sec();
    let mut stack = vec![pid];
    let (mut ticks, mut own, mut shmem_max, mut n) = (0u64, 0u64, 0u64, 0u32);
    let mut first = true;
    while let Some(p) = stack.pop() {
        let stat = fs::read_to_string(format!("/proc/{p}/stat"));
        let Some(t) = stat.ok().as_deref().and_then(stat_ticks) else {
            if first {
                return None; // the root itself is gone
            }
            continue;
        };
        first = false;
        ticks += t;
        n += 1;
        if let Ok(status) = fs::read_to_string(format!("/proc/{p}/status")) {
            let (o, s) = parse_rss(&status);
            own += o;
            shmem_max = shmem_max.max(s);
        }
        stack.extend(children(p));
    }
    Some(TreeStat {
        cpu_secs: ticks as f64 / hz,
        rss_bytes: own + shmem_max,
        processes: n,
    })
}

/// Context switches, voluntary and not, of every thread of `pid` and its
/// live descendants (a backend that exited takes its own along); `None`
/// when `pid` is gone. Read at a window's two ends only: a thread's file
/// each, too many to read every second.
pub fn tree_switches(pid: u32) -> Option<Switches> {
    if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
        return None;
    }
    let mut stack = vec![pid];
    let mut switches = Switches::default();
    while let Some(p) = stack.pop() {
        switches = switches.plus(thread_switches(p));
        stack.extend(children(p));
    }
    Some(switches)
}

/// One process's own CPU (not its reaped children's), from a scan of
/// `/proc`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcCpu {
    pub pid: u32,
    pub ppid: u32,
    /// The command name (`comm`, at most 15 bytes).
    pub name: String,
    pub cpu_secs: f64,
    /// Bytes it caused to be read from and written to storage so far
    /// (`/proc/PID/io`'s `read_bytes` + `write_bytes`: page-cache hits do
    /// not count, write-back of its dirty pages does); 0 when unreadable.
    pub io_bytes: u64,
}

/// pid, comm, ppid and utime + stime seconds, from `/proc/PID/stat`.
fn parse_proc_stat(pid: u32, stat: &str, hz: f64) -> Option<ProcCpu> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    let f: Vec<&str> = stat[close + 1..].split_ascii_whitespace().collect();
    // After the name: state ppid ... utime (12th) stime (13th).
    let ppid = f.get(1)?.parse().ok()?;
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ProcCpu {
        pid,
        ppid,
        name,
        cpu_secs: ticks as f64 / hz,
        io_bytes: 0,
    })
}

/// `read_bytes` + `write_bytes` of a `/proc/PID/io`.
fn parse_proc_io(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| {
            let v = l
                .strip_prefix("read_bytes: ")
                .or_else(|| l.strip_prefix("write_bytes: "))?;
            v.trim().parse::<u64>().ok()
        })
        .sum()
}

/// Every process on the machine with its CPU so far. Taken twice per step
/// (at the start and the end of the measured window, never each second:
/// a scan of a few hundred processes costs a few milliseconds), to name
/// what else used the machine.
pub fn scan_processes() -> Vec<ProcCpu> {
    let hz = ticks_per_sec();
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let mut p = parse_proc_stat(pid, &stat, hz)?;
            p.io_bytes =
                fs::read_to_string(format!("/proc/{pid}/io")).map_or(0, |t| parse_proc_io(&t));
            Some(p)
        })
        .collect()
}

/// Resident memory of this process, in bytes.
pub fn self_rss_bytes() -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let (own, shmem) = parse_rss(&status);
    Some(own + shmem)
}

/// CPU seconds the calling thread has used (nanosecond clock).
pub fn thread_cpu_secs() -> f64 {
    // SAFETY: clock_gettime writes only into the timespec we pass.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_is_parsed() {
        let text = "cpu  615797 5 324272 1300769 47792 7 101882 2034 0 0\n\
                    cpu0 1 2 3 4 5 6 7 8 0 0\nintr 1 2\nctxt 379565538\nbtime 1\n";
        let s = parse_stat(text).unwrap();
        assert_eq!(
            (s.user, s.nice, s.system, s.idle),
            (615797, 5, 324272, 1300769)
        );
        assert_eq!(
            (s.iowait, s.irq, s.softirq, s.steal),
            (47792, 7, 101882, 2034)
        );
        assert_eq!(s.ctxt, 379565538);
        assert_eq!(s.cpus, 1);
        assert_eq!(parse_stat("cpu  1 2 3 4\n"), None, "no ctxt line");
        assert!(read_stat().is_some());
    }

    #[test]
    fn diskstats_of_named_devices_are_summed() {
        let text = " 254 0 vda 720150 20548 26354266 9494924 12703523 259301 257215264 2362096 0 794328 12109680 0 0 0 0\n\
                    254 1 vda1 1 0 2 3 4 0 6 7 0 8 9\n\
                    253 0 vdb 10 0 20 0 30 0 40 0 0 50 0 0 0 0 0\n";
        let one = parse_diskstats(text, &["vda".into()]).unwrap();
        assert_eq!(one.reads, 720150);
        assert_eq!(one.read_sectors, 26354266);
        assert_eq!(one.writes, 12703523);
        assert_eq!(one.write_sectors, 257215264);
        assert_eq!(one.busy_ms, 794328);
        let two = parse_diskstats(text, &["vda".into(), "vdb".into()]).unwrap();
        assert_eq!(two.reads, 720160);
        assert_eq!(two.write_sectors, 257215304);
        assert_eq!(parse_diskstats(text, &["sdz".into()]), None);
    }

    #[test]
    fn a_process_stat_line_gives_name_parent_and_own_cpu() {
        // A name with spaces and parentheses; utime 300, stime 100 ticks,
        // children's 7 and 9 not counted.
        let line =
            "4242 (my (odd) name) R 17 4242 17 0 -1 4194304 1 0 0 0 300 100 7 9 20 0 1 0 5 1 1";
        let p = parse_proc_stat(4242, line, 100.0).unwrap();
        assert_eq!((p.pid, p.ppid), (4242, 17));
        assert_eq!(p.name, "my (odd) name");
        assert_eq!(p.cpu_secs, 4.0);
        let me = scan_processes();
        assert!(me.iter().any(|p| p.pid == std::process::id()));
    }

    #[test]
    fn shared_memory_counts_once_per_tree() {
        let status = "Name:\tpostgres\nVmRSS:\t  150000 kB\nRssAnon:\t    4000 kB\nRssFile:\t    6000 kB\nRssShmem:\t  140000 kB\n";
        assert_eq!(parse_rss(status), (10_000 * 1024, 140_000 * 1024));
    }

    #[test]
    fn a_process_tree_includes_children() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 3 & sleep 3 & wait"])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let t = read_tree(child.id()).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(t.processes, 3, "{t:?}");
        assert!(t.rss_bytes > 0);
        assert!(
            read_tree(child.id()).is_none(),
            "a reaped process has no tree"
        );
    }
}
