//! What a test says of a cell against its base: which test, its p-value,
//! its interval for a change and its interval for the same (two one-sided
//! tests), and what would decide it.

use serde::Serialize;

use super::Verdict;
use crate::measure::stats;

/// Which test produced a p-value and interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The rounds' ln(target ÷ base), paired by round, with the cell's
    /// variance moderated by the study's other cells
    /// (`measure::paired`).
    Paired,
    /// The two sides' ln(throughput) unpaired (fewer than two rounds hold
    /// both), the variance moderated likewise.
    Unpaired,
    /// One window a side: t on ln(ratio) with the seconds' variance
    /// (sizes corrected for autocorrelation) plus the between-window
    /// variance the run's A/A pairs measured (`measure::within`).
    PerSecond,
}

impl Method {
    pub fn describe(self) -> &'static str {
        match self {
            Method::Paired => {
                "a t-test on the rounds' ln(target ÷ base), each round's two windows paired (the \
                 targets take turns in a round, so the machine's drift between rounds cancels), the \
                 cell's variance moderated by what the study's other cells measured of theirs (Smyth's \
                 empirical Bayes rule); the ratio is the geometric mean of the rounds' ratios"
            }
            Method::Unpaired => {
                "a t-test on the two sides' mean ln(throughput), unpaired (fewer than two rounds held \
                 both), its variance moderated as the paired test's"
            }
            Method::PerSecond => {
                "a t-test on the log of the ratio of the two windows' means, its variance the seconds' \
                 (sample sizes corrected for autocorrelation) plus how far windows of the same work lay \
                 apart on the run's quiet A/A pairs"
            }
        }
    }
}

/// What the repeats (or, with one repeat each, the seconds of the two
/// windows) say about a target's change against its base.
#[derive(Debug, Clone, Serialize)]
pub struct Significance {
    pub method: Method,
    /// Two-sided p-value of "no change" (an adaptive run's: adjusted for
    /// its looks, p × 5% ÷ the look's level).
    pub p_value: f64,
    /// The interval of target ÷ base, from the same test, at the level
    /// it says: a change is shown when it excludes 1, the same when it
    /// lies inside the band.
    pub interval: Option<stats::Interval>,
    /// The interval of the two one-sided tests at the same level (1 − 2α:
    /// 90% beside a 95% `interval`): the same is shown when it lies inside
    /// the band. `None` where the test gives none; `interval` then
    /// stands in, which only makes the same harder to show.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equivalence: Option<stats::Interval>,
    /// Repeats per target that would decide an undecided cell (its
    /// variance as now, the degrees of freedom the repeats add); `None`
    /// when decided, or when no number up to the most asked would (a
    /// ratio at the band's edge).
    pub repeats_needed: Option<u32>,
    /// The quiet A/A pairs whose between-window variance a one-window
    /// test added.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aa_pairs: Option<usize>,
    /// The t statistic's degrees of freedom.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub df: Option<f64>,
    /// Rounds that held both sides (the paired test's pairs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounds: Option<usize>,
}

impl Significance {
    /// A paired test's significance with the 95% interval `lo`–`hi`, for
    /// the tests of what reads it.
    #[cfg(test)]
    pub(crate) fn paired(lo: f64, hi: f64, df: f64, rounds: usize) -> Significance {
        Significance {
            method: Method::Paired,
            p_value: if lo > 1.0 || hi < 1.0 { 0.01 } else { 0.5 },
            interval: Some(stats::Interval {
                lo,
                hi,
                level: 0.95,
            }),
            equivalence: None,
            repeats_needed: None,
            aa_pairs: None,
            df: Some(df),
            rounds: Some(rounds),
        }
    }

    /// The interval a verdict is read from: the equivalence interval for
    /// a cell shown the same, the test's interval for any other.
    pub fn shown(&self, v: Verdict) -> Option<stats::Interval> {
        match v {
            Verdict::Same => self.equivalence.or(self.interval),
            _ => self.interval,
        }
    }
}
