//! The schedule: a plan compiled once, with its catalogue, into the
//! ordered list of executions a run walks. Each [`Execution`] carries
//! everything it needs — its workload entry, scale, stop rule, warm-up,
//! tables, seed, phase and server settings, the hooks around it — and a
//! stable identity ([`ExecId`]): the same plan text gives the same list,
//! in the same order, with the same identities, on any host. The runner
//! asks the plan nothing; sharding and a history key on the identities.

use crate::metrics::profile::{Mode, Settings as ProfileSettings};
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What an execution carries of the plan: the step it runs (its identity
/// in every result) and the hooks around it.
pub use super::share::{ClientShare, Rendezvous};
pub use super::Stop;
pub use super::{Hook, HookAction, Retry, Step, StepKind};
use super::{HookScope, Maint, Plan, RoundOrder, ServerChange, When};
use crate::db::spec::TargetSpec;
use crate::workload::catalogue::{Catalogue, Entry};
use crate::workload::{self, DurationClass, Group, Scale, Tables};

/// Who an execution is, in words that survive a change of host: the
/// target's name, the repeat, the step's place in the sequence, and which
/// step at which client count ([`StepId`]). Every step result carries it
/// (its fields are the step file's own), and a report's cells, a
/// history's figures, a confirmation's jobs and a step file's name are
/// keyed on it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ExecId {
    pub target: String,
    pub repeat: u32,
    /// Position of the step in the sequence (1-based).
    pub seq: usize,
    #[serde(flatten)]
    pub at: StepId,
}

/// An execution less its target, repeat and place: what a report's row
/// and a history's series are of, the same across targets, repeats,
/// hosts and plans that move a step.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct StepId {
    /// The plan's phase it ran in, when the plan has phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Which step: its kind, workload and tag (`"kind": "workload",
    /// "workload": "scan", "tag": "warm"`), interval and manner.
    #[serde(flatten)]
    pub step: Step,
    /// 1 the first time the sequence runs this step, 2 the second.
    pub occurrence: u32,
    pub clients: u32,
}

/// `ma1011/r1/003:point-query.pre/c4`, with `#2` for a second
/// occurrence and `[phase]` when the plan has phases.
impl fmt::Display for ExecId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/r{}/", self.target, self.repeat)?;
        if let Some(p) = &self.at.phase {
            write!(f, "[{p}]")?;
        }
        write!(f, "{:03}:{}", self.seq, self.at.step)?;
        if self.at.occurrence > 1 {
            write!(f, "#{}", self.at.occurrence)?;
        }
        write!(f, "/c{}", self.at.clients)
    }
}

/// `phase:point-query.pre#2 c4`: a history's name of a series' step (the
/// text its store keeps, so stores written before the type stay read).
impl fmt::Display for StepId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.phase {
            write!(f, "{p}:")?;
        }
        write!(f, "{}", self.step)?;
        if self.occurrence > 1 {
            write!(f, "#{}", self.occurrence)?;
        }
        write!(f, " c{}", self.clients)
    }
}

impl StepId {
    /// Whether a name a user gave (`bisect --step`) names this step: its
    /// label (`point-query.pre`), or the whole identity as a history
    /// shows it (`point-query.pre c4`).
    pub fn is_named(&self, name: &str) -> bool {
        self.step.label() == name || self.to_string() == name
    }
}

/// What an execution does.
#[derive(Clone)]
pub enum Work {
    /// Create and fill sysbench's tables.
    Load {
        tables: u32,
        rows: i64,
        seed: u64,
        random_pct: u8,
    },
    /// The engine's settle, then a sleep.
    Settle {
        tables: Tables,
        sleep: Duration,
        max: Duration,
    },
    /// Timed DDL or upkeep, or a server restart.
    Maintenance { maint: Maint, tables: Tables },
    /// Clients running a workload.
    Workload(Box<WorkloadRun>),
}

/// A workload step, as the engine runs it.
#[derive(Clone)]
pub struct WorkloadRun {
    pub workload: Entry,
    pub scale: Scale,
    pub stop: Stop,
    pub warmup: Duration,
    /// Each step and repeat draws its own ids, reproducibly.
    pub seed: u64,
    /// Open loop: events a second across all clients.
    pub rate: Option<u64>,
    pub reconnect: bool,
    pub plain: bool,
    /// How many times a disturbed window of it may be measured again: 0
    /// for a step whose second window would not be the same work (one
    /// that stops by event count, removes rows, creates the tables, or is
    /// one of a long step's consecutive intervals).
    pub retries: u32,
}

/// One step at one client count for one target in one repeat.
#[derive(Clone)]
pub struct Execution {
    pub id: ExecId,
    /// Index into [`Schedule::targets`].
    pub target: usize,
    /// The server settings a restarting phase before it changed, in words.
    pub server_settings: Option<String>,
    /// The target as it runs at this step (a phase's settings applied).
    pub settings: TargetSpec,
    pub work: Work,
    /// The plan's hooks before and after it, in plan order.
    pub before: Vec<Hook>,
    pub after: Vec<Hook>,
    /// The report group it belongs to, when it is a workload.
    pub group: Option<Group>,
    /// Whether it creates the tables the rest of the sequence uses: the
    /// target starts afresh before it.
    pub creates_tables: bool,
    /// Whether a later step's data depends on it having run (loads,
    /// writes, settles, maintenance but ANALYZE): what a confirmation
    /// replays before the step it repeats.
    pub changes_data: bool,
    /// What this process does of it, when the step's clients are shared
    /// with other processes ([`Schedule::shared`]).
    pub part: Part,
    /// Its window is profiled (`[profile]`): how, and with what settings.
    pub profile: Option<(Mode, ProfileSettings)>,
    /// Its result is a measurement. False for the profiled repeat's
    /// executions (`[profile] mode = "separate"`), which run only for
    /// their profiles: no profiler touches a measured window.
    pub measured: bool,
    /// How often the server's waits are sampled over its window, where
    /// the engine keeps no totals of them (`[internals] wait_sampling`).
    pub wait_sampling: Option<std::time::Duration>,
}

/// What a process does of an execution whose clients several processes
/// share (`run --client-share`), decided in the schedule: the loop runs
/// what it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// All of it: no other process shares it.
    Whole,
    /// Its share of a workload's clients, and everything else: the data
    /// made, the set-up, the hooks, loads and maintenance.
    Leads,
    /// Its share of a workload's clients alone; the rest is the leading
    /// share's (a follower meets the others and records that the leader
    /// ran it). A follower's executions have no hooks.
    Follows,
}

impl Execution {
    /// This process does the execution's set-up, hooks and data (it is
    /// not a following share).
    pub fn leads(&self) -> bool {
        self.part != Part::Follows
    }

    /// The execution is the leading share's alone: a following share
    /// only meets the others around it.
    pub fn leader_only(&self) -> bool {
        self.part == Part::Follows && !matches!(self.work, Work::Workload(_))
    }

    pub fn maintenance(&self) -> Option<Maint> {
        self.id.at.step.maintenance()
    }

    /// `[target] label cN`, as the progress line and warnings name it.
    pub fn label(&self) -> String {
        format!(
            "[{}] {} c{}",
            self.settings.name,
            self.id.at.step.label(),
            self.id.at.clients
        )
    }

    /// The same execution in another repeat (its seed follows).
    fn in_repeat(&self, repeat: u32, plan_seed: u64) -> Execution {
        let mut e = self.clone();
        e.id.repeat = repeat;
        if let Work::Workload(w) = &mut e.work {
            w.seed = seed(plan_seed, e.id.seq, repeat, e.id.at.clients);
        }
        e
    }

    /// The timed part of the execution: its warm-up and window, or its
    /// settle sleep. Loads, steps that stop when their work is done and
    /// server starts are not known ahead.
    pub fn timed_secs(&self) -> f64 {
        match &self.work {
            Work::Settle { sleep, .. } => sleep.as_secs_f64(),
            Work::Load { .. } | Work::Maintenance { .. } => 0.0,
            Work::Workload(w) => match w.stop {
                Stop::Time(d) => w.warmup.as_secs_f64() + d.as_secs_f64(),
                Stop::Events(_) => 0.0,
            },
        }
    }
}

/// A plan compiled: its targets and every execution in run order, with
/// what the run says before it starts.
#[derive(Clone)]
pub struct Schedule {
    pub targets: Vec<TargetSpec>,
    pub repeats: u32,
    pub executions: Vec<Execution>,
    /// Whether the sequence starts by creating the tables (a target then
    /// starts afresh), rather than running on tables loaded before.
    pub loads: bool,
    /// The table a sequence that does not load checks is there; `None`
    /// when only the plan's own workloads run (they bring their own).
    pub needs_table: Option<String>,
    /// The run's timed part, in seconds: warm-ups, timed windows and
    /// settle sleeps.
    pub estimated_secs: f64,
    /// What the plan leaves out, in words.
    pub skipped: Vec<String>,
    /// The wait before a disturbed window is measured again, and the
    /// extra time all such windows may take.
    pub retry: Retry,
    /// The targets others are compared with: the bases of the plan's
    /// comparisons, or the first target (indices into `targets`).
    pub bases: Vec<usize>,
    /// This process's share of every step's clients, and how the shares
    /// meet (`run --client-share I/M`); `None`: every client runs here.
    pub rendezvous: Option<Rendezvous>,
    plan_seed: u64,
    order: RoundOrder,
}

/// The targets' order in round `repeat`: as listed, or a permutation
/// drawn from the plan's seed and the round (the same on every host, in
/// every shard and client share, and when a run resumes).
pub fn round_order(order: RoundOrder, plan_seed: u64, repeat: u32, targets: usize) -> Vec<usize> {
    let mut out: Vec<usize> = (0..targets).collect();
    if order == RoundOrder::Random {
        use rand::{seq::SliceRandom, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(
            plan_seed ^ 0x6f72_6465_7200_0000 ^ u64::from(repeat),
        );
        out.shuffle(&mut rng);
    }
    out
}

impl Schedule {
    /// The targets' order in round `repeat` ([`round_order`]).
    pub fn round_order(&self, repeat: u32) -> Vec<usize> {
        round_order(self.order, self.plan_seed, repeat, self.targets.len())
    }

    /// The schedule of one process of several that share every step's
    /// clients: how they meet, and each execution's part (the leading
    /// share does everything but the other shares' clients; a following
    /// share's executions lose their hooks).
    pub fn shared(mut self, rv: Rendezvous) -> Schedule {
        let leads = rv.share.leads();
        for e in &mut self.executions {
            e.part = if leads { Part::Leads } else { Part::Follows };
            if !leads {
                e.before.clear();
                e.after.clear();
            }
        }
        self.rendezvous = Some(rv);
        self
    }

    /// The executions of one target in one repeat, in order.
    pub fn of(&self, target: usize, repeat: u32) -> impl Iterator<Item = &Execution> {
        self.executions
            .iter()
            .filter(move |e| e.target == target && e.id.repeat == repeat)
    }

    /// Repeat 1's executions again as repeat `repeat`, with their own
    /// seeds (what `run --confirm` adds).
    pub fn as_repeat(&self, e: &Execution, repeat: u32) -> Execution {
        e.in_repeat(repeat, self.plan_seed)
    }

    /// Every identity, one a line, with what it runs: `relbench check
    /// --schedule` prints it, and a test compares it across processes.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for e in &self.executions {
            let what = match &e.work {
                Work::Load { rows, tables, .. } => format!("load {tables}×{rows} rows"),
                Work::Settle { sleep, .. } => format!("settle, sleep {:.1} s", sleep.as_secs_f64()),
                Work::Maintenance { maint, tables } => {
                    format!("{} on {} table(s)", maint.name(), tables.names.len())
                }
                Work::Workload(w) => {
                    let stop = match w.stop {
                        Stop::Time(d) => format!("{:.1} s", d.as_secs_f64()),
                        Stop::Events(n) => format!("{n} events"),
                    };
                    let mut s = format!(
                        "{stop}, warm-up {:.1} s, seed {:#x}",
                        w.warmup.as_secs_f64(),
                        w.seed
                    );
                    if let Some(r) = w.rate {
                        s += &format!(", {r}/s");
                    }
                    s
                }
            };
            let hooks = e.before.len() + e.after.len();
            out += &format!(
                "{}\t{what}{}\n",
                e.id,
                if hooks > 0 {
                    format!(", {hooks} hook(s)")
                } else {
                    String::new()
                }
            );
        }
        out
    }
}

/// Each step and repeat draws its own ids, reproducibly.
fn seed(plan_seed: u64, seq: usize, repeat: u32, clients: u32) -> u64 {
    plan_seed ^ ((seq as u64) << 32) ^ ((repeat as u64) << 48) ^ clients as u64
}

impl Plan {
    /// The plan's catalogue: the built-in entries with its parameters, its
    /// own workloads, and every entry its steps name. Fails only for a
    /// plan that was not validated (a record edited by hand).
    pub fn catalogue(&self) -> Result<Catalogue, crate::workload::catalogue::Unresolved> {
        let mut cat = Catalogue::new(
            &self.insert_benchmark,
            &self.linkbench,
            &self.tpcc,
            &self.workloads,
            &self.lua,
        );
        for s in &self.steps {
            if let StepKind::Workload(name) = &s.kind {
                cat.resolve(name)?;
            }
        }
        Ok(cat)
    }

    /// The plan compiled against its catalogue: every execution in run
    /// order — repeats outermost, then targets (so targets take turns, in
    /// each round's order: [`round_order`]), then the sequence, then
    /// client counts.
    pub fn schedule(&self, cat: &Catalogue) -> Schedule {
        let order = self.order(cat);
        let mut executions = Vec::new();
        // The profiled repeat, when profiles are taken apart from the
        // measured windows, comes after every measured one.
        let separate = self.profile.mode == Some(Mode::Separate);
        for repeat in 1..=self.repeats + u32::from(separate) {
            let measured = repeat <= self.repeats;
            for ti in round_order(self.order, self.seed, repeat, self.targets.len()) {
                let target = &self.targets[ti];
                for &(i, clients) in &order {
                    let mut e = self.execution(cat, ti, target, repeat, i, clients);
                    e.measured = measured;
                    if matches!(e.work, Work::Workload(_)) && (!separate || !measured) {
                        e.profile = self.profile.of(&e.id.at);
                    }
                    executions.push(e);
                }
            }
        }
        let estimated_secs = executions.iter().map(Execution::timed_secs).sum::<f64>();
        let mut bases: Vec<usize> = self
            .comparisons
            .iter()
            .filter_map(|c| self.targets.iter().position(|t| t.name == c.base))
            .collect();
        bases.sort_unstable();
        bases.dedup();
        if bases.is_empty() && !self.targets.is_empty() {
            bases.push(0);
        }
        let loads = self
            .steps
            .first()
            .is_some_and(|s| self.creates_tables(cat, s));
        let uses_suite_tables = self.steps.iter().any(|s| match entry(cat, s) {
            Some(w) => w.meta().group != Group::Custom,
            None => true,
        });
        Schedule {
            targets: self.targets.clone(),
            repeats: self.repeats,
            executions,
            loads,
            needs_table: uses_suite_tables
                .then(|| self.tables_for(cat, self.max_clients()).names[0].clone()),
            estimated_secs,
            skipped: self.skipped(),
            retry: self.interference,
            bases,
            rendezvous: None,
            plan_seed: self.seed,
            order: self.order,
        }
    }

    /// The order of one target's sequence: (step index, clients).
    fn order(&self, cat: &Catalogue) -> Vec<(usize, u32)> {
        let mut out = Vec::new();
        if self.sequence_per_client_count(cat) {
            // Tables one per client (the Insert Benchmark): each client
            // count runs the whole sequence on fresh ones, and its settle
            // steps know how many there are.
            for &clients in &self.clients {
                out.extend((0..self.steps.len()).map(|i| (i, clients)));
            }
            return out;
        }
        let mut i = 0;
        while i < self.steps.len() {
            // A step measured in intervals runs them back to back at each
            // client count: one long window, cut up.
            let run = match self.steps[i].interval {
                Some(iv) => (iv.of as usize).min(self.steps.len() - i),
                None => 1,
            };
            for &clients in self.client_counts(&self.steps[i]) {
                if self.skips(&self.steps[i], clients) {
                    continue;
                }
                out.extend((i..i + run).map(|k| (k, clients)));
            }
            i += run;
        }
        out
    }

    fn execution(
        &self,
        cat: &Catalogue,
        ti: usize,
        target: &TargetSpec,
        repeat: u32,
        i: usize,
        clients: u32,
    ) -> Execution {
        let step = &self.steps[i];
        let seq = i + 1;
        let occurrence = 1 + self.steps[..i].iter().filter(|s| *s == step).count() as u32;
        let phase = self.phase_of(seq).map(|p| p.name.clone());
        let server = self.server_at(seq);
        let w = entry(cat, step);
        let work = match &step.kind {
            StepKind::Load => Work::Load {
                tables: self.tables,
                rows: self.rows,
                seed: self.seed,
                random_pct: self.random_pct,
            },
            StepKind::Settle => {
                let tables = self.tables_for(cat, clients);
                Work::Settle {
                    sleep: self.settle.sleep(tables.rows),
                    max: Duration::from_secs_f64(self.settle.max_secs),
                    tables,
                }
            }
            StepKind::Maintenance(m) => Work::Maintenance {
                maint: *m,
                tables: self.tables_for(cat, clients),
            },
            StepKind::Workload(_) => {
                let w = w.expect("a validated plan names catalogue entries").clone();
                Work::Workload(Box::new(
                    self.workload_run(cat, w, step, seq, repeat, clients),
                ))
            }
        };
        let mut e = Execution {
            id: ExecId {
                target: target.name.clone(),
                repeat,
                seq,
                at: StepId {
                    phase,
                    step: step.clone(),
                    occurrence,
                    clients,
                },
            },
            target: ti,
            server_settings: server.map(ServerChange::describe),
            settings: server.map_or_else(|| target.clone(), |c| c.apply(target)),
            work,
            before: Vec::new(),
            after: Vec::new(),
            group: w.map(|w| w.meta().group),
            creates_tables: self.creates_tables(cat, step),
            part: Part::Whole,
            profile: None,
            measured: true,
            wait_sampling: self.internals.wait_sampling(),
            changes_data: match &step.kind {
                StepKind::Load | StepKind::Settle => true,
                StepKind::Workload(_) => w.is_some_and(|w| w.meta().changes_data()),
                // A restart brings the phase's settings; the others
                // change the tables or their indexes.
                StepKind::Maintenance(m) => *m != Maint::Analyze,
            },
        };
        e.before = self.hooks_around(&e, When::Before);
        e.after = self.hooks_around(&e, When::After);
        e
    }

    fn workload_run(
        &self,
        cat: &Catalogue,
        w: Entry,
        step: &Step,
        seq: usize,
        repeat: u32,
        clients: u32,
    ) -> WorkloadRun {
        let meta = w.meta();
        let mut scale = self.scale_at(cat, seq);
        scale.own_table = step.once;
        scale.clients = clients;
        // A step with a fixed amount of work (insert N rows, build the
        // indexes, one scan per client) counts all of it: no warm-up, stop
        // when it is done.
        let stop = match w.events(&scale, clients) {
            _ if step.once => Stop::Events(u64::from(clients)),
            Some(n) => Stop::Events(n),
            None => self.stop_of(step, meta.duration),
        };
        // Of a step measured in intervals only the first warms up.
        let warms_up = meta.warms_up && step.interval.map_or(true, |i| i.n == 1) && !step.once;
        let same_work_again = matches!(stop, Stop::Time(_))
            && !step.once
            && step.interval.is_none()
            && !meta.removes_rows
            && !meta.creates_tables;
        drop(meta);
        WorkloadRun {
            scale,
            stop,
            warmup: Duration::from_secs_f64(if warms_up { self.warmup_secs } else { 0.0 }),
            seed: seed(self.seed, seq, repeat, clients),
            rate: step.rate,
            reconnect: step.reconnect,
            plain: step.plain,
            retries: if same_work_again {
                self.interference.retries
            } else {
                0
            },
            workload: w,
        }
    }

    /// The hooks that run around an execution, in plan order.
    fn hooks_around(&self, e: &Execution, when: When) -> Vec<Hook> {
        self.hooks
            .iter()
            .filter(|h| h.when == when && self.hook_applies(h, e))
            .cloned()
            .collect()
    }

    fn hook_applies(&self, h: &Hook, e: &Execution) -> bool {
        match &h.scope {
            HookScope::Steps => true,
            HookScope::Step(name) => e.id.at.step.name() == name,
            HookScope::Phase(name) => {
                let Some(p) = self.phases.iter().position(|p| &p.name == name) else {
                    return false;
                };
                let end = self.phases.get(p + 1).map_or(self.steps.len(), |n| n.first);
                // After the phase's restart: its hooks see its settings.
                let restarts = usize::from(self.phases[p].server.is_some());
                let first = (self.phases[p].first + restarts).min(end.saturating_sub(1));
                let counts = self.client_counts(&e.id.at.step);
                match h.when {
                    When::Before => e.id.seq == first + 1 && e.id.at.clients == counts[0],
                    When::After => e.id.seq == end && e.id.at.clients == counts[counts.len() - 1],
                }
            }
        }
    }

    /// Whether the step creates the tables the rest of the sequence uses
    /// (sysbench's load, the Insert Benchmark's l.i0, LinkBench's lb.load).
    pub(super) fn creates_tables(&self, cat: &Catalogue, step: &Step) -> bool {
        match &step.kind {
            StepKind::Load => true,
            StepKind::Settle | StepKind::Maintenance(_) => false,
            StepKind::Workload(_) => entry(cat, step).is_some_and(|w| w.meta().creates_tables),
        }
    }

    /// What the data looks like when step `seq` (1-based) starts.
    fn scale_at(&self, cat: &Catalogue, seq: usize) -> Scale {
        Scale {
            tables: self.tables,
            rows: self.rows,
            // A step earlier in the sequence that deletes rows leaves
            // holes in the ids.
            rows_may_be_missing: self.steps[..seq.saturating_sub(1)]
                .iter()
                .any(|s| entry(cat, s).is_some_and(|w| w.meta().removes_rows)),
            ids: self.distribution,
            random_pct: self.random_pct,
            own_table: false,
            clients: 1,
        }
    }

    /// The tables of the sequence's family at `clients`, when a family
    /// brings its own (the Insert Benchmark, LinkBench).
    fn family_tables(&self, cat: &Catalogue, clients: u32) -> Option<Tables> {
        let scale = self.scale_at(cat, 1);
        self.steps
            .iter()
            .filter_map(|s| entry(cat, s))
            .find_map(|w| w.tables(&scale, clients))
    }

    /// Whether each client count runs the whole sequence on fresh
    /// tables (the Insert Benchmark's are one per client).
    fn sequence_per_client_count(&self, cat: &Catalogue) -> bool {
        self.steps
            .iter()
            .filter_map(|s| entry(cat, s))
            .any(|w| w.sequence_per_client_count())
    }

    /// The tables there are, and their rows, while the sequence runs at
    /// `clients`: the family's, or sysbench's.
    pub fn tables_for(&self, cat: &Catalogue, clients: u32) -> Tables {
        self.family_tables(cat, clients).unwrap_or_else(|| Tables {
            names: (1..=self.tables)
                .map(workload::sysbench::sql::table)
                .collect(),
            rows: self.rows as u64 * u64::from(self.tables),
        })
    }

    fn max_clients(&self) -> u32 {
        self.clients.iter().copied().max().unwrap_or(1)
    }

    /// When a workload step stops: its interval's length, or its class's
    /// duration.
    fn stop_of(&self, step: &Step, class: DurationClass) -> Stop {
        match &step.interval {
            Some(i) => Stop::Time(Duration::from_millis(i.ms)),
            None => self.stop_for(class),
        }
    }
}

/// The catalogue entry a step runs, if it is a workload.
fn entry<'c>(cat: &'c Catalogue, step: &Step) -> Option<&'c Entry> {
    match &step.kind {
        StepKind::Workload(w) => cat.find(w),
        _ => None,
    }
}
