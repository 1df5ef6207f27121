//! The adding up of client shares: p99s, skews, window lengths, the server's count.

use super::*;
use crate::results::ShareStep;

/// Share `index` of 2 of a 4-client step: its clients, `events`
/// events of latencies drawn by `latency`, its window at `start`.
fn part(index: u32, start: f64, events: u64, latency: impl Fn(u64) -> u64) -> StepResult {
    let mut s = super::super::tests::sample_step();
    let share = ClientShare { index, count: 2 };
    s.id.at.clients = 4;
    s.failed = None;
    s.events = events;
    s.secs = 10.0;
    s.throughput = events as f64 / 10.0;
    s.per_second = vec![events / 10; 10];
    s.metrics.window_start = Some(start);
    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 2).unwrap();
    for i in 0..events {
        h.record(latency(i)).unwrap();
    }
    s.latency = BTreeMap::from([("event".to_string(), LatencySummary::of(&h, h.max()))]);
    s.client_share = Some(ShareStep {
        clock_offset_ms: Some(0.0),
        ..ShareStep::new(share, 4)
    });
    s
}

#[test]
fn the_merged_p99_is_every_events_not_an_average_of_the_shares() {
    // One share fast, one with a slow tail: the p99 of all 20,000
    // events lies in the slow share's tail.
    let a = part(1, 100.0, 10_000, |i| 100_000 + i);
    let b = part(2, 100.001, 10_000, |i| {
        if i % 50 == 0 {
            9_000_000
        } else {
            120_000
        }
    });
    let m = add_up(vec![a.clone(), b.clone()]).unwrap();
    assert!(m.failed.is_none(), "{:?}", m.failed);
    assert_eq!(m.events, 20_000);
    assert_eq!(m.per_second, vec![2_000; 10]);
    let mut all = hdr::decode(a.latency["event"].hdr.as_ref().unwrap()).unwrap();
    all.add(hdr::decode(b.latency["event"].hdr.as_ref().unwrap()).unwrap())
        .unwrap();
    let p99 = |h: &hdrhistogram::Histogram<u64>| h.value_at_quantile(0.99) as f64 / 1000.0;
    assert_eq!(m.latency["event"].p99_us, p99(&all));
    let mean_of_p99s = (a.latency["event"].p99_us + b.latency["event"].p99_us) / 2.0;
    assert!((m.latency["event"].p99_us - mean_of_p99s).abs() > 100.0);
}

#[test]
fn a_share_whose_window_began_off_marks_the_step_instead_of_being_added() {
    let a = part(1, 100.0, 1_000, |_| 100_000);
    let b = part(2, 100.4, 1_000, |_| 100_000);
    let m = add_up(vec![a.clone(), b.clone()]).unwrap();
    let why = m.failed.unwrap();
    assert!(
        why.contains("0.400 s apart") && why.contains("share 2/2 last"),
        "{why}"
    );
    // The clocks' offsets are taken into account: the same windows, on
    // a host whose clock is 400 ms ahead of the server's, line up.
    let mut b2 = b;
    b2.client_share.as_mut().unwrap().clock_offset_ms = Some(-400.0);
    assert!(add_up(vec![a.clone(), b2]).unwrap().failed.is_none());
    // A client run twice (or missing) does not add up.
    let mut c = part(2, 100.0, 1_000, |_| 100_000);
    c.client_share.as_mut().unwrap().clients = vec![1, 4];
    assert!(add_up(vec![a, c]).is_err());
}

/// Regression (an in-place ./test: merged 7.8% under the shares'
/// sum): a share whose window ran long is its own rate over its own
/// window, and lowers no other share's.
#[test]
fn a_share_whose_window_ran_long_adds_its_rate_not_its_length() {
    let a = part(1, 100.0, 10_000, |_| 100_000);
    let mut b = part(2, 100.0, 10_800, |_| 100_000);
    b.secs = 10.8;
    b.throughput = 1_000.0;
    let m = add_up(vec![a, b]).unwrap();
    assert!(m.failed.is_none(), "{:?}", m.failed);
    assert!((m.throughput - 2_000.0).abs() < 1e-9, "{}", m.throughput);
    // Throughput × length is the work of both.
    assert!(
        (m.throughput * m.secs - 20_800.0).abs() < 1e-6,
        "{}",
        m.secs
    );
    assert_eq!(m.events, 20_800);
}

/// Regression: a fixed 250 ms let 236 ms of a 5 s window (4.7%) be
/// added; the skew is judged against the window's length.
#[test]
fn a_skew_is_judged_against_the_windows_length() {
    let five = |p: &mut StepResult| {
        p.secs = 5.0;
        p.throughput = p.events as f64 / 5.0;
    };
    let a = part(1, 100.0, 1_000, |_| 100_000);
    let mut b = part(2, 100.236, 1_000, |_| 100_000);
    let mut a5 = a.clone();
    five(&mut a5);
    five(&mut b);
    let why = add_up(vec![a5, b]).unwrap().failed.unwrap();
    assert!(why.contains("4.7% of the 5.0 s window"), "{why}");
    // 100 ms of a 10 s window (1%) adds up.
    let c = part(2, 100.1, 1_000, |_| 100_000);
    assert!(add_up(vec![a, c]).unwrap().failed.is_none());
}

/// Regression: the merged server count false-alarmed at −2.8% on client
/// shares whose windows began apart: the leader's counter edges are
/// not the other shares' windows. Its tolerance grows by the skew and
/// the leader's own lateness.
#[test]
fn the_server_count_of_shares_allows_for_their_skew() {
    let mut a = part(1, 100.0, 1_000, |_| 100_000);
    a.metrics.server_count = Some(ServerTally {
        counters: "Com_select".into(),
        of: crate::measure::Counted::Statements,
        server: 1_950.0,
        relbench: 1_000.0,
        tolerance: ServerTally::AGREE_WITHIN,
    });
    a.metrics.interference = Some(crate::metrics::interference::Interference {
        relbench_late_secs: Some(0.086),
        ..Default::default()
    });
    let b = part(2, 100.15, 1_000, |_| 100_000);
    let m = add_up(vec![a, b]).unwrap();
    let t = m.metrics.server_count.unwrap();
    // 10 s windows 150 ms apart, the leader 86 ms late: 1% + 2.36%.
    assert!((t.tolerance - 0.0336).abs() < 1e-9, "{}", t.tolerance);
}
