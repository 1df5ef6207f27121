//! The results directory: `run.json` plus one JSON file per step execution
//! under `steps/`, each written to a temporary file and renamed into place
//! as soon as its step ends, so an interrupted run loses at most the step in
//! flight. Every file carries `schema_version`.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::db::TargetFacts;
use crate::measure::LatencySummary;
pub use crate::metrics::costs::{CounterDeltas, StepMetrics};
use crate::metrics::device::Devices;
use crate::metrics::host::{Filesystem, HostFacts};
use crate::plan::ExecId;
pub use crate::util::{refuse_link, write_file};
use crate::workload::Group;
pub use crate::workload::Sla;

pub mod adaptive;
pub mod judge;
mod load;
pub use load::{load_run, read_run_info, read_step, LoadedRun};
pub mod merge;
pub mod profiles;
mod schema;
use schema::read_json;
pub mod shares;
pub use merge::load_runs;
pub use shares::{ShareRun, ShareStep};

/// The target fact that says how its load put its rows in (recorded with
/// its settings, so "settings that differ" shows it).
pub const LOAD_METHOD: &str = "relbench.load_method";

/// The target fact that names the steps whose statements went otherwise
/// than their benchmark sends them (`prepared: lb.request`), recorded
/// with its settings for the same reason.
pub const STATEMENTS: &str = "relbench.statements";

/// Bumped when a field changes meaning or goes away; readers refuse newer
/// versions instead of misreading them.
pub const SCHEMA_VERSION: u32 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Complete,
    Interrupted,
    Failed,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    pub schema_version: u32,
    pub relbench_version: String,
    pub status: RunStatus,
    pub started: String,
    pub finished: Option<String>,
    pub host: HostFacts,
    /// Where the plan came from, its text as written, and the directory
    /// relative paths in it are resolved against.
    pub plan_source: String,
    pub plan_text: String,
    pub plan_dir: String,
    pub plan: crate::plan::Plan,
    pub targets: Vec<TargetRecord>,
    /// The plan's identity across hosts ([`crate::plan::shard::plan_hash`]
    /// of its text): shards of one study carry the same.
    #[serde(default)]
    pub plan_hash: Option<String>,
    /// The part of the plan this run ran, when it is a shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
    /// This run is one share of every step's clients
    /// (`relbench run --client-share I/M`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_share: Option<ShareRun>,
    /// Hosts the run went on on after `host`, when it was resumed on
    /// another machine with `--new-host`: a report compares the windows
    /// of each only with the base measured on that one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub later_hosts: Vec<HostFacts>,
    /// Where the data relbench made for targets whose plan names no place
    /// went (`run --data-dir`); `<results>/data` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
}

/// What a shard ran of its plan (`relbench run --shard I/N`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ShardRecord {
    #[serde(flatten)]
    pub shard: crate::plan::Shard,
    /// The plan's targets it ran, in plan order.
    pub targets: Vec<String>,
    /// Of those, the ones every shard runs (the bases and their copies).
    pub everywhere: Vec<String>,
}

impl RunInfo {
    /// The record of a run about to start: where its plan came from and
    /// the plan as it was read, on this host, now.
    pub fn start(
        plan_source: String,
        plan_text: String,
        plan_dir: &Path,
        plan: crate::plan::Plan,
    ) -> RunInfo {
        RunInfo {
            schema_version: SCHEMA_VERSION,
            relbench_version: env!("CARGO_PKG_VERSION").to_string(),
            status: RunStatus::Running,
            started: crate::util::utc_iso(crate::util::unix_now()),
            finished: None,
            host: crate::metrics::host::facts(),
            plan_source,
            plan_text: plan_text.clone(),
            plan_dir: plan_dir.display().to_string(),
            plan,
            targets: Vec::new(),
            plan_hash: Some(crate::plan::shard::plan_hash(&plan_text)),
            shard: None,
            client_share: None,
            later_hosts: Vec::new(),
            data_dir: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TargetRecord {
    pub name: String,
    pub engine: crate::db::EngineKind,
    #[serde(flatten)]
    pub facts: TargetFacts,
    pub filesystem: Option<Filesystem>,
    /// The block devices whose IO the sampler reads for this target, or
    /// why there are none.
    #[serde(default)]
    pub devices: Option<Devices>,
    #[serde(default)]
    pub devices_not_measured: Option<String>,
}

impl TargetRecord {
    /// Records a fact of relbench's own about the target (`relbench.…`)
    /// with its settings, where "settings that differ" compares it: among
    /// every setting when the server reported them all, and among the
    /// recorded few always.
    pub fn set_fact(&mut self, key: &str, value: String) {
        if !self.facts.settings.is_empty() {
            self.facts.settings.insert(key.into(), value.clone());
        }
        self.facts.config.insert(key.into(), value);
    }
}

/// What one figure of throughput counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    #[serde(rename = "ops/s")]
    OpsPerSec,
    #[serde(rename = "rows/s")]
    RowsPerSec,
}

impl Unit {
    pub fn name(self) -> &'static str {
        match self {
            Unit::OpsPerSec => "ops/s",
            Unit::RowsPerSec => "rows/s",
        }
    }
}

/// A window that another program disturbed, measured again after it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Attempt {
    /// Unix time it started.
    pub started: f64,
    pub secs: f64,
    pub throughput: f64,
    pub events: u64,
    /// What disturbed it.
    pub disturbed: String,
    /// What measuring it again cost: the wait, the warm-up and the next
    /// window, in seconds.
    #[serde(default)]
    pub cost_secs: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StepResult {
    pub schema_version: u32,
    /// Which execution of the schedule this is: target, repeat, place,
    /// phase, step (`"kind": "workload", "workload": "scan", "tag":
    /// "warm"`), occurrence and clients, as the step file's own fields.
    #[serde(flatten)]
    pub id: ExecId,
    /// The server settings its phase restarted with, in words (`None`:
    /// the target's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_settings: Option<String>,
    pub group: Option<Group>,
    /// Unix time the step started.
    pub started: f64,
    /// Why the step has no valid figures, when it has none.
    pub failed: Option<String>,
    pub warmup_secs: f64,
    /// Length of the measured window.
    pub secs: f64,
    /// Events completed in the window (rows, for load).
    pub events: u64,
    pub failed_events: u64,
    pub unit: Unit,
    /// Rows per event when the unit is rows/s and an event is not a row.
    pub rows_per_event: Option<u64>,
    pub throughput: f64,
    /// Statements completed, per class.
    pub statements: BTreeMap<String, u64>,
    /// `class/kind` → count.
    pub errors: BTreeMap<String, u64>,
    /// `class/kind` → first message.
    pub error_samples: BTreeMap<String, String>,
    /// Events per second over the window.
    pub per_second: Vec<u64>,
    /// Per statement class: statements and the slowest response in each
    /// second (the Insert Benchmark's inserts, deletes and queries).
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        with = "crate::measure::recorder::class_columns"
    )]
    pub class_seconds: BTreeMap<String, Vec<crate::measure::ClassSecond>>,
    /// Per statement class, and `event`.
    pub latency: BTreeMap<String, LatencySummary>,
    /// `class/tally` → count: rows a class wrote, operations that found
    /// nothing, rows a check found wrong (LinkBench's steps keep them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tallies: BTreeMap<String, u64>,
    pub metrics: StepMetrics,
    /// A step with a background write rate: what it asked and got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sla: Option<Sla>,
    /// An open-loop step (`rate`): the rate asked and the one reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateOutcome>,
    /// Step-specific facts: load phases, what settle did.
    pub notes: BTreeMap<String, String>,
    /// How a load put its rows in (each table's path: the engine's bulk
    /// load, or multi-row INSERTs): a fact of the target, which the run
    /// records with its settings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub load_methods: Vec<crate::workload::LoadMethod>,
    /// Earlier windows of this execution that another program disturbed,
    /// each measured again at once (`[interference] retries`): kept, so
    /// the report can say what the retries took.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retried: Vec<Attempt>,
    /// This process ran a share of the step's clients
    /// (`run --client-share`): which, and how the shares met.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_share: Option<ShareStep>,
    /// The window's profile, on its way to the sinks (kept in files of
    /// its own under `profiles/`, never in the step file).
    #[serde(skip)]
    pub profile: Option<Box<crate::metrics::profile::Profile>>,
    /// The plan of each statement the step sends, asked for as it began
    /// (a server's engines only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plans: Vec<crate::measure::plans::StatementPlan>,
    /// The host it was measured on, when not the run's first: its place
    /// in [`RunInfo::later_hosts`], from 1 (`run --new-host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<u32>,
}

/// What an open-loop step asked and got.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct RateOutcome {
    /// Events per second asked, across all clients.
    pub asked_per_sec: f64,
    /// Events per second completed over the measured window.
    pub reached_per_sec: f64,
    /// Reached less than [`RATE_MISSED_BELOW`] of the rate asked.
    pub missed: bool,
}

/// A step that reaches less than this share of its rate missed it.
pub const RATE_MISSED_BELOW: f64 = 0.98;

impl StepResult {
    /// Why another program disturbed this step's window, if it did (judged
    /// from what the sampler recorded, as every report judges it).
    pub fn disturbed(&self) -> Option<String> {
        self.metrics.interference.as_ref()?.judge().0
    }

    /// The throughput of each whole second of the window (a last, partial
    /// second would read as a slow one).
    pub fn second_rates(&self) -> Vec<f64> {
        let whole = (self.secs.floor() as usize).min(self.per_second.len());
        let per_event = self.rows_per_event.unwrap_or(1) as f64;
        self.per_second[..whole]
            .iter()
            .map(|&n| n as f64 * per_event)
            .collect()
    }

    /// The file this result lives in, relative to the run directory.
    pub fn file_name(&self) -> PathBuf {
        step_file(&self.id)
    }
}

/// The file an execution's result lives in, relative to the run
/// directory: `steps/<target>/r1-03-point-query.pre-c4.json`.
pub fn step_file(id: &ExecId) -> PathBuf {
    let ExecId {
        target,
        repeat,
        seq,
        at,
    } = id;
    Path::new("steps").join(target).join(format!(
        "r{repeat}-{seq:02}-{}-c{}.json",
        at.step, at.clients
    ))
}

/// Writes `value` as pretty JSON to `path` through a temporary file in the
/// same directory and a rename, so a reader sees the old file or the new one,
/// never half of one.
/// Writes a value as JSON to `path` through [`write_file`].
pub fn write_atomic<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let mut body = serde_json::to_vec_pretty(value)?;
    body.push(b'\n');
    write_file(path, &body)
}

/// The file that holds a run's record.
pub const RUN_FILE: &str = "run.json";

/// Writes a run's record into `dir`: the one function that writes
/// `run.json` (the runner's record sink, a merge of client shares).
pub fn write_run_info(dir: &Path, info: &RunInfo) -> anyhow::Result<()> {
    write_atomic(&dir.join(RUN_FILE), info)
}

/// Writes a step's result into its file under `out/steps/<target>/`,
/// refusing a linked `steps` or target directory.
pub fn write_step(out: &Path, r: &StepResult) -> anyhow::Result<()> {
    let path = out.join(r.file_name());
    // Compact: a step file is read by programs; pretty printing put every
    // number of every series on a line of its own.
    let written = refuse_link(&out.join("steps"))
        .and_then(|()| path.parent().map_or(Ok(()), refuse_link))
        .and_then(|()| {
            let mut body = serde_json::to_vec(r)?;
            body.push(b'\n');
            write_file(&path, &body)
        });
    let Err(e) = written else { return Ok(()) };
    // What was just measured is not lost: kept in a private directory of
    // its own, and the run stops saying where.
    let kept = keep_elsewhere(r);
    match kept {
        Ok(file) => Err(e.context(format!(
            "the step's result is kept in {}: make {} writable, move the file there (as {}), and finish \
             the run with `relbench run --resume --out {}`",
            file.display(),
            path.parent().unwrap_or(out).display(),
            path.display(),
            out.display()
        ))),
        Err(why) => Err(e.context(format!("the step's result could not be kept elsewhere either: {why:#}"))),
    }
}

/// A step's result in a new private directory under the temporary one
/// (`mkdtemp`), for when its results directory cannot take it.
fn keep_elsewhere(r: &StepResult) -> anyhow::Result<PathBuf> {
    let dir = crate::util::private_dir("relbench-unsaved-")?;
    let name = r.file_name();
    let file = dir.join(name.file_name().unwrap_or(name.as_os_str()));
    write_atomic(&file, r)?;
    Ok(file)
}

/// The exclusive hold of a run on its results directory, for as long as
/// it lives: a second relbench writing into the same directory (a second
/// `--resume`, two runs started at once) is refused instead of racing it
/// for the same datadir and files.
pub struct RunLock {
    _file: fs::File,
}

/// Takes the results directory `out` (created if need be) for this run.
pub fn lock_run(out: &Path) -> anyhow::Result<RunLock> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::os::unix::io::AsRawFd;
    refuse_link(out)?;
    // Ours alone: no one else may have made it, or may swap what is in it.
    crate::util::secure_dir(out, &[crate::util::my_uid()], "the results directory")?;
    let path = out.join(".lock");
    let mut file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    // A lock file an older relbench made readable by all: anyone could
    // take a shared lock on it and stop every run here.
    if file.metadata()?.mode() & 0o077 != 0 {
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
    }
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let mut holder = String::new();
        let _ = std::io::Read::read_to_string(&mut file, &mut holder);
        let pid = holder.trim().parse::<u32>().ok();
        // Whoever holds it: relbench writes its pid there; anything else
        // holding the lock is said to be so.
        let comm = pid.and_then(|p| fs::read_to_string(format!("/proc/{p}/comm")).ok());
        match (pid, comm.as_deref().map(str::trim)) {
            (Some(p), Some("relbench")) => bail!(
                "another relbench (pid {p}) is writing into {}; wait until it ends, or pick another directory with --out",
                out.display()
            ),
            _ => bail!(
                "{} is locked by a process that is not a running relbench{}; find it with `fuser {}`, stop it, \
                 and run again (or pick another directory with --out)",
                out.display(),
                match pid {
                    Some(p) => format!(" (the file names pid {p}, which is not relbench now)"),
                    None => String::new(),
                },
                path.display()
            ),
        }
    }
    file.set_len(0)?;
    if let Err(e) = writeln!(file, "{}", std::process::id()) {
        if matches!(e.raw_os_error(), Some(28) | Some(122)) {
            // Nothing measured, nothing to resume: the same command again.
            bail!(
                "writing {}: the disk is full before anything was measured; free space and run the same \
                 command again (there is nothing to resume yet)",
                path.display()
            );
        }
        return Err(e).with_context(|| format!("writing {}", path.display()));
    }
    Ok(RunLock { _file: file })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn sample_step() -> StepResult {
        StepResult {
            schema_version: SCHEMA_VERSION,
            id: ExecId {
                target: "wal".into(),
                repeat: 1,
                seq: 3,
                at: crate::plan::StepId {
                    phase: None,
                    step: crate::plan::Step {
                        tag: Some("warm".into()),
                        ..crate::plan::Step::of(crate::plan::StepKind::Workload("scan".into()))
                    },
                    occurrence: 1,
                    clients: 2,
                },
            },
            rate: None,
            server_settings: None,
            group: Some(Group::Range),
            started: 1.5,
            failed: None,
            warmup_secs: 0.2,
            secs: 1.0,
            events: 10,
            failed_events: 0,
            unit: Unit::RowsPerSec,
            rows_per_event: Some(1000),
            throughput: 10_000.0,
            statements: [("scan".to_string(), 10)].into(),
            errors: BTreeMap::new(),
            error_samples: BTreeMap::new(),
            per_second: vec![10],
            class_seconds: BTreeMap::new(),
            sla: None,
            latency: BTreeMap::new(),
            tallies: BTreeMap::new(),
            metrics: StepMetrics {
                client_cpu_secs: Some(0.5),
                cs_per_op: Some(2.5),
                ..Default::default()
            },
            notes: BTreeMap::new(),
            load_methods: Vec::new(),
            retried: Vec::new(),
            client_share: None,
            profile: None,
            plans: Vec::new(),
            host: None,
        }
    }

    #[test]
    fn step_results_round_trip_through_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let s = sample_step();
        let path = dir.path().join(s.file_name());
        write_atomic(&path, &s).unwrap();
        assert!(path.ends_with("steps/wal/r1-03-scan.warm-c2.json"));
        let back: StepResult = read_json(&path).unwrap();
        assert_eq!(back, s);
        // No temporary file is left behind.
        let names: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn version_2_results_are_upgraded_with_their_occurrence() {
        // Version 2 named a step by its label and had no occurrence; a
        // sequence that runs scan.warm twice must read as two occurrences.
        let dir = tempfile::tempdir().unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-tiny");
        fs::copy(fixture.join("run.json"), dir.path().join("run.json")).unwrap();
        let mut v2: serde_json::Value = serde_json::to_value(sample_step()).unwrap();
        let o = v2.as_object_mut().unwrap();
        o.remove("occurrence");
        o.remove("tag");
        o.insert("schema_version".into(), 2.into());
        o.insert("kind".into(), "workload".into());
        o.insert("step".into(), "scan.warm".into());
        for seq in [3, 15] {
            v2["seq"] = seq.into();
            let path = dir
                .path()
                .join(format!("steps/wal/r1-{seq:02}-scan.warm-c2.json"));
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, serde_json::to_vec(&v2).unwrap()).unwrap();
        }
        let run = load_run(dir.path()).unwrap();
        let got: Vec<(usize, String, u32)> = run
            .steps
            .iter()
            .map(|s| (s.id.seq, s.id.at.step.title(), s.id.at.occurrence))
            .collect();
        assert_eq!(
            got,
            [
                (3, "scan (warm)".to_string(), 1),
                (15, "scan (warm)".to_string(), 2)
            ]
        );
    }

    #[test]
    fn newer_schema_versions_are_refused_with_advice() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        fs::write(&p, r#"{"schema_version": 99}"#).unwrap();
        let e = read_json::<StepResult>(&p).unwrap_err().to_string();
        assert!(e.contains("newer relbench"), "{e}");
        let e = read_run_info(dir.path()).unwrap_err().to_string();
        assert!(e.contains("has no run.json"), "{e}");
    }
}
