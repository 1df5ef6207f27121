//! The sequence: the suite's steps or the plan's own, checked against the
//! catalogue (known names, parameters, load first, one suite's tables),
//! each family's client counts, and long steps cut into intervals.

use super::targets::existing;
use super::*;

/// A number from a plan value that may be written as an integer or not.
/// A family's steps run at the client count the family says (LinkBench's
/// `loaders` and `requesters`, the check on one connection) unless a step
/// gives its own `clients`; a rate per client the family sets (LinkBench's
/// `requestrate`) becomes the step's rate.
pub(super) fn family_clients(
    cx: &mut Ctx<'_>,
    raw: &RawPlan,
    mut steps: Vec<Step>,
    cat: &Catalogue,
) -> Vec<Step> {
    for step in &mut steps {
        let Some(w) = find(cat, step) else { continue };
        let Some(clients) = w.clients() else { continue };
        let counts = step
            .client_counts
            .get_or_insert_with(|| vec![clients])
            .clone();
        let Some(per_client) = w.rate_per_client().filter(|_| step.rate.is_none()) else {
            continue;
        };
        if let [n] = counts[..] {
            step.rate = Some(per_client * u64::from(n));
        } else {
            let span = raw.linkbench.as_ref().map_or(0..0, |v| v.span());
            cx.err(
                span,
                format!(
                    "its rate is per client, and {} runs at several client counts",
                    step.label()
                ),
                Some(
                    "give the step one client count, or its own `rate` (all clients together)"
                        .into(),
                ),
            );
        }
    }
    steps
}

/// The catalogue entry a step runs, if it is a workload.
pub(super) fn find<'c>(cat: &'c Catalogue, step: &Step) -> Option<&'c workload::catalogue::Entry> {
    match &step.kind {
        StepKind::Workload(w) => cat.find(w),
        _ => None,
    }
}

/// The sequence: the suite's, the plan's `steps`, or its phases' steps one
/// after another (a restarting phase's first step is its `restart`). The
/// phases come back with the index of their first step.
pub(super) fn steps(
    cx: &mut Ctx<'_>,
    raw: &RawPlan,
    cat: &mut Catalogue,
) -> (String, Vec<Step>, Vec<Phase>) {
    let standard = |cat: &mut Catalogue| -> Vec<Step> {
        sysbench::STANDARD_SEQUENCE
            .iter()
            .map(|s| parse_step(s, cat).expect("the standard sequence is valid"))
            .collect()
    };
    if let Some(phases) = &raw.phase {
        if let Some(s) = raw
            .suite
            .as_ref()
            .map(|s| s.span())
            .or(raw.steps.as_ref().map(|s| s.span()))
        {
            cx.err(
                s,
                "give the steps in each [[phase]], not in `suite` or `steps` as well",
                Some("move the steps into the first phase".into()),
            );
        }
        let mut items: Vec<(Range<usize>, String, Extra)> = Vec::new();
        let mut out_phases = Vec::new();
        for p in phases.get_ref() {
            let name = p.name.get_ref();
            if !valid_tag(name) {
                cx.err(
                    p.name.span(),
                    format!("phase name \"{name}\" may have 1 to 32 letters, digits, '-' and '_'"),
                    None,
                );
            } else if out_phases.iter().any(|q: &Phase| &q.name == name) {
                cx.err(
                    p.name.span(),
                    format!("phase \"{name}\" appears twice"),
                    Some("give each phase its own name".into()),
                );
            }
            let change = phase_server(cx, p);
            let first = items.len();
            if change.is_some() {
                items.push((p.name.span(), format!("restart:{name}"), Extra::default()));
            }
            if p.steps.get_ref().is_empty() && change.is_none() {
                cx.err(
                    p.steps.span(),
                    format!("phase \"{name}\" has no steps"),
                    Some("list its steps, or restart = true to only restart the server".into()),
                );
            }
            items.extend(p.steps.get_ref().iter().filter_map(|v| entry(cx, v)));
            out_phases.push(Phase {
                name: name.clone(),
                first,
                server: change,
            });
        }
        if phases.get_ref().is_empty() {
            cx.err(phases.span(), "the plan's phase list is empty", None);
        }
        let steps = custom_steps(cx, cat, &items, phases.span());
        return ("custom".into(), steps, out_phases);
    }
    let (suite, steps) = match (&raw.suite, &raw.steps) {
        (Some(_), Some(st)) => {
            cx.err(
                st.span(),
                "give either `suite` or `steps`, not both",
                Some("remove `suite` to run your own steps, or `steps` to run the suite".into()),
            );
            ("sysbench".into(), standard(cat))
        }
        (None, None) => ("sysbench".into(), standard(cat)),
        (Some(s), None) => {
            match s.get_ref().as_str() {
                "sysbench" => {}
                "insert" => {
                    let steps = workload::insert::SEQUENCE
                        .iter()
                        .map(|s| parse_step(s, cat).expect("the sequence is valid"))
                        .collect();
                    return ("insert".into(), steps, Vec::new());
                }
                "linkbench" => {
                    let steps = workload::linkbench::SEQUENCE
                        .iter()
                        .map(|s| parse_step(s, cat).expect("the sequence is valid"))
                        .collect();
                    return ("linkbench".into(), steps, Vec::new());
                }
                "tpcc" => {
                    let steps = workload::tpcc::SEQUENCE
                        .iter()
                        .map(|s| parse_step(s, cat).expect("the sequence is valid"))
                        .collect();
                    return ("tpcc".into(), steps, Vec::new());
                }
                other => cx.err(
                    s.span(),
                    format!("unknown suite \"{other}\""),
                    Some("the built-in suites are: sysbench, insert, linkbench, tpcc".into()),
                ),
            }
            ("sysbench".into(), standard(cat))
        }
        (None, Some(list)) => {
            let items: Vec<(Range<usize>, String, Extra)> =
                list.get_ref().iter().filter_map(|v| entry(cx, v)).collect();
            if items.is_empty() {
                cx.err(
                    list.span(),
                    "steps is empty",
                    Some("start with \"load\", then the workloads to run".into()),
                );
            }
            ("custom".into(), custom_steps(cx, cat, &items, list.span()))
        }
    };
    (suite, steps, Vec::new())
}

/// The server settings a phase restarts with, when it restarts.
pub(super) fn phase_server(cx: &mut Ctx<'_>, p: &RawPhase) -> Option<ServerChange> {
    let config = p
        .config
        .as_ref()
        .and_then(|c| existing(cx, c, "config file", false));
    let malloc = p
        .malloc
        .as_ref()
        .and_then(|m| existing(cx, m, "malloc library", false));
    let args = p
        .server_args
        .as_ref()
        .map(|a| a.get_ref().clone())
        .unwrap_or_default();
    let changes = p.config.is_some() || p.malloc.is_some() || p.server_args.is_some();
    match &p.restart {
        Some(r) if !*r.get_ref() && changes => {
            cx.err(
                r.span(),
                "restart = false, but the phase changes the server's settings, which needs a restart",
                Some("remove restart = false, or the phase's config, server_args and malloc".into()),
            );
            None
        }
        Some(r) if !*r.get_ref() => None,
        None if !changes => None,
        _ => Some(ServerChange {
            config,
            args,
            malloc,
        }),
    }
}

pub(super) fn valid_tag(t: &str) -> bool {
    !t.is_empty()
        && t.len() <= 32
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// What a step's table gives besides its name: how it runs.
#[derive(Default)]
pub(super) struct Extra {
    clients: Option<Vec<u32>>,
    rate: Option<u64>,
    once: bool,
    reconnect: bool,
    /// `prepared = …` as the step gives it; `None`: the benchmark's own way.
    prepared: Option<bool>,
}

impl Extra {
    /// Sets them on the step, where they apply to it.
    fn apply(&self, cx: &mut Ctx<'_>, cat: &Catalogue, span: &Range<usize>, step: &mut Step) {
        if self.clients.is_none()
            && self.rate.is_none()
            && !self.once
            && !self.reconnect
            && self.prepared.is_none()
        {
            return;
        }
        let Some(w) = find(cat, step) else {
            cx.err(
                span.clone(),
                format!(
                    "\"{}\" is not a workload: clients, rate, once, reconnect and prepared apply to workloads",
                    step.name()
                ),
                None,
            );
            return;
        };
        let meta = w.meta();
        // Its clients and rates are the benchmark's; how it sends its
        // statements (prepared, reconnecting) is the step's, as anywhere
        // (regression: `prepared = false` was refused, blaming clients and
        // rates).
        if w.sequence_per_client_count()
            && (self.clients.is_some() || self.rate.is_some() || self.once)
        {
            cx.err(
                span.clone(),
                "the Insert Benchmark's steps run at the plan's client count and their own rates",
                Some(
                    "set clients for the whole plan, and the benchmark's rates under [insert]; \
                     prepared and reconnect may be given on the step"
                        .into(),
                ),
            );
            return;
        }
        if self.once && w.rows_per_event(&workload::Scale::probe()).is_none() {
            cx.err(
                span.clone(),
                format!(
                    "once applies to the full scan (each client scans one table once), not to {}",
                    meta.name
                ),
                Some("for a fixed amount of work use [duration] events".into()),
            );
        }
        if self.once && self.rate.is_some() {
            cx.err(
                span.clone(),
                "a step runs once per client or at a rate, not both",
                None,
            );
        }
        step.client_counts = self.clients.clone();
        step.rate = self.rate;
        step.once = self.once;
        step.reconnect = self.reconnect;
        if let Some(p) = self.prepared {
            step.plain = !p;
        }
    }
}

/// One entry of `steps`: a name (`"scan:warm"`), or a table with the
/// name under `step` and how it runs (`clients`, `rate`, `once`) and the
/// workload's parameters as keys (`order = 4`).
pub(super) fn entry(
    cx: &mut Ctx<'_>,
    v: &Spanned<toml::Value>,
) -> Option<(Range<usize>, String, Extra)> {
    let span = v.span();
    let table = match v.get_ref() {
        toml::Value::String(s) => return Some((span, s.clone(), Extra::default())),
        toml::Value::Table(t) => t,
        other => {
            cx.err(
                span,
                format!("a step is a name or a table, not {}", other.type_str()),
                Some("for example \"point-query\" or { step = \"scan\", once = true }".into()),
            );
            return None;
        }
    };
    let Some(toml::Value::String(name)) = table.get("step") else {
        cx.err(
            span,
            "a step's table names its step: step = \"NAME\"",
            Some("for example { step = \"read-only-order\", order = 4, clients = [8] }".into()),
        );
        return None;
    };
    let mut extra = Extra::default();
    let mut knobs: Vec<String> = Vec::new();
    for (k, val) in table {
        match (k.as_str(), val) {
            ("step", _) => {}
            ("clients", toml::Value::Array(a)) => {
                let counts: Option<Vec<u32>> = a
                    .iter()
                    .map(|c| {
                        c.as_integer()
                            .filter(|n| (1..=MAX_CLIENTS).contains(n))
                            .map(|n| n as u32)
                    })
                    .collect();
                match counts {
                    Some(c) if !c.is_empty() => extra.clients = Some(c),
                    _ => cx.err_key(
                        span.clone(),
                        "clients",
                        format!("clients takes a list of counts from 1 to {MAX_CLIENTS}"),
                        Some("for example clients = [8, 48]".into()),
                    ),
                }
            }
            ("rate", toml::Value::Integer(n)) if *n > 0 => extra.rate = Some(*n as u64),
            ("rate", _) => cx.err_key(
                span.clone(),
                "rate",
                "rate takes a whole number of events per second, across all clients",
                Some("for example rate = 1000".into()),
            ),
            ("once", toml::Value::Boolean(b)) => extra.once = *b,
            ("reconnect", toml::Value::Boolean(b)) => extra.reconnect = *b,
            ("prepared", toml::Value::Boolean(b)) => extra.prepared = Some(*b),
            (key, val) if sysbench::knobs::KEYS.iter().any(|(n, _)| *n == key) => {
                let text = match val {
                    toml::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                knobs.push(format!("{key}={text}"));
            }
            (key, _) => {
                let keys = ["step", "clients", "rate", "once", "reconnect", "prepared"]
                    .into_iter()
                    .chain(sysbench::knobs::KEYS.iter().map(|(n, _)| *n));
                cx.err(
                    span.clone(),
                    format!("unknown key \"{key}\" in a step's table"),
                    Some(match did_you_mean(key, keys) {
                        Some(m) => format!("did you mean \"{m}\"?"),
                        None => "a step's table takes step, clients, rate, once and the workload's parameters (`relbench list`)".into(),
                    }),
                );
            }
        }
    }
    let mut name = name.clone();
    if !knobs.is_empty() {
        if name.contains('[') {
            cx.err(
                span,
                "give the parameters in the name's brackets or as keys, not both",
                None,
            );
            return None;
        }
        // The tag, if any, stays after the parameters.
        let (base, tag) = match name.split_once(':') {
            Some((b, t)) => (b.to_string(), format!(":{t}")),
            None => (name.clone(), String::new()),
        };
        name = format!("{base}[{}]{tag}", knobs.join(","));
    }
    Some((span, name, extra))
}

/// A plan's own sequence, checked: known steps, load first, no step twice,
/// one suite's tables, nothing that needs rows after the rows are gone.
pub(super) fn custom_steps(
    cx: &mut Ctx<'_>,
    cat: &mut Catalogue,
    items: &[(Range<usize>, String, Extra)],
    whole: Range<usize>,
) -> Vec<Step> {
    let mut out = Vec::new();
    let mut gone: Option<&str> = None;
    for (i, (span, s, extra)) in items.iter().enumerate() {
        match parse_step(s, cat) {
            Ok(mut step) => {
                extra.apply(cx, cat, span, &mut step);
                // Without a load the sequence runs on tables that are
                // already there (checked when the run starts).
                if i > 0 && step.kind == StepKind::Load {
                    cx.err(span.clone(), "\"load\" may only be the first step", Some("move \"load\" to the front, or remove it to run on tables that exist already; use \"settle\" to let the engine catch up".into()));
                }
                if out.contains(&step) {
                    cx.err(
                        span.clone(),
                        format!("step \"{s}\" appears twice"),
                        Some(format!(
                            "tag one of them to tell them apart, e.g. \"{}:again\"",
                            step.name()
                        )),
                    );
                }
                if let Some(g) = gone {
                    if step.maintenance().is_none() && step.kind != StepKind::Settle {
                        cx.err(
                            span.clone(),
                            format!("\"{s}\" comes after \"{g}\", which leaves no rows to run on"),
                            Some(format!("put \"{g}\" at the end of the sequence")),
                        );
                    }
                }
                if let Some(m) = step.maintenance().filter(|m| !m.keeps_rows()) {
                    gone = Some(m.name());
                }
                out.push(step);
            }
            Err(why) if s.contains('[') => cx.err(
                span.clone(),
                format!("step \"{s}\": {why}"),
                Some("`relbench list` shows each parameter and what it sets".into()),
            ),
            Err(help) => cx.err(span.clone(), format!("unknown step \"{s}\""), Some(help)),
        }
    }
    // One suite per sequence: the Insert Benchmark's and LinkBench's
    // tables are not sysbench's, so their steps cannot share data.
    let family = |s: &Step| match find(cat, s).map(|w| w.meta().group) {
        Some(workload::Group::Insert) => Some("the Insert Benchmark's"),
        Some(workload::Group::LinkBench) => Some("LinkBench's"),
        Some(workload::Group::Tpcc) => Some("TPC-C's"),
        Some(_) => Some("sysbench's"),
        None if s.kind == StepKind::Load => Some("sysbench's"),
        None => None,
    };
    let families: Vec<&str> = [
        "the Insert Benchmark's",
        "LinkBench's",
        "TPC-C's",
        "sysbench's",
    ]
    .into_iter()
    .filter(|f| out.iter().any(|s| family(s) == Some(*f)))
    .collect();
    if let [a, b, ..] = families[..] {
        cx.err(
            whole.clone(),
            format!("the steps mix {a} with {b}, which run on different tables"),
            Some("run each suite in its own plan".into()),
        );
    }
    if let Some(f) = families.first().filter(|f| !f.starts_with("sysbench")) {
        if let Some(m) = out
            .iter()
            .filter_map(|s| s.maintenance())
            .find(|m| m.sysbench_only())
        {
            let own = if f.starts_with("LinkBench") {
                "its tables are made with their indexes by lb.load; leave the index steps out"
            } else if f.starts_with("TPC-C") {
                "its tables are made with their indexes by tpcc.load; leave the index steps out"
            } else {
                "its l.x step builds its indexes; leave the index steps out"
            };
            cx.err(
                whole,
                format!(
                    "\"{}\" works on sysbench's secondary index, which {f} tables do not have",
                    m.name()
                ),
                Some(own.into()),
            );
        }
    }
    out
}

/// `name` or `name:tag`, where name is load, settle or a workload.
pub(super) fn parse_step(s: &str, cat: &mut Catalogue) -> Result<Step, String> {
    let (name, tag) = match s.split_once(':') {
        Some((n, t)) => (n, Some(t)),
        None => (s, None),
    };
    if let Some(t) = tag {
        if !valid_tag(t) {
            return Err(format!(
                "the tag after ':' takes 1 to 32 letters, digits, '-' and '_', as in \"{name}:warm\""
            ));
        }
    }
    let kind = match name {
        "load" => StepKind::Load,
        "settle" => StepKind::Settle,
        w if w.contains('[') => {
            let name = sysbench::knobs::canonical_name(w).map_err(|e| e.to_string())?;
            cat.resolve(&name).map_err(|e| e.to_string())?;
            StepKind::Workload(name)
        }
        w if cat.resolve(w).is_ok() => StepKind::Workload(w.to_string()),
        m if Maint::find(m).is_some() => StepKind::Maintenance(Maint::find(m).expect("found")),
        w => {
            let names = ["load", "settle"]
                .into_iter()
                .chain(Maint::ALL.map(Maint::name))
                .chain(cat.names());
            return Err(match did_you_mean(w, names) {
                Some(m) => format!("did you mean \"{m}\"? `relbench list` shows every workload"),
                None => "`relbench list` shows every workload; steps are \"load\", \"settle\" or a workload".into(),
            });
        }
    };
    let mut step = Step {
        tag: tag.map(str::to_string),
        ..Step::of(kind)
    };
    step.plain = step.sends_text_by_default();
    Ok(step)
}
/// Splits each timed workload step longer than its interval (the phase's,
/// or `[duration] interval`) into consecutive intervals, each a step.
pub(super) fn intervals(
    cx: &mut Ctx<'_>,
    raw: &RawPlan,
    steps: Vec<Step>,
    mut phases: Vec<Phase>,
    stops: [Stop; 3],
    cat: &Catalogue,
) -> (Vec<Step>, Vec<Phase>) {
    let plan_interval = raw
        .duration
        .as_ref()
        .and_then(|d| d.interval.clone())
        .map(|v| {
            (
                cx.duration(&Some(v.clone()), "interval", 0.0, MIN_STEP_SECS),
                v.span(),
            )
        });
    let phase_intervals: Vec<Option<(f64, Range<usize>)>> = raw
        .phase
        .as_ref()
        .map(|p| {
            p.get_ref()
                .iter()
                .map(|p| {
                    p.interval.clone().map(|v| {
                        (
                            cx.duration(&Some(v.clone()), "interval", 0.0, MIN_STEP_SECS),
                            v.span(),
                        )
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    if plan_interval.is_none() && phase_intervals.iter().all(Option::is_none) {
        return (steps, phases);
    }
    if let (Stop::Events(_), Some((_, span))) = (
        stops[0],
        plan_interval
            .clone()
            .or(phase_intervals.iter().flatten().next().cloned()),
    ) {
        cx.err(
            span,
            "interval splits a step's time, but [duration] events stops steps by count",
            Some("remove `events`, or `interval`".into()),
        );
        return (steps, phases);
    }
    let mut out = Vec::new();
    let mut firsts = vec![0; phases.len()];
    for (i, step) in steps.into_iter().enumerate() {
        let pi = phases.iter().rposition(|p| p.first <= i);
        for (k, p) in phases.iter().enumerate() {
            if p.first == i {
                firsts[k] = out.len();
            }
        }
        let every = pi
            .and_then(|p| phase_intervals.get(p).cloned().flatten())
            .or(plan_interval.clone())
            .map(|(s, _)| s);
        let timed = find(cat, &step).and_then(|w| {
            // Steps with a fixed amount of work stop when it is done,
            // whatever the scale.
            let scale = workload::Scale::probe();
            w.events(&scale, 1)
                .is_none()
                .then(|| match w.meta().duration {
                    workload::DurationClass::Read => stops[0],
                    workload::DurationClass::Write => stops[1],
                    workload::DurationClass::Insert => stops[2],
                })
        });
        match (every, timed) {
            (Some(every), Some(Stop::Time(total))) if total.as_secs_f64() > every * 1.001 => {
                let total = total.as_secs_f64();
                let of = (total / every).round().max(1.0) as u32;
                let ms = (total * 1e3 / f64::from(of)).round() as u64;
                for n in 1..=of {
                    out.push(Step {
                        interval: Some(Interval { n, of, ms }),
                        ..step.clone()
                    });
                }
            }
            _ => out.push(step),
        }
    }
    for (p, f) in phases.iter_mut().zip(firsts) {
        p.first = f;
    }
    (out, phases)
}
