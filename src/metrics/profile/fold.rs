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
/// A thread in uninterruptible sleep (disk IO, fsync).
pub const OFF_IO: &str = "[off: io]";
/// A thread that could run but was switched out for another one.
pub const OFF_PREEMPTED: &str = "[off: preempted]";

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
    tid: u32,
    time: f64,
    kind: Kind<'a>,
    frames: Vec<(String, Option<String>)>,
    comm: &'a str,
}

enum Kind<'a> {
    Sample,
    Switch { state: &'a str },
    In,
    Out,
}

/// Parses a record's header: `comm tid time: [period] event: [trace]`.
fn header(line: &str) -> Option<Record<'_>> {
    let (head, rest) = line.split_once(": ")?;
    let mut words = head.split_whitespace().rev();
    let time: f64 = words.next()?.parse().ok()?;
    let tid: u32 = words.next()?.parse().ok()?;
    let comm = head
        .trim()
        .rsplitn(3, char::is_whitespace)
        .nth(2)
        .unwrap_or("")
        .trim();
    let rest = rest.trim_start();
    let kind = if let Some(sw) = rest.strip_prefix("PERF_RECORD_SWITCH") {
        if sw.trim_start().starts_with("IN") {
            Kind::In
        } else {
            Kind::Out
        }
    } else if rest.contains("sched:sched_switch:") {
        let state = rest
            .split_once("prev_state=")
            .map_or("S", |(_, s)| s.split_whitespace().next().unwrap_or("S"));
        Kind::Switch { state }
    } else {
        Kind::Sample
    };
    Some(Record {
        tid,
        time,
        kind,
        frames: Vec::new(),
        comm,
    })
}

/// Folds `perf script -F comm,tid,time,event,trace,ip,sym,dso
/// --show-switch-events` output.
pub fn fold(script: &str) -> Stacks {
    let mut s = Stacks::default();
    // Per thread: the stack and time it left the CPU at.
    let mut pending: HashMap<u32, (String, f64)> = HashMap::new();
    let mut cur: Option<Record> = None;
    for line in script.lines() {
        // Frames are indented with a tab; a header starts with the
        // thread's name.
        if line.starts_with('\t') {
            if let (Some(r), Some(f)) = (cur.as_mut(), frame(line)) {
                r.frames.push(f);
            }
            continue;
        }
        if line.trim().is_empty() {
            if let Some(r) = cur.take() {
                finish(r, &mut s, &mut pending);
            }
            continue;
        }
        if let Some(r) = cur.take() {
            finish(r, &mut s, &mut pending);
        }
        cur = header(line);
    }
    if let Some(r) = cur.take() {
        finish(r, &mut s, &mut pending);
    }
    s.open_switches += pending.len() as u64;
    s
}

/// Adds one record to what is folded so far.
fn finish(r: Record, s: &mut Stacks, pending: &mut HashMap<u32, (String, f64)>) {
    match r.kind {
        Kind::Sample => {
            if let Some((_, Some(dso))) = r.frames.first() {
                *s.unnamed.entry(dso.clone()).or_default() += 1;
            }
            *s.cpu.0.entry(chain(r.comm, &r.frames)).or_default() += 1;
        }
        Kind::Switch { state } => {
            let root = match state.chars().next() {
                Some('R') => OFF_PREEMPTED,
                Some('D') => OFF_IO,
                _ => OFF_BLOCKED,
            };
            // The scheduler's own frames say nothing of the wait site.
            let frames: Vec<_> = r
                .frames
                .iter()
                .skip_while(|(f, _)| is_scheduler(f))
                .cloned()
                .collect();
            let stack = format!("{root};{}", chain(r.comm, &frames));
            if pending.insert(r.tid, (stack, r.time)).is_some() {
                s.open_switches += 1;
            }
        }
        Kind::In => {
            if let Some((stack, at)) = pending.remove(&r.tid) {
                let us = ((r.time - at) * 1e6).round().max(0.0) as u64;
                *s.off.0.entry(stack).or_default() += us;
            }
        }
        Kind::Out => {}
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
mariadbd  7524 100.000100:      cpu-clock:
\tffffffff821f7f58 do_syscall_64 ([kernel.kallsyms])
\t          fec20 MYSQLparse(THD*, bool) (/opt/m/bin/mariadbd)
\t          fe000 do_command (/opt/m/bin/mariadbd)

mariadbd  7524 100.000200:      cpu-clock:
\t          fec20 [unknown] (/opt/m/bin/mariadbd)
\t          fe000 do_command (/opt/m/bin/mariadbd)

mariadbd  7524 100.000300: PERF_RECORD_SWITCH OUT
mariadbd  7524 100.000250:  sched:sched_switch: prev_comm=mariadbd prev_pid=7524 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0
\tffffffff821f7f58 __schedule ([kernel.kallsyms])
\tffffffff821f88c3 schedule ([kernel.kallsyms])
\tffffffff8170f0fb do_fsync ([kernel.kallsyms])
\t          fec20 fsync (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t              0 [unknown] ([unknown])

mariadbd  7524 100.001250: PERF_RECORD_SWITCH IN
mariadbd  7525 100.002000:  sched:sched_switch: prev_comm=x prev_pid=7525 prev_prio=120 prev_state=R ==> next
\tffffffff821f7f58 __schedule ([kernel.kallsyms])
\t          fec20 row_search_mvcc (/opt/m/bin/mariadbd)
";

    #[test]
    fn samples_fold_root_first_and_unnamed_leaves_are_counted_per_object() {
        let s = fold(SCRIPT);
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
        let s = fold(SCRIPT);
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
}
