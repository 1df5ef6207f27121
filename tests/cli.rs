//! The command line: bad input gets a message that says where and what to
//! do, and the informational commands show the catalogue.

mod common;

use common::*;
use predicates::prelude::*;
use predicates::str::contains;

#[test]
fn a_bad_plan_exits_2_naming_file_line_column_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        "steps = [\"load\", \"point-qeury\"]\n\n[scale]\nrows = 0\n\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
    );
    relbench()
        .arg("run")
        .arg(&plan)
        .assert()
        .code(2)
        .stderr(contains("the plan has 2 problems; nothing was run"))
        .stderr(contains("plan.toml:1:18: unknown step \"point-qeury\""))
        .stderr(contains("help: did you mean \"point-query\"?"))
        .stderr(contains(
            "plan.toml:4:8: rows must be between 1 and 2000000000, not 0",
        ));
    // Nothing was created.
    assert!(!dir.path().join("results").exists());
}

/// Regression (issue 62): an unknown key hid the plan's other problems,
/// so a misspelt step and a bad duration appeared one fix at a time.
#[test]
fn check_reports_an_unknown_key_a_misspelt_step_and_a_bad_duration_in_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        "repeat = 2\nsteps = [\"load\", \"point-qeury\"]\n[duration]\nread = \"5sec\"\n\
         [[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
    );
    relbench()
        .arg("check")
        .arg(&plan)
        .assert()
        .code(2)
        .stderr(contains("the plan has 3 problems; nothing was run"))
        .stderr(contains("plan.toml:1:1: unknown key `repeat`"))
        .stderr(contains("did you mean `repeats`?"))
        .stderr(contains("plan.toml:2:18: unknown step \"point-qeury\""))
        .stderr(contains("plan.toml:4:8: read is not a duration: \"5sec\""));
}

#[test]
fn an_unknown_key_lists_the_keys_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), "clients = [1]\n[duration]\nreads = \"10s\"\n");
    relbench()
        .arg("check")
        .arg(&plan)
        .assert()
        .code(2)
        .stderr(contains("plan.toml:3:1: unknown key `reads`"))
        .stderr(contains("`read`"));
}

#[test]
fn a_missing_plan_file_points_to_init() {
    relbench()
        .args(["run", "/nonexistent/plan.toml"])
        .assert()
        // A bad command line, as documented (it was 1).
        .code(2)
        .stderr(contains("cannot read plan /nonexistent/plan.toml"))
        .stderr(contains("relbench init"));
}

/// A one-off point-query run's refusal with these flags: what it says on
/// stderr (exit 2: a bad command line).
fn one_off_refusal(flags: &[&str]) -> String {
    let out = relbench()
        .args([
            "run",
            "--sqlite",
            "/tmp/never.db",
            "--workload",
            "point-query",
        ])
        .args(flags)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    err
}

/// Regression: `--time 5sec` gave three errors at `<command line>:5:10`,
/// one per key the flag fills, in a plan the user never wrote.
#[test]
fn a_one_off_runs_problems_name_its_flags() {
    let err = one_off_refusal(&["--time", "5sec", "--clients", "0"]);
    assert!(err.contains("the command line has 2 problems"), "{err}");
    assert!(err.contains("--time: not a duration: \"5sec\""), "{err}");
    assert!(err.contains("--clients: a client count must be"), "{err}");
    assert!(!err.contains("<command line>:"), "{err}");
    // A step table's key is named by the error itself, not guessed from
    // its text (regression: "rate" in the message was looked for, on a
    // line the plan never wrote, so `--rate 0` was "the command line").
    let err = one_off_refusal(&["--rate", "0"]);
    assert!(err.contains("--rate: takes a whole number"), "{err}");
}

/// The one-off mode's flags that need one: a bad interval and `--json`
/// with a plan are bad command lines.
#[test]
fn one_off_flags_that_cannot_work_exit_2() {
    relbench()
        .args([
            "run",
            "--sqlite",
            "/tmp/never.db",
            "--workload",
            "point-query",
        ])
        .args(["--report-interval", "soon"])
        .assert()
        .code(2)
        .stderr(contains("--report-interval soon: not a duration"));
    relbench()
        .args(["run", "--json", "nosuch.toml"])
        .assert()
        .code(2)
        .stderr(contains("--json prints one workload's figures"));
}

#[test]
fn resume_without_out_says_what_it_needs() {
    relbench()
        .args(["run", "--resume"])
        .assert()
        .code(1)
        .stderr(contains("--resume needs --out DIR"));
}

#[test]
fn init_writes_a_plan_that_checks_and_will_not_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.toml");
    relbench().arg("init").arg(&file).assert().success();
    relbench()
        .arg("check")
        .arg(&file)
        .assert()
        .success()
        .stdout(contains("valid"))
        .stdout(contains("default (sqlite), wal (sqlite)"))
        .stdout(contains("load → settle → scan.warm"));
    // Regression: the example ran 2 h 10 min and said so as "7790 s".
    let out = relbench().arg("check").arg(&file).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.contains("step runs; ")).unwrap();
    let minutes: f64 = line
        .split("step runs; ")
        .nth(1)
        .and_then(|r| r.split(" min").next())
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("not in minutes: {line}"));
    assert!((5.0..=15.0).contains(&minutes), "{line}");
    relbench()
        .arg("init")
        .arg(&file)
        .assert()
        .code(1)
        .stderr(contains("--force"));
    relbench()
        .arg("init")
        .arg(&file)
        .arg("--force")
        .assert()
        .success();
}

#[test]
fn list_shows_every_workload_with_its_group() {
    relbench()
        .arg("list")
        .assert()
        .success()
        .stdout(contains("sysbench"))
        .stdout(contains("point-query"))
        .stdout(contains("read-only-10000"))
        .stdout(predicate::str::is_match(r"update-zipf\s+write\s+write").unwrap());
}

#[test]
fn show_prints_the_sql_of_every_dialect() {
    relbench()
        .args(["show", "update-inlist"])
        .assert()
        .success()
        .stdout(contains("-- sqlite"))
        .stdout(contains(
            "UPDATE sbtest1 SET c=? WHERE id IN (?,?,?,?,?,?,?,?,?,?)",
        ))
        .stdout(contains(
            "UPDATE sbtest1 SET c=$1 WHERE id IN ($2,$3,$4,$5,$6,$7,$8,$9,$10,$11)",
        ));
    relbench()
        .args(["show", "load"])
        .assert()
        .success()
        .stdout(contains("AUTO_INCREMENT"))
        .stdout(contains("GENERATED BY DEFAULT AS IDENTITY"))
        .stdout(contains("CREATE INDEX k_1 ON sbtest1(k)"));
    relbench()
        .args(["show", "point-qurey"])
        .assert()
        .code(1)
        .stderr(contains("did you mean \"point-query\"?"));
}

#[test]
fn report_with_an_unknown_base_lists_the_targets() {
    let dir = tempfile::tempdir().unwrap();
    relbench()
        .args([
            "report",
            "tests/fixtures/results-tiny",
            "--base",
            "nope",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(contains(
            "--base nope: no target of that name in these results; the targets are: base, wal",
        ));
}

#[test]
fn report_of_a_directory_that_is_not_a_run_says_so() {
    let dir = tempfile::tempdir().unwrap();
    relbench()
        .arg("report")
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(contains("is not a relbench results directory"));
}

#[test]
fn report_writes_only_the_formats_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    relbench()
        .args([
            "report",
            "tests/fixtures/results-tiny",
            "--format",
            "md,csv",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success();
    assert!(dir.path().join("report.md").exists());
    assert!(dir.path().join("report.csv").exists());
    assert!(!dir.path().join("report.html").exists());
    relbench()
        .args(["report", "tests/fixtures/results-tiny", "--format", "pdf"])
        .assert()
        .code(2)
        .stderr(contains("unknown format \"pdf\""));
}

#[test]
fn markdown_links_charts_that_are_written_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    relbench()
        .args([
            "report",
            "tests/fixtures/results-repeats",
            "--format",
            "md",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    let links: Vec<&str> = md
        .split("](")
        .skip(1)
        .filter_map(|s| s.split(')').next())
        // The table of contents links headings, not files.
        .filter(|l| !l.starts_with('#'))
        .collect();
    assert!(links.len() >= 10, "{links:?}");
    for l in links {
        let svg =
            std::fs::read_to_string(dir.path().join(l)).unwrap_or_else(|e| panic!("{l}: {e}"));
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{l}"
        );
        assert!(
            svg.contains("class=\"bar\"")
                || svg.contains("class=\"series\"")
                || svg.contains("class=\"heat\""),
            "{l}"
        );
    }
}

#[test]
fn the_example_plans_are_valid() {
    // Their basedirs and config files must exist: `./test` installs the
    // Debian packages they name.
    for f in ["examples/three-engines.toml", "examples/buffer-pool.toml"] {
        relbench()
            .args(["check", f])
            .assert()
            .success()
            .stdout(contains("valid"));
    }
    // Every example, where its files are here: the builds come from
    // examples/get-versions.sh, which `./test` links into examples/.
    let mut checked = 0;
    for e in std::fs::read_dir("examples").unwrap().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        if text.contains("versions/") && !std::path::Path::new("examples/versions").exists() {
            eprintln!(
                "not checked: {} (no examples/versions; ./test links it)",
                p.display()
            );
            continue;
        }
        let out = relbench().arg("check").arg(&p).output().unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            p.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        // Each comparison's base is run twice: without A/A pairs, a
        // one-repeat plan's ratios cannot be tested.
        assert!(text.contains("copies = 2"), "{}", p.display());
        checked += 1;
    }
    assert!(checked >= 5, "{checked}");
}

/// Regression: `check examples/versions.toml` without the builds gave 18
/// problems, 11 of them its comparisons naming the targets that failed,
/// with an empty list of the plan's targets, and no word of
/// examples/get-versions.sh.
#[test]
fn a_target_that_fails_its_checks_is_not_blamed_again_by_every_comparison() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        "[[target]]\nname = \"old\"\nengine = \"mariadb\"\nbasedir = \"versions/mariadb-10.2.11\"\n\
         [[target]]\nname = \"new\"\nengine = \"mariadb\"\nbasedir = \"versions/mariadb-11.4.5\"\n\
         [[comparison]]\nbase = \"old\"\ntargets = [\"new\"]\n",
    );
    let out = relbench().arg("check").arg(&plan).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the plan has 2 problems"), "{err}");
    assert!(!err.contains("comparison names"), "{err}");
    assert!(err.contains("examples/get-versions.sh"), "{err}");
}

/// Runs relbench with its stdout a pipe whose reader is already gone, as
/// in `relbench list | head -1` once head has its line.
fn with_stdout_closed(args: &[&str]) -> std::process::Output {
    let mut child = std::process::Command::new(bin())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_stdout_ends_the_output_quietly() {
    // `relbench list | head -1` panicked with exit 101 (broken pipe).
    for args in [&["list"][..], &["show", "point-query"]] {
        let o = with_stdout_closed(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {o:?}");
        assert!(
            o.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // A report still writes its files when nobody reads the list of them.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = with_stdout_closed(&[
        "report",
        "tests/fixtures/results-tiny",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(out.join("report.html").exists() && out.join("report.json").exists());
}

#[test]
fn a_full_stdout_loses_no_result() {
    // `run > /dev/full` panicked after a complete run.
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        &TINY.replace(
            "\"scan\", \"read-only-100\", \"update-index\", \"delete\", \"insert\"",
            "\"scan\"",
        ),
    );
    let out = dir.path().join("out");
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let status = std::process::Command::new(bin())
        .args(["run"])
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .stdout(full)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(read_json(&out.join("run.json"))["status"], "complete");
    assert!(out.join("report.html").exists());
}

/// `--events` to a file that cannot be opened (its folder is not there, or
/// it is a link) is refused before anything runs, saying what to do.
#[test]
fn an_events_file_that_cannot_be_opened_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        "steps = [\"point-query\"]\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
    );
    let out = dir.path().join("out");
    let missing = dir.path().join("no-such-folder/events.jsonl");
    relbench()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg("--events")
        .arg(&missing)
        .arg(&plan)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "for the run's events (--events): give a file in a folder you can write to",
        ));
    assert!(!out.join("run.json").exists(), "nothing ran");
    // A link is not followed (it could point at another user's file).
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(dir.path().join("target.jsonl"), &link).unwrap();
    relbench()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg("--events")
        .arg(&link)
        .arg(&plan)
        .assert()
        .code(2);
    assert!(!dir.path().join("target.jsonl").exists());
    // Another local user's file, made first where both can write, is not
    // written into; a FIFO does not hold the run.
    let theirs = dir.path().join("theirs.jsonl");
    std::fs::write(&theirs, "theirs\n").unwrap();
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let fifo = dir.path().join("fifo.jsonl");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for (path, why) in [
        (&theirs, "another user's file (uid 65534)"),
        // With no reader the open itself fails (ENXIO); with one, the
        // check after it refuses it.
        (&fifo, "(--events)"),
    ] {
        relbench()
            .args(["run", "-q", "--out"])
            .arg(&out)
            .arg("--events")
            .arg(path)
            .arg(&plan)
            .timeout(std::time::Duration::from_secs(30))
            .assert()
            .code(2)
            .stderr(predicates::str::contains(why));
    }
    assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "theirs\n");
    assert!(!out.join("run.json").exists(), "nothing ran");
}
