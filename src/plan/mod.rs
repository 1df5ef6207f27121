//! Plans: what to run, against which targets, at what scale.
//!
//! A plan file is parsed and fully validated ([`parse`]) before anything
//! runs, then expanded into the ordered list of step executions the runner
//! walks ([`Plan::executions`]).

mod parse;

pub use parse::{parse, PlanError, PlanErrors};

use std::time::Duration;

pub use crate::db::spec::{Access, Managed, TargetSpec};
use serde::{Deserialize, Serialize};

pub use crate::workload::maint::Maint;
use crate::workload::{self, DurationClass, Workload};

/// When a step stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// After this long (warm-up not included).
    Time(Duration),
    /// After this many events, all clients together (warm-up not included).
    Events(u64),
}

/// The built-in quick plan's text.
pub const QUICK_PLAN: &str = include_str!("quick.toml");
/// The commented example `relbench init` writes.
pub const EXAMPLE_PLAN: &str = include_str!("example.toml");
/// How the quick plan is named in messages and results.
pub const QUICK_PLAN_SOURCE: &str = "<built-in quick plan>";

/// A validated plan.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Plan {
    /// The built-in suite the steps come from, or "custom".
    pub suite: String,
    pub steps: Vec<Step>,
    pub tables: u32,
    pub rows: i64,
    pub clients: Vec<u32>,
    pub repeats: u32,
    pub seed: u64,
    /// How ids are drawn where the catalogue leaves it open.
    #[serde(default)]
    pub distribution: crate::workload::dist::Kind,
    pub warmup_secs: f64,
    pub read: StopSpec,
    pub write: StopSpec,
    pub insert: StopSpec,
    pub settle: Settle,
    pub targets: Vec<TargetSpec>,
    /// The Insert Benchmark's sizes (used by its steps only).
    #[serde(default)]
    pub insert_benchmark: crate::workload::insert::Params,
    /// LinkBench's parameters (`[linkbench]`, used by its steps only).
    #[serde(default)]
    pub linkbench: crate::workload::linkbench::Params,
    /// The plan's own SQL workloads (`[[workload]]`), registered when the
    /// plan is read so that its steps can name them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<crate::workload::script::ScriptSpec>,
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
    /// What the report compares (`[[comparison]]`): none means every
    /// target against the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<Comparison>,
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

impl Hook {
    /// Whether it runs around this execution, given the plan's phases.
    pub fn applies(&self, plan: &Plan, e: &Execution, when: When) -> bool {
        if self.when != when {
            return false;
        }
        match &self.scope {
            HookScope::Steps => true,
            HookScope::Step(name) => e.step.name() == name,
            HookScope::Phase(name) => {
                let Some(p) = plan.phases.iter().position(|p| &p.name == name) else {
                    return false;
                };
                let end = plan.phases.get(p + 1).map_or(plan.steps.len(), |n| n.first);
                // After the phase's restart: its hooks see its settings.
                let restarts = usize::from(plan.phases[p].server.is_some());
                let first = (plan.phases[p].first + restarts).min(end.saturating_sub(1));
                let counts = plan.client_counts(&e.step);
                match when {
                    When::Before => e.seq == first + 1 && e.clients == counts[0],
                    When::After => e.seq == end && e.clients == counts[counts.len() - 1],
                }
            }
        }
    }
}

/// How long a workload step runs after its warm-up.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum StopSpec {
    Secs(f64),
    Events(u64),
}

impl StopSpec {
    pub fn to_stop(self) -> Stop {
        match self {
            StopSpec::Secs(s) => Stop::Time(Duration::from_secs_f64(s)),
            StopSpec::Events(n) => Stop::Events(n),
        }
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

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", content = "workload", rename_all = "lowercase")]
pub enum StepKind {
    Load,
    Settle,
    Workload(String),
    /// Timed DDL or upkeep, or a server restart (`drop-table`, `restart`).
    Maintenance(Maint),
}

/// One entry of the sequence.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
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

    pub fn workload(&self) -> Option<&'static dyn Workload> {
        match &self.kind {
            StepKind::Workload(w) => workload::find(w),
            _ => None,
        }
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
        if self.plain {
            s += " unprepared";
        }
        if let Some(r) = self.rate {
            s += &format!(" at {r}/s");
        }
        if let Some(i) = &self.interval {
            s += &format!(" @{}/{}", i.n, i.of);
        }
        s
    }

    /// Whether the step creates the tables the rest of the sequence uses:
    /// the target starts afresh before it (sysbench's load, the Insert
    /// Benchmark's l.i0).
    pub fn creates_tables(&self) -> bool {
        match &self.kind {
            StepKind::Load => true,
            StepKind::Settle | StepKind::Maintenance(_) => false,
            StepKind::Workload(_) => self.workload().is_some_and(|w| w.meta().creates_tables),
        }
    }

    /// The step a label names (`scan.warm`), as results of schema version 2
    /// wrote it. A workload whose own name has a dot (the Insert Benchmark's
    /// `l.i0`) keeps it: `l.i1.again` is `l.i1` tagged `again`.
    pub fn from_label(label: &str, is_workload: bool) -> Step {
        let split = label
            .match_indices('.')
            .map(|(i, _)| i)
            .chain(std::iter::once(label.len()))
            .find(|&i| workload::find(&label[..i]).is_some())
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
            kind,
            tag: tag.map(String::from),
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

/// One step at one client count for one target in one repeat.
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    pub repeat: u32,
    pub target: usize,
    /// Position of the step in the sequence (1-based).
    pub seq: usize,
    pub step: Step,
    /// 1 the first time the sequence runs this step, 2 the second.
    pub occurrence: u32,
    /// Client count; for load, the loader's threads are decided at run time.
    pub clients: u32,
}

impl Plan {
    /// Whether the sequence is (or includes) the Insert Benchmark: its
    /// tables are one per client, `pi1`…
    pub fn runs_linkbench(&self) -> bool {
        self.steps.iter().any(|s| {
            s.workload()
                .is_some_and(|w| w.meta().group == crate::workload::Group::LinkBench)
        })
    }

    pub fn runs_insert_benchmark(&self) -> bool {
        self.steps.iter().any(|s| {
            s.workload()
                .is_some_and(|w| w.meta().group == crate::workload::Group::Insert)
        })
    }

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

    /// What the data looks like when step `seq` (1-based) starts.
    pub fn scale_at(&self, seq: usize) -> workload::Scale {
        workload::Scale {
            tables: self.tables,
            rows: self.rows,
            // A step earlier in the sequence that deletes rows leaves
            // holes in the ids.
            rows_may_be_missing: self.steps[..seq.saturating_sub(1)]
                .iter()
                .any(|s| s.workload().is_some_and(|w| w.meta().removes_rows)),
            ids: self.distribution,
            insert: self.insert_benchmark,
            linkbench: self.linkbench,
            random_pct: self.random_pct,
            own_table: false,
            clients: 1,
        }
    }

    /// The tables a settle step analyzes and flushes (never empty: a plan
    /// has at least one table, or one client), at the plan's largest
    /// client count.
    pub fn tables_for_settle(&self) -> (Vec<String>, u64) {
        self.tables_for(self.clients.iter().copied().max().unwrap_or(1))
    }

    /// The tables there are, and their rows, while the sequence runs at
    /// `clients`: the Insert Benchmark has one per client.
    pub fn tables_for(&self, clients: u32) -> (Vec<String>, u64) {
        if self.runs_linkbench() {
            // Nodes and about four links each (the measured mean degree).
            let nodes = (self.linkbench.maxid1 - self.linkbench.startid1).max(0) as f64;
            let rows = nodes * (1.0 + crate::workload::linkbench::model::mean_degree());
            (
                crate::workload::linkbench::sql::TABLES
                    .iter()
                    .map(|t| t.to_string())
                    .collect(),
                rows as u64,
            )
        } else if self.runs_insert_benchmark() {
            let tables = if self.insert_benchmark.shared_table {
                1
            } else {
                clients
            };
            (
                (0..tables).map(crate::workload::insert::table).collect(),
                self.rows as u64 * u64::from(clients),
            )
        } else {
            (
                (1..=self.tables)
                    .map(crate::workload::sysbench::sql::table)
                    .collect(),
                self.rows as u64 * u64::from(self.tables),
            )
        }
    }

    /// When a workload step stops: its interval's length, or its class's
    /// duration.
    pub fn stop_of(&self, step: &Step, class: DurationClass) -> StopSpec {
        match &step.interval {
            Some(i) => StopSpec::Secs(i.ms as f64 / 1e3),
            None => self.stop_for(class),
        }
    }

    /// Whether a workload step warms up first: its workload says so, and
    /// of a step measured in intervals only the first does.
    pub fn warms_up(&self, step: &Step) -> bool {
        step.workload().is_some_and(|w| w.meta().warms_up)
            && step.interval.map_or(true, |i| i.n == 1)
    }

    pub fn stop_for(&self, class: DurationClass) -> StopSpec {
        match class {
            DurationClass::Read => self.read,
            DurationClass::Write => self.write,
            DurationClass::Insert => self.insert,
        }
    }

    /// Every step execution in run order: repeats outermost, then targets
    /// (so targets take turns), then the sequence, then client counts.
    pub fn executions(&self) -> Vec<Execution> {
        let mut out = Vec::new();
        for repeat in 1..=self.repeats {
            for target in 0..self.targets.len() {
                if self.runs_insert_benchmark() {
                    // The benchmark's tables are one per client: each
                    // client count runs the whole sequence on fresh ones,
                    // and its settle steps know how many there are.
                    for &clients in &self.clients {
                        for (i, step) in self.steps.iter().enumerate() {
                            out.push(Execution {
                                repeat,
                                target,
                                seq: i + 1,
                                step: step.clone(),
                                occurrence: 1 + self.steps[..i]
                                    .iter()
                                    .filter(|s| *s == step)
                                    .count() as u32,
                                clients,
                            });
                        }
                    }
                    continue;
                }
                let mut i = 0;
                while i < self.steps.len() {
                    // A step measured in intervals runs them back to back
                    // at each client count: one long window, cut up.
                    let run = match self.steps[i].interval {
                        Some(iv) => (iv.of as usize).min(self.steps.len() - i),
                        None => 1,
                    };
                    for &clients in self.client_counts(&self.steps[i]) {
                        if self.skips(&self.steps[i], clients) {
                            continue;
                        }
                        for (k, step) in self.steps.iter().enumerate().skip(i).take(run) {
                            let occurrence =
                                1 + self.steps[..k].iter().filter(|s| *s == step).count() as u32;
                            out.push(Execution {
                                repeat,
                                target,
                                seq: k + 1,
                                step: step.clone(),
                                occurrence,
                                clients,
                            });
                        }
                    }
                    i += run;
                }
            }
        }
        out
    }

    /// Makes the plan's own workloads findable by name: a plan read back
    /// from a run's record (`run --confirm`) was not parsed, which is
    /// where a plan's workloads are registered otherwise.
    pub fn register_workloads(&self) {
        for w in &self.workloads {
            crate::workload::script::register(w);
        }
    }

    /// Whether some step needs the suite's tables (sysbench's or the
    /// Insert Benchmark's): every step but the plan's own workloads, which
    /// may bring their own.
    pub fn uses_suite_tables(&self) -> bool {
        self.steps.iter().any(|s| match s.workload() {
            Some(w) => w.meta().group != crate::workload::Group::Custom,
            None => true,
        })
    }

    /// Whether the sequence starts by creating the tables (a target then
    /// starts afresh), rather than running on tables loaded before.
    pub fn loads(&self) -> bool {
        self.steps.first().is_some_and(|s| s.creates_tables())
    }

    /// The run's timed part: warm-ups, timed windows and settle sleeps.
    /// Loads, steps that stop when their work is done, server starts and
    /// a window stretched by an event in flight at its end add to it; a
    /// step that fails early takes less.
    pub fn estimated_secs(&self) -> f64 {
        self.executions()
            .iter()
            .map(|e| match &e.step.kind {
                StepKind::Settle => self
                    .settle
                    .sleep(self.tables_for(e.clients).1)
                    .as_secs_f64(),
                StepKind::Load | StepKind::Maintenance(_) => 0.0,
                StepKind::Workload(_) => {
                    let Some(w) = e.step.workload() else {
                        return 0.0;
                    };
                    let meta = w.meta();
                    // A step with a fixed amount of work (the Insert
                    // Benchmark's l.i1) runs until it is done, however long
                    // the plan's duration for its class is: no time known.
                    if e.step.once || w.events(&self.scale_at(e.seq), e.clients).is_some() {
                        return 0.0;
                    }
                    let warmup = if self.warms_up(&e.step) {
                        self.warmup_secs
                    } else {
                        0.0
                    };
                    warmup
                        + match self.stop_of(&e.step, meta.duration) {
                            StopSpec::Secs(s) => s,
                            StopSpec::Events(_) => 0.0,
                        }
                }
            })
            .sum()
    }
}

/// Parses a duration: `"30s"`, `"500ms"`, `"2m"`, `"1h"` or a number of seconds.
/// Seconds as a plan would write them: `100ms`, `30s`.
pub fn human_duration(secs: f64) -> String {
    if secs < 1.0 {
        format!("{:.0}ms", secs * 1e3)
    } else {
        format!("{secs}s")
    }
}

pub fn parse_duration(s: &str) -> Option<f64> {
    let s = s.trim();
    let (num, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = s.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (s, 1.0)
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v * mult)
}

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
        assert_eq!(title("l.i0"), "l.i0");
        assert_eq!(title("l.i1.again"), "l.i1 (again)");
        assert_eq!(title("qr100"), "qr100");
        assert_eq!(Step::from_label("load", false).kind, StepKind::Load);
        assert_eq!(
            Step::from_label("settle.pre", false),
            Step {
                kind: StepKind::Settle,
                tag: Some("pre".into()),
                interval: None,
                client_counts: None,
                rate: None,
                once: false,
                reconnect: false,
                plain: false,
            }
        );
    }

    #[test]
    fn executions_interleave_targets_per_repeat() {
        let mut p = parse(QUICK_PLAN, QUICK_PLAN_SOURCE, std::path::Path::new(".")).unwrap();
        p.repeats = 2;
        p.steps.truncate(3);
        p.clients = vec![1, 2];
        let e = p.executions();
        let order: Vec<_> = e
            .iter()
            .map(|x| (x.repeat, x.target, x.seq, x.clients))
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
        let q_steps = p
            .executions()
            .iter()
            .filter(|e| matches!(&e.step.kind, StepKind::Workload(w) if w.starts_with('q')))
            .count() as f64;
        let settles = p
            .executions()
            .iter()
            .filter(|e| e.step.kind == StepKind::Settle)
            .count() as f64;
        let StopSpec::Secs(q) = p.stop_for(DurationClass::Read) else {
            panic!("the fixture's q-steps run by time")
        };
        let settle = p.settle.sleep(p.tables_for_settle().1).as_secs_f64();
        let want = q_steps * (p.warmup_secs + q) + settles * settle;
        assert!(
            (p.estimated_secs() - want).abs() < 1e-9,
            "{} != {want}",
            p.estimated_secs()
        );
    }

    #[test]
    fn the_quick_plan_fits_in_three_minutes() {
        let p = parse(QUICK_PLAN, QUICK_PLAN_SOURCE, std::path::Path::new(".")).unwrap();
        // Leaves a minute for loads, connects and prepares.
        assert!(p.estimated_secs() < 120.0, "{}", p.estimated_secs());
    }
}
