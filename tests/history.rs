//! The history: change points judged on real step files' numbers (an A/A
//! fixture drawn from a real run with copies), the store on SQLite and on
//! a managed PostgreSQL with the same results, `run --history`, bisect
//! over real SQLite configurations, and `bisect-check`'s exit codes.

mod common;

use std::path::Path;

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use relbench::history::detect::{detect, Found, Point, Series, Settings};

use common::*;

/// One step of the fixture: each copy's repeats, and the run's A/A floor.
struct Pool {
    step: String,
    floor: Option<f64>,
    targets: Vec<Vec<f64>>,
}

fn fixture() -> Vec<Pool> {
    let v = read_json(Path::new("tests/fixtures/history/aa.json"));
    v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Pool {
            step: s["step"].as_str().unwrap().into(),
            floor: s["floor"].as_f64(),
            targets: s["targets"]
                .as_array()
                .unwrap()
                .iter()
                .zip(s["disturbed"].as_array().unwrap())
                .map(|(t, d)| {
                    // Disturbed repeats are left out, as the history does.
                    t.as_array()
                        .unwrap()
                        .iter()
                        .zip(d.as_array().unwrap())
                        .filter(|(_, d)| !d.as_bool().unwrap())
                        .map(|(x, _)| x.as_f64().unwrap())
                        .collect()
                })
                .collect(),
        })
        .collect()
}

/// A series of `builds` builds of identical binaries: each build one
/// copy's run (drawn at random), `repeats` of its repeats; builds from
/// `step_at` on scaled by `scale`.
fn draw(
    rng: &mut SmallRng,
    pool: &Pool,
    id: i64,
    builds: usize,
    repeats: usize,
    step_at: usize,
    scale: f64,
) -> Series {
    Series {
        id,
        points: (0..builds)
            .map(|b| {
                let t = &pool.targets[rng.random_range(0..pool.targets.len())];
                let mut v = t.clone();
                v.shuffle(rng);
                v.truncate(repeats);
                let k = if b >= step_at { scale } else { 1.0 };
                Point {
                    build: b,
                    values: v.iter().map(|x| x * k).collect(),
                }
            })
            .collect(),
        floor: pool.floor,
    }
}

#[test]
fn aa_histories_of_800_series_give_at_most_5pct_false_discoveries_and_the_same_output_every_time() {
    let pools = fixture();
    let mut rng = SmallRng::seed_from_u64(29);
    let series: Vec<Series> = (0..800)
        .map(|i| {
            // Every tenth a long history, whose best split is chosen among ~100.
            let builds = if i % 10 == 0 { 100 } else { 6 + (i % 25) };
            draw(
                &mut rng,
                &pools[i % pools.len()],
                i as i64,
                builds,
                3,
                usize::MAX,
                1.0,
            )
        })
        .collect();
    let found = detect(&series, &Settings::default());
    let false_series: std::collections::BTreeSet<i64> = found
        .iter()
        .filter(|f| f.is_change())
        .map(|f| f.series)
        .collect();
    let significant = found.iter().filter(|f| f.significant).count();
    eprintln!(
        "A/A: 800 series (6-30 or 100 builds × 3 repeats from {} real steps), {} splits tested, {} significant, \
         {} of them within the floor; series with a false change point: {} ({:.1}%)",
        pools.len(),
        found.len(),
        significant,
        found.iter().filter(|f| f.significant && f.below_floor).count(),
        false_series.len(),
        false_series.len() as f64 / 8.0
    );
    assert!(
        false_series.len() <= 40,
        "{} of 800 A/A series show a change",
        false_series.len()
    );
    // Deterministic: the same series give the same points, whatever the
    // threads did.
    let again: Vec<Found> = detect(&series, &Settings::default());
    assert_eq!(found, again);
}

#[test]
fn a_5pct_step_with_3_builds_of_4_repeats_a_side_is_found() {
    let pools = fixture();
    let mut rng = SmallRng::seed_from_u64(5);
    // The steps whose identical runs lie within 5% of each other: on the
    // others (writes, at 6–8% A/A) a 5% change is within the noise, and
    // not reporting it is right.
    let quiet: Vec<&Pool> = pools
        .iter()
        .filter(|p| p.floor.is_some_and(|f| f < 0.04))
        .collect();
    assert!(quiet.len() >= 4, "the fixture has too few quiet steps");
    let (mut hits, mut misplaced) = (0, 0);
    let n = 200;
    let series: Vec<Series> = (0..n)
        .map(|i| draw(&mut rng, quiet[i % quiet.len()], i as i64, 6, 4, 3, 0.95))
        .collect();
    let found = detect(&series, &Settings::default());
    for s in &series {
        let mine: Vec<&Found> = found
            .iter()
            .filter(|f| f.series == s.id && f.is_change())
            .collect();
        if mine.iter().any(|f| f.at == 3 && f.magnitude < 1.0) {
            hits += 1;
        }
        // A build next to the step that drew low repeats can take the
        // change point one build off; never further.
        assert!(
            mine.iter().all(|f| f.at.abs_diff(3) <= 1),
            "series {}: a change found elsewhere: {mine:?}",
            s.id
        );
        misplaced += mine.iter().filter(|f| f.at != 3).count();
    }
    eprintln!(
        "5% step, 3 builds × 4 repeats a side, {} steps of the fixture: found at its build in {hits} of {n} series, \
         one build off in {misplaced}",
        quiet.len()
    );
    for (i, p) in quiet.iter().enumerate() {
        let of_step: Vec<&Series> = series.iter().skip(i).step_by(quiet.len()).collect();
        let found_here = of_step
            .iter()
            .filter(|s| {
                found
                    .iter()
                    .any(|f| f.series == s.id && f.is_change() && f.at == 3)
            })
            .count();
        eprintln!(
            "  {}: A/A floor {:.1}%, found in {found_here} of {}",
            p.step,
            p.floor.unwrap() * 100.0,
            of_step.len()
        );
    }
    assert!(hits >= n * 85 / 100, "found in only {hits} of {n}");
    // Where identical runs lie within 2% of each other, all but a few.
    let quietest: Vec<i64> = series
        .iter()
        .filter(|s| quiet[s.id as usize % quiet.len()].floor.unwrap() < 0.02)
        .map(|s| s.id)
        .collect();
    let found_quietest = quietest
        .iter()
        .filter(|id| {
            found
                .iter()
                .any(|f| f.series == **id && f.is_change() && f.at == 3)
        })
        .count();
    assert!(
        found_quietest * 100 >= quietest.len() * 95,
        "steps with an A/A floor under 2%: found in {found_quietest} of {}",
        quietest.len()
    );
}

#[test]
fn with_half_the_series_changed_at_most_5pct_of_the_change_points_found_are_false() {
    // Benjamini–Hochberg's line rises with the true changes: the test of
    // each split must be valid on its own (the choice of the best split
    // counted), not only when every series is unchanged.
    let pools = fixture();
    let mut rng = SmallRng::seed_from_u64(31);
    let mut truth = std::collections::HashMap::new();
    let series: Vec<Series> = (0..800)
        .map(|i| {
            let builds = 8 + (i % 23);
            let pool = &pools[i % pools.len()];
            if i % 2 == 0 {
                draw(&mut rng, pool, i as i64, builds, 3, usize::MAX, 1.0)
            } else {
                let at = rng.random_range(3..builds - 2);
                truth.insert(i as i64, at);
                draw(&mut rng, pool, i as i64, builds, 3, at, 0.90)
            }
        })
        .collect();
    let found = detect(&series, &Settings::default());
    let changes: Vec<&Found> = found.iter().filter(|f| f.is_change()).collect();
    let false_ones = changes
        .iter()
        .filter(|f| truth.get(&f.series).is_none_or(|&at| f.at.abs_diff(at) > 1))
        .count();
    let true_found = truth
        .iter()
        .filter(|(s, at)| {
            changes
                .iter()
                .any(|f| f.series == **s && f.at.abs_diff(**at) <= 1)
        })
        .count();
    eprintln!(
        "half changed (10% steps): {} change points, {false_ones} false ({:.1}%); {true_found} of {} true changes found",
        changes.len(),
        100.0 * false_ones as f64 / changes.len().max(1) as f64,
        truth.len()
    );
    assert!(
        false_ones * 20 <= changes.len(),
        "{false_ones} of {} false",
        changes.len()
    );
}
