//! The Insert Benchmark: one table per client, loaded in key order
//! (`l.i0`), indexed (`l.x`), grown and shrunk by an inserter and a deleter
//! that keep its size (`l.i1`, `l.i2`), then queried by one unthrottled
//! connection per client while an inserter and a deleter run on a fixed
//! schedule at 100, 500 and 1000 rows per second (`qr…` range queries on a
//! secondary index, `qp…` point queries by primary key).
//!
//! Each client's connections share the table's live id range ([`Shared`]):
//! ids are contiguous, the inserter appends at the top and the deleter
//! removes the oldest at the bottom, never more than the inserter has added
//! since the step began.

mod client;

pub mod params;
mod sql;

use std::any::Any;
use std::borrow::Cow;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use super::dist::Rng;
use super::{
    record_error as record, Client, ClientCtx, DurationClass, Group, Meta, Role, Scale,
    ShownStatement, Sla, Tables, Window, Workload,
};
use crate::db::{Conn, DbError, DbResult, Dialect, ErrorKind, Param, Stmt};
use crate::measure::Recorder;
use client::{Deleter, Indexer, Inserter, Querier};

/// The benchmark's sizes, from the plan's `[insert]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// Rows each client inserts (and deletes) in l.i1 and l.i2.
    pub l_i1_rows: i64,
    pub l_i2_rows: i64,
    /// Rows per commit.
    pub l_i0_commit: u32,
    pub l_i1_commit: u32,
    pub l_i2_commit: u32,
    /// Rows per commit of the q-steps' background inserter and deleter
    /// (iibench's `rows_per_commit` in Small Datum's q-steps: 50).
    pub q_commit: u32,
    /// The q-steps' writers run each second's commits back to back at its
    /// start, as iibench's `inserts_per_second` does, rather than evenly
    /// apart (`q_pacing = "even"`).
    #[serde(default)]
    pub q_burst: bool,
    /// Length of the `data` column, drawn uniformly in this range.
    pub data_min: u32,
    pub data_max: u32,
    /// iibench's `data_random_pct`: of a `data` value of length L,
    /// int(L × 0.75 × pct ÷ 100) characters are random base64 (its 0.75
    /// for base64's overhead), after a fill of `a`.
    #[serde(default = "iibench_random_pct")]
    pub data_random_pct: u8,
    /// All clients on one table (`pi1`), the benchmark's other mode,
    /// instead of a table each.
    #[serde(default)]
    pub shared_table: bool,
}

impl Params {
    /// The sizes in words, for `relbench check`; `rows` is l.i0's per client.
    pub fn describe(&self, rows: i64) -> String {
        format!(
            "{}; l.i0 loads {rows} rows each ({} per commit), l.i1 adds and deletes {} ({} per commit), l.i2 {} ({} per commit); q-steps write {} rows per commit{}",
            if self.shared_table { "one table all clients share" } else { "one table per client" },
            self.l_i0_commit, self.l_i1_rows, self.l_i1_commit, self.l_i2_rows, self.l_i2_commit, self.q_commit,
            if self.q_burst { ", each second's back to back (iibench's)" } else { ", evenly apart" }
        )
    }
}

impl Default for Params {
    fn default() -> Self {
        Params {
            l_i1_rows: 100_000,
            l_i2_rows: 20_000,
            l_i0_commit: 100,
            l_i1_commit: 50,
            l_i2_commit: 5,
            q_commit: 50,
            q_burst: true,
            data_min: 10,
            data_max: 20,
            data_random_pct: iibench_random_pct(),
            shared_table: false,
        }
    }
}

/// iibench.py's default `data_random_pct`.
fn iibench_random_pct() -> u8 {
    50
}

/// Statement classes, the same for every step (indexes into [`CLASSES`]):
/// a batch of rows inserted, a batch deleted, a query, an index build.
pub const INSERT: usize = 0;
pub const DELETE: usize = 1;
pub const QUERY: usize = 2;
pub const INDEX: usize = 3;
pub const CLASSES: [&str; 4] = ["insert", "delete", "query", "index"];
/// The classes whose statements write a batch of rows.
pub const WRITES: [&str; 2] = [CLASSES[INSERT], CLASSES[DELETE]];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// l.i0: insert in key order, no secondary index.
    Load,
    /// l.x: create the three secondary indexes.
    Index,
    /// l.i1, l.i2: insert with a deleter beside (`rows` from Params).
    Churn { second: bool },
    /// qr / qp: queries with background writes at `rate` rows/s per client.
    Query { point: bool, rate: u32 },
}

/// One step of the benchmark, with the plan's sizes.
pub struct Step {
    /// `qr2000` and the like are made from their names.
    pub name: Cow<'static, str>,
    pub kind: Kind,
    pub params: Params,
}

/// The standard sequence's steps by name, with the benchmark's default
/// rates.
pub const KINDS: [(&str, Kind); 10] = [
    ("l.i0", Kind::Load),
    ("l.x", Kind::Index),
    ("l.i1", Kind::Churn { second: false }),
    ("l.i2", Kind::Churn { second: true }),
    (
        "qr100",
        Kind::Query {
            point: false,
            rate: 100,
        },
    ),
    (
        "qp100",
        Kind::Query {
            point: true,
            rate: 100,
        },
    ),
    (
        "qr500",
        Kind::Query {
            point: false,
            rate: 500,
        },
    ),
    (
        "qp500",
        Kind::Query {
            point: true,
            rate: 500,
        },
    ),
    (
        "qr1000",
        Kind::Query {
            point: false,
            rate: 1000,
        },
    ),
    (
        "qp1000",
        Kind::Query {
            point: true,
            rate: 1000,
        },
    ),
];

/// The standard steps, as a plan with these sizes runs them.
pub fn steps(params: &Params) -> Vec<Step> {
    KINDS
        .iter()
        .map(|&(name, kind)| Step {
            name: Cow::Borrowed(name),
            kind,
            params: *params,
        })
        .collect()
}

/// The standard sequence as plan steps: the settle after l.i2 lets the
/// engine write back what the loads left (its length grows with the rows).
pub const SEQUENCE: [&str; 11] = [
    "l.i0", "l.x", "l.i1", "l.i2", "settle", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000",
];

/// A q-step at another rate, `qr<N>` or `qp<N>` (rows per second per
/// client), with the plan's sizes.
pub fn query_step(name: &str, params: &Params) -> Option<Step> {
    Some(Step {
        name: Cow::Owned(name.to_string()),
        kind: kind_of(name)?,
        params: *params,
    })
}

/// Whether `name` is one of the benchmark's steps or a q-step at some rate.
pub fn is_step(name: &str) -> bool {
    KINDS.iter().any(|(n, _)| *n == name) || kind_of(name).is_some()
}

/// The SLA: a q-step passes when its inserts reach this share of the
/// target rate.
pub const SLA: f64 = 0.95;

/// `qr<N>` or `qp<N>`: N in 1..=1,000,000 written plainly (no `qr01`).
fn kind_of(name: &str) -> Option<Kind> {
    let (point, rate) = if let Some(r) = name.strip_prefix("qr") {
        (false, r)
    } else {
        (true, name.strip_prefix("qp")?)
    };
    let n: u32 = rate.parse().ok().filter(|r| (1..=1_000_000).contains(r))?;
    (n.to_string() == rate).then_some(Kind::Query { point, rate: n })
}

pub fn table(index: u32) -> String {
    format!("pi{}", index + 1)
}

/// The table client `index` works on: its own, or the one all share.
pub fn table_of(p: &Params, index: u32) -> String {
    table(if p.shared_table { 0 } else { index })
}

/// The live ids of one client's table, shared by its connections (by
/// every client's, when they share the table).
#[derive(Default)]
pub struct Shared {
    /// The lowest and highest id when the step began.
    start: OnceLock<(i64, i64)>,
    /// The highest id an inserter has committed.
    top: AtomicI64,
    /// The highest id an inserter has taken: ids are reserved a batch at
    /// a time, so inserters on one table never collide.
    taken: AtomicI64,
    /// The lowest id not yet deleted.
    bottom: AtomicI64,
    /// l.i0 with a shared table: the table is made (by client 1).
    created: std::sync::atomic::AtomicBool,
}

impl Shared {
    /// Waits for the first client to make the table all of them share.
    fn wait_created(&self, table: &str) -> DbResult<()> {
        let t0 = Instant::now();
        while !self.created.load(Ordering::Acquire) {
            if t0.elapsed() > Duration::from_secs(120) {
                return Err(DbError::new(
                    ErrorKind::Other,
                    format!(
                        "the shared table {table} was not made within 120 s: the first client, which makes it, failed or hangs (its error, if any, is in this step's result)"
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    /// Reads the table's id range once per step, on whichever connection
    /// sets up first (all set up before any event runs).
    fn init(&self, conn: &mut dyn Conn, table: &str) -> DbResult<(i64, i64)> {
        if let Some(r) = self.start.get() {
            return Ok(*r);
        }
        let r = id_range(conn, table)?;
        let r = *self.start.get_or_init(|| r);
        self.top.store(r.1, Ordering::Relaxed);
        self.taken.store(r.1, Ordering::Relaxed);
        self.bottom.store(r.0, Ordering::Relaxed);
        Ok(r)
    }
}

/// The lowest and highest id in `table` ((1, 0) when empty), read as
/// iibench reads them (`select min(transactionid)`, `max`: one index
/// probe each).
fn id_range(conn: &mut dyn Conn, table: &str) -> DbResult<(i64, i64)> {
    let (min, max) = sql::id_bounds(table);
    let (min, max) = (conn.prepare(&min)?, conn.prepare(&max)?);
    let (_, lo) = conn.query_last(min, &[], 0)?;
    let (_, hi) = conn.query_last(max, &[], 0)?;
    Ok(match (lo, hi) {
        (Some(lo), Some(hi)) => (lo, hi),
        _ => (1, 0),
    })
}

impl Step {
    fn commit(&self, p: &Params) -> u32 {
        match self.kind {
            Kind::Load => p.l_i0_commit,
            Kind::Churn { second: false } => p.l_i1_commit,
            Kind::Churn { second: true } => p.l_i2_commit,
            Kind::Query { .. } => p.q_commit,
            Kind::Index => 1,
        }
    }

    fn rows(&self, scale: &Scale) -> i64 {
        match self.kind {
            Kind::Load => scale.rows,
            Kind::Churn { second: false } => self.params.l_i1_rows,
            Kind::Churn { second: true } => self.params.l_i2_rows,
            _ => 0,
        }
    }
}

impl Step {
    fn about(&self) -> &'static str {
        match self.kind {
            Kind::Load => "Insert Benchmark: insert rows in key order into one table per client, 100 per commit, no secondary index",
            Kind::Index => "Insert Benchmark: create the three secondary indexes (indexed rows/s)",
            Kind::Churn { second: false } => "Insert Benchmark: insert 50 rows per commit while a deleter removes as many of the oldest",
            Kind::Churn { second: true } => "Insert Benchmark: insert 5 rows per commit while a deleter removes as many of the oldest",
            Kind::Query { point: false, .. } => "Insert Benchmark: range queries on a secondary index (LIMIT 10) while an inserter and a deleter run at the step's rate",
            Kind::Query { point: true, .. } => "Insert Benchmark: point queries by primary key (in-list of 10) while an inserter and a deleter run at the step's rate",
        }
    }
}

impl Workload for Step {
    fn meta(&self) -> Meta<'_> {
        Meta {
            name: &self.name,
            group: Group::Insert,
            duration: DurationClass::Read,
            about: self.about(),
            transactional: !matches!(self.kind, Kind::Index),
            classes: CLASSES.to_vec(),
            // The loads and the index build do a fixed amount of work and
            // count all of it.
            warms_up: matches!(self.kind, Kind::Query { .. }),
            creates_tables: matches!(self.kind, Kind::Load),
            // The deleter keeps the table's size: rows are not missing
            // from the id range it leaves, it moves.
            removes_rows: false,
            class_series: true,
        }
    }
    fn statements(&self, d: Dialect) -> Vec<ShownStatement<'_>> {
        let t = "pi1";
        let p = self.params;
        let mut out = Vec::new();
        let show = |class: &'static str, sql: String| ShownStatement { class, sql };
        match self.kind {
            Kind::Load => {
                out.push(show("create", sql::create(d, t, "")));
                out.push(show("insert", sql::insert(d, t, p.l_i0_commit as usize)));
            }
            Kind::Index => {
                out.extend(
                    sql::indexes(d, t, false)
                        .into_iter()
                        .map(|s| show("index", s)),
                );
            }
            Kind::Churn { .. } => {
                out.push(show("insert", sql::insert(d, t, self.commit(&p) as usize)));
                out.push(show("delete", sql::delete(d, t, self.commit(&p))));
            }
            Kind::Query { point, .. } => {
                if point {
                    out.push(show("query", sql::point(d, t)));
                } else {
                    out.extend(sql::ranges(d, t).into_iter().map(|s| show("query", s)));
                }
                out.push(show("insert", sql::insert(d, t, p.q_commit as usize)));
                out.push(show("delete", sql::delete(d, t, p.q_commit)));
            }
        }
        out
    }
    fn rows_per_event(&self, scale: &Scale) -> Option<u64> {
        match self.kind {
            Kind::Index if self.params.shared_table => {
                Some(scale.rows as u64 * u64::from(scale.clients.max(1)))
            }
            Kind::Index => Some(scale.rows as u64),
            Kind::Query { .. } => None,
            _ => Some(u64::from(self.commit(&self.params))),
        }
    }
    fn roles(&self, _scale: &Scale) -> Vec<Role> {
        // The q-steps' writers run on a schedule: rate ÷ rows per commit
        // events a second.
        let paced = match self.kind {
            Kind::Query { rate, .. } => {
                Some(f64::from(rate) / f64::from(self.params.q_commit.max(1)))
            }
            _ => None,
        };
        let burst = self.params.q_burst;
        let inserter = Role {
            name: "inserter",
            rate: None,
            burst,
            measured: true,
        };
        let deleter = Role {
            name: "deleter",
            rate: None,
            burst,
            measured: false,
        };
        match self.kind {
            Kind::Load => vec![inserter],
            Kind::Index => vec![Role {
                name: "indexer",
                ..inserter
            }],
            Kind::Churn { .. } => vec![inserter, deleter],
            Kind::Query { .. } => vec![
                Role {
                    name: "query",
                    rate: None,
                    burst: false,
                    measured: true,
                },
                Role {
                    measured: false,
                    rate: paced,
                    ..inserter
                },
                Role {
                    rate: paced,
                    ..deleter
                },
            ],
        }
    }
    fn sequence_per_client_count(&self) -> bool {
        true
    }
    /// A table per client, or the one all share.
    fn tables(&self, scale: &Scale, clients: u32) -> Option<Tables> {
        let tables = if self.params.shared_table { 1 } else { clients };
        Some(Tables {
            names: (0..tables).map(table).collect(),
            rows: scale.rows as u64 * u64::from(clients),
        })
    }
    fn shared(&self, _scale: &Scale, clients: u32) -> Vec<Option<Arc<dyn Any + Send + Sync>>> {
        let one: Arc<dyn Any + Send + Sync> = Arc::new(Shared::default());
        (0..clients)
            .map(|_| {
                Some(if self.params.shared_table {
                    one.clone()
                } else {
                    Arc::new(Shared::default()) as Arc<dyn Any + Send + Sync>
                })
            })
            .collect()
    }
    fn events(&self, scale: &Scale, clients: u32) -> Option<u64> {
        let per_client = match self.kind {
            // One index build for the one table all clients share.
            Kind::Index if self.params.shared_table => return Some(1),
            Kind::Index => 1,
            Kind::Query { .. } => return None,
            _ => {
                let c = i64::from(self.commit(&self.params).max(1));
                ((self.rows(scale) + c - 1) / c) as u64
            }
        };
        Some(per_client * u64::from(clients))
    }
    fn sla(&self, _scale: &Scale, run: &Window) -> Option<Sla> {
        let Kind::Query { rate, .. } = self.kind else {
            return None;
        };
        let commit = self.params.q_commit;
        let rows = |class: &str| {
            run.statements.get(class).copied().unwrap_or(0) as f64 * f64::from(commit)
        };
        let per_sec = |rows: f64| if run.secs > 0.0 { rows / run.secs } else { 0.0 };
        let target = f64::from(rate) * f64::from(run.clients);
        let inserted = per_sec(rows("insert"));
        let achieved = inserted / target;
        Some(Sla {
            rows_per_commit: commit,
            target_rows_per_sec: target,
            insert_rows_per_sec: inserted,
            delete_rows_per_sec: per_sec(rows("delete")),
            achieved,
            passed: achieved >= SLA,
        })
    }
    fn client(
        &self,
        conn: &mut dyn Conn,
        _more: Vec<Box<dyn Conn>>,
        d: Dialect,
        scale: &Scale,
        rng: Rng,
        ctx: &ClientCtx,
    ) -> DbResult<Box<dyn Client>> {
        let table = table_of(&self.params, ctx.index);
        let shared: Arc<Shared> = ctx
            .shared
            .clone()
            .and_then(|s| s.downcast::<Shared>().ok())
            .expect("the benchmark's shared state");
        let p = self.params;
        let role = self.roles(scale)[ctx.role].name;
        Ok(match (self.kind, role) {
            (Kind::Index, _) => Box::new(Indexer {
                // iibench adds MyRocks' indexes one ALTER at a time.
                statements: sql::indexes(
                    d,
                    &table,
                    ctx.table_options.to_ascii_lowercase().contains("rocksdb"),
                ),
            }),
            (Kind::Load, _) | (_, "inserter") => {
                if self.kind == Kind::Load && (!p.shared_table || ctx.index == 0) {
                    conn.batch(&format!("DROP TABLE IF EXISTS {table}"))?;
                    conn.batch(&sql::create(d, &table, &ctx.table_options))?;
                    shared.created.store(true, Ordering::Release);
                } else if self.kind == Kind::Load {
                    shared.wait_created(&table)?;
                }
                shared.init(conn, &table)?;
                Box::new(Inserter::new(
                    conn,
                    d,
                    &table,
                    self.commit(&p),
                    &p,
                    rng,
                    shared,
                )?)
            }
            (_, "deleter") => {
                let (lo, hi) = shared.init(conn, &table)?;
                Box::new(Deleter {
                    stmt: conn.prepare(&sql::delete(d, &table, self.commit(&p)))?,
                    batch: i64::from(self.commit(&p)),
                    keep: hi - lo + 1,
                    shared,
                    // A paced deleter's turn is its batch: it waits for the
                    // inserter's (due at the same moment in a burst) rather
                    // than let the turn go by.
                    wait: if matches!(self.kind, Kind::Query { .. }) {
                        std::time::Duration::from_millis(500)
                    } else {
                        std::time::Duration::ZERO
                    },
                    min: conn.prepare(&sql::id_bounds(&table).0)?,
                    batches: 0,
                })
            }
            (Kind::Query { point, .. }, _) => {
                shared.init(conn, &table)?;
                let stmts = if point {
                    vec![conn.prepare(&sql::point(d, &table))?]
                } else {
                    sql::ranges(d, &table)
                        .iter()
                        .map(|s| conn.prepare(s))
                        .collect::<DbResult<_>>()?
                };
                Box::new(Querier {
                    stmts,
                    point,
                    next: 0,
                    rng,
                    shared,
                    max: point
                        .then(|| conn.prepare(&sql::id_bounds(&table).1))
                        .transpose()?,
                    queries: 0,
                })
            }
            _ => unreachable!("every step's roles are handled"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_steps_at_other_rates_are_made_from_their_names() {
        let p = Params::default();
        let find = |n: &str| query_step(n, &p);
        let a = find("qr2000").unwrap();
        assert_eq!(a.meta().name, "qr2000");
        assert_eq!(
            a.kind,
            Kind::Query {
                point: false,
                rate: 2000
            }
        );
        assert!(find("qr").is_none());
        assert!(find("qr0").is_none());
        assert!(find("qr01").is_none());
        assert!(find("qx100").is_none());
    }

    #[test]
    fn the_sla_counts_the_batches_that_completed_against_the_rate_asked() {
        let scale = Scale {
            tables: 1,
            rows: 1000,
            rows_may_be_missing: false,
            ids: Default::default(),
            random_pct: 100,
            own_table: false,
            clients: 1,
        };
        // 2 clients at 500 rows/s each, 10 rows per batch, over 2 s.
        let statements = std::collections::BTreeMap::from([
            ("insert".to_string(), 190),
            ("delete".to_string(), 200),
        ]);
        let window = Window {
            clients: 2,
            secs: 2.0,
            statements: &statements,
        };
        let ten = Params {
            q_commit: 10,
            ..Params::default()
        };
        let sla = query_step("qp500", &ten)
            .unwrap()
            .sla(&scale, &window)
            .unwrap();
        assert_eq!(sla.rows_per_commit, 10);
        assert_eq!(sla.target_rows_per_sec, 1000.0);
        assert_eq!(sla.insert_rows_per_sec, 950.0);
        assert_eq!(sla.delete_rows_per_sec, 1000.0);
        assert!(sla.passed, "95% is the SLA's share");
        let statements = std::collections::BTreeMap::from([("insert".to_string(), 189)]);
        let missed = query_step("qp500", &ten).unwrap().sla(
            &scale,
            &Window {
                statements: &statements,
                ..window
            },
        );
        assert!(!missed.unwrap().passed);
        assert!(steps(&Params::default())[2].sla(&scale, &window).is_none());
    }

    #[test]
    fn fixed_steps_count_their_events() {
        let scale = Scale {
            tables: 1,
            rows: 1050,
            rows_may_be_missing: false,
            ids: Default::default(),
            random_pct: 100,
            own_table: false,
            clients: 1,
        };
        let steps = steps(&Params::default());
        // 1050 rows at 100 per commit: 11 commits per client.
        assert_eq!(steps[0].events(&scale, 2), Some(22));
        assert_eq!(steps[1].events(&scale, 2), Some(2));
        assert_eq!(steps[4].events(&scale, 2), None);
        assert_eq!(steps[1].rows_per_event(&scale), Some(1050));
    }
}
