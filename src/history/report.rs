//! `relbench history report`: the history laid out over builds. The
//! model (`HistoryReport`) is computed once from the history and the
//! search's outcome; Markdown, HTML (with an SVG chart per series, its
//! change points marked) and JSON only lay it out.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::changes::{fmt_p, ChangePoint, Outcome, State};
use super::History;
use crate::compare::median;

#[derive(Debug, Clone, Serialize)]
pub struct HistoryReport {
    /// Builds in order.
    pub builds: Vec<String>,
    pub groups: Vec<Group>,
    /// Change points found now that nobody acknowledged or ignored.
    pub open: Vec<ChangePoint>,
    pub outcome: Summary,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub series: usize,
    pub tested: usize,
    pub changes: usize,
    pub below_floor: usize,
    pub disturbed_left_out: usize,
}

/// The series of one workload group on one configuration and host.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub title: String,
    pub config: String,
    pub host: String,
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Line {
    pub step: String,
    pub unit: String,
    /// Median throughput of each build's quiet repeats (`None`: not
    /// measured there), in build order.
    pub medians: Vec<Option<f64>>,
    pub floor: Option<f64>,
    /// Change points: (index of the first build after, magnitude, id, state).
    pub changes: Vec<(usize, f64, i64, State)>,
}

pub fn model(h: &History, o: &Outcome) -> HistoryReport {
    let mut groups: Vec<Group> = Vec::new();
    for (si, s) in h.series.iter().enumerate() {
        let data = &h.data[si];
        let mut medians = vec![None; h.builds.len()];
        for p in &data.points {
            medians[p.build] = median(&mut p.values.clone());
        }
        let line = Line {
            step: s.step.clone(),
            unit: s.unit.clone(),
            medians,
            floor: data.floor,
            changes: o
                .points
                .iter()
                .filter(|c| c.series_index == si)
                .map(|c| (c.after_place, c.magnitude, c.id, c.state))
                .collect(),
        };
        let title = format!(
            "{} · config {} · host {}",
            if s.group.is_empty() {
                "steps"
            } else {
                &s.group
            },
            s.config,
            s.host
        );
        match groups.iter_mut().find(|g| g.title == title) {
            Some(g) => g.lines.push(line),
            None => groups.push(Group {
                title,
                config: s.config_text.clone(),
                host: h.hosts.get(&s.host).cloned().unwrap_or_default(),
                lines: vec![line],
            }),
        }
    }
    HistoryReport {
        builds: h.builds.iter().map(|b| b.name.clone()).collect(),
        groups,
        open: o
            .points
            .iter()
            .filter(|c| c.state == State::New)
            .cloned()
            .collect(),
        outcome: Summary {
            series: o.series,
            tested: o.tested,
            changes: o.points.len(),
            below_floor: o.below_floor,
            disturbed_left_out: o.disturbed_left_out,
        },
    }
}

fn summary_line(r: &HistoryReport) -> String {
    format!(
        "{} series over {} builds; {} splits tested (Benjamini–Hochberg at 5% over all of them); {} change points, \
         {} open; {} significant splits within their series' A/A floor not counted; {} disturbed repeats left out.",
        r.outcome.series,
        r.builds.len(),
        r.outcome.tested,
        r.outcome.changes,
        r.open.len(),
        r.outcome.below_floor,
        r.outcome.disturbed_left_out
    )
}

pub fn markdown(r: &HistoryReport) -> String {
    let mut s = String::from("# History\n\n");
    let _ = writeln!(s, "{}\n", summary_line(r));
    s.push_str("## Open change points\n\n");
    if r.open.is_empty() {
        s.push_str("None.\n\n");
    } else {
        s.push_str("| id | step | change | interval | between | p | why | config | host |\n|---|---|---|---|---|---|---|---|---|\n");
        for c in &r.open {
            let _ = writeln!(
                s,
                "| {} | {} | ×{:.3} | {} | {} → {} | {} | {} | {} | {} |",
                c.id,
                c.step,
                c.magnitude,
                c.interval
                    .as_ref()
                    .map_or("—".into(), |i| format!("{:.3}–{:.3}", i.lo, i.hi)),
                c.before,
                c.after,
                fmt_p(c.p),
                c.explanation.replace('|', "/"),
                c.config,
                c.host
            );
        }
        s.push('\n');
    }
    for g in &r.groups {
        let _ = writeln!(s, "## {}\n\nHost: {}\n", g.title, g.host);
        let _ = writeln!(s, "| step | {} |", r.builds.join(" | "));
        let _ = writeln!(s, "|---|{}", "---|".repeat(r.builds.len()));
        for l in &g.lines {
            let cells: Vec<String> = l
                .medians
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let mark = if l.changes.iter().any(|c| c.0 == i) {
                        " ◆"
                    } else {
                        ""
                    };
                    m.map_or("—".into(), |v| format!("{v:.0}{mark}"))
                })
                .collect();
            let _ = writeln!(s, "| {} ({}) | {} |", l.step, l.unit, cells.join(" | "));
        }
        s.push('\n');
    }
    s
}

fn esc(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One series over builds: its medians as a line, each change point a
/// red rule before the first build after it.
pub fn svg(l: &Line, builds: &[String]) -> String {
    let (w, h, pad) = (480.0, 120.0, 24.0);
    let vals: Vec<f64> = l.medians.iter().flatten().copied().collect();
    let (lo, hi) = vals
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    let span = (hi - lo).max(hi.abs() * 0.02).max(1e-9);
    let n = builds.len().max(2) as f64;
    let x = |i: usize| pad + i as f64 * (w - 2.0 * pad) / (n - 1.0);
    let y = |v: f64| h - pad - (v - lo) / span * (h - 2.0 * pad);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img"><title>{}</title>"#,
        esc(&l.step)
    );
    for c in &l.changes {
        let cx = (x(c.0) + x(c.0.saturating_sub(1))) / 2.0;
        let _ = write!(
            s,
            r##"<line x1="{cx:.1}" y1="{}" x2="{cx:.1}" y2="{}" stroke="#c0392b" stroke-dasharray="3,2"><title>#{} ×{:.3}</title></line>"##,
            pad / 2.0,
            h - pad / 2.0,
            c.2,
            c.1
        );
    }
    let pts: Vec<String> = l
        .medians
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.map(|v| format!("{:.1},{:.1}", x(i), y(v))))
        .collect();
    let _ = write!(
        s,
        r##"<polyline fill="none" stroke="#2c3e50" stroke-width="1.5" points="{}"/>"##,
        pts.join(" ")
    );
    for (i, m) in l.medians.iter().enumerate() {
        if let Some(v) = m {
            let _ = write!(
                s,
                r##"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="#2c3e50"><title>{}: {v:.0}</title></circle>"##,
                x(i),
                y(*v),
                esc(&builds[i])
            );
        }
    }
    if let (Some(first), Some(last)) = (builds.first(), builds.last()) {
        let _ = write!(
            s,
            r#"<text x="{pad}" y="{}" font-size="10">{}</text><text x="{}" y="{}" font-size="10" text-anchor="end">{}</text>"#,
            h - 4.0,
            esc(first),
            w - pad,
            h - 4.0,
            esc(last)
        );
    }
    s.push_str("</svg>");
    s
}

pub fn html(r: &HistoryReport) -> String {
    let mut s = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>relbench history</title>\
         <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}\
         .s{display:inline-block;margin:4px;vertical-align:top}</style></head><body><h1>History</h1>",
    );
    let _ = write!(
        s,
        "<p>{}</p><h2>Open change points</h2>",
        esc(&summary_line(r))
    );
    if r.open.is_empty() {
        s.push_str("<p>None.</p>");
    } else {
        s.push_str("<table><tr><th>id</th><th>step</th><th>change</th><th>interval</th><th>between</th><th>p</th><th>why</th><th>config</th><th>host</th></tr>");
        for c in &r.open {
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td>×{:.3}</td><td>{}</td><td>{} → {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                c.id,
                esc(&c.step),
                c.magnitude,
                c.interval
                    .as_ref()
                    .map_or("—".into(), |i| format!("{:.3}–{:.3}", i.lo, i.hi)),
                esc(&c.before),
                esc(&c.after),
                fmt_p(c.p),
                esc(&c.explanation),
                esc(&c.config),
                esc(&c.host)
            );
        }
        s.push_str("</table>");
    }
    for g in &r.groups {
        let _ = write!(
            s,
            "<h2>{}</h2><p>Host: {}</p><details><summary>configuration</summary><pre>{}</pre></details>",
            esc(&g.title),
            esc(&g.host),
            esc(&g.config)
        );
        for l in &g.lines {
            let _ = write!(
                s,
                "<div class=\"s\"><div>{} ({})</div>{}</div>",
                esc(&l.step),
                esc(&l.unit),
                svg(l, &r.builds)
            );
        }
    }
    s.push_str("</body></html>\n");
    s
}

/// Writes the report's formats into `out`; returns the files written.
pub fn write(r: &HistoryReport, out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let files = [
        ("history.md", markdown(r)),
        ("history.html", html(r)),
        ("history.json", serde_json::to_string_pretty(r)? + "\n"),
    ];
    let mut written = Vec::new();
    for (name, body) in files {
        let p = out.join(name);
        crate::util::write_file(&p, body.as_bytes())?;
        written.push(p);
    }
    Ok(written)
}
