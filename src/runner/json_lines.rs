//! `run --events FILE`: the run's events as JSON lines, one object per
//! event, written and flushed as each happens — for a CI log, a dashboard,
//! or a script that starts a profiler at a window's edge. Every object has
//! `event` (its kind) and `at` (Unix seconds); the rest is the event's own
//! (docs/guide/events.md lists them). The live ticks are thinned to one a
//! second of each step; every other event is written.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::{json, Value};

use super::events::{Event, Sink, Tone};
use crate::plan::schedule::ExecId;
use crate::util::unix_now;

/// Seconds between the live ticks written for one step.
const LIVE_EVERY: f64 = 1.0;

pub struct JsonLines {
    path: PathBuf,
    w: BufWriter<File>,
    /// The step and elapsed seconds of the last live tick written.
    last_live: Option<(ExecId, f64)>,
}

impl JsonLines {
    /// Opens `path` to append to (a resumed run's events follow the first
    /// attempt's): a regular file of this user's, never through a link,
    /// checked on the file opened — another local user's file (in /tmp, made
    /// first) is not written into, and a FIFO cannot hold the run (opened
    /// without blocking, then refused).
    pub fn open(path: &Path) -> anyhow::Result<JsonLines> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .with_context(|| {
                format!(
                    "opening {} for the run's events (--events): give a file in a folder you can write to",
                    path.display()
                )
            })?;
        let m = f.metadata()?;
        if !m.is_file() || m.uid() != crate::util::my_uid() {
            anyhow::bail!(
                "{} (--events) is {}: relbench appends its events only to a regular file of its own user's; \
                 name a new file",
                path.display(),
                if m.is_file() {
                    format!("another user's file (uid {})", m.uid())
                } else {
                    "not a regular file".to_string()
                }
            );
        }
        Ok(JsonLines {
            path: path.to_path_buf(),
            w: BufWriter::new(f),
            last_live: None,
        })
    }

    fn write(&mut self, mut v: Value) -> anyhow::Result<()> {
        v["at"] = json!(unix_now());
        serde_json::to_writer(&mut self.w, &v)?;
        self.w.write_all(b"\n")?;
        self.w
            .flush()
            .with_context(|| format!("writing the run's events to {}", self.path.display()))
    }

    /// Whether a live tick of `id` at `elapsed` is a second past the last
    /// one written.
    /// (A tick comes every 200 ms of the measured window: nothing is
    /// allocated for one that is not written.)
    fn live_due(&mut self, id: &ExecId, elapsed: f64) -> bool {
        match &mut self.last_live {
            Some((k, at)) if k == id => {
                if elapsed - *at < LIVE_EVERY {
                    return false;
                }
                *at = elapsed;
            }
            _ => self.last_live = Some((id.clone(), elapsed)),
        }
        true
    }
}

fn id(id: &ExecId) -> Value {
    json!({
        "key": id.to_string(),
        "target": id.target,
        "repeat": id.repeat,
        "seq": id.seq,
        "step": id.at.step.label(),
        "clients": id.at.clients,
    })
}

impl Sink for JsonLines {
    fn on(&mut self, event: &Event) -> anyhow::Result<()> {
        let v = match event {
            Event::Said(tone, text) => json!({
                "event": "said",
                "tone": match tone { Tone::Info => "info", Tone::Note => "note", Tone::Warn => "warn" },
                "text": text,
            }),
            Event::TargetOpened(t) => json!({
                "event": "target_opened",
                "target": t.name,
                "engine": t.engine,
                "version": t.facts.version,
            }),
            Event::StepStarted {
                id: i,
                label,
                total,
            } => json!({
                "event": "step_started",
                "id": id(i),
                "label": label,
                "total_secs": total.map(|d| d.as_secs_f64()),
            }),
            Event::WindowOpened { id: i, server_pid } => json!({
                "event": "window_opened",
                "id": id(i),
                "server_pid": server_pid,
            }),
            Event::Live(i, live) => {
                if !self.live_due(i, live.elapsed.as_secs_f64()) {
                    return Ok(());
                }
                json!({
                    "event": "live",
                    "id": id(i),
                    "elapsed_secs": live.elapsed.as_secs_f64(),
                    "warming_up": live.warming_up,
                    "window_secs": live.window.as_secs_f64(),
                    "events": live.events,
                })
            }
            Event::WindowClosed(i) => json!({ "event": "window_closed", "id": id(i) }),
            Event::StepEnded {
                id: i,
                line,
                failed,
            } => json!({
                "event": "step_ended",
                "id": id(i),
                "line": line,
                "failed": failed,
            }),
            Event::Finished(r) => json!({
                "event": "finished",
                "id": id(&r.id),
                "throughput": r.throughput,
                "unit": r.unit.name(),
                "events": r.events,
                "secs": r.secs,
                "failed": r.failed,
                "disturbed": r.judgement().is_disturbed(),
            }),
            Event::Profiled(i, _) => json!({ "event": "profiled", "id": id(i) }),
            Event::Ended(s) => json!({ "event": "ended", "status": s }),
        };
        self.write(v)
    }
}
