//! Workloads: what each client does per event.
//!
//! A [`Workload`] prepares its statements on a connection and returns a
//! [`Client`] whose `event` runs one statement or one transaction. The engine
//! owns the threads and the clock; a workload owns only the SQL and the row
//! checks. One folder per family: `sysbench` (the microbenchmarks).

pub mod dist;
pub mod sysbench;

use serde::{Deserialize, Serialize};

use crate::engine::Recorder;
use crate::target::{Conn, DbResult, Dialect, ErrorKind};

/// Report groups, in report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    Load,
    Point,
    Range,
    RangeAgg,
    Write,
}

impl Group {
    pub const ALL: [Group; 5] = [
        Group::Load,
        Group::Point,
        Group::Range,
        Group::RangeAgg,
        Group::Write,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Group::Load => "load",
            Group::Point => "point",
            Group::Range => "range",
            Group::RangeAgg => "range-agg",
            Group::Write => "write",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Group::Load => "Load",
            Group::Point => "Point queries",
            Group::Range => "Range queries without aggregation",
            Group::RangeAgg => "Range queries with aggregation",
            Group::Write => "Writes",
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
}

/// One statement as `relbench show` prints it.
pub struct ShownStatement {
    pub class: &'static str,
    pub sql: String,
}

pub trait Workload: Sync {
    fn name(&self) -> &'static str;
    fn group(&self) -> Group;
    fn duration_class(&self) -> DurationClass;
    /// One line on what an event does.
    fn about(&self) -> &'static str;
    /// Whether an event is one transaction.
    fn transactional(&self) -> bool;
    /// The statement classes a client reports latencies and errors under;
    /// the index into this list is the class id given to the [`Recorder`].
    fn classes(&self) -> Vec<&'static str>;
    /// The SQL of one event on table `sbtest1`, for `relbench show`.
    fn statements(&self, dialect: Dialect) -> Vec<ShownStatement>;
    /// Rows each event processes when throughput is counted in rows (a full
    /// scan), `None` when it is counted in events.
    fn rows_per_event(&self, scale: &Scale) -> Option<u64>;
    /// Prepares the statements on `conn` and returns the client state.
    fn client(
        &self,
        conn: &mut dyn Conn,
        dialect: Dialect,
        scale: &Scale,
        rng: dist::Rng,
    ) -> DbResult<Box<dyn Client>>;
}

/// The per-connection state of a workload.
pub trait Client: Send {
    /// Runs one event, recording each statement in `rec`. On failure the
    /// transaction is already rolled back and the error already recorded.
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind>;
}

/// Every built-in workload, in catalogue order.
pub fn all() -> impl Iterator<Item = &'static dyn Workload> {
    sysbench::CATALOGUE.iter().map(|m| m as &dyn Workload)
}

pub fn find(name: &str) -> Option<&'static dyn Workload> {
    all().find(|w| w.name() == name)
}
