//! The report's outline, built once from the model: the document as a list
//! of blocks (headings, paragraphs, tables of text cells, charts) in the
//! order every format shows them. Markdown and HTML write the blocks, the
//! terminal prints the relative table, so they always show the same cells
//! in the same order; this file decides what a cell says, never a figure.

mod adaptive;
mod campaign;
mod costs;
mod internals;
mod latency;
mod linkbench;
mod profiles;
mod runs;
mod throughput;
mod tpcc;

use super::overview;
use super::svg::{self, Chart};
use crate::compare::{
    Cell, Comparison, Cost, Method, Rate, Report, RunMeta, SummaryLine, TargetMeta, Verdict,
};
use crate::measure::stats::{self, Interval};
use crate::measure::units::{fmt_bytes, fmt_latency, fmt_ratio, fmt_throughput};
use crate::workload::Group;
use campaign::campaign;
use costs::{counters, rates};
pub use costs::{efficiency, efficiency_relative};
use latency::statement_latency;
pub use latency::{latency, response_times, sla};
use linkbench::linkbench;
pub use runs::problems;
use runs::{interference, run_details, settings, target_details};
pub use throughput::{absolute, relative};

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
    Text::plain(if c.figures.failed.is_some() {
        "failed"
    } else {
        "—"
    })
}

/// Why a cell has no ratio to show: failed, not measured (a cost the
/// step has no figure for), or nothing to compare.
fn no_ratio(cost: bool, c: &Cell) -> Text {
    if c.figures.failed.is_some() {
        Text::plain("failed")
    } else if cost && c.figures.throughput.is_some() {
        Text::plain(NOT_MEASURED)
    } else {
        Text::plain("—")
    }
}

/// A ratio and the verdict the model gave it, or a dash.
fn ratio_2(v: Option<f64>, tone: Option<Verdict>) -> Text {
    match v {
        Some(v) => Text {
            text: format!("{v:.2}"),
            tone,
        },
        None => Text::plain("—"),
    }
}

fn interval(i: &Interval, digits: usize) -> String {
    format!("({:.digits$}–{:.digits$})", i.lo, i.hi)
}

/// A throughput ratio with what the repeats say of it: the interval,
/// coloured when changed, plain when the same, and `~` with the repeats
/// that would decide it when undecided.
fn relative_cell(c: &Cell) -> Text {
    let (Some(rel), Some(v)) = (c.test.relative, c.verdict()) else {
        return no_ratio(false, c);
    };
    if let Some(m) = c.judgement.sla_missed {
        return Text {
            text: format!("{rel:.2} (SLA missed: {:.0}%)", m * 100.0),
            tone: Some(Verdict::Undecided),
        };
    }
    if let Some(m) = c.judgement.rate_missed {
        return Text {
            text: format!("{rel:.2} (rate missed: {:.0}%)", m * 100.0),
            tone: Some(Verdict::Undecided),
        };
    }
    if c.judgement.base_sla_missed {
        return Text {
            text: format!("{rel:.2} (the base missed the SLA)"),
            tone: Some(Verdict::Undecided),
        };
    }
    if v == Verdict::Disturbed {
        return Text {
            text: format!(
                "{rel:.2} (disturbed: {})",
                if c.judgement.disturbed.is_some() {
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
    if v == Verdict::Unsteady {
        return Text {
            text: format!("{rel:.2} (not steady)"),
            tone: Some(Verdict::Unsteady),
        };
    }
    if v == Verdict::Untested {
        return Text {
            text: format!("{rel:.2} (untested)"),
            tone: Some(Verdict::Untested),
        };
    }
    let Some(sig) = &c.test.significance else {
        return tone_only_past_threshold(ratio_2(Some(rel), c.ratio_verdict()));
    };
    let ci = sig
        .shown(v)
        .as_ref()
        .map(|i| format!(" {}", interval(i, 2)))
        .unwrap_or_default();
    if v == Verdict::Undecided {
        let needed = sig
            .repeats_needed
            .map(|n| format!(" needs {n} repeats"))
            .unwrap_or_default();
        return Text {
            text: format!("~{rel:.2}{ci}{needed}"),
            tone: Some(Verdict::Undecided),
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
            c.test
                .significance
                .as_ref()
                .filter(|s| matches!(s.method, Method::Paired | Method::Unpaired))
                .and_then(|s| s.interval)
        } else {
            c.figures.throughput_interval
        };
        if let Some(i) = i {
            if !levels.iter().any(|(l, _)| (l - i.level).abs() < 1e-9) {
                levels.push((i.level, c.figures.repeats));
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

pub const SLA_INTRO: &str = "Each q-step runs, per client, one query connection flat out and an inserter and a \
    deleter on a fixed schedule (open loop: a slow server shows as a missed rate). Target: the insert rate asked \
    for, all clients together; the SLA passes when the inserts reach 95% of it over the measured window. A step \
    that failed it has its throughput greyed in the tables and is not counted as faster or slower.";

pub const RESPONSE_INTRO: &str = "How many responses of each operation fell in each range (the Insert Benchmark's \
    histogram), all repeats together; write responses count from their scheduled start. Max: the slowest.";

pub const LINKBENCH_LOAD_INTRO: &str = "The load's rate: nodes, links and every row inserted (nodes, links \
    and counts) a second over the whole step, loaders in parallel; medians over repeats. Relative: rows/s ÷ the base's, \
    above 1 is faster. The cost per inserted row is in the efficiency tables.";
pub const LINKBENCH_QPS_INTRO: &str = "Requests a second over each measured window (one row per interval when the \
    step is measured in intervals), all requesters together; errors: requests that failed after the retries of a \
    deadlock or lock wait. Relative: ÷ the base's, above 1 is faster.";
pub const LINKBENCH_OPS_INTRO: &str = "Each operation type: how many completed (all repeats), its share of the \
    requests, its latency (the whole operation, its transaction included; medians over repeats), failures, and \
    how many found nothing to read or change. p50 ÷ and p99 ÷ base: above 1 is slower; ratios of two \
    medians, not tested (the step's verdict is the requests table's).";
pub const LINKBENCH_CHECK_INTRO: &str = "After the requests, counttable is compared with the visible links of \
    linktable for a sample of ids spread over the loaded ones: every (id1, link_type) whose count differs, or that has \
    links but no count, is wrong.";

/// A ratio as `fmt_ratio` writes it, coloured by the model's verdict
/// unless that is "the same".
fn ratio_text(r: Option<f64>, tone: Option<Verdict>) -> Text {
    match r {
        Some(x) => Text {
            text: fmt_ratio(x),
            tone: tone.filter(|v| *v != Verdict::Same),
        },
        None => Text::plain("—"),
    }
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
        charts: Vec<Result<Chart, crate::measure::Unmeasured>>,
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

const OVERVIEW_INTRO: &str = "Each step's throughput ÷ the base's, one column per target in plan order. Red at \
    ≤ 0.95 and green at ≥ 1.05 where a change is shown, deeper toward ×½ and ×2; white where the same is shown \
    (the interval inside 5%, or inside the A/A spread); grey where it is undecided (not shown either way, not tested, a \
    missed SLA); pale violet with a * where \
    another program disturbed the window, here or on the base. Hover a cell for both throughputs, the test \
    and the cost that moved most.";

/// The section after the summary with the overview's companion charts.
const ACROSS_INTRO: &str =
    "Per group, each step across the targets in order (a hollow point or bar: a \
    disturbed window).";

/// The document of one or more comparisons: the targets and any warning,
/// a table of contents, the overview of each comparison, each
/// comparison's summary and tables, then what belongs to the runs (per-step
/// charts, errors, run and target facts) from `all`, the report of every
/// target.
pub fn document(cs: &[Comparison], all: &Report) -> Vec<Block> {
    let mut doc = vec![Block::Heading(1, "relbench report".into())];
    let several = cs.len() > 1;
    doc.push(Block::Paragraph(targets_line(cs, all)));
    doc.extend(notes(cs, all));
    let toc_at = doc.len();
    let mut across = overview_maps(&mut doc, cs);
    for c in cs {
        doc.extend(comparison(c, &mut across, several));
    }
    doc.extend(tail(all));
    let toc = contents(&doc, if several { 3 } else { 2 });
    doc.insert(toc_at, Block::Toc(toc));
    doc
}

/// `Targets: a, b. Base: a.`, or the comparisons with their bases.
fn targets_line(cs: &[Comparison], all: &Report) -> String {
    let names: Vec<&str> = all.targets.iter().map(|t| t.name.as_str()).collect();
    let several = cs.len() > 1;
    if several {
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
    }
}

/// What the reader should know before the figures: runs not complete,
/// files left out, client shares, server counts that disagree, host
/// notes, bases with no figure.
fn notes(cs: &[Comparison], all: &Report) -> Vec<Block> {
    let several = cs.len() > 1;
    let mut doc = Vec::new();
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
        if let Some(share) = &run.client_share {
            doc.push(Block::Note(format!(
                "The run in {} is client share {share} of a study: its throughput and latencies are its \
                 clients' alone. `relbench merge` with the other shares' directories adds them up.",
                run.dir
            )));
        }
        for why in &run.server_count_notes {
            doc.push(Block::Note(format!(
                "The server's own count disagrees: {why}."
            )));
        }
    }
    for c in cs {
        for n in &c.report.host_notes {
            doc.push(Block::Note(n.clone()));
        }
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
    doc
}

/// The overview maps of every comparison; returns each comparison's
/// companion charts, which go after its summary.
fn overview_maps(doc: &mut Vec<Block>, cs: &[Comparison]) -> Vec<(String, Vec<Chart>)> {
    let several = cs.len() > 1;
    let mut across: Vec<(String, Vec<Chart>)> = Vec::new();
    let maps: Vec<(String, Vec<Chart>)> = cs
        .iter()
        .map(|c| (c.title.clone(), overview::all(&c.report)))
        .filter(|(_, charts)| !charts.is_empty())
        .collect();
    if !maps.is_empty() {
        doc.push(Block::Heading(2, "Overview".into()));
        doc.push(Block::Paragraph(OVERVIEW_INTRO.into()));
        for (title, mut charts) in maps {
            // The map alone here, so the summary after it starts on the
            // first screen (it began 1,200 px down behind five companion
            // charts); those come after each comparison's summary, where
            // the comparison's own charts get its file names.
            let rest = charts.split_off(1);
            if several {
                doc.push(Block::Heading(3, format!("Overview: {title}")));
                for c in &mut charts {
                    c.file = format!("{}-{}", svg::slug(&title), c.file);
                }
            }
            doc.push(Block::Charts(charts));
            if !rest.is_empty() {
                across.push((title, rest));
            }
        }
    }
    across
}

/// One comparison's summary, its overview's companion charts, and its
/// tables (under a heading of its own when there are several).
fn comparison(c: &Comparison, across: &mut Vec<(String, Vec<Chart>)>, several: bool) -> Vec<Block> {
    let r = &c.report;
    let mut part = body(r);
    // The overview's companion charts, right after this comparison's
    // summary.
    if let Some(i) = across.iter().position(|(t, _)| *t == c.title) {
        let (_, charts) = across.remove(i);
        let at = part
            .iter()
            .position(|b| matches!(b, Block::Summary(_)))
            .map_or(0, |p| p + 1);
        part.splice(
            at..at,
            [
                Block::Heading(2, "Across targets".into()),
                Block::Paragraph(ACROSS_INTRO.into()),
                Block::Charts(charts),
            ],
        );
    }
    if !several {
        return part;
    }
    let names: Vec<&str> = r.targets.iter().map(|t| t.name.as_str()).collect();
    let mut head = vec![
        Block::Heading(2, format!("Comparison: {}", c.title)),
        Block::Paragraph(format!("Base: {}. Targets: {}.", r.base, names.join(", "))),
    ];
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
    head.extend(part);
    head
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
    tpcc::tpcc(&mut doc, r);
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
    internals::plans(&mut doc, r);
    internals::waits(&mut doc, r);
    internals::statements(&mut doc, r);
    profiles::profiles(&mut doc, r);
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
            let e = e.to_string();
            match why.iter_mut().find(|(w, _)| *w == e) {
                Some((_, list)) => list.push(s.title.clone()),
                None => why.push((e, vec![s.title.clone()])),
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
        let mut charts: Vec<Result<Chart, crate::measure::Unmeasured>> = [s.rate, s.latency]
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
    doc.extend(adaptive::adaptive(r));
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
