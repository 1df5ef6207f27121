//! The overview a study is read by first: a heat map of relative
//! throughput, steps (in sequence order, grouped) × targets (in plan
//! order, usually version order), and per group a line chart of each
//! step's relative throughput across the ordered targets, the "over time"
//! view. Both are SVG drawn from the model: the HTML page inlines them,
//! the Markdown links them.
//!
//! A heat-map cell is coloured by the same verdict as the tables' cells
//! (`Cell::verdict`): red past 0.95 and green past 1.05, deeper the
//! further from 1 (full at ×2 or ×½); white within 5% or within the A/A
//! noise floor; grey when the change cannot be judged (not significant,
//! disturbed, a missed SLA). Every cell is a `<rect class="heat">` with a
//! `<title>` tooltip: both throughputs, the significance and the cost that
//! moved most.

use std::fmt::Write;

use super::escape::escape;
use super::svg::{colour, nice_ceiling, row_label, trim, Chart, Svg};
use crate::compare::{Cell, Method, Report, Row, Verdict};
use crate::measure::units::{fmt_ratio, fmt_throughput};
use crate::workload::Group;

/// Red and green at their deepest (×½ and ×2), and the palest they start
/// from at the threshold.
const RED: (f64, f64, f64) = (192.0, 57.0, 43.0);
const GREEN: (f64, f64, f64) = (30.0, 132.0, 73.0);
const PALE_RED: (f64, f64, f64) = (251.0, 227.0, 224.0);
const PALE_GREEN: (f64, f64, f64) = (227.0, 244.0, 225.0);
const GREY: &str = "#e6e6e6";
/// A disturbed cell's fill: neither grey nor red nor green.
const DISTURBED: &str = "#dcd6f0";

fn mix(a: (f64, f64, f64), b: (f64, f64, f64), t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    let c = |x: f64, y: f64| (x + (y - x) * t).round() as u8;
    format!("#{:02x}{:02x}{:02x}", c(a.0, b.0), c(a.1, b.1), c(a.2, b.2))
}

/// A cell's fill and its text colour.
pub fn heat(c: &Cell) -> (String, &'static str) {
    let (Some(rel), Some(v)) = (c.relative, c.verdict()) else {
        return ("#fafafa".into(), "#999");
    };
    // Full colour at ×2 or ×½.
    let depth = (rel.ln().abs() / 2f64.ln()).min(1.0);
    match v {
        Verdict::Worse => (
            mix(PALE_RED, RED, depth),
            if depth > 0.5 { "#fff" } else { "#000" },
        ),
        Verdict::Better => (
            mix(PALE_GREEN, GREEN, depth),
            if depth > 0.5 { "#fff" } else { "#000" },
        ),
        Verdict::Same | Verdict::Noise => ("#ffffff".into(), "#000"),
        // Disturbed is told apart from "not significant" at a glance: its
        // own pale violet (and a `*` on the figure), never red or green.
        Verdict::Disturbed => (DISTURBED.into(), "#3b2f6b"),
        Verdict::Unsure | Verdict::TooShort | Verdict::Untested => (GREY.into(), "#555"),
    }
}

/// The tooltip of one cell: both throughputs, the test, the cost.
fn tip(r: &Report, row: &Row, ti: usize) -> String {
    let c = &row.cells[ti];
    let base = &row.cells[r.base_of[ti]];
    let unit = row.unit.name();
    let mut s = format!(
        "{} c{}, {} ÷ {}",
        row.title(),
        row.clients,
        r.targets[ti].name,
        r.targets[r.base_of[ti]].name
    );
    match c.relative {
        Some(rel) => {
            let _ = write!(
                s,
                ": {rel:.2} ({} → {} {unit})",
                base.throughput.map_or("—".into(), fmt_throughput),
                c.throughput.map_or("—".into(), fmt_throughput)
            );
        }
        None => s.push_str(": no ratio"),
    }
    if let Some(sig) = &c.significance {
        let test = match sig.method {
            Method::RankSum => "rank-sum over repeats",
            Method::PerSecond => "per-second test",
        };
        let _ = write!(s, "; p={:.3} ({test})", sig.p_value);
        if let Some(i) = sig.interval {
            let _ = write!(
                s,
                ", {:.0}% interval {:.2}–{:.2}",
                i.level * 100.0,
                i.lo,
                i.hi
            );
        }
    }
    match c.verdict() {
        Some(Verdict::Disturbed) => s.push_str("; disturbed, not judged"),
        Some(Verdict::Noise) => s.push_str("; within the A/A noise floor"),
        Some(Verdict::Unsure) => s.push_str("; not significant"),
        Some(Verdict::TooShort) => s.push_str("; a window too short to judge"),
        Some(Verdict::Untested) => {
            s.push_str("; not tested (one window a side and no A/A pairs, or short windows)")
        }
        _ => {}
    }
    if let Some((k, ratio)) = c.moved_most(base) {
        let _ = write!(s, "; {} ×{}", k.short(), fmt_ratio(ratio));
    }
    s
}

/// The heat map of every step × every target compared with a base.
pub fn heatmap(r: &Report) -> Option<Chart> {
    let targets: Vec<usize> = r.columns().into_iter().filter(|&i| !r.is_base(i)).collect();
    if targets.is_empty() || r.rows.is_empty() {
        return None;
    }
    let (cw, ch) = (40.0, 16.0);
    let labels: Vec<String> = r.rows.iter().map(|row| row_label(r, row)).collect();
    let left = 12.0 + labels.iter().map(|l| l.chars().count()).max().unwrap_or(4) as f64 * 6.2;
    let names: Vec<&str> = targets
        .iter()
        .map(|&i| r.targets[i].name.as_str())
        .collect();
    let top = 30.0 + names.iter().map(|n| n.chars().count()).max().unwrap_or(4) as f64 * 4.7 + 8.0;
    let groups: Vec<Group> = Group::ALL
        .into_iter()
        .filter(|g| r.rows_in(*g).next().is_some())
        .collect();
    let lines = r.rows.len() + groups.len();
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(4) as f64 * 4.7;
    let width = left + cw * targets.len() as f64 + 16.0 + longest;
    let height = top + ch * lines as f64 + 10.0;
    let title = format!("Relative throughput (÷ {})", r.base);
    let mut svg = Svg::new(width.max(320.0), height, &title);
    for (k, name) in names.iter().enumerate() {
        // Up and to the right from the column's foot, clear of the
        // group headings on the left.
        let x = left + cw * (k as f64 + 0.5);
        let y = top - 4.0;
        svg.text(
            x,
            y,
            "start",
            &format!(" transform=\"rotate(-45 {x:.1} {y:.1})\""),
            name,
        );
    }
    let mut y = top;
    for g in groups {
        svg.text(4.0, y + 12.0, "start", " font-weight=\"bold\"", g.title());
        y += ch;
        for row in r.rows_in(g) {
            let label = row_label(r, row);
            svg.text(left - 6.0, y + 12.0, "end", "", &label);
            for (k, &ti) in targets.iter().enumerate() {
                let c = &row.cells[ti];
                let (fill, ink) = heat(c);
                let x = left + cw * k as f64;
                let _ = write!(
                    svg.out,
                    "<rect class=\"heat\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\" stroke=\"#fff\"><title>{}</title></rect>",
                    cw - 1.0,
                    ch - 1.0,
                    escape(&tip(r, row, ti))
                );
                let mark = if c.verdict() == Some(Verdict::Disturbed) {
                    "*"
                } else {
                    ""
                };
                let text = c.relative.map_or("—".into(), |v| format!("{v:.2}{mark}"));
                svg.text(
                    x + cw / 2.0,
                    y + 11.5,
                    "middle",
                    &format!(" font-size=\"9\" fill=\"{ink}\" pointer-events=\"none\""),
                    &text,
                );
            }
            y += ch;
        }
    }
    Some(Chart {
        file: "overview-heatmap.svg".into(),
        title,
        svg: svg.finish(),
    })
}

/// Per group: each step's relative throughput across the targets in plan
/// order, the base included at 1, one labelled line per step.
pub fn over_targets(r: &Report, g: Group) -> Option<Chart> {
    // One base for the whole line (several hosts each have their own).
    let base = r.base_of.first().copied()?;
    let order: Vec<usize> = (0..r.targets.len())
        .filter(|&i| r.base_of[i] == base)
        .collect();
    let rows: Vec<&Row> = r.rows_in(g).collect();
    if order.len() < 2 || rows.is_empty() {
        return None;
    }
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|row| order.iter().filter_map(|&i| row.cells[i].relative))
        .collect();
    let hi = values.iter().copied().fold(1.2, f64::max).min(4.0);
    let lo = values.iter().copied().fold(0.8, f64::min).max(0.0);
    let (y_lo, y_hi) = ((lo * 10.0).floor() / 10.0, nice_ceiling(hi));
    let names: Vec<&str> = order.iter().map(|&i| r.targets[i].name.as_str()).collect();
    let labels: Vec<String> = rows.iter().map(|row| row_label(r, row)).collect();
    let label_w = labels.iter().map(|l| l.chars().count()).max().unwrap_or(4) as f64 * 6.0;
    let (left, top_m, plot_h) = (44.0, 30.0, 200.0);
    let step_x = (560.0 / (order.len() - 1) as f64).clamp(28.0, 90.0);
    let plot_w = step_x * (order.len() - 1) as f64;
    let bottom = 12.0 + names.iter().map(|n| n.chars().count()).max().unwrap_or(4) as f64 * 4.7;
    let width = left + plot_w + 16.0 + label_w;
    let height = top_m + plot_h + bottom;
    let title = format!(
        "{}: relative throughput across targets (÷ {})",
        g.title(),
        r.targets[base].name
    );
    let mut svg = Svg::new(width, height, &title);
    let y = |v: f64| top_m + plot_h - ((v.clamp(y_lo, y_hi) - y_lo) / (y_hi - y_lo)) * plot_h;
    let x = |k: usize| left + step_x * k as f64;
    let step = ((y_hi - y_lo) / 5.0).max(0.05);
    let step = nice_ceiling(step);
    let mut t = (y_lo / step).ceil() * step;
    let mut tick_list = Vec::new();
    while t <= y_hi + 1e-9 {
        tick_list.push((t, trim(t)));
        t += step;
    }
    svg.y_axis(left, left + plot_w, &tick_list, y);
    svg.line(
        left,
        y(1.0),
        left + plot_w,
        y(1.0),
        "stroke=\"#333\" stroke-dasharray=\"4 3\"",
    );
    for (k, name) in names.iter().enumerate() {
        svg.slanted(x(k) + 3.0, top_m + plot_h + 10.0, name);
    }
    // Direct labels at the right end, nudged apart so they do not overlap.
    let mut ends: Vec<(f64, usize)> = Vec::new();
    for (si, row) in rows.iter().enumerate() {
        let pts: Vec<(f64, f64)> = order
            .iter()
            .enumerate()
            .filter_map(|(k, &ti)| Some((x(k), y(row.cells[ti].relative?))))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let tip = format!(
            "{}: {}",
            labels[si],
            order
                .iter()
                .map(|&ti| row.cells[ti]
                    .relative
                    .map_or("—".into(), |v| format!("{} {v:.2}", r.targets[ti].name)))
                .collect::<Vec<_>>()
                .join(", ")
        );
        svg.polyline(&pts, colour(si), "", &tip);
        // A point from a disturbed window is hollow: drawn, not judged.
        let disturbed: Vec<bool> = order
            .iter()
            .filter(|&&ti| row.cells[ti].relative.is_some())
            .map(|&ti| row.cells[ti].is_disturbed())
            .collect();
        for ((px, py), hollow) in pts.iter().zip(disturbed) {
            let fill = if hollow { "#fff" } else { colour(si) };
            let _ = write!(
                svg.out,
                "<circle class=\"{}\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"{}\" fill=\"{fill}\" stroke=\"{}\"/>",
                if hollow { "disturbed" } else { "point" },
                if hollow { 3.0 } else { 2.2 },
                colour(si)
            );
        }
        ends.push((pts.last().expect("not empty").1, si));
    }
    ends.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut last = f64::MIN;
    for (py, si) in ends {
        let py = py.max(last + 11.0);
        last = py;
        svg.text(
            left + plot_w + 6.0,
            py + 4.0,
            "start",
            &format!(" fill=\"{}\"", colour(si)),
            &labels[si],
        );
    }
    Some(Chart {
        file: format!("over-targets-{}.svg", g.name()),
        title,
        svg: svg.finish(),
    })
}

/// Every overview chart: the heat map, then a line chart per group.
pub fn all(r: &Report) -> Vec<Chart> {
    heatmap(r)
        .into_iter()
        .chain(Group::ALL.iter().filter_map(|g| over_targets(r, *g)))
        .collect()
}
