//! `relbench bisect` and `bisect-check` on the command line: the builds
//! and the step resolved and checked before anything runs, the rounds
//! run by `history::bisect::rounds` (which `history::bisect` decides), the
//! culprit said and `bisect.json` written, and `git bisect run`'s exit
//! code for one build.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::args::BisectArgs;
use super::{compile, install_ctrlc, read_plan, Exit};
use crate::history::bisect::rounds::{self, Rounds};
use crate::history::bisect::{Bisect, Outcome};

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
    let mut rounds = Rounds::new(plan, text, a.plan.display().to_string(), dir, out.clone());
    let mut b = Bisect::new(names.clone(), a.repeats.max(2), a.max_repeats.max(2));
    let searched = rounds::search(&mut b, &mut rounds, &names, &targets, &a.step, &mut |l| {
        crate::errln!("relbench: {l}")
    })?;
    let disturbed_left_out = searched.disturbed_left_out;
    for n in &b.notes {
        crate::outln!("{n}");
    }
    let whys = rounds::weigh(&mut b, &searched.kept, &names);
    let outcome = b.outcome();
    let mut report = Vec::new();
    for (line, json) in rounds::culprits(&b, &whys, &a.step) {
        crate::outln!("{line}");
        report.push(json);
    }
    if a.profile && outcome == Outcome::Found {
        for (c, r) in b.culprits.iter().zip(report.iter_mut()) {
            if c.clear {
                let (line, json) =
                    rounds::profile_culprit(&mut rounds, &targets, &names, c, &a.step)?;
                crate::outln!("{line}");
                r["profile"] = json;
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
    let go = || -> anyhow::Result<(u8, String)> {
        // The plan and the step first: nothing runs for a step the plan
        // does not have.
        let (plan, text, dir) = read_plan(plan_path)?;
        step_in_plan(&plan, step)?;
        let (g, b) = (
            rounds::stored_throughputs(good, step).context("the good build's results")?,
            rounds::stored_throughputs(bad, step).context("the bad build's results")?,
        );
        install_ctrlc();
        let out = out.unwrap_or_else(|| {
            PathBuf::from("results").join(format!(
                "bisect-check-{}",
                crate::util::utc_stamp(crate::util::unix_now())
            ))
        });
        let mut r = Rounds::new(plan, text, plan_path.display().to_string(), dir, out);
        rounds::check(&mut r, step, &g, &b)
    };
    match go() {
        Ok((code, why)) => {
            crate::errln!("relbench bisect-check: {why}");
            code
        }
        Err(e)
            if matches!(e.downcast_ref::<Exit>(), Some(Exit::Interrupted))
                || e.downcast_ref::<crate::Interrupted>().is_some() =>
        {
            130
        }
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
