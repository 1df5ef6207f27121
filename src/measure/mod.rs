//! The ground floor: measurement types every other layer speaks of, and
//! that import nothing of theirs.
//!
//! - [`recorder`]: a client thread's latency histograms, per-second counts
//!   and errors, merged once when a step ends into latency summaries,
//!   per-second rows and the Insert Benchmark's response-time ranges;
//! - [`hdr`]: a latency histogram as text a step file keeps, losslessly;
//! - [`outcome`]: how a failed statement ended;
//! - [`stats`]: medians, intervals and the rank-sum test over repeats;
//! - [`sequential`]: the test an adaptive run judges its cells by, at a
//!   level corrected for the looks it takes;
//! - [`steady`]: where a window's steady part begins (MSER-5), and a
//!   window that never settled;
//! - [`within`]: the test of one window's per-second throughput against
//!   another's, for targets that ran a step once;
//! - [`units`]: how figures are printed;
//! - [`size`]: a database's apparent and allocated size, logs apart;
//! - [`Unmeasured`]: why a figure could not be measured, shown as it is.

pub mod drift;
pub mod hdr;
pub mod outcome;
pub mod paired;
pub mod plans;
pub mod recorder;
pub mod sequential;
pub mod size;
pub mod statements;
pub mod stats;
pub mod steady;
pub mod units;
pub mod waits;
pub mod within;

pub use outcome::ErrorKind;
pub use recorder::{merge, ClassSecond, LatencySummary, Merged, Recorder, Tally, IB_BOUNDS_US};

/// What a server's counters count of a step's work: statements, or whole
/// events (a workload's explicit transactions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Counted {
    #[default]
    Statements,
    Events,
}

impl Counted {
    pub fn name(self) -> &'static str {
        match self {
            Counted::Statements => "statements",
            Counted::Events => "events",
        }
    }

    /// Relbench's own count of it: statements (done or failed, by class),
    /// or events (done or failed).
    pub fn of_work(
        self,
        statements: &std::collections::BTreeMap<String, u64>,
        errors: &std::collections::BTreeMap<String, u64>,
        events: u64,
        failed_events: u64,
    ) -> u64 {
        match self {
            Counted::Statements => statements.values().sum::<u64>() + errors.values().sum::<u64>(),
            Counted::Events => events + failed_events,
        }
    }
}

/// Why a figure could not be measured (the devices under a datadir, a
/// server's waits or statement digests, a profile): the reason the step's
/// notes and the reports show as it is. Only ever displayed — no code reads
/// its words to decide anything — which is why it is a type of its own and
/// not a `String` an error could be told apart by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmeasured(String);

impl Unmeasured {
    pub fn new(why: impl Into<String>) -> Self {
        Self(why.into())
    }
}

impl std::fmt::Display for Unmeasured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unmeasured {}
