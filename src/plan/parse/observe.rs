//! What a plan watches besides the throughput: `[profile]` (profiles of
//! the server per step) and `[internals]` (the engine's own accounting of
//! where it waited, and what relbench turns on to read it).

use serde::Deserialize;
use toml::Spanned;

use super::{Ctx, RawPlan};
use crate::db::EngineKind;
use crate::util::did_you_mean;

/// `[profile]`: profiles of the server per step.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProfile {
    mode: Option<Spanned<String>>,
    rate: Option<Spanned<i64>>,
    steps: Option<Spanned<Vec<String>>>,
    off_cpu: Option<bool>,
    call_graph: Option<Spanned<String>>,
}

/// `[profile]`: which steps are profiled, how, and at what rate.
pub(super) fn profile(
    cx: &mut Ctx<'_>,
    raw: &RawPlan,
    steps: &[super::super::Step],
) -> super::super::Profiling {
    use crate::metrics::profile::{CallGraph, Mode, Settings};
    let Some(r) = raw.profile.as_ref() else {
        return super::super::Profiling::default();
    };
    let d = Settings::default();
    let mode = match r.mode.as_ref().map(|m| m.get_ref().as_str()) {
        None | Some("separate") => Some(Mode::Separate),
        Some("inline") => Some(Mode::Inline),
        Some("off") => None,
        Some(other) => {
            let span = r.mode.as_ref().map(|m| m.span()).unwrap_or_default();
            cx.err(
                span,
                format!("mode must be \"separate\", \"inline\" or \"off\", not \"{other}\""),
                Some("separate: a profiled repeat after the measured ones, which no profiler touches; inline: the measured windows themselves".into()),
            );
            None
        }
    };
    let rate_hz = match &r.rate {
        None => d.rate_hz,
        Some(v) if (1..=10_000).contains(v.get_ref()) => *v.get_ref() as u32,
        Some(v) => {
            cx.err(
                v.span(),
                format!(
                    "rate must be from 1 to 10000 samples a second, not {}",
                    v.get_ref()
                ),
                Some("499 (the default) costs about 1% of a busy core".into()),
            );
            d.rate_hz
        }
    };
    let call_graph = match r.call_graph.as_ref().map(|m| m.get_ref().as_str()) {
        None | Some("fp") => CallGraph::Fp,
        Some("dwarf") => CallGraph::Dwarf,
        Some(other) => {
            let span = r.call_graph.as_ref().map(|m| m.span()).unwrap_or_default();
            cx.err(
                span,
                format!("call_graph must be \"fp\" or \"dwarf\", not \"{other}\""),
                Some(
                    "fp follows frame pointers (cheap); dwarf unwinds any build, at a larger cost"
                        .into(),
                ),
            );
            CallGraph::Fp
        }
    };
    let names: Vec<String> = r
        .steps
        .as_ref()
        .map(|s| s.get_ref().clone())
        .unwrap_or_default();
    for n in &names {
        if !steps.iter().any(|s| s.label() == *n) {
            let labels: Vec<String> = steps.iter().map(|s| s.label()).collect();
            let span = r.steps.as_ref().map(|s| s.span()).unwrap_or_default();
            cx.err(
                span,
                format!("[profile] steps names \"{n}\", which is no step of this plan"),
                Some(format!(
                    "{}the plan's steps: {}",
                    did_you_mean(n, labels.iter().map(String::as_str))
                        .map(|d| format!("did you mean \"{d}\"? "))
                        .unwrap_or_default(),
                    labels.join(", ")
                )),
            );
        }
    }
    // Following the scheduler's switches in a measured window bends it:
    // MariaDB's point queries ran at 0.69× (bench/profile_overhead.py).
    let off_cpu = match (mode, r.off_cpu) {
        (Some(Mode::Inline), Some(true)) => {
            let span = r.mode.as_ref().map(|m| m.span()).unwrap_or_default();
            cx.err(
                span,
                "off-CPU profiles are taken in a profiled repeat only, not in a measured window",
                Some("following every context switch cost a MariaDB server 31% of its point queries here; \
                      use mode = \"separate\" for off-CPU profiles, or off_cpu = false".into()),
            );
            false
        }
        (Some(Mode::Inline), None) => false,
        (_, o) => o.unwrap_or(d.off_cpu),
    };
    super::super::Profiling {
        mode,
        settings: Settings {
            rate_hz,
            off_cpu,
            call_graph,
        },
        steps: names,
    }
}

/// `[internals]`: the engine's own accounting.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawInternals {
    performance_schema: Option<bool>,
    instruments: Option<Spanned<Vec<Spanned<String>>>>,
    pg_stat_statements: Option<bool>,
    wait_sampling: Option<Spanned<toml::Value>>,
}

/// `[internals]`: what is turned on, what is sampled how often.
pub(super) fn internals(cx: &mut Ctx<'_>, raw: &RawPlan) -> super::super::Internals {
    let d = super::super::Internals::default();
    let Some(r) = raw.internals.as_ref() else {
        return d;
    };
    let instruments: Vec<String> = r
        .instruments
        .as_ref()
        .map(|v| v.get_ref().iter().map(|i| i.get_ref().clone()).collect())
        .unwrap_or_default();
    if let Some(v) = &r.instruments {
        if r.performance_schema != Some(true) {
            cx.err(
                v.span(),
                "instruments are turned on in performance_schema, which this plan does not turn on",
                Some("add performance_schema = true to [internals]".into()),
            );
        }
        // Passed to the server as one option each: no quoting, no second
        // option hidden in a name.
        for i in v.get_ref() {
            let ok = !i.get_ref().is_empty()
                && i.get_ref()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/_%-.".contains(c));
            if !ok {
                cx.err(
                    i.span(),
                    format!(
                        "\"{}\" is no performance_schema instrument name",
                        i.get_ref()
                    ),
                    Some(
                        "names like \"wait/synch/mutex/innodb/%\": letters, digits, / _ % - ."
                            .into(),
                    ),
                );
            }
        }
    }
    let wait_sampling_ms = match &r.wait_sampling {
        Some(v) if v.get_ref().as_str() == Some("off") => None,
        Some(_) => {
            let default = d.wait_sampling_ms.unwrap_or_default() as f64 / 1000.0;
            let secs = cx.duration(&r.wait_sampling, "wait_sampling", default, 0.001);
            Some(((secs * 1000.0).round() as u64).max(1))
        }
        None => d.wait_sampling_ms,
    };
    super::super::Internals {
        performance_schema: r.performance_schema,
        instruments,
        pg_stat_statements: r.pg_stat_statements.unwrap_or(false),
        wait_sampling_ms,
    }
}

/// Each MySQL, MariaDB and PostgreSQL server relbench starts gets the options
/// `[internals]` asks for, before its own.
pub(super) fn with_internals(
    mut targets: Vec<crate::db::spec::TargetSpec>,
    internals: &super::super::Internals,
) -> Vec<crate::db::spec::TargetSpec> {
    let (mysql, postgres) = (internals.mysql_args(), internals.postgres_args());
    for t in &mut targets {
        let extra = match t.engine {
            EngineKind::Mysql | EngineKind::Mariadb => &mysql,
            EngineKind::Postgres => &postgres,
            EngineKind::Sqlite => continue,
        };
        if let crate::db::spec::Access::Managed(m) = &mut t.access {
            m.args.splice(0..0, extra.iter().cloned());
        }
    }
    targets
}
