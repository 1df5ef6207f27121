//! How far a machine's own speed wanders from one window to the next, and
//! what that allows a study on it: the rounds a change of a given size
//! needs to be found, and the rounds identical targets need to be shown
//! the same. Computed from a probe's per-CPU counts of fixed work per
//! tick (`metrics::drift`), which a benchmark's windows cannot tell
//! apart from the machine: a cloud VM's CPUs slow down and speed up by
//! ±15% over seconds with no steal time reported, and a target measured
//! in a slow stretch looks slower.

use statrs::distribution::{ContinuousCDF, Normal};

use super::within::t_quantile_two_sided;

/// One CPU's windows of fixed work.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuDrift {
    pub cpu: usize,
    pub windows: usize,
    /// Standard deviation of ln(work per window): how far its windows
    /// lie from their mean.
    pub sd_ln: f64,
    /// Standard deviation of ln(window ÷ the window before): what a pair
    /// of neighbouring windows — a base and a target taking turns —
    /// differs by when both ran the same work.
    pub neighbour_sd_ln: f64,
}

/// The probe's windows of one length, every CPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    pub window_secs: f64,
    pub cpus: Vec<CpuDrift>,
    /// The neighbouring windows' spread, pooled over the CPUs (root mean
    /// square): the paired test's per-round spread when the targets take
    /// turns on this machine.
    pub turns_sd_ln: f64,
    /// How the CPUs' windows move together (Pearson's r of ln work, the
    /// mean over pairs of CPUs); `None` with one CPU.
    pub correlation: Option<f64>,
    /// Standard deviation of ln(one CPU's window ÷ another's, the same
    /// window): the per-round spread of the two sides run at once on
    /// different CPUs (duet benchmarking); `None` with one CPU.
    pub at_once_sd_ln: Option<f64>,
}

/// The probe's ticks (per CPU, work per tick of `tick_secs`) as windows
/// of `window_secs` (whole ticks); `None` when fewer than three windows
/// fit.
pub fn analyse(counts: &[(usize, Vec<f64>)], tick_secs: f64, window_secs: f64) -> Option<Drift> {
    let per = (window_secs / tick_secs).round().max(1.0) as usize;
    let windows: Vec<(usize, Vec<f64>)> = counts
        .iter()
        .map(|(cpu, ticks)| {
            let w: Vec<f64> = ticks
                .chunks_exact(per)
                .map(|c| c.iter().sum::<f64>())
                .filter(|w| *w > 0.0)
                .map(f64::ln)
                .collect();
            (*cpu, w)
        })
        .collect();
    if windows.iter().any(|(_, w)| w.len() < 3) || windows.is_empty() {
        return None;
    }
    let cpus: Vec<CpuDrift> = windows
        .iter()
        .map(|(cpu, w)| {
            let steps: Vec<f64> = w.windows(2).map(|p| p[1] - p[0]).collect();
            CpuDrift {
                cpu: *cpu,
                windows: w.len(),
                sd_ln: sd(w),
                neighbour_sd_ln: sd(&steps),
            }
        })
        .collect();
    let turns_sd_ln =
        (cpus.iter().map(|c| c.neighbour_sd_ln.powi(2)).sum::<f64>() / cpus.len() as f64).sqrt();
    let mut rs = Vec::new();
    let mut diffs = Vec::new();
    for (i, (_, a)) in windows.iter().enumerate() {
        for (_, b) in &windows[i + 1..] {
            let n = a.len().min(b.len());
            rs.push(pearson(&a[..n], &b[..n]));
            let d: Vec<f64> = a[..n].iter().zip(&b[..n]).map(|(x, y)| x - y).collect();
            diffs.push(sd(&d).powi(2));
        }
    }
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    Some(Drift {
        window_secs: per as f64 * tick_secs,
        cpus,
        turns_sd_ln,
        correlation: mean(&rs),
        at_once_sd_ln: mean(&diffs).map(f64::sqrt),
    })
}

fn sd(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
}

fn pearson(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    if va <= 0.0 || vb <= 0.0 {
        return 0.0;
    }
    cov / (va * vb).sqrt()
}

/// The most rounds the answers below look for.
pub const MOST_ROUNDS: u32 = 1_000;

/// Rounds (pairs of windows) a paired t-test at 5% needs to find a change
/// of `change` (0.05: 5%) in 80% of runs, the pairs' ln ratios spread by
/// `sd`; `None` past [`MOST_ROUNDS`].
pub fn rounds_to_find(change: f64, sd: f64) -> Option<u32> {
    let delta = (1.0 + change).ln().abs();
    let power = Normal::standard().inverse_cdf(0.80);
    (2..=MOST_ROUNDS).find(|&n| {
        let se = sd / f64::from(n).sqrt();
        (t_quantile_two_sided(0.05, f64::from(n - 1)) + power) * se <= delta
    })
}

/// Rounds after which identical targets are shown the same within
/// ±`band` (the two one-sided tests' 90% interval inside it) in `share`
/// of runs, the pairs' ln ratios spread by `sd`; `None` past
/// [`MOST_ROUNDS`]. The interval's half-width is taken at the spread
/// itself (its estimate's own spread left out): a lower bound.
pub fn rounds_to_show_same(band: f64, sd: f64, share: f64) -> Option<u32> {
    let delta = (1.0 + band).ln();
    let z = Normal::standard().inverse_cdf((1.0 + share) / 2.0);
    (2..=MOST_ROUNDS).find(|&n| {
        let se = sd / f64::from(n).sqrt();
        (z + t_quantile_two_sided(0.10, f64::from(n - 1))) * se <= delta
    })
}

/// The smallest change found in 80% of runs of `rounds` rounds, as a
/// fraction (0.17: 17%).
pub fn smallest_found(rounds: u32, sd: f64) -> f64 {
    let power = Normal::standard().inverse_cdf(0.80);
    let se = sd / f64::from(rounds.max(2)).sqrt();
    ((t_quantile_two_sided(0.05, f64::from(rounds.max(2) - 1)) + power) * se).exp() - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_of_a_steady_cpu_and_a_wandering_one() {
        // CPU 0 does the same work every tick; CPU 1 alternates between
        // fast and slow windows of two ticks.
        let steady = vec![100.0; 12];
        let wandering: Vec<f64> = (0..12)
            .map(|i| if (i / 2) % 2 == 0 { 120.0 } else { 80.0 })
            .collect();
        let d = analyse(&[(0, steady), (1, wandering)], 0.5, 1.0).unwrap();
        assert_eq!(d.window_secs, 1.0);
        assert_eq!(d.cpus[0].windows, 6);
        assert_eq!(d.cpus[0].sd_ln, 0.0);
        // Every neighbouring pair of CPU 1's windows is ln 1.5 apart, the
        // sign alternating (−, +, −, +, −): their sd is ln 1.5 × √1.2.
        let l = 1.5f64.ln();
        assert!((d.cpus[1].neighbour_sd_ln - l * 1.2f64.sqrt()).abs() < 1e-9);
        assert!((d.turns_sd_ln - l * 0.6f64.sqrt()).abs() < 1e-9);
        assert_eq!(d.correlation, Some(0.0));
        // Three windows at least.
        assert!(analyse(&[(0, vec![1.0; 4])], 0.5, 1.0).is_none());
    }

    #[test]
    fn rounds_grow_with_the_square_of_the_spread() {
        // A 5% change against a spread of 5% between paired windows:
        // ((1.96 + 0.84) × 0.05 ÷ ln 1.05)² ≈ 8, and a little more for t.
        let n = rounds_to_find(0.05, 0.05).unwrap();
        assert!((9..=11).contains(&n), "{n}");
        // Three times the spread, about nine times the rounds.
        let m = rounds_to_find(0.05, 0.15).unwrap();
        assert!((70..=80).contains(&m), "{m}");
        assert!(rounds_to_find(0.05, 10.0).is_none());
        // Showing the same for 80% of identical pairs asks more than for
        // half of them.
        let half = rounds_to_show_same(0.05, 0.05, 0.5).unwrap();
        let most = rounds_to_show_same(0.05, 0.05, 0.8).unwrap();
        assert!(half < most, "{half} {most}");
        // And what a number of rounds finds is what needs that number.
        let found = smallest_found(n, 0.05);
        assert!(found <= 0.05 + 1e-9 && found > 0.04, "{found}");
    }
}
