//! The HTML page: the summary, then per group the coloured tables and the
//! relative charts, the efficiency tables, the per-step charts and the run
//! facts. Every string that came from a plan or a server is escaped.
//!
//! Two shapes of the same document. Self-contained ([`render`], `report
//! --self-contained`): inline CSS and SVG, no script, nothing to fetch.
//! Compact ([`render_compact`], what `run` and `report` write by
//! default): the overview's heat map inline, every other chart an `<img>`
//! of its file under `charts/`, the sections after the summary collapsed,
//! and their tables kept once as compact JSON in the page and drawn by a
//! few lines of script when a section is opened (a 100-target report was
//! 11.6 MB of markup, most of it table cells and SVG).

use std::fmt::Write;

use super::escape::escape;
use super::outline::{self, Block, Table, Text};
use super::svg::Chart;
use crate::compare::Verdict;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:90em}\
table{border-collapse:collapse;margin:0 0 1.5em}\
th,td{border:1px solid #ccc;padding:.25em .6em}th{background:#f3f3f3}th.group{background:#e6ecf5}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
td.worse{background:#f8c9c4;color:#7a1010}td.better{background:#c9eccb;color:#0b5a16}\
td.same,td.undecided{color:#666}.note{background:#fff4d6;padding:.5em}\
.charts{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start;margin:0 0 1.5em}\
.step{border:1px solid #ddd;padding:.4em}.step h4{margin:.2em 0 .4em}.why{color:#666;font-style:italic}\
pre{background:#f6f6f6;padding:.6em;overflow:auto}details{margin:.3em 0}\
details.section>summary{cursor:pointer}details.section>summary h2{display:inline}\
th{position:sticky;top:0;z-index:1}td:first-child{white-space:nowrap}\
nav.toc{margin:0 0 1em;line-height:1.6}nav.toc a{white-space:nowrap}";

fn cell(out: &mut String, t: &Text, numeric: bool) {
    let class = match t.tone {
        Some(Verdict::Worse) => "worse",
        Some(Verdict::Better) => "better",
        Some(Verdict::Same) => "same",
        Some(Verdict::Undecided)
        | Some(Verdict::Disturbed)
        | Some(Verdict::TooShort)
        | Some(Verdict::Untested)
        | Some(Verdict::Unsteady) => "undecided",
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

/// The self-contained page.
pub fn render(doc: &[Block]) -> String {
    page(doc, false)
}

/// The compact page, beside its `charts/` directory.
pub fn render_compact(doc: &[Block]) -> String {
    page(doc, true)
}

/// Sections shown open in the compact page: the first screen.
const OPEN: [&str; 2] = ["Overview", "Summary"];

/// Draws a collapsed section's tables from the page's JSON when it is
/// opened (or reached by a link into it).
const SCRIPT: &str = "const D=JSON.parse(document.getElementById('tables').textContent),T=D.t,S=D.s;\
const K={w:'worse',b:'better',s:'same',u:'undecided'};\
function e(n,c,x){const d=document.createElement(n);if(c)d.className=c;if(x!==undefined)d.textContent=x;return d}\
function draw(s){for(const p of s.querySelectorAll('div.t:not(.done)')){const t=T[+p.dataset.t];const b=e('table');\
if(t.g.length){const r=e('tr');for(const [g,n] of t.g){const h=e('th','group',g);h.colSpan=n;r.append(h)}b.append(r)}\
const h=e('tr');for(const x of t.h)h.append(e('th','',x));b.append(h);\
t.r.forEach((row,i)=>{const r=e('tr');row.forEach((x,j)=>{const k=K[t.k[i][j]];\
r.append(e('td',j<t.x?(k||''):(k?'n '+k:'n'),S[x]))});b.append(r)});p.append(b);p.classList.add('done')}}\
for(const s of document.querySelectorAll('details.section'))s.addEventListener('toggle',()=>{if(s.open)draw(s)});\
function reach(){const a=location.hash&&document.getElementById(decodeURIComponent(location.hash.slice(1)));\
const s=a&&a.closest('details.section');if(s){s.open=true;draw(s);a.scrollIntoView()}}\
addEventListener('hashchange',reach);reach();";

/// A table as the compact page keeps it: head, column groups, text
/// columns, each row's texts (as indices into the page's list of distinct
/// texts: a ratio like `0.97` or a `—` comes back thousands of times) and
/// each cell's tone as one letter.
#[derive(serde::Serialize)]
struct Data<'a> {
    h: &'a [String],
    g: &'a [(String, usize)],
    x: usize,
    r: Vec<Vec<usize>>,
    k: Vec<String>,
}

/// The distinct texts of the page's tables.
#[derive(Default, serde::Serialize)]
struct Texts<'a> {
    list: Vec<&'a str>,
    #[serde(skip)]
    index: std::collections::HashMap<&'a str, usize>,
}

impl<'a> Texts<'a> {
    fn of(&mut self, s: &'a str) -> usize {
        *self.index.entry(s).or_insert_with(|| {
            self.list.push(s);
            self.list.len() - 1
        })
    }
}

fn data<'a>(t: &'a Table, texts: &mut Texts<'a>) -> Data<'a> {
    let tone = |c: &Text| match c.tone {
        Some(Verdict::Worse) => 'w',
        Some(Verdict::Better) => 'b',
        Some(Verdict::Same) => 's',
        Some(Verdict::Undecided)
        | Some(Verdict::Disturbed)
        | Some(Verdict::TooShort)
        | Some(Verdict::Untested)
        | Some(Verdict::Unsteady) => 'u',
        None => '-',
    };
    Data {
        h: &t.head,
        g: &t.groups,
        x: t.text_columns,
        r: t.rows
            .iter()
            .map(|r| r.iter().map(|c| texts.of(&c.text)).collect())
            .collect(),
        k: t.rows
            .iter()
            .map(|r| r.iter().map(tone).collect())
            .collect(),
    }
}

fn chart(out: &mut String, c: &Chart, compact: bool) {
    // The overview's map stays in the page: it is the first screen, and
    // its cells say both throughputs on hover.
    if compact && !c.file.ends_with("overview-heatmap.svg") {
        let _ = write!(
            out,
            "<img src=\"{}/{}\" alt=\"{}\" loading=\"lazy\">",
            super::markdown::CHARTS_DIR,
            escape(&c.file),
            escape(&c.title)
        );
    } else {
        out.push_str(&c.svg);
    }
    out.push('\n');
}

fn page(doc: &[Block], compact: bool) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>relbench report</title>\
         <style>{STYLE}</style></head><body>\n"
    );
    // Tables of collapsed sections, drawn on demand.
    let mut tables: Vec<Data<'_>> = Vec::new();
    let mut texts = Texts::default();
    let mut collapsed = false;
    // The same anchors as the table of contents: every heading, in order.
    let mut seen = Vec::new();
    for block in doc {
        match block {
            Block::Heading(level, text) => {
                let id = outline::anchor(text, &mut seen);
                if compact && *level == 2 {
                    if collapsed {
                        out.push_str("</details>\n");
                    }
                    collapsed = !OPEN.contains(&text.as_str());
                    if collapsed {
                        let _ = writeln!(
                            out,
                            "<details class=\"section\"><summary><h2 id=\"{}\">{}</h2></summary>",
                            escape(&id),
                            escape(text)
                        );
                        continue;
                    }
                }
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
            Block::Table(t) if compact && collapsed => {
                let _ = writeln!(out, "<div class=\"t\" data-t=\"{}\"></div>", tables.len());
                tables.push(data(t, &mut texts));
            }
            Block::Table(t) => table(&mut out, t),
            Block::Charts(charts) => {
                out.push_str("<div class=\"charts\">");
                for c in charts {
                    chart(&mut out, c, compact);
                }
                out.push_str("</div>\n");
            }
            Block::Step { title, charts } => {
                let _ = write!(out, "<div class=\"step\"><h4>{}</h4>", escape(title));
                for c in charts {
                    match c {
                        Ok(c) => chart(&mut out, c, compact),
                        Err(why) => {
                            let _ =
                                write!(out, "<p class=\"why\">{}</p>", escape(&why.to_string()));
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
    if collapsed {
        out.push_str("</details>\n");
    }
    if compact {
        // `</` never closes the script early: JSON may escape the slash.
        let json = serde_json::to_string(&serde_json::json!({"s": texts.list, "t": tables}))
            .unwrap_or_else(|_| "{\"s\":[],\"t\":[]}".into())
            .replace("</", "<\\/");
        let _ = write!(
            out,
            "<script type=\"application/json\" id=\"tables\">{json}</script>\n<script>{SCRIPT}</script>\n"
        );
    }
    out.push_str("</body></html>\n");
    out
}
