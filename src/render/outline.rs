//! The report's outline, built once from the model: the document as a list
//! of blocks (headings, paragraphs, tables of text cells, charts) in the
//! order every format shows them. Markdown and HTML write the blocks, the
//! terminal prints the relative table, so they always show the same cells
//! in the same order; this file decides what a cell says, never a figure.

use super::overview;
use super::svg::{self, Chart};
use crate::compare::{
    cost_matters, cost_verdict, judged, verdict, Cell, Comparison, Cost, Method, Rate, Report,
    RunMeta, SummaryLine, TargetMeta, Verdict,
};
use crate::measure::stats::{self, Interval};
use crate::measure::units::{fmt_bytes, fmt_latency, fmt_ratio, fmt_throughput};
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
    /// Column groups over `head` (a label and how many columns it spans),
    /// or empty: the hosts, when results from several are side by side.
    pub groups: Vec<(String, usize)>,
    /// Columns after the first `text_columns` are numbers (right-aligned).
    pub text_columns: usize,
    pub rows: Vec<Vec<Text>>,
}

impl Table {
    /// A table without column groups.
    fn new<S: Into<String>>(
        head: impl IntoIterator<Item = S>,
        text_columns: usize,
        rows: Vec<Vec<Text>>,
    ) -> Table {
        Table {
            head: head.into_iter().map(Into::into).collect(),
            groups: Vec::new(),
            text_columns,
            rows,
        }
    }
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

fn interval(i: &Interval, digits: usize) -> String {
    format!("({:.digits$}–{:.digits$})", i.lo, i.hi)
}

/// A throughput ratio with what the repeats say of it: the interval, and
/// `~` with the p-value (and the repeats a rank test would need) when the
/// change is past a threshold but not significant.
fn relative_cell(c: &Cell) -> Text {
    let (Some(rel), Some(v)) = (c.relative, c.verdict()) else {
        return rel_text(None, false, c);
    };
    if let Some(m) = c.sla_missed {
        return Text {
            text: format!("{rel:.2} (SLA missed: {:.0}%)", m * 100.0),
            tone: Some(Verdict::Unsure),
        };
    }
    if let Some(m) = c.rate_missed {
        return Text {
            text: format!("{rel:.2} (rate missed: {:.0}%)", m * 100.0),
            tone: Some(Verdict::Unsure),
        };
    }
    if c.base_sla_missed {
        return Text {
            text: format!("{rel:.2} (the base missed the SLA)"),
            tone: Some(Verdict::Unsure),
        };
    }
    if v == Verdict::Disturbed {
        return Text {
            text: format!(
                "{rel:.2} (disturbed: {})",
                if c.disturbed.is_some() {
                    "here"
                } else {
                    "base"
                }
            ),
            tone: Some(Verdict::Disturbed),
        };
    }
    if v == Verdict::TooShort {
        return Text {
            text: format!("{rel:.2} (window too short)"),
            tone: Some(Verdict::TooShort),
        };
    }
    if v == Verdict::Noise {
        return Text::plain(format!("{rel:.2} (≤ A/A)"));
    }
    let Some(sig) = &c.significance else {
        return tone_only_past_threshold(rel_text(Some(rel), false, c));
    };
    let ci = sig
        .interval
        .as_ref()
        .map(|i| format!(" {}", interval(i, 2)))
        .unwrap_or_default();
    if v == Verdict::Unsure {
        let needed = sig
            .repeats_needed
            .map(|n| format!(", needs {n} repeats"))
            .unwrap_or_default();
        return Text {
            text: format!("~{rel:.2}{ci} p={:.2}{needed}", sig.p_value),
            tone: Some(Verdict::Unsure),
        };
    }
    tone_only_past_threshold(Text {
        text: format!("{rel:.2}{ci}"),
        tone: Some(v),
    })
}

/// The confidence levels of the intervals in `cells`, in words.
fn interval_levels<'a>(cells: impl Iterator<Item = &'a Cell>, ratio: bool) -> Option<String> {
    let mut levels: Vec<(f64, usize)> = Vec::new();
    for c in cells {
        let i = if ratio {
            c.significance
                .as_ref()
                .filter(|s| s.method == Method::RankSum)
                .and_then(|s| s.interval)
        } else {
            c.throughput_interval
        };
        if let Some(i) = i {
            if !levels.iter().any(|(l, _)| (l - i.level).abs() < 1e-9) {
                levels.push((i.level, c.repeats));
            }
        }
    }
    if levels.is_empty() {
        return None;
    }
    levels.sort_by(|a, b| b.0.total_cmp(&a.0));
    let list: Vec<String> = levels
        .iter()
        .map(|(l, n)| {
            format!(
                "{:.0}%{}",
                l * 100.0,
                if *l < stats::LEVEL - 1e-9 {
                    format!(" (the most {n} repeats allow)")
                } else {
                    String::new()
                }
            )
        })
        .collect();
    Some(list.join(", "))
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

/// The targets compared with a base, hosts together.
fn others(r: &Report) -> Vec<usize> {
    r.columns().into_iter().filter(|&i| !r.is_base(i)).collect()
}

/// The head of a table with a column per target: the label columns, then
/// the targets (by their plan names under a host group when several hosts
/// are side by side).
fn target_head(r: &Report, labels: &[&str], cols: &[usize]) -> (Vec<String>, Vec<(String, usize)>) {
    let mut head: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
    if !r.by_host() {
        head.extend(cols.iter().map(|&i| r.targets[i].name.clone()));
        return (head, Vec::new());
    }
    head.extend(cols.iter().map(|&i| r.targets[i].plan_name.clone()));
    let mut groups: Vec<(String, usize)> = vec![(String::new(), labels.len())];
    for &i in cols {
        let h = &r.targets[i].host;
        match groups.last_mut() {
            Some((g, n)) if g == h => *n += 1,
            _ => groups.push((h.clone(), 1)),
        }
    }
    (head, groups)
}

/// Target ÷ base throughput for every target but the base.
pub fn relative(r: &Report) -> Section {
    let others = others(r);
    let levels = interval_levels(
        r.rows
            .iter()
            .flat_map(|row| others.iter().map(|&i| &row.cells[i])),
        true,
    );
    let mut intro = format!(
        "Target ÷ base ({}): above 1 is faster. Red at ≤ 0.95, green at ≥ 1.05.",
        r.base
    );
    let cells = || {
        r.rows
            .iter()
            .flat_map(|row| others.iter().map(move |&i| &row.cells[i]))
    };
    let uses = |m: Method| cells().any(|c| c.significance.as_ref().is_some_and(|s| s.method == m));
    if uses(Method::PerSecond) {
        intro += &format!(
            " With one repeat on a side: the interval (95%) and p-value come from the two windows' \
             seconds ({}); a cell is coloured only when p < {}, otherwise it shows ~ and the p-value.",
            Method::PerSecond.describe(),
            stats::ALPHA
        );
    }
    if let Some(levels) = levels {
        intro += &format!(
            " With repeats: the median's ratio and its confidence interval ({levels}; Mann–Whitney \
             rank-sum test inverted); a cell is coloured only when the change is also significant \
             (two-sided rank-sum p < {}), otherwise it shows ~ with the p-value and the repeats a \
             rank test would need.",
            stats::ALPHA
        );
    }
    if uses(Method::PerSecond) && uses(Method::RankSum) {
        intro +=
            " Cells marked ˢ use the per-second test (a target or its base has one repeat there).";
    }
    if cells().any(|c| c.relative.is_some() && c.significance.is_none()) {
        intro += " Ratios with neither repeats nor five whole seconds a side are not tested.";
    }
    if r.rows.iter().any(|row| row.noise_floor.is_some()) {
        intro +=
            " A/A: the spread between identical runs of one target (its `copies`) on each step; \
                   a change within it is not coloured and is marked ≤ A/A.";
    }
    if cells().any(|c| c.disturbed.is_some() || c.base_disturbed) {
        intro += &format!(
            " Disturbed: other programs or steal took {:.0}% of the machine or more while the step ran \
             here or on the base; the ratio is shown but not judged (see Interference).",
            crate::metrics::interference::DISTURBED_SHARE_PCT
        );
    }
    let mixed = uses(Method::PerSecond) && uses(Method::RankSum);
    let noise = r.rows.iter().any(|row| row.noise_floor.is_some());
    Section {
        title: "Relative throughput".into(),
        intro,
        groups: groups_of(r, |r, g| {
            let rows: Vec<Vec<Text>> = r
                .rows_in(g)
                .map(|row| {
                    let mut cells = vec![
                        Text::plain(row.title()),
                        Text::plain(row.clients.to_string()),
                    ];
                    if noise {
                        cells.push(Text::plain(
                            row.noise_floor
                                .map_or_else(|| "—".into(), |f| format!("±{:.1}%", f * 100.0)),
                        ));
                    }
                    cells.extend(others.iter().map(|&i| {
                        let c = &row.cells[i];
                        let mut t = relative_cell(c);
                        let per_second = c
                            .significance
                            .as_ref()
                            .is_some_and(|s| s.method == Method::PerSecond);
                        if mixed && per_second {
                            t.text.push_str(" ˢ");
                        }
                        t
                    }));
                    cells
                })
                .collect();
            let labels: &[&str] = if noise {
                &["step", "clients", "A/A noise"]
            } else {
                &["step", "clients"]
            };
            let (head, groups) = target_head(r, labels, &others);
            (!rows.is_empty()).then_some(Table {
                head,
                groups,
                text_columns: 1,
                rows,
            })
        }),
    }
}

/// Throughput of every target, base first.
pub fn absolute(r: &Report) -> Section {
    let cols = r.columns();
    let mut intro =
        "Operations per second (rows per second for load and scan), median over repeats."
            .to_string();
    if let Some(levels) = interval_levels(r.rows.iter().flat_map(|row| row.cells.iter()), false) {
        intro += &format!(
            " In brackets: the median's confidence interval over the repeats ({levels}; order statistics)."
        );
    }
    Section {
        title: "Absolute throughput".into(),
        intro,
        groups: groups_of(r, |r, g| {
            let rows: Vec<Vec<Text>> = r
                .rows_in(g)
                .map(|row| {
                    let mut cells = vec![
                        Text::plain(row.title()),
                        Text::plain(row.clients.to_string()),
                        Text::plain(row.unit.name()),
                    ];
                    cells.extend(cols.iter().map(|&i| {
                        let c = &row.cells[i];
                        let text = match (c.throughput, &c.throughput_interval) {
                            (Some(t), Some(ci)) => Text::plain(format!(
                                "{} ({}–{})",
                                fmt_throughput(t),
                                fmt_throughput(ci.lo),
                                fmt_throughput(ci.hi)
                            )),
                            (Some(t), None) => Text::plain(fmt_throughput(t)),
                            (None, _) => missing(c),
                        };
                        match (c.sla_missed, c.rate_missed) {
                            (Some(_), _) => Text {
                                text: format!("{} (SLA missed)", text.text),
                                tone: Some(Verdict::Unsure),
                            },
                            (None, Some(_)) => Text {
                                text: format!("{} (rate missed)", text.text),
                                tone: Some(Verdict::Unsure),
                            },
                            (None, None) => text,
                        }
                    }));
                    cells
                })
                .collect();
            let (head, groups) = target_head(r, &["step", "clients", "unit"], &cols);
            (!rows.is_empty()).then_some(Table {
                head,
                groups,
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
        .chain(Cost::ALL.iter().map(|c| format!("{}/op", c.title())))
        .collect()
}

const EFFICIENCY_INTRO: &str = "Per operation, or per row for steps counted in rows (per inserted row for \
    load). CPU µs: what the benchmark itself used, the server's processes and relbench's together (another \
    program on the machine is not in it, nor kernel threads' write-back for it; not measured for a server relbench did \
    not start); machine CPU µs: \
    busy CPU of the whole machine (vmstat's us + sy), whatever ran; server µs: the managed server's \
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
                        Text::plain(row.title()),
                        Text::plain(row.clients.to_string()),
                        Text::plain(r.targets[ti].name.clone()),
                    ];
                    let embedded = r.targets[ti].embedded;
                    if c.throughput.is_none() {
                        cells.extend(Cost::ALL.iter().map(|_| missing(c)));
                    } else {
                        cells.extend(Cost::ALL.iter().map(|k| match k {
                            // Not a missing figure: there is no server.
                            Cost::ServerCpuUs if embedded => Text::plain("—"),
                            _ => cost_text(c.costs.get(k).copied()),
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
fn cost_relative(k: Cost, c: &Cell, base: &Cell) -> Text {
    let (v, b) = (c.costs.get(&k), base.costs.get(&k));
    match (c.costs_relative.get(&k), v, b) {
        (Some(&rel), Some(_), Some(_)) => {
            if !cost_matters(k, c, base) {
                return Text::plain(format!("{rel:.2}"));
            }
            let p = c.costs_p.get(&k).copied();
            match judged(cost_verdict(rel), p) {
                Verdict::Unsure => Text {
                    text: format!("~{rel:.2} p={:.2}", p.unwrap_or(1.0)),
                    tone: Some(Verdict::Unsure),
                },
                v => tone_only_past_threshold(Text {
                    text: format!("{rel:.2}"),
                    tone: Some(v),
                }),
            }
        }
        // Both measured, the base's is 0: there is no ratio to show.
        // Quiet: nothing to compare is not a finding.
        (None, Some(v), Some(_)) => Text {
            text: if *v == 0.0 { "both 0" } else { "base 0" }.into(),
            tone: Some(Verdict::Same),
        },
        _ => rel_text(None, true, c),
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
             With repeats, ~ and the rank test's p-value where the change is not significant.",
            r.base
        ),
        groups: groups_of(r, |r, g| {
            let mut rows = Vec::new();
            for row in r.rows_in(g) {
                for &ti in &others {
                    let c = &row.cells[ti];
                    let mut cells = vec![
                        Text::plain(row.title()),
                        Text::plain(row.clients.to_string()),
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
                        Text::plain(row.clients.to_string()),
                    ];
                    cells.extend(cols.iter().map(|&i| match row.cells[i].p99_us {
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

pub const SLA_INTRO: &str = "Each q-step runs, per client, one query connection flat out and an inserter and a \
    deleter on a fixed schedule (open loop: a slow server shows as a missed rate). Target: the insert rate asked \
    for, all clients together; the SLA passes when the inserts reach 95% of it over the measured window. A step \
    that failed it has its throughput greyed in the tables and is not counted as faster or slower.";

pub const RESPONSE_INTRO: &str = "How many responses of each operation fell in each range (the Insert Benchmark's \
    histogram), all repeats together; write responses count from their scheduled start. Max: the slowest.";

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

pub const LINKBENCH_LOAD_INTRO: &str = "The load's rate: nodes, links and every row inserted (nodes, links \
    and counts) a second over the whole step, loaders in parallel; medians over repeats. Relative: rows/s ÷ the base's, \
    above 1 is faster. The cost per inserted row is in the efficiency tables.";
pub const LINKBENCH_QPS_INTRO: &str = "Requests a second over each measured window (one row per interval when the \
    step is measured in intervals), all requesters together; errors: requests that failed after the retries of a \
    deadlock or lock wait. Relative: ÷ the base's, above 1 is faster.";
pub const LINKBENCH_OPS_INTRO: &str = "Each operation type: how many completed (all repeats), its share of the \
    requests, its latency (the whole operation, its transaction included; medians over repeats), failures, and \
    how many found nothing to read or change. p50 ÷ and p99 ÷ base: above 1 is slower.";
pub const LINKBENCH_CHECK_INTRO: &str = "After the requests, counttable is compared with the visible links of \
    linktable for a sample of ids spread over the loaded ones: every (id1, link_type) whose count differs, or that has \
    links but no count, is wrong.";

fn ratio_text(r: Option<f64>, tone: fn(f64) -> Verdict) -> Text {
    match r {
        Some(x) => Text {
            text: fmt_ratio(x),
            tone: Some(tone(x)).filter(|v| *v != Verdict::Same),
        },
        None => Text::plain("—"),
    }
}

/// LinkBench's own tables: the load, requests a second, each operation's
/// latency, the consistency check.
fn linkbench(doc: &mut Vec<Block>, r: &Report) {
    let v = &r.linkbench;
    if v.is_empty() {
        return;
    }
    doc.push(Block::Heading(2, "LinkBench".into()));
    if !v.load.is_empty() {
        doc.push(Block::Heading(3, "Load".into()));
        doc.push(Block::Paragraph(LINKBENCH_LOAD_INTRO.into()));
        let rows = v
            .load
            .iter()
            .map(|x| {
                vec![
                    Text::plain(x.target.clone()),
                    Text::plain(x.clients.to_string()),
                    Text::plain(x.nodes.to_string()),
                    Text::plain(x.links.to_string()),
                    Text::plain(format!("{:.1} s", x.secs)),
                    Text::plain(fmt_throughput(x.nodes_per_sec)),
                    Text::plain(fmt_throughput(x.links_per_sec)),
                    Text::plain(fmt_throughput(x.rows_per_sec)),
                    ratio_text(x.relative, verdict),
                ]
            })
            .collect();
        doc.push(Block::Table(Table::new(
            [
                "target", "loaders", "nodes", "links", "time", "nodes/s", "links/s", "rows/s",
                "÷ base",
            ],
            2,
            rows,
        )));
    }
    if !v.requests.is_empty() {
        doc.push(Block::Heading(3, "Requests per second".into()));
        doc.push(Block::Paragraph(LINKBENCH_QPS_INTRO.into()));
        let rows = v
            .requests
            .iter()
            .map(|x| {
                vec![
                    Text::plain(x.step.clone()),
                    Text::plain(x.clients.to_string()),
                    Text::plain(x.target.clone()),
                    Text::plain(fmt_throughput(x.ops_per_sec)),
                    ratio_text(x.relative, verdict),
                    Text::plain(x.errors.to_string()),
                ]
            })
            .collect();
        doc.push(Block::Table(Table::new(
            [
                "step",
                "requesters",
                "target",
                "requests/s",
                "÷ base",
                "errors",
            ],
            3,
            rows,
        )));
    }
    if !v.ops.is_empty() {
        doc.push(Block::Heading(3, "Latency per operation".into()));
        doc.push(Block::Paragraph(LINKBENCH_OPS_INTRO.into()));
        let lat =
            |us: Option<f64>| Text::plain(us.map_or_else(|| "not measured".into(), fmt_latency));
        let rows = v
            .ops
            .iter()
            .map(|x| {
                vec![
                    Text::plain(x.step.clone()),
                    Text::plain(x.target.clone()),
                    Text::plain(x.op),
                    Text::plain(x.count.to_string()),
                    Text::plain(format!("{:.2}%", x.share_pct)),
                    lat(x.p25_us),
                    lat(Some(x.p50_us)),
                    lat(x.p75_us),
                    lat(Some(x.p95_us)),
                    lat(Some(x.p99_us)),
                    lat(Some(x.max_us)),
                    lat(Some(x.mean_us)),
                    Text::plain(x.errors.to_string()),
                    Text::plain(x.not_found.to_string()),
                    ratio_text(x.p50_relative, cost_verdict),
                    ratio_text(x.p99_relative, cost_verdict),
                ]
            })
            .collect();
        doc.push(Block::Table(Table::new(
            [
                "step",
                "target",
                "operation",
                "count",
                "share",
                "p25",
                "p50",
                "p75",
                "p95",
                "p99",
                "max",
                "mean",
                "errors",
                "not found",
                "p50 ÷ base",
                "p99 ÷ base",
            ],
            3,
            rows,
        )));
    }
    if !v.checks.is_empty() {
        doc.push(Block::Heading(3, "Consistency".into()));
        doc.push(Block::Paragraph(LINKBENCH_CHECK_INTRO.into()));
        let rows = v
            .checks
            .iter()
            .map(|x| {
                let verdict = match (&x.failed, x.wrong) {
                    (Some(f), _) => Text {
                        text: format!("not checked: {f}"),
                        tone: Some(Verdict::Worse),
                    },
                    (None, 0) => Text {
                        text: "consistent".into(),
                        tone: Some(Verdict::Better),
                    },
                    (None, n) => Text {
                        text: format!("INCONSISTENT: {n} wrong"),
                        tone: Some(Verdict::Worse),
                    },
                };
                vec![
                    Text::plain(x.target.clone()),
                    Text::plain(x.ids.to_string()),
                    Text::plain(x.wrong.to_string()),
                    verdict,
                ]
            })
            .collect();
        doc.push(Block::Table(Table::new(
            ["target", "ids checked", "wrong", "verdict"],
            1,
            rows,
        )));
    }
}

/// Steps with errors or failures, with the first message of each kind.
pub fn problems(r: &Report) -> Option<Table> {
    let rows: Vec<Vec<Text>> = r
        .problems
        .iter()
        .map(|x| {
            vec![
                Text::plain(r.targets[x.target].name.clone()),
                Text::plain(x.step.clone()),
                Text::plain(x.clients.to_string()),
                Text::plain(x.repeat.to_string()),
                Text::plain(x.what.clone()),
                Text::plain(x.count.map_or_else(|| "—".into(), |n| n.to_string())),
                Text::plain(x.message.clone()),
            ]
        })
        .collect();
    (!rows.is_empty()).then(|| {
        Table::new(
            [
                "target",
                "step",
                "clients",
                "repeat",
                "class/kind",
                "count",
                "first message",
            ],
            7,
            rows,
        )
    })
}

/// One piece of the document, in the order it is shown.
pub enum Block {
    /// A heading of level 1 to 4.
    Heading(u8, String),
    Paragraph(String),
    /// A warning the reader must not miss (a run that did not complete).
    Note(String),
    /// The summary: a sentence per target, with lines under it.
    Summary(Vec<SummaryLine>),
    Table(Table),
    /// Charts side by side.
    Charts(Vec<Chart>),
    /// One row's charts, or why each could not be drawn.
    Step {
        title: String,
        charts: Vec<Result<Chart, String>>,
    },
    /// The table of contents: (level, heading, anchor).
    Toc(Vec<(u8, String, String)>),
    /// Facts behind a line: a run or a target, and its plan text.
    Details {
        summary: String,
        facts: Vec<(String, String)>,
        text: Option<String>,
    },
}

const PER_STEP_INTRO: &str = "Throughput in each second of the measured window (one line per target and repeat: \
    stalls and write-back show here), and the latency percentiles of one event (median over repeats).";

fn section(doc: &mut Vec<Block>, s: Section) {
    doc.push(Block::Heading(2, s.title));
    doc.push(Block::Paragraph(s.intro));
    for (g, t) in s.groups {
        doc.push(Block::Heading(3, g.title().into()));
        doc.push(Block::Table(t));
    }
}

fn run_details(run: &RunMeta) -> Block {
    let h = &run.host;
    Block::Details {
        summary: format!(
            "{}: host {}, started {}, {:?}",
            run.dir, h.hostname, run.started, run.status
        ),
        facts: vec![
            ("CPU".into(), format!("{}, {} cores", h.cpu_model, h.cores)),
            ("memory".into(), fmt_bytes(h.memory_bytes)),
            (
                "kernel".into(),
                if h.os.is_empty() {
                    format!("Linux {}", h.kernel)
                } else {
                    format!("Linux {} ({})", h.kernel, h.os)
                },
            ),
            ("relbench".into(), run.relbench_version.clone()),
            ("sampler".into(), run.sampler_cost.clone()),
            ("plan".into(), run.plan_source.clone()),
        ],
        text: Some(run.plan_text.clone()),
    }
}

fn target_details(t: &TargetMeta) -> Block {
    let mut facts: Vec<(String, String)> = t
        .config
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    facts.push((
        "data on".into(),
        t.filesystem
            .clone()
            .unwrap_or_else(|| "not recorded".into()),
    ));
    if let Some(tr) = &t.transport {
        facts.push(("clients connect by".into(), tr.clone()));
    }
    Block::Details {
        summary: format!("{}: {} {} on {}", t.name, t.engine, t.version, t.host),
        facts,
        text: None,
    }
}

/// The whole report, in order.
/// A figure at three significant digits or so, for rates and counters.
fn fig(v: f64) -> String {
    if v.abs() >= 100.0 {
        fmt_throughput(v)
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else if v.abs() >= 0.01 || v == 0.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.2e}")
    }
}

/// The machine's rates per step and target: vmstat's and iostat's
/// figures over the window, with target ÷ base beside each.
fn rates(doc: &mut Vec<Block>, r: &Report) {
    let cols = r.columns();
    let mut rows_out = Vec::new();
    for row in &r.rows {
        for &ti in &cols {
            let c = &row.cells[ti];
            if c.rates.is_empty() {
                continue;
            }
            let mut cells = vec![
                Text::plain(row.title()),
                Text::plain(row.clients.to_string()),
                Text::plain(r.targets[ti].name.clone()),
            ];
            cells.extend(Rate::ALL.iter().map(|k| {
                Text::plain(match (c.rates.get(k), c.rates_relative.get(k)) {
                    (Some(v), Some(rel)) if !r.is_base(ti) => format!("{} (×{rel:.2})", fig(*v)),
                    (Some(v), _) => fig(*v),
                    (None, _) => NOT_MEASURED.into(),
                })
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

/// Latency of every statement class of every step: p50, p99 and max,
/// medians over repeats.
fn statement_latency(doc: &mut Vec<Block>, r: &Report) {
    let cols = r.columns();
    let mut rows_out = Vec::new();
    for row in &r.rows {
        for &ti in &cols {
            for (class, l) in &row.cells[ti].statements {
                rows_out.push(vec![
                    Text::plain(row.title()),
                    Text::plain(row.clients.to_string()),
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

/// The engine's counters: per step, those that moved most against the
/// base per operation, then every counter that moved, collapsed.
fn counters(doc: &mut Vec<Block>, r: &Report) {
    let others = others(r);
    let cols = r.columns();
    let moved: Vec<Vec<Text>> = r
        .rows
        .iter()
        .flat_map(|row| {
            others
                .iter()
                .copied()
                .filter(|&ti| !row.cells[ti].counters_moved.is_empty())
                .map(|ti| {
                    vec![
                        Text::plain(row.title()),
                        Text::plain(row.clients.to_string()),
                        Text::plain(r.targets[ti].name.clone()),
                        Text::plain(
                            row.cells[ti]
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
    let any = r
        .rows
        .iter()
        .any(|row| row.cells.iter().any(|c| !c.counters_per_op.is_empty()));
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
                    .counters_per_op
                    .iter()
                    .map(move |(k, v)| (format!("{} {k}/op", r.targets[ti].name), fig(*v)))
            })
            .collect();
        if !facts.is_empty() {
            doc.push(Block::Details {
                summary: format!("{} c{}: every counter that moved", row.title(), row.clients),
                facts,
                text: None,
            });
        }
    }
}

/// Server settings, as read back from each server, that differ from its
/// base's.
fn settings(doc: &mut Vec<Block>, r: &Report) {
    let rows_out: Vec<Vec<Text>> = r
        .targets
        .iter()
        .enumerate()
        .flat_map(|(ti, t)| {
            t.settings_differ.iter().map(move |(k, v, b)| {
                vec![
                    Text::plain(t.name.clone()),
                    Text::plain(r.targets[r.base_of[ti]].name.clone()),
                    Text::plain(k.clone()),
                    Text::plain(v.clone()),
                    Text::plain(b.clone()),
                ]
            })
        })
        .collect();
    if rows_out.is_empty() {
        return;
    }
    doc.push(Block::Heading(
        2,
        "Settings that differ from the base".into(),
    ));
    doc.push(Block::Paragraph(
        "The server's effective settings as relbench read them back at the start of the target (not the config \
         file's text), where a target's differ from its base's."
            .into(),
    ));
    doc.push(Block::Table(Table::new(
        ["target", "base", "setting", "target's", "base's"],
        5,
        rows_out,
    )));
}

/// Which step windows other programs or the hypervisor disturbed, and
/// every window where something else was seen at all.
/// A campaign in run order: each step's throughput, or a maintenance
/// step's or restart's duration, against the base; then the database's
/// allocated and apparent size after each step.
fn campaign(doc: &mut Vec<Block>, r: &Report) {
    if r.timeline.is_empty() {
        return;
    }
    let cols = r.columns();
    let others = others(r);
    doc.push(Block::Heading(
        2,
        "Campaign: the sequence in run order".into(),
    ));
    doc.push(Block::Paragraph(
        "Every step as it ran, phase by phase: a workload's throughput (median over repeats), a \
         maintenance step's, restart's or settle's duration in seconds; a phase's first row says where it \
         begins and which server settings it restarted with. A long step measured in intervals has a row \
         per interval (@n/of). ÷ base: throughput ÷ the base's, or for a duration the base's seconds into \
         this target's (above 1 took longer)."
            .into(),
    ));
    let (mut head, _) = target_head(r, &["phase", "step", "clients"], &cols);
    head.extend(
        others
            .iter()
            .map(|&i| format!("{} ÷ base", r.targets[i].name)),
    );
    let ratio = |v: Option<f64>, timed: bool, failed: bool| match v {
        // A duration that grew is the regression: toned as 1/ratio.
        Some(v) => Text {
            text: format!("{v:.2}"),
            tone: Some(verdict(if timed { 1.0 / v } else { v })),
        },
        None if failed => Text::plain("failed"),
        None => Text::plain("—"),
    };
    let rows = r
        .timeline
        .iter()
        .map(|row| {
            let mut cells = vec![
                Text::plain(row.phase_begins.clone().unwrap_or_default()),
                Text::plain(row.title.clone()),
                Text::plain(row.clients.to_string()),
            ];
            for &ti in &cols {
                let c = &row.cells[ti];
                cells.push(Text::plain(match (c.throughput, c.secs) {
                    _ if c.failed.is_some() => "failed".into(),
                    (Some(t), _) => format!("{} {}", fmt_throughput(t), row.unit.name()),
                    (None, Some(s)) => format!("{s:.2} s"),
                    (None, None) => "—".into(),
                }));
            }
            for &ti in &others {
                let c = &row.cells[ti];
                cells.push(tone_only_past_threshold(ratio(
                    c.relative,
                    row.timed,
                    c.failed.is_some(),
                )));
            }
            cells
        })
        .collect();
    doc.push(Block::Table(Table::new(head, 3, rows)));
    let charts = svg::intervals(r);
    if !charts.is_empty() {
        doc.push(Block::Charts(charts));
    }

    if !r
        .timeline
        .iter()
        .any(|row| row.cells.iter().any(|c| c.size.is_some()))
    {
        return;
    }
    doc.push(Block::Heading(3, "Database size after each step".into()));
    doc.push(Block::Paragraph(
        "The datadir's files after each step, the data (tables and indexes) apart from the logs (redo, WAL, \
         binary logs), whose size the configuration sets. Allocated: the blocks the filesystem holds (what \
         du says, and what hole-punching page compression saves); apparent: the files' lengths. ÷ base: the \
         data's allocated bytes ÷ the base's (apparent ÷ the base's in brackets)."
            .into(),
    ));
    let (mut head, _) = target_head(r, &["step", "clients"], &cols);
    head.extend(
        others
            .iter()
            .map(|&i| format!("{} ÷ base", r.targets[i].name)),
    );
    let rows = r
        .timeline
        .iter()
        .map(|row| {
            let mut cells = vec![
                Text::plain(row.title.clone()),
                Text::plain(row.clients.to_string()),
            ];
            for &ti in &cols {
                let c = &row.cells[ti];
                cells.push(Text::plain(
                    match (c.data_allocated, c.data_apparent, c.logs_allocated) {
                        (Some(d), Some(a), Some(l)) => format!(
                            "data {} (apparent {}) + logs {}",
                            fmt_bytes(d),
                            fmt_bytes(a),
                            fmt_bytes(l)
                        ),
                        _ => NOT_MEASURED.into(),
                    },
                ));
            }
            for &ti in &others {
                let c = &row.cells[ti];
                cells.push(Text::plain(
                    match (c.data_allocated_relative, c.data_apparent_relative) {
                        (Some(a), Some(p)) => format!("{a:.2} ({p:.2})"),
                        (Some(a), None) => format!("{a:.2}"),
                        _ => "—".into(),
                    },
                ));
            }
            cells
        })
        .collect();
    doc.push(Block::Table(Table::new(head, 2, rows)));
}

fn interference(doc: &mut Vec<Block>, r: &Report) {
    use crate::metrics::interference::{DISTURBED_SHARE_PCT, DISTURBED_STEAL_PCT};
    if r.interference.is_empty() {
        return;
    }
    doc.push(Block::Heading(2, "Interference".into()));
    let disturbed = r
        .interference
        .iter()
        .filter(|x| x.disturbed.is_some())
        .count();
    let judged = r
        .interference
        .iter()
        .filter(|x| x.not_judged.is_none())
        .count();
    doc.push(Block::Paragraph(format!(
        "What else used the machine while each step ran: other programs' CPU (the machine's busy time less \
         interrupts, the server's processes, relbench and kernel threads) as a share of all its CPUs, steal, \
         and how steady the step's throughput was second to second (coefficient of variation, the slowest \
         whole second ÷ the median one, seconds with nothing done). A window is disturbed at {DISTURBED_SHARE_PCT:.0}% \
         of the machine to other programs or {DISTURBED_STEAL_PCT:.0}% to steal: a CPU-bound step can lose about \
         that much throughput, as much as the report's 5% threshold; steal's threshold is higher because a VM's \
         own IO shows as steal. CPU is counted in 10 ms ticks, so a short window must pass the threshold by \
         2% ÷ its length in seconds. {disturbed} of {judged} judged windows were disturbed. Listed: \
         windows where other programs or steal reached 1%, or a second with nothing done."
    )));
    let pct =
        |v: Option<f64>| Text::plain(v.map_or_else(|| NOT_MEASURED.into(), |v| format!("{v:.1}%")));
    let rows: Vec<Vec<Text>> = r
        .interference
        .iter()
        .filter(|x| {
            x.disturbed.is_some()
                || x.others_share_pct.unwrap_or(0.0) >= 1.0
                || x.steal_pct.unwrap_or(0.0) >= 1.0
                || x.stalls > 0
        })
        .map(|x| {
            vec![
                Text::plain(x.step.clone()),
                Text::plain(x.clients.to_string()),
                Text::plain(r.targets[x.target].name.clone()),
                Text::plain(x.repeat.to_string()),
                pct(x.others_share_pct),
                pct(x.steal_pct),
                Text::plain(
                    x.throughput_cv
                        .map_or_else(|| "—".into(), |v| format!("{v:.3}")),
                ),
                Text::plain(
                    x.worst_second_vs_median
                        .map_or_else(|| "—".into(), |v| format!("{v:.2}")),
                ),
                Text::plain(x.stalls.to_string()),
                match &x.disturbed {
                    Some(why) => Text {
                        text: why.clone(),
                        tone: Some(Verdict::Disturbed),
                    },
                    None => Text::plain(x.top.join(", ")),
                },
            ]
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    doc.push(Block::Table(Table::new(
        [
            "step",
            "clients",
            "target",
            "repeat",
            "other programs",
            "steal",
            "throughput CV",
            "worst s ÷ median",
            "stalled s",
            "disturbed by / seen",
        ],
        4,
        rows,
    )));
}

const OVERVIEW_INTRO: &str = "Each step's throughput ÷ the base's, one column per target in plan order. Red at \
    ≤ 0.95 and green at ≥ 1.05, deeper toward ×½ and ×2; white within 5% (or within the A/A noise floor); grey \
    where the change cannot be judged (not significant, disturbed, a missed SLA). Hover a cell for both \
    throughputs, the test and the cost that moved most. Below, per group, each step across the targets in \
    order.";

/// The document of one or more comparisons: the targets and any warning,
/// a table of contents, the overview of each comparison, each
/// comparison's summary and tables, then what belongs to the runs (per-step
/// charts, errors, run and target facts) from `all`, the report of every
/// target.
pub fn document(cs: &[Comparison], all: &Report) -> Vec<Block> {
    let mut doc = vec![Block::Heading(1, "relbench report".into())];
    let names: Vec<&str> = all.targets.iter().map(|t| t.name.as_str()).collect();
    let several = cs.len() > 1;
    doc.push(Block::Paragraph(if several {
        format!(
            "Targets: {}. Comparisons: {}.",
            names.join(", "),
            cs.iter()
                .map(|c| format!("{} (base {})", c.title, c.report.base))
                .collect::<Vec<_>>()
                .join("; ")
        )
    } else {
        let r = &cs[0].report;
        format!(
            "Targets: {}. Base: {}{}.",
            names.join(", "),
            r.base,
            if r.by_host() {
                format!(" on each host ({})", r.hosts.join(", "))
            } else {
                String::new()
            }
        )
    }));
    for run in &all.runs {
        if run.status != crate::results::RunStatus::Complete {
            doc.push(Block::Note(format!(
                "The run in {} is {:?}, not complete: steps it did not reach are missing.",
                run.dir, run.status
            )));
        }
        for why in &run.skipped_files {
            doc.push(Block::Note(format!("Left out of this report: {why}.")));
        }
    }
    for c in cs {
        for f in &c.report.base_failed {
            let dirs: Vec<&str> = all.runs.iter().map(|r| r.dir.as_str()).collect();
            doc.push(Block::Note(format!(
                "The base, {}, has no figure on any step{}, so no target is compared with it{}. {}",
                f.base,
                f.why
                    .as_ref()
                    .map(|w| format!(" (it failed: {w})"))
                    .unwrap_or_default(),
                if several {
                    format!(" in \"{}\"", c.title)
                } else {
                    String::new()
                },
                match &f.instead {
                    Some(t) => format!(
                        "Every other target's absolute figures are below; to compare them, report against another base: `relbench report {} --base {t}`.",
                        dirs.join(" ")
                    ),
                    None => "No other target has figures either.".into(),
                }
            )));
        }
    }
    let toc_at = doc.len();
    let maps: Vec<(String, Vec<Chart>)> = cs
        .iter()
        .map(|c| (c.title.clone(), overview::all(&c.report)))
        .filter(|(_, charts)| !charts.is_empty())
        .collect();
    if !maps.is_empty() {
        doc.push(Block::Heading(2, "Overview".into()));
        doc.push(Block::Paragraph(OVERVIEW_INTRO.into()));
        for (title, mut charts) in maps {
            if several {
                doc.push(Block::Heading(3, format!("Overview: {title}")));
                for c in &mut charts {
                    c.file = format!("{}-{}", svg::slug(&title), c.file);
                }
            }
            let map = charts.remove(0);
            doc.push(Block::Charts(vec![map]));
            if !charts.is_empty() {
                doc.push(Block::Charts(charts));
            }
        }
    }
    for c in cs {
        let r = &c.report;
        let mut part = body(r);
        if several {
            doc.push(Block::Heading(2, format!("Comparison: {}", c.title)));
            let names: Vec<&str> = r.targets.iter().map(|t| t.name.as_str()).collect();
            doc.push(Block::Paragraph(format!(
                "Base: {}. Targets: {}.",
                r.base,
                names.join(", ")
            )));
            for b in &mut part {
                match b {
                    Block::Heading(level, _) => *level += 1,
                    // Each comparison's charts get files of their own.
                    Block::Charts(charts) => {
                        for ch in charts {
                            ch.file = format!("{}-{}", svg::slug(&c.title), ch.file);
                        }
                    }
                    _ => {}
                }
            }
        }
        doc.extend(part);
    }
    doc.extend(tail(all));
    let toc = contents(&doc, if several { 3 } else { 2 });
    doc.insert(toc_at, Block::Toc(toc));
    doc
}

/// A comparison's summary and tables.
fn body(r: &Report) -> Vec<Block> {
    let mut doc = Vec::new();
    if !r.summary_lines.is_empty() {
        doc.push(Block::Heading(2, "Summary".into()));
        doc.push(Block::Summary(r.summary_lines.clone()));
    }

    // Per group: the relative table and its charts, then the absolute one.
    let rel = relative(r);
    let mut abs = absolute(r);
    doc.push(Block::Heading(2, "Throughput".into()));
    doc.push(Block::Paragraph(format!("{} {}", rel.intro, abs.intro)));
    let mut rel_groups = rel.groups;
    for g in Group::ALL {
        let Some(ai) = abs.groups.iter().position(|(x, _)| *x == g) else {
            continue;
        };
        doc.push(Block::Heading(3, g.title().into()));
        if let Some(ri) = rel_groups.iter().position(|(x, _)| *x == g) {
            doc.push(Block::Heading(4, "Relative".into()));
            doc.push(Block::Table(rel_groups.remove(ri).1));
            let charts = svg::relative(r, g);
            if !charts.is_empty() {
                doc.push(Block::Charts(charts));
            }
        }
        doc.push(Block::Heading(4, "Absolute".into()));
        doc.push(Block::Table(abs.groups.remove(ai).1));
    }

    campaign(&mut doc, r);
    linkbench(&mut doc, r);
    if let Some(t) = sla(r) {
        doc.push(Block::Heading(
            2,
            "Insert Benchmark: background writes and the SLA".into(),
        ));
        doc.push(Block::Paragraph(SLA_INTRO.into()));
        doc.push(Block::Table(t));
    }
    if let Some(t) = response_times(r) {
        doc.push(Block::Heading(2, "Insert Benchmark: response times".into()));
        doc.push(Block::Paragraph(RESPONSE_INTRO.into()));
        doc.push(Block::Table(t));
    }
    section(&mut doc, efficiency(r));
    if let Some(c) = svg::db_size(r) {
        doc.push(Block::Charts(vec![c]));
    }
    section(&mut doc, efficiency_relative(r));
    section(&mut doc, latency(r));
    rates(&mut doc, r);
    statement_latency(&mut doc, r);
    counters(&mut doc, r);
    settings(&mut doc, r);
    interference(&mut doc, r);

    doc
}

/// What belongs to the runs rather than to a comparison.
fn tail(r: &Report) -> Vec<Block> {
    let mut doc = Vec::new();
    doc.push(Block::Heading(2, "Per step".into()));
    doc.push(Block::Paragraph(PER_STEP_INTRO.into()));
    // Why a chart is missing is said once, with the steps it applies to,
    // not under each step.
    let steps = svg::per_step(r);
    let mut why: Vec<(String, Vec<String>)> = Vec::new();
    for s in &steps {
        for e in [&s.rate, &s.latency]
            .into_iter()
            .filter_map(|c| c.as_ref().err())
        {
            match why.iter_mut().find(|(w, _)| w == e) {
                Some((_, list)) => list.push(s.title.clone()),
                None => why.push((e.clone(), vec![s.title.clone()])),
            }
        }
    }
    for (w, list) in why {
        doc.push(Block::Paragraph(format!(
            "No chart where {w}: {}.",
            list.join("; ")
        )));
    }
    for s in steps {
        let mut charts: Vec<Result<Chart, String>> = [s.rate, s.latency]
            .into_iter()
            .filter(Result::is_ok)
            .collect();
        charts.extend(s.classes.into_iter().map(Ok));
        if charts.is_empty() {
            continue;
        }
        doc.push(Block::Step {
            title: s.title,
            charts,
        });
    }
    if let Some(t) = problems(r) {
        doc.push(Block::Heading(2, "Errors and failed steps".into()));
        doc.push(Block::Table(t));
    }
    doc.push(Block::Heading(2, "Runs".into()));
    doc.extend(r.runs.iter().map(run_details));
    doc.push(Block::Heading(2, "Targets".into()));
    doc.extend(r.targets.iter().map(target_details));
    doc
}

/// The headings down to `depth`, each with its anchor (GitHub's: lower
/// case, punctuation dropped, spaces to hyphens, a count on repeats), so
/// the Markdown's links work on GitHub and the HTML's headings carry the
/// same ids.
fn contents(doc: &[Block], depth: u8) -> Vec<(u8, String, String)> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for b in doc {
        if let Block::Heading(level, text) = b {
            let a = anchor(text, &mut seen);
            if (2..=depth).contains(level) {
                out.push((*level, text.clone(), a));
            }
        }
    }
    out
}

/// GitHub's anchor of a heading, counting repeats in `seen`.
pub fn anchor(text: &str, seen: &mut Vec<String>) -> String {
    let base: String = text
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect();
    let n = seen.iter().filter(|s| **s == base).count();
    seen.push(base.clone());
    if n == 0 {
        base
    } else {
        format!("{base}-{n}")
    }
}
