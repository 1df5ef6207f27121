//! Change points in a series of builds, found as Apache Otava finds them
//! but judged on what relbench knows of each number.
//!
//! The search is E-Divisive's binary segmentation, deterministic: in a
//! stretch of builds, the split whose two sides' repeats differ most by
//! their rank sums (every repeat of every build, not one number per
//! build) is tested with the rank-sum test; its p-value is multiplied by
//! how many splits the search chose among (the choice of the best one
//! would otherwise make any series look like it changed), and a split
//! that passes splits the stretch in two, searched again (the factor is
//! the square root of the count: see [`factor`], measured). Each point
//! found is then tested once more against its neighbours' stretches (at
//! most `window` builds a side, as Otava's windows). Disturbed repeats
//! are left out before any of this; Benjamini–Hochberg over every test
//! of every series keeps the share of false discoveries at `q`; a change
//! smaller than the series' floor is reported as below it, never as a
//! change. The floor is the larger of the A/A floor its runs measured
//! (how far identical windows of one run lay apart) and its drift between
//! runs ([`drift_floor`]): a build's repeats come from one run and share
//! its conditions, so they say nothing of how far runs drift, and two
//! quiet runs of one build lay 7% apart on SQLite's fsync-bound
//! update-index here (A/A floor within each run: under 3%).

use crate::compare::median;
use crate::measure::stats;

/// One build's quiet repeats in a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The build's place in the history's order.
    pub build: usize,
    pub values: Vec<f64>,
}

/// A series as the search sees it: builds in order, each with at least
/// one quiet repeat.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub id: i64,
    pub points: Vec<Point>,
    /// The series' A/A floor: the median of the floors its runs measured.
    pub floor: Option<f64>,
}

#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// The false discovery rate Benjamini–Hochberg keeps.
    pub q: f64,
    /// Builds a side a change point is tested with.
    pub window: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            q: 0.05,
            window: 30,
        }
    }
}

/// A change point: between `points[at - 1]` and `points[at]` of its series.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub series: i64,
    pub at: usize,
    /// Where the stretches it was tested with begin and end (indices into
    /// the series' points).
    pub from: usize,
    pub to: usize,
    /// Median after ÷ median before.
    pub magnitude: f64,
    /// The rank-sum p-value, times the square root of the splits it was
    /// chosen among.
    pub p: f64,
    /// Past Benjamini–Hochberg at `q`.
    pub significant: bool,
    /// Within the series' A/A floor.
    pub below_floor: bool,
}

impl Found {
    /// A change to report: significant and past the floor.
    pub fn is_change(&self) -> bool {
        self.significant && !self.below_floor
    }
}

/// Every candidate split of every series, tested, with the verdicts of
/// Benjamini–Hochberg and the floor. The same input gives the same
/// output, on any number of cores.
pub fn detect(all: &[Series], s: &Settings) -> Vec<Found> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = all.len().div_ceil(threads).max(1);
    let mut found: Vec<Found> = std::thread::scope(|scope| {
        let parts: Vec<_> = all
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || part.iter().flat_map(|x| one(x, s)).collect::<Vec<_>>())
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().expect("a search thread panicked"))
            .collect()
    });
    benjamini_hochberg(&mut found, s.q);
    found
}

/// The points of one series, each tested against its neighbours.
fn one(series: &Series, s: &Settings) -> Vec<Found> {
    let pts = &series.points;
    let floor = match (series.floor, drift_floor(pts)) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    let mut tests: Vec<(usize, f64, usize)> = Vec::new(); // (at, p, splits chosen among)
    search(pts, 0, pts.len(), s.q, &mut tests);
    let mut passed: Vec<usize> = tests.iter().filter(|t| t.1 < s.q).map(|t| t.0).collect();
    passed.sort_unstable();
    tests
        .iter()
        .map(|&(at, p, splits)| {
            if p >= s.q {
                // The stretch's best split, not a point: kept for the
                // correction's count, with the p it had.
                return found(series, floor, at, 0, pts.len(), p);
            }
            let i = passed.binary_search(&at).unwrap_or(0);
            let prev = if i == 0 { 0 } else { passed[i - 1] };
            let next = passed.get(i + 1).copied().unwrap_or(pts.len());
            let from = prev.max(at.saturating_sub(s.window));
            let to = next.min(at + s.window);
            let (a, b) = (values(&pts[from..at]), values(&pts[at..to]));
            let p = rank_sum_p(&b, &a).map_or(1.0, |p| (p * factor(splits)).min(1.0));
            found(series, floor, at, from, to, p)
        })
        .collect()
}

/// How far runs of a series drift apart, as a share: one and a half times
/// the median of how far neighbouring builds' medians lie apart (robust to
/// the few builds that changed). The factor was measured on the fixture's
/// 5% steps (3 builds × 4 repeats a side): 1 finds 179 of 200, 1.5 finds
/// 178, 2 finds 163; A/A false points 0 of 800 with each. `None` when each
/// build has one value (its builds are the units the rank test compares
/// already) or fewer than two builds. With two or three builds it is as
/// large as the change itself: two runs cannot tell a change from drift.
pub fn drift_floor(pts: &[Point]) -> Option<f64> {
    if pts.len() < 2 || pts.iter().all(|p| p.values.len() < 2) {
        return None;
    }
    let medians: Vec<f64> = pts
        .iter()
        .filter_map(|p| median(&mut p.values.clone()))
        .collect();
    let mut steps: Vec<f64> = medians
        .windows(2)
        .filter(|w| w[0] > 0.0 && w[1] > 0.0)
        .map(|w| (w[1] / w[0]).ln().abs())
        .collect();
    let m = median(&mut steps)?;
    Some((1.5 * m).exp() - 1.0)
}

fn found(series: &Series, floor: Option<f64>, at: usize, from: usize, to: usize, p: f64) -> Found {
    let pts = &series.points;
    let (mut a, mut b) = (values(&pts[from..at]), values(&pts[at..to]));
    let magnitude = match (median(&mut b), median(&mut a)) {
        (Some(x), Some(y)) if y > 0.0 => x / y,
        _ => 1.0,
    };
    Found {
        series: series.id,
        at,
        from,
        to,
        magnitude,
        p,
        significant: false,
        below_floor: floor.is_some_and(|f| magnitude.max(1.0 / magnitude) - 1.0 <= f + 1e-9),
    }
}

/// What a split's p-value is multiplied by for having been chosen among
/// `splits`: their square root. The splits of one stretch test nearly
/// the same thing (neighbours share all but one build), so the full count
/// (Bonferroni) was measured far too strict: a 5% step at 3 builds × 4
/// repeats a side found in 159 of 200 series, against 179 with the square
/// root; no correction at all let 7.1% of the points found be false when
/// half the series changed (the square root: 2.0%; the full count: 0.8%).
/// `tests/history.rs` keeps all three measures.
fn factor(splits: usize) -> f64 {
    (splits as f64).sqrt()
}

/// The rank-sum test, exact up to 5,000 splits (6 against 8 repeats),
/// the normal approximation with ties corrected beyond: a search tests
/// thousands of splits, and enumerating 200,000 for each took a minute.
fn rank_sum_p(a: &[f64], b: &[f64]) -> Option<f64> {
    stats::rank_sum_p_within(a, b, 5_000.0)
}

fn values(pts: &[Point]) -> Vec<f64> {
    pts.iter().flat_map(|p| p.values.iter().copied()).collect()
}

/// Binary segmentation of `pts[lo..hi]`: the best split tested, and the
/// two sides searched again when it passes `alpha`.
fn search(pts: &[Point], lo: usize, hi: usize, alpha: f64, tests: &mut Vec<(usize, f64, usize)>) {
    let Some((at, splits)) = best_split(&pts[lo..hi]) else {
        return;
    };
    let at = lo + at;
    let (a, b) = (values(&pts[lo..at]), values(&pts[at..hi]));
    let p = rank_sum_p(&b, &a).map_or(1.0, |p| (p * factor(splits)).min(1.0));
    tests.push((at, p, splits));
    if p < alpha {
        search(pts, lo, at, alpha, tests);
        search(pts, at, hi, alpha, tests);
    }
}

/// The split of `pts` whose sides' rank sums are furthest apart in
/// standard deviations, with the number of splits it was chosen among
/// (each side needs two repeats). Ties go to the earlier split.
fn best_split(pts: &[Point]) -> Option<(usize, usize)> {
    let all = values(pts);
    let n = all.len();
    if pts.len() < 2 || n < 4 {
        return None;
    }
    let ranks = stats::midranks(&all);
    let nf = n as f64;
    let (mut best, mut best_z, mut splits) = (None, -1.0, 0);
    let (mut w, mut m, mut i) = (0.0, 0usize, 0usize);
    for (k, p) in pts.iter().enumerate().take(pts.len() - 1) {
        for _ in &p.values {
            w += ranks[i];
            i += 1;
        }
        m += p.values.len();
        let r = n - m;
        if m < 2 || r < 2 {
            continue;
        }
        splits += 1;
        let (mf, rf) = (m as f64, r as f64);
        let z = (w - mf * (nf + 1.0) / 2.0).abs() / (mf * rf * (nf + 1.0) / 12.0).sqrt();
        if z > best_z + 1e-12 {
            best_z = z;
            best = Some(k + 1);
        }
    }
    best.map(|b| (b, splits))
}

/// Marks the tests Benjamini–Hochberg keeps at false discovery rate `q`.
pub fn benjamini_hochberg(found: &mut [Found], q: f64) {
    let m = found.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| found[a].p.total_cmp(&found[b].p).then(a.cmp(&b)));
    let last = (0..m)
        .rev()
        .find(|&i| found[order[i]].p <= (i + 1) as f64 / m as f64 * q);
    if let Some(last) = last {
        for &o in &order[..=last] {
            found[o].significant = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(id: i64, builds: &[&[f64]]) -> Series {
        Series {
            id,
            points: builds
                .iter()
                .enumerate()
                .map(|(i, v)| Point {
                    build: i,
                    values: v.to_vec(),
                })
                .collect(),
            floor: None,
        }
    }

    #[test]
    fn a_step_is_found_where_it_is_and_a_flat_series_has_none() {
        let mut b: Vec<Vec<f64>> = Vec::new();
        for i in 0..8 {
            let level = if i < 4 { 100.0 } else { 90.0 };
            b.push(
                (0..3)
                    .map(|r| level + (r as f64 - 1.0) * 0.5 + i as f64 * 0.01)
                    .collect(),
            );
        }
        let refs: Vec<&[f64]> = b.iter().map(|v| v.as_slice()).collect();
        let f = detect(&[series(1, &refs)], &Settings::default());
        let changes: Vec<&Found> = f.iter().filter(|x| x.is_change()).collect();
        assert_eq!(changes.len(), 1, "{f:?}");
        assert_eq!(changes[0].at, 4);
        assert!((changes[0].magnitude - 0.9).abs() < 0.01);
        let flat: Vec<Vec<f64>> = (0..8)
            .map(|i| vec![100.0 + (i % 3) as f64, 101.0, 99.5])
            .collect();
        let refs: Vec<&[f64]> = flat.iter().map(|v| v.as_slice()).collect();
        assert!(!detect(&[series(2, &refs)], &Settings::default())
            .iter()
            .any(|x| x.is_change()));
    }

    #[test]
    fn a_change_within_the_floor_is_not_one() {
        let b: Vec<Vec<f64>> = (0..8)
            .map(|i| {
                [if i < 4 { 100.0 } else { 97.0 }; 3]
                    .iter()
                    .enumerate()
                    .map(|(r, v)| v + r as f64 * 0.1)
                    .collect()
            })
            .collect();
        let refs: Vec<&[f64]> = b.iter().map(|v| v.as_slice()).collect();
        let mut s = series(1, &refs);
        s.floor = Some(0.05);
        let f = detect(&[s], &Settings::default());
        assert!(f.iter().any(|x| x.significant && x.below_floor), "{f:?}");
        assert!(!f.iter().any(|x| x.is_change()));
    }

    #[test]
    fn benjamini_hochberg_keeps_the_smallest_up_to_the_last_under_its_line() {
        let mk = |p| Found {
            series: 0,
            at: 1,
            from: 0,
            to: 2,
            magnitude: 1.0,
            p,
            significant: false,
            below_floor: false,
        };
        let mut f: Vec<Found> = [0.001, 0.04, 0.012, 0.5].iter().map(|&p| mk(p)).collect();
        benjamini_hochberg(&mut f, 0.05);
        // Lines: 0.0125, 0.025, 0.0375, 0.05: 0.001 and 0.012 pass; 0.04 > 0.0375.
        assert_eq!(
            f.iter().map(|x| x.significant).collect::<Vec<_>>(),
            [true, false, true, false]
        );
    }
}
