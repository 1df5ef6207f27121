//! End-to-end runs of the real binary on embedded SQLite.

mod common;

use common::*;
use std::time::{Duration, Instant};

#[test]
fn a_tiny_plan_runs_end_to_end_and_the_report_rebuilds_identically() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), TINY);
    let out = dir.path().join("out");
    let assert = relbench()
        .args(["run", "--quiet"])
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    // The relative table goes to stdout: both steps and the other target.
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    assert!(stdout.contains("Relative throughput"), "{stdout}");
    assert!(stdout.contains("update-index"), "{stdout}");
    assert!(stdout.contains("wal against base"), "{stdout}");

    // 2 targets × (load + settle + 6 workloads × 2 client counts).
    let files = step_files(&out);
    assert_eq!(files.len(), 2 * (2 + 6 * 2), "{files:?}");
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["status"], "complete");
    assert_eq!(run["schema_version"], relbench::results::SCHEMA_VERSION);
    assert_eq!(run["targets"][1]["config"]["journal_mode"], "wal");
    assert!(run["targets"][0]["version"]
        .as_str()
        .unwrap()
        .starts_with("SQLite 3."));
    // The data files are removed once the sequence is done.
    assert!(!out.join("data").exists());

    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for step in [
        "load",
        "point-query",
        "scan",
        "read-only-100",
        "update-index",
        "delete",
        "insert",
    ] {
        assert!(
            md.contains(&format!("| {step} |")),
            "{step} missing from the report"
        );
    }
    assert!(md.contains("| step | clients | wal |"), "{md}");

    // Every workload step measured something, without errors.
    for f in &files {
        let r = read_json(&out.join("steps").join(f));
        assert!(r["failed"].is_null(), "{f}: {}", r["failed"]);
        if r["kind"]["kind"] == "workload" {
            assert!(r["events"].as_u64().unwrap() > 0, "{f}");
            assert_eq!(r["errors"], serde_json::json!({}), "{f}");
            assert!(
                r["latency"]["event"]["p99_us"].as_f64().unwrap() > 0.0,
                "{f}"
            );
            let m = &r["metrics"];
            for k in ["cpu_us_per_op", "client_cpu_us_per_op"] {
                assert!(m[k].as_f64().unwrap() > 0.0, "{f}: {k}");
            }
            assert!(m["cs_per_op"].as_f64().is_some(), "{f}");
            // An embedded engine's own context switches are relbench's.
            assert!(m["own_cs_per_op"].as_f64().is_some(), "{f}");
            // An embedded engine has no server: not a missing figure.
            assert!(m["server_cpu_us_per_op"].is_null(), "{f}");
            assert!(r["notes"].get("server_cpu").is_none(), "{f}");
            // The series as columns (schema version 7).
            assert!(!m["per_second"]["t"].as_array().unwrap().is_empty(), "{f}");
            assert!(m["db_bytes_after"].as_u64().unwrap() > 0, "{f}");
            assert!(m["sampler"]["pct_of_core"].as_f64().unwrap() < 5.0, "{f}");
            assert!(r["notes"]["counters"]
                .as_str()
                .unwrap()
                .starts_with("not measured"));
        }
    }
    let scan = read_json(&out.join("steps/base/r1-04-scan-c1.json"));
    assert_eq!(scan["unit"], "rows/s");
    assert_eq!(scan["rows_per_event"], 2000);

    // `relbench report` over the directory writes the same tables again.
    let again = dir.path().join("again");
    relbench()
        .arg("report")
        .arg(&out)
        .arg("--out")
        .arg(&again)
        .assert()
        .success();
    assert_eq!(
        md,
        std::fs::read_to_string(again.join("report.md")).unwrap()
    );
    for f in ["report.csv", "report.json", "report.html"] {
        assert!(again.join(f).exists(), "{f}");
    }
}

#[test]
fn steps_can_stop_by_event_count() {
    let dir = tempfile::tempdir().unwrap();
    let text = TINY.replace("insert = \"300ms\"", "insert = \"300ms\"\nevents = 150");
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    for f in step_files(&out) {
        let r = read_json(&out.join("steps").join(&f));
        if r["kind"]["kind"] == "workload" {
            // Split over the clients, 150 in all.
            assert_eq!(r["events"], 150, "{f}");
            assert!(r["secs"].as_f64().unwrap() > 0.0, "{f}");
        }
    }
}

#[test]
fn every_latency_summary_keeps_its_whole_histogram_and_agrees_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), TINY);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let mut checked = 0;
    for f in step_files(&out) {
        let r = read_json(&out.join("steps").join(&f));
        let Some(lat) = r["latency"].as_object() else {
            continue;
        };
        for (class, l) in lat {
            let text = l["hdr"]
                .as_str()
                .unwrap_or_else(|| panic!("{f} {class}: no histogram"));
            let h = relbench::measure::hdr::decode(text).unwrap();
            assert_eq!(h.len(), l["count"].as_u64().unwrap(), "{f} {class}");
            let max_ns = (l["max_us"].as_f64().unwrap() * 1000.0).round() as u64;
            for (q, key) in [(0.5, "p50_us"), (0.99, "p99_us")] {
                let from_hdr = h.value_at_quantile(q).min(max_ns) as f64 / 1000.0;
                assert_eq!(from_hdr, l[key].as_f64().unwrap(), "{f} {class} {key}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} histograms");
}

#[test]
fn point_queries_after_deletes_are_not_counted_as_wrong_results() {
    // Regression: a delete step leaves holes in the ids, so "exactly one
    // row" no longer holds for point queries that follow it.
    let dir = tempfile::tempdir().unwrap();
    let text = TINY
        .replace(
            r#"steps = ["load", "settle", "point-query", "scan", "read-only-100", "update-index", "delete", "insert"]"#,
            r#"steps = ["load", "delete", "point-query", "random-points-10", "read-only-10"]"#,
        )
        .replace("rows = 2000", "rows = 300");
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    for f in step_files(&out) {
        let r = read_json(&out.join("steps").join(&f));
        assert_eq!(r["errors"], serde_json::json!({}), "{f}");
    }
}

#[test]
fn ctrl_c_keeps_finished_steps_and_resume_runs_only_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let text = TINY.replace("\"300ms\"", "\"1s\"");
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    let mut child = spawn_run(&plan, &out);
    let t0 = Instant::now();
    while step_files(&out).len() < 4 {
        assert!(t0.elapsed() < Duration::from_secs(60), "no step finished");
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130), "interrupted runs exit 130");
    let before = step_files(&out);
    assert!(before.len() >= 4 && before.len() < 28, "{before:?}");
    assert_eq!(read_json(&out.join("run.json"))["status"], "interrupted");
    // No half-written step.
    assert!(before.iter().all(|f| !f.contains(".tmp")), "{before:?}");
    let first = out.join("steps").join(&before[0]);
    let mtime = std::fs::metadata(&first).unwrap().modified().unwrap();

    // Resume needs no plan: the run kept its own copy.
    relbench()
        .args(["run", "-q", "--resume", "--out"])
        .arg(&out)
        .assert()
        .success();
    let after = step_files(&out);
    assert_eq!(after.len(), 28, "{after:?}");
    for f in &before {
        assert!(after.contains(f));
    }
    assert_eq!(
        std::fs::metadata(&first).unwrap().modified().unwrap(),
        mtime,
        "finished steps are not run again"
    );
    assert_eq!(read_json(&out.join("run.json"))["status"], "complete");
}

#[test]
fn a_second_run_into_the_same_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = TINY.replace(
        r#"steps = ["load", "settle", "point-query", "scan", "read-only-100", "update-index", "delete", "insert"]"#,
        r#"steps = ["load", "point-query"]"#,
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    // Regression: a finished run was told to `--resume`.
    run_quiet(&plan, &out)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("holds a finished run"))
        .stderr(predicates::str::contains("--confirm"))
        .stderr(predicates::prelude::PredicateBooleanExt::not(
            predicates::str::contains("--resume"),
        ));
    // Resuming with another plan is refused too.
    let other = write_plan(dir.path(), &text.replace("seed = 7", "seed = 8"));
    relbench()
        .args(["run", "-q", "--resume"])
        .arg(&other)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicates::str::contains("the plan differs"));
}

#[test]
fn a_target_whose_database_cannot_be_opened_gets_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let text = TINY.replace(
        "name = \"base\"\nengine = \"sqlite\"",
        "name = \"base\"\nengine = \"sqlite\"\npath = \".\"",
    );
    let plan = write_plan(dir.path(), &text);
    // A path that names something relbench did not make (here a
    // directory) is refused with the plan, before anything runs.
    run_quiet(&plan, dir.path().join("out"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("plan.toml:25:8"))
        .stderr(predicates::str::contains("relbench did not create it"));
    // A path in a directory that does not exist: said, and not made
    // (it is the user's place, not relbench's).
    let text = TINY.replace(
        "name = \"base\"\nengine = \"sqlite\"",
        "name = \"base\"\nengine = \"sqlite\"\npath = \"/proc/relbench-test/x.db\"",
    );
    let plan = write_plan(dir.path(), &text);
    run_quiet(&plan, dir.path().join("out2"))
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "target \"base\": the directory of its path /proc/relbench-test/x.db does not exist",
        ));
}

#[test]
fn every_id_distribution_runs_and_keeps_the_row_checks() {
    // Skewed draws must still give in-lists of distinct ids and ranges that
    // fit in the table.
    for d in ["uniform", "zipfian", "hotset"] {
        let dir = tempfile::tempdir().unwrap();
        let text = TINY
            .replace(
                r#"steps = ["load", "settle", "point-query", "scan", "read-only-100", "update-index", "delete", "insert"]"#,
                r#"steps = ["load", "point-query", "random-points-100", "read-only-100", "update-inlist"]"#,
            )
            .replace("seed = 7", &format!("seed = 7\ndistribution = \"{d}\""))
            // One client: the row checks are each client's own.
            .replace("clients = [1, 2]", "clients = [1]");
        let plan = write_plan(dir.path(), &text);
        let out = dir.path().join("out");
        run_quiet(&plan, &out).assert().success();
        assert_eq!(read_json(&out.join("run.json"))["plan"]["distribution"], d);
        for f in step_files(&out) {
            let r = read_json(&out.join("steps").join(&f));
            assert_eq!(r["errors"], serde_json::json!({}), "{d} {f}");
        }
    }
}

#[test]
fn the_plans_comparisons_shape_the_runs_report_and_a_later_report() {
    let dir = tempfile::tempdir().unwrap();
    // Three targets, two comparisons: wal against base, and base against
    // off (the second target is not the first comparison's base).
    let text = TINY
        .replace("clients = [1, 2]", "clients = [1]")
        .replace(
            "steps = [\"load\", \"settle\", \"point-query\", \"scan\", \"read-only-100\", \"update-index\", \"delete\", \"insert\"]",
            "steps = [\"load\", \"point-query\", \"update-index\"]",
        )
        + "\n[[target]]\nname = \"off\"\nengine = \"sqlite\"\n[target.pragmas]\njournal_mode = \"wal\"\nsynchronous = \"off\"\n\n\
           [[comparison]]\ntitle = \"WAL on the default\"\nbase = \"base\"\ntargets = [\"base\", \"wal\"]\n\n\
           [[comparison]]\ntitle = \"Default on no sync\"\nbase = \"off\"\ntargets = [\"off\", \"base\"]\n";
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    let run = relbench()
        .args(["run"])
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).into_owned();
    assert!(stdout.contains("== WAL on the default =="), "{stdout}");
    assert!(stdout.contains("== Default on no sync =="), "{stdout}");
    assert!(stdout.contains("Target ÷ base (off)"), "{stdout}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("WAL on the default") && md.contains("Default on no sync"));
    // A later `relbench report` of the run compares the same way, unless
    // told otherwise.
    let again = dir.path().join("again");
    relbench()
        .args(["report"])
        .arg(&out)
        .arg("--out")
        .arg(&again)
        .arg("--format")
        .arg("md")
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(again.join("report.md")).unwrap(),
        md
    );
    let by_base = dir.path().join("by-base");
    relbench()
        .args(["report"])
        .arg(&out)
        .args(["--base", "wal", "--format", "md", "--out"])
        .arg(&by_base)
        .assert()
        .success();
    let md = std::fs::read_to_string(by_base.join("report.md")).unwrap();
    assert!(!md.contains("Default on no sync"), "{md}");
}

/// Regression (issue 32): the seed was fixed, so a second run on the data
/// a first one used replayed its ids (96–100% of LinkBench's delete_node
/// found nothing). Without `seed` each run draws its own and records it;
/// `--resume` goes on with the recorded one; `seed = N` still fixes it.
#[test]
fn a_plan_without_a_seed_draws_one_per_run_and_resume_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = TINY
        .replace("seed = 7\n", "")
        .replace(
            r#"steps = ["load", "settle", "point-query", "scan", "read-only-100", "update-index", "delete", "insert"]"#,
            r#"steps = ["load", "point-query"]"#,
        )
        .replace("clients = [1, 2]", "clients = [1]");
    let plan = write_plan(dir.path(), &text);
    let seed_of = |out: &std::path::Path| {
        let info = read_json(&out.join("run.json"));
        assert_eq!(info["plan"]["seed_fixed"], false, "{}", info["plan"]);
        info["plan"]["seed"].as_u64().unwrap()
    };
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run_quiet(&plan, &a).assert().success();
    run_quiet(&plan, &b).assert().success();
    let first = seed_of(&a);
    assert_ne!(first, seed_of(&b), "two runs drew the same seed");
    // An unfinished run resumed from the plan file goes on with its seed.
    let mut info = read_json(&a.join("run.json"));
    info["status"] = "running".into();
    std::fs::write(
        a.join("run.json"),
        serde_json::to_vec_pretty(&info).unwrap(),
    )
    .unwrap();
    let last = a.join("steps/wal/r1-02-point-query-c1.json");
    std::fs::remove_file(&last).unwrap();
    relbench()
        .args(["run", "-q", "--resume"])
        .arg(&plan)
        .arg("--out")
        .arg(&a)
        .assert()
        .success();
    assert!(last.exists());
    assert_eq!(seed_of(&a), first);
    // Given, it is the plan's.
    let fixed = write_plan(dir.path(), &format!("seed = 42\n{text}"));
    relbench()
        .args(["check"])
        .arg(&fixed)
        .assert()
        .success()
        .stdout(predicates::str::contains("seed: 42"));
}
