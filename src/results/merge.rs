//! Joining a sharded run: the results directories of `relbench run
//! --shard I/N` checked against the plan's assignment and copied into one
//! directory (`merge.json` and `shards/I-of-N/`), each shard whole, with
//! its host's facts, so a report reads it as the runs of several hosts.
//!
//! Nothing is merged that would mislead: shards of different plans, a
//! shard given twice, a missing shard, a shard still running or stopped
//! before it finished, a cell missing or found twice are each refused,
//! named, with what to do. Step files are copied as they are (not
//! parsed): a merge of 20 shards × 40 steps takes a fraction of a second.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use super::{read_run_info, LoadedRun, RunInfo, RunStatus};
use crate::plan::Shard;

/// The file that makes a directory a merge.
pub const MERGE_FILE: &str = "merge.json";

/// `merge.json`: the shards a merged directory holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MergeInfo {
    pub schema_version: u32,
    pub merged: String,
    /// False until every file is copied: a merge stopped half way is said
    /// to be one, and made again.
    pub complete: bool,
    pub plan_hash: String,
    pub plan_source: String,
    pub shards: Vec<MergedShard>,
    /// How the shards' hosts differ from the first shard's, in the facts
    /// that move a benchmark's figures (CPU, memory, kernel, governor,
    /// boost, SMT, huge pages, mitigations, microcode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_differences: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MergedShard {
    #[serde(flatten)]
    pub shard: Shard,
    /// Where it was read from.
    pub source: String,
    /// Its directory under the merge (`shards/2-of-3`).
    pub dir: String,
    pub hostname: String,
    pub targets: Vec<String>,
}

/// One shard as given.
struct Given {
    dir: PathBuf,
    info: RunInfo,
    shard: Shard,
    /// (target, repeat) → step files.
    cells: BTreeMap<(String, u32), usize>,
}

/// The problems found, one a line, each with what to do.
#[derive(Debug, thiserror::Error)]
#[error("cannot merge these shards ({} problem{}):\n{}", .0.len(), if .0.len() == 1 { "" } else { "s" }, .0.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
pub struct MergeRefused(pub Vec<String>);

/// Whether another process holds the run's lock (a shard still running),
/// and the pid it wrote there.
pub(super) fn running(dir: &Path) -> Option<String> {
    let path = dir.join(".lock");
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .ok()?;
    // SAFETY: flock on a descriptor this function owns.
    let held = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } != 0;
    if !held {
        return None;
    }
    let pid = fs::read_to_string(&path).unwrap_or_default();
    Some(pid.trim().to_string())
}

/// The cells a shard's files hold: `steps/<target>/r<repeat>-….json`.
fn cells_of(dir: &Path) -> anyhow::Result<BTreeMap<(String, u32), usize>> {
    let mut cells = BTreeMap::new();
    let steps = dir.join("steps");
    if !steps.exists() {
        return Ok(cells);
    }
    for t in fs::read_dir(&steps).with_context(|| format!("reading {}", steps.display()))? {
        let t = t?;
        if !t.file_type()?.is_dir() {
            continue;
        }
        let target = t.file_name().to_string_lossy().into_owned();
        for f in fs::read_dir(t.path())? {
            let f = f?;
            let name = f.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || !name.ends_with(".json") || !f.file_type()?.is_file() {
                continue;
            }
            let repeat = name
                .strip_prefix('r')
                .and_then(|r| r.split_once('-'))
                .and_then(|(n, _)| n.parse::<u32>().ok());
            if let Some(r) = repeat {
                *cells.entry((target.clone(), r)).or_insert(0) += 1;
            }
        }
    }
    Ok(cells)
}

fn shard_dir_name(s: Shard) -> String {
    format!("{}-of-{}", s.index, s.count)
}

/// Checks the shards in `dirs` and copies them into `out`; returns the
/// merge's record.
pub fn merge(dirs: &[PathBuf], out: &Path) -> anyhow::Result<MergeInfo> {
    let mut problems = Vec::new();
    let mut given: Vec<Given> = Vec::new();
    let out_abs = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    for dir in dirs {
        match finished_shard(dir, &out_abs) {
            Ok((shard, info)) => given.push(Given {
                dir: dir.clone(),
                shard,
                cells: cells_of(dir)?,
                info,
            }),
            Err(why) => problems.push(format!("{why:#}")),
        }
    }
    if given.is_empty() {
        if problems.is_empty() {
            problems.push("no shard directories given".into());
        }
        return Err(MergeRefused(problems).into());
    }
    let (hash, count) = one_plan(&given, &mut problems);
    if !problems.is_empty() {
        return Err(MergeRefused(problems).into());
    }
    for (i, a) in given.iter().enumerate() {
        if let Some(b) = given[..i].iter().find(|b| b.shard == a.shard) {
            problems.push(format!(
                "shard {} is given twice: {} and {}; give one of them",
                a.shard,
                b.dir.display(),
                a.dir.display()
            ));
        }
    }
    as_assigned(&given, count, &mut problems)?;
    if !problems.is_empty() {
        return Err(MergeRefused(problems).into());
    }
    given.sort_by_key(|g| g.shard.index);
    write_merge(&given, out, &hash)
}

/// A shard's directory that can be merged: a finished shard, not `out`,
/// not a merge, not running; why not, when it cannot.
fn finished_shard(dir: &Path, out_abs: &Path) -> anyhow::Result<(Shard, RunInfo)> {
    if std::path::absolute(dir).is_ok_and(|d| d == out_abs) {
        anyhow::bail!(
            "{} is both a shard and --out; merge into a new directory",
            dir.display()
        );
    }
    if dir.join(MERGE_FILE).exists() {
        anyhow::bail!(
            "{} is a merge, not a shard; give the shards' own directories",
            dir.display()
        );
    }
    let info = read_run_info(dir)?;
    let Some(rec) = &info.shard else {
        anyhow::bail!(
            "{} is a whole run, not a shard (it ran without --shard); merge joins the directories of \
             `relbench run PLAN --shard I/N`; to put whole runs side by side use `relbench report {} …`",
            dir.display(),
            dir.display()
        );
    };
    let shard = rec.shard;
    if !crate::plan::share::is_part(shard.index, shard.count) {
        anyhow::bail!(
            "{}: its run.json says it is shard {}/{} of the plan, which is no part relbench cuts (1 to {} \
             shards): the file is damaged or not relbench's; run that shard again",
            dir.display(),
            shard.index,
            shard.count,
            crate::plan::share::MAX_PARTS
        );
    }
    if let Some(pid) = running(dir) {
        anyhow::bail!(
            "shard {shard} in {} is still running (its lock is held{}); wait until it ends \
             (in Slurm, submit the merge with --dependency=afterany:<the array's job id>) and merge again",
            dir.display(),
            if pid.is_empty() { String::new() } else { format!("; its run is pid {pid}") }
        );
    }
    if info.status != RunStatus::Complete {
        anyhow::bail!(
            "shard {shard} in {} stopped before it finished (its run is {:?}); finish it with \
             `relbench run {} --shard {shard} --out {}` and merge again",
            dir.display(),
            info.status,
            info.plan_source,
            dir.display()
        );
    }
    Ok((shard, info))
}

/// The plan's hash and its cut: the first shard's, which every other
/// shard must have.
fn one_plan(given: &[Given], problems: &mut Vec<String>) -> (String, u32) {
    let first = &given[0];
    let hash = first.info.plan_hash.clone().unwrap_or_default();
    let count = first.shard.count;
    for g in &given[1..] {
        if g.info.plan_hash.as_deref() != Some(hash.as_str()) {
            problems.push(format!(
                "shard {} in {} ran another plan ({}, hash {}) than shard {} in {} ({}, hash {}); merge the \
                 shards of one plan, run with the same plan file",
                g.shard,
                g.dir.display(),
                g.info.plan_source,
                g.info.plan_hash.as_deref().unwrap_or("none"),
                first.shard,
                first.dir.display(),
                first.info.plan_source,
                hash
            ));
        } else if g.shard.count != count {
            problems.push(format!(
                "{} is shard {} but {} is shard {}: the plan was cut into {} parts once and {} another \
                 time; merge the shards of one cut (run the others again with --shard I/{count})",
                g.dir.display(),
                g.shard,
                first.dir.display(),
                first.shard,
                count,
                g.shard.count
            ));
        }
    }
    (hash, count)
}

/// Each shard holds what the plan's assignment, recomputed, gives it:
/// none missing, no cell of another shard's.
fn as_assigned(given: &[Given], count: u32, problems: &mut Vec<String>) -> anyhow::Result<()> {
    let first = &given[0];
    let plan = &first.info.plan;
    let cat = plan.catalogue().map_err(|why| {
        anyhow::anyhow!("the shards' plan names a workload relbench cannot make: {why}")
    })?;
    let schedule = plan.schedule(&cat);
    for index in 1..=count {
        let shard = Shard { index, count };
        let own: Vec<&str> = (0..schedule.targets.len())
            .filter(|&t| schedule.runs(shard, t))
            .map(|t| schedule.targets[t].name.as_str())
            .collect();
        let Some(g) = given.iter().find(|g| g.shard == shard) else {
            problems.push(format!(
                "shard {shard} is missing: none of the directories given is it (it runs {}); run it with \
                 `relbench run {} --shard {shard} --out DIR` and merge again with its DIR",
                own.join(", "),
                first.info.plan_source
            ));
            continue;
        };
        for t in &own {
            for repeat in 1..=plan.repeats {
                if !g.cells.contains_key(&(t.to_string(), repeat)) {
                    problems.push(format!(
                        "shard {shard} in {} has no results of target {t} repeat {repeat}, which that shard \
                         runs; finish it with `relbench run {} --shard {shard} --out {}`",
                        g.dir.display(),
                        first.info.plan_source,
                        g.dir.display()
                    ));
                }
            }
        }
        for (t, repeat) in g.cells.keys() {
            if !own.contains(&t.as_str()) {
                problems.push(format!(
                    "shard {shard} in {} holds results of target {t} repeat {repeat}, which shard {} runs; \
                     a cell counts once: remove {} from that shard's directory, or give the right shards",
                    g.dir.display(),
                    match schedule.targets.iter().position(|x| x.name == *t) {
                        Some(ti) => match schedule.place(ti, count) {
                            crate::plan::shard::Place::One(i) => format!("{i}/{count}"),
                            crate::plan::shard::Place::Every => "every".into(),
                        },
                        None => "no".into(),
                    },
                    g.dir.join("steps").join(t).display()
                ));
            }
        }
    }
    Ok(())
}

/// Copies the checked shards into `out`, `merge.json` last.
fn write_merge(given: &[Given], out: &Path, hash: &str) -> anyhow::Result<MergeInfo> {
    let _lock = super::lock_run(out)?;
    if out.join(super::RUN_FILE).exists() {
        bail!(
            "{} holds a run; merge into a new directory (--out)",
            out.display()
        );
    }
    // An earlier merge here is ours to replace; anything else is not.
    let earlier = out.join(MERGE_FILE);
    if earlier.exists() {
        let old: MergeInfo = serde_json::from_slice(&fs::read(&earlier)?)
            .with_context(|| format!("{} is not a merge's record", earlier.display()))?;
        for s in &old.shards {
            let d = shard_dir_inside(out, &s.dir)?;
            let _ = fs::remove_dir_all(&d);
        }
        let _ = fs::remove_file(&earlier);
    } else if fs::read_dir(out)?.any(|e| e.is_ok_and(|e| e.file_name() != ".lock")) {
        bail!(
            "{} is not empty and holds no earlier merge; merge into a new directory (--out)",
            out.display()
        );
    }
    let mut info = MergeInfo {
        schema_version: super::SCHEMA_VERSION,
        merged: crate::util::utc_iso(crate::util::unix_now()),
        complete: false,
        plan_hash: hash.to_string(),
        plan_source: given[0].info.plan_source.clone(),
        host_differences: host_differences(given),
        shards: given
            .iter()
            .map(|g| MergedShard {
                shard: g.shard,
                source: g.dir.display().to_string(),
                dir: format!("shards/{}", shard_dir_name(g.shard)),
                hostname: g.info.host.hostname.clone(),
                targets: g
                    .info
                    .shard
                    .as_ref()
                    .map(|s| s.targets.clone())
                    .unwrap_or_default(),
            })
            .collect(),
    };
    super::write_atomic(&earlier, &info)?;
    for (g, m) in given.iter().zip(&info.shards) {
        let to = out.join(&m.dir);
        copy_file(&g.dir.join(super::RUN_FILE), &to.join(super::RUN_FILE))?;
        let mut targets: Vec<&String> = g.cells.keys().map(|(t, _)| t).collect();
        targets.dedup();
        for target in targets {
            let from = g.dir.join("steps").join(target);
            let into = to.join("steps").join(target);
            for f in fs::read_dir(&from)? {
                let f = f?;
                let name = f.file_name();
                let n = name.to_string_lossy();
                if n.starts_with('.') || !n.ends_with(".json") || !f.file_type()?.is_file() {
                    continue;
                }
                copy_file(&f.path(), &into.join(&name))?;
            }
        }
    }
    // Every copy on disk before the record says the merge is whole.
    if let Ok(d) = fs::File::open(out) {
        // SAFETY: syncfs on a descriptor this function owns.
        unsafe { libc::syncfs(d.as_raw_fd()) };
    }
    info.complete = true;
    super::write_atomic(&earlier, &info)?;
    Ok(info)
}

/// Each shard's host against the first shard's, in the facts that move
/// figures: `shard 2/2 (host-b): governor powersave, shard 1/2 (host-a)
/// performance`.
fn host_differences(given: &[Given]) -> Vec<String> {
    let Some(first) = given.first() else {
        return Vec::new();
    };
    let name = |g: &Given| format!("shard {} ({})", g.shard, g.info.host.hostname);
    given[1..]
        .iter()
        .filter_map(|g| {
            let d = g.info.host.differences(&first.info.host);
            (!d.is_empty()).then(|| format!("{}: {} on {}", name(g), d.join("; "), name(first)))
        })
        .collect()
}

fn copy_file(from: &Path, to: &Path) -> anyhow::Result<()> {
    if let Some(p) = to.parent() {
        fs::create_dir_all(p).with_context(|| format!("creating {}", p.display()))?;
    }
    fs::copy(from, to)
        .map(drop)
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))
}

/// The merge's record in `dir`, when it is a merge.
pub fn read_merge(dir: &Path) -> anyhow::Result<Option<MergeInfo>> {
    let path = dir.join(MERGE_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let info: MergeInfo = serde_json::from_slice(&crate::util::read_record(
        &path,
        crate::util::MAX_RECORD_BYTES,
    )?)
    .with_context(|| format!("{} is not a merge's record", path.display()))?;
    if !info.complete {
        bail!(
            "the merge in {} stopped half way; run `relbench merge` again with the shards' directories and --out {}",
            dir.display(),
            dir.display()
        );
    }
    for s in &info.shards {
        shard_dir_inside(dir, &s.dir)?;
    }
    Ok(Some(info))
}

/// Refuses a shard directory a merge's record names that is not a real
/// directory under its `shards/`: an absolute path, a `..`, or a link
/// anywhere on the way would have a report read (and a re-merge delete)
/// wherever whoever wrote the record chose (regression: merge.json
/// pointing at `../` or an absolute path was read, and a re-merge
/// followed an `out/shards` link and deleted inside its target).
fn shard_dir_inside(out: &Path, dir: &str) -> anyhow::Result<PathBuf> {
    let rel = Path::new(dir);
    let plain = rel
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain || !rel.starts_with("shards") || rel.components().count() != 2 {
        bail!(
            "{}: its merge record names the shard directory {:?}, which is not shards/I-of-N inside it; \
             the record is damaged or not relbench's: merge the shards again into a new directory",
            out.display(),
            crate::util::printable(dir, 200)
        );
    }
    for p in [out.join("shards"), out.join(rel)] {
        super::refuse_link(&p)?;
    }
    Ok(out.join(rel))
}

/// The runs a results directory holds: itself, or a merge's shards in
/// shard order; a run resumed on another machine as one run a host.
pub fn load_runs(dir: &Path) -> anyhow::Result<Vec<LoadedRun>> {
    match read_merge(dir)? {
        None => Ok(super::load_run(dir)?.by_host()),
        Some(m) => {
            let mut runs = Vec::new();
            for s in &m.shards {
                runs.extend(super::load_run(&dir.join(&s.dir))?.by_host());
            }
            Ok(runs)
        }
    }
}

/// The record of the run in `dir`, or of a merge's first shard (its plan
/// is every shard's).
pub fn first_run_info(dir: &Path) -> anyhow::Result<RunInfo> {
    match read_merge(dir)? {
        None => read_run_info(dir),
        Some(m) => {
            let s = m.shards.first().context("the merge holds no shards")?;
            read_run_info(&dir.join(&s.dir))
        }
    }
}
