//! sysbench 1.0's random functions (`sysbench.rand.*`, `--rand-type`),
//! drawn from the client's own generator so a run repeats exactly. The
//! shapes are sysbench's: `special` puts `rand_spec_res`% of the draws on
//! `rand_spec_pct`% of the range around its middle and the rest on a
//! sum-of-uniforms bell; `gaussian` is that bell; `pareto` is
//! `a + (b-a+1)·u^(ln h / ln(1-h))`; `zipfian` (sysbench 1.1's) is
//! rejection-inversion sampling of a bounded Zipf law; `unique` walks a
//! permutation of the 32-bit integers shared by every client of a step.

use std::sync::atomic::{AtomicU32, Ordering};

use rand::Rng as _;

use crate::workload::dist::Rng;

/// A Lua number as one of sysbench's `uint32_t` bounds: LuaJIT converts
/// by truncation (a negative wraps, as in C).
pub fn bound(v: f64) -> u32 {
    v as i64 as u32
}

/// The distribution `sysbench.rand.default` draws from (`--rand-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Default {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}

impl Default {
    pub const NAMES: [&'static str; 5] = ["uniform", "gaussian", "special", "pareto", "zipfian"];

    pub fn parse(s: &str) -> Option<Default> {
        Some(match s {
            "uniform" => Default::Uniform,
            "gaussian" => Default::Gaussian,
            "special" => Default::Special,
            "pareto" => Default::Pareto,
            "zipfian" => Default::Zipfian,
            _ => return None,
        })
    }
}

/// The `--rand-*` settings, as sysbench's defaults unless given.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub default: Default,
    pub spec_iter: u32,
    pub spec_pct: f64,
    pub spec_res: f64,
    pub pareto_h: f64,
    pub zipfian_exp: f64,
}

impl std::default::Default for Settings {
    fn default() -> Self {
        Settings {
            default: Default::Special,
            spec_iter: 12,
            spec_pct: 1.0,
            spec_res: 75.0,
            pareto_h: 0.2,
            zipfian_exp: 0.8,
        }
    }
}

/// One client's generator with the step's settings.
pub struct Draw {
    pub rng: Rng,
    pub settings: Settings,
    pub unique: std::sync::Arc<Unique>,
}

impl Draw {
    /// A double in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.rng.random::<f64>()
    }

    pub fn uniform(&mut self, a: u32, b: u32) -> u32 {
        let span = f64::from(b.wrapping_sub(a)) + 1.0;
        a.wrapping_add((self.unit() * span) as u32)
    }

    pub fn gaussian(&mut self, a: u32, b: u32) -> u32 {
        let t = f64::from(b.wrapping_sub(a)) + 1.0;
        let iter = self.settings.spec_iter.max(1);
        let sum: f64 = (0..iter).map(|_| self.unit() * t).sum();
        a.wrapping_add((sum / f64::from(iter)) as u32)
    }

    pub fn special(&mut self, a: u32, b: u32) -> u32 {
        let s = self.settings;
        let t = f64::from(b.wrapping_sub(a));
        let rnd = self.unit();
        // The range stretched so that the bell gets (100 - res)% of it.
        if rnd * t * (100.0 / (100.0 - s.spec_res)) < t {
            let iter = s.spec_iter.max(1);
            let sum: f64 = (0..iter).map(|_| self.unit()).sum();
            return a.wrapping_add((sum * t / f64::from(iter)) as u32);
        }
        // The rest: uniform on pct% of the range, centred.
        let d = t * s.spec_pct / 100.0;
        let at = rnd * (d + 1.0) + t / 2.0 - t * s.spec_pct / 200.0;
        a.wrapping_add(at as u32)
    }

    pub fn pareto(&mut self, a: u32, b: u32) -> u32 {
        let h = self.settings.pareto_h;
        let power = h.ln() / (1.0 - h).ln();
        let span = f64::from(b.wrapping_sub(a)) + 1.0;
        a.wrapping_add((span * self.unit().powf(power)) as u32)
    }

    pub fn zipfian(&mut self, a: u32, b: u32) -> u32 {
        let n = f64::from(b.wrapping_sub(a)) + 1.0;
        let e = self.settings.zipfian_exp;
        // H(x), the hat's integral, and its inverse, with their limits at
        // e = 1 taken through the helpers.
        let h_int = |x: f64| {
            let l = x.ln();
            helper2((1.0 - e) * l) * l
        };
        let h = |x: f64| (-e * x.ln()).exp();
        let h_inv = |x: f64| {
            let mut t = x * (1.0 - e);
            if t < -1.0 {
                t = -1.0;
            }
            (helper1(t) * x).exp()
        };
        let x1 = h_int(1.5) - 1.0;
        let s = 2.0 - h_inv(h_int(2.5) - h(2.0));
        let top = h_int(n + 0.5);
        loop {
            let u = top + self.unit() * (x1 - top);
            let x = h_inv(u);
            let k = ((x + 0.5) as u64).clamp(1, n as u64);
            let kf = k as f64;
            if kf - x <= s || u >= h_int(kf + 0.5) - h(kf) {
                return a.wrapping_add(k as u32 - 1);
            }
        }
    }

    pub fn default(&mut self, a: u32, b: u32) -> u32 {
        match self.settings.default {
            Default::Uniform => self.uniform(a, b),
            Default::Gaussian => self.gaussian(a, b),
            Default::Special => self.special(a, b),
            Default::Pareto => self.pareto(a, b),
            Default::Zipfian => self.zipfian(a, b),
        }
    }

    /// `#` becomes a digit, `@` a lowercase letter, anything else stays.
    pub fn string(&mut self, fmt: &[u8], out: &mut Vec<u8>) {
        out.clear();
        for &c in fmt {
            out.push(match c {
                b'#' => self.uniform(u32::from(b'0'), u32::from(b'9')) as u8,
                b'@' => self.uniform(u32::from(b'a'), u32::from(b'z')) as u8,
                c => c,
            });
        }
    }

    /// Between `min` and `max` characters from '0' to 'z'.
    pub fn varstring(&mut self, min: u32, max: u32, out: &mut Vec<u8>) {
        out.clear();
        if max == 0 {
            return;
        }
        let min = if min > max { 1 } else { min };
        let n = self.uniform(min, max);
        for _ in 0..n {
            out.push(self.uniform(u32::from(b'0'), u32::from(b'z')) as u8);
        }
    }
}

/// `log1p(x)/x`, 1 at 0 (sysbench's helper1).
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// `expm1(x)/x`, 1 at 0 (sysbench's helper2).
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

/// `sysbench.rand.unique()`: a permutation of the 32-bit integers walked
/// by every client of a step together, so no two draws repeat.
#[derive(Debug)]
pub struct Unique {
    index: AtomicU32,
    offset: u32,
}

impl Unique {
    pub fn new(seed: u64) -> Unique {
        Unique {
            index: AtomicU32::new(permute(permute(seed as u32).wrapping_add(0x682f_0161))),
            offset: permute(permute((seed >> 32) as u32).wrapping_add(0x4679_0905)),
        }
    }

    pub fn next(&self) -> u32 {
        let i = self.index.fetch_add(1, Ordering::Relaxed);
        permute((permute(i).wrapping_add(self.offset)) ^ 0x5bf0_3635)
    }
}

/// A bijection of the 32-bit integers by quadratic residues modulo the
/// largest 32-bit prime (the five above it map to themselves).
fn permute(x: u32) -> u32 {
    const PRIME: u64 = 4_294_967_291;
    if u64::from(x) >= PRIME {
        return x;
    }
    let r = (u64::from(x) * u64::from(x) % PRIME) as u32;
    if u64::from(x) <= PRIME / 2 {
        r
    } else {
        (PRIME - u64::from(r)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(default: Default) -> Draw {
        Draw {
            rng: crate::workload::dist::rng(7, 1),
            settings: Settings {
                default,
                ..Settings::default()
            },
            unique: std::sync::Arc::new(Unique::new(7)),
        }
    }

    #[test]
    fn every_distribution_stays_in_its_range() {
        for d in Default::NAMES {
            let mut r = draw(Default::parse(d).unwrap());
            for _ in 0..20_000 {
                let v = r.default(10, 1000);
                assert!((10..=1000).contains(&v), "{d}: {v}");
            }
        }
    }

    #[test]
    fn special_puts_three_quarters_of_the_draws_on_one_percent_in_the_middle() {
        let mut r = draw(Default::Special);
        let n = 100_000;
        let hot = (0..n)
            .filter(|_| (4950..=5060).contains(&r.special(1, 10_000)))
            .count();
        let share = hot as f64 / n as f64;
        assert!((0.74..0.80).contains(&share), "{share}");
    }

    #[test]
    fn zipfian_favours_the_first_values() {
        let mut r = draw(Default::Zipfian);
        let n = 50_000;
        let first = (0..n).filter(|_| r.zipfian(1, 1000) == 1).count();
        let last = (0..n).filter(|_| r.zipfian(1, 1000) == 1000).count();
        assert!(first > 20 * last.max(1), "{first} {last}");
    }

    #[test]
    fn unique_draws_do_not_repeat_and_strings_follow_their_template() {
        let r = Unique::new(3);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100_000 {
            assert!(seen.insert(r.next()));
        }
        let mut d = draw(Default::Uniform);
        let mut out = Vec::new();
        d.string(b"##-@@x", &mut out);
        let s = String::from_utf8(out).unwrap();
        assert!(s.as_bytes()[..2].iter().all(u8::is_ascii_digit), "{s}");
        assert!(s.as_bytes()[3..5].iter().all(u8::is_ascii_lowercase), "{s}");
        assert_eq!(&s[2..3], "-");
        assert_eq!(&s[5..], "x");
    }
}
