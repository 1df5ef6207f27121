//! The ground floor: measurement types every other layer speaks of, and
//! that import nothing of theirs.
//!
//! - [`recorder`]: a client thread's latency histograms, per-second counts
//!   and errors, merged once when a step ends into latency summaries,
//!   per-second rows and the Insert Benchmark's response-time ranges;
//! - [`hdr`]: a latency histogram as text a step file keeps, losslessly;
//! - [`outcome`]: how a failed statement ended;
//! - [`stats`]: medians, intervals and the rank-sum test over repeats;
//! - [`within`]: the test of one window's per-second throughput against
//!   another's, for targets that ran a step once;
//! - [`units`]: how figures are printed;
//! - [`size`]: a database's apparent and allocated size, logs apart.

pub mod hdr;
pub mod outcome;
pub mod recorder;
pub mod size;
pub mod stats;
pub mod units;
pub mod within;

pub use outcome::ErrorKind;
pub use recorder::{merge, ClassSecond, LatencySummary, Merged, Recorder, Tally, IB_BOUNDS_US};
