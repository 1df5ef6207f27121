//! The command line: clap definitions (`args.rs`), resolution into typed
//! options, and dispatch to the commands (`run.rs`: run and confirm;
//! `check.rs`; `catalogue.rs`: list, show, init; `serve.rs`). Exit codes
//! (also in `relbench --help`):
//!
//! | code | meaning |
//! |---|---|
//! | 0 | done |
//! | 1 | an error stopped the command (the message says what to do) |
//! | 2 | the command line or the plan is wrong; nothing was run |
//! | 3 | the run finished, but some steps failed (the report lists them) |
//! | 130 | interrupted by Ctrl-C; finished steps are kept (`--resume` goes on) |

mod args;
mod catalogue;
mod check;
mod run;
mod serve;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::bail;
use clap::Parser;

use crate::plan::{self, Plan, PlanErrors, Schedule};
use crate::render;
use crate::results::RunInfo;
use crate::runner::{self, RunOptions};
use crate::util::{unix_now, utc_stamp};
use crate::workload;
use crate::workload::catalogue::Catalogue;
use args::{plan_comparisons, read_comparisons, Cli, Command, ONE_OFF_SOURCE};

/// A command failed in a way that has its own exit code.
#[derive(Debug, thiserror::Error)]
pub(super) enum Exit {
    #[error("{0}")]
    BadPlan(PlanErrors),
    #[error("interrupted")]
    Interrupted,
    #[error("{0} step(s) failed")]
    StepsFailed(usize),
    /// A file the command line names cannot be read, or it names what is
    /// not there: a bad command line, exit 2.
    #[error("{0}")]
    BadInput(String),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match e.downcast_ref::<Exit>() {
            Some(Exit::BadPlan(p)) => {
                crate::err!("error: {p}");
                ExitCode::from(2)
            }
            Some(Exit::Interrupted) => ExitCode::from(130),
            Some(Exit::StepsFailed(_)) => ExitCode::from(3),
            Some(Exit::BadInput(m)) => {
                crate::errln!("error: {m}");
                ExitCode::from(2)
            }
            None if e.downcast_ref::<crate::compare::UnknownBase>().is_some() => {
                crate::errln!("error: {e:#}");
                ExitCode::from(2)
            }
            None => {
                crate::errln!("error: {e:#}");
                ExitCode::from(1)
            }
        },
    }
}

fn dispatch(cmd: Command) -> anyhow::Result<()> {
    match cmd {
        Command::Run {
            confirm: Some(dir),
            quiet,
            ..
        } => run::confirm(&dir, quiet),
        Command::Run {
            out,
            resume: false,
            quiet,
            confirm: None,
            one_off,
            report_interval,
            ..
        } if one_off.given() || one_off.workload.is_some() => {
            let every = interval(report_interval.as_deref())?;
            let text = one_off.plan_text()?;
            let dir = std::env::current_dir()?;
            let plan = plan::parse(&text, ONE_OFF_SOURCE, &dir)
                .map_err(|e| Exit::BadInput(args::OneOff::flag_errors(&text, &e)))?;
            let out = out.unwrap_or_else(|| Path::new("results").join(utc_stamp(unix_now())));
            let schedule = compile(&plan)?;
            run::run(
                RunOptions {
                    secrets: crate::db::Secrets::take(&plan.targets)?,
                    schedule,
                    record: RunInfo::start(ONE_OFF_SOURCE.into(), text, &dir, plan),
                    plan_dir: dir,
                    out,
                    resume: false,
                },
                run::Show {
                    quiet,
                    every,
                    json: one_off.json,
                },
            )
        }
        Command::Run {
            plan,
            out,
            resume,
            quiet,
            confirm: None,
            report_interval,
            one_off,
        } => {
            if one_off.json {
                return Err(Exit::BadInput(
                    "--json prints one workload's figures: give it with --url or --sqlite and --workload"
                        .into(),
                )
                .into());
            }
            let every = interval(report_interval.as_deref())?;
            run::run(
                resolve_run(plan, out, resume)?,
                run::Show {
                    quiet,
                    every,
                    json: false,
                },
            )
        }
        Command::Report {
            dirs,
            base,
            out,
            format,
            compare,
            config,
            groups,
        } => {
            let out = out.unwrap_or_else(|| dirs[0].clone());
            let comparisons = match config {
                Some(path) => read_comparisons(&path)?,
                None if compare.is_empty() && base.is_none() => plan_comparisons(&dirs[0]),
                None => compare,
            };
            let (cs, files) =
                render::write(&dirs, base.as_deref(), &comparisons, groups, &out, &format)?;
            let report = &cs[0].report;
            for why in report.runs.iter().flat_map(|r| &r.skipped_files) {
                crate::errln!("relbench: left out of the report: {why}");
            }
            for f in files {
                crate::outln!("{}", f.display());
            }
            Ok(())
        }
        Command::Serve { plan, target, out } => {
            install_ctrlc();
            serve::serve(&resolve_run(Some(plan), out, false)?, &target)
        }
        Command::Check {
            plan,
            last,
            schedule,
        } => check::check(&plan, last.as_deref(), schedule),
        Command::List { plan } => {
            catalogue::list();
            if let Some(p) = plan {
                let (plan, _, _) = read_plan(&p)?;
                crate::outln!("\nThe workloads of {}:", p.display());
                for w in &plan.workloads {
                    crate::outln!(
                        "  {:<22} {:<16} {} statement(s), {} transaction(s): {}",
                        w.name,
                        workload::Group::Custom.name(),
                        w.statements.len(),
                        w.transactions.len(),
                        w.about
                    );
                }
            }
            Ok(())
        }
        Command::Show {
            workload,
            plan,
            target,
        } => match plan {
            Some(plan) if workload == "load" => {
                let (plan, _, _) = read_plan(&plan)?;
                catalogue::show_targets_load(&plan, target.as_deref())
            }
            Some(plan) => {
                // The plan's catalogue: its own workloads and parameters.
                let (plan, _, _) = read_plan(&plan)?;
                catalogue::show(&workload, &plan.catalogue().map_err(anyhow::Error::msg)?)
            }
            None => catalogue::show(&workload, &Catalogue::builtin()),
        },
        Command::Init { file, force } => catalogue::init(&file, force),
    }
}

pub(super) fn read_plan(path: &Path) -> anyhow::Result<(Plan, String, PathBuf)> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Exit::BadInput(format!(
            "cannot read plan {}: {e}; `relbench init {}` writes an example plan there",
            path.display(),
            path.display()
        ))
    })?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let dir = dir.canonicalize().unwrap_or(dir);
    let plan = plan::parse(&text, &path.display().to_string(), &dir).map_err(Exit::BadPlan)?;
    Ok((plan, text, dir))
}

/// Turns the command line into everything `run` needs, before any work.
/// `--report-interval`'s duration; a bad one is a bad command line.
fn interval(flag: Option<&str>) -> anyhow::Result<Option<std::time::Duration>> {
    let Some(text) = flag else { return Ok(None) };
    match workload::check::parse_duration(text) {
        Some(s) if s > 0.0 => Ok(Some(std::time::Duration::from_secs_f64(s))),
        _ => Err(Exit::BadInput(format!(
            "--report-interval {text}: not a duration; write it like 1s, 500ms or 10s"
        ))
        .into()),
    }
}

fn resolve_run(
    plan: Option<PathBuf>,
    out: Option<PathBuf>,
    resume: bool,
) -> anyhow::Result<RunOptions> {
    if resume && out.is_none() {
        bail!("--resume needs --out DIR: the results directory of the run to finish");
    }
    let (plan, plan_source, plan_text, plan_dir) = match (&plan, resume) {
        (Some(p), _) => {
            let (plan, text, dir) = read_plan(p)?;
            (plan, p.display().to_string(), text, dir)
        }
        (None, true) => {
            // Resuming without a plan: the run's own copy of its plan.
            let dir = out.as_ref().expect("checked above");
            let info = crate::results::read_run_info(dir)?;
            let plan_dir = PathBuf::from(&info.plan_dir);
            let plan = plan::parse(&info.plan_text, &info.plan_source, &plan_dir)
                .map_err(Exit::BadPlan)?;
            (plan, info.plan_source, info.plan_text, plan_dir)
        }
        (None, false) => {
            let dir = std::env::current_dir()?;
            let plan = plan::parse(plan::QUICK_PLAN, plan::QUICK_PLAN_SOURCE, &dir)
                .map_err(Exit::BadPlan)?;
            (
                plan,
                plan::QUICK_PLAN_SOURCE.to_string(),
                plan::QUICK_PLAN.to_string(),
                dir,
            )
        }
    };
    let mut plan = plan;
    if resume && !plan.seed_fixed {
        // The seed the run drew when it started, not a fresh one: the rest
        // of the run draws the ids its first part would have.
        let dir = out.as_ref().expect("checked above");
        if let Ok(info) = crate::results::read_run_info(dir) {
            plan.seed = info.plan.seed;
        }
    }
    let out = out.unwrap_or_else(|| Path::new("results").join(utc_stamp(unix_now())));
    Ok(RunOptions {
        secrets: crate::db::Secrets::take(&plan.targets)?,
        schedule: compile(&plan)?,
        record: RunInfo::start(plan_source, plan_text, &plan_dir, plan),
        plan_dir,
        out,
        resume,
    })
}

/// A plan compiled once, before any work: its catalogue and schedule.
fn compile(plan: &Plan) -> anyhow::Result<Schedule> {
    let cat = plan
        .catalogue()
        .map_err(|why| anyhow::anyhow!("the plan names a workload relbench cannot make: {why}"))?;
    Ok(plan.schedule(&cat))
}

pub(super) fn install_ctrlc() {
    let _ = ctrlc::set_handler(|| {
        if runner::INTERRUPT.swap(true, Ordering::SeqCst) {
            // No unwinding on this path, so managed servers are asked to
            // stop here rather than by their owners.
            crate::db::server::stop_all_now();
            crate::errln!(
                "\nrelbench: stopped at once (managed servers were asked to stop); \
                 the step in flight is lost, finished steps are kept"
            );
            std::process::exit(130);
        }
        crate::errln!(
            "\nrelbench: stopping after dropping the step in flight (Ctrl-C again to quit at once)"
        );
    });
}
