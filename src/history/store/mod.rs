//! Where a study's history is kept: a SQLite file (the default,
//! `results/history.sqlite`) or a shared PostgreSQL named by URL, written
//! through relbench's own wire client. One schema for both, plain SQL
//! text that both accept, every value bound to a placeholder (`$1`, …),
//! never written into a statement's text; versioned migrations, as the
//! results schema is.

mod postgres;
mod sqlite;

use std::path::PathBuf;

use anyhow::Context;

/// Where the history is, as the command line names it.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryAt {
    Sqlite(PathBuf),
    /// `postgres://user@host:port/database`, and the password `PGPASSWORD`
    /// held when the command line was read.
    Postgres {
        url: crate::db::url::ServerUrl,
        shown: String,
        password: Option<String>,
    },
}

impl HistoryAt {
    /// `--history` as given: a `postgres://` URL, or a file. For a URL,
    /// `PGPASSWORD` is read here, once, and removed from the environment,
    /// before anything runs: a hook or a server started later never sees
    /// it (regression: it reached shell hooks' environments and a hook's
    /// output). A URL that holds a password is refused without repeating
    /// it.
    pub fn parse(s: &str) -> anyhow::Result<HistoryAt> {
        if !(s.starts_with("postgres://") || s.starts_with("postgresql://")) {
            return Ok(HistoryAt::Sqlite(PathBuf::from(s)));
        }
        let url = crate::db::url::ServerUrl::parse(s, crate::db::EngineKind::Postgres)
            .map_err(|e| anyhow::anyhow!("--history: {e} (the password goes in PGPASSWORD)"))?;
        let password = std::env::var("PGPASSWORD").ok();
        std::env::remove_var("PGPASSWORD");
        Ok(HistoryAt::Postgres {
            url,
            shown: s.to_string(),
            password,
        })
    }

    pub fn default_path() -> HistoryAt {
        HistoryAt::Sqlite(PathBuf::from("results").join("history.sqlite"))
    }
}

impl std::fmt::Display for HistoryAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HistoryAt::Sqlite(p) => write!(f, "{}", p.display()),
            HistoryAt::Postgres { shown, .. } => f.write_str(shown),
        }
    }
}

/// One column's value as a backend hands it over, borrowed.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
}

impl Value<'_> {
    pub fn int(self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(i),
            Value::Real(r) => Some(r as i64),
            Value::Text(t) => t.parse().ok(),
            Value::Null => None,
        }
    }
    pub fn real(self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(i as f64),
            Value::Real(r) => Some(r),
            Value::Text(t) => t.parse().ok(),
            Value::Null => None,
        }
    }
    pub fn text(self) -> String {
        match self {
            Value::Int(i) => i.to_string(),
            Value::Real(r) => r.to_string(),
            Value::Text(t) => t.to_string(),
            Value::Null => String::new(),
        }
    }
}

/// A value bound to a statement's placeholder (`$1`, `$2`, …): a
/// name, a directory or a build is never part of the statement's text, so
/// none can end the statement and run SQL of its own (regression: with
/// `standard_conforming_strings = off` a build name ending in `\'` did).
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Text(String),
    Int(i64),
    /// NULL when absent or not finite.
    Real(Option<f64>),
}

impl From<&str> for Arg {
    fn from(s: &str) -> Arg {
        Arg::Text(s.to_string())
    }
}

impl From<String> for Arg {
    fn from(s: String) -> Arg {
        Arg::Text(s)
    }
}

impl From<i64> for Arg {
    fn from(i: i64) -> Arg {
        Arg::Int(i)
    }
}

impl From<Option<f64>> for Arg {
    fn from(v: Option<f64>) -> Arg {
        Arg::Real(v.filter(|v| v.is_finite()))
    }
}

impl From<f64> for Arg {
    fn from(v: f64) -> Arg {
        Some(v).into()
    }
}

impl Arg {
    /// As text, the way the PostgreSQL wire protocol sends it (NULL as
    /// `None`).
    pub fn as_text(&self) -> Option<String> {
        match self {
            Arg::Text(s) => Some(s.clone()),
            Arg::Int(i) => Some(i.to_string()),
            Arg::Real(Some(v)) if v.is_finite() => Some(format!("{v:?}")),
            // NULL, as SQLite's binding makes it (PostgreSQL would take
            // "NaN" and keep it).
            Arg::Real(_) => None,
        }
    }
}

/// Statements written in one transaction, each with its values.
#[derive(Debug, Default)]
pub struct Writes {
    pub stmts: Vec<(String, Vec<Arg>)>,
}

impl Writes {
    pub fn push(&mut self, sql: impl Into<String>, args: Vec<Arg>) {
        self.stmts.push((sql.into(), args));
    }

    pub fn is_empty(&self) -> bool {
        self.stmts.is_empty()
    }
}

/// `($first, …, $(first + n - 1))`: one row's placeholders, for a
/// statement that writes many rows at once.
pub fn row(first: usize, n: usize) -> String {
    let mut s = String::from("(");
    for i in 0..n {
        if i > 0 {
            s.push_str(", ");
        }
        s.push('$');
        s.push_str(&(first + i).to_string());
    }
    s.push(')');
    s
}

/// What a store needs of a database: rows read, statements written in a
/// transaction; values always bound.
pub trait Backend {
    /// Runs a query with its values, handing each row to `row`.
    fn scan(
        &mut self,
        sql: &str,
        args: &[Arg],
        row: &mut dyn FnMut(&[Value<'_>]),
    ) -> anyhow::Result<()>;
    /// Runs every statement of `w` in one transaction: all or none.
    fn write(&mut self, w: &Writes) -> anyhow::Result<()>;
    /// Reads every row of `table` through `sql`, whose `{part}` is a
    /// condition: the rows cut into `parts` pieces read at once, each on a
    /// connection of its own, `row` told which piece. A backend that
    /// cannot reads them in one piece (piece 0).
    fn scan_parts(
        &mut self,
        table: &str,
        sql: &str,
        parts: usize,
        row: &(dyn Fn(usize, &[Value<'_>]) + Sync),
    ) -> anyhow::Result<()> {
        let _ = (table, parts);
        self.scan(&sql.replace("{part}", "1 = 1"), &[], &mut |r| row(0, r))
    }
}

/// The schema, one migration per version: a store at version N runs
/// migrations N.. in order, each in its own transaction.
const MIGRATIONS: &[&str] = &[
    // 1: builds, runs, series, cells (what a search reads, compact), each
    // cell's repeats' costs apart (read only for the series that changed),
    // change points.
    "CREATE TABLE relbench_history (key TEXT PRIMARY KEY, value TEXT NOT NULL);
     CREATE TABLE builds (id BIGINT PRIMARY KEY, name TEXT NOT NULL UNIQUE, ord DOUBLE PRECISION, version TEXT NOT NULL);
     CREATE TABLE runs (id TEXT PRIMARY KEY, dir TEXT NOT NULL, started TEXT NOT NULL, hostname TEXT NOT NULL,
       plan_hash TEXT NOT NULL, status TEXT NOT NULL, added TEXT NOT NULL);
     CREATE TABLE hosts (fingerprint TEXT PRIMARY KEY, description TEXT NOT NULL);
     CREATE TABLE series (id BIGINT PRIMARY KEY, step TEXT NOT NULL, config TEXT NOT NULL, host TEXT NOT NULL,
       grp TEXT NOT NULL, unit TEXT NOT NULL, config_text TEXT NOT NULL, UNIQUE (step, config, host));
     CREATE TABLE cells (run TEXT NOT NULL, target TEXT NOT NULL, series BIGINT NOT NULL, build BIGINT NOT NULL,
       hash TEXT NOT NULL, throughputs TEXT NOT NULL, disturbed TEXT NOT NULL, floor DOUBLE PRECISION,
       PRIMARY KEY (run, target, series));
     CREATE TABLE figures (run TEXT NOT NULL, target TEXT NOT NULL, series BIGINT NOT NULL, repeats TEXT NOT NULL,
       PRIMARY KEY (run, target, series));
     CREATE INDEX cells_by_series ON cells (series, build);
     CREATE TABLE changes (id BIGINT PRIMARY KEY, series BIGINT NOT NULL, build BIGINT NOT NULL, before_build BIGINT NOT NULL,
       magnitude DOUBLE PRECISION NOT NULL, lo DOUBLE PRECISION, hi DOUBLE PRECISION, p DOUBLE PRECISION NOT NULL,
       floor DOUBLE PRECISION, explanation TEXT NOT NULL, state TEXT NOT NULL, found TEXT NOT NULL,
       UNIQUE (series, build));",
];

pub const SCHEMA_VERSION: usize = MIGRATIONS.len();

/// Every table the migrations make.
const TABLES: [&str; 8] = [
    "relbench_history",
    "builds",
    "runs",
    "hosts",
    "series",
    "cells",
    "figures",
    "changes",
];

/// An open history, migrated to [`SCHEMA_VERSION`].
pub struct Store {
    db: Box<dyn Backend>,
    pub at: HistoryAt,
}

impl Store {
    /// Opens the history, making a SQLite one that is not there when
    /// `create` (`history add`, `run --history`); the commands that only
    /// read or mark it refuse a history that is not there.
    pub fn open(at: &HistoryAt, create: bool) -> anyhow::Result<Store> {
        let db: Box<dyn Backend> = match at {
            HistoryAt::Sqlite(p) => Box::new(sqlite::Sqlite::open(p, create)?),
            HistoryAt::Postgres {
                url,
                shown,
                password,
            } => Box::new(postgres::Postgres::connect(url, shown, password.clone())?),
        };
        let mut s = Store { db, at: at.clone() };
        // A shared PostgreSQL's tables are checked before anything is
        // written to them, and again once made.
        let shared = matches!(at, HistoryAt::Postgres { .. });
        if shared {
            s.guard_tables()?;
        }
        s.migrate()
            .with_context(|| format!("bringing the history in {at} to schema {SCHEMA_VERSION}"))?;
        if shared {
            s.guard_tables()?;
        }
        Ok(s)
    }

    /// Refuses a history table in a shared PostgreSQL that another role
    /// made: one it owns, or with a trigger, rule or policy (regression:
    /// pre-made history tables with a SECURITY INVOKER trigger ran as the
    /// history's user and granted another role rights on its tables).
    fn guard_tables(&mut self) -> anyhow::Result<()> {
        for table in TABLES {
            let sql = crate::db::Dialect::Postgres.table_guard(table, &[]);
            let mut why = None;
            self.db.scan(&sql, &[], &mut |r| {
                if r[0].int().unwrap_or(1) != 0 {
                    why = Some("another role owns it".to_string());
                } else if let Some(n) = r[1].int().filter(|n| *n > 0) {
                    why = Some(format!("it has {n} trigger(s), rule(s) or policy(ies)"));
                }
            })?;
            if let Some(why) = why {
                anyhow::bail!(
                    "the history's table {table} in {} was not made by relbench as this role: {why}. Another \
                     role may have made it to run code in relbench's statements; look at it, and use a database \
                     only relbench's role can create tables in",
                    self.at
                );
            }
        }
        Ok(())
    }

    fn version(&mut self) -> anyhow::Result<usize> {
        let mut v = None;
        let r = self.db.scan(
            "SELECT value FROM relbench_history WHERE key = 'schema_version'",
            &[],
            &mut |r| v = r[0].int(),
        );
        match (r, v) {
            (Ok(()), Some(v)) => Ok(v as usize),
            (Ok(()), None) => anyhow::bail!(
                "{} has a relbench_history table without a schema version: it is not a history relbench wrote; \
                 name another with --history",
                self.at
            ),
            // No such table: a new history.
            (Err(_), _) => Ok(0),
        }
    }

    fn migrate(&mut self) -> anyhow::Result<()> {
        let have = self.version()?;
        if have > SCHEMA_VERSION {
            anyhow::bail!(
                "the history in {} is at schema {have}, newer than this relbench's {SCHEMA_VERSION}: \
                 use the relbench that wrote it",
                self.at
            );
        }
        for (i, m) in MIGRATIONS.iter().enumerate().skip(have) {
            let v = i + 1;
            let mut w = Writes::default();
            // One statement at a time: the protocol that binds values
            // takes one per message.
            for stmt in m.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                w.push(stmt, vec![]);
            }
            w.push(
                "DELETE FROM relbench_history WHERE key = 'schema_version'",
                vec![],
            );
            w.push(
                "INSERT INTO relbench_history (key, value) VALUES ('schema_version', $1)",
                vec![v.to_string().into()],
            );
            self.write(&w)?;
        }
        Ok(())
    }

    /// The largest id in `table` (0 when empty).
    pub fn max_id(&mut self, table: &str) -> anyhow::Result<i64> {
        let mut id = 0;
        self.db
            .scan(&format!("SELECT MAX(id) FROM {table}"), &[], &mut |r| {
                id = r[0].int().unwrap_or(0)
            })?;
        Ok(id)
    }
}

/// A store is its backend, with the schema brought up to date.
impl std::ops::Deref for Store {
    type Target = dyn Backend;
    fn deref(&self) -> &Self::Target {
        &*self.db
    }
}

impl std::ops::DerefMut for Store {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut *self.db
    }
}
