//! An adaptive run's section (`repeats = "auto"`): its bounds, what the
//! minimum repeats took, each round's open cells and why, what the round
//! took and the budget left after it, and why the run stopped.

use super::{Block, Table, Text};
use crate::compare::Report;
use crate::measure::sequential;
use crate::measure::units::human_secs;
use crate::results::adaptive::{AdaptiveRecord, OpenCell};

pub(super) fn adaptive(r: &Report) -> Vec<Block> {
    let Some(a) = &r.adaptive else {
        return Vec::new();
    };
    let b = a.bounds;
    let mut doc = vec![Block::Heading(2, "Adaptive repeats".into())];
    let budget = b.budget_secs.map_or_else(
        || "no time budget".to_string(),
        |s| format!("a budget of {}", human_secs(s)),
    );
    let Some(rec) = &a.record else {
        doc.push(Block::Paragraph(format!(
            "repeats = \"auto\": {} to {} repeats, {budget}. No round has been decided yet: the minimum \
             repeats have not all run.",
            b.min, b.max
        )));
        return doc;
    };
    let pct = |look| {
        let p = format!("{:.3}", 100.0 * sequential::level(look, b.looks()));
        format!("{}%", p.trim_end_matches('0').trim_end_matches('.'))
    };
    let levels = if b.looks() > 1 {
        format!(
            " A cell is judged at the level of the look its data reached: {} at the first, {} at \
             each of the {} looks repeats may add",
            pct(1),
            pct(b.looks()),
            b.looks() - 1
        )
    } else {
        format!(" A cell is judged at {}", pct(1))
    };
    let ended = rec.ended.as_ref().map_or_else(
        || "The run has not finished its rounds.".to_string(),
        |e| format!("Stopped: {}.", e.words),
    );
    doc.push(Block::Paragraph(format!(
        "repeats = \"auto\": {} to {} repeats, {budget}. After the minimum ({} of measuring), a round \
         added one repeat to the target and base of each cell whose interval still straddled an edge of \
         the band it is judged by (±5%, or the A/A floor where wider), most open first.{levels}; \
         every cell not listed below was decided at the minimum. {} round(s), {} in all. {ended}",
        b.min,
        b.max,
        human_secs(rec.first_secs),
        rec.rounds.len(),
        human_secs(rec.spent_secs()),
    )));
    if rec.rounds.is_empty() {
        return doc;
    }
    let mut spent = rec.first_secs;
    let rows = rec
        .rounds
        .iter()
        .map(|round| {
            let took = round.secs.unwrap_or(round.partial_secs);
            spent += took;
            vec![
                Text::plain(round.look.to_string()),
                Text::plain(round.repeat.to_string()),
                Text::plain(
                    round
                        .open
                        .iter()
                        .map(|o| o.why.as_str())
                        .collect::<Vec<_>>()
                        .join("; "),
                ),
                Text::plain(human_secs(round.estimate_secs)),
                Text::plain(match round.secs {
                    Some(s) => human_secs(s),
                    None => format!("{} (interrupted)", human_secs(took)),
                }),
                Text::plain(
                    b.budget_secs
                        .map_or_else(|| "—".into(), |s| human_secs(s - spent)),
                ),
            ]
        })
        .collect();
    doc.push(Block::Table(Table::new(
        [
            "round",
            "repeat",
            "open cells, most open first",
            "expected",
            "took",
            "budget left",
        ],
        3,
        rows,
    )));
    doc.push(Block::Table(cells(rec, b.min)));
    doc
}

/// Per cell a round repeated: the repeats it got, and when it was
/// decided (after the last round that chose it), or that it was still
/// open when the rounds stopped.
fn cells(rec: &AdaptiveRecord, min: u32) -> Table {
    let mut seen: Vec<(&OpenCell, Vec<u32>)> = Vec::new();
    for round in &rec.rounds {
        for o in &round.open {
            match seen.iter_mut().find(|(x, _)| x.same_cell(o)) {
                Some((_, looks)) => looks.push(round.look),
                None => seen.push((o, vec![round.look])),
            }
        }
    }
    let still_open = |o: &OpenCell| {
        rec.ended
            .as_ref()
            .is_some_and(|e| e.still_open.iter().any(|x| x.same_cell(o)))
    };
    let rows = seen
        .iter()
        .map(|(o, looks)| {
            let after = looks.last().copied().unwrap_or(0);
            let when = if still_open(o) {
                "still open when the rounds stopped".to_string()
            } else if rec.ended.is_none() && after == rec.rounds.len() as u32 {
                "open: the rounds have not finished".to_string()
            } else {
                format!("decided after round {after}")
            };
            vec![
                Text::plain(format!(
                    "{} ({} c{})",
                    o.target,
                    o.at.step.label(),
                    o.at.clients
                )),
                Text::plain(o.base.clone()),
                Text::plain((min + looks.len() as u32).to_string()),
                Text::plain(when),
            ]
        })
        .collect();
    Table::new(["cell", "base", "repeats", "decided"], 2, rows)
}
