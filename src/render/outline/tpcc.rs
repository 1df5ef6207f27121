//! TPC-C's tables: the load, tpmC and tpmTotal per run, each
//! transaction's response times, consistency conditions 1–4.

use super::*;
use crate::compare::tpcc::View;

const LOAD_INTRO: &str = "The initial population's rate: every row inserted a second over the \
    whole step (the items once, then a warehouse per loader at a time); medians over repeats. \
    ÷ base: above 1 is faster.";
const RUN_INTRO: &str = "tpmC: new-order transactions completed a minute over the measured window \
    (those rolled back on an unused item included, as the specification ends them); tpmTotal: every \
    transaction; medians over repeats. ÷ base: transactions a second against the base's, judged as \
    every cell is. Rolled back: new orders ended on an unused item (the specification asks 1%); \
    errors: transactions that failed (deadlocks, serialization failures, lock waits). relbench runs \
    without keying and think times, so tpmC here is a closed loop's, not an audited result.";
const TX_INTRO: &str = "Each transaction type: how many completed (all repeats), its share of the \
    mix, its response time (begin to commit; medians over repeats): p90 is the specification's \
    bound. p90 ÷ base: above 1 is slower; a ratio of two medians, not tested (the step's verdict is \
    the tpmC table's).";
const CHECK_INTRO: &str = "After the run, consistency conditions 1–4 (clause 3.3.2): warehouse \
    and district year-to-date totals, next order ids, consecutive new orders, order lines.";

/// TPC-C's own tables.
pub(super) fn tpcc(doc: &mut Vec<Block>, r: &Report) {
    let v = &r.tpcc;
    if v.is_empty() {
        return;
    }
    doc.push(Block::Heading(2, "TPC-C".into()));
    if !v.load.is_empty() {
        load(doc, v);
    }
    if !v.runs.is_empty() {
        runs(doc, v);
    }
    if !v.transactions.is_empty() {
        transactions(doc, v);
    }
    if !v.checks.is_empty() {
        checks(doc, v);
    }
}

fn load(doc: &mut Vec<Block>, v: &View) {
    doc.push(Block::Heading(3, "Load".into()));
    doc.push(Block::Paragraph(LOAD_INTRO.into()));
    let rows = v
        .load
        .iter()
        .map(|x| {
            vec![
                Text::plain(x.target.clone()),
                Text::plain(x.clients.to_string()),
                Text::plain(x.rows.to_string()),
                Text::plain(format!("{:.1} s", x.secs)),
                Text::plain(fmt_throughput(x.rows_per_sec)),
                ratio_text(x.relative, x.verdict()),
            ]
        })
        .collect();
    doc.push(Block::Table(Table::new(
        ["target", "loaders", "rows", "time", "rows/s", "÷ base"],
        2,
        rows,
    )));
}

fn runs(doc: &mut Vec<Block>, v: &View) {
    doc.push(Block::Heading(3, "tpmC".into()));
    doc.push(Block::Paragraph(RUN_INTRO.into()));
    let rows = v
        .runs
        .iter()
        .map(|x| {
            vec![
                Text::plain(x.step.clone()),
                Text::plain(x.clients.to_string()),
                Text::plain(x.target.clone()),
                Text::plain(format!("{:.0}", x.tpmc)),
                Text::plain(format!("{:.0}", x.tpm_total)),
                ratio_text(x.relative, x.verdict()),
                Text::plain(
                    x.rollback_pct
                        .map_or_else(|| "none ran".into(), |p| format!("{p:.2}%")),
                ),
                Text::plain(x.errors.to_string()),
            ]
        })
        .collect();
    doc.push(Block::Table(Table::new(
        [
            "step",
            "clients",
            "target",
            "tpmC",
            "tpmTotal",
            "÷ base",
            "rolled back",
            "errors",
        ],
        3,
        rows,
    )));
}

fn transactions(doc: &mut Vec<Block>, v: &View) {
    doc.push(Block::Heading(3, "Response time per transaction".into()));
    doc.push(Block::Paragraph(TX_INTRO.into()));
    let lat = |us: Option<f64>| Text::plain(us.map_or_else(|| "not measured".into(), fmt_latency));
    let rows = v
        .transactions
        .iter()
        .map(|x| {
            vec![
                Text::plain(x.step.clone()),
                Text::plain(x.target.clone()),
                Text::plain(x.transaction),
                Text::plain(x.count.to_string()),
                Text::plain(format!("{:.2}%", x.share_pct)),
                lat(Some(x.p50_us)),
                lat(x.p90_us),
                lat(Some(x.p95_us)),
                lat(Some(x.p99_us)),
                lat(Some(x.max_us)),
                Text::plain(x.errors.to_string()),
                // A ratio of two medians, untested: never coloured as a
                // verdict (the step's verdict is the tpmC table's).
                ratio_text(x.p90_relative, None),
            ]
        })
        .collect();
    doc.push(Block::Table(Table::new(
        [
            "step",
            "target",
            "transaction",
            "count",
            "share",
            "p50",
            "p90",
            "p95",
            "p99",
            "max",
            "errors",
            "p90 ÷ base",
        ],
        3,
        rows,
    )));
}

fn checks(doc: &mut Vec<Block>, v: &View) {
    doc.push(Block::Heading(3, "Consistency".into()));
    doc.push(Block::Paragraph(CHECK_INTRO.into()));
    let rows = v
        .checks
        .iter()
        .map(|x| {
            let verdict = match (x.failed, x.broken, &x.message) {
                (true, _, m) => Text {
                    text: format!("not checked: {}", m.as_deref().unwrap_or("the step failed")),
                    tone: Some(Verdict::Worse),
                },
                (false, 0, _) => Text {
                    text: "conditions 1–4 hold".into(),
                    tone: Some(Verdict::Better),
                },
                (false, n, m) => Text {
                    text: format!(
                        "INCONSISTENT: {n} condition(s) broken: {}",
                        m.as_deref().unwrap_or_default()
                    ),
                    tone: Some(Verdict::Worse),
                },
            };
            vec![
                Text::plain(x.target.clone()),
                Text::plain(x.warehouses.to_string()),
                verdict,
            ]
        })
        .collect();
    doc.push(Block::Table(Table::new(
        ["target", "warehouses", "verdict"],
        1,
        rows,
    )));
}
