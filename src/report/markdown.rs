//! Markdown: pastes into a blog post or an issue. Colour cannot be carried
//! in Markdown, so a ratio past a threshold gets 🔴 or 🟢.

use std::fmt::Write;

use super::charts;
use super::tables::{self, Section, Table, Text};
use super::{fmt_bytes, Report, Verdict};

/// Where the charts go, relative to the report.
pub const CHARTS_DIR: &str = "charts";

fn image(out: &mut String, c: &charts::Chart) {
    let _ = writeln!(out, "![{}]({CHARTS_DIR}/{})\n", c.title, c.file);
}

fn cell(t: &Text) -> String {
    let text = t.text.replace('|', "\\|").replace('\n', " ");
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

fn section(out: &mut String, s: &Section) {
    let _ = writeln!(out, "## {}\n\n{}\n", s.title, s.intro);
    for (g, t) in &s.groups {
        let _ = writeln!(out, "### {}\n", g.title());
        table(out, t);
    }
}

pub fn render(r: &Report) -> String {
    let mut out = String::from("# relbench report\n\n");
    let names: Vec<&str> = r.targets.iter().map(|t| t.name.as_str()).collect();
    let _ = writeln!(
        out,
        "Targets: {}. Base: **{}**{}.\n",
        names.join(", "),
        r.base,
        if r.by_host() {
            format!(" on each host ({})", r.hosts.join(", "))
        } else {
            String::new()
        }
    );
    for run in &r.runs {
        if run.status != crate::results::RunStatus::Complete {
            let _ = writeln!(
                out,
                "> **Note:** the run in `{}` is {:?}, not complete: steps it did not reach are missing below.\n",
                run.dir, run.status
            );
        }
    }
    let lines = tables::summary_lines(r);
    if !lines.is_empty() {
        out.push_str("## Summary\n\n");
        for (head, details) in lines {
            let _ = writeln!(out, "- {head}");
            for d in details {
                let _ = writeln!(out, "  - {d}");
            }
        }
        out.push('\n');
    }
    let rel = tables::relative(r);
    let _ = writeln!(out, "## {}\n\n{}\n", rel.title, rel.intro);
    for (g, t) in &rel.groups {
        let _ = writeln!(out, "### {}\n", g.title());
        table(&mut out, t);
        for c in charts::relative(r, *g) {
            image(&mut out, &c);
        }
    }
    section(&mut out, &tables::absolute(r));
    if let Some(t) = tables::sla(r) {
        let _ = writeln!(
            out,
            "## Insert Benchmark: background writes and the SLA\n\n{}\n",
            tables::SLA_INTRO
        );
        table(&mut out, &t);
    }
    if let Some(t) = tables::response_times(r) {
        let _ = writeln!(
            out,
            "## Insert Benchmark: response times\n\n{}\n",
            tables::RESPONSE_INTRO
        );
        table(&mut out, &t);
    }
    section(&mut out, &tables::efficiency(r));
    if let Some(c) = charts::db_size(r) {
        image(&mut out, &c);
    }
    section(&mut out, &tables::efficiency_relative(r));
    section(&mut out, &tables::latency(r));
    if let Some(t) = tables::problems(r) {
        out.push_str("## Errors and failed steps\n\n");
        table(&mut out, &t);
    }
    out.push_str("## Per step\n\nThroughput in each second of the measured window (stalls and write-back show here) and the latency percentiles of one event, per target.\n\n");
    for s in charts::per_step(r) {
        let _ = writeln!(out, "### {}\n", s.title);
        for c in [&s.rate, &s.latency] {
            match c {
                Ok(c) => image(&mut out, c),
                Err(why) => {
                    let _ = writeln!(out, "_{why}_\n");
                }
            }
        }
        for c in &s.classes {
            image(&mut out, c);
        }
    }
    out.push_str("## Runs\n\n");
    for run in &r.runs {
        let h = &run.host;
        let _ = writeln!(
            out,
            "- `{}`: {}, started {}, {:?}; relbench {}; host {}: {}, {} cores, {} memory, Linux {}{}; {}",
            run.dir,
            run.plan_source,
            run.started,
            run.status,
            run.relbench_version,
            h.hostname,
            h.cpu_model,
            h.cores,
            fmt_bytes(h.memory_bytes),
            h.kernel,
            if h.os.is_empty() { String::new() } else { format!(" ({})", h.os) },
            super::sampler_cost(run)
        );
    }
    out.push_str("\n## Targets\n\n| target | engine | version | configuration | data on |\n|:--|:--|:--|:--|:--|\n");
    for t in &r.targets {
        let config: Vec<String> = t.config.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            t.name,
            t.engine,
            t.version,
            config.join(" "),
            t.filesystem.as_deref().unwrap_or("not recorded")
        );
    }
    out
}
