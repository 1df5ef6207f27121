//! `relbench host [tune|reset]`: the settings of this machine that bend a
//! benchmark, each with what a benchmark host should have; as root, the
//! usual ones set for a study (`tune`) and put back (`reset`), what was
//! there kept in a file under `/run` (gone with a reboot, as the settings
//! are).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use super::args::HostAction;
use crate::metrics::tuning::{self, Saved};

/// The filesystem the facts are read from: `/`, or a tree of a test's own
/// (`RELBENCH_SYSROOT`).
fn root() -> PathBuf {
    std::env::var_os("RELBENCH_SYSROOT").map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// Where `tune` keeps what it changed.
fn state(root: &Path) -> PathBuf {
    root.join("run/relbench-host-tune.json")
}

pub(super) fn host(
    action: Option<HostAction>,
    drift: &super::args::DriftArgs,
) -> anyhow::Result<()> {
    let root = root();
    if action != Some(HostAction::Drift) && (drift.probe_for.is_some() || drift.window.is_some()) {
        bail!(
            "--for and --window are `relbench host drift`'s: run `relbench host drift --for 60s --window 5s`"
        );
    }
    match action {
        None => show(&root),
        Some(HostAction::Tune) => tune(&root),
        Some(HostAction::Reset) => reset(&root),
        Some(HostAction::Drift) => {
            super::drift::drift(drift.probe_for.as_deref(), drift.window.as_deref())
        }
    }
}

fn show(root: &Path) -> anyhow::Result<()> {
    let facts = tuning::facts(root);
    let w = facts.iter().map(|f| f.name.len()).max().unwrap_or(8);
    for f in &facts {
        let mark = match f.ok {
            Some(true) => "ok  ",
            Some(false) => "NOT ",
            None => "    ",
        };
        crate::outln!("{mark}{:<w$}  {}", f.name, f.value);
        if let (Some(a), Some(false)) = (f.advice, f.ok) {
            crate::outln!("    {:<w$}  a benchmark host should have: {a}", "");
        }
    }
    let tunable = tuning::tunable(root);
    if state(root).exists() {
        crate::outln!(
            "\ntuned by `relbench host tune`; `relbench host reset` puts back what was there"
        );
    } else if tunable.is_empty() {
        crate::outln!("\nnothing here that `relbench host tune` sets");
    } else {
        crate::outln!(
            "\n`relbench host tune` (as root) sets {} for a study; `relbench host reset` puts them back",
            tunable.join(", ")
        );
    }
    Ok(())
}

fn tune(root: &Path) -> anyhow::Result<()> {
    let file = state(root);
    if file.exists() {
        bail!(
            "this host is tuned already ({} holds what was there before); run `relbench host reset` first",
            file.display()
        );
    }
    if tuning::tunable(root).is_empty() {
        crate::outln!("nothing here that `relbench host tune` sets (no cpufreq, huge pages or swappiness settings)");
        return Ok(());
    }
    let (saved, failed) = tuning::tune(root);
    if !saved.is_empty() {
        let text: Vec<(String, String)> = saved
            .iter()
            .map(|(p, v)| (p.display().to_string(), v.clone()))
            .collect();
        crate::util::write_file(&file, &serde_json::to_vec_pretty(&text)?)
            .with_context(|| format!("keeping what was there in {}", file.display()))?;
    }
    for (p, was) in &saved {
        crate::outln!("set {} (was {was})", p.display());
    }
    if !failed.is_empty() {
        bail!(
            "could not set {} (relbench host tune needs root); what was set is kept in {}: `relbench host reset` puts it back",
            failed.join("; "),
            file.display()
        );
    }
    Ok(())
}

fn reset(root: &Path) -> anyhow::Result<()> {
    let file = state(root);
    if std::fs::symlink_metadata(&file).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        crate::outln!(
            "nothing to put back: `relbench host tune` changed nothing here since the last boot"
        );
        return Ok(());
    }
    // What tune wrote is a few hundred bytes.
    let text = crate::util::read_record(&file, 64 << 10)?;
    let saved: Vec<(String, String)> = serde_json::from_slice(&text)
        .with_context(|| format!("{} is not what `relbench host tune` wrote", file.display()))?;
    let saved: Saved = saved
        .into_iter()
        .map(|(p, v)| (PathBuf::from(p), v))
        .collect();
    // Only the files tune writes, with values they take: a state file
    // someone edited cannot make reset write anywhere else, or anything.
    if let Err(why) = tuning::check_saved(root, &saved) {
        bail!(
            "{}: {why}; it is not what `relbench host tune` wrote: remove the file",
            file.display()
        );
    }
    let failed = tuning::reset(&saved);
    if !failed.is_empty() {
        bail!(
            "could not put back {}; {} is kept",
            failed.join("; "),
            file.display()
        );
    }
    std::fs::remove_file(&file).with_context(|| format!("removing {}", file.display()))?;
    for (p, v) in &saved {
        crate::outln!("put back {} = {v}", p.display());
    }
    Ok(())
}
