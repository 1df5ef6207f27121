//! Campaigns: phases on the same data, restarts of a managed server under
//! other settings, timed maintenance steps, hooks, long steps measured in
//! intervals, and the database's allocated and apparent size. SQLite for
//! what needs no server; Debian's MariaDB and PostgreSQL (`./test`
//! installs them) for restarts.

mod common;

use std::path::Path;

use common::*;
use predicates::str::contains;

const TIMES: &str = r#"
[duration]
warmup = "100ms"
read = "900ms"
write = "600ms"
interval = "300ms"

[settle]
base = "0s"
per_million_rows = "0s"
max = "1s"
"#;

fn result_of(out: &Path, target: &str, label: &str) -> serde_json::Value {
    let f = step_files(out)
        .into_iter()
        .find(|f| f.starts_with(&format!("{target}/")) && f.contains(&format!("-{label}-c")))
        .unwrap_or_else(|| panic!("no result of {target} {label} in {:?}", step_files(out)));
    read_json(&out.join("steps").join(f))
}

fn read_hook(out: &Path, part: &str) -> String {
    let dir = out.join("hooks");
    let f = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(part))
        .unwrap_or_else(|| panic!("no hook output with {part} in {}", dir.display()));
    std::fs::read_to_string(f).unwrap()
}

#[test]
fn phases_intervals_maintenance_and_hooks_run_in_order_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        r#"clients = [1, 2]
[scale]
tables = 2
rows = 5000
random_pct = 20
{TIMES}
[[phase]]
name = "load"
steps = ["load", "analyze"]

[[phase]]
name = "query"
steps = ["point-query", "update-index", "drop-index", "point-query:noindex", "create-index", "optimize"]

[[phase]]
name = "end"
steps = ["truncate", "drop-table"]

[[hook]]
when = "before"
phase = "query"
sql = "SELECT count(*) FROM sbtest1"

[[hook]]
when = "after"
step = "optimize"
shell = "echo step=$RELBENCH_STEP phase=$RELBENCH_PHASE target=$RELBENCH_TARGET"

[[target]]
name = "a"
engine = "sqlite"
"#
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();

    // Intervals: 900 ms in 300 ms windows, at each client count, back to
    // back: @1 @2 @3 at one client, then at two.
    let files = step_files(&out);
    let order: Vec<&str> = files
        .iter()
        .filter(|f| f.contains("-point-query@"))
        .map(|f| f.split_once('/').unwrap().1)
        .collect();
    assert_eq!(order.len(), 6, "{files:?}");
    for f in step_files(&out) {
        let r = read_json(&out.join("steps").join(&f));
        assert!(r["failed"].is_null(), "{f}: {}", r["failed"]);
        assert!(r["phase"].is_string(), "{f} has no phase");
    }
    let first = result_of(&out, "a", "point-query@1");
    assert_eq!(first["interval"]["of"], 3);
    assert_eq!(first["phase"], "query");
    assert!(first["warmup_secs"].as_f64().unwrap() > 0.0);
    let second = result_of(&out, "a", "point-query@2");
    assert_eq!(
        second["warmup_secs"], 0.0,
        "only the first interval warms up"
    );
    assert!((second["secs"].as_f64().unwrap() - 0.3).abs() < 0.1);

    // Maintenance steps: timed, one statement per table, sizes before and
    // after (allocated and apparent).
    let drop = result_of(&out, "a", "drop-index");
    assert_eq!(drop["events"], 2);
    assert!(drop["notes"]["statement.001"]
        .as_str()
        .unwrap()
        .starts_with("DROP INDEX k_1:"));
    let size = &drop["metrics"]["db_size_after"];
    assert!(size["allocated"].as_u64().unwrap() > 0, "{size}");
    assert!(size["apparent"].as_u64().unwrap() > 0, "{size}");
    assert_eq!(result_of(&out, "a", "drop-table")["phase"], "end");

    // Hooks: the phase's once, before its first step at its first client
    // count; the step's after it; output kept and named in the notes.
    let pq = result_of(&out, "a", "point-query@1");
    assert!(pq["notes"]["hook.before.1"]
        .as_str()
        .unwrap()
        .contains("sql `SELECT count(*) FROM sbtest1`"));
    assert_eq!(read_hook(&out, "point-query@1-c1.before").trim(), "5000");
    assert!(!out.join("hooks").read_dir().unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains("point-query@1-c2")));
    assert_eq!(
        read_hook(&out, "optimize-c1.after").trim(),
        "step=optimize phase=query target=a"
    );

    // The generated strings compress: 20% random leaves zeros.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Campaign: the sequence in run order"));
    assert!(
        report.contains("| query | point-query @1/3 | 1 |"),
        "{report}"
    );
    assert!(report.contains("### Database size after each step"));
    let csv = std::fs::read_to_string(out.join("report.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("db_allocated_after"));
}

#[test]
fn generated_strings_compress_as_the_plan_says() {
    // Through the data the load writes: the share of '0' in column c.
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "steps = [\"load\"]\n[scale]\nrows = 2000\nrandom_pct = 20\n{TIMES}\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\npath = \"a.db\"\n"
    );
    let plan = write_plan(dir.path(), &text);
    run_quiet(&plan, dir.path().join("out")).assert().success();
    let db = rusqlite::Connection::open(dir.path().join("a.db")).unwrap();
    let c: String = db
        .query_row("SELECT c FROM sbtest1 WHERE id = 7", [], |r| r.get(0))
        .unwrap();
    let zeros = c.chars().filter(|&ch| ch == '0').count();
    // 3 of 11 digits random per group, 10 groups: at least 80 zeros.
    assert!(zeros >= 80, "{c}");
}

#[test]
fn a_failing_hook_fails_its_step_and_a_hanging_one_is_stopped_at_its_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        r#"steps = ["load", "point-query", "update-index"]
[scale]
rows = 2000
{TIMES}
[[hook]]
when = "before"
step = "point-query"
shell = "echo no such thing >&2; exit 3"

[[hook]]
when = "before"
step = "update-index"
shell = "sleep 30"
timeout = "1s"

[[target]]
name = "a"
engine = "sqlite"
"#
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    let t0 = std::time::Instant::now();
    run_quiet(&plan, &out).assert().code(3);
    assert!(
        t0.elapsed().as_secs() < 25,
        "the hanging hook was waited for"
    );
    let pq = result_of(&out, "a", "point-query@1");
    let why = pq["failed"].as_str().unwrap();
    assert!(why.contains("exited with exit status: 3"), "{why}");
    assert!(why.contains("hooks/"), "{why}");
    assert_eq!(
        read_hook(&out, "point-query@1-c1.before").trim(),
        "no such thing"
    );
    let ui = result_of(&out, "a", "update-index@1");
    assert!(ui["failed"]
        .as_str()
        .unwrap()
        .contains("ran past its timeout of 1 s and was killed"));
    // Every interval of the step has the hook, and fails with it; the
    // step without a hook ran.
    assert!(result_of(&out, "a", "point-query@2")["failed"].is_string());
    assert!(result_of(&out, "a", "load")["failed"].is_null());
}

#[test]
fn plans_that_cannot_run_as_phases_are_refused_with_where_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = "\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n";
    check_refuses(
        dir.path(),
        &format!("[[phase]]\nname = \"p\"\nsteps = [\"load\"]\n[[phase]]\nname = \"q\"\nserver_args = [\"--log-bin\"]\nsteps = [\"point-query\"]\n{sqlite}"),
        "1:1",
        "target \"a\" cannot do that: an embedded engine has no server to restart",
    );
    check_refuses(
        dir.path(),
        "[[phase]]\nname = \"p\"\nsteps = [\"load\"]\n[[phase]]\nname = \"q\"\nrestart = true\nsteps = [\"point-query\"]\n[[target]]\nname = \"u\"\nengine = \"mariadb\"\nurl = \"mysql://sb@127.0.0.1/sbtest\"\n",
        "1:1",
        "it is reached by URL, and relbench restarts only a server it started",
    );
    check_refuses(
        dir.path(),
        &format!("steps = [\"load\", \"drop-table\", \"point-query\"]\n{sqlite}"),
        "1:32",
        "\"point-query\" comes after \"drop-table\", which leaves no rows to run on",
    );
    check_refuses(
        dir.path(),
        &format!("steps = [\"load\", \"point-query\"]\n[[hook]]\nwhen = \"before\"\nstep = \"point-qeury\"\nsql = \"SELECT 1\"\n{sqlite}"),
        "4:8",
        "the hook's step \"point-qeury\" is not in the sequence",
    );
    check_refuses(
        dir.path(),
        &format!("steps = [\"load\"]\n[[hook]]\nwhen = \"during\"\nsql = \"SELECT 1\"\n{sqlite}"),
        "3:8",
        "unknown hook time \"during\"",
    );
    check_refuses(
        dir.path(),
        &format!("steps = [\"load\"]\n[[hook]]\nwhen = \"after\"\nsql = \"SELECT 1\"\nshell = \"true\"\n{sqlite}"),
        "2:1",
        "a hook runs one `sql` statement or one `shell` command",
    );
    check_refuses(
        dir.path(),
        &format!("steps = [\"load\"]\n[scale]\nrandom_pct = 101\n{sqlite}"),
        "3:14",
        "random_pct must be between 0 and 100, not 101",
    );
    check_refuses(
        dir.path(),
        &format!("steps = [\"load\"]\n[[phase]]\nname = \"p\"\nsteps = [\"load\"]\n{sqlite}"),
        "1:9",
        "give the steps in each [[phase]], not in `suite` or `steps` as well",
    );
}

const SERVER_TIMES: &str = r#"
clients = [2]
[scale]
tables = 2
rows = 20000
random_pct = 50

[duration]
warmup = "100ms"
read = "600ms"
write = "600ms"
interval = "300ms"

[settle]
base = "0s"
per_million_rows = "0s"
max = "5s"
"#;

/// An SQL hook the server does not answer within its timeout says so
/// (regression: the timeout was told apart by the error's text, "timed
/// out" or "would block", which another platform's wording would miss;
/// now by the connection's own timed-out read), and the step it comes
/// before fails with it.
#[test]
fn an_sql_hook_past_its_timeout_says_no_answer_within_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        r#"steps = ["load", "point-query"]
{SERVER_TIMES}
[[hook]]
when = "before"
step = "point-query"
sql = "SELECT SLEEP(5)"
timeout = "500ms"

[[target]]
name = "m"
engine = "mariadb"
basedir = "/usr"
"#
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().code(3);
    // The hook comes before the step's first interval.
    let pq = result_of(&out, "m", "point-query@1");
    let failed = pq["failed"].as_str().unwrap_or_default();
    assert!(failed.contains("no answer within 0.5 s"), "{failed}");
}

/// The binary log goes on at the restart; `--resume` after an interruption
/// in that phase starts the server with it on again; DROP TABLE is timed;
/// the page-compressed target's allocated size is below its apparent one.
#[test]
fn mariadb_restarts_between_phases_with_the_phases_settings_even_on_resume() {
    let dir = shared_tempdir();
    let text = format!(
        r#"{SERVER_TIMES}
[[phase]]
name = "nolog"
steps = ["load", "point-query"]

[[phase]]
name = "binlog"
server_args = ["--log-bin=binlog", "--server-id=1"]
steps = ["update-index", "point-query:after"]

[[phase]]
name = "drop"
steps = ["drop-table", "drop-database"]

[[hook]]
when = "after"
step = "drop-database"
sql = "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'sbtest'"

[[hook]]
when = "before"
step = "update-index"
shell = "[ -e $RELBENCH_OUT/interrupted ] || {{ touch $RELBENCH_OUT/interrupted; kill -INT $PPID; }}"

[[hook]]
when = "after"
step = "point-query"
sql = "SELECT @@log_bin"

[[target]]
name = "page"
engine = "mariadb"
basedir = "/usr"
table_options = "PAGE_COMPRESSED=1"
args = ["--innodb-compression-algorithm=zlib"]
"#
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    // The hook interrupts the run as the binlog phase begins (after the
    // restart), as a Ctrl-C would.
    run_quiet(&plan, &out).assert().code(130);
    let restart = result_of(&out, "page", "restart.binlog");
    assert!(restart["failed"].is_null(), "{}", restart["failed"]);
    assert!(restart["notes"]["shutdown_secs"].as_str().is_some());
    assert!(restart["notes"]["start_secs"].as_str().is_some());
    assert_eq!(
        restart["server_settings"],
        "server args --log-bin=binlog --server-id=1"
    );
    assert_eq!(read_hook(&out, "point-query@2-c2.after").trim(), "0");
    assert!(!step_files(&out).iter().any(|f| f.contains("update-index")));

    relbench()
        .args(["run", "-q", "--resume", "--out"])
        .arg(&out)
        .assert()
        .success();
    // The phase's settings on resume: the binary log is on.
    assert_eq!(read_hook(&out, "point-query.after@2-c2.after").trim(), "1");
    let ui = result_of(&out, "page", "update-index@1");
    assert_eq!(ui["phase"], "binlog");
    assert!(ui["failed"].is_null(), "{}", ui["failed"]);
    let drop = result_of(&out, "page", "drop-table");
    assert!(drop["failed"].is_null(), "{}", drop["failed"]);
    assert!(drop["secs"].as_f64().unwrap() > 0.0);
    assert!(result_of(&out, "page", "drop-database")["failed"].is_null());
    assert_eq!(read_hook(&out, "drop-database-c1.after").trim(), "0");
    // Page compression punches holes: fewer blocks than bytes.
    let load = result_of(&out, "page", "load");
    let size = &load["metrics"]["db_size_after"];
    let (alloc, apparent) = (
        size["allocated"].as_u64().unwrap(),
        size["apparent"].as_u64().unwrap(),
    );
    assert!(alloc < apparent, "{size}");
    // The binary log counts among the logs after the binlog phase.
    let after = &result_of(&out, "page", "point-query.after@2")["metrics"]["db_size_after"];
    assert!(
        after["logs_apparent"].as_u64().unwrap() > size["logs_apparent"].as_u64().unwrap(),
        "{after} vs {size}"
    );
}

#[test]
fn a_restart_that_fails_marks_its_phase_failed_and_the_run_goes_on() {
    let dir = shared_tempdir();
    let text = format!(
        r#"{SERVER_TIMES}
[[phase]]
name = "first"
steps = ["load", "point-query"]

[[phase]]
name = "broken"
server_args = ["--no-such-option-anywhere"]
steps = ["update-index"]

[[target]]
name = "ma"
engine = "mariadb"
basedir = "/usr"

[[target]]
name = "pg"
engine = "postgres"
basedir = "/usr/lib/postgresql/15"
"#
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out)
        .assert()
        .code(3)
        .stderr(contains("the server did not come back"));
    for t in ["ma", "pg"] {
        // What ran before the restart is kept.
        assert!(result_of(&out, t, "point-query@2")["failed"].is_null());
        let r = result_of(&out, t, "restart.broken");
        let why = r["failed"].as_str().unwrap();
        assert!(why.contains("the server did not come back"), "{why}");
        assert!(why.contains("no-such-option-anywhere"), "{t}: {why}");
        let ui = result_of(&out, t, "update-index@1");
        assert!(ui["failed"]
            .as_str()
            .unwrap()
            .starts_with("not run: the server did not come back after the restart"));
    }
}

/// PostgreSQL through the same phases: a restart under another setting
/// (read back by a hook), VACUUM FULL timed, the database dropped.
#[test]
fn postgres_restarts_between_phases_and_drops_its_database() {
    let dir = shared_tempdir();
    let text = format!(
        r#"{SERVER_TIMES}
[[phase]]
name = "small"
steps = ["load", "point-query"]

[[phase]]
name = "big"
server_args = ["-c", "work_mem=77MB"]
steps = ["update-index", "optimize"]

[[phase]]
name = "end"
steps = ["drop-database"]

[[hook]]
when = "before"
phase = "big"
sql = "SHOW work_mem"

[[target]]
name = "pg"
engine = "postgres"
basedir = "/usr/lib/postgresql/15"
"#
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    assert_eq!(read_hook(&out, "update-index@1-c2.before").trim(), "77MB");
    let r = result_of(&out, "pg", "restart.big");
    assert!(r["notes"]["start_secs"].as_str().is_some());
    let opt = result_of(&out, "pg", "optimize");
    assert!(opt["notes"]["statement.001"]
        .as_str()
        .unwrap()
        .starts_with("VACUUM FULL sbtest1:"));
    // WAL is a log.
    let size = &opt["metrics"]["db_size_after"];
    assert!(size["logs_allocated"].as_u64().unwrap() > 0, "{size}");
    assert!(result_of(&out, "pg", "drop-database")["failed"].is_null());
}
