//! `relbench run` and `run --confirm`: the runner started on a compiled
//! plan, then the report written and the exit code chosen.

use std::io::IsTerminal;
use std::path::Path;

use anyhow::{bail, Context};

use super::args::plan_comparisons;
use super::{install_ctrlc, Exit};
use crate::compare::Grouping;
use crate::render::{self, Format};
use crate::runner::{self, Progress, RunEnd, RunOptions};

/// Repeats a confirmation brings a disturbed or untested step to: three
/// rounds give the paired test two degrees of freedom of the cell's own.
const CONFIRM_REPEATS: u32 = 3;

/// The most repeats a confirmation brings a step to: an undecided cell
/// that needs more is about the size of the band, and the report says
/// so.
const CONFIRM_MOST: u32 = 12;

pub(super) fn confirm(dir: &Path, show: &Show, new_host: bool) -> anyhow::Result<()> {
    install_ctrlc();
    // One run a host it was measured on (`--new-host`).
    let runs = crate::results::load_runs(dir)?;
    let run = &runs[0];
    if run.info.status != crate::results::RunStatus::Complete {
        bail!(
            "the run in {} is not complete; finish it first with `relbench run --resume --out {}`",
            dir.display(),
            dir.display()
        );
    }
    let report = crate::compare::build(&runs, None)?;
    let unsettled = report.unsettled();
    if unsettled.is_empty() {
        crate::outln!(
            "nothing to confirm in {}: no step was disturbed, and every change past 5% is significant",
            dir.display()
        );
        return Ok(());
    }
    let needs: Vec<runner::Need> = unsettled
        .iter()
        .map(|u| {
            let want = u.wants.unwrap_or(CONFIRM_REPEATS).min(CONFIRM_MOST);
            runner::Need {
                target: report.targets[u.target].plan_name.clone(),
                at: u.at.clone(),
                rounds: want.saturating_sub(u.repeats as u32).max(1),
            }
        })
        .collect();
    crate::errln!(
        "relbench: confirming {} step result{} of {}: {}",
        needs.len(),
        if needs.len() == 1 { "" } else { "s" },
        dir.display(),
        unsettled
            .iter()
            .map(|u| u.why.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let opts = runner::ConfirmOptions {
        schedule: super::compile(&run.info.plan)?,
        secrets: crate::db::Secrets::take(&run.info.plan.targets)?,
        needs,
        first_repeat: runs
            .iter()
            .flat_map(|r| &r.steps)
            .map(|s| s.id.repeat)
            .max()
            .unwrap_or(0)
            + 1,
        adaptive: false,
    };
    let mut watch = Watchers::of(show)?;
    let mut session = runner::Session::reopen(dir, new_host, watch.sinks(None))?;
    let (end, added) = session.confirm(&opts)?;
    session.end(&end)?;
    crate::errln!(
        "relbench: added {added} step result(s) to {}",
        dir.display()
    );
    report_and_exit(dir, end, Close::Confirmed)
}

/// The closing word of a confirmation that did not settle everything:
/// how many step results are still unsettled and why, and, for the
/// disturbed ones, what the machine was doing — more repeats on a host
/// that stays busy settle nothing.
fn still_unsettled(report: &crate::compare::Report, dir: &Path) -> Option<String> {
    let left = report.unsettled();
    if left.is_empty() {
        return None;
    }
    let disturbed: Vec<&str> = report
        .rows
        .iter()
        .flat_map(|r| r.cells.iter())
        .filter_map(|c| c.judgement.disturbed.as_deref())
        .collect();
    let mut word = format!(
        "relbench: after confirmation {} step result{} still unsettled: {}",
        left.len(),
        if left.len() == 1 { " is" } else { "s are" },
        left.iter()
            .map(|u| u.why.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(why) = disturbed.first() {
        word.push_str(&format!(
            ".\n  {} of them had no quiet window; the machine was busy ({why}).\n  \
             More repeats do not settle a machine that stays busy: stop the other programs, \
             then run `relbench run --confirm {}` again",
            disturbed.len(),
            dir.display()
        ));
    } else {
        word.push_str(&format!(
            ".\n  The windows were quiet: these changes are within the noise of up to {CONFIRM_MOST} \
             repeats a side; lengthen the steps or raise the plan's `repeats`"
        ));
    }
    Some(word)
}

/// `relbench merge`: the shards checked and joined, then the report of
/// the merge written as a run's is.
pub(super) fn merge(
    dirs: &[std::path::PathBuf],
    out: &Path,
    server_samples: Option<&Path>,
) -> anyhow::Result<()> {
    if dirs.iter().any(|d| crate::results::shares::is_share(d)) {
        let (shares, steps) = crate::results::shares::merge(dirs, out, server_samples)?;
        crate::errln!(
            "relbench: added up {} client shares (barrier {:?}) into {}: {steps} step(s)",
            shares.shares.len(),
            shares.barrier,
            out.display()
        );
    } else {
        if server_samples.is_some() {
            return Err(super::Exit::BadInput(
                "--server-samples adds the server host's costs to client shares (`run --client-share`); these \
                 directories are shards or whole runs: leave it out"
                    .into(),
            )
            .into());
        }
        let m = crate::results::merge::merge(dirs, out)?;
        crate::errln!(
            "relbench: merged {} shard(s) of {} into {}",
            m.shards.len(),
            m.plan_source,
            out.display()
        );
        // Each shard is compared with the base measured on its own host;
        // hosts that differ are said, so no one reads them as one.
        for d in &m.host_differences {
            crate::errln!("relbench: the shards' hosts differ: {d}");
        }
    }
    report_and_exit(
        out,
        RunEnd::Complete {
            failed_steps: 0,
            not_run: 0,
            not_started: Vec::new(),
        },
        Close::Run,
    )
}

/// What a run shows while it goes and when it ends.
pub(super) struct Show {
    pub quiet: bool,
    /// Interval lines this often (`--report-interval`).
    pub every: Option<std::time::Duration>,
    /// A one-off run's figures as JSON on stdout (`--json`).
    pub json: bool,
    /// The run's events as JSON lines (`--events FILE`).
    pub events: Option<std::path::PathBuf>,
}

/// Who watches a run as it goes: the terminal, and the JSON lines of
/// `--events`.
struct Watchers {
    progress: Progress,
    lines: Option<runner::JsonLines>,
}

impl Watchers {
    fn of(show: &Show) -> anyhow::Result<Watchers> {
        Ok(Watchers {
            progress: Progress::new(show.quiet).with_interval(show.every),
            // A file that cannot be opened is the command line's fault,
            // said before anything runs.
            lines: show
                .events
                .as_deref()
                .map(runner::JsonLines::open)
                .transpose()
                .map_err(|e| Exit::BadInput(format!("{e:#}")))?,
        })
    }

    /// The watchers as sinks, then `also` (the caller's own).
    fn sinks<'a>(
        &'a mut self,
        also: Option<&'a mut dyn runner::Sink>,
    ) -> Vec<&'a mut dyn runner::Sink> {
        let mut v: Vec<&mut dyn runner::Sink> = vec![&mut self.progress];
        if let Some(l) = self.lines.as_mut() {
            v.push(l);
        }
        if let Some(s) = also {
            v.push(s);
        }
        v
    }
}

/// Runs the plan, with `also` hearing the run's events after the step
/// files and the record, and writes its report.
pub(super) fn run(
    opts: RunOptions,
    show: Show,
    also: Option<&mut dyn runner::Sink>,
    question: crate::study::adaptive::Question<'_>,
) -> anyhow::Result<()> {
    install_ctrlc();
    let mut watch = Watchers::of(&show)?;
    // Reborrowed at the watchers' shorter lifetime (`&mut` holds its
    // trait object's lifetime fixed otherwise).
    let also = also.map(|s| s as &mut dyn runner::Sink);
    let mut session = runner::Session::start(&opts, watch.sinks(also))?;
    let end = session.run(&opts)?;
    // An adaptive run goes on where its verdicts are open, in the same
    // session (what hears the run hears its rounds); the run's own end
    // stands unless a round is interrupted.
    let end = match (end, opts.record.plan.adaptive) {
        (end @ RunEnd::Complete { .. }, Some(a)) => {
            let specs = plan_comparisons(&opts.out);
            match crate::study::adaptive::go_on(&mut session, &opts, a, &specs, question)? {
                RunEnd::Interrupted => RunEnd::Interrupted,
                RunEnd::Complete { .. } => end,
            }
        }
        (end, _) => end,
    };
    session.end(&end)?;
    let one_off = opts.record.plan_source == super::args::ONE_OFF_SOURCE;
    if one_off {
        // One target: no relative table to print. What sysbench prints
        // instead, on stderr; with --json the same figures on stdout.
        if let Ok(run) = crate::results::load_run(&opts.out) {
            let (text, json) = one_off_summary(&run.steps);
            crate::err!("{text}");
            if show.json {
                crate::outln!("{}", serde_json::to_string_pretty(&json)?);
            }
        }
    }
    report_and_exit(
        &opts.out,
        end,
        if one_off { Close::OneOff } else { Close::Run },
    )
}

/// What a run's end prints beside the report it writes.
#[derive(Clone, Copy, PartialEq)]
enum Close {
    /// The relative table.
    Run,
    /// No relative table: one target (its summary was printed).
    OneOff,
    /// The relative table, then what the confirmation left unsettled.
    Confirmed,
}

/// A one-off run's workload steps as sysbench closes a run: events and
/// their rate, errors, latency min, mean, p50, p95, p99 and max (ms).
fn one_off_summary(steps: &[crate::results::StepResult]) -> (String, serde_json::Value) {
    use std::fmt::Write as _;
    let mut text = String::new();
    let mut docs = Vec::new();
    let workloads = steps
        .iter()
        .filter(|s| matches!(s.id.at.step.kind, crate::plan::StepKind::Workload(_)));
    for s in workloads {
        let errors: u64 = s.errors.values().sum();
        let ms = |us: f64| us / 1e3;
        let lat = s.latency.get("event");
        let _ = writeln!(
            text,
            "\n{} ({} client{}): {:.2} s measured",
            s.id.at.step.label(),
            s.id.at.clients,
            if s.id.at.clients == 1 { "" } else { "s" },
            s.secs
        );
        match &s.failed {
            Some(why) => {
                let _ = writeln!(text, "    FAILED: {why}");
            }
            None => {
                let _ = writeln!(
                    text,
                    "    events: {} ({:.2} {}), errors: {} ({:.2}/s)",
                    s.events,
                    s.throughput,
                    s.unit.name(),
                    errors,
                    errors as f64 / s.secs.max(1e-9)
                );
            }
        }
        if let Some(l) = lat {
            let _ = writeln!(
                text,
                "    latency (ms): min {}, avg {:.3}, p50 {:.3}, p95 {:.3}, p99 {:.3}, max {:.3}",
                l.min_us
                    .map_or_else(|| "not measured".into(), |v| format!("{:.3}", ms(v))),
                ms(l.mean_us),
                ms(l.p50_us),
                ms(l.p95_us),
                ms(l.p99_us),
                ms(l.max_us)
            );
        }
        docs.push(serde_json::json!({
            "step": s.id.at.step.label(),
            "clients": s.id.at.clients,
            "secs": s.secs,
            "events": s.events,
            "failed_events": s.failed_events,
            "throughput": s.throughput,
            "unit": s.unit.name(),
            "errors": s.errors,
            "failed": s.failed,
            "latency_ms": lat.map(|l| serde_json::json!({
                "min": l.min_us.map(ms),
                "avg": ms(l.mean_us),
                "p50": ms(l.p50_us),
                "p95": ms(l.p95_us),
                "p99": ms(l.p99_us),
                "max": ms(l.max_us),
            })),
        }));
    }
    (text, serde_json::json!({ "steps": docs }))
}

/// Writes the report of the run in `out`, prints what `close` asks, and
/// turns how the run ended into the exit code.
fn report_and_exit(out: &Path, end: RunEnd, close: Close) -> anyhow::Result<()> {
    let out = &out.to_path_buf();
    let (cs, files) = render::write(
        std::slice::from_ref(out),
        None,
        &plan_comparisons(out),
        Grouping::Kind,
        out,
        &Format::ALL,
        false,
    )
    .context("writing the report")?;
    let stdout = std::io::stdout();
    for (i, c) in cs.iter().enumerate().filter(|_| close != Close::OneOff) {
        // The plan's comparisons, each under its title.
        if cs.len() > 1 {
            crate::out!("{}== {} ==\n", if i > 0 { "\n" } else { "" }, c.title);
        }
        crate::out!(
            "{}",
            render::terminal_relative_table(&c.report, stdout.is_terminal())
        );
    }
    if close == Close::Confirmed {
        // From the report just written: the run read and compared once.
        if let Some(word) = cs.first().and_then(|c| still_unsettled(&c.report, out)) {
            crate::errln!("{word}");
        }
    }
    crate::errln!("\nresults: {}", out.display());
    for f in &files {
        crate::errln!("report:  {}", f.display());
    }
    // A client share does not resume alone (its barrier rows would let it
    // pass steps the others have not reached): what to do instead
    // (regression: a share interrupted at its barrier advised a --resume
    // that is then refused).
    let share = crate::results::read_run_info(out)
        .ok()
        .and_then(|i| i.client_share)
        .is_some();
    let again = if share {
        "this is one client share: run every share of the study again, together, with a new --barrier".to_string()
    } else {
        format!(
            "finish this run with `relbench run --resume --out {}`",
            out.display()
        )
    };
    match end {
        RunEnd::Interrupted => {
            crate::errln!("interrupted: {again}");
            Err(Exit::Interrupted.into())
        }
        RunEnd::Complete {
            failed_steps: 0,
            not_run: 0,
            not_started,
        } if not_started.is_empty() => Ok(()),
        RunEnd::Complete {
            failed_steps,
            not_run,
            not_started,
        } => {
            // Counted as they are: a target that never started ran no step.
            let mut said = Vec::new();
            if failed_steps > 0 {
                said.push(format!("{failed_steps} step(s) failed"));
            }
            if not_run > 0 {
                said.push(format!("{not_run} step(s) did not run"));
            }
            if !not_started.is_empty() {
                said.push(format!(
                    "{} did not start, so none of its steps ran",
                    not_started.join(", ")
                ));
            }
            crate::errln!(
                "{}; the report's \"Errors and failed steps\" says why: fix it, then {again}",
                said.join("; ")
            );
            Err(Exit::StepsFailed(failed_steps + not_run + not_started.len()).into())
        }
    }
}
