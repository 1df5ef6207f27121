//! Parsing and validating a plan file. Every error names the file, line and
//! column, what is wrong and what would be right; all errors of a plan are
//! reported at once.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::{
    Access, Comparison, Hook, HookAction, HookScope, Interval, Maint, Managed, Phase, Plan,
    ServerChange, Settle, Step, StepKind, StopSpec, TargetSpec, When,
};
use crate::db::{server, sqlite, tls::Tls, url::ServerUrl, EngineKind};
use crate::util::did_you_mean;
use crate::workload::script::ScriptSpec;
use crate::workload::{self, dist, sysbench};

/// One problem in a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub help: Option<String>,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.line, self.column, self.message
        )?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

/// All problems found in a plan.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct PlanErrors(pub Vec<PlanError>);

impl fmt::Display for PlanErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0.len();
        writeln!(
            f,
            "the plan has {n} problem{}; nothing was run",
            if n == 1 { "" } else { "s" }
        )?;
        for e in &self.0 {
            writeln!(f, "{e}")?;
        }
        Ok(())
    }
}

// The file's shape. `deny_unknown_fields` turns a misspelt key into an error
// that lists the keys that are allowed.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    suite: Option<Spanned<String>>,
    steps: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    clients: Option<Spanned<Vec<Spanned<i64>>>>,
    repeats: Option<Spanned<i64>>,
    seed: Option<Spanned<i64>>,
    distribution: Option<Spanned<String>>,
    scale: Option<RawScale>,
    duration: Option<RawDuration>,
    settle: Option<RawSettle>,
    insert: Option<RawInsert>,
    linkbench: Option<RawLinkbench>,
    target: Option<Spanned<Vec<Spanned<RawTarget>>>>,
    comparison: Option<Vec<RawComparison>>,
    phase: Option<Spanned<Vec<RawPhase>>>,
    hook: Option<Vec<Spanned<RawHook>>>,
    workload: Option<Vec<RawWorkload>>,
}

/// A `[[workload]]`: the plan's own SQL.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    name: Spanned<String>,
    about: Option<String>,
    setup: Option<Vec<String>>,
    setup_mysql: Option<Vec<String>>,
    setup_postgres: Option<Vec<String>>,
    setup_sqlite: Option<Vec<String>>,
    statement: Option<Spanned<Vec<RawStatement>>>,
    transaction: Option<Vec<RawTransaction>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStatement {
    name: Spanned<String>,
    sql: Spanned<String>,
    sql_mysql: Option<Spanned<String>>,
    sql_postgres: Option<Spanned<String>>,
    sql_sqlite: Option<Spanned<String>>,
    bind: Option<BTreeMap<Spanned<String>, Spanned<String>>>,
    returns: Option<Spanned<toml::Value>>,
    weight: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTransaction {
    name: Spanned<String>,
    statements: Vec<Spanned<String>>,
    weight: Option<Spanned<i64>>,
}

/// A `[[phase]]`: steps that run on the data the phases before left, after
/// a server restart when it says so.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPhase {
    name: Spanned<String>,
    steps: Spanned<Vec<Spanned<toml::Value>>>,
    restart: Option<Spanned<bool>>,
    config: Option<Spanned<String>>,
    server_args: Option<Spanned<Vec<String>>>,
    malloc: Option<Spanned<String>>,
    interval: Option<Spanned<toml::Value>>,
}

/// A `[[hook]]`: a statement or a command before or after steps or a phase.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHook {
    when: Spanned<String>,
    step: Option<Spanned<String>>,
    phase: Option<Spanned<String>>,
    sql: Option<Spanned<String>>,
    shell: Option<Spanned<String>>,
    timeout: Option<Spanned<toml::Value>>,
}

/// A `[[comparison]]`: which targets the report compares with which base.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawComparison {
    title: Option<String>,
    base: Spanned<String>,
    targets: Option<Vec<Spanned<String>>>,
}

/// The Insert Benchmark's sizes; `[scale] rows` is l.i0's rows per client.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInsert {
    l_i1_rows: Option<Spanned<i64>>,
    l_i2_rows: Option<Spanned<i64>>,
    l_i0_commit: Option<Spanned<i64>>,
    l_i1_commit: Option<Spanned<i64>>,
    l_i2_commit: Option<Spanned<i64>>,
    q_commit: Option<Spanned<i64>>,
    data_min: Option<Spanned<i64>>,
    data_max: Option<Spanned<i64>>,
    shared_table: Option<bool>,
}

/// `[linkbench]`: the original's property names.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLinkbench {
    startid1: Option<Spanned<i64>>,
    maxid1: Option<Spanned<i64>>,
    loaders: Option<Spanned<i64>>,
    requesters: Option<Spanned<i64>>,
    requests: Option<Spanned<i64>>,
    requestrate: Option<Spanned<i64>>,
    link_type_count: Option<Spanned<i64>>,
    nlinks_func: Option<Spanned<String>>,
    nlinks_default: Option<Spanned<i64>>,
    link_datasize: Option<Spanned<toml::Value>>,
    node_datasize: Option<Spanned<toml::Value>>,
    addlink: Option<Spanned<toml::Value>>,
    deletelink: Option<Spanned<toml::Value>>,
    updatelink: Option<Spanned<toml::Value>>,
    countlink: Option<Spanned<toml::Value>>,
    getlink: Option<Spanned<toml::Value>>,
    getlinklist: Option<Spanned<toml::Value>>,
    getnode: Option<Spanned<toml::Value>>,
    addnode: Option<Spanned<toml::Value>>,
    updatenode: Option<Spanned<toml::Value>>,
    deletenode: Option<Spanned<toml::Value>>,
    getlinklist_history: Option<Spanned<toml::Value>>,
    range_limit: Option<Spanned<i64>>,
    link_multiget_dist_min: Option<Spanned<i64>>,
    link_multiget_dist_max: Option<Spanned<i64>>,
    link_multiget_dist_prob: Option<Spanned<toml::Value>>,
    read_shape: Option<Spanned<toml::Value>>,
    read_uncorr_blend: Option<Spanned<toml::Value>>,
    write_shape: Option<Spanned<toml::Value>>,
    write_uncorr_blend: Option<Spanned<toml::Value>>,
    node_read_shape: Option<Spanned<toml::Value>>,
    node_update_shape: Option<Spanned<toml::Value>>,
    loader_chunk_size: Option<Spanned<i64>>,
    bulk_insert_batch: Option<Spanned<i64>>,
    check_ids: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScale {
    tables: Option<Spanned<i64>>,
    rows: Option<Spanned<i64>>,
    random_pct: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDuration {
    warmup: Option<Spanned<toml::Value>>,
    read: Option<Spanned<toml::Value>>,
    write: Option<Spanned<toml::Value>>,
    insert: Option<Spanned<toml::Value>>,
    events: Option<Spanned<i64>>,
    interval: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSettle {
    base: Option<Spanned<toml::Value>>,
    per_million_rows: Option<Spanned<toml::Value>>,
    max: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    name: Spanned<String>,
    engine: Spanned<String>,
    // SQLite
    path: Option<Spanned<String>>,
    pragmas: Option<Spanned<BTreeMap<Spanned<String>, Spanned<toml::Value>>>>,
    // Managed servers
    basedir: Option<Spanned<String>>,
    config: Option<Spanned<String>>,
    datadir: Option<Spanned<String>>,
    port: Option<Spanned<i64>>,
    user: Option<Spanned<String>>,
    args: Option<Spanned<Vec<String>>>,
    malloc: Option<Spanned<String>>,
    transport: Option<Spanned<String>>,
    start_timeout: Option<Spanned<toml::Value>>,
    // Servers by URL
    url: Option<Spanned<String>>,
    password_env: Option<Spanned<String>>,
    // MySQL and MariaDB
    storage_engine: Option<Spanned<String>>,
    // Servers, managed or by URL
    tls: Option<Spanned<String>>,
    // Any engine: appended to every CREATE TABLE
    table_options: Option<Spanned<String>>,
    // Any target: run it this many times as A/A copies.
    copies: Option<Spanned<i64>>,
}

/// The most A/A copies of one target.
const MAX_COPIES: i64 = 5;

const DEFAULT_ROWS: i64 = 100_000;
const DEFAULT_SECS: f64 = 30.0;
const DEFAULT_WARMUP: f64 = 5.0;
const MAX_CLIENTS: i64 = 1024;
/// The longest duration a plan may give anything: a week.
const MAX_SECS: f64 = 7.0 * 86400.0;
/// The shortest measured window of a step.
const MIN_STEP_SECS: f64 = 0.1;
/// Below the prime the zipfian scatter multiplies by (workload::dist).
const MAX_ROWS: i64 = 2_000_000_000;

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
    /// Relative paths in the plan are relative to this directory.
    dir: &'a Path,
    errors: Vec<PlanError>,
}

impl Ctx<'_> {
    fn err(&mut self, span: Range<usize>, message: impl Into<String>, help: Option<String>) {
        let (line, column) = line_col(self.text, span.start);
        self.errors.push(PlanError {
            file: self.file.to_string(),
            line,
            column,
            message: message.into(),
            help,
        });
    }

    fn positive(&mut self, v: &Spanned<i64>, what: &str, max: i64) -> Option<i64> {
        let n = *v.get_ref();
        if n < 1 || n > max {
            self.err(
                v.span(),
                format!("{what} must be between 1 and {max}, not {n}"),
                None,
            );
            None
        } else {
            Some(n)
        }
    }

    /// A duration in seconds, from `min` to [`MAX_SECS`].
    fn duration(
        &mut self,
        v: &Option<Spanned<toml::Value>>,
        what: &str,
        default: f64,
        min: f64,
    ) -> f64 {
        let Some(v) = v else { return default };
        let secs = match v.get_ref() {
            toml::Value::String(s) => super::parse_duration(s),
            toml::Value::Integer(i) if *i >= 0 => Some(*i as f64),
            toml::Value::Float(f) if *f >= 0.0 && f.is_finite() => Some(*f),
            _ => None,
        };
        match secs {
            Some(s) if s > MAX_SECS => {
                self.err(
                    v.span(),
                    format!("{what} must be at most 7 days, not {}", v.get_ref()),
                    Some("a longer study is several runs, or repeats".into()),
                );
                default
            }
            Some(s) if s >= min => s,
            Some(_) => {
                self.err(
                    v.span(),
                    format!("{what} must be at least {}", super::human_duration(min)),
                    Some("a shorter window measures timer placement, not the server; for example \"30s\"".into()),
                );
                default
            }
            None => {
                self.err(
                    v.span(),
                    format!("{what} is not a duration: {}", v.get_ref()),
                    Some("write a number of seconds or a string such as \"500ms\", \"30s\", \"2m\", \"1h\"".into()),
                );
                default
            }
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Parses and validates a plan. `file` names it in error messages; files
/// it names are looked up relative to `dir`.
pub fn parse(text: &str, file: &str, dir: &Path) -> Result<Plan, PlanErrors> {
    let raw: RawPlan = toml::from_str(text).map_err(|e| {
        let (line, column) = e.span().map_or((1, 1), |s| line_col(text, s.start));
        let message = e.message().trim().to_string();
        let help = if message.starts_with("unknown field") {
            Some("check the spelling; `relbench init` writes an example plan with every key".into())
        } else {
            None
        };
        PlanErrors(vec![PlanError {
            file: file.to_string(),
            line,
            column,
            message,
            help,
        }])
    })?;
    let mut cx = Ctx {
        file,
        text,
        dir,
        errors: Vec::new(),
    };
    let plan = validate(&mut cx, raw);
    // Report in file order, whatever order the checks ran in.
    cx.errors.sort_by_key(|e| (e.line, e.column));
    if cx.errors.is_empty() {
        Ok(plan)
    } else {
        Err(PlanErrors(cx.errors))
    }
}

fn validate(cx: &mut Ctx<'_>, raw: RawPlan) -> Plan {
    // The plan's own workloads first: its steps may name them.
    let workloads = scripts(cx, &raw);
    let (suite, steps, phases) = steps(cx, &raw);

    let clients = match &raw.clients {
        None => vec![1],
        Some(list) if list.get_ref().is_empty() => {
            cx.err(
                list.span(),
                "clients is empty",
                Some("give at least one client count, e.g. clients = [1, 2, 4]".into()),
            );
            vec![1]
        }
        Some(list) => {
            let mut out: Vec<u32> = Vec::new();
            for c in list.get_ref() {
                if let Some(n) = cx.positive(c, "a client count", MAX_CLIENTS) {
                    if out.contains(&(n as u32)) {
                        cx.err(
                            c.span(),
                            format!("client count {n} is listed twice"),
                            Some("list each client count once".into()),
                        );
                    } else {
                        out.push(n as u32);
                    }
                }
            }
            out
        }
    };
    let repeats = raw
        .repeats
        .as_ref()
        .and_then(|r| cx.positive(r, "repeats", 1000))
        .unwrap_or(1) as u32;
    let seed = match &raw.seed {
        Some(s) if *s.get_ref() < 0 => {
            cx.err(s.span(), "seed must not be negative", None);
            1
        }
        Some(s) => *s.get_ref() as u64,
        None => 1,
    };

    let distribution = match &raw.distribution {
        None => dist::Kind::Uniform,
        Some(d) => dist::Kind::parse(d.get_ref()).unwrap_or_else(|| {
            cx.err(
                d.span(),
                format!("unknown distribution \"{}\"", d.get_ref()),
                Some(format!("use one of: {}", dist::Kind::NAMES.join(", "))),
            );
            dist::Kind::Uniform
        }),
    };
    let (tables, rows) = match &raw.scale {
        None => (1, DEFAULT_ROWS),
        Some(s) => (
            s.tables
                .as_ref()
                .and_then(|t| cx.positive(t, "tables", 100_000))
                .unwrap_or(1),
            s.rows
                .as_ref()
                .and_then(|r| cx.positive(r, "rows", MAX_ROWS))
                .unwrap_or(DEFAULT_ROWS),
        ),
    };
    // Every range and in-list must fit in the table, or its row-count check
    // would fail on every event.
    let widest = steps
        .iter()
        .filter_map(|s| s.workload())
        .filter_map(|w| sysbench::micro(w.meta().name))
        .max_by_key(|m| m.max_range());
    if let Some(m) = widest {
        if (m.max_range() as i64) > rows {
            let span = raw
                .scale
                .as_ref()
                .and_then(|s| s.rows.as_ref())
                .map_or(0..0, |r| r.span());
            cx.err(
                span,
                format!(
                    "rows = {rows} is too small: {} reads {} rows at a time",
                    m.name,
                    m.max_range()
                ),
                Some(format!(
                    "set rows to at least {} under [scale]",
                    m.max_range()
                )),
            );
        }
    }

    let d = raw.duration.as_ref();
    let warmup_secs = cx.duration(
        &d.and_then(|d| d.warmup.clone()),
        "warmup",
        DEFAULT_WARMUP,
        0.0,
    );
    let mut stops = [
        ("read", DEFAULT_SECS),
        ("write", DEFAULT_SECS),
        ("insert", DEFAULT_SECS),
    ]
    .map(|(what, default)| {
        let v = d.and_then(|d| match what {
            "read" => d.read.clone(),
            "write" => d.write.clone(),
            _ => d.insert.clone(),
        });
        StopSpec::Secs(cx.duration(&v, what, default, MIN_STEP_SECS))
    });
    if let Some(ev) = d.and_then(|d| d.events.as_ref()) {
        if let Some(n) = cx.positive(ev, "events", i64::MAX) {
            stops = [StopSpec::Events(n as u64); 3];
        }
    }
    let [read, write, insert] = stops;
    let linkbench = linkbench_params(cx, &raw);
    let steps = linkbench_steps(cx, &raw, steps, &linkbench);
    let (steps, phases) = intervals(cx, &raw, steps, phases, [read, write, insert], &linkbench);

    let s = raw.settle.as_ref();
    let settle = Settle {
        base_secs: cx.duration(&s.and_then(|s| s.base.clone()), "settle base", 5.0, 0.0),
        per_million_rows_secs: cx.duration(
            &s.and_then(|s| s.per_million_rows.clone()),
            "per_million_rows",
            1.0,
            0.0,
        ),
        max_secs: cx.duration(&s.and_then(|s| s.max.clone()), "settle max", 60.0, 0.0),
    };

    let insert_benchmark = insert_params(cx, &raw);
    if steps.iter().any(|s| {
        s.workload()
            .is_some_and(|w| w.meta().group == workload::Group::Insert)
    }) {
        if let Some(first) = steps.iter().find(|s| s.kind != StepKind::Settle) {
            let name = first.name().to_string();
            if !first.workload().is_some_and(|w| w.meta().creates_tables) {
                let span = raw.steps.as_ref().map_or(0..0, |s| s.span());
                cx.err(
                    span,
                    format!("the Insert Benchmark's steps start with \"l.i0\", which creates its tables; this plan starts with \"{name}\""),
                    Some("put \"l.i0\" first".into()),
                );
            }
        }
    }

    let random_pct = match raw.scale.as_ref().and_then(|s| s.random_pct.as_ref()) {
        None => 100,
        Some(v) if (0..=100).contains(v.get_ref()) => *v.get_ref() as u8,
        Some(v) => {
            cx.err(
                v.span(),
                format!("random_pct must be between 0 and 100, not {}", v.get_ref()),
                Some("the percent of each generated string that is random; the rest repeats and compresses".into()),
            );
            100
        }
    };
    let targets = targets(cx, &raw);
    restarts(cx, &raw, &steps, &targets);
    let hooks = hooks(cx, &raw, &steps, &phases);
    let comparisons = comparisons(cx, &raw, &targets);
    Plan {
        workloads,
        phases,
        hooks,
        random_pct,
        insert_benchmark,
        linkbench,
        suite,
        steps,
        tables: tables as u32,
        rows,
        clients,
        repeats,
        seed,
        distribution,
        warmup_secs,
        read,
        write,
        insert,
        settle,
        targets,
        comparisons,
    }
}

/// The plan's `[[comparison]]` tables, each naming targets of the plan.
/// Splits each timed workload step longer than its interval (the phase's,
/// or `[duration] interval`) into consecutive intervals, each a step.
fn intervals(
    cx: &mut Ctx<'_>,
    raw: &RawPlan,
    steps: Vec<Step>,
    mut phases: Vec<Phase>,
    stops: [StopSpec; 3],
    linkbench: &workload::linkbench::Params,
) -> (Vec<Step>, Vec<Phase>) {
    let plan_interval = raw
        .duration
        .as_ref()
        .and_then(|d| d.interval.clone())
        .map(|v| {
            (
                cx.duration(&Some(v.clone()), "interval", 0.0, MIN_STEP_SECS),
                v.span(),
            )
        });
    let phase_intervals: Vec<Option<(f64, Range<usize>)>> = raw
        .phase
        .as_ref()
        .map(|p| {
            p.get_ref()
                .iter()
                .map(|p| {
                    p.interval.clone().map(|v| {
                        (
                            cx.duration(&Some(v.clone()), "interval", 0.0, MIN_STEP_SECS),
                            v.span(),
                        )
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    if plan_interval.is_none() && phase_intervals.iter().all(Option::is_none) {
        return (steps, phases);
    }
    if let (StopSpec::Events(_), Some((_, span))) = (
        stops[0],
        plan_interval
            .clone()
            .or(phase_intervals.iter().flatten().next().cloned()),
    ) {
        cx.err(
            span,
            "interval splits a step's time, but [duration] events stops steps by count",
            Some("remove `events`, or `interval`".into()),
        );
        return (steps, phases);
    }
    let mut out = Vec::new();
    let mut firsts = vec![0; phases.len()];
    for (i, step) in steps.into_iter().enumerate() {
        let pi = phases.iter().rposition(|p| p.first <= i);
        for (k, p) in phases.iter().enumerate() {
            if p.first == i {
                firsts[k] = out.len();
            }
        }
        let every = pi
            .and_then(|p| phase_intervals.get(p).cloned().flatten())
            .or(plan_interval.clone())
            .map(|(s, _)| s);
        let timed = step.workload().and_then(|w| {
            // Steps with a fixed amount of work stop when it is done,
            // whatever the scale.
            let scale = workload::Scale {
                linkbench: *linkbench,
                ..workload::Scale::probe()
            };
            w.events(&scale, 1)
                .is_none()
                .then(|| match w.meta().duration {
                    workload::DurationClass::Read => stops[0],
                    workload::DurationClass::Write => stops[1],
                    workload::DurationClass::Insert => stops[2],
                })
        });
        match (every, timed) {
            (Some(every), Some(StopSpec::Secs(total))) if total > every * 1.001 => {
                let of = (total / every).round().max(1.0) as u32;
                let ms = (total * 1e3 / f64::from(of)).round() as u64;
                for n in 1..=of {
                    out.push(Step {
                        interval: Some(Interval { n, of, ms }),
                        ..step.clone()
                    });
                }
            }
            _ => out.push(step),
        }
    }
    for (p, f) in phases.iter_mut().zip(firsts) {
        p.first = f;
    }
    (out, phases)
}

/// The `[[workload]]`s, checked (functions, placeholders, weights,
/// transactions) with positions inside their strings, and registered so
/// that steps can name them.
fn scripts(cx: &mut Ctx<'_>, raw: &RawPlan) -> Vec<ScriptSpec> {
    use crate::workload::script::{self, spec};
    let mut out: Vec<ScriptSpec> = Vec::new();
    for w in raw.workload.iter().flatten() {
        let name = w.name.get_ref();
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            cx.err(
                w.name.span(),
                format!("workload name \"{name}\" may have 1 to 64 letters, digits, '-' and '_'"),
                None,
            );
            continue;
        }
        if ["load", "settle"].contains(&name.as_str())
            || Maint::find(name).is_some()
            || workload::all().any(|b| b.meta().name == name)
            || out.iter().any(|o| &o.name == name)
        {
            cx.err(
                w.name.span(),
                format!("workload \"{name}\" is already a step's name"),
                Some("give the plan's workload a name of its own".into()),
            );
            continue;
        }
        let Some(list) = &w.statement else {
            cx.err(
                w.name.span(),
                format!("workload \"{name}\" has no [[workload.statement]]"),
                Some("give it at least one statement: name, sql, bind, returns, weight".into()),
            );
            continue;
        };
        let mut statements = Vec::new();
        for st in list.get_ref() {
            // A string's text starts one byte after its opening quote.
            let at = |s: &Spanned<String>, offset: usize| {
                let start = s.span().start + 1 + offset;
                start..start + 1
            };
            let mut bind: Vec<(String, spec::Gen)> = Vec::new();
            for (k, v) in st.bind.iter().flatten() {
                match spec::Gen::parse(v.get_ref()) {
                    Ok(g) => bind.push((k.get_ref().clone(), g)),
                    Err(e) => cx.err(
                        at(v, e.at),
                        e.message,
                        Some(format!("the functions: {}", spec::FUNCTIONS.join(", "))),
                    ),
                }
            }
            let variants = [
                Some(&st.sql),
                st.sql_mysql.as_ref(),
                st.sql_postgres.as_ref(),
                st.sql_sqlite.as_ref(),
            ];
            for sql in variants.into_iter().flatten() {
                let found = spec::placeholders(sql.get_ref());
                if found.len() > spec::MAX_PARAMS {
                    cx.err(
                        sql.span(),
                        format!(
                            "a statement takes at most {} placeholders",
                            spec::MAX_PARAMS
                        ),
                        None,
                    );
                }
                for (offset, p) in &found {
                    if !st.bind.iter().flatten().any(|(k, _)| k.get_ref() == p) {
                        cx.err(
                            at(sql, *offset),
                            format!("placeholder :{p} has no binding"),
                            Some(format!(
                                "bind it, e.g. bind = {{ {p} = \"uniform(1, rows)\" }}"
                            )),
                        );
                    }
                }
            }
            for (k, _) in st.bind.iter().flatten() {
                if !spec::placeholders(st.sql.get_ref())
                    .iter()
                    .any(|(_, p)| p == k.get_ref())
                {
                    cx.err(k.span(), format!("binding \"{}\" is not a placeholder of the statement (write :{} in its sql)", k.get_ref(), k.get_ref()), None);
                }
            }
            let returns = match st.returns.as_ref().map(|r| (r, r.get_ref())) {
                None => spec::Returns::Any,
                Some((_, toml::Value::Integer(n))) if *n >= 0 => spec::Returns::Exactly(*n as u64),
                Some((r, v)) => match v.as_str().and_then(spec::Returns::parse) {
                    Some(x) => x,
                    None => {
                        cx.err(
                            r.span(),
                            format!("returns takes a row count, \">=N\" or \"any\", not {v}"),
                            Some("returns = 1, returns = \">=1\" or returns = \"any\"".into()),
                        );
                        spec::Returns::Any
                    }
                },
            };
            let weight = match &st.weight {
                None => 1,
                Some(w) if *w.get_ref() >= 1 && *w.get_ref() <= 1_000_000 => *w.get_ref() as u32,
                Some(w) => {
                    cx.err(w.span(), format!("weight must be between 1 and 1000000, not {}", w.get_ref()), Some("leave a statement out of the mix by removing it, or give it to a transaction only".into()));
                    1
                }
            };
            if statements
                .iter()
                .any(|s: &spec::StatementSpec| &s.name == st.name.get_ref())
            {
                cx.err(
                    st.name.span(),
                    format!("statement \"{}\" appears twice", st.name.get_ref()),
                    None,
                );
            }
            let plain = |o: &Option<Spanned<String>>| o.as_ref().map(|s| s.get_ref().clone());
            statements.push(spec::StatementSpec {
                name: st.name.get_ref().clone(),
                sql: spec::Variants {
                    all: st.sql.get_ref().clone(),
                    mysql: plain(&st.sql_mysql),
                    postgres: plain(&st.sql_postgres),
                    sqlite: plain(&st.sql_sqlite),
                },
                bind,
                returns,
                weight,
            });
        }
        if statements.is_empty() {
            cx.err(
                list.span(),
                format!("workload \"{name}\" has no statements"),
                None,
            );
            continue;
        }
        let mut transactions = Vec::new();
        for t in w.transaction.iter().flatten() {
            for s in &t.statements {
                if !statements.iter().any(|x| &x.name == s.get_ref()) {
                    let names: Vec<&str> = statements.iter().map(|x| x.name.as_str()).collect();
                    cx.err(s.span(), format!("transaction \"{}\" names statement \"{}\", which the workload does not have", t.name.get_ref(), s.get_ref()), Some(format!("its statements: {}", names.join(", "))));
                }
            }
            let weight = match &t.weight {
                None => 1,
                Some(w) if *w.get_ref() >= 1 && *w.get_ref() <= 1_000_000 => *w.get_ref() as u32,
                Some(w) => {
                    cx.err(
                        w.span(),
                        format!("weight must be between 1 and 1000000, not {}", w.get_ref()),
                        None,
                    );
                    1
                }
            };
            if t.statements.is_empty() {
                cx.err(
                    t.name.span(),
                    format!("transaction \"{}\" has no statements", t.name.get_ref()),
                    None,
                );
            }
            transactions.push(spec::TxSpec {
                name: t.name.get_ref().clone(),
                statements: t.statements.iter().map(|s| s.get_ref().clone()).collect(),
                weight,
            });
        }
        let spec = ScriptSpec {
            name: name.clone(),
            about: w
                .about
                .clone()
                .unwrap_or_else(|| format!("the plan's workload {name}")),
            statements,
            transactions,
            setup: spec::Variants {
                all: w.setup.clone().unwrap_or_default(),
                mysql: w.setup_mysql.clone(),
                postgres: w.setup_postgres.clone(),
                sqlite: w.setup_sqlite.clone(),
            },
        };
        script::register(&spec);
        out.push(spec);
    }
    out
}

/// A restart, or dropping the database, needs a server relbench started.
fn restarts(cx: &mut Ctx<'_>, raw: &RawPlan, steps: &[Step], targets: &[TargetSpec]) {
    let Some(m) = steps
        .iter()
        .filter_map(|s| s.maintenance())
        .find(|m| m.needs_managed_server())
    else {
        return;
    };
    let what = match m {
        Maint::Restart => "restarts the server",
        _ => "drops the database",
    };
    let span = raw
        .phase
        .as_ref()
        .map(|p| p.span())
        .or(raw.steps.as_ref().map(|s| s.span()))
        .unwrap_or(0..0);
    for t in targets {
        let why = match (&t.access, t.engine.is_server(), m) {
            (Access::Managed(_), _, _) => continue,
            (_, false, Maint::Restart) => "an embedded engine has no server to restart",
            (_, true, Maint::Restart) => {
                "it is reached by URL, and relbench restarts only a server it started"
            }
            (_, false, _) => "an embedded engine's database is its file; use drop-table",
            (_, true, _) => "it is reached by URL, and relbench drops only a database it created",
        };
        cx.err(
            span.clone(),
            format!("the sequence {what}, but target \"{}\" cannot do that: {why}", t.name),
            Some("give the target a basedir so that relbench runs its server, or run the phases without restarts (restart = false, no config, server_args or malloc in [[phase]], no \"restart\" step)".into()),
        );
    }
}

/// The `[[hook]]`s: when, around what, what to run, for how long at most.
fn hooks(cx: &mut Ctx<'_>, raw: &RawPlan, steps: &[Step], phases: &[Phase]) -> Vec<Hook> {
    let mut out = Vec::new();
    for h in raw.hook.iter().flatten() {
        let span = h.span();
        let h = h.get_ref();
        let when = match h.when.get_ref().as_str() {
            "before" => When::Before,
            "after" => When::After,
            other => {
                cx.err(
                    h.when.span(),
                    format!("unknown hook time \"{other}\""),
                    Some("use when = \"before\" or \"after\"".into()),
                );
                continue;
            }
        };
        let scope = match (&h.step, &h.phase) {
            (Some(_), Some(p)) => {
                cx.err(
                    p.span(),
                    "a hook runs around a step or a phase, not both",
                    None,
                );
                continue;
            }
            (Some(st), None) => {
                let name = st.get_ref();
                if !steps.iter().any(|s| s.name() == name) {
                    let names: Vec<&str> = steps.iter().map(|s| s.name()).collect();
                    cx.err(
                        st.span(),
                        format!("the hook's step \"{name}\" is not in the sequence"),
                        Some(match did_you_mean(name, names.iter().copied()) {
                            Some(m) => format!("did you mean \"{m}\"?"),
                            None => format!("the sequence's steps: {}", names.join(", ")),
                        }),
                    );
                    continue;
                }
                HookScope::Step(name.clone())
            }
            (None, Some(p)) => {
                let name = p.get_ref();
                if !phases.iter().any(|q| &q.name == name) {
                    let names: Vec<&str> = phases.iter().map(|q| q.name.as_str()).collect();
                    cx.err(
                        p.span(),
                        format!("the hook's phase \"{name}\" is not in the plan"),
                        Some(if names.is_empty() {
                            "the plan has no [[phase]]".into()
                        } else {
                            format!("its phases: {}", names.join(", "))
                        }),
                    );
                    continue;
                }
                HookScope::Phase(name.clone())
            }
            (None, None) => HookScope::Steps,
        };
        let action = match (&h.sql, &h.shell) {
            (Some(q), None) if !q.get_ref().trim().is_empty() => {
                HookAction::Sql(q.get_ref().clone())
            }
            (None, Some(c)) if !c.get_ref().trim().is_empty() => {
                HookAction::Shell(c.get_ref().clone())
            }
            _ => {
                cx.err(
                    span,
                    "a hook runs one `sql` statement or one `shell` command",
                    Some("give exactly one of sql = \"…\" and shell = \"…\"".into()),
                );
                continue;
            }
        };
        let timeout_secs = cx.duration(&h.timeout, "hook timeout", 60.0, 0.1);
        out.push(Hook {
            when,
            scope,
            action,
            timeout_secs,
        });
    }
    out
}

fn comparisons(cx: &mut Ctx<'_>, raw: &RawPlan, targets: &[TargetSpec]) -> Vec<Comparison> {
    let mut out = Vec::new();
    for c in raw.comparison.iter().flatten() {
        let mut ok = true;
        for name in std::iter::once(&c.base).chain(c.targets.iter().flatten()) {
            if !targets.iter().any(|t| &t.name == name.get_ref()) {
                let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
                let help = did_you_mean(name.get_ref(), names.iter().copied()).map_or_else(
                    || format!("the plan's targets are {}", names.join(", ")),
                    |m| format!("did you mean \"{m}\"?"),
                );
                cx.err(
                    name.span(),
                    format!(
                        "the comparison names \"{}\", which is not a target of this plan",
                        name.get_ref()
                    ),
                    Some(help),
                );
                ok = false;
            }
        }
        if ok {
            out.push(Comparison {
                title: c.title.clone(),
                base: c.base.get_ref().clone(),
                targets: c
                    .targets
                    .iter()
                    .flatten()
                    .map(|t| t.get_ref().clone())
                    .collect(),
            });
        }
    }
    out
}

/// A number from a plan value that may be written as an integer or not.
fn number(
    cx: &mut Ctx<'_>,
    v: &Spanned<toml::Value>,
    what: &str,
    min: f64,
    max: f64,
) -> Option<f64> {
    let x = match v.get_ref() {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) if f.is_finite() => Some(*f),
        _ => None,
    };
    match x {
        Some(x) if (min..=max).contains(&x) => Some(x),
        _ => {
            cx.err(
                v.span(),
                format!(
                    "{what} must be a number from {min} to {max}, not {}",
                    v.get_ref()
                ),
                None,
            );
            None
        }
    }
}

/// `[linkbench]`, checked, over the original's defaults.
fn linkbench_params(cx: &mut Ctx<'_>, raw: &RawPlan) -> workload::linkbench::Params {
    use workload::linkbench::{model::Degree, Op};
    let mut p = workload::linkbench::Params::default();
    let Some(r) = &raw.linkbench else { return p };
    let int = |cx: &mut Ctx<'_>,
               v: &Option<Spanned<i64>>,
               what: &str,
               min: i64,
               max: i64,
               out: &mut i64| {
        if let Some(v) = v {
            let n = *v.get_ref();
            if (min..=max).contains(&n) {
                *out = n;
            } else {
                cx.err(
                    v.span(),
                    format!("{what} must be from {min} to {max}, not {n}"),
                    None,
                );
            }
        }
    };
    let mut ints = [
        p.startid1,
        p.maxid1,
        i64::from(p.loaders),
        i64::from(p.requesters),
        p.requests as i64,
        i64::from(p.requestrate),
        i64::from(p.link_type_count),
        i64::from(p.range_limit),
        i64::from(p.multiget_min),
        i64::from(p.multiget_max),
        i64::from(p.loader_chunk_size),
        i64::from(p.bulk_insert_batch),
        p.check_ids as i64,
    ];
    for (i, (v, what, min, max)) in [
        (&r.startid1, "startid1", 1, 1 << 40),
        (&r.maxid1, "maxid1", 2, 1 << 40),
        (&r.loaders, "loaders", 1, 1024),
        (&r.requesters, "requesters", 1, 1024),
        (&r.requests, "requests", 0, 1 << 40),
        (&r.requestrate, "requestrate", 0, 10_000_000),
        (&r.link_type_count, "link_type_count", 1, 1000),
        (&r.range_limit, "range_limit", 1, 1_000_000),
        (&r.link_multiget_dist_min, "link_multiget_dist_min", 1, 1024),
        (&r.link_multiget_dist_max, "link_multiget_dist_max", 1, 1024),
        (&r.loader_chunk_size, "loader_chunk_size", 1, 1_000_000),
        // 7 parameters a link: 4096 rows stay under SQLite's 32,766.
        (&r.bulk_insert_batch, "bulk_insert_batch", 1, 4096),
        (&r.check_ids, "check_ids", 1, 1 << 40),
    ]
    .into_iter()
    .enumerate()
    {
        int(cx, v, what, min, max, &mut ints[i]);
    }
    let [startid1, maxid1, loaders, requesters, requests, requestrate, types, range_limit, mg_min, mg_max, chunk, batch, check] =
        ints;
    p.startid1 = startid1;
    p.maxid1 = maxid1;
    (p.loaders, p.requesters) = (loaders as u32, requesters as u32);
    (p.requests, p.requestrate) = (requests as u64, requestrate as u32);
    p.link_type_count = types as u32;
    p.range_limit = range_limit as u32;
    (p.multiget_min, p.multiget_max) = (mg_min as u32, mg_max as u32);
    (p.loader_chunk_size, p.bulk_insert_batch) = (chunk as u32, batch as u32);
    p.check_ids = check as u64;
    if p.maxid1 <= p.startid1 {
        let span = r
            .maxid1
            .as_ref()
            .or(r.startid1.as_ref())
            .map_or(0..0, |v| v.span());
        cx.err(
            span,
            format!(
                "maxid1 = {} must be above startid1 = {}",
                p.maxid1, p.startid1
            ),
            Some("the load makes nodes startid1 .. maxid1 - 1".into()),
        );
    }
    if p.multiget_max < p.multiget_min {
        let span = r.link_multiget_dist_max.as_ref().map_or(0..0, |v| v.span());
        cx.err(
            span,
            "link_multiget_dist_max is below link_multiget_dist_min",
            None,
        );
    }
    let nlinks_default = r.nlinks_default.as_ref().map(|v| (v, *v.get_ref()));
    match (r.nlinks_func.as_ref(), nlinks_default) {
        (None, None) => {}
        (Some(f), d) if f.get_ref() == "real" => {
            if let Some((v, _)) = d {
                cx.err(v.span(), "nlinks_default is for nlinks_func = \"const\"", Some("remove it, or set nlinks_func = \"const\"".into()));
            }
        }
        (Some(f), Some((v, n))) if f.get_ref() == "const" => {
            if (0..=1_000_000).contains(&n) {
                p.degree = Degree::Const(n as u32);
            } else {
                cx.err(v.span(), format!("nlinks_default must be from 0 to 1000000, not {n}"), None);
            }
        }
        (Some(f), None) if f.get_ref() == "const" => cx.err(
            f.span(),
            "nlinks_func = \"const\" needs nlinks_default, the links of every node",
            Some("for example nlinks_default = 4".into()),
        ),
        (Some(f), _) => cx.err(
            f.span(),
            format!("unknown nlinks_func \"{}\"", f.get_ref()),
            Some("\"real\" (the measured out-degrees, the original's default) or \"const\" with nlinks_default".into()),
        ),
        (None, Some((v, _))) => cx.err(
            v.span(),
            "nlinks_default is for nlinks_func = \"const\"",
            Some("add nlinks_func = \"const\"".into()),
        ),
    }
    for (v, what, max, out) in [
        (
            &r.link_datasize,
            "link_datasize",
            255.0,
            &mut p.link_datasize,
        ),
        (
            &r.node_datasize,
            "node_datasize",
            1048576.0,
            &mut p.node_datasize,
        ),
        (
            &r.getlinklist_history,
            "getlinklist_history",
            100.0,
            &mut p.getlinklist_history,
        ),
        (
            &r.link_multiget_dist_prob,
            "link_multiget_dist_prob",
            1.0,
            &mut p.multiget_p,
        ),
        (&r.read_shape, "read_shape", 10.0, &mut p.read_shape),
        (
            &r.read_uncorr_blend,
            "read_uncorr_blend",
            100.0,
            &mut p.read_uncorr_blend,
        ),
        (&r.write_shape, "write_shape", 10.0, &mut p.write_shape),
        (
            &r.write_uncorr_blend,
            "write_uncorr_blend",
            100.0,
            &mut p.write_uncorr_blend,
        ),
        (
            &r.node_read_shape,
            "node_read_shape",
            10.0,
            &mut p.node_read_shape,
        ),
        (
            &r.node_update_shape,
            "node_update_shape",
            10.0,
            &mut p.node_update_shape,
        ),
    ] {
        if let Some(x) = v.as_ref().and_then(|v| number(cx, v, what, 0.0, max)) {
            *out = x;
        }
    }
    if p.multiget_p <= 0.0 {
        let span = r
            .link_multiget_dist_prob
            .as_ref()
            .map_or(0..0, |v| v.span());
        cx.err(span, "link_multiget_dist_prob must be above 0", None);
    }
    let weights = [
        &r.addnode,
        &r.updatenode,
        &r.deletenode,
        &r.getnode,
        &r.addlink,
        &r.deletelink,
        &r.updatelink,
        &r.countlink,
        &r.getlink,
        &r.getlinklist,
    ];
    let mut any = None;
    for (i, v) in weights.iter().enumerate() {
        if let Some(v) = v {
            any = Some(v.span());
            if let Some(x) = number(cx, v, Op::ALL[i].key(), 0.0, 1e9) {
                p.mix[i] = x;
            }
        }
    }
    if let Some(span) = any {
        if p.mix.iter().sum::<f64>() <= 0.0 {
            cx.err(
                span,
                "the operation weights add to 0: no request would run",
                Some("give at least one of addnode … getlinklist a weight above 0".into()),
            );
        }
    }
    p
}

/// LinkBench's steps run at the plan's `loaders` and `requesters` (the
/// check on one connection) unless a step gives its own `clients`; a
/// `requestrate` (per requester, as the original's) becomes the request
/// step's rate.
fn linkbench_steps(
    cx: &mut Ctx<'_>,
    raw: &RawPlan,
    mut steps: Vec<Step>,
    p: &workload::linkbench::Params,
) -> Vec<Step> {
    use workload::linkbench::Kind;
    for step in &mut steps {
        let Some(kind) = step
            .workload()
            .and_then(|w| workload::linkbench::kind(w.meta().name))
        else {
            continue;
        };
        let clients = match kind {
            Kind::Load => p.loaders,
            Kind::Request => p.requesters,
            Kind::Check => 1,
        };
        let counts = step
            .client_counts
            .get_or_insert_with(|| vec![clients])
            .clone();
        if kind == Kind::Request && p.requestrate > 0 && step.rate.is_none() {
            if let [n] = counts[..] {
                step.rate = Some(u64::from(p.requestrate) * u64::from(n));
            } else {
                let span = raw
                    .linkbench
                    .as_ref()
                    .and_then(|r| r.requestrate.as_ref())
                    .map_or(0..0, |v| v.span());
                cx.err(
                    span,
                    format!(
                        "requestrate is per requester, and {} runs at several client counts",
                        step.label()
                    ),
                    Some(
                        "give the step one client count, or its own `rate` (all clients together)"
                            .into(),
                    ),
                );
            }
        }
    }
    steps
}

fn insert_params(cx: &mut Ctx<'_>, raw: &RawPlan) -> workload::insert::Params {
    let mut p = workload::insert::Params::default();
    let Some(r) = &raw.insert else { return p };
    let mut set = |v: &Option<Spanned<i64>>, what: &str, max: i64, out: &mut i64| {
        if let Some(n) = v.as_ref().and_then(|v| cx.positive(v, what, max)) {
            *out = n;
        }
    };
    let mut rows = [p.l_i1_rows, p.l_i2_rows];
    set(&r.l_i1_rows, "l_i1_rows", MAX_ROWS, &mut rows[0]);
    set(&r.l_i2_rows, "l_i2_rows", MAX_ROWS, &mut rows[1]);
    let mut small = [
        p.l_i0_commit,
        p.l_i1_commit,
        p.l_i2_commit,
        p.q_commit,
        p.data_min,
        p.data_max,
    ]
    .map(i64::from);
    for (i, (v, what, max)) in [
        (&r.l_i0_commit, "l_i0_commit", 1000),
        (&r.l_i1_commit, "l_i1_commit", 1000),
        (&r.l_i2_commit, "l_i2_commit", 1000),
        (&r.q_commit, "q_commit", 1000),
        (&r.data_min, "data_min", 4000),
        (&r.data_max, "data_max", 4000),
    ]
    .into_iter()
    .enumerate()
    {
        set(v, what, max, &mut small[i]);
    }
    [p.l_i1_rows, p.l_i2_rows] = rows;
    p.shared_table = r.shared_table.unwrap_or(false);
    let [a, b, c, q, dmin, dmax] = small.map(|v| v as u32);
    (p.l_i0_commit, p.l_i1_commit, p.l_i2_commit, p.q_commit) = (a, b, c, q);
    (p.data_min, p.data_max) = (dmin, dmax);
    if p.data_min > p.data_max {
        let span = r.data_min.as_ref().map_or(0..0, |v| v.span());
        cx.err(
            span,
            format!(
                "data_min = {} is above data_max = {}",
                p.data_min, p.data_max
            ),
            Some("data_min is the shortest `data` value, data_max the longest".into()),
        );
    }
    p
}

/// The sequence: the suite's, the plan's `steps`, or its phases' steps one
/// after another (a restarting phase's first step is its `restart`). The
/// phases come back with the index of their first step.
fn steps(cx: &mut Ctx<'_>, raw: &RawPlan) -> (String, Vec<Step>, Vec<Phase>) {
    let standard = || -> Vec<Step> {
        sysbench::STANDARD_SEQUENCE
            .iter()
            .map(|s| parse_step(s).expect("the standard sequence is valid"))
            .collect()
    };
    if let Some(phases) = &raw.phase {
        if let Some(s) = raw
            .suite
            .as_ref()
            .map(|s| s.span())
            .or(raw.steps.as_ref().map(|s| s.span()))
        {
            cx.err(
                s,
                "give the steps in each [[phase]], not in `suite` or `steps` as well",
                Some("move the steps into the first phase".into()),
            );
        }
        let mut items: Vec<(Range<usize>, String, Extra)> = Vec::new();
        let mut out_phases = Vec::new();
        for p in phases.get_ref() {
            let name = p.name.get_ref();
            if !valid_tag(name) {
                cx.err(
                    p.name.span(),
                    format!("phase name \"{name}\" may have 1 to 32 letters, digits, '-' and '_'"),
                    None,
                );
            } else if out_phases.iter().any(|q: &Phase| &q.name == name) {
                cx.err(
                    p.name.span(),
                    format!("phase \"{name}\" appears twice"),
                    Some("give each phase its own name".into()),
                );
            }
            let change = phase_server(cx, p);
            let first = items.len();
            if change.is_some() {
                items.push((p.name.span(), format!("restart:{name}"), Extra::default()));
            }
            if p.steps.get_ref().is_empty() && change.is_none() {
                cx.err(
                    p.steps.span(),
                    format!("phase \"{name}\" has no steps"),
                    Some("list its steps, or restart = true to only restart the server".into()),
                );
            }
            items.extend(p.steps.get_ref().iter().filter_map(|v| entry(cx, v)));
            out_phases.push(Phase {
                name: name.clone(),
                first,
                server: change,
            });
        }
        if phases.get_ref().is_empty() {
            cx.err(phases.span(), "the plan's phase list is empty", None);
        }
        let steps = custom_steps(cx, &items, phases.span());
        return ("custom".into(), steps, out_phases);
    }
    let (suite, steps) = match (&raw.suite, &raw.steps) {
        (Some(_), Some(st)) => {
            cx.err(
                st.span(),
                "give either `suite` or `steps`, not both",
                Some("remove `suite` to run your own steps, or `steps` to run the suite".into()),
            );
            ("sysbench".into(), standard())
        }
        (None, None) => ("sysbench".into(), standard()),
        (Some(s), None) => {
            match s.get_ref().as_str() {
                "sysbench" => {}
                "insert" => {
                    let steps = workload::insert::SEQUENCE
                        .iter()
                        .map(|s| parse_step(s).expect("the sequence is valid"))
                        .collect();
                    return ("insert".into(), steps, Vec::new());
                }
                "linkbench" => {
                    let steps = workload::linkbench::SEQUENCE
                        .iter()
                        .map(|s| parse_step(s).expect("the sequence is valid"))
                        .collect();
                    return ("linkbench".into(), steps, Vec::new());
                }
                other => cx.err(
                    s.span(),
                    format!("unknown suite \"{other}\""),
                    Some("the built-in suites are: sysbench, insert, linkbench".into()),
                ),
            }
            ("sysbench".into(), standard())
        }
        (None, Some(list)) => {
            let items: Vec<(Range<usize>, String, Extra)> =
                list.get_ref().iter().filter_map(|v| entry(cx, v)).collect();
            if items.is_empty() {
                cx.err(
                    list.span(),
                    "steps is empty",
                    Some("start with \"load\", then the workloads to run".into()),
                );
            }
            ("custom".into(), custom_steps(cx, &items, list.span()))
        }
    };
    (suite, steps, Vec::new())
}

/// The server settings a phase restarts with, when it restarts.
fn phase_server(cx: &mut Ctx<'_>, p: &RawPhase) -> Option<ServerChange> {
    let config = p
        .config
        .as_ref()
        .and_then(|c| existing(cx, c, "config file", false));
    let malloc = p
        .malloc
        .as_ref()
        .and_then(|m| existing(cx, m, "malloc library", false));
    let args = p
        .server_args
        .as_ref()
        .map(|a| a.get_ref().clone())
        .unwrap_or_default();
    let changes = p.config.is_some() || p.malloc.is_some() || p.server_args.is_some();
    match &p.restart {
        Some(r) if !*r.get_ref() && changes => {
            cx.err(
                r.span(),
                "restart = false, but the phase changes the server's settings, which needs a restart",
                Some("remove restart = false, or the phase's config, server_args and malloc".into()),
            );
            None
        }
        Some(r) if !*r.get_ref() => None,
        None if !changes => None,
        _ => Some(ServerChange {
            config,
            args,
            malloc,
        }),
    }
}

fn valid_tag(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 32
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// What a step's table gives besides its name: how it runs.
#[derive(Default)]
struct Extra {
    clients: Option<Vec<u32>>,
    rate: Option<u64>,
    once: bool,
    reconnect: bool,
    plain: bool,
}

impl Extra {
    /// Sets them on the step, where they apply to it.
    fn apply(&self, cx: &mut Ctx<'_>, span: &Range<usize>, step: &mut Step) {
        if self.clients.is_none()
            && self.rate.is_none()
            && !self.once
            && !self.reconnect
            && !self.plain
        {
            return;
        }
        let Some(w) = step.workload() else {
            cx.err(
                span.clone(),
                format!(
                    "\"{}\" is not a workload: clients, rate, once, reconnect and prepared apply to workloads",
                    step.name()
                ),
                None,
            );
            return;
        };
        let meta = w.meta();
        if meta.group == workload::Group::Insert {
            cx.err(
                span.clone(),
                "the Insert Benchmark's steps run at the plan's client count and their own rates",
                Some(
                    "set clients for the whole plan, and the benchmark's rates under [insert]"
                        .into(),
                ),
            );
            return;
        }
        if self.once && w.rows_per_event(&workload::Scale::probe()).is_none() {
            cx.err(
                span.clone(),
                format!(
                    "once applies to the full scan (each client scans one table once), not to {}",
                    meta.name
                ),
                Some("for a fixed amount of work use [duration] events".into()),
            );
        }
        if self.once && self.rate.is_some() {
            cx.err(
                span.clone(),
                "a step runs once per client or at a rate, not both",
                None,
            );
        }
        step.client_counts = self.clients.clone();
        step.rate = self.rate;
        step.once = self.once;
        step.reconnect = self.reconnect;
        step.plain = self.plain;
    }
}

/// One entry of `steps`: a name (`"scan:warm"`), or a table with the
/// name under `step` and how it runs (`clients`, `rate`, `once`) and the
/// workload's parameters as keys (`order = 4`).
fn entry(cx: &mut Ctx<'_>, v: &Spanned<toml::Value>) -> Option<(Range<usize>, String, Extra)> {
    let span = v.span();
    let table = match v.get_ref() {
        toml::Value::String(s) => return Some((span, s.clone(), Extra::default())),
        toml::Value::Table(t) => t,
        other => {
            cx.err(
                span,
                format!("a step is a name or a table, not {}", other.type_str()),
                Some("for example \"point-query\" or { step = \"scan\", once = true }".into()),
            );
            return None;
        }
    };
    let Some(toml::Value::String(name)) = table.get("step") else {
        cx.err(
            span,
            "a step's table names its step: step = \"NAME\"",
            Some("for example { step = \"read-only-order\", order = 4, clients = [8] }".into()),
        );
        return None;
    };
    let mut extra = Extra::default();
    let mut knobs: Vec<String> = Vec::new();
    for (k, val) in table {
        match (k.as_str(), val) {
            ("step", _) => {}
            ("clients", toml::Value::Array(a)) => {
                let counts: Option<Vec<u32>> = a
                    .iter()
                    .map(|c| {
                        c.as_integer()
                            .filter(|n| (1..=MAX_CLIENTS).contains(n))
                            .map(|n| n as u32)
                    })
                    .collect();
                match counts {
                    Some(c) if !c.is_empty() => extra.clients = Some(c),
                    _ => cx.err(
                        span.clone(),
                        format!("clients takes a list of counts from 1 to {MAX_CLIENTS}"),
                        Some("for example clients = [8, 48]".into()),
                    ),
                }
            }
            ("rate", toml::Value::Integer(n)) if *n > 0 => extra.rate = Some(*n as u64),
            ("rate", _) => cx.err(
                span.clone(),
                "rate takes a whole number of events per second, across all clients",
                Some("for example rate = 1000".into()),
            ),
            ("once", toml::Value::Boolean(b)) => extra.once = *b,
            ("reconnect", toml::Value::Boolean(b)) => extra.reconnect = *b,
            ("prepared", toml::Value::Boolean(b)) => extra.plain = !*b,
            (key, val) if sysbench::knobs::KEYS.iter().any(|(n, _)| *n == key) => {
                let text = match val {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                knobs.push(format!("{key}={text}"));
            }
            (key, _) => {
                let keys = ["step", "clients", "rate", "once", "reconnect", "prepared"]
                    .into_iter()
                    .chain(sysbench::knobs::KEYS.iter().map(|(n, _)| *n));
                cx.err(
                    span.clone(),
                    format!("unknown key \"{key}\" in a step's table"),
                    Some(match did_you_mean(key, keys) {
                        Some(m) => format!("did you mean \"{m}\"?"),
                        None => "a step's table takes step, clients, rate, once and the workload's parameters (`relbench list`)".into(),
                    }),
                );
            }
        }
    }
    let mut name = name.clone();
    if !knobs.is_empty() {
        if name.contains('[') {
            cx.err(
                span,
                "give the parameters in the name's brackets or as keys, not both",
                None,
            );
            return None;
        }
        // The tag, if any, stays after the parameters.
        let (base, tag) = match name.split_once(':') {
            Some((b, t)) => (b.to_string(), format!(":{t}")),
            None => (name.clone(), String::new()),
        };
        name = format!("{base}[{}]{tag}", knobs.join(","));
    }
    Some((span, name, extra))
}

/// A plan's own sequence, checked: known steps, load first, no step twice,
/// one suite's tables, nothing that needs rows after the rows are gone.
fn custom_steps(
    cx: &mut Ctx<'_>,
    items: &[(Range<usize>, String, Extra)],
    whole: Range<usize>,
) -> Vec<Step> {
    let mut out = Vec::new();
    let mut gone: Option<&str> = None;
    for (i, (span, s, extra)) in items.iter().enumerate() {
        match parse_step(s) {
            Ok(mut step) => {
                extra.apply(cx, span, &mut step);
                // Without a load the sequence runs on tables that are
                // already there (checked when the run starts).
                if i > 0 && step.kind == StepKind::Load {
                    cx.err(span.clone(), "\"load\" may only be the first step", Some("move \"load\" to the front, or remove it to run on tables that exist already; use \"settle\" to let the engine catch up".into()));
                }
                if out.contains(&step) {
                    cx.err(
                        span.clone(),
                        format!("step \"{s}\" appears twice"),
                        Some(format!(
                            "tag one of them to tell them apart, e.g. \"{}:again\"",
                            step.name()
                        )),
                    );
                }
                if let Some(g) = gone {
                    if step.maintenance().is_none() && step.kind != StepKind::Settle {
                        cx.err(
                            span.clone(),
                            format!("\"{s}\" comes after \"{g}\", which leaves no rows to run on"),
                            Some(format!("put \"{g}\" at the end of the sequence")),
                        );
                    }
                }
                if let Some(m) = step.maintenance().filter(|m| !m.keeps_rows()) {
                    gone = Some(m.name());
                }
                out.push(step);
            }
            Err(why) if s.contains('[') => cx.err(
                span.clone(),
                format!("step \"{s}\": {why}"),
                Some("`relbench list` shows each parameter and what it sets".into()),
            ),
            Err(help) => cx.err(span.clone(), format!("unknown step \"{s}\""), Some(help)),
        }
    }
    // One suite per sequence: the Insert Benchmark's and LinkBench's
    // tables are not sysbench's, so their steps cannot share data.
    let family = |s: &Step| match s.workload().map(|w| w.meta().group) {
        Some(workload::Group::Insert) => Some("the Insert Benchmark's"),
        Some(workload::Group::LinkBench) => Some("LinkBench's"),
        Some(_) => Some("sysbench's"),
        None if s.kind == StepKind::Load => Some("sysbench's"),
        None => None,
    };
    let families: Vec<&str> = ["the Insert Benchmark's", "LinkBench's", "sysbench's"]
        .into_iter()
        .filter(|f| out.iter().any(|s| family(s) == Some(*f)))
        .collect();
    if let [a, b, ..] = families[..] {
        cx.err(
            whole.clone(),
            format!("the steps mix {a} with {b}, which run on different tables"),
            Some("run each suite in its own plan".into()),
        );
    }
    if let Some(f) = families.first().filter(|f| !f.starts_with("sysbench")) {
        if let Some(m) = out
            .iter()
            .filter_map(|s| s.maintenance())
            .find(|m| m.sysbench_only())
        {
            let own = if f.starts_with("LinkBench") {
                "its tables are made with their indexes by lb.load; leave the index steps out"
            } else {
                "its l.x step builds its indexes; leave the index steps out"
            };
            cx.err(
                whole,
                format!(
                    "\"{}\" works on sysbench's secondary index, which {f} tables do not have",
                    m.name()
                ),
                Some(own.into()),
            );
        }
    }
    out
}

/// `name` or `name:tag`, where name is load, settle or a workload.
fn parse_step(s: &str) -> Result<Step, String> {
    let (name, tag) = match s.split_once(':') {
        Some((n, t)) => (n, Some(t)),
        None => (s, None),
    };
    if let Some(t) = tag {
        if !valid_tag(t) {
            return Err(format!(
                "the tag after ':' takes 1 to 32 letters, digits, '-' and '_', as in \"{name}:warm\""
            ));
        }
    }
    let kind = match name {
        "load" => StepKind::Load,
        "settle" => StepKind::Settle,
        w if w.contains('[') => StepKind::Workload(sysbench::knobs::canonical_name(w)?),
        w if workload::find(w).is_some() => StepKind::Workload(w.to_string()),
        m if Maint::find(m).is_some() => StepKind::Maintenance(Maint::find(m).expect("found")),
        w => {
            let names = ["load", "settle"]
                .into_iter()
                .chain(Maint::ALL.map(Maint::name))
                .chain(workload::all().map(|w| w.meta().name));
            return Err(match did_you_mean(w, names) {
                Some(m) => format!("did you mean \"{m}\"? `relbench list` shows every workload"),
                None => "`relbench list` shows every workload; steps are \"load\", \"settle\" or a workload".into(),
            });
        }
    };
    Ok(Step {
        kind,
        tag: tag.map(str::to_string),
        interval: None,
        client_counts: None,
        rate: None,
        once: false,
        reconnect: false,
        plain: false,
    })
}

fn targets(cx: &mut Ctx<'_>, raw: &RawPlan) -> Vec<TargetSpec> {
    let Some(list) = &raw.target else {
        cx.err(
            0..0,
            "the plan has no [[target]]",
            Some(
                "add one, e.g.\n    [[target]]\n    name = \"default\"\n    engine = \"sqlite\""
                    .into(),
            ),
        );
        return Vec::new();
    };
    if list.get_ref().is_empty() {
        cx.err(
            list.span(),
            "the plan has no targets",
            Some("add a [[target]] with a name and an engine".into()),
        );
    }
    let mut out: Vec<TargetSpec> = Vec::new();
    let mut copied = Vec::new();
    for t in list.get_ref() {
        let t = t.get_ref();
        let name = t.name.get_ref();
        // It names directories and files: "." or ".." would put results
        // outside the run's steps/ directory.
        if name.is_empty()
            || name.len() > 64
            || name.starts_with('.')
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            cx.err(t.name.span(), format!("target name \"{name}\" is not allowed"), Some("use 1 to 64 letters, digits, '.', '_' or '-', not starting with '.' (it names files), e.g. \"ma1011.innodb\"".into()));
        }
        if out.iter().any(|o| o.name == *name) {
            cx.err(
                t.name.span(),
                format!("target name \"{name}\" is used twice"),
                Some("give every target its own name; reports tell targets apart by name".into()),
            );
        }
        let Some(engine) = EngineKind::parse(t.engine.get_ref()) else {
            let names = EngineKind::ALL.iter().map(|e| e.name());
            let help = did_you_mean(t.engine.get_ref(), names).map_or_else(
                || "engines are sqlite, mysql, mariadb, postgres".into(),
                |m| format!("did you mean \"{m}\"?"),
            );
            cx.err(
                t.engine.span(),
                format!("unknown engine \"{}\"", t.engine.get_ref()),
                Some(help),
            );
            continue;
        };
        let access = if engine.is_server() {
            server_access(cx, t, engine)
        } else {
            embedded_access(cx, t)
        };
        let storage_engine = match &t.storage_engine {
            Some(e) if !matches!(engine, EngineKind::Mysql | EngineKind::Mariadb) => {
                cx.err(
                    e.span(),
                    format!("storage_engine is for mysql and mariadb targets, not {engine}"),
                    Some("remove it".into()),
                );
                None
            }
            Some(e)
                if e.get_ref().is_empty()
                    || !e
                        .get_ref()
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
            {
                cx.err(
                    e.span(),
                    format!("\"{}\" is not a storage engine name", e.get_ref()),
                    Some("for example \"InnoDB\" or \"ROCKSDB\"".into()),
                );
                None
            }
            Some(e) => Some(e.get_ref().clone()),
            None => None,
        };
        let tls = match &t.tls {
            None => Tls::Off,
            Some(v) if !engine.is_server() => {
                cx.err(
                    v.span(),
                    format!("tls is for server targets, not {engine}"),
                    Some("remove it".into()),
                );
                Tls::Off
            }
            Some(v) => match Tls::parse(v.get_ref()) {
                Some(Tls::Off) => Tls::Off,
                Some(_) if matches!(&access, Some(Access::Managed(m)) if m.socket) => {
                    cx.err(
                        v.span(),
                        "tls is for TCP connections, and this target connects over the socket (transport = \"socket\")".to_string(),
                        Some("remove `tls`, or `transport`".into()),
                    );
                    Tls::Off
                }
                Some(mode) => mode,
                None => {
                    cx.err(
                        v.span(),
                        format!("unknown tls mode \"{}\"", v.get_ref()),
                        Some(format!("tls is one of {}", Tls::NAMES.join(", "))),
                    );
                    Tls::Off
                }
            },
        };
        let table_options = t.table_options.as_ref().and_then(|o| {
            let text = o.get_ref().trim();
            let why = if text.is_empty() {
                Some("table_options is empty")
            } else if text.contains(';') || text.contains("--") || text.contains("/*") {
                Some("table_options may not hold `;` or a comment: it is appended to CREATE TABLE, as one statement")
            } else if text.chars().any(char::is_control) {
                Some("table_options holds a control character")
            } else {
                None
            };
            match why {
                Some(why) => {
                    cx.err(
                        o.span(),
                        why.to_string(),
                        Some("for example \"ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8\", \"PARTITION BY HASH(id) PARTITIONS 8\" or \"WITH (fillfactor = 80)\"".into()),
                    );
                    None
                }
                None => Some(text.to_string()),
            }
        });
        let copies = t
            .copies
            .as_ref()
            .and_then(|c| cx.positive(c, "copies", MAX_COPIES))
            .unwrap_or(1);
        if copies > 1 {
            let own = match &access {
                Some(Access::Embedded { path: Some(_), .. }) => Some("path"),
                Some(Access::Managed(m)) if m.datadir.is_some() => Some("datadir"),
                _ => None,
            };
            if let (Some(key), Some(c)) = (own, &t.copies) {
                cx.err(
                    c.span(),
                    format!("A/A copies need data of their own, but this target names its `{key}`"),
                    Some(format!("remove `{key}` (each copy then keeps its data in the results directory), or `copies`")),
                );
            }
        }
        if let Some(access) = access {
            out.push(TargetSpec {
                name: name.clone(),
                engine,
                access,
                storage_engine,
                copy_of: None,
                tls,
                table_options,
            });
            if copies > 1 {
                copied.push((out.len() - 1, copies, t.name.span()));
            }
        }
    }
    // A/A copies run after every other target in each repeat, so the time
    // between two identical runs is as long as the plan makes it.
    for (i, n, span) in copied {
        for k in 2..=n {
            let mut copy = out[i].clone();
            copy.name = format!("{}-aa{k}", out[i].name);
            copy.copy_of = Some(out[i].name.clone());
            if out.iter().any(|o| o.name == copy.name) {
                cx.err(
                    span.clone(),
                    format!(
                        "the A/A copy \"{}\" has the name of another target",
                        copy.name
                    ),
                    Some("rename that target".into()),
                );
            }
            out.push(copy);
        }
    }
    out
}

/// Names a key that does not belong to this kind of target.
fn misplaced<T>(cx: &mut Ctx<'_>, key: &Option<Spanned<T>>, name: &str, belongs: &str) {
    if let Some(k) = key {
        cx.err(
            k.span(),
            format!("`{name}` is for {belongs}"),
            Some(format!("remove `{name}` from this target")),
        );
    }
}

fn embedded_access(cx: &mut Ctx<'_>, t: &RawTarget) -> Option<Access> {
    let server_keys = "server targets (mariadb, mysql, postgres)";
    misplaced(cx, &t.basedir, "basedir", server_keys);
    misplaced(cx, &t.config, "config", server_keys);
    misplaced(cx, &t.datadir, "datadir", server_keys);
    misplaced(cx, &t.port, "port", server_keys);
    misplaced(cx, &t.user, "user", server_keys);
    misplaced(cx, &t.malloc, "malloc", server_keys);
    misplaced(cx, &t.transport, "transport", server_keys);
    misplaced(cx, &t.start_timeout, "start_timeout", server_keys);
    misplaced(cx, &t.url, "url", server_keys);
    misplaced(cx, &t.password_env, "password_env", server_keys);
    if let Some(p) = &t.path {
        if let Some(why) = sqlite::foreign(&cx.dir.join(p.get_ref())) {
            cx.err(
                p.span(),
                why,
                Some("name a new file, or one an earlier relbench run created".into()),
            );
        }
    }
    let mut pragmas: Vec<(String, String)> = Vec::new();
    for (k, v) in t.pragmas.iter().flat_map(|p| p.get_ref()) {
        if let Some(p) = pragma(cx, k, v) {
            if pragmas.iter().any(|(n, _)| *n == p.0) {
                cx.err(
                    k.span(),
                    format!("pragma {} is set twice (names are not case-sensitive)", p.0),
                    Some("keep one".into()),
                );
                continue;
            }
            pragmas.push(p);
        }
    }
    Some(Access::Embedded {
        path: t.path.as_ref().map(|p| p.get_ref().into()),
        pragmas,
    })
}

/// A path from the plan, relative to the plan's directory, that must exist.
fn existing(cx: &mut Ctx<'_>, v: &Spanned<String>, what: &str, dir: bool) -> Option<PathBuf> {
    let p = cx.dir.join(v.get_ref());
    let ok = if dir { p.is_dir() } else { p.is_file() };
    if ok {
        Some(p.canonicalize().unwrap_or(p))
    } else {
        cx.err(
            v.span(),
            format!("{what} {} does not exist", p.display()),
            Some(format!(
                "fix the path (relative paths are relative to {})",
                cx.dir.display()
            )),
        );
        None
    }
}

fn server_access(cx: &mut Ctx<'_>, t: &RawTarget, engine: EngineKind) -> Option<Access> {
    let sqlite_keys = "sqlite targets";
    misplaced(cx, &t.path, "path", sqlite_keys);
    misplaced(
        cx,
        &t.pragmas,
        "pragmas",
        "sqlite targets (a server's settings go in its config file)",
    );
    match (&t.basedir, &t.url) {
        (Some(b), Some(_)) => {
            cx.err(b.span(), "give either `basedir` (relbench runs the server) or `url` (someone else does), not both", None);
            None
        }
        (None, None) => {
            cx.err(
                t.engine.span(),
                format!("a {engine} target needs `basedir` (relbench starts the server) or `url` (a server someone else runs)"),
                Some("for Debian's packages: basedir = \"/usr\" (MariaDB) or \"/usr/lib/postgresql/15\" (PostgreSQL)".into()),
            );
            None
        }
        (None, Some(u)) => {
            for (key, name) in [
                (&t.config, "config"),
                (&t.datadir, "datadir"),
                (&t.user, "user"),
                (&t.malloc, "malloc"),
            ] {
                misplaced(cx, key, name, "managed targets (with `basedir`)");
            }
            misplaced(
                cx,
                &t.port,
                "port",
                "managed targets; put the port in the URL",
            );
            misplaced(
                cx,
                &t.transport,
                "transport",
                "managed targets; a URL says ?socket=/path for a socket",
            );
            misplaced(
                cx,
                &t.start_timeout,
                "start_timeout",
                "managed targets (with `basedir`)",
            );
            if let Err(e) = ServerUrl::parse(u.get_ref(), engine) {
                // Never echo the URL: it may hold the password being refused.
                cx.err(u.span(), format!("bad url: {e}"), None);
                return None;
            }
            let password_env = t.password_env.as_ref().and_then(|v| {
                let name = v.get_ref();
                if std::env::var_os(name).is_none() {
                    cx.err(
                        v.span(),
                        format!("the environment variable {name} is not set"),
                        Some(format!("export {name}=... before running relbench")),
                    );
                    None
                } else {
                    Some(name.clone())
                }
            });
            Some(Access::Url {
                url: u.get_ref().clone(),
                password_env,
            })
        }
        (Some(b), None) => {
            misplaced(cx, &t.password_env, "password_env", "targets by `url`");
            let basedir = existing(cx, b, "basedir", true);
            let config = t
                .config
                .as_ref()
                .and_then(|c| existing(cx, c, "config file", false));
            let malloc = t
                .malloc
                .as_ref()
                .and_then(|m| existing(cx, m, "malloc library", false));
            let port = t
                .port
                .as_ref()
                .and_then(|p| cx.positive(p, "port", 65535))
                .map(|p| p as u16);
            let user = t
                .user
                .as_ref()
                .and_then(|u| match server::lookup_user(u.get_ref()) {
                    Ok(_) => Some(u.get_ref().clone()),
                    Err(e) => {
                        cx.err(u.span(), format!("{e:#}"), None);
                        None
                    }
                });
            let socket = match t.transport.as_ref().map(|v| (v, v.get_ref().as_str())) {
                None | Some((_, "tcp")) => false,
                Some((_, "socket")) => true,
                Some((v, other)) => {
                    cx.err(
                        v.span(),
                        format!("unknown transport \"{other}\""),
                        Some("use \"tcp\" (127.0.0.1, the default) or \"socket\"".into()),
                    );
                    false
                }
            };
            let start_timeout_secs =
                cx.duration(&t.start_timeout.clone(), "start_timeout", 120.0, 1.0);
            let args = t
                .args
                .as_ref()
                .map(|a| a.get_ref().clone())
                .unwrap_or_default();
            if let (Some(a), Ok(flavor)) = (&t.args, crate::db::server::flavor_for(engine)) {
                if let Err(e) = flavor.check_args(&args) {
                    cx.err(a.span(), e.to_string(), None);
                }
            }
            Some(Access::Managed(Managed {
                basedir: basedir?,
                config,
                datadir: t.datadir.as_ref().map(|d| cx.dir.join(d.get_ref())),
                port,
                user,
                args,
                malloc,
                socket,
                start_timeout_secs,
            }))
        }
    }
}

fn pragma(
    cx: &mut Ctx<'_>,
    k: &Spanned<String>,
    v: &Spanned<toml::Value>,
) -> Option<(String, String)> {
    let name = k.get_ref().to_ascii_lowercase();
    let Some((_, allowed)) = sqlite::PRAGMAS.iter().find(|(n, _)| *n == name) else {
        let names = sqlite::PRAGMAS.iter().map(|(n, _)| *n);
        let list: Vec<_> = sqlite::PRAGMAS.iter().map(|(n, _)| *n).collect();
        let help = match did_you_mean(&name, names) {
            Some(m) => format!("did you mean \"{m}\"?"),
            None => format!("relbench sets these pragmas: {}", list.join(", ")),
        };
        cx.err(
            k.span(),
            format!(
                "unknown SQLite pragma \"{}\" (SQLite would silently ignore it)",
                k.get_ref()
            ),
            Some(help),
        );
        return None;
    };
    let value = match v.get_ref() {
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Boolean(b) => (if *b { "on" } else { "off" }).to_string(),
        toml::Value::String(s) => s.to_ascii_lowercase(),
        other => {
            cx.err(
                v.span(),
                format!("pragma {name} takes a string or an integer, not {other}"),
                None,
            );
            return None;
        }
    };
    match allowed {
        Some(ok) if !ok.contains(&value.as_str()) => {
            cx.err(
                v.span(),
                format!("\"{value}\" is not a value of pragma {name}"),
                Some(format!("use one of: {}", ok.join(", "))),
            );
            None
        }
        None if value.parse::<i64>().is_err() => {
            cx.err(
                v.span(),
                format!("pragma {name} takes an integer, not \"{value}\""),
                None,
            );
            None
        }
        _ => Some((name, value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<PlanError> {
        parse(text, "p.toml", Path::new("."))
            .expect_err("the plan should be rejected")
            .0
    }

    const TARGET: &str = "[[target]]\nname = \"a\"\nengine = \"sqlite\"\n";

    #[test]
    fn the_insert_suite_expands_and_takes_its_sizes() {
        let p = parse(
            &format!("suite = \"insert\"\nclients = [4]\n[insert]\nl_i1_rows = 7\nq_commit = 20\n{TARGET}"),
            "p.toml",
            Path::new("."),
        )
        .unwrap();
        assert_eq!(p.suite, "insert");
        let names: Vec<String> = p.steps.iter().map(|s| s.label()).collect();
        assert_eq!(names[..5], ["l.i0", "l.x", "l.i1", "l.i2", "settle"]);
        assert_eq!(names.len(), 11);
        assert_eq!(p.insert_benchmark.l_i1_rows, 7);
        assert_eq!(p.insert_benchmark.q_commit, 20);
        assert_eq!(p.insert_benchmark.l_i0_commit, 100);
        assert_eq!(p.tables_for_settle().0, ["pi1", "pi2", "pi3", "pi4"]);
    }

    #[test]
    fn the_insert_benchmark_starts_with_l_i0_and_runs_whole_per_client_count() {
        // Each client count runs the whole sequence on fresh tables.
        let p = parse(
            &format!("suite = \"insert\"\nclients = [1, 2]\n{TARGET}"),
            "plan.toml",
            Path::new("."),
        )
        .unwrap();
        let order: Vec<(u32, String)> = p
            .executions()
            .iter()
            .map(|e| (e.clients, e.step.label()))
            .collect();
        assert_eq!(order[0], (1, "l.i0".to_string()));
        assert_eq!(order[4], (1, "settle".to_string()));
        assert_eq!(order[11], (2, "l.i0".to_string()));
        assert_eq!(p.tables_for(1).0, ["pi1"]);
        let e = errors(&format!("steps = [\"l.x\", \"qr100\"]\n{TARGET}"));
        assert!(
            e[0].message.contains("start with \"l.i0\""),
            "{}",
            e[0].message
        );
        let e = errors(&format!(
            "suite = \"insert\"\n[insert]\nq_comit = 5\n{TARGET}"
        ));
        assert!(e[0].message.contains("q_comit"), "{}", e[0].message);
        let e = errors(&format!(
            "suite = \"insert\"\n[insert]\ndata_min = 30\n{TARGET}"
        ));
        assert!(e[0].message.contains("above data_max"), "{}", e[0].message);
    }

    #[test]
    fn the_built_in_plans_are_valid() {
        let q = parse(super::super::QUICK_PLAN, "quick", Path::new(".")).unwrap();
        assert_eq!(q.targets.len(), 2);
        assert_eq!(q.steps.len(), sysbench::STANDARD_SEQUENCE.len());
        let e = parse(super::super::EXAMPLE_PLAN, "example", Path::new(".")).unwrap();
        assert_eq!(e.clients, vec![1, 2, 4]);
    }

    #[test]
    fn unknown_key_names_line_column_and_the_allowed_keys() {
        let e = errors(&format!("clients = [1]\n[scale]\nrowz = 10\n{TARGET}"));
        assert_eq!((e[0].line, e[0].column), (3, 1));
        assert!(
            e[0].message.contains("unknown field `rowz`"),
            "{}",
            e[0].message
        );
        assert!(e[0].message.contains("`rows`"), "{}", e[0].message);
    }

    #[test]
    fn unknown_workload_suggests_the_near_one() {
        let e = errors(&format!("steps = [\"load\", \"point-qeury\"]\n{TARGET}"));
        assert_eq!((e[0].line, e[0].column), (1, 18));
        assert_eq!(e[0].message, "unknown step \"point-qeury\"");
        assert!(e[0]
            .help
            .as_deref()
            .unwrap()
            .contains("did you mean \"point-query\""));
    }

    #[test]
    fn parameterised_steps_get_their_canonical_name_and_bad_ones_say_why() {
        let p = parse(
            &format!("steps = [\"load\", \"read-only-order[range=1000,order=4]:hot\"]\n[scale]\nrows = 2000\n{TARGET}"),
            "plan.toml",
            Path::new("."),
        )
        .unwrap();
        assert_eq!(p.steps[1].name(), "read-only-order[order=4,range=1000]");
        assert_eq!(
            p.steps[1].label(),
            "read-only-order[order=4,range=1000].hot"
        );
        let e = errors(&format!(
            "steps = [\"load\", \"point-query[order=4]\"]\n{TARGET}"
        ));
        assert_eq!((e[0].line, e[0].column), (1, 18));
        assert!(
            e[0].message
                .starts_with("step \"point-query[order=4]\": point-query has no mix of ranges"),
            "{}",
            e[0].message
        );
        // The table must hold the widest range the parameters ask for.
        let e = errors(&format!(
            "steps = [\"load\", \"read-only-10[range=5000]\"]\n[scale]\nrows = 2000\n{TARGET}"
        ));
        assert!(
            e[0].message.contains("rows = 2000 is too small"),
            "{}",
            e[0].message
        );
    }

    #[test]
    fn zero_rows_is_rejected_at_its_value() {
        let e = errors(&format!("[scale]\nrows = 0\n{TARGET}"));
        assert_eq!((e[0].line, e[0].column), (2, 8));
        assert_eq!(e[0].message, "rows must be between 1 and 2000000000, not 0");
    }

    #[test]
    fn rows_must_hold_the_widest_range() {
        let e = errors(&format!("[scale]\nrows = 500\n{TARGET}"));
        assert!(
            e[0].message.contains("read-only-10000 reads 10000 rows"),
            "{}",
            e[0].message
        );
        assert_eq!(
            e[0].help.as_deref(),
            Some("set rows to at least 10000 under [scale]")
        );
    }

    #[test]
    fn duplicate_target_names_are_rejected() {
        let e = errors(&format!("{TARGET}{TARGET}"));
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].line, e[0].column), (5, 8));
        assert_eq!(e[0].message, "target name \"a\" is used twice");
    }

    #[test]
    fn misspelt_pragma_and_bad_value_are_both_reported() {
        let e = errors(&format!(
            "{TARGET}[target.pragmas]\nsynchronus = \"full\"\njournal_mode = \"fast\"\n"
        ));
        assert_eq!(e.len(), 2);
        assert!(e[0]
            .message
            .contains("unknown SQLite pragma \"synchronus\""));
        assert_eq!(e[0].help.as_deref(), Some("did you mean \"synchronous\"?"));
        assert_eq!(
            e[1].message,
            "\"fast\" is not a value of pragma journal_mode"
        );
    }

    #[test]
    fn a_misspelt_engine_gets_a_suggestion() {
        let e = errors("[[target]]\nname = \"m\"\nengine = \"sqlit\"\n");
        assert_eq!(e[0].help.as_deref(), Some("did you mean \"sqlite\"?"));
    }

    #[test]
    fn server_targets_need_a_basedir_or_a_url() {
        let e = errors("[[target]]\nname = \"m\"\nengine = \"mariadb\"\n");
        assert!(e[0].message.contains("needs `basedir`"), "{}", e[0].message);
        let e = errors(
            "[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/nonexistent\"\npragmas = { synchronous = 1 }\n",
        );
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(
            e[0].message.contains("basedir /nonexistent does not exist"),
            "{}",
            e[0].message
        );
        assert!(
            e[1].message.contains("`pragmas` is for sqlite targets"),
            "{}",
            e[1].message
        );
    }

    #[test]
    fn a_password_in_a_url_is_refused_without_being_repeated() {
        let e = errors(
            "[[target]]\nname = \"m\"\nengine = \"mysql\"\nurl = \"mysql://u:secret@h/db\"\n",
        );
        assert!(e[0].message.contains("password_env"), "{}", e[0].message);
        assert!(!e[0].to_string().contains("secret"));
        let e = errors("[[target]]\nname = \"m\"\nengine = \"mysql\"\nurl = \"mysql://u@h/db\"\npassword_env = \"RELBENCH_TEST_UNSET_VAR\"\n");
        assert_eq!(
            e[0].message,
            "the environment variable RELBENCH_TEST_UNSET_VAR is not set"
        );
    }

    #[test]
    fn table_options_are_one_statements_tail() {
        let p = parse(
            &format!("{TARGET}table_options = \" STRICT \"\n"),
            "p.toml",
            Path::new("."),
        )
        .unwrap();
        assert_eq!(p.targets[0].table_options.as_deref(), Some("STRICT"));
        assert_eq!(p.targets[0].table_suffix(), " STRICT");
        for bad in ["x; DROP TABLE y", "x -- y", "x /* y */", ""] {
            let e = errors(&format!("{TARGET}table_options = \"{bad}\"\n"));
            assert!(
                e[0].message.starts_with("table_options"),
                "{bad}: {}",
                e[0].message
            );
        }
    }

    #[test]
    fn comparisons_name_targets_of_the_plan() {
        let two = format!("{TARGET}[[target]]\nname = \"b\"\nengine = \"sqlite\"\n");
        let p = parse(
            &format!(
                "{two}[[comparison]]\ntitle = \"b on a\"\nbase = \"a\"\ntargets = [\"a\", \"b\"]\n"
            ),
            "p.toml",
            Path::new("."),
        )
        .unwrap();
        assert_eq!(p.comparisons[0].base, "a");
        assert_eq!(p.comparisons[0].targets, ["a", "b"]);
        let e = errors(&format!(
            "{two}[[comparison]]\nbase = \"a\"\ntargets = [\"bb\"]\n"
        ));
        assert_eq!(
            e[0].message,
            "the comparison names \"bb\", which is not a target of this plan"
        );
        assert_eq!(e[0].help.as_deref(), Some("did you mean \"b\"?"));
        assert_eq!((e[0].line, e[0].column), (9, 12));
    }

    #[test]
    fn tls_is_a_mode_of_a_tcp_connection_to_a_server() {
        let url = "[[target]]\nname = \"m\"\nengine = \"mysql\"\nurl = \"mysql://u@h/db\"\n";
        let p = parse(
            &format!("{url}tls = \"required\"\n"),
            "p.toml",
            Path::new("."),
        )
        .unwrap();
        assert_eq!(p.targets[0].tls, Tls::Required);
        let e = errors(&format!("{url}tls = \"on\"\n"));
        assert_eq!(e[0].message, "unknown tls mode \"on\"");
        assert_eq!(
            e[0].help.as_deref(),
            Some("tls is one of off, preferred, required")
        );
        let e = errors(&format!("{TARGET}tls = \"required\"\n"));
        assert_eq!(e[0].message, "tls is for server targets, not sqlite");
        let e = errors(
            "[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\ntransport = \"socket\"\ntls = \"preferred\"\n",
        );
        assert!(
            e[0].message.starts_with("tls is for TCP connections"),
            "{}",
            e[0].message
        );
    }

    #[test]
    fn distributions_are_named() {
        let e = errors(&format!("distribution = \"zipf\"\n{TARGET}"));
        assert_eq!(e[0].message, "unknown distribution \"zipf\"");
        assert_eq!(
            e[0].help.as_deref(),
            Some("use one of: uniform, zipfian, hotset")
        );
        let p = parse(
            &format!("distribution = \"hotset\"\n{TARGET}"),
            "p",
            Path::new("."),
        )
        .unwrap();
        assert_eq!(p.distribution, dist::Kind::Hotset);
    }

    #[test]
    fn load_may_only_come_first() {
        let e = errors(&format!("steps = [\"point-query\", \"load\"]\n{TARGET}"));
        assert_eq!(e[0].message, "\"load\" may only be the first step");
        assert!(parse(
            &format!("steps = [\"point-query\"]\n{TARGET}"),
            "p",
            Path::new(".")
        )
        .is_ok());
    }

    #[test]
    fn bad_durations_say_what_a_duration_looks_like() {
        let e = errors(&format!("[duration]\nread = \"soon\"\nwrite = 0\n{TARGET}"));
        assert_eq!(e.len(), 2);
        assert!(e[0].message.contains("read is not a duration"));
        assert!(e[0].help.as_deref().unwrap().contains("\"30s\""));
        assert_eq!(e[1].message, "write must be at least 100ms");
    }

    #[test]
    fn syntax_errors_carry_their_position() {
        let e = errors("clients = [1,\n");
        assert_eq!(e[0].file, "p.toml");
        assert!(e[0].line >= 1);
    }

    #[test]
    fn no_targets_is_an_error() {
        let e = errors("clients = [1]\n");
        assert_eq!(e[0].message, "the plan has no [[target]]");
    }
}
