//! One execution's profile: the profiler started as the engine opens the
//! measured window and stopped as it closes (the engine's [`Edge`]s), its
//! recording folded once the step is over, out of the window's way.

use std::path::Path;

use crate::db::Target;
use crate::engine::Edge;
use crate::measure::Unmeasured;
use crate::metrics::procfs;
use crate::metrics::profile::fold::Followed;
use crate::metrics::profile::{perf, Meta, Mode, Of, Profile, Scope, Settings};
use crate::metrics::Probe;
use crate::plan::schedule::Execution;
use crate::results::StepResult;

use super::observe::Observer;

enum State {
    Waiting,
    Running(perf::Recording),
    Stopped(perf::Stopped),
    Failed(String),
}

/// The profiler of one window.
pub(super) struct Profiler<'a> {
    mode: Mode,
    settings: Settings,
    dir: &'a Path,
    name: String,
    /// The processes to follow when the window opens, or why there are
    /// none.
    whose: Result<(Of, Option<u32>), Unmeasured>,
    /// An embedded engine's work is relbench's clients' CPU, a server's
    /// its processes'.
    embedded: bool,
    state: State,
}

impl<'a> Profiler<'a> {
    /// The execution's profiler, when it is profiled: of `db`'s server
    /// (its process from `probe`), or of relbench's clients for an
    /// embedded engine; its working files in `dir`.
    pub fn new(
        db: &dyn Target,
        probe: &Probe,
        dir: Option<&'a Path>,
        e: &Execution,
    ) -> Option<Profiler<'a>> {
        let (mode, settings) = e.profile?;
        let dir = dir?;
        let whose = if !db.engine().is_server() {
            Ok((Of::Relbench, Some(std::process::id())))
        } else if !db.runs_here() {
            Err(Unmeasured::new(
                "the server runs on another host: relbench profiles only processes on its own",
            ))
        } else {
            match probe.server_pid {
                Some(pid) => Ok((Of::Server, Some(pid))),
                None => Err(Unmeasured::new(
                    "relbench does not know this server's process (it profiles the servers it starts)",
                )),
            }
        };
        Some(Profiler {
            mode,
            settings,
            dir,
            name: format!("{}-{}", e.id.target, e.id.seq),
            whose,
            embedded: !db.engine().is_server(),
            state: State::Waiting,
        })
    }

    /// Follows the window's edges.
    fn edge(&mut self, edge: Edge) {
        match (edge, &self.state) {
            (Edge::Opened, State::Waiting) => {
                self.state = match &self.whose {
                    Ok((of, Some(pid))) => self.start(*of, *pid),
                    Ok((_, None)) => State::Failed("no process to profile".into()),
                    Err(e) => State::Failed(e.to_string()),
                };
            }
            (Edge::Closed, State::Running(_)) => {
                if let State::Running(r) = std::mem::replace(&mut self.state, State::Waiting) {
                    self.state = State::Stopped(r.stop());
                }
            }
            _ => {}
        }
    }

    /// Starts the profiler on the processes of `pid` as they are now,
    /// again if one of them exited before perf could attach (a server's
    /// connection that just ended).
    fn start(&self, of: Of, pid: u32) -> State {
        let mut last = String::new();
        let mut scope = Scope::Machine;
        for _ in 0..4 {
            let follow = match of {
                // A PostgreSQL server's backends are processes of their
                // own: the whole tree as the window opens.
                Of::Server => Followed {
                    pids: procfs::tree_pids(pid),
                    tids: Vec::new(),
                },
                // relbench's clients, not its sampler nor its
                // coordinator (their sleeps are no engine's).
                Of::Relbench => Followed {
                    pids: Vec::new(),
                    tids: procfs::named_threads(pid, crate::engine::CLIENT_THREAD),
                },
            };
            match perf::start(
                &follow,
                scope,
                self.settings,
                self.mode,
                self.dir,
                &self.name,
            ) {
                Ok(mut r) => {
                    if !r.gave_up() {
                        return State::Running(r);
                    }
                    let stopped = r.stop();
                    let denied = stopped.denied();
                    last = stopped.fold().meta.error.unwrap_or_default();
                    // Not allowed to record the whole machine: the
                    // processes themselves, at a cost the profile says.
                    if scope == Scope::Machine && denied {
                        scope = Scope::Threads;
                    }
                }
                Err(e) => return State::Failed(e.to_string()),
            }
        }
        State::Failed(last)
    }

    /// The profile, with the window's operations and the profiled
    /// processes' CPU per operation.
    fn finish(self, ops: Option<f64>, cpu_us_per_op: Option<f64>) -> Profile {
        let mut p = match self.state {
            State::Stopped(s) => s.fold(),
            State::Failed(why) => Profile::failed(why),
            State::Waiting | State::Running(_) => {
                Profile::failed("the window never opened (the step failed before it)".into())
            }
        };
        p.meta = Meta {
            of: self.whose.ok().map(|(of, _)| of),
            mode: Some(self.mode),
            settings: Some(self.settings),
            ops,
            cpu_us_per_op,
            ..p.meta
        };
        p
    }
}

impl Observer for Profiler<'_> {
    fn opened(&mut self) {
        self.edge(Edge::Opened);
    }

    fn closed(&mut self) {
        self.edge(Edge::Closed);
    }

    /// The CPU perf used over the window, once it has stopped.
    fn cpu_secs(&self) -> Option<f64> {
        match &self.state {
            State::Stopped(s) => s.profiler_cpu_secs(),
            _ => None,
        }
    }

    fn contribute(self: Box<Self>, r: &mut StepResult, work: f64) {
        let cpu = match self.embedded {
            true => r.metrics.client_cpu_us_per_op,
            false => r.metrics.server_cpu_us_per_op,
        };
        let mut p = self.finish(Some(work), cpu);
        // The same judgement every window gets: a profile of a window
        // another program shared is not compared.
        let j = r.judgement();
        p.meta.disturbed = j
            .is_disturbed()
            .then(|| j.why().unwrap_or_default().to_string());
        r.profile = Some(Box::new(p));
    }
}
