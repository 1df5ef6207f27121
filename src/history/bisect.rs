//! Bisect over ordered builds, as Chromium's Pinpoint does it: measure
//! the two ends, then the midpoint of the stretch that holds the change,
//! each round measuring the midpoint beside both ends of its stretch
//! (fresh data, interleaved), and adding repeats where the tests cannot
//! yet tell which end the midpoint is like, up to a cap. A midpoint
//! unlike both ends splits the search: the change came in more than one
//! build. This file decides; `cli` runs the rounds it asks for.

use serde::Serialize;

use crate::compare::median;
use crate::measure::stats;

/// A significance level for each comparison of two builds.
pub const ALPHA: f64 = 0.05;

#[derive(Debug, Clone)]
pub struct Bisect {
    pub builds: Vec<String>,
    /// Every repeat measured of each build, with the round it was
    /// measured in: builds are compared on the rounds that measured both,
    /// interleaved, never across rounds (a busy host drifts between them).
    pub samples: Vec<Vec<(usize, f64)>>,
    /// The round being measured (each `Measure` starts one).
    round: usize,
    /// Repeats asked of each build, quiet or not: the cap counts these,
    /// so a host that disturbs every window ends the search, not loops.
    asked: Vec<usize>,
    /// Repeats a build gets in a round.
    pub round_repeats: u32,
    /// The most repeats any build gets.
    pub cap: usize,
    /// Stretches still to search: (good-like end, bad-like end).
    todo: Vec<(usize, usize)>,
    pub culprits: Vec<Culprit>,
    pub notes: Vec<String>,
    started: bool,
    /// A comparison the search rested on had fewer than two quiet
    /// repeats on a side at the cap: the host, not the builds, decided.
    unmeasured: bool,
    /// A midpoint could not be told from either end at the cap and was
    /// taken as the nearer: a culprit found past it is a guess.
    guessed: bool,
}

/// How a search ended, and `relbench bisect`'s exit code for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A culprit whose change is clear (exit 0).
    Found,
    /// The two ends do not differ on enough quiet repeats (exit 1).
    NoChange,
    /// A candidate, but the tests were not clear at the cap of repeats
    /// (exit 4): more repeats, or a quieter host.
    Unclear,
    /// Too few quiet windows to compare at the cap: this host could not
    /// measure the builds (exit 5).
    Unmeasured,
}

impl Outcome {
    pub fn code(self) -> u8 {
        match self {
            Outcome::Found => 0,
            Outcome::NoChange => 1,
            Outcome::Unclear => 4,
            Outcome::Unmeasured => 5,
        }
    }
}

/// Fewer quiet repeats than this on a side and two builds are not
/// compared: a rank test of one value against one can never be
/// significant, and one window is at the host's mercy.
pub const MIN_QUIET: usize = 2;

/// A build the change came in.
#[derive(Debug, Clone, Serialize)]
pub struct Culprit {
    /// The last build like the good end, and the first like the bad end.
    pub before: String,
    pub after: String,
    /// Median after ÷ median before, and the rank-sum p of the two.
    pub ratio: f64,
    pub p: f64,
    /// Whether the tests were clear at the cap of repeats.
    pub clear: bool,
    #[serde(skip)]
    pub after_index: usize,
}

/// What to measure next, or the end.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Measure these builds together, `repeats` each, interleaved.
    Measure {
        builds: Vec<usize>,
        repeats: u32,
    },
    Done,
}

impl Bisect {
    /// A search of `builds` in order, the first good and the last bad.
    pub fn new(builds: Vec<String>, round_repeats: u32, cap: usize) -> Bisect {
        let n = builds.len();
        Bisect {
            builds,
            samples: vec![Vec::new(); n],
            round: 0,
            asked: vec![0; n],
            round_repeats,
            cap,
            todo: Vec::new(),
            culprits: Vec::new(),
            notes: Vec::new(),
            started: false,
            unmeasured: false,
            guessed: false,
        }
    }

    /// Builds measured at least once.
    pub fn evaluations(&self) -> usize {
        self.asked.iter().filter(|a| **a > 0).count()
    }

    pub fn repeats(&self) -> usize {
        self.samples.iter().map(Vec::len).sum()
    }

    /// Adds what the current round measured of `build`.
    pub fn add(&mut self, build: usize, values: &[f64]) {
        let r = self.round;
        self.samples[build].extend(values.iter().map(|v| (r, *v)));
    }

    /// Each build's values from the rounds that measured all of `builds`.
    fn together(&self, builds: &[usize]) -> Vec<Vec<f64>> {
        let in_all = |r: usize| {
            builds
                .iter()
                .all(|&b| self.samples[b].iter().any(|s| s.0 == r))
        };
        builds
            .iter()
            .map(|&b| {
                self.samples[b]
                    .iter()
                    .filter(|s| in_all(s.0))
                    .map(|s| s.1)
                    .collect()
            })
            .collect()
    }

    /// Whether `a` and `b` differ on the rounds that measured both, and p.
    fn differ(&self, a: usize, b: usize) -> (bool, f64) {
        let t = self.together(&[a, b]);
        let p = stats::rank_sum_p(&t[0], &t[1]).unwrap_or(1.0);
        (p < ALPHA, p)
    }

    fn full(&self, b: usize) -> bool {
        self.asked[b] >= self.cap
    }

    /// The next round, from what has been measured.
    pub fn advance(&mut self) -> Next {
        let (g, b) = (0, self.builds.len() - 1);
        if !self.started {
            if self.asked[g] == 0 || self.asked[b] == 0 {
                return self.measure(vec![g, b]);
            }
            let (d, p) = self.differ(g, b);
            if !d {
                if !self.full(g) && !self.full(b) {
                    return self.measure(vec![g, b]);
                }
                let t = self.together(&[g, b]);
                if t.iter().any(|v| v.len() < MIN_QUIET) {
                    self.unmeasured = true;
                    self.notes.push(format!(
                        "{} and {} could not be measured on this host: {} and {} quiet repeats of {} asked each \
                         (the others disturbed, stalled or too short to judge); run again on a quieter host",
                        self.builds[g],
                        self.builds[b],
                        t[0].len(),
                        t[1].len(),
                        self.asked[g]
                    ));
                    return Next::Done;
                }
                self.notes.push(format!(
                    "{} and {} do not differ at {} quiet repeats each of {} (p {:.3}): nothing to bisect",
                    self.builds[g],
                    self.builds[b],
                    self.samples[g].len().min(self.samples[b].len()),
                    self.asked[g],
                    p
                ));
                return Next::Done;
            }
            self.started = true;
            self.todo.push((g, b));
        }
        while let Some(&(lo, hi)) = self.todo.last() {
            if hi - lo <= 1 {
                let t = self.together(&[lo, hi]);
                let (d, p) = self.differ(lo, hi);
                if (t[0].len() < 2 || !d) && !self.full(lo) && !self.full(hi) {
                    // Not measured side by side yet, or not clear yet.
                    return self.measure(vec![lo, hi]);
                }
                self.todo.pop();
                if t.iter().any(|v| v.len() < MIN_QUIET) {
                    self.unmeasured = true;
                    self.notes.push(format!(
                        "{} → {}: {} and {} quiet repeats at the cap: could not be measured on this host",
                        self.builds[lo],
                        self.builds[hi],
                        t[0].len(),
                        t[1].len()
                    ));
                    continue;
                }
                let m = |v: &[f64]| median(&mut v.to_vec()).unwrap_or(0.0);
                self.culprits.push(Culprit {
                    before: self.builds[lo].clone(),
                    after: self.builds[hi].clone(),
                    ratio: m(&t[1]) / m(&t[0]),
                    p,
                    clear: d,
                    after_index: hi,
                });
                continue;
            }
            let mid = (lo + hi) / 2;
            if self.asked[mid] == 0 {
                return self.measure(vec![lo, mid, hi]);
            }
            let (like_lo, like_hi) = (!self.differ(lo, mid).0, !self.differ(mid, hi).0);
            // Where the midpoint lies between the ends, 0 (the good end's
            // level) to 1 (the bad end's), on the rounds of all three.
            let t3 = self.together(&[lo, mid, hi]);
            let ln = |v: &[f64]| median(&mut v.to_vec()).unwrap_or(1.0).ln();
            let (ml, mm, mh) = (ln(&t3[0]), ln(&t3[1]), ln(&t3[2]));
            let t = if (mh - ml).abs() > 0.0 {
                (mm - ml) / (mh - ml)
            } else {
                0.5
            };
            self.todo.pop();
            match (like_lo, like_hi) {
                (true, false) => self.todo.push((mid, hi)),
                (false, true) => self.todo.push((lo, mid)),
                (false, false) if (0.2..=0.8).contains(&t) => {
                    // Unlike both ends: part of the change before the
                    // midpoint, part after.
                    self.todo.push((mid, hi));
                    self.todo.push((lo, mid));
                }
                (false, false) => self.todo.push(if t < 0.5 { (mid, hi) } else { (lo, mid) }),
                (true, true) => {
                    // Like both: not yet clear. More repeats, or the
                    // nearer end at the cap.
                    if !self.full(mid) {
                        self.todo.push((lo, hi));
                        return self.measure(vec![lo, mid, hi]);
                    }
                    if t3.iter().any(|v| v.len() < MIN_QUIET) {
                        self.unmeasured = true;
                    }
                    self.guessed = true;
                    self.notes.push(format!(
                        "{} could not be told from either end at {} repeats; taken as {} (the nearer)",
                        self.builds[mid],
                        self.samples[mid].len(),
                        if t < 0.5 { "good" } else { "bad" }
                    ));
                    self.todo.push(if t < 0.5 { (mid, hi) } else { (lo, mid) });
                }
            }
        }
        self.culprits.sort_by_key(|c| c.after_index);
        // A pair that did not differ at the cap beside one that did was a
        // split the noise made: said, not named.
        if self.culprits.iter().any(|c| c.clear) {
            let (clear, unclear): (Vec<Culprit>, Vec<Culprit>) =
                self.culprits.drain(..).partition(|c| c.clear);
            for c in unclear {
                self.notes.push(format!(
                    "{} → {}: no change at the cap of repeats (p {:.3}); not a culprit",
                    c.before, c.after, c.p
                ));
            }
            self.culprits = clear;
        }
        Next::Done
    }

    /// How the search ended (call once [`Bisect::advance`] is `Done`).
    pub fn outcome(&self) -> Outcome {
        if self.culprits.iter().any(|c| c.clear) && !self.unmeasured && !self.guessed {
            Outcome::Found
        } else if self.unmeasured {
            Outcome::Unmeasured
        } else if self.culprits.is_empty() {
            Outcome::NoChange
        } else {
            Outcome::Unclear
        }
    }

    fn measure(&mut self, builds: Vec<usize>) -> Next {
        self.round += 1;
        for &b in &builds {
            self.asked[b] += self.round_repeats as usize;
        }
        Next::Measure {
            builds,
            repeats: self.round_repeats,
        }
    }
}

/// Two sets too small for the rank test to reach [`ALPHA`] differ when
/// their ranges do not overlap and the nearer values lie this far apart
/// (as a ratio): past every A/A floor measured on these hosts (1–8%).
pub const FAR_APART: f64 = 1.25;

/// The smallest two-sided p the exact rank-sum test can give for sets of
/// `n` and `m` values: 2 ÷ C(n + m, n).
fn smallest_p(n: usize, m: usize) -> f64 {
    let (k, all) = (n.min(m), n + m);
    let ways = (0..k).fold(1.0, |c, i| c * (all - i) as f64 / (i + 1) as f64);
    (2.0 / ways).min(1.0)
}

/// Whether `a` and `b` differ, and how that was decided: the rank test
/// where their sizes can reach [`ALPHA`], and [`FAR_APART`] below that.
fn apart(a: &[f64], b: &[f64]) -> (bool, String) {
    if smallest_p(a.len(), b.len()) < ALPHA {
        let p = stats::rank_sum_p(a, b).unwrap_or(1.0);
        return (p < ALPHA, format!("p {p:.3}"));
    }
    let (lo_a, hi_a) = (
        a.iter().copied().fold(f64::MAX, f64::min),
        a.iter().copied().fold(0.0, f64::max),
    );
    let (lo_b, hi_b) = (
        b.iter().copied().fold(f64::MAX, f64::min),
        b.iter().copied().fold(0.0, f64::max),
    );
    let gap = if hi_a < lo_b {
        lo_b / hi_a.max(1e-12)
    } else if hi_b < lo_a {
        lo_a / hi_b.max(1e-12)
    } else {
        1.0
    };
    let how = if gap > 1.0 {
        format!("×{} apart", crate::measure::units::fmt_ratio(gap))
    } else {
        "overlapping".into()
    };
    (
        gap >= FAR_APART,
        format!("{how} at {} and {} repeats", a.len(), b.len()),
    )
}

/// `bisect-check`'s answer for `git bisect run`: 0 like the good build,
/// 1 like the bad one, 125 when it cannot tell (or the step did not run).
/// Unlike both (another run's level, as runs on a busy host drift), it is
/// the nearer one when it lies in the outer quarter towards it. Sets too
/// small for the rank test are told apart by [`FAR_APART`].
pub fn check(now: &[f64], good: &[f64], bad: &[f64]) -> (u8, String) {
    if now.is_empty() || good.is_empty() || bad.is_empty() {
        return (
            125,
            format!(
                "the step has no quiet window on one side (now {}, good {}, bad {}): this host could not measure it",
                now.len(),
                good.len(),
                bad.len()
            ),
        );
    }
    let m = |v: &[f64]| median(&mut v.to_vec()).unwrap_or(0.0);
    let (mn, mg, mb) = (m(now), m(good), m(bad));
    let ((dg, hg), (db, hb)) = (apart(now, good), apart(now, bad));
    let say = format!("median {mn:.1} against good {mg:.1} ({hg}) and bad {mb:.1} ({hb})");
    let (gb, how) = apart(good, bad);
    if !gb {
        return (
            125,
            format!("cannot tell: the good and bad builds' results do not differ ({how}); {say}"),
        );
    }
    let t = (mn / mg).ln() / (mb / mg).ln();
    match (dg, db) {
        (false, true) => (0, format!("good: {say}")),
        (true, false) => (1, format!("bad: {say}")),
        (true, true) if t <= 0.25 => (0, format!("good (nearer the good build): {say}")),
        (true, true) if t >= 0.75 => (1, format!("bad (nearer the bad build): {say}")),
        _ => (125, format!("cannot tell: {say}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a bisect on a made-up measure: build i measures `level(i)`
    /// with a small spread.
    fn simulate(n: usize, level: impl Fn(usize) -> f64) -> Bisect {
        simulate_drifting(n, level, |_| 1.0)
    }

    /// As `simulate`, every round's figures scaled by `drift(round)`: a
    /// host whose speed moves between rounds.
    fn simulate_drifting(
        n: usize,
        level: impl Fn(usize) -> f64,
        drift: impl Fn(usize) -> f64,
    ) -> Bisect {
        let names = (0..n).map(|i| format!("b{i}")).collect();
        let mut b = Bisect::new(names, 4, 12);
        let mut round = 0;
        while let Next::Measure { builds, repeats } = b.advance() {
            round += 1;
            for x in builds {
                let v: Vec<f64> = (0..repeats)
                    .map(|r| {
                        level(x) * drift(round) * (1.0 + ((r as usize + round) % 3) as f64 * 0.002)
                    })
                    .collect();
                b.add(x, &v);
            }
        }
        b
    }

    #[test]
    fn a_host_drifting_between_rounds_does_not_make_a_second_culprit() {
        // Rounds alternately 15% slower (the comparison across rounds named a second culprit): builds of one level
        // would look apart; within a round they do not.
        for k in [3, 8, 11] {
            let b = simulate_drifting(
                16,
                |i| if i >= k { 90.0 } else { 100.0 },
                |r| if r % 2 == 0 { 0.85 } else { 1.0 },
            );
            let after: Vec<&str> = b.culprits.iter().map(|c| c.after.as_str()).collect();
            assert_eq!(after, [format!("b{k}")], "{:?} {:?}", b.culprits, b.notes);
        }
    }

    #[test]
    fn one_culprit_in_sixteen_builds_takes_six_evaluations() {
        for k in 1..16 {
            let b = simulate(16, |i| if i >= k { 90.0 } else { 100.0 });
            assert_eq!(b.culprits.len(), 1, "k {k}: {:?}", b.culprits);
            assert_eq!(b.culprits[0].after, format!("b{k}"));
            assert!(
                b.evaluations() <= 6,
                "k {k}: {} evaluations",
                b.evaluations()
            );
        }
    }

    #[test]
    fn a_change_in_two_builds_names_both() {
        let b = simulate(16, |i| {
            if i >= 11 {
                80.0
            } else if i >= 5 {
                90.0
            } else {
                100.0
            }
        });
        let after: Vec<&str> = b.culprits.iter().map(|c| c.after.as_str()).collect();
        assert_eq!(after, ["b5", "b11"], "{:?}", b.culprits);
    }

    #[test]
    fn a_host_that_disturbs_every_window_ends_the_search() {
        let names = (0..8).map(|i| format!("b{i}")).collect();
        let mut b = Bisect::new(names, 4, 12);
        let mut rounds = 0;
        while let Next::Measure { builds, .. } = b.advance() {
            rounds += 1;
            assert!(rounds < 50, "the search does not end");
            for x in builds {
                b.add(x, &[]); // every window left out
            }
        }
        assert!(b.culprits.is_empty());
        // Regression: "b1 and b8 do not differ … nothing to bisect" was
        // said when 21 of 24 windows could not be measured.
        assert!(
            b.notes[0].contains("could not be measured on this host"),
            "{:?}",
            b.notes
        );
        assert_eq!(b.outcome(), Outcome::Unmeasured);
        assert_eq!(b.outcome().code(), 5);
    }

    #[test]
    fn ends_that_do_not_differ_stop_with_a_note() {
        let b = simulate(8, |_| 100.0);
        assert!(b.culprits.is_empty());
        assert!(b.notes[0].contains("do not differ"), "{:?}", b.notes);
        assert_eq!(b.outcome(), Outcome::NoChange);
    }

    /// Regression: "culprit: b5 (after b4): point-query ×750.528, p 0.6667
    /// (not clear at the cap of repeats)" exited 0, from a pair whose
    /// quiet windows were one against a few.
    #[test]
    fn a_culprit_on_too_few_quiet_windows_is_no_verdict() {
        let names = (0..8).map(|i| format!("b{i}")).collect();
        let mut b = Bisect::new(names, 4, 12);
        let mut b4_kept = 0;
        while let Next::Measure { builds, repeats } = b.advance() {
            for x in builds {
                let level = if x >= 5 { 50.0 } else { 100.0 };
                // b4 keeps one quiet window in all, the others every one.
                let n = if x == 4 {
                    1 - b4_kept.min(1)
                } else {
                    repeats as usize
                };
                if x == 4 {
                    b4_kept += n;
                }
                let v: Vec<f64> = (0..n).map(|r| level + r as f64 * 0.1).collect();
                b.add(x, &v);
            }
        }
        assert_ne!(
            b.outcome(),
            Outcome::Found,
            "{:?} {:?}",
            b.culprits,
            b.notes
        );
        assert_ne!(b.outcome().code(), 0);
    }

    #[test]
    fn a_clear_culprit_is_found_and_exits_0() {
        let b = simulate(8, |i| if i >= 6 { 80.0 } else { 100.0 });
        assert_eq!(b.outcome(), Outcome::Found, "{:?}", b.notes);
        assert_eq!(b.culprits[0].after, "b6");
    }

    /// Regression: bisect-check said 125 (cannot tell) for a 2–5× good/bad
    /// difference at 1–2 quiet repeats: a rank test of 2 against 2 can
    /// never reach p < 0.05.
    #[test]
    fn bisect_check_tells_far_apart_builds_at_one_or_two_repeats() {
        assert_eq!(check(&[101.0], &[100.0], &[40.0]).0, 0);
        assert_eq!(check(&[41.0], &[100.0], &[40.0]).0, 1);
        assert_eq!(check(&[98.0, 103.0], &[100.0, 99.0], &[20.0, 45.0]).0, 0);
        // Close ends at few repeats stay "cannot tell".
        assert_eq!(check(&[100.0], &[100.0], &[90.0]).0, 125);
        // Nothing quiet on a side: cannot tell, and says why.
        let (code, why) = check(&[], &[100.0], &[40.0]);
        assert_eq!(code, 125);
        assert!(why.contains("could not measure"), "{why}");
        assert!((smallest_p(2, 2) - 1.0 / 3.0).abs() < 1e-9);
        assert!((smallest_p(4, 4) - 2.0 / 70.0).abs() < 1e-9);
    }

    #[test]
    fn check_answers_as_git_bisect_run_expects() {
        let good = [100.0, 101.0, 99.0, 100.5];
        let bad = [90.0, 91.0, 89.5, 90.5];
        assert_eq!(check(&[100.2, 99.8, 100.9, 99.4], &good, &bad).0, 0);
        assert_eq!(check(&[90.2, 89.8, 90.9, 90.4], &good, &bad).0, 1);
        assert_eq!(check(&[], &good, &bad).0, 125);
        // Another run's level, unlike both but near the bad one.
        assert_eq!(check(&[88.0, 88.5, 87.9, 88.2], &good, &bad).0, 1);
        assert_eq!(check(&[95.0, 95.2, 94.9, 95.1], &good, &bad).0, 125);
        assert_eq!(check(&[95.0, 95.2, 94.9, 95.1], &good, &good).0, 125);
    }
}
