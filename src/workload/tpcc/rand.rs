//! TPC-C's own random numbers and strings (the specification, revision
//! 5.11, clause 4.3.2): NURand with its constants fixed per run, the
//! customers' last names from ten syllables, a- and n-strings, zip codes,
//! and the 10% of item and stock data that says "ORIGINAL".

use rand::Rng as _;

use crate::workload::dist::Rng;

/// The ten syllables a last name is made of, one per digit (4.3.2.3).
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The constants C of NURand(A, x, y) for a run (2.1.6): one for the
/// customers' last names (A = 255), one for their ids (A = 1023), one for
/// the items ordered (A = 8191). The load's last-name constant is kept
/// beside the run's: the spec asks the run's to differ from it by 65 to
/// 119, never 96 or 112 (2.1.6.1), so that the names a run asks for are
/// not the ones the load made most often.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Constants {
    pub c_last_load: u32,
    pub c_last: u32,
    pub c_id: u32,
    pub ol_i_id: u32,
}

impl Constants {
    /// Drawn once per run, from the run's seed.
    pub fn draw(rng: &mut Rng) -> Constants {
        let c_last_load = rng.random_range(0..=255);
        let c_last = loop {
            let c: u32 = rng.random_range(0..=255);
            let delta = c.abs_diff(c_last_load);
            if (65..=119).contains(&delta) && delta != 96 && delta != 112 {
                break c;
            }
        };
        Constants {
            c_last_load,
            c_last,
            c_id: rng.random_range(0..=1023),
            ol_i_id: rng.random_range(0..=8191),
        }
    }
}

/// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x:
/// non-uniform, some values far more often than others (2.1.6).
pub fn nurand(rng: &mut Rng, a: u32, x: u32, y: u32, c: u32) -> u32 {
    let r = rng.random_range(0..=a) | rng.random_range(x..=y);
    ((r + c) % (y - x + 1)) + x
}

/// The last name of number `n` (0 to 999): its three digits' syllables
/// (371 → PRICALLYOUGHT).
pub fn last_name(n: u32) -> String {
    let n = n % 1000;
    [n / 100, n / 10 % 10, n % 10]
        .iter()
        .map(|d| SYLLABLES[*d as usize])
        .collect()
}

/// The last name the load gives customer `c_id` (1 to 3,000 a district):
/// the first thousand in order, the others by NURand (4.3.3.1).
pub fn load_last_name(rng: &mut Rng, c: &Constants, c_id: u32) -> String {
    if c_id <= 1000 {
        last_name(c_id - 1)
    } else {
        last_name(nurand(rng, 255, 0, 999, c.c_last_load))
    }
}

/// A last name a transaction looks customers up by (2.5.1.2, 2.6.1.2).
pub fn run_last_name(rng: &mut Rng, c: &Constants) -> String {
    last_name(nurand(rng, 255, 0, 999, c.c_last))
}

/// A customer id as a transaction draws it: NURand(1023, 1, 3000).
pub fn customer_id(rng: &mut Rng, c: &Constants) -> u32 {
    nurand(rng, 1023, 1, 3000, c.c_id)
}

/// An item id as a new order draws it: NURand(8191, 1, 100000).
pub fn item_id(rng: &mut Rng, c: &Constants) -> u32 {
    nurand(rng, 8191, 1, 100_000, c.ol_i_id)
}

/// Appends an a-string of `min` to `max` letters and digits (4.3.2.2).
pub fn a_string(rng: &mut Rng, min: usize, max: usize, out: &mut String) {
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let n = rng.random_range(min..=max);
    out.extend((0..n).map(|_| ALNUM[rng.random_range(0..ALNUM.len())] as char));
}

/// Appends an n-string of `min` to `max` digits.
pub fn n_string(rng: &mut Rng, min: usize, max: usize, out: &mut String) {
    let n = rng.random_range(min..=max);
    out.extend((0..n).map(|_| char::from(b'0' + rng.random_range(0..10u8))));
}

/// A zip code: four random digits and "11111" (4.3.2.7).
pub fn zip(rng: &mut Rng) -> String {
    let mut s = String::with_capacity(9);
    n_string(rng, 4, 4, &mut s);
    s.push_str("11111");
    s
}

/// I_DATA or S_DATA: an a-string of 26 to 50, in 10% of rows with
/// "ORIGINAL" in it at a random place (4.3.3.1).
pub fn data(rng: &mut Rng) -> String {
    let mut s = String::with_capacity(50);
    a_string(rng, 26, 50, &mut s);
    if rng.random_range(0..10) == 0 {
        let at = rng.random_range(0..=s.len() - 8);
        s.replace_range(at..at + 8, "ORIGINAL");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::dist::rng;

    #[test]
    fn last_names_are_their_digits_syllables() {
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn the_runs_last_name_constant_keeps_the_specs_distance_from_the_loads() {
        for seed in 0..500 {
            let c = Constants::draw(&mut rng(seed, 1));
            let d = c.c_last.abs_diff(c.c_last_load);
            assert!((65..=119).contains(&d) && d != 96 && d != 112, "{c:?}");
            assert!(c.c_id <= 1023 && c.ol_i_id <= 8191);
        }
    }

    #[test]
    fn nurand_stays_in_its_range_and_favours_some_values() {
        let mut r = rng(7, 2);
        let c = Constants::draw(&mut r);
        let mut counts = vec![0u32; 3001];
        for _ in 0..300_000 {
            let id = customer_id(&mut r, &c);
            assert!((1..=3000).contains(&id));
            counts[id as usize] += 1;
        }
        // Uniform would give each id 100; NURand's OR makes some ids
        // several times as likely as others.
        let (lo, hi) = (
            counts[1..].iter().min().unwrap(),
            counts[1..].iter().max().unwrap(),
        );
        assert!(*hi > 3 * *lo.max(&1), "min {lo}, max {hi}");
        let item = item_id(&mut r, &c);
        assert!((1..=100_000).contains(&item));
    }

    #[test]
    fn a_tenth_of_the_data_says_original_and_zips_end_in_ones() {
        let mut r = rng(3, 4);
        let n = 20_000;
        let original = (0..n)
            .map(|_| data(&mut r))
            .inspect(|d| assert!((26..=50).contains(&d.len()), "{d}"))
            .filter(|d| d.contains("ORIGINAL"))
            .count();
        let share = original as f64 / n as f64;
        assert!((0.09..0.11).contains(&share), "{share}");
        let z = zip(&mut r);
        assert_eq!(z.len(), 9);
        assert!(z.ends_with("11111") && z.bytes().all(|b| b.is_ascii_digit()));
    }
}
