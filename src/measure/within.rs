//! Significance within one run: when each target ran a step once, its
//! per-second throughput is the only sample of its noise, so the ratio of
//! two windows is tested on those seconds.
//!
//! Seconds of one window are not independent (a checkpoint or a cache
//! warming spans several), so a plain t-test would be far too confident.
//! The test here is Welch's unequal-variance t-test (Welch, Biometrika
//! 1947) with each side's sample size replaced by its *effective* size
//! under a first-order autoregressive model, n·(1 − r₁)/(1 + r₁), where r₁
//! is the lag-1 autocorrelation of its seconds (Bayley & Hammersley, JRSS
//! 1946). latte corrects its Welch test the same way in spirit but
//! estimates the effective size by batch means, which needs many more
//! samples than the 5–60 seconds of a step; the first-order formula works
//! with a handful. A negative r₁ is taken as 0: the correction only ever
//! makes the test less confident. The interval of the ratio of the two means comes from the
//! same statistic by Fieller's theorem (Fieller, JRSS 1954), so a ratio
//! whose interval holds 1 is exactly one the test does not reject.
//!
//! The seconds of one window say nothing of how far two windows of the
//! same work lie apart when they run minutes apart on data loaded and
//! written separately: on A/A pairs (a target against its own copy,
//! `bench/aa_calibration.py`) the seconds-only test called 38% of the
//! pairs different. So the comparison's test, [`within_run`], adds to the
//! seconds' variance a *between-window* variance of ln(ratio) measured on
//! the run's own A/A pairs ([`Between`]), with Satterthwaite's degrees of
//! freedom for the sum. Without A/A pairs there is nothing to measure it on, and a
//! one-window comparison is not tested at all.
//!
//! The reference figures in the tests were computed with SciPy 1.17.1
//! (`scipy.stats.t`) from the same inputs; `bench/within_run_reference.py`
//! prints them.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

use super::stats::{Interval, LEVEL};

/// Fewest whole seconds per window for the test: below it the variance
/// and the autocorrelation are guesses.
pub const MIN_SECONDS: usize = 5;

/// Fewest A/A pairs a between-window variance rests on: with fewer its
/// degrees of freedom make any test powerless and one odd pair rules it.
pub const MIN_AA_PAIRS: usize = 3;

/// How far windows of the same work lie apart: the variance of
/// ln(copy ÷ original) over the run's quiet A/A pairs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Between {
    /// Between-window variance of ln(ratio) (both windows' share).
    pub var: f64,
    /// The A/A pairs it rests on: its degrees of freedom.
    pub pairs: usize,
}

impl Between {
    /// From A/A pairs' [`log_ratio`]s; `None` with fewer than
    /// [`MIN_AA_PAIRS`]: the mean of their ln(ratio)², seconds and all.
    ///
    /// Why not less the seconds' share (the method of moments): the pairs
    /// pool steps whose seconds differ tenfold (a write step's against a
    /// point query's), so the quiet steps' between part came out too
    /// small, and on MariaDB 4 of 28 A/A cells were "significant"
    /// (`bench/aa_calibration.py`). The spread the pairs showed in all is
    /// what a one-window ratio must pass; it counts the seconds' share
    /// twice, a little less power for a test that holds its level.
    pub fn from_pairs(pairs: &[LogRatio]) -> Option<Between> {
        if pairs.len() < MIN_AA_PAIRS {
            return None;
        }
        let k = pairs.len() as f64;
        Some(Between {
            var: pairs.iter().map(|p| p.ln * p.ln).sum::<f64>() / k,
            pairs: pairs.len(),
        })
    }
}

/// ln(target mean ÷ base mean) of two windows' seconds, the variance of
/// that the seconds alone give (the delta method, each side's variance
/// over its effective size), and its Welch–Satterthwaite degrees of
/// freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogRatio {
    pub ln: f64,
    pub var: f64,
    pub df: f64,
}

/// The two windows' [`LogRatio`]; `None` with fewer than [`MIN_SECONDS`]
/// a side or a side that did nothing.
pub fn log_ratio(target: &[f64], base: &[f64]) -> Option<LogRatio> {
    if target.len() < MIN_SECONDS || base.len() < MIN_SECONDS {
        return None;
    }
    let (ma, va, na) = describe(target);
    let (mb, vb, nb) = describe(base);
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let (sa, sb) = (va / na / (ma * ma), vb / nb / (mb * mb));
    let var = sa + sb;
    let df = if var > 0.0 {
        var * var / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0))
    } else {
        f64::INFINITY
    };
    Some(LogRatio {
        ln: (ma / mb).ln(),
        var,
        df,
    })
}

/// The comparison's test of two windows, one a side: ln(ratio) against
/// the seconds' variance plus the between-window variance the run's A/A
/// pairs measured. `None` where [`log_ratio`] is.
pub fn within_run(target: &[f64], base: &[f64], between: &Between) -> Option<WithinRun> {
    let r = log_ratio(target, base)?;
    let var = r.var + between.var;
    let (na, nb) = (describe(target).2, describe(base).2);
    if var <= 0.0 {
        let p_value = if r.ln == 0.0 { 1.0 } else { 0.0 };
        let v = r.ln.exp();
        let point = |level| Interval {
            lo: v,
            hi: v,
            level,
        };
        return Some(WithinRun {
            p_value,
            interval: Some(point(LEVEL)),
            equivalence: Some(point(2.0 * LEVEL - 1.0)),
            df: f64::INFINITY,
            n_eff: (na, nb),
        });
    }
    // Satterthwaite: the seconds' part with its own degrees of freedom,
    // the between part with one per A/A pair.
    let part = |v: f64, df: f64| if df.is_finite() { v * v / df } else { 0.0 };
    let denom = part(r.var, r.df) + part(between.var, between.pairs as f64);
    let df = if denom > 0.0 {
        var * var / denom
    } else {
        f64::INFINITY
    };
    let se = var.sqrt();
    let p_value = t_two_sided_p(r.ln.abs() / se, df);
    Some(WithinRun {
        p_value,
        interval: Some(t_interval(r.ln, se, df, 1.0 - LEVEL)),
        equivalence: Some(t_interval(r.ln, se, df, 2.0 * (1.0 - LEVEL))),
        df,
        n_eff: (na, nb),
    })
}

/// What a test says of `target ÷ base`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WithinRun {
    pub p_value: f64,
    /// Fieller's interval of the ratio of the means; `None` when the
    /// base's mean is not itself distinguishable from 0.
    pub interval: Option<Interval>,
    /// The two one-sided tests' interval (at 1 − 2·(1 − [`LEVEL`])) an
    /// equivalence is shown by; `None` with `interval`.
    pub equivalence: Option<Interval>,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Effective sample sizes (target, base).
    pub n_eff: (f64, f64),
}

/// Mean, sample variance and effective size of one window's seconds.
fn describe(x: &[f64]) -> (f64, f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let ss: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
    let var = ss / (n - 1.0);
    let lag: f64 = x.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum();
    let r1 = if ss > 0.0 {
        (lag / ss).clamp(0.0, 0.99)
    } else {
        0.0
    };
    // At least two, so the degrees of freedom stay positive.
    let n_eff = (n * (1.0 - r1) / (1.0 + r1)).max(2.0);
    (mean, var, n_eff)
}

/// The seconds-only test of `target`'s seconds against `base`'s (Welch,
/// Fieller's interval); `None` with fewer than [`MIN_SECONDS`] on either
/// side or a base that did nothing. It ignores how windows differ, so the
/// comparison does not use it alone; `check` and the calibration script
/// compare against it.
pub fn seconds_only(target: &[f64], base: &[f64]) -> Option<WithinRun> {
    if target.len() < MIN_SECONDS || base.len() < MIN_SECONDS {
        return None;
    }
    let (ma, va, na) = describe(target);
    let (mb, vb, nb) = describe(base);
    if mb <= 0.0 {
        return None;
    }
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    if se2 <= 0.0 {
        // Two constant series: equal, or as different as can be.
        let p = if ma == mb { 1.0 } else { 0.0 };
        let r = ma / mb;
        return Some(WithinRun {
            p_value: p,
            interval: Some(Interval {
                lo: r,
                hi: r,
                level: LEVEL,
            }),
            equivalence: None,
            df: f64::INFINITY,
            n_eff: (na, nb),
        });
    }
    let df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    let t = (ma - mb) / se2.sqrt();
    let p_value = t_two_sided_p(t.abs(), df);
    let q = t_quantile_two_sided(1.0 - LEVEL, df);
    // Fieller: ρ with (ma − ρ·mb)² ≤ q²·(sa + ρ²·sb).
    let a = mb * mb - q * q * sb;
    let b = -2.0 * ma * mb;
    let c = ma * ma - q * q * sa;
    let disc = b * b - 4.0 * a * c;
    let interval = (a > 0.0 && disc >= 0.0).then(|| Interval {
        lo: (-b - disc.sqrt()) / (2.0 * a),
        hi: (-b + disc.sqrt()) / (2.0 * a),
        level: LEVEL,
    });
    Some(WithinRun {
        p_value,
        interval,
        equivalence: None,
        df,
        n_eff: (na, nb),
    })
}

/// How long two windows like `seconds` must be, in seconds each, for the
/// test to call a change of `change` (0.05: 5%) significant: with a
/// per-second coefficient of variation c and an effective share f of the
/// seconds, the ratio's standard error is about c·√(2 / (f·n)), so n ≥
/// 2·(1.96·c / change)² / f. `None` with too few seconds to say.
pub fn seconds_for(change: f64, seconds: &[f64]) -> Option<f64> {
    if seconds.len() < MIN_SECONDS {
        return None;
    }
    let (mean, var, n_eff) = describe(seconds);
    if mean <= 0.0 {
        return None;
    }
    let cv = var.sqrt() / mean;
    let f = n_eff / seconds.len() as f64;
    Some((2.0 * (1.96 * cv / change).powi(2) / f).max(MIN_SECONDS as f64))
}

/// Student's t with `df` degrees of freedom (statrs), or none for a df
/// that is not positive.
fn student(df: f64) -> Option<StudentsT> {
    StudentsT::new(0.0, 1.0, df).ok()
}

/// P(|T| ≥ t) for Student's t with `df` degrees of freedom (the normal's
/// for an infinite df). The tail is computed as a tail (`sf`), not as
/// 1 − cdf, so a p of 10⁻¹³ keeps its digits.
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if !df.is_finite() {
        return super::stats::normal_two_sided_p(t);
    }
    student(df).map_or(1.0, |d| (2.0 * d.sf(t.abs())).clamp(0.0, 1.0))
}

/// exp of the t interval around `ln` with standard error `se` and `df`
/// degrees of freedom, at 1 − `alpha`.
pub fn t_interval(ln: f64, se: f64, df: f64, alpha: f64) -> Interval {
    let q = t_quantile_two_sided(alpha, df);
    Interval {
        lo: (ln - q * se).exp(),
        hi: (ln + q * se).exp(),
        level: 1.0 - alpha,
    }
}

/// The t with P(|T| ≥ t) = `p`.
pub fn t_quantile_two_sided(p: f64, df: f64) -> f64 {
    let q = 1.0 - p / 2.0;
    if !df.is_finite() {
        return Normal::standard().inverse_cdf(q);
    }
    student(df).map_or(f64::INFINITY, |d| d.inverse_cdf(q))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal to `digits` significant digits.
    fn close(a: f64, b: f64, digits: i32) -> bool {
        (a - b).abs() <= 0.5 * 10f64.powi(1 - digits) * b.abs()
    }

    #[test]
    fn student_t_matches_scipy() {
        // scipy.stats.t.sf(2.0, 7) * 2, t.sf(1.3, 3.7) * 2, t.ppf(0.975, 7).
        assert!((t_two_sided_p(2.0, 7.0) - 0.085_619_328_562_976_05).abs() < 1e-12);
        assert!((t_two_sided_p(1.3, 3.7) - 0.268_666_724_172_627_5).abs() < 1e-9);
        assert!((t_quantile_two_sided(0.05, 7.0) - 2.364_624_251_592_784).abs() < 1e-9);
        assert!(close(
            t_two_sided_p(12.0, 30.0),
            5.580_185_415_199_261e-13,
            3
        ));
    }

    /// Fixed per-second samples: the test's p-value and interval against
    /// the reference (bench/within_run_reference.py, SciPy 1.17.1).
    #[test]
    fn the_within_run_test_matches_the_reference_to_three_digits() {
        let base = [
            1000.0, 1012.0, 995.0, 1003.0, 990.0, 1008.0, 1001.0, 997.0, 1010.0, 989.0,
        ];
        let target = [
            1050.0, 1040.0, 1061.0, 1035.0, 1058.0, 1047.0, 1052.0, 1039.0, 1066.0, 1044.0,
        ];
        let w = seconds_only(&target, &base).unwrap();
        let i = w.interval.unwrap();
        let want = REFERENCE_1;
        assert!(close(w.p_value, want.0, 3), "p {} vs {}", w.p_value, want.0);
        assert!(close(i.lo, want.1, 3), "lo {} vs {}", i.lo, want.1);
        assert!(close(i.hi, want.2, 3), "hi {} vs {}", i.hi, want.2);
        assert!(close(w.df, want.3, 3), "df {} vs {}", w.df, want.3);

        // A drifting series (a cache warming): strongly autocorrelated,
        // so its effective size is far below its 12 seconds.
        let drift = [
            900.0, 920.0, 935.0, 950.0, 962.0, 975.0, 985.0, 993.0, 1000.0, 1006.0, 1010.0, 1013.0,
        ];
        let w = seconds_only(&drift, &base).unwrap();
        let want = REFERENCE_2;
        assert!(close(w.p_value, want.0, 3), "p {} vs {}", w.p_value, want.0);
        assert!(
            close(w.n_eff.0, want.4, 3),
            "n_eff {} vs {}",
            w.n_eff.0,
            want.4
        );
        let i = w.interval.unwrap();
        assert!(close(i.lo, want.1, 3), "lo {} vs {}", i.lo, want.1);
        assert!(close(i.hi, want.2, 3), "hi {} vs {}", i.hi, want.2);
    }

    /// (p, lo, hi, df, n_eff of the target) from the reference script.
    const REFERENCE_1: (f64, f64, f64, f64, f64) = (
        1.083_726_705_134_701_2e-9,
        1.039_935_001_080_144_5,
        1.057_475_432_645_420_3,
        17.024_420_372_442_81,
        10.0,
    );
    const REFERENCE_2: (f64, f64, f64, f64, f64) = (
        0.462_679_019_179_605_8,
        0.646_304_252_721_324_2,
        1.296_051_958_125_228,
        1.018_058_746_247_857_9,
        2.0,
    );

    #[test]
    fn noisier_seconds_need_longer_windows() {
        // CV 2%, no autocorrelation: 2·(1.96·0.02/0.05)² ≈ 1.2 s, so the
        // floor of five seconds.
        let quiet = [98.0, 102.0, 100.0, 97.0, 103.0, 100.0, 99.0, 101.0];
        assert_eq!(seconds_for(0.05, &quiet), Some(MIN_SECONDS as f64));
        // A stall every other second: CV near 0.5, so tens of seconds.
        let noisy = [100.0, 10.0, 100.0, 20.0, 100.0, 0.0, 100.0, 30.0];
        let n = seconds_for(0.05, &noisy).unwrap();
        assert!(n > 300.0, "{n}");
        assert_eq!(seconds_for(0.05, &quiet[..4]), None);
    }

    #[test]
    fn too_few_seconds_give_no_test() {
        assert!(seconds_only(&[1.0; 4], &[1.0; 10]).is_none());
        assert!(seconds_only(&[1.0; 10], &[0.0; 10]).is_none());
        let same = seconds_only(&[5.0; 6], &[5.0; 6]).unwrap();
        assert_eq!(same.p_value, 1.0);
        assert!(log_ratio(&[1.0; 4], &[1.0; 10]).is_none());
    }

    /// Regression: two identical builds' windows minutes apart, 5% apart
    /// with steady seconds, were called different at p = 1e-9; the A/A
    /// pairs of the run say windows lie that far apart by themselves.
    #[test]
    fn windows_that_differ_as_much_as_the_runs_aa_pairs_are_not_significant() {
        let base = [
            1000.0, 1012.0, 995.0, 1003.0, 990.0, 1008.0, 1001.0, 997.0, 1010.0, 989.0,
        ];
        let target: Vec<f64> = base.iter().map(|v| v * 1.05).collect();
        assert!(seconds_only(&target, &base).unwrap().p_value < 1e-6);
        // A/A pairs 6% apart, either way, with the same steady seconds.
        let pairs: Vec<LogRatio> = [1.06, 0.94, 1.05, 0.95, 1.07, 0.96]
            .iter()
            .map(|f| {
                let copy: Vec<f64> = base.iter().map(|v| v * f).collect();
                log_ratio(&copy, &base).unwrap()
            })
            .collect();
        let between = Between::from_pairs(&pairs).unwrap();
        assert_eq!(between.pairs, 6);
        assert!((between.var.sqrt() - 0.057).abs() < 0.005, "{between:?}");
        let w = within_run(&target, &base, &between).unwrap();
        assert!(w.p_value > 0.4, "{w:?}");
        let i = w.interval.unwrap();
        assert!(i.lo < 1.0 && i.hi > 1.05, "{i:?}");
        // Twice as fast is past anything the pairs showed.
        let double: Vec<f64> = base.iter().map(|v| v * 2.0).collect();
        assert!(within_run(&double, &base, &between).unwrap().p_value < 0.001);
        // Two pairs are not enough to say how windows differ.
        assert!(Between::from_pairs(&pairs[..2]).is_none());
    }

    #[test]
    fn with_no_between_window_variance_the_test_is_the_seconds_test_on_logs() {
        let base = [
            1000.0, 1012.0, 995.0, 1003.0, 990.0, 1008.0, 1001.0, 997.0, 1010.0, 989.0,
        ];
        let target = [
            1050.0, 1040.0, 1061.0, 1035.0, 1058.0, 1047.0, 1052.0, 1039.0, 1066.0, 1044.0,
        ];
        let none = Between { var: 0.0, pairs: 6 };
        let w = within_run(&target, &base, &none).unwrap();
        let s = seconds_only(&target, &base).unwrap();
        assert!((w.df - s.df).abs() < 0.5, "{} vs {}", w.df, s.df);
        assert!(w.p_value < 1e-7 && s.p_value < 1e-7);
        let (a, b) = (w.interval.unwrap(), s.interval.unwrap());
        assert!((a.lo - b.lo).abs() < 2e-3 && (a.hi - b.hi).abs() < 2e-3);
    }
}
