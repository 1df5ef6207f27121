//! A plan cut into shards (`run --shard I/N`), each a whole run, and
//! joined by `relbench merge`: the same cells and identities as one run
//! of the plan, the base on every shard, a rerun that resumes, and every
//! wrong merge refused with the shard named and what to do.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const SHARDS: &str = include_str!("fixtures/shards.toml");

/// Runs shards `1..=n` of `plan` at once, each into `dir/s<i>`.
fn run_shards(plan: &Path, dir: &Path, n: u32) -> Vec<PathBuf> {
    let outs: Vec<PathBuf> = (1..=n).map(|i| dir.join(format!("s{i}"))).collect();
    let children: Vec<_> = outs
        .iter()
        .enumerate()
        .map(|(i, out)| {
            std::process::Command::new(bin())
                .args(["run", "-q"])
                .arg(plan)
                .arg("--shard")
                .arg(format!("{}/{n}", i + 1))
                .arg("--out")
                .arg(out)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    outs
}

/// `relbench merge DIRS --out OUT`, which must succeed.
fn merge_ok(dirs: &[impl AsRef<std::ffi::OsStr>], out: &Path) {
    relbench()
        .arg("merge")
        .args(dirs)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
}

/// Every step result's identity in a results directory (a merge's shards
/// included): target, repeat, position, step, occurrence, clients.
fn identities(dir: &Path) -> BTreeSet<String> {
    let mut dirs = vec![dir.to_path_buf()];
    if dir.join("merge.json").exists() {
        dirs = std::fs::read_dir(dir.join("shards"))
            .unwrap()
            .map(|d| d.unwrap().path())
            .collect();
    }
    let mut ids = BTreeSet::new();
    for d in dirs {
        for f in step_files(&d) {
            let s = read_json(&d.join("steps").join(&f));
            ids.insert(format!(
                "{}/r{}/{:03}:{}{}.{}#{}/c{}",
                s["target"].as_str().unwrap(),
                s["repeat"],
                s["seq"],
                s["kind"],
                s["workload"],
                s["tag"],
                s["occurrence"],
                s["clients"]
            ));
        }
    }
    ids
}

fn headings(md: &Path) -> Vec<String> {
    std::fs::read_to_string(md)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("## "))
        .map(String::from)
        .collect()
}

#[test]
fn shards_merged_hold_the_cells_identities_and_sections_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), SHARDS);
    let single = dir.path().join("single");
    run_quiet(&plan, &single).assert().success();
    let shards = run_shards(&plan, dir.path(), 3);
    let merged = dir.path().join("merged");
    merge_ok(&shards, &merged);

    // The same executions: the base's, measured on every shard, counts once.
    assert_eq!(identities(&single), identities(&merged));
    assert_eq!(
        headings(&single.join("report.md")),
        headings(&merged.join("report.md"))
    );

    // Each shard's record names it; the base ran on every shard, every
    // other target on exactly one.
    let mut seen: Vec<String> = Vec::new();
    for (i, s) in shards.iter().enumerate() {
        let run = read_json(&s.join("run.json"));
        assert_eq!(run["shard"]["index"], i as u64 + 1);
        assert_eq!(run["shard"]["count"], 3);
        assert_eq!(run["shard"]["everywhere"], serde_json::json!(["base"]));
        assert_eq!(
            run["plan_hash"],
            read_json(&single.join("run.json"))["plan_hash"]
        );
        let targets = strings(&run["shard"]["targets"]);
        assert!(targets.contains(&"base".to_string()), "{targets:?}");
        seen.extend(targets.into_iter().filter(|t| t != "base"));
    }
    seen.sort();
    assert_eq!(
        seen,
        ["memory-journal", "small-cache", "wal", "wal-full"],
        "every other target on exactly one shard"
    );

    // The merged report: each target once, the base once per shard, and
    // each ratio against the base of its own shard.
    let report = read_json(&merged.join("report.json"));
    let c = &report;
    let names = report_targets(c);
    for t in ["wal", "wal-full", "memory-journal", "small-cache"] {
        assert_eq!(names.iter().filter(|n| **n == t).count(), 1, "{names:?}");
    }
    for i in 1..=3 {
        assert!(names.contains(&format!("s{i}/base")), "{names:?}");
    }
    let hosts: Vec<&str> = c["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["host"].as_str().unwrap())
        .collect();
    let base_of = c["base_of"].as_array().unwrap();
    for (ti, b) in base_of.iter().enumerate() {
        let b = b.as_u64().unwrap() as usize;
        assert_eq!(
            hosts[ti], hosts[b],
            "{} is compared across shards",
            names[ti]
        );
        assert!(names[b].ends_with("base"));
    }
    // The bases of three shards give a floor beside the A/A one.
    let md = std::fs::read_to_string(merged.join("report.md")).unwrap();
    assert!(md.contains("| hosts |"), "{md}");
    // One machine: the shards' hosts do not differ.
    assert!(read_json(&merged.join("merge.json"))["host_differences"].is_null());

    // A shard whose host was tuned otherwise: the merge says which shard,
    // which setting, and both values (here the record is edited).
    let run = shards[1].join("run.json");
    let mut info = read_json(&run);
    let facts = info["host"]["tuning"]
        .as_object_mut()
        .expect("host settings recorded");
    assert!(
        facts.contains_key("governor") && facts.contains_key("thp"),
        "{facts:?}"
    );
    let thp = facts["thp"].as_str().unwrap().to_string();
    facts.insert("thp".into(), "always-edited".into());
    std::fs::write(&run, serde_json::to_vec_pretty(&info).unwrap()).unwrap();
    let o = relbench()
        .arg("merge")
        .args(&shards)
        .arg("--out")
        .arg(dir.path().join("merged-2"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let says = "the shards' hosts differ: shard 2/3 (";
    let line = err
        .lines()
        .find(|l| l.contains(says))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains(&format!("thp always-edited against {thp} on shard 1/3")),
        "{line}"
    );
}

/// `check --shards N` lists each target once (the base on every shard),
/// the same on every call; adding a target moves no other target.
#[test]
fn the_assignment_is_stable_and_adding_a_target_moves_only_that_target() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), SHARDS);
    let assignment = |plan: &Path| -> Vec<(String, String)> {
        let out = relbench()
            .args(["check", "--shards", "3"])
            .arg(plan)
            .assert()
            .success();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let mut pairs = Vec::new();
        for line in text.lines().filter(|l| l.starts_with("shard ")) {
            let (shard, rest) = line.split_once(": ").unwrap();
            let own = rest.split("; about").next().unwrap();
            if own != "the base alone" {
                pairs.extend(own.split(", ").map(|t| (t.to_string(), shard.to_string())));
            }
        }
        pairs.sort();
        pairs
    };
    let before = assignment(&plan);
    assert_eq!(before, assignment(&plan));
    assert_eq!(before.len(), 4, "{before:?}");
    let more = dir.path().join("more.toml");
    std::fs::write(
        &more,
        format!("{SHARDS}\n[[target]]\nname = \"exclusive\"\nengine = \"sqlite\"\n[target.pragmas]\nlocking_mode = \"exclusive\"\n"),
    )
    .unwrap();
    let after = assignment(&more);
    assert_eq!(after.len(), 5);
    for pair in &before {
        assert!(after.contains(pair), "{pair:?} moved: {after:?}");
    }
}

/// The scheduler runs a shard again under the same index into the same
/// directory: it resumes (nothing measured twice); another shard or plan
/// in that directory is refused; `--shard env` reads Slurm's array.
#[test]
fn a_shard_run_again_resumes_and_env_reads_the_scheduler() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), SHARDS);
    let out = dir.path().join("task-3");
    relbench()
        .args(["run", "-q"])
        .arg(&plan)
        .args(["--shard", "env", "--out"])
        .arg(&out)
        .env("SLURM_ARRAY_TASK_ID", "3")
        .env("SLURM_ARRAY_TASK_COUNT", "1")
        .env("SLURM_ARRAY_TASK_MIN", "3")
        .env("SLURM_ARRAY_TASK_MAX", "3")
        .env("RELBENCH_SHARD_COUNT", "3")
        .assert()
        .success();
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["shard"]["index"], 3);
    let files = step_files(&out);
    let mtimes = |files: &[String]| -> Vec<std::time::SystemTime> {
        files
            .iter()
            .map(|f| {
                std::fs::metadata(out.join("steps").join(f))
                    .unwrap()
                    .modified()
                    .unwrap()
            })
            .collect()
    };
    let before = mtimes(&files);
    relbench()
        .args(["run", "-q"])
        .arg(&plan)
        .args(["--shard", "3/3", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stderr(predicates::str::contains("resuming"));
    assert_eq!(step_files(&out), files);
    assert_eq!(mtimes(&files), before, "a finished step was measured again");
    // Resumed the usual way, without the plan or --shard: still shard 3/3
    // (regression guard: the whole plan would run into the shard's
    // directory).
    relbench()
        .args(["run", "-q", "--resume", "--out"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(step_files(&out), files);
    assert_eq!(read_json(&out.join("run.json"))["shard"]["index"], 3);

    relbench()
        .args(["run", "-q"])
        .arg(&plan)
        .args(["--shard", "2/3", "--out"])
        .arg(&out)
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "holds shard 3/3 of this plan, not 2/3",
        ));
    relbench()
        .args(["run", "-q"])
        .arg(&plan)
        .args(["--shard", "2/3"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--shard needs --out"));
    relbench()
        .args(["run", "-q"])
        .arg(&plan)
        .args(["--shard", "4/3", "--out"])
        .arg(dir.path().join("x"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("write I/N"));
}

/// A shard that resumes on another machine (a requeue onto another node)
/// is refused, since its windows would be read as the first machine's;
/// with `--new-host` it goes on, recorded as a second host, and its report
/// compares each host's results only with the base measured on that host.
#[test]
fn a_shard_resumed_on_another_host_is_refused_or_recorded_as_a_second_host() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), SHARDS);
    let out = dir.path().join("shard-2");
    let shard = |extra: &[&str]| {
        let mut c = relbench();
        c.args(["run", "-q"])
            .arg(&plan)
            .args(["--shard", "2/3", "--out"])
            .arg(&out)
            .args(extra);
        c
    };
    shard(&[]).assert().success();
    // As if it had run on node-a and stopped there: its record names
    // that node, and its last step of each target is not measured yet.
    let run_json = out.join("run.json");
    let mut run = read_json(&run_json);
    run["host"]["hostname"] = "node-a".into();
    run["host"]["cores"] = 96.into();
    run["status"] = "interrupted".into();
    std::fs::write(&run_json, serde_json::to_string(&run).unwrap()).unwrap();
    let targets = strings(&run["shard"]["targets"]);
    let mut removed = Vec::new();
    for f in step_files(&out) {
        if f.contains("update-index") {
            std::fs::remove_file(out.join("steps").join(&f)).unwrap();
            removed.push(f);
        }
    }
    assert_eq!(removed.len(), targets.len(), "{removed:?}");

    shard(&[])
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "measured on node-a and this is another machine",
        ))
        .stderr(predicates::str::contains("cores"))
        .stderr(predicates::str::contains("--new-host"));
    for f in &removed {
        assert!(
            !out.join("steps").join(f).exists(),
            "{f} was measured on a refused host"
        );
    }

    shard(&["--new-host"]).assert().success();
    let run = read_json(&run_json);
    assert_eq!(run["status"], "complete");
    assert_eq!(run["host"]["hostname"], "node-a");
    assert_eq!(run["later_hosts"].as_array().unwrap().len(), 1);
    // What ran here says so (the steps measured again, and a load run
    // again to remake their data); what node-a measured does not.
    for f in step_files(&out) {
        let step = read_json(&out.join("steps").join(&f));
        if removed.contains(&f) {
            assert_eq!(step["host"], 1, "{f}");
        } else if f.contains("point-query") {
            assert!(step.get("host").is_none(), "{f}");
        }
    }
    // The report reads it as two hosts, each with its own base.
    let report = read_json(&out.join("report.json"));
    let hosts: Vec<String> = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["host"]["hostname"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    assert_eq!(hosts[0], "node-a");
    assert_ne!(hosts[1], "node-a");
    let names = report_targets(&report);
    assert!(names.contains(&"s2/base".to_string()), "{names:?}");
    assert!(names.contains(&"s2.2/base".to_string()), "{names:?}");
    // Run again on this host, it is the run's second host already.
    shard(&[]).assert().success();
}

/// `check --schedule` says where its seed comes from; `--shards N
/// --schedule` lists each shard's executions with the seed the shards will
/// draw (a plan without `seed` draws one from its text), which is what a
/// shard then runs: `check SHARD_DIR --schedule` prints the same lines.
#[test]
fn check_shows_each_shards_schedule_with_the_seed_the_shards_draw() {
    let dir = tempfile::tempdir().unwrap();
    let no_seed = SHARDS.replace("seed = 7\n", "");
    assert_ne!(no_seed, SHARDS);
    let plan = write_plan(dir.path(), &no_seed);
    let listing = |args: &[&str], path: &Path| {
        let o = relbench()
            .arg("check")
            .arg(path)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{o:?}");
        (
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8(o.stderr).unwrap(),
        )
    };
    let (_, why) = listing(&["--schedule"], &plan);
    assert!(why.contains("drawn for this listing only"), "{why}");
    let (cut, why) = listing(&["--schedule", "--shards", "3"], &plan);
    assert!(why.contains("drawn from the plan's text"), "{why}");
    let (again, _) = listing(&["--schedule", "--shards", "3"], &plan);
    assert_eq!(cut, again, "the shards' seed is the same at every read");
    let parts: Vec<&str> = cut.split("# shard ").skip(1).collect();
    assert_eq!(parts.len(), 3, "{cut}");
    let second: String = parts[1].lines().skip(1).map(|l| format!("{l}\n")).collect();
    assert!(
        second.starts_with("base/"),
        "the base runs on every shard: {second}"
    );

    let out = dir.path().join("shard-2");
    relbench()
        .args(["run", "-q"])
        .arg(&plan)
        .args(["--shard", "2/3", "--out"])
        .arg(&out)
        .assert()
        .success();
    let (ran, why) = listing(&["--schedule"], &out);
    assert!(why.contains("the one the run in"), "{why}");
    assert_eq!(
        ran, second,
        "shard 2 ran other executions than the listing said"
    );
}

/// Runs `relbench merge DIRS --out OUT`, expecting a refusal that says
/// each of `says`; nothing is merged.
fn refused(dirs: &[&Path], out: &Path, says: &[&str]) {
    let a = relbench()
        .arg("merge")
        .args(dirs)
        .arg("--out")
        .arg(out)
        .assert()
        .failure();
    let err = String::from_utf8(a.get_output().stderr.clone()).unwrap();
    for s in says {
        assert!(err.contains(s), "missing {s:?} in:\n{err}");
    }
    assert!(!out.join("merge.json").exists(), "{err}");
}

#[test]
fn wrong_merges_are_refused_naming_the_shard_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), SHARDS);
    let shards = run_shards(&plan, dir.path(), 2);
    let (s1, s2) = (shards[0].as_path(), shards[1].as_path());
    let out = dir.path().join("merged");

    // Another plan: the same targets at another scale.
    let other_dir = dir.path().join("other");
    std::fs::create_dir(&other_dir).unwrap();
    let other = write_plan(&other_dir, &SHARDS.replace("rows = 2000", "rows = 1000"));
    let o2 = other_dir.join("o2");
    run_quiet(&other, &o2)
        .args(["--shard", "2/2"])
        .assert()
        .success();
    refused(
        &[s1, &o2],
        &out,
        &["ran another plan", &o2.display().to_string()],
    );

    // A shard given twice (a copy of its directory).
    let copy = dir.path().join("s1-copy");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(s1)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    refused(&[s1, &copy, s2], &out, &["shard 1/2 is given twice"]);

    // A shard missing: named with the command that runs it.
    refused(&[s1], &out, &["shard 2/2 is missing", "--shard 2/2"]);

    // A shard still running: its lock held.
    let mut holder = std::process::Command::new("flock")
        .arg("-o")
        .arg(s2.join(".lock"))
        .args(["sleep", "60"])
        .spawn()
        .unwrap();
    wait_for("the lock to be held", 10, || {
        std::process::Command::new("flock")
            .args(["-n", "-s"])
            .arg(s2.join(".lock"))
            .arg("true")
            .status()
            .is_ok_and(|s| !s.success())
    });
    refused(
        &[s1, s2],
        &out,
        &["shard 2/2", "is still running", "--dependency"],
    );
    holder.kill().unwrap();
    holder.wait().unwrap();

    // A shard that stopped before it finished.
    let run_json = s2.join("run.json");
    let text = std::fs::read_to_string(&run_json).unwrap();
    std::fs::write(&run_json, text.replace("\"complete\"", "\"interrupted\"")).unwrap();
    refused(
        &[s1, s2],
        &out,
        &[
            "shard 2/2",
            "stopped before it finished",
            "--shard 2/2 --out",
        ],
    );
    std::fs::write(&run_json, &text).unwrap();

    // A cell in two shards: a target of shard 2 copied into shard 1.
    let moved = std::fs::read_dir(s2.join("steps"))
        .unwrap()
        .map(|d| d.unwrap().file_name().to_string_lossy().into_owned())
        .find(|t| t != "base")
        .expect("shard 2 runs a target of its own");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(s2.join("steps").join(&moved))
        .arg(s1.join("steps"))
        .status()
        .unwrap();
    assert!(status.success());
    refused(
        &[s1, s2],
        &out,
        &[
            &format!("holds results of target {moved}"),
            "which shard 2/2 runs",
        ],
    );
    std::fs::remove_dir_all(s1.join("steps").join(&moved)).unwrap();

    // A whole run is not a shard.
    let whole = dir.path().join("whole");
    run_quiet(&plan, &whole).assert().success();
    refused(&[&whole, s2], &out, &["is a whole run, not a shard"]);

    // Right, at last; merged again into the same place replaces it.
    for _ in 0..2 {
        merge_ok(&[s1, s2], &out);
    }
    assert!(out.join("shards/1-of-2/run.json").exists());
    // A directory holding something else is not written into.
    let busy = dir.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("notes.txt"), "mine").unwrap();
    refused(
        &[s1, s2],
        &busy,
        &["is not empty and holds no earlier merge"],
    );
    assert_eq!(
        std::fs::read_to_string(busy.join("notes.txt")).unwrap(),
        "mine"
    );
}

/// The Kubernetes example checked offline, as `study.sh` submits it (a
/// `kubectl` stand-in records what it is given): against the Kubernetes
/// API's schema (kubernetes-validate, strict, Kubernetes 1.33), then its
/// shape — an Indexed Job whose count reaches relbench, no BestEffort pod,
/// no datadir on the shared claim, a failure policy that lets the other
/// indexes finish when one fails or exits 3 — and the shard's command run
/// with a relbench stand-in: exit 3 ends the index as done, SIGTERM
/// reaches relbench.
#[test]
fn the_kubernetes_example_is_valid_safe_and_per_study() {
    let validate = std::env::var("RELBENCH_K8S_VALIDATE").unwrap_or_else(|_| {
        panic!("RELBENCH_K8S_VALIDATE is not set: run the tests with ./test, which installs kubernetes-validate from PyPI")
    });
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/kubernetes");
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = dir.path().join("kubectl");
    std::fs::create_dir(&log).unwrap();
    use std::os::unix::fs::PermissionsExt;
    let stand_in = |name: &str, text: &str| {
        let p = bin.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    // kubectl: each call's arguments and standard input kept, numbered;
    // a configmap's archive copied; every wait answered at once.
    stand_in(
        "kubectl",
        &format!(
            "#!/bin/bash\nd={}\nn=$(ls $d | wc -l)\nprintf '%s\\n' \"$@\" > $d/$n.args\n\
             case \"$1\" in apply) cat > $d/$n.yaml ;; create) for a in \"$@\"; do case $a in --from-file=plan.tgz=*) cp \"${{a#--from-file=plan.tgz=}}\" $d/plan.tgz ;; esac; done ;; esac\nexit 0\n",
            log.display()
        ),
    );
    let study = dir.path().join("study");
    std::fs::create_dir_all(study.join("configs")).unwrap();
    std::fs::write(study.join("configs/my.cnf"), "[mysqld]\n").unwrap();
    let plan = study.join("mine.toml");
    std::fs::write(&plan, SHARDS).unwrap();
    let o = std::process::Command::new(here.join("study.sh"))
        .arg(&plan)
        .args(["nightly-7", "5"])
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "study.sh: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let tar = std::process::Command::new("tar")
        .arg("-tzf")
        .arg(log.join("plan.tgz"))
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&tar.stdout);
    assert!(
        listed.contains("configs/my.cnf") && listed.contains("mine.toml"),
        "{listed}"
    );
    let mut applied: Vec<PathBuf> = std::fs::read_dir(&log)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    applied.sort_by_key(|p| {
        p.file_stem()
            .unwrap()
            .to_string_lossy()
            .parse::<u32>()
            .unwrap()
    });
    assert_eq!(
        applied.len(),
        2,
        "study.sh applies the shards, then the merge"
    );

    for f in std::iter::once(here.join("study-job.yaml")).chain(applied.iter().cloned()) {
        let o = std::process::Command::new(&validate)
            .args(["--strict", "-k", "1.33.0", "--quiet"])
            .arg(&f)
            .output()
            .expect("kubernetes-validate (./test installs it)");
        assert!(
            o.status.success(),
            "{} is not valid Kubernetes: {}{}",
            f.display(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    stand_in(
        "relbench",
        "#!/bin/sh\necho \"$@\" > \"$ARGS\"\ntrap 'exit 130' TERM\nsleep \"${NAP:-0}\" & wait $!\nexit \"$RC\"\n",
    );
    let check = r#"
import os, shlex, signal, subprocess, sys, time, yaml
path, study, shards, bindir, tmp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
kinds = [(d["kind"], d["metadata"]["name"]) for d in docs]
assert kinds == [("PersistentVolumeClaim", f"relbench-{study}-results"), ("Job", f"relbench-{study}-study"), ("Job", f"relbench-{study}-merge")], kinds
pvc, job, merge = docs
assert "ReadWriteMany" in pvc["spec"]["accessModes"]
spec = job["spec"]
assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] == shards, spec
# Each index its own retries; no exit but 2 (a wrong plan) fails the Job.
assert spec.get("backoffLimitPerIndex", 0) >= 1 and "backoffLimit" not in spec, spec
rules = spec["podFailurePolicy"]["rules"]
fail_job = [r for r in rules if r["action"] == "FailJob"]
assert all(r["onExitCodes"]["operator"] == "In" and r["onExitCodes"]["values"] == [2] for r in fail_job), rules
assert any(r["action"] == "Ignore" and r.get("onPodConditions", [{}])[0].get("type") == "DisruptionTarget" for r in rules), rules
pod = spec["template"]["spec"]
assert pod["restartPolicy"] == "Never"
assert any(t["effect"] == "NoSchedule" for t in pod["tolerations"]) and pod["nodeSelector"], pod
# Guaranteed QoS: every container, init ones too, requests = limits.
for p in (pod, merge["spec"]["template"]["spec"]):
    for c in p.get("initContainers", []) + p["containers"]:
        r = c.get("resources", {})
        assert r.get("requests") and r.get("requests") == r.get("limits") and set(r["limits"]) >= {"cpu", "memory"}, (c["name"], r)
c = pod["containers"][0]
env = {e["name"]: e["value"] for e in c["env"]}
assert int(env["RELBENCH_SHARD_COUNT"]) == shards, env
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
vols = {v["name"]: v for v in pod["volumes"]}
words = shlex.split(c["command"][2].splitlines()[0])
assert words[:2] == ["relbench", "run"] and words[words.index("--shard") + 1] == "env", words
out = words[words.index("--out") + 1]
assert out.startswith("/results/") and "$JOB_COMPLETION_INDEX" in out, out
assert vols[mounts["/results"]]["persistentVolumeClaim"]["claimName"] == f"relbench-{study}-results"
data = words[words.index("--data-dir") + 1]
assert "emptyDir" in vols[mounts[data]], (data, vols[mounts[data]])
assert vols["plan-archive"]["configMap"]["name"] == f"relbench-{study}-plan"
mcmd = merge["spec"]["template"]["spec"]["containers"][0]["command"]
assert "relbench merge /results/shard-* --out /results/merged" in " ".join(mcmd), mcmd
assert merge["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == f"relbench-{study}-results"
# The shard's command as the pod runs it.
env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"], JOB_COMPLETION_INDEX="1", RELBENCH_PLAN=env["RELBENCH_PLAN"], ARGS=tmp + "/args")
def shard(rc, nap="0", term=False):
    p = subprocess.Popen(c["command"], env=dict(env, RC=str(rc), NAP=nap))
    if term:
        time.sleep(1)
        p.send_signal(signal.SIGTERM)
    return p.wait(timeout=30)
assert shard(0) == 0
assert open(tmp + "/args").read().split()[:3] == ["run", "/plan/" + env["RELBENCH_PLAN"], "--shard"]
assert shard(3) == 0, "exit 3 (some steps failed) must end the index as done"
assert shard(1) == 1 and shard(2) == 2
assert shard(0, nap="20", term=True) == 130, "SIGTERM must reach relbench"
print("ok")
"#;
    let o = std::process::Command::new("python3")
        .args(["-c", check])
        .arg(applied[0].as_os_str())
        .args(["nightly-7", "5"])
        .arg(&bin)
        .arg(dir.path())
        .output()
        .expect("python3 with python3-yaml (./test installs it)");
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // The merge applied is the same study's.
    let merge = std::fs::read_to_string(&applied[1]).unwrap();
    assert!(merge.contains("relbench-nightly-7-merge"), "{merge}");
}

/// Regression: a plan's `[[comparison]]` naming its base and some targets
/// failed a shard's own report (its targets were on another shard) and the
/// merge's (the base had a name per shard).
#[test]
fn a_plans_comparisons_report_on_each_shard_and_on_the_merge() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{SHARDS}\n[[comparison]]\ntitle = \"journals\"\nbase = \"base\"\ntargets = [\"base\", \"wal\", \"memory-journal\"]\n"
    );
    let plan = write_plan(dir.path(), &text);
    let shards = run_shards(&plan, dir.path(), 3);
    for s in &shards {
        assert!(s.join("report.md").exists(), "{}", s.display());
    }
    let merged = dir.path().join("merged");
    merge_ok(&shards, &merged);
    let report = read_json(&merged.join("report.json"));
    let names = report_targets(&report);
    assert!(
        names.iter().any(|n| n == "wal") && names.iter().any(|n| n == "memory-journal"),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n == "small-cache"), "{names:?}");
    assert!(
        names.iter().filter(|n| n.ends_with("/base")).count() == 3,
        "{names:?}"
    );
}

/// The off host is named at the top of the merged report, through the
/// real merge and report: three shards whose bases are made the same
/// measurement (one shard's base files copied to the others, their
/// interference cleared so that no window is left out), then one shard's
/// base scaled to 0.85 of it on every step.
#[test]
fn a_shard_whose_base_is_off_from_the_others_is_named_at_the_top() {
    let dir = tempfile::tempdir().unwrap();
    let text = SHARDS.replace(
        "steps = [\"load\", \"point-query\", \"update-index\"]",
        "steps = [\"load\", \"point-query\", \"range-covered-pk\", \"read-only-100\", \"update-index\"]",
    );
    let plan = write_plan(dir.path(), &text);
    let shards = run_shards(&plan, dir.path(), 3);
    let base_files: Vec<String> = std::fs::read_dir(shards[0].join("steps/base"))
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for (i, s) in shards.iter().enumerate() {
        for f in &base_files {
            let mut r = read_json(&shards[0].join("steps/base").join(f));
            r["metrics"]["interference"] = serde_json::Value::Null;
            if i == 2 {
                let t = r["throughput"].as_f64().unwrap();
                r["throughput"] = (t * 0.85).into();
            }
            std::fs::write(s.join("steps/base").join(f), r.to_string()).unwrap();
        }
    }
    let merged = dir.path().join("merged");
    merge_ok(&shards, &merged);
    let report = read_json(&merged.join("report.json"));
    let notes: Vec<&str> = report["host_notes"]
        .as_array()
        .unwrap_or_else(|| panic!("no host notes: {}", report["host_offsets"]))
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("(shard 3/3)'s base (s3/base) is 15.0% slower than on the other 2 hosts"),
        "{notes:?}"
    );
    let md = std::fs::read_to_string(merged.join("report.md")).unwrap();
    let top = md.split("## Overview").next().unwrap();
    assert!(
        top.contains("15.0% slower"),
        "the note is at the top: {top}"
    );
}
