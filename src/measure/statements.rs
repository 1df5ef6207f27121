//! What each statement did, by the server's own accounting: per statement
//! (MySQL's and MariaDB's digest text, PostgreSQL's normalized query) its
//! calls and totals — rows examined and sent, temporary tables, sorts,
//! blocks hit and read, planning and execution time — read at a window's
//! edges and kept per call and per operation of the step.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::units::four_digits;

/// The figure every statement has: how many times it ran.
pub const CALLS: &str = "calls";

/// Statements' totals since the server started (or over a window): per
/// statement text, per figure (`calls` among them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Statements {
    pub source: String,
    pub by: BTreeMap<String, BTreeMap<String, f64>>,
    /// What to do when a window's statements were counted by none of it:
    /// the engine's own reasons.
    pub if_none: &'static str,
}

impl Statements {
    /// What happened between two cumulative readings: the statements that
    /// ran in between (a statement evicted from the server's table and
    /// seen again counts from 0, never as a wrap).
    pub fn since(&self, before: &Statements) -> Statements {
        let by = self
            .by
            .iter()
            .filter_map(|(sql, a)| {
                let b = before.by.get(sql);
                let d: BTreeMap<String, f64> = a
                    .iter()
                    .map(|(k, v)| {
                        let was = b.and_then(|b| b.get(k)).copied().unwrap_or(0.0);
                        (k.clone(), if v >= &was { v - was } else { *v })
                    })
                    .collect();
                (d.get(CALLS).copied().unwrap_or(0.0) > 0.0).then(|| (sql.clone(), d))
            })
            .collect();
        Statements {
            source: self.source.clone(),
            by,
            if_none: self.if_none,
        }
    }

    /// Per call of each statement, and its calls per unit of the step's
    /// work.
    pub fn per_call(&self, work: f64) -> Option<StatementsPerCall> {
        if work <= 0.0 || self.by.is_empty() {
            return None;
        }
        let by = self
            .by
            .iter()
            .map(|(sql, t)| {
                let calls = t.get(CALLS).copied().unwrap_or(0.0);
                let per_call = t
                    .iter()
                    .filter(|(k, _)| k.as_str() != CALLS)
                    .map(|(k, v)| (k.clone(), four_digits(v / calls)))
                    .collect();
                (
                    sql.clone(),
                    StatementFigures {
                        calls_per_op: four_digits(calls / work),
                        per_call,
                    },
                )
            })
            .collect();
        Some(StatementsPerCall {
            source: self.source.clone(),
            by,
        })
    }
}

/// A step's statements as its step file keeps them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatementsPerCall {
    pub source: String,
    pub by: BTreeMap<String, StatementFigures>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatementFigures {
    /// Calls per operation of the step.
    pub calls_per_op: f64,
    /// Each figure per call (`rows_examined`, `shared_blks_hit`, …).
    pub per_call: BTreeMap<String, f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(rows: &[(&str, &[(&str, f64)])]) -> Statements {
        Statements {
            source: "t".into(),
            by: rows
                .iter()
                .map(|(q, f)| {
                    (
                        q.to_string(),
                        f.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
                    )
                })
                .collect(),
            if_none: "",
        }
    }

    #[test]
    fn a_window_counts_the_statements_that_ran_in_it_per_call() {
        let before = s(&[
            ("q1", &[("calls", 10.0), ("rows_examined", 100.0)]),
            ("q2", &[("calls", 5.0)]),
        ]);
        let after = s(&[
            ("q1", &[("calls", 30.0), ("rows_examined", 2100.0)]),
            ("q2", &[("calls", 5.0)]),
            ("q3", &[("calls", 4.0), ("rows_examined", 8.0)]),
        ]);
        let d = after.since(&before);
        assert_eq!(d.by.keys().collect::<Vec<_>>(), ["q1", "q3"]);
        let p = d.per_call(10.0).unwrap();
        assert_eq!(p.by["q1"].calls_per_op, 2.0);
        assert_eq!(p.by["q1"].per_call["rows_examined"], 100.0);
        assert_eq!(p.by["q3"].per_call["rows_examined"], 2.0);
    }
}
