//! Where the time went, per cell and against the base: each function's CPU
//! per operation (its share of the profile's on-CPU samples × the cell's
//! measured CPU per operation), each wait site's off-CPU time per
//! operation, the functions that grew or shrank most, and the flame graphs'
//! trees — computed here once, laid out by every format.
//!
//! A profile's share of samples is a count: a difference smaller than
//! twice its sampling error (Poisson, both sides) is said to be within
//! sampling noise, and never named in a sentence.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Serialize;

use super::{Cell, Cost, Row, TargetMeta};
use crate::metrics::profile::{Folded, Mode, Of, Unnamed};
use crate::results::profiles::{self, Record, Stacks};
use crate::results::LoadedRun;

/// Rows in a cell's top tables.
pub const TOP: usize = 12;

/// A flame graph's frames below this share of the whole are left out (a
/// picture of thousands of slivers says less, and weighs more: at 0.5% a
/// study of 640 profiles wrote 42 MB of report.json, at 1% …).
const FLAME_MIN_SHARE: f64 = 0.01;

/// A function's change is named in a sentence only past this share of
/// the operation's CPU (a wait site's: of its CPU and off-CPU time), the
/// larger side's: a share of nothing explains nothing.
const MATERIAL: f64 = 0.005;

/// A wait site's off-CPU time has no count to test: identical targets'
/// idle threads slept ±30–95 µs/op apart at the same sites
/// (`bench/profile_aa.py`, MariaDB). A site's change is past noise only
/// when it is this factor or more, either way …
const WAIT_FACTOR: f64 = 2.0;
/// … and this share of the operation's CPU and off-CPU time.
const WAIT_SHARE: f64 = 0.02;

/// How far a function's share of the samples moves between two windows
/// of the same work, beyond the sampling's own error, as a share of it:
/// on A/A pairs the kernel's and a stripped server's largest functions
/// moved 5–15% with thousands of samples (`bench/profile_aa.py`: 8 of
/// 576 changes past noise by the counts alone, 5 with this).
const DISPERSION: f64 = 0.05;

/// How many standard errors a change in a function's share must be past
/// to be more than sampling noise: a profile compares hundreds of
/// functions at once, so 2 would name several by chance in every A/A
/// pair (Bonferroni for 1,000 functions at 5% is 4.1; most functions'
/// shares are tiny). `bench/profile_aa.py` measures what it names on
/// identical targets: 5 of 576 changes, all kernel spin locks and one
/// network wait.
const Z: f64 = 3.5;

/// One function's cost per operation.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FnCost {
    pub name: String,
    /// Where it is the leaf (self), and anywhere on the chain.
    pub self_us: f64,
    pub incl_us: f64,
    /// Its share of the samples (on CPU) or of the off-CPU time, in %.
    pub self_pct: f64,
}

/// A function's (or a wait site's) change against the base.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FnDelta {
    pub name: String,
    pub base_us: f64,
    pub us: f64,
    pub delta_us: f64,
    pub base_incl_us: f64,
    pub incl_us: f64,
    /// Past the sampling error of the two shares ([`Z`] standard
    /// errors; for a wait site, 5% of the larger side).
    pub beyond_noise: bool,
    /// Large enough to explain anything: past [`MATERIAL`] of the
    /// operation's CPU (a function) or of its CPU and waits (a wait site).
    pub material: bool,
}

/// A flame graph's frame: its µs/op (inclusive), the base's at the same
/// chain in a comparison, and its callees.
///
/// In report.json a tree is its frames in pre-order, one line each:
/// `depth µs/op base-µs/op-or-- name` — a nested tree, pretty-printed,
/// put hundreds of indented lines per frame into the file (43 MB for a
/// study of 640 profiles).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Flame {
    pub name: String,
    pub us: f64,
    pub base_us: Option<f64>,
    pub children: Vec<Flame>,
}

impl Flame {
    fn lines(&self, depth: usize, out: &mut Vec<String>) {
        out.push(format!(
            "{depth} {} {} {}",
            self.us,
            self.base_us.map_or("-".into(), |b| b.to_string()),
            self.name
        ));
        for c in &self.children {
            c.lines(depth + 1, out);
        }
    }
}

impl Serialize for Flame {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = Vec::new();
        self.lines(0, &mut out);
        out.serialize(s)
    }
}

/// A cell's profile, as the report shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CellProfile {
    pub of: Option<Of>,
    pub mode: Option<Mode>,
    pub repeat: u32,
    pub samples: u64,
    pub rate_hz: Option<u32>,
    /// Share of on-CPU samples with a function's name, in %, and where
    /// the others were and why.
    pub named_pct: Option<f64>,
    pub unnamed: Vec<Unnamed>,
    /// The CPU per operation the shares are scaled by, and whether it is
    /// the measured windows' (median) or the profiled window's own.
    pub cpu_us_per_op: Option<f64>,
    pub cpu_measured: bool,
    /// Off-CPU µs per operation, every wait site of the threads that
    /// worked.
    pub off_us_per_op: Option<f64>,
    /// µs per operation idle threads slept through (apart from the
    /// waits: it scales with the window, not the work).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_us_per_op: Option<f64>,
    pub functions: Vec<FnCost>,
    pub waits: Vec<FnCost>,
    /// The profiler's own CPU against the profiled processes' over the
    /// window, in %.
    pub overhead_pct: Option<f64>,
    /// Hardware events per operation, or why there are none.
    pub hw_per_op: BTreeMap<String, f64>,
    pub hw_missing: Option<String>,
    /// Instructions per cycle, where both were counted.
    pub ipc: Option<f64>,
    pub error: Option<String>,
    /// Why the profiled window was not quiet: its differences are not
    /// judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disturbed: Option<String>,
    pub flame: Option<Flame>,
    pub off_flame: Option<Flame>,
    /// Against the base's profile (none for a base, or a base without).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cpu_diff: Vec<FnDelta>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wait_diff: Vec<FnDelta>,
    /// The stacks, for the comparison (not written).
    #[serde(skip)]
    pub(super) stacks: Option<std::sync::Arc<(Folded, Folded)>>,
}

impl CellProfile {
    /// What moved against the base, in words, grown then shrunk: the
    /// functions (`CPU +1.90 µs/op in X, …`) and the wait sites (`waits
    /// …`) past sampling noise and material.
    pub fn moved(&self) -> Vec<String> {
        [
            named_changes(&self.cpu_diff, true, 3).map(|s| format!("CPU {s}")),
            named_changes(&self.cpu_diff, false, 3).map(|s| format!("CPU {s}")),
            named_changes(&self.wait_diff, true, 2).map(|s| format!("waits {s}")),
            named_changes(&self.wait_diff, false, 2).map(|s| format!("waits {s}")),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// The profile record that stands for a cell: the profiled repeat's, or
/// the measured repeat with the most samples.
fn chosen<'a>(records: &'a [Record], plan_name: &str, row: &Row) -> Option<&'a Record> {
    records
        .iter()
        .filter(|r| r.id.target == plan_name && r.id.at == row.id)
        .max_by_key(|r| (r.meta.mode == Some(Mode::Separate), r.meta.samples))
}

/// Every cell's profile read, and each compared with its base's.
pub(super) fn attach(
    rows: &mut [Row],
    runs: &[LoadedRun],
    targets: &[TargetMeta],
    base_of: &[usize],
) {
    let records: Vec<Vec<Record>> = runs.iter().map(|r| profiles::records(&r.dir)).collect();
    if records.iter().all(Vec::is_empty) {
        return;
    }
    // The stacks are read on every core: a study of hundreds of profiles.
    let jobs: Vec<(usize, usize, &Path, &Record)> = rows
        .iter()
        .enumerate()
        .flat_map(|(ri, row)| {
            let records = &records;
            targets.iter().enumerate().filter_map(move |(ti, t)| {
                let rec = chosen(&records[t.run], &t.plan_name, row)?;
                Some((ri, ti, runs[t.run].dir.as_path(), rec))
            })
        })
        .collect();
    let read = crate::util::par_map(&jobs, |(ri, ti, dir, rec)| {
        let cell = &rows[*ri].cells[*ti];
        (*ri, *ti, cell_profile(dir, rec, cell))
    });
    for (ri, ti, p) in read {
        rows[ri].cells[ti].internals.profile = Some(p);
    }
    for row in rows.iter_mut() {
        for (ti, &b) in base_of.iter().enumerate().take(targets.len()) {
            if b == ti {
                continue;
            }
            let (Some(bp), Some(p)) = (
                row.cells[b].internals.profile.clone(),
                row.cells[ti].internals.profile.as_mut(),
            ) else {
                continue;
            };
            diff(p, &bp);
        }
    }
}

/// The CPU cost a profile's processes stand for in a cell.
fn cpu_cost(of: Option<Of>) -> Cost {
    match of {
        Some(Of::Relbench) => Cost::ClientCpuUs,
        _ => Cost::ServerCpuUs,
    }
}

fn cell_profile(dir: &Path, rec: &Record, cell: &Cell) -> CellProfile {
    let m = &rec.meta;
    let read = |w| profiles::read_stacks(dir, &rec.id, w);
    let (cpu, off, error) = match (read(Stacks::Cpu), read(Stacks::Off)) {
        (Ok(c), Ok(o)) => (c, o, m.error.clone()),
        (Err(e), _) | (_, Err(e)) => (Folded::default(), Folded::default(), Some(format!("{e:#}"))),
    };
    // Idle threads' sleeping apart: neither a wait site of the work nor
    // part of the whole a wait site's change is judged against.
    let off = off.without_idle();
    let measured = cell.hardware.costs.get(&cpu_cost(m.of)).copied();
    let cpu_us_per_op = measured.or(m.cpu_us_per_op);
    let ops = m.ops.filter(|o| *o > 0.0);
    let off_us_per_op = ops.map(|o| m.off_cpu_us as f64 / o);
    let idle_us_per_op = ops.filter(|_| m.idle_us > 0).map(|o| m.idle_us as f64 / o);
    let profiled_cpu = m.cpu_us_per_op.zip(ops).map(|(c, o)| c * o / 1e6);
    CellProfile {
        of: m.of,
        mode: m.mode,
        repeat: rec.id.repeat,
        samples: m.samples,
        rate_hz: m.settings.map(|s| s.rate_hz),
        named_pct: m.named_share().map(|s| s * 100.0),
        unnamed: m.unnamed.clone(),
        cpu_us_per_op,
        cpu_measured: measured.is_some(),
        off_us_per_op,
        idle_us_per_op,
        functions: top(&cpu, cpu_us_per_op, false),
        waits: top(&off, off_us_per_op, true),
        overhead_pct: m
            .profiler_cpu_secs
            .zip(profiled_cpu)
            .filter(|(_, c)| *c > 0.0)
            .map(|(p, c)| p / c * 100.0),
        hw_per_op: ops
            .map(|o| {
                m.counters
                    .values
                    .iter()
                    .map(|(k, v)| (k.clone(), v / o))
                    .collect()
            })
            .unwrap_or_default(),
        hw_missing: m.counters.missing.clone(),
        ipc: m
            .counters
            .values
            .get("instructions")
            .zip(m.counters.values.get("cycles"))
            .filter(|(_, c)| **c > 0.0)
            .map(|(i, c)| i / c),
        error,
        disturbed: m.disturbed.clone(),
        flame: cpu_us_per_op.map(|s| flame(&cpu, s, None)),
        off_flame: off_us_per_op.map(|s| flame(&off, s, None)),
        cpu_diff: Vec::new(),
        wait_diff: Vec::new(),
        stacks: Some(std::sync::Arc::new((cpu, off))),
    }
}

/// A wait site's name: the innermost frame outside the kernel (the call
/// that waited) and its caller, under how the thread left the CPU.
fn wait_site(stack: &str) -> String {
    let frames: Vec<&str> = stack.split(';').collect();
    let state = frames[0].trim_start_matches("[off: ").trim_end_matches(']');
    let user: Vec<&str> = frames[1..]
        .iter()
        .skip(1)
        .copied()
        .filter(|f| !f.ends_with("_[k]"))
        .collect();
    let site = match user.as_slice() {
        [] => frames.last().copied().unwrap_or("?").to_string(),
        [one] => (*one).to_string(),
        [.., caller, call] => format!("{call} ← {caller}"),
    };
    format!("{site} ({state})")
}

/// The weights of a profile per function (self, inclusive) — or per wait
/// site for off-CPU stacks — and the whole.
fn weights(f: &Folded, waits: bool) -> (HashMap<String, (u64, u64)>, u64) {
    let total = f.total();
    if waits {
        let mut m: HashMap<String, (u64, u64)> = HashMap::new();
        for (s, &w) in &f.0 {
            let e = m.entry(wait_site(s)).or_default();
            e.0 += w;
            e.1 += w;
        }
        return (m, total);
    }
    let mut m: HashMap<String, (u64, u64)> = f
        .by_function()
        .into_iter()
        .map(|(k, v)| (k.to_string(), (0, v.1)))
        .collect();
    for (s, &w) in &f.0 {
        let kernel = in_kernel(s);
        let charged = kernel.is_some();
        let e = m.entry(kernel.unwrap_or_else(|| leaf(s))).or_default();
        e.0 += w;
        // The kernel's time on behalf of a call is only where it is the
        // leaf: its inclusive weight is its self weight.
        if charged {
            e.1 += w;
        }
    }
    (m, total)
}

/// What a call into the kernel is named by: the call that entered it.
const IN_KERNEL: &str = " (in the kernel)";

/// A chain's leaf frame; [`NO_CHAIN`] for a sample with none below its
/// thread.
fn leaf(stack: &str) -> String {
    match stack.rsplit_once(';') {
        Some((_, leaf)) => leaf.to_string(),
        None => NO_CHAIN.to_string(),
    }
}

/// A sample perf took with no frame below the thread's name. Named as the
/// thread it was ("rb-client 4578/4779"), a copy's thread differed from
/// the original's by its id alone, and an A/A pair named it as grown
/// (`bench/profile_aa.py`: +2.3 µs/op).
const NO_CHAIN: &str = "[no call chain]";

/// A sample's self weight is charged to its leaf function or — for a
/// leaf in the kernel below a frame of the process — to the process's
/// call that entered the kernel (`__fcntl64_nocancel_adjusted (in the
/// kernel)`), as a wait site is named; none when the chain has no frame
/// of the process (the root frame, the thread's name, is not a call).
/// The kernel spreads one system call's cost over a dozen functions (a
/// file lock per statement was +0.42 µs/op in do_syscall_64, +0.23 in
/// kmem_cache_alloc, +0.21 in the libc wrapper: none past sampling noise
/// alone, in fresh-clone CI), and what a reader can act on is the call
/// the program made; the flame graph keeps the kernel's functions.
fn in_kernel(stack: &str) -> Option<String> {
    let frames: Vec<&str> = stack.split(';').collect();
    let body = frames.get(1..).unwrap_or_default();
    if !body.last()?.ends_with("_[k]") {
        return None;
    }
    let entry = body.iter().rev().find(|f| !f.ends_with("_[k]"))?;
    Some(format!("{entry}{IN_KERNEL}"))
}

/// The top functions by self µs/op.
fn top(f: &Folded, per_op: Option<f64>, waits: bool) -> Vec<FnCost> {
    let (Some(per_op), (m, total)) = (per_op, weights(f, waits)) else {
        return Vec::new();
    };
    if total == 0 {
        return Vec::new();
    }
    let mut v: Vec<FnCost> = m
        .into_iter()
        .filter(|(_, (s, _))| *s > 0)
        .map(|(name, (s, i))| FnCost {
            self_us: s as f64 / total as f64 * per_op,
            incl_us: i as f64 / total as f64 * per_op,
            self_pct: s as f64 / total as f64 * 100.0,
            name,
        })
        .collect();
    v.sort_by(|a, b| b.self_us.total_cmp(&a.self_us).then(a.name.cmp(&b.name)));
    v.truncate(TOP);
    v
}

/// Each function's change against the base: the largest first, grown
/// and shrunk alike.
fn deltas(
    f: &Folded,
    per_op: Option<f64>,
    base: &Folded,
    base_per_op: Option<f64>,
    waits: bool,
    whole: (f64, f64),
) -> Vec<FnDelta> {
    let (Some(s), Some(bs)) = (per_op, base_per_op) else {
        return Vec::new();
    };
    let ((m, n), (bm, bn)) = (weights(f, waits), weights(base, waits));
    if n == 0 || bn == 0 {
        return Vec::new();
    }
    // A kernel function's own time is charged to the call that entered
    // it: it has an inclusive weight and nothing of its own to compare.
    let mut names: Vec<&String> = m
        .iter()
        .chain(bm.iter())
        .filter(|(_, (own, _))| *own > 0)
        .map(|(k, _)| k)
        .collect();
    names.sort();
    names.dedup();
    let mut v: Vec<FnDelta> = names
        .into_iter()
        .map(|name| {
            let (a, ai) = m.get(name).copied().unwrap_or_default();
            let (b, bi) = bm.get(name).copied().unwrap_or_default();
            let (pa, pb) = (a as f64 / n as f64, b as f64 / bn as f64);
            // Poisson counts: the shares' standard errors, both sides,
            // and the spread of a share between windows of the same work
            // beyond the sampling's ([`DISPERSION`]).
            let se = ((a.max(1) as f64) / (n as f64).powi(2)
                + (b.max(1) as f64) / (bn as f64).powi(2)
                + (DISPERSION * pa.max(pb)).powi(2))
            .sqrt();
            // Off-CPU weights are µs, not counts: judged by their share
            // of a profile's switches, which they are not; a wait site's
            // change is taken as it is, past 5% of the larger side.
            let d = (pa * s - pb * bs).abs();
            let beyond_noise = if waits {
                let (x, y) = (pa * s, pb * bs);
                x.max(y) >= WAIT_FACTOR * x.min(y) && d >= WAIT_SHARE * whole.0.max(whole.1)
            } else {
                (pa - pb).abs() > Z * se
            };
            let material = d >= MATERIAL * whole.0.max(whole.1);
            FnDelta {
                name: name.clone(),
                base_us: pb * bs,
                us: pa * s,
                delta_us: pa * s - pb * bs,
                base_incl_us: bi as f64 / bn as f64 * bs,
                incl_us: ai as f64 / n as f64 * s,
                beyond_noise,
                material,
            }
        })
        .collect();
    v.sort_by(|a, b| {
        b.delta_us
            .abs()
            .total_cmp(&a.delta_us.abs())
            .then(a.name.cmp(&b.name))
    });
    v.truncate(TOP);
    v
}

/// A cell's profile against its base's: the deltas, and the flame
/// graphs' base figures.
fn diff(p: &mut CellProfile, base: &CellProfile) {
    let (Some(st), Some(bst)) = (p.stacks.clone(), base.stacks.as_ref()) else {
        return;
    };
    let unjudged = p.disturbed.is_some() || base.disturbed.is_some();
    let cpu = |x: &CellProfile| x.cpu_us_per_op.unwrap_or(0.0);
    let whole = |x: &CellProfile| cpu(x) + x.off_us_per_op.unwrap_or(0.0);
    let (c, w) = ((cpu(p), cpu(base)), (whole(p), whole(base)));
    p.cpu_diff = deltas(&st.0, p.cpu_us_per_op, &bst.0, base.cpu_us_per_op, false, c);
    p.wait_diff = deltas(&st.1, p.off_us_per_op, &bst.1, base.off_us_per_op, true, w);
    // Another program shared a profiled window: nothing is past noise.
    if unjudged {
        for d in p.cpu_diff.iter_mut().chain(p.wait_diff.iter_mut()) {
            d.beyond_noise = false;
        }
    }
    if let (Some(s), Some(bs)) = (p.cpu_us_per_op, base.cpu_us_per_op) {
        p.flame = Some(flame(&st.0, s, Some((&bst.0, bs))));
    }
    if let (Some(s), Some(bs)) = (p.off_us_per_op, base.off_us_per_op) {
        p.off_flame = Some(flame(&st.1, s, Some((&bst.1, bs))));
    }
}

/// A flame graph's tree in µs/op, frames under [`FLAME_MIN_SHARE`] left
/// out; with a base, each frame carries the base's µs/op at its chain.
fn flame(f: &Folded, per_op: f64, base: Option<(&Folded, f64)>) -> Flame {
    #[derive(Default)]
    struct Node {
        w: u64,
        bw: u64,
        kids: BTreeMap<String, Node>,
    }
    fn add(root: &mut Node, stack: &str, w: u64, base: bool) {
        let mut n = root;
        for fr in stack.split(';') {
            if base {
                n.bw += w;
            } else {
                n.w += w;
            }
            n = n.kids.entry(fr.to_string()).or_default();
        }
        if base {
            n.bw += w;
        } else {
            n.w += w;
        }
    }
    let mut root = Node::default();
    for (s, &w) in &f.0 {
        add(&mut root, s, w, false);
    }
    let btotal = base.map_or(0, |(b, _)| b.total());
    if let Some((b, _)) = base {
        for (s, &w) in &b.0 {
            add(&mut root, s, w, true);
        }
    }
    let total = root.w.max(1) as f64;
    let min = (FLAME_MIN_SHARE * total).ceil() as u64;
    fn out(name: &str, n: &Node, k: (f64, f64, u64, bool)) -> Flame {
        let (scale, bscale, min, has_base) = k;
        Flame {
            name: name.to_string(),
            us: round(n.w as f64 * scale),
            base_us: has_base.then_some(round(n.bw as f64 * bscale)),
            children: n
                .kids
                .iter()
                .filter(|(_, c)| c.w >= min.max(1))
                .map(|(nm, c)| out(nm, c, k))
                .collect(),
        }
    }
    let bscale = base.map_or(0.0, |(_, bs)| bs / btotal.max(1) as f64);
    out("all", &root, (per_op / total, bscale, min, base.is_some()))
}

/// A flame graph's figure to 0.1 ns/op: a tooltip shows three decimals
/// of a µs, and seventeen digits of every frame weighed down report.json.
fn round(us: f64) -> f64 {
    (us * 1e4).round() / 1e4
}

/// The functions (or wait sites) that moved most, in words for a
/// sentence: "+1.9 µs/op in MYSQLparse, +0.8 µs/op in …", in the
/// direction given; none within sampling noise.
pub fn named_changes(d: &[FnDelta], grew: bool, n: usize) -> Option<String> {
    let v: Vec<String> = d
        .iter()
        .filter(|x| x.beyond_noise && x.material && (x.delta_us > 0.0) == grew)
        .take(n)
        .map(|x| format!("{:+.2} µs/op in {}", x.delta_us, x.name))
        .collect();
    (!v.is_empty()).then(|| v.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(s: &str) -> Folded {
        Folded::from_text(s)
    }

    #[test]
    fn a_function_that_grew_leads_the_diff_and_shares_scale_by_cpu_per_op() {
        let base = folded("srv;main;parse 100\nsrv;main;exec 900\n");
        let new = folded("srv;main;parse 400\nsrv;main;exec 600\n");
        // Base 10 µs/op, target 15 µs/op.
        let d = deltas(&new, Some(15.0), &base, Some(10.0), false, (15.0, 10.0));
        assert_eq!(d[0].name, "parse");
        assert!((d[0].delta_us - (0.4 * 15.0 - 0.1 * 10.0)).abs() < 1e-9);
        assert!(d[0].beyond_noise);
        let s = named_changes(&d, true, 2).unwrap();
        assert!(s.starts_with("+5.00 µs/op in parse"), "{s}");
        // exec: 9 → 9 µs/op: not a change.
        assert!(!s.contains("exec"));
    }

    #[test]
    fn a_share_within_sampling_noise_is_never_named() {
        let base = folded("srv;a 10\nsrv;b 10\n");
        let new = folded("srv;a 12\nsrv;b 8\n");
        let d = deltas(&new, Some(1.0), &base, Some(1.0), false, (1.0, 1.0));
        assert!(d.iter().all(|x| !x.beyond_noise));
        assert_eq!(named_changes(&d, true, 2), None);
    }

    #[test]
    fn a_system_calls_kernel_functions_are_charged_to_the_call_together() {
        // Regression (fresh-clone CI): a file lock per statement grew a
        // little in each of three kernel functions, none past noise alone.
        let lock = |n: u64| {
            format!(
                "t;main;unixLock;fcntl64;do_syscall_64_[k];posix_lock_[k] {n}\n\
                 t;main;unixLock;fcntl64;do_syscall_64_[k];kmem_cache_alloc_[k] {n}\n\
                 t;main;unixLock;fcntl64;do_syscall_64_[k] {n}\n\
                 t;irq_[k] 5\nt;main;exec 970\n"
            )
        };
        // 1 µs/op a sample: the lock's 30 samples grow to 75.
        let (base, new) = (folded(&lock(10)), folded(&lock(25)));
        let d = deltas(&new, Some(10.5), &base, Some(10.05), false, (10.5, 10.05));
        assert_eq!(d[0].name, "fcntl64 (in the kernel)", "{d:?}");
        assert!(d[0].beyond_noise, "{d:?}");
        assert!((d[0].delta_us - 0.45).abs() < 0.01, "{d:?}");
        assert!((d[0].incl_us - d[0].us).abs() < 1e-9);
        // Nothing is named twice: the kernel's functions have no row of
        // their own, but a kernel chain with no call above it keeps its leaf.
        assert!(!d
            .iter()
            .any(|x| x.name.ends_with("_[k]") && x.name != "irq_[k]"));
        let t = top(&new, Some(10.0), false);
        assert!(t.iter().any(|x| x.name == "irq_[k]"));
    }

    #[test]
    fn a_sample_with_no_chain_is_not_named_by_its_threads_id() {
        // Regression (`bench/profile_aa.py`): "rb-client 4578/4779" grown
        // +2.3 µs/op between identical copies, whose threads' ids differ.
        let base = folded("rb-client 10/11 300\nrb-client 10/11;main 700\n");
        let new = folded("rb-client 12/13 300\nrb-client 12/13;main 700\n");
        let d = deltas(&new, Some(1.0), &base, Some(1.0), false, (1.0, 1.0));
        assert!(d.iter().all(|x| !x.beyond_noise), "{d:?}");
        assert!(d.iter().any(|x| x.name == NO_CHAIN));
    }

    #[test]
    fn a_wait_site_is_the_call_that_waited_and_its_caller() {
        assert_eq!(
            wait_site("[off: io];t;main;sqlite3OsSync;fsync;do_fsync_[k];io_schedule_[k]"),
            "fsync ← sqlite3OsSync (io)"
        );
        assert_eq!(
            wait_site("[off: sleeping];t;io_schedule_[k]"),
            "io_schedule_[k] (sleeping)"
        );
    }

    #[test]
    fn a_flame_graph_leaves_slivers_out_and_carries_the_base() {
        let f = folded("t;a;b 980\nt;c 20\nt;d 4\n");
        let b = folded("t;a;b 500\n");
        let g = flame(&f, 10.0, Some((&b, 5.0)));
        assert!((g.us - 10.0).abs() < 1e-9);
        let t = &g.children[0];
        assert_eq!(t.name, "t");
        let names: Vec<&str> = t.children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "c"]);
        assert_eq!(t.children[0].base_us, Some(5.0));
    }
}
