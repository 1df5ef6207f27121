//! The overview a study is read by first: a heat map of relative
//! throughput, steps (in sequence order, grouped) × targets (in plan
//! order, usually version order), and per group a line chart of each
//! step's relative throughput across the ordered targets, the "over time"
//! view. Both are SVG drawn from the model: the HTML page inlines them,
//! the Markdown links them.
//!
//! A heat-map cell is coloured by the same verdict as the tables' cells
//! (`Cell::verdict`): red past 0.95 and green past 1.05, deeper the
//! further from 1 (full at ×2 or ×½), for a change shown; white for the
//! same shown; grey when the change is undecided (neither shown,
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
    let (Some(rel), Some(v)) = (c.test.relative, c.verdict()) else {
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
        Verdict::Same => ("#ffffff".into(), "#000"),
        // Disturbed is told apart from "undecided" at a glance: its
        // own pale violet (and a `*` on the figure), never red or green.
        Verdict::Disturbed => (DISTURBED.into(), "#3b2f6b"),
        Verdict::Undecided | Verdict::TooShort | Verdict::Untested | Verdict::Unsteady => {
            (GREY.into(), "#555")
        }
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
        row.id.clients,
        r.targets[ti].name,
        r.targets[r.base_of[ti]].name
    );
    match c.test.relative {
        Some(rel) => {
            let _ = write!(
                s,
                ": {rel:.2} ({} → {} {unit})",
                base.figures.throughput.map_or("—".into(), fmt_throughput),
                c.figures.throughput.map_or("—".into(), fmt_throughput)
            );
        }
        None => s.push_str(": no ratio"),
    }
    if let Some(sig) = &c.test.significance {
        let test = match sig.method {
            Method::Paired => "paired t over the rounds",
            Method::Unpaired => "t over the repeats, unpaired",
            Method::PerSecond => "per-second test",
        };
        let _ = write!(s, "; p={:.3} ({test})", sig.p_value);
        if let Some(i) = c.verdict().and_then(|v| sig.shown(v)) {
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
        Some(Verdict::Same) => {
            s.push_str("; the same: its interval (two one-sided tests) inside the band")
        }
        Some(Verdict::Undecided) => s.push_str("; undecided"),
        Some(Verdict::TooShort) => s.push_str("; a window too short to judge"),
        Some(Verdict::Unsteady) => s.push_str("; a window that never became steady, not judged"),
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
                let text = c
                    .test
                    .relative
                    .map_or("—".into(), |v| format!("{v:.2}{mark}"));
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
///
/// The y-axis is logarithmic, since ratios are (×2 and ×½ lie as far from
/// 1), and spans every value: a linear axis cut at 4 drew writes of ×7 to
/// ×49 as one stack at its top. Labels at the lines' right ends are spread
/// to 11 px apart, with a leader to the end they name, and the chart grows
/// taller when they need more room than the plot has.
pub fn over_targets(r: &Report, g: Group) -> Option<Chart> {
    let (base, order) = line_order(r)?;
    let rows: Vec<&Row> = r.rows_in(g).collect();
    if order.len() < 2 || rows.is_empty() {
        return None;
    }
    let values: Vec<f64> = rows
        .iter()
        .flat_map(|row| order.iter().filter_map(|&i| row.cells[i].test.relative))
        .filter(|v| v.is_finite())
        .collect();
    let axis = LogAxis::spanning(&values);
    let names: Vec<&str> = order.iter().map(|&i| r.targets[i].name.as_str()).collect();
    let labels: Vec<String> = rows.iter().map(|row| row_label(r, row)).collect();
    let label_w = labels.iter().map(|l| l.chars().count()).max().unwrap_or(4) as f64 * 6.0;
    let (left, top_m, plot_h) = (44.0, 30.0, 200.0);
    let step_x = (560.0 / (order.len() - 1) as f64).clamp(28.0, 90.0);
    let plot_w = step_x * (order.len() - 1) as f64;
    let y = |v: f64| top_m + plot_h - axis.fraction(v) * plot_h;
    let x = |k: usize| left + step_x * k as f64;
    // Each line's points and where its label goes.
    let lines: Vec<(usize, Vec<(f64, f64)>)> = rows
        .iter()
        .enumerate()
        .map(|(si, row)| {
            let pts = order
                .iter()
                .enumerate()
                .filter_map(|(k, &ti)| Some((x(k), y(row.cells[ti].test.relative?))))
                .collect();
            (si, pts)
        })
        .filter(|(_, pts): &(usize, Vec<(f64, f64)>)| !pts.is_empty())
        .collect();
    let ends: Vec<f64> = lines
        .iter()
        .map(|(_, p)| p.last().expect("not empty").1)
        .collect();
    let placed = spread(&ends, LABEL_GAP, top_m, top_m + plot_h);
    let labels_end = placed.iter().copied().fold(top_m + plot_h, f64::max);
    let bottom = 12.0 + names.iter().map(|n| n.chars().count()).max().unwrap_or(4) as f64 * 4.7;
    let width = left + plot_w + 22.0 + label_w;
    let height = (top_m + plot_h + bottom).max(labels_end + 10.0);
    let title = format!(
        "{}: relative throughput across targets (÷ {})",
        g.title(),
        r.targets[base].name
    );
    let mut svg = Svg::new(width, height, &title);
    let tick_list = ticks(&axis, &values);
    svg.y_axis(left, left + plot_w, &tick_list, y);
    svg.text(left - 4.0, top_m - 8.0, "end", " fill=\"#666\"", "log");
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
    for ((si, pts), label_y) in lines.iter().zip(&placed) {
        let end = Label {
            text: &labels[*si],
            x: left + plot_w + 14.0,
            y: *label_y,
        };
        draw_line(&mut svg, r, &order, rows[*si], *si, pts, &end);
    }
    Some(Chart {
        file: format!("over-targets-{}.svg", g.name()),
        title,
        svg: svg.finish(),
    })
}

/// The base the lines are relative to, and the targets along the x-axis:
/// its own targets, and the targets of other hosts no host shares (a
/// merged sharded run's, each against its own host's base), in plan
/// order.
fn line_order(r: &Report) -> Option<(usize, Vec<usize>)> {
    let base = r.base_of.first().copied()?;
    let unique = |i: usize| {
        r.base_of[i] != i
            && r.targets
                .iter()
                .filter(|t| t.plan_name == r.targets[i].plan_name)
                .count()
                == 1
    };
    let mut order: Vec<usize> = (0..r.targets.len())
        .filter(|&i| r.base_of[i] == base || unique(i))
        .collect();
    if order
        .iter()
        .any(|&i| r.targets[i].host != r.targets[base].host)
    {
        order.sort_by_key(|&i| (i != base, r.targets[i].plan_index));
    }
    Some((base, order))
}

/// The log axis' ticks; a ratio under the floor is drawn on it, and the
/// floor's tick says so.
fn ticks(axis: &LogAxis, values: &[f64]) -> Vec<(f64, String)> {
    let floored = values.iter().any(|&v| v < LogAxis::FLOOR);
    axis.ticks()
        .into_iter()
        .enumerate()
        .map(|(k, t)| {
            (
                t,
                if k == 0 && floored {
                    format!("≤{}", trim(t))
                } else {
                    trim(t)
                },
            )
        })
        .collect()
}

/// Where a line's label goes, right of the plot.
struct Label<'a> {
    text: &'a str,
    x: f64,
    y: f64,
}

/// One step's line across the targets: its points (hollow where a window
/// was disturbed), and its label with a leader to its end.
fn draw_line(
    svg: &mut Svg,
    r: &Report,
    order: &[usize],
    row: &Row,
    si: usize,
    pts: &[(f64, f64)],
    end: &Label,
) {
    let tip = format!(
        "{}: {}",
        end.text,
        order
            .iter()
            .map(|&ti| row.cells[ti]
                .test
                .relative
                .map_or("—".into(), |v| format!("{} {v:.2}", r.targets[ti].name)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    svg.polyline(pts, colour(si), "", &tip);
    // A point from a disturbed window is hollow: drawn, not judged.
    let disturbed: Vec<bool> = order
        .iter()
        .filter(|&&ti| row.cells[ti].test.relative.is_some())
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
    let (end_x, end_y) = *pts.last().expect("not empty");
    // A label moved off its line's end points back to it.
    svg.line(
        end_x + 3.0,
        end_y,
        end.x - 2.0,
        end.y,
        &format!("stroke=\"{}\" stroke-width=\"0.6\"", colour(si)),
    );
    svg.text(
        end.x,
        end.y + 4.0,
        "start",
        &format!(" class=\"end-label\" fill=\"{}\"", colour(si)),
        end.text,
    );
}

/// The vertical room of one end label (11 px text).
const LABEL_GAP: f64 = 12.0;

/// Positions for labels that want to sit at `want` (any order), each at
/// least `gap` from the next, as near their wish as that allows, within
/// `lo..hi` when they fit and running on below `hi` when they do not.
fn spread(want: &[f64], gap: f64, lo: f64, hi: f64) -> Vec<f64> {
    let mut order: Vec<usize> = (0..want.len()).collect();
    order.sort_by(|&a, &b| want[a].total_cmp(&want[b]));
    let mut pos: Vec<f64> = order.iter().map(|&i| want[i].clamp(lo, hi)).collect();
    for k in 1..pos.len() {
        pos[k] = pos[k].max(pos[k - 1] + gap);
    }
    // Pushed past the bottom: pull back up as far as the top allows.
    if let Some(&last) = pos.last() {
        if last > hi {
            let n = pos.len();
            pos[n - 1] = hi.max(lo + gap * (n - 1) as f64);
            for k in (0..n - 1).rev() {
                pos[k] = pos[k].min(pos[k + 1] - gap);
            }
        }
    }
    let mut out = vec![0.0; want.len()];
    for (k, &i) in order.iter().enumerate() {
        out[i] = pos[k];
    }
    out
}

/// A logarithmic axis over ratios, from the smallest value to the largest
/// and always past 0.8 and 1.25 so that 1 sits inside with room.
struct LogAxis {
    lo: f64,
    hi: f64,
}

impl LogAxis {
    /// The smallest ratio drawn: a throughput of a hundredth of the base's
    /// or less sits on the floor (a ratio of 0 has no place on a log axis).
    const FLOOR: f64 = 0.01;

    fn spanning(values: &[f64]) -> Self {
        let lo = values.iter().copied().fold(0.8, f64::min).max(Self::FLOOR);
        let hi = values.iter().copied().fold(1.25, f64::max).max(lo * 1.5);
        // Ticks land on the ends when the span is wide: round them out to
        // powers of two there.
        if hi / lo > 4.0 {
            LogAxis {
                lo: 2f64.powf(lo.log2().floor()),
                hi: 2f64.powf(hi.log2().ceil()),
            }
        } else {
            LogAxis {
                lo: lo * 0.95,
                hi: hi * 1.05,
            }
        }
    }

    /// Where `v` lies, 0 at the bottom and 1 at the top.
    fn fraction(&self, v: f64) -> f64 {
        (v.clamp(self.lo, self.hi).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
    }

    fn ticks(&self) -> Vec<f64> {
        if self.hi / self.lo > 4.0 {
            // Powers of two, every other one when there are many.
            let (a, b) = (self.lo.log2().round() as i32, self.hi.log2().round() as i32);
            let every = if b - a > 8 { 2 } else { 1 };
            (a..=b)
                .filter(|e| (e - a) % every == 0 || *e == 0)
                .map(|e| 2f64.powi(e))
                .collect()
        } else {
            let step = nice_ceiling((self.hi - self.lo) / 5.0).max(0.05);
            let mut t = (self.lo / step).ceil() * step;
            let mut out = Vec::new();
            while t <= self.hi + 1e-9 {
                out.push(t);
                t += step;
            }
            out
        }
    }
}

/// Every overview chart: the heat map, then a line chart per group.
pub fn all(r: &Report) -> Vec<Chart> {
    heatmap(r)
        .into_iter()
        .chain(Group::ALL.iter().filter_map(|g| over_targets(r, *g)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_labels_keep_their_order_and_gap_and_stay_in_the_plot_when_they_fit() {
        // Five lines ending within 3 px of the top of the plot, one far below.
        let want = [31.0, 30.0, 32.0, 33.0, 30.5, 200.0];
        let got = spread(&want, 12.0, 30.0, 230.0);
        let mut sorted: Vec<f64> = got.clone();
        sorted.sort_by(f64::total_cmp);
        for w in sorted.windows(2) {
            assert!(w[1] - w[0] >= 12.0 - 1e-9, "{got:?}");
        }
        assert!(got.iter().all(|&y| (30.0..=230.0).contains(&y)), "{got:?}");
        // The lowest line's label stays at its line.
        assert_eq!(got[5], 200.0);
        // Order kept: 30.0 < 30.5 < 31 < 32 < 33.
        assert!(got[1] < got[4] && got[4] < got[0] && got[0] < got[2] && got[2] < got[3]);
        // Crowded at the bottom: pulled back up inside.
        let got = spread(&[229.0, 230.0, 228.0], 12.0, 30.0, 230.0);
        assert!(got.iter().all(|&y| y <= 230.0), "{got:?}");
        // More labels than the plot holds run on below it, still apart.
        let got = spread(&[100.0; 30], 12.0, 30.0, 230.0);
        let mut s = got.clone();
        s.sort_by(f64::total_cmp);
        assert_eq!(s[0], 30.0);
        assert!(s.windows(2).all(|w| w[1] - w[0] >= 12.0 - 1e-9), "{s:?}");
    }

    #[test]
    fn the_ratio_axis_spans_every_value() {
        // Regression: writes of ×7 to ×49 were drawn at an axis cut at 4.
        let a = LogAxis::spanning(&[0.37, 1.0, 7.0, 49.0]);
        assert!(a.lo <= 0.37 && a.hi >= 49.0);
        assert!(a.fraction(49.0) <= 1.0 && a.fraction(48.0) < a.fraction(49.0));
        // Powers of two round the ends out: 0.37 sits above the floor.
        assert_eq!((a.lo, a.hi), (0.25, 64.0));
        assert!(a.fraction(0.37) > 0.0);
        let t = a.ticks();
        assert!(t.contains(&1.0) && *t.last().unwrap() >= 49.0, "{t:?}");
        // Close ratios: round ticks around 1.
        let a = LogAxis::spanning(&[0.97, 1.02]);
        let t = a.ticks();
        assert!(
            t.len() >= 3 && t.iter().any(|&v| (v - 1.0).abs() < 1e-9),
            "{t:?}"
        );
        assert!(a.fraction(1.25) <= 1.0 && a.fraction(0.8) >= 0.0);
    }
}
