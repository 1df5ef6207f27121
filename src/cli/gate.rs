//! `relbench gate DIR` and `run --gate`: a finished run judged as a merge
//! request's gate (`compare::gate`), its three files written beside the
//! report, and the judgement's exit code.

use std::path::Path;

use anyhow::Context;

use super::{Exit, RunArgs};
use crate::compare::gate::{self, Answer};
use crate::render;
use crate::util::{unix_now, utc_stamp};

/// The target a gate judges: the one named, or the only target that is
/// neither the base nor an A/A copy. `names` are (name, is a candidate).
fn pick<'a>(
    names: impl Iterator<Item = (&'a str, bool)>,
    named: Option<&str>,
) -> Result<String, Exit> {
    let candidates: Vec<&str> = names.filter(|(_, c)| *c).map(|(n, _)| n).collect();
    match named {
        Some(n) if candidates.contains(&n) => Ok(n.to_string()),
        Some(n) => Err(Exit::BadInput(format!(
            "--candidate {n}: the plan's targets judged against the base are {}; name one of them",
            list(&candidates)
        ))),
        None if candidates.len() == 1 => Ok(candidates[0].to_string()),
        None => Err(Exit::BadInput(format!(
            "the gate judges one candidate against the base, and the plan has {} besides it ({}): \
             name one with --candidate",
            candidates.len(),
            list(&candidates)
        ))),
    }
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// Refuses, before anything runs, a gate the plan cannot give: no
/// candidate, or one the plan does not have; the candidate's name.
pub(super) fn check_plan(plan: &crate::plan::Plan, named: Option<&str>) -> anyhow::Result<String> {
    let names = plan
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i > 0));
    Ok(pick(names, named)?)
}

/// Judges the run in `dir`, writes gate.md, gate.xml and gate.json there,
/// prints gate.md, and exits with the judgement's code.
pub(super) fn gate(dir: &Path, named: Option<&str>) -> anyhow::Result<()> {
    let runs = crate::results::load_runs(dir)?;
    let report = crate::compare::build(&runs, None)?;
    let names = report.targets.iter().enumerate().map(|(i, t)| {
        let candidate = report.base_of[i] != i && t.copy_of.is_none();
        (t.plan_name.as_str(), candidate)
    });
    let name = pick(names, named)?;
    let candidate = gate::candidate(&report, &name).with_context(|| {
        format!("the candidate {name} has no results in this run: see why its steps did not run in the run's report")
    })?;
    let plan = &runs[0].info.plan;
    let j = gate::judge(&report, candidate, &plan.gate);
    let secs: f64 = runs.iter().flat_map(|r| &r.steps).map(|s| s.secs).sum();
    let md = render::gate::markdown(&j);
    for (file, text) in [
        ("gate.md", md.clone()),
        ("gate.xml", render::gate::junit(&j, secs)),
        ("gate.json", render::gate::json(&j)),
    ] {
        // Never through a link another user planted in the directory:
        // relbench runs as root.
        crate::util::write_file(&dir.join(file), text.as_bytes())?;
    }
    crate::outln!("{md}");
    crate::errln!(
        "gate: {} — exit {} ({} of {} steps passed); gate.md, gate.xml and gate.json in {}",
        j.outcome.word(),
        j.exit_code(),
        j.count(Answer::Pass),
        j.cases.len(),
        dir.display()
    );
    match j.exit_code() {
        0 => Ok(()),
        n => Err(Exit::Code(n).into()),
    }
}

/// `run --gate`: the run, then its judgement; a run whose steps failed
/// is judged too (its failed steps are the gate's), one interrupted or
/// refused is not.
pub(super) fn run_and_gate(mut a: RunArgs) -> anyhow::Result<()> {
    if a.one_off.given() || a.one_off.workload.is_some() || !a.one_off.script.is_empty() {
        return Err(Exit::BadInput(
            "--gate judges a candidate against a reference: give a plan with both as targets"
                .into(),
        )
        .into());
    }
    let out = a
        .out
        .get_or_insert_with(|| Path::new("results").join(utc_stamp(unix_now())))
        .clone();
    let candidate = a.candidate.clone();
    if let Err(e) = super::run_plan(a) {
        if !matches!(e.downcast_ref::<Exit>(), Some(Exit::StepsFailed(_))) {
            return Err(e);
        }
    }
    self::gate(&out, candidate.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_candidate_is_the_one_named_or_the_only_one() {
        let two = || [("ref", false), ("cand", true)].into_iter();
        assert_eq!(pick(two(), None).unwrap(), "cand");
        assert_eq!(pick(two(), Some("cand")).unwrap(), "cand");
        let three = || [("ref", false), ("a", true), ("b", true)].into_iter();
        let Err(Exit::BadInput(m)) = pick(three(), None) else {
            panic!("two candidates and none named")
        };
        assert!(m.contains("--candidate") && m.contains("a, b"), "{m}");
        let Err(Exit::BadInput(m)) = pick(two(), Some("ref")) else {
            panic!("the base named")
        };
        assert!(m.contains("cand"), "{m}");
    }
}
