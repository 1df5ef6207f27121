//! Workloads a plan shapes: the built-in microbenchmarks with parameters
//! (checked on a real MariaDB by its own statement counters), client
//! counts per step, the full scan once per client, and open-loop rates.

mod common;

use std::path::Path;

use common::*;

fn results(out: &Path, part: &str) -> Vec<serde_json::Value> {
    step_files(out)
        .into_iter()
        .filter(|f| f.contains(part))
        .map(|f| read_json(&out.join("steps").join(f)))
        .collect()
}

#[test]
fn steps_take_their_own_client_counts_and_the_scan_runs_once_per_client() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"clients = [1]
steps = ["load",
  { step = "scan", once = true, clients = [1, 2, 3] },
  { step = "point-query", clients = [2, 4] },
]
[scale]
tables = 2
rows = 5000
[duration]
warmup = "100ms"
read = "400ms"
[[target]]
name = "a"
engine = "sqlite"
"#;
    let plan = write_plan(dir.path(), text);
    relbench()
        .arg("check")
        .arg(&plan)
        .assert()
        .success()
        .stdout(predicates::str::contains(
        "scan is skipped at 3 clients: one pass per client needs a table each, and the plan has 2",
    ));
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let files = step_files(&out);
    for f in [
        "a/r1-02-scan-c1.json",
        "a/r1-02-scan-c2.json",
        "a/r1-03-point-query-c2.json",
        "a/r1-03-point-query-c4.json",
    ] {
        assert!(files.contains(&f.to_string()), "{f} in {files:?}");
    }
    assert!(!files.iter().any(|f| f.contains("scan-c3")), "{files:?}");
    assert!(
        !files.iter().any(|f| f.contains("point-query-c1")),
        "{files:?}"
    );
    // One pass each: as many events as clients, every row of a table per
    // pass, rows/s over the passes.
    for (clients, r) in [(1, "scan-c1"), (2, "scan-c2")] {
        let r = &results(&out, r)[0];
        assert_eq!(r["events"], clients, "{r}");
        assert_eq!(r["warmup_secs"], 0.0);
        assert_eq!(r["unit"], "rows/s");
        let want = 5000.0 * clients as f64 / r["secs"].as_f64().unwrap();
        let got = r["throughput"].as_f64().unwrap();
        assert!((got - want).abs() / want < 1e-6, "{got} vs {want}");
        assert_eq!(r["once"], true);
    }
}

#[test]
fn a_rate_limited_step_reaches_its_rate_and_a_slow_target_reports_the_miss() {
    // The rate reached is a measurement: within 2% of the one asked.
    let _alone = alone();
    let dir = tempfile::tempdir().unwrap();
    // SQLite answers a point query in microseconds: 400/s is easy. A
    // scan of 50,000 rows takes milliseconds: 100,000/s is not.
    let text = r#"clients = [2]
steps = ["load",
  { step = "point-query", rate = 400 },
  { step = "scan", rate = 100000 },
]
[scale]
rows = 50000
[duration]
warmup = "200ms"
read = "3s"
[[target]]
name = "a"
engine = "sqlite"
"#;
    let plan = write_plan(dir.path(), text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let fast = &results(&out, "point-query")[0];
    let rate = &fast["rate"];
    assert_eq!(rate["asked_per_sec"], 400.0);
    let reached = rate["reached_per_sec"].as_f64().unwrap();
    assert!((reached - 400.0).abs() / 400.0 < 0.02, "{reached}");
    assert_eq!(rate["missed"], false);
    let slow = &results(&out, "scan")[0];
    assert_eq!(slow["rate"]["missed"], true, "{}", slow["rate"]);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("scan at 100000/s"), "{md}");
}

#[test]
fn parameters_change_what_the_server_runs() {
    // MariaDB's own statement counters: each event of
    // read-only-order[points=3,order=4,range=50] is 3 point selects and
    // 4 ORDER BY ranges of 50 rows; the catalogue's is 10 and 1 of 1000.
    let dir = shared_tempdir();
    let text = r#"clients = [1]
steps = ["load", "read-only-order", "read-only-order[points=3,order=4,range=50]", "range-covered-pk[si=true]",
  { step = "point-query", reconnect = true },
  { step = "update-nonindex", prepared = false }]
[scale]
rows = 20000
[duration]
warmup = "0s"
read = "1s"
[[target]]
name = "ma"
engine = "mariadb"
basedir = "/usr"
malloc = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
"#;
    let plan = write_plan(dir.path(), text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    // The allocator took: the server's memory map has it.
    let run = read_json(&out.join("run.json"));
    let malloc = run["targets"][0]["config"]["relbench.malloc"]
        .as_str()
        .unwrap();
    assert!(malloc.ends_with("(loaded)"), "{malloc}");
    let per_event = |part: &str, counter: &str| {
        let r = &results(&out, part)[0];
        let events = r["events"].as_f64().unwrap();
        // A counter that did not move is left out of the deltas.
        r["metrics"]["counters"]["delta"][counter]
            .as_f64()
            .unwrap_or(0.0)
            / events
    };
    let base = per_event("02-read-only-order-c1", "Com_stmt_execute");
    let with = per_event("03-read-only-order[", "Com_stmt_execute");
    assert!((base - 11.0).abs() < 0.3, "{base}");
    assert!((with - 7.0).abs() < 0.3, "{with}");
    // Rows read along the ranges: about 1000 against 4 × 50.
    let rows_base = per_event("02-read-only-order-c1", "Handler_read_next");
    let rows_with = per_event("03-read-only-order[", "Handler_read_next");
    assert!(
        rows_base > 900.0 && rows_with < 300.0,
        "{rows_base} {rows_with}"
    );
    // On the secondary index: the range reads k, not id.
    let si = &results(&out, "range-covered-pk[si=true]")[0];
    assert!(si["failed"].is_null(), "{}", si["failed"]);
    // prepared = false (sysbench's --db-ps-mode=disable): the server
    // prepares nothing and gets one text UPDATE per event.
    let r = &results(&out, "06-update-nonindex-c1")[0];
    assert!(r["failed"].is_null(), "{}", r["failed"]);
    assert_eq!(
        r["errors"].as_object().map_or(0, |e| e.len()),
        0,
        "{}",
        r["errors"]
    );
    assert!(per_event("06-update-nonindex-c1", "Com_stmt_execute") < 0.01);
    let updates = per_event("06-update-nonindex-c1", "Com_update");
    assert!((updates - 1.0).abs() < 0.05, "{updates}");
    // sysbench's --reconnect: a connection per event, as the server
    // counts them.
    let per = per_event("05-point-query-c1", "Connections");
    assert!((1.0..1.1).contains(&per), "{per} connections per event");
    relbench()
        .args(["show", "range-covered-pk[si=true]"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "SELECT id FROM sbtest1 WHERE k BETWEEN ? AND ? -- 100 rows",
        ));
}

#[test]
fn a_one_off_run_without_a_plan_writes_results_that_report_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("one.db");
    let out = dir.path().join("out");
    // Without --load the tables must be there: said, with what to do.
    relbench()
        .args(["run", "-q", "--sqlite"])
        .arg(&db)
        .args(["--workload", "point-query", "--time", "300ms"])
        .arg("--out")
        .arg(dir.path().join("first"))
        .assert()
        .code(1)
        .stderr(predicates::str::contains("(without a plan: pass --load)"));
    relbench()
        .args(["run", "--sqlite"])
        .arg(&db)
        .args([
            "--load",
            "--rows",
            "3000",
            "--workload",
            "read-only-order[order=2]",
            "--clients",
            "1,2",
            "--time",
            "500ms",
            "--warmup",
            "100ms",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "[target] read-only-order[order=2] c2: ",
        ));
    let files = step_files(&out);
    assert_eq!(
        files,
        [
            "target/r1-01-load-c1.json",
            "target/r1-02-read-only-order[order=2]-c1.json",
            "target/r1-02-read-only-order[order=2]-c2.json"
        ]
    );
    let run = read_json(&out.join("run.json"));
    assert_eq!(run["plan_source"], "<command line>");
    relbench()
        .arg("report")
        .arg(&out)
        .args(["--out"])
        .arg(dir.path().join("again"))
        .assert()
        .success();
    let md = std::fs::read_to_string(dir.path().join("again").join("report.md")).unwrap();
    assert!(md.contains("| read-only-order[order=2] | 2 |"), "{md}");
    // A workload without a target is refused with what to give.
    relbench()
        .args(["run", "--workload", "point-query"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("--url URL or --sqlite FILE"));
}

/// A plan's own workload: two statements by weight, and the same as a
/// transaction mix, with its own table made by its set-up.
const SCRIPT: &str = r#"
[[workload]]
name = "kv"
about = "a key-value table: reads 3 to 1 over writes"
setup = [
  "DROP TABLE IF EXISTS kv",
  "CREATE TABLE kv (id INTEGER PRIMARY KEY, v VARCHAR(64) NOT NULL)",
  "INSERT INTO kv (id, v) VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd'), (5, 'e'), (6, 'f'), (7, 'g'), (8, 'h')",
]

[[workload.statement]]
name = "get"
sql = "SELECT v FROM kv WHERE id = :id"
bind = { id = "uniform(1, 8)" }
returns = 1
weight = 3

[[workload.statement]]
name = "put"
sql = "UPDATE kv SET v = :v WHERE id = :id"
bind = { id = "zipfian(1, 8)", v = "string(20, 50)" }
returns = 1
weight = 1
"#;

/// The share of gets and the statements completed. `busy_allowed`: two
/// SQLite clients writing in rollback-journal mode may, rarely, get
/// SQLITE_BUSY at once (SQLite's deadlock avoidance does not wait in the
/// busy handler): a few such errors are the engine's, not the mix's
/// (regression: this test failed on one busy `put` in 100,000).
fn mix_of(out: &Path, busy_allowed: bool) -> (f64, u64) {
    let r = &results(out, "-kv-")[0];
    assert!(r["failed"].is_null(), "{}", r["failed"]);
    let get = r["statements"]["get"].as_u64().unwrap();
    let put = r["statements"]["put"].as_u64().unwrap();
    let errors = r["errors"].as_object().cloned().unwrap_or_default();
    if busy_allowed {
        let busy: u64 = errors.values().map(|n| n.as_u64().unwrap()).sum();
        assert!(
            errors.keys().all(|k| k.ends_with("/busy")) && busy <= 100,
            "{}",
            r["errors"]
        );
    } else {
        assert_eq!(errors.len(), 0, "{}", r["errors"]);
    }
    (get as f64 * 100.0 / (get + put) as f64, get + put)
}

fn run_script(dir: &Path, target: &str) -> std::path::PathBuf {
    let text = format!(
        "clients = [2]\nseed = 11\nsteps = [\"kv\"]\n[duration]\nwarmup = \"0s\"\nevents = 100000\n{SCRIPT}\n{target}"
    );
    let plan = write_plan(dir, &text);
    let out = dir.join("out");
    run_quiet(&plan, &out).assert().success();
    out
}

#[test]
fn a_sql_workload_with_a_weighted_mix_runs_on_sqlite_with_its_weights() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_script(
        dir.path(),
        "[[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
    );
    let (get_pct, n) = mix_of(&out, true);
    assert!((99_900..=100_000).contains(&n), "{n}");
    assert!((get_pct - 75.0).abs() < 1.0, "{get_pct}");
    // It shows, lists and reports like a built-in step.
    let plan = dir.path().join("plan.toml");
    relbench()
        .args(["show", "kv", "--plan"])
        .arg(&plan)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "UPDATE kv SET v = $1 WHERE id = $2 -- weight 1, returns exactly 1 rows; :id = zipfian(1, 8, 0.8), :v = string(20, 50)",
        ));
    relbench()
        .args(["list", "--plan"])
        .arg(&plan)
        .assert()
        .success()
        .stdout(predicates::str::contains("kv                     custom"));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("### The plan's own workloads"), "{md}");
}

#[test]
fn a_sql_workload_runs_on_mariadb_and_postgres_with_its_weights() {
    for target in [
        "[[target]]\nname = \"ma\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\n",
        "[[target]]\nname = \"pg\"\nengine = \"postgres\"\nbasedir = \"/usr/lib/postgresql/15\"\n",
    ] {
        let dir = shared_tempdir();
        let out = run_script(dir.path(), target);
        let (get_pct, n) = mix_of(&out, false);
        assert_eq!(n, 100_000, "{target}");
        assert!((get_pct - 75.0).abs() < 1.0, "{target}: {get_pct}");
    }
}

#[test]
fn transactions_of_a_sql_workload_commit_together() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "clients = [1]\nsteps = [\"kv\"]\n[duration]\nwarmup = \"0s\"\nevents = 2000\n{SCRIPT}\n[[workload.transaction]]\nname = \"read-then-write\"\nstatements = [\"get\", \"put\"]\n\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n"
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let r = &results(&out, "-kv-")[0];
    for class in ["begin", "get", "put", "commit"] {
        assert_eq!(r["statements"][class], 2000, "{class}: {}", r["statements"]);
    }
}

#[test]
fn bad_sql_workloads_say_where_in_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let target = "\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n";
    let head =
        "steps = [\"w\"]\n[[workload]]\nname = \"w\"\n[[workload.statement]]\nname = \"s\"\n";
    // An unknown function: the column of its name inside the string.
    check_refuses(
        dir.path(),
        &format!("{head}sql = \"SELECT :id\"\nbind = {{ id = \"unifrom(1, 10)\" }}{target}"),
        "7:16",
        "unknown function \"unifrom\"; did you mean \"uniform\"?",
    );
    // A placeholder with no binding: the column of the placeholder.
    check_refuses(
        dir.path(),
        &format!("{head}sql = \"SELECT c FROM t WHERE id = :id AND k = :k\"\nbind = {{ id = \"uniform(1, 10)\" }}{target}"),
        "6:47",
        "placeholder :k has no binding",
    );
    // A weight of 0.
    check_refuses(
        dir.path(),
        &format!("{head}sql = \"SELECT 1\"\nweight = 0{target}"),
        "7:10",
        "weight must be between 1 and 1000000, not 0",
    );
    // A transaction of a statement the workload lacks.
    check_refuses(
        dir.path(),
        &format!("{head}sql = \"SELECT 1\"\n[[workload.transaction]]\nname = \"t\"\nstatements = [\"s\", \"nope\"]{target}"),
        "9:20",
        "transaction \"t\" names statement \"nope\", which the workload does not have",
    );
}

/// Regression: `run --confirm` reads the plan back from run.json, where
/// nothing registered its workloads, and starts each target afresh, where
/// nothing made their tables again.
#[test]
fn confirming_a_plans_own_workload_registers_it_and_sets_it_up_again() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "clients = [1]\nsteps = [\"kv\"]\n[duration]\nwarmup = \"100ms\"\nwrite = \"1s\"\n{SCRIPT}\n\
         [[target]]\nname = \"a\"\nengine = \"sqlite\"\n[[target]]\nname = \"b\"\nengine = \"sqlite\"\n\
         [target.pragmas]\njournal_mode = \"wal\"\n"
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let f = out.join("steps/b/r1-01-kv-c1.json");
    mark_disturbed(&f);
    relbench()
        .args(["run", "-q", "--confirm"])
        .arg(&out)
        .assert()
        .success();
    for t in ["a", "b"] {
        let again = read_json(&out.join(format!("steps/{t}/r2-01-kv-c1.json")));
        assert!(again["failed"].is_null(), "{t}: {}", again["failed"]);
        assert!(again["notes"]["setup"].is_string(), "{again}");
    }
}

#[test]
fn unprepared_statements_run_on_postgres_and_sqlite_as_prepared_ones_do() {
    for target in [
        "[[target]]\nname = \"pg\"\nengine = \"postgres\"\nbasedir = \"/usr/lib/postgresql/15\"\n",
        "[[target]]\nname = \"lite\"\nengine = \"sqlite\"\n",
    ] {
        let dir = shared_tempdir();
        let text = format!(
            "clients = [2]\nsteps = [\"load\", {{ step = \"read-write-10\", prepared = false }}]\n[scale]\nrows = 5000\n[duration]\nwarmup = \"0s\"\nwrite = \"1s\"\n{target}"
        );
        let plan = write_plan(dir.path(), &text);
        let out = dir.path().join("out");
        run_quiet(&plan, &out).assert().success();
        let r = &results(&out, "read-write-10")[0];
        assert!(r["failed"].is_null(), "{target}: {}", r["failed"]);
        assert!(r["events"].as_u64().unwrap() > 10, "{target}: {r}");
        assert_eq!(r["plain"], true);
        let wrong = r["errors"]
            .as_object()
            .map_or(0, |e| e.keys().filter(|k| k.contains("wrong")).count());
        assert_eq!(wrong, 0, "{target}: {}", r["errors"]);
    }
}
