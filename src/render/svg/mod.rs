//! Charts as SVG text, drawn from the comparison model (which holds every
//! figure a chart shows; this file only places them): the HTML page
//! inlines them and the Markdown links them as files written beside it.
//! Plain SVG elements only (no script, no fonts to fetch), so a chart reads
//! the same offline, in a browser, or pasted into an issue.
//!
//! Every bar is a `<rect class="bar">` with a `<title>` giving its figure,
//! so a reader can hover for the number and a test can count the bars.

pub mod flame;
mod per_step;

use std::fmt::Write;

use super::escape::escape;
use crate::compare::{median, ClassLine, Report, Row};
use crate::measure::units::{fmt_bytes, fmt_latency};
use crate::workload::{insert, Group};
pub use per_step::per_step;

/// One colour per target, in report order: twenty that stay apart (the
/// first ten are Tableau's, which most colour-blind readers tell apart;
/// the next ten are their darker or lighter companions, so two targets
/// never share a colour below twenty). Charts with many series also label
/// lines directly, so no reader depends on colour alone.
const PALETTE: [&str; 20] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7",
    "#e15759", "#bab0ac", "#1f3f66", "#a0522d", "#2d6a27", "#6b3f63", "#3b7f7a", "#8c7a00",
    "#5c4033", "#c2185b", "#7f1d1d", "#555555",
];

pub fn colour(ti: usize) -> &'static str {
    PALETTE[ti % PALETTE.len()]
}

/// A drawn chart and the file name it gets beside a Markdown report.
#[derive(Debug, Clone)]
pub struct Chart {
    pub file: String,
    pub title: String,
    pub svg: String,
}

/// The charts of one row (step × clients): throughput per second and the
/// latency percentiles, or why one could not be drawn.
pub struct StepCharts {
    pub title: String,
    pub rate: Result<Chart, crate::measure::Unmeasured>,
    pub latency: Result<Chart, crate::measure::Unmeasured>,
    /// Insert Benchmark steps: inserts, deletes and queries per second, and
    /// the slowest response of each second.
    pub classes: Vec<Chart>,
}

/// A step or target label with characters safe in a file name.
pub(super) fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

/// A round number at or above `v`: 1, 2, 2.5 or 5 times a power of ten.
pub(super) fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|x| *x >= v * (1.0 - 1e-12))
        .unwrap_or(10.0 * p)
}

/// A finer round number at or above `v`, for where an axis is cut: the
/// cut should sit just above the bars it keeps whole.
fn fine_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|x| *x >= v * (1.0 - 1e-12))
        .unwrap_or(10.0 * p)
}

/// Tick values from 0 up to `top`, at round steps.
fn ticks(top: f64) -> Vec<f64> {
    let step = nice_ceiling(top / 5.0);
    let n = (top / step + 1e-9).floor() as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if v >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

pub(super) fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// An SVG document under construction.
pub(super) struct Svg {
    pub(super) out: String,
    /// The width it was made with, and the widest any legend reached:
    /// [`Svg::finish`] widens the chart to fit it.
    width: f64,
    needed: f64,
}

impl Svg {
    pub(super) fn new(w: f64, h: f64, title: &str) -> Self {
        // Wide enough for its title, which is drawn at x = 6 in 11 px
        // bold: 6.5 px a character in Chromium's sans-serif, 7 allowed.
        // (Two-target charts cut "Load: relative throughput across ta".)
        let w = w.max(12.0 + 7.0 * title.chars().count() as f64);
        let mut out = String::new();
        let _ = write!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"{w:.0}\" height=\"{h:.0}\" \
             viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"sans-serif\" font-size=\"11\" role=\"img\">\
             <title>{0}</title><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\
             <text x=\"6\" y=\"14\" font-weight=\"bold\">{0}</text>",
            escape(title)
        );
        Svg {
            out,
            width: w,
            needed: w,
        }
    }

    pub(super) fn text(&mut self, x: f64, y: f64, anchor: &str, extra: &str, s: &str) {
        let _ = write!(
            self.out,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\"{extra}>{}</text>",
            escape(s)
        );
    }

    pub(super) fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, style: &str) {
        let _ = write!(
            self.out,
            "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" {style}/>"
        );
    }

    fn bar(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, tip: &str) {
        let _ = write!(
            self.out,
            "<rect class=\"bar\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{fill}\"><title>{}</title></rect>",
            h.max(0.0),
            escape(tip)
        );
    }

    /// A line through `pts` (pixel coordinates).
    pub(super) fn polyline(&mut self, pts: &[(f64, f64)], stroke: &str, extra: &str, tip: &str) {
        let pts: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = write!(
            self.out,
            "<polyline class=\"series\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"1.5\"{extra} points=\"{}\"><title>{}</title></polyline>",
            pts.join(" "),
            escape(tip)
        );
    }

    /// An x-axis label written at 45°, ending at (x, y).
    pub(super) fn slanted(&mut self, x: f64, y: f64, s: &str) {
        self.text(
            x,
            y,
            "end",
            &format!(" transform=\"rotate(-45 {x:.1} {y:.1})\""),
            s,
        );
    }

    /// Coloured squares and names along the top.
    fn legend(&mut self, x0: f64, items: &[(String, &str)]) {
        let mut x = x0;
        for (name, fill) in items {
            let _ = write!(
                self.out,
                "<rect x=\"{x:.1}\" y=\"23\" width=\"10\" height=\"10\" fill=\"{fill}\"/>"
            );
            self.text(x + 14.0, 32.0, "start", "", name);
            // 6.5 px a character at 11 px, as Chromium draws it.
            let end = x + 14.0 + 6.5 * name.chars().count() as f64 + 6.0;
            self.needed = self.needed.max(end);
            x += 24.0 + 6.5 * name.chars().count() as f64;
        }
    }

    /// A linear y-axis from 0 to `top` with round ticks, and the legend of
    /// `targets`.
    fn frame(
        &mut self,
        left: f64,
        right: f64,
        top: f64,
        y: impl Fn(f64) -> f64,
        r: &Report,
        targets: &[usize],
    ) {
        let tick_list: Vec<(f64, String)> =
            ticks(top).into_iter().map(|t| (t, fmt_tick(t))).collect();
        self.y_axis(left, right, &tick_list, y);
        let items: Vec<(String, &str)> = targets
            .iter()
            .map(|&i| (r.targets[i].name.clone(), colour(i)))
            .collect();
        self.legend(left, &items);
    }

    /// Horizontal grid lines with labels at `ticks`, mapped by `y`.
    pub(super) fn y_axis(
        &mut self,
        left: f64,
        right: f64,
        ticks: &[(f64, String)],
        y: impl Fn(f64) -> f64,
    ) {
        for (v, label) in ticks {
            let py = y(*v);
            self.line(left, py, right, py, "stroke=\"#e4e4e4\"");
            self.text(left - 4.0, py + 4.0, "end", "", label);
        }
    }

    pub(super) fn finish(mut self) -> String {
        if self.needed > self.width {
            // A legend of many targets ran past the edge (twelve names
            // ended 750 px beyond a 500 px chart): widen the chart.
            let (old, new) = (
                format!("width=\"{:.0}\"", self.width),
                format!("width=\"{:.0}\"", self.needed),
            );
            let (old_box, new_box) = (
                format!("viewBox=\"0 0 {:.0} ", self.width),
                format!("viewBox=\"0 0 {:.0} ", self.needed),
            );
            self.out = self
                .out
                .replacen(&old, &new, 1)
                .replacen(&old_box, &new_box, 1);
        }
        self.out.push_str("</svg>");
        self.out
    }
}

/// Room for x-axis labels written at 45°: below the plot for the longest,
/// left of it for the first (about 4.7 px across and down per character
/// at 11 px).
fn label_margins(labels: &[String], cluster: f64, min_left: f64) -> (f64, f64) {
    let len = |s: &String| s.chars().count() as f64 * 4.7;
    let longest = labels.iter().map(len).fold(0.0, f64::max);
    let first = labels.first().map(len).unwrap_or(0.0);
    ((first - cluster / 2.0 + 8.0).max(min_left), longest + 16.0)
}

/// The label of a row on an x-axis: the step, and the clients when the
/// report has several client counts.
pub(super) fn row_label(r: &Report, row: &Row) -> String {
    let several = r.rows.iter().any(|x| x.id.clients != row.id.clients);
    if several {
        format!("{} c{}", row.title(), row.id.clients)
    } else {
        row.title()
    }
}

/// Where to cut the y-axis of a group's relative chart so one outlier
/// does not flatten the rest: above the tallest bar that is not more than
/// 2.5× the median (or 2.5 when the median is below 1). `None` when no bar
/// is that far above the others.
fn cut_at(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.to_vec();
    let m = median(&mut v)?.max(1.0);
    let limit = 2.5 * m;
    let rest = values
        .iter()
        .copied()
        .filter(|x| *x <= limit)
        .reduce(f64::max)?;
    let top = values.iter().copied().reduce(f64::max)?;
    let cut = fine_ceiling((rest * 1.05).max(1.1));
    (top > cut * 1.5).then_some(cut)
}

/// Per group: the relative throughput of each step and target as bars,
/// then, when one bar dwarfs the rest, the same chart with its y-axis cut
/// (the cut bars carry a break mark and their figure).
pub fn relative(r: &Report, g: Group) -> Vec<Chart> {
    let targets: Vec<usize> = r.columns().into_iter().filter(|&i| !r.is_base(i)).collect();
    let rows: Vec<&Row> = r.rows_in(g).collect();
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|row| targets.iter().filter_map(|&i| row.cells[i].test.relative))
        .collect();
    if targets.is_empty() || values.is_empty() {
        return Vec::new();
    }
    let full = values.iter().copied().fold(1.0, f64::max);
    let mut charts = vec![relative_bars(
        r,
        g,
        &rows,
        &targets,
        nice_ceiling(full * 1.05),
        None,
    )];
    if let Some(cut) = cut_at(&values) {
        charts.push(relative_bars(r, g, &rows, &targets, cut, Some(cut)));
    }
    charts
}

fn relative_bars(
    r: &Report,
    g: Group,
    rows: &[&Row],
    targets: &[usize],
    top: f64,
    cut: Option<f64>,
) -> Chart {
    let (bw, gap) = (16.0, 16.0);
    let cluster = bw * targets.len() as f64;
    let labels: Vec<String> = rows.iter().map(|row| row_label(r, row)).collect();
    let (left, bottom) = label_margins(&labels, cluster, 44.0);
    let (right, top_m, plot_h) = (12.0, 46.0, 190.0);
    let width = (left + right + rows.len() as f64 * (cluster + gap)).max(360.0);
    let height = top_m + plot_h + bottom;
    let title = match cut {
        None => format!("{}: throughput relative to {}", g.title(), r.base),
        Some(c) => format!(
            "{}: throughput relative to {}, y-axis cut at {}",
            g.title(),
            r.base,
            trim(c)
        ),
    };
    let mut svg = Svg::new(width, height, &title);
    let y = |v: f64| top_m + plot_h - (v.min(top) / top) * plot_h;
    svg.frame(left, width - right, top, y, r, targets);
    for (ri, row) in rows.iter().enumerate() {
        let x0 = left + gap / 2.0 + ri as f64 * (cluster + gap);
        for (k, &ti) in targets.iter().enumerate() {
            let Some(v) = row.cells[ti].test.relative else {
                continue;
            };
            let x = x0 + k as f64 * bw;
            if row.cells[ti].is_disturbed() {
                // Hollow: another program shared the window; drawn, not
                // judged.
                let tip = format!(
                    "{} {}: {:.2} (disturbed, not judged)",
                    r.targets[ti].name,
                    row_label(r, row),
                    v
                );
                let _ = write!(
                    svg.out,
                    "<rect class=\"bar disturbed\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#fff\" stroke=\"{}\" stroke-width=\"1.2\" stroke-dasharray=\"3 2\"><title>{}</title></rect>",
                    y(v),
                    bw - 2.0,
                    (y(0.0) - y(v)).max(0.0),
                    colour(ti),
                    escape(&tip)
                );
            } else {
                let tip = format!("{} {}: {:.2}", r.targets[ti].name, row_label(r, row), v);
                svg.bar(x, y(v), bw - 1.0, y(0.0) - y(v), colour(ti), &tip);
            }
            if cut.is_some() && v > top {
                // The break: a white band across the bar's top, and the
                // figure the bar would have reached.
                let yb = y(top) + 8.0;
                let _ = write!(
                    svg.out,
                    "<polygon class=\"cut\" points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"#fff\" stroke=\"#333\" stroke-width=\"0.6\"/>",
                    x - 2.0,
                    yb + 3.0,
                    x + bw + 1.0,
                    yb - 1.0,
                    x + bw + 1.0,
                    yb + 3.0,
                    x - 2.0,
                    yb + 7.0
                );
                svg.text(
                    x + bw / 2.0,
                    y(top) - 3.0,
                    "middle",
                    " font-size=\"9\"",
                    &format!("{v:.1}"),
                );
            }
        }
        svg.slanted(x0 + cluster / 2.0, top_m + plot_h + 10.0, &labels[ri]);
    }
    // The base's level.
    svg.line(
        left,
        y(1.0),
        width - right,
        y(1.0),
        "stroke=\"#333\" stroke-dasharray=\"4 3\"",
    );
    svg.line(left, y(0.0), width - right, y(0.0), "stroke=\"#999\"");
    Chart {
        file: format!(
            "relative-{}{}.svg",
            g.name(),
            if cut.is_some() { "-cut" } else { "" }
        ),
        title,
        svg: svg.finish(),
    }
}

/// The database size after each step of the first repeat, per target.
pub fn db_size(r: &Report) -> Option<Chart> {
    let cols = r.columns();
    let seq = &r.db_size;
    let max = seq.iter().flat_map(|k| k.bytes.iter().flatten()).max()?;
    let mib = *max as f64 / 1048576.0;
    let top = nice_ceiling(mib * 1.05);
    let (bw, gap) = (8.0, 10.0);
    let cluster = bw * cols.len() as f64;
    let labels: Vec<String> = seq
        .iter()
        .map(|k| format!("{} c{}", k.step, k.clients))
        .collect();
    let (left, bottom) = label_margins(&labels, cluster, 52.0);
    let (right, top_m, plot_h) = (12.0, 46.0, 160.0);
    let width = (left + right + seq.len() as f64 * (cluster + gap)).max(360.0);
    let title = "Database size after each step (repeat 1), MiB".to_string();
    let mut svg = Svg::new(width, top_m + plot_h + bottom, &title);
    let y = |v: f64| top_m + plot_h - (v / top) * plot_h;
    svg.frame(left, width - right, top, y, r, &cols);
    for (si, k) in seq.iter().enumerate() {
        let x0 = left + gap / 2.0 + si as f64 * (cluster + gap);
        for (j, &ti) in cols.iter().enumerate() {
            if let Some(b) = k.bytes[ti] {
                let v = b as f64 / 1048576.0;
                let tip = format!(
                    "{} after {} c{}: {}",
                    r.targets[ti].name,
                    k.step,
                    k.clients,
                    fmt_bytes(b)
                );
                svg.bar(
                    x0 + j as f64 * bw,
                    y(v),
                    bw - 1.0,
                    y(0.0) - y(v),
                    colour(ti),
                    &tip,
                );
            }
        }
        svg.slanted(x0 + cluster / 2.0, top_m + plot_h + 10.0, &labels[si]);
    }
    svg.line(left, y(0.0), width - right, y(0.0), "stroke=\"#999\"");
    Some(Chart {
        file: "db-size.svg".into(),
        title,
        svg: svg.finish(),
    })
}

/// A campaign's long steps: each step measured in intervals, its
/// throughput at the end of each interval, one line per target (the qps@N
/// chart of the studies). One chart per step and client count.
pub fn intervals(r: &Report) -> Vec<Chart> {
    let cols = r.columns();
    let mut keys: Vec<(String, u32)> = Vec::new();
    for row in &r.timeline {
        let Some(_) = row.id.step.interval else {
            continue;
        };
        let k = (
            row.id
                .step
                .title()
                .split(" @")
                .next()
                .unwrap_or_default()
                .to_string(),
            row.id.clients,
        );
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out = Vec::new();
    for (name, clients) in keys {
        let rows: Vec<_> = r
            .timeline
            .iter()
            .filter(|row| {
                row.id.clients == clients
                    && row.id.step.interval.is_some()
                    && row.id.step.title().split(" @").next() == Some(name.as_str())
            })
            .collect();
        let n = rows.len();
        if n < 2 {
            continue;
        }
        let v_max = rows
            .iter()
            .flat_map(|row| row.cells.iter().filter_map(|c| c.throughput))
            .fold(0.0, f64::max);
        if v_max <= 0.0 {
            continue;
        }
        let top = nice_ceiling(v_max * 1.05);
        let (left, right, top_m, plot_h, bottom, w) = (48.0, 10.0, 42.0, 120.0, 22.0, 340.0);
        let title = format!(
            "{name}, {clients} client{}: {} per interval",
            if clients == 1 { "" } else { "s" },
            rows[0].unit.name()
        );
        let mut svg = Svg::new(w, top_m + plot_h + bottom, &title);
        let x = |i: usize| left + (i as f64 + 0.5) / n as f64 * (w - left - right);
        let y = |v: f64| top_m + plot_h - v / top * plot_h;
        let tick_list: Vec<(f64, String)> =
            ticks(top).into_iter().map(|t| (t, fmt_tick(t))).collect();
        svg.y_axis(left, w - right, &tick_list, y);
        for &ti in &cols {
            let pts: Vec<(f64, f64)> = rows
                .iter()
                .enumerate()
                .filter_map(|(i, row)| Some((x(i), y(row.cells[ti].throughput?))))
                .collect();
            svg.polyline(&pts, colour(ti), "", &r.targets[ti].name);
        }
        svg.legend(
            left,
            &cols
                .iter()
                .map(|&i| (r.targets[i].name.clone(), colour(i)))
                .collect::<Vec<_>>(),
        );
        svg.line(left, y(0.0), w - right, y(0.0), "stroke=\"#999\"");
        svg.text(left, top_m + plot_h + 16.0, "start", "", "@1");
        svg.text(
            w - right,
            top_m + plot_h + 16.0,
            "end",
            "",
            &format!("@{n}"),
        );
        out.push(Chart {
            file: format!("intervals-{}-c{clients}.svg", slug(&name)),
            title,
            svg: svg.finish(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_numbers_round_up() {
        assert_eq!(nice_ceiling(1.07), 2.0);
        assert_eq!(nice_ceiling(2.2), 2.5);
        assert_eq!(nice_ceiling(0.31), 0.5);
        assert_eq!(nice_ceiling(130.0), 200.0);
        assert_eq!(ticks(2.5), vec![0.0, 0.5, 1.0, 1.5, 2.0, 2.5]);
        assert_eq!(ticks(1.2), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        assert_eq!(fine_ceiling(58.5), 60.0);
    }

    #[test]
    fn one_outlier_cuts_the_axis_above_the_rest() {
        // hot-points at 3× flattens 0.9–1.2.
        assert_eq!(cut_at(&[0.9, 1.0, 1.1, 1.2, 3.4]), Some(1.5));
        // Nothing far above the rest: no cut.
        assert_eq!(cut_at(&[0.9, 1.0, 1.1, 1.2, 1.6]), None);
        // WAL against rollback: writes ×5 and ×130 are both cut.
        assert_eq!(cut_at(&[1.0, 0.9, 1.1, 5.0, 130.0]), Some(1.2));
        // The quick plan's writes: delete at 120× over the rest's 2–53×.
        let w = [7.04, 27.1, 27.94, 52.58, 53.2, 9.91, 6.03, 2.23, 119.97];
        assert_eq!(cut_at(&w), Some(60.0));
    }

    /// CIE L*a*b* of an sRGB colour `#rrggbb`.
    fn lab(hex: &str) -> (f64, f64, f64) {
        let v = |i: usize| {
            let c = u8::from_str_radix(&hex[i..i + 2], 16).unwrap() as f64 / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        let (r, g, b) = (v(1), v(3), v(5));
        let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
        let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
        let f = |t: f64| {
            if t > 0.008856 {
                t.cbrt()
            } else {
                7.787 * t + 16.0 / 116.0
            }
        };
        (
            116.0 * f(y) - 16.0,
            500.0 * (f(x) - f(y)),
            200.0 * (f(y) - f(z)),
        )
    }

    /// Twenty targets get twenty colours, each pair at least ΔE 12 apart
    /// (CIE76; about 2.3 is the smallest difference one can see, 10 is
    /// plainly different side by side).
    #[test]
    fn twenty_targets_get_twenty_distinct_colours() {
        let colours: Vec<&str> = (0..20).map(colour).collect();
        for i in 0..20 {
            for j in 0..i {
                let (a, b) = (lab(colours[i]), lab(colours[j]));
                let de = ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2) + (a.2 - b.2).powi(2)).sqrt();
                assert!(
                    de >= 12.0,
                    "targets {j} and {i}: {} and {} are ΔE {de:.1} apart",
                    colours[j],
                    colours[i]
                );
            }
        }
    }

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(slug("scan.warm"), "scan.warm");
        assert_eq!(slug("a b/c"), "a_b_c");
    }
}
