//! What each statement did, per call, in a cell and against its base's:
//! the figures the server keeps per statement (rows examined and sent,
//! temporary tables, sorts, blocks hit and read), medians over the
//! repeats, and the ones that moved — a statement examining a hundred
//! times the rows is what an index that is not used looks like.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::measure::statements::{StatementFigures, StatementsPerCall};
use crate::measure::stats::median;
use crate::measure::units::fmt_us;
use crate::results::StepResult;

/// A cell's statements, by the server's own accounting.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct CellStatements {
    pub source: String,
    pub by: BTreeMap<String, StatementFigures>,
    /// Figures that moved against the base's same statement, the largest
    /// change first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<StatementMove>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StatementMove {
    pub sql: String,
    pub figure: String,
    pub base: f64,
    pub value: f64,
    /// Target ÷ base; `None` when the base's figure was 0.
    pub ratio: Option<f64>,
}

/// The figures compared: what a statement did, not how long it took
/// (the times are the costs' and the waits' business).
const COMPARED: [&str; 10] = [
    "rows_examined",
    "rows_sent",
    "rows",
    "tmp_tables",
    "tmp_disk_tables",
    "sort_merge_passes",
    "no_index_used",
    "shared_blks_hit",
    "shared_blks_read",
    "temp_blks_written",
];
/// A figure moved when it changed by this factor either way…
const FACTOR: f64 = 1.5;
/// …and is at least this much per call on one side.
const FLOOR: f64 = 0.5;

/// The statements of a cell's repeats: per statement and figure, the
/// median over the repeats that ran it.
pub fn of(ok: &[&&StepResult]) -> Option<CellStatements> {
    let all: Vec<&StatementsPerCall> = ok
        .iter()
        .filter_map(|s| s.metrics.statements.as_ref())
        .collect();
    let first = all.first()?;
    let mut names: Vec<&String> = all.iter().flat_map(|s| s.by.keys()).collect();
    names.sort();
    names.dedup();
    let by = names
        .into_iter()
        .map(|sql| {
            let runs: Vec<&StatementFigures> = all.iter().filter_map(|s| s.by.get(sql)).collect();
            let mut figures: Vec<&String> = runs.iter().flat_map(|r| r.per_call.keys()).collect();
            figures.sort();
            figures.dedup();
            let med = |f: &dyn Fn(&StatementFigures) -> f64| {
                median(&mut runs.iter().map(|r| f(r)).collect::<Vec<f64>>()).unwrap_or(0.0)
            };
            let per_call = figures
                .into_iter()
                .map(|k| {
                    (
                        k.clone(),
                        med(&|r| r.per_call.get(k).copied().unwrap_or(0.0)),
                    )
                })
                .collect();
            let fig = StatementFigures {
                calls_per_op: med(&|r| r.calls_per_op),
                per_call,
            };
            (sql.clone(), fig)
        })
        .collect();
    Some(CellStatements {
        source: first.source.clone(),
        by,
        moved: Vec::new(),
    })
}

/// Fills `c.moved` against the base's same statements.
pub fn compare(c: &mut CellStatements, base: &CellStatements) {
    let mut moved = Vec::new();
    for (sql, f) in &c.by {
        let Some(b) = base.by.get(sql) else { continue };
        for k in COMPARED {
            let (v, bv) = (
                f.per_call.get(k).copied().unwrap_or(0.0),
                b.per_call.get(k).copied().unwrap_or(0.0),
            );
            let factor = v.max(bv) / v.min(bv).max(1e-9);
            if v.max(bv) >= FLOOR && factor >= FACTOR {
                moved.push(StatementMove {
                    sql: sql.clone(),
                    figure: k.to_string(),
                    base: bv,
                    value: v,
                    ratio: (bv > 0.0).then(|| v / bv),
                });
            }
        }
    }
    let size = |m: &StatementMove| (m.value.max(m.base) / m.value.min(m.base).max(1e-9)).ln();
    moved.sort_by(|a, b| size(b).total_cmp(&size(a)).then(a.sql.cmp(&b.sql)));
    c.moved = moved;
}

impl StatementMove {
    /// `SELECT c FROM sbtest1 WHERE id = ?: shared_blks_hit/call 3.00 →
    /// 215 (×71.7)`.
    pub fn describe(&self) -> String {
        let ratio = match self.ratio {
            Some(r) => format!(" (×{})", crate::measure::units::fmt_ratio(r)),
            None => " (new)".into(),
        };
        format!(
            "{}: {}/call {} → {}{ratio}",
            crate::measure::plans::short_sql(&self.sql),
            self.figure,
            fmt_us(self.base),
            fmt_us(self.value)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(rows: &[(&str, &[(&str, f64)])]) -> CellStatements {
        CellStatements {
            source: "t".into(),
            by: rows
                .iter()
                .map(|(q, f)| {
                    let per_call = f.iter().map(|(k, v)| (k.to_string(), *v)).collect();
                    (
                        q.to_string(),
                        StatementFigures {
                            calls_per_op: 1.0,
                            per_call,
                        },
                    )
                })
                .collect(),
            moved: Vec::new(),
        }
    }

    #[test]
    fn a_statement_that_examines_far_more_rows_moved_and_small_figures_did_not() {
        let base = cell(&[(
            "q",
            &[
                ("rows_examined", 100.0),
                ("tmp_tables", 0.1),
                ("time_us", 10.0),
            ],
        )]);
        let mut c = cell(&[(
            "q",
            &[
                ("rows_examined", 10000.0),
                ("tmp_tables", 0.3),
                ("time_us", 900.0),
            ],
        )]);
        compare(&mut c, &base);
        assert_eq!(c.moved.len(), 1, "{:?}", c.moved);
        assert_eq!(c.moved[0].figure, "rows_examined");
        assert_eq!(
            c.moved[0].describe(),
            "q: rows_examined/call 100 → 10000 (×100.00)"
        );
    }
}
