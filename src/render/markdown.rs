//! Markdown: pastes into a blog post or an issue. Colour cannot be carried
//! in Markdown, so a ratio past a threshold gets 🔴 or 🟢.

use std::fmt::Write;

use super::outline::{Block, Table, Text};
use super::svg::Chart;
use crate::compare::Verdict;

/// Where the charts go, relative to the report.
pub const CHARTS_DIR: &str = "charts";

/// Every chart the document links, to be written into [`CHARTS_DIR`].
pub fn charts(doc: &[Block]) -> impl Iterator<Item = &Chart> {
    doc.iter()
        .flat_map(|block| -> Box<dyn Iterator<Item = &Chart>> {
            match block {
                Block::Charts(charts) => Box::new(charts.iter()),
                Block::Step { charts, .. } => Box::new(charts.iter().flatten()),
                _ => Box::new(std::iter::empty()),
            }
        })
}

fn image(out: &mut String, c: &Chart) {
    let _ = writeln!(out, "![{}]({CHARTS_DIR}/{})\n", c.title, c.file);
}

/// Text safe in a table cell: no column breaks, no line breaks.
fn cell_text(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn cell(t: &Text) -> String {
    let text = cell_text(&t.text);
    match t.tone {
        Some(Verdict::Worse) => format!("{text} 🔴"),
        Some(Verdict::Better) => format!("{text} 🟢"),
        // `~` is already in the text.
        _ => text,
    }
}

/// Markdown has one header row: a column group (the host) goes into the
/// heading as `name @ host`.
fn head(t: &Table) -> Vec<String> {
    let mut groups = t
        .groups
        .iter()
        .flat_map(|(g, n)| std::iter::repeat(g).take(*n));
    t.head
        .iter()
        .map(|h| match groups.next() {
            Some(g) if !g.is_empty() => format!("{h} @ {g}"),
            _ => h.clone(),
        })
        .collect()
}

fn table(out: &mut String, t: &Table) {
    let _ = writeln!(out, "| {} |", head(t).join(" | "));
    let aligns: Vec<&str> = (0..t.head.len())
        .map(|i| if i < t.text_columns { ":--" } else { "--:" })
        .collect();
    let _ = writeln!(out, "|{}|", aligns.join("|"));
    for row in &t.rows {
        let cells: Vec<String> = row.iter().map(cell).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}

pub fn render(doc: &[Block]) -> String {
    let mut out = String::new();
    for block in doc {
        match block {
            Block::Heading(level, text) => {
                let _ = writeln!(out, "{} {text}\n", "#".repeat(usize::from(*level)));
            }
            Block::Paragraph(text) => {
                let _ = writeln!(out, "{text}\n");
            }
            Block::Note(text) => {
                let _ = writeln!(out, "> **Note:** {text}\n");
            }
            Block::Summary(lines) => {
                for line in lines {
                    let _ = writeln!(out, "- {}", line.head);
                    for d in &line.details {
                        let _ = writeln!(out, "  - {d}");
                    }
                }
                out.push('\n');
            }
            Block::Toc(entries) => {
                for (level, text, anchor) in entries {
                    let _ = writeln!(
                        out,
                        "{}- [{text}](#{anchor})",
                        "  ".repeat(usize::from(*level - 2))
                    );
                }
                out.push('\n');
            }
            Block::Table(t) => table(&mut out, t),
            Block::Charts(charts) => {
                for c in charts {
                    image(&mut out, c);
                }
            }
            Block::Step { title, charts } => {
                let _ = writeln!(out, "### {title}\n");
                for c in charts {
                    match c {
                        Ok(c) => image(&mut out, c),
                        Err(why) => {
                            let _ = writeln!(out, "_{why}_\n");
                        }
                    }
                }
            }
            Block::Details {
                summary,
                facts,
                text: _,
            } => {
                // Collapsed, as GitHub shows HTML <details> in Markdown;
                // the plan text is in the HTML page and in run.json.
                let _ = writeln!(out, "<details><summary>{summary}</summary>\n");
                out.push_str("| | |\n|:--|:--|\n");
                for (k, v) in facts {
                    let _ = writeln!(out, "| {} | {} |", cell_text(k), cell_text(v));
                }
                out.push_str("\n</details>\n\n");
            }
        }
    }
    out
}
