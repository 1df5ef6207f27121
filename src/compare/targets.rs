//! Who is compared: the runs and targets of the results read, their names
//! across hosts, the base, and the column order.

use super::*;

#[derive(Debug, Clone, Serialize)]
pub struct RunMeta {
    pub dir: String,
    pub status: RunStatus,
    pub started: String,
    pub finished: Option<String>,
    pub relbench_version: String,
    pub plan_source: String,
    /// The plan as written (passwords never are: plans name them by
    /// environment variable).
    pub plan_text: String,
    pub host: HostFacts,
    /// The sampler's largest CPU per reading over the steps of the run, in
    /// µs (its cost, shown so the reader can judge it). Per reading, not as
    /// a share of each window: a settle of 2 ms would make two readings
    /// look like several percent of a core.
    pub sampler_us_per_reading: Option<f64>,
    /// The same in words.
    pub sampler_cost: String,
    /// Result files left out of the report, and why (damaged, copies).
    pub skipped_files: Vec<String>,
    /// Steps whose server counted their work otherwise than relbench did
    /// (past 1%, or a second's publishing lag), in words.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub server_count_notes: Vec<String>,
    /// The run is one client share of a study (`I/M`): its figures are
    /// its clients' alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_share: Option<String>,
}

/// A `--base` that names no target of the results: a bad command line
/// (exit 2), not a failure of the report.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UnknownBase(pub String);

#[derive(Debug, Clone, Serialize)]
pub struct TargetMeta {
    /// Name in this report: the plan's name, qualified by its host (or by
    /// its results directory) when two runs use the same name.
    pub name: String,
    /// The name in its plan.
    pub plan_name: String,
    /// The host the run was measured on.
    pub host: String,
    pub engine: String,
    /// An embedded engine has no server process to measure.
    pub embedded: bool,
    pub version: String,
    pub config: BTreeMap<String, String>,
    /// Every setting the server reported (not shown; compared).
    #[serde(skip)]
    pub settings: BTreeMap<String, String>,
    pub filesystem: Option<String>,
    /// How the clients reached the server ("tcp 127.0.0.1:3306, tls
    /// required"): TLS costs a point query a third more CPU, so a reader
    /// must see it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// Index into [`Report::runs`].
    pub run: usize,
    /// Its place among its plan's targets (shards of one plan share it).
    #[serde(skip)]
    pub plan_index: usize,
    /// An A/A copy of this target (index into `targets`): the same
    /// configuration run again, interleaved, to measure the noise.
    pub copy_of: Option<usize>,
    /// Server settings (as read back from the server) whose value differs
    /// from its base's: (name, this target's, the base's; "—" when one
    /// lacks it).
    pub settings_differ: Vec<(String, String, String)>,
}

/// Target indices with the targets of one host together, hosts in order
/// of first appearance.
pub(super) fn column_order(targets: &[TargetMeta], hosts: &[String]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..targets.len()).collect();
    order.sort_by_key(|&i| {
        hosts
            .iter()
            .position(|h| *h == targets[i].host)
            .unwrap_or(0)
    });
    order
}

/// The report's target list. A plan name used by two runs is qualified by
/// the host when the runs come from different hosts, by the results
/// directory otherwise (and by its position when even that clashes).
pub(super) fn name_targets(runs: &[LoadedRun]) -> Vec<TargetMeta> {
    // A shard is a host of its own: its targets are compared with the base
    // measured beside them, even when two shards ran on one machine.
    // A run resumed on another machine is one run a host, each its own.
    let host_of = |ri: usize| {
        let h = &runs[ri].info.host.hostname;
        match (&runs[ri].info.shard, runs[ri].host_part) {
            (Some(s), None) => format!("{h} (shard {})", s.shard),
            (Some(s), Some(k)) => format!("{h} (shard {}, host {k})", s.shard),
            (None, Some(k)) => format!("{h} (host {k})"),
            (None, None) => h.clone(),
        }
    };
    // The targets a run ran: a shard's part of its plan.
    let ran = |r: &LoadedRun| -> Vec<crate::plan::TargetSpec> {
        r.info
            .plan
            .targets
            .iter()
            .filter(|t| {
                r.info
                    .shard
                    .as_ref()
                    .map_or(true, |s| s.targets.contains(&t.name))
            })
            .cloned()
            .collect()
    };
    let uses: Vec<(usize, String)> = runs
        .iter()
        .enumerate()
        .flat_map(|(ri, r)| ran(r).into_iter().map(move |t| (ri, t.name)))
        .collect();
    let mut targets: Vec<TargetMeta> = Vec::new();
    for (ri, run) in runs.iter().enumerate() {
        for t in &ran(run) {
            let sharing: Vec<usize> = uses
                .iter()
                .filter(|(_, n)| *n == t.name)
                .map(|(r, _)| *r)
                .collect();
            let mut name = if sharing.len() < 2 {
                t.name.clone()
            } else if let Some(s) = &run.info.shard {
                match run.host_part {
                    Some(k) if k > 1 => format!("s{}.{k}/{}", s.shard.index, t.name),
                    _ => format!("s{}/{}", s.shard.index, t.name),
                }
            } else {
                let hosts: Vec<String> = sharing.iter().map(|&r| host_of(r)).collect();
                let distinct = hosts
                    .iter()
                    .enumerate()
                    .all(|(i, h)| !hosts[..i].contains(h));
                if distinct {
                    format!("{}/{}", host_of(ri), t.name)
                } else {
                    format!("{}/{}", dir_name(&run.dir), t.name)
                }
            };
            if targets.iter().any(|x| x.name == name) {
                name = format!("{name}#{}", ri + 1);
            }
            let rec = run.info.targets.iter().find(|r| r.name == t.name);
            targets.push(TargetMeta {
                name,
                plan_name: t.name.clone(),
                host: host_of(ri),
                engine: t.engine.name().to_string(),
                embedded: !t.engine.is_server(),
                version: rec.map_or_else(|| "not recorded".into(), |r| r.facts.version.clone()),
                config: rec.map(|r| r.facts.config.clone()).unwrap_or_default(),
                settings: rec.map(|r| r.facts.settings.clone()).unwrap_or_default(),
                filesystem: rec
                    .and_then(|r| r.filesystem.as_ref())
                    .map(|f| format!("{} on {} ({})", f.fstype, f.device, f.mount_point)),
                transport: rec.and_then(|r| r.facts.transport.clone()),
                run: ri,
                plan_index: run
                    .info
                    .plan
                    .targets
                    .iter()
                    .position(|p| p.name == t.name)
                    .unwrap_or(0),
                copy_of: None,
                settings_differ: Vec::new(),
            });
        }
    }
    // A/A copies point at their original, in the same run.
    for i in 0..targets.len() {
        let ri = targets[i].run;
        let spec = runs[ri]
            .info
            .plan
            .targets
            .iter()
            .find(|t| t.name == targets[i].plan_name);
        if let Some(of) = spec.and_then(|t| t.copy_of.as_deref()) {
            targets[i].copy_of = targets
                .iter()
                .position(|t| t.run == ri && t.plan_name == of);
        }
    }
    targets
}

/// Each target's base for `--base name`: the target of that report name
/// for all, or, for a plan name, the target of that name on each host.
pub(super) fn resolve_base(
    targets: &[TargetMeta],
    hosts: &[String],
    name: &str,
) -> anyhow::Result<Vec<usize>> {
    if let Some(i) = targets.iter().position(|t| t.name == name) {
        return Ok(vec![i; targets.len()]);
    }
    let list = || {
        let mut names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
        for t in targets {
            if !names.contains(&t.plan_name.as_str()) && hosts.len() > 1 {
                names.push(t.plan_name.as_str());
            }
        }
        names.join(", ")
    };
    let mut per_host = Vec::new();
    for h in hosts {
        let found: Vec<usize> = (0..targets.len())
            .filter(|&i| targets[i].host == *h && targets[i].plan_name == name)
            .collect();
        match found.as_slice() {
            [i] => per_host.push((h, *i)),
            [] => {}
            several => {
                let names: Vec<&str> = several.iter().map(|&i| targets[i].name.as_str()).collect();
                bail!(
                    "--base {name}: host {h} has {} targets of that name ({}); name one of them",
                    several.len(),
                    names.join(", ")
                );
            }
        }
    }
    if per_host.is_empty() {
        return Err(UnknownBase(format!(
            "--base {name}: no target of that name in these results; the targets are: {}",
            list()
        ))
        .into());
    }
    if per_host.len() < hosts.len() {
        let missing: Vec<&str> = hosts
            .iter()
            .filter(|h| !per_host.iter().any(|(x, _)| x == h))
            .map(String::as_str)
            .collect();
        bail!(
            "--base {name}: host {} has no target of that name, so its targets have nothing to be compared with; \
             name one target as the base for all (one of: {})",
            missing.join(", "),
            list()
        );
    }
    Ok(targets
        .iter()
        .map(|t| {
            per_host
                .iter()
                .find(|(h, _)| **h == t.host)
                .map(|(_, i)| *i)
                .expect("every host has its base")
        })
        .collect())
}

/// The sampler's cost over a run, in words.
pub(super) fn sampler_cost(us_per_reading: Option<f64>) -> String {
    match us_per_reading {
        Some(us) => format!(
            "the sampler used at most {us:.0} µs of CPU per reading, {:.3}% of one core at one reading a second",
            us / 1e4
        ),
        None => "the sampler's cost was not recorded".into(),
    }
}

pub(super) fn dir_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}
