//! The levels an adaptive run (`repeats = "auto"`) judges its cells at.
//!
//! Optional stopping: a run that looks at a cell after every added repeat
//! and stops once it is decided takes up to `looks` tests of it; a test
//! at level α each time would call an A/A cell different more often than
//! α. The rule spends α across the looks (a union bound: the chance that
//! any look's test falls below its own level is at most the sum of the
//! levels, whatever the looks' dependence), and unequally: half at the
//! first look, the rest shared by the looks repeats add. The first look
//! is where a study's cells are decided — every cell gets it, and at two
//! repeats a side the t quantile is steep in the level — while a later
//! look has the repeats and degrees of freedom that make a small level
//! cheap. (The equal split, Bonferroni's, was measured first: cells a
//! fixed run decides were left undecided at the first look.) A cell is
//! judged at the level of the last look its data reached, so a cell no
//! round touched keeps the first look's. The test itself is the one every
//! verdict uses (`measure::paired`); its p-value is reported adjusted,
//! min(1, p · α ⁄ level), and its interval is at 1 − level.
//! `bench/aa_calibration.py --adaptive` measures the rate it gives on A/A
//! cells.

use super::stats::ALPHA;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_looks_levels_sum_to_alpha_and_the_first_holds_half() {
        for looks in 1..=12 {
            let sum: f64 = (1..=looks).map(|k| level(k, looks)).sum();
            assert!((sum - ALPHA).abs() < 1e-12, "{looks} looks spend {sum}");
        }
        assert_eq!(level(1, 5), ALPHA / 2.0);
        assert_eq!(level(5, 5), ALPHA / 8.0);
    }

    #[test]
    fn copies_windows_pool_around_each_groups_own_mean() {
        let aa = WindowNoise::pooled([&[1000.0, 1010.0][..], &[50.0, 51.0, 49.5][..]]);
        assert_eq!(aa.unwrap().df, 3.0);
        assert!(WindowNoise::pooled([&[1000.0][..]]).is_none());
    }
}
