//! What a plan observes beside its windows: the engine's own accounting
//! it reads and turns on (`[internals]`), and how it profiles its steps
//! (`[profile]`). `parse/observe.rs` reads both sections.

use serde::{Deserialize, Serialize};

use super::StepId;

/// The engine's own accounting a plan reads, and what it turns on for it
/// (`[internals]`): never a silent change to the server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Internals {
    /// MySQL and MariaDB servers relbench starts get
    /// `--performance-schema=ON` (true) or `OFF` (false); `None` leaves
    /// each server as its build and configuration have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub performance_schema: Option<bool>,
    /// performance_schema instruments turned on as well
    /// (`--performance-schema-instrument='NAME=ON'`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instruments: Vec<String>,
    /// PostgreSQL servers relbench starts preload pg_stat_statements (and
    /// relbench creates the extension in the benchmark's database).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pg_stat_statements: bool,
    /// How often PostgreSQL's waits are sampled in a measured window, in
    /// ms; `None`: not sampled.
    #[serde(default)]
    pub wait_sampling_ms: Option<u64>,
}

impl Default for Internals {
    fn default() -> Self {
        Internals {
            performance_schema: None,
            instruments: Vec::new(),
            pg_stat_statements: false,
            wait_sampling_ms: Some(DEFAULT_WAIT_SAMPLING_MS),
        }
    }
}

/// Every 100 ms: every 10 ms cost PostgreSQL 2–4% of its throughput on 2
/// busy cores (bench/internals_overhead.py); every 100 ms its point
/// queries ran at 1.001× (within that machine's noise).
pub const DEFAULT_WAIT_SAMPLING_MS: u64 = 100;

impl Internals {
    pub fn wait_sampling(&self) -> Option<std::time::Duration> {
        self.wait_sampling_ms.map(std::time::Duration::from_millis)
    }

    /// The server options a managed MySQL or MariaDB target gets, before
    /// its own (a target's own `args` come later and win).
    pub fn mysql_args(&self) -> Vec<String> {
        let mut a: Vec<String> = self
            .performance_schema
            .map(|on| format!("--performance-schema={}", if on { "ON" } else { "OFF" }))
            .into_iter()
            .collect();
        a.extend(
            self.instruments
                .iter()
                .map(|i| format!("--performance-schema-instrument={i}=ON")),
        );
        a
    }
    /// The server options a managed PostgreSQL target gets, before its own.
    pub fn postgres_args(&self) -> Vec<String> {
        match self.pg_stat_statements {
            true => vec![
                "-c".into(),
                "shared_preload_libraries=pg_stat_statements".into(),
            ],
            false => Vec::new(),
        }
    }
}

/// How a plan profiles its steps (`[profile]`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Profiling {
    /// `None`: not profiled (no `[profile]`, or `mode = "off"`).
    pub mode: Option<crate::metrics::profile::Mode>,
    pub settings: crate::metrics::profile::Settings,
    /// The steps profiled, by label (`point-query`); empty: every
    /// workload step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<String>,
}

impl Profiling {
    pub fn is_off(&self) -> bool {
        self.mode.is_none()
    }

    /// How an execution of `step` is profiled, if it is.
    pub fn of(
        &self,
        step: &StepId,
    ) -> Option<(
        crate::metrics::profile::Mode,
        crate::metrics::profile::Settings,
    )> {
        let mode = self.mode?;
        (self.steps.is_empty() || self.steps.iter().any(|s| step.is_named(s)))
            .then_some((mode, self.settings))
    }
}
