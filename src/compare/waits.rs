//! Where the server waited, per operation, in a cell and against its
//! base's: each wait event's µs/op (medians over the repeats), the events
//! that moved by enough to matter, and whether they account for the
//! throughput's change — which is when an explanation names them as its
//! cause.

use std::collections::BTreeMap;

use serde::Serialize;

use super::cause::op_us;
use crate::measure::stats::median;
use crate::measure::units::fmt_us;
use crate::results::StepResult;

/// A cell's waits per operation, by the server's own accounting.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct CellWaits {
    /// Where they were read (and how: summed, or sampled how often).
    pub source: String,
    /// Every wait's µs per operation, summed.
    pub total_us: f64,
    /// Per event: µs per operation and waits per operation (0 where the
    /// server's waits are sampled, not counted).
    pub per_op: BTreeMap<String, WaitFigure>,
    /// The events that moved against the base, largest change first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<WaitMove>,
    /// The moved events' change against the change of an operation's
    /// time (clients ÷ throughput): 1 when waiting accounts for all of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_of_change: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct WaitFigure {
    pub us: f64,
    pub count: f64,
}

/// One wait event's change against the base.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WaitMove {
    pub name: String,
    /// What kind of wait it is (its name says).
    pub kind: WaitKind,
    pub base_us: f64,
    pub us: f64,
    /// Target ÷ base; `None` when the base never waited on it.
    pub ratio: Option<f64>,
}

/// A wait moves when its µs/op changes by this share of an operation's
/// time (the larger side's)…
const MATERIAL: f64 = 0.05;
/// …and by this factor either way.
const FACTOR: f64 = 1.25;
/// The waits that moved are the cause when they account for this share
/// of the change in an operation's time.
pub const LEADS: f64 = 0.5;
/// At most this many events are named.
const NAMED: usize = 3;

/// The waits of a cell's repeats: medians per event (an event a repeat
/// did not wait on counts 0 there); `None` when no repeat measured them.
pub fn of(ok: &[&&StepResult]) -> Option<CellWaits> {
    let all: Vec<&crate::measure::waits::WaitsPerOp> =
        ok.iter().filter_map(|s| s.metrics.waits.as_ref()).collect();
    let first = all.first()?;
    let mut names: Vec<&String> = all.iter().flat_map(|w| w.per_op.keys()).collect();
    names.sort();
    names.dedup();
    let med = |f: &dyn Fn(&crate::measure::waits::WaitsPerOp) -> f64| {
        median(&mut all.iter().map(|w| f(w)).collect::<Vec<f64>>()).unwrap_or(0.0)
    };
    let per_op = names
        .into_iter()
        .map(|n| {
            let get = |w: &crate::measure::waits::WaitsPerOp| w.per_op.get(n).copied();
            let fig = WaitFigure {
                us: med(&|w| get(w).map_or(0.0, |x| x.us)),
                count: med(&|w| get(w).map_or(0.0, |x| x.count)),
            };
            (n.clone(), fig)
        })
        .collect();
    Some(CellWaits {
        source: first.source.clone(),
        total_us: med(&|w| w.total_us),
        per_op,
        moved: Vec::new(),
        share_of_change: None,
    })
}

/// Fills `c.moved` and `c.share_of_change` against the base's waits.
pub fn compare(
    c: &mut CellWaits,
    base: &CellWaits,
    clients: u32,
    throughput: (Option<f64>, Option<f64>),
) {
    let (Some(t), Some(b)) = (op_us(clients, throughput.0), op_us(clients, throughput.1)) else {
        return;
    };
    let floor = MATERIAL * t.max(b);
    let mut names: Vec<&String> = c.per_op.keys().chain(base.per_op.keys()).collect();
    names.sort();
    names.dedup();
    let mut moved: Vec<WaitMove> = names
        .into_iter()
        .filter_map(|n| {
            let us = c.per_op.get(n).map_or(0.0, |w| w.us);
            let base_us = base.per_op.get(n).map_or(0.0, |w| w.us);
            let factor = us.max(base_us) / us.min(base_us).max(1e-9);
            ((us - base_us).abs() >= floor && factor >= FACTOR).then(|| WaitMove {
                kind: kind_of(n),
                name: n.clone(),
                base_us,
                us,
                ratio: (base_us > 0.0).then(|| us / base_us),
            })
        })
        .collect();
    moved.sort_by(|a, b| {
        (b.us - b.base_us)
            .abs()
            .total_cmp(&(a.us - a.base_us).abs())
            .then(a.name.cmp(&b.name))
    });
    let change = t - b;
    // A table's "waits" are the storage engine's row calls, time on CPU:
    // listed, but no share of waiting.
    let waited: Vec<&WaitMove> = moved.iter().filter(|m| !m.kind.is_cpu()).collect();
    c.share_of_change = (change.abs() >= floor && !waited.is_empty()).then(|| {
        let waits: f64 = waited.iter().map(|m| m.us - m.base_us).sum();
        waits / change
    });
    c.moved = moved;
}

impl CellWaits {
    /// The events that moved the way an operation's time did, in words
    /// (`wait/io/file/sql/binlog 131 → 1.64 µs/op (×0.013)`), when they
    /// account for at least [`LEADS`] of its change: the cause.
    pub fn leading(&self) -> Option<String> {
        if self.share_of_change? < LEADS {
            return None;
        }
        let waited: Vec<&WaitMove> = self.moved.iter().filter(|m| !m.kind.is_cpu()).collect();
        let grew = waited.first()?.us > waited[0].base_us;
        let named: Vec<String> = waited
            .iter()
            .filter(|m| (m.us > m.base_us) == grew)
            .take(NAMED)
            .map(|m| m.describe())
            .collect();
        Some(format!(
            "{} time in the server's waits ({}): {}",
            if grew { "more" } else { "less" },
            waited[0].kind.words(),
            named.join(", ")
        ))
    }
}

impl WaitMove {
    pub fn describe(&self) -> String {
        let ratio = match self.ratio {
            _ if self.us == 0.0 => " (gone)".into(),
            Some(r) => format!(" (×{})", crate::measure::units::fmt_ratio(r)),
            None => " (new)".into(),
        };
        format!(
            "{} {} → {} µs/op{ratio}",
            self.name,
            fmt_us(self.base_us),
            fmt_us(self.us)
        )
    }
}

/// What kind of wait an event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitKind {
    Log,
    FileIo,
    Latch,
    Lock,
    Network,
    /// The storage engine's row calls (MySQL's `wait/io/table`): time on
    /// CPU, timed as a wait.
    Rows,
    Other,
}

impl WaitKind {
    pub fn words(self) -> &'static str {
        match self {
            WaitKind::Log => "the log's writes and syncs",
            WaitKind::FileIo => "file IO",
            WaitKind::Latch => "mutex and latch contention",
            WaitKind::Lock => "lock waits",
            WaitKind::Network => "the network",
            WaitKind::Rows => "the storage engine's row calls",
            WaitKind::Other => "other waits",
        }
    }

    /// Whether its time is spent on CPU, not waiting.
    pub fn is_cpu(self) -> bool {
        self == WaitKind::Rows
    }
}

/// What kind of wait an event is, by the names MySQL, MariaDB and
/// PostgreSQL give them.
pub fn kind_of(name: &str) -> WaitKind {
    let n = name.to_ascii_lowercase();
    if n.contains("wal") || n.contains("binlog") || n.contains("log_file") || n.contains("redo") {
        WaitKind::Log
    } else if n.starts_with("wait/io/table") {
        WaitKind::Rows
    } else if n.starts_with("wait/io/file") || n.starts_with("io:") {
        WaitKind::FileIo
    } else if n.starts_with("wait/synch") || n.starts_with("lwlock:") {
        WaitKind::Latch
    } else if n.starts_with("wait/lock") || n.starts_with("lock:") {
        WaitKind::Lock
    } else if n.contains("socket") || n.starts_with("client:") {
        WaitKind::Network
    } else {
        WaitKind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waits(events: &[(&str, f64)]) -> CellWaits {
        CellWaits {
            source: "t".into(),
            total_us: events.iter().map(|e| e.1).sum(),
            per_op: events
                .iter()
                .map(|(n, us)| {
                    (
                        n.to_string(),
                        WaitFigure {
                            us: *us,
                            count: 1.0,
                        },
                    )
                })
                .collect(),
            ..CellWaits::default()
        }
    }

    #[test]
    fn a_sync_that_went_away_is_the_cause_of_a_faster_write() {
        // 3614 → 6518 ops/s with one client: 277 → 153 µs an operation.
        let base = waits(&[
            ("wait/io/file/sql/binlog", 131.1),
            ("wait/io/table/sql/handler", 6.3),
        ]);
        let mut c = waits(&[
            ("wait/io/file/sql/binlog", 1.64),
            ("wait/io/table/sql/handler", 5.3),
        ]);
        compare(&mut c, &base, 1, (Some(6518.0), Some(3614.0)));
        assert_eq!(c.moved.len(), 1, "{c:?}");
        let s = c.share_of_change.unwrap();
        assert!((1.0..1.1).contains(&s), "{s}");
        let why = c.leading().unwrap();
        assert!(why.starts_with("less time in the server's waits (the log's writes and syncs): wait/io/file/sql/binlog 131 → 1.64 µs/op"), "{why}");
    }

    #[test]
    fn waits_too_small_against_the_operation_are_not_named() {
        // A mutex wait ×3 that is 1% of an operation's time moved nothing.
        let base = waits(&[("wait/synch/mutex/x", 1.0)]);
        let mut c = waits(&[("wait/synch/mutex/x", 3.0)]);
        compare(&mut c, &base, 1, (Some(5000.0), Some(8000.0)));
        assert!(c.moved.is_empty());
        assert!(c.leading().is_none());
    }

    #[test]
    fn waits_that_explain_a_small_part_of_the_change_are_listed_not_the_cause() {
        // 100 → 200 µs an operation; the wait grew by 20 µs of it.
        let base = waits(&[("LWLock:WALWrite", 10.0)]);
        let mut c = waits(&[("LWLock:WALWrite", 30.0)]);
        compare(&mut c, &base, 1, (Some(5000.0), Some(10000.0)));
        assert_eq!(c.moved.len(), 1);
        assert!(c.leading().is_none(), "{c:?}");
    }
}
