//! Latency: percentiles per step and per statement class, the Insert
//! Benchmark's SLA and response-time ranges.

use super::*;

/// p99 latency of whole events.
pub fn latency(r: &Report) -> Section {
    let cols = r.columns();
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
                        Text::plain(row.title()),
                        Text::plain(row.id.clients.to_string()),
                    ];
                    cells.extend(cols.iter().map(|&i| match row.cells[i].figures.p99_us {
                        Some(v) => Text::plain(fmt_latency(v)),
                        None => missing(&row.cells[i]),
                    }));
                    cells
                })
                .collect();
            let (head, groups) = target_head(r, &["step", "clients"], &cols);
            (!rows.is_empty()).then_some(Table {
                head,
                groups,
                text_columns: 1,
                rows,
            })
        }),
    }
}

/// The Insert Benchmark's q-steps: the background write rate asked for
/// and reached, per target and repeat.
pub fn sla(r: &Report) -> Option<Table> {
    let rows: Vec<Vec<Text>> = r
        .sla
        .iter()
        .map(|x| {
            vec![
                Text::plain(x.step.clone()),
                Text::plain(r.targets[x.target].name.clone()),
                Text::plain(x.repeat.to_string()),
                Text::plain(fmt_throughput(x.target_rows_per_sec)),
                Text::plain(fmt_throughput(x.insert_rows_per_sec)),
                Text::plain(fmt_throughput(x.delete_rows_per_sec)),
                Text::plain(format!("{:.1}%", x.achieved * 100.0)),
                Text::plain(fmt_throughput(x.queries_per_sec)),
                if x.passed {
                    Text {
                        text: "pass".into(),
                        tone: Some(Verdict::Better),
                    }
                } else {
                    Text {
                        text: "FAILED".into(),
                        tone: Some(Verdict::Worse),
                    }
                },
            ]
        })
        .collect();
    (!rows.is_empty()).then(|| {
        Table::new(
            [
                "step",
                "target",
                "repeat",
                "target rows/s",
                "inserted rows/s",
                "deleted rows/s",
                "reached",
                "queries/s",
                "SLA",
            ],
            3,
            rows,
        )
    })
}

/// The Insert Benchmark's response-time histogram per operation kind:
/// how many responses fell in each range, all repeats together.
pub fn response_times(r: &Report) -> Option<Table> {
    use crate::measure::IB_BOUNDS_US;
    let rows: Vec<Vec<Text>> = r
        .response_times
        .iter()
        .map(|x| {
            let mut cells = vec![
                Text::plain(x.step.clone()),
                Text::plain(r.targets[x.target].name.clone()),
                Text::plain(x.operation.clone()),
            ];
            cells.extend(x.counts.iter().map(|n| Text::plain(n.to_string())));
            cells.push(Text::plain(fmt_latency(x.max_us)));
            cells
        })
        .collect();
    let bound = |us: f64| {
        if us < 1000.0 {
            format!("≤ {us:.0} µs")
        } else if us < 1e6 {
            format!("≤ {:.0} ms", us / 1e3)
        } else {
            format!("≤ {:.0} s", us / 1e6)
        }
    };
    (!rows.is_empty()).then(|| {
        Table::new(
            ["step", "target", "operation"]
                .into_iter()
                .map(String::from)
                .chain(IB_BOUNDS_US.iter().map(|b| bound(*b)))
                .chain(["more".to_string(), "max".to_string()])
                .collect::<Vec<String>>(),
            3,
            rows,
        )
    })
}

/// Latency of every statement class of every step: p50, p99 and max,
/// medians over repeats.
pub(super) fn statement_latency(doc: &mut Vec<Block>, r: &Report) {
    let cols = r.columns();
    let mut rows_out = Vec::new();
    for row in &r.rows {
        for &ti in &cols {
            for (class, l) in &row.cells[ti].internals.statements {
                rows_out.push(vec![
                    Text::plain(row.title()),
                    Text::plain(row.id.clients.to_string()),
                    Text::plain(r.targets[ti].name.clone()),
                    Text::plain(class.clone()),
                    Text::plain(l.count.to_string()),
                    Text::plain(fmt_latency(l.p50_us)),
                    Text::plain(fmt_latency(l.p99_us)),
                    Text::plain(fmt_latency(l.max_us)),
                ]);
            }
        }
    }
    if rows_out.is_empty() {
        return;
    }
    doc.push(Block::Heading(2, "Latency per statement".into()));
    doc.push(Block::Paragraph(
        "Each statement class a step runs, and `event` (a whole statement or transaction): how many completed in \
         the window (all repeats) and the median over repeats of their p50, p99 and slowest."
            .into(),
    ));
    doc.push(Block::Table(Table::new(
        [
            "step",
            "clients",
            "target",
            "statement",
            "count",
            "p50",
            "p99",
            "max",
        ],
        4,
        rows_out,
    )));
}
