//! Building the model: every step's row of cells, the comparisons a plan
//! or the command line asks for (each with its own base and subset), the
//! A/A noise floor, and the base's failures.

use super::targets::name_targets;
use super::targets::resolve_base;
use super::targets::sampler_cost;
use super::*;
use crate::measure::paired::Sample;
use std::collections::{HashMap, HashSet};

/// For each step result, the index of its row (settle steps have none).
pub(super) fn step_rows(rows: &[Row], steps: &[(usize, StepResult)]) -> Vec<Option<usize>> {
    let row_of: HashMap<&StepId, usize> =
        rows.iter().enumerate().map(|(i, r)| (&r.id, i)).collect();
    steps
        .iter()
        .map(|(_, s)| row_of.get(&s.id.at).copied())
        .collect()
}

/// A row about to be built: the step identity its cells share, where the
/// sequence first has it, and how its figures read.
#[derive(Clone)]
struct RowKey {
    seq: usize,
    id: StepId,
    group: Group,
    unit: Unit,
}

/// `scan (warm)`, and `scan (warm) #2` the second time in the sequence.
pub(super) fn row_title(step: &Step, occurrence: u32) -> String {
    match occurrence {
        1 => step.title(),
        n => format!("{} #{n}", step.title()),
    }
}

/// Builds the comparison from loaded runs. `base` names a target, or a
/// plan's target name that each host has (then every host's targets are
/// compared with that host's own base); it defaults to the first target.
pub fn build(runs: &[LoadedRun], base: Option<&str>) -> anyhow::Result<Report> {
    build_subset(runs, base, None)
}

/// One comparison of a report with several: a title, a base and the
/// targets it shows (all, when `targets` is empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComparisonSpec {
    pub title: String,
    pub base: Option<String>,
    pub targets: Vec<String>,
}

impl ComparisonSpec {
    /// A comparison against `base` of `targets` (the base among them,
    /// first when not named), titled "against BASE" when untitled.
    pub fn new(title: Option<String>, base: String, mut targets: Vec<String>) -> Self {
        if !targets.is_empty() && !targets.contains(&base) {
            targets.insert(0, base.clone());
        }
        ComparisonSpec {
            title: title.unwrap_or_else(|| format!("against {base}")),
            base: Some(base),
            targets,
        }
    }
}

/// A comparison and its model.
pub struct Comparison {
    pub title: String,
    pub report: Report,
}

/// Builds each comparison, in the order given; with none, one comparison
/// of every target against `base` (the first target when `None`).
pub fn build_all(
    runs: &[LoadedRun],
    base: Option<&str>,
    specs: &[ComparisonSpec],
) -> anyhow::Result<Vec<Comparison>> {
    if specs.is_empty() {
        let report = build(runs, base)?;
        return Ok(vec![Comparison {
            title: format!("against {}", report.base),
            report,
        }]);
    }
    specs
        .iter()
        .map(|s| {
            let subset = (!s.targets.is_empty()).then_some(s.targets.as_slice());
            let report = build_subset(runs, s.base.as_deref(), subset)
                .with_context(|| format!("comparison \"{}\"", s.title))?;
            Ok(Comparison {
                title: s.title.clone(),
                report,
            })
        })
        .collect()
}

/// [`build`] over the named targets only, in the order named (the base
/// among them; the first named is the base when none is given).
pub fn build_subset(
    runs: &[LoadedRun],
    base: Option<&str>,
    subset: Option<&[String]>,
) -> anyhow::Result<Report> {
    if runs.is_empty() {
        bail!("no results directories given");
    }
    let mut targets = name_targets(runs);
    if let Some(names) = subset {
        targets = chosen(targets, names)?;
    }
    let base = base
        .map(str::to_string)
        .or_else(|| subset.and_then(|s| s.first().cloned()));
    let mut hosts: Vec<String> = Vec::new();
    for t in &targets {
        if !hosts.contains(&t.host) {
            hosts.push(t.host.clone());
        }
    }
    let (base, base_of) = choose_base(&targets, &hosts, base.as_deref())?;
    settings_that_differ(&mut targets, &base_of);
    let steps = tagged_steps(runs, &targets);
    let (mut rows, response_times) = build_rows(&targets, &hosts, &base_of, &steps);
    super::profile::attach(&mut rows, runs, &targets, &base_of);
    // Repeats: every cell tested at once, each one's variance moderated
    // by the others'; an adaptive run's cells at the level of the look
    // their data reached (with the bounds of the run that could take the
    // most looks).
    let bounds = runs
        .iter()
        .filter_map(|r| r.info.plan.adaptive)
        .max_by_key(|a| a.looks());
    let needs_level = bounds.map_or(stats::ALPHA, super::adaptive::last_level);
    super::verdicts::test_cells(
        &mut rows,
        &base_of,
        |row, ti| match bounds {
            Some(a) => super::adaptive::level_of(row, ti, base_of[ti], a),
            None => stats::ALPHA,
        },
        needs_level,
    );
    // One window a side: tested against how far the run's A/A pairs lay
    // apart, which takes every row.
    super::aa::test_single_windows(&mut rows, &targets, &base_of);
    let cols = column_order(&targets, &hosts);
    let (host_offsets, host_notes) =
        super::hosts::compare_hosts(&mut rows, &targets, &base_of, cols.first().copied());
    for c in rows.iter_mut().flat_map(|r| r.cells.iter_mut()) {
        c.judgement.judged = c.verdict();
    }
    let step_rows = step_rows(&rows, &steps);
    let names: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
    let summary: Vec<TargetSummary> = (0..targets.len())
        .filter(|&ti| base_of[ti] != ti)
        // An A/A copy says something only against its own original.
        .filter(|&ti| targets[ti].copy_of.map_or(true, |o| o == base_of[ti]))
        .map(|ti| {
            summary::summarise(
                &targets[ti].name,
                targets[ti].copy_of.map(|o| targets[o].name.as_str()),
                &targets[base_of[ti]].name,
                ti,
                base_of[ti],
                &rows,
                &steps,
                &targets[ti].settings_differ,
            )
        })
        .collect();
    Ok(Report {
        base,
        runs: runs.iter().map(run_meta).collect(),
        summary_lines: summary::lines(&summary),
        db_size: series::db_size(targets.len(), &steps),
        timeline: campaign::timeline(targets.len(), &base_of, &steps),
        sla: series::sla_rows(&steps),
        response_times,
        linkbench: linkbench::view(&names, &base_of, &rows, &steps),
        tpcc: tpcc::view(&names, &base_of, &rows, &steps),
        problems: series::problems(&steps),
        interference: series::interference(&steps),
        retried: retried(&steps),
        adaptive: adaptive_view(runs),
        base_failed: base_failed(&targets, &base_of, &rows, &steps),
        targets,
        base_of,
        hosts,
        host_offsets,
        host_notes,
        rows,
        summary,
        steps,
        step_rows,
    })
}

/// The first adaptive run's bounds and record.
fn adaptive_view(runs: &[LoadedRun]) -> Option<super::AdaptiveView> {
    runs.iter().find_map(|r| {
        Some(super::AdaptiveView {
            bounds: r.info.plan.adaptive?,
            record: r.adaptive.clone(),
        })
    })
}

/// The targets `names` names, in that order: a plan's name on several
/// hosts (a merged run's base, one per shard) names each host's.
fn chosen(targets: Vec<TargetMeta>, names: &[String]) -> anyhow::Result<Vec<TargetMeta>> {
    let all: Vec<String> = targets.iter().map(|t| t.name.clone()).collect();
    let mut chosen = Vec::new();
    for n in names {
        // A plan's name on several hosts (a merged run's base, one per
        // shard) names each host's.
        let by_plan: Vec<&TargetMeta> = targets.iter().filter(|t| t.plan_name == *n).collect();
        let hosts_of = |v: &[&TargetMeta]| {
            v.iter()
                .enumerate()
                .all(|(i, t)| !v[..i].iter().any(|o| o.host == t.host))
        };
        if !targets.iter().any(|t| t.name == *n) && by_plan.len() > 1 && hosts_of(&by_plan) {
            for t in by_plan {
                if !chosen.iter().any(|c: &TargetMeta| c.name == t.name) {
                    chosen.push(t.clone());
                }
            }
            continue;
        }
        let found = targets
            .iter()
            .find(|t| t.name == *n)
            .or_else(|| (by_plan.len() == 1).then(|| by_plan[0]))
            .with_context(|| {
                format!(
                    "no target \"{n}\" in these results{}; the targets are: {}",
                    crate::util::did_you_mean(n, all.iter().map(String::as_str))
                        .map(|m| format!(" (did you mean \"{m}\"?)"))
                        .unwrap_or_default(),
                    all.join(", ")
                )
            })?;
        if !chosen.iter().any(|c: &TargetMeta| c.name == found.name) {
            chosen.push(found.clone());
        }
    }
    // A/A links point into the full list: point them into this one.
    let originals: Vec<Option<String>> = chosen
        .iter()
        .map(|c| c.copy_of.map(|o| targets[o].name.clone()))
        .collect();
    let chosen_names: Vec<String> = chosen.iter().map(|c| c.name.clone()).collect();
    for (c, o) in chosen.iter_mut().zip(originals) {
        c.copy_of = o.and_then(|n| chosen_names.iter().position(|x| *x == n));
    }
    Ok(chosen)
}

/// The base's name and each target's base: the one named, or the first
/// target (on several hosts each host's target of that name, when every
/// host has one).
fn choose_base(
    targets: &[TargetMeta],
    hosts: &[String],
    base: Option<&str>,
) -> anyhow::Result<(String, Vec<usize>)> {
    let first = targets
        .first()
        .map(|t| t.plan_name.clone())
        .context("the results hold no targets")?;
    Ok(match base {
        Some(b) => (b.to_string(), resolve_base(targets, hosts, b)?),
        None => match resolve_base(targets, hosts, &first) {
            Ok(of) => (first, of),
            Err(_) => {
                let name = targets[0].name.clone();
                let of = resolve_base(targets, hosts, &name)?;
                (name, of)
            }
        },
    })
}

/// Each target's settings that differ from its base's.
fn settings_that_differ(targets: &mut [TargetMeta], base_of: &[usize]) {
    for ti in 0..targets.len() {
        let b = base_of[ti];
        if b == ti {
            continue;
        }
        // Every setting where both servers reported them all; the
        // recorded few otherwise (older results, embedded engines).
        let whole = !targets[ti].settings.is_empty() && !targets[b].settings.is_empty();
        let (mine, theirs) = if whole {
            (&targets[ti].settings, &targets[b].settings)
        } else {
            (&targets[ti].config, &targets[b].config)
        };
        let mut keys: Vec<&String> = mine.keys().chain(theirs.keys()).collect();
        keys.sort();
        keys.dedup();
        let differ = keys
            .into_iter()
            .filter(|k| mine.get(*k) != theirs.get(*k))
            .map(|k| {
                let v =
                    |m: &BTreeMap<String, String>| m.get(k).cloned().unwrap_or_else(|| "—".into());
                (k.clone(), v(mine), v(theirs))
            })
            .collect();
        targets[ti].settings_differ = differ;
    }
}

/// Every step result, tagged with its target's index in the report.
fn tagged_steps(runs: &[LoadedRun], targets: &[TargetMeta]) -> Vec<(usize, StepResult)> {
    // Every step result, tagged with its target's index in the report.
    let mut steps: Vec<(usize, StepResult)> = Vec::new();
    for (ri, run) in runs.iter().enumerate() {
        for s in &run.steps {
            if let Some(ti) = targets
                .iter()
                .position(|t| t.run == ri && t.plan_name == s.id.target)
            {
                steps.push((ti, s.clone()));
            }
        }
    }
    steps
}

/// The report's rows, each with its cells compared with their bases and
/// judged against their A/A floors, and the Insert Benchmark's
/// response-time ranges.
fn build_rows(
    targets: &[TargetMeta],
    hosts: &[String],
    base_of: &[usize],
    steps: &[(usize, StepResult)],
) -> (Vec<Row>, Vec<ResponseRow>) {
    // Rows: every step identity that has a group, in sequence order.
    let mut keys: Vec<RowKey> = Vec::new();
    let mut seen: HashSet<&StepId> = HashSet::new();
    for (_, s) in steps {
        let Some(group) = s.group else { continue };
        if s.id.at.step.kind == StepKind::Settle || !seen.insert(&s.id.at) {
            continue;
        }
        keys.push(RowKey {
            seq: s.id.seq,
            id: s.id.at.clone(),
            group,
            unit: s.unit,
        });
    }
    keys.sort_by_key(|k| (k.group, k.seq, k.id.clients));
    let cols = column_order(targets, hosts);
    let mut rows = Vec::new();
    let mut response_times = Vec::new();
    // Each row's results per target, in repeat order, found in one pass
    // (a scan of every result for every row and target was a quarter of
    // a 20,000-file report's time).
    let row_of: HashMap<&StepId, usize> =
        keys.iter().enumerate().map(|(i, k)| (&k.id, i)).collect();
    let mut by_row: Vec<Vec<Vec<&StepResult>>> = vec![vec![Vec::new(); targets.len()]; keys.len()];
    for (ti, s) in steps {
        if let Some(&r) = row_of.get(&s.id.at) {
            by_row[r][*ti].push(s);
        }
    }
    for cells in by_row.iter_mut().flatten() {
        cells.sort_by_key(|s| s.id.repeat);
    }
    for (key, results) in keys.into_iter().zip(by_row) {
        let (row, response) = build_row(key, results, targets, base_of, &cols);
        rows.push(row);
        response_times.extend(response);
    }
    (rows, response_times)
}

/// One row: its cells (each target's results, in repeat order) compared
/// with their bases and judged against the A/A floors of their own
/// comparison, its series, and the Insert Benchmark's response-time
/// ranges.
fn build_row(
    key: RowKey,
    results: Vec<Vec<&StepResult>>,
    targets: &[TargetMeta],
    base_of: &[usize],
    cols: &[usize],
) -> (Row, Vec<ResponseRow>) {
    let RowKey {
        seq,
        id,
        group,
        unit,
    } = key;
    // The results of this row for one target, in repeat order.
    let results_of = |ti: usize| results[ti].clone();
    let ok_of = |ti: usize| results_of(ti).into_iter().filter(|s| s.failed.is_none());
    let mut cells: Vec<Cell> = (0..targets.len())
        .map(|ti| cell(results_of(ti).into_iter()))
        .collect();
    let plain = cells.clone();
    for (ti, c) in cells.iter_mut().enumerate() {
        compare(c, &plain[base_of[ti]], ti == base_of[ti]);
    }
    // Each cell judged against the noise of its own comparison: the
    // A/A floors of its own copy group and its base's, never another
    // group's.
    let group_of = |t: usize| targets[t].copy_of.unwrap_or(t);
    let floors: Vec<Option<f64>> = (0..targets.len())
        .map(|g| noise_floor(targets, &cells, g))
        .collect();
    for (ti, c) in cells.iter_mut().enumerate() {
        // Both sides' noise is in the ratio: the larger of the two
        // groups' floors, when the target and its base differ.
        let (own, base) = (floors[group_of(ti)], floors[group_of(base_of[ti])]);
        c.test.noise_floor = match (own, base) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
    // The row's column shows the floor of the comparison's first base.
    let first_base = cols.first().map(|&ti| group_of(base_of[ti]));
    let noise_floor = first_base.and_then(|b| floors[b]);
    let noise_floor_disturbed = first_base.is_some_and(|b| {
        noise_floor.is_none()
            && (0..targets.len()).any(|j| targets[j].copy_of == Some(b))
            && (0..targets.len())
                .filter(|&j| j == b || targets[j].copy_of == Some(b))
                .any(|j| cells[j].judgement.disturbed.is_some())
    });
    let series = series::row_series(cols, ok_of);
    let mut response = Vec::new();
    if group == Group::Insert {
        let title = row_title(&id.step, id.occurrence);
        for &ti in cols {
            response.extend(series::response_rows(&title, ti, ok_of(ti)));
        }
    }
    let row = Row {
        seq,
        id,
        group,
        unit,
        cells,
        series,
        noise_floor,
        noise_floor_disturbed,
        host_floor: None,
    };
    (row, response)
}

/// What a report says of one run: where, when, by which relbench, what
/// its sampler cost and what its server's counters disagreed on.
fn run_meta(r: &LoadedRun) -> RunMeta {
    let mut m = RunMeta {
        dir: r.dir.display().to_string(),
        status: r.info.status,
        started: r.info.started.clone(),
        finished: r.info.finished.clone(),
        relbench_version: r.info.relbench_version.clone(),
        plan_source: r.info.plan_source.clone(),
        plan_text: r.info.plan_text.clone(),
        sampler_us_per_reading: r
            .steps
            .iter()
            .filter_map(|s| s.metrics.sampler.as_ref())
            .filter(|c| c.samples > 0)
            .map(|c| c.cpu_secs * 1e6 / f64::from(c.samples))
            .reduce(f64::max),
        sampler_cost: String::new(),
        skipped_files: r.skipped.clone(),
        server_count_notes: r
            .steps
            .iter()
            // A client share's own count is a part of the server's.
            .filter(|s| s.client_share.is_none())
            .filter_map(|s| {
                let why = s.metrics.server_count.as_ref()?.disagreement()?;
                Some(format!(
                    "{} r{} {} c{}: {why}",
                    s.id.target,
                    s.id.repeat,
                    s.id.at.step.label(),
                    s.id.at.clients
                ))
            })
            .collect(),
        client_share: r.info.client_share.as_ref().map(|c| c.share.to_string()),
        host: r.info.host.clone(),
    };
    m.sampler_cost = sampler_cost(m.sampler_us_per_reading);
    m
}

/// What measuring disturbed windows again took over the results read.
fn retried(steps: &[(usize, StepResult)]) -> Retried {
    let again: Vec<&StepResult> = steps
        .iter()
        .map(|(_, s)| s)
        .filter(|s| !s.retried.is_empty())
        .collect();
    Retried {
        windows: again.iter().map(|s| s.retried.len()).sum(),
        steps: again.len(),
        settled: again.iter().filter(|s| s.judgement().is_quiet()).count(),
        secs: again
            .iter()
            .flat_map(|s| &s.retried)
            .map(|a| a.cost_secs)
            .fold(0.0, |a, b| a + b),
    }
}

/// The bases that have no figure on any row, with why and who could be
/// the base instead.
pub(super) fn base_failed(
    targets: &[TargetMeta],
    base_of: &[usize],
    rows: &[Row],
    steps: &[(usize, StepResult)],
) -> Vec<BaseFailed> {
    let measured = |ti: usize| {
        rows.iter()
            .any(|r| r.cells[ti].figures.throughput.is_some())
    };
    let mut bases: Vec<usize> = base_of.to_vec();
    bases.sort_unstable();
    bases.dedup();
    bases
        .into_iter()
        .filter(|&b| !measured(b))
        .map(|b| BaseFailed {
            base: targets[b].name.clone(),
            why: steps
                .iter()
                .find(|(t, s)| *t == b && s.failed.is_some())
                .and_then(|(_, s)| s.failed.clone()),
            instead: (0..targets.len())
                .find(|&i| i != b && targets[i].host == targets[b].host && measured(i))
                .map(|i| targets[i].name.clone()),
        })
        .collect()
}

/// The A/A noise floor of the copy group of target `original`: the
/// spread of the throughputs of it and its copies, over the windows no
/// other program disturbed (a disturbed copy measures the other program,
/// and would hide real changes under its spread), and never narrower
/// than a copy's own ratio to the original as its test will estimate it
/// (paired by round or not): the geometric mean of the rounds' ratios
/// can lie past the ratio of the means, and a copy is identical work by
/// construction, never a change. `None` when fewer than two are left.
/// Regression: an A/A copy of the quick plan's base was coloured.
pub(super) fn noise_floor(targets: &[TargetMeta], cells: &[Cell], original: usize) -> Option<f64> {
    let quiet: Vec<usize> = (0..targets.len())
        .filter(|&j| j == original || targets[j].copy_of == Some(original))
        .filter(|&j| cells[j].judgement.disturbed.is_none())
        .collect();
    let same: Vec<f64> = quiet
        .iter()
        .filter_map(|&j| cells[j].figures.throughput)
        .collect();
    if same.len() < 2 {
        return None;
    }
    let (lo, hi) = same
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
    let base = &cells[original];
    let estimated = quiet
        .iter()
        .filter(|&&j| j != original)
        .flat_map(|&j| {
            let c = &cells[j];
            [
                super::verdicts::sample(c, base),
                Sample::unpaired(&c.figures.throughputs, &base.figures.throughputs),
            ]
        })
        .flatten()
        .map(|s| s.estimate().abs().exp_m1())
        .fold(0.0, f64::max);
    (lo > 0.0).then(|| (hi / lo - 1.0).max(estimated))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, copy_of: Option<usize>) -> TargetMeta {
        TargetMeta {
            name: name.into(),
            plan_name: name.into(),
            host: "h".into(),
            engine: "sqlite".into(),
            embedded: true,
            version: String::new(),
            config: Default::default(),
            settings: Default::default(),
            filesystem: None,
            transport: None,
            run: 0,
            plan_index: 0,
            copy_of,
            settings_differ: Vec::new(),
        }
    }

    fn rounds(v: &[f64]) -> Cell {
        Cell {
            figures: Figures {
                throughput: Some(v.iter().sum::<f64>() / v.len() as f64),
                throughputs: v.to_vec(),
                rounds: (1..=v.len() as u32).collect(),
                ..Default::default()
            },
            ..Cell::default()
        }
    }

    /// Regression: an A/A copy of the quick plan's base was coloured: its
    /// mean throughput equal to the base's (a floor of 0), its rounds'
    /// ratios 0.90 and 1.03 (a geometric mean of 0.964).
    #[test]
    fn an_aa_floor_covers_each_copys_ratio_as_its_test_estimates_it() {
        let targets = [meta("a", None), meta("a-aa2", Some(0))];
        let cells = [rounds(&[100.0, 300.0]), rounds(&[90.0, 310.0])];
        let floor = noise_floor(&targets, &cells, 0).unwrap();
        let geomean = (0.9f64 * 310.0 / 300.0).sqrt();
        assert!(floor >= 1.0 / geomean - 1.0 - 1e-12, "{floor}");
        let mut copy = cells[1].clone();
        copy.test.relative = Some(geomean);
        copy.test.noise_floor = Some(floor);
        let (lo, _) = copy.band();
        assert!(lo <= geomean, "{lo} {geomean}");
    }
}
