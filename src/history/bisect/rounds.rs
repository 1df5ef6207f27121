//! The rounds a bisect asks for, run: each a run of the plan's chosen
//! targets, interleaved, whose quiet windows of the step go to the search
//! ([`super::Bisect`]); each culprit weighed by the costs that moved (one
//! whose costs did not move and whose p lies near the level is doubted),
//! and profiled on request; `bisect-check`'s measurements, replicated.
//! Nothing here prints: what a round says goes to the caller's `say`,
//! and what is decided comes back as values the command line lays out.

use std::path::{Path, PathBuf};

use anyhow::bail;

use super::{Bisect, Culprit, Next, Outcome};
use crate::compare::{costs_moved, UNEXPLAINED_P};
use crate::history::{bisect_check, changes};
use crate::results::StepResult;
use crate::runner::{self, Progress, RunEnd, RunOptions};

/// The plan a bisect or a check measures, and where its rounds' results
/// go (`round-NN` under `out`).
pub struct Rounds {
    pub plan: crate::plan::Plan,
    text: String,
    source: String,
    dir: PathBuf,
    pub out: PathBuf,
    /// Rounds run so far.
    pub n: usize,
}

impl Rounds {
    /// `plan` as read from `source` (its text and directory), its rounds'
    /// results under `out`.
    pub fn new(
        plan: crate::plan::Plan,
        text: String,
        source: String,
        dir: PathBuf,
        out: PathBuf,
    ) -> Rounds {
        Rounds {
            plan,
            text,
            source,
            dir,
            out,
            n: 0,
        }
    }

    /// Runs the plan's `targets` (by index) with `repeats` each and returns
    /// each one's results; [`crate::Interrupted`] when Ctrl-C stopped it.
    pub fn run(&mut self, targets: &[usize], repeats: u32) -> anyhow::Result<Vec<Vec<StepResult>>> {
        self.n += 1;
        let mut plan = self.plan.clone();
        plan.targets = targets
            .iter()
            .map(|&i| self.plan.targets[i].clone())
            .collect();
        plan.repeats = repeats;
        plan.comparisons.clear();
        let out = self.out.join(format!("round-{:02}", self.n));
        let cat = plan.catalogue().map_err(|why| {
            anyhow::anyhow!("the plan names a workload relbench cannot make: {why}")
        })?;
        let opts = RunOptions {
            secrets: crate::db::Secrets::take(&plan.targets)?,
            schedule: plan.schedule(&cat),
            record: crate::results::RunInfo::start(
                self.source.clone(),
                self.text.clone(),
                &self.dir,
                plan.clone(),
            ),
            plan_dir: self.dir.clone(),
            out: out.clone(),
            resume: false,
            new_host: false,
        };
        let mut ui = Progress::new(true);
        if runner::run(&opts, vec![&mut ui])? == RunEnd::Interrupted {
            return Err(crate::Interrupted.into());
        }
        let run = crate::results::load_run(&out)?;
        Ok(plan
            .targets
            .iter()
            .map(|t| {
                run.steps
                    .iter()
                    .filter(|s| s.id.target == t.name)
                    .cloned()
                    .collect()
            })
            .collect())
    }
}

/// The step results of `step` (its label, or its identity with clients).
fn of_step<'a>(results: &'a [StepResult], step: &str) -> Vec<&'a StepResult> {
    results
        .iter()
        .filter(|s| s.failed.is_none() && s.id.at.is_named(step))
        .collect()
}

/// `step`'s windows split into those judged quiet (beside their
/// siblings) and the others, with why each other one is not.
fn quiet_of(mine: Vec<&StepResult>) -> (Vec<&StepResult>, Vec<String>) {
    let judged = crate::results::judge::judge(&mine);
    let mut quiet = Vec::new();
    let mut left = Vec::new();
    for (s, j) in mine.into_iter().zip(judged) {
        match j.why() {
            None => quiet.push(s),
            Some(why) => left.push(why.to_string()),
        }
    }
    (quiet, left)
}

/// The throughputs of `step`'s windows judged quiet.
fn quiet_throughputs(results: &[StepResult], step: &str) -> Vec<f64> {
    quiet_of(of_step(results, step))
        .0
        .into_iter()
        .map(|s| s.throughput)
        .collect()
}

/// What a search's rounds kept: each build's quiet windows of the step
/// (for the explanation), and how many windows were left out as not quiet.
pub struct Searched {
    pub kept: Vec<Vec<StepResult>>,
    pub disturbed_left_out: usize,
}

/// The search's rounds, run until it is done: each round's quiet windows
/// of `step` go to the search and are kept; the others are left out,
/// counted and said (`say`), as each round is.
pub fn search(
    b: &mut Bisect,
    rounds: &mut Rounds,
    names: &[String],
    targets: &[usize],
    step: &str,
    say: &mut dyn FnMut(String),
) -> anyhow::Result<Searched> {
    let mut kept: Vec<Vec<StepResult>> = vec![Vec::new(); names.len()];
    let mut disturbed_left_out = 0;
    while let Next::Measure { builds, repeats } = b.advance() {
        say(format!(
            "bisect round {}: {} ({} repeats each)",
            rounds.n + 1,
            builds
                .iter()
                .map(|&i| names[i].as_str())
                .collect::<Vec<_>>()
                .join(", "),
            repeats
        ));
        let ts: Vec<usize> = builds.iter().map(|&i| targets[i]).collect();
        let results = rounds.run(&ts, repeats)?;
        for (&bi, rs) in builds.iter().zip(results) {
            let mine = of_step(&rs, step);
            if mine.is_empty() {
                bail!(
                    "build {} has no result of step {step:?} in {} (it failed, or the plan has no such step: \
                     `relbench check {}` lists the steps)",
                    names[bi],
                    rounds.out.display(),
                    rounds.source
                );
            }
            // A window another program shared measures that program too:
            // left out, counted, and said. (A build left with none gets
            // more rounds, up to the cap.)
            let (quiet, busy) = quiet_of(mine);
            disturbed_left_out += busy.len();
            if let Some(why) = busy.first() {
                say(format!(
                    "bisect round {}: {} of {}'s windows left out (not quiet): {why}",
                    rounds.n,
                    busy.len(),
                    names[bi]
                ));
            }
            b.add(
                bi,
                &quiet
                    .iter()
                    .map(|s| (s.id.repeat, s.throughput))
                    .collect::<Vec<_>>(),
            );
            kept[bi].extend(quiet.into_iter().cloned());
        }
    }
    Ok(Searched {
        kept,
        disturbed_left_out,
    })
}

/// Each culprit's explanation (the costs that moved); a culprit whose
/// costs per operation are unchanged and whose p lies near the level
/// doubted: undecided, never a culprit.
pub fn weigh(b: &mut Bisect, kept: &[Vec<StepResult>], names: &[String]) -> Vec<String> {
    let mut whys = Vec::new();
    for ci in 0..b.culprits.len() {
        let c = &b.culprits[ci];
        let before = names.iter().position(|n| *n == c.before).expect("a build");
        let mut base = crate::compare::cell_of(kept[before].iter());
        let mut cell = crate::compare::cell_of(kept[c.after_index].iter());
        // Windows of several rounds: no one round to pair them by.
        base.figures.rounds.clear();
        cell.figures.rounds.clear();
        let why = crate::compare::explain_change(&mut cell, &base);
        let moved = costs_moved(&cell, &base);
        let p = c.replicated.map_or(c.p, |r| r.p.max(c.p));
        if c.clear && !moved && p >= UNEXPLAINED_P {
            b.doubt(
                ci,
                format!(
                    "its costs per operation did not move and its p ({}) is near the level: the host, not the build, may have made it",
                    changes::fmt_p(p)
                ),
            );
        }
        whys.push(why);
    }
    whys
}

/// Each culprit, or candidate, in a line with why (the costs that moved),
/// and as `bisect.json` keeps it.
pub fn culprits(b: &Bisect, whys: &[String], step: &str) -> Vec<(String, serde_json::Value)> {
    let outcome = b.outcome();
    let mut out = Vec::new();
    for (c, why) in b.culprits.iter().zip(whys) {
        // Only a clear culprit on a search every step of which was
        // measured is named as one; anything less is a candidate.
        let what = if outcome == Outcome::Found && c.clear {
            "culprit"
        } else {
            "candidate, not a verdict"
        };
        let again = c
            .replicated
            .map(|r| {
                format!(
                    "; measured again: ×{:.3} ({:.3}–{:.3}){}",
                    r.ratio,
                    r.lo,
                    r.hi,
                    if r.held { "" } else { ", not replicated" }
                )
            })
            .unwrap_or_default();
        let line = format!(
            "{what}: {} (after {}): {} ×{:.3}, p {}{again}{}: {why}",
            c.after,
            c.before,
            step,
            c.ratio,
            changes::fmt_p(c.p),
            if c.clear { "" } else { " (not clear)" }
        );
        out.push((line, serde_json::json!({"culprit": c, "why": why})));
    }
    out
}

/// The shortest window `bisect --profile` profiles the culprit in.
const PROFILE_WINDOW: std::time::Duration = std::time::Duration::from_secs(2);

/// `bisect --profile`: the culprit and the build before it once more,
/// the step profiled in a repeat of its own after a measured one; the
/// functions and wait sites that moved, in a line and as `bisect.json`
/// keeps them.
pub fn profile_culprit(
    rounds: &mut Rounds,
    targets: &[usize],
    names: &[String],
    c: &Culprit,
    step: &str,
) -> anyhow::Result<(String, serde_json::Value)> {
    let before = names.iter().position(|n| *n == c.before).expect("a build");
    rounds.plan.profile = crate::plan::Profiling {
        mode: Some(crate::metrics::profile::Mode::Separate),
        settings: crate::metrics::profile::Settings::default(),
        steps: vec![step.to_string()],
    };
    // A 300 ms window at 499 Hz holds ~150 samples a core, too few for a
    // doubled CPU/op spread over many functions to clear their sampling
    // noise; at 2 s (~1,000) the bisect test's culprit names its file-lock
    // functions. These windows are profiled, not judged.
    for stop in [
        &mut rounds.plan.read,
        &mut rounds.plan.write,
        &mut rounds.plan.insert,
    ] {
        if let crate::plan::Stop::Time(d) = stop {
            *d = (*d).max(PROFILE_WINDOW);
        }
    }
    let pair = [targets[before], targets[c.after_index]];
    rounds.run(&pair, 1)?;
    let dir = rounds.out.join(format!("round-{:02}", rounds.n));
    let run = crate::results::load_run(&dir)?;
    let [b, t] = pair.map(|i| rounds.plan.targets[i].name.clone());
    let report = crate::compare::build_subset(&[run], Some(&b), Some(&[b.clone(), t.clone()]))?;
    let ti = report
        .targets
        .iter()
        .position(|x| x.name == t)
        .expect("the culprit's target");
    let Some(p) = report
        .rows
        .iter()
        .find(|r| r.id.is_named(step))
        .and_then(|r| r.cells[ti].internals.profile.as_ref())
    else {
        let line = format!(
            "profile of {}: none was taken (see {})",
            c.after,
            dir.display()
        );
        return Ok((line, serde_json::Value::Null));
    };
    let said = p.moved();
    let line = format!(
        "profile of {} against {}: {} (relbench profile {} --target {t} --step {step} --against {b})",
        c.after,
        c.before,
        if said.is_empty() {
            "no function or wait site moved past sampling noise".to_string()
        } else {
            said.join("; ")
        },
        dir.display()
    );
    let json = serde_json::json!({
        "dir": dir,
        "named": said,
        "cpu_diff": p.cpu_diff,
        "wait_diff": p.wait_diff,
        "error": p.error,
    });
    Ok((line, json))
}

/// The quiet throughputs of `step` of the first target of a stored run
/// (a good or a bad build's results, for `bisect-check`).
pub fn stored_throughputs(dir: &Path, step: &str) -> anyhow::Result<Vec<f64>> {
    let run = crate::results::load_run(dir)?;
    let first = run
        .info
        .plan
        .targets
        .first()
        .map(|t| t.name.clone())
        .unwrap_or_default();
    let mine: Vec<StepResult> = run
        .steps
        .into_iter()
        .filter(|s| s.id.target == first)
        .collect();
    Ok(quiet_throughputs(&mine, step))
}

/// `bisect-check`'s answer for the build the plan's first target is:
/// with one target, judged against the good and bad builds' stored
/// throughputs (`good`, `bad`); with two, beside the second (the good
/// build, installed apart), in the same rounds. Given only when a second
/// measurement, made after the first, gives it too (`git bisect run`'s
/// codes: 0 good, 1 bad, 125 cannot tell).
pub fn check(
    rounds: &mut Rounds,
    step: &str,
    good: &[f64],
    bad: &[f64],
) -> anyhow::Result<(u8, String)> {
    let repeats = rounds.plan.repeats;
    let beside = rounds.plan.targets.len() >= 2;
    let measure = |r: &mut Rounds| -> anyhow::Result<(u8, String)> {
        if beside {
            let both = r.run(&[0, 1], repeats)?;
            Ok(check_beside(&both[0], &both[1], step, good, bad))
        } else {
            let now = r.run(&[0], repeats)?;
            Ok(bisect_check::check(
                &quiet_throughputs(&now[0], step),
                good,
                bad,
            ))
        }
    };
    let first = measure(rounds)?;
    if first.0 == 125 {
        return Ok(first);
    }
    Ok(bisect_check::replicated(first, measure(rounds)?))
}

/// The build just made (`now`) against the good build run beside it in
/// the same rounds (`reference`), placed between the stored good and bad
/// results (`good`, `bad`). A "bad" whose costs per operation did not
/// move and whose p is near the level is not said: as for a bisect's
/// culprit, the host may have made it.
fn check_beside(
    now: &[StepResult],
    reference: &[StepResult],
    step: &str,
    good: &[f64],
    bad: &[f64],
) -> (u8, String) {
    let (now, _) = quiet_of(of_step(now, step));
    let (reference, _) = quiet_of(of_step(reference, step));
    let mut cell = crate::compare::cell_of(now.iter().copied());
    let base = crate::compare::cell_of(reference.iter().copied());
    let why = crate::compare::explain_change(&mut cell, &base);
    let (Some(ratio), Some(sig)) = (cell.test.relative, cell.test.significance.as_ref()) else {
        return (
            125,
            format!(
                "cannot tell: {} and {} quiet windows of the build and of the good build beside it: too few to test; raise the plan's repeats",
                now.len(),
                reference.len()
            ),
        );
    };
    let Some(i) = sig.interval.as_ref() else {
        return (
            125,
            "cannot tell: the test gave no interval (too few quiet windows a side): raise the plan's repeats".into(),
        );
    };
    let (code, said) = bisect_check::check_beside(ratio, (i.lo, i.hi), good, bad);
    if code == 1 && !costs_moved(&cell, &base) && sig.p_value >= UNEXPLAINED_P {
        return (
            125,
            format!(
                "cannot tell: {said}, p {}, but its costs per operation did not move: the host, not the build, may have made it",
                changes::fmt_p(sig.p_value)
            ),
        );
    }
    (code, format!("{said}: {why}"))
}
