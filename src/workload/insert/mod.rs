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

mod sql;

use std::any::Any;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use super::dist::Rng;
use super::{
    record_error as record, Client, ClientCtx, DurationClass, Group, Meta, Role, Scale,
    ShownStatement, Window, Workload,
};
use crate::db::{Conn, DbError, DbResult, Dialect, ErrorKind, Param, Stmt};
use crate::measure::Recorder;

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
    /// Rows per commit of the q-steps' background inserter and deleter.
    pub q_commit: u32,
    /// Length of the `data` column, drawn uniformly in this range.
    pub data_min: u32,
    pub data_max: u32,
    /// All clients on one table (`pi1`), the benchmark's other mode,
    /// instead of a table each.
    #[serde(default)]
    pub shared_table: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            l_i1_rows: 100_000,
            l_i2_rows: 20_000,
            l_i0_commit: 100,
            l_i1_commit: 50,
            l_i2_commit: 5,
            q_commit: 10,
            data_min: 10,
            data_max: 20,
            shared_table: false,
        }
    }
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

/// One step of the benchmark.
pub struct Step {
    pub name: &'static str,
    pub kind: Kind,
}

/// The standard sequence: the steps with the benchmark's default rates.
pub static STEPS: [Step; 10] = [
    Step {
        name: "l.i0",
        kind: Kind::Load,
    },
    Step {
        name: "l.x",
        kind: Kind::Index,
    },
    Step {
        name: "l.i1",
        kind: Kind::Churn { second: false },
    },
    Step {
        name: "l.i2",
        kind: Kind::Churn { second: true },
    },
    Step {
        name: "qr100",
        kind: Kind::Query {
            point: false,
            rate: 100,
        },
    },
    Step {
        name: "qp100",
        kind: Kind::Query {
            point: true,
            rate: 100,
        },
    },
    Step {
        name: "qr500",
        kind: Kind::Query {
            point: false,
            rate: 500,
        },
    },
    Step {
        name: "qp500",
        kind: Kind::Query {
            point: true,
            rate: 500,
        },
    },
    Step {
        name: "qr1000",
        kind: Kind::Query {
            point: false,
            rate: 1000,
        },
    },
    Step {
        name: "qp1000",
        kind: Kind::Query {
            point: true,
            rate: 1000,
        },
    },
];

/// The standard sequence as plan steps: the settle after l.i2 lets the
/// engine write back what the loads left (its length grows with the rows).
pub const SEQUENCE: [&str; 11] = [
    "l.i0", "l.x", "l.i1", "l.i2", "settle", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000",
];

/// A q-step at another rate, `qr<N>` or `qp<N>` (rows per second per
/// client), made once and kept for the run.
pub fn find(name: &str) -> Option<&'static dyn Workload> {
    static MADE: Mutex<Vec<&'static Step>> = Mutex::new(Vec::new());
    let kind = kind_of(name)?;
    let mut made = MADE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(s) = made.iter().find(|s| s.name == name) {
        return Some(*s as &dyn Workload);
    }
    let step: &'static Step = Box::leak(Box::new(Step {
        name: Box::leak(name.to_string().into_boxed_str()),
        kind,
    }));
    made.push(step);
    Some(step as &dyn Workload)
}

/// The SLA: a q-step passes when its inserts reach this share of the
/// target rate.
pub const SLA: f64 = 0.95;

/// A q-step's background writes against their target: rows inserted and
/// deleted over the measured window, from the statements that completed
/// (each a batch of `rows_per_commit` rows).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Sla {
    /// Rows each background insert or delete statement commits.
    #[serde(default)]
    pub rows_per_commit: u32,
    /// Rows per second asked for, all clients together.
    pub target_rows_per_sec: f64,
    /// Rows per second inserted and deleted over the measured window.
    pub insert_rows_per_sec: f64,
    pub delete_rows_per_sec: f64,
    /// Inserted ÷ target, and whether it reached the SLA's share.
    pub achieved: f64,
    pub passed: bool,
}

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
    /// Reads the table's id range once per step, on whichever connection
    /// sets up first (all set up before any event runs).
    fn init(&self, conn: &mut dyn Conn, d: Dialect, table: &str) -> DbResult<(i64, i64)> {
        if let Some(r) = self.start.get() {
            return Ok(*r);
        }
        let r = id_range(conn, d, table)?;
        let r = *self.start.get_or_init(|| r);
        self.top.store(r.1, Ordering::Relaxed);
        self.taken.store(r.1, Ordering::Relaxed);
        self.bottom.store(r.0, Ordering::Relaxed);
        Ok(r)
    }
}

/// The lowest and highest id in `table` ((1, 0) when empty), found by
/// bisection with one-row range probes on the primary key: the connection
/// API counts rows but does not return values, and ~80 index probes cost
/// well under a millisecond.
fn id_range(conn: &mut dyn Conn, d: Dialect, table: &str) -> DbResult<(i64, i64)> {
    let probe = conn.prepare(&sql::probe(d, table))?;
    let mut any = |lo: i64, hi: i64| -> DbResult<bool> {
        Ok(conn.query(probe, &[Param::Int(lo), Param::Int(hi)])? > 0)
    };
    const TOP: i64 = 1 << 50;
    if !any(1, TOP)? {
        return Ok((1, 0));
    }
    // Smallest x with a row in [1, x]; largest x with a row in [x, TOP].
    let (mut lo, mut hi) = (1, TOP);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if any(1, mid)? {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let min = lo;
    let (mut lo, mut hi) = (min, TOP);
    while lo < hi {
        let mid = lo + (hi - lo + 1) / 2;
        if any(mid, TOP)? {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Ok((min, lo))
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
            Kind::Churn { second: false } => scale.insert.l_i1_rows,
            Kind::Churn { second: true } => scale.insert.l_i2_rows,
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
    fn meta(&self) -> Meta {
        Meta {
            name: self.name,
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
    fn statements(&self, d: Dialect) -> Vec<ShownStatement> {
        let t = "pi1";
        let p = Params::default();
        let mut out = Vec::new();
        let show = |class: &'static str, sql: String| ShownStatement { class, sql };
        match self.kind {
            Kind::Load => {
                out.push(show("create", sql::create(d, t, "")));
                out.push(show("insert", sql::insert(d, t, p.l_i0_commit as usize)));
            }
            Kind::Index => {
                out.extend(sql::indexes(t).into_iter().map(|s| show("index", s)));
            }
            Kind::Churn { .. } => {
                out.push(show("insert", sql::insert(d, t, self.commit(&p) as usize)));
                out.push(show("delete", sql::delete(d, t)));
            }
            Kind::Query { point, .. } => {
                if point {
                    out.push(show("query", sql::point(d, t)));
                } else {
                    out.extend(sql::ranges(d, t).into_iter().map(|s| show("query", s)));
                }
                out.push(show("insert", sql::insert(d, t, p.q_commit as usize)));
                out.push(show("delete", sql::delete(d, t)));
            }
        }
        out
    }
    fn rows_per_event(&self, scale: &Scale) -> Option<u64> {
        match self.kind {
            Kind::Index if scale.insert.shared_table => {
                Some(scale.rows as u64 * u64::from(scale.clients.max(1)))
            }
            Kind::Index => Some(scale.rows as u64),
            Kind::Query { .. } => None,
            _ => Some(u64::from(self.commit(&scale.insert))),
        }
    }
    fn roles(&self, scale: &Scale) -> Vec<Role> {
        // The q-steps' writers run on a schedule: rate ÷ rows per commit
        // events a second.
        let paced = match self.kind {
            Kind::Query { rate, .. } => {
                Some(f64::from(rate) / f64::from(scale.insert.q_commit.max(1)))
            }
            _ => None,
        };
        let inserter = Role {
            name: "inserter",
            rate: None,
            measured: true,
        };
        let deleter = Role {
            name: "deleter",
            rate: None,
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
    fn shared(&self, scale: &Scale, clients: u32) -> Vec<Option<Arc<dyn Any + Send + Sync>>> {
        let one: Arc<dyn Any + Send + Sync> = Arc::new(Shared::default());
        (0..clients)
            .map(|_| {
                Some(if scale.insert.shared_table {
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
            Kind::Index if scale.insert.shared_table => return Some(1),
            Kind::Index => 1,
            Kind::Query { .. } => return None,
            _ => {
                let c = i64::from(self.commit(&scale.insert).max(1));
                ((self.rows(scale) + c - 1) / c) as u64
            }
        };
        Some(per_client * u64::from(clients))
    }
    fn sla(&self, scale: &Scale, run: &Window) -> Option<Sla> {
        let Kind::Query { rate, .. } = self.kind else {
            return None;
        };
        let commit = scale.insert.q_commit;
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
        d: Dialect,
        scale: &Scale,
        rng: Rng,
        ctx: &ClientCtx,
    ) -> DbResult<Box<dyn Client>> {
        let table = table_of(&scale.insert, ctx.index);
        let shared: Arc<Shared> = ctx
            .shared
            .clone()
            .and_then(|s| s.downcast::<Shared>().ok())
            .expect("the benchmark's shared state");
        let p = scale.insert;
        let role = self.roles(scale)[ctx.role].name;
        Ok(match (self.kind, role) {
            (Kind::Index, _) => Box::new(Indexer {
                statements: sql::indexes(&table),
            }),
            (Kind::Load, _) | (_, "inserter") => {
                if self.kind == Kind::Load && (!p.shared_table || ctx.index == 0) {
                    conn.batch(&format!("DROP TABLE IF EXISTS {table}"))?;
                    conn.batch(&sql::create(d, &table, &ctx.table_options))?;
                    shared.created.store(true, Ordering::Release);
                } else if self.kind == Kind::Load {
                    // The first client makes the table all of them share.
                    let t0 = Instant::now();
                    while !shared.created.load(Ordering::Acquire) {
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
                }
                shared.init(conn, d, &table)?;
                let mut ins = Inserter::new(conn, d, &table, self.commit(&p), &p, rng, shared)?;
                ins.random_pct = scale.random_pct;
                Box::new(ins)
            }
            (_, "deleter") => {
                let (lo, hi) = shared.init(conn, d, &table)?;
                Box::new(Deleter {
                    stmt: conn.prepare(&sql::delete(d, &table))?,
                    batch: i64::from(self.commit(&p)),
                    keep: hi - lo + 1,
                    shared,
                })
            }
            (Kind::Query { point, .. }, _) => {
                shared.init(conn, d, &table)?;
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
                })
            }
            _ => unreachable!("every step's roles are handled"),
        })
    }
}

/// Appends rows at the top of the table, `commit` per statement.
struct Inserter {
    stmt: Stmt,
    commit: u32,
    rng: Rng,
    shared: Arc<Shared>,
    data_len: (u32, u32),
    /// Percent of `data` that is random letters; the rest is 'a', which
    /// compresses (the benchmark's own `data_random_pct`).
    random_pct: u8,
    /// Per row: price and data, reused so an event allocates only its
    /// parameter list.
    price: Vec<String>,
    data: Vec<String>,
}

impl Inserter {
    fn new(
        conn: &mut dyn Conn,
        d: Dialect,
        table: &str,
        commit: u32,
        p: &Params,
        rng: Rng,
        shared: Arc<Shared>,
    ) -> DbResult<Self> {
        Ok(Inserter {
            stmt: conn.prepare(&sql::insert(d, table, commit as usize))?,
            commit,
            rng,
            shared,
            data_len: (p.data_min, p.data_max.max(p.data_min)),
            random_pct: 100,
            price: vec![String::new(); commit as usize],
            data: vec![String::new(); commit as usize],
        })
    }
}

const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

impl Client for Inserter {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        use std::fmt::Write;
        // This batch's ids, taken before it is built: inserters that share
        // a table never write the same id.
        let first = self
            .shared
            .taken
            .fetch_add(i64::from(self.commit), Ordering::Relaxed)
            + 1;
        let mut ints = Vec::with_capacity(self.commit as usize * 4);
        for i in 0..self.commit as usize {
            ints.push([
                first + i as i64,
                self.rng.random_range(0..1000),
                self.rng.random_range(0..100_000),
                self.rng.random_range(0..10_000),
            ]);
            let p = &mut self.price[i];
            p.clear();
            let cents: u32 = self.rng.random_range(0..50_000);
            let _ = write!(p, "{}.{:02}", cents / 100, cents % 100);
            let len = self.rng.random_range(self.data_len.0..=self.data_len.1);
            let d = &mut self.data[i];
            d.clear();
            let random = (len as usize * usize::from(self.random_pct)).div_ceil(100);
            for _ in 0..random {
                d.push(LETTERS[self.rng.random_range(0..LETTERS.len())] as char);
            }
            for _ in random..len as usize {
                d.push('a');
            }
        }
        let mut params = Vec::with_capacity(self.commit as usize * 6);
        for (i, v) in ints.iter().enumerate() {
            params.extend([
                Param::Int(v[0]),
                Param::Int(v[1]),
                Param::Int(v[2]),
                Param::Int(v[3]),
                Param::Str(&self.price[i]),
                Param::Str(&self.data[i]),
            ]);
        }
        let t = Instant::now();
        // One multi-row statement in autocommit: one commit per batch.
        match conn.exec(self.stmt, &params) {
            Ok(_) => {
                rec.statement(INSERT, t.elapsed());
                self.shared
                    .top
                    .fetch_max(first + i64::from(self.commit) - 1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => Err(record(rec, INSERT, e)),
        }
    }
}

/// Removes the oldest rows, a batch at a time, never taking the table below
/// its size when the step began.
struct Deleter {
    stmt: Stmt,
    batch: i64,
    keep: i64,
    shared: Arc<Shared>,
}

impl Deleter {
    /// Whether the next batch may go: the table keeps at least its size at
    /// the step's start.
    fn may_delete(&self) -> bool {
        let lo = self.shared.bottom.load(Ordering::Relaxed);
        let top = self.shared.top.load(Ordering::Relaxed);
        lo + self.batch - 1 <= top - self.keep
    }
}

impl Client for Deleter {
    fn caught_up(&self) -> bool {
        !self.may_delete()
    }

    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        let lo = self.shared.bottom.load(Ordering::Relaxed);
        if !self.may_delete() {
            // The inserter has not added this batch yet: wait for it.
            std::thread::sleep(Duration::from_micros(200));
            return Ok(());
        }
        // Take the batch: deleters that share a table never take the same
        // one (another took it: try the next on the next event).
        if self
            .shared
            .bottom
            .compare_exchange(lo, lo + self.batch, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return Ok(());
        }
        let t = Instant::now();
        match conn.exec(self.stmt, &[Param::Int(lo), Param::Int(lo + self.batch)]) {
            Ok(_) => {
                rec.statement(DELETE, t.elapsed());
                Ok(())
            }
            Err(e) => Err(record(rec, DELETE, e)),
        }
    }
}

/// The q-steps' unthrottled query connection.
struct Querier {
    stmts: Vec<Stmt>,
    point: bool,
    next: usize,
    rng: Rng,
    shared: Arc<Shared>,
}

impl Client for Querier {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        let stmt = self.stmts[self.next % self.stmts.len()];
        self.next += 1;
        let t = Instant::now();
        let r = if self.point {
            // Ten ids among the live ones; the deleter may remove one
            // meanwhile, so the row count is not checked.
            let lo = self.shared.bottom.load(Ordering::Relaxed);
            let hi = self.shared.top.load(Ordering::Relaxed).max(lo);
            let mut ids = [0i64; 10];
            for id in &mut ids {
                *id = self.rng.random_range(lo..=hi);
            }
            let params: [Param<'_>; 10] = ids.map(Param::Int);
            conn.query(stmt, &params)
        } else {
            // Each range query starts at a random value of its index's
            // leading column.
            let start = match self.next % 3 {
                1 => self.rng.random_range(0..10_000),
                2 => self.rng.random_range(0..1000),
                _ => self.rng.random_range(0..500),
            };
            conn.query(stmt, &[Param::Int(start)])
        };
        match r {
            Ok(_) => {
                rec.statement(QUERY, t.elapsed());
                Ok(())
            }
            Err(e) => Err(record(rec, QUERY, e)),
        }
    }
}

/// l.x: the three indexes of one table, as one event.
struct Indexer {
    statements: Vec<String>,
}

impl Client for Indexer {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        for s in &self.statements {
            let t = Instant::now();
            match conn.batch(s) {
                Ok(()) => rec.statement(INDEX, t.elapsed()),
                Err(e) => return Err(record(rec, INDEX, e)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q_steps_at_other_rates_are_found_once() {
        let a = find("qr2000").unwrap();
        let b = find("qr2000").unwrap();
        assert!(std::ptr::eq(
            a as *const dyn Workload as *const u8,
            b as *const dyn Workload as *const u8
        ));
        assert_eq!(a.meta().name, "qr2000");
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
            insert: Params::default(),
            linkbench: Default::default(),
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
        let sla = crate::workload::find("qp500")
            .unwrap()
            .sla(&scale, &window)
            .unwrap();
        assert_eq!(sla.rows_per_commit, 10);
        assert_eq!(sla.target_rows_per_sec, 1000.0);
        assert_eq!(sla.insert_rows_per_sec, 950.0);
        assert_eq!(sla.delete_rows_per_sec, 1000.0);
        assert!(sla.passed, "95% is the SLA's share");
        let statements = std::collections::BTreeMap::from([("insert".to_string(), 189)]);
        let missed = crate::workload::find("qp500").unwrap().sla(
            &scale,
            &Window {
                statements: &statements,
                ..window
            },
        );
        assert!(!missed.unwrap().passed);
        assert!(crate::workload::find("l.i1")
            .unwrap()
            .sla(&scale, &window)
            .is_none());
    }

    #[test]
    fn fixed_steps_count_their_events() {
        let scale = Scale {
            tables: 1,
            rows: 1050,
            rows_may_be_missing: false,
            ids: Default::default(),
            insert: Params::default(),
            linkbench: Default::default(),
            random_pct: 100,
            own_table: false,
            clients: 1,
        };
        // 1050 rows at 100 per commit: 11 commits per client.
        assert_eq!(STEPS[0].events(&scale, 2), Some(22));
        assert_eq!(STEPS[1].events(&scale, 2), Some(2));
        assert_eq!(STEPS[4].events(&scale, 2), None);
        assert_eq!(STEPS[1].rows_per_event(&scale), Some(1050));
    }
}
