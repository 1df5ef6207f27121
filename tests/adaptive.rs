//! Time to verdict: a window that never settles is not judged, and an
//! adaptive run (`repeats = "auto"`) records each round it decides before
//! running it, so an interrupted round is finished by `--resume` with the
//! cells it chose, and the same step files choose the same cells again.
//! Real SQLite targets; the plans run one at a time (`common::alone`).

mod common;

use common::*;

/// Every event scans a table that loses 1,500 rows a second from its first
/// event on, so each event is quicker than the last and the window's
/// throughput climbs throughout, by the clock rather than by the machine's
/// speed, and without a commit's fsync to stall a second. (Rows deleted
/// per event climbed too little on a 2-vCPU EPYC VM, whose fsync stalls of
/// up to 0.6 s hid the climb in both windows: CI failed there.)
const SHRINKING: &str = r#"
steps = ["shrink"]
clients = [1]
seed = 3

[duration]
warmup = "0s"
read = "12s"
write = "12s"

[[workload]]
name = "shrink"
about = "a scan of a table that loses 1,500 rows a second"
setup = ["CREATE TABLE shrinking (id INTEGER PRIMARY KEY, v TEXT NOT NULL)",
         "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30000) INSERT INTO shrinking SELECT i, printf('%080d', i) FROM n",
         "CREATE TABLE started (one INTEGER PRIMARY KEY, at REAL NOT NULL)"]

[[workload.statement]]
name = "start"
sql = "INSERT OR IGNORE INTO started VALUES (1, julianday('now'))"
returns = "any"

[[workload.statement]]
name = "scan"
sql = "SELECT sum(length(v)) FROM shrinking"
returns = "any"

[[workload.statement]]
name = "trim"
sql = "DELETE FROM shrinking WHERE id <= (SELECT (julianday('now') - at) * 86400 * 1500 FROM started)"
returns = "any"

[[workload.transaction]]
name = "scan-then-trim"
statements = ["start", "scan", "trim"]
weight = 1

[[target]]
name = "a"
engine = "sqlite"
[target.pragmas]
synchronous = "off"

[[target]]
name = "b"
engine = "sqlite"
[target.pragmas]
synchronous = "off"
"#;

#[test]
fn a_window_whose_throughput_keeps_rising_is_not_steady_and_not_judged() {
    let _one = alone();
    let dir = tempfile::tempdir().unwrap();
    let plan = write_plan(dir.path(), SHRINKING);
    let (out, report) = run_until_undisturbed(&plan, dir.path());
    let cells = &report_row(&report, "shrink")["cells"];
    // Each window is judged on its own seconds: a commit that stalls one
    // of them may hide its climb in its noise, so either may be the one.
    let whys: Vec<&str> = [&cells[0], &cells[1]]
        .iter()
        .filter_map(|c| c["unsteady"].as_str())
        .collect();
    assert!(!whys.is_empty(), "{cells}");
    assert!(
        whys.iter()
            .all(|w| w.starts_with("still warming up: throughput rose")),
        "{whys:?}"
    );
    assert_eq!(cells[1]["verdict"], "unsteady", "{cells}");
    let summary = report["summary"][0].to_string();
    assert!(summary.contains("\"unsteady\""), "{summary}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("(not steady)"), "{md}");
    assert!(
        md.contains("1 not judged (a window that never became steady)"),
        "{md}"
    );
    // More repeats would not settle it: --confirm has nothing to add.
    relbench()
        .args(["run", "--confirm"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicates::str::contains("nothing to confirm"));
}

/// Two identical targets on update-index; a hook keeps both cores busy
/// through b's first two windows, so its cell is disturbed (open, and a
/// quiet repeat can decide it) and the run takes a round; `max = 3`
/// stops it after one. The targets take turns as listed (`order =
/// "fixed"`): the test stops the run between a's window and b's.
fn open_plan(hook: &str) -> String {
    format!(
        r#"
steps = ["load", "update-index"]
clients = [1]
repeats = "auto"
seed = 11
order = "fixed"

[adaptive]
min = 2
max = 3

[scale]
tables = 1
rows = 5000

[duration]
warmup = "0.2s"
write = "1s"

[interference]
retries = 0
{hook}
[[target]]
name = "a"
engine = "sqlite"

[[target]]
name = "b"
engine = "sqlite"
"#
    )
}

/// A hook that keeps both cores busy through b's first two update-index
/// windows (its cell disturbed, so the run takes a round), then does what
/// `more` says (shell, `elif …; then …; ` or nothing).
fn burning_b(more: &str) -> String {
    let burn = "timeout 3 sh -c 'while :; do :; done' >/dev/null 2>&1 &";
    format!(
        r#"
[[hook]]
when = "before"
step = "update-index"
shell = "if [ $RELBENCH_TARGET = b ] && [ $RELBENCH_REPEAT -le 2 ]; then {burn} {burn} {more}fi"
"#
    )
}

fn rounds(out: &std::path::Path) -> Vec<serde_json::Value> {
    read_json(&out.join("adaptive.json"))["rounds"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn an_interrupted_round_is_finished_by_resume_with_the_cells_it_chose() {
    let _one = alone();
    let dir = tempfile::tempdir().unwrap();
    // The hook burns both cores through b's first two windows, then
    // stops the run as b begins the first added round, after a has
    // measured its repeat of it (its mark is outside the results, which
    // the test copies).
    let mark = dir.path().join("stopped");
    let hook = burning_b(&format!(
        "elif [ $RELBENCH_REPEAT = 3 ] && [ $RELBENCH_TARGET = b ] && [ ! -e {m} ]; then touch {m}; kill -INT $PPID; ",
        m = mark.display()
    ));
    let plan = write_plan(dir.path(), &open_plan(&hook));
    let out = dir.path().join("out");
    let first = run_quiet(&plan, &out).assert().code(130);
    let said = String::from_utf8_lossy(&first.get_output().stderr).to_string();
    assert!(said.contains("adaptive round 1 (repeat 3"), "{said}");
    let before = rounds(&out);
    assert_eq!(before.len(), 1, "{before:?}");
    assert!(before[0]["secs"].is_null(), "unfinished: {:?}", before[0]);
    let chose: Vec<String> = before[0]["open"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["why"].as_str().unwrap().to_string())
        .collect();
    assert!(
        chose.iter().any(|w| w.starts_with("b (update-index c1)")),
        "{chose:?}"
    );
    let a3 = out.join("steps/a/r3-02-update-index-c1.json");
    let a3_before = std::fs::read(&a3).expect("a measured its repeat before the stop");
    assert!(!out.join("steps/b/r3-02-update-index-c1.json").exists());

    let resumed = relbench()
        .args(["run", "-q", "--resume", "--out"])
        .arg(&out)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&resumed.get_output().stderr).to_string();
    assert!(
        said.contains(
            "adaptive round 1 (repeat 3) was interrupted: finishing it with the cells it chose"
        ),
        "{said}"
    );
    let after = rounds(&out);
    // The round the resume ran is the recorded one: the same cells, and a
    // second look is not taken past max = 3.
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["open"], before[0]["open"]);
    assert!(after[0]["secs"].as_f64().unwrap() > 0.0, "{:?}", after[0]);
    assert_eq!(
        std::fs::read(&a3).unwrap(),
        a3_before,
        "a's repeat measured before the stop is kept, not measured again"
    );
    assert!(out.join("steps/b/r3-02-update-index-c1.json").exists());
    let ended = read_json(&out.join("adaptive.json"))["ended"].clone();
    assert!(
        ["decided", "max-repeats"].contains(&ended["why"].as_str().unwrap()),
        "{ended}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Adaptive repeats"), "{md}");
    assert!(
        md.contains("This run added repeats where a cell was undecided"),
        "{md}"
    );

    // The same step files choose the same cells: the run's first two
    // repeats copied without the round, resumed, decide round 1 again.
    let again = dir.path().join("again");
    copy_run(&out, &again, |name| !name.starts_with("r3-"));
    std::fs::remove_file(again.join("adaptive.json")).ok();
    relbench()
        .args(["run", "-q", "--resume", "--out"])
        .arg(&again)
        .assert()
        .success();
    assert_eq!(rounds(&again)[0]["open"], before[0]["open"]);
}

/// Copies a results directory's run.json and the step files `keep`
/// keeps.
fn copy_run(from: &std::path::Path, to: &std::path::Path, keep: impl Fn(&str) -> bool) {
    for entry in files_under(from) {
        let rel = entry.strip_prefix(from).unwrap();
        let name = rel.file_name().unwrap().to_string_lossy().to_string();
        let wanted = rel == std::path::Path::new("run.json")
            || rel == std::path::Path::new("adaptive.json")
            || (rel.starts_with("steps") && keep(&name));
        if wanted {
            let dest = to.join(rel);
            std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
            std::fs::copy(&entry, &dest).unwrap();
        }
    }
}

#[test]
fn adaptive_plans_and_flags_that_cannot_work_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let steps = "steps = [\"point-query\"]\n";
    let target = "[[target]]\nname = \"a\"\nengine = \"sqlite\"\n";
    check_refuses(
        dir.path(),
        &format!("repeats = \"often\"\n{steps}{target}"),
        "1:11",
        "repeats must be a number of repeats or \"auto\"",
    );
    check_refuses(
        dir.path(),
        &format!("repeats = \"auto\"\n{steps}[adaptive]\nmin = 1\n{target}"),
        "4:7",
        "an adaptive run needs 2 <= min <= max",
    );
    check_refuses(
        dir.path(),
        &format!("repeats = 3\n{steps}[adaptive]\nmax = 5\n{target}"),
        "4:7",
        "[adaptive] bounds an adaptive run, and `repeats` is a number",
    );
    let fixed = write_plan(dir.path(), &format!("repeats = 2\n{steps}{target}"));
    relbench()
        .args(["run", "--budget", "1h"])
        .arg(&fixed)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--budget bounds an adaptive run"));
    let auto = write_plan(dir.path(), &format!("repeats = \"auto\"\n{steps}{target}"));
    relbench()
        .args(["run", "--shard", "1/2", "--out"])
        .arg(dir.path().join("s1"))
        .arg(&auto)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "a shard or a client share has only its part",
        ));
}

/// `run --history` on an adaptive run: the rounds run in the run's
/// session, so the history hears the run's end after the last round and
/// holds every repeat the rounds measured. Regression: the history sink
/// imported the run at the first pass's end, and the adaptive rounds ran
/// without it: the windows that decided the open cells never reached the
/// history.
#[test]
fn run_history_with_auto_repeats_stores_every_repeat_the_rounds_measured() {
    let _one = alone();
    let dir = tempfile::tempdir().unwrap();
    // Both cores busy through b's first two windows: its cell is
    // disturbed, so a round (repeat 3) is taken.
    let hook = burning_b("");
    let plan = write_plan(dir.path(), &open_plan(&hook));
    let out = dir.path().join("out");
    let history = dir.path().join("h.sqlite");
    let events = dir.path().join("events.jsonl");
    run_quiet(&plan, &out)
        .args(["--history", history.to_str().unwrap()])
        .args(["--build", "a=build-a", "--build", "b=build-b"])
        .arg("--events")
        .arg(&events)
        .assert()
        .success();
    assert!(!rounds(&out).is_empty(), "the run took no round");
    // The JSON lines heard the rounds too, and the run's end once, last.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "ended").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(lines.last().unwrap()["status"], "complete");
    let finished = |repeat: u64| {
        lines
            .iter()
            .filter(|l| l["event"] == "finished" && l["id"]["repeat"] == repeat)
            .count()
    };
    assert!(
        finished(3) >= 1,
        "the round's results are events: {kinds:?}"
    );
    // Each measured window's events in order: started, opened, closed,
    // ended, its result.
    let key = "b/r3/002:update-index/c1";
    let of: Vec<&str> = lines
        .iter()
        .filter(|l| l["id"]["key"] == key && l["event"] != "live")
        .map(|l| l["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        of,
        [
            "step_started",
            "window_opened",
            "window_closed",
            "step_ended",
            "finished"
        ],
        "{key}"
    );
    // Each target's update-index windows, as its step files hold them.
    let measured = |t: &str| {
        step_files(&out)
            .iter()
            .filter(|f| f.starts_with(&format!("{t}/")) && f.contains("update-index"))
            .count()
    };
    assert_eq!(measured("b"), 3, "{:?}", step_files(&out));
    let db = rusqlite::Connection::open(&history).unwrap();
    let stored = |t: &str| -> usize {
        db.query_row(
            "SELECT length(c.disturbed) FROM cells c JOIN series s ON s.id = c.series \
             WHERE c.target = ?1 AND s.step LIKE '%update-index%'",
            [t],
            |r| r.get::<_, i64>(0),
        )
        .unwrap() as usize
    };
    for t in ["a", "b"] {
        assert_eq!(stored(t), measured(t), "target {t}: the history's repeats");
    }
}

/// An adaptive run on servers by URL whose password is in the
/// environment: its rounds run with the secrets the run took at its start.
/// Regression: each round took them from the environment again, after the
/// run's start had removed them from it, and the round failed ("not
/// set"). The round is a recorded one that `--resume` finishes (whether
/// two second-long windows of PostgreSQL take a round by themselves is
/// the machine's to say).
#[test]
fn an_adaptive_run_on_url_targets_takes_its_rounds_with_the_secrets_of_its_start() {
    let _one = alone();
    let dir = shared_tempdir();
    let (server, url) = postgres_elsewhere(dir.path());
    let by_url = |name: &str| {
        format!(
            "[[target]]\nname = \"{name}\"\nengine = \"postgres\"\nurl = \"{url}\"\npassword_env = \"RB_ADAPTIVE_PW\"\ntls = \"off\"\n"
        )
    };
    let plan = open_plan("");
    let plan = format!(
        "{}{}\n{}",
        &plan[..plan.find("[[target]]").unwrap()],
        by_url("a"),
        by_url("b")
    );
    let plan = write_plan(dir.path(), &plan);
    let out = dir.path().join("out");
    let password = server.rt.password.expose().to_string();
    run_quiet(&plan, &out)
        .env("RB_ADAPTIVE_PW", &password)
        .assert()
        .success();
    // A round recorded and not yet run, as an interruption leaves one: b's
    // update-index once more.
    let repeat = step_files(&out)
        .iter()
        .filter_map(|f| f.split_once("/r")?.1.split_once('-')?.0.parse::<u64>().ok())
        .max()
        .unwrap()
        + 1;
    let step = read_json(&out.join("steps/b/r1-02-update-index-c1.json"));
    let mut rec = read_json(&out.join("adaptive.json"));
    rec.as_object_mut().unwrap().remove("ended");
    let look = rec["rounds"].as_array().unwrap().len() + 1;
    rec["rounds"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "repeat": repeat,
            "look": look,
            "open": [{
                "target": "b", "base": "a", "kind": step["kind"], "occurrence": 1, "clients": 1,
                "openness": 0.5, "why": "b (update-index c1): recorded by the test",
            }],
            "estimate_secs": 2.0,
        }));
    std::fs::write(out.join("adaptive.json"), rec.to_string()).unwrap();
    let resumed = relbench()
        .args(["run", "-q", "--resume", "--out"])
        .arg(&out)
        .env("RB_ADAPTIVE_PW", &password)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&resumed.get_output().stderr).to_string();
    assert!(
        said.contains(&format!(
            "adaptive round {look} (repeat {repeat}) was interrupted: finishing it"
        )),
        "{said}"
    );
    let added = format!("steps/b/r{repeat}-02-update-index-c1.json");
    assert!(out.join(&added).exists(), "{added}: {:?}", step_files(&out));
}
