//! The report's tables, built once from the model and rendered by every
//! format, so Markdown, HTML and the terminal always show the same cells.

use super::{
    cost_verdict, fmt_cpu, fmt_latency, fmt_throughput, step_title, verdict, Cell, Report, Verdict,
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

/// CPU µs per operation, absolute and relative to the base.
pub fn cpu(r: &Report) -> Section {
    let others = others(r);
    let base = r.base_index();
    Section {
        title: "CPU per operation".into(),
        intro: "CPU µs per operation (per row for load and scan) of client and database together: the relbench \
                process for an embedded engine (SQLite), relbench plus the server's processes for a managed \
                server; not measured for a server relbench did not start. Relative: target ÷ base, above 1 is \
                more cost; red at ≥ 1.05, green at ≤ 0.95."
            .into(),
        groups: groups_of(r, |r, g| {
            let rows: Vec<Vec<Text>> = r
                .rows_in(g)
                .map(|row| {
                    let mut cells = vec![Text::plain(step_title(&row.step)), Text::plain(row.clients.to_string())];
                    cells.extend(row.cells.iter().map(|c| match (c.cpu_us_per_op, c.throughput) {
                        (Some(v), _) => Text::plain(fmt_cpu(v)),
                        (None, Some(_)) => Text::plain(NOT_MEASURED),
                        (None, None) => missing(c),
                    }));
                    cells.extend(others.iter().map(|&i| {
                        tone_only_past_threshold(rel_text(row.cells[i].cpu_relative, true, &row.cells[i]))
                    }));
                    cells
                })
                .collect();
            (!rows.is_empty()).then(|| Table {
                head: ["step", "clients"]
                    .into_iter()
                    .map(String::from)
                    .chain(r.targets.iter().map(|t| t.name.clone()))
                    .chain(others.iter().map(|&i| format!("{} ÷ {}", r.targets[i].name, r.targets[base].name)))
                    .collect(),
                text_columns: 1,
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
