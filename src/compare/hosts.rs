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

/// How one host's base compares with the others', from [`judge`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct Offset {
    offset: f64,
    others_floor: Option<f64>,
    steps: usize,
    off: bool,
}

/// Largest ÷ smallest, less 1, of two values or more.
fn spread(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let (lo, hi) = v
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
    Some(hi / lo - 1.0)
}

/// The figures alone: `quiet[row][host]` is a base's quiet throughput.
/// Each row's spread over hosts, and each host's offset from the median
/// of the others on the rows every host measured quietly.
fn judge(quiet: &[Vec<Option<f64>>]) -> (Vec<Option<f64>>, Vec<Option<Offset>>) {
    let hosts = quiet.first().map_or(0, Vec::len);
    let floors = quiet
        .iter()
        .map(|row| spread(&row.iter().flatten().copied().collect::<Vec<_>>()))
        .collect();
    let offsets = (0..hosts)
        .map(|h| {
            let mut logs = Vec::new();
            let mut others_spread = Vec::new();
            for row in quiet {
                let Some(mine) = row[h] else { continue };
                // Only the steps every other host measured quietly too.
                let theirs: Option<Vec<f64>> =
                    (0..row.len()).filter(|&o| o != h).map(|o| row[o]).collect();
                let Some(mut theirs) = theirs else { continue };
                if let Some(f) = spread(&theirs) {
                    others_spread.push(f);
                }
                if let Some(m) = median(&mut theirs) {
                    logs.push((mine / m).ln());
                }
            }
            if logs.is_empty() {
                return None;
            }
            let offset = (logs.iter().sum::<f64>() / logs.len() as f64).exp() - 1.0;
            let others_floor = median(&mut others_spread);
            Some(Offset {
                offset,
                others_floor,
                steps: logs.len(),
                // Over a few steps one slow window would name a host.
                off: logs.len() >= MIN_STEPS && others_floor.is_some_and(|f| offset.abs() > f),
            })
        })
        .collect();
    (floors, offsets)
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
    let quiet: Vec<Vec<Option<f64>>> = rows
        .iter()
        .map(|row| {
            bases
                .iter()
                .map(|&b| {
                    let c = &row.cells[b];
                    c.figures.throughput.filter(|&v| {
                        v > 0.0 && c.judgement.disturbed.is_none() && !c.judgement.short_window
                    })
                })
                .collect()
        })
        .collect();
    let (floors, found) = judge(&quiet);
    for (row, f) in rows.iter_mut().zip(floors) {
        row.host_floor = f;
    }
    let offsets: Vec<HostOffset> = bases
        .iter()
        .zip(found)
        .filter_map(|(&b, o)| {
            let o = o?;
            Some(HostOffset {
                host: targets[b].host.clone(),
                base: targets[b].name.clone(),
                offset: o.offset,
                others_floor: o.others_floor,
                steps: o.steps,
                off: o.off,
            })
        })
        .collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Six steps on five hosts, each host's base a little apart; host
    /// `slow` at `factor` of the others.
    fn study(slow: usize, factor: f64, quiet_steps: usize) -> Vec<Vec<Option<f64>>> {
        (0..6)
            .map(|step| {
                (0..5)
                    .map(|h| {
                        let wobble = 1.0 + 0.004 * ((step * 7 + h * 3) % 5) as f64;
                        let v = 1000.0 * (step + 1) as f64 * wobble;
                        let v = if h == slow { v * factor } else { v };
                        (step < quiet_steps || h != slow).then_some(v)
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_host_whose_base_is_off_by_more_than_the_others_spread_is_named() {
        let (floors, offsets) = judge(&study(2, 0.88, 6));
        // The spread of each step takes in the slow host.
        assert!(
            floors.iter().all(|f| f.is_some_and(|f| f > 0.12)),
            "{floors:?}"
        );
        let o: Vec<Offset> = offsets.into_iter().map(Option::unwrap).collect();
        assert!(o[2].off, "{o:?}");
        assert!((o[2].offset + 0.12).abs() < 0.01, "{o:?}");
        assert!(o[2].others_floor.unwrap() < 0.02, "{o:?}");
        // The others are off only by the slow host's pull on their floor.
        assert!(o.iter().enumerate().all(|(h, x)| h == 2 || !x.off), "{o:?}");
    }

    /// Regression: one step another host missed dropped a host's whole
    /// offset instead of that step.
    #[test]
    fn a_step_another_host_missed_is_left_out_not_the_host() {
        let mut s = study(2, 0.88, 6);
        s[0][4] = None;
        let (_, offsets) = judge(&s);
        assert_eq!(offsets[2].unwrap().steps, 5);
        assert!(offsets[2].unwrap().off);
    }

    #[test]
    fn hosts_that_agree_name_no_one() {
        let (_, offsets) = judge(&study(2, 1.0, 6));
        assert!(offsets.iter().all(|o| !o.unwrap().off), "{offsets:?}");
    }

    #[test]
    fn two_quiet_steps_or_two_hosts_are_too_few_to_name_a_host() {
        let (_, offsets) = judge(&study(2, 0.8, 2));
        let slow = offsets[2].unwrap();
        assert_eq!(slow.steps, 2);
        assert!(!slow.off, "{slow:?}");
        // Two hosts: neither has others to measure a floor by.
        let two: Vec<Vec<Option<f64>>> = study(1, 0.8, 6)
            .into_iter()
            .map(|r| r[..2].to_vec())
            .collect();
        let (floors, offsets) = judge(&two);
        assert!(floors.iter().all(Option::is_some));
        assert!(offsets
            .iter()
            .all(|o| !o.unwrap().off && o.unwrap().others_floor.is_none()));
    }
}
