//! The gate's judgement of a run (`relbench gate`, `run --gate`): each
//! step of one candidate against its reference, held to the plan's
//! allowance (`[gate]`). A step is a **regression** when it is slower than
//! the allowance and its interval is clear of 1 (the paired test over the
//! run's interleaved rounds: every round replicated it); it **passes**
//! when a one-sided test at 5% shows it is no slower than the allowance
//! (the 90% interval's low end above it — faster passes too); a slowdown
//! no cost per operation explains, at a p near the level, is undecided,
//! as bisect doubts such a culprit; anything
//! else is **undecided** and says what would decide it. A step that
//! failed is a failure of its own. The load steps, which set the data up,
//! are held only where `[gate.steps]` names them. Every output of the
//! gate lays out this one model.

use serde::Serialize;

use super::{printed, Report, Verdict};
use crate::measure::stats::Interval;
use crate::plan::Gate;

/// What the gate answers for one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    Pass,
    Regression,
    Undecided,
    /// The step failed on the candidate or the reference.
    Failed,
}

/// One step of the candidate against the reference.
#[derive(Debug, Clone, Serialize)]
pub struct Case {
    /// The step as tables show it, and its clients.
    pub step: String,
    pub clients: u32,
    pub group: &'static str,
    /// The slowdown allowed, as a fraction (0.05: 5%), the A/A spread's
    /// where the run measured identical targets further apart.
    pub allowed: f64,
    /// Candidate ÷ reference throughput.
    pub ratio: Option<f64>,
    /// Its interval at 95% (a regression is read off it) and at 90%
    /// (a pass: its low end above the allowance).
    pub interval: Option<Interval>,
    pub equivalence: Option<Interval>,
    pub answer: Answer,
    /// A regression's cause, what would decide an undecided step, or a
    /// failed step's error.
    pub why: String,
    /// A regression's causes, ranked (`compare::cause`): what `why` leads
    /// with, for a pipeline that reads gate.json.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<super::cause::Cause>,
    /// The row the step is, for an adaptive run that adds rounds to it.
    #[serde(skip)]
    pub at: crate::plan::StepId,
}

/// The gate over a whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    pub reference: String,
    pub candidate: String,
    pub cases: Vec<Case>,
    pub outcome: Answer,
}

impl Answer {
    /// The outcome in a word, as every output of the gate says it.
    pub fn word(self) -> &'static str {
        match self {
            Answer::Pass => "passed",
            Answer::Regression => "regression",
            Answer::Undecided => "undecided",
            Answer::Failed => "a step failed",
        }
    }
}

impl Judgement {
    /// The exit code: 0 passed, 1 a regression, 3 a step failed, 4
    /// undecided (what more repeats or a quieter host would settle).
    pub fn exit_code(&self) -> u8 {
        match self.outcome {
            Answer::Pass => 0,
            Answer::Regression => 1,
            Answer::Failed => 3,
            Answer::Undecided => 4,
        }
    }

    pub fn count(&self, a: Answer) -> usize {
        self.cases.iter().filter(|c| c.answer == a).count()
    }
}

/// Judges target `candidate` of `report` against its base, by `gate`.
pub fn judge(report: &Report, candidate: usize, gate: &Gate) -> Judgement {
    let base = report.base_of[candidate];
    let settings = &report.targets[candidate].settings_differ;
    let mut cases = Vec::new();
    for row in &report.rows {
        let (c, b) = (&row.cells[candidate], &row.cells[base]);
        if c.test.relative.is_none() && c.figures.failed.is_none() && b.figures.failed.is_none() {
            continue;
        }
        let (group, label) = (row.group.name(), row.id.step.label());
        // The data's load sets the others up; held only when the plan
        // names it in `[gate.steps]`.
        let named = |k: &str| gate.per.iter().any(|(n, _)| n == k);
        if row.group == crate::workload::Group::Load && !named(&label) && !named(group) {
            continue;
        }
        let own = gate.allowed(&label, group);
        // Identical runs that lay further apart than the allowance: the
        // gate cannot hold a step to less than the machine's own spread.
        let edge = (1.0 - own).min(c.judged_band().0);
        let sig = c.test.significance.as_ref();
        let (answer, why, cause) = answer(c, b, edge, settings);
        cases.push(Case {
            step: row.title(),
            clients: row.id.clients,
            group,
            allowed: 1.0 - edge,
            ratio: c.test.relative,
            interval: sig.and_then(|s| s.interval),
            equivalence: sig.and_then(|s| s.equivalence.or(s.interval)),
            answer,
            why,
            cause,
            at: row.id.clone(),
        });
    }
    let any = |a: Answer| cases.iter().any(|c| c.answer == a);
    let outcome = [Answer::Regression, Answer::Failed, Answer::Undecided]
        .into_iter()
        .find(|a| any(*a))
        .unwrap_or(Answer::Pass);
    Judgement {
        reference: report.targets[base].name.clone(),
        candidate: report.targets[candidate].name.clone(),
        cases,
        outcome,
    }
}

/// The index in `report` of the candidate named `plan_name` (a target
/// judged against a base, not the base itself); `None` when the run holds
/// no results of it.
pub fn candidate(report: &Report, plan_name: &str) -> Option<usize> {
    (0..report.targets.len())
        .find(|&i| report.targets[i].plan_name == plan_name && report.base_of[i] != i)
}

/// The gate's undecided steps that more rounds could decide, most open
/// first, for an adaptive run judged as a gate (`run --gate` with
/// `repeats = "auto"`): its rounds go where the gate's one-sided question
/// is open, not the two-sided verdict's (whose "the same" asks the upper
/// edge too, and whose rule left an identical candidate's steps, 0.97
/// (0.93–1.01), without a round in 18 of 20 gates). `most` is the
/// adaptive run's maximum of repeats.
pub fn open(report: &Report, candidate: usize, gate: &Gate, most: u32) -> Vec<super::Open> {
    let base = report.base_of[candidate];
    let name = &report.targets[candidate].name;
    let mut out = Vec::new();
    for case in judge(report, candidate, gate).cases {
        if case.answer != Answer::Undecided {
            continue;
        }
        let Some(row) = report.rows.iter().find(|r| r.id == case.at) else {
            continue;
        };
        let Some(place) = openness(&row.cells[candidate], 1.0 - case.allowed, most) else {
            continue;
        };
        out.push(super::Open {
            target: candidate,
            base,
            at: case.at,
            openness: place.0,
            why: format!("{name} ({} c{}): {}", case.step, case.clients, case.why),
            decidable: place.1,
        });
    }
    out.sort_by(|a, b| a.openness.total_cmp(&b.openness));
    out
}

/// How open an undecided step of the gate is — its one-sided bound's
/// distance below the allowance's `edge`, in half-widths of its interval
/// (0 for a disturbed or untested window, which one quiet round may
/// settle) — and whether `most` rounds could decide it. `None` for what
/// rounds cannot change: a window too short or never steady, a missed
/// rate or SLA, no throughput.
fn openness(c: &super::Cell, edge: f64, most: u32) -> Option<(f64, bool)> {
    let rel = c.test.relative?;
    match c.verdict() {
        Some(Verdict::Disturbed | Verdict::Untested) => return Some((0.0, true)),
        Some(Verdict::TooShort | Verdict::Unsteady) | None => return None,
        _ => {}
    }
    if c.judgement.load_missed() {
        return None;
    }
    let sig = c.test.significance.as_ref()?;
    let i = sig.equivalence.or(sig.interval)?;
    let half = ((i.hi / i.lo).ln() / 2.0).max(1e-12);
    if rel <= edge {
        // At or past the edge without a regression shown (a slowdown no
        // cost explains, at a p near the level): rounds tell the host's
        // noise from the build's.
        return Some(((edge / rel).ln() / half, true));
    }
    let decidable = rounds_to_pass(rel, edge, sig).is_some_and(|n| n <= most);
    Some((((edge / i.lo).ln() / half).max(0.0), decidable))
}

/// Rounds at which a step's one-sided bound would clear the allowance's
/// edge (`paired::rounds_for`, at the one-sided level): one round's
/// variance read back from the test's interval, its degrees of freedom
/// growing with the rounds added. `None` for a ratio at or under the
/// edge, a test without rounds (unpaired), or more than the most counted.
fn rounds_to_pass(rel: f64, edge: f64, sig: &super::Significance) -> Option<u32> {
    use crate::measure::paired::{rounds_for, Var};
    use crate::measure::within::t_quantile_two_sided;
    let (i, df, now) = (sig.interval?, sig.df?, sig.rounds?);
    let alpha = 1.0 - i.level;
    let se = (i.hi / i.lo).ln() / 2.0 / t_quantile_two_sided(alpha, df.max(1.0));
    let var = se * se * now as f64;
    let want = rel.ln() - edge.ln() - 0.005;
    rounds_for(
        Var { var, df },
        now,
        want,
        2.0 * alpha,
        super::verdicts::MOST_REPEATS,
    )
}

fn answer(
    c: &super::Cell,
    b: &super::Cell,
    edge: f64,
    settings: &[(String, String, String)],
) -> (Answer, String, Option<super::cause::Cause>) {
    if let Some(f) = c.figures.failed.as_ref().or(b.figures.failed.as_ref()) {
        let whose = if c.figures.failed.is_some() {
            "the candidate"
        } else {
            "the reference"
        };
        return (Answer::Failed, format!("failed on {whose}: {f}"), None);
    }
    let Some(rel) = c.test.relative else {
        return (Answer::Undecided, "no throughput to compare".into(), None);
    };
    let not_judged = |why: &str| (Answer::Undecided, format!("{rel:.2}: {why}"), None);
    match c.verdict() {
        Some(Verdict::Disturbed) => {
            return not_judged(
                "another program used the machine in its window or the reference's; run the gate on a quiet host",
            )
        }
        Some(Verdict::TooShort) => return not_judged("a window too short to judge; give the step longer windows"),
        Some(Verdict::Unsteady) => return not_judged("a window that never became steady; give the step a longer warm-up"),
        Some(Verdict::Untested) => return not_judged("one window a side, not tested; give the plan repeats = 3 or more"),
        _ => {}
    }
    if c.judgement.load_missed() {
        return not_judged("a rate or SLA was missed; the step ran against less load than asked");
    }
    let Some(sig) = c.test.significance.as_ref() else {
        return not_judged("not tested");
    };
    let Some(i) = sig.interval else {
        return not_judged("the test gave no interval; raise the plan's repeats");
    };
    let e = sig.equivalence.unwrap_or(i);
    let pct = (1.0 - edge) * 100.0;
    if printed(rel) <= printed(edge) && i.hi < 1.0 {
        // As bisect weighs a culprit: a slowdown no cost per operation
        // explains, at a p near the level, may be the host's.
        if !super::costs_moved(c, b) && sig.p_value >= super::UNEXPLAINED_P {
            return (
                Answer::Undecided,
                format!(
                    "{rel:.2} ({:.2}–{:.2}), slower than the {pct:.0}% allowed at p {:.3}, but no cost per operation \
                     moved: the host, not the build, may have made it; run the gate again on a quiet host, or with more repeats",
                    i.lo, i.hi, sig.p_value
                ),
                None,
            );
        }
        let (said, cause) = super::explain::explain_ranked(rel, c, b, settings, true);
        return (
            Answer::Regression,
            format!(
                "{rel:.2} ({:.2}–{:.2}), slower than the {pct:.0}% allowed: {said}",
                i.lo, i.hi
            ),
            cause,
        );
    }
    if printed(e.lo) > printed(edge) {
        return (
            Answer::Pass,
            format!(
                "{rel:.2} ({:.2}–{:.2} at {:.0}%): no slower than {pct:.0}%",
                e.lo,
                e.hi,
                e.level * 100.0
            ),
            None,
        );
    }
    let decide = match rounds_to_pass(rel, edge, sig) {
        Some(n) => format!("about {n} repeats would show it no slower, if it is not"),
        None => {
            "a quieter host would decide it (`relbench host drift` shows how far this one wanders)"
                .into()
        }
    };
    (
        Answer::Undecided,
        format!(
            "{rel:.2} ({:.2}–{:.2} at {:.0}%): its interval reaches past the {pct:.0}% allowed without showing a slowdown; {decide}",
            e.lo,
            e.hi,
            e.level * 100.0
        ),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(rel: f64, lo: f64, hi: f64) -> super::super::Cell {
        super::super::Cell {
            test: crate::compare::Test {
                relative: Some(rel),
                significance: Some(super::super::Significance::paired(lo, hi, 4.0, 3)),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// An adaptive gate's rounds go to a step whose one-sided bound a few
    /// more rounds would lift past the allowance (an identical candidate's
    /// 0.98 (0.93–1.03) at 3 rounds), not to one at the edge no maximum
    /// would settle; a disturbed window is the most open, and a window too
    /// short to judge is no question for rounds.
    #[test]
    fn a_gates_rounds_go_where_its_one_sided_bound_can_clear_the_edge() {
        let (near, decidable) = openness(&cell(0.98, 0.93, 1.03), 0.95, 8).unwrap();
        assert!(decidable && near > 0.0, "{near}");
        let (nearer, _) = openness(&cell(0.99, 0.945, 1.04), 0.95, 8).unwrap();
        assert!(nearer < near, "{nearer} {near}");
        let (_, decidable) = openness(&cell(0.955, 0.90, 1.01), 0.95, 8).unwrap();
        assert!(!decidable);
        let disturbed = super::super::Cell {
            judgement: crate::compare::Judgement {
                disturbed: Some(Default::default()),
                ..Default::default()
            },
            ..cell(0.98, 0.93, 1.03)
        };
        assert_eq!(openness(&disturbed, 0.95, 8), Some((0.0, true)));
        let short = super::super::Cell {
            judgement: crate::compare::Judgement {
                short_window: true,
                ..Default::default()
            },
            ..cell(0.98, 0.93, 1.03)
        };
        assert_eq!(openness(&short, 0.95, 8), None);
    }

    /// Regression: an undecided step's advice was the two-sided count
    /// ("about 96 repeats" for 0.97 (0.90–1.04)), which asks the upper
    /// edge too; the gate asks only that the lower bound clear 0.95.
    #[test]
    fn the_rounds_to_pass_ask_only_the_lower_bound_to_clear_the_edge() {
        let s = super::super::Significance::paired(0.93, 1.03, 4.0, 3);
        let n = rounds_to_pass(0.98, 0.95, &s).unwrap();
        assert!((4..=30).contains(&n), "{n}");
        // Nearer the edge, more rounds; at or under it, none would do.
        assert!(rounds_to_pass(0.96, 0.95, &s).is_none_or(|m| m > n));
        assert_eq!(rounds_to_pass(0.95, 0.95, &s), None);
        assert_eq!(rounds_to_pass(0.94, 0.95, &s), None);
    }
}
