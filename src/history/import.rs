//! `relbench history add`: result directories read into the history.
//! Each target's results for a step become one cell of a series (the
//! step's identity × the target's configuration less its binary × the
//! host's fingerprint) at one build (`--build`, or the version the server
//! reported). Every repeat is kept: its throughput, whether another
//! program disturbed its window, and its costs; the run's A/A floor for
//! the step beside them. Idempotent: a cell is keyed by its run and
//! target and carries a hash of what it holds, so adding a directory
//! again adds nothing, and a resumed or confirmed run adds its new
//! repeats.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use super::store::{row, Arg, Store, Writes};
use crate::plan::StepId;
use crate::results::judge::{judge, Judgement};
use crate::results::{LoadedRun, RunStatus, StepResult};
use crate::util::short_hash;

/// How the targets of the directories added are named as builds.
#[derive(Debug, Clone, Default)]
pub struct BuildNames {
    /// `--build NAME` (a run of one target, with its A/A copies) or
    /// `--build TARGET=NAME` (a copy is its original's build).
    pub names: Vec<(Option<String>, String)>,
    /// `--order N`: the builds named here come in this place.
    pub order: Option<f64>,
}

impl BuildNames {
    fn of(&self, target: &str, targets: usize) -> anyhow::Result<Option<String>> {
        if let Some((_, n)) = self
            .names
            .iter()
            .find(|(t, _)| t.as_deref() == Some(target))
        {
            return Ok(Some(n.clone()));
        }
        match self.names.iter().find(|(t, _)| t.is_none()) {
            Some((_, n)) if targets == 1 => Ok(Some(n.clone())),
            Some(_) => bail!(
                "--build NAME names the build of a run with one target; this run has {targets}: \
                 give --build TARGET=NAME for each"
            ),
            None => Ok(None),
        }
    }
}

/// One repeat's figures, as the history keeps them for explanations.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
pub struct Repeat {
    /// Costs per operation by [`Cost::key`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub costs: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_cpu_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_pct: Option<f64>,
}

/// What `add` did.
#[derive(Debug, Default, PartialEq)]
pub struct Added {
    pub runs: usize,
    pub new_cells: usize,
    pub updated_cells: usize,
    pub unchanged_cells: usize,
    /// Directories or results left out, and why.
    pub notes: Vec<String>,
}

impl Added {
    /// What `add` did, in one line (`history add` and `run --history`).
    pub fn line(&self, at: &super::store::HistoryAt) -> String {
        format!(
            "added {} run{} to the history in {at}: {} new cells, {} updated, {} already there",
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            self.new_cells,
            self.updated_cells,
            self.unchanged_cells
        )
    }
}

/// The host a target ran on, as far as it moves a figure: CPU, cores,
/// memory, kernel, the filesystem and device its data was on, and the
/// settings that bend a benchmark (`metrics::tuning::COMPARED`).
fn host_fingerprint(run: &LoadedRun, target: &str) -> (String, String) {
    let h = &run.info.host;
    let fs = run
        .info
        .targets
        .iter()
        .find(|t| t.name == target)
        .and_then(|t| t.filesystem.as_ref())
        .map(|f| format!("{} on {}", f.fstype, f.device))
        .unwrap_or_else(|| "storage not recorded".into());
    let mut desc = format!(
        "{} ({} cores), {} GiB, kernel {}, {fs}",
        h.cpu_model,
        h.cores,
        (h.memory_bytes as f64 / (1u64 << 30) as f64).round(),
        h.kernel
    );
    // The settings that bend a benchmark, where the run recorded them: a
    // host tuned otherwise starts a series of its own.
    for k in crate::metrics::tuning::COMPARED {
        if let Some(v) = h.tuning.get(k) {
            let v = if k == "mitigations" {
                short_hash(v)
            } else {
                v.clone()
            };
            desc += &format!(", {k} {v}");
        }
    }
    (short_hash(&desc), desc)
}

/// The target's configuration less its binary: the plan's spec without
/// its name, paths and address, and the server's config file's text.
fn config_of(run: &LoadedRun, target: &str) -> (String, String) {
    let spec = run.info.plan.targets.iter().find(|t| t.name == target);
    let mut v = serde_json::to_value(spec).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("name");
        o.remove("copy_of");
    }
    if let Some(acc) = v.get_mut("access").and_then(|a| a.as_object_mut()) {
        for inner in acc.values_mut() {
            if let Some(o) = inner.as_object_mut() {
                for k in [
                    "basedir",
                    "datadir",
                    "port",
                    "path",
                    "config",
                    "url",
                    "password_env",
                ] {
                    o.remove(k);
                }
            }
        }
    }
    let file = run
        .info
        .targets
        .iter()
        .find(|t| t.name == target)
        .and_then(|t| t.facts.config_file.clone());
    if let (Some(o), Some(f)) = (v.as_object_mut(), file) {
        o.insert("config_file".into(), f.into());
    }
    let text = v.to_string();
    (short_hash(&text), text)
}

/// A target's version as its server reported it, and the build name it
/// gives: the engine and the version's number ("mariadb 10.11.19" from
/// "10.11.19-MariaDB-0+deb12u1 (Debian 12, …)").
fn version_of(run: &LoadedRun, target: &str) -> (String, String) {
    let Some(t) = run.info.targets.iter().find(|t| t.name == target) else {
        return ("unknown".into(), "unknown".into());
    };
    let v = t.facts.version.clone();
    let number = v
        .split(|c: char| c.is_whitespace() || c == '-' || c == '+' || c == '(' || c == ',')
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()) && w.contains('.'))
        .unwrap_or(if v.is_empty() { "unknown" } else { &v })
        .to_string();
    (v, format!("{} {number}", t.engine.name()))
}

/// A repeat's throughput, whether it is left out of the search (any
/// window not judged quiet: disturbed, stalled, too short or unjudged),
/// and its figures.
fn repeat_of(s: &StepResult, judged: &Judgement) -> (f64, bool, Repeat) {
    let c = crate::compare::cell_of(std::iter::once(s));
    let disturbed = !judged.is_quiet();
    let r = Repeat {
        costs: c
            .hardware
            .costs
            .iter()
            .map(|(k, v)| (k.key().to_string(), *v))
            .collect(),
        p99_us: c.figures.p99_us,
        cpu_pct: c.hardware.cpu_util_pct,
        own_cpu_pct: c.hardware.own_cpu_pct,
        cores: c.hardware.usable_cores,
        disk_pct: c.hardware.disk_util_pct,
    };
    (s.throughput, disturbed, r)
}

/// A target of a run as the history names it.
struct Target {
    host: String,
    host_desc: String,
    config: String,
    config_text: String,
    version: String,
    build: String,
}

/// One cell about to be written.
struct Cell {
    /// Index into the runs read.
    run: usize,
    target: String,
    /// The series: the step, the target's configuration less its binary,
    /// the host's fingerprint.
    step: StepId,
    config: String,
    host: String,
    series_meta: (String, String, String),
    host_desc: String,
    build: String,
    version: String,
    throughputs: String,
    disturbed: String,
    floor: Option<f64>,
    figures: String,
    /// The plan's reference's cell: its build keeps its place (`--order`
    /// places the builds measured against it).
    pinned: bool,
}

fn cells_of(runs: &[LoadedRun], names: &BuildNames) -> anyhow::Result<Vec<Cell>> {
    // The A/A floor of each step, as the run's report computes it.
    let floors: HashMap<(usize, u32), f64> = crate::compare::build(runs, None)
        .map(|r| {
            r.rows
                .iter()
                .filter_map(|row| Some(((row.seq, row.id.clients), row.noise_floor?)))
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for (ri, run) in runs.iter().enumerate() {
        // A/A copies are the build of the target they copy.
        let original = |t: &str| -> String {
            run.info
                .plan
                .targets
                .iter()
                .find(|x| x.name == t)
                .and_then(|x| x.copy_of.clone())
                .unwrap_or_else(|| t.to_string())
        };
        let ntargets = run
            .info
            .plan
            .targets
            .iter()
            .filter(|t| t.copy_of.is_none())
            .count();
        let mut groups: BTreeMap<(String, usize, u32), Vec<&StepResult>> = BTreeMap::new();
        for s in &run.steps {
            if s.failed.is_some() || s.throughput <= 0.0 {
                continue;
            }
            groups
                .entry((s.id.target.clone(), s.id.seq, s.id.at.clients))
                .or_default()
                .push(s);
        }
        for reps in groups.values_mut() {
            reps.sort_by_key(|s| s.id.repeat);
        }
        // The reference build run beside the others: every other target's
        // windows become ratios to its windows of the same round.
        let reference = run.info.plan.reference.as_deref();
        // What a target is (its host, configuration and build), worked
        // out once per target, not once per step.
        let mut of_target: HashMap<String, Target> = HashMap::new();
        for ((target, seq, clients), reps) in &groups {
            let (target, seq, clients) = (target.clone(), *seq, *clients);
            let against = reference
                .filter(|r| *r != original(&target))
                .and_then(|r| Some((r, groups.get(&(r.to_string(), seq, clients))?)));
            if reference.is_some_and(|r| r != original(&target)) && against.is_none() {
                // Nothing of the reference's to divide by on this step.
                continue;
            }
            let first = reps[0];
            if !of_target.contains_key(&target) {
                let (host, host_desc) = host_fingerprint(run, &target);
                let (config, config_text) = config_of(run, &target);
                let (version, default_name) = version_of(run, &target);
                let build = names
                    .of(&original(&target), ntargets)?
                    .unwrap_or(default_name);
                of_target.insert(
                    target.clone(),
                    Target {
                        host,
                        host_desc,
                        config,
                        config_text,
                        version,
                        build,
                    },
                );
            }
            let t = &of_target[&target];
            let judged = judge(reps);
            let mut rs: Vec<(f64, bool, Repeat)> = reps
                .iter()
                .zip(&judged)
                .map(|(s, j)| repeat_of(s, j))
                .collect();
            let mut config = (t.config.clone(), t.config_text.clone());
            let mut unit = first.unit.name().to_string();
            if let Some((name, refs)) = against {
                rs = against_reference(reps, rs, refs);
                config.1 = format!("{} against {name}", config.1);
                config.0 = short_hash(&config.1);
                unit = format!("× {name}");
            }
            if rs.is_empty() {
                continue;
            }
            out.push(Cell {
                run: ri,
                target: target.clone(),
                step: first.id.at.clone(),
                config: config.0,
                host: t.host.clone(),
                series_meta: (
                    first
                        .group
                        .map(|g| g.name().to_string())
                        .unwrap_or_default(),
                    unit,
                    config.1,
                ),
                host_desc: t.host_desc.clone(),
                build: t.build.clone(),
                version: t.version.clone(),
                throughputs: rs
                    .iter()
                    .map(|r| format!("{:?}", r.0))
                    .collect::<Vec<_>>()
                    .join(" "),
                disturbed: rs.iter().map(|r| if r.1 { '1' } else { '0' }).collect(),
                floor: floors.get(&(seq, clients)).copied(),
                pinned: reference == Some(original(&target).as_str()),
                figures: serde_json::to_string(&rs.iter().map(|r| &r.2).collect::<Vec<_>>())?,
            });
        }
    }
    Ok(out)
}

/// A target's repeats as ratios to the reference's window of the same
/// round (its repeat number): left out where the reference has no window
/// of that round, disturbed where either window was not quiet. The
/// target's own figures (costs per operation) are kept as they are.
fn against_reference(
    reps: &[&StepResult],
    rs: Vec<(f64, bool, Repeat)>,
    refs: &[&StepResult],
) -> Vec<(f64, bool, Repeat)> {
    let judged = judge(refs);
    reps.iter()
        .zip(rs)
        .filter_map(|(s, (v, left_out, figures))| {
            let (i, r) = refs
                .iter()
                .enumerate()
                .find(|(_, r)| r.id.repeat == s.id.repeat)?;
            (r.throughput > 0.0)
                .then(|| (v / r.throughput, left_out || !judged[i].is_quiet(), figures))
        })
        .collect()
}

/// A run's identity: where and when it started, and its plan.
fn run_id(run: &LoadedRun) -> String {
    short_hash(&format!(
        "{}\0{}\0{}",
        run.info.started,
        run.info.host.hostname,
        run.info.plan_hash.as_deref().unwrap_or(&run.info.plan_text)
    ))
}

/// Adds result directories to the history.
pub fn add(store: &mut Store, dirs: &[PathBuf], names: &BuildNames) -> anyhow::Result<Added> {
    let mut added = Added::default();
    for dir in dirs {
        add_dir(store, dir, names, &mut added)
            .with_context(|| format!("adding {} to the history in {}", dir.display(), store.at))?;
    }
    Ok(added)
}

fn add_dir(
    store: &mut Store,
    dir: &Path,
    names: &BuildNames,
    added: &mut Added,
) -> anyhow::Result<()> {
    let runs = crate::results::load_runs(dir)?;
    addable(dir, &runs, names)?;
    for r in &runs {
        for s in &r.skipped {
            added.notes.push(format!("{}: {s}", r.dir.display()));
        }
    }
    let cells = cells_of(&runs, names)?;
    let mut known = Known::read(store)?;
    let mut sql = Writes::default();
    let mut hosts: BTreeMap<String, String> = BTreeMap::new();
    for (ri, run) in runs.iter().enumerate() {
        let id = run_id(run);
        let mut have: HashMap<(String, i64), String> = HashMap::new();
        store.scan(
            "SELECT target, series, hash FROM cells WHERE run = $1",
            &[id.as_str().into()],
            &mut |r| {
                have.insert((r[0].text(), r[1].int().unwrap_or(0)), r[2].text());
            },
        )?;
        sql.push(
            "INSERT INTO runs (id, dir, started, hostname, plan_hash, status, added) \
             VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (id) DO UPDATE SET status = excluded.status, dir = excluded.dir",
            vec![
                id.as_str().into(),
                run.dir.display().to_string().into(),
                run.info.started.as_str().into(),
                run.info.host.hostname.as_str().into(),
                run.info.plan_hash.as_deref().unwrap_or("").into(),
                format!("{:?}", run.info.status).to_lowercase().into(),
                crate::util::utc_iso(crate::util::unix_now()).into(),
            ],
        );
        let (mut values, mut figures) = (Vec::new(), Vec::new());
        for c in cells.iter().filter(|c| c.run == ri) {
            hosts.insert(c.host.clone(), c.host_desc.clone());
            let sid = known.series(c, &mut sql);
            // The reference, the same build every run, is not moved to
            // each run's place (regression: after six runs of `--order 1`
            // … `6` it sat beside the sixth).
            let bid = known.build(c, names.order, !c.pinned, &mut sql);
            let hash = short_hash(&format!(
                "{bid}\0{}\0{}\0{:?}\0{}",
                c.throughputs, c.disturbed, c.floor, c.figures
            ));
            match have.get(&(c.target.clone(), sid)) {
                Some(h) if *h == hash => {
                    added.unchanged_cells += 1;
                    continue;
                }
                Some(_) => added.updated_cells += 1,
                None => added.new_cells += 1,
            }
            values.push([
                id.as_str().into(),
                c.target.as_str().into(),
                sid.into(),
                bid.into(),
                hash.into(),
                c.throughputs.as_str().into(),
                c.disturbed.as_str().into(),
                c.floor.into(),
            ]);
            figures.push([
                id.as_str().into(),
                c.target.as_str().into(),
                sid.into(),
                c.figures.as_str().into(),
            ]);
        }
        rows(
            &mut sql,
            "INSERT INTO cells (run, target, series, build, hash, throughputs, disturbed, floor) VALUES",
            "ON CONFLICT (run, target, series) DO UPDATE SET build = excluded.build, hash = excluded.hash, \
             throughputs = excluded.throughputs, disturbed = excluded.disturbed, floor = excluded.floor",
            values,
        );
        rows(
            &mut sql,
            "INSERT INTO figures (run, target, series, repeats) VALUES",
            "ON CONFLICT (run, target, series) DO UPDATE SET repeats = excluded.repeats",
            figures,
        );
        added.runs += 1;
    }
    for (fp, desc) in hosts {
        sql.push(
            "INSERT INTO hosts (fingerprint, description) VALUES ($1, $2) ON CONFLICT (fingerprint) DO NOTHING",
            vec![fp.into(), desc.into()],
        );
    }
    store.write(&sql)
}

/// Rows of `N` values written 500 to a statement (`head VALUES (…), (…)
/// tail`), each value bound: one statement per 500 rows, not one per row.
fn rows<const N: usize>(w: &mut Writes, head: &str, tail: &str, values: Vec<[Arg; N]>) {
    let mut rows = values.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<[Arg; N]> = rows.by_ref().take(500).collect();
        let list: Vec<String> = (0..chunk.len()).map(|i| row(1 + i * N, N)).collect();
        w.push(
            format!("{head} {} {tail}", list.join(", ")),
            chunk.into_iter().flatten().collect(),
        );
    }
}

/// A directory the history can take: not one client share of a study,
/// no `--build TARGET=` for a target it does not have, not running.
fn addable(dir: &Path, runs: &[LoadedRun], names: &BuildNames) -> anyhow::Result<()> {
    if runs.iter().any(|r| r.info.client_share.is_some()) {
        bail!(
            "{} is one client share of a study; `relbench merge` the shares and add the merged directory",
            dir.display()
        );
    }
    // A `--build TARGET=NAME` whose TARGET no run has would be ignored,
    // and the runs named by their version instead (regression:
    // `--build commit=abc` was silently dropped).
    for t in names.names.iter().filter_map(|(t, _)| t.as_deref()) {
        let targets: Vec<&str> = runs
            .iter()
            .flat_map(|r| r.info.plan.targets.iter().map(|t| t.name.as_str()))
            .collect();
        if !targets.contains(&t) {
            bail!(
                "--build {t}=…: {} has no target {t:?} (its targets: {}); give --build TARGET=NAME with one of \
                 them, or --build NAME for a run of one target (a build name cannot hold '=')",
                dir.display(),
                targets.join(", ")
            );
        }
    }
    if let Some(r) = runs.iter().find(|r| r.info.status == RunStatus::Running) {
        bail!(
            "the run in {} is still running (or was killed); add it when it is done, or after `relbench run --resume --out {}`",
            r.dir.display(),
            r.dir.display()
        );
    }
    Ok(())
}

/// The series and builds the history has already, and the ids the next
/// new ones take: only what is new is added.
struct Known {
    series: HashMap<(String, String, String), i64>,
    builds: HashMap<String, i64>,
    next_series: i64,
    next_build: i64,
}

impl Known {
    fn read(store: &mut Store) -> anyhow::Result<Known> {
        let mut series = HashMap::new();
        store.scan("SELECT id, step, config, host FROM series", &[], &mut |r| {
            series.insert(
                (r[1].text(), r[2].text(), r[3].text()),
                r[0].int().unwrap_or(0),
            );
        })?;
        let mut builds = HashMap::new();
        store.scan("SELECT id, name FROM builds", &[], &mut |r| {
            builds.insert(r[1].text(), r[0].int().unwrap_or(0));
        })?;
        Ok(Known {
            series,
            builds,
            next_series: store.max_id("series")? + 1,
            next_build: store.max_id("builds")? + 1,
        })
    }

    /// The id of a cell's series, added to `sql` when it is new.
    fn series(&mut self, c: &Cell, sql: &mut Writes) -> i64 {
        // The store keeps a series' step as its identity's text.
        let series = (c.step.to_string(), c.config.clone(), c.host.clone());
        if let Some(id) = self.series.get(&series) {
            return *id;
        }
        let sid = self.next_series;
        self.next_series += 1;
        sql.push(
            "INSERT INTO series (id, step, config, host, grp, unit, config_text) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            vec![
                sid.into(),
                series.0.as_str().into(),
                series.1.as_str().into(),
                series.2.as_str().into(),
                c.series_meta.0.as_str().into(),
                c.series_meta.1.as_str().into(),
                c.series_meta.2.as_str().into(),
            ],
        );
        self.series.insert(series, sid);
        sid
    }

    /// The id of a cell's build, added to `sql` at `order` when it is new
    /// (or moved there when one is given and it `moves`).
    fn build(&mut self, c: &Cell, order: Option<f64>, moves: bool, sql: &mut Writes) -> i64 {
        if let Some(&id) = self.builds.get(&c.build) {
            if let Some(o) = order.filter(|_| moves) {
                sql.push(
                    "UPDATE builds SET ord = $1 WHERE id = $2",
                    vec![o.into(), id.into()],
                );
            }
            return id;
        }
        let bid = self.next_build;
        self.next_build += 1;
        sql.push(
            "INSERT INTO builds (id, name, ord, version) VALUES ($1, $2, $3, $4)",
            vec![
                bid.into(),
                c.build.as_str().into(),
                order.into(),
                c.version.as_str().into(),
            ],
        );
        self.builds.insert(c.build.clone(), bid);
        bid
    }
}
