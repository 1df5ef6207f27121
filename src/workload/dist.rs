//! Random distributions of row ids: uniform, zipfian and a hot set.
//!
//! Each client thread owns its generator ([`Rng`]), seeded from the plan's
//! seed, the step and the client number, so a run can be repeated exactly.

use rand::{Rng as _, SeedableRng};
use rand_distr::{Distribution, Zipf};

pub type Rng = rand::rngs::SmallRng;

pub fn rng(seed: u64, stream: u64) -> Rng {
    // Mixing with a large odd constant keeps nearby streams uncorrelated.
    Rng::seed_from_u64(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Which distribution a plan asks for the ids that the catalogue calls "uniform
/// unless said" (sysbench's `--rand-type`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    #[default]
    Uniform,
    /// Zipfian with [`ZIPF_EXPONENT`].
    Zipfian,
    /// 90% of the draws in the hottest 10% of the rows.
    Hotset,
}

impl Kind {
    pub const NAMES: [&'static str; 3] = ["uniform", "zipfian", "hotset"];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Uniform => "uniform",
            Kind::Zipfian => "zipfian",
            Kind::Hotset => "hotset",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "uniform" => Some(Kind::Uniform),
            "zipfian" => Some(Kind::Zipfian),
            "hotset" => Some(Kind::Hotset),
            _ => None,
        }
    }

    /// The distribution over `[1, n]`.
    pub fn ids(self, n: i64) -> Ids {
        match self {
            Kind::Uniform => Ids::uniform(n),
            Kind::Zipfian => Ids::zipfian(n, ZIPF_EXPONENT),
            Kind::Hotset => Ids::hot_set(n, 0.1, 0.9),
        }
    }
}

/// A distribution of ids in `[1, n]`.
#[derive(Debug, Clone)]
pub enum Ids {
    Uniform {
        n: i64,
    },
    /// Zipfian with exponent `s`: rank 1 is the most frequent. Ranks are
    /// spread over the id space by a fixed multiplicative permutation so that
    /// hot rows do not all sit on the first page of the table.
    Zipfian {
        n: i64,
        zipf: Zipf<f64>,
    },
    /// `access` of the draws fall in the hottest `rows` fraction of ids.
    HotSet {
        n: i64,
        hot: i64,
        access: f64,
    },
}

/// sysbench's default zipfian exponent (`--rand-zipfian-exp`).
pub const ZIPF_EXPONENT: f64 = 0.8;

impl Ids {
    pub fn uniform(n: i64) -> Self {
        Ids::Uniform { n: n.max(1) }
    }

    pub fn zipfian(n: i64, s: f64) -> Self {
        let n = n.max(1);
        Ids::Zipfian {
            n,
            zipf: Zipf::new(n as f64, s).expect("zipf parameters are valid"),
        }
    }

    /// `rows` and `access` are fractions in (0, 1].
    pub fn hot_set(n: i64, rows: f64, access: f64) -> Self {
        let n = n.max(1);
        let hot = ((n as f64 * rows).round() as i64).clamp(1, n);
        Ids::HotSet { n, hot, access }
    }

    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> i64 {
        match self {
            Ids::Uniform { n } => rng.random_range(1..=*n),
            Ids::Zipfian { n, zipf } => {
                let rank = zipf.sample(rng) as i64; // in [1, n]
                scatter(rank - 1, *n) + 1
            }
            Ids::HotSet { n, hot, access } => {
                if rng.random::<f64>() < *access || hot == n {
                    rng.random_range(1..=*hot)
                } else {
                    rng.random_range(*hot + 1..=*n)
                }
            }
        }
    }
}

/// A bijection of `[0, n)` that moves neighbouring ranks far apart and the
/// hottest rank away from the first row.
fn scatter(rank: i64, n: i64) -> i64 {
    // Multiplying by P is a bijection mod n because P is prime and larger
    // than any table (plans cap rows at 2e9), so gcd(P, n) = 1; adding
    // a constant keeps it one.
    const P: i128 = 2_147_483_647;
    ((rank as i128 * P + n as i128 / 3) % n as i128) as i64
}

/// Fills `out` with `n` distinct ids drawn from `ids`. In-lists of N ids must
/// name N different rows, or the row-count check would fail by chance.
pub fn distinct(ids: &Ids, rng: &mut Rng, n: usize, out: &mut Vec<i64>) {
    out.clear();
    while out.len() < n {
        while out.len() < n {
            out.push(ids.sample(rng));
        }
        out.sort_unstable();
        out.dedup();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_covers_the_range_evenly() {
        let mut r = rng(1, 0);
        let d = Ids::uniform(10);
        let mut counts = [0u32; 11];
        for _ in 0..100_000 {
            counts[d.sample(&mut r) as usize] += 1;
        }
        assert_eq!(counts[0], 0, "0 is outside [1, n]");
        for c in &counts[1..] {
            assert!((9_000..11_000).contains(c), "{counts:?}");
        }
    }

    #[test]
    fn zipfian_is_skewed_and_stays_in_range() {
        let mut r = rng(2, 0);
        let n = 1000;
        let d = Ids::zipfian(n, ZIPF_EXPONENT);
        let mut counts = vec![0u32; n as usize + 1];
        for _ in 0..200_000 {
            let id = d.sample(&mut r);
            assert!((1..=n).contains(&id));
            counts[id as usize] += 1;
        }
        let mut sorted = counts[1..].to_vec();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        // With s = 0.8 the top rank gets about 1/H(n, 0.8) ≈ 5.4% of draws
        // for n = 1000, and ranks 1 and 2 differ by 2^0.8 ≈ 1.74.
        let top = sorted[0] as f64 / 200_000.0;
        assert!((0.045..0.065).contains(&top), "top share {top}");
        let ratio = sorted[0] as f64 / sorted[1] as f64;
        assert!((1.5..2.0).contains(&ratio), "ratio {ratio}");
        // The hottest id is not id 1: ranks are scattered over the table.
        let hottest = counts
            .iter()
            .enumerate()
            .max_by_key(|(_, c)| **c)
            .unwrap()
            .0;
        assert_ne!(hottest, 1);
    }

    #[test]
    fn hot_set_sends_the_asked_share_to_the_hot_rows() {
        let mut r = rng(3, 0);
        let d = Ids::hot_set(1000, 0.1, 0.9);
        let hot = (0..100_000).filter(|_| d.sample(&mut r) <= 100).count();
        assert!((89_000..91_000).contains(&hot), "{hot}");
    }

    #[test]
    fn distinct_ids_are_distinct_and_in_range() {
        let mut r = rng(4, 0);
        let mut out = Vec::new();
        distinct(&Ids::uniform(120), &mut r, 100, &mut out);
        assert_eq!(out.len(), 100);
        let mut d = out.clone();
        d.dedup();
        assert_eq!(d.len(), 100);
        assert!(out.iter().all(|i| (1..=120).contains(i)));
    }

    #[test]
    fn scatter_is_a_permutation() {
        for n in [1, 7, 1000, 1024] {
            let mut seen: Vec<i64> = (0..n).map(|r| scatter(r, n)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>());
        }
    }
}
