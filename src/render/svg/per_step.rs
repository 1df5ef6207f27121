//! Each step's own charts: throughput and latency per second, and one
//! line per statement class.

use super::*;
use crate::measure::Unmeasured;

/// Per row: throughput per second over the window (one line per target
/// and repeat) and the latency percentiles (one bar per target).
pub fn per_step(r: &Report) -> Vec<StepCharts> {
    let mut out = Vec::new();
    for row in &r.rows {
        let name = format!(
            "step-{:02}-{}-c{}",
            row.seq,
            slug(&row.id.step.label()),
            row.id.clients
        );
        let title = format!(
            "{}, {} client{}",
            row.title(),
            row.id.clients,
            if row.id.clients == 1 { "" } else { "s" }
        );
        out.push(StepCharts {
            rate: rate_chart(r, row, &name),
            latency: latency_chart(r, row, &name),
            classes: class_charts(r, row, &name),
            title,
        });
    }
    out
}

pub(super) fn rate_chart(r: &Report, row: &Row, name: &str) -> Result<Chart, Unmeasured> {
    let series = &row.series.rates;
    if series.is_empty() {
        return Err(Unmeasured::new(
            "the window was under 2 s (no per-second series to draw)",
        ));
    }
    let t_max = row.series.secs;
    let v_max = series
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let top = nice_ceiling(v_max * 1.05);
    let (left, right, top_m, plot_h, bottom, w) = (48.0, 10.0, 42.0, 120.0, 22.0, 340.0);
    let title = format!("{}: {} per second", row_label(r, row), row.unit.name());
    let mut svg = Svg::new(w, top_m + plot_h + bottom, &title);
    let x = |t: f64| left + t / t_max * (w - left - right);
    let y = |v: f64| top_m + plot_h - v / top * plot_h;
    let tick_list: Vec<(f64, String)> = ticks(top).into_iter().map(|t| (t, fmt_tick(t))).collect();
    svg.y_axis(left, w - right, &tick_list, y);
    let mut shown: Vec<usize> = Vec::new();
    for line in series {
        let ti = line.target;
        if !shown.contains(&ti) {
            shown.push(ti);
        }
        let pts: Vec<(f64, f64)> = line.points.iter().map(|(t, v)| (x(*t), y(*v))).collect();
        svg.polyline(&pts, colour(ti), "", &r.targets[ti].name);
    }
    svg.legend(
        left,
        &shown
            .iter()
            .map(|&i| (r.targets[i].name.clone(), colour(i)))
            .collect::<Vec<_>>(),
    );
    svg.line(left, y(0.0), w - right, y(0.0), "stroke=\"#999\"");
    svg.text(
        w - right,
        top_m + plot_h + 16.0,
        "end",
        "",
        &format!("{} s", trim(t_max)),
    );
    svg.text(left, top_m + plot_h + 16.0, "start", "", "0 s");
    Ok(Chart {
        file: format!("{name}-rate.svg"),
        title,
        svg: svg.finish(),
    })
}

pub(super) fn latency_chart(r: &Report, row: &Row, name: &str) -> Result<Chart, Unmeasured> {
    const PCTS: [&str; 4] = ["p50", "p95", "p99", "max"];
    let figures: Vec<(usize, [f64; 4])> = row
        .series
        .latency
        .iter()
        .map(|(ti, p)| (*ti, [p.p50_us, p.p95_us, p.p99_us, p.max_us]))
        .collect();
    if figures.is_empty() {
        return Err(Unmeasured::new("no latency was recorded"));
    }
    let all = figures
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .filter(|v| *v > 0.0);
    let lo = all.clone().fold(f64::MAX, f64::min).max(0.1);
    let hi = all.fold(0.0, f64::max).max(lo * 10.0);
    let (d0, d1) = (lo.log10().floor(), hi.log10().ceil());
    let (left, right, top_m, plot_h, bottom, w) = (54.0, 10.0, 42.0, 120.0, 22.0, 340.0);
    let title = format!("{}: latency percentiles (log scale)", row_label(r, row));
    let mut svg = Svg::new(w, top_m + plot_h + bottom, &title);
    let y = |v: f64| top_m + plot_h - (v.max(lo).log10() - d0) / (d1 - d0) * plot_h;
    let tick_list: Vec<(f64, String)> = (d0 as i32..=d1 as i32)
        .map(|e| {
            let v = 10f64.powi(e);
            (v, tick_latency(v))
        })
        .collect();
    svg.y_axis(left, w - right, &tick_list, y);
    let slot = (w - left - right) / PCTS.len() as f64;
    let bw = ((slot - 12.0) / figures.len() as f64).min(16.0);
    for (p, label) in PCTS.iter().enumerate() {
        let x0 = left + p as f64 * slot + (slot - bw * figures.len() as f64) / 2.0;
        for (k, (ti, v)) in figures.iter().enumerate() {
            let tip = format!("{} {label}: {}", r.targets[*ti].name, fmt_latency(v[p]));
            let base = top_m + plot_h;
            svg.bar(
                x0 + k as f64 * bw,
                y(v[p]),
                bw - 1.0,
                base - y(v[p]),
                colour(*ti),
                &tip,
            );
        }
        svg.text(
            left + (p as f64 + 0.5) * slot,
            top_m + plot_h + 14.0,
            "middle",
            "",
            label,
        );
    }
    svg.legend(
        left,
        &figures
            .iter()
            .map(|(i, _)| (r.targets[*i].name.clone(), colour(*i)))
            .collect::<Vec<_>>(),
    );
    Ok(Chart {
        file: format!("{name}-latency.svg"),
        title,
        svg: svg.finish(),
    })
}

/// Dash patterns that tell the statement classes apart on one chart.
pub(super) fn dash(class: &str) -> &'static str {
    match class {
        c if c == insert::CLASSES[insert::INSERT] => "",
        c if c == insert::CLASSES[insert::DELETE] => " stroke-dasharray=\"5 3\"",
        _ => " stroke-dasharray=\"1 2\"",
    }
}

/// Per Insert Benchmark step: rows (or queries) per second per class, and
/// the slowest response in each second (log scale), for the first repeat
/// of each target. Solid: inserts, dashed: deletes, dotted: queries.
pub(super) fn class_charts(r: &Report, row: &Row, name: &str) -> Vec<Chart> {
    let lines = &row.series.classes;
    if lines.is_empty() {
        return Vec::new();
    }
    let t_max = row.series.class_secs;
    let (left, right, top_m, plot_h, bottom, w) = (54.0, 10.0, 42.0, 120.0, 22.0, 340.0);
    let x = |t: f64| left + t / t_max * (w - left - right);
    let draw =
        |title: String, file: String, log: bool, pick: &dyn Fn(&ClassLine) -> &[(f64, f64)]| {
            let all: Vec<f64> = lines
                .iter()
                .flat_map(|l| pick(l).iter().map(|p| p.1))
                .filter(|v| *v > 0.0)
                .collect();
            let hi = all.iter().copied().fold(0.0, f64::max).max(1.0);
            let lo = all
                .iter()
                .copied()
                .fold(f64::MAX, f64::min)
                .min(hi)
                .max(1.0);
            let mut svg = Svg::new(w, top_m + plot_h + bottom, &title);
            let (d0, d1) = (
                lo.log10().floor(),
                hi.log10().ceil().max(lo.log10().floor() + 1.0),
            );
            let top = nice_ceiling(hi * 1.05);
            let y = |v: f64| {
                if log {
                    top_m + plot_h - (v.max(lo).log10() - d0) / (d1 - d0) * plot_h
                } else {
                    top_m + plot_h - v / top * plot_h
                }
            };
            let tick_list: Vec<(f64, String)> = if log {
                (d0 as i32..=d1 as i32)
                    .map(|e| (10f64.powi(e), tick_latency(10f64.powi(e))))
                    .collect()
            } else {
                ticks(top).into_iter().map(|t| (t, fmt_tick(t))).collect()
            };
            svg.y_axis(left, w - right, &tick_list, y);
            let mut legend: Vec<(String, &str)> = Vec::new();
            for l in lines {
                let pts: Vec<(f64, f64)> = pick(l).iter().map(|(t, v)| (x(*t), y(*v))).collect();
                if pts.is_empty() {
                    continue;
                }
                let tip = format!("{} {}", r.targets[l.target].name, l.class);
                svg.polyline(&pts, colour(l.target), dash(&l.class), &tip);
                if !legend.iter().any(|(n, _)| *n == r.targets[l.target].name) {
                    legend.push((r.targets[l.target].name.clone(), colour(l.target)));
                }
            }
            svg.legend(left, &legend);
            svg.line(
                left,
                top_m + plot_h,
                w - right,
                top_m + plot_h,
                "stroke=\"#999\"",
            );
            svg.text(left, top_m + plot_h + 16.0, "start", "", "0 s");
            svg.text(
                w - right,
                top_m + plot_h + 16.0,
                "end",
                "",
                &format!(
                    "{} s · solid insert, dashed delete, dotted query",
                    trim(t_max)
                ),
            );
            Chart {
                file,
                title,
                svg: svg.finish(),
            }
        };
    vec![
        // Writes only: the queries are the step's throughput, charted
        // beside, and would flatten the writes' lines.
        draw(
            format!("{}: rows written per second", row_label(r, row)),
            format!("{name}-classes.svg"),
            false,
            &|l| {
                if insert::WRITES.contains(&l.class.as_str()) {
                    &l.rate
                } else {
                    &[]
                }
            },
        ),
        draw(
            format!("{}: slowest response per second (log)", row_label(r, row)),
            format!("{name}-max.svg"),
            true,
            &|l| &l.max_us,
        ),
    ]
}

/// A power of ten of µs as an axis label: 10 µs, 1 ms, 100 ms, 10 s.
pub(super) fn tick_latency(us: f64) -> String {
    if us < 1000.0 {
        format!("{} µs", trim(us))
    } else if us < 1e6 {
        format!("{} ms", trim(us / 1e3))
    } else {
        format!("{} s", trim(us / 1e6))
    }
}
