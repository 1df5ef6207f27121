//! One self-contained HTML page (inline CSS and SVG, no script, no
//! network): the summary, then per group the coloured tables and the
//! relative charts, the efficiency tables, the per-step charts and the run
//! facts. Every string that came from a plan or a server is escaped.

use std::fmt::Write;

use super::charts;
use super::tables::{self, Section, Table, Text};
use super::{fmt_bytes, Report, Verdict};
use crate::workload::Group;

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

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:90em}\
table{border-collapse:collapse;margin:0 0 1.5em}\
th,td{border:1px solid #ccc;padding:.25em .6em}th{background:#f3f3f3}th.group{background:#e6ecf5}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
td.worse{background:#f8c9c4;color:#7a1010}td.better{background:#c9eccb;color:#0b5a16}\
td.same,td.unsure{color:#666}.note{background:#fff4d6;padding:.5em}\
.charts{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start;margin:0 0 1.5em}\
.step{border:1px solid #ddd;padding:.4em}.step h4{margin:.2em 0 .4em}.why{color:#666;font-style:italic}\
pre{background:#f6f6f6;padding:.6em;overflow:auto}details{margin:.3em 0}";

fn cell(out: &mut String, t: &Text, numeric: bool) {
    let class = match t.tone {
        Some(Verdict::Worse) => "worse",
        Some(Verdict::Better) => "better",
        Some(Verdict::Same) => "same",
        Some(Verdict::Unsure) => "unsure",
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

fn chart(out: &mut String, c: &charts::Chart) {
    out.push_str(&c.svg);
    out.push('\n');
}

/// Per group: the relative table, its charts, then the absolute table.
fn throughput(out: &mut String, r: &Report) {
    let rel = tables::relative(r);
    let abs = tables::absolute(r);
    let _ = writeln!(
        out,
        "<h2>Throughput</h2><p>{} {}</p>",
        escape(&rel.intro),
        escape(&abs.intro)
    );
    for g in Group::ALL {
        let a = abs.groups.iter().find(|(x, _)| *x == g);
        let Some((_, a)) = a else { continue };
        let _ = writeln!(out, "<h3>{}</h3>", escape(g.title()));
        if let Some((_, t)) = rel.groups.iter().find(|(x, _)| *x == g) {
            out.push_str("<h4>Relative</h4>\n");
            table(out, t);
            let cs = charts::relative(r, g);
            if !cs.is_empty() {
                out.push_str("<div class=\"charts\">");
                for c in &cs {
                    chart(out, c);
                }
                out.push_str("</div>\n");
            }
        }
        out.push_str("<h4>Absolute</h4>\n");
        table(out, a);
    }
}

/// The Insert Benchmark's SLA table and response-time histograms.
fn insert_benchmark(out: &mut String, r: &Report) {
    if let Some(t) = tables::sla(r) {
        let _ = writeln!(
            out,
            "<h2>Insert Benchmark: background writes and the SLA</h2><p>{}</p>",
            escape(tables::SLA_INTRO)
        );
        table(out, &t);
    }
    if let Some(t) = tables::response_times(r) {
        let _ = writeln!(
            out,
            "<h2>Insert Benchmark: response times</h2><p>{}</p>",
            escape(tables::RESPONSE_INTRO)
        );
        table(out, &t);
    }
}

fn per_step(out: &mut String, r: &Report) {
    out.push_str(
        "<h2>Per step</h2><p>Throughput in each second of the measured window (one line per target and repeat: \
         stalls and write-back show here), and the latency percentiles of one event (median over repeats).</p>\n\
         <div class=\"charts\">\n",
    );
    for s in charts::per_step(r) {
        let _ = write!(out, "<div class=\"step\"><h4>{}</h4>", escape(&s.title));
        for c in [&s.rate, &s.latency] {
            match c {
                Ok(c) => chart(out, c),
                Err(why) => {
                    let _ = write!(out, "<p class=\"why\">{}</p>", escape(why));
                }
            }
        }
        for c in &s.classes {
            chart(out, c);
        }
        out.push_str("</div>\n");
    }
    out.push_str("</div>\n");
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
        "<p>Targets: {}. Base: <b>{}</b>{}.</p>",
        names.join(", "),
        escape(&r.base),
        if r.by_host() {
            format!(" on each host ({})", escape(&r.hosts.join(", ")))
        } else {
            String::new()
        }
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
    throughput(&mut out, r);
    insert_benchmark(&mut out, r);
    section(&mut out, &tables::efficiency(r));
    if let Some(c) = charts::db_size(r) {
        chart(&mut out, &c);
    }
    section(&mut out, &tables::efficiency_relative(r));
    section(&mut out, &tables::latency(r));
    per_step(&mut out, r);
    if let Some(t) = tables::problems(r) {
        out.push_str("<h2>Errors and failed steps</h2>\n");
        table(&mut out, &t);
    }
    out.push_str("<h2>Runs</h2>\n");
    for run in &r.runs {
        let h = &run.host;
        let _ = writeln!(
            out,
            "<details><summary>{}: host <b>{}</b>, started {}, {:?}</summary><table>\
             <tr><td>CPU</td><td>{}, {} cores</td></tr><tr><td>memory</td><td>{}</td></tr>\
             <tr><td>kernel</td><td>Linux {}{}</td></tr><tr><td>relbench</td><td>{}</td></tr>\
             <tr><td>sampler</td><td>{}</td></tr><tr><td>plan</td><td>{}</td></tr></table>\
             <pre>{}</pre></details>",
            escape(&run.dir),
            escape(&h.hostname),
            escape(&run.started),
            run.status,
            escape(&h.cpu_model),
            h.cores,
            fmt_bytes(h.memory_bytes),
            escape(&h.kernel),
            if h.os.is_empty() {
                String::new()
            } else {
                format!(" ({})", escape(&h.os))
            },
            escape(&run.relbench_version),
            escape(&super::sampler_cost(run)),
            escape(&run.plan_source),
            escape(&run.plan_text)
        );
    }
    out.push_str("<h2>Targets</h2>\n");
    for t in &r.targets {
        let _ = write!(
            out,
            "<details><summary><b>{}</b>: {} {} on {}</summary><table>",
            escape(&t.name),
            escape(&t.engine),
            escape(&t.version),
            escape(&t.host)
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
