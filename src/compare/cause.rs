//! One ranked cause per changed cell, from every kind of evidence a
//! comparison holds: a plan that differs, the server's waits that account
//! for most of the change in an operation's time, the functions or wait
//! sites whose µs/op moved by most of it (a profile), a setting known to
//! move the figures that moved, and last the resource the costs point to
//! (CPU, IO, waiting). Each candidate carries the share of the change it
//! accounts for where that is measurable; the sentence leads with the
//! first, and names the runner-up when their shares are close. The same
//! model is in report.json (`summary[].regressions[].cause`).
//!
//! The order is the issue's, an expert's: what changed the work itself
//! (a plan) before what the work waited on, what was measured per
//! operation before what is known of a setting, and the resource, which
//! says where the time went but not why, last. Measured evidence that
//! accounts for under [`LEADS`] of the change ranks after the resource.

use serde::Serialize;

/// A candidate's evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// A statement's plan differs from the base's.
    Plan,
    /// The server's own account of its waits.
    Waits,
    /// On-CPU functions or off-CPU wait sites of a profile.
    Profile,
    /// A server setting that differs and is known to move a cost that
    /// moved.
    Setting,
    /// The costs per operation and what bounded the step.
    Resource,
}

/// One candidate cause.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Candidate {
    pub kind: CauseKind,
    /// What it names, as the sentence says it.
    pub names: String,
    /// The share of the change in an operation's time it accounts for
    /// (1: all of it), where measurable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<f64>,
    /// The share at the two ends of the change's interval ([`share_range`]),
    /// lowest first: how sure the share is, as far as the change's own
    /// uncertainty goes.
    #[serde(rename = "share_interval", skip_serializing_if = "Option::is_none")]
    pub share_range: Option<(f64, f64)>,
}

/// A changed cell's causes, most likely first.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Cause {
    pub ranked: Vec<Candidate>,
    /// The runner-up is close enough to the lead to be said beside it.
    pub close: bool,
}

/// Measured evidence leads when it accounts for this share of the change.
pub const LEADS: f64 = 0.5;

/// Two measured candidates are close when their shares differ by less
/// than this.
const CLOSE: f64 = 0.2;

/// Where a candidate ranks: lower first.
fn rank_of(c: &Candidate) -> (u8, i64) {
    let by_share = -(c.share.unwrap_or(0.0) * 1e6) as i64;
    match (c.kind, c.share) {
        (CauseKind::Plan, _) => (0, 0),
        (CauseKind::Waits | CauseKind::Profile, Some(s)) if s >= LEADS => (1, by_share),
        (CauseKind::Setting, _) => (2, 0),
        (CauseKind::Resource, _) => (3, 0),
        (_, _) => (4, by_share),
    }
}

/// Ranks the candidates (their order otherwise kept).
pub fn rank(mut candidates: Vec<Candidate>) -> Option<Cause> {
    candidates.sort_by_key(rank_of);
    let close = match candidates.as_slice() {
        [a, b, ..] => match (a.share, b.share) {
            (Some(x), Some(y)) => y >= LEADS && (x - y).abs() < CLOSE,
            _ => false,
        },
        _ => false,
    };
    (!candidates.is_empty()).then_some(Cause {
        ranked: candidates,
        close,
    })
}

/// The share a cause's µs per operation would be of the change at each
/// end of the change's interval (`interval`, of target ÷ base, around
/// `relative`): the same µs against the largest and the smallest change
/// the interval allows, lowest first. An operation's time is the clients'
/// time ÷ throughput, so its change is the base's time × (1 ÷ ratio − 1)
/// at every ratio. `None` when the interval reaches 1 (the change could
/// be none, and the share any size). The spread of the cause's own µs
/// across rounds is not in it: a share's medians are over the rounds.
pub fn share_range(share: f64, relative: f64, interval: (f64, f64)) -> Option<(f64, f64)> {
    let change = |r: f64| 1.0 / r - 1.0;
    let (lo, hi) = (change(interval.0), change(interval.1));
    if lo * hi <= 0.0 || change(relative) == 0.0 {
        return None;
    }
    let at = |r: f64| share * change(relative) / change(r);
    let (a, b) = (at(interval.0), at(interval.1));
    Some((a.min(b), a.max(b)))
}

/// An operation's time on average, µs: the clients' time ÷ operations.
pub fn op_us(clients: u32, throughput: Option<f64>) -> Option<f64> {
    let t = throughput.filter(|t| *t > 0.0)?;
    Some(f64::from(clients) * 1e6 / t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(kind: CauseKind, share: Option<f64>) -> Candidate {
        Candidate {
            kind,
            names: format!("{kind:?}"),
            share,
            share_range: None,
        }
    }

    /// A regression to 0.5 (0.4–0.625) whose waits grew by 80% of the
    /// change: at 0.4 the operation's time grew by 1.5 × the base's, at
    /// 0.625 by 0.6 ×, against 1.0 × at the estimate.
    #[test]
    fn a_shares_range_is_the_same_us_against_each_end_of_the_changes_interval() {
        let (lo, hi) = share_range(0.8, 0.5, (0.4, 0.625)).unwrap();
        assert!((lo - 0.8 / 1.5).abs() < 1e-12, "{lo}");
        assert!((hi - 0.8 / 0.6).abs() < 1e-12, "{hi}");
        // A win the same way: 2.0 (1.6–2.5), time down by 0.5 × the base's.
        let (lo, hi) = share_range(0.9, 2.0, (1.6, 2.5)).unwrap();
        assert!(lo < 0.9 && 0.9 < hi, "{lo} {hi}");
        // An interval that reaches 1 bounds no share.
        assert_eq!(share_range(0.8, 0.9, (0.8, 1.02)), None);
    }

    #[test]
    fn a_plan_leads_then_measured_evidence_past_half_then_a_setting_then_the_resource() {
        let r = rank(vec![
            c(CauseKind::Resource, None),
            c(CauseKind::Setting, None),
            c(CauseKind::Profile, Some(0.3)),
            c(CauseKind::Waits, Some(0.8)),
            c(CauseKind::Plan, None),
        ])
        .unwrap();
        let kinds: Vec<CauseKind> = r.ranked.iter().map(|x| x.kind).collect();
        assert_eq!(
            kinds,
            [
                CauseKind::Plan,
                CauseKind::Waits,
                CauseKind::Setting,
                CauseKind::Resource,
                CauseKind::Profile
            ]
        );
        assert!(!r.close);
    }

    #[test]
    fn two_measured_causes_of_about_the_same_share_are_both_said() {
        let r = rank(vec![
            c(CauseKind::Profile, Some(0.62)),
            c(CauseKind::Waits, Some(0.71)),
        ])
        .unwrap();
        assert_eq!(r.ranked[0].kind, CauseKind::Waits);
        assert!(r.close);
    }
}
