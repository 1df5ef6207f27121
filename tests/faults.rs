//! Bad input and faults that need no server: plans that must be refused
//! with a position, files relbench must never touch, links planted in a
//! results directory, two runs into one directory, damaged results.
//! (The servers' side is in tests/security.rs.)

mod common;

use std::os::unix::fs::symlink;
use std::time::Duration;

use common::*;
use predicates::str::contains;

/// The tiny plan with one line replaced.
fn tiny_with(from: &str, to: &str) -> String {
    assert!(TINY.contains(from), "{from}");
    TINY.replacen(from, to, 1)
}

/// The tiny plan's steps cut to those that only read, for tests that need
/// a run to succeed: a write window can see no commit at all while another
/// test keeps the disk busy (the SQLite load below does).
fn reads_only(text: &str) -> String {
    const ALL: &str =
        "\"point-query\", \"scan\", \"read-only-100\", \"update-index\", \"delete\", \"insert\"";
    assert!(text.contains(ALL), "the tiny plan's steps changed");
    text.replace(ALL, "\"point-query\", \"scan\"")
}

#[test]
fn every_duration_out_of_range_is_a_positioned_error() {
    // Each once panicked, aborted on allocation, or orphaned a server.
    let dir = tempfile::tempdir().unwrap();
    for (line, value, message) in [
        (
            "read = \"300ms\"",
            "read = \"1e20s\"",
            "read must be at most 7 days",
        ),
        (
            "read = \"300ms\"",
            "read = \"inf\"",
            "read is not a duration",
        ),
        (
            "read = \"300ms\"",
            "read = 1e300",
            "read must be at most 7 days",
        ),
        (
            "read = \"300ms\"",
            "read = \"1e9h\"",
            "read must be at most 7 days",
        ),
        (
            "write = \"300ms\"",
            "write = \"1e18s\"",
            "write must be at most 7 days",
        ),
        (
            "insert = \"300ms\"",
            "insert = \"0.001ms\"",
            "insert must be at least 100ms",
        ),
        (
            "warmup = \"100ms\"",
            "warmup = \"1e20s\"",
            "warmup must be at most 7 days",
        ),
        (
            "max = \"1s\"",
            "max = \"1e300s\"",
            "settle max must be at most 7 days",
        ),
    ] {
        let text = tiny_with(line, value);
        let row = text.lines().position(|l| l == value).unwrap() + 1;
        let col = value.find('=').unwrap() + 3;
        check_refuses(dir.path(), &text, &format!("{row}:{col}"), message);
    }
    let server = "[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\nstart_timeout = \"1e20s\"\n";
    let text = format!("steps = [\"load\"]\n{server}");
    check_refuses(
        dir.path(),
        &text,
        "6:17",
        "start_timeout must be at most 7 days",
    );
}

#[test]
fn names_tags_suites_and_pragmas_that_cannot_work_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    // "." and ".." named directories outside steps/.
    for name in [".", "..", ".hidden"] {
        let text = tiny_with("name = \"wal\"", &format!("name = \"{name}\""));
        check_refuses(
            dir.path(),
            &text,
            "",
            &format!("target name \"{name}\" is not allowed"),
        );
    }
    let long = "x".repeat(300);
    let text = tiny_with("\"insert\"]", &format!("\"insert:{long}\"]"));
    check_refuses(dir.path(), &text, "3:", "the tag after ':' takes 1 to 32");
    let text = tiny_with("\"insert\"]", "\"insert\", \"qr100\"]");
    check_refuses(
        dir.path(),
        &text,
        "3:9",
        "mix the Insert Benchmark's with sysbench's",
    );
    let text = tiny_with(
        "synchronous = \"full\"",
        "synchronous = \"full\"\nSYNCHRONOUS = \"off\"",
    );
    check_refuses(dir.path(), &text, "27:1", "pragma synchronous is set twice");
    let text = tiny_with("clients = [1, 2]", "clients = [1, 4096]");
    check_refuses(
        dir.path(),
        &text,
        "4:15",
        "a client count must be between 1 and 1024",
    );
}

#[test]
fn a_file_named_as_sqlite_path_is_refused_and_untouched() {
    // A `path` naming any existing file was deleted and replaced.
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("precious.txt");
    std::fs::write(&victim, "not a database").unwrap();
    let text = tiny_with(
        "name = \"base\"\nengine = \"sqlite\"",
        "name = \"base\"\nengine = \"sqlite\"\npath = \"precious.txt\"",
    );
    let plan = write_plan(dir.path(), &text);
    let mut check = relbench();
    check.arg("check").arg(&plan);
    for mut cmd in [check, run_quiet(&plan, dir.path().join("out"))] {
        cmd.assert()
            .code(2)
            .stderr(contains("plan.toml:25:8"))
            .stderr(contains("relbench did not create it"));
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "not a database");
    // A database a relbench run created is its own: a second run starts it
    // afresh.
    let text = reads_only(&tiny_with(
        "name = \"base\"\nengine = \"sqlite\"",
        "name = \"base\"\nengine = \"sqlite\"\npath = \"mine.db\"",
    ));
    let plan = write_plan(dir.path(), &text);
    for out in ["a", "b"] {
        run_quiet(&plan, dir.path().join(out)).assert().success();
    }
}

#[test]
fn links_planted_in_a_results_directory_are_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let plan = write_plan(dir.path(), &reads_only(TINY));

    // Links at the temporary run.json and at a report file: replaced by
    // files, what they point to untouched.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    symlink(&victim, out.join(".run.json.tmp")).unwrap();
    symlink(&victim, out.join("report.html")).unwrap();
    run_quiet(&plan, &out).assert().success();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(!std::fs::symlink_metadata(out.join("report.html"))
        .unwrap()
        .file_type()
        .is_symlink());

    // A target's steps directory, or the results directory itself, that is
    // a link: refused.
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let out2 = dir.path().join("out2");
    std::fs::create_dir_all(out2.join("steps")).unwrap();
    symlink(&elsewhere, out2.join("steps/base")).unwrap();
    run_quiet(&plan, &out2)
        .assert()
        .failure()
        .stderr(contains("is a symbolic link"));
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    let out3 = dir.path().join("out3");
    symlink(&elsewhere, &out3).unwrap();
    run_quiet(&plan, &out3)
        .assert()
        .failure()
        .stderr(contains("is a symbolic link"));
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);

    // `report --out` into a directory with a planted link.
    let rep = dir.path().join("rep");
    std::fs::create_dir(&rep).unwrap();
    symlink(&victim, rep.join("report.md")).unwrap();
    relbench()
        .args(["report", "tests/fixtures/results-tiny", "--out"])
        .arg(&rep)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
}

#[test]
fn two_runs_into_one_directory_are_refused() {
    // Two --resume at once started two servers on one datadir.
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        &reads_only(&tiny_with("read = \"300ms\"", "read = \"3s\""))
            .replace("clients = [1, 2]", "clients = [1]"),
    );
    let out = dir.path().join("out");
    let first = spawn_run(&plan, &out);
    let t0 = std::time::Instant::now();
    while !out.join("run.json").exists() {
        assert!(t0.elapsed() < Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(20));
    }
    for args in [&["run", "-q", "--resume"][..], &["run", "-q"]] {
        relbench()
            .args(args)
            .arg(&plan)
            .arg("--out")
            .arg(&out)
            .assert()
            .code(1)
            .stderr(contains(format!(
                "another relbench (pid {}) is writing into",
                first.id()
            )));
    }
    let first = first.wait_with_output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
}

#[test]
fn a_damaged_fifo_or_copied_step_file_costs_only_itself() {
    // One damaged file failed the whole report; a FIFO named like a step
    // file hung it; a copy was counted as a second repeat.
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let status = std::process::Command::new("cp")
        .args(["-r", "tests/fixtures/results-tiny"])
        .arg(&run)
        .status()
        .unwrap();
    assert!(status.success());
    let steps = run.join("steps/wal");
    std::fs::write(steps.join("r1-03-point-query-c1.json"), "{ not json").unwrap();
    let fifo = steps.join("r9-99-fifo-c1.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    std::fs::copy(
        steps.join("r1-04-scan-c1.json"),
        steps.join("r1-04-scan-c1 (copy).json"),
    )
    .unwrap();
    let out = dir.path().join("rep");
    let mut cmd = relbench();
    cmd.timeout(Duration::from_secs(60))
        .args(["report"])
        .arg(&run)
        .arg("--out")
        .arg(&out);
    cmd.assert()
        .success()
        .stderr(contains("r1-03-point-query-c1.json is not valid JSON"))
        .stderr(contains("is not a regular file"))
        .stderr(contains("(copy).json is a copy of the step in"));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("Left out of this report"), "{md}");
    // The copy did not become a second repeat of scan.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    for row in json["rows"].as_array().unwrap() {
        for cell in row["cells"].as_array().unwrap() {
            assert!(cell["repeats"].as_u64().unwrap() <= 1, "{row}");
        }
    }
}

#[test]
fn a_signal_during_a_sqlite_load_stops_it_promptly() {
    // Ctrl-C did nothing during a SQLite load (still loading 300 s later).
    let dir = tempfile::tempdir().unwrap();
    let text = tiny_with("rows = 2000", "rows = 20000000").replace("tables = 2", "tables = 1");
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    for signal in ["-INT", "-TERM"] {
        let _ = std::fs::remove_dir_all(&out);
        let mut child = spawn_run(&plan, &out);
        // Well into the load (which takes a minute or more).
        std::thread::sleep(Duration::from_millis(1500));
        let sent = std::time::Instant::now();
        std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        let status = child.wait().unwrap();
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "{signal}: {:?}",
            sent.elapsed()
        );
        assert_eq!(status.code(), Some(130), "{signal}");
        assert_eq!(read_json(&out.join("run.json"))["status"], "interrupted");
    }
}

/// The pids of `pid`'s children whose program name starts with `name`.
fn children_named(pid: u32, name: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let Some((head, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let comm = head.split_once(" (").map_or("", |(_, c)| c);
        let ppid: u32 = rest
            .split(' ')
            .nth(1)
            .and_then(|x| x.parse().ok())
            .unwrap_or(0);
        if ppid == pid && comm.starts_with(name) {
            out.push(p);
        }
    }
    out
}

/// Regression: relbench killed while it initialised a datadir
/// (`mariadb-install-db`, `initdb`) left a datadir it no longer knew as
/// its own: every `--resume` failed with "not empty and relbench did not
/// create it" and wrote a failed step each try.
#[test]
fn sigkill_during_the_datadir_initialisation_then_resume_finishes_every_step() {
    let settings = "steps = [\"load\", \"point-query\"]\nclients = [1]\n[scale]\nrows = 2000\n[duration]\nwarmup = \"0s\"\nread = \"300ms\"\n";
    for (name, target, init) in [
        (
            "m",
            "[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\n",
            "mariadb-instal",
        ),
        (
            "p",
            "[[target]]\nname = \"p\"\nengine = \"postgres\"\nbasedir = \"/usr/lib/postgresql/15\"\n",
            "initdb",
        ),
    ] {
        let dir = shared_tempdir();
        let plan = write_plan(dir.path(), &format!("{settings}{target}"));
        let out = dir.path().join("out");
        let mut child = spawn_run(&plan, &out);
        let relbench = child.id();
        let mut killed = false;
        let t0 = std::time::Instant::now();
        while t0.elapsed() < Duration::from_secs(60) {
            let inits = children_named(relbench, init);
            // Once the init script has written into the datadir.
            let begun = std::fs::read_dir(out.join("data").join(name))
                .is_ok_and(|mut d| d.next().is_some());
            if let (Some(&p), true) = (inits.first(), begun) {
                // Killed in the middle of the initialisation.
                std::process::Command::new("kill")
                    .args(["-9", &relbench.to_string()])
                    .status()
                    .unwrap();
                killed = true;
                // The orphaned init script ends by itself.
                wait_for("the init script to end", 120, || {
                    !std::path::Path::new(&format!("/proc/{p}")).exists()
                });
                break;
            }
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        if !killed {
            let _ = child.kill();
        }
        let _ = child.wait();
        assert!(killed, "{name}: never saw {init} run");
        assert!(step_files(&out).is_empty());
        let resumed = spawn_resume(&out).wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&resumed.stderr);
        assert!(resumed.status.success(), "{name}: {said}");
        assert!(said.contains("did not finish"), "{name}: {said}");
        let files = step_files(&out);
        assert_eq!(files.len(), 2, "{name}: {files:?}");
        for f in files {
            let r = read_json(&out.join("steps").join(&f));
            assert!(r["failed"].is_null(), "{name} {f}: {}", r["failed"]);
        }
    }
}
