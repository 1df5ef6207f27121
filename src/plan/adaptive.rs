//! `repeats = "auto"`: a run that measures every step `min` times, then
//! adds interleaved repeats only where a cell's verdict is still open,
//! up to `max` repeats and within a time budget (`[adaptive]`,
//! `run --budget`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Adaptive {
    /// Repeats every step gets (the schedule's own).
    pub min: u32,
    /// Repeats no cell goes past.
    pub max: u32,
    /// The study's wall time, in seconds, past which no round is begun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_secs: Option<f64>,
}

impl Adaptive {
    pub const DEFAULT_MIN: u32 = 2;
    pub const DEFAULT_MAX: u32 = 6;

    /// How many times the verdict rule may look at a cell: once after the
    /// minimum, once after each repeat it adds.
    pub fn looks(&self) -> u32 {
        self.max - self.min + 1
    }
}
