//! What the user sees while a run goes, as a sink of its events: a
//! progress bar per step on a terminal, one plain line per step otherwise
//! (logs, CI), sysbench's interval lines when asked.

use std::cell::Cell;
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use super::events::{Event, Sink, Tone};
use crate::engine::Live;
use crate::results::RunStatus;

pub struct Progress {
    bar: Option<ProgressBar>,
    tty: bool,
    quiet: bool,
    /// Print a line of the measured rate this often (sysbench's
    /// `--report-interval`), and where the step's lines stand.
    interval: Option<Duration>,
    label: String,
    next_line: Cell<Duration>,
    events_then: Cell<u64>,
}

impl Progress {
    pub fn new(quiet: bool) -> Self {
        Progress {
            bar: None,
            tty: std::io::stderr().is_terminal(),
            quiet,
            interval: None,
            label: String::new(),
            next_line: Cell::new(Duration::ZERO),
            events_then: Cell::new(0),
        }
    }

    /// Interval lines every `every` of each step's measured window.
    pub fn with_interval(mut self, every: Option<Duration>) -> Self {
        self.interval = every.filter(|d| !d.is_zero());
        self
    }

    /// A line of its own (run start, notes), above any bar.
    fn line(&self, msg: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(b) => b.println(msg),
            None => crate::errln!("{msg}"),
        }
    }

    /// A failure or a skipped step: printed even with --quiet.
    fn warn(&self, msg: &str) {
        match &self.bar {
            Some(b) => b.println(msg),
            None => crate::errln!("{msg}"),
        }
    }

    fn start_step(&mut self, label: &str, total: Option<Duration>) {
        self.label = label.to_string();
        self.next_line.set(self.interval.unwrap_or_default());
        self.events_then.set(0);
        if self.quiet || !self.tty {
            return;
        }
        let bar = match total {
            Some(t) => {
                let b = ProgressBar::new(t.as_millis() as u64);
                b.set_style(
                    ProgressStyle::with_template(
                        "{prefix:.bold} [{bar:30}] {elapsed:>3}/{duration:3} {msg}",
                    )
                    .expect("valid template")
                    .progress_chars("=> "),
                );
                b
            }
            None => {
                let b = ProgressBar::new_spinner();
                b.set_style(
                    ProgressStyle::with_template("{prefix:.bold} {spinner} {elapsed:>3} {msg}")
                        .expect("valid template"),
                );
                b.enable_steady_tick(Duration::from_millis(200));
                b
            }
        };
        bar.set_prefix(label.to_string());
        self.bar = Some(bar);
    }

    fn update(&self, live: &Live) {
        if let Some(every) = self.interval {
            // One line per interval crossed, its rate over that interval.
            while !live.warming_up && live.window >= self.next_line.get() {
                let at = self.next_line.get();
                let n = live.events - self.events_then.get();
                self.events_then.set(live.events);
                self.next_line.set(at + every);
                let line = format!(
                    "[ {}s ] {}: {:.1} events/s ({} events)",
                    fmt_secs(at),
                    self.label,
                    n as f64 / every.as_secs_f64(),
                    live.events
                );
                match &self.bar {
                    Some(b) => b.println(line),
                    None => crate::errln!("{line}"),
                }
            }
        }
        let Some(b) = &self.bar else { return };
        if live.total.is_some() {
            b.set_position(live.elapsed.as_millis() as u64);
        }
        if live.warming_up {
            b.set_message("warming up");
        } else {
            // Over the measured window: the warm-up's time is not the
            // measured events' (it made the rate read low).
            let measured = live.window.as_secs_f64();
            let rate = if measured > 0.0 {
                live.events as f64 / measured
            } else {
                0.0
            };
            b.set_message(format!("{} events, ~{:.0}/s", live.events, rate));
        }
    }

    /// Ends the step's bar and prints its one-line result (a failed step's
    /// even with --quiet).
    fn finish_step(&mut self, line: &str, failed: bool) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if !self.quiet || failed {
            crate::errln!("{line}");
        }
    }
}

impl Sink for Progress {
    fn on(&mut self, event: &Event) -> anyhow::Result<()> {
        match event {
            Event::Said(Tone::Info, msg) => self.line(msg),
            Event::Said(Tone::Note | Tone::Warn, msg) => self.warn(msg),
            Event::StepStarted { label, total, .. } => self.start_step(label, *total),
            Event::Live(_, live) => self.update(live),
            Event::StepEnded { line, failed, .. } => self.finish_step(line, *failed),
            // A step cut short (Ctrl-C) leaves its bar: cleared as the
            // run ends.
            Event::Ended(RunStatus::Interrupted | RunStatus::Failed) => {
                if let Some(b) = self.bar.take() {
                    b.finish_and_clear();
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Seconds into the window as sysbench prints them: whole when whole.
fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if (s - s.round()).abs() < 1e-9 {
        format!("{s:.0}")
    } else {
        format!("{s:.1}")
    }
}
