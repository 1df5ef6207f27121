//! Plans: what to run, against which targets, at what scale.
//!
//! A plan file is parsed and fully validated ([`parse`]) before anything
//! runs, then compiled with its catalogue into the schedule the runner
//! walks ([`Plan::schedule`]).

pub mod adaptive;
pub mod gate;
mod observe;
mod parse;
pub mod schedule;
pub mod shard;
pub mod share;

pub use adaptive::Adaptive;
pub use gate::Gate;
pub use observe::{Internals, Profiling, DEFAULT_WAIT_SAMPLING_MS};
pub use parse::{parse, PlanError, PlanErrors};
pub use schedule::{ExecId, Execution, Part, Schedule, StepId, Work, WorkloadRun};
pub use shard::Shard;
pub use share::{ClientShare, Rendezvous};

use std::time::Duration;

pub use crate::db::spec::{Access, Managed, TargetSpec};
use serde::{Deserialize, Serialize};

use crate::workload::catalogue::Catalogue;
pub use crate::workload::maint::Maint;
use crate::workload::{DurationClass, Statements};

/// The built-in quick plan's text.
pub const QUICK_PLAN: &str = include_str!("quick.toml");
/// The commented example `relbench init` writes.
pub const EXAMPLE_PLAN: &str = include_str!("example.toml");
/// How the quick plan is named in messages and results.
pub const QUICK_PLAN_SOURCE: &str = "<built-in quick plan>";

/// A validated plan.
fn seed_was_given() -> bool {
    true
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Plan {
    /// The built-in suite the steps come from, or "custom".
    pub suite: String,
    pub steps: Vec<Step>,
    pub tables: u32,
    pub rows: i64,
    pub clients: Vec<u32>,
    pub repeats: u32,
    /// `repeats = "auto"`: `repeats` is the minimum, more added where
    /// a verdict is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<Adaptive>,
    /// The run's seed: the plan's `seed`, or, when it gives none, a fresh
    /// one per run (recorded with the run, so `--resume` and `--confirm`
    /// go on with it), so a second run on data the first one used does
    /// not replay its ids (LinkBench's deletes found nothing).
    pub seed: u64,
    /// Whether the plan gave the seed (results recorded before a fresh
    /// seed was drawn always had one).
    #[serde(default = "seed_was_given")]
    pub seed_fixed: bool,
    /// How ids are drawn where the catalogue leaves it open.
    #[serde(default)]
    pub distribution: crate::workload::dist::Kind,
    /// The order of the targets inside each round (repeat): drawn afresh
    /// per round from the seed (`random`, the default), or as listed
    /// (`fixed`: what results recorded before the choice existed ran).
    #[serde(default)]
    pub order: RoundOrder,
    pub warmup_secs: f64,
    pub read: Stop,
    pub write: Stop,
    pub insert: Stop,
    pub settle: Settle,
    pub targets: Vec<TargetSpec>,
    /// The Insert Benchmark's sizes (used by its steps only).
    #[serde(default)]
    pub insert_benchmark: crate::workload::insert::Params,
    /// LinkBench's parameters (`[linkbench]`, used by its steps only).
    #[serde(default)]
    pub linkbench: crate::workload::linkbench::Params,
    /// TPC-C's scale and population (`[tpcc]`, used by its steps only).
    #[serde(default)]
    pub tpcc: crate::workload::tpcc::Params,
    /// The plan's own SQL workloads (`[[workload]]`), entries of the
    /// plan's catalogue.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<crate::workload::script::ScriptSpec>,
    /// The plan's sysbench scripts (`[[workload]] script = …`), read
    /// once, with their modules and options: entries of its catalogue.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lua: Vec<crate::workload::lua::LuaSpec>,
    /// The sequence's phases (`[[phase]]`), in order; none: one phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<Phase>,
    /// Statements or commands run around steps and phases (`[[hook]]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks: Vec<Hook>,
    /// How compressible the generated strings are, in percent random
    /// (`[scale] random_pct`, as the Insert Benchmark's `data_random_pct`):
    /// 100 is sysbench's own all-random digits.
    #[serde(default = "all_random")]
    pub random_pct: u8,
    /// The reference build run beside the others in every round
    /// (`reference = "NAME"`): a history stores every other target's
    /// windows as ratios to the reference's of the same round, so a level
    /// shift of the machine between runs is no change point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// What the report compares (`[[comparison]]`): none means every
    /// target against the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<Comparison>,
    /// What a run does with a window another program disturbed
    /// (`[interference]`).
    #[serde(default)]
    pub interference: Retry,
    /// Profiles of the server per step (`[profile]`): off unless asked.
    #[serde(default, skip_serializing_if = "Profiling::is_off")]
    pub profile: Profiling,
    /// What relbench reads of the engine's own accounting (`[internals]`).
    #[serde(default)]
    pub internals: Internals,
    /// The slowdowns `relbench gate` lets through (`[gate]`).
    #[serde(default, skip_serializing_if = "Gate::is_default")]
    pub gate: Gate,
}

/// The order of the targets inside a round. The rounds are blocks the
/// verdict pairs a target's window with its base's in; drawing each
/// round's order (randomised multiple interleaved trials: Abedi & Brecht,
/// ICPE 2017) leaves nothing systematic to a target's place in the round
/// (the second target always running after the first's writes were
/// flushed, on a CPU the first left warm).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RoundOrder {
    Random,
    /// As listed, every round.
    #[default]
    Fixed,
}

impl RoundOrder {
    pub fn name(self) -> &'static str {
        match self {
            RoundOrder::Random => "random",
            RoundOrder::Fixed => "fixed",
        }
    }
}

/// A disturbed window is measured again, at once, after a short wait:
/// up to `retries` times per execution and `max_extra_secs` in all, so a
/// run on a busy host finds the quiet windows it can.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Retry {
    pub retries: u32,
    pub wait_secs: f64,
    pub max_extra_secs: f64,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            retries: 2,
            wait_secs: 2.0,
            max_extra_secs: 600.0,
        }
    }
}

/// One comparison of the report: `targets` (all when empty) against `base`.
/// The same shape as a report configuration file's `[[comparison]]`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Comparison {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub base: String,
    #[serde(default)]
    pub targets: Vec<String>,
}

fn all_random() -> u8 {
    100
}

/// When a hook runs.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum When {
    Before,
    After,
}

/// What a hook runs around.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum HookScope {
    /// Every step.
    Steps,
    /// Every execution of the steps with this name (all tags, intervals
    /// and client counts).
    Step(String),
    /// Once, before the phase's first step or after its last.
    Phase(String),
}

/// What a hook runs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum HookAction {
    /// A statement, as the most privileged user relbench has on the target.
    Sql(String),
    /// A command for `/bin/sh -c`, with the step's facts in `RELBENCH_*`.
    Shell(String),
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Hook {
    pub when: When,
    pub scope: HookScope,
    pub action: HookAction,
    pub timeout_secs: f64,
}

/// When a workload step stops, after its warm-up: the plan's durations
/// and each execution's stop rule are this one type. On disk (`run.json`)
/// it is `{"secs": 30.0}` or `{"events": 1000}`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Stop {
    /// After this long.
    #[serde(rename = "secs", with = "secs")]
    Time(Duration),
    /// After this many events, all clients together.
    Events(u64),
}

impl Stop {
    pub fn secs(s: f64) -> Stop {
        Stop::Time(Duration::from_secs_f64(s))
    }
}

/// A duration as a number of seconds, as plans and records write it.
mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

/// The sleep of a settle step: `base + per_million_rows × rows / 1e6`, capped.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Settle {
    pub base_secs: f64,
    pub per_million_rows_secs: f64,
    pub max_secs: f64,
}

impl Settle {
    pub fn sleep(&self, total_rows: u64) -> Duration {
        let s = self.base_secs + self.per_million_rows_secs * total_rows as f64 / 1e6;
        Duration::from_secs_f64(s.min(self.max_secs).max(0.0))
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(tag = "kind", content = "workload", rename_all = "lowercase")]
pub enum StepKind {
    Load,
    Settle,
    Workload(String),
    /// Timed DDL or upkeep, or a server restart (`drop-table`, `restart`).
    Maintenance(Maint),
}

/// One entry of the sequence. Its identity (equality, hash) leaves out
/// how its statements are sent (`plain`): a run with prepared statements
/// and one without measure the same step, compared in one row, the
/// difference said among the targets' settings (`relbench.statements`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Step {
    pub kind: StepKind,
    /// A tag that tells two runs of one workload apart ("warm", "pre").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Which interval of a long step this is: the plan's `interval` splits
    /// a timed step into consecutive windows, each measured as a step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// Client counts of its own, instead of the plan's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_counts: Option<Vec<u32>>,
    /// Open loop: events per second across all its clients, each started
    /// on schedule (sysbench's `--rate`). Named apart from a result's
    /// `rate` (what it reached), beside which a step is written.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        rename = "events_per_sec"
    )]
    pub rate: Option<u64>,
    /// Each client runs one event and stops (the full scan: one pass per
    /// client, each on its own table).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub once: bool,
    /// A new connection after every event (sysbench's `--reconnect`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reconnect: bool,
    /// Statements sent as text with their values, not prepared
    /// (`prepared = false`, sysbench's `--db-ps-mode=disable`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plain: bool,
}

impl Step {
    /// Every field but `plain`, destructured so a new field is not
    /// forgotten.
    fn identity(&self) -> impl PartialEq + std::hash::Hash + '_ {
        let Step {
            kind,
            tag,
            interval,
            client_counts,
            rate,
            once,
            reconnect,
            plain: _,
        } = self;
        (kind, tag, interval, client_counts, rate, once, reconnect)
    }
}

impl PartialEq for Step {
    fn eq(&self, other: &Self) -> bool {
        self.identity() == other.identity()
    }
}

impl Eq for Step {}

impl std::hash::Hash for Step {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.identity().hash(state)
    }
}

/// One of the consecutive windows a long step is measured in.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct Interval {
    /// 1-based.
    pub n: u32,
    pub of: u32,
    /// Each window's length.
    pub ms: u64,
}

/// The step's label, `name`, `name.tag`, `name@3` for its third interval.
impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())?;
        if let Some(t) = &self.tag {
            write!(f, ".{t}")?;
        }
        if let Some(i) = &self.interval {
            write!(f, "@{}", i.n)?;
        }
        Ok(())
    }
}

impl StepKind {
    /// `load`, `settle`, `workload` or `maintenance`.
    pub fn name(&self) -> &'static str {
        match self {
            StepKind::Load => "load",
            StepKind::Settle => "settle",
            StepKind::Workload(_) => "workload",
            StepKind::Maintenance(_) => "maintenance",
        }
    }
}

impl Step {
    pub fn name(&self) -> &str {
        match &self.kind {
            StepKind::Load => "load",
            StepKind::Settle => "settle",
            StepKind::Workload(w) => w,
            StepKind::Maintenance(m) => m.name(),
        }
    }

    /// Whether the benchmark this step's workload reimplements sends text
    /// ([`Catalogue::sends_text`]).
    pub fn sends_text_by_default(&self) -> bool {
        matches!(&self.kind, StepKind::Workload(w) if Catalogue::sends_text(w))
    }

    /// How its statements go, where that departs from the benchmark's own
    /// way.
    pub fn statements_departure(&self) -> Option<Statements> {
        match (self.plain, self.sends_text_by_default()) {
            (true, false) => Some(Statements::Text),
            (false, true) => Some(Statements::Prepared),
            _ => None,
        }
    }

    pub fn maintenance(&self) -> Option<Maint> {
        match self.kind {
            StepKind::Maintenance(m) => Some(m),
            _ => None,
        }
    }

    /// `name` or `name.tag`: names the step in file names and reports.
    pub fn label(&self) -> String {
        self.to_string()
    }

    /// As tables show it: `scan (warm)`, `read-write-10 @3/12`.
    pub fn title(&self) -> String {
        let mut s = match &self.tag {
            Some(t) => format!("{} ({t})", self.name()),
            None => self.name().to_string(),
        };
        if self.once {
            s += " once per client";
        }
        if self.reconnect {
            s += " reconnecting";
        }
        // Said where it departs from the benchmark's own way (LinkBench
        // and the Insert Benchmark send text, sysbench prepares).
        match self.statements_departure() {
            Some(Statements::Text) => s += " unprepared",
            Some(Statements::Prepared) => s += " prepared",
            None => {}
        }
        if let Some(r) = self.rate {
            s += &format!(" at {r}/s");
        }
        if let Some(i) = &self.interval {
            s += &format!(" @{}/{}", i.n, i.of);
        }
        s
    }

    /// The step a label names (`scan.warm`), as results of schema version 2
    /// wrote it. A workload whose own name has a dot (the Insert Benchmark's
    /// `l.i0`) keeps it: `l.i1.again` is `l.i1` tagged `again`.
    pub fn from_label(label: &str, is_workload: bool) -> Step {
        let split = label
            .match_indices('.')
            .map(|(i, _)| i)
            .chain(std::iter::once(label.len()))
            .find(|&i| Catalogue::is_builtin(&label[..i]))
            .or_else(|| label.find('.'))
            .unwrap_or(label.len());
        let (name, tag) = (
            &label[..split],
            label.get(split + 1..).filter(|t| !t.is_empty()),
        );
        let kind = match name {
            "load" if !is_workload => StepKind::Load,
            "settle" if !is_workload => StepKind::Settle,
            n => StepKind::Workload(n.to_string()),
        };
        Step {
            tag: tag.map(String::from),
            ..Step::of(kind)
        }
    }

    /// A step of this kind as the sequence names it plainly: no tag, no
    /// interval, the plan's client counts, closed loop, prepared.
    pub fn of(kind: StepKind) -> Step {
        Step {
            kind,
            tag: None,
            interval: None,
            client_counts: None,
            rate: None,
            once: false,
            reconnect: false,
            plain: false,
        }
    }
}

/// A part of the sequence that runs on the data the parts before it left,
/// and may start with a server restart under other settings.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Phase {
    pub name: String,
    /// Index in [`Plan::steps`] of its first step.
    pub first: usize,
    /// The server settings it restarts with (its first step is then the
    /// `restart` step); `None`: the server runs on as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerChange>,
}

/// What a phase changes about a managed server, from the target's own
/// settings: `config` and `malloc` replace the target's, `args` are added
/// to its `server_args`. Each restarting phase states its settings against
/// the target's own, not against the phase before.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ServerChange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<std::path::PathBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub malloc: Option<std::path::PathBuf>,
}

impl ServerChange {
    /// In words, for the report and the progress line.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = &self.config {
            parts.push(format!("config {}", c.display()));
        }
        if !self.args.is_empty() {
            parts.push(format!("server args {}", self.args.join(" ")));
        }
        if let Some(m) = &self.malloc {
            parts.push(format!("malloc {}", m.display()));
        }
        if parts.is_empty() {
            "the target's own settings".into()
        } else {
            parts.join(", ")
        }
    }

    /// The target as it runs under this change.
    pub fn apply(&self, target: &TargetSpec) -> TargetSpec {
        let mut t = target.clone();
        if let Access::Managed(m) = &mut t.access {
            if let Some(c) = &self.config {
                m.config = Some(c.clone());
            }
            m.args.extend(self.args.iter().cloned());
            if let Some(x) = &self.malloc {
                m.malloc = Some(x.clone());
            }
        }
        t
    }
}

impl Plan {
    /// The client counts a step runs at: the plan's for a workload, one
    /// for the rest.
    pub fn client_counts<'a>(&'a self, step: &'a Step) -> &'a [u32] {
        match step.kind {
            StepKind::Workload(_) => step.client_counts.as_deref().unwrap_or(&self.clients),
            _ => &[1],
        }
    }

    /// Whether a step is left out at a client count: a scan once per
    /// client needs a table per client, as sysbench's users run it.
    pub fn skips(&self, step: &Step, clients: u32) -> bool {
        step.once && clients > self.tables
    }

    /// What the plan leaves out, in words, for `check` and `run` to say.
    pub fn skipped(&self) -> Vec<String> {
        self.steps
            .iter()
            .flat_map(|s| {
                self.client_counts(s)
                    .iter()
                    .filter(|&&c| self.skips(s, c))
                    .map(move |c| {
                        format!(
                            "{} is skipped at {c} clients: one pass per client needs a table each, and the plan has {}",
                            s.label(),
                            self.tables
                        )
                    })
            })
            .collect()
    }

    /// The phase step `seq` (1-based) runs in, when the plan has phases.
    pub fn phase_of(&self, seq: usize) -> Option<&Phase> {
        self.phases.iter().rev().find(|p| p.first < seq)
    }

    /// The server settings step `seq` runs under: those of the last phase
    /// at or before it that restarted the server.
    pub fn server_at(&self, seq: usize) -> Option<&ServerChange> {
        self.phases
            .iter()
            .rev()
            .filter(|p| p.first < seq)
            .find_map(|p| p.server.as_ref())
    }

    pub fn stop_for(&self, class: DurationClass) -> Stop {
        match class {
            DurationClass::Read => self.read,
            DurationClass::Write => self.write,
            DurationClass::Insert => self.insert,
        }
    }
}

pub use crate::workload::check::{human_duration, parse_duration};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("30s"), Some(30.0));
        assert_eq!(parse_duration("500ms"), Some(0.5));
        assert_eq!(parse_duration("2m"), Some(120.0));
        assert_eq!(parse_duration("1h"), Some(3600.0));
        assert_eq!(parse_duration("1.5"), Some(1.5));
        assert_eq!(parse_duration("-1s"), None);
        assert_eq!(parse_duration("soon"), None);
    }

    #[test]
    fn settle_sleep_grows_with_rows_and_is_capped() {
        let s = Settle {
            base_secs: 5.0,
            per_million_rows_secs: 1.0,
            max_secs: 60.0,
        };
        assert_eq!(s.sleep(0).as_secs(), 5);
        assert_eq!(s.sleep(10_000_000).as_secs(), 15);
        assert_eq!(s.sleep(1_000_000_000).as_secs(), 60);
    }

    #[test]
    fn labels_of_old_results_split_into_workload_and_tag() {
        let title = |l: &str| Step::from_label(l, true).title();
        assert_eq!(title("scan.warm"), "scan (warm)");
        // Results that old prepared the Insert Benchmark's statements, and
        // its steps now send text: the title says so.
        assert_eq!(title("l.i0"), "l.i0 prepared");
        assert_eq!(title("l.i1.again"), "l.i1 (again) prepared");
        assert_eq!(title("qr100"), "qr100 prepared");
        assert_eq!(Step::from_label("load", false).kind, StepKind::Load);
        assert_eq!(
            Step::from_label("settle.pre", false),
            Step {
                tag: Some("pre".into()),
                ..Step::of(StepKind::Settle)
            }
        );
    }

    #[test]
    fn executions_interleave_targets_per_repeat() {
        let mut p = parse(QUICK_PLAN, QUICK_PLAN_SOURCE, std::path::Path::new(".")).unwrap();
        p.repeats = 2;
        p.steps.truncate(3);
        p.clients = vec![1, 2];
        let e = p.schedule(&p.catalogue().unwrap()).executions;
        let order: Vec<_> = e
            .iter()
            .map(|x| (x.id.repeat, x.target, x.id.seq, x.id.at.clients))
            .collect();
        assert_eq!(
            &order[..5],
            &[
                (1, 0, 1, 1),
                (1, 0, 2, 1),
                (1, 0, 3, 1),
                (1, 0, 3, 2),
                (1, 1, 1, 1)
            ]
        );
        assert_eq!(e.len(), 2 * 2 * 4);
    }

    /// Regression: `relbench check` said "at least 331 s" of a run that
    /// took 280 s: steps that do a fixed amount of work (the Insert
    /// Benchmark's l.i0 to l.i2) were counted at the plan's duration and
    /// with a warm-up they do not have.
    #[test]
    fn the_estimate_counts_no_time_for_steps_that_stop_when_their_work_is_done() {
        let text = include_str!("../../tests/fixtures/insert-tiny.toml");
        let p = parse(text, "insert-tiny.toml", std::path::Path::new(".")).unwrap();
        let cat = p.catalogue().unwrap();
        let schedule = p.schedule(&cat);
        let q_steps = schedule
            .executions
            .iter()
            .filter(|e| matches!(&e.id.at.step.kind, StepKind::Workload(w) if w.starts_with('q')))
            .count() as f64;
        let settles = schedule
            .executions
            .iter()
            .filter(|e| e.id.at.step.kind == StepKind::Settle)
            .count() as f64;
        let Stop::Time(q) = p.stop_for(DurationClass::Read) else {
            panic!("the fixture's q-steps run by time")
        };
        let q = q.as_secs_f64();
        let settle = p.settle.sleep(p.tables_for(&cat, 2).rows).as_secs_f64();
        let want = q_steps * (p.warmup_secs + q) + settles * settle;
        assert!(
            (schedule.estimated_secs - want).abs() < 1e-9,
            "{} != {want}",
            schedule.estimated_secs
        );
    }

    #[test]
    fn the_quick_plan_fits_in_three_minutes() {
        let p = parse(QUICK_PLAN, QUICK_PLAN_SOURCE, std::path::Path::new(".")).unwrap();
        // Leaves a minute for loads, connects and prepares.
        let secs = p.schedule(&p.catalogue().unwrap()).estimated_secs;
        assert!(secs < 120.0, "{secs}");
    }
}
