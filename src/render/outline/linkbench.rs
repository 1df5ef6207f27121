//! LinkBench's tables: load rate, requests per interval, latency per
//! operation, the consistency check.

use super::*;

/// LinkBench's own tables: the load, requests a second, each operation's
/// latency, the consistency check.
pub(super) fn linkbench(doc: &mut Vec<Block>, r: &Report) {
    let v = &r.linkbench;
    if v.is_empty() {
        return;
    }
    doc.push(Block::Heading(2, "LinkBench".into()));
    if !v.load.is_empty() {
        load(doc, v);
    }
    if !v.requests.is_empty() {
        requests(doc, v);
    }
    if !v.ops.is_empty() {
        operations(doc, v);
    }
    if !v.checks.is_empty() {
        checks(doc, v);
    }
}

fn load(doc: &mut Vec<Block>, v: &crate::compare::linkbench::View) {
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
                ratio_text(x.relative, x.verdict()),
            ]
        })
        .collect();
    doc.push(Block::Table(Table::new(
        [
            "target", "loaders", "nodes", "links", "time", "nodes/s", "links/s", "rows/s", "÷ base",
        ],
        2,
        rows,
    )));
}

fn requests(doc: &mut Vec<Block>, v: &crate::compare::linkbench::View) {
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
                ratio_text(x.relative, x.verdict()),
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

fn operations(doc: &mut Vec<Block>, v: &crate::compare::linkbench::View) {
    doc.push(Block::Heading(3, "Latency per operation".into()));
    doc.push(Block::Paragraph(LINKBENCH_OPS_INTRO.into()));
    let lat = |us: Option<f64>| Text::plain(us.map_or_else(|| "not measured".into(), fmt_latency));
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
                // Ratios of two medians, untested: never coloured as a
                // verdict (the step's verdict is the requests table's).
                ratio_text(x.p50_relative, None),
                ratio_text(x.p99_relative, None),
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

fn checks(doc: &mut Vec<Block>, v: &crate::compare::linkbench::View) {
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
