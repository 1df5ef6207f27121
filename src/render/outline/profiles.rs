//! Where the time went: the profiles taken (how, how much of them could
//! be named, what the profiler cost, the hardware's counters), and per
//! step the functions and wait sites that moved against the base, with a
//! flame graph per target (differential against its base).

use super::*;
use crate::compare::profile::{CellProfile, FnCost, FnDelta};
use crate::compare::Row;
use crate::metrics::profile::Mode;

const INTRO: &str = "On-CPU stack samples of the server's processes (an embedded engine's: relbench's client \
    threads) over one window per target and step, and the time they spent off CPU at each wait site. A function's \
    µs/op is its share of the samples × the step's measured CPU per operation (the server's, or relbench's for an \
    embedded engine; medians over the measured repeats); self: where it is the running function, incl.: anywhere on \
    the call chain (a build without frame pointers gives short chains: self holds, incl. does not). Wait µs/op: time \
    off CPU per operation in the profiled window, all threads (a connection's thread waiting for the next statement \
    included). Separate: a profiled repeat after the measured ones (no measured window was profiled); inline: the \
    measured window itself. A change within twice the sampling error of the two shares is marked noise and never \
    named in a summary.";

/// A µs/op figure.
fn us(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> Text {
    Text::plain(v.map_or("—".into(), f))
}

/// The profiles taken: one row per step and target.
fn taken(r: &Report) -> Option<Table> {
    let mut rows = Vec::new();
    for row in &r.rows {
        for &ti in &r.columns() {
            let Some(p) = &row.cells[ti].internals.profile else {
                continue;
            };
            rows.push(taken_row(r, row, ti, p));
        }
    }
    (!rows.is_empty()).then(|| {
        Table::new(
            [
                "step",
                "clients",
                "target",
                "profile",
                "samples",
                "named",
                "CPU µs/op",
                "wait µs/op",
                "profiler CPU",
                "instructions/op",
                "cycles/op",
                "IPC",
                "unnamed samples: why",
            ],
            4,
            rows,
        )
    })
}

fn taken_row(r: &Report, row: &Row, ti: usize, p: &CellProfile) -> Vec<Text> {
    let hw = |k: &str| match (&p.hw_missing, p.hw_per_op.get(k)) {
        (_, Some(v)) => Text::plain(fig(*v)),
        (Some(_), None) => Text::plain("n/a"),
        (None, None) => Text::plain("—"),
    };
    let mut unnamed: Vec<String> = p
        .unnamed
        .iter()
        .map(|u| format!("{} ({}): {}", u.object, u.samples, u.why))
        .collect();
    if let Some(e) = &p.error {
        unnamed.insert(0, e.clone());
    }
    if let Some(d) = &p.disturbed {
        unnamed.insert(0, format!("window disturbed, not compared: {d}"));
    }
    vec![
        Text::plain(row.title()),
        Text::plain(row.id.clients.to_string()),
        Text::plain(r.targets[ti].name.clone()),
        Text::plain(match p.mode {
            Some(Mode::Separate) => format!("separate (repeat {})", p.repeat),
            Some(Mode::Inline) => format!("inline (repeat {})", p.repeat),
            None => "—".into(),
        }),
        Text::plain(p.samples.to_string()),
        opt(p.named_pct, |v| format!("{v:.1}%")),
        opt(p.cpu_us_per_op, |v| {
            format!(
                "{}{}",
                us(v),
                if p.cpu_measured { "" } else { " (profiled)" }
            )
        }),
        opt(p.off_us_per_op, |o| match p.idle_us_per_op {
            Some(i) => format!("{} (idle threads {} apart)", us(o), us(i)),
            None => us(o),
        }),
        opt(p.overhead_pct, |v| format!("{v:.1}%")),
        hw("instructions"),
        hw("cycles"),
        opt(p.ipc, |v| format!("{v:.2}")),
        Text::plain(if unnamed.is_empty() {
            "—".into()
        } else {
            unnamed.join("; ")
        }),
    ]
}

fn delta_table(d: &[FnDelta], what: &str) -> Table {
    let rows = d
        .iter()
        .map(|x| {
            vec![
                Text::plain(x.name.clone()),
                Text::plain(us(x.base_us)),
                Text::plain(us(x.us)),
                Text {
                    text: format!(
                        "{:+}{}",
                        us(x.delta_us),
                        if x.beyond_noise { "" } else { " (noise)" }
                    ),
                    tone: x.beyond_noise.then_some(if x.delta_us > 0.0 {
                        Verdict::Worse
                    } else {
                        Verdict::Better
                    }),
                },
                Text::plain(us(x.base_incl_us)),
                Text::plain(us(x.incl_us)),
            ]
        })
        .collect();
    Table::new(
        [
            what,
            "base µs/op",
            "µs/op",
            "Δ µs/op",
            "base incl.",
            "incl.",
        ],
        1,
        rows,
    )
}

fn top_table(f: &[FnCost], what: &str) -> Table {
    let rows = f
        .iter()
        .map(|x| {
            vec![
                Text::plain(x.name.clone()),
                Text::plain(us(x.self_us)),
                Text::plain(format!("{:.1}%", x.self_pct)),
                Text::plain(us(x.incl_us)),
            ]
        })
        .collect();
    Table::new([what, "self µs/op", "share", "incl. µs/op"], 1, rows)
}

/// One step's tables and flame graphs, per target.
fn step(doc: &mut Vec<Block>, r: &Report, row: &Row) {
    let cols: Vec<usize> = r
        .columns()
        .into_iter()
        .filter(|&ti| row.cells[ti].internals.profile.is_some())
        .collect();
    if cols.is_empty() {
        return;
    }
    let title = format!("{} c{}", row.title(), row.id.clients);
    doc.push(Block::Heading(3, format!("Profile: {title}")));
    let mut charts = Vec::new();
    for ti in cols {
        let p = row.cells[ti].internals.profile.as_ref().expect("filtered");
        let name = &r.targets[ti].name;
        let base = &r.targets[r.base_of[ti]].name;
        if !p.cpu_diff.is_empty() {
            doc.push(Block::Paragraph(format!(
                "{name} against {base}: CPU per function"
            )));
            doc.push(Block::Table(delta_table(&p.cpu_diff, "function")));
        } else if !p.functions.is_empty() {
            doc.push(Block::Paragraph(format!("{name}: CPU per function")));
            doc.push(Block::Table(top_table(&p.functions, "function")));
        }
        if !p.wait_diff.is_empty() {
            doc.push(Block::Paragraph(format!(
                "{name} against {base}: time off CPU per wait site"
            )));
            doc.push(Block::Table(delta_table(&p.wait_diff, "wait site")));
        } else if !p.waits.is_empty() {
            doc.push(Block::Paragraph(format!(
                "{name}: time off CPU per wait site"
            )));
            doc.push(Block::Table(top_table(&p.waits, "wait site")));
        }
        let slug = svg::slug(&format!("{title}-{name}"));
        let against = if p.cpu_diff.is_empty() {
            String::new()
        } else {
            format!(" against {base} (red grew, blue shrank)")
        };
        if let Some(f) = &p.flame {
            charts.extend(svg::flame::flame(
                f,
                &format!("{name}, {title}: on CPU, µs/op{against}"),
                format!("flame-{slug}.svg"),
            ));
        }
        if let Some(f) = &p.off_flame {
            charts.extend(svg::flame::flame(
                f,
                &format!("{name}, {title}: off CPU, µs/op{against}"),
                format!("flame-off-{slug}.svg"),
            ));
        }
    }
    if !charts.is_empty() {
        doc.push(Block::Charts(charts));
    }
}

/// The profiles section, when the runs have profiles.
pub(super) fn profiles(doc: &mut Vec<Block>, r: &Report) {
    let Some(t) = taken(r) else {
        return;
    };
    doc.push(Block::Heading(2, "Where the time went".into()));
    doc.push(Block::Paragraph(INTRO.into()));
    doc.push(Block::Table(t));
    // Why the hardware's counters are missing, said once.
    let mut missing: Vec<&str> = r
        .rows
        .iter()
        .flat_map(|row| row.cells.iter())
        .filter_map(|c| c.internals.profile.as_ref()?.hw_missing.as_deref())
        .collect();
    missing.sort_unstable();
    missing.dedup();
    for m in missing {
        doc.push(Block::Paragraph(format!("Hardware counters (n/a): {m}.")));
    }
    for row in &r.rows {
        step(doc, r, row);
    }
}
