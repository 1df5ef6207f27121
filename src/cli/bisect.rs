//! `relbench bisect` and `bisect-check`: the rounds a bisect asks for
//! (`history::bisect` decides, each round here is a run of the plan's
//! chosen targets, interleaved), the culprit weighed and said, and
//! `git bisect run`'s answer for one build.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::args::BisectArgs;
use super::{compile, install_ctrlc, read_plan, Exit};
use crate::compare::{costs_moved, UNEXPLAINED_P};
use crate::history::bisect::{Bisect, Next, Outcome};
use crate::history::bisect_check;
use crate::history::changes;
use crate::results::StepResult;
use crate::runner::{self, Progress, RunEnd, RunOptions};

/// What the rounds of a bisect or a check run: the plan and where its
/// rounds' results go.
struct Rounds {
    plan: crate::plan::Plan,
    text: String,
    source: String,
    dir: PathBuf,
    out: PathBuf,
    n: usize,
}

impl Rounds {
    /// Runs the plan's `targets` (by index) with `repeats` each and returns
    /// each one's results.
    fn run(&mut self, targets: &[usize], repeats: u32) -> anyhow::Result<Vec<Vec<StepResult>>> {
        self.n += 1;
        let mut plan = self.plan.clone();
        plan.targets = targets
            .iter()
            .map(|&i| self.plan.targets[i].clone())
            .collect();
        plan.repeats = repeats;
        plan.comparisons.clear();
        let out = self.out.join(format!("round-{:02}", self.n));
        let opts = RunOptions {
            secrets: crate::db::Secrets::take(&plan.targets)?,
            schedule: compile(&plan)?,
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
            return Err(Exit::Interrupted.into());
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

/// Refuses a `--step` the plan does not run, before anything runs: a
/// misspelt step used to be found out only after the whole plan ran.
fn step_in_plan(plan: &crate::plan::Plan, step: &str) -> anyhow::Result<()> {
    let schedule = compile(plan)?;
    if schedule.executions.iter().any(|e| e.id.at.is_named(step)) {
        return Ok(());
    }
    let mut names: Vec<String> = schedule
        .executions
        .iter()
        .map(|e| e.id.at.step.label())
        .collect();
    names.sort();
    names.dedup();
    Err(Exit::BadInput(format!(
        "--step {step:?} is not a step of the plan; its steps: {}",
        names.join(", ")
    ))
    .into())
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

/// The plan's targets the builds name: a target's name, or a basedir that
/// replaces the basedir of the plan's first managed target.
fn targets_of(plan: &mut crate::plan::Plan, builds: &[String]) -> anyhow::Result<Vec<usize>> {
    let mut idx = Vec::new();
    for (i, b) in builds.iter().enumerate() {
        if let Some(t) = plan.targets.iter().position(|t| &t.name == b) {
            idx.push(t);
            continue;
        }
        let template = plan
            .targets
            .iter()
            .find(|t| matches!(t.access, crate::db::spec::Access::Managed(_)));
        match (template, Path::new(b).is_dir()) {
            (Some(t), true) => {
                let mut t = t.clone();
                if let crate::db::spec::Access::Managed(m) = &mut t.access {
                    m.basedir = PathBuf::from(b);
                }
                t.name = format!("build-{:02}", i + 1);
                t.copy_of = None;
                plan.targets.push(t);
                idx.push(plan.targets.len() - 1);
            }
            (None, true) => {
                return Err(Exit::BadInput(format!(
                    "--builds: {b:?} is a directory, but the plan has no managed target whose basedir a build \
                     could replace; give the plan one (engine and basedir), or name the plan's targets"
                ))
                .into())
            }
            (_, false) => {
                return Err(Exit::BadInput(format!(
                    "--builds: {b:?} is neither a target of the plan nor a directory (a build's basedir \
                     replacing the plan's managed target's)"
                ))
                .into())
            }
        }
    }
    Ok(idx)
}

pub(super) fn bisect(a: BisectArgs) -> anyhow::Result<()> {
    install_ctrlc();
    let (mut plan, text, dir) = read_plan(&a.plan)?;
    if a.builds.len() < 2 {
        return Err(Exit::BadInput("--builds needs two builds or more, in order".into()).into());
    }
    let targets = targets_of(&mut plan, &a.builds)?;
    step_in_plan(&plan, &a.step)?;
    let (good, bad) = good_and_bad(&a)?;
    // Only the stretch from good to bad is searched.
    let names: Vec<String> = a.builds[good..=bad].to_vec();
    let targets = targets[good..=bad].to_vec();
    let out = a.out.clone().unwrap_or_else(|| {
        PathBuf::from("results").join(format!(
            "bisect-{}",
            crate::util::utc_stamp(crate::util::unix_now())
        ))
    });
    let mut rounds = Rounds {
        plan,
        text,
        source: a.plan.display().to_string(),
        dir,
        out: out.clone(),
        n: 0,
    };
    let mut b = Bisect::new(names.clone(), a.repeats.max(2), a.max_repeats.max(2));
    let (kept, disturbed_left_out) = search(&mut b, &mut rounds, &names, &targets, &a)?;
    for n in &b.notes {
        crate::outln!("{n}");
    }
    let whys = weigh(&mut b, &kept, &names);
    let outcome = b.outcome();
    let mut report = culprits(&b, &whys, &a.step);
    if a.profile && outcome == Outcome::Found {
        for (c, r) in b.culprits.iter().zip(report.iter_mut()) {
            if c.clear {
                r["profile"] = profile_culprit(&mut rounds, &targets, &names, c, &a.step)?;
            }
        }
    }
    crate::outln!(
        "{} build evaluations of {}, {} repeats in all, {} rounds{}; results in {}",
        b.evaluations(),
        names.len(),
        b.repeats(),
        rounds.n,
        if disturbed_left_out > 0 {
            format!(
                " ({disturbed_left_out} more windows left out: other programs shared the machine in them)"
            )
        } else {
            String::new()
        },
        out.display()
    );
    crate::util::write_file(
        &out.join("bisect.json"),
        serde_json::to_string_pretty(&serde_json::json!({
            "builds": names,
            "step": a.step,
            "evaluations": b.evaluations(),
            "repeats": b.repeats(),
            "rounds": rounds.n,
            "disturbed_left_out": disturbed_left_out,
            "outcome": outcome,
            "culprits": report,
            "notes": b.notes,
        }))?
        .as_bytes(),
    )?;
    let say = match outcome {
        Outcome::Found => return Ok(()),
        Outcome::NoChange => "no culprit: the two ends do not differ",
        Outcome::Unclear => {
            "no clear culprit at the cap of repeats: give --max-repeats more, or run on a quieter host"
        }
        Outcome::Unmeasured => {
            "no verdict: this host could not measure the builds (too few quiet windows); run again when it is quiet"
        }
    };
    crate::errln!(
        "relbench bisect: {say}{} (exit {})",
        if b.notes.is_empty() {
            String::new()
        } else {
            format!("; {}", b.notes.join("; "))
        },
        outcome.code()
    );
    Err(Exit::Code(outcome.code()).into())
}

/// The good and the bad build's places in `--builds`, the good first.
fn good_and_bad(a: &BisectArgs) -> anyhow::Result<(usize, usize)> {
    let pos = |n: &Option<String>, default: usize| -> anyhow::Result<usize> {
        match n {
            None => Ok(default),
            Some(n) => a
                .builds
                .iter()
                .position(|b| b == n)
                .ok_or_else(|| Exit::BadInput(format!("{n:?} is not one of --builds")).into()),
        }
    };
    let (good, bad) = (pos(&a.good, 0)?, pos(&a.bad, a.builds.len() - 1)?);
    if good >= bad {
        return Err(Exit::BadInput(
            "the good build must come before the bad one in --builds".into(),
        )
        .into());
    }
    Ok((good, bad))
}

/// The search's rounds, run until it is done: each round's quiet
/// windows of the step go to the search (and are kept, per build, for the
/// explanation); the others are left out, counted and said.
fn search(
    b: &mut Bisect,
    rounds: &mut Rounds,
    names: &[String],
    targets: &[usize],
    a: &BisectArgs,
) -> anyhow::Result<(Vec<Vec<StepResult>>, usize)> {
    let mut kept: Vec<Vec<StepResult>> = vec![Vec::new(); names.len()];
    let mut disturbed_left_out = 0;
    loop {
        match b.advance() {
            Next::Done => break,
            Next::Measure { builds, repeats } => {
                crate::errln!(
                    "relbench: bisect round {}: {} ({} repeats each)",
                    rounds.n + 1,
                    builds
                        .iter()
                        .map(|&i| names[i].as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    repeats
                );
                let ts: Vec<usize> = builds.iter().map(|&i| targets[i]).collect();
                let results = rounds.run(&ts, repeats)?;
                for (&bi, rs) in builds.iter().zip(results) {
                    let mine = of_step(&rs, &a.step);
                    if mine.is_empty() {
                        bail!(
                            "build {} has no result of step {:?} in {} (it failed, or the plan has no such step: \
                             `relbench check {}` lists the steps)",
                            names[bi],
                            a.step,
                            rounds.out.display(),
                            a.plan.display()
                        );
                    }
                    // A window another program shared measures that
                    // program too: left out, counted, and said. (A build
                    // left with none gets more rounds, up to the cap.)
                    let (quiet, busy) = quiet_of(mine);
                    disturbed_left_out += busy.len();
                    if let Some(why) = busy.first() {
                        crate::errln!(
                            "relbench: bisect round {}: {} of {}'s windows left out (not quiet): {why}",
                            rounds.n,
                            busy.len(),
                            names[bi]
                        );
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
        }
    }
    Ok((kept, disturbed_left_out))
}

/// Each culprit's explanation (the costs that moved), and a culprit whose
/// costs per operation are unchanged and whose p lies near the level
/// doubted: undecided, never a culprit.
fn weigh(b: &mut Bisect, kept: &[Vec<StepResult>], names: &[String]) -> Vec<String> {
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

/// Each culprit, or candidate, said with why (the costs that moved), as
/// `bisect.json` keeps them.
fn culprits(b: &Bisect, whys: &[String], step: &str) -> Vec<serde_json::Value> {
    let outcome = b.outcome();
    let mut report = Vec::new();
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
        crate::outln!("{line}");
        report.push(serde_json::json!({"culprit": c, "why": why}));
    }
    report
}

/// The shortest window `bisect --profile` profiles the culprit in.
const PROFILE_WINDOW: std::time::Duration = std::time::Duration::from_secs(2);

/// `bisect --profile`: the culprit and the build before it once more,
/// the step profiled in a repeat of its own after a measured one, and the
/// functions and wait sites that moved, said and returned for
/// `bisect.json`.
fn profile_culprit(
    rounds: &mut Rounds,
    targets: &[usize],
    names: &[String],
    c: &crate::history::bisect::Culprit,
    step: &str,
) -> anyhow::Result<serde_json::Value> {
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
        crate::outln!(
            "profile of {}: none was taken (see {})",
            c.after,
            dir.display()
        );
        return Ok(serde_json::Value::Null);
    };
    let said = p.moved();
    crate::outln!(
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
    Ok(serde_json::json!({
        "dir": dir,
        "named": said,
        "cpu_diff": p.cpu_diff,
        "wait_diff": p.wait_diff,
        "error": p.error,
    }))
}

/// `bisect-check`: its exit code is `git bisect run`'s. With one target
/// the build just made is judged against the good and bad builds' stored
/// results; with two, beside the second (the good build, installed
/// apart), in the same rounds. Either way the answer is given only when a
/// second measurement, made after the first, gives it too.
pub(super) fn bisect_check(
    plan_path: &Path,
    step: &str,
    good: &Path,
    bad: &Path,
    out: Option<PathBuf>,
) -> u8 {
    let values = |dir: &Path| -> anyhow::Result<Vec<f64>> {
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
    };
    let go = || -> anyhow::Result<(u8, String)> {
        // The plan and the step first: nothing runs for a step the plan
        // does not have.
        let (plan, text, dir) = read_plan(plan_path)?;
        step_in_plan(&plan, step)?;
        let (g, b) = (
            values(good).context("the good build's results")?,
            values(bad).context("the bad build's results")?,
        );
        install_ctrlc();
        let out = out.unwrap_or_else(|| {
            PathBuf::from("results").join(format!(
                "bisect-check-{}",
                crate::util::utc_stamp(crate::util::unix_now())
            ))
        });
        let repeats = plan.repeats;
        let beside = plan.targets.len() >= 2;
        let mut r = Rounds {
            plan,
            text,
            source: plan_path.display().to_string(),
            dir,
            out,
            n: 0,
        };
        let measure = |r: &mut Rounds| -> anyhow::Result<(u8, String)> {
            if beside {
                let both = r.run(&[0, 1], repeats)?;
                Ok(check_beside(&both[0], &both[1], step, &g, &b))
            } else {
                let now = r.run(&[0], repeats)?;
                Ok(bisect_check::check(
                    &quiet_throughputs(&now[0], step),
                    &g,
                    &b,
                ))
            }
        };
        let first = measure(&mut r)?;
        if first.0 == 125 {
            return Ok(first);
        }
        Ok(bisect_check::replicated(first, measure(&mut r)?))
    };
    match go() {
        Ok((code, why)) => {
            crate::errln!("relbench bisect-check: {why}");
            code
        }
        Err(e) if matches!(e.downcast_ref::<Exit>(), Some(Exit::Interrupted)) => 130,
        // A wrong plan or step is wrong for every commit: 128 makes `git
        // bisect run` stop (125 would skip every commit, 1-127 call it bad).
        Err(e)
            if matches!(
                e.downcast_ref::<Exit>(),
                Some(Exit::BadInput(_) | Exit::BadPlan(_))
            ) =>
        {
            crate::errln!("relbench bisect-check: {e:#}; exit 128 so `git bisect run` stops");
            128
        }
        Err(e) => {
            crate::errln!("relbench bisect-check: cannot tell ({e:#}); exit 125 so `git bisect run` skips this commit");
            125
        }
    }
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
