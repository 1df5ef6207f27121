//! What an adaptive run decided (`adaptive.json` beside `run.json`):
//! each round's open cells, why each was open, what the round took and
//! the budget left, and why the run stopped adding repeats.
//!
//! The decisions are recorded before a round runs, so a `--resume` after
//! an interruption finishes the round it was in with the cells that
//! round chose, rather than choosing again from a round half measured.

use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::plan::StepId;

pub const ADAPTIVE_FILE: &str = "adaptive.json";

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AdaptiveRecord {
    /// The minimum repeats' wall time, from the step files: the first
    /// step's start to the last one's end.
    pub first_secs: f64,
    pub rounds: Vec<Round>,
    /// Why no more rounds were begun, once none will be.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<Ending>,
}

/// One round: a repeat more of each open cell's target and base.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Round {
    /// The repeat number its results take.
    pub repeat: u32,
    /// The look at the cells that chose it (1: after the minimum).
    pub look: u32,
    /// The cells it repeats, most open first.
    pub open: Vec<OpenCell>,
    /// What it was expected to take, in seconds.
    pub estimate_secs: f64,
    /// What it took (interrupted parts added up); `None` until it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secs: Option<f64>,
    /// Time measured before an interruption, while it is unfinished.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub partial_secs: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl OpenCell {
    /// The same cell (its target, base and step), whatever its figures.
    pub fn same_cell(&self, other: &OpenCell) -> bool {
        self.target == other.target && self.base == other.base && self.at == other.at
    }
}

/// A cell a round repeats: its target and base, by the plan's names.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OpenCell {
    pub target: String,
    pub base: String,
    #[serde(flatten)]
    pub at: StepId,
    pub openness: f64,
    pub why: String,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum EndWhy {
    /// Every cell decided (or not judgeable by repeats).
    Decided,
    /// Every open cell is at the maximum repeats.
    MaxRepeats,
    /// The next round would go past the budget.
    Budget,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Ending {
    pub why: EndWhy,
    /// In words, with the cells left open.
    pub words: String,
    /// The cells still open when the rounds stopped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub still_open: Vec<OpenCell>,
}

/// The most repeats an adaptive run's record may name: a plan's
/// `[adaptive] max` is far below it, and a round's `repeat + 1` never
/// overflows.
pub const MOST_REPEAT: u32 = 100_000;

impl AdaptiveRecord {
    /// Refuses a record no run could have written: a round past
    /// [`MOST_REPEAT`] or at look 0, times that are not finite and
    /// non-negative.
    pub fn plausible(&self) -> anyhow::Result<()> {
        let time = |s: f64| s.is_finite() && s >= 0.0;
        if !time(self.first_secs) {
            anyhow::bail!("its first repeats' time is {}", self.first_secs);
        }
        for r in &self.rounds {
            if r.repeat == 0 || r.repeat > MOST_REPEAT || r.look == 0 || r.look > MOST_REPEAT {
                anyhow::bail!(
                    "a round at repeat {} (look {}): no run has one",
                    r.repeat,
                    r.look
                );
            }
            if !time(r.estimate_secs) || !time(r.partial_secs) || r.secs.is_some_and(|s| !time(s)) {
                anyhow::bail!("round {}'s times are not times", r.look);
            }
        }
        Ok(())
    }

    /// The wall time measuring took so far: the minimum repeats and every
    /// round, interrupted parts included.
    pub fn spent_secs(&self) -> f64 {
        self.first_secs
            + self
                .rounds
                .iter()
                .map(|r| r.secs.unwrap_or(r.partial_secs))
                .sum::<f64>()
    }

    /// The round begun and not finished (interrupted), if any.
    pub fn unfinished(&self) -> Option<&Round> {
        self.rounds.last().filter(|r| r.secs.is_none())
    }
}

/// The run's record; `None` before the first decision.
pub fn read(dir: &Path) -> anyhow::Result<Option<AdaptiveRecord>> {
    let path = dir.join(ADAPTIVE_FILE);
    if std::fs::symlink_metadata(&path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Ok(None);
    }
    let bytes = crate::util::read_record(&path, crate::util::MAX_RECORD_BYTES)?;
    let rec: AdaptiveRecord = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "reading {}: damaged; delete it to decide again",
            path.display()
        )
    })?;
    let mut rec = rec;
    rec.plausible().with_context(|| {
        format!(
            "reading {}: damaged; delete it to decide again",
            path.display()
        )
    })?;
    // Words read back reach a terminal: no escape sequence of theirs.
    let clean = |t: &mut String| *t = crate::util::printable(t, 4096);
    for r in &mut rec.rounds {
        r.open.iter_mut().for_each(|c| clean(&mut c.why));
    }
    if let Some(e) = rec.ended.as_mut() {
        clean(&mut e.words);
        e.still_open.iter_mut().for_each(|c| clean(&mut c.why));
    }
    Ok(Some(rec))
}

/// Writes the record whole (a temporary file renamed over it, as
/// `run.json` is written), so an interruption leaves the old or the new.
pub fn write(dir: &Path, rec: &AdaptiveRecord) -> anyhow::Result<()> {
    super::write_atomic(&dir.join(ADAPTIVE_FILE), rec)
}
