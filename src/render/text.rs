//! Plain text in the style of the posts relbench's users publish: per
//! comparison, target and group, the throughput ratios in one sentence and
//! the costs per operation behind them in the next, ready to paste.
//!
//!   QPS ratios for wal are 2.24, 1.01*, 1.00 (point-query, random-points-100, hot-points)
//!   CPU/query ratios are 0.45, 0.99*, 1.00
//!
//! A ratio from a window another program disturbed (here or on the base)
//! is marked `*`, with a line that says what the mark means.

use std::fmt::Write;

use crate::compare::{Comparison, Cost, Report, Row};
use crate::results::Unit;
use crate::workload::Group;

/// What the `*` of a ratio means, said once under the block it is in.
const DISTURBED: &str =
    "* disturbed: another program used 5% or more of the machine while the step ran here \
                         or on the base; not judged (see the report's Interference section)";

fn ratios<'a>(rows: &[&'a Row], ti: usize, f: impl Fn(&'a Row) -> Option<f64>) -> String {
    rows.iter()
        .map(|row| {
            let mark = if row.cells[ti].is_disturbed() {
                "*"
            } else {
                ""
            };
            f(row).map_or("—".into(), |v| format!("{v:.2}{mark}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn group(out: &mut String, r: &Report, g: Group, ti: usize) {
    let rows: Vec<&Row> = r.rows_in(g).collect();
    if rows.is_empty() || rows.iter().all(|row| row.cells[ti].test.relative.is_none()) {
        return;
    }
    let names: Vec<String> = rows
        .iter()
        .map(|row| {
            if r.rows.iter().any(|x| x.id.clients != row.id.clients) {
                format!("{} c{}", row.title(), row.id.clients)
            } else {
                row.title()
            }
        })
        .collect();
    let rows_unit = rows.iter().all(|row| row.unit == Unit::RowsPerSec);
    let (what, per) = if rows_unit {
        ("rows/s", "row")
    } else {
        ("QPS", "query")
    };
    let _ = writeln!(
        out,
        "{what} ratios for {} are {} ({})",
        r.targets[ti].name,
        ratios(&rows, ti, |row| row.cells[ti].test.relative),
        names.join(", ")
    );
    let own = rows.iter().any(|row| {
        row.cells[ti]
            .hardware
            .costs_relative
            .contains_key(&Cost::OwnCpuUs)
    });
    let cpu = if own { Cost::OwnCpuUs } else { Cost::CpuUs };
    let own_cs = rows.iter().any(|row| {
        row.cells[ti]
            .hardware
            .costs_relative
            .contains_key(&Cost::OwnCs)
    });
    let cs = if own_cs { Cost::OwnCs } else { Cost::Cs };
    for (k, name) in [
        (cpu, if own { "CPU" } else { "machine CPU" }),
        (
            cs,
            if own_cs {
                "context switch"
            } else {
                "machine context switch"
            },
        ),
        (Cost::ReadKb, "read KiB"),
        (Cost::WriteKb, "write KiB"),
    ] {
        if rows
            .iter()
            .any(|row| row.cells[ti].hardware.costs_relative.contains_key(&k))
        {
            let _ = writeln!(
                out,
                "{name}/{per} ratios are {}",
                ratios(&rows, ti, |row| row.cells[ti]
                    .hardware
                    .costs_relative
                    .get(&k)
                    .copied())
            );
        }
    }
    if rows
        .iter()
        .any(|row| row.cells[ti].is_disturbed() && row.cells[ti].test.relative.is_some())
    {
        let _ = writeln!(out, "{DISTURBED}");
    }
    out.push('\n');
}

pub fn render(cs: &[Comparison]) -> String {
    let mut out = String::new();
    for c in cs {
        let r = &c.report;
        let _ = writeln!(out, "# {} (base {})\n", c.title, r.base);
        for ti in r.columns().into_iter().filter(|&i| !r.is_base(i)) {
            let _ = writeln!(
                out,
                "## {} ÷ {}\n",
                r.targets[ti].name, r.targets[r.base_of[ti]].name
            );
            for g in Group::ALL {
                let mut block = String::new();
                group(&mut block, r, g, ti);
                if !block.is_empty() {
                    let _ = writeln!(out, "{}:", g.title());
                    out.push_str(&block);
                }
            }
            inside(&mut out, r, ti);
        }
    }
    out
}

/// What moved inside the engine against the base, per step: the plans
/// that differ, the server's waits, what the statements did, and the
/// profiles' functions and wait sites (none within sampling noise); a
/// block each, a line per step.
fn inside(out: &mut String, r: &Report, ti: usize) {
    let line = |row: &crate::compare::Row, what: String| {
        format!("{} c{}: {what}", row.title(), row.id.clients)
    };
    let blocks: [(&str, Vec<String>); 4] = [
        (
            "Plans that differ from the base",
            r.rows
                .iter()
                .flat_map(|row| {
                    row.cells[ti]
                        .internals
                        .plans_differ
                        .iter()
                        .map(move |p| (row, p))
                })
                .map(|(row, p)| line(row, p.describe()))
                .collect(),
        ),
        (
            "Where the server waited",
            r.rows
                .iter()
                .filter_map(|row| {
                    let w = row.cells[ti]
                        .internals
                        .waits
                        .as_ref()
                        .filter(|w| !w.moved.is_empty())?;
                    let moved: Vec<String> = w.moved.iter().map(|m| m.describe()).collect();
                    let share = w.share_of_change.map_or(String::new(), |s| {
                        format!(" ({:.0}% of the change)", s * 100.0)
                    });
                    Some(line(row, format!("{}{share}", moved.join(", "))))
                })
                .collect(),
        ),
        (
            "What the statements did differently",
            r.rows
                .iter()
                .flat_map(|row| {
                    let s = row.cells[ti].internals.server_statements.as_ref();
                    s.map_or(&[][..], |s| &s.moved[..])
                        .iter()
                        .map(move |m| (row, m))
                })
                .map(|(row, m)| line(row, m.describe()))
                .collect(),
        ),
        (
            "Where (profiles)",
            r.rows
                .iter()
                .filter_map(|row| {
                    let parts = row.cells[ti].internals.profile.as_ref()?.moved();
                    (!parts.is_empty()).then(|| line(row, parts.join("; ")))
                })
                .collect(),
        ),
    ];
    for (title, lines) in blocks.into_iter().filter(|(_, l)| !l.is_empty()) {
        let _ = writeln!(out, "{title}:");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        out.push('\n');
    }
}
