//! Adding up the client shares of a study (`relbench run --client-share
//! I/M` on M client hosts against one server) into one run, exactly:
//! events, statements and errors summed; the events of each second summed
//! over the shares' windows, which began together at the barrier (the
//! server's clock, read there, lines them up, and a share whose window
//! began off past [`max_skew_secs`] marks the step instead of being
//! averaged in); each class's latency histogram added from the lossless
//! copies the step files keep, so the merged p99 is the p99 of every event
//! from every host. A step the leading share ran for all (a load, a
//! restart) is the leading share's.
//!
//! The server's costs per operation are not summed: each client host's
//! sampler sees its own machine, so the merged step says they were not
//! measured; the clients' CPU is summed over the hosts.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::bail;
use serde::{Deserialize, Serialize};

use super::merge::MergeRefused;
use super::{read_run_info, read_step, write_atomic, write_step, RunInfo, RunStatus, StepResult};
use crate::measure::Merged;
use crate::measure::{hdr, LatencySummary};
use crate::metrics::costs::{ServerTally, StepMetrics};
use crate::metrics::server_log;
use crate::plan::ClientShare;

/// How far apart (seconds, on the server's clock) the shares' measured
/// windows of `secs` may begin: a second's counts are summed across
/// shares, so a skew is that share of the figures. 2% of the window, and
/// never under 20 ms (a fixed quarter second let 236 ms of a 5 s window,
/// 4.7%, pass).
pub fn max_skew_secs(secs: f64) -> f64 {
    (MAX_SKEW_SHARE * secs).max(0.02)
}

pub const MAX_SKEW_SHARE: f64 = 0.02;

/// The file beside `run.json` that says a run is merged from client
/// shares, and from which.
pub const SHARES_FILE: &str = "shares.json";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SharesInfo {
    pub barrier: String,
    pub shares: Vec<SourceShare>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SourceShare {
    #[serde(flatten)]
    pub share: ClientShare,
    pub source: String,
    pub hostname: String,
}

/// A run that is one client share of a study (`--client-share I/M`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ShareRun {
    #[serde(flatten)]
    pub share: crate::plan::ClientShare,
    /// The barrier's name every share of the study was given.
    pub barrier: String,
    /// How long a share waits for the others, seconds.
    pub timeout_secs: f64,
}

/// One share's part of a step split over client hosts.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ShareStep {
    pub share: crate::plan::ClientShare,
    /// The step's clients this share ran, numbered from 1.
    pub clients: Vec<u32>,
    /// How long this share waited for the others before its window.
    pub waited_secs: f64,
    /// The server's clock minus this host's (ms, ± half a round trip),
    /// read as the shares met: lines the shares' windows up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ms: Option<f64>,
    /// The leading share ran this step for all (a load, maintenance, a
    /// restart): this one only waited for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub by_leader: bool,
}

impl ShareStep {
    /// Share `share` of a step with `clients`: which of them it ran
    /// (numbered from 1), nothing waited or read yet.
    pub fn new(share: ClientShare, clients: u32) -> ShareStep {
        ShareStep {
            share,
            clients: share.clients(clients).map(|c| c + 1).collect(),
            waited_secs: 0.0,
            clock_offset_ms: None,
            by_leader: false,
        }
    }
}

/// Whether a results directory is one client share of a study.
pub fn is_share(dir: &Path) -> bool {
    read_run_info(dir).is_ok_and(|i| i.client_share.is_some())
}

/// Checks the shares and writes their sum into `out`: run.json (the
/// leading share's record, complete), shares.json, and a step file per
/// step. Returns how many steps were merged.
pub fn merge(
    dirs: &[PathBuf],
    out: &Path,
    server_samples: Option<&Path>,
) -> anyhow::Result<(SharesInfo, usize)> {
    let server_log = server_samples.map(server_log::load).transpose()?;
    let mut problems = Vec::new();
    let mut given: Vec<Share> = Vec::new();
    for dir in dirs {
        match finished_share(dir) {
            Ok((info, share)) => given.push((dir.clone(), info, share)),
            Err(why) => problems.push(format!("{why:#}")),
        }
    }
    one_study(&given, &mut problems);
    if !problems.is_empty() {
        return Err(MergeRefused(problems).into());
    }
    given.sort_by_key(|g| g.2.index);
    let files: Vec<Vec<PathBuf>> = given
        .iter()
        .map(|(d, _, _)| step_files(d))
        .collect::<anyhow::Result<_>>()?;
    for ((d, _, s), f) in given.iter().zip(&files).skip(1) {
        for name in files[0].iter().filter(|n| !f.contains(n)) {
            problems.push(format!(
                "client share {s} in {} has no {}, which share 1 has; its step did not run there. Shares do \
                 not resume alone: run every share again, together, into new directories with a new \
                 --barrier, and merge those",
                d.display(),
                name.display()
            ));
        }
    }
    if !problems.is_empty() {
        return Err(MergeRefused(problems).into());
    }
    write_sum(&given, &files[0], out, server_log.as_ref())
}

/// A share's directory, its record and which share it is.
type Share = (PathBuf, RunInfo, ClientShare);

/// A client share's directory that can be merged: a share, finished, not
/// running; why not, when it cannot.
fn finished_share(dir: &Path) -> anyhow::Result<(RunInfo, ClientShare)> {
    let info = read_run_info(dir)?;
    let Some(rec) = info.client_share.clone() else {
        anyhow::bail!(
            "{} ran every client itself (no --client-share); merge adds up the shares of one study",
            dir.display()
        );
    };
    if let Some(pid) = super::merge::running(dir) {
        anyhow::bail!(
            "client share {} in {} is still running (pid {pid}); wait until it ends and merge again",
            rec.share,
            dir.display()
        );
    }
    if info.status != RunStatus::Complete {
        anyhow::bail!(
            "client share {} in {} stopped before it finished ({:?}); shares do not resume alone (the \
             barrier would let one pass steps the others have not reached): run every share again, \
             together, into new directories with a new --barrier, and merge those",
            rec.share,
            dir.display(),
            info.status
        );
    }
    if !crate::plan::share::is_part(rec.share.index, rec.share.count) {
        anyhow::bail!(
            "{}: its run.json says it is client share {}/{}, which is no share relbench splits (1 to {}): \
             the file is damaged or not relbench's; run that share again",
            dir.display(),
            rec.share.index,
            rec.share.count,
            crate::plan::share::MAX_PARTS
        );
    }
    Ok((info, rec.share))
}

/// The shares are of one study (one plan, one barrier, one split), each
/// given once, none missing.
fn one_study(given: &[Share], problems: &mut Vec<String>) {
    if let Some((d0, i0, s0)) = given.first() {
        let barrier = &i0.client_share.as_ref().expect("checked").barrier;
        for (d, i, s) in &given[1..] {
            let b = &i.client_share.as_ref().expect("checked").barrier;
            if i.plan_hash != i0.plan_hash || b != barrier || s.count != s0.count {
                problems.push(format!(
                    "{} (share {s}, barrier {b:?}) and {} (share {s0}, barrier {barrier:?}) are not shares of \
                     one study: give the M directories of one barrier and plan",
                    d.display(),
                    d0.display()
                ));
            }
        }
        for index in 1..=s0.count {
            let n = given.iter().filter(|g| g.2.index == index).count();
            if n == 0 {
                problems.push(format!(
                    "client share {index}/{} is missing: its clients did not run, so the sum would lack them; \
                     give its directory",
                    s0.count
                ));
            } else if n > 1 {
                problems.push(format!(
                    "client share {index}/{} is given {n} times; give it once",
                    s0.count
                ));
            }
        }
    } else if problems.is_empty() {
        problems.push("no client share directories given".into());
    }
}

/// Writes the shares' sum into `out`: each step added up (with the server
/// host's costs when its log is given), shares.json, then run.json.
fn write_sum(
    given: &[Share],
    files: &[PathBuf],
    out: &Path,
    server_log: Option<&(server_log::Header, Vec<server_log::Reading>)>,
) -> anyhow::Result<(SharesInfo, usize)> {
    if out.join(super::RUN_FILE).exists() || out.join(SHARES_FILE).exists() {
        bail!(
            "{} holds a run already; merge into a new directory (--out)",
            out.display()
        );
    }
    fs::create_dir_all(out)?;
    let _lock = super::lock_run(out)?;
    let mut merged = 0;
    for name in files {
        let parts: Vec<StepResult> = given
            .iter()
            .map(|(d, _, _)| read_step(&d.join(name)))
            .collect::<anyhow::Result<_>>()?;
        let mut step = add_up(parts).map_err(|e| anyhow::anyhow!("{}: {e}", name.display()))?;
        if let Some((header, log)) = server_log {
            server_costs(&mut step, header, log);
        }
        write_step(out, &step)?;
        merged += 1;
    }
    let (_, info0, _) = &given[0];
    let mut info = info0.clone();
    info.client_share = None;
    let shares = SharesInfo {
        barrier: info0
            .client_share
            .as_ref()
            .expect("checked")
            .barrier
            .clone(),
        shares: given
            .iter()
            .map(|(d, i, s)| SourceShare {
                share: *s,
                source: d.display().to_string(),
                hostname: i.host.hostname.clone(),
            })
            .collect(),
    };
    write_atomic(&out.join(SHARES_FILE), &shares)?;
    super::write_run_info(out, &info)?;
    Ok((shares, merged))
}

/// `steps/<target>/<file>.json` of a run, relative, sorted.
fn step_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let steps = dir.join("steps");
    for t in fs::read_dir(&steps)? {
        let t = t?.path();
        if !t.is_dir() {
            continue;
        }
        for f in fs::read_dir(&t)? {
            let f = f?.path();
            let n = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if n.ends_with(".json") && !n.starts_with('.') {
                out.push(f.strip_prefix(dir)?.to_path_buf());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// One step's shares added up (the leading share's first).
pub fn add_up(mut parts: Vec<StepResult>) -> Result<StepResult, AddUpError> {
    let lead = parts.remove(0);
    let mut m = lead.clone();
    m.client_share = None;
    m.retried.clear();
    if lead.client_share.as_ref().map_or(true, |c| c.by_leader) {
        m.notes.insert(
            "client shares".into(),
            format!(
                "run by the leading share for all {} shares",
                parts.len() + 1
            ),
        );
        return Ok(m);
    }
    let all: Vec<&StepResult> = std::iter::once(&lead).chain(&parts).collect();
    if let Some(why) = shares_failed(&all) {
        m.failed = Some(why);
        return Ok(m);
    }
    every_client_once(&all, lead.id.at.clients)?;
    let (first, skew) = match lined_up(&all) {
        Ok(w) => w,
        Err(why) => {
            m.failed = Some(why.to_string());
            return Ok(m);
        }
    };
    add_figures(&mut m, &all);
    m.latency = add_latencies(&all)?;
    m.metrics = add_metrics(&all, m.throughput * m.secs, first);
    m.sla = None;
    server_count(&mut m, &lead, skew);
    share_notes(&mut m, &all, skew);
    Ok(m)
}

/// Why the step failed, when a share of it did.
fn shares_failed(all: &[&StepResult]) -> Option<String> {
    let failed: Vec<String> = all
        .iter()
        .filter_map(|p| {
            let s = p
                .client_share
                .as_ref()
                .map(|c| c.share.to_string())
                .unwrap_or_default();
            p.failed.as_ref().map(|f| format!("share {s}: {f}"))
        })
        .collect();
    (!failed.is_empty()).then(|| failed.join("; "))
}

/// The shares ran every client of the step once.
fn every_client_once(all: &[&StepResult], clients_of_step: u32) -> Result<(), AddUpError> {
    let mut clients: Vec<u32> = all
        .iter()
        .flat_map(|p| {
            p.client_share
                .as_ref()
                .map(|c| c.clients.clone())
                .unwrap_or_default()
        })
        .collect();
    clients.sort();
    if clients == (1..=clients_of_step).collect::<Vec<_>>() {
        return Ok(());
    }
    Err(AddUpError::ClientsNotOnce {
        clients,
        of: clients_of_step,
    })
}

/// Why a step's shares cannot be added up.
#[derive(Debug, thiserror::Error)]
pub enum AddUpError {
    #[error(
        "the shares ran clients {clients:?} of the step's {of}, not each once: run the study again with \
         --client-share 1/M … M/M, the same M on every host, and merge those"
    )]
    ClientsNotOnce { clients: Vec<u32>, of: u32 },
    #[error(
        "its {class} latencies have no lossless histogram (written by a relbench before it kept them): run \
         the shares again with this relbench"
    )]
    NoHistogram { class: String },
    #[error(
        "{class}: the histograms cannot be added: {why}; run every share again with one relbench and merge those"
    )]
    Histogram { class: String, why: String },
}

/// The first share's window start on the server's clock and how far the
/// shares' starts lay apart; a refusal when too far to add them.
fn lined_up(all: &[&StepResult]) -> Result<(f64, f64), crate::measure::Unmeasured> {
    let starts: Vec<Option<f64>> = all
        .iter()
        .map(|p| {
            let w = p.metrics.window_start?;
            let off = p
                .client_share
                .as_ref()
                .and_then(|c| c.clock_offset_ms)
                .unwrap_or(0.0);
            Some(w + off / 1000.0)
        })
        .collect();
    let known: Vec<f64> = starts.iter().flatten().copied().collect();
    let first = known.iter().copied().fold(f64::INFINITY, f64::min);
    let last = known.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let skew = if known.len() == all.len() {
        last - first
    } else {
        0.0
    };
    let longest = all.iter().map(|p| p.secs).fold(0.0, f64::max);
    if skew > max_skew_secs(longest) {
        let late = all
            .iter()
            .zip(&starts)
            .max_by(|a, b| a.1.partial_cmp(b.1).unwrap_or(std::cmp::Ordering::Equal))
            .and_then(|(p, _)| p.client_share.as_ref().map(|c| c.share.to_string()))
            .unwrap_or_default();
        return Err(crate::measure::Unmeasured::new(format!(
            "the shares' windows began {skew:.3} s apart on the server's clock (share {late} last), {:.1}% of \
             the {longest:.1} s window, past the {:.0}% their figures can be added within: a share started late or \
             its clock moved; each share's own results are in its directory",
            100.0 * skew / longest.max(1e-9),
            MAX_SKEW_SHARE * 100.0
        )));
    }
    Ok((first, skew))
}

/// The window's figures summed over the shares: its throughput the
/// shares' rates added, its work, counts and seconds the shares'
/// together, and its length their windows' mean weighted by their rates
/// (so that throughput × length is the work of all). Regression: the work
/// was divided by the longest window, so a share whose window ran long
/// (its coordinator late to stop on a loaded host) lowered every other
/// share's rate with it: an in-place ./test merged 7.8% under the sum.
fn add_figures(m: &mut StepResult, all: &[&StepResult]) {
    let work: f64 = all.iter().map(|p| p.throughput * p.secs).sum();
    m.throughput = all.iter().map(|p| p.throughput).sum();
    m.secs = if m.throughput > 0.0 {
        work / m.throughput
    } else {
        all.iter().map(|p| p.secs).fold(0.0, f64::max)
    };
    let mut sum = Merged::default();
    for p in all {
        sum.add(&Merged {
            events: p.events,
            failed_events: p.failed_events,
            statements: p.statements.clone(),
            errors: p.errors.clone(),
            error_samples: p.error_samples.clone(),
            per_second: p.per_second.clone(),
            latency: BTreeMap::new(),
            class_seconds: p.class_seconds.clone(),
            tallies: p.tallies.clone(),
        });
    }
    (m.events, m.failed_events) = (sum.events, sum.failed_events);
    (m.statements, m.errors, m.error_samples) = (sum.statements, sum.errors, sum.error_samples);
    (m.per_second, m.class_seconds, m.tallies) = (sum.per_second, sum.class_seconds, sum.tallies);
    if let Some(r) = &mut m.rate {
        r.reached_per_sec = if m.secs > 0.0 {
            m.events as f64 / m.secs
        } else {
            0.0
        };
        r.missed = r.reached_per_sec < crate::results::RATE_MISSED_BELOW * r.asked_per_sec;
    }
}

/// The server's count of all the shares' work, against their sum.
fn server_count(m: &mut StepResult, lead: &StepResult, skew: f64) {
    // The leading share read the server's counters at its window's edges,
    // which are every share's within milliseconds: the server's count of
    // all the shares' work, against their sum.
    if let Some(mut t) = lead.metrics.server_count.clone() {
        t.relbench =
            t.of.of_work(&m.statements, &m.errors, m.events, m.failed_events) as f64;
        // The leader's edges are not the other shares' windows: they lie
        // up to the skew apart, and the leader's own readings as late as
        // its coordinator woke (86 ms under load), with the others'
        // barrier polls inside that stretch. So the tolerance grows by
        // that share of the window.
        let late = lead
            .metrics
            .interference
            .as_ref()
            .and_then(|i| i.relbench_late_secs)
            .unwrap_or(0.0);
        if m.secs > 0.0 {
            t.tolerance = t
                .tolerance
                .max(ServerTally::AGREE_WITHIN + (skew + late) / m.secs);
        }
        if let Some(why) = t.disagreement() {
            m.notes.insert("server count".into(), why);
        }
        m.metrics.server_count = Some(t);
    }
}

/// How the shares met, and what a split step does not measure.
fn share_notes(m: &mut StepResult, all: &[&StepResult], skew: f64) {
    let offsets: Vec<String> = all
        .iter()
        .filter_map(|p| {
            let c = p.client_share.as_ref()?;
            Some(format!(
                "{} clients {:?} (waited {:.2} s, clock {})",
                c.share,
                c.clients,
                c.waited_secs,
                c.clock_offset_ms.map_or("not read".into(), |o| format!(
                    "{o:+.1} ms off the server's"
                ))
            ))
        })
        .collect();
    m.notes.insert(
        "client shares".into(),
        format!(
            "{} shares, windows begun within {:.0} ms of each other: {}",
            all.len(),
            skew * 1000.0,
            offsets.join("; ")
        ),
    );
    m.notes.insert(
        "costs".into(),
        "the server's costs per operation are not measured for a step split over client hosts (each host's \
         sampler sees its own machine); the client CPU is the shares' summed"
            .into(),
    );
}

/// Each class's histogram, added from every share's lossless copy.
fn add_latencies(all: &[&StepResult]) -> Result<BTreeMap<String, LatencySummary>, AddUpError> {
    let mut out = BTreeMap::new();
    let classes: std::collections::BTreeSet<&String> =
        all.iter().flat_map(|p| p.latency.keys()).collect();
    for class in classes {
        let mut sum: Option<hdrhistogram::Histogram<u64>> = None;
        let mut max_us: f64 = 0.0;
        for p in all {
            let Some(l) = p.latency.get(class) else {
                continue;
            };
            let Some(text) = &l.hdr else {
                return Err(AddUpError::NoHistogram {
                    class: class.clone(),
                });
            };
            let h = hdr::decode(text).map_err(|e| AddUpError::Histogram {
                class: class.clone(),
                why: e.to_string(),
            })?;
            max_us = max_us.max(l.max_us);
            match &mut sum {
                Some(s) => s.add(&h).map_err(|e| AddUpError::Histogram {
                    class: class.clone(),
                    why: format!("they differ in shape: {e:?}"),
                })?,
                None => sum = Some(h),
            }
        }
        if let Some(h) = sum {
            out.insert(
                class.clone(),
                LatencySummary::of(&h, (max_us * 1000.0).round() as u64),
            );
        }
    }
    Ok(out)
}

/// What the shares' samplers say of the whole step: the clients' CPU
/// summed; the window from the first share's start; the most disturbed
/// host's interference (a step is as disturbed as its busiest host).
fn add_metrics(all: &[&StepResult], ops: f64, first_start: f64) -> StepMetrics {
    let client_secs: Option<f64> = all.iter().map(|p| p.metrics.client_cpu_secs).sum();
    let busiest = all
        .iter()
        .filter_map(|p| p.metrics.interference.as_ref())
        .max_by(|a, b| {
            a.others_share_pct
                .unwrap_or(0.0)
                .partial_cmp(&b.others_share_pct.unwrap_or(0.0))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .cloned();
    StepMetrics {
        client_cpu_secs: client_secs,
        client_cpu_us_per_op: client_secs.filter(|_| ops > 0.0).map(|s| s * 1e6 / ops),
        client_rss_peak_bytes: all
            .iter()
            .filter_map(|p| p.metrics.client_rss_peak_bytes)
            .max(),
        window_start: first_start.is_finite().then_some(first_start),
        counters: all[0].metrics.counters.clone(),
        interference: busiest,
        ..StepMetrics::default()
    }
}

/// The server host's costs over a merged step's window, from the log
/// `relbench sample` kept there, divided by every share's operations.
fn server_costs(m: &mut StepResult, header: &server_log::Header, log: &[server_log::Reading]) {
    if m.failed.is_some() || !m.notes.contains_key("costs") {
        return;
    }
    let (Some(a), ops) = (m.metrics.window_start, m.throughput * m.secs) else {
        return;
    };
    if ops <= 0.0 {
        return;
    }
    let Some(w) = server_log::window(header, log, a, a + m.secs) else {
        m.notes.insert(
            "costs".into(),
            "the server's costs per operation are not measured: the log of `relbench sample` does not cover \
             this step's window (start it before the shares, stop it after)"
                .into(),
        );
        return;
    };
    let per_op = |x: f64| x * 1e6 / ops;
    let x = &mut m.metrics;
    x.server_cpu_secs = w.server_cpu_secs;
    x.server_cpu_us_per_op = w.server_cpu_secs.map(per_op);
    x.cpu_us_per_op = Some(per_op(w.machine_cpu_secs));
    x.cs_per_op = Some(w.ctxt / ops);
    x.own_cpu_us_per_op = match (w.server_cpu_secs, x.client_cpu_secs) {
        (Some(s), Some(c)) => Some(per_op(s + c)),
        _ => None,
    };
    if let Some([r, rk, wr, wk]) = w.disk {
        x.reads_per_op = Some(r / ops);
        x.read_kb_per_op = Some(rk / ops);
        x.writes_per_op = Some(wr / ops);
        x.write_kb_per_op = Some(wk / ops);
    }
    // What the server host's log measured is measured: the leading
    // share's notes that this host could not measure it no longer hold
    // (regression: they stayed beside the figures the merge filled in).
    if w.server_cpu_secs.is_some() {
        m.notes.remove("server_cpu");
    }
    m.notes.remove("machine");
    m.notes.remove("machine_cpu");
    if w.disk.is_some() {
        m.notes.remove("disk");
    }
    m.notes.insert(
        "costs".into(),
        format!(
            "the server host's costs (CPU, context switches{}) from `relbench sample` on {} (pid {}), over \
             the window on its clock; the clients' CPU is the shares' summed; the machine figures are the \
             server host's alone",
            if w.disk.is_some() { ", the datadir's IO" } else { "" },
            header.host.hostname,
            header.pid
        ),
    );
}

#[cfg(test)]
mod tests;
