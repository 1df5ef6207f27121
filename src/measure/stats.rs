//! Significance of a change between two sets of repeats.
//!
//! Benchmark repeats are few (3–10) and not normally distributed (a stall
//! or a cold cache makes one repeat an outlier), so the report uses
//! distribution-free methods:
//!
//! - **Wilcoxon–Mann–Whitney rank-sum test** (Mann & Whitney, 1947), exact:
//!   the p-value is the share of all ways of splitting the pooled repeats
//!   into two groups of these sizes whose rank sum is at least as far from
//!   its mean as the one measured. Ties get mid-ranks and the enumeration
//!   handles them exactly. Above [`EXACT_LIMIT`] splits, the normal
//!   approximation with tie and continuity corrections is used.
//! - **The confidence interval of a ratio** inverts the same test
//!   (Lehmann, *Nonparametrics*, 1975, §2.6; Bauer, JASA 1972): the ratios
//!   of every target repeat to every base repeat, sorted, and the interval
//!   between the k-th smallest and k-th largest, where k comes from the
//!   test's null distribution. It says what the test says: at 3 against 3
//!   repeats the widest interval is only 90% (the smallest p-value a rank
//!   test can give there is 0.10), and the report says so.
//! - **The confidence interval of one median** uses order statistics and
//!   the binomial distribution (the sign-test interval).
//!
//! A rank test at 3 against 3 repeats can never reach p < 0.05; the report
//! says how many repeats would, rather than colouring noise.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

/// A change is significant when its two-sided p-value is below this.
pub const ALPHA: f64 = 0.05;

/// The confidence level the intervals aim at.
pub const LEVEL: f64 = 0.95;

/// Largest number of splits enumerated for an exact p-value
/// (C(20, 10) = 184,756: ten repeats each).
const EXACT_LIMIT: f64 = 200_000.0;

/// An interval and the confidence it has.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
    /// The interval's confidence (0.95, or less when the repeats are too
    /// few for 95%).
    pub level: f64,
}

/// `n` choose `k` as a float (exact up to 2^53).
pub fn choose(n: usize, k: usize) -> f64 {
    if k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// Mid-ranks (1-based) of `pooled`: tied values share their mean rank.
pub fn midranks(pooled: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|&a, &b| pooled[a].total_cmp(&pooled[b]));
    let mut ranks = vec![0.0; pooled.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && pooled[order[j + 1]] == pooled[order[i]] {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &o in &order[i..=j] {
            ranks[o] = r;
        }
        i = j + 1;
    }
    ranks
}

/// Two-sided p-value of the rank-sum test of `a` against `b`; `None` when
/// either side is empty.
pub fn rank_sum_p(a: &[f64], b: &[f64]) -> Option<f64> {
    rank_sum_p_within(a, b, EXACT_LIMIT)
}

/// [`rank_sum_p`], exact up to `exact_limit` splits: a search that tests
/// thousands of splits (the history's change points) takes the normal
/// approximation sooner.
pub fn rank_sum_p_within(a: &[f64], b: &[f64], exact_limit: f64) -> Option<f64> {
    let (m, n) = (a.len(), b.len());
    if m == 0 || n == 0 {
        return None;
    }
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let ranks = midranks(&pooled);
    let w: f64 = ranks[..m].iter().sum();
    let mean = m as f64 * (m + n + 1) as f64 / 2.0;
    let observed = (w - mean).abs();
    let splits = choose(m + n, m);
    if splits <= exact_limit {
        // Every subset of m ranks is equally likely under the null.
        let mut extreme = 0u64;
        let mut total = 0u64;
        subsets(&ranks, m, 0, 0.0, &mut |sum| {
            total += 1;
            // Tolerance: mid-ranks are halves, sums are exact in f64.
            if (sum - mean).abs() >= observed - 1e-9 {
                extreme += 1;
            }
        });
        return Some(extreme as f64 / total as f64);
    }
    // Normal approximation with the tie correction of the variance.
    let nn = (m + n) as f64;
    let ties: f64 = {
        let mut sorted = pooled.clone();
        sorted.sort_by(|x, y| x.total_cmp(y));
        let mut t = 0.0;
        let mut i = 0;
        while i < sorted.len() {
            let mut j = i;
            while j + 1 < sorted.len() && sorted[j + 1] == sorted[i] {
                j += 1;
            }
            let c = (j - i + 1) as f64;
            t += c * c * c - c;
            i = j + 1;
        }
        t
    };
    let var = m as f64 * n as f64 / 12.0 * ((nn + 1.0) - ties / (nn * (nn - 1.0)));
    if var <= 0.0 {
        return Some(1.0);
    }
    let z = ((observed - 0.5).max(0.0)) / var.sqrt();
    Some((2.0 * (1.0 - normal_cdf(z))).min(1.0))
}

fn subsets(ranks: &[f64], left: usize, from: usize, sum: f64, visit: &mut impl FnMut(f64)) {
    if left == 0 {
        visit(sum);
        return;
    }
    for i in from..=ranks.len() - left {
        subsets(ranks, left - 1, i + 1, sum + ranks[i], visit);
    }
}

/// The smallest two-sided p-value a rank test can give for these sample
/// sizes (every target repeat beyond every base repeat).
pub fn smallest_p(m: usize, n: usize) -> f64 {
    (2.0 / choose(m + n, m)).min(1.0)
}

/// Counts of the Mann–Whitney U statistic under the null hypothesis (no
/// ties): `counts[u]` is the number of splits with U = u. Kept per thread
/// for each pair of sizes: a history explains a thousand change points of
/// 24 repeats a side, each needing the same table.
fn u_counts(m: usize, n: usize) -> std::rc::Rc<[f64]> {
    type Tables = std::collections::HashMap<(usize, usize), std::rc::Rc<[f64]>>;
    thread_local! {
        static TABLES: std::cell::RefCell<Tables> = Default::default();
    }
    if let Some(t) = TABLES.with(|t| t.borrow().get(&(m, n)).cloned()) {
        return t;
    }
    // f(m, n, u) = f(m-1, n, u-n) + f(m, n-1, u), by where the largest
    // value falls; built up over n for each m.
    let max_u = m * n;
    let mut first = vec![0.0; max_u + 1];
    first[0] = 1.0;
    // table[i][j]: the distribution for i against j; with either empty
    // U is 0 in the one split there is.
    let mut table: Vec<Vec<Vec<f64>>> = vec![vec![first; n + 1]; m + 1];
    for i in 1..=m {
        for j in 1..=n {
            table[i][j] = (0..=max_u)
                .map(|u| {
                    let largest_in_a = if u >= j { table[i - 1][j][u - j] } else { 0.0 };
                    largest_in_a + table[i][j - 1][u]
                })
                .collect();
        }
    }
    let counts: std::rc::Rc<[f64]> = std::mem::take(&mut table[m][n]).into();
    TABLES.with(|t| t.borrow_mut().insert((m, n), counts.clone()));
    counts
}

/// The confidence interval of `median(target) ÷ median(base)` by inverting
/// the rank-sum test on the logarithms. `None` when a side has fewer than
/// two repeats or a figure is not positive.
pub fn ratio_interval(target: &[f64], base: &[f64]) -> Option<Interval> {
    let (m, n) = (target.len(), base.len());
    if m < 2
        || n < 2
        || target
            .iter()
            .chain(base)
            .any(|v| *v <= 0.0 || !v.is_finite())
    {
        return None;
    }
    let mut diffs: Vec<f64> = target
        .iter()
        .flat_map(|t| base.iter().map(move |b| t.ln() - b.ln()))
        .collect();
    diffs.sort_by(|a, b| a.total_cmp(b));
    let counts = u_counts(m, n);
    let total = choose(m + n, m);
    // The interval [D(k), D(mn+1-k)] has confidence 1 - 2·P(U ≤ k-1):
    // take the largest k that keeps LEVEL, or k = 1 (the widest) when
    // none does.
    let mut k = 1;
    let mut below = counts[0] / total; // P(U ≤ k-1)
    let mut level = 1.0 - 2.0 * below;
    while k < diffs.len() / 2 {
        let next = below + counts[k] / total;
        if 1.0 - 2.0 * next < LEVEL {
            break;
        }
        below = next;
        k += 1;
        level = 1.0 - 2.0 * below;
    }
    let mn = diffs.len();
    Some(Interval {
        lo: diffs[k - 1].exp(),
        hi: diffs[mn - k].exp(),
        level,
    })
}

/// The median of `values` (sorted in place); `None` when empty.
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

/// The sign-test confidence interval of the median of `values`: the k-th
/// smallest and k-th largest, with the largest k that keeps [`LEVEL`] (or
/// the extremes, with their lower confidence, when the values are few).
pub fn median_interval(values: &[f64]) -> Option<Interval> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let half_n = 0.5f64.powi(n as i32);
    let mut k = 1;
    let mut below = half_n; // P(B ≤ k-1), B ~ Binomial(n, ½)
    let mut level = 1.0 - 2.0 * below;
    while k < n / 2 {
        let next = below + choose(n, k) * half_n;
        if 1.0 - 2.0 * next < LEVEL {
            break;
        }
        below = next;
        k += 1;
        level = 1.0 - 2.0 * below;
    }
    Some(Interval {
        lo: v[k - 1],
        hi: v[n - k],
        level,
    })
}

/// How many repeats per target a rank test would need to call a change of
/// this size significant with 80% power: the two-sample normal formula
/// n = 2 (z(α/2) + z(0.8))² σ² / δ² on the logarithms, divided by the rank
/// test's asymptotic relative efficiency against the t-test (3/π), and at
/// least the smallest count at which a rank test can reach α at all.
/// Capped at 100.
pub fn repeats_needed(target: &[f64], base: &[f64]) -> Option<u32> {
    if target.is_empty() || base.is_empty() || target.iter().chain(base).any(|v| *v <= 0.0) {
        return None;
    }
    let logs = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<_>>();
    let (a, b) = (logs(target), logs(base));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (ma, mb) = (mean(&a), mean(&b));
    let ss = |v: &[f64], m: f64| v.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    let dof = (a.len() + b.len()).saturating_sub(2);
    let mut floor = 2;
    while smallest_p(floor, floor) >= ALPHA {
        floor += 1;
    }
    if dof == 0 {
        return Some(floor as u32);
    }
    let var = (ss(&a, ma) + ss(&b, mb)) / dof as f64;
    let delta = (ma - mb).abs();
    if delta == 0.0 {
        return None;
    }
    let z = 1.959_964 + 0.841_621;
    let n = 2.0 * z * z * var / (delta * delta) / (3.0 / std::f64::consts::PI);
    let n = (n.ceil() as usize).max(floor);
    Some(n.min(100) as u32)
}

/// P(|Z| ≥ z) for a standard normal Z.
pub fn normal_two_sided_p(z: f64) -> f64 {
    (2.0 * Normal::standard().sf(z.abs())).clamp(0.0, 1.0)
}

/// Φ(z) (statrs, by erf to double precision).
fn normal_cdf(z: f64) -> f64 {
    Normal::standard().cdf(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    #[allow(clippy::approx_constant)] // 3.14 is a measurement, not π
    fn exact_p_values_match_the_tables() {
        // Complete separation at 3 vs 3: 2 of the 20 splits are as extreme.
        assert!(close(
            rank_sum_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap(),
            0.1,
            1e-12
        ));
        // At 4 vs 4: 2/70.
        let p = rank_sum_p(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).unwrap();
        assert!(close(p, 2.0 / 70.0, 1e-12));
        // Identical samples: nothing to tell apart.
        assert_eq!(rank_sum_p(&[5.0, 5.0, 5.0], &[5.0, 5.0, 5.0]), Some(1.0));
        // With ties (1.06 and 1.29 twice): SciPy 1.17's exact permutation
        // test of the rank-sum statistic over all 48,620 splits gives
        // p = 0.1299.
        let x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];
        let y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];
        let p = rank_sum_p(&x, &y).unwrap();
        assert!(close(p, 0.1299, 0.005), "{p}");
        assert_eq!(rank_sum_p(&[], &[1.0]), None);
    }

    #[test]
    fn the_normal_approximation_agrees_with_exact_enumeration() {
        // 11 vs 11 (705,432 splits) takes the approximation.
        let a: Vec<f64> = (0..11).map(|i| 100.0 + i as f64).collect();
        let b: Vec<f64> = (0..11).map(|i| 106.0 + i as f64).collect();
        let p = rank_sum_p(&a, &b).unwrap();
        // SciPy 1.17, mannwhitneyu(method="asymptotic"), with the same tie
        // and continuity corrections: 0.001787.
        assert!(close(p, 0.001787, 2e-5), "{p}");
        assert!(rank_sum_p(&a, &a).unwrap() > 0.9);
    }

    #[test]
    fn the_smallest_p_decides_how_few_repeats_can_ever_be_significant() {
        assert!(close(smallest_p(3, 3), 0.1, 1e-12));
        assert!(smallest_p(4, 4) < ALPHA);
        assert_eq!(smallest_p(1, 1), 1.0);
    }

    #[test]
    fn u_distribution_counts_sum_to_the_number_of_splits() {
        let c = u_counts(3, 3);
        assert_eq!(&*c, &[1.0, 1.0, 2.0, 3.0, 3.0, 3.0, 3.0, 2.0, 1.0, 1.0]);
        let c = u_counts(5, 7);
        assert_eq!(c.iter().sum::<f64>(), choose(12, 5));
    }

    #[test]
    fn ratio_intervals_say_their_confidence() {
        // 3 vs 3: only the widest interval exists, at 90%.
        let i = ratio_interval(&[90.0, 95.0, 100.0], &[100.0, 105.0, 110.0]).unwrap();
        assert!(close(i.level, 0.9, 1e-12));
        assert!(close(i.lo, 90.0 / 110.0, 1e-12) && close(i.hi, 1.0, 1e-12));
        // 10 vs 10 reaches 95%: k = 24 by the tables (U critical value 23).
        let t: Vec<f64> = (0..10).map(|i| 200.0 + i as f64).collect();
        let b: Vec<f64> = (0..10).map(|i| 100.0 + i as f64).collect();
        let i = ratio_interval(&t, &b).unwrap();
        assert!(i.level >= LEVEL && i.level < 0.96, "{}", i.level);
        assert!(
            i.lo > 1.8 && i.hi < 2.2 && i.lo < 2.0 && i.hi > 1.9,
            "{i:?}"
        );
        assert_eq!(ratio_interval(&[1.0], &[1.0, 2.0]), None);
    }

    #[test]
    fn median_intervals_from_order_statistics() {
        // n = 3: min..max covers the median with 1 - 2/8 = 75%.
        let i = median_interval(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((i.lo, i.hi), (1.0, 3.0));
        assert!(close(i.level, 0.75, 1e-12));
        // n = 9: (x2, x8) has 1 - 2·10/512 = 96.1%.
        let v: Vec<f64> = (1..=9).map(f64::from).collect();
        let i = median_interval(&v).unwrap();
        assert_eq!((i.lo, i.hi), (2.0, 8.0));
        assert!(close(i.level, 1.0 - 20.0 / 512.0, 1e-12));
    }

    #[test]
    fn repeats_needed_grows_as_the_change_shrinks_against_the_noise() {
        let base = [100.0, 102.0, 98.0];
        let big = repeats_needed(&[80.0, 82.0, 78.0], &base).unwrap();
        let small = repeats_needed(&[97.0, 99.0, 95.0], &base).unwrap();
        assert_eq!(big, 4, "a clear change needs only the rank test's minimum");
        assert!(small > big, "{small} vs {big}");
        assert!(small <= 100);
    }

    #[test]
    fn normal_cdf_is_accurate() {
        assert!(close(normal_cdf(0.0), 0.5, 1e-7));
        assert!(close(normal_cdf(1.959_964), 0.975, 1e-6));
        assert!(close(normal_cdf(-1.0), 0.158_655, 1e-6));
    }
}
