//! Parsing and validating a plan file. Every error names the file, line and
//! column, what is wrong and what would be right; all errors of a plan are
//! reported at once. This file holds the file's shape and the plan-wide
//! keys; the sequence, the plan's own workloads, what goes around the
//! sequence and the targets each have a file.

mod around;
mod gate;
mod observe;
mod scripts;
mod steps;
mod targets;
#[cfg(test)]
mod tests;

use around::{comparisons, hooks, phase_settings, reference, restarts};
use observe::{internals, profile, with_internals};
use scripts::scripts;
use steps::{family_clients, find, intervals, steps};
use targets::targets;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::{
    Access, Comparison, Hook, HookAction, HookScope, Interval, Maint, Managed, Phase, Plan,
    RoundOrder, ServerChange, Settle, Step, StepKind, Stop, TargetSpec, When,
};
use crate::db::{server, sqlite, tls::Tls, url::ServerUrl, EngineKind};
use crate::util::did_you_mean;
use crate::workload::catalogue::Catalogue;
use crate::workload::check::{line_col, Ctx, MAX_ROWS};
pub use crate::workload::check::{PlanError, PlanErrors};
use crate::workload::script::ScriptSpec;
use crate::workload::{self, dist, sysbench};

// The file's shape. `deny_unknown_fields` turns a misspelt key into an error
// that lists the keys that are allowed.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    suite: Option<Spanned<String>>,
    steps: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    clients: Option<Spanned<Vec<Spanned<i64>>>>,
    repeats: Option<Spanned<toml::Value>>,
    adaptive: Option<RawAdaptive>,
    seed: Option<Spanned<i64>>,
    order: Option<Spanned<String>>,
    reference: Option<Spanned<String>>,
    distribution: Option<Spanned<String>>,
    scale: Option<RawScale>,
    duration: Option<RawDuration>,
    settle: Option<RawSettle>,
    insert: Option<workload::insert::params::Raw>,
    linkbench: Option<Spanned<workload::linkbench::params::Raw>>,
    tpcc: Option<Spanned<workload::tpcc::params::Raw>>,
    target: Option<Spanned<Vec<Spanned<RawTarget>>>>,
    comparison: Option<Vec<RawComparison>>,
    phase: Option<Spanned<Vec<RawPhase>>>,
    hook: Option<Vec<Spanned<RawHook>>>,
    workload: Option<Vec<RawWorkload>>,
    interference: Option<RawInterference>,
    profile: Option<observe::RawProfile>,
    internals: Option<observe::RawInternals>,
    gate: Option<gate::RawGate>,
}

/// `[adaptive]`: the bounds of `repeats = "auto"`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAdaptive {
    min: Option<Spanned<i64>>,
    max: Option<Spanned<i64>>,
    budget: Option<Spanned<toml::Value>>,
}

/// `[interference]`: measuring a disturbed window again.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInterference {
    retries: Option<Spanned<i64>>,
    wait: Option<Spanned<toml::Value>>,
    max_extra: Option<Spanned<toml::Value>>,
}

/// A `[[workload]]`: the plan's own SQL, or a sysbench script.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    name: Spanned<String>,
    about: Option<String>,
    /// A sysbench Lua script, relative to the plan (a bare name is also
    /// looked for among sysbench's own).
    script: Option<Spanned<String>>,
    /// The script's options, by sysbench's names.
    options: Option<Spanned<toml::Table>>,
    /// The connections each of the script's threads holds at once at
    /// most, where its text's count is not it (a connect in a loop).
    connections: Option<Spanned<u32>>,
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
    auth: Option<Spanned<String>>,
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
/// The shortest measured window of a step.
const MIN_STEP_SECS: f64 = 0.1;

/// Parses and validates a plan. `file` names it in error messages; files
/// it names are looked up relative to `dir`.
pub fn parse(text: &str, file: &str, dir: &Path) -> Result<Plan, PlanErrors> {
    // Unknown keys do not hide the rest: the plan without them is checked
    // too, and every problem said in one pass.
    let (raw, unknown) = shape(text, file)?;
    let mut cx = Ctx {
        file,
        text,
        dir,
        errors: unknown,
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

/// The plan's shape: every unknown key at once, each at its position
/// with the nearest key valid there, rather than the first alone with
/// serde's list of sixteen (four mistakes took four `check` cycles).
/// Each unknown key found is blanked out — its line, and the lines of a
/// value that spans several, replaced by spaces so positions hold — and
/// the text read again, until it reads or fails otherwise. What reads is
/// returned with the unknown keys' errors, so the plan's other checks run
/// too (`repeat = 2`, a step `point-qeury` and `read = "5sec"` in one plan
/// were said one fix at a time).
fn shape(text: &str, file: &str) -> Result<(RawPlan, Vec<PlanError>), PlanErrors> {
    let error = |text: &str, e: &toml::de::Error| {
        let start = e.span().map_or(0, |s| s.start);
        let (line, column) = line_col(text, start);
        let message = e.message().trim().to_string();
        let help = unknown_key(&message).map(|(key, valid)| {
            match did_you_mean(&key, valid.iter().map(String::as_str)) {
                Some(m) => format!("did you mean `{m}`?"),
                None => format!("the keys valid here: {}", valid.join(", ")),
            }
        });
        PlanError {
            file: file.to_string(),
            line,
            column,
            message: match unknown_key(&message) {
                Some((key, _)) => format!("unknown key `{key}`"),
                None => message,
            },
            help,
            key: None,
        }
    };
    let mut current = text.to_string();
    let mut errors: Vec<PlanError> = Vec::new();
    // Bounded: each round blanks at least one line.
    for _ in 0..=text.lines().count() {
        match toml::from_str::<RawPlan>(&current) {
            Ok(raw) => return Ok((raw, errors)),
            Err(e) => {
                let start = e.span().map(|s| s.start);
                match (unknown_key(e.message()), start) {
                    (Some(_), Some(at)) if blank_entry(&mut current, at) => {
                        errors.push(error(text, &e));
                    }
                    // Any other problem is reported too, but a missing
                    // key that follows from a misspelt one blanked out.
                    _ => {
                        if errors.is_empty() || !e.message().starts_with("missing field") {
                            errors.push(error(text, &e));
                        }
                        break;
                    }
                }
            }
        }
    }
    errors.sort_by_key(|e| (e.line, e.column));
    Err(PlanErrors(errors))
}

/// From serde's "unknown field `x`, expected one of `a`, `b`" (or
/// "expected `a`"): the key and the keys valid there.
fn unknown_key(message: &str) -> Option<(String, Vec<String>)> {
    let rest = message.trim().strip_prefix("unknown field `")?;
    let (key, rest) = rest.split_once('`')?;
    let valid = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Some((key.to_string(), valid))
}

/// Replaces the entry whose key starts at byte `at` with spaces: its line,
/// and the following lines while its brackets stay open. False when there
/// is nothing there to blank.
fn blank_entry(text: &mut String, at: usize) -> bool {
    if at >= text.len() || !text.is_char_boundary(at) {
        return false;
    }
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let mut depth = 0i32;
    let mut end = start;
    for line in text[start..].split_inclusive('\n') {
        end += line.len();
        // Brackets outside strings, roughly: enough for the arrays and
        // inline tables a plan has.
        let mut quoted = None;
        for c in line.chars() {
            match (quoted, c) {
                (None, '"' | '\'') => quoted = Some(c),
                (Some(q), c) if c == q => quoted = None,
                (None, '[' | '{') => depth += 1,
                (None, ']' | '}') => depth -= 1,
                (None, '#') => break,
                _ => {}
            }
        }
        if depth <= 0 {
            break;
        }
    }
    // Byte for byte, so every later position holds.
    let blanked: String = text[start..end]
        .bytes()
        .map(|b| if b == b'\n' { '\n' } else { ' ' })
        .collect();
    let changed = blanked != text[start..end];
    text.replace_range(start..end, &blanked);
    changed
}

fn validate(cx: &mut Ctx<'_>, raw: RawPlan) -> Plan {
    // The plan's own workloads first: its steps may name them.
    let (workloads, lua) = scripts(cx, &raw);
    // The catalogue the steps are checked against: the families with the
    // plan's parameters, and the plan's own workloads.
    let linkbench =
        workload::linkbench::params::check(cx, raw.linkbench.as_ref().map(|r| r.get_ref()));
    let tpcc = workload::tpcc::params::check(cx, raw.tpcc.as_ref().map(|r| r.get_ref()));
    let insert_benchmark = workload::insert::params::check(cx, raw.insert.as_ref());
    let mut cat = Catalogue::new(&insert_benchmark, &linkbench, &tpcc, &workloads, &lua);
    let (suite, steps, phases) = steps(cx, &raw, &mut cat);
    let clients = client_counts(cx, &raw);
    let (repeats, adaptive) = repeats(cx, &raw);
    let (seed, seed_fixed) = seed(cx, &raw);
    let distribution = distribution(cx, &raw);
    let order = round_order(cx, &raw);
    let (tables, rows) = scale(cx, &raw);
    rows_fit(cx, &raw, &steps, &cat, rows);
    let (warmup_secs, stops) = durations(cx, &raw);
    let [read, write, insert] = stops;
    let steps = family_clients(cx, &raw, steps, &cat);
    let (steps, phases) = intervals(cx, &raw, steps, phases, [read, write, insert], &cat);
    let settle = settle(cx, &raw);
    insert_benchmark_loads_first(cx, &raw, &steps, &cat);
    let random_pct = random_pct(cx, &raw);
    let targets = targets(cx, &raw);
    restarts(cx, &raw, &steps, &targets);
    phase_settings(cx, &raw, &targets);
    let hooks = hooks(cx, &raw, &steps, &phases);
    let comparisons = comparisons(cx, &raw, &targets);
    let reference = reference(cx, &raw, &targets);
    let interference = interference(cx, &raw);
    let profile = profile(cx, &raw, &steps);
    let internals = internals(cx, &raw);
    let targets = with_internals(targets, &internals);
    let gate = gate::gate(cx, &raw, &steps);
    Plan {
        workloads,
        lua,
        phases,
        hooks,
        random_pct,
        insert_benchmark,
        linkbench,
        tpcc,
        suite,
        steps,
        tables: tables as u32,
        rows,
        clients,
        repeats,
        adaptive,
        seed,
        seed_fixed,
        distribution,
        order,
        warmup_secs,
        read,
        write,
        insert,
        settle,
        targets,
        reference,
        comparisons,
        interference,
        profile,
        internals,
        gate,
    }
}

/// The plan's client counts (`[1]` when it gives none).
fn client_counts(cx: &mut Ctx<'_>, raw: &RawPlan) -> Vec<u32> {
    match &raw.clients {
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
    }
}

/// The plan's seed, and whether the plan fixed it: a plan without one
/// draws a fresh one here, the one place a run's seed is decided (it is
/// recorded in `run.json`, so a resumed run, a confirmation and a shard
/// read it back).
fn seed(cx: &mut Ctx<'_>, raw: &RawPlan) -> (u64, bool) {
    let seed = match &raw.seed {
        Some(s) if *s.get_ref() < 0 => {
            cx.err(s.span(), "seed must not be negative", None);
            1
        }
        Some(s) => *s.get_ref() as u64,
        None => crate::util::fresh_seed(),
    };
    (seed, raw.seed.is_some())
}

/// How the steps draw their ids.
fn distribution(cx: &mut Ctx<'_>, raw: &RawPlan) -> dist::Kind {
    match &raw.distribution {
        None => dist::Kind::Uniform,
        Some(d) => dist::Kind::parse(d.get_ref()).unwrap_or_else(|| {
            cx.err(
                d.span(),
                format!("unknown distribution \"{}\"", d.get_ref()),
                Some(format!("use one of: {}", dist::Kind::NAMES.join(", "))),
            );
            dist::Kind::Uniform
        }),
    }
}

/// `order`: the targets' order inside each round (random unless the plan
/// fixes it).
fn round_order(cx: &mut Ctx<'_>, raw: &RawPlan) -> RoundOrder {
    match &raw.order {
        None => RoundOrder::Random,
        Some(o) => match o.get_ref().as_str() {
            "random" => RoundOrder::Random,
            "fixed" => RoundOrder::Fixed,
            other => {
                cx.err(
                    o.span(),
                    format!("unknown order \"{other}\""),
                    Some(
                        "use \"random\" (each round's order drawn from the seed, the default) or \"fixed\" (the targets as listed)"
                            .into(),
                    ),
                );
                RoundOrder::Random
            }
        },
    }
}

/// `[scale]`: tables and rows.
fn scale(cx: &mut Ctx<'_>, raw: &RawPlan) -> (i64, i64) {
    match &raw.scale {
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
    }
}

/// Every range and in-list must fit in the table, or its row-count check
/// would fail on every event.
fn rows_fit(cx: &mut Ctx<'_>, raw: &RawPlan, steps: &[Step], cat: &Catalogue, rows: i64) {
    let widest = steps
        .iter()
        .filter_map(|s| find(cat, s))
        .max_by_key(|w| w.rows_needed());
    if let Some(w) = widest.filter(|w| w.rows_needed() as i64 > rows) {
        {
            let span = raw
                .scale
                .as_ref()
                .and_then(|s| s.rows.as_ref())
                .map_or(0..0, |r| r.span());
            cx.err(
                span,
                format!(
                    "rows = {rows} is too small: {} reads {} rows at a time",
                    w.meta().name,
                    w.rows_needed()
                ),
                Some(format!(
                    "set rows to at least {} under [scale]",
                    w.rows_needed()
                )),
            );
        }
    }
}

/// `[duration]`: the warm-up, and how read, write and insert steps stop.
fn durations(cx: &mut Ctx<'_>, raw: &RawPlan) -> (f64, [Stop; 3]) {
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
        Stop::secs(cx.duration(&v, what, default, MIN_STEP_SECS))
    });
    if let Some(ev) = d.and_then(|d| d.events.as_ref()) {
        if let Some(n) = cx.positive(ev, "events", i64::MAX) {
            stops = [Stop::Events(n as u64); 3];
        }
    }
    (warmup_secs, stops)
}

/// `[settle]`.
fn settle(cx: &mut Ctx<'_>, raw: &RawPlan) -> Settle {
    let s = raw.settle.as_ref();
    Settle {
        base_secs: cx.duration(&s.and_then(|s| s.base.clone()), "settle base", 5.0, 0.0),
        per_million_rows_secs: cx.duration(
            &s.and_then(|s| s.per_million_rows.clone()),
            "per_million_rows",
            1.0,
            0.0,
        ),
        max_secs: cx.duration(&s.and_then(|s| s.max.clone()), "settle max", 60.0, 0.0),
    }
}

/// The Insert Benchmark's steps start with the one that creates its
/// tables.
fn insert_benchmark_loads_first(cx: &mut Ctx<'_>, raw: &RawPlan, steps: &[Step], cat: &Catalogue) {
    if steps
        .iter()
        .any(|s| find(cat, s).is_some_and(|w| w.meta().group == workload::Group::Insert))
    {
        if let Some(first) = steps.iter().find(|s| s.kind != StepKind::Settle) {
            let name = first.name().to_string();
            if !find(cat, first).is_some_and(|w| w.meta().creates_tables) {
                let span = raw.steps.as_ref().map_or(0..0, |s| s.span());
                cx.err(
                span,
                format!("the Insert Benchmark's steps start with \"l.i0\", which creates its tables; this plan starts with \"{name}\""),
                Some("put \"l.i0\" first".into()),
            );
            }
        }
    }
}

/// The percent of each generated string that is random.
fn random_pct(cx: &mut Ctx<'_>, raw: &RawPlan) -> u8 {
    match raw.scale.as_ref().and_then(|s| s.random_pct.as_ref()) {
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
    }
}

/// `repeats = N`, or `repeats = "auto"` with `[adaptive]`'s bounds: the
/// schedule's repeats (the minimum) and the adaptive bounds.
fn repeats(cx: &mut Ctx<'_>, raw: &RawPlan) -> (u32, Option<super::Adaptive>) {
    use super::Adaptive;
    // A fixed number of repeats, or `None` for "auto".
    let fixed = match raw.repeats.as_ref() {
        None => Some(1),
        Some(v) => match v.get_ref() {
            toml::Value::String(s) if s == "auto" => None,
            toml::Value::Integer(n) => Some(
                cx.positive(&Spanned::new(v.span(), *n), "repeats", 1000)
                    .unwrap_or(1) as u32,
            ),
            _ => {
                cx.err(
                    v.span(),
                    "repeats must be a number of repeats or \"auto\"",
                    Some("\"auto\" adds repeats where a verdict is still open, within [adaptive]'s min, max and budget".into()),
                );
                Some(1)
            }
        },
    };
    if let Some(n) = fixed {
        let given = raw.adaptive.as_ref().and_then(|a| {
            (a.min.as_ref().or(a.max.as_ref()).map(|s| s.span()))
                .or_else(|| a.budget.as_ref().map(|b| b.span()))
        });
        if let Some(span) = given {
            cx.err(
                span,
                if raw.repeats.is_some() {
                    "[adaptive] bounds an adaptive run, and `repeats` is a number"
                } else {
                    "[adaptive] bounds an adaptive run, and the plan has no `repeats = \"auto\"`"
                },
                Some("set `repeats = \"auto\"`, or leave [adaptive] out".into()),
            );
        }
        return (n, None);
    }
    let a = raw.adaptive.as_ref();
    let bound = |cx: &mut Ctx<'_>, v: Option<&Spanned<i64>>, what: &str, d: u32| {
        v.and_then(|v| cx.positive(v, what, 100))
            .map_or(d, |n| n as u32)
    };
    let min = bound(
        cx,
        a.and_then(|a| a.min.as_ref()),
        "min",
        Adaptive::DEFAULT_MIN,
    );
    let max = bound(
        cx,
        a.and_then(|a| a.max.as_ref()),
        "max",
        Adaptive::DEFAULT_MAX.max(min),
    );
    if min < 2 || max < min {
        let span = a
            .and_then(|a| a.min.as_ref().or(a.max.as_ref()))
            .map_or_else(|| raw.repeats.as_ref().expect("auto").span(), |s| s.span());
        cx.err(
            span,
            format!("an adaptive run needs 2 <= min <= max, not min {min}, max {max}"),
            Some("each side needs two repeats before its own spread says anything".into()),
        );
    }
    let budget = a.and_then(|a| a.budget.clone());
    let budget_secs = budget
        .is_some()
        .then(|| cx.duration(&budget, "budget", 0.0, 1.0));
    (
        min,
        Some(Adaptive {
            min,
            max: max.max(min),
            budget_secs,
        }),
    )
}

/// `[interference]`: how a disturbed window is measured again.
fn interference(cx: &mut Ctx<'_>, raw: &RawPlan) -> super::Retry {
    {
        let d = super::Retry::default();
        let r = raw.interference.as_ref();
        super::Retry {
            retries: match r.and_then(|r| r.retries.as_ref()) {
                Some(v) if (0..=20).contains(v.get_ref()) => *v.get_ref() as u32,
                Some(v) => {
                    cx.err(
                        v.span(),
                        format!("retries must be from 0 to 20, not {}", v.get_ref()),
                        Some("0 keeps a disturbed window as it is".into()),
                    );
                    d.retries
                }
                None => d.retries,
            },
            wait_secs: cx.duration(&r.and_then(|r| r.wait.clone()), "wait", d.wait_secs, 0.0),
            max_extra_secs: cx.duration(
                &r.and_then(|r| r.max_extra.clone()),
                "max_extra",
                d.max_extra_secs,
                0.0,
            ),
        }
    }
}
