//! `relbench check`: a plan validated and described (its scale, steps,
//! phases, hooks and timed length; `--schedule` prints every execution
//! with its identity), and how long its steps should be for the noise an
//! earlier run showed.

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::read_plan;
use crate::plan::{self, Plan};
use crate::workload;

/// The plan of a plan file, or of a results directory (the plan its run
/// recorded, as it ran; a merge's, its shards').
fn plan_of(path: &Path) -> anyhow::Result<Plan> {
    if path.is_dir() {
        Ok(crate::results::merge::first_run_info(path)?.plan)
    } else {
        Ok(read_plan(path)?.0)
    }
}

/// `relbench check PLAN|DIR --schedule [--shards N]`: every execution with
/// its identity and seed — of each shard, with the seed the shards draw,
/// when cut into N; of its own part, for a shard's results directory. The
/// seed's source is said on stderr: a plan without one draws a fresh seed
/// at every read, so a listing of it is an example, not the run's.
pub(super) fn schedule(path: &Path, shards: Option<u32>) -> anyhow::Result<()> {
    if let Some(n) = shards {
        shard_count(n)?;
    }
    let (plan, own_part, why) = if path.is_dir() {
        let info = crate::results::merge::first_run_info(path)?;
        if shards.is_some() {
            return Err(super::Exit::BadInput(format!(
                "{} holds a run, cut as it ran; leave out --shards (its schedule is what it ran)",
                path.display()
            ))
            .into());
        }
        let merged = crate::results::merge::read_merge(path)?.is_some();
        let why = format!(
            "seed {}: the one the run in {} used (recorded){}",
            info.plan.seed,
            path.display(),
            if merged {
                "; every shard's executions"
            } else {
                ""
            }
        );
        let own = info.shard.filter(|_| !merged).map(|r| r.shard);
        (info.plan, own, why)
    } else {
        let (mut plan, text, _) = read_plan(path)?;
        let why = if plan.seed_fixed {
            format!("seed {}: the plan's own", plan.seed)
        } else if shards.is_some() {
            plan.seed = crate::plan::shard::seed_of(&text);
            format!(
                "seed {}: drawn from the plan's text, as each of its shards draws it (the plan names no `seed`)",
                plan.seed
            )
        } else {
            format!(
                "seed {}: drawn for this listing only — the plan names no `seed`, so each run draws its own and \
                 records it (`seed = N` fixes it; a sharded run draws one from the plan's text, which \
                 `--shards N --schedule` shows)",
                plan.seed
            )
        };
        (plan, None, why)
    };
    let cat = plan.catalogue().map_err(anyhow::Error::msg)?;
    let sched = plan.schedule(&cat);
    crate::errln!("{why}");
    match (shards, own_part) {
        (Some(count), _) => {
            for index in 1..=count {
                let part = sched.shard(crate::plan::Shard { index, count });
                crate::outln!(
                    "# shard {index}/{count}: {} step runs, about {} plus loads",
                    part.executions.len(),
                    crate::measure::units::human_secs(part.estimated_secs)
                );
                crate::out!("{}", part.describe());
            }
        }
        (None, Some(s)) => {
            crate::errln!("shard {s}: its own executions");
            crate::out!("{}", sched.shard(s).describe());
        }
        (None, None) => crate::out!("{}", sched.describe()),
    }
    Ok(())
}

/// `relbench check PLAN|DIR`.
pub(super) fn check(path: &Path, last: Option<&Path>) -> anyhow::Result<()> {
    let plan = plan_of(path)?;
    let cat = plan.catalogue().map_err(anyhow::Error::msg)?;
    let sched = plan.schedule(&cat);
    crate::outln!("{}: valid", path.display());
    crate::outln!(
        "targets: {}",
        plan.targets
            .iter()
            .map(|t| format!("{} ({})", t.name, t.engine))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let groups: Vec<workload::Group> = sched.executions.iter().filter_map(|e| e.group).collect();
    let repeats = match plan.adaptive {
        Some(a) => format!("auto ({} to {})", a.min, a.max),
        None => plan.repeats.to_string(),
    };
    if groups.contains(&workload::Group::LinkBench) {
        crate::outln!("scale: {}; repeats {}", plan.linkbench.describe(), repeats);
    } else if groups.contains(&workload::Group::Tpcc) {
        crate::outln!(
            "scale: {}; clients {:?}; repeats {}",
            plan.tpcc.describe(),
            plan.clients,
            repeats
        );
        for d in plan.tpcc.departures() {
            crate::outln!("  departs from the TPC-C specification: {d}");
        }
    } else if groups.contains(&workload::Group::Insert) {
        crate::outln!(
            "scale: {}; clients {:?}; repeats {}",
            plan.insert_benchmark.describe(plan.rows),
            plan.clients,
            repeats
        );
    } else {
        crate::outln!(
            "scale: {} table(s) × {} rows; clients {:?}; repeats {}",
            plan.tables,
            plan.rows,
            plan.clients,
            repeats
        );
    }
    crate::outln!(
        "seed: {}",
        if plan.seed_fixed {
            plan.seed.to_string()
        } else {
            "a fresh one per run, recorded with it (`seed = N` fixes it)".into()
        }
    );
    let steps: Vec<String> = plan.steps.iter().map(|s| s.label()).collect();
    crate::outln!(
        "steps ({}, suite {}): {}",
        steps.len(),
        plan.suite,
        steps.join(" → ")
    );
    for why in plan.skipped() {
        crate::outln!("note: {why}");
    }
    for (i, p) in plan.phases.iter().enumerate() {
        let end = plan.phases.get(i + 1).map_or(plan.steps.len(), |n| n.first);
        crate::outln!(
            "phase {} ({}): {}",
            p.name,
            match &p.server {
                Some(c) => format!("restarts the server with {}", c.describe()),
                None => "on the server as it runs".into(),
            },
            steps[p.first..end].join(" → ")
        );
    }
    for h in &plan.hooks {
        crate::outln!(
            "hook {} {}: {} (timeout {})",
            match h.when {
                plan::When::Before => "before",
                plan::When::After => "after",
            },
            match &h.scope {
                plan::HookScope::Steps => "every step".to_string(),
                plan::HookScope::Step(s) => format!("step {s}"),
                plan::HookScope::Phase(p) => format!("phase {p}"),
            },
            match &h.action {
                plan::HookAction::Sql(q) => format!("sql `{q}`"),
                plan::HookAction::Shell(c) => format!("shell `{c}`"),
            },
            plan::human_duration(h.timeout_secs)
        );
    }
    crate::outln!(
        "{} step runs; {} of warm-ups, timed windows and settles, plus loads, steps that run until their work is done, and server starts",
        sched.executions.len(),
        crate::measure::units::human_secs(sched.estimated_secs)
    );
    // The run the advice reads: --last, or the newest under results/.
    let last = last.map(Path::to_path_buf).or_else(newest_run);
    let last = last.as_deref();
    if let Some(a) = plan.adaptive {
        adaptive_estimate(a, sched.estimated_secs, last);
    }
    let Some(last) = last else { return Ok(()) };
    noise_advice(&plan, last)?;
    window_advice(last)
}

/// An adaptive plan's time: the minimum repeats, the most its rounds can
/// add, and what the last adaptive run's rounds added to its minimum.
fn adaptive_estimate(a: plan::Adaptive, min_secs: f64, last: Option<&Path>) {
    let human = crate::measure::units::human_secs;
    let per_repeat = min_secs / f64::from(a.min);
    let max = per_repeat * f64::from(a.max);
    let expected = last
        .and_then(|d| crate::results::adaptive::read(d).ok().flatten())
        .filter(|r| r.first_secs > 0.0)
        .map(|r| {
            format!(
                "; the last adaptive run's rounds added {:.0}% to its minimum, so about {} here",
                (r.spent_secs() / r.first_secs - 1.0) * 100.0,
                human(min_secs * r.spent_secs() / r.first_secs)
            )
        })
        .unwrap_or_default();
    crate::outln!(
        "adaptive: {} to {} repeats; at least {} (the minimum), at most {} (every cell to {} repeats, \
         replays of the steps before them not counted){expected}{}",
        a.min,
        a.max,
        human(min_secs),
        human(max),
        a.max,
        a.budget_secs
            .map_or_else(String::new, |b| format!("; the budget stops it at {}", human(b)))
    );
}

/// Where the last run's A/A copies say windows of the same work lie
/// further apart than a window's own seconds can explain: there, more
/// shorter windows judge a change sooner than fewer long ones.
fn window_advice(dir: &Path) -> anyhow::Result<()> {
    let runs = crate::results::load_runs(dir)?;
    let report = crate::compare::build(&runs, None)?;
    for row in &report.rows {
        let Some(w) = report.window_split(row) else {
            continue;
        };
        if w.between > w.within {
            crate::outln!(
                "windows: {} c{} — identical windows lay {:.1}% apart in {}, where one window's own seconds \
                 account for {:.1}%: its spread is between windows, so more repeats of shorter windows \
                 (e.g. twice the repeats at half the length) judge it sooner than longer windows",
                row.title(),
                row.id.clients,
                (w.between + w.within).sqrt() * 100.0,
                dir.display(),
                w.within.sqrt() * 100.0
            );
        }
    }
    Ok(())
}

/// The newest results directory under `results/`, by its name (a UTC time).
fn newest_run() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("results")
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(crate::results::RUN_FILE).is_file())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// How long steps must be for the noise an earlier run showed, and a
/// warning when the plan's timed steps are shorter.
fn noise_advice(plan: &Plan, dir: &Path) -> anyhow::Result<()> {
    let run = crate::results::load_run(dir)
        .with_context(|| format!("--last {}: reading its results", dir.display()))?;
    let mut needs: Vec<(f64, String)> = run
        .steps
        .iter()
        .filter(|s| s.failed.is_none() && matches!(s.id.at.step.kind, plan::StepKind::Workload(_)))
        .filter_map(|s| {
            let n = crate::measure::within::seconds_for(0.05, &s.second_rates())?;
            Some((
                n,
                format!(
                    "{} c{} on {}",
                    s.id.at.step.label(),
                    s.id.at.clients,
                    s.id.target
                ),
            ))
        })
        .collect();
    if needs.is_empty() {
        crate::outln!(
            "noise: {} has no step of 5 whole seconds or more to judge this machine's noise by",
            dir.display()
        );
        return Ok(());
    }
    needs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median = needs[needs.len() / 2].0;
    let worst = needs.last().expect("not empty");
    crate::outln!(
        "noise: in {}, a 5% change needed windows of about {median:.0} s to be significant within one run \
         (the median over {} steps; the noisiest, {}, needed {:.0} s)",
        dir.display(),
        needs.len(),
        worst.1,
        worst.0
    );
    for (class, name) in [
        (workload::DurationClass::Read, "read"),
        (workload::DurationClass::Write, "write"),
    ] {
        if let plan::Stop::Time(secs) = plan.stop_for(class) {
            let secs = secs.as_secs_f64();
            if secs < median && plan.repeats < 4 {
                crate::outln!(
                    "warning: the plan's {name} steps run {}, shorter than the {median:.0} s the noise \
                     last time called for: with one repeat, changes of 5% will read as not significant; lengthen \
                     [duration] {name}, or set repeats = 4 or more",
                    plan::human_duration(secs)
                );
            }
        }
    }
    Ok(())
}

/// `relbench check PLAN|DIR --shards N`: which targets each shard runs and
/// its timed part, the bases on every shard.
pub(super) fn shards(path: &Path, count: u32) -> anyhow::Result<()> {
    shard_count(count)?;
    let plan = plan_of(path)?;
    let cat = plan.catalogue().map_err(anyhow::Error::msg)?;
    let sched = plan.schedule(&cat);
    let every: Vec<&str> = (0..sched.targets.len())
        .filter(|&t| sched.everywhere(t))
        .map(|t| sched.targets[t].name.as_str())
        .collect();
    crate::outln!(
        "{}: {} target(s) over {count} shard(s); on every shard: {} (each ratio is against the base measured on its own shard)",
        path.display(),
        sched.targets.len(),
        every.join(", ")
    );
    let loads = sched.assignment(count);
    for l in &loads {
        let own: Vec<&str> = l
            .targets
            .iter()
            .filter(|&&t| !sched.everywhere(t))
            .map(|&t| sched.targets[t].name.as_str())
            .collect();
        crate::outln!(
            "shard {}: {}; about {} plus loads",
            l.shard,
            if own.is_empty() {
                "the base alone".to_string()
            } else {
                own.join(", ")
            },
            crate::measure::units::human_secs(l.secs)
        );
    }
    let longest = loads.iter().map(|l| l.secs).fold(0.0, f64::max);
    crate::outln!(
        "the study takes about {} on {count} host(s) (the longest shard), against {} on one",
        crate::measure::units::human_secs(longest),
        crate::measure::units::human_secs(sched.estimated_secs)
    );
    Ok(())
}

/// Refuses a `--shards` count relbench does not cut a plan into.
fn shard_count(n: u32) -> anyhow::Result<()> {
    if crate::plan::share::is_part(1, n) {
        return Ok(());
    }
    Err(super::Exit::BadInput(format!(
        "--shards {n}: give the number of shards, 1 to {}",
        crate::plan::share::MAX_PARTS
    ))
    .into())
}
