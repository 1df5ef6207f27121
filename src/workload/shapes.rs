//! The statements a step sends, each with one set of the values its
//! client would bind: found by running the workload's own client against
//! a connection that only listens (nothing reaches a server), so a query
//! plan can be asked for exactly what the step sends.

use crate::db::{Conn, DbResult, Dialect, Param, Stmt};
use crate::measure::plans::{shape, StatementPlan};
use crate::measure::Recorder;

use super::{dist, ClientCtx, Scale, Workload};

/// A statement the client prepared, and the values it first ran it with.
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    pub sql: String,
    pub values: Vec<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Str(String),
}

/// Events each role's client runs against the listening connection: past
/// this many with nothing new, every statement it sends has been seen.
const QUIET_EVENTS: u32 = 50;
const MAX_EVENTS: u32 = 1000;

/// The statements a step of `w` prepares and runs, in the order first
/// sent, each with the values first bound (every role's client).
pub fn sent(w: &dyn Workload, dialect: Dialect, scale: &Scale, seed: u64) -> DbResult<Vec<Sent>> {
    let mut conn = Listening::default();
    // The made-up answers have one row each: no check of a row count.
    let scale = &Scale {
        rows_may_be_missing: true,
        ..*scale
    };
    let classes = w.meta().classes.len().max(1);
    let shared = w.shared(scale, 1);
    for role in 0..w.roles(scale).len() {
        let ctx = ClientCtx {
            index: 0,
            role,
            shared: shared.first().cloned().flatten(),
            table_options: String::new(),
        };
        let mut client = w.client(
            &mut conn,
            Vec::new(),
            dialect,
            scale,
            dist::rng(seed, 0),
            &ctx,
        )?;
        let mut rec = Recorder::new(classes, 1);
        let (mut quiet, mut events) = (0, 0);
        while quiet < QUIET_EVENTS && events < MAX_EVENTS {
            let before = conn.ran();
            // A client that fails against answers made up for it stops
            // here; what it sent so far is what it sends.
            if client.event(&mut conn, &mut rec).is_err() {
                break;
            }
            quiet = if conn.ran() == before { quiet + 1 } else { 0 };
            events += 1;
        }
    }
    Ok(conn.sent())
}

/// The plan of each statement a step of `w` sends (the data-changing ones
/// too: EXPLAIN runs nothing), with the values its client first binds; a
/// statement EXPLAIN cannot take (a `CALL`, a `SET`) is left out.
pub fn plans<D: crate::db::Driver + ?Sized>(
    db: &D,
    w: &dyn Workload,
    scale: &Scale,
    seed: u64,
) -> DbResult<Vec<StatementPlan>> {
    let dialect = db.dialect();
    let sent = sent(w, dialect, scale, seed)?;
    let explainable = |sql: &str| {
        let first = sql
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        EXPLAINABLE.contains(&first.as_str())
    };
    Ok(sent
        .into_iter()
        .filter(|s| explainable(&s.sql))
        .map(|s| {
            let text = with_values(&s.sql, &s.values, dialect);
            match crate::db::explain(db, &text) {
                Ok((format, plan)) => StatementPlan {
                    shape: shape(format, &plan),
                    sql: s.sql,
                    plan,
                    error: None,
                },
                Err(e) => StatementPlan {
                    sql: s.sql,
                    error: Some(format!("{e:#}")),
                    ..Default::default()
                },
            }
        })
        .collect())
}

/// The statements EXPLAIN takes, by their first word.
const EXPLAINABLE: [&str; 6] = ["SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH"];

/// A statement's text with its values written in, for an EXPLAIN that
/// takes no parameters: `?` in order (MySQL, SQLite) or `$N` (PostgreSQL).
pub fn with_values(sql: &str, values: &[Value], dialect: Dialect) -> String {
    let lit = |v: &Value| match v {
        Value::Int(i) => i.to_string(),
        Value::Str(s) => {
            let s = s.replace('\'', "''");
            match dialect {
                // MySQL reads a backslash in a string as an escape.
                Dialect::Mysql => format!("'{}'", s.replace('\\', "\\\\")),
                _ => format!("'{s}'"),
            }
        }
    };
    let mut out = String::with_capacity(sql.len() + 16 * values.len());
    let mut chars = sql.chars().peekable();
    let (mut next, mut quoted) = (0usize, false);
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                quoted = !quoted;
                out.push(c);
            }
            '?' if !quoted && dialect != Dialect::Postgres => {
                match values.get(next) {
                    Some(v) => out += &lit(v),
                    None => out.push(c),
                }
                next += 1;
            }
            '$' if !quoted && dialect == Dialect::Postgres => {
                let mut n = String::new();
                while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                    n.push(*d);
                    chars.next();
                }
                match n
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| values.get(i.checked_sub(1)?))
                {
                    Some(v) => out += &lit(v),
                    None => {
                        out.push('$');
                        out += &n;
                    }
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// A connection that runs nothing: it keeps each prepared statement and
/// the values it was first run with, and answers every query with one row
/// whose columns are 1.
#[derive(Default)]
struct Listening {
    prepared: Vec<String>,
    first: Vec<Option<Vec<Value>>>,
}

impl Listening {
    fn ran(&self) -> usize {
        self.first.iter().filter(|f| f.is_some()).count()
    }

    fn run(&mut self, stmt: Stmt, params: &[Param<'_>]) {
        if let Some(slot @ None) = self.first.get_mut(stmt.0) {
            *slot = Some(
                params
                    .iter()
                    .map(|p| match p {
                        Param::Int(i) => Value::Int(*i),
                        Param::Str(s) => Value::Str(s.to_string()),
                    })
                    .collect(),
            );
        }
    }

    fn sent(self) -> Vec<Sent> {
        let mut out: Vec<Sent> = Vec::new();
        for (sql, values) in self.prepared.into_iter().zip(self.first) {
            let Some(values) = values else { continue };
            if !out.iter().any(|s| s.sql == sql) {
                out.push(Sent { sql, values });
            }
        }
        out
    }
}

impl Conn for Listening {
    fn prepare(&mut self, sql: &str) -> DbResult<Stmt> {
        self.prepared.push(sql.to_string());
        self.first.push(None);
        Ok(Stmt(self.prepared.len() - 1))
    }
    fn query(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<u64> {
        self.run(stmt, params);
        Ok(1)
    }
    fn exec(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<u64> {
        self.run(stmt, params);
        Ok(1)
    }
    fn batch(&mut self, _sql: &str) -> DbResult<()> {
        Ok(())
    }
    fn text_rows(&mut self, _sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        Ok(Vec::new())
    }
    fn begin(&mut self, _write: bool) -> DbResult<()> {
        Ok(())
    }
    fn commit(&mut self) -> DbResult<()> {
        Ok(())
    }
    fn rollback(&mut self) -> DbResult<()> {
        Ok(())
    }
    fn query_last(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        _col: usize,
    ) -> DbResult<(u64, Option<i64>)> {
        self.run(stmt, params);
        Ok((1, Some(1)))
    }
    fn query_rows(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
    ) -> DbResult<Vec<Vec<Option<String>>>> {
        // Heard, with no rows: a client that needs a value to go on stops
        // here, its statements so far explained.
        self.run(stmt, params);
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_in_outside_quotes_in_each_dialects_placeholders() {
        let v = [Value::Int(7), Value::Str("a'b\\c".into())];
        assert_eq!(
            with_values("SELECT '?' FROM t WHERE id=? AND c=?", &v, Dialect::Mysql),
            "SELECT '?' FROM t WHERE id=7 AND c='a''b\\\\c'"
        );
        assert_eq!(
            with_values(
                "SELECT c FROM t WHERE c=$2 AND id=$1 AND x=$3",
                &v,
                Dialect::Postgres
            ),
            "SELECT c FROM t WHERE c='a''b\\c' AND id=7 AND x=$3"
        );
    }

    #[test]
    fn the_sysbench_read_write_clients_statements_are_all_heard_with_their_values() {
        let cat = crate::workload::catalogue::Catalogue::builtin();
        let w = cat
            .find("read-write-10")
            .expect("read-write-10 is in the catalogue");
        let scale = Scale {
            rows: 1000,
            ..Scale::probe()
        };
        let sent = sent(w.as_ref(), Dialect::Postgres, &scale, 1).unwrap();
        let sql: Vec<&str> = sent.iter().map(|s| s.sql.as_str()).collect();
        assert!(
            sql.iter()
                .any(|s| s.starts_with("SELECT c FROM sbtest1 WHERE id=$1")),
            "{sql:?}"
        );
        assert!(sql.iter().any(|s| s.starts_with("UPDATE")), "{sql:?}");
        assert!(sent.iter().all(|s| !s.values.is_empty()), "{sent:?}");
    }
}
