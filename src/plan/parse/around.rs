//! What goes around the sequence: phase restarts, hooks, and the
//! report's comparisons.

use super::*;

/// A restart, or dropping the database, needs a server relbench started.
pub(super) fn restarts(cx: &mut Ctx<'_>, raw: &RawPlan, steps: &[Step], targets: &[TargetSpec]) {
    let Some(m) = steps
        .iter()
        .filter_map(|s| s.maintenance())
        .find(|m| m.needs_managed_server())
    else {
        return;
    };
    let what = match m {
        Maint::Restart => "restarts the server",
        _ => "drops the database",
    };
    let span = raw
        .phase
        .as_ref()
        .map(|p| p.span())
        .or(raw.steps.as_ref().map(|s| s.span()))
        .unwrap_or(0..0);
    for t in targets {
        let why = match (&t.access, t.engine.is_server(), m) {
            (Access::Managed(_), _, _) => continue,
            (_, false, Maint::Restart) => "an embedded engine has no server to restart",
            (_, true, Maint::Restart) => {
                "it is reached by URL, and relbench restarts only a server it started"
            }
            (_, false, _) => "an embedded engine's database is its file; use drop-table",
            (_, true, _) => "it is reached by URL, and relbench drops only a database it created",
        };
        cx.err(
            span.clone(),
            format!("the sequence {what}, but target \"{}\" cannot do that: {why}", t.name),
            Some("give the target a basedir so that relbench runs its server, or run the phases without restarts (restart = false, no config, server_args or malloc in [[phase]], no \"restart\" step)".into()),
        );
    }
}

/// A phase's server settings pass the rules a target's own do, for every
/// managed target, when the plan is checked: not at the phase's restart,
/// after the load has run.
pub(super) fn phase_settings(cx: &mut Ctx<'_>, raw: &RawPlan, targets: &[TargetSpec]) {
    for p in raw.phase.iter().flat_map(|p| p.get_ref()) {
        for t in targets {
            let Access::Managed(m) = &t.access else {
                continue;
            };
            let Ok(flavor) = crate::db::server::flavor_for(t.engine) else {
                continue;
            };
            if let Some(a) = &p.server_args {
                let args: Vec<String> = m.args.iter().chain(a.get_ref()).cloned().collect();
                if let Err(e) = flavor.check_args(&args) {
                    cx.err(
                        a.span(),
                        format!(
                            "phase \"{}\" on target \"{}\": {e}",
                            p.name.get_ref(),
                            t.name
                        ),
                        None,
                    );
                }
            }
            if let Some(c) = &p.config {
                if let Ok(text) = std::fs::read_to_string(cx.dir.join(c.get_ref())) {
                    if let Err(e) = flavor.check_config(&text) {
                        cx.err(
                            c.span(),
                            format!(
                                "phase \"{}\" on target \"{}\": {e}",
                                p.name.get_ref(),
                                t.name
                            ),
                            None,
                        );
                    }
                }
            }
        }
    }
}

/// The `[[hook]]`s: when, around what, what to run, for how long at most.
pub(super) fn hooks(
    cx: &mut Ctx<'_>,
    raw: &RawPlan,
    steps: &[Step],
    phases: &[Phase],
) -> Vec<Hook> {
    let mut out = Vec::new();
    for h in raw.hook.iter().flatten() {
        let span = h.span();
        let h = h.get_ref();
        let when = match h.when.get_ref().as_str() {
            "before" => When::Before,
            "after" => When::After,
            other => {
                cx.err(
                    h.when.span(),
                    format!("unknown hook time \"{other}\""),
                    Some("use when = \"before\" or \"after\"".into()),
                );
                continue;
            }
        };
        let scope = match (&h.step, &h.phase) {
            (Some(_), Some(p)) => {
                cx.err(
                    p.span(),
                    "a hook runs around a step or a phase, not both",
                    None,
                );
                continue;
            }
            (Some(st), None) => {
                let name = st.get_ref();
                if !steps.iter().any(|s| s.name() == name) {
                    let names: Vec<&str> = steps.iter().map(|s| s.name()).collect();
                    cx.err(
                        st.span(),
                        format!("the hook's step \"{name}\" is not in the sequence"),
                        Some(match did_you_mean(name, names.iter().copied()) {
                            Some(m) => format!("did you mean \"{m}\"?"),
                            None => format!("the sequence's steps: {}", names.join(", ")),
                        }),
                    );
                    continue;
                }
                HookScope::Step(name.clone())
            }
            (None, Some(p)) => {
                let name = p.get_ref();
                if !phases.iter().any(|q| &q.name == name) {
                    let names: Vec<&str> = phases.iter().map(|q| q.name.as_str()).collect();
                    cx.err(
                        p.span(),
                        format!("the hook's phase \"{name}\" is not in the plan"),
                        Some(if names.is_empty() {
                            "the plan has no [[phase]]".into()
                        } else {
                            format!("its phases: {}", names.join(", "))
                        }),
                    );
                    continue;
                }
                HookScope::Phase(name.clone())
            }
            (None, None) => HookScope::Steps,
        };
        let action = match (&h.sql, &h.shell) {
            (Some(q), None) if !q.get_ref().trim().is_empty() => {
                HookAction::Sql(q.get_ref().clone())
            }
            (None, Some(c)) if !c.get_ref().trim().is_empty() => {
                // A program the command names by path runs as whoever runs
                // relbench: it must be one no other user can change.
                let first = c.get_ref().split_whitespace().next().unwrap_or("");
                let program = cx.dir.join(first);
                if first.contains('/') && program.exists() {
                    if let Err(e) = crate::util::trusted(&program, "the hook's program") {
                        cx.err(c.span(), format!("{e:#}"), None);
                    }
                }
                HookAction::Shell(c.get_ref().clone())
            }
            _ => {
                cx.err(
                    span,
                    "a hook runs one `sql` statement or one `shell` command",
                    Some("give exactly one of sql = \"…\" and shell = \"…\"".into()),
                );
                continue;
            }
        };
        let timeout_secs = cx.duration(&h.timeout, "hook timeout", 60.0, 0.1);
        out.push(Hook {
            when,
            scope,
            action,
            timeout_secs,
        });
    }
    out
}

/// `reference = "NAME"`: a target of the plan, not an A/A copy (a copy is
/// its original's build).
pub(super) fn reference(cx: &mut Ctx<'_>, raw: &RawPlan, targets: &[TargetSpec]) -> Option<String> {
    let r = raw.reference.as_ref()?;
    let name = r.get_ref();
    match targets.iter().find(|t| &t.name == name) {
        Some(t) if t.copy_of.is_none() => Some(name.clone()),
        Some(_) => {
            cx.err(
                r.span(),
                format!("the reference \"{name}\" is an A/A copy"),
                Some("name the target it copies".into()),
            );
            None
        }
        None => {
            let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
            let help = did_you_mean(name, names.iter().copied()).map_or_else(
                || format!("the plan's targets are {}", names.join(", ")),
                |m| format!("did you mean \"{m}\"?"),
            );
            cx.err(
                r.span(),
                format!("the reference \"{name}\" is not a target of this plan"),
                Some(help),
            );
            None
        }
    }
}

/// The plan's `[[comparison]]` tables, each naming targets of the plan.
pub(super) fn comparisons(
    cx: &mut Ctx<'_>,
    raw: &RawPlan,
    targets: &[TargetSpec],
) -> Vec<Comparison> {
    // Targets the plan declares but that failed their own checks (a
    // basedir not fetched yet): their errors are said once, at the target,
    // not again at every comparison that names them.
    let declared = |name: &str| {
        raw.target.iter().flat_map(|l| l.get_ref()).any(|t| {
            let own = t.get_ref().name.get_ref();
            name == own
                || name
                    .strip_prefix(own.as_str())
                    .and_then(|rest| rest.strip_prefix("-aa"))
                    .is_some_and(|k| k.parse::<u32>().is_ok())
        })
    };
    let mut out = Vec::new();
    for c in raw.comparison.iter().flatten() {
        let mut ok = true;
        for name in std::iter::once(&c.base).chain(c.targets.iter().flatten()) {
            if !targets.iter().any(|t| &t.name == name.get_ref()) && declared(name.get_ref()) {
                ok = false;
                continue;
            }
            if !targets.iter().any(|t| &t.name == name.get_ref()) {
                let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
                let help = did_you_mean(name.get_ref(), names.iter().copied()).map_or_else(
                    || format!("the plan's targets are {}", names.join(", ")),
                    |m| format!("did you mean \"{m}\"?"),
                );
                cx.err(
                    name.span(),
                    format!(
                        "the comparison names \"{}\", which is not a target of this plan",
                        name.get_ref()
                    ),
                    Some(help),
                );
                ok = false;
            }
        }
        if ok {
            out.push(Comparison {
                title: c.title.clone(),
                base: c.base.get_ref().clone(),
                targets: c
                    .targets
                    .iter()
                    .flatten()
                    .map(|t| t.get_ref().clone())
                    .collect(),
            });
        }
    }
    out
}
