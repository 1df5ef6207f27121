//! Workloads: what each client does per event.
//!
//! A [`Workload`] prepares its statements on a connection and returns a
//! [`Client`] whose `event` runs one statement or one transaction. The engine
//! owns the threads and the clock; a workload owns only the SQL and the row
//! checks. One folder per family: `sysbench` (the microbenchmarks),
//! `insert` (the Insert Benchmark), `linkbench` (LinkBench) and `script`
//! (the plan's own SQL).

pub mod dist;
pub mod insert;
pub mod linkbench;
pub mod maint;
pub mod script;
pub mod sysbench;

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
    pub const ALL: [Group; 12] = [
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
    /// The Insert Benchmark's row counts and batch sizes.
    pub insert: insert::Params,
    /// LinkBench's parameters.
    pub linkbench: linkbench::Params,
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
            insert: insert::Params::default(),
            linkbench: linkbench::Params::default(),
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
    /// Counts in the step's throughput, and ends a step that stops by
    /// event count; the others stop with it.
    pub measured: bool,
}

impl Role {
    /// The one closed-loop, measured connection of a plain workload.
    pub const CLIENT: Role = Role {
        name: "client",
        rate: None,
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
pub struct ShownStatement {
    pub class: &'static str,
    pub sql: String,
}

/// What a workload step is, as plain data: the runner, the plan and the
/// report read it instead of asking the workload one question at a time
/// (or testing it by name).
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    pub name: &'static str,
    pub group: Group,
    /// Which of the plan's durations the step runs for.
    pub duration: DurationClass,
    /// One line on what an event does.
    pub about: &'static str,
    /// Whether an event is one transaction.
    pub transactional: bool,
    /// The statement classes a client reports latencies and errors under;
    /// the index into this list is the class id given to the [`Recorder`].
    pub classes: Vec<&'static str>,
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

impl Meta {
    /// Whether the step leaves the data other than it found it (a load,
    /// writes, the Insert Benchmark's steps with their background
    /// inserts): a later step's data depends on it having run.
    pub fn changes_data(&self) -> bool {
        matches!(self.group, Group::Load | Group::Write | Group::Insert)
            || (matches!(self.group, Group::Custom | Group::LinkBench)
                && self.duration != DurationClass::Read)
    }
}

pub trait Workload: Sync {
    fn meta(&self) -> Meta;
    /// The SQL of one event on table `sbtest1`, for `relbench show`.
    fn statements(&self, dialect: Dialect) -> Vec<ShownStatement>;
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
    /// Prepares the statements on `conn` and returns the client state.
    fn client(
        &self,
        conn: &mut dyn Conn,
        dialect: Dialect,
        scale: &Scale,
        rng: dist::Rng,
        ctx: &ClientCtx,
    ) -> DbResult<Box<dyn Client>>;
    /// Judges the step's measured window against what it asked of the
    /// server, for a workload that asks something (the Insert Benchmark's
    /// q-steps: background writes at a fixed rate).
    fn sla(&self, _scale: &Scale, _window: &Window) -> Option<insert::Sla> {
        None
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
pub use sysbench::load::{load as load_tables, LoadOutcome};

/// Every built-in workload, in catalogue order.
pub fn all() -> impl Iterator<Item = &'static dyn Workload> {
    sysbench::CATALOGUE
        .iter()
        .map(|m| m as &dyn Workload)
        .chain(insert::STEPS.iter().map(|s| s as &dyn Workload))
        .chain(linkbench::STEPS.iter().map(|s| s as &dyn Workload))
}

/// A workload by name: a catalogue entry, an Insert Benchmark step, or a
/// sysbench entry with parameters (`read-only-order[order=4]`).
pub fn find(name: &str) -> Option<&'static dyn Workload> {
    if name.contains('[') {
        return sysbench::knobs::parameterised(name)
            .ok()
            .map(|m| m as &dyn Workload);
    }
    all()
        .find(|w| w.meta().name == name)
        .or_else(|| insert::find(name))
        .or_else(|| script::find(name).map(|s| s as &dyn Workload))
}
