//! Hardware efficiency: cost per operation, absolute and relative to the
//! base, the machine's rates, and the engines' own counters.

use super::*;

pub(super) fn cost_text(v: Option<f64>) -> Text {
    Text::plain(match v {
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) if v >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.2}"),
        None => NOT_MEASURED.into(),
    })
}

pub(super) fn efficiency_head() -> Vec<String> {
    ["step", "clients", "target"]
        .into_iter()
        .map(String::from)
        .chain(Cost::ALL.iter().map(|c| format!("{}/op", c.title())))
        .collect()
}

pub(super) const EFFICIENCY_INTRO: &str = "Per operation, or per row for steps counted in rows (per inserted row for \
    load). CPU µs: what the benchmark itself used, the server's processes and relbench's together (another \
    program on the machine is not in it, nor kernel threads' write-back for it; not measured for a server relbench did \
    not start); machine CPU µs: \
    busy CPU of the whole machine (vmstat's us + sy), whatever ran; server µs: the managed server's \
    processes; client µs: relbench (with an embedded engine, the engine too). cs: context switches of the \
    benchmark's own threads, the server's and relbench's (not measured for a server relbench did not start); \
    machine cs: the whole machine's, whatever ran. Reads, writes and KiB: the devices under the target's data (iostat's r/s, w/s, rkB/s, wkB/s). \
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
                        Text::plain(row.title()),
                        Text::plain(row.id.clients.to_string()),
                        Text::plain(r.targets[ti].name.clone()),
                    ];
                    let embedded = r.targets[ti].embedded;
                    if c.figures.throughput.is_none() {
                        cells.extend(Cost::ALL.iter().map(|_| missing(c)));
                    } else {
                        cells.extend(Cost::ALL.iter().map(|k| match k {
                            // Not a missing figure: there is no server.
                            Cost::ServerCpuUs if embedded => Text::plain("—"),
                            _ => cost_text(c.hardware.costs.get(k).copied()),
                        }));
                    }
                    let bytes = |b: Option<u64>, none: &str| {
                        Text::plain(b.map_or_else(|| none.to_string(), fmt_bytes))
                    };
                    cells.push(bytes(c.figures.db_bytes_after, NOT_MEASURED));
                    cells.push(bytes(
                        c.figures.server_rss_peak_bytes,
                        if embedded { "—" } else { NOT_MEASURED },
                    ));
                    rows.push(cells);
                }
            }
            (!rows.is_empty()).then(|| {
                Table::new(
                    efficiency_head()
                        .into_iter()
                        .chain(["DB size after".into(), "server RSS peak".into()])
                        .collect::<Vec<String>>(),
                    3,
                    rows,
                )
            })
        }),
    }
}

/// One cost of a target against the base's. A cost too small at the
/// step's rate to matter is shown uncoloured: 0.02 against 0.07 KiB
/// written per point query is background noise, not a win.
pub(super) fn cost_relative(k: Cost, c: &Cell, base: &Cell) -> Text {
    let (v, b) = (c.hardware.costs.get(&k), base.hardware.costs.get(&k));
    match (c.hardware.costs_relative.get(&k), v, b) {
        (Some(&rel), Some(_), Some(_)) => match c.cost_verdict(k, base) {
            None => Text::plain(format!("{rel:.2}")),
            Some(Verdict::Disturbed) => Text {
                text: format!("{rel:.2} (disturbed)"),
                tone: Some(Verdict::Disturbed),
            },
            Some(Verdict::Undecided) => Text {
                text: format!(
                    "~{rel:.2} p={:.2}",
                    c.hardware.costs_p.get(&k).copied().unwrap_or(1.0)
                ),
                tone: Some(Verdict::Undecided),
            },
            Some(v) => tone_only_past_threshold(Text {
                text: format!("{rel:.2}"),
                tone: Some(v),
            }),
        },
        // Both measured, the base's is 0: there is no ratio to show.
        // Quiet: nothing to compare is not a finding.
        (None, Some(v), Some(_)) => Text {
            text: if *v == 0.0 { "both 0" } else { "base 0" }.into(),
            tone: Some(Verdict::Same),
        },
        _ => no_ratio(true, c),
    }
}

/// Each target's cost per operation ÷ the base's.
pub fn efficiency_relative(r: &Report) -> Section {
    let others = others(r);
    Section {
        title: "Hardware efficiency, relative".into(),
        intro: format!(
            "Target ÷ base ({}) for each cost per operation: above 1 is more cost. Red at ≥ 1.05, green at ≤ 0.95; \
             uncoloured when the cost is too small at the step's rate to matter on either side (under 2% of a core, 1,000 cs/s, \
             50 requests/s or 1 MiB/s). \
             With repeats, ~ and the p-value (a t-test on the rounds' logs, paired) where the change is not significant.",
            r.base
        ),
        groups: groups_of(r, |r, g| {
            let mut rows = Vec::new();
            for row in r.rows_in(g) {
                for &ti in &others {
                    let c = &row.cells[ti];
                    let mut cells = vec![
                        Text::plain(row.title()),
                        Text::plain(row.id.clients.to_string()),
                        Text::plain(r.targets[ti].name.clone()),
                    ];
                    let embedded = r.targets[ti].embedded;
                    let base = &row.cells[r.base_of[ti]];
                    cells.extend(Cost::ALL.iter().map(|&k| match k {
                        Cost::ServerCpuUs if embedded => Text::plain("—"),
                        _ => cost_relative(k, c, base),
                    }));
                    rows.push(cells);
                }
            }
            (!rows.is_empty()).then(|| Table::new(efficiency_head(), 3, rows))
        }),
    }
}

/// The machine's rates per step and target: vmstat's and iostat's
/// figures over the window, with target ÷ base beside each.
pub(super) fn rates(doc: &mut Vec<Block>, r: &Report) {
    let cols = r.columns();
    let mut rows_out = Vec::new();
    for row in &r.rows {
        for &ti in &cols {
            let c = &row.cells[ti];
            if c.hardware.rates.is_empty() {
                continue;
            }
            // The machine's rates over a window another program shared:
            // marked on the row, so no ratio of it reads as the target's.
            let name = if c.judgement.disturbed.is_some() {
                format!("{} (disturbed)", r.targets[ti].name)
            } else {
                r.targets[ti].name.clone()
            };
            let mut cells = vec![
                Text::plain(row.title()),
                Text::plain(row.id.clients.to_string()),
                Text::plain(name),
            ];
            cells.extend(Rate::ALL.iter().map(|k| {
                Text::plain(
                    match (c.hardware.rates.get(k), c.hardware.rates_relative.get(k)) {
                        (Some(v), Some(rel)) if !r.is_base(ti) => {
                            format!("{} (×{rel:.2})", fig(*v))
                        }
                        (Some(v), _) => fig(*v),
                        (None, _) => NOT_MEASURED.into(),
                    },
                )
            }));
            rows_out.push(cells);
        }
    }
    if rows_out.is_empty() {
        return;
    }
    doc.push(Block::Heading(2, "Machine rates".into()));
    doc.push(Block::Paragraph(
        "What each step kept the machine doing, over its measured window: busy CPU of all CPUs (vmstat's us + sy), \
         context switches, and the reads, writes and MB a second of the devices under the target's data (iostat's \
         r/s, rMB/s, w/s, wMB/s); medians over repeats, with target ÷ base in brackets."
            .into(),
    ));
    doc.push(Block::Table(Table::new(
        ["step", "clients", "target"]
            .into_iter()
            .chain(Rate::ALL.iter().map(|k| k.title())),
        3,
        rows_out,
    )));
}

/// The engine's counters: per step, those that moved most against the
/// base per operation, then every counter that moved, collapsed.
pub(super) fn counters(doc: &mut Vec<Block>, r: &Report) {
    let others = others(r);
    let cols = r.columns();
    let moved: Vec<Vec<Text>> = r
        .rows
        .iter()
        .flat_map(|row| {
            others
                .iter()
                .copied()
                .filter(|&ti| !row.cells[ti].internals.counters_moved.is_empty())
                .map(|ti| {
                    vec![
                        Text::plain(row.title()),
                        Text::plain(row.id.clients.to_string()),
                        Text::plain(r.targets[ti].name.clone()),
                        Text::plain(
                            row.cells[ti]
                                .internals
                                .counters_moved
                                .iter()
                                .map(|(k, x)| {
                                    format!("{k}/op ×{}", crate::measure::units::fmt_ratio(*x))
                                })
                                .collect::<Vec<_>>()
                                .join(", "),
                        ),
                    ]
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let any = r.rows.iter().any(|row| {
        row.cells
            .iter()
            .any(|c| !c.internals.counters_per_op.is_empty())
    });
    if !any {
        return;
    }
    doc.push(Block::Heading(2, "Engine counters".into()));
    doc.push(Block::Paragraph(
        "The server's own counters (SHOW GLOBAL STATUS; pg_stat_database, pg_stat_bgwriter, pg_stat_io), read \
         before and after each step, per operation (per row for steps counted in rows). First the ones that moved \
         most against the base, past 5% and at ten a second or more; then, collapsed per step, every counter \
         that moved."
            .into(),
    ));
    if !moved.is_empty() {
        doc.push(Block::Table(Table::new(
            ["step", "clients", "target", "moved most against the base"],
            4,
            moved,
        )));
    }
    for row in &r.rows {
        let facts: Vec<(String, String)> = cols
            .iter()
            .flat_map(|&ti| {
                row.cells[ti]
                    .internals
                    .counters_per_op
                    .iter()
                    .map(move |(k, v)| (format!("{} {k}/op", r.targets[ti].name), fig(*v)))
            })
            .collect();
        if !facts.is_empty() {
            doc.push(Block::Details {
                summary: format!(
                    "{} c{}: every counter that moved",
                    row.title(),
                    row.id.clients
                ),
                facts,
                text: None,
            });
        }
    }
}
