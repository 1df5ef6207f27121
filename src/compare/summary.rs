//! The summary, per target against its base: how many steps got slower
//! or faster, the worst and the best, each regression and win with the
//! costs behind it, failed steps and missed SLAs; and the same in
//! sentences, which every format prints as they are.

use serde::Serialize;

use super::explain::explain_ranked;
use super::{Change, NotJudged, Row, TargetSummary, Verdict, SHORT_WINDOW_SECS};
use crate::results::StepResult;

/// One sentence on a target, and the lines under it.
#[derive(Debug, Clone, Serialize)]
pub struct SummaryLine {
    pub head: String,
    pub details: Vec<String>,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn summarise(
    name: &str,
    copy_of: Option<&str>,
    base_name: &str,
    ti: usize,
    base: usize,
    rows: &[Row],
    steps: &[(usize, StepResult)],
    settings_differ: &[(String, String, String)],
) -> TargetSummary {
    let unjudged = rows
        .iter()
        .filter(|r| {
            let c = &r.cells[ti];
            c.test.relative.is_some() && c.judgement.load_missed()
        })
        .count();
    let mut disturbed = Vec::new();
    let mut too_short = Vec::new();
    let mut unsteady = Vec::new();
    let mut undecided = Vec::new();
    let mut changes: Vec<(Verdict, Change)> = Vec::new();
    for r in rows {
        match classify(r, ti, base, settings_differ) {
            Some(Judged::TooShort(n)) => too_short.push(n),
            Some(Judged::Unsteady(n)) => unsteady.push(n),
            Some(Judged::Disturbed(n)) => disturbed.push(n),
            Some(Judged::Undecided(n)) => undecided.push(n),
            Some(Judged::Change(v, c)) => changes.push((v, c)),
            None => {}
        }
    }
    let count = |v: Verdict| changes.iter().filter(|c| c.0 == v).count();
    let (slower, faster, same, untested) = (
        count(Verdict::Worse),
        count(Verdict::Better),
        count(Verdict::Same),
        count(Verdict::Untested),
    );
    changes.sort_by(|a, b| a.1.relative.total_cmp(&b.1.relative));
    // The worst and the best among the decided steps only: an undecided
    // or untested ratio is no finding.
    let judged: Vec<&Change> = changes
        .iter()
        .filter(|c| c.0.is_decided())
        .map(|c| &c.1)
        .collect();
    let of = |v: Verdict| -> Vec<Change> {
        changes
            .iter()
            .filter(|c| c.0 == v)
            .map(|c| c.1.clone())
            .collect()
    };
    let failed = failed_steps(steps, ti);
    // Warm-ups the plan's `warmup` did not cover: MSER-5's cut, said.
    let warming = rows
        .iter()
        .filter_map(|r| {
            let c = &r.cells[ti];
            let w = c.judgement.warming_secs?;
            Some(format!(
                "{} ({}): the first {w:.0} s of the {:.0} s window were still warming up (MSER-5)",
                r.title(),
                clients(r.id.clients),
                c.figures.window_secs.unwrap_or(0.0)
            ))
        })
        .collect();
    let mut wins = of(Verdict::Better);
    wins.reverse();
    let sla_failed = sla_failed(rows, ti);
    TargetSummary {
        target: name.to_string(),
        copy_of: copy_of.map(str::to_string),
        disturbed,
        too_short,
        unsteady,
        warming,
        base: base_name.to_string(),
        compared: changes.len() + undecided.len(),
        slower,
        faster,
        same,
        undecided,
        unjudged,
        untested,
        // Worst and best need two judged steps to tell apart.
        worst: judged
            .first()
            .filter(|_| judged.len() > 1)
            .map(|c| (*c).clone()),
        best: judged
            .last()
            .filter(|_| judged.len() > 1)
            .map(|c| (*c).clone()),
        regressions: of(Verdict::Worse),
        wins,
        untested_changes: {
            // Furthest from 1 first.
            let mut u = of(Verdict::Untested);
            u.sort_by(|a, b| b.relative.ln().abs().total_cmp(&a.relative.ln().abs()));
            u
        },
        failed,
        sla_failed,
    }
}

/// How a row's cell of a target was judged: its window too short, a
/// window disturbed, undecided (and what would decide it), or a verdict
/// with the costs behind it.
enum Judged {
    TooShort(NotJudged),
    Unsteady(NotJudged),
    Disturbed(NotJudged),
    Undecided(NotJudged),
    Change(Verdict, Change),
}

/// A target's cell on a row against its base's; `None` when it has no
/// ratio, or an SLA or rate it missed is its result.
fn classify(
    r: &Row,
    ti: usize,
    base: usize,
    settings_differ: &[(String, String, String)],
) -> Option<Judged> {
    let c = &r.cells[ti];
    if c.judgement.load_missed() {
        return None;
    }
    let rel = c.test.relative?;
    let v = c.verdict()?;
    let not_judged = |why: String| NotJudged {
        step: r.title(),
        clients: r.id.clients,
        relative: rel,
        why,
    };
    // Which window was too short (`compare` set the flag), in words.
    let short = [(c, "this target's"), (&r.cells[base], "the base's")]
        .into_iter()
        .filter(|_| c.judgement.short_window)
        .find_map(|(x, whose)| {
            let w = x.figures.window_secs?;
            (w < SHORT_WINDOW_SECS).then(|| {
                format!(
                    "{whose} window was {:.0} ms, under the {:.0} ms a change can be judged in",
                    w * 1e3,
                    SHORT_WINDOW_SECS * 1e3
                )
            })
        });
    if let Some(why) = short {
        return Some(Judged::TooShort(not_judged(why)));
    }
    if v == Verdict::Unsteady {
        let why = whose(
            &c.judgement.unsteady,
            &r.cells[base].judgement.unsteady,
            "not steady",
        );
        return Some(Judged::Unsteady(not_judged(why)));
    }
    if v == Verdict::Disturbed {
        // Its CPU per operation includes the other program's
        // work, or its throughput lost the CPU it took: neither
        // says anything about the target.
        let why = whose(
            &c.judgement.disturbed,
            &r.cells[base].judgement.disturbed,
            "disturbed",
        );
        return Some(Judged::Disturbed(not_judged(why)));
    }
    if v == Verdict::Undecided {
        return Some(Judged::Undecided(not_judged(undecided_why(c))));
    }
    // A change, or a ratio past the band no test could judge: what it
    // is explained by is ranked; a cell shown the same has no cause.
    let changed = v.is_change() || (v == Verdict::Untested && super::verdict(rel).is_change());
    let (explanation, cause) = explain_ranked(rel, c, &r.cells[base], settings_differ, changed);
    Some(Judged::Change(
        v,
        Change {
            step: r.title(),
            clients: r.id.clients,
            relative: rel,
            explanation,
            cause,
        },
    ))
}

/// Why a tested cell is undecided, with its interval, and what would
/// decide it.
fn undecided_why(c: &super::Cell) -> String {
    let Some(sig) = &c.test.significance else {
        return "not tested".into();
    };
    let (lo, hi) = c.band();
    let rel = c.test.relative.unwrap_or(1.0);
    let band = if (lo - super::SLOWER).abs() < 1e-9 && (hi - super::FASTER).abs() < 1e-9 {
        "5%".to_string()
    } else {
        format!("the A/A spread (±{:.1}%)", (hi - 1.0) * 100.0)
    };
    let what = match sig.interval {
        Some(i) if rel <= lo || rel >= hi => format!(
            "({:.2}–{:.2}) past {band}, but its interval holds 1",
            i.lo, i.hi
        ),
        Some(i) => {
            let e = sig.equivalence.unwrap_or(i);
            format!(
                "({:.2}–{:.2} at {:.0}%) within {band}, but its interval reaches past it",
                e.lo,
                e.hi,
                e.level * 100.0
            )
        }
        None => format!("p = {:.2}", sig.p_value),
    };
    // Within a hair of an edge no interval can clear it; further off,
    // it is the windows' noise that more than 100 repeats would not beat.
    let at_edge = [lo, hi].iter().any(|e| (rel / e).ln().abs() < 0.01);
    let decide = match sig.repeats_needed {
        Some(n) => format!("about {n} repeats would decide it"),
        None if at_edge => format!(
            "no number of repeats up to {} would: the change is about the size of the band; read it as a change of about {:.0}%, or measure it with longer windows",
            super::verdicts::MOST_REPEATS,
            (rel - 1.0).abs() * 100.0
        ),
        None => format!(
            "more than {} repeats at this noise: a quieter host would decide it sooner (`relbench host drift` \
             shows how far this one's speed wanders between windows; where it wanders slowly, longer windows do \
             not narrow it)",
            super::verdicts::MOST_REPEATS
        ),
    };
    format!("{what}; {decide}")
}

/// Which window a cell is not judged by, and why: this target's, the
/// base's, or both.
fn whose(own: &Option<String>, base: &Option<String>, neither: &str) -> String {
    match (own, base) {
        (Some(w), Some(b)) => format!("this target's window: {w}; the base's: {b}"),
        (Some(w), None) => format!("this target's window: {w}"),
        (None, Some(b)) => format!("the base's window: {b}"),
        (None, None) => neither.into(),
    }
}

/// The target's failed steps, in words.
fn failed_steps(steps: &[(usize, StepResult)], ti: usize) -> Vec<String> {
    steps
        .iter()
        .filter(|(t, s)| *t == ti && s.failed.is_some())
        .map(|(_, s)| {
            format!(
                "{} c{} (repeat {})",
                s.id.at.step.label(),
                s.id.at.clients,
                s.id.repeat
            )
        })
        .collect()
}

/// The target's rows that missed their insert rate.
fn sla_failed(rows: &[Row], ti: usize) -> Vec<String> {
    rows.iter()
        .filter_map(|r| {
            let m = r.cells[ti].judgement.sla_missed?;
            Some(format!(
                "{} ({:.0}% of the target insert rate)",
                r.title(),
                m * 100.0
            ))
        })
        .collect()
}

/// One sentence per target against its base, then its regressions and
/// wins with the costs behind them, and its failed steps.
pub fn lines(summary: &[TargetSummary]) -> Vec<SummaryLine> {
    const SHOWN: usize = 8;
    summary
        .iter()
        .map(|s| {
            if s.compared == 0
                && s.disturbed.is_empty()
                && s.too_short.is_empty()
                && s.unsteady.is_empty()
            {
                let head = format!(
                    "{}: no step to compare with {} yet (each needs figures from both targets).",
                    s.target, s.base
                );
                let failed = (!s.failed.is_empty())
                    .then(|| format!("failed steps: {}", s.failed.join(", ")));
                return SummaryLine {
                    head,
                    details: failed.into_iter().collect(),
                };
            }
            let copy = s
                .copy_of
                .as_ref()
                .map(|o| format!(" (an A/A copy of {o}: every difference is noise)"))
                .unwrap_or_default();
            let mut head = if s.compared == 0 {
                format!("{}{copy} against {}: no step could be judged", s.target, s.base)
            } else {
                format!(
                    "{}{copy} against {}: {} of {} steps slower, {} faster, {} the same (their intervals inside ±5%)",
                    s.target, s.base, s.slower, s.compared, s.faster, s.same
                )
            };
            if !s.undecided.is_empty() {
                head += &format!(
                    ", {} undecided (neither past 5% with an interval clear of 1 nor inside ±5%)",
                    s.undecided.len()
                );
            }
            if s.untested > 0 {
                head += &format!(
                    ", {} not tested (one window a side and no A/A copies to say how far windows lie apart, or windows under 5 s: `relbench run --confirm` adds repeats)",
                    s.untested
                );
            }
            if s.unjudged > 0 {
                head += &format!(", {} not judged (a missed SLA or rate)", s.unjudged);
            }
            if !s.too_short.is_empty() {
                head += &format!(
                    ", {} not judged (a window too short to measure)",
                    s.too_short.len()
                );
            }
            if !s.unsteady.is_empty() {
                head += &format!(
                    ", {} not judged (a window that never became steady)",
                    s.unsteady.len()
                );
            }
            if !s.disturbed.is_empty() {
                head += &format!(
                    ", {} not judged (disturbed: other programs or steal took 5% of the machine or more)",
                    s.disturbed.len()
                );
            }
            head.push('.');
            if let (Some(w), Some(b)) = (&s.worst, &s.best) {
                head += &format!(
                    " Worst: {} ({}) {:.2}; best: {} ({}) {:.2}.",
                    w.step,
                    clients(w.clients),
                    w.relative,
                    b.step,
                    clients(b.clients),
                    b.relative
                );
            }
            let line = |kind: &str, c: &Change| {
                format!(
                    "{kind} {} ({}) {:.2}: {}",
                    c.step,
                    clients(c.clients),
                    c.relative,
                    c.explanation
                )
            };
            let mut details = Vec::new();
            for (kind, list) in [
                ("slower:", &s.regressions),
                ("faster:", &s.wins),
                // Listed apart, with what the costs say, as a lead for
                // more repeats: not counted, not coloured.
                ("not tested:", &s.untested_changes),
            ] {
                details.extend(list.iter().take(SHOWN).map(|c| line(kind, c)));
                if list.len() > SHOWN {
                    details.push(format!(
                        "and {} more {} steps (see the tables)",
                        list.len() - SHOWN,
                        kind.trim_end_matches(':')
                    ));
                }
            }
            details.extend(listed(
                ("undecided:", " "),
                &s.undecided,
                SHOWN,
                "undecided steps (see the tables)",
            ));
            details.extend(unjudged_details(s, SHOWN));
            SummaryLine { head, details }
        })
        .collect()
}

/// The first `shown` of `list`, each `KIND step (clients) ratio` and its
/// why after `sep`, and how many more there are (`more`: what they are).
fn listed((kind, sep): (&str, &str), list: &[NotJudged], shown: usize, more: &str) -> Vec<String> {
    let mut out: Vec<String> = list
        .iter()
        .take(shown)
        .map(|d| {
            format!(
                "{kind} {} ({}) {:.2}{sep}{}",
                d.step,
                clients(d.clients),
                d.relative,
                d.why
            )
        })
        .collect();
    if list.len() > shown {
        out.push(format!("and {} more {more}", list.len() - shown));
    }
    out
}

/// The steps of a target that were not judged, and why; its warm-ups
/// longer than the plan's, failed steps and missed SLAs.
fn unjudged_details(s: &TargetSummary, shown: usize) -> Vec<String> {
    let mut details = listed(
        ("disturbed:", ", not judged: "),
        &s.disturbed,
        shown,
        "disturbed steps (see the interference table)",
    );
    details.extend(s.too_short.iter().map(|d| {
        format!(
            "too short to judge: {} ({}) {:.2}: {}",
            d.step,
            clients(d.clients),
            d.relative,
            d.why
        )
    }));
    details.extend(s.unsteady.iter().map(|d| {
        format!(
            "not steady: {} ({}) {:.2}, not judged: {}; lengthen the plan's `warmup` (or the step) until the window settles",
            d.step,
            clients(d.clients),
            d.relative,
            d.why
        )
    }));
    if !s.warming.is_empty() {
        details.push(format!(
            "warm-up longer than the plan's `warmup`: {}",
            s.warming.join("; ")
        ));
    }
    if !s.failed.is_empty() {
        details.push(format!("failed steps: {}", s.failed.join(", ")));
    }
    if !s.sla_failed.is_empty() {
        details.push(format!(
            "missed the Insert Benchmark's SLA (inserts below 95% of the target rate; those steps are not judged): {}",
            s.sla_failed.join(", ")
        ));
    }
    details
}

fn clients(n: u32) -> String {
    if n == 1 {
        "1 client".into()
    } else {
        format!("{n} clients")
    }
}
