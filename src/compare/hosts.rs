//! What a base measured on several hosts says of the hosts (a merged
//! sharded run, or runs of several hosts side by side, each with its
//! base): on each step, how far the bases lie apart — the cross-host
//! noise floor, shown beside the A/A floor — and, over all steps, a host
//! whose base is off from the others by more than the others lie apart
//! from each other, named at the top of the report. Its ratios are kept
//! (each is against its own host's base), but a reader comparing targets
//! measured on different hosts must know.

use serde::Serialize;

use super::{median, Row, TargetMeta};

/// Quiet steps a host's offset must be measured over before it is named.
pub const MIN_STEPS: usize = 3;

/// One host's base against the other hosts' bases.
#[derive(Debug, Clone, Serialize)]
pub struct HostOffset {
    pub host: String,
    /// The base's name on that host.
    pub base: String,
    /// Its throughput ÷ the median of the other hosts' bases, geometric
    /// mean over the steps all measured quietly, less 1.
    pub offset: f64,
    /// How far the other hosts' bases lie apart on those steps (the median
    /// over steps of largest ÷ smallest, less 1); `None` with fewer than
    /// two other hosts.
    pub others_floor: Option<f64>,
    /// Steps it was computed over.
    pub steps: usize,
    /// Off by more than the others' floor: named at the top.
    pub off: bool,
}

/// The bases on several hosts, per row and per host. Fills each row's
/// `host_floor`; returns each host's offset and, for an off host, the
/// sentence the report opens with.
pub(super) fn compare_hosts(
    rows: &mut [Row],
    targets: &[TargetMeta],
    base_of: &[usize],
    first_col: Option<usize>,
) -> (Vec<HostOffset>, Vec<String>) {
    // The first column's base's name, measured on every host that has it.
    let Some(first) = first_col.map(|c| base_of[c]) else {
        return (Vec::new(), Vec::new());
    };
    let mut bases: Vec<usize> = base_of
        .iter()
        .copied()
        .filter(|&b| targets[b].plan_name == targets[first].plan_name)
        .collect();
    bases.sort_unstable();
    bases.dedup();
    if bases.len() < 2 {
        return (Vec::new(), Vec::new());
    }
    let quiet = |row: &Row, b: usize| {
        let c = &row.cells[b];
        c.throughput
            .filter(|&v| v > 0.0 && c.disturbed.is_none() && !c.short_window)
    };
    let spread = |v: &[f64]| -> Option<f64> {
        if v.len() < 2 {
            return None;
        }
        let (lo, hi) = v
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        Some(hi / lo - 1.0)
    };
    for row in rows.iter_mut() {
        let v: Vec<f64> = bases.iter().filter_map(|&b| quiet(row, b)).collect();
        row.host_floor = spread(&v);
    }
    let mut offsets = Vec::new();
    for &b in &bases {
        let others: Vec<usize> = bases.iter().copied().filter(|&o| o != b).collect();
        let mut logs = Vec::new();
        let mut floors = Vec::new();
        for row in rows.iter() {
            let Some(mine) = quiet(row, b) else { continue };
            let mut theirs: Vec<f64> = others.iter().filter_map(|&o| quiet(row, o)).collect();
            if theirs.len() < others.len() {
                continue;
            }
            if let Some(f) = spread(&theirs) {
                floors.push(f);
            }
            if let Some(m) = median(&mut theirs) {
                logs.push((mine / m).ln());
            }
        }
        if logs.is_empty() {
            continue;
        }
        let offset = (logs.iter().sum::<f64>() / logs.len() as f64).exp() - 1.0;
        let others_floor = median(&mut floors);
        offsets.push(HostOffset {
            host: targets[b].host.clone(),
            base: targets[b].name.clone(),
            offset,
            others_floor,
            steps: logs.len(),
            // Over a few steps one slow window would name a host.
            off: logs.len() >= MIN_STEPS && others_floor.is_some_and(|f| offset.abs() > f),
        });
    }
    let n = offsets.len();
    let notes = offsets
        .iter()
        .filter(|o| o.off)
        .map(|o| {
            format!(
                "Host {}'s base ({}) is {:.1}% {} than on the other {} hosts (geometric mean over {} steps), \
                 which lie within {:.1}% of each other: its ratios are kept, each against its own host's \
                 base, but compare hosts before trusting a difference between targets measured on different hosts.",
                o.host,
                o.base,
                o.offset.abs() * 100.0,
                if o.offset < 0.0 { "slower" } else { "faster" },
                n - 1,
                o.steps,
                o.others_floor.unwrap_or(0.0) * 100.0
            )
        })
        .collect();
    (offsets, notes)
}
