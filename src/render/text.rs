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
    if rows.is_empty() || rows.iter().all(|row| row.cells[ti].relative.is_none()) {
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
        ratios(&rows, ti, |row| row.cells[ti].relative),
        names.join(", ")
    );
    let own = rows
        .iter()
        .any(|row| row.cells[ti].costs_relative.contains_key(&Cost::OwnCpuUs));
    let cpu = if own { Cost::OwnCpuUs } else { Cost::CpuUs };
    let own_cs = rows
        .iter()
        .any(|row| row.cells[ti].costs_relative.contains_key(&Cost::OwnCs));
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
            .any(|row| row.cells[ti].costs_relative.contains_key(&k))
        {
            let _ = writeln!(
                out,
                "{name}/{per} ratios are {}",
                ratios(&rows, ti, |row| row.cells[ti]
                    .costs_relative
                    .get(&k)
                    .copied())
            );
        }
    }
    if rows
        .iter()
        .any(|row| row.cells[ti].is_disturbed() && row.cells[ti].relative.is_some())
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
            plans(&mut out, r, ti);
            waits(&mut out, r, ti);
            statements(&mut out, r, ti);
            profiles(&mut out, r, ti);
        }
    }
    out
}

/// The statements planned differently from the base, per step.
fn plans(out: &mut String, r: &Report, ti: usize) {
    let lines: Vec<String> = r
        .rows
        .iter()
        .flat_map(|row| {
            row.cells[ti]
                .plans_differ
                .iter()
                .map(move |p| format!("{} c{}: {}", row.title(), row.id.clients, p.describe()))
        })
        .collect();
    if !lines.is_empty() {
        let _ = writeln!(out, "Plans that differ from the base:");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        out.push('\n');
    }
}

/// The statements' figures that moved against the base, per step.
fn statements(out: &mut String, r: &Report, ti: usize) {
    let lines: Vec<String> = r
        .rows
        .iter()
        .flat_map(|row| {
            let moved = row.cells[ti]
                .server_statements
                .as_ref()
                .map_or(&[][..], |s| &s.moved[..]);
            moved
                .iter()
                .map(move |m| format!("{} c{}: {}", row.title(), row.id.clients, m.describe()))
        })
        .collect();
    if !lines.is_empty() {
        let _ = writeln!(out, "What the statements did differently:");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        out.push('\n');
    }
}

/// The server's waits that moved against the base, per step, with the
/// share of an operation's change they account for.
fn waits(out: &mut String, r: &Report, ti: usize) {
    let lines: Vec<String> = r
        .rows
        .iter()
        .filter_map(|row| {
            let w = row.cells[ti]
                .waits
                .as_ref()
                .filter(|w| !w.moved.is_empty())?;
            let moved: Vec<String> = w.moved.iter().map(|m| m.describe()).collect();
            let share = w.share_of_change.map_or(String::new(), |s| {
                format!(" ({:.0}% of the change)", s * 100.0)
            });
            Some(format!(
                "{} c{}: {}{share}",
                row.title(),
                row.id.clients,
                moved.join(", ")
            ))
        })
        .collect();
    if !lines.is_empty() {
        let _ = writeln!(out, "Where the server waited:");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        out.push('\n');
    }
}

/// The functions and wait sites that moved most against the base, per
/// profiled step (none within sampling noise).
fn profiles(out: &mut String, r: &Report, ti: usize) {
    let mut lines = Vec::new();
    for row in &r.rows {
        let Some(p) = &row.cells[ti].profile else {
            continue;
        };
        let parts = p.moved();
        if !parts.is_empty() {
            lines.push(format!(
                "{} c{}: {}",
                row.title(),
                row.id.clients,
                parts.join("; ")
            ));
        }
    }
    if !lines.is_empty() {
        let _ = writeln!(out, "Where (profiles):");
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        out.push('\n');
    }
}
