//! Helpers shared by the integration tests, which run the real binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub const TINY: &str = include_str!("../fixtures/tiny.toml");

pub fn relbench() -> assert_cmd::Command {
    share_machine();
    assert_cmd::Command::cargo_bin("relbench").expect("the binary is built")
}

/// `relbench run -q PLAN --out OUT`, ready for more arguments or `.assert()`.
pub fn run_quiet(plan: &Path, out: impl AsRef<std::ffi::OsStr>) -> assert_cmd::Command {
    let mut c = relbench();
    c.args(["run", "-q"]).arg(plan).arg("--out").arg(out);
    c
}

/// `relbench run -q PLAN --out OUT` started in the background, stdout
/// dropped and stderr kept for the test to read.
pub fn spawn_run(plan: &Path, out: &Path) -> std::process::Child {
    spawned(
        std::process::Command::new(bin())
            .args(["run", "-q"])
            .arg(plan),
        out,
    )
}

/// `relbench run -q --resume --out OUT` started in the background.
pub fn spawn_resume(out: &Path) -> std::process::Child {
    spawned(
        std::process::Command::new(bin()).args(["run", "-q", "--resume"]),
        out,
    )
}

fn spawned(c: &mut std::process::Command, out: &Path) -> std::process::Child {
    c.arg("--out")
        .arg(out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// `relbench check` of `text` refuses it with exit code 2, naming the
/// plan's `position` (`line:column`) and saying `message`.
pub fn check_refuses(dir: &Path, text: &str, position: &str, message: &str) {
    let plan = write_plan(dir, text);
    relbench()
        .arg("check")
        .arg(&plan)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!("plan.toml:{position}")))
        .stderr(predicates::str::contains(message));
}

pub fn bin() -> PathBuf {
    share_machine();
    assert_cmd::cargo::cargo_bin("relbench")
}

/// Writes `text` as `plan.toml` in `dir` and returns its path.
///
/// A test that shares the machine (it does not hold it [`alone`]) gets
/// `[interference] retries = 0` when its plan sets no retries: beside
/// other tests nearly every window is disturbed, and measuring it again
/// (twice, two seconds apart, by default) only measures the other tests
/// again: the tiny plan at 1 s windows took 27 s on a quiet machine,
/// 153 s beside one busy core with the default retries and 27 s with
/// none. Nothing such a test asserts reads a retry; the tests of the
/// retries hold the machine alone.
pub fn write_plan(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("plan.toml");
    let alone = HOLD.with(|h| matches!(*h.borrow(), Hold::Alone));
    if alone || text.contains("[interference]") {
        std::fs::write(&p, text).unwrap();
    } else {
        std::fs::write(&p, format!("{text}\n[interference]\nretries = 0\n")).unwrap();
    }
    p
}

/// The step result files of a results directory, as `target/file` names.
pub fn step_files(out: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let steps = out.join("steps");
    let Ok(targets) = std::fs::read_dir(&steps) else {
        return files;
    };
    for t in targets {
        let t = t.unwrap().path();
        for f in std::fs::read_dir(&t).unwrap() {
            let f = f.unwrap().path();
            files.push(format!(
                "{}/{}",
                t.file_name().unwrap().to_string_lossy(),
                f.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    files.sort();
    files
}

/// The target names of a report.json (one comparison), in its order.
pub fn report_targets(report: &serde_json::Value) -> Vec<String> {
    report["targets"]
        .as_array()
        .expect("report.json lists its targets")
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// A report.json's row of a workload (its first occurrence and client
/// count).
pub fn report_row(report: &serde_json::Value, workload: &str) -> serde_json::Value {
    report["rows"]
        .as_array()
        .expect("a report has rows")
        .iter()
        .find(|r| r["step"]["kind"]["workload"] == workload)
        .unwrap_or_else(|| panic!("no row of {workload} in the report"))
        .clone()
}

/// The leading cause the summary gives a changed step of a target
/// (report.json's `summary[].regressions|improvements|untested_changes[].cause.ranked[0]`):
/// its kind and what it names, or why there is none.
pub fn lead_cause(report: &serde_json::Value, target: &str, step: &str) -> (String, String) {
    let s = report["summary"]
        .as_array()
        .expect("report.json has a summary")
        .iter()
        .find(|s| s["target"] == target)
        .unwrap_or_else(|| panic!("no summary of {target}"));
    let change = ["regressions", "improvements", "untested_changes"]
        .iter()
        .flat_map(|k| s[*k].as_array().cloned().unwrap_or_default())
        .find(|c| c["step"] == step)
        .unwrap_or_else(|| panic!("{step} of {target} is no change: {}", s));
    let lead = &change["cause"]["ranked"][0];
    (
        lead["kind"].as_str().unwrap_or_default().to_string(),
        lead["names"].as_str().unwrap_or_default().to_string(),
    )
}

/// A JSON array of strings, as strings.
pub fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|t| t.as_str().expect("a string").to_string())
        .collect()
}

/// Every file under `dir`, at any depth.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

pub fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A temporary directory the servers' OS users (`postgres`, `mysql`) can
/// reach: a server relbench starts as root runs as that user, and
/// temporary directories are root's alone.
pub fn shared_tempdir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// Whether a process runs (an exited one not yet reaped does not).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

/// The pid of the managed server a run into `out` started for `target`.
pub fn server_pid(out: &Path, target: &str) -> Option<u32> {
    std::fs::read_to_string(out.join(format!("data/{target}.server.pid")))
        .ok()?
        .trim()
        .parse()
        .ok()
}

pub fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let t0 = std::time::Instant::now();
    while !f() {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(secs),
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A server "someone else runs", started here through the library: the
/// datadir `dir/name`, its log in `dir`, as the OS user `user` (the servers
/// refuse root). Stopped when dropped.
pub fn server_elsewhere(
    dir: &Path,
    name: &str,
    basedir: impl Into<PathBuf>,
    user: &str,
    flavor: Box<dyn relbench::db::server::Flavor>,
) -> relbench::db::server::ManagedServer {
    share_machine();
    let spec = relbench::db::server::ServerSpec {
        target: name.into(),
        basedir: basedir.into(),
        config: None,
        datadir: dir.join(name),
        datadir_note: None,
        log_dir: dir.to_path_buf(),
        port: None,
        user: Some(user.into()),
        args: vec![],
        malloc: None,
        plugins: vec![],
        start_timeout: std::time::Duration::from_secs(120),
    };
    relbench::db::server::ManagedServer::start(spec, flavor).unwrap()
}

/// Marks a step result's window as shared with another program (48% of
/// the machine over a 2 s window), as the sampler would have: the report
/// then calls it disturbed and `run --confirm` repeats it.
#[allow(dead_code)]
pub fn mark_disturbed(step_file: &Path) {
    let mut r = read_json(step_file);
    r["metrics"]["interference"]["others_share_pct"] = 48.0.into();
    r["metrics"]["interference"]["window_secs"] = 2.0.into();
    std::fs::write(step_file, serde_json::to_vec_pretty(&r).unwrap()).unwrap();
}

/// Clears every reading by which a step result's window would be judged
/// shared with something else (another program, steal, IO not its own,
/// relbench waking late, a throttled cgroup) or left unjudged, as if the
/// machine had been quiet. Regression (fresh-clone CI): a test that cleared only the other
/// programs' share still had a window judged disturbed on a busy host.
#[allow(dead_code)]
pub fn as_if_quiet(r: &mut serde_json::Value) {
    let i = &mut r["metrics"]["interference"];
    if i.is_object() {
        for k in [
            "others_share_pct",
            "steal_pct",
            "others_io_mb",
            "kernel_io_mb",
            "relbench_late_secs",
            "overrun_secs",
            "throttled_secs",
        ] {
            i[k] = 0.0.into();
        }
        i["disturbed"] = serde_json::Value::Null;
        // A window whose sampler kept too few readings to judge it is
        // left out as unjudged: as if it had kept them.
        i["not_judged"] = serde_json::Value::Null;
    }
}

/// A MariaDB user `bench` with `secret`, allowed everything from
/// anywhere, and the `sbtest` database: what a URL target of a server
/// someone else runs logs in as.
#[allow(dead_code)]
pub fn bench_user(server: &relbench::db::server::ManagedServer, secret: &str) {
    use relbench::db::mysql::wire::WireConn;
    use relbench::db::server::mariadb::MariaDb;
    let mut root = WireConn::connect(&MariaDb::admin(&server.rt)).unwrap();
    root.execute_text(&format!(
        "CREATE USER 'bench'@'%' IDENTIFIED BY '{secret}'; GRANT ALL ON *.* TO 'bench'@'%'; CREATE DATABASE IF NOT EXISTS sbtest"
    ))
    .unwrap();
}

/// A directory `dir/logs` the OS user `user` (a server's) may write its
/// logs into.
#[allow(dead_code)]
pub fn log_dir(dir: &Path, user: &str) -> PathBuf {
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let (uid, gid) = relbench::db::server::lookup_user(user).unwrap();
    std::os::unix::fs::chown(&logs, Some(uid), Some(gid)).unwrap();
    logs
}

/// Runs `f` with a MariaDB's general log written to `path` (in a
/// [`log_dir`]), and returns the log's records ([`log_lines`]).
#[allow(dead_code)]
pub fn general_log(
    server: &relbench::db::server::ManagedServer,
    path: &Path,
    f: impl FnOnce(),
) -> Vec<(u32, String, String)> {
    use relbench::db::mysql::wire::WireConn;
    use relbench::db::server::mariadb::MariaDb;
    let mut root = WireConn::connect(&MariaDb::admin(&server.rt)).unwrap();
    root.execute_text(&format!(
        "SET GLOBAL general_log_file = '{}'; SET GLOBAL general_log = 1",
        path.display()
    ))
    .unwrap();
    f();
    root.execute_text("SET GLOBAL general_log = 0").unwrap();
    log_lines(&std::fs::read_to_string(path).unwrap())
}

/// Debian's PostgreSQL 15 "someone else runs", started through the
/// library as the OS user `postgres` in `dir`, and the URL of its
/// `sbtest` database for the user `relbench` (password: `server.rt.password`).
pub fn postgres_elsewhere(dir: &Path) -> (relbench::db::server::ManagedServer, String) {
    use relbench::db::server::postgres::Postgres;
    let server = server_elsewhere(
        dir,
        "pg",
        "/usr/lib/postgresql/15",
        "postgres",
        Box::new(Postgres),
    );
    let url = format!("postgres://relbench@127.0.0.1:{}/sbtest", server.rt.port);
    (server, url)
}

/// Runs a shell command as `nobody` (another local user); whether it
/// succeeded.
pub fn as_nobody(script: &str) -> bool {
    std::process::Command::new("runuser")
        .args(["-u", "nobody", "--", "sh", "-c", script])
        .status()
        .unwrap()
        .success()
}

/// The machine, as every test shares it. `./test` runs the test binaries
/// side by side; a test that measures (a verdict, a rate, a disturbance,
/// a CPU share) must have the machine to itself, or its windows are
/// disturbed and measured again, or say what another test did. Such a test
/// holds the machine [`alone`]; every other test that runs relbench, a
/// server or another heavy program holds it *shared* — the helpers here
/// ([`relbench`], [`bin`], [`server_elsewhere`]) take it on the test's
/// first call, kept until the test's thread ends. One lock for every
/// binary: `flock(2)` on a file in this build's target directory, which
/// the kernel releases when a test process dies. (Before it, a mutex per
/// test binary: hardening.rs took 121 s two runs at a time and 52 s one at
/// a time, and nothing kept another binary's tests away.)
///
/// A second file is the turnstile that gives a test waiting to be alone
/// its turn: without it a stream of shared holders, two binaries of them,
/// could keep it waiting until they ran out.
fn machine_file(name: &str) -> std::fs::File {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("the tests' machine lock {}: {e}", path.display()))
}

/// flock(2), waiting; released when the file is closed. (std's
/// `File::lock` is newer than the crate's rust-version.)
fn flock(f: &std::fs::File, op: libc::c_int) {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: the descriptor is open for the borrow's length.
        if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
            return;
        }
        let e = std::io::Error::last_os_error();
        assert!(
            e.kind() == std::io::ErrorKind::Interrupted,
            "the tests' machine lock: {e}"
        );
    }
}

enum Hold {
    Free,
    Shared(#[allow(dead_code)] std::fs::File),
    Alone,
}

thread_local! {
    static HOLD: std::cell::RefCell<Hold> = const { std::cell::RefCell::new(Hold::Free) };
}

/// Holds the machine beside other tests that do not measure, until this
/// test's thread ends (a no-op when the test already holds it).
pub fn share_machine() {
    HOLD.with(|h| {
        let mut h = h.borrow_mut();
        if matches!(*h, Hold::Free) {
            let turn = machine_file("machine.turnstile");
            flock(&turn, libc::LOCK_EX);
            let f = machine_file("machine.lock");
            flock(&f, libc::LOCK_SH);
            drop(turn);
            *h = Hold::Shared(f);
        }
    });
}

/// The machine held by one test alone, released when dropped.
pub struct Alone(#[allow(dead_code)] std::fs::File, std::time::Instant);

impl Drop for Alone {
    fn drop(&mut self) {
        HOLD.with(|h| *h.borrow_mut() = Hold::Free);
        // How long each test kept every other one waiting: `./test` sums
        // them (the part of its time no second lane can shorten).
        use std::io::Write;
        let line = format!(
            "{:.1} {}\n",
            self.1.elapsed().as_secs_f64(),
            std::thread::current().name().unwrap_or("?")
        );
        let _ = machine_file("machine.alone").write_all(line.as_bytes());
    }
}

/// Waits until no other test, in any binary, runs relbench or a server,
/// and keeps them waiting until the guard is dropped: for tests that
/// measure.
pub fn alone() -> Alone {
    // This thread's own shared hold would keep it waiting for ever.
    HOLD.with(|h| *h.borrow_mut() = Hold::Free);
    let turn = machine_file("machine.turnstile");
    flock(&turn, libc::LOCK_EX);
    let f = machine_file("machine.lock");
    flock(&f, libc::LOCK_EX);
    drop(turn);
    // The disk too: what the tests before wrote is still being written
    // back, and would be the window's disturbance. Regression: with three
    // binaries side by side, a confirmation under CPU burners blamed "the
    // kernel wrote back 333 MB no process in the window caused".
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
    HOLD.with(|h| *h.borrow_mut() = Hold::Alone);
    Alone(f, std::time::Instant::now())
}

/// Runs `plan` into `dir/out` and returns where and its report.json; a
/// run whose summary says a step was disturbed (a program outside the
/// test used the machine through the window and its retries) is made
/// again, up to three times in all: a disturbed comparison is rightly
/// not explained (nor judged), and the explanation (or the judgement) is
/// what the tests that call this test. Alone does not mean quiet: the
/// VM's neighbours take CPU the test cannot see.
/// Regression: a_commit_that_waits_for_its_wal_is_named_by_the_wal_wait
/// failed in CI with a window disturbed by the `relbench host` tests
/// running beside it; a_window_whose_throughput_keeps_rising_is_not_steady_and_not_judged
/// found "disturbed" (other containers took 40% of the machine) where
/// it looked for "unsteady".
pub fn run_until_undisturbed(
    plan: &std::path::Path,
    dir: &std::path::Path,
) -> (std::path::PathBuf, serde_json::Value) {
    let mut said = serde_json::Value::Null;
    for attempt in 1..=3 {
        let out = dir.join(format!("out{attempt}"));
        run_quiet(plan, &out).assert().success();
        let report = read_json(&out.join("report.json"));
        let summary = serde_json::to_string(&report["summary_lines"]).unwrap();
        if !summary.contains("disturbed:") {
            return (out, report);
        }
        eprintln!("attempt {attempt} disturbed: {summary}");
        said = report["summary_lines"].clone();
    }
    panic!("disturbed in three runs, what the test looks for untested (is something else using this machine?): {said}")
}

/// A statement's shape: string and number literals as `?`, lowercase,
/// without whitespace, backquotes or a `linkdb.` prefix; an IN list of any
/// length as `in(?…)`, its length returned beside.
#[allow(dead_code)]
pub fn shape(sql: &str) -> (String, Option<usize>) {
    let b = sql.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\'' {
            i += 1;
            while i < b.len() {
                match b[i] {
                    b'\\' => i += 2,
                    b'\'' if b.get(i + 1) == Some(&b'\'') => i += 2,
                    b'\'' => break,
                    _ => i += 1,
                }
            }
            i += 1;
            out.push('?');
        } else if c.is_ascii_digit()
            && !(i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            out.push('?');
        } else {
            if !c.is_ascii_whitespace() && c != b'`' {
                out.push(c.to_ascii_lowercase() as char);
            }
            i += 1;
        }
    }
    let mut out = out.replace("linkdb.", "");
    // Rows of a VALUES list, one or many, as one row and `…`.
    if let Some(v) = out.find("values(") {
        let start = v + "values".len();
        if let Some(close) = out[start..].find(')') {
            let row = out[start..start + close + 1].to_string();
            let next = format!(",{row}");
            let mut rest = &out[start + row.len()..];
            while let Some(r) = rest.strip_prefix(&next) {
                rest = r;
            }
            out = format!("{}{row}…{rest}", &out[..start]);
        }
    }
    match out.find("in(?") {
        Some(at) if out.ends_with(')') && out[at..].chars().all(|c| "in(?,)".contains(c)) => {
            let n = out[at..].matches('?').count();
            (format!("{}in(?…)", &out[..at]), Some(n))
        }
        _ => (out, None),
    }
}

/// The records of MariaDB's general log: connection id, command, text. A
/// record starts `[time]\t[\t]    17 Execute\tSQL` (the field of id and
/// command is the first that reads as one); a line that does not is the
/// text of a statement that spans lines, joined to the record before.
#[allow(dead_code)]
pub fn log_lines(text: &str) -> Vec<(u32, String, String)> {
    let mut out: Vec<(u32, String, String)> = Vec::new();
    for l in text.lines() {
        let fields: Vec<&str> = l.split('\t').collect();
        let at = fields.iter().position(|f| {
            let mut w = f.split_whitespace();
            w.next().is_some_and(|id| id.parse::<u32>().is_ok())
                && w.next()
                    .is_some_and(|c| c.chars().all(|c| c.is_ascii_alphabetic()))
        });
        match at {
            Some(at) => {
                let mut w = fields[at].split_whitespace();
                let (Some(id), Some(cmd)) = (w.next().and_then(|i| i.parse().ok()), w.next())
                else {
                    continue;
                };
                out.push((id, cmd.to_string(), fields[at + 1..].join("\t")));
            }
            None => {
                if let Some(last) = out.last_mut() {
                    last.2.push('\n');
                    last.2.push_str(l);
                }
            }
        }
    }
    out
}
