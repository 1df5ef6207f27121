//! `bisect-check`'s answers for `git bisect run`: the build just made
//! against the good and bad builds' stored results, or beside the good
//! build against the midpoint to the bad one, given only when a second
//! measurement gives the same answer. The command line runs the plan.

use crate::compare::median;
use crate::measure::stats::{self, ALPHA};

/// Two sets too small for the rank test to reach [`ALPHA`] differ when
/// their ranges do not overlap and the nearer values lie this far apart
/// (as a ratio): past every A/A floor measured on these hosts (1–8%).
pub const FAR_APART: f64 = 1.25;

/// The smallest two-sided p the exact rank-sum test can give for sets of
/// `n` and `m` values: 2 ÷ C(n + m, n).
fn smallest_p(n: usize, m: usize) -> f64 {
    let (k, all) = (n.min(m), n + m);
    let ways = (0..k).fold(1.0, |c, i| c * (all - i) as f64 / (i + 1) as f64);
    (2.0 / ways).min(1.0)
}

/// The median of a side's results (0 for none: the callers refuse an
/// empty side first).
fn mid(v: &[f64]) -> f64 {
    median(&mut v.to_vec()).unwrap_or(0.0)
}

/// A side's smallest and largest result.
fn range(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::MAX, 0.0), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

/// Whether `a` and `b` differ, and how that was decided: the rank test
/// where their sizes can reach [`ALPHA`], and [`FAR_APART`] below that.
fn apart(a: &[f64], b: &[f64]) -> (bool, String) {
    if smallest_p(a.len(), b.len()) < ALPHA {
        let p = stats::rank_sum_p(a, b).unwrap_or(1.0);
        return (p < ALPHA, format!("p {p:.3}"));
    }
    let ((lo_a, hi_a), (lo_b, hi_b)) = (range(a), range(b));
    let gap = if hi_a < lo_b {
        lo_b / hi_a.max(1e-12)
    } else if hi_b < lo_a {
        lo_a / hi_b.max(1e-12)
    } else {
        1.0
    };
    let how = if gap > 1.0 {
        format!("×{} apart", crate::measure::units::fmt_ratio(gap))
    } else {
        "overlapping".into()
    };
    (
        gap >= FAR_APART,
        format!("{how} at {} and {} repeats", a.len(), b.len()),
    )
}

/// `bisect-check`'s answer for `git bisect run`: 0 like the good build,
/// 1 like the bad one, 125 when it cannot tell (or the step did not run).
/// Unlike both (another run's level, as runs on a busy host drift), it is
/// the nearer one when it lies in the outer quarter towards it. Sets too
/// small for the rank test are told apart by [`FAR_APART`].
pub fn check(now: &[f64], good: &[f64], bad: &[f64]) -> (u8, String) {
    if now.is_empty() || good.is_empty() || bad.is_empty() {
        return (
            125,
            format!(
                "the step has no quiet window on one side (now {}, good {}, bad {}): this host could not measure it",
                now.len(),
                good.len(),
                bad.len()
            ),
        );
    }
    let (mn, mg, mb) = (mid(now), mid(good), mid(bad));
    let ((dg, hg), (db, hb)) = (apart(now, good), apart(now, bad));
    let say = format!("median {mn:.1} against good {mg:.1} ({hg}) and bad {mb:.1} ({hb})");
    let (gb, how) = apart(good, bad);
    if !gb {
        return (
            125,
            format!("cannot tell: the good and bad builds' results do not differ ({how}); {say}"),
        );
    }
    let t = (mn / mg).ln() / (mb / mg).ln();
    match (dg, db) {
        (false, true) => (0, format!("good: {say}")),
        (true, false) => (1, format!("bad: {say}")),
        (true, true) if t <= 0.25 => (0, format!("good (nearer the good build): {say}")),
        (true, true) if t >= 0.75 => (1, format!("bad (nearer the bad build): {say}")),
        _ => (125, format!("cannot tell: {say}")),
    }
}

/// `bisect-check`'s answer from the build just made measured beside the
/// good build in the same rounds (the plan's second target), `ratio` and
/// its interval `(lo, hi)` its test against that good build, placed
/// against `expected`, the bad build's ratio to the good one (the medians
/// of their stored results, `good` and `bad`, which must differ as
/// [`check`] asks): 0 when the whole interval lies on the good build's
/// side of the midpoint between them (in ln: a 0.5× bad build's midpoint
/// is 0.71×), 1 when on the bad one's, 125 when it reaches the midpoint.
/// The machine's level between runs cancels in the pairing, as it cannot
/// against stored runs.
pub fn check_beside(ratio: f64, (lo, hi): (f64, f64), good: &[f64], bad: &[f64]) -> (u8, String) {
    let (gb, how) = apart(good, bad);
    let expected = mid(bad) / mid(good);
    if !(gb && expected.is_finite() && expected > 0.0 && expected != 1.0) {
        return (
            125,
            format!("cannot tell: the good and bad builds' results do not differ ({how})"),
        );
    }
    let span = expected.ln();
    // 0 at the good build, 1 at the bad one.
    let at = |x: f64| x.ln() / span;
    let (a, b) = (at(lo), at(hi));
    let say = format!(
        "×{ratio:.3} ({lo:.3}–{hi:.3}) against the good build run beside it, the bad build's results at ×{expected:.3}"
    );
    if a.max(b) < 0.5 {
        (0, format!("good: {say}"))
    } else if a.min(b) > 0.5 {
        (1, format!("bad: {say}"))
    } else {
        (
            125,
            format!(
                "cannot tell: {say}: its interval reaches the midpoint ×{:.3}",
                expected.sqrt()
            ),
        )
    }
}

/// The answer of two measurements made one after the other: given only
/// when both give it, so a level the machine held through one of them
/// does not decide a commit.
pub fn replicated(first: (u8, String), again: (u8, String)) -> (u8, String) {
    match (first.0, again.0) {
        (a, b) if a == b => (a, format!("{}; measured again: {}", first.1, again.1)),
        _ => (
            125,
            format!(
                "cannot tell: the answer did not replicate: {}; measured again: {}",
                first.1, again.1
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: bisect-check said 125 (cannot tell) for a 2–5× good/bad
    /// difference at 1–2 quiet repeats: a rank test of 2 against 2 can
    /// never reach p < 0.05.
    #[test]
    fn bisect_check_tells_far_apart_builds_at_one_or_two_repeats() {
        assert_eq!(check(&[101.0], &[100.0], &[40.0]).0, 0);
        assert_eq!(check(&[41.0], &[100.0], &[40.0]).0, 1);
        assert_eq!(check(&[98.0, 103.0], &[100.0, 99.0], &[20.0, 45.0]).0, 0);
        // Close ends at few repeats stay "cannot tell".
        assert_eq!(check(&[100.0], &[100.0], &[90.0]).0, 125);
        // Nothing quiet on a side: cannot tell, and says why.
        let (code, why) = check(&[], &[100.0], &[40.0]);
        assert_eq!(code, 125);
        assert!(why.contains("could not measure"), "{why}");
        assert!((smallest_p(2, 2) - 1.0 / 3.0).abs() < 1e-9);
        assert!((smallest_p(4, 4) - 2.0 / 70.0).abs() < 1e-9);
    }

    #[test]
    fn check_answers_as_git_bisect_run_expects() {
        let good = [100.0, 101.0, 99.0, 100.5];
        let bad = [90.0, 91.0, 89.5, 90.5];
        assert_eq!(check(&[100.2, 99.8, 100.9, 99.4], &good, &bad).0, 0);
        assert_eq!(check(&[90.2, 89.8, 90.9, 90.4], &good, &bad).0, 1);
        assert_eq!(check(&[], &good, &bad).0, 125);
        // Another run's level, unlike both but near the bad one.
        assert_eq!(check(&[88.0, 88.5, 87.9, 88.2], &good, &bad).0, 1);
        assert_eq!(check(&[95.0, 95.2, 94.9, 95.1], &good, &bad).0, 125);
        assert_eq!(check(&[95.0, 95.2, 94.9, 95.1], &good, &good).0, 125);
    }

    /// Regression (the verdicts issue): bisect-check compared the build
    /// just made with results stored from other runs, and read the
    /// machine's level between runs as the builds' difference.
    #[test]
    fn a_build_beside_the_good_one_is_judged_by_its_interval_against_the_midpoint() {
        // The bad build measured at half the good one's rate, and at twice.
        let good = [100.0, 101.0, 99.0, 100.5];
        let half = [50.0, 50.5, 49.5, 50.2];
        let twice = [200.0, 202.0, 198.0, 201.0];
        assert_eq!(check_beside(0.98, (0.95, 1.01), &good, &half).0, 0);
        assert_eq!(check_beside(0.52, (0.49, 0.55), &good, &half).0, 1);
        // Past the midpoint (0.707) but its interval reaches it.
        assert_eq!(check_beside(0.68, (0.60, 0.75), &good, &half).0, 125);
        // A faster bad build, and a build faster than both: nearer bad.
        assert_eq!(check_beside(1.9, (1.8, 2.0), &good, &twice).0, 1);
        assert_eq!(check_beside(2.5, (2.3, 2.7), &good, &twice).0, 1);
        assert_eq!(check_beside(1.02, (0.97, 1.06), &good, &twice).0, 0);
        // Good and bad results that do not differ: nothing to place it by.
        assert_eq!(check_beside(0.5, (0.49, 0.51), &good, &good).0, 125);
        let (code, why) = replicated((1, "bad: a".into()), (0, "good: b".into()));
        assert_eq!(code, 125, "{why}");
        assert_eq!(replicated((0, "good".into()), (0, "good".into())).0, 0);
    }
}
