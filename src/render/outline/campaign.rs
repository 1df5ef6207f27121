//! A campaign's timeline: every step in run order across phases.

use super::*;

/// Which step windows other programs or the hypervisor disturbed, and
/// every window where something else was seen at all.
/// A campaign in run order: each step's throughput, or a maintenance
/// step's or restart's duration, against the base; then the database's
/// allocated and apparent size after each step.
pub(super) fn campaign(doc: &mut Vec<Block>, r: &Report) {
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
    let ratio = |c: &crate::compare::TimelineCell, timed: bool| match c.relative {
        // A duration that grew is the regression: the model tones it so.
        Some(v) => Text {
            text: format!("{v:.2}"),
            tone: c.verdict(timed),
        },
        None if c.failed.is_some() => Text::plain("failed"),
        None => Text::plain("—"),
    };
    let rows = r
        .timeline
        .iter()
        .map(|row| {
            let mut cells = vec![
                Text::plain(row.phase_begins.clone().unwrap_or_default()),
                Text::plain(row.title.clone()),
                Text::plain(row.id.clients.to_string()),
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
                cells.push(tone_only_past_threshold(ratio(c, row.timed)));
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
                Text::plain(row.id.clients.to_string()),
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
