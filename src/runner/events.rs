//! The run as events, and the sinks that consume them. The sequencer
//! says what happens — a line for whoever watches, a target opened, a
//! step started, its window opened and closed, how far it has come, its
//! outcome and result, the run's end — and knows nothing of what is kept
//! or shown of it: the step files ([`StepFiles`]), the profiles
//! ([`ProfileFiles`]), the run's record (`record::RunRecord`, the one
//! writer of `run.json`), the terminal (`progress::Progress`), the JSON
//! lines of a CI log (`json_lines::JsonLines`), and whatever the caller
//! adds (`run --history` imports the finished run). A new consumer of a
//! run's data is a sink, not a line in the loop.

use std::path::PathBuf;
use std::time::Duration;

use crate::engine::Live;
use crate::metrics::profile::Profile;
use crate::plan::schedule::ExecId;
use crate::results::{self, RunStatus, StepResult, TargetRecord};

/// Something that happened in a run, in the order it happened.
pub enum Event<'a> {
    /// A line for whoever watches the run: its start, a note, a warning.
    Said(Tone, &'a str),
    /// A target's server was opened for a repeat and its facts read.
    TargetOpened(&'a TargetRecord),
    /// An execution began (kept or replayed); `total` is its warm-up and
    /// window when it stops by time.
    StepStarted {
        id: &'a ExecId,
        label: &'a str,
        total: Option<Duration>,
    },
    /// Its measured window's first reading was just taken; the server's
    /// process, when relbench knows it.
    WindowOpened {
        id: &'a ExecId,
        server_pid: Option<u32>,
    },
    /// How far the step has come (every tick of the engine's, 200 ms).
    Live(&'a ExecId, &'a Live),
    /// Its window's last reading was just taken.
    WindowClosed(&'a ExecId),
    /// An execution ended (kept or replayed): its one line, as the
    /// terminal prints it.
    StepEnded {
        id: &'a ExecId,
        line: &'a str,
        failed: bool,
    },
    /// A kept execution's result, the moment it ended (failed ones too).
    Finished(&'a StepResult),
    /// An execution's window was profiled (a measured one, or the
    /// profiled repeat's, whose results are not kept): its profile.
    Profiled(&'a ExecId, &'a Profile),
    /// The session ended — complete, interrupted, or stopped by an error
    /// (`Failed`) — once, after its last pass.
    Ended(RunStatus),
}

/// How a line is meant: news; what the run decided (an adaptive round
/// and why), which even a quiet run says; or a failure or a skipped step,
/// which it says too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Info,
    Note,
    Warn,
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
    /// The first error a sink gave on an event told in passing
    /// ([`Sinks::tell`]), returned by the next [`Sinks::emit`].
    broken: Option<anyhow::Error>,
}

impl<'s> Sinks<'s> {
    pub fn new(sinks: Vec<&'s mut dyn Sink>) -> Self {
        Sinks {
            sinks,
            broken: None,
        }
    }

    /// Hands the event to every sink; the first error stops the others
    /// hearing it (a result not on disk must not be recorded), as does
    /// an error left by an event told in passing.
    pub fn emit(&mut self, event: &Event) -> anyhow::Result<()> {
        if let Some(e) = self.broken.take() {
            return Err(e);
        }
        for s in self.sinks.iter_mut() {
            s.on(event)?;
        }
        Ok(())
    }

    /// Hands on an event where no error can stop the work in hand (a
    /// line, a tick of progress, a window's edge): a sink's error is kept
    /// and stops the run at the next [`Sinks::emit`].
    pub fn tell(&mut self, event: &Event) {
        if self.broken.is_some() {
            return;
        }
        for s in self.sinks.iter_mut() {
            if let Err(e) = s.on(event) {
                self.broken = Some(e);
                return;
            }
        }
    }

    /// The error a sink gave on an event told in passing, if any.
    pub fn emit_pending(&mut self) -> anyhow::Result<()> {
        self.broken.take().map_or(Ok(()), Err)
    }

    /// A line for whoever watches.
    pub fn line(&mut self, msg: &str) {
        self.tell(&Event::Said(Tone::Info, msg));
    }

    /// A failure or a skipped step, said even by a quiet run.
    pub fn warn(&mut self, msg: &str) {
        self.tell(&Event::Said(Tone::Warn, msg));
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
