//! The test an adaptive run (`repeats = "auto"`) judges its cells by,
//! while it adds repeats and in its report: a t-test on the difference of
//! the two sides' mean ln(throughput), its variance pooled from the
//! cell's own repeats and from every window of the run's A/A copies, at a
//! level corrected for the looks the run may take.
//!
//! Why not the rank-sum test the fixed runs use: at 2 repeats a side its
//! smallest p is 0.33, so no cell could be decided before 4 repeats, and
//! the adaptive run's point is to stop early where the answer is clear.
//! The t-test borrows strength from the A/A copies: windows of identical
//! targets say how far windows of the same work lie apart, with as many
//! degrees of freedom as the copies have windows.
//!
//! Optional stopping: a run that looks at a cell after every added repeat
//! and stops once it is decided takes up to `looks` tests of it; a test
//! at level α each time would call an A/A cell different more often than
//! α. The rule spends α across the looks (a union bound: the chance that
//! any look's test falls below its own level is at most the sum of the
//! levels, whatever the looks' dependence), and unequally: half at the
//! first look, the rest shared by the looks repeats add. The first look
//! is where a study's cells are decided — every cell gets it, and at two
//! repeats a side the t quantile is steep in the level (at 3 degrees of
//! freedom, 4.2 at 2.5% against 5.8 at the 1% an equal split over five
//! looks gives) — while a later look has the repeats and degrees of
//! freedom that make a small level cheap. (The equal split, Bonferroni's,
//! was measured first: cells a fixed run decides were left "not
//! significant" at the first look.) A cell is judged at the level of the
//! last look its data reached, so a cell no round touched keeps the first
//! look's. The p-value reported is the adjusted one, min(1, p · α ⁄
//! level), and the interval is at 1 − level. `bench/aa_calibration.py
//! --adaptive` measures the rate it gives on A/A cells.

use super::stats::{Interval, ALPHA};
use super::within::{t_quantile_two_sided, t_two_sided_p};

/// The per-window variance of ln(throughput) the A/A copies measured,
/// and its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowNoise {
    pub var: f64,
    pub df: f64,
}

impl WindowNoise {
    /// From groups of windows of identical work (one row's original and
    /// copies): the pooled variance of their ln(throughput) around each
    /// group's own mean. `None` without a group of two.
    pub fn pooled<'a>(groups: impl IntoIterator<Item = &'a [f64]>) -> Option<WindowNoise> {
        let (mut ss, mut df) = (0.0, 0.0);
        for g in groups {
            let logs: Vec<f64> = g.iter().filter(|v| **v > 0.0).map(|v| v.ln()).collect();
            if logs.len() < 2 {
                continue;
            }
            let m = logs.iter().sum::<f64>() / logs.len() as f64;
            ss += logs.iter().map(|l| (l - m) * (l - m)).sum::<f64>();
            df += (logs.len() - 1) as f64;
        }
        (df > 0.0).then(|| WindowNoise { var: ss / df, df })
    }
}

/// The level the rule spends at look `look` (1-based) of `looks`: α ⁄ 2
/// at the first, α ⁄ (2 · (looks − 1)) at each later one (α at the only
/// look of a run that takes one). Their sum is α.
pub fn level(look: u32, looks: u32) -> f64 {
    let looks = looks.max(1);
    if looks == 1 {
        ALPHA
    } else if look <= 1 {
        ALPHA / 2.0
    } else {
        ALPHA / (2.0 * f64::from(looks - 1))
    }
}

/// What the test says of a target's repeats against its base's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sequential {
    /// Two-sided p, adjusted for the look (min(1, p · α ⁄ level)).
    pub p_value: f64,
    /// Target ÷ base at 1 − the look's level.
    pub interval: Interval,
    /// Its degrees of freedom: the cell's repeats less two, and the A/A
    /// windows'.
    pub df: f64,
}

fn mean_ss(logs: &[f64]) -> (f64, f64) {
    let m = logs.iter().sum::<f64>() / logs.len() as f64;
    (m, logs.iter().map(|l| (l - m) * (l - m)).sum())
}

/// The half-width, in ln(ratio), that an interval of half-width `half`
/// at `df` degrees of freedom, `n_t`, `n_b` repeats and level `now` would
/// have at `max` repeats a side (its variance as now, its degrees of
/// freedom grown by the repeats added), at the last look's level `last`.
pub fn half_width_at(half: f64, df: f64, n: (f64, f64), max: f64, now: f64, last: f64) -> f64 {
    let se = half / t_quantile_two_sided(now, df);
    let shrink = ((2.0 / max) / (1.0 / n.0.max(1.0) + 1.0 / n.1.max(1.0))).sqrt();
    let df_max = df + (max - n.0).max(0.0) + (max - n.1).max(0.0);
    se * shrink * t_quantile_two_sided(last, df_max)
}

/// The test of `target`'s throughputs against `base`'s at level `alpha`
/// (the look's, [`level`]); `None` without a variance to go by (one
/// repeat a side and no A/A windows) or a side that did nothing.
pub fn test(
    target: &[f64],
    base: &[f64],
    aa: Option<WindowNoise>,
    alpha: f64,
) -> Option<Sequential> {
    if target.is_empty() || base.is_empty() || target.iter().chain(base).any(|v| *v <= 0.0) {
        return None;
    }
    let t: Vec<f64> = target.iter().map(|v| v.ln()).collect();
    let b: Vec<f64> = base.iter().map(|v| v.ln()).collect();
    let ((mt, sst), (mb, ssb)) = (mean_ss(&t), mean_ss(&b));
    let own_df = (t.len() + b.len()) as f64 - 2.0;
    let (aa_ss, aa_df) = aa.map_or((0.0, 0.0), |a| (a.var * a.df, a.df));
    let df = own_df + aa_df;
    if df < 1.0 {
        return None;
    }
    let var = (sst + ssb + aa_ss) / df;
    let se = (var * (1.0 / t.len() as f64 + 1.0 / b.len() as f64)).sqrt();
    let d = mt - mb;
    if se <= 0.0 {
        let v = d.exp();
        return Some(Sequential {
            df,
            p_value: if d == 0.0 { 1.0 } else { 0.0 },
            interval: Interval {
                lo: v,
                hi: v,
                level: 1.0 - alpha,
            },
        });
    }
    let p = t_two_sided_p(d / se, df);
    let q = t_quantile_two_sided(alpha, df);
    Some(Sequential {
        df,
        p_value: (p * ALPHA / alpha).min(1.0),
        interval: Interval {
            lo: (d - q * se).exp(),
            hi: (d + q * se).exp(),
            level: 1.0 - alpha,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_change_is_decided_at_two_repeats_a_side() {
        let aa = WindowNoise::pooled([&[1000.0, 1010.0, 995.0, 1003.0][..]]);
        let s = test(&[1500.0, 1510.0], &[1000.0, 1008.0], aa, level(1, 5)).unwrap();
        assert!(s.p_value < 0.01, "{s:?}");
        assert!(s.interval.lo > 1.4 && s.interval.hi < 1.6, "{s:?}");
        assert!((s.interval.level - 0.975).abs() < 1e-12);
    }

    #[test]
    fn a_smaller_level_widens_the_interval_and_scales_the_p_value() {
        let (t, b) = ([1040.0, 1060.0, 1050.0], [1000.0, 1010.0, 990.0]);
        let one = test(&t, &b, None, ALPHA).unwrap();
        let later = test(&t, &b, None, level(3, 5)).unwrap();
        assert!((later.p_value - (one.p_value * 8.0).min(1.0)).abs() < 1e-12);
        assert!(later.interval.lo < one.interval.lo && later.interval.hi > one.interval.hi);
    }

    #[test]
    fn the_looks_levels_sum_to_alpha_and_the_first_holds_half() {
        for looks in 1..=12 {
            let sum: f64 = (1..=looks).map(|k| level(k, looks)).sum();
            assert!((sum - ALPHA).abs() < 1e-12, "{looks} looks spend {sum}");
        }
        assert_eq!(level(1, 5), ALPHA / 2.0);
        assert_eq!(level(5, 5), ALPHA / 8.0);
        // The first look's level is where it pays: at two repeats a side
        // and 3 degrees of freedom the quantile nearly halves.
        let (q_first, q_equal) = (
            t_quantile_two_sided(level(1, 5), 3.0),
            t_quantile_two_sided(ALPHA / 5.0, 3.0),
        );
        assert!(q_first < 0.75 * q_equal, "{q_first} vs {q_equal}");
    }

    #[test]
    fn one_repeat_a_side_needs_the_copies_windows() {
        assert_eq!(test(&[1000.0], &[1100.0], None, ALPHA), None);
        let aa = WindowNoise::pooled([&[1000.0, 1010.0][..], &[50.0, 51.0, 49.5][..]]);
        assert_eq!(aa.unwrap().df, 3.0);
        assert!(test(&[1000.0], &[1100.0], aa, ALPHA).is_some());
    }
}
