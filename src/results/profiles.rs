//! Profiles on disk, under `profiles/` beside `steps/`: per execution a
//! small record (`….json`: its identity and what the profile is) and its
//! folded stacks, gzip'd (`….cpu.folded.gz`, `….off.folded.gz`), which
//! FlameGraph and inferno read as they are. A run without profiles has no
//! such folder; a report reads the stacks only of the cells it compares.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::metrics::profile::{Folded, Meta, Profile};
use crate::plan::ExecId;
use crate::util::{my_uid, secure_dir, write_file};

pub const DIR: &str = "profiles";

/// The run's profiles folder, made or checked (relbench's own).
pub fn dir(out: &Path) -> anyhow::Result<PathBuf> {
    let d = out.join(DIR);
    secure_dir(&d, &[my_uid()], "the run's profiles folder")?;
    Ok(d)
}

/// An execution's profile record as kept: its identity and its facts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    #[serde(flatten)]
    pub id: ExecId,
    pub meta: Meta,
}

/// Which stacks of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stacks {
    Cpu,
    Off,
}

/// An execution's files, less their endings: `profiles/T/r1-03-step-c4`.
fn stem(id: &ExecId) -> PathBuf {
    Path::new(DIR).join(&id.target).join(format!(
        "r{}-{:02}-{}-c{}",
        id.repeat, id.seq, id.at.step, id.at.clients
    ))
}

fn with(stem: PathBuf, ending: &str) -> PathBuf {
    let mut s = stem.into_os_string();
    s.push(ending);
    PathBuf::from(s)
}

pub fn record_file(id: &ExecId) -> PathBuf {
    with(stem(id), ".json")
}

pub fn stacks_file(id: &ExecId, which: Stacks) -> PathBuf {
    with(
        stem(id),
        match which {
            Stacks::Cpu => ".cpu.folded.gz",
            Stacks::Off => ".off.folded.gz",
        },
    )
}

/// Writes a profile: the stacks first, so a record never names stacks
/// that are not there.
pub fn write(out: &Path, id: &ExecId, p: &Profile) -> anyhow::Result<()> {
    dir(out)?;
    let d = out.join(DIR).join(&id.target);
    secure_dir(&d, &[my_uid()], "the run's profiles folder")?;
    write_file(&out.join(stacks_file(id, Stacks::Cpu)), &p.cpu.to_gzip())?;
    write_file(&out.join(stacks_file(id, Stacks::Off)), &p.off.to_gzip())?;
    let rec = Record {
        id: id.clone(),
        meta: p.meta.clone(),
    };
    let mut body = serde_json::to_vec_pretty(&rec)?;
    body.push(b'\n');
    write_file(&out.join(record_file(id)), &body)
}

/// Every profile record of a run, in file order (none: not profiled).
pub fn records(run: &Path) -> Vec<Record> {
    let mut out = Vec::new();
    let Ok(targets) = std::fs::read_dir(run.join(DIR)) else {
        return out;
    };
    let mut files: Vec<PathBuf> = targets
        .flatten()
        .filter(|t| t.file_type().is_ok_and(|f| f.is_dir()))
        .filter_map(|t| std::fs::read_dir(t.path()).ok())
        .flat_map(|d| d.flatten().map(|f| f.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for f in files {
        if let Ok(mut r) = crate::util::read_record(&f, crate::util::MAX_RECORD_BYTES)
            .and_then(|b| Ok(serde_json::from_slice::<Record>(&b)?))
        {
            // Words read back reach a terminal: no escape sequence of theirs.
            let clean = |t: &mut String| *t = crate::util::printable(t, 4096);
            r.meta.error.iter_mut().for_each(clean);
            r.meta.disturbed.iter_mut().for_each(clean);
            for u in &mut r.meta.unnamed {
                clean(&mut u.object);
                clean(&mut u.why);
            }
            out.push(r);
        }
    }
    out
}

/// Reads one of a profile's stacks.
pub fn read_stacks(run: &Path, id: &ExecId, which: Stacks) -> anyhow::Result<Folded> {
    let f = run.join(stacks_file(id, which));
    let bytes = crate::util::read_record(&f, crate::util::MAX_RECORD_BYTES)?;
    Folded::from_gzip(&bytes).with_context(|| format!("{} is damaged", f.display()))
}
