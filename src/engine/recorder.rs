//! Per-thread measurements: latency histograms per statement class, event
//! counts per second, errors by class and kind. Each client thread owns one
//! recorder; they are merged once, when the step ends, so no operation
//! takes a lock.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::target::ErrorKind;

const ERROR_KINDS: [ErrorKind; 7] = [
    ErrorKind::Busy,
    ErrorKind::Deadlock,
    ErrorKind::Constraint,
    ErrorKind::Connection,
    ErrorKind::DiskFull,
    ErrorKind::Other,
    ErrorKind::WrongResult,
];

fn kind_index(k: ErrorKind) -> usize {
    ERROR_KINDS.iter().position(|x| *x == k).unwrap_or(5)
}

/// Latencies in nanoseconds, two significant digits (1% resolution), up to
/// an hour: about 36 KB per histogram, so a client can keep one per class.
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 2).expect("valid histogram bounds")
}

pub struct Recorder {
    /// False during warm-up: nothing is counted.
    pub(crate) active: bool,
    window_start: Option<Instant>,
    class_hist: Vec<Histogram<u64>>,
    class_max: Vec<u64>,
    event_hist: Histogram<u64>,
    event_max: u64,
    errors: Vec<[u64; ERROR_KINDS.len()]>,
    samples: BTreeMap<(usize, usize), String>,
    pub(crate) events: u64,
    pub(crate) failed_events: u64,
    per_second: Vec<u64>,
}

impl Recorder {
    pub fn new(classes: usize, expected_secs: usize) -> Self {
        Recorder {
            active: false,
            window_start: None,
            class_hist: (0..classes).map(|_| histogram()).collect(),
            class_max: vec![0; classes],
            event_hist: histogram(),
            event_max: 0,
            errors: vec![[0; ERROR_KINDS.len()]; classes],
            samples: BTreeMap::new(),
            events: 0,
            failed_events: 0,
            per_second: Vec::with_capacity(expected_secs + 2),
        }
    }

    /// Starts counting: the measured window begins at `at`.
    pub(crate) fn activate(&mut self, at: Instant) {
        self.active = true;
        self.window_start = Some(at);
    }

    /// One statement of class `class` succeeded after `d`.
    #[inline]
    pub fn statement(&mut self, class: usize, d: Duration) {
        if self.active {
            let ns = d.as_nanos() as u64;
            self.class_hist[class].saturating_record(ns.max(1));
            self.class_max[class] = self.class_max[class].max(ns);
        }
    }

    /// One statement of class `class` failed. The message is built only the
    /// first time a class meets a kind of error, and kept as its sample.
    #[cold]
    pub fn error(&mut self, class: usize, kind: ErrorKind, message: impl FnOnce() -> String) {
        let k = kind_index(kind);
        if self.active {
            self.errors[class][k] += 1;
        }
        self.samples.entry((class, k)).or_insert_with(message);
    }

    /// One event completed successfully: started at `start`, done at `done`.
    #[inline]
    pub(crate) fn event(&mut self, start: Instant, done: Instant) {
        let ns = done.duration_since(start).as_nanos() as u64;
        self.event_hist.saturating_record(ns.max(1));
        self.event_max = self.event_max.max(ns);
        self.events += 1;
        let sec = self
            .window_start
            .map_or(0, |w| done.saturating_duration_since(w).as_secs() as usize);
        if sec >= self.per_second.len() {
            self.per_second.resize(sec + 1, 0);
        }
        self.per_second[sec] += 1;
    }

    /// The last error message this recorder kept, for a step that had to stop.
    pub(crate) fn last_sample(&self) -> Option<&str> {
        self.samples.values().next_back().map(String::as_str)
    }
}

/// A latency distribution, in microseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// Log-scale histogram: `[upper bound in µs, count]` for each non-empty
    /// bucket (bounds double from 1 µs).
    pub buckets: Vec<(f64, u64)>,
}

impl LatencySummary {
    fn of(h: &Histogram<u64>, max_ns: u64) -> Self {
        let us = |ns: u64| ns as f64 / 1000.0;
        let buckets = if h.is_empty() {
            Vec::new()
        } else {
            h.iter_log(1000, 2.0)
                .filter(|v| v.count_since_last_iteration() > 0)
                .map(|v| (us(v.value_iterated_to()), v.count_since_last_iteration()))
                .collect()
        };
        LatencySummary {
            count: h.len(),
            mean_us: h.mean() / 1000.0,
            p50_us: us(h.value_at_quantile(0.50)),
            p95_us: us(h.value_at_quantile(0.95)),
            p99_us: us(h.value_at_quantile(0.99)),
            max_us: us(max_ns),
            buckets,
        }
    }
}

/// All client recorders of one step, merged.
#[derive(Debug, Default)]
pub struct Merged {
    pub events: u64,
    pub failed_events: u64,
    pub statements: BTreeMap<String, u64>,
    /// `class/kind` → count.
    pub errors: BTreeMap<String, u64>,
    /// `class/kind` → the first message seen.
    pub error_samples: BTreeMap<String, String>,
    pub per_second: Vec<u64>,
    /// Per statement class, plus `event` for whole events.
    pub latency: BTreeMap<String, LatencySummary>,
}

pub fn merge(classes: &[&str], recs: &[Recorder]) -> Merged {
    let mut m = Merged::default();
    let mut event_hist = histogram();
    let mut event_max = 0;
    for (c, class) in classes.iter().enumerate() {
        let mut h = histogram();
        let mut max = 0;
        for r in recs {
            h.add(&r.class_hist[c]).expect("same histogram bounds");
            max = max.max(r.class_max[c]);
        }
        if !h.is_empty() {
            m.statements.insert(class.to_string(), h.len());
            m.latency
                .insert(class.to_string(), LatencySummary::of(&h, max));
        }
    }
    for r in recs {
        m.events += r.events;
        m.failed_events += r.failed_events;
        event_hist
            .add(&r.event_hist)
            .expect("same histogram bounds");
        event_max = event_max.max(r.event_max);
        if r.per_second.len() > m.per_second.len() {
            m.per_second.resize(r.per_second.len(), 0);
        }
        for (i, n) in r.per_second.iter().enumerate() {
            m.per_second[i] += n;
        }
        for (c, kinds) in r.errors.iter().enumerate() {
            for (k, n) in kinds.iter().enumerate() {
                if *n > 0 {
                    let key = format!("{}/{}", classes[c], ERROR_KINDS[k].name());
                    *m.errors.entry(key).or_default() += n;
                }
            }
        }
        for ((c, k), msg) in &r.samples {
            let key = format!("{}/{}", classes[*c], ERROR_KINDS[*k].name());
            m.error_samples.entry(key).or_insert_with(|| msg.clone());
        }
    }
    // Keep samples of the errors that were counted; warm-up errors explain
    // only a step where nothing was counted at all.
    if !m.errors.is_empty() {
        m.error_samples.retain(|k, _| m.errors.contains_key(k));
    }
    if !event_hist.is_empty() {
        m.latency
            .insert("event".into(), LatencySummary::of(&event_hist, event_max));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_counts_and_keeps_the_slowest() {
        let t0 = Instant::now();
        let mut a = Recorder::new(2, 2);
        let mut b = Recorder::new(2, 2);
        for r in [&mut a, &mut b] {
            r.statement(0, Duration::from_micros(5)); // warm-up: not counted
            r.activate(t0);
        }
        for i in 1..=100 {
            a.statement(0, Duration::from_micros(i));
            a.event(t0, t0 + Duration::from_micros(i));
        }
        b.statement(1, Duration::from_millis(7));
        b.event(t0, t0 + Duration::from_millis(1500));
        b.error(1, ErrorKind::Busy, || "database is locked".into());
        b.error(1, ErrorKind::Busy, || {
            unreachable!("only the first message is built")
        });
        let m = merge(&["point", "update"], &[a, b]);
        assert_eq!(m.events, 101);
        assert_eq!(m.statements["point"], 100);
        assert_eq!(m.statements["update"], 1);
        assert_eq!(m.per_second, vec![100, 1]);
        assert_eq!(m.errors["update/busy"], 2);
        assert_eq!(m.error_samples["update/busy"], "database is locked");
        let p = &m.latency["point"];
        assert!((49.0..=51.0).contains(&p.p50_us), "{p:?}");
        assert!((98.0..=100.0).contains(&p.p99_us), "{p:?}");
        assert_eq!(p.max_us, 100.0);
        assert_eq!(m.latency["event"].max_us, 1_500_000.0);
        let total: u64 = m.latency["event"].buckets.iter().map(|b| b.1).sum();
        assert_eq!(total, 101);
    }
}
