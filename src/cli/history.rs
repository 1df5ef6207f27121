//! `relbench history …` and `run --history`: the command line's side of
//! the history (opening the store, printing). `bisect.rs` has the rounds
//! a bisect asks for.

use std::path::{Path, PathBuf};

use super::args::HistoryCommand;
use super::Exit;
use crate::history::changes::{self, State};
use crate::history::detect::Settings;
use crate::history::import::{self, BuildNames};
use crate::history::store::{HistoryAt, Store};
use crate::runner;

fn at(flag: Option<String>) -> anyhow::Result<HistoryAt> {
    flag.as_deref()
        .map_or_else(|| Ok(HistoryAt::default_path()), HistoryAt::parse)
        .map_err(|e| Exit::BadInput(format!("{e:#}")).into())
}

/// `run --history`, read before the run starts (a password taken from
/// the environment before any hook or server does).
pub(super) fn history_flag(flag: Option<String>) -> anyhow::Result<Option<HistoryAt>> {
    flag.map(|h| at(Some(h))).transpose()
}

fn build_names(build: &[String], order: Option<f64>) -> BuildNames {
    BuildNames {
        names: build
            .iter()
            .map(|b| match b.split_once('=') {
                Some((t, n)) => (Some(t.to_string()), n.to_string()),
                None => (None, b.clone()),
            })
            .collect(),
        order,
    }
}

/// `run --history`: a sink of the run that adds it to the history the
/// moment its record says it finished, failed steps and all (the history
/// keeps what finished); an interrupted one when it is resumed to the
/// end. What the addition came to is said after the run's report
/// ([`HistorySink::outcome`]); the run's own outcome stays the command's.
pub(super) struct HistorySink {
    at: HistoryAt,
    out: PathBuf,
    names: BuildNames,
    added: Option<anyhow::Result<String>>,
}

impl HistorySink {
    pub(super) fn new(at: HistoryAt, out: &Path, build: &[String], order: Option<f64>) -> Self {
        HistorySink {
            at,
            out: out.to_path_buf(),
            names: build_names(build, order),
            added: None,
        }
    }

    fn add(&self) -> anyhow::Result<String> {
        let mut store = Store::open(&self.at, true)?;
        let a = import::add(&mut store, std::slice::from_ref(&self.out), &self.names)?;
        Ok(a.line(&store.at))
    }

    /// Says what the addition came to, after the run's own outcome `ran`
    /// (its report written): a run that finished and could not be added
    /// fails the command with what to do.
    pub(super) fn outcome(self, ran: anyhow::Result<()>) -> anyhow::Result<()> {
        match self.added {
            Some(Ok(line)) => crate::errln!("relbench: {line}"),
            Some(Err(e)) => {
                let e = e.context("the run is kept; add it later with `relbench history add`");
                // A run whose steps failed keeps its own exit code; the
                // history's failure is said, not lost.
                if let Err(r) = ran {
                    crate::errln!("relbench: {e:#}");
                    return Err(r);
                }
                return Err(e);
            }
            None => {}
        }
        ran
    }
}

impl runner::Sink for HistorySink {
    fn on(&mut self, event: &runner::Event) -> anyhow::Result<()> {
        if let runner::Event::Ended(crate::results::RunStatus::Complete) = event {
            self.added = Some(self.add());
        }
        Ok(())
    }
}

pub(super) fn history(cmd: HistoryCommand) -> anyhow::Result<()> {
    match cmd {
        HistoryCommand::Add {
            dirs,
            build,
            order,
            at: flag,
        } => {
            let mut store = Store::open(&at(flag.history)?, true)?;
            let a = import::add(&mut store, &dirs, &build_names(&build, order))?;
            for n in &a.notes {
                crate::errln!("relbench: {n}");
            }
            crate::outln!("{}", a.line(&store.at));
            Ok(())
        }
        HistoryCommand::Changes {
            q,
            window,
            all,
            at: flag,
        } => {
            if !(q > 0.0 && q < 1.0) || window < 1 {
                return Err(Exit::BadInput(
                    "--q is a rate between 0 and 1 (0.05), --window at least 1".into(),
                )
                .into());
            }
            let mut store = Store::open(&at(flag.history)?, false)?;
            let (_, o) = changes::find(&mut store, &Settings { q, window })?;
            let shown: Vec<_> = o
                .points
                .iter()
                .filter(|c| all || c.state == State::New)
                .collect();
            for c in &shown {
                crate::outln!("{}", c.line());
            }
            crate::outln!("{}", o.summary(q));
            Ok(())
        }
        HistoryCommand::Report { out, at: flag } => {
            let mut store = Store::open(&at(flag.history)?, false)?;
            let (h, o) = changes::find(&mut store, &Settings::default())?;
            let out = out.unwrap_or_else(|| PathBuf::from("results").join("history-report"));
            let files =
                crate::render::history::write(&crate::history::report::model(&h, &o), &out)?;
            for f in files {
                crate::outln!("{}", f.display());
            }
            Ok(())
        }
        HistoryCommand::Detect { file } => detect_file(&file),
        HistoryCommand::Ack {
            ids,
            ignore,
            at: flag,
        } => {
            let mut store = Store::open(&at(flag.history)?, false)?;
            let state = if ignore {
                State::Ignored
            } else {
                State::Acknowledged
            };
            changes::ack(&mut store, &ids, state)?;
            crate::outln!("{} change point(s) {}", ids.len(), state.name());
            Ok(())
        }
    }
}

#[derive(serde::Deserialize)]
struct DetectInput {
    #[serde(default = "default_q")]
    q: f64,
    #[serde(default = "default_window")]
    window: usize,
    series: Vec<DetectSeries>,
}

#[derive(serde::Deserialize)]
struct DetectSeries {
    id: i64,
    builds: Vec<Vec<f64>>,
    #[serde(default)]
    floor: Option<f64>,
}

fn default_q() -> f64 {
    0.05
}

fn default_window() -> usize {
    30
}

/// `history detect FILE`: the search on series given as JSON; prints the
/// change points found (index of the first build after each) as JSON.
fn detect_file(file: &Path) -> anyhow::Result<()> {
    use crate::history::detect::{detect, Point, Series};
    let text = std::fs::read_to_string(file)
        .map_err(|e| Exit::BadInput(format!("cannot read {}: {e}", file.display())))?;
    let input: DetectInput = serde_json::from_str(&text)
        .map_err(|e| Exit::BadInput(format!("{}: {e}", file.display())))?;
    let series: Vec<Series> = input
        .series
        .into_iter()
        .map(|s| Series {
            id: s.id,
            points: s
                .builds
                .into_iter()
                .enumerate()
                .map(|(i, values)| Point { build: i, values })
                .filter(|p| !p.values.is_empty())
                .collect(),
            floor: s.floor,
        })
        .collect();
    let found = detect(
        &series,
        &Settings {
            q: input.q,
            window: input.window,
        },
    );
    let out: Vec<serde_json::Value> = found
        .iter()
        .filter(|f| f.is_change())
        .map(|f| {
            let s = series.iter().find(|s| s.id == f.series).expect("a series");
            serde_json::json!({
                "series": f.series,
                "build": s.points[f.at].build,
                "magnitude": f.magnitude,
                "p": f.p,
            })
        })
        .collect();
    crate::outln!(
        "{}",
        serde_json::to_string(&serde_json::json!({ "found": out, "tested": found.len() }))?
    );
    Ok(())
}
