//! The command line: clap definitions (`args.rs`), resolution into typed
//! options, and dispatch to the commands (`run.rs`: run and confirm, the
//! rounds of `repeats = "auto"` handed to `study::adaptive`; `check.rs`;
//! `catalogue.rs`: list, show, init; `serve.rs`). Exit codes
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
mod bisect;
mod catalogue;
mod check;
mod drift;
mod gate;
mod history;
mod host;
mod profile;
mod run;
mod sample;
mod serve;
mod sysbench_args;

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
use args::{plan_comparisons, read_comparisons, Cli, Command, RunArgs, ONE_OFF_SOURCE};

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
    /// The command said what it had to; exit with this code.
    #[error("exit {0}")]
    Code(u8),
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `git bisect run` reads 2 as "bad": a usage error of
        // bisect-check is wrong for every commit, and 128 stops the
        // bisect (regression: a mistyped flag marked commits bad).
        Err(e) if e.use_stderr() && std::env::args().nth(1).as_deref() == Some("bisect-check") => {
            crate::err!("{e}");
            crate::errln!(
                "relbench bisect-check: a usage error; exit 128 so `git bisect run` stops"
            );
            return ExitCode::from(128);
        }
        Err(e) => e.exit(),
    };
    match dispatch(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match e.downcast_ref::<Exit>() {
            Some(Exit::BadPlan(p)) => {
                crate::err!("error: {p}");
                ExitCode::from(2)
            }
            Some(Exit::Interrupted) => ExitCode::from(130),
            // A pass of a study (a bisect's round) stopped by Ctrl-C.
            None if e.downcast_ref::<crate::Interrupted>().is_some() => ExitCode::from(130),
            Some(Exit::StepsFailed(_)) => ExitCode::from(3),
            Some(Exit::Code(n)) => ExitCode::from(*n),
            Some(Exit::BadInput(m)) => {
                crate::errln!("error: {m}");
                ExitCode::from(2)
            }
            // Directories that cannot be merged, or a base the results do
            // not have: what the command line named is wrong.
            None if e.downcast_ref::<crate::compare::UnknownBase>().is_some()
                || e.downcast_ref::<crate::results::merge::MergeRefused>()
                    .is_some() =>
            {
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
        Command::Run(a) => run_command(a),
        Command::History(cmd) => history::history(cmd),
        Command::Bisect(a) => bisect::bisect(a),
        Command::Gate { dir, candidate } => gate::gate(&dir, candidate.as_deref()),
        Command::BisectCheck {
            plan,
            step,
            good,
            bad,
            out,
        } => Err(Exit::Code(bisect::bisect_check(&plan, &step, &good, &bad, out)).into()),
        Command::Report {
            dirs,
            base,
            out,
            format,
            compare,
            config,
            groups,
            self_contained,
        } => {
            let out = out.unwrap_or_else(|| dirs[0].clone());
            let comparisons = match config {
                Some(path) => read_comparisons(&path)?,
                None if compare.is_empty() && base.is_none() => plan_comparisons(&dirs[0]),
                None => compare,
            };
            let (cs, files) = render::write(
                &dirs,
                base.as_deref(),
                &comparisons,
                groups,
                &out,
                &format,
                self_contained,
            )?;
            let report = &cs[0].report;
            for why in report.runs.iter().flat_map(|r| &r.skipped_files) {
                crate::errln!("relbench: left out of the report: {why}");
            }
            for f in files {
                crate::outln!("{}", f.display());
            }
            Ok(())
        }
        Command::Profile {
            dir,
            target,
            step,
            against,
            top,
        } => profile::profile(&profile::ProfileArgs {
            dir,
            target,
            step,
            against,
            top,
        }),
        Command::Host { action, drift } => host::host(action, &drift),
        Command::Serve { plan, target, out } => {
            install_ctrlc();
            serve::serve(&resolve_run(Some(plan), out, false, None, None)?, &target)
        }
        Command::Merge {
            dirs,
            out,
            server_samples,
        } => run::merge(&dirs, &out, server_samples.as_deref()),
        Command::Sample {
            pid,
            datadir,
            out,
            every,
            for_,
        } => {
            install_ctrlc();
            sample::sample(&sample::Options {
                pid,
                datadir,
                out,
                every: duration_flag("every", every.as_deref(), "100ms or 1s")?
                    .unwrap_or(std::time::Duration::from_millis(100)),
                stop_after: duration_flag("for", for_.as_deref(), "100ms or 2h")?,
            })
        }
        Command::Check {
            plan,
            last: None,
            schedule: true,
            shards,
        } => check::schedule(&plan, shards),
        Command::Check {
            plan,
            last: None,
            schedule: false,
            shards: Some(n),
        } => check::shards(&plan, n),
        Command::Check {
            plan,
            last,
            schedule: false,
            shards: None,
        } => check::check(&plan, last.as_deref()),
        Command::Check { .. } => Err(Exit::BadInput(
            "--last advises step lengths for the whole plan: leave out --schedule and --shards"
                .into(),
        )
        .into()),
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

/// `relbench run`, in its shapes: a confirmation, one workload without a
/// plan, or a plan (the quick one without).
fn run_command(a: RunArgs) -> anyhow::Result<()> {
    if a.gate {
        return gate::run_and_gate(a);
    }
    if let Some(dir) = &a.confirm {
        let show = run::Show {
            quiet: a.quiet,
            every: None,
            json: false,
            events: a.events.clone(),
        };
        return run::confirm(dir, &show, a.new_host);
    }
    if !a.resume
        && (a.one_off.given() || a.one_off.workload.is_some() || !a.one_off.script.is_empty())
    {
        return run_one_off(a);
    }
    run_plan(a)
}

/// One workload against one target, from the flags alone.
fn run_one_off(a: RunArgs) -> anyhow::Result<()> {
    let history = history::history_flag(a.history)?;
    let every = interval(a.report_interval.as_deref())?;
    let text = a.one_off.plan_text()?;
    let dir = std::env::current_dir()?;
    let plan = plan::parse(&text, ONE_OFF_SOURCE, &dir)
        .map_err(|e| Exit::BadInput(args::OneOff::flag_errors(&text, &e)))?;
    let out = a
        .out
        .unwrap_or_else(|| Path::new("results").join(utc_stamp(unix_now())));
    let opts = RunOptions {
        secrets: crate::db::Secrets::take(&plan.targets)?,
        schedule: compile(&plan)?,
        record: RunInfo::start(ONE_OFF_SOURCE.into(), text, &dir, plan),
        plan_dir: dir,
        out,
        resume: false,
        new_host: false,
    };
    let show = run::Show {
        quiet: a.quiet,
        every,
        json: a.one_off.json,
        events: a.events,
    };
    run_with_history(
        opts,
        show,
        history,
        &a.build,
        a.order,
        crate::study::adaptive::Question::Verdicts,
    )
}

/// A plan, or a part of one (`--shard`, `--client-share`), or the
/// quick plan; `--resume` goes on with the one in `--out`.
fn run_plan(a: RunArgs) -> anyhow::Result<()> {
    if a.one_off.given() && a.shard.is_some() {
        return Err(Exit::BadInput(
            "--shard cuts a plan into parts; a run of one workload without a plan has one target: \
             leave out --shard"
                .into(),
        )
        .into());
    }
    if a.one_off.json {
        return Err(Exit::BadInput(
            "--json prints one workload's figures: give it with --url or --sqlite and --workload"
                .into(),
        )
        .into());
    }
    let history = history::history_flag(a.history)?;
    let every = interval(a.report_interval.as_deref())?;
    let shard = match a.shard.as_deref() {
        None => None,
        Some("env") => {
            Some(plan::Shard::from_env(|k| std::env::var(k).ok()).map_err(Exit::BadInput)?)
        }
        Some(s) => Some(plan::Shard::parse(s).map_err(Exit::BadInput)?),
    };
    let rendezvous = rendezvous(
        a.client_share.as_deref(),
        a.barrier,
        a.barrier_timeout.as_deref(),
    )?;
    if a.one_off.given() && rendezvous.is_some() {
        return Err(Exit::BadInput(
            "--client-share splits a plan's steps over client hosts: give a plan whose targets are \
             servers by URL"
                .into(),
        )
        .into());
    }
    let sharded = shard.is_some() || rendezvous.is_some();
    let mut opts = resolve_run(a.plan, a.out, a.resume, shard, rendezvous)?;
    // A candidate the plan does not have is said before the run, not
    // after it.
    let candidate = match a.gate {
        true => Some(gate::check_plan(&opts.record.plan, a.candidate.as_deref())?),
        false => None,
    };
    opts.new_host = a.new_host;
    adaptive_fits(&mut opts, a.budget.as_deref(), sharded)?;
    if let Some(d) = a.data_dir {
        opts.record.data_dir = Some(std::path::absolute(&d)?);
    }
    let show = run::Show {
        quiet: a.quiet,
        every,
        json: false,
        events: a.events,
    };
    // An adaptive gate spends its rounds on the gate's question.
    let question = match &candidate {
        Some(c) => crate::study::adaptive::Question::Gate { candidate: c },
        None => crate::study::adaptive::Question::Verdicts,
    };
    run_with_history(opts, show, history, &a.build, a.order, question)
}

/// `repeats = "auto"` decides from every target's results in one place:
/// not for a part of a study; `--budget` sets its budget.
fn adaptive_fits(opts: &mut RunOptions, budget: Option<&str>, sharded: bool) -> anyhow::Result<()> {
    let budget = duration_flag("budget", budget, "3h or 90m")?;
    let plan = &mut opts.record.plan;
    match (&mut plan.adaptive, budget) {
        (Some(_), _) if sharded => Err(Exit::BadInput(
            "the plan has repeats = \"auto\", which decides where to add repeats from every target's \
             results; a shard or a client share has only its part: give the plan a number of repeats \
             to run it in parts"
                .into(),
        )
        .into()),
        (Some(a), Some(b)) => {
            a.budget_secs = Some(b.as_secs_f64());
            Ok(())
        }
        (None, Some(_)) => Err(Exit::BadInput(
            "--budget bounds an adaptive run: the plan needs `repeats = \"auto\"`".into(),
        )
        .into()),
        _ => Ok(()),
    }
}

/// Runs with `run --history`'s sink when it is asked for, and says what
/// the addition came to after the run's report.
fn run_with_history(
    opts: RunOptions,
    show: run::Show,
    history: Option<crate::history::store::HistoryAt>,
    build: &[String],
    order: Option<f64>,
    question: crate::study::adaptive::Question<'_>,
) -> anyhow::Result<()> {
    let mut added = history.map(|h| history::HistorySink::new(h, &opts.out, build, order));
    let ran = run::run(
        opts,
        show,
        added.as_mut().map(|h| h as &mut dyn runner::Sink),
        question,
    );
    match added {
        Some(h) => h.outcome(ran),
        None => ran,
    }
}

pub(super) fn read_plan(path: &Path) -> anyhow::Result<(Plan, String, PathBuf)> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Exit::BadInput(match e.kind() {
            // A file that is there but is not text: `init` would not help
            // (regression: a non-UTF-8 plan was told to run it).
            std::io::ErrorKind::InvalidData => format!(
                "plan {} is not UTF-8 text (a plan is a TOML file): save it as UTF-8, or name the plan",
                path.display()
            ),
            std::io::ErrorKind::NotFound => format!(
                "cannot read plan {}: there is no such file; `relbench init {}` writes an example plan there",
                path.display(),
                path.display()
            ),
            _ => format!("cannot read plan {}: {e}", path.display()),
        })
    })?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let dir = dir.canonicalize().unwrap_or(dir);
    let plan = plan::parse(&text, &path.display().to_string(), &dir).map_err(Exit::BadPlan)?;
    Ok((plan, text, dir))
}

/// `--client-share`, `--barrier` and `--barrier-timeout`, checked.
fn rendezvous(
    share: Option<&str>,
    barrier: Option<String>,
    timeout: Option<&str>,
) -> anyhow::Result<Option<plan::Rendezvous>> {
    let Some(share) = share else { return Ok(None) };
    let share = plan::ClientShare::parse(share).map_err(Exit::BadInput)?;
    let id = barrier
        .or_else(|| std::env::var("SLURM_JOB_ID").ok())
        .ok_or_else(|| {
            Exit::BadInput(
                "--client-share needs --barrier ID: one name, new for each study, given to every share's \
                 process (under Slurm the job id is taken)"
                    .into(),
            )
        })?;
    plan::Rendezvous::check_id(&id).map_err(Exit::BadInput)?;
    let timeout = duration_flag("barrier-timeout", timeout, "10m or 90s")?
        .unwrap_or(std::time::Duration::from_secs(30 * 60));
    Ok(Some(plan::Rendezvous { share, id, timeout }))
}

/// A duration flag's value (`--NAME TEXT`); a bad one is a bad command
/// line, answered with `like`'s examples.
fn duration_flag(
    name: &str,
    text: Option<&str>,
    like: &str,
) -> anyhow::Result<Option<std::time::Duration>> {
    let Some(text) = text else { return Ok(None) };
    match workload::check::parse_duration(text) {
        // The plan's cap: a duration past 7 days is a typo, and one past
        // what a Duration holds would panic (`--budget=1e30h`).
        Some(s) if s > workload::check::MAX_SECS => Err(Exit::BadInput(format!(
            "--{name} {text}: at most 7 days; a longer study is several runs"
        ))
        .into()),
        Some(s) if s > 0.0 => Ok(Some(std::time::Duration::from_secs_f64(s))),
        _ => Err(Exit::BadInput(format!(
            "--{name} {text}: not a duration; write it like {like}"
        ))
        .into()),
    }
}

/// `--report-interval`'s duration.
fn interval(flag: Option<&str>) -> anyhow::Result<Option<std::time::Duration>> {
    duration_flag("report-interval", flag, "1s, 500ms or 10s")
}

fn resolve_run(
    plan: Option<PathBuf>,
    out: Option<PathBuf>,
    resume: bool,
    shard: Option<plan::Shard>,
    rendezvous: Option<plan::Rendezvous>,
) -> anyhow::Result<RunOptions> {
    run_flags_fit(resume, out.as_deref(), shard.is_some())?;
    let (mut plan, plan_source, plan_text, plan_dir) =
        plan_of_run(plan.as_deref(), resume, out.as_deref())?;
    let earlier = match (&out, resume) {
        (Some(dir), true) => crate::results::read_run_info(dir).ok(),
        _ => None,
    };
    // A shard resumed without --shard stays that shard.
    let shard = shard.or_else(|| {
        earlier
            .as_ref()
            .and_then(|i| i.shard.as_ref())
            .map(|r| r.shard)
    });
    let mut resume = resume;
    if let (Some(s), Some(dir)) = (shard, &out) {
        resume |= same_shard_there(dir, s, &plan_text)?;
    }
    if resume && rendezvous.is_some() {
        return Err(Exit::BadInput(
            "--client-share with --resume: the shares run each step together, so one does not resume; \
             run every share again into new directories with a new --barrier"
                .into(),
        )
        .into());
    }
    decide_seed(
        &mut plan,
        &plan_text,
        earlier.as_ref().map(|i| i.plan.seed),
        shard.is_some() || rendezvous.is_some(),
    );
    let out = out.unwrap_or_else(|| Path::new("results").join(utc_stamp(unix_now())));
    let mut schedule = compile(&plan)?;
    let mut record = RunInfo::start(plan_source, plan_text, &plan_dir, plan);
    if let Some(s) = shard {
        record.shard = Some(shard_record(&schedule, s, &record.plan_source));
        schedule = schedule.shard(s);
    }
    if let Some(rv) = rendezvous {
        record.client_share = Some(client_share(&schedule, &rv)?);
        schedule = schedule.shared(rv);
    }
    Ok(RunOptions {
        secrets: crate::db::Secrets::take(&record.plan.targets)?,
        schedule,
        record,
        plan_dir,
        out,
        resume,
        new_host: false,
    })
}

/// The seed a run draws its ids from, decided here and nowhere else: the
/// plan's when it gives one; one from the plan's text when the plan is
/// split over shards or client shares (every part draws the same ids, and
/// a part run again draws them again); the run's own when it is resumed
/// (the rest of it draws the ids its first part would have); otherwise
/// the one the plan drew as it was read.
fn decide_seed(plan: &mut Plan, plan_text: &str, recorded: Option<u64>, split: bool) {
    if plan.seed_fixed {
        return;
    }
    if split {
        plan.seed = plan::shard::seed_of(plan_text);
        plan.seed_fixed = true;
    } else if let Some(seed) = recorded {
        plan.seed = seed;
    }
}

/// The flags a run needs together: `--resume` and `--shard` need `--out`,
/// and a client share does not resume.
fn run_flags_fit(resume: bool, out: Option<&Path>, shard: bool) -> anyhow::Result<()> {
    if resume && out.is_none() {
        bail!("--resume needs --out DIR: the results directory of the run to finish");
    }
    // A client share does not resume: the barrier's rows of the steps it
    // finished are there already, so it would pass them alone while the
    // other shares ran other steps.
    if let (true, Some(dir)) = (resume, out) {
        if let Some(r) = crate::results::read_run_info(dir)
            .ok()
            .and_then(|i| i.client_share)
        {
            return Err(Exit::BadInput(format!(
                "{} is client share {} of barrier {:?}: the shares run each step together, so one does not \
                 resume alone; its finished steps stay in {}. Run every share again into new directories \
                 with a new --barrier",
                dir.display(),
                r.share,
                r.barrier,
                dir.display()
            ))
            .into());
        }
    }
    if shard && out.is_none() {
        return Err(Exit::BadInput(
            "--shard needs --out DIR: the shard's own results directory, the same each time the scheduler \
             runs it (e.g. --out /shared/study/shard-$SLURM_ARRAY_TASK_ID), so that a rerun resumes it"
                .into(),
        )
        .into());
    }
    Ok(())
}

/// The plan a run runs, with where it came from, its text and the
/// directory its paths are relative to: the file given, the run's own
/// copy when it is resumed without one, or the quick plan.
fn plan_of_run(
    plan: Option<&Path>,
    resume: bool,
    out: Option<&Path>,
) -> anyhow::Result<(Plan, String, String, PathBuf)> {
    Ok(match (plan, resume) {
        (Some(p), _) => {
            let (plan, text, dir) = read_plan(p)?;
            (plan, p.display().to_string(), text, dir)
        }
        (None, true) => {
            // Resuming without a plan: the run's own copy of its plan.
            let dir = out.expect("checked above");
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
    })
}

/// What a shard runs of its plan, said as it starts.
fn shard_record(
    schedule: &Schedule,
    s: plan::Shard,
    plan_source: &str,
) -> crate::results::ShardRecord {
    let names = |keep: &dyn Fn(usize) -> bool| -> Vec<String> {
        (0..schedule.targets.len())
            .filter(|&t| keep(t))
            .map(|t| schedule.targets[t].name.clone())
            .collect()
    };
    let shard_record = crate::results::ShardRecord {
        shard: s,
        targets: names(&|t| schedule.runs(s, t)),
        everywhere: names(&|t| schedule.everywhere(t)),
    };
    crate::errln!(
        "relbench: shard {s} of {}: {} here, {} on every shard",
        plan_source,
        shard_record.targets.join(", "),
        shard_record.everywhere.join(", ")
    );
    shard_record
}

/// A client share's record, said as it starts: every target must be a
/// server by URL.
fn client_share(
    schedule: &Schedule,
    rv: &plan::Rendezvous,
) -> anyhow::Result<crate::results::ShareRun> {
    if let Some(t) = schedule
        .targets
        .iter()
        .find(|t| !matches!(t.access, plan::Access::Url { .. }))
    {
        return Err(Exit::BadInput(format!(
            "--client-share: target \"{}\" is not a server by URL; a server relbench manages, or an \
             embedded database, stays on one host. Start the server yourself, give its `url` in the plan, \
             and run a share on each client host",
            t.name
        ))
        .into());
    }
    crate::errln!(
        "relbench: client share {} at barrier {:?}: clients {}, {}, … of every step",
        rv.share,
        rv.id,
        rv.share.index,
        rv.share.index + rv.share.count
    );
    Ok(crate::results::ShareRun {
        share: rv.share,
        barrier: rv.id.clone(),
        timeout_secs: rv.timeout.as_secs_f64(),
    })
}

/// Whether `dir` holds this shard of this plan already (the scheduler ran
/// it again: it resumes); an error when it holds anything else.
fn same_shard_there(dir: &Path, shard: plan::Shard, plan_text: &str) -> anyhow::Result<bool> {
    if !dir.join(crate::results::RUN_FILE).exists() {
        return Ok(false);
    }
    let info = crate::results::read_run_info(dir)?;
    let hash = plan::shard::plan_hash(plan_text);
    match &info.shard {
        Some(r) if r.shard == shard && info.plan_hash.as_deref() == Some(hash.as_str()) => {
            crate::errln!(
                "relbench: {} holds shard {shard} of this plan ({:?}): resuming it",
                dir.display(),
                info.status
            );
            Ok(true)
        }
        Some(r) if info.plan_hash.as_deref() == Some(hash.as_str()) && r.shard.count != shard.count => {
            bail!(
                "{} holds shard {} of this plan: the study was cut into {} shards when it started, and this \
                 run would be shard {shard}; give the study's count (--shard {}/{}, or under --shard env \
                 RELBENCH_SHARD_COUNT={}) to resume it",
                dir.display(),
                r.shard,
                r.shard.count,
                r.shard.index,
                r.shard.count,
                r.shard.count
            )
        }
        Some(r) if info.plan_hash.as_deref() == Some(hash.as_str()) => bail!(
            "{} holds shard {} of this plan, not {shard}: give each shard its own --out (e.g. ending in \
             the shard's index)",
            dir.display(),
            r.shard
        ),
        _ => bail!(
            "{} holds another run (of {}, not this plan's shard {shard}); give the shard a directory of \
             its own with --out",
            dir.display(),
            info.plan_source
        ),
    }
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
