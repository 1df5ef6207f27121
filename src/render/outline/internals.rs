//! Inside the engine: the statements planned differently from the base
//! (both plans); where the server waited — per step and target, the wait
//! events the server's own accounting gave the most time per operation,
//! and the ones that moved against the base, with how much of the change
//! in an operation's time they account for; and what each statement did.

use super::*;
use crate::measure::plans::short_sql;
use crate::measure::units::fmt_us;

const INTRO: &str = "The server's own account of where its threads waited over each measured window, per \
    operation (medians over the repeats). MySQL and MariaDB: performance_schema's totals at the window's edges — \
    the waits of the benchmark user's connections (not `idle`, the time a connection waited for its client) and \
    the file IO of every thread (a log's sync in a background thread is part of a commit's cost); only the \
    instruments the server has on are counted. PostgreSQL: the benchmark's active backends' `wait_event` in \
    pg_stat_activity, sampled (time = backends seen in a wait × the time between readings). A wait moved when \
    its µs/op changed by 5% of an operation's time (clients ÷ throughput) and by ×1.25 either way; \
    share: the moved waits' change ÷ the change of an operation's time.";

/// How many events a cell's own line lists.
const TOP: usize = 4;

/// Each cell's waits: the total and the largest events.
fn measured(r: &Report) -> Option<Table> {
    let mut rows = Vec::new();
    for row in &r.rows {
        for &ti in &r.columns() {
            let Some(w) = &row.cells[ti].internals.waits else {
                continue;
            };
            let mut top: Vec<(&String, f64)> = w.per_op.iter().map(|(k, f)| (k, f.us)).collect();
            top.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
            let top: Vec<String> = top
                .iter()
                .take(TOP)
                .map(|(k, us)| format!("{k} {}", fmt_us(*us)))
                .collect();
            rows.push(vec![
                Text::plain(row.title()),
                Text::plain(row.id.clients.to_string()),
                Text::plain(r.targets[ti].name.clone()),
                Text::plain(top.join(", ")),
                Text::plain(fmt_us(w.total_us)),
            ]);
        }
    }
    (!rows.is_empty()).then(|| {
        Table::new(
            ["step", "clients", "target", "largest (µs/op)", "wait µs/op"],
            4,
            rows,
        )
    })
}

/// The waits that moved against the base.
fn moved(r: &Report) -> Option<Table> {
    let mut rows = Vec::new();
    for row in &r.rows {
        for &ti in &r.columns() {
            let Some(w) = &row.cells[ti].internals.waits else {
                continue;
            };
            for m in &w.moved {
                rows.push(vec![
                    Text::plain(row.title()),
                    Text::plain(row.id.clients.to_string()),
                    Text::plain(r.targets[ti].name.clone()),
                    Text::plain(r.targets[r.base_of[ti]].name.clone()),
                    Text::plain(m.name.clone()),
                    Text::plain(m.kind.words()),
                    Text::plain(fmt_us(m.base_us)),
                    Text::plain(fmt_us(m.us)),
                    ratio_or_new(m.ratio),
                    Text::plain(
                        w.share_of_change
                            .map_or("—".into(), |s| format!("{:.0}%", s * 100.0)),
                    ),
                ]);
            }
        }
    }
    (!rows.is_empty()).then(|| {
        Table::new(
            [
                "step",
                "clients",
                "target",
                "base",
                "wait",
                "kind",
                "base µs/op",
                "µs/op",
                "ratio",
                "share",
            ],
            6,
            rows,
        )
    })
}

/// The section, when any cell has waits.
pub(super) fn waits(doc: &mut Vec<Block>, r: &Report) {
    let Some(t) = measured(r) else {
        return;
    };
    doc.push(Block::Heading(2, "Where the server waited".into()));
    doc.push(Block::Paragraph(INTRO.into()));
    if let Some(m) = moved(r) {
        doc.push(Block::Paragraph(
            "Against the base: the waits that moved.".into(),
        ));
        doc.push(Block::Table(m));
    }
    doc.push(Block::Table(t));
}

const PLANS_INTRO: &str = "Each statement a step sends is planned (EXPLAIN, with the values of one of its events \
    written in) as the step begins, on every server target; a plan's shape is each table's access path and the \
    sorts and temporary tables around it, without costs or row estimates. These statements' shapes differ from \
    the base's plan of the same statement; both plans follow as the engines printed them.";

/// The statements planned differently from the base, with both plans.
pub(super) fn plans(doc: &mut Vec<Block>, r: &Report) {
    let mut blocks = Vec::new();
    for row in &r.rows {
        for &ti in &r.columns() {
            let (name, base) = (&r.targets[ti].name, &r.targets[r.base_of[ti]].name);
            for p in &row.cells[ti].internals.plans_differ {
                blocks.push(Block::Details {
                    summary: format!(
                        "{} c{}: {name} against {base}: {}",
                        row.title(),
                        row.id.clients,
                        short_sql(&p.sql)
                    ),
                    facts: vec![
                        (format!("{base} (base)"), p.base_shape.clone()),
                        (name.clone(), p.shape.clone()),
                    ],
                    text: Some(format!(
                        "-- {base}\n{}\n\n-- {name}\n{}",
                        p.base_plan, p.plan
                    )),
                });
            }
        }
    }
    if !blocks.is_empty() {
        doc.push(Block::Heading(
            2,
            "Query plans that differ from the base".into(),
        ));
        doc.push(Block::Paragraph(PLANS_INTRO.into()));
        doc.extend(blocks);
    }
}

const STATEMENTS_INTRO: &str = "What each statement did over the measured window, per call (medians over the \
    repeats), by the server's own accounting: MySQL's and MariaDB's performance_schema digests (rows examined, \
    sent and affected, temporary tables, sort merge passes, no index used), PostgreSQL's pg_stat_statements \
    (rows, shared blocks hit, read and dirtied, temporary blocks written, planning and execution µs). Against \
    the base: a figure of the same statement that changed ×1.5 either way, at 0.5 a call or more on one side.";

/// What each statement did, and the figures that moved against the base.
pub(super) fn statements(doc: &mut Vec<Block>, r: &Report) {
    let (mut rows, mut moved) = (Vec::new(), Vec::new());
    for row in &r.rows {
        for &ti in &r.columns() {
            let Some(s) = &row.cells[ti].internals.server_statements else {
                continue;
            };
            let lead = |extra: Vec<Text>| {
                let mut v = vec![
                    Text::plain(row.title()),
                    Text::plain(row.id.clients.to_string()),
                    Text::plain(r.targets[ti].name.clone()),
                ];
                v.extend(extra);
                v
            };
            for (sql, f) in &s.by {
                let figures: Vec<String> = f
                    .per_call
                    .iter()
                    .filter(|(_, v)| **v != 0.0)
                    .map(|(k, v)| format!("{k} {}", fmt_us(*v)))
                    .collect();
                rows.push(lead(vec![
                    Text::plain(short_sql(sql)),
                    Text::plain(figures.join(", ")),
                    Text::plain(fmt_us(f.calls_per_op)),
                ]));
            }
            for m in &s.moved {
                moved.push(lead(vec![
                    Text::plain(short_sql(&m.sql)),
                    Text::plain(m.figure.clone()),
                    Text::plain(fmt_us(m.base)),
                    Text::plain(fmt_us(m.value)),
                    ratio_or_new(m.ratio),
                ]));
            }
        }
    }
    if rows.is_empty() {
        return;
    }
    doc.push(Block::Heading(2, "What each statement did".into()));
    doc.push(Block::Paragraph(STATEMENTS_INTRO.into()));
    if !moved.is_empty() {
        doc.push(Block::Paragraph(
            "Against the base: the figures that moved.".into(),
        ));
        doc.push(Block::Table(Table::new(
            [
                "step",
                "clients",
                "target",
                "statement",
                "figure",
                "base /call",
                "/call",
                "ratio",
            ],
            5,
            moved,
        )));
    }
    doc.push(Block::Table(Table::new(
        [
            "step",
            "clients",
            "target",
            "statement",
            "per call",
            "calls/op",
        ],
        5,
        rows,
    )));
}

/// A ratio against the base, or "new" where the base had none.
fn ratio_or_new(r: Option<f64>) -> Text {
    Text::plain(r.map_or("new".into(), |x| format!("×{}", fmt_ratio(x))))
}
