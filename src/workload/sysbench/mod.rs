//! The sysbench microbenchmarks (the catalogue below) and their standard
//! sequence.
//!
//! Each microbenchmark is data: a list of [`Op`]s, optionally inside one
//! transaction. One generic client ([`MicroClient`]) runs any of them, so a
//! new microbenchmark is one entry in [`CATALOGUE`] and SQL comes from one
//! place ([`sql`]).

pub mod knobs;
pub mod load;
pub mod sql;

use std::borrow::Cow;
use std::time::Instant;

use super::dist::{self, Ids, Rng};
use super::{Client, ClientCtx, DurationClass, Group, Meta, Scale, ShownStatement, Workload};
use crate::db::{Conn, DbResult, Dialect, ErrorKind, Param, Stmt};
use crate::measure::Recorder;
use rand::Rng as _;

/// Which column a statement filters on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    Id,
    K,
}

/// How ids are picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    Uniform,
    /// 100 fixed ids around the middle of the table.
    Hot,
    Zipf,
    /// Always the same row.
    One,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeKind {
    /// Plain range returning these columns.
    Select(&'static str),
    Sum,
    Order,
    Distinct,
    Count,
}

/// One step of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// This many `SELECT c … WHERE id=?`, each its own statement.
    PointSelects(u32),
    InList {
        n: u32,
        col: Col,
        select: &'static str,
        pick: Pick,
    },
    Range {
        col: Col,
        size: u32,
        kind: RangeKind,
    },
    Scan,
    UpdateIndex,
    UpdateNonIndex(Pick),
    UpdateInList(u32),
    /// Delete one row and insert it back (write-only, read-write).
    DeleteInsert,
    Delete,
    Insert,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tx {
    None,
    Read,
    Write,
}

/// One microbenchmark of the catalogue.
#[derive(Debug, Clone)]
pub struct Micro {
    /// Built-in entries borrow their words and ops; one with parameters
    /// (`knobs`) owns them.
    pub name: Cow<'static, str>,
    pub group: Group,
    pub about: Cow<'static, str>,
    pub tx: Tx,
    pub ops: Cow<'static, [Op]>,
    /// How ids are drawn, when the entry says (a `dist=` parameter);
    /// otherwise the plan's distribution.
    pub ids: Option<dist::Kind>,
}

const fn range(col: Col, size: u32, kind: RangeKind) -> Op {
    Op::Range { col, size, kind }
}

const fn in_list(n: u32, col: Col, select: &'static str, pick: Pick) -> Op {
    Op::InList {
        n,
        col,
        select,
        pick,
    }
}

const fn read_only(size: u32) -> [Op; 5] {
    [
        Op::PointSelects(10),
        range(Col::Id, size, RangeKind::Select("c")),
        range(Col::Id, size, RangeKind::Sum),
        range(Col::Id, size, RangeKind::Order),
        range(Col::Id, size, RangeKind::Distinct),
    ]
}

const WRITES: [Op; 3] = [
    Op::UpdateIndex,
    Op::UpdateNonIndex(Pick::Uniform),
    Op::DeleteInsert,
];

const fn read_write(size: u32) -> [Op; 8] {
    let r = read_only(size);
    [
        r[0], r[1], r[2], r[3], r[4], WRITES[0], WRITES[1], WRITES[2],
    ]
}

static RO10: [Op; 5] = read_only(10);
static RO100: [Op; 5] = read_only(100);
static RO10000: [Op; 5] = read_only(10000);
static RW10: [Op; 8] = read_write(10);
static RW100: [Op; 8] = read_write(100);
static RW10000: [Op; 8] = read_write(10000);

macro_rules! micro {
    ($name:literal, $group:ident, $tx:ident, $ops:expr, $about:literal) => {
        Micro {
            name: Cow::Borrowed($name),
            group: Group::$group,
            about: Cow::Borrowed($about),
            tx: Tx::$tx,
            ops: Cow::Borrowed($ops),
            ids: None,
        }
    };
}

pub static CATALOGUE: &[Micro] = &[
    micro!("point-query", Point, None, &[Op::PointSelects(1)],
        "SELECT c by primary key, one row"),
    micro!("random-points-10", Point, None, &[in_list(10, Col::Id, "c", Pick::Uniform)],
        "SELECT c WHERE id IN (10 random ids)"),
    micro!("random-points-100", Point, None, &[in_list(100, Col::Id, "c", Pick::Uniform)],
        "SELECT c WHERE id IN (100 random ids)"),
    micro!("random-points-1000", Point, None, &[in_list(1000, Col::Id, "c", Pick::Uniform)],
        "SELECT c WHERE id IN (1000 random ids)"),
    micro!("hot-points", Point, None, &[in_list(100, Col::Id, "c", Pick::Hot)],
        "SELECT c WHERE id IN (the same 100 ids around the middle of the table)"),
    micro!("points-covered-pk", Point, None, &[in_list(100, Col::Id, "id", Pick::Uniform)],
        "SELECT id WHERE id IN (100 ids): covered by the primary key"),
    micro!("points-notcovered-pk", Point, None, &[in_list(100, Col::Id, "id, c", Pick::Uniform)],
        "SELECT id, c WHERE id IN (100 ids)"),
    micro!("points-covered-si", Point, None, &[in_list(100, Col::K, "k", Pick::Uniform)],
        "SELECT k WHERE k IN (100 values): covered by the secondary index"),
    micro!("points-notcovered-si", Point, None, &[in_list(100, Col::K, "k, c", Pick::Uniform)],
        "SELECT k, c WHERE k IN (100 values): secondary index, then the row"),
    micro!("range-covered-pk", Range, None, &[range(Col::Id, 100, RangeKind::Select("id"))],
        "SELECT id WHERE id BETWEEN x AND x+99"),
    micro!("range-notcovered-pk", Range, None, &[range(Col::Id, 100, RangeKind::Select("id, c"))],
        "SELECT id, c WHERE id BETWEEN x AND x+99"),
    micro!("range-covered-si", Range, None, &[range(Col::K, 100, RangeKind::Select("k"))],
        "SELECT k WHERE k BETWEEN x AND x+99: covered by the secondary index"),
    micro!("range-notcovered-si", Range, None, &[range(Col::K, 100, RangeKind::Select("k, c"))],
        "SELECT k, c WHERE k BETWEEN x AND x+99: secondary index, then the rows"),
    micro!("scan", Range, None, &[Op::Scan],
        "full scan returning nothing (WHERE LENGTH(c) < 0); reported as rows scanned per second"),
    micro!("read-only-10", RangeAgg, Read, &RO10,
        "transaction: 10 point selects, then plain, SUM, ORDER BY and DISTINCT ranges of 10 rows"),
    micro!("read-only-100", RangeAgg, Read, &RO100,
        "transaction: 10 point selects, then plain, SUM, ORDER BY and DISTINCT ranges of 100 rows"),
    micro!("read-only-10000", RangeAgg, Read, &RO10000,
        "transaction: 10 point selects, then plain, SUM, ORDER BY and DISTINCT ranges of 10000 rows"),
    micro!("read-only-simple", RangeAgg, Read,
        &[Op::PointSelects(10), range(Col::Id, 1000, RangeKind::Select("c"))],
        "transaction: 10 point selects and one plain range of 1000 rows"),
    micro!("read-only-sum", RangeAgg, Read,
        &[Op::PointSelects(10), range(Col::Id, 1000, RangeKind::Sum)],
        "transaction: 10 point selects and one SUM(k) range of 1000 rows"),
    micro!("read-only-order", RangeAgg, Read,
        &[Op::PointSelects(10), range(Col::Id, 1000, RangeKind::Order)],
        "transaction: 10 point selects and one ORDER BY c range of 1000 rows"),
    micro!("read-only-distinct", RangeAgg, Read,
        &[Op::PointSelects(10), range(Col::Id, 1000, RangeKind::Distinct)],
        "transaction: 10 point selects and one DISTINCT c ORDER BY c range of 1000 rows"),
    micro!("read-only-count", RangeAgg, None, &[range(Col::Id, 1000, RangeKind::Count)],
        "SELECT COUNT(c) WHERE id BETWEEN x AND x+999"),
    micro!("update-index", Write, None, &[Op::UpdateIndex],
        "UPDATE SET k=k+1 WHERE id=? (changes the secondary index)"),
    micro!("update-nonindex", Write, None, &[Op::UpdateNonIndex(Pick::Uniform)],
        "UPDATE SET c=? WHERE id=? (no index changes)"),
    micro!("update-one", Write, None, &[Op::UpdateNonIndex(Pick::One)],
        "update-nonindex, always the same row"),
    micro!("update-zipf", Write, None, &[Op::UpdateNonIndex(Pick::Zipf)],
        "update-nonindex with zipfian ids"),
    micro!("update-inlist", Write, None, &[Op::UpdateInList(10)],
        "UPDATE SET c=? WHERE id IN (10 ids)"),
    micro!("write-only", Write, Write, &WRITES,
        "transaction: update-index, update-nonindex, delete a row and insert it back"),
    micro!("read-write-10", Write, Write, &RW10,
        "transaction: read-only-10's reads, then write-only's writes"),
    micro!("read-write-100", Write, Write, &RW100,
        "transaction: read-only-100's reads, then write-only's writes"),
    micro!("read-write-10000", Write, Write, &RW10000,
        "transaction: read-only-10000's reads, then write-only's writes (not in the standard sequence)"),
    micro!("delete", Write, None, &[Op::Delete],
        "DELETE WHERE id=? (rows are not put back)"),
    micro!("insert", Write, None, &[Op::Insert],
        "INSERT a new row; the engine picks the next id"),
];

/// Catalogue entries the standard sequence leaves out, for plans that name
/// them: a read-write transaction over 10,000-row ranges is dominated by
/// its reads, and would be the sequence's longest step.
pub const OUTSIDE_SEQUENCE: &[&str] = &["read-write-10000"];

/// The standard sequence, as plan step strings: loads, reads before and
/// after writes, writes last (`relbench list` prints it).
pub const STANDARD_SEQUENCE: &[&str] = &[
    "load",
    "settle",
    "scan:warm",
    "point-query:pre",
    "range-notcovered-si:pre",
    "update-inlist",
    "update-index",
    "update-nonindex",
    "update-one",
    "update-zipf",
    "write-only",
    "read-write-10",
    "read-write-100",
    "settle",
    "scan:warm",
    "scan",
    "read-only-10",
    "read-only-100",
    "read-only-10000",
    "read-only-simple",
    "read-only-sum",
    "read-only-order",
    "read-only-distinct",
    "read-only-count",
    "point-query",
    "random-points-10",
    "random-points-100",
    "random-points-1000",
    "hot-points",
    "points-covered-pk",
    "points-notcovered-pk",
    "range-covered-pk",
    "range-notcovered-pk",
    "points-covered-si:warm",
    "points-covered-si",
    "points-notcovered-si",
    "range-covered-si",
    "range-notcovered-si",
    "delete",
    "insert",
];

impl Micro {
    /// The largest range any op reads; the table must have at least as many rows.
    pub fn max_range(&self) -> u32 {
        self.ops
            .iter()
            .map(|op| match op {
                Op::Range { size, .. } => *size,
                Op::InList {
                    n, col: Col::Id, ..
                } => *n,
                Op::UpdateInList(n) => *n,
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }

    fn statements_of(&self, d: Dialect, table: u32) -> Vec<(&'static str, String)> {
        self.ops
            .iter()
            .flat_map(|op| sql::op(d, op, table))
            .collect()
    }
}

impl Micro {
    fn duration_class(&self) -> DurationClass {
        match (self.group, &*self.ops) {
            (_, [Op::Insert]) => DurationClass::Insert,
            (Group::Write, _) => DurationClass::Write,
            _ => DurationClass::Read,
        }
    }

    fn classes(&self) -> Vec<&'static str> {
        let mut classes = Vec::new();
        if self.tx != Tx::None {
            classes.push("begin");
        }
        for (class, _) in self.statements_of(Dialect::Sqlite, 1) {
            if !classes.contains(&class) {
                classes.push(class);
            }
        }
        if self.tx != Tx::None {
            classes.push("commit");
        }
        classes
    }
}

impl Workload for Micro {
    fn meta(&self) -> Meta<'_> {
        Meta {
            name: &self.name,
            group: self.group,
            duration: self.duration_class(),
            about: &self.about,
            transactional: self.tx != Tx::None,
            classes: self.classes(),
            warms_up: true,
            creates_tables: false,
            removes_rows: self.ops.contains(&Op::Delete),
            class_series: false,
        }
    }

    fn statements(&self, d: Dialect) -> Vec<ShownStatement<'_>> {
        // What the SQL's placeholders hide is said beside it: how many
        // rows a range reads, how often a statement runs per event.
        let mut out: Vec<(ShownStatement, u32)> = Vec::new();
        for op in self.ops.iter() {
            let (times, note) = match op {
                Op::PointSelects(n) => (*n, String::new()),
                Op::Range { size, .. } => (1, format!(" -- {size} rows")),
                _ => (1, String::new()),
            };
            for (class, sql) in sql::op(d, op, 1) {
                let sql = format!("{sql}{note}");
                match out.last_mut() {
                    Some((last, n)) if last.class == class && last.sql == sql => *n += times,
                    _ => out.push((ShownStatement { class, sql }, times)),
                }
            }
        }
        out.into_iter()
            .map(|(mut s, n)| {
                if n > 1 {
                    s.sql += &format!(" -- ×{n}");
                }
                s
            })
            .collect()
    }

    fn rows_per_event(&self, scale: &Scale) -> Option<u64> {
        matches!(&*self.ops, [Op::Scan]).then_some(scale.rows as u64)
    }

    fn rows_needed(&self) -> u64 {
        u64::from(self.max_range())
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
        let mut c = MicroClient::new(self, conn, d, scale, rng)?;
        if scale.own_table {
            c.own_table = Some(ctx.index as usize % scale.tables.max(1) as usize);
        }
        Ok(Box::new(c))
    }
}

/// The expected outcome of a statement, checked on every event.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    Any,
    Exactly(u64),
    /// Between 1 and n rows.
    UpTo(u64),
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expect::Any => write!(f, "any number of"),
            Expect::Exactly(n) => write!(f, "{n}"),
            Expect::UpTo(n) => write!(f, "1 to {n}"),
        }
    }
}

impl Expect {
    fn holds(self, n: u64) -> bool {
        match self {
            Expect::Any => true,
            Expect::Exactly(e) => n == e,
            Expect::UpTo(e) => (1..=e).contains(&n),
        }
    }
}

/// One prepared statement slot: the statement on each table, its class and
/// what it must return.
struct Slot {
    per_table: Vec<Stmt>,
    class: usize,
    expect: Expect,
}

pub struct MicroClient {
    ops: Vec<Op>,
    tx: Tx,
    scale: Scale,
    rng: Rng,
    /// The plan's distribution, for every id the catalogue leaves open.
    ids_dist: Ids,
    zipf: Ids,
    /// Slots in op order; `DeleteInsert` takes two.
    slots: Vec<Slot>,
    begin: usize,
    commit: usize,
    // Scratch space reused by every event, so the steady state allocates nothing.
    ids: Vec<i64>,
    params: Vec<Param<'static>>,
    hot: Vec<Param<'static>>,
    c: String,
    pad: String,
    /// The table of a client that keeps to its own (index into the
    /// tables), when the step says so.
    own_table: Option<usize>,
}

impl MicroClient {
    fn new(
        micro: &Micro,
        conn: &mut dyn Conn,
        d: Dialect,
        scale: &Scale,
        rng: Rng,
    ) -> DbResult<Self> {
        let classes = micro.classes();
        let class_id = |c: &str| classes.iter().position(|x| *x == c).unwrap_or(0);
        // With deleted rows around, "exactly n rows" becomes "at most n".
        let exact = |n: u64| {
            if scale.rows_may_be_missing {
                Expect::Any
            } else {
                Expect::Exactly(n)
            }
        };
        // In a mix that deletes and re-inserts rows (read-write), an update
        // that waited on another client's delete matches nothing under
        // PostgreSQL's READ COMMITTED: the re-inserted row is a new tuple
        // its re-check does not follow. Concurrency, not a wrong result.
        let reinserts = micro.ops.iter().any(|o| matches!(o, Op::DeleteInsert));
        let updated = |n: u64| if reinserts { Expect::Any } else { exact(n) };
        let mut slots: Vec<Slot> = Vec::new();
        for op in micro.ops.iter() {
            let expects: Vec<Expect> = match *op {
                Op::PointSelects(_) => vec![exact(1)],
                Op::InList {
                    n, col: Col::Id, ..
                } => vec![exact(n as u64)],
                Op::InList { .. } => vec![Expect::Any],
                Op::Range {
                    col: Col::Id,
                    size,
                    kind,
                } => vec![match kind {
                    RangeKind::Select(_) | RangeKind::Order => exact(size as u64),
                    RangeKind::Sum | RangeKind::Count => Expect::Exactly(1),
                    RangeKind::Distinct if scale.rows_may_be_missing => Expect::Any,
                    RangeKind::Distinct => Expect::UpTo(size as u64),
                }],
                Op::Range { col: Col::K, .. } => vec![Expect::Any],
                Op::Scan => vec![Expect::Exactly(0)],
                Op::UpdateIndex | Op::UpdateNonIndex(_) => vec![updated(1)],
                Op::UpdateInList(n) => vec![updated(n as u64)],
                // Two clients may pick the same row: the second delete then
                // waits and finds nothing, which is concurrency, not an error.
                Op::DeleteInsert => vec![Expect::Any, Expect::Exactly(1)],
                Op::Delete => vec![Expect::Any],
                Op::Insert => vec![Expect::Exactly(1)],
            };
            let first = slots.len();
            for expect in expects {
                slots.push(Slot {
                    per_table: Vec::with_capacity(scale.tables as usize),
                    class: 0,
                    expect,
                });
            }
            for t in 1..=scale.tables {
                for (i, (class, text)) in sql::op(d, op, t).into_iter().enumerate() {
                    let st = conn.prepare(&text)?;
                    let slot = &mut slots[first + i];
                    slot.per_table.push(st);
                    slot.class = class_id(class);
                }
            }
        }
        let mid = (scale.rows / 2).max(50);
        let hot = (mid - 49..=mid + 50).map(Param::Int).collect();
        Ok(MicroClient {
            ops: micro.ops.to_vec(),
            tx: micro.tx,
            scale: *scale,
            rng,
            ids_dist: micro.ids.unwrap_or(scale.ids).ids(scale.rows),
            zipf: Ids::zipfian(scale.rows, dist::ZIPF_EXPONENT),
            slots,
            begin: class_id("begin"),
            commit: class_id("commit"),
            ids: Vec::with_capacity(1000),
            params: Vec::with_capacity(1000),
            hot,
            c: String::with_capacity(120),
            pad: String::with_capacity(60),
            own_table: None,
        })
    }

    fn pick(&mut self, pick: Pick) -> i64 {
        match pick {
            Pick::Uniform | Pick::Hot => self.ids_dist.sample(&mut self.rng),
            Pick::Zipf => self.zipf.sample(&mut self.rng),
            Pick::One => (self.scale.rows / 2).max(1),
        }
    }

    /// A start drawn from the plan's distribution, moved into
    /// `[1, rows - size + 1]` so the whole range exists.
    fn range_start(&mut self, size: u32) -> i64 {
        let last = (self.scale.rows - size as i64 + 1).max(1);
        self.ids_dist.sample(&mut self.rng).min(last)
    }

    /// Runs the ops; `slot` walks the statement slots alongside.
    fn run_ops(
        &mut self,
        conn: &mut dyn Conn,
        rec: &mut Recorder,
        t: usize,
    ) -> Result<(), ErrorKind> {
        let mut slot = 0;
        // By index: the ops are Copy, and the loop needs `self` mutably.
        for i in 0..self.ops.len() {
            let op = self.ops[i];
            match op {
                Op::PointSelects(n) => {
                    for _ in 0..n {
                        let id = self.ids_dist.sample(&mut self.rng);
                        self.timed_query(conn, rec, slot, t, &[Param::Int(id)])?;
                    }
                }
                Op::InList { n, pick, .. } => {
                    if pick == Pick::Hot {
                        let s = &self.slots[slot];
                        let r = timed(rec, s.class, s.expect, || {
                            conn.query(s.per_table[t], &self.hot)
                        });
                        r?;
                    } else {
                        dist::distinct(&self.ids_dist, &mut self.rng, n as usize, &mut self.ids);
                        self.params.clear();
                        self.params.extend(self.ids.iter().map(|&i| Param::Int(i)));
                        let s = &self.slots[slot];
                        timed(rec, s.class, s.expect, || {
                            conn.query(s.per_table[t], &self.params)
                        })?;
                    }
                }
                Op::Range { size, .. } => {
                    let a = self.range_start(size);
                    let b = a + size as i64 - 1;
                    self.timed_query(conn, rec, slot, t, &[Param::Int(a), Param::Int(b)])?;
                }
                Op::Scan => self.timed_query(conn, rec, slot, t, &[])?,
                Op::UpdateIndex => {
                    let id = self.ids_dist.sample(&mut self.rng);
                    self.timed_exec(conn, rec, slot, t, &[Param::Int(id)])?;
                }
                Op::UpdateNonIndex(pick) => {
                    let id = self.pick(pick);
                    fill_digits(&mut self.rng, &mut self.c, 10, self.scale.random_pct);
                    let s = &self.slots[slot];
                    timed(rec, s.class, s.expect, || {
                        conn.exec(s.per_table[t], &[Param::Str(&self.c), Param::Int(id)])
                    })?;
                }
                Op::UpdateInList(n) => {
                    dist::distinct(&self.ids_dist, &mut self.rng, n as usize, &mut self.ids);
                    fill_digits(&mut self.rng, &mut self.c, 10, self.scale.random_pct);
                    let mut params = [Param::Int(0); 11];
                    params[0] = Param::Str(&self.c);
                    for (p, &id) in params[1..].iter_mut().zip(&self.ids) {
                        *p = Param::Int(id);
                    }
                    let s = &self.slots[slot];
                    timed(rec, s.class, s.expect, || {
                        conn.exec(s.per_table[t], &params[..=n as usize])
                    })?;
                }
                Op::DeleteInsert => {
                    let id = self.ids_dist.sample(&mut self.rng);
                    self.timed_exec(conn, rec, slot, t, &[Param::Int(id)])?;
                    slot += 1;
                    let k = self.ids_dist.sample(&mut self.rng);
                    fill_digits(&mut self.rng, &mut self.c, 10, self.scale.random_pct);
                    fill_digits(&mut self.rng, &mut self.pad, 5, self.scale.random_pct);
                    let s = &self.slots[slot];
                    let params = [
                        Param::Int(id),
                        Param::Int(k),
                        Param::Str(&self.c),
                        Param::Str(&self.pad),
                    ];
                    timed(rec, s.class, s.expect, || {
                        conn.exec(s.per_table[t], &params)
                    })?;
                }
                Op::Delete => {
                    let id = self.ids_dist.sample(&mut self.rng);
                    self.timed_exec(conn, rec, slot, t, &[Param::Int(id)])?;
                }
                Op::Insert => {
                    let k = self.ids_dist.sample(&mut self.rng);
                    fill_digits(&mut self.rng, &mut self.c, 10, self.scale.random_pct);
                    fill_digits(&mut self.rng, &mut self.pad, 5, self.scale.random_pct);
                    let s = &self.slots[slot];
                    let params = [Param::Int(k), Param::Str(&self.c), Param::Str(&self.pad)];
                    timed(rec, s.class, s.expect, || {
                        conn.exec(s.per_table[t], &params)
                    })?;
                }
            }
            slot += 1;
        }
        Ok(())
    }

    fn timed_query(
        &self,
        conn: &mut dyn Conn,
        rec: &mut Recorder,
        slot: usize,
        t: usize,
        params: &[Param<'_>],
    ) -> Result<(), ErrorKind> {
        let s = &self.slots[slot];
        timed(rec, s.class, s.expect, || {
            conn.query(s.per_table[t], params)
        })
    }

    fn timed_exec(
        &self,
        conn: &mut dyn Conn,
        rec: &mut Recorder,
        slot: usize,
        t: usize,
        params: &[Param<'_>],
    ) -> Result<(), ErrorKind> {
        let s = &self.slots[slot];
        timed(rec, s.class, s.expect, || conn.exec(s.per_table[t], params))
    }
}

impl Client for MicroClient {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        let t = if let Some(t) = self.own_table {
            t
        } else if self.scale.tables > 1 {
            self.rng.random_range(0..self.scale.tables as usize)
        } else {
            0
        };
        if self.tx == Tx::None {
            return self.run_ops(conn, rec, t);
        }
        let write = self.tx == Tx::Write;
        timed(rec, self.begin, Expect::Any, || {
            conn.begin(write).map(|_| 0)
        })?;
        let r = self
            .run_ops(conn, rec, t)
            .and_then(|_| timed(rec, self.commit, Expect::Any, || conn.commit().map(|_| 0)));
        if r.is_err() {
            // The error is already recorded; a failed rollback only means
            // the engine rolled back already.
            let _ = conn.rollback();
        }
        r
    }
}

/// Runs one statement, records its latency or its error under `class`, and
/// checks the row count.
#[inline]
fn timed(
    rec: &mut Recorder,
    class: usize,
    expect: Expect,
    f: impl FnOnce() -> DbResult<u64>,
) -> Result<(), ErrorKind> {
    let start = Instant::now();
    match f() {
        Ok(n) if expect.holds(n) => {
            rec.statement(class, start.elapsed());
            Ok(())
        }
        Ok(n) => {
            rec.error(class, ErrorKind::WrongResult, || {
                format!("expected {expect} rows, got {n}")
            });
            Err(ErrorKind::WrongResult)
        }
        Err(e) => {
            rec.error(class, e.kind, || e.message);
            Err(e.kind)
        }
    }
}

/// `groups` groups of 11 random digits joined by '-', as sysbench fills
/// `c` (10 groups, 119 characters) and `pad` (5 groups, 59 characters).
pub fn fill_digits(rng: &mut Rng, buf: &mut String, groups: usize, random_pct: u8) {
    buf.clear();
    // Of each group's 11 digits, this many are random and the rest '0':
    // the plan's `random_pct` makes the strings compress (100: sysbench's
    // own, all random). One draw per group whatever the share, so the ids
    // and values drawn after it do not change with it.
    let random = (11 * usize::from(random_pct)).div_ceil(100);
    for g in 0..groups {
        if g > 0 {
            buf.push('-');
        }
        // One draw gives 19 decimal digits; take 11 of them.
        let mut v: u64 = rng.random();
        for i in 0..11 {
            buf.push(if i < random {
                (b'0' + (v % 10) as u8) as char
            } else {
                '0'
            });
            v /= 10;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_runs_with_ranges_of_10000_too() {
        // sysbench users run oltp_read_write --range-size=10000.
        let m = CATALOGUE
            .iter()
            .find(|m| m.name == "read-write-10000")
            .unwrap();
        assert_eq!(m.max_range(), 10000);
        assert_eq!(m.tx, Tx::Write);
        assert!(OUTSIDE_SEQUENCE.contains(&"read-write-10000"));
    }

    #[test]
    fn standard_sequence_names_only_catalogue_workloads() {
        for s in STANDARD_SEQUENCE {
            let name = s.split(':').next().unwrap();
            assert!(
                name == "load" || name == "settle" || CATALOGUE.iter().any(|m| m.name == name),
                "{s}"
            );
        }
        // Every catalogue entry appears in the standard sequence, or is
        // listed as left out of it.
        for m in CATALOGUE {
            let in_sequence = STANDARD_SEQUENCE
                .iter()
                .any(|s| s.split(':').next() == Some(&*m.name));
            assert!(
                in_sequence != OUTSIDE_SEQUENCE.contains(&&*m.name),
                "{}: in the standard sequence or in OUTSIDE_SEQUENCE, not both or neither",
                m.name
            );
        }
    }

    #[test]
    fn digits_have_sysbench_shape() {
        let mut r = dist::rng(1, 1);
        let mut s = String::new();
        fill_digits(&mut r, &mut s, 10, 100);
        assert_eq!(s.len(), 119);
        fill_digits(&mut r, &mut s, 5, 100);
        assert_eq!(s.len(), 59);
        assert_eq!(s.matches('-').count(), 4);
    }

    #[test]
    fn classes_wrap_transactions_in_begin_and_commit() {
        let rw = CATALOGUE
            .iter()
            .find(|m| m.name == "read-write-10")
            .unwrap();
        assert_eq!(
            rw.classes(),
            vec![
                "begin",
                "point-select",
                "range",
                "range-sum",
                "range-order",
                "range-distinct",
                "update-index",
                "update-nonindex",
                "delete",
                "insert",
                "commit"
            ]
        );
    }
}
