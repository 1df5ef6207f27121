//! The test every verdict over repeats rests on: a target's rounds
//! against its base's, paired by round, with the variance of each cell
//! moderated by what every other cell of the study says of its own.
//!
//! **Paired by round.** The runner interleaves the targets: each round
//! (a repeat) runs every target once, in an order of its own. A round is
//! a block: the machine's drift between rounds — a level shift of a
//! shared host, a page cache warmer in round 3 than in round 1 — hits
//! both of its windows alike, so the difference of their logs,
//! dᵣ = ln(targetᵣ) − ln(baseᵣ), cancels it (rounds as blocks; Abedi &
//! Brecht, ICPE 2017, randomise the order inside a round so nothing
//! systematic is left). The ratio is exp(mean d), its interval a t
//! interval on the mean of d.
//!
//! **Why not the rank-sum test.** At 2 repeats a side its smallest
//! two-sided p is 0.33, at 3 it is 0.10: a ×0.01 that every window shows
//! was "not significant" and a user read that as the tool not seeing the
//! obvious. A t on logs has power where the data has it: at 2 rounds,
//! ten windows a hundredfold apart are a hundredfold apart.
//!
//! **Moderated variances.** With two to four rounds a cell's own variance
//! has one to three degrees of freedom, and the t quantile at 1 degree is
//! 12.7. The cells of one study are many parallel tests of the same kind,
//! so each cell's variance is shrunk towards what the others' say, by the
//! empirical Bayes rule of Smyth (Stat. Appl. Genet. Mol. Biol. 3, 2004;
//! limma's `squeezeVar`): the cells' variances are taken as draws from a
//! scaled inverse χ² with d₀ degrees of freedom around s₀², both
//! estimated from the cells' log variances by moments ([`prior`]); a
//! cell's moderated variance is (d₀s₀² + d·s²) ÷ (d₀ + d), its t has
//! d₀ + d degrees of freedom. Where the cells' variances differ far more
//! than sampling explains (a write step's fsync stalls beside a point
//! query), d₀ comes out small and each cell keeps its own; where they
//! agree, each borrows the others' degrees of freedom. d₀ is capped at
//! the degrees of freedom all cells hold together: a prior is never
//! surer than the data it came from. `bench/aa_calibration.py` measures
//! the rule's false-positive rate on A/A cells.
//!
//! **Unpaired.** Where fewer than two rounds hold both sides (windows left
//! out as disturbed in different rounds, or results of different runs),
//! the two sides' logs are compared unpaired, the pooled window variance
//! (half a difference's) moderated by the same prior.
//!
//! The reference figures in the tests were computed with SciPy
//! (`bench/paired_reference.py`).

use super::stats::Interval;
use super::within::{t_interval, t_quantile_two_sided, t_two_sided_p};

/// A variance of ln(target ÷ base) for one round, and its degrees of
/// freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Var {
    pub var: f64,
    pub df: f64,
}

/// What one comparison measured: the rounds' log differences, or two
/// unpaired sets of logs.
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    /// ln(target ÷ base) of each round that measured both.
    Paired(Vec<f64>),
    /// ln(throughput) of the target's windows and of the base's.
    Unpaired(Vec<f64>, Vec<f64>),
}

impl Sample {
    /// The comparison of `target`'s (round, value) against `base`'s:
    /// paired on the rounds both have when there are two or more, else
    /// unpaired; `None` with a side that did nothing or has no window.
    pub fn of(target: &[(u32, f64)], base: &[(u32, f64)]) -> Option<Sample> {
        if target.is_empty()
            || base.is_empty()
            || target
                .iter()
                .chain(base)
                .any(|(_, v)| !(*v > 0.0 && v.is_finite()))
        {
            return None;
        }
        let paired: Vec<f64> = target
            .iter()
            .filter_map(|(r, t)| {
                let (_, b) = base.iter().find(|(rb, _)| rb == r)?;
                Some(t.ln() - b.ln())
            })
            .collect();
        if paired.len() >= 2 {
            return Some(Sample::Paired(paired));
        }
        let values = |v: &[(u32, f64)]| v.iter().map(|(_, x)| *x).collect::<Vec<f64>>();
        Sample::unpaired(&values(target), &values(base))
    }

    /// The two sides unpaired (no rounds to pair them by: builds measured
    /// in different runs); `None` as [`Sample::of`].
    pub fn unpaired(target: &[f64], base: &[f64]) -> Option<Sample> {
        if target.is_empty()
            || base.is_empty()
            || target
                .iter()
                .chain(base)
                .any(|v| !(*v > 0.0 && v.is_finite()))
        {
            return None;
        }
        let logs = |v: &[f64]| v.iter().map(|x| x.ln()).collect::<Vec<f64>>();
        Some(Sample::Unpaired(logs(target), logs(base)))
    }

    /// The estimate of ln(target ÷ base).
    pub fn estimate(&self) -> f64 {
        match self {
            Sample::Paired(d) => mean(d),
            Sample::Unpaired(t, b) => mean(t) - mean(b),
        }
    }

    /// The sample's own variance of a round's difference, when it has
    /// degrees of freedom (a window's variance counts twice: a difference
    /// has two windows), never under [`RESOLUTION`]².
    pub fn own(&self) -> Option<Var> {
        let (var, df) = match self {
            Sample::Paired(d) => {
                let df = d.len() as f64 - 1.0;
                (ss(d) / df, df)
            }
            Sample::Unpaired(t, b) => {
                let df = (t.len() + b.len()) as f64 - 2.0;
                (2.0 * (ss(t) + ss(b)) / df, df)
            }
        };
        (df >= 1.0).then(|| Var {
            var: var.max(RESOLUTION * RESOLUTION),
            df,
        })
    }

    /// se² of the estimate ÷ the variance of one round's difference.
    fn factor(&self) -> f64 {
        match self {
            Sample::Paired(d) => 1.0 / d.len() as f64,
            Sample::Unpaired(t, b) => (1.0 / t.len() as f64 + 1.0 / b.len() as f64) / 2.0,
        }
    }

    /// Rounds measured (pairs, or the smaller side).
    pub fn rounds(&self) -> usize {
        match self {
            Sample::Paired(d) => d.len(),
            Sample::Unpaired(t, b) => t.len().min(b.len()),
        }
    }

    pub fn is_paired(&self) -> bool {
        matches!(self, Sample::Paired(_))
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn ss(v: &[f64]) -> f64 {
    let m = mean(v);
    v.iter().map(|x| (x - m) * (x - m)).sum()
}

/// The prior the cells' variances are moderated towards (Smyth 2004,
/// §6.2: `fitFDist` by moments of the log variances), from the cells'
/// own variances; `None` with fewer than three cells that have one. Its
/// degrees of freedom are at most the cells' together; infinite (the
/// cells' variances agree better than sampling alone would make them)
/// is taken at that cap too.
pub fn prior(cells: &[Var]) -> Option<Var> {
    let used: Vec<&Var> = cells
        .iter()
        .filter(|c| c.df >= 1.0 && c.var > 0.0 && c.var.is_finite())
        .collect();
    if used.len() < 3 {
        return None;
    }
    let n = used.len() as f64;
    let e: Vec<f64> = used
        .iter()
        .map(|c| c.var.ln() - digamma(c.df / 2.0) + (c.df / 2.0).ln())
        .collect();
    let emean = mean(&e);
    let spread = ss(&e) / (n - 1.0) - used.iter().map(|c| trigamma(c.df / 2.0)).sum::<f64>() / n;
    let cap = used.iter().map(|c| c.df).sum::<f64>();
    let df = if spread > 0.0 {
        (2.0 * trigamma_inverse(spread)).min(cap)
    } else {
        cap
    };
    let var = (emean + digamma(df / 2.0) - (df / 2.0).ln()).exp();
    Some(Var { var, df })
}

/// A cell's variance moderated towards `prior`: (d₀s₀² + d·s²) ÷ (d₀ + d)
/// with d₀ + d degrees of freedom; the prior alone for a cell with none
/// of its own, its own alone without a prior.
pub fn moderated(own: Option<Var>, prior: Option<Var>) -> Option<Var> {
    match (own, prior) {
        (Some(o), Some(p)) => Some(Var {
            var: (p.df * p.var + o.df * o.var) / (p.df + o.df),
            df: p.df + o.df,
        }),
        (o, p) => o.or(p),
    }
}

/// The finest a ratio of two windows is known to, in ln units: a
/// throughput is a count over a clock, and rounds that agree to the last
/// bit (a rate-limited step held at its rate, a record written by hand)
/// measured a spread below this, not none. Without the floor such cells
/// carry no variance, the study's prior cannot be fitted, and a cell
/// whose rounds all agree would be judged by the test that ignores
/// their pairing.
pub const RESOLUTION: f64 = 1e-6;

/// What the test says of target ÷ base.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Test {
    /// exp(the estimate): the geometric mean of the rounds' ratios.
    pub ratio: f64,
    /// Two-sided p of "no change".
    pub p_value: f64,
    /// target ÷ base at 1 − `alpha`.
    pub interval: Interval,
    /// target ÷ base at 1 − 2·`alpha`: the interval of the two one-sided
    /// tests (Schuirmann, 1987) that show equivalence at `alpha`. A
    /// change inside a band is rejected on each side by a one-sided test
    /// at `alpha`, which is this interval inside the band; the interval
    /// at 1 − `alpha` would test each side at `alpha` ÷ 2 and call far
    /// fewer identical cells the same than the level allows.
    pub equivalence: Interval,
    /// Its t's degrees of freedom (the cell's and the prior's).
    pub df: f64,
    /// The standard error of the estimate, in ln(ratio).
    pub se: f64,
    /// The variance of one round's difference it used.
    pub var: f64,
}

impl Test {
    /// One round's variance and the degrees of freedom it was used with.
    pub fn per_round(&self) -> Var {
        Var {
            var: self.var,
            df: self.df,
        }
    }
}

/// Tests `sample` at level `alpha`, its variance moderated by `prior`;
/// `None` without a variance to go by (one round and no prior).
pub fn test(sample: &Sample, prior: Option<Var>, alpha: f64) -> Option<Test> {
    let v = moderated(sample.own(), prior)?;
    let d = sample.estimate();
    let se = (v.var * sample.factor()).sqrt();
    if se.is_nan() || se <= 0.0 || !se.is_finite() {
        let r = d.exp();
        let point = |level| Interval {
            lo: r,
            hi: r,
            level,
        };
        return Some(Test {
            ratio: r,
            p_value: if d == 0.0 { 1.0 } else { 0.0 },
            interval: point(1.0 - alpha),
            equivalence: point(1.0 - 2.0 * alpha),
            df: v.df,
            se: 0.0,
            var: v.var,
        });
    }
    Some(Test {
        ratio: d.exp(),
        p_value: t_two_sided_p(d.abs() / se, v.df),
        interval: t_interval(d, se, v.df, alpha),
        equivalence: t_interval(d, se, v.df, 2.0 * alpha),
        df: v.df,
        se,
        var: v.var,
    })
}

/// The fewest rounds (up to `most`) at which a comparison whose one
/// round's difference has variance `v.var` (a [`Test`]'s `var` and `df`)
/// would have an interval of half-width at most `want` in ln(ratio) at
/// level `alpha`: its variance as now, its degrees of freedom grown by
/// the rounds added. `None` when even `most` would not.
pub fn rounds_for(v: Var, rounds_now: usize, want: f64, alpha: f64, most: u32) -> Option<u32> {
    if want <= 0.0 {
        return None;
    }
    let from = rounds_now.max(1) as u32;
    (from..=most.max(from)).find(|&n| {
        let df = v.df + f64::from(n) - rounds_now as f64;
        let half = t_quantile_two_sided(alpha, df.max(1.0)) * (v.var / f64::from(n)).sqrt();
        half <= want
    })
}

/// ψ(x), the digamma function, for x > 0: the recurrence up to 6, then
/// the asymptotic series (error below 1e-12 there).
pub fn digamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 6.0 {
        acc -= 1.0 / x;
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    acc + x.ln()
        - 0.5 / x
        - f * (1.0 / 12.0
            - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f * (1.0 / 132.0)))))
}

/// ψ′(x), the trigamma function, for x > 0.
pub fn trigamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 6.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    acc + 1.0 / x
        + f / 2.0
        + f / x
            * (1.0 / 6.0 - f * (1.0 / 30.0 - f * (1.0 / 42.0 - f * (1.0 / 30.0 - f * 5.0 / 66.0))))
}

/// ψ″(x), for x > 0.
fn tetragamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 6.0 {
        acc -= 2.0 / (x * x * x);
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    acc - f
        - f / x
        - f * f * (1.0 / 2.0 - f * (1.0 / 6.0 - f * (1.0 / 6.0 - f * (3.0 / 10.0 - f * 5.0 / 6.0))))
}

/// The x with ψ′(x) = y, by Smyth's Newton iteration (limma's
/// `trigammaInverse`), for y > 0.
pub fn trigamma_inverse(y: f64) -> f64 {
    if y > 1e7 {
        return 1.0 / y.sqrt();
    }
    if y < 1e-6 {
        return 1.0 / y;
    }
    let mut x = 0.5 + 1.0 / y;
    for _ in 0..50 {
        let tri = trigamma(x);
        let step = tri * (1.0 - tri / y) / tetragamma(x);
        x += step;
        if -step / x < 1e-8 {
            break;
        }
    }
    x
}

#[cfg(test)]
mod tests;
