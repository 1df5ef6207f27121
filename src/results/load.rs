//! Reading a results directory back: its record, its step files (on
//! every core, each once, damaged or foreign ones left out and said), and
//! a run resumed on other machines read as one run a host.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::*;

#[derive(Debug, Clone)]
pub struct LoadedRun {
    pub dir: PathBuf,
    pub info: RunInfo,
    pub steps: Vec<StepResult>,
    /// Files under `steps/` that were left out, and why: damaged, not a
    /// regular file, or a second copy of a step's result.
    pub skipped: Vec<String>,
    /// Which of its run's hosts this is, from 1, when the run was resumed
    /// on another machine (`run --new-host`) and read as one run a host.
    pub host_part: Option<u32>,
    /// An adaptive run's decisions (`adaptive.json`), read with the run.
    pub adaptive: Option<adaptive::AdaptiveRecord>,
}

impl LoadedRun {
    /// The run as one run a host it was measured on: itself when it ran
    /// on one; otherwise each host's steps with that host's facts, so a
    /// report compares each host's windows only with the base measured on
    /// that host.
    pub fn by_host(self) -> Vec<LoadedRun> {
        if self.info.later_hosts.is_empty() {
            return vec![self];
        }
        let LoadedRun {
            dir,
            mut info,
            steps,
            mut skipped,
            adaptive,
            ..
        } = self;
        let hosts: Vec<HostFacts> = std::iter::once(info.host.clone())
            .chain(std::mem::take(&mut info.later_hosts))
            .collect();
        let mut runs: Vec<LoadedRun> = hosts
            .into_iter()
            .enumerate()
            .map(|(k, host)| LoadedRun {
                dir: dir.clone(),
                info: RunInfo {
                    host,
                    ..info.clone()
                },
                steps: Vec::new(),
                // The directory's own problems are said once, with the first.
                skipped: if k == 0 {
                    std::mem::take(&mut skipped)
                } else {
                    Vec::new()
                },
                host_part: Some(k as u32 + 1),
                // The run's decisions are the whole run's, said with the first.
                adaptive: if k == 0 { adaptive.clone() } else { None },
            })
            .collect();
        // Each step to its host's run, moved (in their order, kept).
        for s in steps {
            match runs.get_mut(s.host.unwrap_or(0) as usize) {
                Some(r) => r.steps.push(s),
                None => runs[0].skipped.push(format!(
                    "{} names host {} of its run, which run.json does not record; left out",
                    dir.join(s.file_name()).display(),
                    s.host.unwrap_or(0)
                )),
            }
        }
        runs
    }
}

/// Reads step files on every core (scoped threads, each a run of files),
/// in the order given.
fn read_steps(files: &[PathBuf]) -> Vec<anyhow::Result<StepResult>> {
    crate::util::par_map(files, |p| read_for_report(p))
}

/// A step file as a report reads it: without its lossless histograms
/// (3–4 KB a class), which only a merge of client shares adds up, so a
/// report's memory stays proportional to targets × steps.
fn read_for_report(path: &Path) -> anyhow::Result<StepResult> {
    crate::measure::hdr::skipped(|| read_json(path)).map(printable)
}

/// One step result file, whole.
pub fn read_step(path: &Path) -> anyhow::Result<StepResult> {
    read_json(path).map(printable)
}

/// A step result's words as a terminal may print them: a message read
/// back from a file (a failure, an error's sample, a note) with its
/// control characters escaped, never an escape sequence of its own.
fn printable(mut s: StepResult) -> StepResult {
    const MAX: usize = 4096;
    let clean = |t: &mut String| *t = crate::util::printable(t, MAX);
    if let Some(f) = s.failed.as_mut() {
        clean(f);
    }
    s.error_samples.values_mut().for_each(clean);
    s.notes.values_mut().for_each(clean);
    if let Some(t) = s.server_settings.as_mut() {
        clean(t);
    }
    s
}

pub fn read_run_info(dir: &Path) -> anyhow::Result<RunInfo> {
    let path = dir.join(RUN_FILE);
    if !path.exists() && dir.join(merge::MERGE_FILE).exists() {
        bail!(
            "{} is a merge of shards, not one run: `relbench report {}` reads it; resume or confirm each \
             shard in its own directory and merge again",
            dir.display(),
            dir.display()
        );
    }
    if !path.exists() {
        bail!(
            "{} is not a relbench results directory (it has no run.json); give the directory `relbench run` printed",
            dir.display()
        );
    }
    read_json(&path)
}

/// Reads a results directory: run.json and every finished step file
/// (temporary files of a step that was in flight are ignored).
pub fn load_run(dir: &Path) -> anyhow::Result<LoadedRun> {
    let info = read_run_info(dir)?;
    let mut skipped = Vec::new();
    let steps_dir = dir.join("steps");
    let mut steps = if steps_dir.exists() {
        let files = step_files_under(&steps_dir)?;
        let read = read_steps(&files);
        once_each(dir, files, read, &mut skipped)
    } else {
        Vec::new()
    };
    // A result the run cannot have written is said and left out: a target
    // its plan does not have (a file copied in from another run), or a
    // throughput no measurement gives.
    steps.retain(|s| match not_written_by(&info, s) {
        None => true,
        Some(why) => {
            skipped.push(format!(
                "{} {why}; left out",
                dir.join(s.file_name()).display()
            ));
            false
        }
    });
    steps.sort_by(|a, b| {
        (a.id.repeat, &a.id.target, a.id.seq, a.id.at.clients).cmp(&(
            b.id.repeat,
            &b.id.target,
            b.id.seq,
            b.id.at.clients,
        ))
    });
    fill_occurrences(&mut steps);
    // Results written before the benchmark's own CPU per op was recorded
    // have its parts: server plus client (an embedded engine's is the
    // client's).
    for s in &mut steps {
        if s.metrics.own_cpu_us_per_op.is_none() {
            let embedded = info
                .plan
                .targets
                .iter()
                .find(|t| t.name == s.id.target)
                .is_some_and(|t| !t.engine.is_server());
            s.metrics.own_cpu_us_per_op =
                crate::metrics::costs::own_cpu_per_op(&s.metrics, embedded);
        }
    }
    Ok(LoadedRun {
        host_part: None,
        adaptive: adaptive::read(dir)?,
        dir: dir.to_path_buf(),
        info,
        steps,
        skipped,
    })
}

/// The step files under `steps/`: each target's directory's `.json`
/// files, in name order, links and hidden files aside.
fn step_files_under(steps_dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = Vec::new();
    for target in
        fs::read_dir(steps_dir).with_context(|| format!("reading {}", steps_dir.display()))?
    {
        let target = target?.path();
        if !fs::symlink_metadata(&target).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let mut mine: Vec<PathBuf> = fs::read_dir(&target)?
            .map(|f| f.map(|f| f.path()))
            .collect::<Result<_, _>>()?;
        mine.sort();
        files.extend(mine.into_iter().filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && !p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with('.'))
        }));
    }
    Ok(files)
}

/// The results read, each step once: a step's result lives in the file
/// named after it, and another copy (a backup, a file copied by hand) is
/// not a repeat. A damaged file costs its own step, not the report.
fn once_each(
    dir: &Path,
    files: Vec<PathBuf>,
    read: Vec<anyhow::Result<StepResult>>,
    skipped: &mut Vec<String>,
) -> Vec<StepResult> {
    let mut steps: Vec<StepResult> = Vec::new();
    // Where each of `steps` was read from.
    let mut sources: Vec<PathBuf> = Vec::new();
    let mut by_name: std::collections::HashMap<PathBuf, usize> = std::collections::HashMap::new();
    for (p, r) in files.into_iter().zip(read) {
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                skipped.push(format!("{e:#}"));
                continue;
            }
        };
        // A step's result lives in the file named after it; another
        // copy (a backup, a file copied by hand) is not a repeat.
        // (Looked up by name: a scan of the steps read so far made
        // loading 2,400 files take seconds.)
        let name = r.file_name();
        let twin = by_name.get(&name).copied();
        let named_right = dir.join(&name) == p;
        let copy = |of: &Path, copy: &Path| {
            format!(
                "{} is a copy of the step in {}; left out (a step counts once)",
                copy.display(),
                of.display()
            )
        };
        match twin {
            Some(i) if named_right => {
                skipped.push(copy(&p, &sources[i]));
                steps[i] = r;
                sources[i] = p;
            }
            Some(i) => skipped.push(copy(&sources[i], &p)),
            None => {
                by_name.insert(name, steps.len());
                steps.push(r);
                sources.push(p);
            }
        }
    }
    steps
}

/// Why the run cannot have written this result, when it cannot.
fn not_written_by(info: &RunInfo, s: &StepResult) -> Option<String> {
    let elsewhere = info
        .shard
        .as_ref()
        .is_some_and(|r| !r.targets.contains(&s.id.target));
    if !info.plan.targets.iter().any(|t| t.name == s.id.target) {
        Some(format!(
            "names target \"{}\", which the run's plan does not have",
            crate::util::printable(&s.id.target, 64)
        ))
    } else if elsewhere {
        Some(format!(
            "names target \"{}\", which another shard runs",
            crate::util::printable(&s.id.target, 64)
        ))
    } else if !s.throughput.is_finite() || s.throughput < 0.0 {
        Some(format!(
            "has a throughput of {}, which no measurement gives",
            s.throughput
        ))
    } else {
        None
    }
}

/// Upgraded files do not know their occurrence: count the earlier runs
/// of the same step by the same target in the same repeat.
fn fill_occurrences(steps: &mut [StepResult]) {
    for i in 0..steps.len() {
        if steps[i].id.at.occurrence == 0 {
            let s = &steps[i];
            let mut earlier: Vec<usize> = steps[..i]
                .iter()
                .filter(|x| {
                    x.id.target == s.id.target
                        && x.id.repeat == s.id.repeat
                        && x.id.at.step == s.id.at.step
                        && x.id.seq < s.id.seq
                })
                .map(|x| x.id.seq)
                .collect();
            earlier.dedup();
            steps[i].id.at.occurrence = earlier.len() as u32 + 1;
        }
    }
}
