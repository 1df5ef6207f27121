//! Why a step changed, in one sentence with its numbers: first what bounded
//! the step in the target's window (the machine's CPU saturated, the
//! device busy, or neither), then the per-operation costs that moved, and
//! the cause they point to: new CPU overhead, more IO, waiting on fsync,
//! or waiting on something else (locks, the network).
//!
//! A cost counts only when it moved past the thresholds and it matters at
//! the step's rate: 0.02 against 0.00001 KiB written per query is a ratio
//! of 2,000 of nothing. So each cost has a floor as a rate (cost per
//! operation × operations per second), which scales with the figure: a
//! scan's 0.2 µs per row is judged at its millions of rows a second.

use super::cause::{self, op_us, Candidate, Cause, CauseKind, LEADS};
use super::{cost_verdict, judged, verdict, Cell, Cost, Verdict};
use crate::measure::units::fmt_ratio;

/// Machine CPU (vmstat's us + sy) at or above which a step is CPU-bound:
/// the clients and the server had no more CPU to use.
pub const CPU_BOUND_PCT: f64 = 90.0;

/// The benchmark's own CPU, in % of what its threads can use, at or above
/// which a step is CPU-bound: each client's connection runs one statement
/// at a time (its client and server threads take turns), so the threads
/// can use one core per client at most, and no more than the machine has.
/// Two SQLite clients on two cores at 80–87% of the machine were called
/// "not CPU-bound" by the machine's figure alone; the rest is the
/// scheduler's, the sampler's and the kernel's.
pub const OWN_CPU_BOUND_PCT: f64 = 75.0;

/// Device utilisation (iostat's %util) at or above which a step is
/// IO-bound.
pub const IO_BOUND_PCT: f64 = 80.0;

/// The smallest rate at which a cost can explain anything: 2% of a core
/// of CPU, 1,000 context switches, 50 requests or 1 MiB a second.
fn matters(k: Cost, per_op: f64, ops_per_sec: f64) -> bool {
    let rate = per_op * ops_per_sec;
    match k {
        Cost::CpuUs | Cost::OwnCpuUs | Cost::ServerCpuUs | Cost::ClientCpuUs => rate >= 20_000.0,
        Cost::Cs | Cost::OwnCs | Cost::OwnVcs | Cost::OwnIvcs => rate >= 1_000.0,
        Cost::Reads | Cost::Writes => rate >= 50.0,
        Cost::ReadKb | Cost::WriteKb => rate >= 1_024.0,
    }
}

/// Whether a cost's change between `base` and `c` is large enough, on
/// either side, to explain anything.
pub fn cost_matters(k: Cost, c: &Cell, base: &Cell) -> bool {
    let side = |x: &Cell| match (x.hardware.costs.get(&k), x.figures.throughput) {
        (Some(&v), Some(t)) => matters(k, v, t),
        _ => false,
    };
    side(c) || side(base)
}

/// Whether cost `k` of `c` gives way to a better figure: the machine's
/// CPU, where the benchmark's own is measured (the machine's includes
/// whatever else ran beside the step).
pub fn superseded(k: Cost, c: &Cell) -> bool {
    let own = |o: Cost| c.hardware.costs_relative.contains_key(&o);
    (k == Cost::CpuUs && own(Cost::OwnCpuUs))
        || (k == Cost::Cs && own(Cost::OwnCs))
        // Waiting and being preempted are told apart where both are
        // measured: their sum says neither.
        || (k == Cost::OwnCs && own(Cost::OwnVcs) && own(Cost::OwnIvcs))
}

/// The p below which a change whose costs per operation did not move is
/// still taken as the build's (a bisect's culprit, a gate's regression):
/// beside a busy host a window loses throughput without costing more per
/// operation, and a p near 0.05 from such windows is the host's.
pub const UNEXPLAINED_P: f64 = 0.01;

/// Whether any of a cell's costs per operation changed against its base.
pub fn costs_moved(cell: &Cell, base: &Cell) -> bool {
    cell.hardware
        .costs_relative
        .keys()
        .any(|k| cell.cost_verdict(*k, base).is_some_and(|v| v.is_change()))
}

/// What bounded a step in a window.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bound {
    Cpu(f64),
    /// The benchmark's threads used this % of the cores they can use.
    Threads(f64, f64),
    Io(f64),
    /// Neither was saturated (the machine's CPU, in %).
    Neither(f64),
    Unknown,
}

fn bound(c: &Cell) -> Bound {
    let threads = c
        .hardware
        .own_cpu_pct
        .zip(c.hardware.usable_cores)
        .filter(|(_, cap)| *cap > 0.0)
        .map(|(used, cap)| (used / cap, cap));
    match (c.hardware.cpu_util_pct, threads, c.hardware.disk_util_pct) {
        (Some(cpu), _, _) if cpu >= CPU_BOUND_PCT => Bound::Cpu(cpu),
        (_, Some((pct, cap)), _) if pct >= OWN_CPU_BOUND_PCT => Bound::Threads(pct, cap),
        (_, _, Some(io)) if io >= IO_BOUND_PCT => Bound::Io(io),
        (Some(cpu), _, _) => Bound::Neither(cpu),
        _ => Bound::Unknown,
    }
}

/// Names the cause of a change of `relative` from what was measured.
pub fn explain(relative: f64, c: &Cell, base: &Cell) -> String {
    explain_ranked(relative, c, base, &[], true).0
}

/// The sentence and, for a changed cell (`changed`), the ranked causes of
/// every kind of evidence (`compare::cause`), the sentence led by the
/// most likely.
pub fn explain_ranked(
    relative: f64,
    c: &Cell,
    base: &Cell,
    settings_differ: &[(String, String, String)],
    changed: bool,
) -> (String, Option<Cause>) {
    let (why, moved, waits_led) = cause(relative, c, base);
    let change = op_us(c.figures.clients.max(1), c.figures.throughput)
        .zip(op_us(c.figures.clients.max(1), base.figures.throughput))
        .map(|(t, b)| t - b)
        .filter(|d| d.abs() > 0.0);
    // Each candidate with its part of the sentence, in the order of the
    // evidence.
    let mut found: Vec<(Candidate, Part)> = Vec::new();
    // Another plan is a cause of its own, whatever the costs say of it.
    if !c.internals.plans_differ.is_empty() {
        let d = &c.internals.plans_differ;
        let named: Vec<String> = d.iter().take(2).map(|p| p.describe()).collect();
        let more = match d.len() {
            n if n > 2 => format!(" (and {} more)", n - 2),
            _ => String::new(),
        };
        let names = format!("{}{more}", named.join("; "));
        let head = format!("plan differs: {names}");
        found.push((candidate(CauseKind::Plan, &names, None), Part::of(head)));
    }
    // The costs, with the server's waits where they led them; the
    // functions and wait sites a profile names are said with them unless
    // they account for most of the change themselves.
    let profile = where_from(c, &moved);
    let profile_share = profile.as_ref().and(change).and_then(|d| {
        let p = c.internals.profile.as_ref()?;
        let grew = d > 0.0;
        let sum: f64 = p
            .cpu_diff
            .iter()
            .chain(&p.wait_diff)
            .filter(|x| x.beyond_noise && x.material && (x.delta_us > 0.0) == grew)
            .map(|x| x.delta_us)
            .sum();
        Some(sum / d)
    });
    let profile_leads = changed && profile_share.is_some_and(|s| s >= LEADS);
    let waits_share = c
        .internals
        .waits
        .as_ref()
        .and_then(|w| w.share_of_change)
        .filter(|_| waits_led);
    let kind = if waits_led {
        CauseKind::Waits
    } else {
        CauseKind::Resource
    };
    // What the statements did differently: where the costs came from,
    // said after them.
    let statements = match c
        .internals
        .server_statements
        .as_ref()
        .map(|s| s.moved.as_slice())
    {
        Some([]) | None => None,
        Some(m) => {
            let named: Vec<String> = m.iter().take(2).map(|x| x.describe()).collect();
            Some(format!("statements: {}", named.join("; ")))
        }
    };
    let head = match (&profile, profile_leads) {
        (Some(w), false) => format!("{why}: {w}"),
        _ => why.clone(),
    };
    found.push((
        candidate(kind, &why, waits_share),
        Part {
            head,
            tail: statements,
        },
    ));
    if let (Some(w), true) = (&profile, profile_leads) {
        found.push((
            candidate(CauseKind::Profile, w, profile_share),
            Part::of(w.clone()),
        ));
    }
    let movers: Vec<String> = settings_differ
        .iter()
        .filter(|(k, _, _)| moves(k).is_some_and(|m| moved.iter().any(|c| m.explains(*c))))
        .map(|(k, mine, theirs)| super::setting::describe(k, mine, theirs))
        .collect();
    // Two in the sentence, the rest counted: a MySQL 5.6 → 8.0 write's
    // seven binary-log settings, leading, left no room for the waits that
    // measured it (the settings table has them all).
    if let [first, rest @ ..] = movers.as_slice() {
        let names = match rest {
            [] => first.clone(),
            [second] => format!("{first}, {second}"),
            [second, more @ ..] => format!("{first}, {second} (and {} more)", more.len()),
        };
        let head = format!("the settings that differ: {names}");
        found.push((candidate(CauseKind::Setting, &names, None), Part::of(head)));
    }
    // Each share's range over the change's interval.
    let interval = c.test.significance.as_ref().and_then(|s| s.interval);
    for (x, _) in &mut found {
        x.share_range = x
            .share
            .zip(interval)
            .and_then(|(s, i)| cause::share_range(s, relative, (i.lo, i.hi)));
    }
    let ranked = match changed {
        true => cause::rank(found.iter().map(|(c, _)| c.clone()).collect()),
        false => None,
    };
    let Some(ranked) = ranked else {
        let parts: Vec<String> = found.iter().map(|(_, p)| p.say(None, None)).collect();
        return (parts.join("; "), None);
    };
    // The sentence: the lead with its share, the runner-up beside it
    // when close, then the rest in the order of the evidence.
    let said = if ranked.close { 2 } else { 1 };
    let first = &ranked.ranked[..said];
    let part = |x: &Candidate| {
        let p = found.iter().find(|(c, _)| c == x).map(|(_, p)| p);
        p.map(|p| p.say(x.share, x.share_range)).unwrap_or_default()
    };
    let mut parts: Vec<(String, bool)> = first.iter().map(|x| (part(x), false)).collect();
    if ranked.close {
        parts[1].0 = format!("about as much: {}", parts[1].0);
    }
    // After the lead, only the settings may be left to the tables: what
    // was measured is always said.
    parts.extend(
        found
            .iter()
            .filter(|(c, _)| !first.contains(c))
            .map(|(c, p)| (p.say(None, None), c.kind == CauseKind::Setting)),
    );
    (fitted(parts), Some(ranked))
}

/// The longest explanation a summary line gives, in characters: the
/// step, its clients and ratio come before it, and a line past 400
/// characters is not read (a MySQL 5.6 → 8.0 study's ran to 700 with its
/// settings).
const SENTENCE: usize = 340;

/// The parts joined, those that may go (`true`: a setting after the
/// lead) left to the report's tables, last first, while the sentence is
/// too long. The lead and what was measured stay, however long: the cut
/// once dropped the functions that named a lock per statement behind two
/// settings (tests/profiles.rs).
fn fitted(mut parts: Vec<(String, bool)>) -> String {
    let len = |p: &[(String, bool)]| p.iter().map(|x| x.0.chars().count() + 2).sum::<usize>();
    let mut cut = false;
    while len(&parts) > SENTENCE {
        let Some(i) = parts.iter().rposition(|x| x.1) else {
            break;
        };
        parts.remove(i);
        cut = true;
    }
    let s = parts
        .into_iter()
        .map(|x| x.0)
        .collect::<Vec<_>>()
        .join("; ");
    match cut {
        true => format!("{s}; more in the tables"),
        false => s,
    }
}

/// A candidate's part of the sentence: what it says, and what follows it
/// (the statements after the costs).
struct Part {
    head: String,
    tail: Option<String>,
}

impl Part {
    fn of(head: String) -> Part {
        Part { head, tail: None }
    }

    /// The part, its share said after its head when it leads, with the
    /// share's range over the change's interval where it has one.
    fn say(&self, share: Option<f64>, range: Option<(f64, f64)>) -> String {
        let head = match (share, range) {
            (Some(s), Some((lo, hi))) => format!(
                "{} ({:.0}% of the change, {:.0}–{:.0}% over its interval)",
                self.head,
                s * 100.0,
                lo * 100.0,
                hi * 100.0
            ),
            (Some(s), None) => format!("{} ({:.0}% of the change)", self.head, s * 100.0),
            (None, _) => self.head.clone(),
        };
        match &self.tail {
            Some(t) => format!("{head}; {t}"),
            None => head,
        }
    }
}

fn candidate(kind: CauseKind, names: &str, share: Option<f64>) -> Candidate {
    Candidate {
        kind,
        names: names.to_string(),
        share,
        share_range: None,
    }
}

/// Where the costs that moved went, from the cell's profile against its
/// base's: the functions whose CPU per operation moved with the CPU, the
/// wait sites whose time per operation moved with the waits. None
/// without profiles, or when every change is within sampling noise.
fn where_from(c: &Cell, moved: &[Cost]) -> Option<String> {
    use super::profile::named_changes;
    let p = c.internals.profile.as_ref()?;
    let rel = |k: Cost| c.hardware.costs_relative.get(&k).copied().unwrap_or(1.0);
    let mut parts: Vec<(f64, String)> = Vec::new();
    if let Some(&k) = moved.iter().find(|k| is_cpu(**k)) {
        if let Some(w) = named_changes(&p.cpu_diff, rel(k) > 1.0, 3) {
            parts.push((rel(k).ln().abs(), w));
        }
    }
    if let Some(&k) = moved
        .iter()
        .find(|k| matches!(k, Cost::OwnVcs | Cost::OwnCs | Cost::Writes | Cost::WriteKb))
    {
        if let Some(w) = named_changes(&p.wait_diff, rel(k) > 1.0, 2) {
            parts.push((rel(k).ln().abs(), format!("waits {w}")));
        }
    }
    // What moved most first, as the cause before it says.
    parts.sort_by(|a, b| b.0.total_cmp(&a.0));
    (!parts.is_empty()).then(|| {
        parts
            .into_iter()
            .map(|(_, w)| w)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// What a server setting moves, by its name.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Moves {
    /// Writes per operation and the waits for them: logs, their syncs,
    /// the doublewrite buffer.
    WritesAndWaits,
    /// Reads per operation, and the CPU of reading again: what the caches
    /// hold (a page the cache cannot keep is read again from the
    /// operating system's cache, which costs CPU before it costs IO).
    Reads,
    /// CPU per operation: instrumentation, the optimizer, JIT, a lock
    /// taken per statement.
    Cpu,
    /// A log of every statement: its writes and the CPU of writing it.
    Logging,
}

impl Moves {
    fn explains(self, c: Cost) -> bool {
        let cpu = matches!(c, Cost::OwnCpuUs | Cost::CpuUs);
        match self {
            Moves::WritesAndWaits => {
                matches!(c, Cost::Writes | Cost::WriteKb | Cost::OwnVcs | Cost::OwnCs)
            }
            Moves::Reads => cpu || matches!(c, Cost::Reads | Cost::ReadKb),
            Moves::Cpu => cpu,
            Moves::Logging => cpu || matches!(c, Cost::Writes | Cost::WriteKb),
        }
    }
}

/// The settings known to move a cost, by name (MySQL and MariaDB,
/// PostgreSQL, SQLite pragmas); a setting not here is never named.
fn moves(setting: &str) -> Option<Moves> {
    let s = setting.to_ascii_lowercase();
    const WRITES: [&str; 16] = [
        "log_bin",
        "sync_binlog",
        "binlog_format",
        "binlog_row_image",
        "log_slave_updates",
        "log_replica_updates",
        "innodb_flush_log_at_trx_commit",
        "innodb_flush_method",
        "innodb_doublewrite",
        "synchronous_commit",
        "fsync",
        "wal_sync_method",
        "full_page_writes",
        "commit_delay",
        "synchronous",
        "journal_mode",
    ];
    const READS: [&str; 7] = [
        "innodb_buffer_pool_size",
        "shared_buffers",
        "effective_cache_size",
        "cache_size",
        "mmap_size",
        "rocksdb_block_cache_size",
        "key_buffer_size",
    ];
    const CPU: [&str; 6] = [
        "performance_schema",
        "optimizer_switch",
        "jit",
        "query_cache_type",
        "innodb_adaptive_hash_index",
        "locking_mode",
    ];
    const LOGGING: [&str; 5] = [
        "general_log",
        "log_statement",
        "slow_query_log",
        "log_min_duration_statement",
        "log_queries_not_using_indexes",
    ];
    if WRITES.contains(&s.as_str()) {
        Some(Moves::WritesAndWaits)
    } else if READS.contains(&s.as_str()) {
        Some(Moves::Reads)
    } else if CPU.contains(&s.as_str()) {
        Some(Moves::Cpu)
    } else if LOGGING.contains(&s.as_str()) {
        Some(Moves::Logging)
    } else {
        None
    }
}

/// The cause in words, the costs it rests on (those that moved), and
/// whether the server's waits led it.
fn cause(relative: f64, c: &Cell, base: &Cell) -> (String, Vec<Cost>, bool) {
    let measured: Vec<(Cost, f64)> = Cost::EXPLAINING
        .iter()
        .filter(|k| !superseded(**k, c))
        .filter_map(|k| Some((*k, *c.hardware.costs_relative.get(k)?)))
        .collect();
    if measured.is_empty() {
        return ("cost per operation not measured".into(), Vec::new(), false);
    }
    let v = verdict(relative);
    let moved = Moved::of(&measured, v, c, base);
    // What held the step back: for a regression, the target's window;
    // for a win, the base's (what the target got rid of).
    let (worse, better) = (v == Verdict::Worse, v == Verdict::Better);
    let b = if worse { bound(c) } else { bound(base) };
    let prefix = bound_prefix(b, worse);
    let with = |s: String| {
        if prefix.is_empty() {
            s
        } else {
            format!("{prefix}: {s}")
        }
    };
    if !worse && !better {
        return if moved.0.is_empty() {
            ("costs per operation unchanged".into(), Vec::new(), false)
        } else {
            (Moved::text(&moved.0), moved.kinds(), false)
        };
    }
    // The server's own account of its waits, when they account for most
    // of the change in an operation's time, is the cause (unless the CPU,
    // saturated, predicts the rate): it names what the switches and
    // writes only point to.
    let waits_lead = c.internals.waits.as_ref().and_then(|w| w.leading());
    let with_waits = |mut kinds: Vec<Cost>| {
        kinds.push(Cost::OwnVcs);
        kinds
    };
    if moved.0.is_empty() {
        return match waits_lead {
            Some(w) => (with(w), with_waits(Vec::new()), true),
            None => (with(nothing_moved(worse, b, &measured)), Vec::new(), false),
        };
    }
    // Waiting is the voluntary switches where they are measured apart
    // (results from before hold the sum only).
    let waits = if measured.iter().any(|(k, _)| *k == Cost::OwnVcs) {
        Cost::OwnVcs
    } else {
        Cost::OwnCs
    };
    if let Some(why) = cpu_predicts(&moved, b, relative, worse, waits) {
        return (with(why), moved.kinds(), false);
    }
    match waits_lead {
        Some(w) => (
            with(format!("{}: {w}", Moved::text(&moved.0))),
            with_waits(moved.kinds()),
            true,
        ),
        None => (
            with(format!(
                "{}: {}",
                Moved::text(&moved.0),
                the_cause(&moved, worse, b, waits)
            )),
            moved.kinds(),
            false,
        ),
    }
}

/// The costs per operation that moved the way the throughput did (or
/// either way, when it held), the largest move first.
struct Moved(Vec<(Cost, f64)>);

impl Moved {
    fn of(measured: &[(Cost, f64)], v: Verdict, c: &Cell, base: &Cell) -> Moved {
        let mut moved: Vec<(Cost, f64)> = measured
            .iter()
            .copied()
            .filter(|(k, r)| {
                let cv = judged(cost_verdict(*r), c.hardware.costs_p.get(k).copied());
                cost_matters(*k, c, base)
                    && match v {
                        Verdict::Worse => cv == Verdict::Worse,
                        Verdict::Better => cv == Verdict::Better,
                        _ => cv == Verdict::Worse || cv == Verdict::Better,
                    }
            })
            .collect();
        moved.sort_by(|a, b| b.1.ln().abs().total_cmp(&a.1.ln().abs()));
        Moved(moved)
    }

    fn has(&self, k: Cost) -> bool {
        self.0.iter().any(|(x, _)| *x == k)
    }

    /// How far a cost moved, as |ln ratio| (0 when it did not).
    fn ln(&self, k: Cost) -> f64 {
        self.0
            .iter()
            .find(|(x, _)| *x == k)
            .map_or(0.0, |(_, r)| r.ln().abs())
    }

    /// The CPU per operation, when it moved.
    fn cpu(&self) -> Option<(Cost, f64)> {
        self.0.iter().find(|(k, _)| is_cpu(*k)).copied()
    }

    fn kinds(&self) -> Vec<Cost> {
        self.0.iter().map(|(k, _)| *k).collect()
    }

    /// `CPU/op ×1.37, writes/op ×1.10`: the three that moved most.
    fn text(m: &[(Cost, f64)]) -> String {
        m.iter()
            .filter(|(k, _)| *k != Cost::Writes || !m.iter().any(|(x, _)| *x == Cost::WriteKb))
            .take(3)
            .map(|(k, r)| format!("{} ×{}", k.short(), fmt_ratio(*r)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn is_cpu(k: Cost) -> bool {
    matches!(k, Cost::CpuUs | Cost::OwnCpuUs)
}

/// `CPU-bound at 98%`, or `the base IO-bound (device busy 91%)`: what
/// held the step back (for a win, the base's window).
fn bound_prefix(b: Bound, worse: bool) -> String {
    let whose = if worse { "" } else { "the base " };
    match b {
        Bound::Cpu(u) => format!("{whose}CPU-bound at {u:.0}%"),
        Bound::Threads(u, cap) => format!(
            "{whose}CPU-bound ({u:.0}% of the {cap:.0} core{} its clients can use)",
            if cap == 1.0 { "" } else { "s" }
        ),
        Bound::Io(u) => format!("{whose}IO-bound (device busy {u:.0}%)"),
        Bound::Neither(u) => format!("{whose}not CPU-bound ({u:.0}%)"),
        Bound::Unknown => String::new(),
    }
}

/// A change no cost per operation explains.
fn nothing_moved(worse: bool, b: Bound, measured: &[(Cost, f64)]) -> String {
    if matches!(b, Bound::Cpu(_) | Bound::Threads(..)) {
        // A CPU-bound step whose CPU per operation held: the time did not
        // go to waiting; what took it was not measured.
        return if worse {
            "no cost per operation grew past 5%: the cause is not among the costs measured".into()
        } else {
            "no cost per operation fell past 5%".into()
        };
    }
    match (worse, measured.iter().find(|(k, _)| is_cpu(*k))) {
        (true, Some((k, r))) => format!(
            "{} ×{}, and no cost per operation grew past 5%: more time spent waiting",
            k.short(),
            fmt_ratio(*r)
        ),
        (true, None) => "no measured cost per operation grew: more time spent waiting".into(),
        (false, _) => "less waiting, not less cost per operation".into(),
    }
}

/// Saturated CPU: the CPU per operation predicts the throughput,
/// whatever else moved.
fn cpu_predicts(
    moved: &Moved,
    b: Bound,
    relative: f64,
    worse: bool,
    waits: Cost,
) -> Option<String> {
    let (Bound::Cpu(_) | Bound::Threads(..), Some((k, r))) = (b, moved.cpu()) else {
        return None;
    };
    let rest: Vec<(Cost, f64)> = moved.0.iter().copied().filter(|(x, _)| *x != k).collect();
    // The CPU predicts the rate, but writes and waits per operation grew
    // more than it did: a log written and synced per commit costs CPU
    // too, and the CPU is not the cause.
    let has_writes = moved.has(Cost::Writes) || moved.has(Cost::WriteKb);
    let writes_ln = moved.ln(Cost::Writes).max(moved.ln(Cost::WriteKb));
    let io_lead = has_writes && moved.has(waits) && writes_ln.max(moved.ln(waits)) > r.ln().abs();
    let also = if rest.is_empty() {
        String::new()
    } else {
        format!(" ({})", Moved::text(&rest))
    };
    Some(format!(
        "{} ×{} predicts ×{:.2}, measured ×{relative:.2}{also}: {}",
        k.short(),
        fmt_ratio(r),
        1.0 / r,
        match (io_lead, worse) {
            (true, true) => "more writes and waits per operation (fsync), and the CPU they cost",
            (true, false) => "fewer writes and waits per operation (fsync), and the CPU they cost",
            (false, true) => "new CPU overhead",
            (false, false) => "less CPU per operation",
        }
    ))
}

/// The cause the costs that moved point to: preemption, fsync, other
/// waits, CPU, IO.
fn the_cause(moved: &Moved, worse: bool, b: Bound, waits: Cost) -> String {
    let more_or_less = if worse { "more" } else { "less" };
    let cpu_ln = moved.cpu().map_or(0.0, |(_, r)| r.ln().abs());
    let writes_ln = moved.ln(Cost::Writes).max(moved.ln(Cost::WriteKb));
    // Which moved more: the CPU per operation, or the waits (context
    // switches, write requests) that point elsewhere.
    let waits_lead = moved.ln(waits).max(moved.ln(Cost::Writes)) > cpu_ln;
    // Preempted: the involuntary switches moved more than anything the
    // benchmark's own work explains.
    let preempted_lead = moved.has(Cost::OwnIvcs)
        && moved.ln(Cost::OwnIvcs) > cpu_ln.max(moved.ln(waits)).max(writes_ln);
    let has_writes = moved.has(Cost::Writes) || moved.has(Cost::WriteKb);
    if preempted_lead {
        if worse {
            "preempted more (the machine was busier in this target's window)".to_string()
        } else {
            "preempted less (the machine was busier in the base's window)".to_string()
        }
    } else if has_writes && moved.has(waits) && waits_lead {
        format!("{more_or_less} waiting on fsync")
    } else if moved.has(waits) && waits_lead {
        format!("{more_or_less} waiting (locks, IO or the network)")
    } else if moved.cpu().is_some() {
        match (worse, b) {
            // "New CPU overhead" is a claim about a step the CPU bounded;
            // on a CPU with room left, the operation's time grew in more
            // than its CPU.
            (true, Bound::Neither(_) | Bound::Io(_)) => {
                "more CPU per operation, on a CPU with room to spare".into()
            }
            (true, _) => "new CPU overhead".into(),
            (false, _) => "less CPU per operation".into(),
        }
    } else if moved.has(Cost::ReadKb) || moved.has(Cost::WriteKb) || moved.has(Cost::Writes) {
        format!("{more_or_less} IO per operation")
    } else {
        format!("{more_or_less} cost per operation")
    }
}

#[cfg(test)]
mod tests;
