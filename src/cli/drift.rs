//! `relbench host drift`: how far this machine's own speed wanders from
//! one window to the next (`metrics::drift`'s probe, `measure::drift`'s
//! figures), and what that allows a study run on it — said before a
//! study is planned, where an A/A run would take an hour to say it.

use std::sync::atomic::AtomicBool;

use anyhow::bail;

use crate::measure::drift::{self, Drift};
use crate::outln;
use crate::workload::check::parse_duration;

/// The windows the table shows, where three fit in the probe.
const WINDOWS: [f64; 6] = [1.0, 2.0, 5.0, 10.0, 30.0, 60.0];
const TICK: f64 = 0.25;

/// A spread of ln as the percentage a window lies off by (±).
fn pct(sd_ln: f64) -> String {
    format!("±{:.1}%", 100.0 * (sd_ln.exp() - 1.0))
}

fn rounds(n: Option<u32>) -> String {
    n.map_or_else(
        || format!("more than {}", drift::MOST_ROUNDS),
        |n| n.to_string(),
    )
}

pub(super) fn drift(probe_for: Option<&str>, window: Option<&str>) -> anyhow::Result<()> {
    let secs = |given: Option<&str>, default: f64, what: &str| -> anyhow::Result<f64> {
        match given {
            None => Ok(default),
            Some(t) => match parse_duration(t) {
                Some(s) if s >= TICK => Ok(s),
                _ => {
                    bail!("--{what} {t}: give a duration of {TICK} s or more, as 30s, 2m or 500ms")
                }
            },
        }
    };
    let probe_for = secs(probe_for, 60.0, "for")?;
    let window = secs(window, 5.0, "window")?;
    if probe_for < 3.0 * window {
        bail!(
            "--for {probe_for} s holds fewer than three windows of {window} s: probe for {} s at least",
            3.0 * window
        );
    }
    let cpus = crate::metrics::drift::cpus()?;
    outln!(
        "probing for {probe_for} s: one thread pinned to each of {} CPU(s) ({}), each running point \
         queries on an in-memory SQLite table of its own, counted every {} s; nothing else should run",
        cpus.len(),
        cpus.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
        TICK
    );
    let probe = crate::metrics::drift::run(probe_for, TICK, &AtomicBool::new(false))?;
    if let Some(s) = probe.steal_pct {
        outln!("steal time the kernel counted meanwhile: {s:.1}% of the CPUs' time");
    }
    let many = probe.counts.len() > 1;
    outln!(
        "\n{:>8}  {}  {:>10}{}",
        "windows",
        probe
            .counts
            .iter()
            .map(|(c, _)| format!("{:>18}", format!("cpu {c}: off, apart")))
            .collect::<Vec<_>>()
            .join("  "),
        "turns",
        if many { "     at once   together" } else { "" }
    );
    let mut lengths: Vec<f64> = WINDOWS.into_iter().filter(|w| *w != window).collect();
    lengths.push(window);
    lengths.sort_by(f64::total_cmp);
    for w in lengths {
        let Some(d) = drift::analyse(&probe.counts, probe.tick_secs, w) else {
            continue;
        };
        outln!(
            "{:>7} s  {}  {:>10}{}{}",
            d.window_secs,
            d.cpus
                .iter()
                .map(|c| format!(
                    "{:>18}",
                    format!("{} {}", pct(c.sd_ln), pct(c.neighbour_sd_ln))
                ))
                .collect::<Vec<_>>()
                .join("  "),
            pct(d.turns_sd_ln),
            match (d.at_once_sd_ln, d.correlation) {
                (Some(s), Some(r)) => format!("  {:>10}  r = {r:>5.2}", pct(s)),
                _ => String::new(),
            },
            if w == window { "   (--window)" } else { "" }
        );
    }
    outln!(
        "(off: a window's spread about the CPU's mean; apart: two neighbouring windows' spread, \
         which a base and a target taking turns differ by with nothing changed; turns: that, pooled \
         over the CPUs{})",
        if many {
            "; at once: one CPU's window against another's of the same time, as the two sides run at \
             once on different CPUs would differ; together: how the CPUs' windows move together"
        } else {
            ""
        }
    );
    let Some(d) = drift::analyse(&probe.counts, probe.tick_secs, window) else {
        bail!("the probe ended before three windows of {window} s");
    };
    allows(&d);
    Ok(())
}

/// What the spread of windows of `--window` allows a study on this machine.
fn allows(d: &Drift) {
    let sd = d.turns_sd_ln;
    outln!(
        "\nwith windows of {} s, the targets taking turns (two neighbouring windows {} apart):",
        d.window_secs,
        pct(sd)
    );
    for change in [0.05, 0.10, 0.20] {
        outln!(
            "  a change of {:.0}% is found in 80% of runs after {} rounds",
            100.0 * change,
            rounds(drift::rounds_to_find(change, sd))
        );
    }
    outln!(
        "  identical targets are shown the same within ±5% in half of runs after {} rounds, in 80% after {}",
        rounds(drift::rounds_to_show_same(0.05, sd, 0.5)),
        rounds(drift::rounds_to_show_same(0.05, sd, 0.8))
    );
    for n in [3, 6, 10] {
        outln!(
            "  {n} rounds find changes of {:.0}% and more in 80% of runs",
            100.0 * drift::smallest_found(n, sd)
        );
    }
    if let Some(at_once) = d.at_once_sd_ln {
        let better = at_once < 0.8 * sd;
        outln!(
            "  run at once on different CPUs (duet), the two sides' windows would lie {} apart: {}",
            pct(at_once),
            if better {
                "the CPUs slow down together here, and running both sides at once would cancel part of it"
            } else {
                "no closer than taking turns; each CPU wanders by itself here, and running both sides at \
                 once would not cancel it"
            }
        );
    }
    outln!(
        "(the rounds assume a study's windows wander as these point queries' do; a workload spread \
         over every CPU averages the CPUs' wanders and lies closer)"
    );
}
