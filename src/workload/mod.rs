//! Workloads: what each client does per event.
//!
//! A [`Workload`] prepares its statements on a connection and returns a
//! [`Client`] whose `event` runs one statement or one transaction. The engine
//! owns the threads and the clock; a workload owns only the SQL and the row
//! checks. One folder per family: `sysbench` (the microbenchmarks),
//! `insert` (the Insert Benchmark), `linkbench` (LinkBench), `tpcc`
//! (TPC-C), `script` (the plan's own SQL) and `lua` (sysbench's Lua
//! scripts, as they are).

pub mod catalogue;
pub mod check;
pub mod dist;
pub mod insert;
pub mod linkbench;
pub mod lua;
pub mod maint;
pub mod script;
pub mod shapes;
pub mod sysbench;
pub mod tpcc;

use std::any::Any;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::db::{Conn, DbResult, Dialect, ErrorKind};
use crate::measure::Recorder;

/// Report groups, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    Load,
    Point,
    Range,
    RangeAgg,
    Write,
    /// The Insert Benchmark's steps.
    Insert,
    /// LinkBench's steps.
    LinkBench,
    /// TPC-C's steps.
    Tpcc,
    /// The plan's own SQL workloads.
    Custom,
    /// Groups by position in the sequence, for reports that read a study
    /// that way (`relbench report --groups position`): the steps before
    /// the write-heavy ones, those, the steps after, and the inserts and
    /// deletes at the end. No workload belongs to these; the report
    /// assigns them.
    Before,
    WriteHeavy,
    After,
    InsertDelete,
}

impl Group {
    pub const ALL: [Group; 13] = [
        Group::Load,
        Group::Before,
        Group::Point,
        Group::Range,
        Group::RangeAgg,
        Group::Write,
        Group::WriteHeavy,
        Group::After,
        Group::InsertDelete,
        Group::Insert,
        Group::LinkBench,
        Group::Tpcc,
        Group::Custom,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Group::Load => "load",
            Group::Point => "point",
            Group::Range => "range",
            Group::RangeAgg => "range-agg",
            Group::Write => "write",
            Group::Insert => "insert-benchmark",
            Group::LinkBench => "linkbench",
            Group::Tpcc => "tpcc",
            Group::Custom => "custom",
            Group::Before => "before-writes",
            Group::WriteHeavy => "write-heavy",
            Group::After => "after-writes",
            Group::InsertDelete => "insert-delete",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Group::Load => "Load",
            Group::Point => "Point queries",
            Group::Range => "Range queries without aggregation",
            Group::RangeAgg => "Range queries with aggregation",
            Group::Write => "Writes",
            Group::Insert => "Insert Benchmark",
            Group::LinkBench => "LinkBench",
            Group::Tpcc => "TPC-C",
            Group::Custom => "The plan's own workloads",
            Group::Before => "Before the write-heavy steps",
            Group::WriteHeavy => "Write-heavy",
            Group::After => "After the write-heavy steps",
            Group::InsertDelete => "Inserts and deletes",
        }
    }
}

/// Which duration of the plan a workload step runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DurationClass {
    Read,
    Write,
    Insert,
}

/// What the data looks like when a client starts.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    pub tables: u32,
    pub rows: i64,
    /// Rows may have been deleted by an earlier step, so row-count checks
    /// that assume every id exists are off.
    pub rows_may_be_missing: bool,
    /// How ids are drawn where the catalogue says nothing else.
    pub ids: dist::Kind,
    /// Percent of each generated string that is random (the rest
    /// compresses); 100 is sysbench's own.
    pub random_pct: u8,
    /// Client i works on table i+1 only (a scan once per client, each
    /// on its own table), instead of a random table per event.
    pub own_table: bool,
    /// The step's client count.
    pub clients: u32,
}

impl Scale {
    /// A scale for asking a workload what does not depend on the data
    /// (whether it runs by time or until its work is done).
    pub fn probe() -> Scale {
        Scale {
            tables: 1,
            rows: 1,
            rows_may_be_missing: false,
            ids: dist::Kind::Uniform,
            random_pct: 100,
            own_table: false,
            clients: 1,
        }
    }
}

/// What a step's measured window did, for [`Workload::sla`].
pub struct Window<'a> {
    pub clients: u32,
    pub secs: f64,
    /// Statements completed, by class.
    pub statements: &'a std::collections::BTreeMap<String, u64>,
}

/// What one of a client's connections does. A sysbench client has one
/// connection; an Insert Benchmark client has a query connection and,
/// beside it, an inserter and a deleter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Role {
    pub name: &'static str,
    /// Open loop: events per second for this connection, started on a
    /// fixed schedule (a late server shows as a missed rate, not as a
    /// slower client). `None`: the next event starts when one ends.
    pub rate: Option<f64>,
    /// With a rate: each second's events back to back from its start
    /// (iibench's writers), rather than evenly apart.
    pub burst: bool,
    /// Counts in the step's throughput, and ends a step that stops by
    /// event count; the others stop with it.
    pub measured: bool,
}

impl Role {
    /// The one closed-loop, measured connection of a plain workload.
    pub const CLIENT: Role = Role {
        name: "client",
        rate: None,
        burst: false,
        measured: true,
    };
}

/// What a client's connection is told when it is set up.
pub struct ClientCtx {
    /// The client's number, from 0.
    pub index: u32,
    /// Index into [`Workload::roles`].
    pub role: usize,
    /// State the connections of one client share ([`Workload::shared`]).
    pub shared: Option<Arc<dyn Any + Send + Sync>>,
    /// Appended to CREATE TABLE (a storage engine).
    pub table_options: String,
}

/// One statement as `relbench show` prints it.
pub struct ShownStatement<'a> {
    pub class: &'a str,
    pub sql: String,
}

/// The tables a sequence works on, and how many rows they hold in all
/// (what a settle step flushes, a maintenance step drops, a run checks).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tables {
    pub names: Vec<String>,
    pub rows: u64,
}

/// A step's background writes against what it asked of the server (the
/// Insert Benchmark's q-steps): rows inserted and deleted over the
/// measured window, from the statements that completed (each a batch of
/// `rows_per_commit` rows).
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

/// What a workload step is, as plain data: the runner, the plan and the
/// report read it instead of asking the workload one question at a time
/// (or testing it by name). It borrows its names from the workload: a
/// catalogue entry made from a plan owns them, a built-in one is static.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta<'a> {
    pub name: &'a str,
    pub group: Group,
    /// Which of the plan's durations the step runs for.
    pub duration: DurationClass,
    /// One line on what an event does.
    pub about: &'a str,
    /// Whether an event is one transaction.
    pub transactional: bool,
    /// The statement classes a client reports latencies and errors under;
    /// the index into this list is the class id given to the [`Recorder`].
    pub classes: Vec<&'a str>,
    /// Whether the step starts with the plan's warm-up (a step that does a
    /// fixed amount of work counts all of it).
    pub warms_up: bool,
    /// Whether the step creates the tables the rest of the sequence uses
    /// (as `load` does for sysbench): the target starts afresh before it.
    pub creates_tables: bool,
    /// Whether the step leaves fewer rows than it found (sysbench's
    /// `delete`): later steps cannot expect every id to exist.
    pub removes_rows: bool,
    /// Whether the results keep a per-second series per statement class.
    pub class_series: bool,
}

impl Meta<'_> {
    /// Whether the step leaves the data other than it found it (a load,
    /// writes, the Insert Benchmark's steps with their background
    /// inserts): a later step's data depends on it having run.
    pub fn changes_data(&self) -> bool {
        matches!(self.group, Group::Load | Group::Write | Group::Insert)
            || (matches!(self.group, Group::Custom | Group::LinkBench | Group::Tpcc)
                && self.duration != DurationClass::Read)
    }
}

/// One entry of a [`catalogue::Catalogue`]: a workload step as the plan
/// configured it (a family's parameters are the entry's own).
pub trait Workload: Send + Sync {
    fn meta(&self) -> Meta<'_>;
    /// The SQL of one event on table `sbtest1`, for `relbench show`.
    fn statements(&self, dialect: Dialect) -> Vec<ShownStatement<'_>>;
    /// Rows each event processes when throughput is counted in rows (a full
    /// scan), `None` when it is counted in events.
    fn rows_per_event(&self, scale: &Scale) -> Option<u64>;
    /// Whether throughput is the rows the clients tallied
    /// ([`crate::measure::Tally::Rows`], all classes together) rather
    /// than events (LinkBench's load: a chunk's rows vary with its
    /// nodes' degrees).
    fn counts_rows(&self) -> bool {
        false
    }
    /// Connections each client holds besides the one it is given, on an
    /// engine of `dialect` (the original LinkBench's requester writes on
    /// one, autocommit off, and reads on another).
    fn more_connections(&self, _dialect: Dialect) -> usize {
        0
    }
    /// Prepares the statements on `conn` (and `more`, the
    /// [`Workload::more_connections`], which the client then owns) and
    /// returns the client state.
    fn client(
        &self,
        conn: &mut dyn Conn,
        more: Vec<Box<dyn Conn>>,
        dialect: Dialect,
        scale: &Scale,
        rng: dist::Rng,
        ctx: &ClientCtx,
    ) -> DbResult<Box<dyn Client>>;
    /// Judges the step's measured window against what it asked of the
    /// server, for a workload that asks something (the Insert Benchmark's
    /// q-steps: background writes at a fixed rate).
    fn sla(&self, _scale: &Scale, _window: &Window) -> Option<Sla> {
        None
    }
    /// The tables this family's sequence works on at `clients` (the
    /// Insert Benchmark has one per client), when they are not the
    /// plan's sysbench tables; `None`: the family brings none.
    fn tables(&self, _scale: &Scale, _clients: u32) -> Option<Tables> {
        None
    }
    /// Whether each client count runs the whole sequence on fresh tables
    /// (the Insert Benchmark: a table per client, made by its first step).
    fn sequence_per_client_count(&self) -> bool {
        false
    }
    /// The fewest rows a table must hold for the workload's row checks
    /// to hold (the widest range it reads).
    fn rows_needed(&self) -> u64 {
        0
    }
    /// The client count a step of this workload runs at when the step
    /// gives none (LinkBench's loaders and requesters); `None`: the plan's.
    fn clients(&self) -> Option<u32> {
        None
    }
    /// Whether the statements a step sends are explained as it begins
    /// (its client run against a listening connection first): not for a
    /// script's command, whose one event may be a whole table's load.
    fn explained(&self) -> bool {
        true
    }
    /// Open-loop events a second per client when the step gives no rate
    /// (LinkBench's `requestrate`); `None`: closed loop.
    fn rate_per_client(&self) -> Option<u64> {
        None
    }
    /// Statements that make what the workload needs (its own tables),
    /// run once per target before the first step that uses it.
    fn setup(&self, _dialect: Dialect) -> &[String] {
        &[]
    }
    /// The connections of one client.
    fn roles(&self, _scale: &Scale) -> Vec<Role> {
        vec![Role::CLIENT]
    }
    /// State shared by the connections of each of `clients` clients (one
    /// per client; the same one for clients that share their data).
    fn shared(&self, _scale: &Scale, clients: u32) -> Vec<Option<Arc<dyn Any + Send + Sync>>> {
        (0..clients).map(|_| None).collect()
    }
    /// A step with a fixed amount of work (insert N rows, build the
    /// indexes) says how many events; `None`: the plan's duration.
    fn events(&self, _scale: &Scale, _clients: u32) -> Option<u64> {
        None
    }
}

/// The per-connection state of a workload.
pub trait Client: Send {
    /// Runs one event, recording each statement in `rec`. On failure the
    /// transaction is already rolled back and the error already recorded.
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind>;
    /// For a connection that is not measured: whether it has caught up with
    /// the measured ones, so it may stop when they have (a deleter finishes
    /// the rows its inserter added).
    fn caught_up(&self) -> bool {
        true
    }
    /// The step is over for this connection: what the workload does at the
    /// end, outside the measured window (a sysbench script's
    /// `thread_done`, which may flush a bulk insert).
    fn done(&mut self, _conn: &mut dyn Conn) {}
}

/// How a step's statements reach the server (a step says so where it
/// departs from its benchmark's own way: `plan::Step::statements_departure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Statements {
    /// Prepared once per connection, executed with the binary protocol.
    Prepared,
    /// Sent as text with their values in them.
    Text,
}

impl Statements {
    pub fn name(self) -> &'static str {
        match self {
            Statements::Prepared => "prepared",
            Statements::Text => "text",
        }
    }
}

/// A loading step's tables, made once for all its connections: the first
/// client (`index` 0) runs `make` and says so in `made`; the others wait
/// for it, up to two minutes (`family` names the tables in the error).
pub(crate) fn tables_made_once(
    index: u32,
    made: &std::sync::atomic::AtomicBool,
    family: &str,
    make: impl FnOnce() -> DbResult<()>,
) -> DbResult<()> {
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};
    if index == 0 {
        make()?;
        made.store(true, Ordering::Release);
        return Ok(());
    }
    let t0 = Instant::now();
    while !made.load(Ordering::Acquire) {
        if t0.elapsed() > Duration::from_secs(120) {
            return Err(crate::db::DbError::new(
                ErrorKind::Other,
                format!("{family} tables were not made within 120 s: the first loader, which makes them, failed or hangs (its error, if any, is in this step's result)"),
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(())
}

/// Records a failed statement of class `class` and returns its kind, for a
/// client's `event` to return.
pub(crate) fn record_error(rec: &mut Recorder, class: usize, e: crate::db::DbError) -> ErrorKind {
    let kind = e.kind;
    rec.error(class, kind, || e.message.clone());
    kind
}

/// Creates and fills the tables of the standard sequence (the `load`
/// step): one thread per table up to the cores, rows in id order.
pub use sysbench::load::{load as load_tables, LoadMethod, LoadOutcome};
