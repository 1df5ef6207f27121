//! Where a server's threads waited, by the server's own accounting: time
//! and count per wait event (MySQL and MariaDB's performance_schema,
//! PostgreSQL's `wait_event` sampled from pg_stat_activity), read at a
//! window's edges and kept per operation of the step.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::units::four_digits;

/// One wait event's total: how many waits and how long they took, in µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Wait {
    pub count: f64,
    pub us: f64,
}

/// A server's waits by event name (`wait/io/file/innodb/innodb_log_file`,
/// `IO:WALSync`): totals since the server started, or over one window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Waits {
    /// Where they were read: the view, and how (summed or sampled).
    pub source: String,
    pub events: BTreeMap<String, Wait>,
}

impl Waits {
    /// What happened between two cumulative readings: the events whose
    /// count or time grew (a counter that went backwards, as after a
    /// `TRUNCATE` of the summary, gives nothing rather than a wrap).
    pub fn since(&self, before: &Waits) -> Waits {
        let events = self
            .events
            .iter()
            .filter_map(|(k, a)| {
                let b = before.events.get(k).copied().unwrap_or_default();
                let w = Wait {
                    count: (a.count - b.count).max(0.0),
                    us: (a.us - b.us).max(0.0),
                };
                (w.count > 0.0 || w.us > 0.0).then(|| (k.clone(), w))
            })
            .collect();
        Waits {
            source: self.source.clone(),
            events,
        }
    }

    /// Per unit of the step's work (`work` operations or rows), the
    /// events under `min_us` of waiting per unit left out as noise.
    pub fn per_op(&self, work: f64) -> Option<WaitsPerOp> {
        if work <= 0.0 {
            return None;
        }
        let per_op: BTreeMap<String, Wait> = self
            .events
            .iter()
            .map(|(k, w)| {
                (
                    k.clone(),
                    Wait {
                        count: four_digits(w.count / work),
                        us: four_digits(w.us / work),
                    },
                )
            })
            .filter(|(_, w)| w.us >= MIN_US_PER_OP)
            .collect();
        Some(WaitsPerOp {
            source: self.source.clone(),
            total_us: four_digits(self.events.values().map(|w| w.us).sum::<f64>() / work),
            per_op,
        })
    }
}

/// Waits shorter than this per operation (1 ns) are not kept: a step file
/// would otherwise list hundreds of instruments that never matter.
pub const MIN_US_PER_OP: f64 = 0.001;

/// A step's waits per operation, as its step file keeps them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WaitsPerOp {
    pub source: String,
    /// Every wait's time per operation, the small ones included, in µs.
    pub total_us: f64,
    /// Per event: waits per operation and µs per operation.
    pub per_op: BTreeMap<String, Wait>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(events: &[(&str, f64, f64)]) -> Waits {
        Waits {
            source: "t".into(),
            events: events
                .iter()
                .map(|(k, c, us)| (k.to_string(), Wait { count: *c, us: *us }))
                .collect(),
        }
    }

    #[test]
    fn a_window_is_the_growth_between_readings_and_a_reset_gives_nothing() {
        let before = w(&[("a", 10.0, 100.0), ("b", 5.0, 50.0), ("c", 9.0, 9.0)]);
        let after = w(&[
            ("a", 30.0, 400.0),
            ("b", 5.0, 50.0),
            ("c", 1.0, 1.0),
            ("d", 2.0, 8.0),
        ]);
        let d = after.since(&before);
        assert_eq!(d.events.len(), 2, "{d:?}");
        assert_eq!(
            d.events["a"],
            Wait {
                count: 20.0,
                us: 300.0
            }
        );
        assert_eq!(
            d.events["d"],
            Wait {
                count: 2.0,
                us: 8.0
            }
        );
        let p = d.per_op(100.0).unwrap();
        assert_eq!(p.per_op["a"].us, 3.0);
        assert_eq!(p.total_us, 3.08);
        assert!(d.per_op(0.0).is_none());
    }
}
