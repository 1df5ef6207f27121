//! `perf script`'s text folded into stacks: on-CPU samples counted per
//! call chain, and off-CPU time per wait site (the chain at the switch
//! out, weighted by the time until the thread was switched back in).
//!
//! The folded format is Brendan Gregg's (`root;…;leaf weight`), so a
//! stored profile feeds FlameGraph, inferno or speedscope as it is.

use std::collections::{BTreeMap, HashMap};

use super::Folded;

/// What one `perf script` output holds, folded.
#[derive(Debug, Default)]
pub struct Stacks {
    /// On-CPU samples per call chain (root first; the thread's name is
    /// the root frame).
    pub cpu: Folded,
    /// Microseconds off CPU per wait site: the chain at the switch out,
    /// under a root frame saying how the thread left the CPU
    /// ([`OFF_BLOCKED`], [`OFF_IO`], [`OFF_PREEMPTED`]).
    pub off: Folded,
    /// On-CPU samples whose leaf function has no name, per object file.
    pub unnamed: BTreeMap<String, u64>,
    /// Switches out with no switch back in before the profile ended
    /// (their time is not counted).
    pub open_switches: u64,
}

/// A thread that slept (a lock, a condition, the network, a timer).
pub const OFF_BLOCKED: &str = "[off: sleeping]";
/// A thread in uninterruptible sleep (disk IO, fsync) — or one asleep
/// until another thread's IO ended and it woke this one (see
/// [`woken_by_io`]).
pub const OFF_IO: &str = "[off: io]";
/// A thread that could run but was switched out for another one.
pub const OFF_PREEMPTED: &str = "[off: preempted]";
/// Sleeping of a thread that did not serve the operations (a background
/// thread's timer, a pool's worker waiting for its next task): it ran
/// under [`IDLE_RAN`] of the share of its time the busiest followed
/// thread ran. Such sleeping scales with the window's length, not with
/// the work, so per operation it moves as 1 ÷ throughput and explains
/// nothing: an off-CPU diff led by it (`__futex_abstimed_wait_common
/// (sleeping) 95 → 478 µs/op` on MariaDB's redo flush per commit) hid
/// the fdatasync that was the cause. Its IO waits and preemptions are
/// kept: a log writer the connections wait for is such a thread.
pub const OFF_IDLE: &str = "[off: idle]";

/// The share of the busiest thread's running a thread must reach to
/// count as serving the operations. Measured on MariaDB (update-index, 1
/// client): the connection thread ran 44% of its time, InnoDB's pool
/// workers 2.5–3%, its timers 0.01%.
const IDLE_RAN: f64 = 0.25;

/// One frame's name: the function, or the object it is in when perf
/// could not name it (`[mariadbd]`), kernel functions marked `_[k]` as
/// FlameGraph marks them.
fn frame(line: &str) -> Option<(String, Option<String>)> {
    // "\tffffffff821f7f58 __schedule ([kernel.kallsyms])"
    let line = line.trim();
    let (_addr, rest) = line.split_once(' ')?;
    let (sym, dso) = match rest.rfind(" (") {
        Some(i) if rest.ends_with(')') => (&rest[..i], &rest[i + 2..rest.len() - 1]),
        _ => (rest, ""),
    };
    let sym = sym.trim();
    let base = dso.rsplit('/').next().unwrap_or(dso);
    if sym.is_empty() || sym == "[unknown]" {
        let name = if base.is_empty() || base == "[unknown]" {
            "[unknown]".to_string()
        } else {
            format!("[{base}]")
        };
        return Some((name, Some(base.to_string())));
    }
    // A frame name may not hold the format's separators.
    let sym = sym.replace(';', ":");
    if dso == "[kernel.kallsyms]" {
        Some((format!("{sym}_[k]"), None))
    } else {
        Some((sym, None))
    }
}

/// One record of the script: its header and its frames, leaf first.
struct Record<'a> {
    pid: u32,
    tid: u32,
    time: f64,
    kind: Kind<'a>,
    frames: Vec<(String, Option<String>)>,
    comm: &'a str,
}

enum Kind<'a> {
    Sample,
    /// The scheduler's switch from `prev` (this record's thread) to
    /// `next`, and the state `prev` left in.
    Switch {
        state: &'a str,
        next: Option<u32>,
    },
    /// The scheduler's `sched_waking` of thread `target`, in the context
    /// of the thread that wakes it (this record's).
    Waking {
        target: u32,
    },
    In,
    /// A switch out as perf's own record (the tracepoint's holds the
    /// stack), or a record of nothing the fold uses.
    Out,
}

/// A `key=value` field of a tracepoint's text.
fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let at = text.find(key)? + key.len();
    text[at..].split_whitespace().next()
}

/// Parses a record's header: `comm pid/tid time: [period] event: [trace]`.
fn header(line: &str) -> Option<Record<'_>> {
    let (head, rest) = line.split_once(": ")?;
    let mut words = head.split_whitespace().rev();
    let time: f64 = words.next()?.parse().ok()?;
    let ids = words.next()?;
    let (pid, tid) = match ids.split_once('/') {
        Some((p, t)) => (p.parse().ok()?, t.parse().ok()?),
        None => {
            let t: u32 = ids.parse().ok()?;
            (t, t)
        }
    };
    let comm = head
        .trim()
        .rsplitn(3, char::is_whitespace)
        .nth(2)
        .unwrap_or("")
        .trim();
    let rest = rest.trim_start();
    let kind = if let Some(sw) = rest.strip_prefix("PERF_RECORD_SWITCH") {
        // `PERF_RECORD_SWITCH IN` of a thread followed itself,
        // `PERF_RECORD_SWITCH_CPU_WIDE IN` of any in a machine's recording.
        if sw
            .trim_start_matches("_CPU_WIDE")
            .trim_start()
            .starts_with("IN")
        {
            Kind::In
        } else {
            Kind::Out
        }
    } else if let Some(at) = rest.find("sched:sched_waking:") {
        match field(&rest[at..], " pid=").and_then(|n| n.parse().ok()) {
            Some(target) => Kind::Waking { target },
            None => Kind::Out,
        }
    } else if rest.contains("sched:sched_switch:") {
        Kind::Switch {
            state: field(rest, "prev_state=").unwrap_or("S"),
            next: field(rest, "next_pid=").and_then(|n| n.parse().ok()),
        }
    } else {
        Kind::Sample
    };
    Some(Record {
        pid,
        tid,
        time,
        kind,
        frames: Vec::new(),
        comm,
    })
}

/// Which threads a fold keeps: a recording of the whole machine holds
/// every process's samples.
#[derive(Debug, Clone, Default)]
pub struct Followed {
    /// Processes followed whole (their threads, and any started since).
    pub pids: Vec<u32>,
    /// Threads followed.
    pub tids: Vec<u32>,
}

impl Followed {
    fn keeps(&self, pid: u32, tid: u32) -> bool {
        self.tids.contains(&tid) || self.pids.contains(&pid)
    }
}

/// What the fold holds between records.
#[derive(Default)]
struct State {
    s: Stacks,
    /// Per thread: the wait it is in.
    pending: HashMap<u32, Wait>,
    /// Per followed thread: what it did, for telling idle threads apart.
    threads: HashMap<u32, Thread>,
}

/// A followed thread off CPU, until it is switched back in.
struct Wait {
    /// The chain at the switch out, under its root.
    stack: String,
    /// When it left the CPU.
    at: f64,
    /// The IO wait of the thread that woke it, where that thread had
    /// just come back from it ([`woken_by_io`]).
    woken_by_io: Option<String>,
}

/// One followed thread's time, as its switches tell it.
#[derive(Default)]
struct Thread {
    /// Its off-CPU time per stack and, for a sleep another thread's IO
    /// ended, that IO wait's stack.
    off: HashMap<(String, Option<String>), u64>,
    /// Time on a CPU between a switch back in and the next switch out.
    ran_us: f64,
    /// When it was last switched back in.
    in_at: Option<f64>,
    /// The IO wait it came back from, while it has not slept since: a
    /// thread it wakes now was waiting for that IO.
    from_io: Option<String>,
}

impl Thread {
    /// The share of its time it ran, of the time the fold saw it on and
    /// off a CPU.
    fn ran_share(&self) -> f64 {
        let off: u64 = self.off.values().sum();
        let all = self.ran_us + off as f64;
        if all > 0.0 {
            self.ran_us / all
        } else {
            0.0
        }
    }
}

/// Folds `perf script -F comm,pid,tid,time,event,trace,ip,sym,dso
/// --show-switch-events` output, keeping the threads `f` follows.
pub fn fold(script: &str, f: &Followed) -> Stacks {
    let mut st = State::default();
    let mut cur: Option<Record> = None;
    for line in script.lines() {
        // Frames are indented with a tab; a header starts with the
        // thread's name.
        if line.starts_with('\t') {
            if let (Some(r), Some(fr)) = (cur.as_mut(), frame(line)) {
                r.frames.push(fr);
            }
            continue;
        }
        if let Some(r) = cur.take() {
            finish(r, &mut st, f);
        }
        if !line.trim().is_empty() {
            cur = header(line);
        }
    }
    if let Some(r) = cur.take() {
        finish(r, &mut st, f);
    }
    st.s.open_switches += st.pending.len() as u64;
    let busiest = st
        .threads
        .values()
        .map(Thread::ran_share)
        .fold(0.0, f64::max);
    for t in st.threads.into_values() {
        let idle = t.ran_share() < IDLE_RAN * busiest;
        for ((stack, io), us) in t.off {
            let stack = match (stack.strip_prefix(OFF_BLOCKED), io) {
                (Some(rest), _) if idle => format!("{OFF_IDLE}{rest}"),
                (Some(_), Some(io)) => woken_by_io(&stack, &io),
                _ => stack,
            };
            *st.s.off.0.entry(stack).or_default() += us;
        }
    }
    st.s
}

/// A sleep that another thread's IO ended, charged to that IO: the
/// waker's IO chain under [`OFF_IO`], its thread frame saying whose
/// sleep it was. With group commit one connection syncs the log and
/// wakes the others waiting on a futex; their sleep is the sync's, yet
/// it read as `__futex_abstimed_wait_common (sleeping)` 0 → 51 µs/op
/// above `fdatasync (io)` 0.2 → 26 on MariaDB's redo log flushed per
/// commit (fresh-clone CI, 2026-12-02), and which thread leads a group
/// (syncing) and which follow (sleeping) changes from run to run.
/// The wait site, named by the call that waited, is the sync's.
fn woken_by_io(sleep: &str, io: &str) -> String {
    let mut own = sleep.split(';');
    let _root = own.next();
    let sleeper = own.next().unwrap_or("[thread]");
    let mut theirs = io.split(';');
    let _root = theirs.next();
    let waker = theirs.next().unwrap_or("[thread]");
    let mut out = format!("{OFF_IO};{sleeper}\u{a0}woken\u{a0}by\u{a0}{waker}");
    for f in theirs {
        out.push(';');
        out.push_str(f);
    }
    out
}

/// Adds one record to what is folded so far.
fn finish(r: Record, st: &mut State, f: &Followed) {
    let ours = f.keeps(r.pid, r.tid);
    match r.kind {
        Kind::Sample if ours => {
            if let Some((_, Some(dso))) = r.frames.first() {
                *st.s.unnamed.entry(dso.clone()).or_default() += 1;
            }
            *st.s.cpu.0.entry(chain(r.comm, &r.frames)).or_default() += 1;
        }
        Kind::Switch { state, next } => {
            // A followed thread switched back in by another's switch out
            // (a recording of the whole machine).
            if let Some(n) = next {
                back_in(st, n, r.time);
            }
            if !ours {
                return;
            }
            let root = match state.chars().next() {
                Some('R') => OFF_PREEMPTED,
                Some('D') => OFF_IO,
                _ => OFF_BLOCKED,
            };
            // The scheduler's own frames say nothing of the wait site.
            let frames: Vec<_> = r
                .frames
                .iter()
                .skip_while(|(fr, _)| is_scheduler(fr))
                .cloned()
                .collect();
            let stack = format!("{root};{}", chain(r.comm, &frames));
            let t = st.threads.entry(r.tid).or_default();
            if let Some(at) = t.in_at.take() {
                t.ran_us += ((r.time - at) * 1e6).max(0.0);
            }
            // Preempted, it still runs on from its IO.
            if root != OFF_PREEMPTED {
                t.from_io = None;
            }
            let wait = Wait {
                stack,
                at: r.time,
                woken_by_io: None,
            };
            if st.pending.insert(r.tid, wait).is_some() {
                st.s.open_switches += 1;
            }
        }
        Kind::Waking { target } => {
            let io = st.threads.get(&r.tid).and_then(|t| t.from_io.clone());
            if let (Some(io), Some(w)) = (io, st.pending.get_mut(&target)) {
                if w.stack.starts_with(OFF_BLOCKED) {
                    w.woken_by_io = Some(io);
                }
            }
        }
        Kind::In => back_in(st, r.tid, r.time),
        Kind::Sample | Kind::Out => {}
    }
}

/// Thread `tid` is back on a CPU at `time`: its wait ends.
fn back_in(st: &mut State, tid: u32, time: f64) {
    if let Some(w) = st.pending.remove(&tid) {
        let us = ((time - w.at) * 1e6).round().max(0.0) as u64;
        let t = st.threads.entry(tid).or_default();
        if w.stack.starts_with(OFF_IO) {
            t.from_io = Some(w.stack.clone());
        }
        *t.off.entry((w.stack, w.woken_by_io)).or_default() += us;
        t.in_at = Some(time);
    }
}

fn is_scheduler(f: &str) -> bool {
    matches!(
        f,
        "__schedule_[k]" | "schedule_[k]" | "preempt_schedule_common_[k]" | "__cond_resched_[k]"
    )
}

/// A call chain as folded text, root first: the thread's name, then the
/// frames from the outermost in.
fn chain(comm: &str, frames: &[(String, Option<String>)]) -> String {
    let mut out = String::with_capacity(16 * (frames.len() + 1));
    out.push_str(if comm.is_empty() { "[thread]" } else { comm });
    // A chain perf could not follow further ends in unnamed frames at
    // address 0: they say nothing.
    let outer = frames.iter().rev().skip_while(|(f, _)| f == "[unknown]");
    for (f, _) in outer {
        out.push(';');
        out.push_str(f);
    }
    out.replace(' ', "\u{a0}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "\
mariadbd  7524/7524 100.000100:      cpu-clock:
\tffffffff821f7f58 do_syscall_64 ([kernel.kallsyms])
\t          fec20 MYSQLparse(THD*, bool) (/opt/m/bin/mariadbd)
\t          fe000 do_command (/opt/m/bin/mariadbd)

mariadbd  7524/7524 100.000200:      cpu-clock:
\t          fec20 [unknown] (/opt/m/bin/mariadbd)
\t          fe000 do_command (/opt/m/bin/mariadbd)

mariadbd  7524/7524 100.000300: PERF_RECORD_SWITCH OUT
mariadbd  7524/7524 100.000250:  sched:sched_switch: prev_comm=mariadbd prev_pid=7524 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0
\tffffffff821f7f58 __schedule ([kernel.kallsyms])
\tffffffff821f88c3 schedule ([kernel.kallsyms])
\tffffffff8170f0fb do_fsync ([kernel.kallsyms])
\t          fec20 fsync (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t              0 [unknown] ([unknown])

mariadbd  7524/7524 100.001250: PERF_RECORD_SWITCH IN
mariadbd  7524/7525 100.002000:  sched:sched_switch: prev_comm=x prev_pid=7525 prev_prio=120 prev_state=R ==> next
\tffffffff821f7f58 __schedule ([kernel.kallsyms])
\t          fec20 row_search_mvcc (/opt/m/bin/mariadbd)
";

    fn followed() -> Followed {
        Followed {
            pids: vec![7524],
            tids: vec![],
        }
    }

    #[test]
    fn samples_fold_root_first_and_unnamed_leaves_are_counted_per_object() {
        let s = fold(SCRIPT, &followed());
        assert_eq!(
            s.cpu
                .0
                .get("mariadbd;do_command;MYSQLparse(THD*,\u{a0}bool);do_syscall_64_[k]"),
            Some(&1),
            "{:?}",
            s.cpu
        );
        assert_eq!(s.cpu.0.get("mariadbd;do_command;[mariadbd]"), Some(&1));
        assert_eq!(s.unnamed.get("mariadbd"), Some(&1));
    }

    #[test]
    fn a_switch_out_weighs_the_time_until_the_thread_is_back_in() {
        let s = fold(SCRIPT, &followed());
        assert_eq!(
            s.off.0.get("[off: io];mariadbd;fsync;do_fsync_[k]"),
            Some(&1000),
            "{:?}",
            s.off
        );
        // Never switched back in before the end: not counted, but said.
        assert_eq!(s.open_switches, 1);
        assert_eq!(s.off.0.len(), 1);
    }

    /// A recording of the whole machine: other processes' samples are
    /// left out, and a followed thread's wait ends when another thread's
    /// switch names it as the next to run.
    #[test]
    fn a_whole_machine_recording_keeps_the_followed_threads_alone() {
        let script = "\
mariadbd  7524/7530 10.000000:  sched:sched_switch: prev_comm=x prev_pid=7530 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0
\t          fec20 pthread_cond_wait (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t          fe000 os_event_wait (/opt/m/bin/mariadbd)

        mariadbd  7524/7530  10.000500: PERF_RECORD_SWITCH_CPU_WIDE IN           prev pid/tid:     0/0

bash      900/900   10.000600:      cpu-clock:
\t          fec20 main (/usr/bin/bash)

mariadbd  7524/7530 10.000700:      cpu-clock:
\t          fec20 row_search_mvcc (/opt/m/bin/mariadbd)
";
        let s = fold(script, &followed());
        assert_eq!(
            s.off
                .0
                .get("[off: sleeping];mariadbd;os_event_wait;pthread_cond_wait"),
            Some(&500),
            "{:?}",
            s.off
        );
        assert_eq!(s.cpu.total(), 1, "{:?}", s.cpu);
        assert_eq!(s.open_switches, 0);
    }

    /// Regression: an off-CPU diff was led by background threads asleep
    /// through the window (9146 → 3052 µs/op of futex waits), which
    /// marked a binary log's fdatasync "(noise)". A thread that slept and
    /// ran almost nothing against the busiest thread is idle, its
    /// sleeping rooted apart; one that slept as often but ran between its
    /// sleeps (a connection waiting for its client) is not.
    #[test]
    fn a_thread_asleep_through_the_window_is_idle_and_one_that_ran_is_not() {
        let mut script = String::new();
        let mut t = 100.0;
        for i in 0..10 {
            // 8000: asleep 1 s, awake 10 µs.
            script.push_str(&format!(
                "mariadbd  7524/8000 {t:.6}:  sched:sched_switch: prev_comm=mariadbd prev_pid=8000 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0\n\t    fec20 pthread_cond_timedwait (/usr/lib/libc.so.6)\n\t    fe000 srv_master_thread (/opt/m/bin/mariadbd)\n\n"
            ));
            script.push_str(&format!(
                "mariadbd  7524/8000 {:.6}: PERF_RECORD_SWITCH IN\n\n",
                t + 1.0
            ));
            // 8001: asleep 0.5 s, then runs 0.3 s with a sample.
            script.push_str(&format!(
                "mariadbd  7524/8001 {:.6}:  sched:sched_switch: prev_comm=mariadbd prev_pid=8001 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0\n\t    fec20 recv (/usr/lib/libc.so.6)\n\t    fe000 do_command (/opt/m/bin/mariadbd)\n\n",
                t + 0.2
            ));
            script.push_str(&format!(
                "mariadbd  7524/8001 {:.6}: PERF_RECORD_SWITCH IN\n\n",
                t + 0.7
            ));
            script.push_str(&format!(
                "mariadbd  7524/8001 {:.6}:      cpu-clock:\n\t    fe000 do_command (/opt/m/bin/mariadbd)\n\n",
                t + 0.8
            ));
            t += 1.0 + 1e-5 * (i as f64 + 1.0);
        }
        let s = fold(&script, &followed());
        let idle = s
            .off
            .0
            .get("[off: idle];mariadbd;srv_master_thread;pthread_cond_timedwait")
            .copied();
        assert!(idle.is_some_and(|us| us > 9_000_000), "{:?}", s.off);
        let working = s
            .off
            .0
            .get("[off: sleeping];mariadbd;do_command;recv")
            .copied();
        assert!(working.is_some_and(|us| us > 4_000_000), "{:?}", s.off);
        assert_eq!(s.off.0.len(), 2, "{:?}", s.off);
    }

    /// Regression (fresh-clone CI, 2026-12-02): with group commit one
    /// connection syncs the redo log and wakes the others, asleep on a
    /// futex; their sleep read as `__futex_abstimed_wait_common
    /// (sleeping)` and led the diff above the `fdatasync (io)` that was
    /// its cause. A sleep that a thread fresh from an IO wait ends is
    /// charged to that IO; one it ends after sleeping since is not.
    #[test]
    fn a_sleep_that_another_threads_sync_ends_is_charged_to_the_sync() {
        let sync = "\t    fec20 fdatasync (/usr/lib/libc.so.6)\n\t    fe000 [unknown] (/usr/sbin/mariadbd)\n";
        let futex = "\t    fec20 __futex_abstimed_wait_common (/usr/lib/libc.so.6)\n\t    fe000 [unknown] (/usr/sbin/mariadbd)\n";
        let out = |tid: u32, t: f64, state: &str, stack: &str| {
            format!("mariadbd  7524/{tid} {t:.6}:  sched:sched_switch: prev_comm=mariadbd prev_pid={tid} prev_prio=120 prev_state={state} ==> next_comm=swapper/0 next_pid=0\n{stack}\n")
        };
        let back =
            |tid: u32, t: f64| format!("mariadbd  7524/{tid} {t:.6}: PERF_RECORD_SWITCH IN\n\n");
        let wakes = |tid: u32, t: f64, target: u32| {
            format!("        mariadbd  7524/{tid} {t:.6}: sched:sched_waking: comm=mariadbd pid={target} prio=120 target_cpu=001 ffffffff813b4b46 try_to_wake_up ([kernel.kallsyms])\n\n")
        };
        let script = [
            // 7525 leads: syncs for 5 ms, then wakes 7526 at once.
            out(7525, 10.000, "D", sync),
            out(7526, 10.001, "S", futex),
            back(7525, 10.005),
            wakes(7525, 10.0051, 7526),
            back(7526, 10.0052),
            // 7525 sleeps on its client after; what it wakes then was
            // not waiting for its sync.
            out(7525, 10.006, "S", futex),
            out(7526, 10.0065, "S", futex),
            back(7525, 10.007),
            wakes(7525, 10.0071, 7526),
            back(7526, 10.0075),
        ]
        .concat();
        let s = fold(&script, &followed());
        let io = "[off: io];mariadbd;[mariadbd];fdatasync";
        let waited = "[off: io];mariadbd\u{a0}woken\u{a0}by\u{a0}mariadbd;[mariadbd];fdatasync";
        let slept = "[off: sleeping];mariadbd;[mariadbd];__futex_abstimed_wait_common";
        assert_eq!(s.off.0.get(io), Some(&5000), "{:?}", s.off);
        assert_eq!(s.off.0.get(waited), Some(&4200), "{:?}", s.off);
        assert_eq!(s.off.0.get(slept), Some(&2000), "{:?}", s.off);
        assert_eq!(s.off.0.len(), 3, "{:?}", s.off);
    }
}
