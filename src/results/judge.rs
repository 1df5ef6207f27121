//! One judgement of a measured window, for every consumer: the report's
//! cells, the A/A floors, `--confirm`, the history and bisect. A window is
//! *quiet* only when it was judged so; a window that could not be judged
//! (too short for the CPU ticks, or the server's processes unknown) is
//! *unjudged*, and neither is ever read as quiet. A window judged quiet on
//! its own is *stalled* when its throughput is far below its siblings'
//! (the other repeats of the same execution): a stall that the machine's
//! figures did not show is still no measurement of the benchmark's rate.

use super::StepResult;

/// A window whose throughput is below this share of the median of its
/// siblings' is a stall. The A/A floors measured on these machines lie
/// between 1% and 8%; a real change moves every repeat of a target alike,
/// so one repeat at under half of the others is the window, not the
/// build.
pub const STALL_BELOW: f64 = 0.5;

/// What a window's figures may be used for.
#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    Quiet,
    /// Another program, the hypervisor or relbench's own stall took a
    /// share of the window large enough to move its figures: why.
    Disturbed(String),
    /// Its throughput fell far below its siblings' while nothing that was
    /// measured says why.
    Stalled(String),
    /// It could not be judged: why.
    Unjudged(String),
}

impl Judgement {
    pub fn is_quiet(&self) -> bool {
        matches!(self, Judgement::Quiet)
    }

    /// Why the window is not quiet, in words.
    pub fn why(&self) -> Option<&str> {
        match self {
            Judgement::Quiet => None,
            Judgement::Disturbed(w) | Judgement::Stalled(w) | Judgement::Unjudged(w) => Some(w),
        }
    }

    /// Disturbed or stalled: a window that was judged, and judged not
    /// quiet (an unjudged one is neither).
    pub fn is_disturbed(&self) -> bool {
        matches!(self, Judgement::Disturbed(_) | Judgement::Stalled(_))
    }
}

impl StepResult {
    /// This window's judgement on its own, from what the sampler recorded
    /// (by the thresholds of the relbench reading it, as every report
    /// judges): [`judge`] adds its siblings.
    pub fn judgement(&self) -> Judgement {
        let Some(i) = self.metrics.interference.as_ref() else {
            return Judgement::Unjudged(
                "no reading of the machine was kept for this window".into(),
            );
        };
        match i.judge() {
            (Some(why), _) => Judgement::Disturbed(why),
            (None, Some(why)) => Judgement::Unjudged(why),
            (None, None) => Judgement::Quiet,
        }
    }
}

/// The judgement of each of `windows`, which are the repeats of one
/// execution (one target's step at one client count): each on its own,
/// then each quiet one against the median of the other quiet ones.
pub fn judge(windows: &[&StepResult]) -> Vec<Judgement> {
    let mut out: Vec<Judgement> = windows.iter().map(|s| s.judgement()).collect();
    let quiet: Vec<(usize, f64)> = out
        .iter()
        .enumerate()
        .filter(|(i, j)| j.is_quiet() && windows[*i].failed.is_none())
        .map(|(i, _)| (i, windows[i].throughput))
        .collect();
    let mut stalled = Vec::new();
    for &(i, rate) in &quiet {
        let mut others: Vec<f64> = quiet
            .iter()
            .filter(|(j, _)| *j != i)
            .map(|(_, r)| *r)
            .collect();
        let Some(median) = crate::measure::stats::median(&mut others) else {
            continue;
        };
        if median > 0.0 && rate < STALL_BELOW * median {
            stalled.push((
                i,
                format!(
                    "stalled: its throughput ({}) was {:.0}% of its {} sibling window{}' median ({})",
                    fmt_rate(rate),
                    100.0 * rate / median,
                    others.len(),
                    if others.len() == 1 { "" } else { "s" },
                    fmt_rate(median)
                ),
            ));
        }
    }
    for (i, why) in stalled {
        out[i] = Judgement::Stalled(why);
    }
    out
}

fn fmt_rate(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}/s")
    } else {
        format!("{r:.2}/s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::interference::Interference;

    fn window(throughput: f64, interference: Option<Interference>) -> StepResult {
        let mut s = crate::results::tests::sample_step();
        s.throughput = throughput;
        s.metrics.interference = interference;
        s
    }

    fn quiet() -> Option<Interference> {
        Some(Interference {
            cores: Some(2.0),
            window_secs: Some(1.0),
            others_share_pct: Some(0.0),
            steal_pct: Some(0.0),
            relbench_late_secs: Some(0.0),
            ..Interference::default()
        })
    }

    /// Regression: bisect named a culprit from a kept window of 1 event
    /// in 0.89 s beside siblings of 27,574 ops/s.
    #[test]
    fn a_window_far_below_its_siblings_is_stalled_not_quiet() {
        let ws = [
            window(27_000.0, quiet()),
            window(1.8, quiet()),
            window(28_100.0, quiet()),
        ];
        let refs: Vec<&StepResult> = ws.iter().collect();
        let j = judge(&refs);
        assert!(j[0].is_quiet() && j[2].is_quiet(), "{j:?}");
        let Judgement::Stalled(why) = &j[1] else {
            panic!("{j:?}")
        };
        assert!(why.contains("1.80/s") && why.contains("27550/s"), "{why}");
        // Two windows: the lower one is the stall, never the higher.
        let two: Vec<&StepResult> = vec![&ws[0], &ws[1]];
        let j = judge(&two);
        assert!(j[0].is_quiet() && matches!(j[1], Judgement::Stalled(_)));
        // The spread of ordinary repeats is no stall.
        let ok = [window(100.0, quiet()), window(70.0, quiet())];
        let refs: Vec<&StepResult> = ok.iter().collect();
        assert!(judge(&refs).iter().all(Judgement::is_quiet));
    }

    /// Regression: windows too short to judge, or with no reading, were
    /// read as quiet by the history and bisect.
    #[test]
    fn a_window_that_could_not_be_judged_is_never_quiet() {
        let short = Interference {
            window_secs: Some(0.04),
            ..quiet().unwrap()
        };
        assert!(matches!(
            window(10.0, Some(short)).judgement(),
            Judgement::Unjudged(_)
        ));
        assert!(matches!(
            window(10.0, None).judgement(),
            Judgement::Unjudged(_)
        ));
        let stalled = Interference {
            relbench_late_secs: Some(0.7),
            relbench_late_max_secs: Some(0.7),
            window_secs: Some(1.3),
            ..quiet().unwrap()
        };
        let Judgement::Disturbed(why) = window(10.0, Some(stalled)).judgement() else {
            panic!()
        };
        assert!(
            why.contains("relbench itself did not get the CPU for 700 ms"),
            "{why}"
        );
    }
}
