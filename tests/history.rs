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
        .filter(|f| {
            truth
                .get(&f.series)
                .map_or(true, |&at| f.at.abs_diff(at) > 1)
        })
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

/// What every plan of this file shares after its steps: one client, 4
/// repeats, a small table, short windows.
const SHORT: &str = r#"clients = [1]
repeats = 4
seed = 1
[scale]
tables = 1
rows = 20000
[duration]
warmup = "100ms"
read = "300ms"
"#;

/// Three steps on one SQLite target.
fn plan() -> String {
    format!(
        "steps = [\"load\", \"point-query\", \"range-covered-pk\"]\n{SHORT}[[target]]\nname = \"lite\"\nengine = \"sqlite\"\n"
    )
}

/// A copy of the real run in `src` as another build's run: its own start
/// (so its own run id), point-query's throughput scaled by `scale` and its
/// CPU per operation by 1 / `scale` (every other figure as measured), and
/// optionally another host.
fn as_build(src: &Path, dst: &Path, n: u32, scale: f64, cpu: Option<&str>) {
    copy_dir(src, dst);
    quiet(dst);
    let info = dst.join("run.json");
    let mut r = read_json(&info);
    r["started"] = format!("2026-11-{:02}T00:00:00Z", n).into();
    if let Some(c) = cpu {
        r["host"]["cpu_model"] = c.into();
    }
    std::fs::write(&info, serde_json::to_vec(&r).unwrap()).unwrap();
    for f in step_files(dst).iter().filter(|f| f.contains("point-query")) {
        let p = dst.join("steps").join(f);
        let mut s = read_json(&p);
        let t = s["throughput"].as_f64().unwrap();
        s["throughput"] = (t * scale).into();
        for k in ["own_cpu_us_per_op", "cpu_us_per_op", "client_cpu_us_per_op"] {
            if let Some(v) = s["metrics"][k].as_f64() {
                s["metrics"][k] = (v / scale).into();
            }
        }
        std::fs::write(&p, serde_json::to_vec(&s).unwrap()).unwrap();
    }
}

/// Every window of a run made quiet, as if no other program had shared
/// the machine. Regression (fresh-clone CI): the tests of this file run
/// side by side on two cores, so the real run's windows were judged
/// disturbed, left out, and there was nothing to find a change in. These
/// tests are of the history; the judging of windows has its own
/// (tests/interference.rs), and one test here marks a window disturbed.
/// A window stalled below half its siblings' median throughput is lifted
/// to that median too (regression, fresh-clone CI: one stalled 300 ms
/// window of each step, copied into all seven builds, left 22 repeats out
/// and the change unfound).
fn quiet(dir: &Path) {
    // Each window with its execution: its target and its file name past
    // the repeat (`lite/r2-02-point-query-c1.json` → `lite/02-point-query-c1.json`).
    let windows: Vec<(std::path::PathBuf, String, serde_json::Value)> = step_files(dir)
        .into_iter()
        .map(|f| {
            let p = dir.join("steps").join(&f);
            let (target, name) = f.split_once('/').unwrap();
            let execution = format!("{target}/{}", name.split_once('-').unwrap().1);
            let s = read_json(&p);
            (p, execution, s)
        })
        .collect();
    let rate = |s: &serde_json::Value| s["throughput"].as_f64().unwrap_or(0.0);
    let median = |execution: &str| {
        let mut all: Vec<f64> = windows
            .iter()
            .filter(|w| w.1 == execution)
            .map(|w| rate(&w.2))
            .collect();
        all.sort_by(f64::total_cmp);
        all[all.len() / 2]
    };
    for (p, execution, s) in &windows {
        let mut s = s.clone();
        let m = median(execution);
        if rate(&s) < 0.5 * m {
            s["throughput"] = m.into();
        }
        as_if_quiet(&mut s);
        std::fs::write(p, serde_json::to_vec(&s).unwrap()).unwrap();
    }
}

fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            if e.file_name() != "data" {
                copy_dir(&e.path(), &to);
            }
        } else if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

fn history(args: &[&str], at: &str, pw: Option<&str>) -> String {
    let mut c = relbench();
    c.arg("history").args(args).args(["--history", at]);
    if let Some(p) = pw {
        c.env("PGPASSWORD", p);
    }
    let out = c.assert().success().get_output().stdout.clone();
    String::from_utf8(out).unwrap()
}

/// Every step of the history through the binary on one store; returns
/// the change lines `history changes` printed, for comparing stores.
fn the_history_on(
    dir: &Path,
    builds: &[std::path::PathBuf],
    at: &str,
    pw: Option<&str>,
) -> Vec<String> {
    for (i, b) in builds.iter().enumerate() {
        let n = (i + 1).to_string();
        let name = format!("v{n}");
        let out = history(
            &["add", b.to_str().unwrap(), "--build", &name, "--order", &n],
            at,
            pw,
        );
        assert!(out.contains("3 new cells"), "{out}");
    }
    // Again: nothing new.
    let again = history(
        &[
            "add",
            builds[0].to_str().unwrap(),
            "--build",
            "v1",
            "--order",
            "1",
        ],
        at,
        pw,
    );
    assert!(
        again.contains("0 new cells, 0 updated, 3 already there"),
        "{again}"
    );
    let out = history(&["changes"], at, pw);
    let lines: Vec<String> = out
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(String::from)
        .collect();
    assert_eq!(lines.len(), 1, "{out}");
    let l = &lines[0];
    assert!(
        l.contains("point-query c1 ×0.") && l.contains("between v3 and v4"),
        "{l}"
    );
    // The change made was ×CHANGE exactly; the estimate pools each side's
    // repeats of one real run (one of them left out as disturbed), so it
    // moves with that run's spread: its interval must hold it, and the
    // CPU per operation named must be the one that predicts it.
    let after = |mark: char| l.split(mark).nth(1).unwrap();
    let number = |t: &str| -> f64 {
        t.chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect::<String>()
            .parse()
            .unwrap()
    };
    let magnitude = number(after('×'));
    let (lo, hi) = (number(after('(')), number(after('–')));
    assert!(lo <= CHANGE && CHANGE <= hi, "{l}");
    let cpu = number(
        l.split("CPU/op ×")
            .nth(1)
            .expect("the cost that moved is named"),
    );
    assert!(
        (cpu * magnitude - 1.0).abs() < 0.05 && l.contains("new CPU overhead"),
        "the cost that moved is named: {l}"
    );
    assert!(
        out.contains("6 series over 7 builds"),
        "the other host's run is a series of its own: {out}"
    );
    let report = dir.join(format!(
        "report-{}",
        if pw.is_some() { "pg" } else { "lite" }
    ));
    history(&["report", "--out", report.to_str().unwrap()], at, pw);
    let json = read_json(&report.join("history.json"));
    assert_eq!(json["open"].as_array().unwrap().len(), 1);
    assert!(std::fs::read_to_string(report.join("history.html"))
        .unwrap()
        .contains("<svg"));
    assert!(std::fs::read_to_string(report.join("history.md"))
        .unwrap()
        .contains("| point-query c1 (ops/s) |"));
    let id = l[1..].split(' ').next().unwrap();
    history(&["ack", id], at, pw);
    let after = history(&["changes"], at, pw);
    assert!(!after.lines().any(|l| l.starts_with('#')), "{after}");
    assert!(history(&["changes", "--all"], at, pw).contains("[acknowledged;"));
    let mut c = relbench();
    c.args(["history", "ack", "99", "--history", at]);
    if let Some(p) = pw {
        c.env("PGPASSWORD", p);
    }
    c.assert()
        .failure()
        .stderr(predicates::str::contains("no change point #99"));
    lines
}

#[test]
fn a_history_on_sqlite_and_on_postgres_finds_the_same_change_once() {
    let _one = alone();
    let dir = shared_tempdir();
    let plan = write_plan(dir.path(), &plan());
    // A real run, added to a history as it finishes.
    let run = dir.path().join("run");
    let nightly = dir.path().join("nightly.sqlite");
    run_quiet(&plan, &run)
        .args(["--history", nightly.to_str().unwrap(), "--build", "b0"])
        .assert()
        .success()
        .stderr(predicates::str::contains("new cells"));
    let out = history(&["changes"], nightly.to_str().unwrap(), None);
    assert!(
        out.contains("3 series over 1 build: 0 change points"),
        "{out}"
    );
    // Six builds of it, the last three half as fast on point queries, and
    // a seventh on another host, slower still: a new series, not a
    // regression. (Half, not 5%: the run's own repeats lie far apart while
    // the other tests of this file load the machine; 5% steps are the
    // fixture tests' business. At 20% a fresh-clone CI found no change:
    // the one real run's four point-query windows, copied into every build,
    // lay as far apart as the step, on a host whose speed wandered ±20%
    // between windows.)
    let mut builds = Vec::new();
    for i in 1..=7u32 {
        let b = dir.path().join(format!("b{i}"));
        let scale = match i {
            1..=3 => 1.0,
            4..=6 => CHANGE,
            _ => CHANGE * 0.6,
        };
        as_build(&run, &b, i, scale, (i == 7).then_some("Another CPU"));
        if i == 2 {
            // One window another program shared: left out, and said.
            let f = step_files(&b)
                .into_iter()
                .find(|f| f.contains("point-query"))
                .unwrap();
            mark_disturbed(&b.join("steps").join(f));
        }
        builds.push(b);
    }
    let lite = the_history_on(
        dir.path(),
        &builds,
        dir.path().join("h.sqlite").to_str().unwrap(),
        None,
    );
    let (server, url) = postgres_elsewhere(dir.path());
    let pg = the_history_on(dir.path(), &builds, &url, Some(server.rt.password.expose()));
    assert_eq!(lite, pg, "the two stores found different change points");
}

/// A copy of the real run in `src` as another build's run, each named
/// target's point-query throughput scaled by its factor (its CPU per
/// operation by the inverse).
fn as_build_of(src: &Path, dst: &Path, n: u32, scales: &[(&str, f64)]) {
    as_build(src, dst, n, 1.0, None);
    for f in step_files(dst).iter().filter(|f| f.contains("point-query")) {
        let Some((_, scale)) = scales.iter().find(|(t, _)| f.starts_with(&format!("{t}/"))) else {
            continue;
        };
        let p = dst.join("steps").join(f);
        let mut s = read_json(&p);
        s["throughput"] = (s["throughput"].as_f64().unwrap() * scale).into();
        for k in ["own_cpu_us_per_op", "cpu_us_per_op", "client_cpu_us_per_op"] {
            if let Some(v) = s["metrics"][k].as_f64() {
                s["metrics"][k] = (v / scale).into();
            }
        }
        std::fs::write(&p, serde_json::to_vec(&s).unwrap()).unwrap();
    }
}

/// The step between builds 3 and 4 of the history tests: far beyond the
/// spread of one real run's windows on a loaded, wandering host.
const CHANGE: f64 = 0.5;

/// Regression (the verdicts issue): quiet runs of one build drift 5–17%
/// between runs, and a history comparing runs made at different times
/// read the machine's level shifts as changes. With `reference = "ref"`
/// the plan runs a pinned build beside the one measured, and the history
/// keeps the measured build's windows as ratios to the reference's of the
/// same round: a machine half as fast from the fourth run on (both
/// targets) is no change point of the build's series, while the
/// reference's own series shows the shift; the build half as fast by
/// itself is one. (A shift of 20% failed once in a fresh-clone CI under
/// the whole suite's load: the floor its one copied run measured can pass
/// 20%; a halving is far beyond any floor a loaded host gives.)
#[test]
fn a_machine_level_shift_is_no_change_point_against_a_reference_run_beside() {
    let _one = alone();
    let dir = shared_tempdir();
    let plan = write_plan(
        dir.path(),
        &format!(
            "steps = [\"load\", \"point-query\"]\nreference = \"ref\"\n{}\
             [[target]]\nname = \"ref\"\nengine = \"sqlite\"\n\
             [[target]]\nname = \"build\"\nengine = \"sqlite\"\n",
            // Windows of a second: the one run every build is copied from
            // sets the series' A/A floor, and at 300 ms one noisy window
            // set it past the 20% shift (fresh-clone CI: the raw history
            // found no change between v3 and v4).
            SHORT.replace("read = \"300ms\"", "read = \"1s\"")
        ),
    );
    let run = dir.path().join("run");
    run_quiet(&plan, &run).assert().success();
    // Six runs as builds v1…v6 (the reference the same build in each),
    // each target's point queries scaled as `scales` says; `against`:
    // whether the runs name their reference (a control without it).
    let changes_of =
        |h: &str, against: bool, scales: &dyn Fn(u32) -> Vec<(&'static str, f64)>| -> String {
            for i in 1..=6u32 {
                let b = dir.path().join(format!("{h}-b{i}"));
                as_build_of(&run, &b, i, &scales(i));
                if !against {
                    let info = b.join("run.json");
                    let mut r = read_json(&info);
                    r["plan"].as_object_mut().unwrap().remove("reference");
                    std::fs::write(&info, serde_json::to_vec(&r).unwrap()).unwrap();
                    // The control keeps the build's windows alone. With
                    // the reference's beside them, both targets share one
                    // series, and `--order` moved the "ref" build to each
                    // run's place in turn: its six runs, pooled as one
                    // build between v5 and v6, gave a split "between ref
                    // and v6" that won over v3|v4 (fresh-clone CI).
                    std::fs::remove_dir_all(b.join("steps").join("ref")).unwrap();
                }
                let build = format!("build=v{i}");
                history(
                    &[
                        "add",
                        b.to_str().unwrap(),
                        "--build",
                        &build,
                        "--build",
                        "ref=ref",
                        "--order",
                        &i.to_string(),
                    ],
                    dir.path().join(h).to_str().unwrap(),
                    None,
                );
            }
            history(&["changes"], dir.path().join(h).to_str().unwrap(), None)
        };
    let machine = |i: u32| {
        let m = if i >= 4 { 0.5 } else { 1.0 };
        vec![("ref", m), ("build", m)]
    };
    // Without the reference, the machine's shift is the build's change.
    let raw = changes_of("raw.sqlite", false, &machine);
    assert!(
        raw.lines()
            .any(|l| l.starts_with('#') && l.contains("between v3 and v4")),
        "{raw}"
    );
    let shifted = changes_of("shift.sqlite", true, &machine);
    // The reference keeps the place its first run gave it: `--order`
    // places the builds measured against it.
    let c = rusqlite::Connection::open(dir.path().join("shift.sqlite")).unwrap();
    let ord: f64 = c
        .query_row("SELECT ord FROM builds WHERE name = 'ref'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(ord, 1.0);
    assert!(
        !shifted.lines().any(|l| l.starts_with('#')),
        "the machine's shift read as the build's change: {shifted}"
    );
    let regression = changes_of("regress.sqlite", true, &|i| {
        vec![("build", if i >= 4 { 0.5 } else { 1.0 })]
    });
    assert!(
        regression.lines().any(|l| l.starts_with('#')
            && l.contains("point-query")
            && l.contains("between v3 and v4")),
        "{regression}"
    );
}

#[test]
fn a_history_of_a_newer_schema_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("h.sqlite");
    // `history add` makes a history; the commands that only read refuse
    // one that is not there.
    relbench()
        .args(["history", "add", "tests/fixtures/results-tiny", "--history"])
        .arg(&h)
        .assert()
        .success();
    let c = rusqlite::Connection::open(&h).unwrap();
    c.execute_batch("UPDATE relbench_history SET value = '99' WHERE key = 'schema_version'")
        .unwrap();
    drop(c);
    relbench()
        .args(["history", "changes", "--history"])
        .arg(&h)
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "schema 99, newer than this relbench's",
        ));
    // Left as it is: no migration ran over it.
    let c = rusqlite::Connection::open(&h).unwrap();
    let v: String = c
        .query_row(
            "SELECT value FROM relbench_history WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(v, "99");
}

#[test]
fn a_history_file_relbench_did_not_create_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("app.sqlite");
    let c = rusqlite::Connection::open(&foreign).unwrap();
    c.execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(c);
    relbench()
        .args(["history", "changes", "--history"])
        .arg(&foreign)
        .assert()
        .failure()
        .stderr(predicates::str::contains("relbench did not create"));
    let c = rusqlite::Connection::open(&foreign).unwrap();
    let n: i64 = c
        .query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1, "the file was written into");
}

/// A plan of 16 SQLite "builds": the same configuration, but from build
/// `k` on a page cache of 10 pages that normal locking makes it read
/// again for every statement (point queries ~0.3× as fast). A small cache
/// alone, under exclusive locking, was ~0.8× on one machine and 1.17× on
/// a 2-vCPU EPYC VM: not a known cost.
fn builds_plan(k: usize) -> String {
    let mut p = format!("steps = [\"load\", \"point-query\"]\n{SHORT}");
    for i in 1..=16 {
        p.push_str(&format!(
            "[[target]]\nname = \"b{i:02}\"\nengine = \"sqlite\"\n[target.pragmas]\n{}",
            if i >= k {
                "locking_mode = \"normal\"\ncache_size = \"10\"\n"
            } else {
                "locking_mode = \"exclusive\"\n"
            }
        ));
    }
    p
}

#[test]
fn bisect_names_the_build_a_smaller_cache_came_in_within_six_evaluations() {
    let _one = alone();
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), &builds_plan(11));
    let names: Vec<String> = (1..=16).map(|i| format!("b{i:02}")).collect();
    let out = dir.path().join("bisect");
    let a = relbench()
        .arg("bisect")
        .arg(&plan)
        .args([
            "--builds",
            &names.join(","),
            "--step",
            "point-query",
            "--profile",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8(a.get_output().stdout.clone()).unwrap();
    eprintln!("{stdout}");
    assert!(
        stdout.contains("culprit: b11 (after b10): point-query ×0."),
        "{stdout}"
    );
    let j = read_json(&out.join("bisect.json"));
    let evaluations = j["evaluations"].as_u64().unwrap();
    assert!(evaluations <= 6, "{evaluations} build evaluations");
    assert!(j["repeats"].as_u64().unwrap() >= 6 * 4, "{j}");
    assert_eq!(j["culprits"].as_array().unwrap().len(), 1, "{j}");
    // `--profile`: the culprit and the build before it profiled once
    // more, and what moved between them said and kept.
    assert!(stdout.contains("profile of b11 against b10: "), "{stdout}");
    // Named: the kernel's file-lock functions normal locking calls per
    // statement. (The profiler's own CPU once read as another program's,
    // 7% of the machine, and no profiled repeat named anything.)
    // What the culprit does per statement that its predecessor does not:
    // normal locking takes and drops a file lock (fcntl) and looks for a
    // hot journal (fstatat, the kernel's path lookup); a 10-page cache
    // reads its pages again (pread). Which of these the samples put first
    // varies from run to run (the kernel's time is charged to the call
    // that entered it: `fcntl64 (in the kernel)`, `fstatat64 (in the
    // kernel)`, …), so any of them grown beyond the sampling noise is the
    // cause named.
    let p = &j["culprits"][0]["profile"];
    let grown = p["cpu_diff"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["beyond_noise"] == true)
        .filter_map(|f| f["name"].as_str())
        .any(|n| {
            ["lock", "fcntl", "stat", "pread"]
                .iter()
                .any(|k| n.contains(k))
        });
    assert!(grown, "{p}");

    // bisect-check, as `git bisect run` calls it, against the good and
    // bad builds' results.
    // The good build and a bad one far from it (SQLite's normal locking
    // takes a lock per statement: several times slower), so that the
    // answers are clear however busy the machine is.
    // A plan of the build just made (its locking) and, with `beside`,
    // the good build as its second target.
    let plan_of = |locking: &str, name: &str, beside: bool| {
        let d = dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        // The bad build as the bisected ones are: normal locking and a
        // 10-page cache (×0.57 in fresh-clone CI; normal locking alone
        // measured ×0.72, too near an identical pair's ×0.89 beside it).
        let pragmas = if locking == "normal" {
            "locking_mode = \"normal\"\ncache_size = \"10\"".to_string()
        } else {
            format!("locking_mode = \"{locking}\"")
        };
        let mut text = builds_plan(17).replacen("locking_mode = \"exclusive\"", &pragmas, 1);
        if beside {
            // Eight rounds beside the good build: at four, a good build
            // measured ×0.945 (0.764–1.185) against its own copy on a VM
            // whose speed wandered ±20% between windows (fresh-clone CI),
            // and the interval reached the midpoint to the bad results:
            // "cannot tell", honestly, where the test asks for "good".
            text = text.replacen("repeats = 4", "repeats = 8", 1);
        }
        let targets: String = text
            .split("[[target]]")
            .take(if beside { 3 } else { 2 })
            .collect::<Vec<_>>()
            .join("[[target]]");
        write_plan(&d, &targets)
    };
    let one = |locking: &str, name: &str| plan_of(locking, name, false);
    let good_plan = one("exclusive", "good");
    let bad_plan = one("normal", "bad");
    let (good, bad) = (dir.path().join("good/out"), dir.path().join("bad/out"));
    run_quiet(&good_plan, &good).assert().success();
    run_quiet(&bad_plan, &bad).assert().success();
    let checks = std::cell::Cell::new(0);
    let check = |plan: &Path, step: &str| {
        checks.set(checks.get() + 1);
        relbench()
            .arg("bisect-check")
            .arg(plan)
            .args(["--step", step, "--good"])
            .arg(&good)
            .arg("--bad")
            .arg(&bad)
            .arg("--out")
            .arg(dir.path().join(format!("check-{}", checks.get())))
            .output()
            .unwrap()
    };
    // Against results stored from the runs above, the answer carries the
    // level the machine held then: in a fresh-clone CI the bad build ran
    // at 62,003/s for the stored results and at 92,171/s in the check
    // minutes later (the host's speed wanders by that much), and the check
    // said "good". So here only what it does is checked — it measures
    // twice and answers good, bad or skip — and the answers themselves
    // are checked beside the good build below, which is what the guide
    // tells a user on such a host to do.
    for (plan, step) in [(&good_plan, "point-query"), (&bad_plan, "point-query")] {
        let o = check(plan, step);
        let said = String::from_utf8_lossy(&o.stderr);
        let code = o.status.code();
        assert!(matches!(code, Some(0 | 1 | 125)), "{code:?}: {said}");
        // An answer only once the second measurement gave it too; a
        // first one that cannot tell is not measured again.
        if code != Some(125) {
            assert!(said.contains("measured again"), "{said}");
        }
    }
    let o = check(&good_plan, "no-such-step");
    assert_eq!(
        o.status.code(),
        Some(128),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // With the good build as the plan's second target, the build just
    // made is measured beside it, round by round.
    let beside = |locking: &str, name: &str| plan_of(locking, name, true);
    // Never the wrong answer. Either build beside the good one may
    // honestly not be told from the midpoint on a host whose speed
    // wanders: in fresh-clone CI, eight rounds gave the good build ×0.913
    // (0.756–1.065) against a midpoint of ×0.784, and (2026-12-02) the bad
    // one ×0.643 (0.573–0.747) against a midpoint of ×0.733 — "cannot
    // tell" (125), which `git bisect run` skips. The good build is never
    // called bad, nor the bad one good.
    for (plan, good) in [
        (beside("exclusive", "good-beside"), true),
        (beside("normal", "bad-beside"), false),
    ] {
        let o = check(&plan, "point-query");
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(
            said.contains("against the good build run beside it"),
            "{said}"
        );
        match o.status.code() {
            Some(0) if good => {}
            Some(1) if !good => {}
            Some(125) => {
                assert!(said.contains("reaches the midpoint"), "{said}");
                continue;
            }
            code => panic!(
                "{code:?} for the {} build: {said}",
                if good { "good" } else { "bad" }
            ),
        }
        assert!(said.contains("measured again"), "{said}");
    }
}

#[test]
fn change_points_on_otavas_test_data_score_at_least_otavas_f1() {
    let python = std::env::var("RELBENCH_OTAVA_PYTHON").expect(
        "RELBENCH_OTAVA_PYTHON names a Python with apache-otava and otava-test-data: run the tests with ./test, \
         which makes that venv",
    );
    let out = std::process::Command::new(python)
        .arg("bench/changepoints.py")
        .arg("--relbench")
        .arg(bin())
        .arg("--check")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "relbench's F1 fell below Otava's");
    assert!(text.contains("relbench F1 / Otava F1"), "{text}");
}

#[test]
fn a_bisect_it_cannot_run_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), &builds_plan(11));
    let bisect = |builds: &str, extra: &[&str], says: &str| {
        relbench()
            .arg("bisect")
            .arg(&plan)
            .args(["--builds", builds, "--step", "point-query"])
            .args(extra)
            .arg("--out")
            .arg(dir.path().join("out"))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(says));
    };
    bisect("b01", &[], "two builds or more");
    bisect(
        "b01,nosuch",
        &[],
        "neither a target of the plan nor a directory",
    );
    // A basedir needs a managed target in the plan to stand in for.
    bisect("b01,/usr", &[], "the plan has no managed target");
    bisect(
        "b01,b02,b03",
        &["--good", "b03", "--bad", "b01"],
        "must come before",
    );
    bisect("b01,b02", &["--good", "b09"], "is not one of --builds");
    assert!(!dir.path().join("out").exists(), "nothing is run");
}

/// Bisect over real server builds, each a basedir standing in for the
/// plan's managed target: PostgreSQL 12, Debian's 15, 16 and 18. Whether
/// and where point queries changed across them is the servers' business;
/// what is checked is that each round started the builds asked for, and
/// that the search stayed within its evaluations.
#[test]
fn bisect_over_postgresql_builds_starts_each_basedir_asked_for() {
    let Some(versions) = std::env::var_os("RELBENCH_VERSIONS").map(std::path::PathBuf::from) else {
        panic!(
            "set RELBENCH_VERSIONS to the directory examples/get-versions.sh filled (./test does)"
        );
    };
    let builds: Vec<String> = [
        versions.join("postgres-12.22"),
        "/usr/lib/postgresql/15".into(),
        versions.join("postgres-16.10"),
        versions.join("postgres-18.0"),
    ]
    .iter()
    .map(|p| p.display().to_string())
    .collect();
    let dir = shared_tempdir();
    let plan = write_plan(
        dir.path(),
        &format!(
            "steps = [\"load\", \"point-query\"]\n{SHORT}[[target]]\nname = \"pg\"\nengine = \"postgres\"\nbasedir = \"/usr/lib/postgresql/15\"\n"
        ),
    );
    let out = dir.path().join("bisect");
    let o = relbench()
        .arg("bisect")
        .arg(&plan)
        .args([
            "--builds",
            &builds.join(","),
            "--step",
            "point-query",
            // The plan's own 4: rounds that add repeats only wait longer
            // for an outcome this test does not judge (77 s at 8).
            "--max-repeats",
            "4",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    eprintln!("{stdout}{stderr}");
    // These builds do not differ much on point-query: any honest outcome
    // (a clear culprit, no change, or unclear at the cap — which used to
    // exit 0 as a "culprit" — or, when the other tests of this file load
    // the machine, too few quiet windows to judge) will do; what is
    // tested is the rounds' builds.
    match o.status.code() {
        Some(5) => assert!(
            stderr.contains("could not be measured on this host") && !stdout.contains("culprit: /"),
            "{stdout}{stderr}"
        ),
        Some(0) => assert!(stdout.contains("culprit: "), "{stdout}"),
        Some(1) => assert!(stderr.contains("do not differ"), "{stderr}"),
        Some(4) => assert!(
            stderr.contains("no clear culprit") && !stdout.contains("culprit: /"),
            "{stdout}{stderr}"
        ),
        c => panic!("exit {c:?}: {stderr}"),
    }
    let j = read_json(&out.join("bisect.json"));
    assert!(j["evaluations"].as_u64().unwrap() <= 4, "{j}");
    // Every round ran the builds it named, each from its own basedir.
    let want = ["12.22", "15.", "16.10", "18.0"];
    let mut seen = 0;
    for round in std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
    {
        let info = read_json(&round.path().join("run.json"));
        for t in info["targets"].as_array().unwrap() {
            let name = t["name"].as_str().unwrap();
            let i: usize = name.trim_start_matches("build-").parse::<usize>().unwrap() - 1;
            let version = t["version"].as_str().unwrap();
            assert!(
                version.contains(want[i]),
                "{name} ran {version}, not {}",
                builds[i]
            );
            seen += 1;
        }
    }
    assert!(seen >= 2, "no round ran");
}

#[test]
fn a_runs_aa_copies_are_its_targets_build_and_carry_its_floor() {
    let _one = alone();
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        &plan()
            .replace("repeats = 4", "repeats = 2")
            .replace("engine = \"sqlite\"\n", "engine = \"sqlite\"\ncopies = 2\n"),
    );
    let run = dir.path().join("run");
    run_quiet(&plan, &run).assert().success();
    quiet(&run);
    let h = dir.path().join("h.sqlite");
    let out = history(
        &["add", run.to_str().unwrap(), "--build", "v1"],
        h.to_str().unwrap(),
        None,
    );
    assert!(
        out.contains("6 new cells"),
        "a target and its copy, 3 steps: {out}"
    );
    let c = rusqlite::Connection::open(&h).unwrap();
    let builds: i64 = c
        .query_row("SELECT COUNT(*) FROM builds", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        builds, 1,
        "the copies are the build of the target they copy"
    );
    let floors: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM cells WHERE floor IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(
        floors >= 6,
        "the run's A/A floor is kept with the cells ({floors})"
    );
}
