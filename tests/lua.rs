//! sysbench's Lua scripts run by relbench against sysbench 1.0.20 itself
//! (Debian's package): on one MariaDB with its general log on, each
//! script sysbench ships is run by sysbench and by relbench, and the
//! statements each sends per event are compared shape by shape (literals
//! as `?`), with the statements `prepare` sends. Needs Debian's
//! mariadb-server and sysbench (`./test` installs them).

mod common;

use common::*;
use relbench::db::server::mariadb::MariaDb;
use relbench::db::server::ManagedServer;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SECRET: &str = "lua-secret";
const EVENTS: u64 = 60;

/// The scripts sysbench 1.0.20 ships, all but the module they share.
const SCRIPTS: [&str; 11] = [
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_delete",
    "oltp_insert",
    "select_random_points",
    "select_random_ranges",
    "bulk_insert",
];

/// A MariaDB someone else runs, its `bench` user, and a directory its
/// general log may be written to.
struct Logged {
    server: ManagedServer,
    logs: PathBuf,
}

impl Logged {
    fn start(dir: &Path) -> Logged {
        let server = server_elsewhere(dir, "maria", "/usr", "mysql", Box::new(MariaDb));
        bench_user(&server, SECRET);
        let logs = log_dir(dir, "mysql");
        Logged { server, logs }
    }

    /// Runs `f` with the general log written to `name`, and returns the
    /// log's lines.
    fn log(&self, name: &str, f: impl FnOnce()) -> Vec<(u32, String, String)> {
        general_log(&self.server, &self.logs.join(name), f)
    }

    fn port(&self) -> u16 {
        self.server.rt.port
    }
}

fn sysbench(port: u16, script: &str, command: &str) {
    let out = std::process::Command::new("sysbench")
        .arg(format!("/usr/share/sysbench/{script}.lua"))
        .args([
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            &format!("--mysql-port={port}"),
            "--mysql-user=bench",
            &format!("--mysql-password={SECRET}"),
            "--mysql-db=sbtest",
            "--tables=1",
            "--table-size=1000",
            "--threads=1",
            &format!("--events={EVENTS}"),
            "--time=0",
            "--rand-seed=1",
            command,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "sysbench {script} {command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The workload's statements in a log, by connection, in the order the
/// connections first sent one: each connection's shapes with their
/// counts. relbench's own reads (EXPLAIN of what a step sends, the
/// server's counters) are not the workload's.
fn workload_connections(lines: &[(u32, String, String)]) -> Vec<BTreeMap<String, u64>> {
    let mut order: Vec<u32> = Vec::new();
    let mut by: BTreeMap<u32, BTreeMap<String, u64>> = BTreeMap::new();
    for (id, cmd, sql) in lines {
        if cmd != "Query" && cmd != "Execute" {
            continue;
        }
        let (s, _) = shape(sql);
        let workload = s.contains("sbtest") || matches!(s.as_str(), "begin" | "commit");
        if !workload
            || s.starts_with("explain")
            || s.starts_with("select count(*) from information_schema")
        {
            continue;
        }
        if !order.contains(id) {
            order.push(*id);
        }
        *by.entry(*id)
            .or_default()
            .entry(format!("{cmd} {s}"))
            .or_default() += 1;
    }
    order
        .into_iter()
        .map(|id| by.remove(&id).unwrap())
        .collect()
}

#[test]
fn sysbenchs_own_scripts_send_sysbenchs_statements_per_event_and_prepare_the_same_tables() {
    let dir = shared_tempdir();
    let db = Logged::start(dir.path());
    let port = db.port();
    // relbench: every script's prepare, run and cleanup in one plan.
    let mut plan = format!(
        "seed = 1\nclients = [1]\n[duration]\nwarmup = \"0s\"\nevents = {EVENTS}\n\
         [[target]]\nname = \"maria\"\nengine = \"mariadb\"\n\
         url = \"mysql://bench@127.0.0.1:{port}/sbtest\"\npassword_env = \"LUA_SECRET\"\n"
    );
    let mut steps = Vec::new();
    for s in SCRIPTS {
        plan += &format!(
            "[[workload]]\nname = \"{s}\"\nscript = \"{s}.lua\"\n\
             options = {{ tables = 1, table_size = 1000 }}\n"
        );
        steps.extend([
            format!("\"{s}.prepare\""),
            format!("\"{s}\""),
            format!("\"{s}.cleanup\""),
        ]);
    }
    let plan = format!("steps = [{}]\n{plan}", steps.join(", "));
    let plan_file = write_plan(dir.path(), &plan);
    let out = dir.path().join("out");
    let ours = db.log("relbench.log", || {
        run_quiet(&plan_file, &out)
            .env("LUA_SECRET", SECRET)
            .assert()
            .success();
    });
    let ours = workload_connections(&ours);
    assert_eq!(
        ours.len(),
        3 * SCRIPTS.len(),
        "one connection a step: {ours:#?}"
    );
    for (i, script) in SCRIPTS.iter().enumerate() {
        let theirs = db.log(&format!("{script}.log"), || {
            sysbench(port, script, "prepare");
            sysbench(port, script, "run");
            sysbench(port, script, "cleanup");
        });
        let theirs = workload_connections(&theirs);
        assert_eq!(theirs.len(), 3, "{script}: {theirs:#?}");
        // prepare: the same statements (the same tables, rows and index).
        let shapes = |m: &BTreeMap<String, u64>| m.keys().cloned().collect::<Vec<_>>();
        assert_eq!(shapes(&ours[3 * i]), shapes(&theirs[0]), "{script} prepare");
        // run: the same statements, as many per event.
        assert_eq!(ours[3 * i + 1], theirs[1], "{script} run, {EVENTS} events");
        assert_eq!(ours[3 * i + 2], theirs[2], "{script} cleanup");
        let step =
            read_json(&out.join(format!("steps/maria/r1-{:02}-{script}-c1.json", 3 * i + 2)));
        assert_eq!(step["events"].as_u64(), Some(EVENTS), "{script}");
    }
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/lua")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn a_script_that_reads_a_row_and_writes_only_when_it_must_runs_and_reports_each_statement() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("bank.db");
    let charge = fixture("charge.lua");
    let one_off = |command: &str, out: &str| {
        relbench()
            .args(["run", "-q", "--sqlite"])
            .arg(&db)
            .arg("--out")
            .arg(dir.path().join(out))
            .args([
                "--script",
                &charge,
                "--threads=2",
                "--time=2",
                "--accounts=300",
                command,
            ])
            .assert()
            .success();
    };
    one_off("prepare", "prepare");
    one_off("run", "run");
    let step = read_json(&dir.path().join("run/steps/target/r1-01-charge-c2.json"));
    let events = step["events"].as_u64().unwrap();
    let count = |class: &str| step["statements"][class].as_u64().unwrap_or(0);
    // Each statement's latency, kept by class.
    for class in ["begin", "select", "update", "commit"] {
        assert_eq!(
            step["latency"][class]["count"].as_u64(),
            Some(count(class)),
            "{class}"
        );
    }
    // Every event read; only the accounts with money were charged (a
    // third have none, the rest more than the step can spend: regression,
    // 300 units in all were spent before a CI run's window opened).
    assert!(events > 100, "{step}");
    assert!(count("select") >= events, "{step}");
    assert!(
        count("update") > 0 && count("update") < count("select"),
        "{step}"
    );
    // A charge that found the database locked restarted its event, its
    // transaction rolled back.
    let failed = step["failed_events"].as_u64().unwrap_or(0);
    assert_eq!(count("begin"), count("commit") + failed, "{step}");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let min: i64 = conn
        .query_row("SELECT min(balance) FROM accounts", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        min, 0,
        "a balance went below zero: the branch was not taken"
    );
    let report = std::fs::read_to_string(dir.path().join("run/report.md")).unwrap();
    for class in ["select", "update"] {
        assert!(
            report.contains(&format!("| charge | 2 | target | {class} |")),
            "no {class} in the report's latency per statement:\n{report}"
        );
    }
    one_off("cleanup", "cleanup");
}

#[test]
fn a_broken_script_is_refused_at_load_or_fails_its_step_with_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("x.db");
    let script = |file: &str, out: &str| {
        relbench()
            .args(["run", "-q", "--sqlite"])
            .arg(&db)
            .arg("--out")
            .arg(dir.path().join(out))
            .args(["--script", &fixture(file), "--time=1"])
            .assert()
    };
    // At load: nothing runs.
    let syntax = script("syntax.lua", "a").code(2);
    let err = String::from_utf8_lossy(&syntax.get_output().stderr).into_owned();
    assert!(err.contains("syntax.lua:2:"), "{err}");
    let old = script("old_api.lua", "b").code(2);
    let err = String::from_utf8_lossy(&old.get_output().stderr).into_owned();
    assert!(
        err.contains("old_api.lua:2: db_query is not supported by relbench"),
        "{err}"
    );
    assert!(!dir.path().join("a").exists() && !dir.path().join("b").exists());
    // In event(): the step fails with the script's line, the steps before
    // it are kept.
    let plan = write_plan(
        dir.path(),
        &format!(
            "steps = [\"charge.prepare\", \"charge\", \"broken\"]\nclients = [1]\n\
             [duration]\nwarmup = \"0s\"\nwrite = \"1s\"\n\
             [[workload]]\nname = \"charge\"\nscript = \"{}\"\n\
             [[workload]]\nname = \"broken\"\nscript = \"{}\"\n\
             [[target]]\nname = \"t\"\nengine = \"sqlite\"\npath = \"{}\"\n",
            fixture("charge.lua"),
            fixture("broken_event.lua"),
            dir.path().join("plan.db").display()
        ),
    );
    let out = dir.path().join("out");
    let failed = run_quiet(&plan, &out).assert().code(3);
    let err = String::from_utf8_lossy(&failed.get_output().stderr).into_owned();
    assert!(
        err.contains("broken_event.lua:8: attempt to index"),
        "{err}"
    );
    let kept = read_json(&out.join("steps/t/r1-02-charge-c1.json"));
    assert!(kept["events"].as_u64().unwrap() > 0, "{kept}");
    let broken = read_json(&out.join("steps/t/r1-03-broken-c1.json"));
    assert!(
        broken.to_string().contains("broken_event.lua:8"),
        "{broken}"
    );
}

/// Regression (found in review): a DOUBLE parameter went into relbench
/// as a Lua number and was bound as an integer, 1.25 stored as 1.
#[test]
fn a_double_parameter_keeps_its_fraction() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("real.db");
    for (command, out) in [("prepare", "p"), ("run", "r")] {
        relbench()
            .args(["run", "-q", "--sqlite"])
            .arg(&db)
            .arg("--out")
            .arg(dir.path().join(out))
            .args(["--script", &fixture("real.lua"), "--events=5", command])
            .assert()
            .success();
    }
    let conn = rusqlite::Connection::open(&db).unwrap();
    let xs: Vec<f64> = conn
        .prepare("SELECT x FROM reals")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(xs, vec![1.25; 5]);
}

/// Regression (found by reading): a script's command is one event, so
/// Ctrl-C waited for a whole table's prepare; the command now stops
/// within a few thousand instructions.
#[test]
fn ctrl_c_stops_a_scripts_long_prepare() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(bin())
        .args(["run", "-q", "--sqlite"])
        .arg(dir.path().join("big.db"))
        .arg("--out")
        .arg(dir.path().join("out"))
        .args([
            "--script",
            &fixture("charge.lua"),
            "--accounts=100000000",
            "prepare",
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let t0 = std::time::Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed().as_secs() < 20,
            "the prepare went on after Ctrl-C"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(130), "{status:?}");
}

/// Runs script `fixture` as workload `name` on a managed PostgreSQL 15
/// (its prepare, `events` events on 2 clients, its cleanup) with `rows`,
/// and returns the results directory after checking the event step ran
/// them all without an error.
fn script_on_postgres(
    dir: &Path,
    name: &str,
    fixture_name: &str,
    events: u64,
    rows: u32,
) -> PathBuf {
    let plan = format!(
        "steps = [\"{name}.prepare\", \"{name}\", \"{name}.cleanup\"]\nclients = [2]\nseed = 1\n\
         [duration]\nwarmup = \"0s\"\nevents = {events}\n\
         [[workload]]\nname = \"{name}\"\nscript = \"{}\"\noptions = {{ rows = {rows} }}\n\
         [[target]]\nname = \"pg\"\nengine = \"postgres\"\nbasedir = \"/usr/lib/postgresql/15\"\n",
        fixture(fixture_name)
    );
    let plan = write_plan(dir, &plan);
    let out = dir.join("out");
    run_quiet(&plan, &out).assert().success();
    let step = read_json(&out.join(format!("steps/pg/r1-02-{name}-c2.json")));
    assert!(step["failed"].is_null(), "{}", step["failed"]);
    assert_eq!(step["events"].as_u64(), Some(events), "{step}");
    let errors: u64 = step["errors"]
        .as_object()
        .map_or(0, |e| e.values().filter_map(|v| v.as_u64()).sum());
    assert_eq!(errors, 0, "{}", step["errors"]);
    out
}

/// A script's prepared statements on PostgreSQL: each `?` numbered `$n`
/// as sysbench's pgsql driver numbers it, so `UPDATE … set c=? WHERE id IN
/// (?, ?, ?)` and `WHERE id=?` prepare and run on a managed PostgreSQL.
/// Regression (issue 64): they reached the server with their `?` and
/// failed ("syntax error at or near \"=?\"").
#[test]
fn prepared_statements_with_question_marks_run_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    script_on_postgres(dir.path(), "inlist", "pg_in_list.lua", 300, 100);
}

/// Two connections a thread, held at once (sysbench allows it): a
/// script's reads on one and writes on another, each with a statement
/// prepared on it, and a prepare command that loads on a second
/// connection while the first made the table, on a managed PostgreSQL
/// (whose backends are processes: a statement sent to the other one
/// would not find its prepared name). Regression (issue 64): the prepare
/// failed with "relbench gives each thread one connection".
#[test]
fn a_script_holds_two_connections_a_thread_and_each_runs_its_own_statements() {
    let dir = tempfile::tempdir().unwrap();
    let out = script_on_postgres(dir.path(), "two", "two_connections.lua", 200, 50);
    let prepare = read_json(&out.join("steps/pg/r1-01-two.prepare-c1.json"));
    assert!(prepare["failed"].is_null(), "{}", prepare["failed"]);
    let step = read_json(&out.join("steps/pg/r1-02-two-c2.json"));
    // The statements of both connections are timed and counted: an
    // update on one, two selects on the other, every event.
    let count = |class: &str| step["statements"][class].as_u64().unwrap_or(0);
    assert_eq!(count("update"), 200, "{}", step["statements"]);
    assert_eq!(count("select"), 400, "{}", step["statements"]);
}

/// A script holding more connections at once than its text calls
/// `connect(` (a connect in a loop) is told so by name, and what to do.
#[test]
fn a_script_that_connects_in_a_loop_is_told_how_many_connections_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let ran = relbench()
        .args(["run", "-q", "--sqlite"])
        .arg(&db)
        .arg("--out")
        .arg(dir.path().join("out"))
        .args([
            "--script",
            &fixture("connect_loop.lua"),
            "--threads=1",
            "--events=5",
        ])
        .assert()
        .failure();
    let said = String::from_utf8_lossy(&ran.get_output().stderr).to_string();
    assert!(
        said.contains("already holds its 1 connection(s)") && said.contains("connections = N"),
        "{said}"
    );
    // As it says: the workload given three runs.
    let plan = format!(
        "steps = [\"loop\"]\nclients = [1]\n[duration]\nwarmup = \"0s\"\nevents = 5\n\
         [[workload]]\nname = \"loop\"\nscript = \"{}\"\nconnections = 3\n\
         [[target]]\nname = \"lite\"\nengine = \"sqlite\"\npath = \"{}\"\n",
        fixture("connect_loop.lua"),
        dir.path().join("d.db").display()
    );
    let plan = write_plan(dir.path(), &plan);
    run_quiet(&plan, dir.path().join("out3")).assert().success();
    let step = read_json(&dir.path().join("out3/steps/lite/r1-01-loop-c1.json"));
    assert!(step["failed"].is_null(), "{}", step["failed"]);
    assert_eq!(step["events"].as_u64(), Some(5), "{step}");
}

/// Report hooks as sysbench-tpcc defines them are taken, not refused:
/// relbench never calls them (it reports its own figures), and the report
/// functions they call work when the script calls them. Regression (issue
/// 64): `tpcc.lua:56: sysbench.hooks.report_intermediate is not supported`.
#[test]
fn report_hooks_are_taken_and_the_report_functions_are_callable() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let ran = relbench()
        .args(["run", "-q", "--sqlite"])
        .arg(&db)
        .arg("--out")
        .arg(dir.path().join("out"))
        .args([
            "--script",
            &fixture("report_hooks.lua"),
            "--threads=1",
            "--events=20",
        ])
        .assert()
        .success();
    let said = String::from_utf8_lossy(&ran.get_output().stderr).to_string();
    assert!(
        said.contains(
            "[ 1s ] thds: 1 tps: 10.00 qps: 10.00 (r/w/o: 5.00/3.00/2.00) lat (ms): 2.00"
        ),
        "{said}"
    );
}

/// LuaJIT's `ffi` as sysbench-tpcc reaches it: `ffi.cdef` of sysbench's C
/// API, `ffi.C.sb_counter_inc(…, SB_CNT_ERROR)` counted as an ignored
/// error of the event (its sample says so), `ffi.C.usleep`; anything else
/// through `ffi.C` is refused by name. Regression (issue 64):
/// `tpcc_common.lua:21: module 'ffi' not found`.
#[test]
fn a_scripts_ffi_counts_its_errors_sleeps_and_reaches_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &str, reach: &str| {
        relbench()
            .args(["run", "-q", "--sqlite"])
            .arg(dir.path().join(format!("{out}.db")))
            .arg("--out")
            .arg(dir.path().join(out))
            .args([
                "--script",
                &fixture("ffi_counts.lua"),
                "--threads=1",
                "--events=400",
            ])
            .arg(format!("--reach={reach}"))
            .assert()
    };
    run("ok", "no").success();
    let step = read_json(&dir.path().join("ok/steps/target/r1-01-ffi_counts-c1.json"));
    assert!(step["failed"].is_null(), "{}", step["failed"]);
    assert_eq!(step["events"].as_u64(), Some(400), "{step}");
    let counted: u64 = step["errors"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|v| v.as_u64())
        .sum();
    // One event in four, give or take the draw.
    assert!((40..=160).contains(&counted), "{}", step["errors"]);
    assert!(
        step["error_samples"]
            .to_string()
            .contains("ffi.C.sb_counter_inc"),
        "{}",
        step["error_samples"]
    );
    // A C call past sysbench's: the step fails with the script's line.
    run("reach", "yes").code(3);
    let step = read_json(
        &dir.path()
            .join("reach/steps/target/r1-01-ffi_counts-c1.json"),
    );
    let why = step["failed"].as_str().unwrap_or_default();
    assert!(
        why.contains(
            "ffi.C.system: relbench's ffi offers sysbench's sb_counter_inc and usleep only"
        ),
        "{why}"
    );
}
