//! `relbench history report` laid out: Markdown, HTML with an SVG chart
//! per series (its change points marked, its A/A floor a band) and JSON,
//! from the model `history::report` computed once. Escaped as every page
//! of relbench's is (`escape`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::escape::escape;
use crate::compare::median;
use crate::history::changes::fmt_p;
use crate::history::report::{HistoryReport, Line};

pub fn markdown(r: &HistoryReport) -> String {
    let mut s = String::from("# History\n\n");
    let _ = writeln!(s, "{}\n", r.summary);
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
                c.interval_text().unwrap_or_else(|| "—".into()),
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
                    match m {
                        Some(v) => format!("{v:.0}{mark}"),
                        // Measured, but no repeat was quiet.
                        None if l.all_left_out.contains(&i) => "left out".into(),
                        None => "—".into(),
                    }
                })
                .collect();
            let _ = writeln!(s, "| {} ({}) | {} |", l.step, l.unit, cells.join(" | "));
        }
        s.push('\n');
    }
    s
}

/// A figure in three significant digits, with k or M.
fn short(v: f64) -> String {
    let (x, unit) = match v.abs() {
        a if a >= 1e6 => (v / 1e6, "M"),
        a if a >= 1e3 => (v / 1e3, "k"),
        _ => (v, ""),
    };
    let digits = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{x:.digits$}{unit}")
}

/// One series over builds: its medians as a line, the series' A/A floor
/// as a grey band around their median (a move inside it is noise), each
/// change point a red rule before the first build after it. The scale
/// spans at least ±5% of the median, so that noise does not fill the
/// chart as a cliff would.
pub fn svg(l: &Line, builds: &[String]) -> String {
    let (w, h, left, pad) = (480.0, 130.0, 44.0, 20.0);
    let mut vals: Vec<f64> = l.medians.iter().flatten().copied().collect();
    let center = median(&mut vals).unwrap_or(0.0);
    let reach = l.floor.unwrap_or(0.0).max(0.05);
    // Throughput is never below 0, however wide the floor.
    let (lo, hi) = vals.iter().fold(
        ((center * (1.0 - reach)).max(0.0), center * (1.0 + reach)),
        |(a, b), v| (a.min(*v), b.max(*v)),
    );
    let span = (hi - lo).max(1e-9);
    let n = builds.len().max(2) as f64;
    let x = |i: usize| left + i as f64 * (w - left - pad) / (n - 1.0);
    let y = |v: f64| h - pad - (v - lo) / span * (h - 2.0 * pad);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img"><title>{}</title>"#,
        escape(&l.step)
    );
    if let Some(f) = l.floor {
        let (top, bottom) = (y(center * (1.0 + f)), y((center * (1.0 - f)).max(lo)));
        let _ = write!(
            s,
            r##"<rect x="{left}" y="{top:.1}" width="{:.1}" height="{:.1}" fill="#eee"><title>A/A floor ±{:.1}%</title></rect>"##,
            w - left - pad,
            (bottom - top).max(0.5),
            f * 100.0
        );
    }
    for (v, anchor) in [(hi, "hanging"), (lo, "auto")] {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end" dominant-baseline="{anchor}">{}</text>"#,
            left - 4.0,
            y(v),
            short(v)
        );
    }
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
                escape(&builds[i])
            );
        }
    }
    // A build whose every repeat was left out: a hollow mark on the
    // axis, so a gap is seen as one.
    for &i in &l.all_left_out {
        let _ = write!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="none" stroke="#999" class="left-out"><title>{}: every repeat left out (not quiet)</title></circle>"##,
            x(i),
            h - pad,
            escape(&builds[i])
        );
    }
    if let (Some(first), Some(last)) = (builds.first(), builds.last()) {
        let _ = write!(
            s,
            r#"<text x="{left}" y="{}" font-size="10">{}</text><text x="{}" y="{}" font-size="10" text-anchor="end">{}</text>"#,
            h - 4.0,
            escape(first),
            w - pad,
            h - 4.0,
            escape(last)
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
        escape(&r.summary)
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
                escape(&c.step),
                c.magnitude,
                c.interval_text().unwrap_or_else(|| "—".into()),
                escape(&c.before),
                escape(&c.after),
                fmt_p(c.p),
                escape(&c.explanation),
                escape(&c.config),
                escape(&c.host)
            );
        }
        s.push_str("</table>");
    }
    for g in &r.groups {
        let _ = write!(
            s,
            "<h2>{}</h2><p>Host: {}</p><details><summary>configuration</summary><pre>{}</pre></details>",
            escape(&g.title),
            escape(&g.host),
            escape(&g.config)
        );
        for l in &g.lines {
            let _ = write!(
                s,
                "<div class=\"s\"><div>{} ({})</div>{}</div>",
                escape(&l.step),
                escape(&l.unit),
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
    // A directory another user can change, or a link on the way, would put
    // the files where that user chooses.
    crate::util::secure_dir(out, &[crate::util::my_uid()], "the history report's --out")?;
    let mut written = Vec::new();
    for (name, body) in files {
        let p = out.join(name);
        crate::util::write_file(&p, body.as_bytes())?;
        written.push(p);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::changes::{ChangePoint, Outcome, State};
    use crate::history::detect::{Point, Series};
    use crate::history::report::model;
    use crate::history::{Build, History, SeriesInfo};

    /// A history of four builds, one series with a 10% drop at the third.
    fn history() -> (History, Outcome) {
        let builds = (1..=4)
            .map(|i| Build {
                id: i,
                name: format!("10.11.{i}"),
                version: format!("10.11.{i}-MariaDB"),
                order: None,
            })
            .collect();
        let info = SeriesInfo {
            id: 1,
            step: "point-query c4".into(),
            config: "c0ffee".into(),
            config_text: r#"{"engine":"mariadb"}"#.into(),
            host: "h1".into(),
            group: "point".into(),
            unit: "ops/s".into(),
        };
        let data = Series {
            id: 1,
            points: (0..4)
                .map(|b| Point {
                    build: b,
                    values: vec![if b < 2 { 1000.0 } else { 900.0 }; 3],
                })
                .collect(),
            floor: Some(0.02),
        };
        let point = ChangePoint {
            id: 7,
            series_index: 0,
            step: "point-query c4".into(),
            config: "c0ffee".into(),
            host: "h1".into(),
            before: "10.11.2".into(),
            after: "10.11.3".into(),
            before_place: 1,
            after_place: 2,
            magnitude: 0.9,
            interval: None,
            p: 0.0004,
            floor: Some(0.02),
            explanation: "CPU/op ×1.11: new CPU overhead".into(),
            state: State::New,
        };
        let h = History {
            builds,
            series: vec![info],
            data: vec![data],
            disturbed_left_out: 1,
            all_left_out: vec![Vec::new()],
            hosts: [("h1".to_string(), "AMD EPYC (2 cores)".to_string())].into(),
        };
        let o = Outcome {
            series: 1,
            builds: 4,
            tested: 3,
            below_floor: 0,
            disturbed_left_out: 1,
            withdrawn: 0,
            points: vec![point],
        };
        (h, o)
    }

    #[test]
    fn a_history_report_in_markdown() {
        let (h, o) = history();
        insta::assert_snapshot!(markdown(&model(&h, &o)));
    }

    #[test]
    fn a_series_chart_marks_its_change_and_its_floor() {
        let (h, o) = history();
        let m = model(&h, &o);
        let svg = svg(&m.groups[0].lines[0], &m.builds);
        assert!(svg.contains("<title>#7 ×0.900</title>"), "{svg}");
        assert!(svg.contains("A/A floor ±2.0%"), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 4);
    }

    /// Regression: a build whose every repeat was left out (disturbed,
    /// too short) was silently missing from its chart.
    #[test]
    fn a_build_whose_every_repeat_was_left_out_is_marked_not_missing() {
        let (mut h, o) = history();
        h.data[0].points.retain(|p| p.build != 1);
        h.all_left_out = vec![vec![1]];
        let m = model(&h, &o);
        let svg = svg(&m.groups[0].lines[0], &m.builds);
        assert!(
            svg.contains("10.11.2: every repeat left out (not quiet)"),
            "{svg}"
        );
        let md = markdown(&m);
        assert!(md.contains("| 1000 | left out | 900 ◆ | 900 |"), "{md}");
    }

    /// Regression: the history's page had an escaper of its own, which
    /// left `'` as it was; a configuration's text or a build's name
    /// could end an attribute.
    #[test]
    fn the_history_page_escapes_quotes_as_every_page_does() {
        let (mut h, o) = history();
        h.builds[0].name = "it's <b>".into();
        h.series[0].config_text = "x' onmouseover='y".into();
        let page = html(&model(&h, &o));
        assert!(!page.contains("x' onmouseover"), "{page}");
        assert!(page.contains("x&#39; onmouseover=&#39;y"), "{page}");
        assert!(page.contains("it&#39;s &lt;b&gt;"), "{page}");
    }
}
