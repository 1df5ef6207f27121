//! `repeats = "auto"`, a study's policy over passes of one run session:
//! after the minimum repeats, rounds of one more repeat for the cells
//! whose verdict is still open (`compare::Open`),
//! most open first, until each is decided, at its maximum, or the budget
//! would be spent. Each round is chosen from the step files alone and
//! recorded (`results::adaptive`) before it runs, and run as
//! `run --confirm` runs its rounds (each target afresh, the steps that
//! change the data replayed), so `--resume` finishes the recorded round
//! and the same step files always give the same decisions.

use crate::compare::{self, ComparisonSpec};
use crate::measure::units::human_secs;
use crate::plan::{Adaptive, StepId};
use crate::results::adaptive::{self as record, AdaptiveRecord, EndWhy, Ending, OpenCell, Round};
use crate::results::{LoadedRun, StepResult};
use crate::runner::{self, RunEnd, RunOptions, Session, Tone};

/// Rounds until none is left to take, in the run's own session (what
/// hears the run hears its rounds); `Interrupted` when Ctrl-C stopped one
/// (what it measured is kept, and `--resume` finishes it), otherwise how
/// the rounds' steps ended. `opts` is the run's, compiled once: each round
/// runs its schedule with its secrets (taken from the environment once,
/// at the start: regression — each round took them again, after the
/// first had removed them, and a URL target's round failed).
pub fn go_on(
    session: &mut Session,
    opts: &RunOptions,
    a: Adaptive,
    specs: &[ComparisonSpec],
    question: Question<'_>,
) -> anyhow::Result<RunEnd> {
    let dir = opts.out.as_path();
    loop {
        let runs = crate::results::load_runs(dir)?;
        let mut rec = match runs[0].adaptive.clone() {
            Some(r) => r,
            None => AdaptiveRecord {
                first_secs: wall_secs(runs.iter().flat_map(|r| &r.steps)),
                ..AdaptiveRecord::default()
            },
        };
        if let Some(e) = &rec.ended {
            session.say(
                Tone::Note,
                &format!("relbench: adaptive repeats: {}", e.words),
            );
            return Ok(RunEnd::clean());
        }
        let round = match rec.unfinished() {
            Some(r) => {
                session.say(
                    Tone::Note,
                    &format!(
                        "relbench: adaptive round {} (repeat {}) was interrupted: finishing it with the cells it chose",
                        r.look, r.repeat
                    ),
                );
                r.clone()
            }
            None => match next_round(&runs, specs, a, &rec, question)? {
                Ok(r) => {
                    rec.rounds.push(r.clone());
                    record::write(dir, &rec)?;
                    r
                }
                Err(ending) => {
                    session.say(
                        Tone::Note,
                        &format!("relbench: adaptive repeats: {}", ending.words),
                    );
                    rec.ended = Some(ending);
                    record::write(dir, &rec)?;
                    return Ok(RunEnd::clean());
                }
            },
        };
        session.say(Tone::Note, &announce(&round, a, &rec));
        let began = std::time::Instant::now();
        let end = run_round(session, opts, &runs, &round)?;
        let took = began.elapsed().as_secs_f64();
        let last = rec.rounds.last_mut().expect("the round is recorded");
        if matches!(end, RunEnd::Interrupted) {
            last.partial_secs += took;
            record::write(dir, &rec)?;
            return Ok(end);
        }
        last.secs = Some(last.partial_secs + took);
        last.partial_secs = 0.0;
        record::write(dir, &rec)?;
    }
}

/// What a round is about to do, said before it runs.
fn announce(round: &Round, a: Adaptive, rec: &AdaptiveRecord) -> String {
    let budget = a.budget_secs.map_or(String::new(), |b| {
        format!(
            "; {} of the {} budget left",
            human_secs(b - rec.spent_secs()),
            human_secs(b)
        )
    });
    format!(
        "relbench: adaptive round {} (repeat {}, about {}{budget}): {} open, most open first: {}",
        round.look,
        round.repeat,
        human_secs(round.estimate_secs),
        round.open.len(),
        whys(&round.open)
    )
}

/// The open cells of every comparison, each once, by whether repeats
/// could decide them.
struct Cells {
    /// Open, and repeats up to the maximum could decide them.
    open: Vec<OpenCell>,
    /// Open, and nearer the band's edge (and, past it, nearer 1) than the
    /// maximum could resolve.
    undecidable: Vec<OpenCell>,
}

impl Cells {
    /// Adds report `r`'s open cell `o`, once.
    fn add(&mut self, r: &compare::Report, o: compare::Open) {
        let (t, b) = (&r.targets[o.target].plan_name, &r.targets[o.base].plan_name);
        let cell = OpenCell {
            target: t.clone(),
            base: b.clone(),
            at: o.at,
            openness: o.openness,
            why: o.why,
        };
        let seen = [&self.open, &self.undecidable]
            .iter()
            .any(|l| l.iter().any(|x| x.same_cell(&cell)));
        if seen {
            return;
        }
        if o.decidable {
            self.open.push(cell);
        } else {
            self.undecidable.push(cell);
        }
    }
}

/// What the rounds are for.
#[derive(Debug, Clone, Copy)]
pub enum Question<'a> {
    /// Every cell's verdict: changed, the same, or undecided.
    Verdicts,
    /// `run --gate`: this candidate's steps against the gate's allowance
    /// (one-sided: shown no slower than it, or a regression).
    Gate { candidate: &'a str },
}

fn cells(
    runs: &[LoadedRun],
    specs: &[ComparisonSpec],
    a: Adaptive,
    question: Question<'_>,
) -> anyhow::Result<Cells> {
    let mut out = Cells {
        open: Vec::new(),
        undecidable: Vec::new(),
    };
    match question {
        Question::Verdicts => {
            for c in compare::build_all(runs, None, specs)? {
                for o in c.report.open_cells() {
                    out.add(&c.report, o);
                }
            }
        }
        Question::Gate { candidate } => {
            // The report the gate judges (`relbench gate`): the run's
            // targets against its base.
            let report = compare::build(runs, None)?;
            let Some(at) = compare::gate::candidate(&report, candidate) else {
                anyhow::bail!(
                    "the gate's candidate {candidate} has no results in this run: see why its steps did not \
                     run in the run's report"
                );
            };
            let gate = &runs[0].info.plan.gate;
            for o in compare::gate::open(&report, at, gate, a.max) {
                out.add(&report, o);
            }
        }
    }
    Ok(out)
}

/// The next round from the step files, or why there is none.
fn next_round(
    runs: &[LoadedRun],
    specs: &[ComparisonSpec],
    a: Adaptive,
    rec: &AdaptiveRecord,
    question: Question<'_>,
) -> anyhow::Result<Result<Round, Ending>> {
    let steps: Vec<&StepResult> = runs.iter().flat_map(|r| &r.steps).collect();
    let Cells {
        mut open,
        undecidable,
    } = cells(runs, specs, a, question)?;
    // A round's repeat is the next after any measured, so a base shared by
    // several open cells gains one each round while a target gains one
    // only when its cell is open; no cell has more repeats than the
    // highest measured. Past repeat `max` a round would be a look the
    // test's levels do not provide for (`measure::sequential::level`
    // spends α over `max − min + 1` looks): the rounds stop there.
    let repeat = steps.iter().map(|s| s.id.repeat).max().unwrap_or(0) + 1;
    let at_max = if repeat > a.max {
        std::mem::take(&mut open)
    } else {
        Vec::new()
    };
    open.sort_by(|x, y| x.openness.total_cmp(&y.openness));
    let look = rec.rounds.len() as u32 + 1;
    if open.is_empty() {
        return Ok(Err(if at_max.is_empty() {
            let words = if undecidable.is_empty() {
                format!("every cell decided after {} round(s)", rec.rounds.len())
            } else {
                // What lies out of reach is the question's: the band's
                // two edges for a verdict, the allowance for a gate.
                let reach = match question {
                    Question::Verdicts => format!(
                        "lie nearer the band's edge (and, past it, nearer 1) than {} repeats' interval would reach",
                        a.max
                    ),
                    Question::Gate { .. } => format!(
                        "have a one-sided bound further under the gate's allowance than {} repeats' interval \
                         would lift",
                        a.max
                    ),
                };
                format!(
                    "no cell left that repeats can decide after {} round(s); {} cell(s) {reach}, and stay as \
                     judged: {}",
                    rec.rounds.len(),
                    undecidable.len(),
                    whys(&undecidable)
                )
            };
            Ending {
                why: EndWhy::Decided,
                words,
                still_open: undecidable,
            }
        } else {
            Ending {
                why: EndWhy::MaxRepeats,
                words: format!(
                    "{} cell(s) still open when the rounds reached the maximum of {} repeats: {}",
                    at_max.len(),
                    a.max,
                    whys(&at_max)
                ),
                still_open: at_max.into_iter().chain(undecidable).collect(),
            }
        }));
    }
    let estimate = estimate_secs(&steps, &open);
    if let Some(b) = a.budget_secs {
        let left = b - rec.spent_secs();
        if estimate > left {
            return Ok(Err(Ending {
                why: EndWhy::Budget,
                words: format!(
                    "the budget is spent: the next round would take about {} and {} of {} is left; {} cell(s) still open: {}",
                    human_secs(estimate),
                    human_secs(left.max(0.0)),
                    human_secs(b),
                    open.len(),
                    whys(&open)
                ),
                still_open: open,
            }));
        }
    }
    Ok(Ok(Round {
        repeat,
        look,
        open,
        estimate_secs: estimate,
        secs: None,
        partial_secs: 0.0,
    }))
}

fn whys(cells: &[OpenCell]) -> String {
    cells
        .iter()
        .map(|o| o.why.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

/// From a step's start to its window's end.
fn step_end(s: &StepResult) -> f64 {
    s.started + s.warmup_secs + s.secs
}

/// The wall time the steps span.
fn wall_secs<'a>(steps: impl Iterator<Item = &'a StepResult>) -> f64 {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for s in steps {
        lo = lo.min(s.started);
        hi = hi.max(step_end(s));
    }
    if hi > lo {
        hi - lo
    } else {
        0.0
    }
}

/// A round's time as its first repeat took it: per target, from its
/// first step to the end of the last step the round repeats (the steps
/// before it are replayed or skipped as a confirmation does; a replay
/// costs what the step did).
fn estimate_secs(steps: &[&StepResult], open: &[OpenCell]) -> f64 {
    let mut targets: Vec<&str> = Vec::new();
    for o in open {
        for t in [o.target.as_str(), o.base.as_str()] {
            if !targets.contains(&t) {
                targets.push(t);
            }
        }
    }
    targets
        .iter()
        .map(|t| {
            let first: Vec<&&StepResult> = steps
                .iter()
                .filter(|s| s.id.target == *t && s.id.repeat == 1)
                .collect();
            let last_seq = first
                .iter()
                .filter(|s| {
                    open.iter()
                        .any(|o| (o.target == *t || o.base == *t) && o.at == s.id.at)
                })
                .map(|s| s.id.seq)
                .max()
                .unwrap_or(0);
            wall_secs(first.into_iter().copied().filter(|s| s.id.seq <= last_seq))
        })
        .sum()
}

/// One round, run as a confirmation runs its rounds; the cells already
/// measured at its repeat (before an interruption) are not run again.
fn run_round(
    session: &mut Session,
    opts: &RunOptions,
    runs: &[LoadedRun],
    round: &Round,
) -> anyhow::Result<RunEnd> {
    let done = |t: &str, at: &StepId| {
        runs.iter()
            .flat_map(|r| &r.steps)
            .any(|s| s.id.repeat == round.repeat && s.id.target == t && s.id.at == *at)
    };
    let mut needs: Vec<runner::Need> = Vec::new();
    for o in &round.open {
        for t in [&o.target, &o.base] {
            if done(t, &o.at) || needs.iter().any(|n| n.target == *t && n.at == o.at) {
                continue;
            }
            needs.push(runner::Need {
                target: t.clone(),
                at: o.at.clone(),
                rounds: 1,
            });
        }
    }
    if needs.is_empty() {
        return Ok(RunEnd::clean());
    }
    let round = runner::ConfirmOptions {
        schedule: opts.schedule.clone(),
        secrets: opts.secrets.clone(),
        needs,
        first_repeat: round.repeat,
        adaptive: true,
    };
    Ok(session.confirm(&round)?.0)
}
