//! The report's tables, built once from the model and rendered by every
//! format, so Markdown, HTML and the terminal always show the same cells.

use super::{
    cost_verdict, fmt_bytes, fmt_latency, fmt_throughput, step_title, verdict, Cell, Report,
    Verdict, COSTS,
};
use crate::workload::Group;

/// One cell: its text and, when it is a ratio past a threshold, its tone.
#[derive(Debug, Clone)]
pub struct Text {
    pub text: String,
    pub tone: Option<Verdict>,
}

impl Text {
    fn plain(s: impl Into<String>) -> Self {
        Text {
            text: s.into(),
            tone: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Table {
    pub head: Vec<String>,
    /// Columns after the first `text_columns` are numbers (right-aligned).
    pub text_columns: usize,
    pub rows: Vec<Vec<Text>>,
}

/// A titled set of tables, one per group.
#[derive(Debug, Clone)]
pub struct Section {
    pub title: String,
    pub intro: String,
    pub groups: Vec<(Group, Table)>,
}

const NOT_MEASURED: &str = "not measured";

fn missing(c: &Cell) -> Text {
    Text::plain(if c.failed.is_some() { "failed" } else { "—" })
}

fn rel_text(v: Option<f64>, cost: bool, c: &Cell) -> Text {
    match v {
        Some(v) => Text {
            text: format!("{v:.2}"),
            tone: Some(if cost { cost_verdict(v) } else { verdict(v) }),
        },
        None if c.failed.is_some() => Text::plain("failed"),
        None if cost && c.throughput.is_some() => Text::plain(NOT_MEASURED),
        None => Text::plain("—"),
    }
}

fn tone_only_past_threshold(mut t: Text) -> Text {
    if t.tone == Some(Verdict::Same) {
        t.tone = None;
    }
    t
}

fn groups_of(r: &Report, make: impl Fn(&Report, Group) -> Option<Table>) -> Vec<(Group, Table)> {
    Group::ALL
        .iter()
        .filter_map(|g| make(r, *g).map(|t| (*g, t)))
        .collect()
}

fn others(r: &Report) -> Vec<usize> {
    let b = r.base_index();
    (0..r.targets.len()).filter(|i| *i != b).collect()
}

/// Target ÷ base throughput for every target but the base.
pub fn relative(r: &Report) -> Section {
    let others = others(r);
    Section {
        title: "Relative throughput".into(),
        intro: format!(
            "Target ÷ base ({}): above 1 is faster. Red at ≤ 0.95, green at ≥ 1.05.",
            r.base
        ),
        groups: groups_of(r, |r, g| {
            let rows: Vec<Vec<Text>> = r
                .rows_in(g)
                .map(|row| {
                    let mut cells = vec![
                        Text::plain(step_title(&row.step)),
                        Text::plain(row.clients.to_string()),
                    ];
                    cells.extend(others.iter().map(|&i| {
                        tone_only_past_threshold(rel_text(
                            row.cells[i].relative,
                            false,
                            &row.cells[i],
                        ))
                    }));
                    cells
                })
                .collect();
            (!rows.is_empty()).then(|| Table {
                head: ["step", "clients"]
                    .into_iter()
                    .map(String::from)
                    .chain(others.iter().map(|&i| r.targets[i].name.clone()))
                    .collect(),
                text_columns: 1,
                rows,
            })
        }),
    }
}

/// Throughput of every target, base first.
pub fn absolute(r: &Report) -> Section {
    Section {
        title: "Absolute throughput".into(),
        intro: "Operations per second (rows per second for load and scan), median over repeats."
            .into(),
        groups: groups_of(r, |r, g| {
            let rows: Vec<Vec<Text>> = r
                .rows_in(g)
                .map(|row| {
                    let mut cells = vec![
                        Text::plain(step_title(&row.step)),
                        Text::plain(row.clients.to_string()),
                        Text::plain(row.unit.name()),
                    ];
                    cells.extend(row.cells.iter().map(|c| match c.throughput {
                        Some(t) => Text::plain(fmt_throughput(t)),
                        None => missing(c),
                    }));
                    cells
                })
                .collect();
            (!rows.is_empty()).then(|| Table {
                head: ["step", "clients", "unit"]
                    .into_iter()
                    .map(String::from)
                    .chain(r.targets.iter().map(|t| t.name.clone()))
                    .collect(),
                text_columns: 1,
                rows,
            })
        }),
    }
}

fn cost_text(v: Option<f64>) -> Text {
    Text::plain(match v {
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
        None => NOT_MEASURED.into(),
    })
}

fn efficiency_head() -> Vec<String> {
    ["step", "clients", "target"]
        .into_iter()
        .map(String::from)
        .chain(COSTS.iter().map(|c| format!("{}/op", c.title)))
        .collect()
}

const EFFICIENCY_INTRO: &str = "Per operation, or per row for steps counted in rows (per inserted row for \
    load). CPU µs: busy CPU of the whole machine (vmstat's us + sy); server µs: the managed server's \
    processes; client µs: relbench (with an embedded engine, the engine too). cs: context switches of the \
    machine. Reads, writes and KiB: the devices under the target's data (iostat's r/s, w/s, rkB/s, wkB/s). \
    Medians over repeats; \"not measured\" where the figure could not be taken (the step's notes in the \
    results say why), \"—\" where there is nothing to measure (no server for an embedded engine). DB size: \
    the datadir or database file after the step; RSS: the server's processes, shared memory counted once.";

/// Hardware cost per operation of every target, one row per step and
/// target.
pub fn efficiency(r: &Report) -> Section {
    Section {
        title: "Hardware efficiency".into(),
        intro: EFFICIENCY_INTRO.into(),
        groups: groups_of(r, |r, g| {
            let mut rows = Vec::new();
            for row in r.rows_in(g) {
                for (ti, c) in row.cells.iter().enumerate() {
                    let mut cells = vec![
                        Text::plain(step_title(&row.step)),
                        Text::plain(row.clients.to_string()),
                        Text::plain(r.targets[ti].name.clone()),
                    ];
                    let embedded = r.targets[ti].embedded;
                    if c.throughput.is_none() {
                        cells.extend(COSTS.iter().map(|_| missing(c)));
                    } else {
                        cells.extend(COSTS.iter().map(|k| match k.key {
                            // Not a missing figure: there is no server.
                            "server_cpu_us" if embedded => Text::plain("—"),
                            _ => cost_text(c.costs.get(k.key).copied()),
                        }));
                    }
                    let bytes = |b: Option<u64>, none: &str| {
                        Text::plain(b.map_or_else(|| none.to_string(), fmt_bytes))
                    };
                    cells.push(bytes(c.db_bytes_after, NOT_MEASURED));
                    cells.push(bytes(
                        c.server_rss_peak_bytes,
                        if embedded { "—" } else { NOT_MEASURED },
                    ));
                    rows.push(cells);
                }
            }
            (!rows.is_empty()).then(|| Table {
                head: efficiency_head()
                    .into_iter()
                    .chain(["DB size after".into(), "server RSS peak".into()])
                    .collect(),
                text_columns: 3,
                rows,
            })
        }),
    }
}

/// One cost of a target against the base's. A ratio whose two figures
/// differ by less than the cost's floor is shown uncoloured: 0.02 against
/// 0.07 KiB written per point query is background noise, not a win.
fn cost_relative(k: &super::Cost, c: &Cell, base: &Cell) -> Text {
    let (v, b) = (c.costs.get(k.key), base.costs.get(k.key));
    match (c.costs_relative.get(k.key), v, b) {
        (Some(&rel), Some(v), Some(b)) => {
            let mut t = tone_only_past_threshold(rel_text(Some(rel), true, c));
            if (v - b).abs() < k.floor {
                t.tone = None;
            }
            t
        }
        // Both measured, the base's is 0: there is no ratio to show.
        (None, Some(v), Some(_)) => Text::plain(if *v == 0.0 { "both 0" } else { "base 0" }),
        _ => rel_text(None, true, c),
    }
}

/// Each target's cost per operation ÷ the base's.
pub fn efficiency_relative(r: &Report) -> Section {
    let others = others(r);
    Section {
        title: "Hardware efficiency, relative".into(),
        intro: format!(
            "Target ÷ base ({}) for each cost per operation: above 1 is more cost. Red at ≥ 1.05, green at ≤ 0.95.",
            r.base
        ),
        groups: groups_of(r, |r, g| {
            let mut rows = Vec::new();
            for row in r.rows_in(g) {
                for &ti in &others {
                    let c = &row.cells[ti];
                    let mut cells = vec![
                        Text::plain(step_title(&row.step)),
                        Text::plain(row.clients.to_string()),
                        Text::plain(r.targets[ti].name.clone()),
                    ];
                    let embedded = r.targets[ti].embedded;
                    let base = &row.cells[r.base_index()];
                    cells.extend(COSTS.iter().map(|k| match k.key {
                        "server_cpu_us" if embedded => Text::plain("—"),
                        _ => cost_relative(k, c, base),
                    }));
                    rows.push(cells);
                }
            }
            (!rows.is_empty()).then(|| Table {
                head: efficiency_head(),
                text_columns: 3,
                rows,
            })
        }),
    }
}

/// p99 latency of whole events.
pub fn latency(r: &Report) -> Section {
    Section {
        title: "Latency".into(),
        intro: "99th percentile response time of one event (a statement, or a whole transaction)."
            .into(),
        groups: groups_of(r, |r, g| {
            if g == Group::Load {
                return None;
            }
            let rows: Vec<Vec<Text>> = r
                .rows_in(g)
                .map(|row| {
                    let mut cells = vec![
                        Text::plain(step_title(&row.step)),
                        Text::plain(row.clients.to_string()),
                    ];
                    cells.extend(row.cells.iter().map(|c| match c.p99_us {
                        Some(v) => Text::plain(fmt_latency(v)),
                        None => missing(c),
                    }));
                    cells
                })
                .collect();
            (!rows.is_empty()).then(|| Table {
                head: ["step", "clients"]
                    .into_iter()
                    .map(String::from)
                    .chain(r.targets.iter().map(|t| t.name.clone()))
                    .collect(),
                text_columns: 1,
                rows,
            })
        }),
    }
}

/// Steps with errors or failures, with the first message of each kind.
pub fn problems(r: &Report) -> Option<Table> {
    let mut rows = Vec::new();
    for (ti, s) in &r.steps {
        let target = &r.targets[*ti].name;
        if let Some(f) = &s.failed {
            rows.push(vec![
                Text::plain(target.clone()),
                Text::plain(step_title(&s.step)),
                Text::plain(s.clients.to_string()),
                Text::plain(s.repeat.to_string()),
                Text::plain("step failed"),
                Text::plain("—"),
                Text::plain(f.clone()),
            ]);
        }
        for (key, n) in &s.errors {
            rows.push(vec![
                Text::plain(target.clone()),
                Text::plain(step_title(&s.step)),
                Text::plain(s.clients.to_string()),
                Text::plain(s.repeat.to_string()),
                Text::plain(key.clone()),
                Text::plain(n.to_string()),
                Text::plain(s.error_samples.get(key).cloned().unwrap_or_default()),
            ]);
        }
    }
    (!rows.is_empty()).then(|| Table {
        head: [
            "target",
            "step",
            "clients",
            "repeat",
            "class/kind",
            "count",
            "first message",
        ]
        .into_iter()
        .map(String::from)
        .collect(),
        text_columns: 7,
        rows,
    })
}

/// One sentence per target against the base, and its regressions.
pub fn summary_lines(r: &Report) -> Vec<(String, Vec<String>)> {
    r.summary
        .iter()
        .map(|s| {
            if s.compared == 0 {
                let head = format!(
                    "{}: no step to compare with {} yet (each needs figures from both targets).",
                    s.target, r.base
                );
                let failed = (!s.failed.is_empty())
                    .then(|| format!("failed steps: {}", s.failed.join(", ")));
                return (head, failed.into_iter().collect());
            }
            let mut head = format!(
                "{} against {}: {} of {} steps slower, {} faster, {} within 5%.",
                s.target, r.base, s.slower, s.compared, s.faster, s.same
            );
            if let (Some(w), Some(b)) = (&s.worst, &s.best) {
                head += &format!(
                    " Worst: {} ({}) {:.2}; best: {} ({}) {:.2}.",
                    step_title(&w.step),
                    clients(w.clients),
                    w.relative,
                    step_title(&b.step),
                    clients(b.clients),
                    b.relative
                );
            }
            let mut details: Vec<String> = s
                .regressions
                .iter()
                .take(8)
                .map(|c| {
                    format!(
                        "{} ({}) {:.2}: {}",
                        step_title(&c.step),
                        clients(c.clients),
                        c.relative,
                        c.explanation
                    )
                })
                .collect();
            if s.regressions.len() > 8 {
                details.push(format!(
                    "and {} more regressions (see the tables)",
                    s.regressions.len() - 8
                ));
            }
            if !s.failed.is_empty() {
                details.push(format!("failed steps: {}", s.failed.join(", ")));
            }
            (head, details)
        })
        .collect()
}

fn clients(n: u32) -> String {
    if n == 1 {
        "1 client".into()
    } else {
        format!("{n} clients")
    }
}
