//! What watches a measured window beside the clients: each observer is
//! opened at the window's first edge and closed at its last (the engine's
//! [`Edge`]s, told as the sampler takes its first and last readings), and
//! once the step's figures, costs and interference judgement are in its
//! result, it writes its own part of it. `step::observers` lists them;
//! nothing wires one by hand. Adding one is a type here (or in a file of
//! its own, as the profiler is) and a line in `step::observers`.
//!
//! Opened in the list's order and closed in the reverse, as a stack: the
//! engine's counters are read first as the window opens and last as it
//! closes, so what the other observers do at the edges (starting perf, a
//! sampler's connection) falls inside the counters' window, never outside
//! it with its statements uncounted.

use std::collections::BTreeMap;

use crate::db::{Counters, Target, WaitSampling};
use crate::engine::Edge;
use crate::measure::plans::StatementPlan;
use crate::measure::waits::Waits;
use crate::measure::Unmeasured;
use crate::metrics::costs::ServerTally;
use crate::plan::schedule::WorkloadRun;
use crate::results::StepResult;

/// One observer of a measured window.
pub(super) trait Observer {
    /// The window's first reading was just taken.
    fn opened(&mut self) {}
    /// Its last one was.
    fn closed(&mut self) {}
    /// CPU seconds that processes it started (not relbench's own threads)
    /// used over the window: taken out of "other programs'" when the
    /// window's interference is judged (perf's, for the profiler).
    fn cpu_secs(&self) -> Option<f64> {
        None
    }
    /// Writes its part of the step's result, once the window's figures,
    /// costs and interference judgement are there. `work`: the window's
    /// units of work, what its figures are per.
    fn contribute(self: Box<Self>, r: &mut StepResult, work: f64);
}

/// Tells every observer an edge: opening in the list's order, closing in
/// the reverse.
pub(super) fn edge(list: &mut [Box<dyn Observer + '_>], edge: Edge) {
    match edge {
        Edge::Opened => list.iter_mut().for_each(|o| o.opened()),
        Edge::Closed => list.iter_mut().rev().for_each(|o| o.closed()),
    }
}

/// What was measured, or a note saying why `what` was not.
fn kept<T>(
    notes: &mut BTreeMap<String, String>,
    what: &str,
    got: Option<Result<T, Unmeasured>>,
) -> Option<T> {
    match got? {
        Ok(x) => Some(x),
        Err(why) => {
            notes.insert(what.into(), format!("not measured: {why}"));
            None
        }
    }
}

/// The server's own accounts at the window's edges: the waits it sums
/// (MySQL's and MariaDB's performance_schema), what each statement did,
/// and its count of relbench's work against relbench's.
pub(super) struct EngineCounters<'a> {
    db: &'a dyn Target,
    transactional: bool,
    /// A client share's count is its clients' alone: the merge checks the
    /// shares' sum, so a share does not note a disagreement.
    share: bool,
    first: Option<Option<Counters>>,
    window: Option<(Counters, Counters)>,
}

impl<'a> EngineCounters<'a> {
    /// `share`: the step runs one client share of several.
    pub fn new(db: &'a dyn Target, transactional: bool, share: bool) -> Self {
        EngineCounters {
            db,
            transactional,
            share,
            first: None,
            window: None,
        }
    }

    fn read(&self) -> Option<Counters> {
        self.db.counters(true).and_then(Result::ok)
    }

    /// What grew between the window's two readings of one account, or
    /// why it could not be read; `None` for an account the engine keeps
    /// none of.
    fn growth<T>(
        &self,
        pick: impl Fn(&Counters) -> &Option<Result<T, Unmeasured>>,
        since: impl Fn(&T, &T) -> T,
    ) -> Option<Result<T, Unmeasured>> {
        let (before, after) = self.window.as_ref()?;
        match (pick(before), pick(after)) {
            (Some(Ok(b)), Some(Ok(a))) => Some(Ok(since(a, b))),
            (Some(Err(why)), _) | (_, Some(Err(why))) => Some(Err(why.clone())),
            _ => None,
        }
    }
}

impl Observer for EngineCounters<'_> {
    fn opened(&mut self) {
        self.first = Some(self.read());
    }

    fn closed(&mut self) {
        if let Some(Some(first)) = self.first.take() {
            self.window = self.read().map(|last| (first, last));
        }
    }

    fn contribute(self: Box<Self>, r: &mut StepResult, work: f64) {
        let waits = self.growth(|c| &c.waits, |a, b| a.since(b));
        if let Some(w) = kept(&mut r.notes, "waits", waits) {
            r.metrics.waits = w.per_op(work);
        }
        let statements = self.growth(|c| &c.statements, |a, b| a.since(b)).map(|s| {
            s.and_then(|s| match s.by.is_empty() {
                true => Err(Unmeasured::new(format!(
                    "{} counted none of the step's statements ({})",
                    s.source, s.if_none
                ))),
                false => Ok(s),
            })
        });
        r.metrics.statements =
            kept(&mut r.notes, "statements", statements).and_then(|s| s.per_call(work));
        let Some((before, after)) = &self.window else {
            return;
        };
        let Some(c) = self.db.server_count(before, after, self.transactional) else {
            return;
        };
        let ours =
            c.of.of_work(&r.statements, &r.errors, r.events, r.failed_events);
        let tally = ServerTally {
            counters: c.counters.into(),
            of: c.of,
            server: c.count,
            relbench: ours as f64,
            tolerance: ServerTally::tolerance_for(r.secs, c.lag_secs),
        };
        if let (Some(why), false) = (tally.disagreement(), self.share) {
            r.notes.insert("server count".into(), why);
        }
        r.metrics.server_count = Some(tally);
    }
}

/// The server's waits sampled over the window, for an engine that keeps
/// no totals of them (PostgreSQL's `wait_event`).
pub(super) struct SampledWaits {
    sampling: Option<anyhow::Result<WaitSampling>>,
    got: Option<Result<Waits, Unmeasured>>,
}

impl SampledWaits {
    /// Its connection is opened by the caller before the warm-up: not at
    /// the window's edge.
    pub fn new(sampling: anyhow::Result<WaitSampling>) -> Self {
        SampledWaits {
            sampling: Some(sampling),
            got: None,
        }
    }
}

impl Observer for SampledWaits {
    fn opened(&mut self) {
        if let Some(Ok(s)) = self.sampling.as_mut() {
            s.start();
        }
    }

    fn closed(&mut self) {
        self.got = self
            .sampling
            .take()
            .map(|s| s.and_then(|s| s.finish()))
            .map(|s| s.map_err(|e| Unmeasured::new(format!("{e:#}"))));
    }

    fn contribute(self: Box<Self>, r: &mut StepResult, work: f64) {
        if let Some(w) = kept(&mut r.notes, "waits", self.got) {
            r.metrics.waits = w.per_op(work);
        }
    }
}

/// The plans the engine chooses for the workload's statements, asked
/// before the warm-up (EXPLAIN on a connection of its own, outside the
/// window).
pub(super) struct Plans(crate::db::DbResult<Vec<StatementPlan>>);

impl Plans {
    pub fn capture(db: &dyn Target, run: &WorkloadRun) -> Plans {
        let w = run.workload.as_ref();
        Plans(crate::workload::shapes::plans(db, w, &run.scale, run.seed))
    }
}

impl Observer for Plans {
    fn contribute(self: Box<Self>, r: &mut StepResult, _work: f64) {
        match self.0 {
            Ok(p) => r.plans = p,
            Err(why) => {
                r.notes.insert("plans".into(), format!("not asked: {why}"));
            }
        }
    }
}
