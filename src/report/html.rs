//! One self-contained HTML page (inline CSS, no script, no network): the
//! same tables as the Markdown, coloured. Every string that came from a plan
//! or a server is escaped.

use std::fmt::Write;

use super::tables::{self, Section, Table, Text};
use super::{fmt_bytes, Report, Verdict};

pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:80em}\
table{border-collapse:collapse;margin:0 0 1.5em}\
th,td{border:1px solid #ccc;padding:.25em .6em}th{background:#f3f3f3}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
td.worse{background:#f8c9c4;color:#7a1010}td.better{background:#c9eccb;color:#0b5a16}\
td.same{color:#666}.note{background:#fff4d6;padding:.5em}";

fn cell(out: &mut String, t: &Text, numeric: bool) {
    let class = match t.tone {
        Some(Verdict::Worse) => "worse",
        Some(Verdict::Better) => "better",
        Some(Verdict::Same) => "same",
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
    out.push_str("<table><tr>");
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

fn section(out: &mut String, s: &Section) {
    let _ = writeln!(
        out,
        "<h2>{}</h2><p>{}</p>",
        escape(&s.title),
        escape(&s.intro)
    );
    for (g, t) in &s.groups {
        let _ = writeln!(out, "<h3>{}</h3>", escape(g.title()));
        table(out, t);
    }
}

pub fn render(r: &Report) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>relbench report</title>\
         <style>{STYLE}</style></head><body>\n<h1>relbench report</h1>\n"
    );
    let names: Vec<String> = r.targets.iter().map(|t| escape(&t.name)).collect();
    let _ = writeln!(
        out,
        "<p>Targets: {}. Base: <b>{}</b>.</p>",
        names.join(", "),
        escape(&r.base)
    );
    for run in &r.runs {
        if run.status != crate::results::RunStatus::Complete {
            let _ = writeln!(
                out,
                "<p class=\"note\">The run in {} is {:?}, not complete: steps it did not reach are missing.</p>",
                escape(&run.dir),
                run.status
            );
        }
    }
    let lines = tables::summary_lines(r);
    if !lines.is_empty() {
        out.push_str("<h2>Summary</h2><ul>\n");
        for (head, details) in lines {
            let _ = write!(out, "<li>{}", escape(&head));
            if !details.is_empty() {
                out.push_str("<ul>");
                for d in details {
                    let _ = write!(out, "<li>{}</li>", escape(&d));
                }
                out.push_str("</ul>");
            }
            out.push_str("</li>\n");
        }
        out.push_str("</ul>\n");
    }
    section(&mut out, &tables::relative(r));
    section(&mut out, &tables::absolute(r));
    section(&mut out, &tables::efficiency(r));
    section(&mut out, &tables::efficiency_relative(r));
    section(&mut out, &tables::latency(r));
    if let Some(t) = tables::problems(r) {
        out.push_str("<h2>Errors and failed steps</h2>\n");
        table(&mut out, &t);
    }
    out.push_str("<h2>Runs</h2><ul>\n");
    for run in &r.runs {
        let h = &run.host;
        let _ = writeln!(
            out,
            "<li>{}: {}, started {}, {:?}; relbench {}; host {}: {}, {} cores, {} memory, Linux {}; {}</li>",
            escape(&run.dir),
            escape(&run.plan_source),
            escape(&run.started),
            run.status,
            escape(&run.relbench_version),
            escape(&h.hostname),
            escape(&h.cpu_model),
            h.cores,
            fmt_bytes(h.memory_bytes),
            escape(&h.kernel),
            super::sampler_cost(run)
        );
    }
    out.push_str("</ul>\n<h2>Targets</h2>\n");
    for t in &r.targets {
        let _ = write!(
            out,
            "<details><summary><b>{}</b>: {} {}</summary><table>",
            escape(&t.name),
            escape(&t.engine),
            escape(&t.version)
        );
        for (k, v) in &t.config {
            let _ = write!(out, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(v));
        }
        let _ = writeln!(
            out,
            "<tr><td>data on</td><td>{}</td></tr></table></details>",
            escape(t.filesystem.as_deref().unwrap_or("not recorded"))
        );
    }
    out.push_str("</body></html>\n");
    out
}
