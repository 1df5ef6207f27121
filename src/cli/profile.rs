//! `relbench profile DIR --target T --step S [--against BASE]`: a stored
//! profile in the terminal — the functions and wait sites of one target's
//! step, or their change against another target's — from the same model
//! the report lays out.

use anyhow::{bail, Context};

use crate::compare::profile::{CellProfile, FnCost, FnDelta};
use crate::compare::{self, Report};

/// What `relbench profile` was asked.
pub(super) struct ProfileArgs {
    pub dir: std::path::PathBuf,
    pub target: String,
    pub step: String,
    pub against: Option<String>,
    pub top: usize,
}

pub(super) fn profile(a: &ProfileArgs) -> anyhow::Result<()> {
    let run = crate::results::load_run(&a.dir)
        .with_context(|| format!("reading the results in {}", a.dir.display()))?;
    let mut subset = Vec::new();
    subset.extend(a.against.clone());
    subset.push(a.target.clone());
    let report = compare::build_subset(std::slice::from_ref(&run), None, Some(&subset))?;
    let ti = report
        .targets
        .iter()
        .position(|t| t.name == a.target || t.plan_name == a.target)
        .context("the target is not in the report")?;
    let rows: Vec<_> = report
        .rows
        .iter()
        .filter(|r| {
            r.id.is_named(&a.step) || format!("{} c{}", r.id.step.label(), r.id.clients) == a.step
        })
        .collect();
    let row = match rows.as_slice() {
        [] => bail!(
            "no step \"{}\" in {}: its steps are {}",
            a.step,
            a.dir.display(),
            steps(&report)
        ),
        [one] => *one,
        _ => bail!(
            "\"{}\" names {} rows (one per client count): name one as \"{} cN\", e.g. \"{} c{}\"",
            a.step,
            rows.len(),
            a.step,
            a.step,
            rows[0].id.clients
        ),
    };
    let Some(p) = &row.cells[ti].internals.profile else {
        bail!(
            "{} has no profile of {} in {}: add `[profile]` to the plan (mode = \"separate\" profiles a repeat of \
             its own) and run it again",
            a.target,
            a.step,
            a.dir.display()
        );
    };
    let title = format!("{} c{}", row.title(), row.id.clients);
    crate::outln!("{}", head(&a.target, &title, p));
    if let Some(b) = &a.against {
        if p.cpu_diff.is_empty() {
            crate::outln!(
                "{b} has no profile of this step to compare with: its own functions follow"
            );
        } else {
            crate::outln!("\nagainst {b}, on CPU:");
            deltas(&p.cpu_diff, a.top);
            crate::outln!("\nagainst {b}, off CPU (wait sites):");
            deltas(&p.wait_diff, a.top);
            return Ok(());
        }
    }
    crate::outln!("\non CPU:");
    top(&p.functions, a.top);
    crate::outln!("\noff CPU (wait sites):");
    top(&p.waits, a.top);
    Ok(())
}

fn steps(r: &Report) -> String {
    let mut v: Vec<String> = r
        .rows
        .iter()
        .map(|row| format!("{} c{}", row.id.step.label(), row.id.clients))
        .collect();
    v.dedup();
    v.join(", ")
}

fn head(target: &str, title: &str, p: &CellProfile) -> String {
    let mut s = format!(
        "{target}, {title}: {} profile (repeat {}), {} samples{}",
        match p.mode {
            Some(crate::metrics::profile::Mode::Inline) => "inline",
            _ => "separate",
        },
        p.repeat,
        p.samples,
        p.rate_hz.map(|r| format!(" at {r} Hz")).unwrap_or_default()
    );
    if let Some(n) = p.named_pct {
        s.push_str(&format!(", {n:.1}% named"));
    }
    if let Some(c) = p.cpu_us_per_op {
        s.push_str(&format!(
            "; CPU {c:.3} µs/op ({})",
            if p.cpu_measured {
                "measured"
            } else {
                "the profiled window's"
            }
        ));
    }
    if let Some(o) = p.off_us_per_op {
        s.push_str(&format!(", off CPU {o:.3} µs/op"));
    }
    if let Some(i) = p.idle_us_per_op {
        s.push_str(&format!(" (idle threads asleep {i:.3} µs/op, apart)"));
    }
    if let Some(o) = p.overhead_pct {
        s.push_str(&format!("; the profiler used {o:.1}% of the profiled CPU"));
    }
    match (&p.hw_missing, p.hw_per_op.is_empty()) {
        (Some(why), _) => s.push_str(&format!("\nhardware counters: {why}")),
        (None, false) => {
            let v: Vec<String> = p
                .hw_per_op
                .iter()
                .map(|(k, v)| format!("{k} {v:.1}/op"))
                .collect();
            s.push_str(&format!("\nhardware counters: {}", v.join(", ")));
        }
        _ => {}
    }
    for u in &p.unnamed {
        s.push_str(&format!(
            "\nunnamed: {} samples in {}: {}",
            u.samples, u.object, u.why
        ));
    }
    if let Some(e) = &p.error {
        s.push_str(&format!("\nprofile: {e}"));
    }
    if let Some(d) = &p.disturbed {
        s.push_str(&format!(
            "\nthe profiled window was disturbed, so no change is judged: {d}"
        ));
    }
    s
}

fn top(f: &[FnCost], n: usize) {
    crate::outln!(
        "{:>12} {:>7} {:>12}  function",
        "self µs/op",
        "share",
        "incl. µs/op"
    );
    for x in f.iter().take(n) {
        crate::outln!(
            "{:>12.3} {:>6.1}% {:>12.3}  {}",
            x.self_us,
            x.self_pct,
            x.incl_us,
            x.name
        );
    }
}

fn deltas(d: &[FnDelta], n: usize) {
    crate::outln!("{:>10} {:>10} {:>10}  function", "base", "here", "Δ µs/op");
    for x in d.iter().take(n) {
        crate::outln!(
            "{:>10.3} {:>10.3} {:>+10.3}  {}{}",
            x.base_us,
            x.us,
            x.delta_us,
            x.name,
            if x.beyond_noise { "" } else { "  (noise)" }
        );
    }
}
