//! The run as events, and the sinks that consume them. The sequencer
//! says what happened — a target opened, an execution's result, the run's
//! end — and knows nothing of what is kept of it: the step files
//! ([`StepFiles`]), the profiles ([`ProfileFiles`]), the run's record (`record::RunRecord`, the one writer
//! of `run.json`), and whatever the caller adds (`run --history` imports
//! the finished run). A new consumer of a run's data is a sink, not a
//! line in the loop.

use std::path::PathBuf;

use crate::metrics::profile::Profile;
use crate::plan::schedule::ExecId;
use crate::results::{self, RunStatus, StepResult, TargetRecord};

/// Something that happened in a run, in the order it happened.
pub enum Event<'a> {
    /// A target's server was opened for a repeat and its facts read.
    TargetOpened(&'a TargetRecord),
    /// A kept execution's result, the moment it ended (failed ones too).
    Finished(&'a StepResult),
    /// An execution's window was profiled (a measured one, or the
    /// profiled repeat's, whose results are not kept): its profile.
    Profiled(&'a ExecId, &'a Profile),
    /// The loop ended: complete, interrupted, or stopped by an error
    /// (`Failed`).
    Ended(RunStatus),
}

/// A consumer of a run's events. An error from a sink stops the run
/// (what was measured before it is kept).
pub trait Sink {
    fn on(&mut self, event: &Event) -> anyhow::Result<()>;
}

/// The sinks of one run, in the order they hear each event: the step
/// files first, so the record never names a result that is not on disk.
pub struct Sinks<'s> {
    sinks: Vec<&'s mut dyn Sink>,
}

impl<'s> Sinks<'s> {
    pub fn new(sinks: Vec<&'s mut dyn Sink>) -> Self {
        Sinks { sinks }
    }

    /// Hands the event to every sink; the first error stops the others
    /// hearing it (a result not on disk must not be recorded).
    pub fn emit(&mut self, event: &Event) -> anyhow::Result<()> {
        for s in self.sinks.iter_mut() {
            s.on(event)?;
        }
        Ok(())
    }
}

/// Writes each kept result into its file under `steps/` the moment it
/// ends.
pub struct StepFiles {
    pub out: PathBuf,
    /// The run's host the steps are measured on, when not its first.
    pub host: Option<u32>,
}

impl Sink for StepFiles {
    fn on(&mut self, event: &Event) -> anyhow::Result<()> {
        if let Event::Finished(r) = event {
            match self.host {
                None => results::write_step(&self.out, r)?,
                Some(k) => {
                    let mut r = results::StepResult::clone(r);
                    r.host = Some(k);
                    results::write_step(&self.out, &r)?
                }
            }
        }
        Ok(())
    }
}

/// Writes each profile under `profiles/` (`results::profiles`).
pub struct ProfileFiles {
    pub out: PathBuf,
}

impl Sink for ProfileFiles {
    fn on(&mut self, event: &Event) -> anyhow::Result<()> {
        if let Event::Profiled(id, p) = event {
            results::profiles::write(&self.out, id, p)?;
        }
        Ok(())
    }
}
