//! The schedule: a plan compiled once into executions with stable
//! identities, and the one sequencer that runs them for `run`,
//! `--resume` and `--confirm` alike. Each test runs the real binary.

mod common;

use common::*;

/// A two-target SQLite plan whose update step has a before-hook that
/// appends the target and repeat to a marker file.
fn plan_with_marker_hook(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let marker = dir.join("marker.txt");
    let plan = write_plan(
        dir,
        &format!(
            r#"
steps = ["load", "point-query", "update-index", "point-query:after"]
clients = [1]
[scale]
tables = 1
rows = 2000
[duration]
warmup = "100ms"
read = "1s"
write = "1s"

[[hook]]
when = "before"
step = "update-index"
shell = "echo $RELBENCH_TARGET $RELBENCH_REPEAT >> {}"

[[target]]
name = "a"
engine = "sqlite"
[[target]]
name = "b"
engine = "sqlite"
[target.pragmas]
journal_mode = "wal"
"#,
            marker.display()
        ),
    );
    (plan, marker)
}

fn marker_lines(marker: &std::path::Path) -> Vec<String> {
    let mut lines: Vec<String> = std::fs::read_to_string(marker)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect();
    lines.sort();
    lines
}

/// Regression: `run --confirm` had a sequencer of its own that ran no
/// hooks, so a plan that drops the page cache (or starts `perf`) before
/// a step got its confirmation repeats measured without it.
#[test]
fn a_before_hook_runs_on_every_confirmation_repeat() {
    let _one = alone();
    let dir = tempfile::tempdir().unwrap();
    let (plan, marker) = plan_with_marker_hook(dir.path());
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    assert_eq!(marker_lines(&marker), ["a 1", "b 1"]);

    // b's update-index ran beside another program: it needs confirming.
    let f = out.join("steps/b/r1-03-update-index-c1.json");
    mark_disturbed(&f);
    relbench()
        .args(["run", "-q", "--confirm"])
        .arg(&out)
        .assert()
        .success();

    // Three more repeats of that step for b and its base: the hook ran
    // before each of them, as it did in the run.
    let want: Vec<String> = ["a", "b"]
        .iter()
        .flat_map(|t| (1..=4).map(move |r| format!("{t} {r}")))
        .collect();
    assert_eq!(marker_lines(&marker), want);
    let confirmed = read_json(&out.join("steps/a/r3-03-update-index-c1.json"));
    assert!(
        confirmed["notes"]["hook.before.1"].is_string(),
        "{confirmed}"
    );
}

/// The same plan text gives the same executions, in the same order, with
/// the same identities: compiled from the file in one process and from
/// the run's record (`run.json`) in another, after the run. (With its
/// seed given: without one each run draws its own, and the record has it.)
#[test]
fn a_run_read_back_from_its_record_has_the_same_schedule() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, _) = plan_with_marker_hook(dir.path());
    let text = std::fs::read_to_string(&plan).unwrap();
    if !text.lines().any(|l| l.starts_with("seed")) {
        std::fs::write(&plan, format!("seed = 3\n{text}")).unwrap();
    }
    let out = dir.path().join("out");
    let from_file = relbench()
        .args(["check", "--schedule"])
        .arg(&plan)
        .output()
        .unwrap();
    assert!(from_file.status.success(), "{from_file:?}");
    let listed = String::from_utf8(from_file.stdout).unwrap();
    // Every execution once, in run order: each target's sequence in turn,
    // in the order the seed draws for the round (seed 3: b first).
    let ids: Vec<&str> = listed
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "b/r1/001:load/c1",
            "b/r1/002:point-query/c1",
            "b/r1/003:update-index/c1",
            "b/r1/004:point-query.after/c1",
            "a/r1/001:load/c1",
            "a/r1/002:point-query/c1",
            "a/r1/003:update-index/c1",
            "a/r1/004:point-query.after/c1",
        ]
    );
    assert!(
        listed.lines().nth(2).unwrap().ends_with("1 hook(s)"),
        "{listed}"
    );
    // `order = "fixed"`: as listed.
    let fixed = dir.path().join("fixed.toml");
    std::fs::write(
        &fixed,
        format!(
            "order = \"fixed\"\n{}",
            std::fs::read_to_string(&plan).unwrap()
        ),
    )
    .unwrap();
    let o = relbench()
        .args(["check", "--schedule"])
        .arg(&fixed)
        .output()
        .unwrap();
    let first = String::from_utf8(o.stdout).unwrap();
    assert!(first.starts_with("a/r1/001:load/c1"), "{first}");

    run_quiet(&plan, &out).assert().success();
    let from_record = relbench()
        .args(["check", "--schedule"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(from_record.status.success(), "{from_record:?}");
    assert_eq!(String::from_utf8(from_record.stdout).unwrap(), listed);
}

/// A plan's own SQL workload and a parameterised sysbench entry are
/// entries of the plan's catalogue: `show --plan` finds the first, the
/// schedule of a plan read back from its record has both.
#[test]
fn the_plans_own_entries_come_back_with_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(
        dir.path(),
        r#"
steps = ["load", "read-only-order[order=4,range=100]", "kv"]
clients = [1]
[scale]
rows = 1000
[duration]
warmup = "0s"
read = "300ms"
write = "300ms"

[[workload]]
name = "kv"
setup = ["CREATE TABLE IF NOT EXISTS kv (k INTEGER PRIMARY KEY, v INTEGER)"]
[[workload.statement]]
name = "put"
sql = "INSERT OR REPLACE INTO kv VALUES (:k, 1)"
bind = { k = "uniform(1, 100)" }
returns = 1

[[target]]
name = "a"
engine = "sqlite"
"#,
    );
    relbench()
        .args(["show", "kv", "--plan"])
        .arg(&plan)
        .assert()
        .success()
        .stdout(predicates::str::contains("INSERT OR REPLACE INTO kv"));
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let listed = relbench()
        .args(["check", "--schedule"])
        .arg(&out)
        .output()
        .unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert!(
        listed.contains("a/r1/002:read-only-order[order=4,range=100]/c1"),
        "{listed}"
    );
    assert!(listed.contains("a/r1/003:kv/c1"), "{listed}");
}
