//! Where a window's steady part begins: the MSER-5 truncation rule
//! (White, Simulation 1997; Franklin & White 2008) on its per-second
//! throughput, so a report can say how much of a window was still warming
//! up, and refuse to judge a window that never settled.
//!
//! MSER batches the series into means of five seconds and picks the
//! truncation point d that minimises the squared standard error of the
//! mean of what is left, Σ(zᵢ − z̄_d)² ⁄ (k − d)²: cutting a transient
//! lowers the spread faster than it lowers the count. Where the minimum
//! lies in the second half of the window, the rule's own verdict is that
//! the window is too short to hold a steady part. That alone fires on
//! pure noise now and then (the last few batches can happen to lie close
//! together), so a window is called *not steady* only when, besides, its
//! throughput moved one way across it: the last third's mean at least
//! [`TREND`] from the first third's, with the middle third between them.
//!
//! Windows under 25 seconds are batched by the second (MSER-1), and
//! windows under [`MIN_SECONDS`] are not judged at all.

/// Fewest whole seconds a window needs for its steadiness to be judged.
pub const MIN_SECONDS: usize = 10;

/// How far the last third of a window must lie from its first third (and
/// a cut part from the steady part), as a share, to count as a trend
/// rather than noise: at 5%, seconds that lean on each other (AR(1), r =
/// 0.5, ±4%) drifted that far one way by chance in the tests below.
pub const TREND: f64 = 0.10;

/// What MSER-5 found in one window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steady {
    /// Seconds at the window's start before its steady part.
    pub cut_secs: usize,
    /// The cut part lies further from the steady part than the steady
    /// seconds' own noise can put it (four standard errors of the cut's
    /// mean).
    pub cut_beyond_noise: bool,
    /// The steady part's mean against the cut part's, − 1 (0 with no cut).
    pub cut_shift: f64,
    /// The last third's mean against the first third's, − 1.
    pub trend: f64,
    /// No steady part: what is left after the cut still moved one way
    /// (a trend past [`TREND`] and the seconds' noise).
    pub never_steady: bool,
}

impl Steady {
    /// The cut worth saying: a cut whose seconds differ from the steady
    /// part by [`TREND`] and by more than the seconds' noise (a cut of a
    /// few seconds of noise is not a warm-up).
    pub fn warming_secs(&self) -> usize {
        if self.cut_secs > 0 && self.cut_shift.abs() >= TREND && self.cut_beyond_noise {
            self.cut_secs
        } else {
            0
        }
    }

    /// `still warming up: throughput rose 12% over the window`.
    pub fn describe(&self) -> String {
        format!(
            "still warming up: throughput {} {:.0}% over the window",
            if self.trend >= 0.0 { "rose" } else { "fell" },
            self.trend.abs() * 100.0
        )
    }
}

/// MSER's truncation point over batch means `z`, searched in the first
/// half (`0..=k/2`): past it the statistic rests on a few batches and
/// falls by chance, so a minimum on the boundary means "no steady part
/// found in the window".
fn truncation(z: &[f64]) -> usize {
    let k = z.len();
    let mut best = (0, f64::INFINITY);
    for d in 0..=k / 2 {
        let tail = &z[d..];
        let n = tail.len() as f64;
        let mean = tail.iter().sum::<f64>() / n;
        let ss: f64 = tail.iter().map(|v| (v - mean) * (v - mean)).sum();
        let stat = ss / (n * n);
        // Strictly less: of equal statistics the earliest cut wins.
        if stat < best.1 {
            best = (d, stat);
        }
    }
    best.0
}

/// The seconds' own noise as the standard error of a mean of `n` of
/// them: the spread of what a quadratic through the window leaves (a
/// warm-up, a ramp or its bend is the fit's, not noise), and the lag-1
/// correlation r of that rest (0 to 0.9) for seconds that lean on each
/// other: the mean of n seconds has n·(1 − r)/(1 + r) independent ones.
fn noise_se(seconds: &[f64], n: usize) -> f64 {
    let rest = residuals(seconds);
    let ss: f64 = rest.iter().map(|v| v * v).sum();
    if ss <= 0.0 || rest.len() < 4 {
        return 0.0;
    }
    let r = (rest.windows(2).map(|w| w[0] * w[1]).sum::<f64>() / ss).clamp(0.0, 0.9);
    let sd = (ss / (rest.len() as f64 - 3.0)).sqrt();
    sd * ((1.0 + r) / (1.0 - r) / n as f64).sqrt()
}

/// What a least-squares quadratic in time leaves of the seconds.
fn residuals(y: &[f64]) -> Vec<f64> {
    let n = y.len() as f64;
    // Centred time keeps the normal equations well conditioned.
    let t: Vec<f64> = (0..y.len()).map(|i| i as f64 - (n - 1.0) / 2.0).collect();
    let sum = |f: &dyn Fn(usize) -> f64| (0..y.len()).map(f).sum::<f64>();
    let (s2, s4) = (sum(&|i| t[i].powi(2)), sum(&|i| t[i].powi(4)));
    let (sy, sty, st2y) = (
        sum(&|i| y[i]),
        sum(&|i| t[i] * y[i]),
        sum(&|i| t[i] * t[i] * y[i]),
    );
    // Odd moments of centred time vanish: b from Σty alone, a and c from
    // [n s2; s2 s4]·[a c] = [Σy Σt²y].
    let b = if s2 > 0.0 { sty / s2 } else { 0.0 };
    let det = n * s4 - s2 * s2;
    let (a, c) = if det.abs() > 1e-12 {
        ((sy * s4 - s2 * st2y) / det, (n * st2y - s2 * sy) / det)
    } else {
        (sy / n, 0.0)
    };
    (0..y.len())
        .map(|i| y[i] - (a + b * t[i] + c * t[i] * t[i]))
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// The last third's mean against the first third's, − 1, and whether
/// that is a trend: at least [`TREND`], one way through the middle third,
/// and past four standard errors of the difference of the two means.
fn trend_of(seconds: &[f64]) -> (f64, bool) {
    let n = seconds.len();
    let third = n / 3;
    let (first, middle, last) = (
        mean(&seconds[..third]),
        mean(&seconds[third..n - third]),
        mean(&seconds[n - third..]),
    );
    if first <= 0.0 {
        return (f64::INFINITY, last > 0.0);
    }
    let trend = last / first - 1.0;
    let one_way = (first <= middle && middle <= last) || (first >= middle && middle >= last);
    let beyond_noise = (last - first).abs() > 4.0 * noise_se(seconds, third) * 2f64.sqrt();
    (trend, trend.abs() >= TREND && one_way && beyond_noise)
}

/// The steady part of a window's per-second throughput; `None` under
/// [`MIN_SECONDS`] seconds or for a window that did nothing.
pub fn mser(seconds: &[f64]) -> Option<Steady> {
    let n = seconds.len();
    if n < MIN_SECONDS || seconds.iter().all(|&v| v <= 0.0) {
        return None;
    }
    let batch = if n >= 25 { 5 } else { 1 };
    // Whole batches; a partial last batch is left out, as MSER-5 does.
    let z: Vec<f64> = seconds.chunks_exact(batch).map(mean).collect();
    let d = truncation(&z);
    let cut_secs = d * batch;
    let steady_mean = mean(&seconds[cut_secs..]);
    let cut_beyond_noise = cut_secs > 0
        && (mean(&seconds[..cut_secs]) - steady_mean).abs()
            > 4.0 * noise_se(&seconds[cut_secs..], cut_secs);
    let cut_shift = if cut_secs > 0 {
        let cut = mean(&seconds[..cut_secs]);
        if cut > 0.0 {
            steady_mean / cut - 1.0
        } else {
            f64::INFINITY
        }
    } else {
        0.0
    };
    let (trend, whole) = trend_of(seconds);
    // No steady part: MSER's minimum on the boundary of its search with
    // the whole window moving one way, or, where it cut, the part it kept
    // moving one way itself (a ramp with a little noise gives a cut
    // anywhere, and what is left still climbs).
    let tail = &seconds[cut_secs..];
    let never_steady = (d == z.len() / 2 && whole) || (tail.len() >= 6 && trend_of(tail).1);
    Some(Steady {
        cut_secs,
        cut_beyond_noise,
        cut_shift,
        trend,
        never_steady,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stand-in for a noisy steady throughput.
    fn noise(n: usize, level: f64, spread: f64, seed: u64) -> Vec<f64> {
        let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                level * (1.0 + spread * (2.0 * u - 1.0))
            })
            .collect()
    }

    #[test]
    fn a_window_that_keeps_rising_is_never_steady() {
        let rising: Vec<f64> = (0..60).map(|i| 1000.0 + 10.0 * i as f64).collect();
        let s = mser(&rising).unwrap();
        assert!(s.never_steady, "{s:?}");
        assert!(s.trend > 0.3, "{s:?}");
        assert!(s
            .describe()
            .starts_with("still warming up: throughput rose"));
        // Short windows are judged by the second.
        let short: Vec<f64> = (0..10).map(|i| 1000.0 * 1.03f64.powi(i)).collect();
        assert!(mser(&short).unwrap().never_steady);
    }

    #[test]
    fn a_warm_up_at_the_start_is_cut_and_the_rest_is_steady() {
        let mut s: Vec<f64> = vec![
            200.0, 500.0, 700.0, 850.0, 950.0, 980.0, 990.0, 1000.0, 1000.0, 1000.0,
        ];
        s.extend(noise(50, 1000.0, 0.02, 7));
        let st = mser(&s).unwrap();
        assert!(!st.never_steady, "{st:?}");
        assert!((5..=15).contains(&st.cut_secs), "{st:?}");
        assert_eq!(st.warming_secs(), st.cut_secs, "{st:?}");
        assert!(st.cut_shift > 0.1);
    }

    /// Regression guard for the rule's false alarms: steady noise, at
    /// every length a step has, is never called unsteady, and any cut it
    /// makes is too small to be said.
    #[test]
    fn steady_noise_is_steady() {
        for seed in 0..400u64 {
            for n in [10, 15, 20, 30, 60, 120] {
                let white = noise(n, 5000.0, 0.04, seed);
                // Seconds that lean on the one before (a checkpoint, a
                // cache) as a step's do: AR(1), r = 0.5.
                let mut ar = white.clone();
                for i in 1..n {
                    ar[i] = 5000.0 + 0.5 * (ar[i - 1] - 5000.0) + (white[i] - 5000.0);
                }
                for series in [white, ar] {
                    let s = mser(&series).unwrap();
                    assert!(!s.never_steady, "seed {seed}, {n} s: {s:?}");
                    assert_eq!(s.warming_secs(), 0, "seed {seed}, {n} s: {s:?}");
                }
            }
        }
    }

    #[test]
    fn too_short_or_idle_windows_are_not_judged() {
        assert_eq!(mser(&[1.0; 9]), None);
        assert_eq!(mser(&[0.0; 30]), None);
    }
}
