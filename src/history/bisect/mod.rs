//! Bisect over ordered builds, as Chromium's Pinpoint does it: measure
//! the two ends, then the midpoint of the stretch that holds the change,
//! each round measuring the midpoint beside both ends of its stretch
//! (fresh data, interleaved), and adding repeats where the tests cannot
//! yet tell which end the midpoint is like, up to a cap. A midpoint
//! unlike both ends splits the search: the change came in more than one
//! build. Two builds are compared by the verdicts' test
//! (`measure::paired`): their windows paired within a round, repeat by
//! repeat, so a host that drifts between rounds cancels out.
//!
//! A culprit must replicate: once the search names a pair, the pair is
//! measured again in a fresh interleaved round, and only a change in the
//! same direction, its interval clear of 1 on that round alone, makes it
//! a culprit (exit 0). A pair the search picked from noise beside a busy
//! host does not replicate, and the search ends unclear (exit 4) rather
//! than name a wrong build. This file decides; `rounds.rs` runs the
//! rounds it asks for and weighs what they found.

use serde::Serialize;

use crate::compare::median;
use crate::measure::paired;

/// A significance level for each comparison of two builds.
pub const ALPHA: f64 = 0.05;

#[derive(Debug, Clone)]
pub struct Bisect {
    pub builds: Vec<String>,
    /// Every repeat measured of each build, keyed by its round and its
    /// repeat in the round: builds are compared on the rounds that
    /// measured both, each repeat paired with the other build's of the
    /// same round and number, never across rounds (a busy host drifts
    /// between them).
    pub samples: Vec<Vec<(Key, f64)>>,
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
    /// The culprit being measured again, and the round that does it.
    replicating: Option<(usize, usize)>,
    /// The search is over; only culprits' replications are left.
    searched: bool,
}

/// Where a window was measured: its round, and its repeat in the round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub round: usize,
    pub repeat: u32,
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
    /// After ÷ before (the paired test's estimate) on the rounds that
    /// measured both, and its p.
    pub ratio: f64,
    pub p: f64,
    /// Whether the tests were clear at the cap of repeats.
    pub clear: bool,
    /// What the fresh round that measured the pair again said: its ratio
    /// and p; `None` until it has run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicated: Option<Replication>,
    #[serde(skip)]
    pub after_index: usize,
}

/// A culprit's pair measured again, alone, in a fresh round.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Replication {
    pub ratio: f64,
    pub lo: f64,
    pub hi: f64,
    pub p: f64,
    /// The same direction as the search found, its interval clear of 1.
    pub held: bool,
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
            replicating: None,
            searched: false,
        }
    }

    /// Builds measured at least once.
    pub fn evaluations(&self) -> usize {
        self.asked.iter().filter(|a| **a > 0).count()
    }

    pub fn repeats(&self) -> usize {
        self.samples.iter().map(Vec::len).sum()
    }

    /// Adds what the current round measured of `build`: its quiet
    /// windows' throughputs, each with its repeat in the round.
    pub fn add(&mut self, build: usize, values: &[(u32, f64)]) {
        let round = self.round;
        self.samples[build].extend(values.iter().map(|&(repeat, v)| (Key { round, repeat }, v)));
    }

    /// Each build's values from the rounds that measured all of `builds`.
    fn together(&self, builds: &[usize]) -> Vec<Vec<f64>> {
        self.together_keyed(builds, |_| true)
            .into_iter()
            .map(|v| v.into_iter().map(|x| x.1).collect())
            .collect()
    }

    /// Each build's (key, value) from the rounds `keep` keeps that
    /// measured all of `builds`.
    fn together_keyed(
        &self,
        builds: &[usize],
        keep: impl Fn(usize) -> bool,
    ) -> Vec<Vec<(Key, f64)>> {
        let in_all = |r: usize| {
            keep(r)
                && builds
                    .iter()
                    .all(|&b| self.samples[b].iter().any(|s| s.0.round == r))
        };
        builds
            .iter()
            .map(|&b| {
                self.samples[b]
                    .iter()
                    .filter(|s| in_all(s.0.round))
                    .copied()
                    .collect()
            })
            .collect()
    }

    /// The paired test of `b` against `a` on the rounds `keep` keeps that
    /// measured both (each repeat paired with the same round's repeat of
    /// the same number); `None` with too little to test.
    fn test(&self, a: usize, b: usize, keep: impl Fn(usize) -> bool) -> Option<paired::Test> {
        let t = self.together_keyed(&[a, b], keep);
        let key = |k: Key| (k.round as u32) << 16 | k.repeat;
        let side = |v: &[(Key, f64)]| v.iter().map(|(k, x)| (key(*k), *x)).collect::<Vec<_>>();
        let s = paired::Sample::of(&side(&t[1]), &side(&t[0]))?;
        paired::test(&s, None, ALPHA)
    }

    /// Whether `a` and `b` differ on the rounds that measured both, and p.
    fn differ(&self, a: usize, b: usize) -> (bool, f64) {
        match self.test(a, b, |_| true) {
            Some(t) => (t.p_value < ALPHA, t.p_value),
            None => (false, 1.0),
        }
    }

    /// Whether `a` and `b` differ, `None` when too little of the rounds
    /// that measured both was quiet to test.
    fn tested(&self, a: usize, b: usize) -> Option<bool> {
        self.test(a, b, |_| true).map(|t| t.p_value < ALPHA)
    }

    fn full(&self, b: usize) -> bool {
        self.asked[b] >= self.cap
    }

    /// The next round, from what has been measured.
    pub fn advance(&mut self) -> Next {
        if self.searched {
            return self.replicate();
        }
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
            let next = if hi - lo <= 1 {
                self.pair(lo, hi)
            } else {
                self.split(lo, hi)
            };
            if let Some(next) = next {
                return next;
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
        self.searched = true;
        self.replicate()
    }

    /// Two neighbours holding the change: measured side by side until
    /// clear or at the cap, then a culprit (clear or not); `None` when
    /// decided.
    fn pair(&mut self, lo: usize, hi: usize) -> Option<Next> {
        let t = self.together(&[lo, hi]);
        let (d, p) = self.differ(lo, hi);
        if (t[0].len() < 2 || !d) && !self.full(lo) && !self.full(hi) {
            // Not measured side by side yet, or not clear yet.
            return Some(self.measure(vec![lo, hi]));
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
            return None;
        }
        let m = |v: &[f64]| median(&mut v.to_vec()).unwrap_or(0.0);
        let ratio = self
            .test(lo, hi, |_| true)
            .map_or(m(&t[1]) / m(&t[0]), |t| t.ratio);
        self.culprits.push(Culprit {
            before: self.builds[lo].clone(),
            after: self.builds[hi].clone(),
            ratio,
            p,
            clear: d,
            replicated: None,
            after_index: hi,
        });
        None
    }

    /// A stretch of more than two builds: its midpoint measured beside
    /// both ends, and the stretch replaced by the half (or halves) that
    /// hold the change; `None` when decided.
    fn split(&mut self, lo: usize, hi: usize) -> Option<Next> {
        let mid = (lo + hi) / 2;
        if self.asked[mid] == 0 {
            return Some(self.measure(vec![lo, mid, hi]));
        }
        let (to_lo, to_hi) = (self.tested(lo, mid), self.tested(mid, hi));
        if (to_lo.is_none() || to_hi.is_none()) && !self.full(mid) {
            // A comparison with too few quiet windows in the rounds
            // that measured both says nothing: "like" read off it sent
            // the search the wrong way beside a busy host.
            return Some(self.measure(vec![lo, mid, hi]));
        }
        let (like_lo, like_hi) = (to_lo != Some(true), to_hi != Some(true));
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
                    return Some(self.measure(vec![lo, mid, hi]));
                }
                let few = t3.iter().any(|v| v.len() < MIN_QUIET);
                if few {
                    self.unmeasured = true;
                }
                // The ends tested again on the rounds since the
                // stretch was chosen (those that measured the
                // midpoint): fresh data, not the round whose noise may
                // have set them apart.
                let since = |r: usize| self.samples[mid].iter().any(|s| s.0.round == r);
                let fresh = self.test(lo, hi, since);
                if let Some(f) = fresh.filter(|f| !few && f.p_value >= ALPHA) {
                    // A split, or a wrong turn, from one round: the
                    // stretch holds no change to look for, and is no
                    // guess to carry into the verdict.
                    self.notes.push(format!(
                        "{} and {} do not differ on the rounds that measured {} (×{:.3}, p {:.3}): \
                         nothing between them to look for",
                        self.builds[lo], self.builds[hi], self.builds[mid], f.ratio, f.p_value
                    ));
                    return None;
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
        None
    }

    /// Each clear culprit's pair measured again in a fresh round of its
    /// own, then judged on that round alone: a change in the direction
    /// the search found, its interval clear of 1, or not a culprit.
    fn replicate(&mut self) -> Next {
        if let Some((ci, round)) = self.replicating.take() {
            let c = &self.culprits[ci];
            let (lo, hi) = (
                self.builds
                    .iter()
                    .position(|b| *b == c.before)
                    .expect("a build"),
                c.after_index,
            );
            let found_down = c.ratio < 1.0;
            let r = self.test(lo, hi, |r| r == round).map(|t| Replication {
                ratio: t.ratio,
                lo: t.interval.lo,
                hi: t.interval.hi,
                p: t.p_value,
                held: if found_down {
                    t.interval.hi < 1.0
                } else {
                    t.interval.lo > 1.0
                },
            });
            let c = &mut self.culprits[ci];
            match r {
                Some(r) => {
                    if !r.held {
                        self.notes.push(format!(
                            "{} → {}: ×{:.3} in the search, ×{:.3} ({:.3}–{:.3}) measured again in a fresh round: it did not replicate, not a culprit",
                            c.before, c.after, c.ratio, r.ratio, r.lo, r.hi
                        ));
                        c.clear = false;
                    }
                    c.replicated = Some(r);
                }
                None => {
                    self.notes.push(format!(
                        "{} → {}: the fresh round that measured it again had too few quiet windows to test; not a culprit",
                        c.before, c.after
                    ));
                    c.clear = false;
                    self.unmeasured = true;
                }
            }
        }
        let Some(ci) = self
            .culprits
            .iter()
            .position(|c| c.clear && c.replicated.is_none())
        else {
            return Next::Done;
        };
        let c = &self.culprits[ci];
        let lo = self
            .builds
            .iter()
            .position(|b| *b == c.before)
            .expect("a build");
        let next = self.measure(vec![lo, c.after_index]);
        self.replicating = Some((ci, self.round));
        next
    }

    /// A culprit's evidence found wanting after the search (its costs per
    /// operation unchanged and its p near the level): said, and not named.
    pub fn doubt(&mut self, culprit: usize, why: String) {
        if let Some(c) = self.culprits.get_mut(culprit) {
            c.clear = false;
            self.notes
                .push(format!("{} → {}: {why}; not a culprit", c.before, c.after));
        }
    }

    /// How the search ended (call once [`Bisect::advance`] is `Done`).
    pub fn outcome(&self) -> Outcome {
        let replicated = |c: &Culprit| c.clear && c.replicated.is_some_and(|r| r.held);
        if self.culprits.iter().any(replicated)
            && self.culprits.iter().all(|c| !c.clear || replicated(c))
            && !self.unmeasured
            && !self.guessed
        {
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

#[cfg(test)]
mod tests;

pub mod rounds;
