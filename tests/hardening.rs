//! The smaller ways a run could lose its footing, each a regression test
//! named after what broke: private directories left behind, a record that
//! stayed "running", a full disk before anything was measured, results a
//! report dropped without a word, names echoed raw, a file taken for a
//! directory, a datadir `check` passed and `run` refused, a steps
//! directory that turned read-only under a run.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::*;
use predicates::str::contains;

const SQLITE: &str = "[[target]]\nname = \"a\"\nengine = \"sqlite\"\n";
const SHORT: &str = "clients = [1]\n[scale]\nrows = 2000\n[duration]\nwarmup = \"0s\"\nread = \"300ms\"\nwrite = \"300ms\"\n";

/// `relbench-XXXXXX` directories under the temporary directory.
fn private_dirs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("relbench-"))
                .is_some_and(|r| r.len() == 6)
        })
        .collect();
    v.sort();
    v
}

/// A tmpfs of `kib` KiB mounted at `at`, unmounted when dropped; `None`
/// where this machine cannot mount one (not root, or no permission).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, kib: u32) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={kib}k,mode=755"),
                "tmpfs",
            ])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_path_buf()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Regression: empty `/tmp/relbench-XXXXXX` directories were left after a
/// double Ctrl-C, SIGQUIT or SIGKILL. A double Ctrl-C now removes its own;
/// the next managed start sweeps the ones a killed run left (old, owned by
/// relbench's users, naming no live process), and keeps one in use.
#[test]
fn private_directories_a_killed_run_left_are_swept_and_a_double_ctrl_c_leaves_none() {
    let _one = alone();
    let stale = std::env::temp_dir().join("relbench-Zq7Stl");
    let live = std::env::temp_dir().join("relbench-Zq7Liv");
    for d in [&stale, &live] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir(d).unwrap();
    }
    std::fs::write(live.join("server.pid"), format!("{}\n", std::process::id())).unwrap();
    for d in [&stale, &live] {
        assert!(Command::new("touch")
            .args(["-d", "2 hours ago"])
            .arg(d)
            .status()
            .unwrap()
            .success());
    }
    let dir = shared_tempdir();
    let plan = write_plan(
        dir.path(),
        &format!(
            "steps = [\"load\", \"point-query\"]\n{}\n[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\n",
            SHORT.replace("read = \"300ms\"", "read = \"20s\"")
        ),
    );
    let before = private_dirs();
    let out = dir.path().join("out");
    let child = spawn_run(&plan, &out);
    wait_for("the server to start", 120, || {
        server_pid(&out, "m").is_some()
    });
    assert!(!stale.exists(), "the stale directory was not swept");
    assert!(live.exists(), "a directory in use was swept");
    let _ = std::fs::remove_dir_all(&live);
    for _ in 0..2 {
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    let server = server_pid(&out, "m").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Regression: the server, Ctrl-C'd twice while it started, blocked
    // the SIGTERM and ran on for good (fresh-clone CI, found half an hour
    // later with its datadir deleted under it).
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        !alive(server)
    });
    if !gone {
        let _ = Command::new("kill")
            .args(["-9", &server.to_string()])
            .status();
    }
    assert!(gone, "the managed server {server} outlived relbench");
    let after: Vec<PathBuf> = private_dirs()
        .into_iter()
        .filter(|d| !before.contains(d))
        .collect();
    assert!(after.is_empty(), "left behind: {after:?}");
}

/// Regression: `run.json` stayed "running" after an error stopped the run.
#[test]
fn an_error_exit_leaves_the_run_recorded_as_failed() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        &format!(
            "steps = [\"load\", \"point-query\"]\norder = \"fixed\"\n{SHORT}{SQLITE}\n[[target]]\nname = \"u\"\nengine = \"mariadb\"\nurl = \"mariadb://relbench@127.0.0.1:1/sbtest\"\n"
        ),
    );
    // (`order = "fixed"`: the SQLite target runs first in the round.)
    let out = dir.path().join("out");
    run_quiet(&plan, &out)
        .assert()
        .code(1)
        .stderr(contains("target \"u\": cannot connect"));
    assert_eq!(read_json(&out.join("run.json"))["status"], "failed");
    // What the first target measured is kept.
    assert_eq!(step_files(&out).len(), 2);
}

/// Regression: a full disk on the first write of `run.json` gave a hint to
/// `--resume`, and `--resume` then said "not a relbench results directory".
#[test]
fn a_full_disk_before_anything_was_measured_says_to_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let Some(fs) = Tmpfs::mount(&dir.path().join("small"), 4096) else {
        eprintln!("not run: this machine cannot mount a tmpfs");
        return;
    };
    // Full: nothing relbench writes first fits.
    Command::new("dd")
        .args(["if=/dev/zero", &format!("of={}/big", fs.0.display())])
        .args(["bs=1k", "count=4096"])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    let plan = write_plan(dir.path(), &format!("steps = [\"load\"]\n{SHORT}{SQLITE}"));
    let out = fs.0.join("out");
    run_quiet(&plan, &out)
        .assert()
        .code(1)
        .stderr(contains("there is nothing to resume yet"));
    // Space freed, the same command runs.
    std::fs::remove_file(fs.0.join("big")).unwrap();
    run_quiet(&plan, &out).assert().success();
    drop(fs);
}

/// Regression: `report` silently dropped the step files of a target
/// `run.json` does not name, and showed a throughput of −5 unwarned.
#[test]
fn results_the_run_cannot_have_written_are_left_out_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        &format!("steps = [\"load\", \"point-query\"]\n{SHORT}{SQLITE}"),
    );
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let f = out.join("steps/a/r1-02-point-query-c1.json");
    let mut r = read_json(&f);
    r["throughput"] = (-5.0).into();
    std::fs::write(&f, serde_json::to_vec(&r).unwrap()).unwrap();
    let mut ghost = read_json(&out.join("steps/a/r1-01-load-c1.json"));
    ghost["target"] = "ghost".into();
    std::fs::create_dir_all(out.join("steps/ghost")).unwrap();
    std::fs::write(
        out.join("steps/ghost/r1-01-load-c1.json"),
        serde_json::to_vec(&ghost).unwrap(),
    )
    .unwrap();
    relbench()
        .arg("report")
        .arg(&out)
        .assert()
        .success()
        .stderr(contains(
            "names target \"ghost\", which the run's plan does not have",
        ))
        .stderr(contains("has a throughput of -5"));
}

/// Regression: a 10 MB target name gave a 10 MB error, and an escape
/// sequence in a name was echoed to the terminal raw.
#[test]
fn what_a_plan_says_is_echoed_escaped_and_cut() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(10 << 20);
    let plan = write_plan(
        dir.path(),
        &format!("steps = [\"load\"]\n{SHORT}[[target]]\nname = \"{long}\"\nengine = \"sqlite\"\n"),
    );
    let said = relbench().arg("check").arg(&plan).output().unwrap();
    assert_eq!(said.status.code(), Some(2));
    assert!(
        said.stderr.len() < 4096,
        "{} bytes of error",
        said.stderr.len()
    );
    let plan = write_plan(
        dir.path(),
        &format!("steps = [\"load\"]\n{SHORT}[[target]]\nname = \"\\u001b[31mred\"\nengine = \"sqlite\"\n"),
    );
    let said = relbench().arg("check").arg(&plan).output().unwrap();
    assert_eq!(said.status.code(), Some(2));
    assert!(
        !said.stderr.contains(&0x1b),
        "{}",
        String::from_utf8_lossy(&said.stderr)
    );
    assert!(String::from_utf8_lossy(&said.stderr).contains("\\u{1b}[31mred"));
}

/// Regression: "basedir /etc/hostname does not exist" (it is a file), and
/// `check` passed a non-empty datadir relbench did not make, which `run`
/// then refused.
#[test]
fn check_says_what_a_path_is_and_refuses_the_datadir_run_would() {
    let dir = shared_tempdir();
    check_refuses(
        dir.path(),
        &format!("steps = [\"load\"]\n{SHORT}[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/etc/hostname\"\n"),
        "12:11",
        "basedir /etc/hostname is a file, not a directory",
    );
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("ibdata1"), "x").unwrap();
    check_refuses(
        dir.path(),
        &format!("steps = [\"load\"]\n{SHORT}[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\ndatadir = \"theirs\"\n"),
        "13:11",
        "is not empty and relbench did not create it",
    );
}

/// Regression: a steps directory that turned read-only mid-run lost the
/// step just measured. Now the run stops, and says where the result is.
#[test]
fn a_steps_directory_that_turns_read_only_loses_no_result() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let Some(fs) = Tmpfs::mount(&out.join("steps"), 1024) else {
        eprintln!("not run: this machine cannot mount a tmpfs");
        return;
    };
    let plan = write_plan(
        dir.path(),
        &format!(
            "steps = [\"load\", \"point-query\", \"point-query:again\"]\n{}{SQLITE}",
            SHORT.replace("read = \"300ms\"", "read = \"3s\"")
        ),
    );
    let child = spawn_run(&plan, &out);
    wait_for("the load's result", 60, || !step_files(&out).is_empty());
    assert!(Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&fs.0)
        .status()
        .unwrap()
        .success());
    let ran = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&ran.stderr).into_owned();
    assert_eq!(ran.status.code(), Some(1), "{said}");
    let kept = said
        .split("the step's result is kept in ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .unwrap_or_else(|| panic!("{said}"));
    let r = read_json(Path::new(kept));
    assert_eq!(r["kind"]["workload"], "point-query", "{r}");
    assert!(r["events"].as_u64().unwrap() > 0);
    let _ = std::fs::remove_dir_all(Path::new(kept).parent().unwrap());
    drop(fs);
}

/// Regression: `check --shards 4294967295` aborted on a 171 GB
/// allocation, and a merge of a shard whose run.json claimed 4294967295
/// parts grew 200 MB/s until killed: counts are bounded before anything
/// is allocated from them.
#[test]
fn a_huge_shard_count_on_the_command_line_or_in_a_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), TINY);
    relbench()
        .arg("check")
        .arg(&plan)
        .args(["--shards", "4294967295"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("1 to 10000"));
    let shard = dir.path().join("s1");
    run_quiet(&plan, &shard)
        .args(["--shard", "1/1"])
        .assert()
        .success();
    let run = shard.join("run.json");
    let mut info = read_json(&run);
    assert!(info["shard"]["count"].is_number(), "{}", info["shard"]);
    info["shard"]["count"] = 4294967295u64.into();
    std::fs::write(&run, serde_json::to_vec_pretty(&info).unwrap()).unwrap();
    let o = relbench()
        .arg("merge")
        .arg(&shard)
        .arg("--out")
        .arg(dir.path().join("merged"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no part relbench cuts"), "{err}");
    assert!(err.len() < 10_000, "a message of {} bytes", err.len());
}

/// Regression: `sample --every 30s --for 1s` ignored `--for`, and took
/// 27 s to stop after SIGTERM.
#[test]
fn sample_stops_at_its_for_and_within_a_second_of_sigterm() {
    let _one = alone();
    let dir = tempfile::tempdir().unwrap();
    let mut sleeper = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let pid = sleeper.id().to_string();
    let t0 = std::time::Instant::now();
    relbench()
        .args([
            "sample", "--pid", &pid, "--every", "30s", "--for", "1s", "--out",
        ])
        .arg(dir.path().join("a"))
        .assert()
        .success();
    // Bounds far from the machine's noise and far below the 30 s a
    // reading every 30 s took before.
    let took = t0.elapsed().as_secs_f64();
    assert!(took < 10.0, "--for 1s took {took:.1} s");
    let mut s = std::process::Command::new(bin())
        .args(["sample", "--pid", &pid, "--every", "30s", "--out"])
        .arg(dir.path().join("b"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let t1 = std::time::Instant::now();
    // SAFETY: a signal to the sampler this test started, by its pid.
    unsafe { libc::kill(s.id() as i32, libc::SIGTERM) };
    assert!(s.wait().unwrap().success());
    let took = t1.elapsed().as_secs_f64();
    assert!(took < 10.0, "SIGTERM took {took:.1} s");
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

/// Regression: `relbench report` of a merge read shards wherever its
/// merge.json pointed (`../`, an absolute path), and a re-merge followed an
/// `out/shards` link and deleted inside its target.
#[test]
fn a_merge_record_pointing_outside_its_directory_or_through_a_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), TINY);
    let shard = dir.path().join("s1");
    run_quiet(&plan, &shard)
        .args(["--shard", "1/1"])
        .assert()
        .success();
    let merged = dir.path().join("m");
    relbench()
        .arg("merge")
        .arg(&shard)
        .arg("--out")
        .arg(&merged)
        .assert()
        .success();
    let record = merged.join("merge.json");
    let good = read_json(&record);
    for bad in ["../s1", "/etc", "shards/../../s1"] {
        let mut r = good.clone();
        r["shards"][0]["dir"] = bad.into();
        std::fs::write(&record, serde_json::to_vec_pretty(&r).unwrap()).unwrap();
        relbench()
            .args(["report", "--format", "md", "--out"])
            .arg(dir.path().join("rep"))
            .arg(&merged)
            .assert()
            .failure()
            .stderr(contains("not shards/I-of-N inside it"));
    }
    // The shards directory swapped for a link to a victim: a re-merge
    // refuses, and the victim keeps its files.
    std::fs::write(&record, serde_json::to_vec_pretty(&good).unwrap()).unwrap();
    let victim = dir.path().join("victim");
    std::fs::create_dir_all(victim.join("1-of-1")).unwrap();
    std::fs::write(victim.join("1-of-1/keep"), "x").unwrap();
    std::fs::remove_dir_all(merged.join("shards")).unwrap();
    std::os::unix::fs::symlink(&victim, merged.join("shards")).unwrap();
    relbench()
        .arg("merge")
        .arg(&shard)
        .arg("--out")
        .arg(&merged)
        .assert()
        .failure()
        .stderr(contains("symbolic link"));
    assert!(
        victim.join("1-of-1/keep").exists(),
        "the re-merge deleted through the link"
    );
}

/// Regression: a SQLite target whose `path` was in a missing directory
/// made that directory (as root); relbench makes only the places it
/// chooses. `--data-dir` moves those (managed datadirs, SQLite files) off
/// the results directory — a node's disk when results go to NFS — and is
/// recorded.
#[test]
fn a_targets_own_path_gets_no_directory_made_and_data_dir_moves_relbenchs_own() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("not-there/deeper");
    let plan = write_plan(
        dir.path(),
        &format!(
            "steps = [\"load\", \"point-query\"]\n{SHORT}\n[[target]]\nname = \"mine\"\nengine = \"sqlite\"\npath = \"{}\"\n",
            missing.join("x.db").display()
        ),
    );
    let out = dir.path().join("out");
    run_quiet(&plan, &out)
        .assert()
        .failure()
        .stderr(contains("does not exist; create it"));
    assert!(
        !dir.path().join("not-there").exists(),
        "a directory the user named was made"
    );

    let plan = write_plan(
        dir.path(),
        &format!("steps = [\"load\", \"point-query\"]\n{SHORT}{SQLITE}"),
    );
    let local = dir.path().join("local");
    let out = dir.path().join("out2");
    relbench()
        .args(["run", "-q"])
        .arg(&plan)
        .arg("--out")
        .arg(&out)
        .arg("--data-dir")
        .arg(&local)
        .assert()
        .success();
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["data_dir"], local.display().to_string());
    // Where the SQLite file was while it ran (removed after, as a file
    // relbench chose the place of).
    assert_eq!(
        run["targets"][0]["datadir"],
        local.join("a.db").display().to_string(),
        "the SQLite file did not go to --data-dir"
    );
}
