//! The run's record (`run.json`) as a sink: it owns the record for the
//! run's length and is the only thing in the runner that writes it — at
//! the start, when a target's facts are read, when a load says how it put
//! its rows in, and when the run ends.

use std::path::PathBuf;

use super::events::{Event, Sink};
use crate::results::{self, RunInfo, RunStatus, StepResult, TargetRecord, LOAD_METHOD};
use crate::util::{unix_now, utc_iso};

pub struct RunRecord {
    out: PathBuf,
    pub info: RunInfo,
    /// The status an error leaves: a run that stopped is `Failed`; a
    /// confirmation that stopped leaves its complete run complete.
    pub on_error: RunStatus,
    /// The targets' facts are recorded as each opens (a run's; a
    /// confirmation keeps the run's own).
    pub takes_targets: bool,
}

impl RunRecord {
    /// Takes the record of a run that starts or goes on now (`running`,
    /// not finished), and writes it.
    pub fn begin(
        out: PathBuf,
        mut info: RunInfo,
        on_error: RunStatus,
    ) -> anyhow::Result<RunRecord> {
        info.status = RunStatus::Running;
        info.finished = None;
        let r = RunRecord {
            out,
            info,
            on_error,
            takes_targets: true,
        };
        r.save()?;
        Ok(r)
    }

    fn save(&self) -> anyhow::Result<()> {
        results::write_run_info(&self.out, &self.info)
    }

    fn target(&mut self, record: &TargetRecord) {
        let mut record = record.clone();
        match self.info.targets.iter_mut().find(|t| t.name == record.name) {
            Some(t) => {
                // What its load did is known from the load, not the server.
                if let Some(m) = t.facts.config.get(LOAD_METHOD) {
                    record.set_fact(LOAD_METHOD, m.clone());
                }
                *t = record;
            }
            None => {
                // In the plan's order, whatever order the rounds opened
                // them in (a round's order is drawn: `plan::RoundOrder`).
                let place = |name: &str| {
                    let plan = &self.info.plan.targets;
                    plan.iter()
                        .position(|t| t.name == name)
                        .unwrap_or(plan.len())
                };
                let at = self
                    .info
                    .targets
                    .iter()
                    .position(|t| place(&t.name) > place(&record.name))
                    .unwrap_or(self.info.targets.len());
                self.info.targets.insert(at, record);
            }
        }
    }

    /// How a target's load put its rows in (a bulk file load, multi-row
    /// INSERTs, COPY) is a fact of the target: two servers that loaded
    /// differently did not do the same work, so it is recorded with its
    /// settings, where "settings that differ from the base" shows it.
    /// Whether the record changed.
    fn load_method(&mut self, r: &StepResult) -> bool {
        if r.load_methods.is_empty() || r.failed.is_some() {
            return false;
        }
        let method = crate::workload::LoadMethod::names(&r.load_methods);
        let Some(t) = self.info.targets.iter_mut().find(|t| t.name == r.id.target) else {
            return false;
        };
        if t.facts.config.get(LOAD_METHOD) == Some(&method) {
            return false;
        }
        t.set_fact(LOAD_METHOD, method);
        true
    }
}

impl Sink for RunRecord {
    fn on(&mut self, event: &Event) -> anyhow::Result<()> {
        match event {
            Event::TargetOpened(t) if self.takes_targets => self.target(t),
            Event::Finished(r) => {
                if !self.load_method(r) {
                    return Ok(());
                }
            }
            Event::Ended(status) => {
                self.info.status = match status {
                    RunStatus::Failed => self.on_error,
                    s => *s,
                };
                self.info.finished = match self.info.status {
                    RunStatus::Running => None,
                    _ => Some(utc_iso(unix_now())),
                };
            }
            _ => return Ok(()),
        }
        self.save()
    }
}
