//! The command line as clap reads it: the commands, their flags, and the
//! parsers of flag values; `mod.rs` resolves them into typed options.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::{Parser, Subcommand};

use crate::compare::{ComparisonSpec, Grouping};
use crate::render::Format;

pub(super) const EXIT_CODES: &str =
    "Exit codes: 0 done; 1 error; 2 bad command line or plan (nothing run); \
3 run finished but some steps failed; 130 interrupted (finished steps kept, --resume goes on).";

#[derive(Parser)]
#[command(
    name = "relbench",
    version,
    about = "Finds performance regressions between database builds and configurations.",
    after_help = EXIT_CODES
)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

/// One workload against one target, without a plan (the sysbench habit):
/// `--url URL` or `--sqlite FILE`, and `--workload NAME`.
#[derive(clap::Args, Default)]
pub(super) struct OneOff {
    /// A server someone else runs: mysql://, mariadb:// or postgres://USER@HOST[:PORT]/DB (no password in it).
    #[arg(long, value_name = "URL", conflicts_with_all = ["plan", "sqlite", "confirm"], help_heading = "One workload without a plan")]
    pub(super) url: Option<String>,
    /// The environment variable that holds the URL's password.
    #[arg(
        long,
        value_name = "VAR",
        requires = "url",
        help_heading = "One workload without a plan"
    )]
    pub(super) password_env: Option<String>,
    /// An embedded SQLite database file (made if missing; with --load).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["plan", "confirm"], help_heading = "One workload without a plan")]
    pub(super) sqlite: Option<PathBuf>,
    /// The workload, with parameters if any: point-query, read-only-order[order=4,range=1000].
    #[arg(
        long,
        value_name = "NAME",
        help_heading = "One workload without a plan"
    )]
    pub(super) workload: Option<String>,
    /// Client counts, comma-separated [default: 1].
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "N,...",
        help_heading = "One workload without a plan"
    )]
    pub(super) clients: Vec<u32>,
    /// How long the workload runs after its warm-up [default: 30s].
    #[arg(
        long,
        value_name = "DURATION",
        help_heading = "One workload without a plan"
    )]
    pub(super) time: Option<String>,
    /// The warm-up, excluded from every figure [default: 5s].
    #[arg(
        long,
        value_name = "DURATION",
        help_heading = "One workload without a plan"
    )]
    pub(super) warmup: Option<String>,
    /// Events per second across all clients (open loop), as sysbench's --rate.
    #[arg(long, value_name = "N", help_heading = "One workload without a plan")]
    pub(super) rate: Option<u64>,
    /// Print the step's figures as one JSON document on stdout (and
    /// nothing else there): throughput, errors, latency min, mean and
    /// percentiles, for scripts.
    #[arg(long, help_heading = "One workload without a plan")]
    pub(super) json: bool,
    /// Create and fill the tables first (sysbench's prepare); without it
    /// the workload runs on the tables there.
    #[arg(long, help_heading = "One workload without a plan")]
    pub(super) load: bool,
    /// Tables [default: 1].
    #[arg(long, value_name = "N", help_heading = "One workload without a plan")]
    pub(super) tables: Option<u32>,
    /// Rows per table [default: 100000].
    #[arg(long, value_name = "N", help_heading = "One workload without a plan")]
    pub(super) rows: Option<u64>,
    /// A sysbench Lua script, run as sysbench runs it; everything after
    /// it is sysbench's: `--script oltp_read_write.lua --threads=8
    /// --time=60 --table-size=100000 prepare|run|cleanup` (last on the
    /// line).
    #[arg(
        long,
        value_name = "FILE [SYSBENCH OPTIONS] [COMMAND]",
        num_args = 1..,
        allow_hyphen_values = true,
        conflicts_with_all = ["workload", "load", "tables", "rows", "clients", "time", "warmup", "rate"],
        help_heading = "One workload without a plan"
    )]
    pub(super) script: Vec<String>,
}

/// The key a plan error points at on its line: a table's name
/// (`[[steps]]`), the last `key =` before its column (`rate` in
/// `steps = [{ step = "x", rate = 0 }]` for an error at the 0), or the
/// line's first key.
fn key_at(line: &str, column: usize) -> &str {
    let header = line.trim().trim_start_matches('[').trim_end_matches(']');
    if line.trim_start().starts_with('[') {
        return header.trim();
    }
    let upto = line.get(..column.saturating_sub(1)).unwrap_or(line);
    let before = match upto.rsplit_once('=') {
        Some((k, _)) => k,
        None => line.split_once('=').map_or("", |(k, _)| k),
    };
    before
        .trim_end()
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("")
}

impl OneOff {
    /// The plan's problems said of the flags that made it: a one-off run's
    /// user wrote no plan, so `<command line>:5:10: insert is not a
    /// duration` (once per key `--time` fills) points nowhere.
    pub(super) fn flag_errors(text: &str, errors: &crate::workload::check::PlanErrors) -> String {
        let lines: Vec<&str> = text.lines().collect();
        let mut said: Vec<(String, String, Option<String>)> = Vec::new();
        for e in &errors.0 {
            let line = lines.get(e.line.saturating_sub(1)).copied().unwrap_or("");
            let key = e.key.unwrap_or_else(|| key_at(line, e.column));
            let flag = match key {
                "clients" => "--clients",
                "read" | "write" | "insert" => "--time",
                "warmup" => "--warmup",
                "tables" => "--tables",
                "rows" => "--rows",
                "rate" => "--rate",
                "steps" | "step" => "--workload",
                "url" | "engine" | "name" => "--url",
                "path" => "--sqlite",
                "password_env" => "--password-env",
                _ => "the command line",
            };
            let message = e
                .message
                .strip_prefix(&format!("{key} is "))
                .or_else(|| e.message.strip_prefix(&format!("{key} ")))
                .unwrap_or(&e.message)
                .to_string();
            let one = (flag.to_string(), message, e.help.clone());
            if !said.contains(&one) {
                said.push(one);
            }
        }
        let mut out = format!(
            "the command line has {} problem{}; nothing was run",
            said.len(),
            if said.len() == 1 { "" } else { "s" }
        );
        for (flag, message, help) in said {
            out += &format!("\n{flag}: {message}");
            if let Some(h) = help {
                out += &format!("\n  help: {h}");
            }
        }
        out
    }

    pub(super) fn given(&self) -> bool {
        self.url.is_some() || self.sqlite.is_some()
    }

    /// The plan these flags stand for, as TOML: validated like any plan,
    /// recorded with the results, and what `--resume` reads back.
    pub(super) fn plan_text(&self) -> anyhow::Result<String> {
        use toml::Value;
        let mut t = match self.script.split_first() {
            Some((file, args)) => {
                if !self.given() {
                    bail!("--script runs against --url URL or --sqlite FILE, given before it");
                }
                super::sysbench_args::plan(file, args)?
            }
            None => self.workload_plan()?,
        };
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

    /// A built-in workload's plan (`--workload`), without its target.
    fn workload_plan(&self) -> anyhow::Result<toml::Table> {
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
        Ok(t)
    }
}

/// How a one-off run's plan is named in messages and results.
pub(super) const ONE_OFF_SOURCE: &str = "<command line>";

// Parsed once per process: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub(super) enum HistoryCommand {
    /// Import result directories (idempotent: adding one again adds nothing).
    Add {
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// The build a run's target is: `NAME` (a run of one target) or
        /// `TARGET=NAME`, repeatable [default: the version the server reported].
        #[arg(long, value_name = "NAME")]
        build: Vec<String>,
        /// Where these builds come in the history's order (builds without
        /// one follow, in the natural order of their names).
        #[arg(long, value_name = "N")]
        order: Option<f64>,
        #[command(flatten)]
        at: HistoryFlag,
    },
    /// Find the change points of every series, print them, and record them.
    Changes {
        /// The false discovery rate over all series tested.
        #[arg(long, default_value_t = 0.05)]
        q: f64,
        /// Builds a side a change point is tested with.
        #[arg(long, default_value_t = 30)]
        window: usize,
        /// Print acknowledged and ignored points too.
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        at: HistoryFlag,
    },
    /// Write the history as history.md, .html and .json.
    Report {
        /// [default: results/history-report]
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        at: HistoryFlag,
    },
    /// The change-point search alone, on series given as JSON
    /// (`{"q":0.05,"window":30,"series":[{"id":1,"builds":[[v,…],…],"floor":null}]}`):
    /// what `bench/changepoints.py` compares with Apache Otava.
    #[command(hide = true)]
    Detect { file: PathBuf },
    /// Acknowledge change points by id (or ignore them with --ignore).
    Ack {
        #[arg(required = true)]
        ids: Vec<i64>,
        #[arg(long)]
        ignore: bool,
        #[command(flatten)]
        at: HistoryFlag,
    },
}

#[derive(clap::Args)]
pub(super) struct BisectArgs {
    /// The plan: its steps, and either one target per build (named by
    /// --builds) or one managed target whose basedir each build replaces.
    pub(super) plan: PathBuf,
    /// The builds in order: names of the plan's targets, or basedirs.
    #[arg(long, value_delimiter = ',', required = true)]
    pub(super) builds: Vec<String>,
    /// The step whose throughput changed (as `relbench check` lists it).
    #[arg(long)]
    pub(super) step: String,
    /// The good and bad builds [default: the first and the last].
    #[arg(long)]
    pub(super) good: Option<String>,
    #[arg(long)]
    pub(super) bad: Option<String>,
    /// Repeats a build gets in a round, and the most it gets.
    #[arg(long, default_value_t = 4)]
    pub(super) repeats: u32,
    #[arg(long, default_value_t = 12)]
    pub(super) max_repeats: usize,
    /// Where the rounds' results go [default: results/bisect-<UTC time>].
    #[arg(long)]
    pub(super) out: Option<PathBuf>,
    /// Once a culprit is found, run the step on it and the build before
    /// it once more with profiles (`[profile]`, a profiled repeat, in a
    /// window of at least 2 s), and say which functions and wait sites
    /// moved.
    #[arg(long)]
    pub(super) profile: bool,
}

#[derive(clap::Args)]
pub(super) struct HistoryFlag {
    /// The history: a SQLite file, or postgres://user@host/db (password
    /// from PGPASSWORD) [default: results/history.sqlite].
    #[arg(long, value_name = "PATH|URL")]
    pub(super) history: Option<String>,
}

/// `relbench run`: a plan, a workload without one, a resumed run or a
/// confirmation.
#[derive(clap::Args)]
pub(super) struct RunArgs {
    /// The plan file (TOML); `relbench init` writes an example.
    pub(super) plan: Option<PathBuf>,
    /// Results directory [default: results/<UTC time>].
    #[arg(long)]
    pub(super) out: Option<PathBuf>,
    /// Finish the run in --out, skipping the steps it already wrote.
    #[arg(long)]
    pub(super) resume: bool,
    /// Print only the final report and errors.
    #[arg(long, short)]
    pub(super) quiet: bool,
    /// The study's time budget for a plan with `repeats = "auto"`, e.g.
    /// 3h: no round of added repeats is begun that would go past it
    /// (replaces the plan's `[adaptive] budget`; recorded with the run).
    #[arg(long, value_name = "DURATION", conflicts_with_all = ["resume", "confirm"])]
    pub(super) budget: Option<String>,
    /// Add repeats to the run in DIR for the steps its report could not
    /// judge (disturbed, or past 5% but not significant), the targets
    /// interleaved, until each has enough for a rank test (4).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["plan", "out", "resume"])]
    pub(super) confirm: Option<PathBuf>,
    /// Go on with a run (--resume, a shard run again, --confirm) on a
    /// machine it was not measured on: recorded as a second host, whose
    /// results are compared only with the base measured on it. Without
    /// it such a run is refused.
    #[arg(long)]
    pub(super) new_host: bool,
    /// Where the data relbench makes for targets whose plan names no
    /// place goes (managed servers' datadirs, SQLite files) [default:
    /// OUT/data]: a node's local disk when --out is a shared volume, so
    /// that the benchmark does not measure the network filesystem.
    #[arg(long, value_name = "DIR")]
    pub(super) data_dir: Option<PathBuf>,
    /// A line of each step's measured rate this often, e.g. 1s
    /// (sysbench's --report-interval), on stderr.
    #[arg(long, value_name = "DURATION")]
    pub(super) report_interval: Option<String>,
    /// Append the run's events to FILE as JSON lines, one object per
    /// event as it happens (steps, windows' edges with the server's pid,
    /// progress once a second, results, the run's end): for a CI log or
    /// a dashboard. docs/guide/events.md lists them.
    #[arg(long, value_name = "FILE")]
    pub(super) events: Option<PathBuf>,
    /// Run one part of the plan: I/N (part I of N, from 1), or `env`
    /// to read it from a Slurm array task or a Kubernetes Indexed Job.
    /// The bases run on every part; each other target on one. Needs
    /// --out; the same command again resumes it. `relbench merge`
    /// joins the parts.
    #[arg(long, value_name = "I/N|env", conflicts_with = "confirm")]
    pub(super) shard: Option<String>,
    /// Run share I of M of every step's clients (clients I, I+M, …),
    /// one process per client host, against the plan's URL targets;
    /// the shares meet in the target database before each window.
    /// `relbench merge` adds their results up exactly.
    #[arg(long, value_name = "I/M", conflicts_with_all = ["confirm", "shard"])]
    pub(super) client_share: Option<String>,
    /// The name all shares of one study are given, new for each
    /// study [default: $SLURM_JOB_ID].
    #[arg(long, value_name = "ID", requires = "client_share")]
    pub(super) barrier: Option<String>,
    /// How long a share waits for the others at a barrier before it
    /// gives the step up [default: 30m].
    #[arg(long, value_name = "DURATION", requires = "client_share")]
    pub(super) barrier_timeout: Option<String>,
    /// Add the run to this history as it finishes (a file, or
    /// postgres://…): a nightly job is one command.
    #[arg(long, value_name = "PATH|URL")]
    pub(super) history: Option<String>,
    /// With --history: the build this run's target is
    /// (`NAME`, or `TARGET=NAME`, repeatable) [default: its version].
    #[arg(long, value_name = "NAME", requires = "history")]
    pub(super) build: Vec<String>,
    /// With --history: where the build comes in the history's order.
    #[arg(long, value_name = "N", requires = "history")]
    pub(super) order: Option<f64>,
    /// Judge the run as a merge request's gate when it ends (`relbench
    /// gate` on its results): gate.md, gate.xml and gate.json in --out,
    /// exit 0 passed, 1 a regression, 3 a step failed, 4 undecided.
    #[arg(long, conflicts_with_all = ["confirm", "shard", "client_share"])]
    pub(super) gate: bool,
    /// With --gate: the target judged [default: the one target besides
    /// the base].
    #[arg(long, value_name = "NAME", requires = "gate")]
    pub(super) candidate: Option<String>,
    #[command(flatten)]
    pub(super) one_off: OneOff,
}

/// `relbench host drift`'s options.
#[derive(clap::Args, Debug, Clone, Default)]
pub(super) struct DriftArgs {
    /// `drift`: how long to probe [default: 60s].
    #[arg(long = "for", value_name = "DURATION")]
    pub(super) probe_for: Option<String>,
    /// `drift`: the windows to judge, as long as a plan's steps
    /// [default: 5s].
    #[arg(long, value_name = "DURATION")]
    pub(super) window: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum HostAction {
    /// Set the performance governor, boost off, transparent huge pages on
    /// madvise, swappiness 1 — where this machine has them.
    Tune,
    /// Put back what `tune` changed.
    Reset,
    /// Probe how far this machine's own speed wanders between windows
    /// (every CPU at once, the same work each tick) and say what that
    /// allows: the rounds a change needs to be found, identical targets
    /// to be shown the same.
    Drift,
}

// Parsed once per process; the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub(super) enum Command {
    /// Run a plan; without one, the built-in quick plan (two SQLite configurations).
    Run(RunArgs),
    /// A study's history: runs kept in a database, change points found.
    #[command(subcommand)]
    History(HistoryCommand),
    /// Find the build a step's change came in, among ordered builds,
    /// by measuring them (Pinpoint's approach).
    Bisect(BisectArgs),
    /// A merge request's gate on a finished run: the candidate's steps
    /// against the reference's (the base), held to the plan's `[gate]`
    /// allowances; writes gate.md, gate.xml (JUnit) and gate.json into the
    /// run and exits 0 (passed), 1 (a regression), 3 (a step failed) or 4
    /// (undecided). `run --gate` runs and judges in one command.
    Gate {
        /// The run's results directory.
        dir: PathBuf,
        /// The target judged [default: the one target besides the base].
        #[arg(long)]
        candidate: Option<String>,
    },
    /// For `git bisect run`: run the plan against the build just made and
    /// exit 0 if the step is like the good build's results, 1 if like the
    /// bad build's, 125 if it cannot tell.
    BisectCheck {
        plan: PathBuf,
        #[arg(long)]
        step: String,
        /// Results directories of the good and the bad build (`relbench run`).
        #[arg(long)]
        good: PathBuf,
        #[arg(long)]
        bad: PathBuf,
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Join the results directories of a sharded run (`run --shard I/N`)
    /// into one, and write its report: every target against the base
    /// measured on its own host.
    Merge {
        /// The shards' results directories, one per shard (or the client
        /// shares', one per share).
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Client shares: the log `relbench sample` wrote on the server
        /// host, for the server's costs per operation.
        #[arg(long, value_name = "DIR")]
        server_samples: Option<PathBuf>,
        /// The merged results directory (new, or an earlier merge's).
        #[arg(long)]
        out: PathBuf,
    },
    /// A stored profile in the terminal: the functions and wait sites of
    /// one target's step (`[profile]` in the plan), or their change
    /// against another target's.
    Profile {
        /// A results directory (`relbench run`).
        dir: PathBuf,
        #[arg(long)]
        target: String,
        /// The step, as the report names it (`point-query`, or
        /// `point-query c4` with several client counts).
        #[arg(long)]
        step: String,
        /// Another target of the run, to show the change against.
        #[arg(long)]
        against: Option<String>,
        /// How many functions to show (at most the report's 12).
        #[arg(long, default_value_t = 12)]
        top: usize,
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
        /// One report.html that needs nothing beside it: every chart inline
        /// and every table in the page, no script (larger: a 100-target
        /// report is 11.6 MB instead of under 4).
        #[arg(long)]
        self_contained: bool,
    },
    /// The host settings that bend a benchmark (governor, boost, SMT, huge
    /// pages, swappiness, mitigations, …) with what a benchmark host should
    /// have; as root, `tune` sets the usual ones and `reset` puts back what
    /// was there.
    Host {
        #[arg(value_enum)]
        action: Option<HostAction>,
        #[command(flatten)]
        drift: DriftArgs,
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
    /// On the server host of a study whose steps run from several client
    /// hosts (`run --client-share`): log the machine and the server's
    /// processes until Ctrl-C, SIGTERM, --for or the server's end, for
    /// `relbench merge --server-samples DIR` to divide by every share's
    /// operations.
    Sample {
        /// The server's process (mysqld, mariadbd, PostgreSQL's postmaster);
        /// its descendants count too.
        #[arg(long)]
        pid: u32,
        /// The server's datadir: the devices under it are read for IO.
        #[arg(long)]
        datadir: Option<PathBuf>,
        /// A new directory for the log.
        #[arg(long)]
        out: PathBuf,
        /// How often to read [default: 100ms].
        #[arg(long, value_name = "DURATION")]
        every: Option<String>,
        /// Stop after this long [default: until Ctrl-C, SIGTERM, or the
        /// server's end].
        #[arg(long = "for", value_name = "DURATION")]
        for_: Option<String>,
    },
    /// Validate a plan and show what it would run, without running it.
    Check {
        /// The plan file, or a results directory (its run's plan, as recorded).
        plan: PathBuf,
        /// Print the schedule: every execution in run order with its
        /// identity (target/repeat/[phase]step/clients), stop rule, seed
        /// and hooks; the same plan gives the same list on any host.
        #[arg(long)]
        schedule: bool,
        /// An earlier run whose per-second noise says how long steps must
        /// be [default: the newest run under results/].
        #[arg(long, value_name = "DIR")]
        last: Option<PathBuf>,
        /// Print which targets each of N shards runs (`run --shard I/N`)
        /// and its expected time; with --schedule, each shard's executions
        /// with the seed its shards will draw.
        #[arg(long, value_name = "N")]
        shards: Option<u32>,
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

pub(super) fn parse_grouping(s: &str) -> Result<Grouping, String> {
    match s {
        "kind" => Ok(Grouping::Kind),
        "position" => Ok(Grouping::Position),
        _ => Err(format!("unknown grouping \"{s}\"; use kind or position")),
    }
}

/// `[TITLE=]BASE[:T1,T2,...]`.
pub(super) fn parse_compare(s: &str) -> Result<ComparisonSpec, String> {
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
/// A shard's own report shows the targets it ran: a comparison's others
/// are on other shards (a comparison left with its base alone is left out).
pub(super) fn plan_comparisons(dir: &Path) -> Vec<ComparisonSpec> {
    // A merge's plan is its first shard's; its own comparisons are whole.
    let merged = dir.join(crate::results::merge::MERGE_FILE).exists();
    crate::results::merge::first_run_info(dir)
        .map(|info| {
            let shard = info.shard.filter(|_| !merged);
            info.plan
                .comparisons
                .into_iter()
                .filter_map(|mut c| {
                    if let Some(s) = &shard {
                        let all = c.targets.is_empty();
                        c.targets.retain(|t| s.targets.contains(t));
                        if !all && c.targets.iter().all(|t| *t == c.base) {
                            return None;
                        }
                    }
                    Some(ComparisonSpec::new(c.title, c.base, c.targets))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The comparisons of a report configuration file.
pub(super) fn read_comparisons(path: &Path) -> anyhow::Result<Vec<ComparisonSpec>> {
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

pub(super) fn parse_format(s: &str) -> Result<Format, String> {
    Format::parse(s)
        .ok_or_else(|| format!("unknown format \"{s}\"; use md, csv, json, html or txt"))
}
