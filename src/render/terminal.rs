//! The relative table printed at the end of a run, coloured when stdout is
//! a terminal.

use std::fmt::Write;

use super::outline::{self, Text};
use crate::compare::{Report, Verdict};

fn paint(t: &Text, width: usize, color: bool) -> String {
    let s = format!("{:>width$}", t.text);
    match (color, t.tone) {
        (true, Some(Verdict::Worse)) => format!("\x1b[31m{s}\x1b[0m"),
        (true, Some(Verdict::Better)) => format!("\x1b[32m{s}\x1b[0m"),
        _ => s,
    }
}

pub fn relative_table(r: &Report, color: bool) -> String {
    let mut out = String::new();
    let section = outline::relative(r);
    if section.groups.is_empty() || r.targets.len() < 2 {
        return out;
    }
    let _ = writeln!(out, "{}: {}", section.title, section.intro);
    let head = &section.groups[0].1.head;
    let widths: Vec<usize> = (0..head.len())
        .map(|i| {
            section
                .groups
                .iter()
                .flat_map(|(_, t)| t.rows.iter().map(move |r| r[i].text.chars().count()))
                .chain(std::iter::once(head[i].chars().count()))
                .max()
                .unwrap_or(4)
        })
        .collect();
    let line = |cells: Vec<String>| cells.join("  ");
    let _ = writeln!(
        out,
        "{}",
        line(
            head.iter()
                .enumerate()
                .map(|(i, h)| if i == 0 {
                    format!("{h:<w$}", w = widths[0])
                } else {
                    format!("{h:>w$}", w = widths[i])
                })
                .collect()
        )
    );
    for (g, t) in &section.groups {
        let _ = writeln!(out, "-- {}", g.title());
        for row in &t.rows {
            let cells = row
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == 0 {
                        format!("{:<w$}", c.text, w = widths[0])
                    } else {
                        paint(c, widths[i], color)
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", line(cells));
        }
    }
    for line in &r.summary_lines {
        let (head, details) = (&line.head, &line.details);
        let _ = writeln!(out, "\n{head}");
        for d in details {
            let _ = writeln!(out, "  - {d}");
        }
    }
    out
}
