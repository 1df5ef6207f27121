//! Open-loop pacing for a connection that runs at a fixed rate: event k is
//! due at t0 + k / rate, whatever the server did with event k − 1. A late
//! server shows as a missed rate and as response times counted from when
//! each event was due, not as a slower client.

use std::time::{Duration, Instant};

/// What the pacer says before an event.
#[derive(Debug, PartialEq)]
pub enum Pace {
    /// Run the event now; it was due at `due`, `lag` ago.
    Go { due: Instant, lag: Duration },
    /// Not due yet: it slept a slice, so the caller checks for a stop and
    /// asks again.
    Wait,
    /// The next event is due after the step ends.
    Done,
}

/// The schedule of one paced connection.
pub struct Pacer {
    interval: Duration,
    due: Instant,
    /// Bursts: the events of each second run back to back from its
    /// start, then the connection waits for the next (iibench's
    /// `inserts_per_second`); `(events a second, the start, events run)`.
    burst: Option<(u64, Instant, u64)>,
}

/// The longest sleep between checks for a stop.
const SLICE: Duration = Duration::from_millis(50);

impl Pacer {
    /// Events per second from `t0`.
    pub fn new(rate: f64, t0: Instant) -> Self {
        Pacer {
            interval: Duration::from_secs_f64(1.0 / rate),
            due: t0,
            burst: None,
        }
    }

    /// `rate` events a second in a burst at the start of each second (a
    /// rate under one a second, or not a whole number, is paced evenly).
    pub fn bursts(rate: f64, t0: Instant) -> Self {
        let mut p = Pacer::new(rate, t0);
        if rate >= 1.0 && rate.fract() == 0.0 {
            p.burst = Some((rate as u64, t0, 0));
        }
        p
    }

    /// Sleeps (a slice at most) toward the next event's time, or says it is
    /// due. A late event runs at once without moving the schedule.
    pub fn next(&mut self, end: Instant) -> Pace {
        if let Some((n, t0, k)) = self.burst {
            // This event's second; inside it, one after another.
            self.due = t0 + Duration::from_secs(k / n);
        }
        // Nothing due before the end: no point sleeping toward it.
        if self.due >= end {
            return Pace::Done;
        }
        let now = Instant::now();
        if self.due > now {
            std::thread::sleep((self.due - now).min(SLICE));
            if Instant::now() < self.due {
                return Pace::Wait;
            }
        }
        let due = self.due;
        if let Some((_, _, k)) = self.burst.as_mut() {
            // Each event of a burst is timed from its own start (iibench
            // times each insert), the burst's lag from the second's.
            *k += 1;
            let now = Instant::now();
            return Pace::Go {
                due: now,
                lag: now.saturating_duration_since(due),
            };
        }
        self.due += self.interval;
        Pace::Go {
            due,
            lag: Instant::now().saturating_duration_since(due),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_runs_a_seconds_events_at_its_start_then_waits() {
        // Two events a second (iibench's 100 rows/s in commits of 50).
        let t0 = Instant::now();
        let mut p = Pacer::bursts(2.0, t0);
        let end = t0 + Duration::from_millis(2500);
        let mut starts = Vec::new();
        while let Some(d) = loop {
            match p.next(end) {
                Pace::Go { due, .. } => break Some(due),
                Pace::Wait => continue,
                Pace::Done => break None,
            }
        } {
            starts.push(d.saturating_duration_since(t0).as_millis());
        }
        assert_eq!(starts.len(), 6, "{starts:?}");
        // Two at once at 0, 1 and 2 s.
        for (i, s) in starts.iter().enumerate() {
            let second = (i / 2) as u128 * 1000;
            assert!((second..second + 40).contains(s), "{starts:?}");
        }
    }

    #[test]
    fn a_late_event_runs_at_once_and_keeps_the_schedule() {
        let t0 = Instant::now() - Duration::from_millis(35);
        let mut p = Pacer::new(100.0, t0);
        let end = t0 + Duration::from_secs(1);
        // 35 ms late: events due at 0, 10, 20 and 30 ms run back to back,
        // each with its own lag; the one due at 40 ms waits.
        for k in 0..4 {
            match p.next(end) {
                Pace::Go { due, lag } => {
                    assert_eq!(due, t0 + Duration::from_millis(10 * k));
                    assert!(lag >= Duration::from_millis(35 - 10 * k), "{k}: {lag:?}");
                }
                other => panic!("{k}: {other:?}"),
            }
        }
        let mut waited = 0;
        loop {
            match p.next(end) {
                Pace::Wait => waited += 1,
                Pace::Go { due, .. } => {
                    assert_eq!(due, t0 + Duration::from_millis(40));
                    break;
                }
                Pace::Done => panic!("the step has not ended"),
            }
        }
        assert!(waited <= 1, "slept in one slice: {waited}");
    }

    #[test]
    fn nothing_is_due_after_the_end() {
        let t0 = Instant::now();
        let mut p = Pacer::new(10.0, t0);
        assert!(matches!(
            p.next(t0 + Duration::from_millis(50)),
            Pace::Go { .. }
        ));
        assert_eq!(p.next(t0 + Duration::from_millis(50)), Pace::Done);
    }
}
