//! `relbench run` and `run --confirm`: the runner started on a compiled
//! plan, then the report written and the exit code chosen.

use std::io::IsTerminal;
use std::path::Path;

use anyhow::{bail, Context};

use super::args::plan_comparisons;
use super::{install_ctrlc, Exit};
use crate::compare::Grouping;
use crate::render::{self, Format};
use crate::runner::{self, Progress, RunEnd, RunOptions};

/// Repeats a rank test needs on each side to call a change significant
/// (at 4 against 4 the smallest two-sided p is 0.029).
fn repeats_for_significance() -> usize {
    (2..20)
        .find(|&n| crate::measure::stats::smallest_p(n, n) < crate::measure::stats::ALPHA)
        .unwrap_or(4)
}

pub(super) fn confirm(dir: &Path, quiet: bool) -> anyhow::Result<()> {
    install_ctrlc();
    let run = crate::results::load_run(dir)?;
    if run.info.status != crate::results::RunStatus::Complete {
        bail!(
            "the run in {} is not complete; finish it first with `relbench run --resume --out {}`",
            dir.display(),
            dir.display()
        );
    }
    let report = crate::compare::build(std::slice::from_ref(&run), None)?;
    let unsettled = report.unsettled();
    if unsettled.is_empty() {
        crate::outln!(
            "nothing to confirm in {}: no step was disturbed, and every change past 5% is significant",
            dir.display()
        );
        return Ok(());
    }
    let want = repeats_for_significance();
    let plan_targets = &run.info.plan.targets;
    let needs: Vec<runner::Need> = unsettled
        .iter()
        .filter_map(|u| {
            Some(runner::Need {
                target: plan_targets
                    .iter()
                    .position(|t| t.name == report.targets[u.target].plan_name)?,
                seq: u.seq,
                clients: u.clients,
                rounds: want.saturating_sub(u.repeats).max(1) as u32,
            })
        })
        .collect();
    crate::errln!(
        "relbench: confirming {} step result{} of {}: {}",
        needs.len(),
        if needs.len() == 1 { "" } else { "s" },
        dir.display(),
        unsettled
            .iter()
            .map(|u| u.why.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let opts = runner::ConfirmOptions {
        out: dir.to_path_buf(),
        schedule: super::compile(&run.info.plan)?,
        secrets: crate::db::Secrets::take(&run.info.plan.targets)?,
        needs,
        first_repeat: run.steps.iter().map(|s| s.repeat).max().unwrap_or(0) + 1,
    };
    let mut ui = Progress::new(quiet);
    let (end, added) = runner::confirm(&opts, &mut ui)?;
    crate::errln!(
        "relbench: added {added} step result(s) to {}",
        dir.display()
    );
    if let Ok(run) = crate::results::load_run(dir) {
        if let Ok(report) = crate::compare::build(std::slice::from_ref(&run), None) {
            if let Some(word) = still_unsettled(&report, dir) {
                crate::errln!("{word}");
            }
        }
    }
    report_and_exit(dir, end)
}

/// The closing word of a confirmation that did not settle everything:
/// how many step results are still unsettled and why, and, for the
/// disturbed ones, what the machine was doing — more repeats on a host
/// that stays busy settle nothing.
fn still_unsettled(report: &crate::compare::Report, dir: &Path) -> Option<String> {
    let left = report.unsettled();
    if left.is_empty() {
        return None;
    }
    let disturbed: Vec<&str> = report
        .rows
        .iter()
        .flat_map(|r| r.cells.iter())
        .filter_map(|c| c.disturbed.as_deref())
        .collect();
    let mut word = format!(
        "relbench: after confirmation {} step result{} still unsettled: {}",
        left.len(),
        if left.len() == 1 { " is" } else { "s are" },
        left.iter()
            .map(|u| u.why.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(why) = disturbed.first() {
        word.push_str(&format!(
            ".\n  {} of them had no quiet window; the machine was busy ({why}).\n  \
             More repeats do not settle a machine that stays busy: stop the other programs, \
             then run `relbench run --confirm {}` again",
            disturbed.len(),
            dir.display()
        ));
    } else {
        word.push_str(&format!(
            ".\n  The windows were quiet: at {} repeats a side these changes are within the noise; \
             lengthen the steps or raise the plan's `repeats`",
            repeats_for_significance()
        ));
    }
    Some(word)
}

pub(super) fn run(opts: RunOptions, quiet: bool) -> anyhow::Result<()> {
    install_ctrlc();
    let mut ui = Progress::new(quiet);
    let end = runner::run(&opts, &mut ui)?;
    report_and_exit(&opts.out, end)
}

/// Writes the report of the run in `out`, prints its relative table, and
/// turns how the run ended into the exit code.
fn report_and_exit(out: &Path, end: RunEnd) -> anyhow::Result<()> {
    let out = &out.to_path_buf();
    let (cs, files) = render::write(
        std::slice::from_ref(out),
        None,
        &plan_comparisons(out),
        Grouping::Kind,
        out,
        &Format::ALL,
    )
    .context("writing the report")?;
    let stdout = std::io::stdout();
    for (i, c) in cs.iter().enumerate() {
        // The plan's comparisons, each under its title.
        if cs.len() > 1 {
            crate::out!("{}== {} ==\n", if i > 0 { "\n" } else { "" }, c.title);
        }
        crate::out!(
            "{}",
            render::terminal_relative_table(&c.report, stdout.is_terminal())
        );
    }
    crate::errln!("\nresults: {}", out.display());
    for f in &files {
        crate::errln!("report:  {}", f.display());
    }
    match end {
        RunEnd::Interrupted => {
            crate::errln!(
                "interrupted: finish this run with `relbench run --resume --out {}`",
                out.display()
            );
            Err(Exit::Interrupted.into())
        }
        RunEnd::Complete {
            failed_steps: 0,
            not_run: 0,
            not_started,
        } if not_started.is_empty() => Ok(()),
        RunEnd::Complete {
            failed_steps,
            not_run,
            not_started,
        } => {
            // Counted as they are: a target that never started ran no step.
            let mut said = Vec::new();
            if failed_steps > 0 {
                said.push(format!("{failed_steps} step(s) failed"));
            }
            if not_run > 0 {
                said.push(format!("{not_run} step(s) did not run"));
            }
            if !not_started.is_empty() {
                said.push(format!(
                    "{} did not start, so none of its steps ran",
                    not_started.join(", ")
                ));
            }
            crate::errln!(
                "{}; the report's \"Errors and failed steps\" says why: fix it, then finish the run with \
                 `relbench run --resume --out {}`",
                said.join("; "),
                out.display()
            );
            Err(Exit::StepsFailed(failed_steps + not_run + not_started.len()).into())
        }
    }
}
