//! The command line: clap definitions, resolution into typed options, and
//! dispatch. Exit codes (also in `relbench --help`):
//!
//! | code | meaning |
//! |---|---|
//! | 0 | done |
//! | 1 | an error stopped the command (the message says what to do) |
//! | 2 | the command line or the plan is wrong; nothing was run |
//! | 3 | the run finished, but some steps failed (the report lists them) |
//! | 130 | interrupted by Ctrl-C; finished steps are kept (`--resume` goes on) |

mod serve;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};

use crate::compare::{ComparisonSpec, Grouping};
use crate::db::Dialect;
use crate::plan::{self, Maint, Plan, PlanErrors};
use crate::render::{self, Format};
use crate::runner::{self, Progress, RunEnd, RunOptions};
use crate::util::{unix_now, utc_stamp};
use crate::workload::{self, sysbench};

const EXIT_CODES: &str = "Exit codes: 0 done; 1 error; 2 bad command line or plan (nothing run); \
3 run finished but some steps failed; 130 interrupted (finished steps kept, --resume goes on).";

#[derive(Parser)]
#[command(
    name = "relbench",
    version,
    about = "Finds performance regressions between database builds and configurations.",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// One workload against one target, without a plan (the sysbench habit):
/// `--url URL` or `--sqlite FILE`, and `--workload NAME`.
#[derive(clap::Args, Default)]
struct OneOff {
    /// A server someone else runs: mysql://, mariadb:// or postgres://USER@HOST[:PORT]/DB (no password in it).
    #[arg(long, value_name = "URL", conflicts_with_all = ["plan", "sqlite", "confirm"], help_heading = "One workload without a plan")]
    url: Option<String>,
    /// The environment variable that holds the URL's password.
    #[arg(
        long,
        value_name = "VAR",
        requires = "url",
        help_heading = "One workload without a plan"
    )]
    password_env: Option<String>,
    /// An embedded SQLite database file (made if missing; with --load).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["plan", "confirm"], help_heading = "One workload without a plan")]
    sqlite: Option<PathBuf>,
    /// The workload, with parameters if any: point-query, read-only-order[order=4,range=1000].
    #[arg(
        long,
        value_name = "NAME",
        help_heading = "One workload without a plan"
    )]
    workload: Option<String>,
    /// Client counts, comma-separated [default: 1].
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N,...",
        help_heading = "One workload without a plan"
    )]
    clients: Vec<u32>,
    /// How long the workload runs after its warm-up [default: 30s].
    #[arg(
        long,
        value_name = "DURATION",
        help_heading = "One workload without a plan"
    )]
    time: Option<String>,
    /// The warm-up, excluded from every figure [default: 5s].
    #[arg(
        long,
        value_name = "DURATION",
        help_heading = "One workload without a plan"
    )]
    warmup: Option<String>,
    /// Events per second across all clients (open loop), as sysbench's --rate.
    #[arg(long, value_name = "N", help_heading = "One workload without a plan")]
    rate: Option<u64>,
    /// Create and fill the tables first (sysbench's prepare); without it
    /// the workload runs on the tables there.
    #[arg(long, help_heading = "One workload without a plan")]
    load: bool,
    /// Tables [default: 1].
    #[arg(long, value_name = "N", help_heading = "One workload without a plan")]
    tables: Option<u32>,
    /// Rows per table [default: 100000].
    #[arg(long, value_name = "N", help_heading = "One workload without a plan")]
    rows: Option<u64>,
}

impl OneOff {
    fn given(&self) -> bool {
        self.url.is_some() || self.sqlite.is_some()
    }

    /// The plan these flags stand for, as TOML: validated like any plan,
    /// recorded with the results, and what `--resume` reads back.
    fn plan_text(&self) -> anyhow::Result<String> {
        use toml::Value;
        let Some(w) = &self.workload else {
            bail!("a run without a plan needs --workload NAME (`relbench list` shows them)");
        };
        if self.workload.is_some() && !self.given() {
            bail!("--workload runs against --url URL or --sqlite FILE; without them, give a plan");
        }
        let mut t = toml::Table::new();
        let mut step = toml::Table::new();
        step.insert("step".into(), Value::String(w.clone()));
        if let Some(r) = self.rate {
            step.insert("rate".into(), Value::Integer(r as i64));
        }
        let mut steps = Vec::new();
        if self.load {
            steps.push(Value::String("load".into()));
        }
        steps.push(Value::Table(step));
        t.insert("steps".into(), Value::Array(steps));
        let clients = if self.clients.is_empty() {
            vec![1]
        } else {
            self.clients.clone()
        };
        t.insert(
            "clients".into(),
            Value::Array(clients.iter().map(|&c| Value::Integer(c.into())).collect()),
        );
        let mut scale = toml::Table::new();
        if let Some(n) = self.tables {
            scale.insert("tables".into(), Value::Integer(n.into()));
        }
        if let Some(n) = self.rows {
            scale.insert("rows".into(), Value::Integer(n.min(i64::MAX as u64) as i64));
        }
        t.insert("scale".into(), Value::Table(scale));
        let mut duration = toml::Table::new();
        for (k, v) in [
            ("warmup", &self.warmup),
            ("read", &self.time),
            ("write", &self.time),
            ("insert", &self.time),
        ] {
            if let Some(v) = v {
                duration.insert(k.into(), Value::String(v.clone()));
            }
        }
        t.insert("duration".into(), Value::Table(duration));
        let mut target = toml::Table::new();
        target.insert("name".into(), Value::String("target".into()));
        match (&self.url, &self.sqlite) {
            (Some(url), _) => {
                let scheme = url.split_once("://").map(|(s, _)| s).unwrap_or("");
                let engine = match scheme {
                    "mysql" => "mysql",
                    "mariadb" => "mariadb",
                    "postgres" | "postgresql" => "postgres",
                    other => bail!("--url {url}: unknown scheme \"{other}\"; use mysql://, mariadb:// or postgres://"),
                };
                target.insert("engine".into(), Value::String(engine.into()));
                target.insert("url".into(), Value::String(url.clone()));
                if let Some(p) = &self.password_env {
                    target.insert("password_env".into(), Value::String(p.clone()));
                }
            }
            (None, Some(file)) => {
                target.insert("engine".into(), Value::String("sqlite".into()));
                let abs = std::path::absolute(file).unwrap_or_else(|_| file.clone());
                target.insert("path".into(), Value::String(abs.display().to_string()));
            }
            (None, None) => unreachable!("given() was checked"),
        }
        t.insert("target".into(), Value::Array(vec![Value::Table(target)]));
        Ok(format!(
            "# relbench run {}\n{}",
            std::env::args().skip(2).collect::<Vec<_>>().join(" "),
            toml::to_string(&t)?
        ))
    }
}

/// How a one-off run's plan is named in messages and results.
const ONE_OFF_SOURCE: &str = "<command line>";

#[derive(Subcommand)]
enum Command {
    /// Run a plan; without one, the built-in quick plan (two SQLite configurations).
    Run {
        /// The plan file (TOML); `relbench init` writes an example.
        plan: Option<PathBuf>,
        /// Results directory [default: results/<UTC time>].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Finish the run in --out, skipping the steps it already wrote.
        #[arg(long)]
        resume: bool,
        /// Print only the final report and errors.
        #[arg(long, short)]
        quiet: bool,
        /// Add repeats to the run in DIR for the steps its report could not
        /// judge (disturbed, or past 5% but not significant), the targets
        /// interleaved, until each has enough for a rank test (4).
        #[arg(long, value_name = "DIR", conflicts_with_all = ["plan", "out", "resume"])]
        confirm: Option<PathBuf>,
        #[command(flatten)]
        one_off: OneOff,
    },
    /// Compare results directories and write report.md, .csv, .json and .html.
    Report {
        /// Results directories, from one host or several.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// The target others are compared with [default: the first target of the first run].
        #[arg(long)]
        base: Option<String>,
        /// Where to write the report [default: the first results directory].
        #[arg(long)]
        out: Option<PathBuf>,
        /// Formats to write, comma-separated: md, csv, json, html, txt.
        #[arg(long, value_delimiter = ',', default_value = "md,csv,json,html,txt", value_parser = parse_format)]
        format: Vec<Format>,
        /// A comparison of its own, repeatable: `[TITLE=]BASE[:T1,T2,...]`
        /// (the base and the targets it shows, in order; all when none are
        /// named). Each gets its own overview, summary and tables.
        #[arg(long, value_name = "SPEC", value_parser = parse_compare, conflicts_with = "base")]
        compare: Vec<ComparisonSpec>,
        /// The comparisons from a TOML file: `[[comparison]]` tables with
        /// `title`, `base` and `targets`.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["base", "compare"])]
        config: Option<PathBuf>,
        /// Group steps by what they do (`kind`: point, range, writes) or by
        /// where they run (`position`: before the write-heavy steps, those,
        /// after, inserts and deletes).
        #[arg(long, default_value = "kind", value_parser = parse_grouping)]
        groups: Grouping,
    },
    /// Start one managed target's server as a run would and keep it until
    /// stdin closes or Ctrl-C (for looking at it by hand, and for bench/).
    Serve {
        plan: PathBuf,
        /// The target whose server to start.
        #[arg(long)]
        target: String,
        /// Where the datadir goes when the plan sets none [default: results/<UTC time>].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Validate a plan and show what it would run, without running it.
    Check {
        plan: PathBuf,
        /// A earlier run whose per-second noise says how long steps must
        /// be [default: the newest run under results/].
        #[arg(long, value_name = "DIR")]
        last: Option<PathBuf>,
    },
    /// List the suites and workloads (and a plan's own, with --plan).
    List {
        /// A plan whose `[[workload]]`s to list too.
        #[arg(long, value_name = "PLAN")]
        plan: Option<PathBuf>,
    },
    /// Show the SQL of a workload (or of `load`) for every engine.
    Show {
        workload: String,
        /// For `load`: the CREATE TABLE of each target of this plan, with
        /// its storage engine and `table_options`; for a workload the plan
        /// writes (`[[workload]]`), its SQL.
        #[arg(long, value_name = "PLAN")]
        plan: Option<PathBuf>,
        /// With --plan: only this target.
        #[arg(long, value_name = "NAME", requires = "plan")]
        target: Option<String>,
    },
    /// Write a commented example plan.
    Init {
        #[arg(default_value = "relbench.toml")]
        file: PathBuf,
        /// Overwrite the file if it exists.
        #[arg(long)]
        force: bool,
    },
}

fn parse_grouping(s: &str) -> Result<Grouping, String> {
    match s {
        "kind" => Ok(Grouping::Kind),
        "position" => Ok(Grouping::Position),
        _ => Err(format!("unknown grouping \"{s}\"; use kind or position")),
    }
}

/// `[TITLE=]BASE[:T1,T2,...]`.
fn parse_compare(s: &str) -> Result<ComparisonSpec, String> {
    let (title, rest) = match s.split_once('=') {
        Some((t, r)) => (Some(t.trim().to_string()), r),
        None => (None, s),
    };
    let (base, targets) = match rest.split_once(':') {
        Some((b, t)) => (
            b.trim().to_string(),
            t.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect::<Vec<_>>(),
        ),
        None => (rest.trim().to_string(), Vec::new()),
    };
    if base.is_empty() {
        return Err(format!(
            "\"{s}\" names no base; write [TITLE=]BASE[:T1,T2,...], e.g. \"MariaDB over time=ma102:ma102,ma1011,ma114\""
        ));
    }
    Ok(ComparisonSpec::new(title, base, targets))
}

/// The comparisons the run's plan asks for (`[[comparison]]`), if any.
fn plan_comparisons(dir: &Path) -> Vec<ComparisonSpec> {
    crate::results::read_run_info(dir)
        .map(|info| {
            info.plan
                .comparisons
                .into_iter()
                .map(|c| ComparisonSpec::new(c.title, c.base, c.targets))
                .collect()
        })
        .unwrap_or_default()
}

/// The comparisons of a report configuration file.
fn read_comparisons(path: &Path) -> anyhow::Result<Vec<ComparisonSpec>> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        comparison: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Entry {
        title: Option<String>,
        base: String,
        #[serde(default)]
        targets: Vec<String>,
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the report configuration {}", path.display()))?;
    let file: File = toml::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: {}; it holds [[comparison]] tables with `title`, `base` and `targets`",
            path.display(),
            e.message()
        )
    })?;
    Ok(file
        .comparison
        .into_iter()
        .map(|e| ComparisonSpec::new(e.title, e.base, e.targets))
        .collect())
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::parse(s)
        .ok_or_else(|| format!("unknown format \"{s}\"; use md, csv, json, html or txt"))
}

/// A command failed in a way that has its own exit code.
#[derive(Debug, thiserror::Error)]
enum Exit {
    #[error("{0}")]
    BadPlan(PlanErrors),
    #[error("interrupted")]
    Interrupted,
    #[error("{0} step(s) failed")]
    StepsFailed(usize),
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
        } => confirm(&dir, quiet),
        Command::Run {
            out,
            resume: false,
            quiet,
            confirm: None,
            one_off,
            ..
        } if one_off.given() || one_off.workload.is_some() => {
            let text = one_off.plan_text()?;
            let dir = std::env::current_dir()?;
            let plan = plan::parse(&text, ONE_OFF_SOURCE, &dir).map_err(Exit::BadPlan)?;
            let out = out.unwrap_or_else(|| Path::new("results").join(utc_stamp(unix_now())));
            run(
                RunOptions {
                    plan,
                    plan_source: ONE_OFF_SOURCE.into(),
                    plan_text: text,
                    plan_dir: dir,
                    out,
                    resume: false,
                },
                quiet,
            )
        }
        Command::Run {
            plan,
            out,
            resume,
            quiet,
            confirm: None,
            ..
        } => run(resolve_run(plan, out, resume)?, quiet),
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
        Command::Check { plan, last } => check(&plan, last.as_deref()),
        Command::List { plan } => {
            list();
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
                show_targets_load(&workload, &plan, target.as_deref())
            }
            Some(plan) => {
                // Reading the plan registers its workloads.
                read_plan(&plan)?;
                show(&workload)
            }
            None => show(&workload),
        },
        Command::Init { file, force } => init(&file, force),
    }
}

fn read_plan(path: &Path) -> anyhow::Result<(Plan, String, PathBuf)> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read plan {}; `relbench init {}` writes an example plan there",
            path.display(),
            path.display()
        )
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
    let out = out.unwrap_or_else(|| Path::new("results").join(utc_stamp(unix_now())));
    Ok(RunOptions {
        plan,
        plan_source,
        plan_text,
        plan_dir,
        out,
        resume,
    })
}

fn install_ctrlc() {
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

/// Repeats a rank test needs on each side to call a change significant
/// (at 4 against 4 the smallest two-sided p is 0.029).
fn repeats_for_significance() -> usize {
    (2..20)
        .find(|&n| crate::measure::stats::smallest_p(n, n) < crate::measure::stats::ALPHA)
        .unwrap_or(4)
}

fn confirm(dir: &Path, quiet: bool) -> anyhow::Result<()> {
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
        needs,
        first_repeat: run.steps.iter().map(|s| s.repeat).max().unwrap_or(0) + 1,
    };
    let mut ui = Progress::new(quiet);
    let (end, added) = runner::confirm(&opts, &mut ui)?;
    crate::errln!(
        "relbench: added {added} step result(s) to {}",
        dir.display()
    );
    report_and_exit(dir, end)
}

fn run(opts: RunOptions, quiet: bool) -> anyhow::Result<()> {
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
        RunEnd::Complete { failed_steps: 0 } => Ok(()),
        RunEnd::Complete { failed_steps } => {
            crate::errln!(
                "{failed_steps} step(s) failed; the report's \"Errors and failed steps\" says why"
            );
            Err(Exit::StepsFailed(failed_steps).into())
        }
    }
}

fn check(path: &Path, last: Option<&Path>) -> anyhow::Result<()> {
    let (plan, _, _) = read_plan(path)?;
    let execs = plan.executions();
    crate::outln!("{}: valid", path.display());
    crate::outln!(
        "targets: {}",
        plan.targets
            .iter()
            .map(|t| format!("{} ({})", t.name, t.engine))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if plan.runs_linkbench() {
        let p = &plan.linkbench;
        let degree = match p.degree {
            workload::linkbench::model::Degree::Real => "out-degrees as measured".to_string(),
            workload::linkbench::model::Degree::Const(n) => format!("{n} links a node"),
        };
        let requests = match p.requests {
            0 => "for [duration] write".to_string(),
            n => format!("{n} requests each"),
        };
        crate::outln!(
            "scale: LinkBench ids {} … {} ({degree}, {} link types); {} loaders; {} requesters, {requests}{}; repeats {}",
            p.startid1,
            p.maxid1 - 1,
            p.link_type_count,
            p.loaders,
            p.requesters,
            if p.requestrate > 0 { format!(" at {} a second each", p.requestrate) } else { String::new() },
            plan.repeats
        );
    } else if plan.runs_insert_benchmark() {
        let p = &plan.insert_benchmark;
        crate::outln!(
            "scale: one table per client; l.i0 loads {} rows each ({} per commit), l.i1 adds and deletes {} ({} per commit), l.i2 {} ({} per commit); q-steps write {} rows per commit; clients {:?}; repeats {}",
            plan.rows, p.l_i0_commit, p.l_i1_rows, p.l_i1_commit, p.l_i2_rows, p.l_i2_commit, p.q_commit, plan.clients, plan.repeats
        );
    } else {
        crate::outln!(
            "scale: {} table(s) × {} rows; clients {:?}; repeats {}",
            plan.tables,
            plan.rows,
            plan.clients,
            plan.repeats
        );
    }
    let steps: Vec<String> = plan.steps.iter().map(|s| s.label()).collect();
    crate::outln!(
        "steps ({}, suite {}): {}",
        steps.len(),
        plan.suite,
        steps.join(" → ")
    );
    for why in plan.skipped() {
        crate::outln!("note: {why}");
    }
    for (i, p) in plan.phases.iter().enumerate() {
        let end = plan.phases.get(i + 1).map_or(plan.steps.len(), |n| n.first);
        crate::outln!(
            "phase {} ({}): {}",
            p.name,
            match &p.server {
                Some(c) => format!("restarts the server with {}", c.describe()),
                None => "on the server as it runs".into(),
            },
            steps[p.first..end].join(" → ")
        );
    }
    for h in &plan.hooks {
        crate::outln!(
            "hook {} {}: {} (timeout {})",
            match h.when {
                plan::When::Before => "before",
                plan::When::After => "after",
            },
            match &h.scope {
                plan::HookScope::Steps => "every step".to_string(),
                plan::HookScope::Step(s) => format!("step {s}"),
                plan::HookScope::Phase(p) => format!("phase {p}"),
            },
            match &h.action {
                plan::HookAction::Sql(q) => format!("sql `{q}`"),
                plan::HookAction::Shell(c) => format!("shell `{c}`"),
            },
            plan::human_duration(h.timeout_secs)
        );
    }
    crate::outln!(
        "{} step runs; {:.0} s of warm-ups, timed windows and settles, plus loads, steps that run until their work is done, and server starts",
        execs.len(),
        plan.estimated_secs()
    );
    noise_advice(&plan, last)
}

/// The newest results directory under `results/`, by its name (a UTC time).
fn newest_run() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("results")
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("run.json").is_file())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// How long steps must be for the noise an earlier run showed, and a
/// warning when the plan's timed steps are shorter.
fn noise_advice(plan: &Plan, last: Option<&Path>) -> anyhow::Result<()> {
    let dir = match last {
        Some(d) => d.to_path_buf(),
        None => match newest_run() {
            Some(d) => d,
            None => return Ok(()),
        },
    };
    let run = crate::results::load_run(&dir)
        .with_context(|| format!("--last {}: reading its results", dir.display()))?;
    let mut needs: Vec<(f64, String)> = run
        .steps
        .iter()
        .filter(|s| s.failed.is_none() && s.step.workload().is_some())
        .filter_map(|s| {
            let n = crate::measure::within::seconds_for(0.05, &s.second_rates())?;
            Some((
                n,
                format!("{} c{} on {}", s.step.label(), s.clients, s.target),
            ))
        })
        .collect();
    if needs.is_empty() {
        crate::outln!(
            "noise: {} has no step of 5 whole seconds or more to judge this machine's noise by",
            dir.display()
        );
        return Ok(());
    }
    needs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median = needs[needs.len() / 2].0;
    let worst = needs.last().expect("not empty");
    crate::outln!(
        "noise: in {}, a 5% change needed windows of about {median:.0} s to be significant within one run \
         (the median over {} steps; the noisiest, {}, needed {:.0} s)",
        dir.display(),
        needs.len(),
        worst.1,
        worst.0
    );
    for (class, name) in [
        (workload::DurationClass::Read, "read"),
        (workload::DurationClass::Write, "write"),
    ] {
        if let plan::StopSpec::Secs(secs) = plan.stop_for(class) {
            if secs < median && plan.repeats < 4 {
                crate::outln!(
                    "warning: the plan's {name} steps run {}, shorter than the {median:.0} s the noise \
                     last time called for: with one repeat, changes of 5% will read as not significant; lengthen \
                     [duration] {name}, or set repeats = 4 or more",
                    plan::human_duration(secs)
                );
            }
        }
    }
    Ok(())
}

fn list() {
    crate::outln!("Suites:");
    crate::outln!(
        "  sysbench  the standard sequence ({} steps): {}",
        sysbench::STANDARD_SEQUENCE.len(),
        sysbench::STANDARD_SEQUENCE.join(" → ")
    );
    crate::outln!(
        "  insert    the Insert Benchmark ({} steps): {}",
        workload::insert::SEQUENCE.len(),
        workload::insert::SEQUENCE.join(" → ")
    );
    crate::outln!(
        "  linkbench LinkBench ({} steps): {}",
        workload::linkbench::SEQUENCE.len(),
        workload::linkbench::SEQUENCE.join(" → ")
    );
    crate::outln!("\nWorkloads (name, group, how long it runs, what one event does):");
    for w in workload::all() {
        crate::outln!(
            "  {:<22} {:<16} {:<7} {}",
            w.meta().name,
            w.meta().group.name(),
            runs_for(w),
            w.meta().about
        );
    }
    crate::outln!(
        "\nParameters of the sysbench workloads, as sysbench's options: NAME[key=value,...], e.g. read-only-order[order=4,range=1000]:"
    );
    for (k, about) in sysbench::knobs::KEYS {
        crate::outln!("  {k:<22} {about}");
    }
    crate::outln!("\nLinkBench's parameters ([linkbench], the original's names and defaults):");
    for (k, about) in workload::linkbench::KEYS {
        crate::outln!("  {k:<22} {about}");
    }
    crate::outln!("\nMaintenance steps (timed; `relbench show NAME` prints their SQL):");
    for m in Maint::ALL {
        crate::outln!("  {:<22} {}", m.name(), m.about());
    }
    crate::outln!("\nSteps in a plan: \"load\", \"settle\", a maintenance step, or a workload, optionally tagged (\"scan:warm\").");
}

/// The plan duration a workload runs for, or "rows" for a step with a
/// fixed amount of work (the Insert Benchmark's loads and index build).
fn runs_for(w: &dyn workload::Workload) -> &'static str {
    let probe = workload::Scale::probe();
    if w.events(&probe, 1).is_some() {
        return "rows";
    }
    match w.meta().duration {
        workload::DurationClass::Read => "read",
        workload::DurationClass::Write => "write",
        workload::DurationClass::Insert => "insert",
    }
}

/// The tables each target of a plan creates, in its own dialect.
fn show_targets_load(name: &str, path: &Path, only: Option<&str>) -> anyhow::Result<()> {
    if name != "load" {
        bail!(
            "--plan shows the tables a plan's targets create: use `relbench show load --plan {}`",
            path.display()
        );
    }
    let (plan, _, _) = read_plan(path)?;
    let targets: Vec<_> = plan
        .targets
        .iter()
        .filter(|t| only.map_or(true, |n| n == t.name))
        .collect();
    if let (Some(n), true) = (only, targets.is_empty()) {
        let names: Vec<&str> = plan.targets.iter().map(|t| t.name.as_str()).collect();
        bail!(
            "the plan has no target \"{n}\"; its targets are {}",
            names.join(", ")
        );
    }
    for t in targets {
        crate::outln!("-- target {} ({})", t.name, t.engine);
        crate::outln!(
            "{}{};",
            sysbench::sql::create_table(t.engine.dialect(), 1),
            t.table_suffix()
        );
        crate::outln!("{}; -- after the rows", sysbench::sql::create_index(1));
        crate::outln!();
    }
    Ok(())
}

fn show(name: &str) -> anyhow::Result<()> {
    if name == "load" {
        for d in Dialect::ALL {
            crate::outln!("-- {}", d.name());
            crate::outln!("{};", sysbench::sql::create_table(d, 1));
            crate::outln!(
                "{}; -- {} rows per statement; rows per commit and bulk-load settings depend on the engine",
                sysbench::sql::insert_rows(d, 1, 2),
                sysbench::load::ROWS_PER_STATEMENT,
            );
            crate::outln!("{}; -- after the rows", sysbench::sql::create_index(1));
            if let Some(s) = sysbench::sql::after_load(d, 1) {
                crate::outln!("{s};");
            }
            crate::outln!();
        }
        return Ok(());
    }
    if let Some(m) = Maint::find(name) {
        crate::outln!("{} — a timed maintenance step: {}\n", m.name(), m.about());
        let tables: Vec<String> = (1..=2).map(sysbench::sql::table).collect();
        for d in Dialect::ALL {
            crate::outln!("-- {}", d.name());
            let statements = m.statements(d, &tables);
            if statements.is_empty() {
                crate::outln!("(no SQL: the managed server is stopped with its clean-shutdown signal and started again)");
            }
            for s in statements {
                crate::outln!("{s};");
            }
            crate::outln!();
        }
        crate::outln!("(shown for 2 tables; it runs once per table of the plan)");
        return Ok(());
    }
    let Some(w) = workload::find(name) else {
        let names = workload::all()
            .map(|w| w.meta().name)
            .chain(["load"])
            .chain(Maint::ALL.map(Maint::name));
        let hint = crate::util::did_you_mean(name, names).map_or_else(
            || "`relbench list` shows every workload".to_string(),
            |m| format!("did you mean \"{m}\"?"),
        );
        bail!("unknown workload \"{name}\"; {hint}");
    };
    crate::outln!(
        "{} — group {}, runs {}{}",
        w.meta().name,
        w.meta().group.name(),
        match runs_for(w) {
            "rows" => "until its rows are done".to_string(),
            class => format!("for the plan's {class} duration"),
        },
        if w.meta().transactional {
            "; one event is one transaction"
        } else {
            ""
        }
    );
    crate::outln!("{}\n", w.meta().about);
    for d in Dialect::ALL {
        crate::outln!("-- {}", d.name());
        for s in w.statements(d) {
            crate::outln!("{:<16} {}", s.class, s.sql);
        }
        crate::outln!();
    }
    Ok(())
}

fn init(file: &Path, force: bool) -> anyhow::Result<()> {
    if file.exists() && !force {
        bail!(
            "{} exists; pass --force to overwrite it, or name another file",
            file.display()
        );
    }
    std::fs::write(file, plan::EXAMPLE_PLAN)
        .with_context(|| format!("writing {}", file.display()))?;
    crate::outln!(
        "wrote {}; check it with `relbench check {}`",
        file.display(),
        file.display()
    );
    Ok(())
}
