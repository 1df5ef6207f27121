//! Per-thread measurements: latency histograms per statement class, event
//! counts per second, errors by class and kind. Each client thread owns one
//! recorder; they are merged once, when the step ends, so no operation
//! takes a lock.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::outcome::ErrorKind;

const ERROR_KINDS: [ErrorKind; 8] = [
    ErrorKind::Busy,
    ErrorKind::Deadlock,
    ErrorKind::Constraint,
    ErrorKind::Connection,
    ErrorKind::DiskFull,
    ErrorKind::Other,
    ErrorKind::WrongResult,
    ErrorKind::Script,
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
    /// Per class and second: statements and the slowest (ns), kept only
    /// for workloads that report per-operation series.
    class_seconds: Option<Vec<Vec<(u64, u64)>>>,
    /// How late an open-loop event started against its schedule; added to
    /// the event's first statement, so response times count from the
    /// intended start.
    pub(crate) lag_ns: u64,
    /// Per class: what its statements found, by [`Tally`].
    tallies: Vec<[u64; Tally::ALL.len()]>,
}

/// Something a workload counts about its operations besides their time:
/// rows written (a load's nodes and links), operations that found nothing
/// to read or change, rows a check found wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tally {
    Rows,
    NotFound,
    Wrong,
}

impl Tally {
    pub const ALL: [Tally; 3] = [Tally::Rows, Tally::NotFound, Tally::Wrong];

    pub fn name(self) -> &'static str {
        match self {
            Tally::Rows => "rows",
            Tally::NotFound => "not-found",
            Tally::Wrong => "wrong",
        }
    }
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
            class_seconds: None,
            lag_ns: 0,
            tallies: vec![[0; Tally::ALL.len()]; classes],
        }
    }

    /// Keeps a per-second series for each statement class.
    pub(crate) fn keep_class_seconds(&mut self, classes: usize) {
        self.class_seconds = Some(vec![Vec::new(); classes]);
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
            let ns = d.as_nanos() as u64 + std::mem::take(&mut self.lag_ns);
            self.class_hist[class].saturating_record(ns.max(1));
            self.class_max[class] = self.class_max[class].max(ns);
            if let (Some(series), Some(w)) = (&mut self.class_seconds, self.window_start) {
                let sec = Instant::now().saturating_duration_since(w).as_secs() as usize;
                let s = &mut series[class];
                if sec >= s.len() {
                    s.resize(sec + 1, (0, 0));
                }
                s[sec].0 += 1;
                s[sec].1 = s[sec].1.max(ns);
            }
        }
    }

    /// Counts `n` of `what` for class `class` (in the measured window only).
    #[inline]
    pub fn tally(&mut self, class: usize, what: Tally, n: u64) {
        if self.active {
            self.tallies[class][what as usize] += n;
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
    /// The fastest event (absent from results written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_us: Option<f64>,
    pub mean_us: f64,
    /// The lower and upper quartiles (LinkBench reports them); absent
    /// from results written before schema version 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p25_us: Option<f64>,
    pub p50_us: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p75_us: Option<f64>,
    /// The 90th percentile, TPC-C's response-time bound; absent from
    /// results written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90_us: Option<f64>,
    pub p95_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// Log-scale histogram: `[upper bound in µs, count]` for each non-empty
    /// bucket (bounds double from 1 µs).
    pub buckets: Vec<(f64, u64)>,
    /// The Insert Benchmark's response-time histogram: `[bound in µs,
    /// count at or below it and above the previous bound]` for
    /// [`IB_BOUNDS_US`], then `[f64::INFINITY → null, the rest]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranges: Vec<(Option<f64>, u64)>,
    /// The whole histogram, losslessly ([`super::hdr`]): what runs on
    /// several client hosts add up. Absent from files written before it
    /// was kept, and from a step read for a report ([`super::hdr::skipped`]).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::hdr::deserialize"
    )]
    pub hdr: Option<String>,
}

/// The Insert Benchmark's response-time buckets: ≤ 256 µs, ≤ 1 ms, ≤ 4 ms,
/// ≤ 16 ms, ≤ 64 ms, ≤ 256 ms, ≤ 1 s, ≤ 4 s, ≤ 16 s, then more.
pub const IB_BOUNDS_US: [f64; 9] = [256.0, 1e3, 4e3, 16e3, 64e3, 256e3, 1e6, 4e6, 16e6];

impl LatencySummary {
    pub fn of(h: &Histogram<u64>, max_ns: u64) -> Self {
        let us = |ns: u64| ns as f64 / 1000.0;
        let buckets = if h.is_empty() {
            Vec::new()
        } else {
            h.iter_log(1000, 2.0)
                .filter(|v| v.count_since_last_iteration() > 0)
                .map(|v| (us(v.value_iterated_to()), v.count_since_last_iteration()))
                .collect()
        };
        let mut ranges = Vec::new();
        if !h.is_empty() {
            let mut below = 0;
            for b in IB_BOUNDS_US {
                // Values equivalent to the bound (within the histogram's 1%)
                // fall at or below it.
                let upto = h.count_between(0, h.highest_equivalent((b * 1000.0) as u64));
                ranges.push((Some(b), upto - below));
                below = upto;
            }
            ranges.push((None, h.len() - below));
        }
        LatencySummary {
            ranges,
            count: h.len(),
            min_us: (!h.is_empty()).then(|| us(h.min())),
            // To the nanosecond the histogram counts in.
            mean_us: h.mean().round() / 1000.0,
            // A percentile is its bucket's highest equivalent value, which
            // can lie above the slowest event actually seen: clamp it.
            p25_us: (!h.is_empty()).then(|| us(h.value_at_quantile(0.25).min(max_ns))),
            p50_us: us(h.value_at_quantile(0.50).min(max_ns)),
            p75_us: (!h.is_empty()).then(|| us(h.value_at_quantile(0.75).min(max_ns))),
            p90_us: (!h.is_empty()).then(|| us(h.value_at_quantile(0.90).min(max_ns))),
            p95_us: us(h.value_at_quantile(0.95).min(max_ns)),
            p99_us: us(h.value_at_quantile(0.99).min(max_ns)),
            max_us: us(max_ns),
            buckets,
            hdr: (!h.is_empty()).then(|| super::hdr::encode(h)),
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
    /// Per class, per second: statements and the slowest, when kept.
    pub class_seconds: BTreeMap<String, Vec<ClassSecond>>,
    /// `class/tally` → count, for the tallies a workload kept.
    pub tallies: BTreeMap<String, u64>,
}

impl Merged {
    /// Adds another part of the same step's work (another process's
    /// clients): counts and each second summed, the slowest of each
    /// second kept, the first message of each error kind kept. Latencies
    /// are added as histograms, by whoever holds them.
    pub fn add(&mut self, o: &Merged) {
        self.events += o.events;
        self.failed_events += o.failed_events;
        for (into, from) in [
            (&mut self.statements, &o.statements),
            (&mut self.errors, &o.errors),
            (&mut self.tallies, &o.tallies),
        ] {
            for (k, v) in from {
                *into.entry(k.clone()).or_default() += v;
            }
        }
        for (k, v) in &o.error_samples {
            self.error_samples
                .entry(k.clone())
                .or_insert_with(|| v.clone());
        }
        add_seconds(&mut self.per_second, o.per_second.iter().copied());
        for (class, secs) in &o.class_seconds {
            add_class_seconds(
                self.class_seconds.entry(class.clone()).or_default(),
                secs.iter().copied(),
            );
        }
    }
}

/// Adds a series of per-second counts into another, second by second.
fn add_seconds(into: &mut Vec<u64>, from: impl ExactSizeIterator<Item = u64>) {
    if from.len() > into.len() {
        into.resize(from.len(), 0);
    }
    for (o, n) in into.iter_mut().zip(from) {
        *o += n;
    }
}

/// Adds a class's seconds into another's: statements summed, the
/// slowest kept.
fn add_class_seconds(
    into: &mut Vec<ClassSecond>,
    from: impl ExactSizeIterator<Item = ClassSecond>,
) {
    if from.len() > into.len() {
        into.resize(from.len(), ClassSecond::default());
    }
    for (o, s) in into.iter_mut().zip(from) {
        o.n += s.n;
        o.max_us = o.max_us.max(s.max_us);
    }
}

/// Each class's seconds on disk as two columns (`{"n": [...], "max_us":
/// [...]}`); files before schema version 7 hold an object a second, and
/// both are read.
pub mod class_columns {
    use super::ClassSecond;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    #[derive(Serialize, Deserialize)]
    struct Columns {
        n: Vec<u64>,
        max_us: Vec<f64>,
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Rows(Vec<ClassSecond>),
        Columns(Columns),
    }

    pub fn serialize<S: Serializer>(
        m: &BTreeMap<String, Vec<ClassSecond>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let cols: BTreeMap<&String, Columns> = m
            .iter()
            .map(|(k, v)| {
                (
                    k,
                    Columns {
                        n: v.iter().map(|c| c.n).collect(),
                        max_us: v.iter().map(|c| c.max_us).collect(),
                    },
                )
            })
            .collect();
        cols.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<String, Vec<ClassSecond>>, D::Error> {
        let m: BTreeMap<String, Either> = BTreeMap::deserialize(d)?;
        Ok(m.into_iter()
            .map(|(k, e)| {
                let v = match e {
                    Either::Rows(r) => r,
                    Either::Columns(c) => {
                        c.n.iter()
                            .zip(&c.max_us)
                            .map(|(&n, &max_us)| ClassSecond { n, max_us })
                            .collect()
                    }
                };
                (k, v)
            })
            .collect())
    }
}

/// One second of one statement class.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct ClassSecond {
    pub n: u64,
    /// The slowest response in the second, µs (0 when there was none).
    pub max_us: f64,
}

/// Merges the client recorders of a step. Events, their latencies and the
/// per-second event counts come from the recorders marked `measured` (the
/// connections the step's throughput is about); statement classes from
/// all of them.
pub fn merge(classes: &[&str], recs: &[Recorder], measured: &[bool]) -> Merged {
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
    for (ri, r) in recs.iter().enumerate() {
        if let Some(series) = &r.class_seconds {
            for (c, s) in series.iter().enumerate() {
                add_class_seconds(
                    m.class_seconds.entry(classes[c].to_string()).or_default(),
                    s.iter().map(|&(n, max)| ClassSecond {
                        n,
                        max_us: max as f64 / 1000.0,
                    }),
                );
            }
        }
        for (c, kinds) in r.errors.iter().enumerate() {
            for (k, n) in kinds.iter().enumerate() {
                if *n > 0 {
                    let key = format!("{}/{}", classes[c], ERROR_KINDS[k].name());
                    *m.errors.entry(key).or_default() += n;
                }
            }
        }
        for (c, t) in r.tallies.iter().enumerate() {
            for (k, n) in t.iter().enumerate() {
                if *n > 0 {
                    let key = format!("{}/{}", classes[c], Tally::ALL[k].name());
                    *m.tallies.entry(key).or_default() += n;
                }
            }
        }
        for ((c, k), msg) in &r.samples {
            let key = format!("{}/{}", classes[*c], ERROR_KINDS[*k].name());
            m.error_samples.entry(key).or_insert_with(|| msg.clone());
        }
        if !measured.get(ri).copied().unwrap_or(true) {
            continue;
        }
        m.events += r.events;
        m.failed_events += r.failed_events;
        event_hist
            .add(&r.event_hist)
            .expect("same histogram bounds");
        event_max = event_max.max(r.event_max);
        add_seconds(&mut m.per_second, r.per_second.iter().copied());
    }
    // Keep samples of the errors that were counted; warm-up errors explain
    // only a step where nothing was counted at all.
    if !m.errors.is_empty() {
        m.error_samples.retain(|k, _| m.errors.contains_key(k));
    }
    // Classes a step did not use have no series.
    m.class_seconds.retain(|_, s| s.iter().any(|x| x.n > 0));
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
    fn percentiles_never_exceed_the_maximum() {
        // 24 of 1,535 histograms of a run had a p99 above their max: HDR
        // reports a bucket's upper bound.
        let t0 = Instant::now();
        let mut r = Recorder::new(1, 1);
        r.activate(t0);
        for us in [1_234_567u64, 1_234_567, 1_234_568] {
            r.statement(0, Duration::from_micros(us));
        }
        let m = merge(&["q"], &[r], &[true]);
        let l = &m.latency["q"];
        assert_eq!(l.max_us, 1_234_568.0);
        for p in [l.p50_us, l.p95_us, l.p99_us] {
            assert!(p <= l.max_us, "{l:?}");
        }
    }

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
        let m = merge(&["point", "update"], &[a, b], &[true, true]);
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
        // The Insert Benchmark's ranges: 100 events ≤ 256 µs, one at 1.5 s.
        let r = &m.latency["event"].ranges;
        assert_eq!(r[0], (Some(256.0), 100));
        assert_eq!(r[6], (Some(1e6), 0));
        assert_eq!(r[7], (Some(4e6), 1));
        assert_eq!(r.iter().map(|x| x.1).sum::<u64>(), 101);
    }

    #[test]
    fn unmeasured_connections_add_statements_but_not_events() {
        let t0 = Instant::now();
        let mut q = Recorder::new(2, 2);
        let mut w = Recorder::new(2, 2);
        w.keep_class_seconds(2);
        for r in [&mut q, &mut w] {
            r.activate(t0);
        }
        q.statement(0, Duration::from_micros(10));
        q.event(t0, t0 + Duration::from_micros(10));
        w.lag_ns = 2_000_000; // started 2 ms late
        w.statement(1, Duration::from_micros(500));
        w.event(t0, t0 + Duration::from_micros(500));
        let m = merge(&["query", "insert"], &[q, w], &[true, false]);
        assert_eq!(m.events, 1);
        assert_eq!(m.statements["insert"], 1);
        // Counted from the intended start: 2.5 ms.
        assert!((2490.0..=2510.0).contains(&m.latency["insert"].max_us));
        assert_eq!(m.class_seconds["insert"][0].n, 1);
        assert!(m.class_seconds["insert"][0].max_us >= 2490.0);
    }
}

#[cfg(test)]
mod class_column_tests {
    use super::ClassSecond;
    use std::collections::BTreeMap;

    #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
    struct Holder {
        #[serde(with = "super::class_columns")]
        c: BTreeMap<String, Vec<ClassSecond>>,
    }

    #[test]
    fn class_seconds_go_to_disk_as_columns_and_older_rows_are_read() {
        let mut c = BTreeMap::new();
        c.insert(
            "insert".to_string(),
            vec![
                ClassSecond { n: 3, max_us: 12.5 },
                ClassSecond { n: 0, max_us: 0.0 },
            ],
        );
        let h = Holder { c };
        let text = serde_json::to_string(&h).unwrap();
        assert_eq!(text, r#"{"c":{"insert":{"n":[3,0],"max_us":[12.5,0.0]}}}"#);
        assert_eq!(serde_json::from_str::<Holder>(&text).unwrap(), h);
        let old = r#"{"c":{"insert":[{"n":3,"max_us":12.5},{"n":0,"max_us":0.0}]}}"#;
        assert_eq!(serde_json::from_str::<Holder>(old).unwrap(), h);
    }
}
