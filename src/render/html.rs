//! One self-contained HTML page (inline CSS and SVG, no script, no
//! network): the summary, then per group the coloured tables and the
//! relative charts, the efficiency tables, the per-step charts and the run
//! facts. Every string that came from a plan or a server is escaped.

use std::fmt::Write;

use super::escape::escape;
use super::outline::{self, Block, Table, Text};
use crate::compare::Verdict;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:90em}\
table{border-collapse:collapse;margin:0 0 1.5em}\
th,td{border:1px solid #ccc;padding:.25em .6em}th{background:#f3f3f3}th.group{background:#e6ecf5}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
td.worse{background:#f8c9c4;color:#7a1010}td.better{background:#c9eccb;color:#0b5a16}\
td.same,td.unsure{color:#666}.note{background:#fff4d6;padding:.5em}\
.charts{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start;margin:0 0 1.5em}\
.step{border:1px solid #ddd;padding:.4em}.step h4{margin:.2em 0 .4em}.why{color:#666;font-style:italic}\
pre{background:#f6f6f6;padding:.6em;overflow:auto}details{margin:.3em 0}\
th{position:sticky;top:0;z-index:1}td:first-child{white-space:nowrap}\
nav.toc{margin:0 0 1em;line-height:1.6}nav.toc a{white-space:nowrap}";

fn cell(out: &mut String, t: &Text, numeric: bool) {
    let class = match t.tone {
        Some(Verdict::Worse) => "worse",
        Some(Verdict::Better) => "better",
        Some(Verdict::Same) => "same",
        Some(Verdict::Unsure) => "unsure",
        Some(Verdict::Disturbed) | Some(Verdict::TooShort) | Some(Verdict::Untested) => "unsure",
        Some(Verdict::Noise) => "same",
        None if numeric => "n",
        None => "",
    };
    let class = if numeric && !class.is_empty() && class != "n" {
        format!("n {class}")
    } else {
        class.to_string()
    };
    let _ = write!(out, "<td class=\"{class}\">{}</td>", escape(&t.text));
}

fn table(out: &mut String, t: &Table) {
    out.push_str("<table>");
    if !t.groups.is_empty() {
        out.push_str("<tr>");
        for (g, span) in &t.groups {
            let _ = write!(
                out,
                "<th colspan=\"{span}\" class=\"group\">{}</th>",
                escape(g)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("<tr>");
    for h in &t.head {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            cell(out, c, i >= t.text_columns);
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

pub fn render(doc: &[Block]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>relbench report</title>\
         <style>{STYLE}</style></head><body>\n"
    );
    // The same anchors as the table of contents: every heading, in order.
    let mut seen = Vec::new();
    for block in doc {
        match block {
            Block::Heading(level, text) => {
                let id = outline::anchor(text, &mut seen);
                let _ = writeln!(
                    out,
                    "<h{level} id=\"{}\">{}</h{level}>",
                    escape(&id),
                    escape(text)
                );
            }
            Block::Toc(entries) => {
                // One line of the top sections: a list of every heading
                // took the first screen (the summary began 1,200 px down).
                let top = entries.iter().map(|e| e.0).min().unwrap_or(2);
                let links: Vec<String> = entries
                    .iter()
                    .filter(|(level, _, _)| *level == top)
                    .map(|(_, text, anchor)| {
                        format!("<a href=\"#{}\">{}</a>", escape(anchor), escape(text))
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "<nav class=\"toc\"><strong>Contents:</strong> {}</nav>",
                    links.join(" · ")
                );
            }
            Block::Paragraph(text) => {
                let _ = writeln!(out, "<p>{}</p>", escape(text));
            }
            Block::Note(text) => {
                let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(text));
            }
            Block::Summary(lines) => {
                out.push_str("<ul>\n");
                for line in lines {
                    let _ = write!(out, "<li>{}", escape(&line.head));
                    if !line.details.is_empty() {
                        out.push_str("<ul>");
                        for d in &line.details {
                            let _ = write!(out, "<li>{}</li>", escape(d));
                        }
                        out.push_str("</ul>");
                    }
                    out.push_str("</li>\n");
                }
                out.push_str("</ul>\n");
            }
            Block::Table(t) => table(&mut out, t),
            Block::Charts(charts) => {
                out.push_str("<div class=\"charts\">");
                for c in charts {
                    out.push_str(&c.svg);
                    out.push('\n');
                }
                out.push_str("</div>\n");
            }
            Block::Step { title, charts } => {
                let _ = write!(out, "<div class=\"step\"><h4>{}</h4>", escape(title));
                for c in charts {
                    match c {
                        Ok(c) => {
                            out.push_str(&c.svg);
                            out.push('\n');
                        }
                        Err(why) => {
                            let _ = write!(out, "<p class=\"why\">{}</p>", escape(why));
                        }
                    }
                }
                out.push_str("</div>\n");
            }
            Block::Details {
                summary,
                facts,
                text,
            } => {
                let _ = write!(
                    out,
                    "<details><summary>{}</summary><table>",
                    escape(summary)
                );
                for (k, v) in facts {
                    let _ = write!(out, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(v));
                }
                out.push_str("</table>");
                if let Some(text) = text {
                    let _ = write!(out, "<pre>{}</pre>", escape(text));
                }
                out.push_str("</details>\n");
            }
        }
    }
    out.push_str("</body></html>\n");
    out
}
