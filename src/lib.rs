//! relbench finds performance regressions between database builds and
//! configurations: it runs a fixed sequence of microbenchmarks against each
//! target, measures beside every step, and reports throughput relative to a
//! base target together with the cost per operation behind it.
//!
//! Data flows one way: `plan` → `runner` (using `db`, `workload`,
//! `engine`, `metrics`) → `results` on disk → `compare` (the model) →
//! `render`. `docs/architecture.md` maps the layers.

pub mod cli;
pub mod compare;
pub mod db;
pub mod engine;
pub mod history;
pub mod measure;
pub mod metrics;
pub mod plan;
pub mod render;
pub mod results;
pub mod runner;
pub mod study;
pub mod util;
pub mod workload;

/// The user pressed Ctrl-C; whoever sees it unwinds without writing the
/// step in flight.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("interrupted by Ctrl-C")]
pub struct Interrupted;
