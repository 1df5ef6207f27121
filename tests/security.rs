//! Managed servers on a shared host: nobody but relbench gets in, options
//! cannot open them up, a datadir relbench did not make is never taken
//! over, no server outlives relbench, and a run whose server was killed
//! finishes with --resume. Real servers (Debian's MariaDB and PostgreSQL
//! 15), started on private ports and datadirs; the intruder is `nobody`,
//! using the Debian clients.

mod common;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;
use predicates::str::contains;

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

fn mariadb_target(name: &str, extra: &str) -> String {
    format!("\n[[target]]\nname = \"{name}\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\n{extra}\n")
}

fn pg_target(name: &str, extra: &str) -> String {
    format!("\n[[target]]\nname = \"{name}\"\nengine = \"postgres\"\nbasedir = \"/usr/lib/postgresql/15\"\n{extra}\n")
}

const SETTINGS: &str = "clients = [2]\n[scale]\ntables = 1\nrows = 5000\n[duration]\nwarmup = \"100ms\"\nread = \"300ms\"\nwrite = \"300ms\"\ninsert = \"300ms\"\n[settle]\nbase = \"0s\"\nper_million_rows = \"0s\"\nmax = \"1s\"\n";

/// A server started by `relbench serve`, with what its ready line says.
struct Served {
    child: Child,
    port: String,
    socket: String,
    password: String,
    /// The server's process.
    pid: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

fn serve(dir: &Path, target: &str) -> Served {
    let plan = write_plan(dir, target);
    let mut child = Command::new(bin())
        .arg("serve")
        .arg(&plan)
        .args(["--target", "srv", "--out"])
        .arg(dir.join("out"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let field = |k: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{k}=")).map(String::from))
            .unwrap_or_else(|| panic!("no {k} in {line:?}"))
    };
    Served {
        port: field("port"),
        socket: field("socket"),
        password: field("password"),
        pid: field("pid"),
        child,
    }
}

/// Runs a client, as `nobody` when `intruder`; whether it got in, and
/// what it said.
fn client(intruder: bool, program: &str, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let mut c = if intruder {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--", program]);
        c
    } else {
        Command::new(program)
    };
    let out = c
        .args(args)
        .envs(env.iter().copied())
        .env("HOME", "/nonexistent")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn a_local_user_cannot_get_into_a_managed_mariadb() {
    // As nobody: root over TCP once connected with no password, and
    // SELECT … INTO OUTFILE wrote a root-owned file.
    let dir = shared_tempdir();
    let s = serve(dir.path(), &mariadb_target("srv", ""));
    let tcp = |user: &str| -> Vec<String> {
        [
            "--no-defaults",
            "--protocol=tcp",
            "-h",
            "127.0.0.1",
            "-P",
            &s.port,
            "-u",
            user,
        ]
        .map(String::from)
        .to_vec()
    };
    let sql = ["-e", "SELECT 1"];
    for (how, mut args) in [
        ("root over TCP", tcp("root")),
        ("relbench over TCP without its password", tcp("relbench")),
        ("anonymous over TCP", tcp("")),
        (
            "root over the socket",
            ["--no-defaults", "-S", &s.socket, "-u", "root"]
                .map(String::from)
                .to_vec(),
        ),
    ] {
        args.extend(sql.map(String::from));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, said) = client(true, "mariadb", &args, &[]);
        assert!(!ok, "nobody got in as {how}: {said}");
    }
    // The benchmark user with this start's password gets in, and can do
    // what workloads do, not more.
    let pw = format!("-p{}", s.password);
    let mut args = tcp("relbench");
    args.push(pw);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = |sql: &str| {
        client(
            false,
            "mariadb",
            &[&args[..], &["sbtest", "-e", sql]].concat(),
            &[],
        )
    };
    let (ok, said) = run("CREATE TABLE t (a INT); INSERT INTO t VALUES (1); DROP TABLE t");
    assert!(ok, "{said}");
    let (ok, said) = run("SELECT 1 INTO OUTFILE '/tmp/relbench-outfile-test'");
    assert!(!ok && said.contains("Access denied"), "{said}");
    assert!(!Path::new("/tmp/relbench-outfile-test").exists());
    let (ok, said) = run("SET GLOBAL max_connections = 10");
    assert!(!ok, "{said}");
    // The server does not run as root. Its own process: `ps -C mariadbd`
    // also saw another test's server starting beside this one (fresh-clone
    // CI), as root for the moment before it drops to its user.
    let (_, ps) = client(false, "ps", &["-o", "user=", "-p", &s.pid], &[]);
    assert!(
        !ps.trim().is_empty() && ps.lines().all(|u| u.trim() != "root"),
        "{ps}"
    );
    // A run against it by URL, as the benchmark user: settle cannot force
    // a flush without SUPER, and says so instead of failing.
    let plan = write_plan(
        dir.path(),
        &format!(
            "steps = [\"load\", \"settle\", \"point-query\"]\n{SETTINGS}\n[[target]]\nname = \"u\"\nengine = \"mariadb\"\nurl = \"mariadb://relbench@127.0.0.1:{}/sbtest\"\npassword_env = \"RELBENCH_TEST_PW\"\n",
            s.port
        ),
    );
    let out = dir.path().join("by-url");
    run_quiet(&plan, &out)
        .env("RELBENCH_TEST_PW", &s.password)
        .assert()
        .success();
    let settle = read_json(&out.join("steps/u/r1-02-settle-c1.json"));
    assert!(
        settle["notes"]["flush"]
            .as_str()
            .unwrap()
            .starts_with("not forced"),
        "{settle}"
    );
}

#[test]
fn a_local_user_cannot_get_into_a_managed_postgres() {
    // As nobody: trust on 127.0.0.1 let `COPY … TO PROGRAM` run a shell
    // command as postgres.
    let dir = shared_tempdir();
    let s = serve(dir.path(), &pg_target("srv", ""));
    let psql = format!("{PG_BIN}/psql");
    for (how, host, user) in [
        (
            "relbench over TCP without its password",
            "127.0.0.1",
            "relbench",
        ),
        ("the superuser over TCP", "127.0.0.1", "relbench_admin"),
        (
            "the superuser over the socket",
            s.socket.as_str(),
            "relbench_admin",
        ),
        ("relbench over the socket", s.socket.as_str(), "relbench"),
    ] {
        let (ok, said) = client(
            true,
            &psql,
            &[
                "-h", host, "-p", &s.port, "-U", user, "-d", "sbtest", "-w", "-c", "SELECT 1",
            ],
            &[],
        );
        assert!(!ok, "nobody got in as {how}: {said}");
    }
    let run = |sql: &str| {
        client(
            false,
            &psql,
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &s.port,
                "-U",
                "relbench",
                "-d",
                "sbtest",
                "-w",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                sql,
            ],
            &[("PGPASSWORD", &s.password)],
        )
    };
    let (ok, said) = run("CREATE TABLE t (a int); INSERT INTO t VALUES (1); DROP TABLE t");
    assert!(ok, "{said}");
    let (ok, said) = run("COPY (SELECT 1) TO PROGRAM 'id > /tmp/relbench-program-test'");
    assert!(!ok, "{said}");
    assert!(!Path::new("/tmp/relbench-program-test").exists());
}

#[test]
fn args_that_widen_the_listen_address_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (target, position, message) in [
        (
            mariadb_target("m", "args = [\"--bind-address=0.0.0.0\"]"),
            "20:8",
            "a managed server listens on 127.0.0.1 only",
        ),
        (
            pg_target("p", "args = [\"-c\", \"listen_addresses=*\"]"),
            "20:8",
            "a managed server listens on 127.0.0.1 only",
        ),
        (
            mariadb_target("m", "args = [\"--skip-grant-tables\"]"),
            "20:8",
            "without a password",
        ),
    ] {
        check_refuses(
            dir.path(),
            &format!("steps = [\"load\"]\n{SETTINGS}{target}"),
            position,
            message,
        );
    }
}

#[test]
fn a_datadir_relbench_did_not_create_is_refused_and_untouched() {
    // An existing directory named as datadir was taken over: chowned to
    // postgres, following links, with a log written into its parent.
    use std::os::unix::fs::MetadataExt;
    let dir = shared_tempdir();
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("important.txt"), "data").unwrap();
    let before = std::fs::metadata(&theirs).unwrap();
    for target in [
        pg_target("p", "datadir = \"theirs\""),
        mariadb_target("m", "datadir = \"theirs\""),
    ] {
        let plan = write_plan(
            dir.path(),
            &format!("steps = [\"load\"]\n{SETTINGS}{target}"),
        );
        // Refused with the plan (as `check` does), before anything runs.
        run_quiet(&plan, dir.path().join(format!("out-{}", target.len())))
            .assert()
            .code(2)
            .stderr(contains("is not empty and relbench did not create it"));
        let after = std::fs::metadata(&theirs).unwrap();
        assert_eq!((after.uid(), after.mode()), (before.uid(), before.mode()));
        assert_eq!(
            std::fs::read_to_string(theirs.join("important.txt")).unwrap(),
            "data"
        );
        assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 1);
        let file = std::fs::metadata(theirs.join("important.txt")).unwrap();
        assert_eq!(file.uid(), 0);
    }
    // Nothing was written beside it either.
    let beside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("server.log"))
        .collect();
    assert!(beside.is_empty(), "{beside:?}");
}

fn kill9(pid: u32) {
    assert!(Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap()
        .success());
}

#[test]
fn a_killed_relbench_leaves_no_server_and_its_run_resumes() {
    // SIGKILL of relbench left the managed server running and listening;
    // the resume then failed on the orphan's locked datadir.
    let dir = shared_tempdir();
    for (name, target) in [("p", pg_target("p", "")), ("m", mariadb_target("m", ""))] {
        let text = format!(
            "steps = [\"load\", \"point-query\", \"update-index\"]\n{}{target}",
            SETTINGS.replace("read = \"300ms\"", "read = \"8s\"")
        );
        let plan = write_plan(dir.path(), &text);
        let out = dir.path().join(format!("out-{name}"));
        let mut child = spawn_run(&plan, &out);
        wait_for("the load", 120, || {
            step_files(&out).iter().any(|f| f.ends_with("load-c1.json"))
        });
        let server = server_pid(&out, name).expect("the server's pid file");
        assert!(alive(server));
        kill9(child.id());
        let _ = child.wait();
        wait_for("the server to stop after relbench was killed", 10, || {
            !alive(server)
        });
        // The run finishes with --resume: the step in flight runs now.
        let resumed = spawn_resume(&out).wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&resumed.stderr);
        assert!(resumed.status.success(), "{said}");
        for f in step_files(&out) {
            let r = read_json(&out.join("steps").join(&f));
            assert!(r["failed"].is_null(), "{f}: {}", r["failed"]);
        }
        assert_eq!(step_files(&out).len(), 3);
        assert_eq!(read_json(&out.join("run.json"))["status"], "complete");
    }
}

#[test]
fn a_run_whose_server_was_killed_finishes_with_resume() {
    // --resume after the server died could never finish ("its data is
    // gone"), and each try left a fresh datadir.
    let dir = shared_tempdir();
    let text = format!(
        "steps = [\"load\", \"point-query\", \"update-index\", \"insert\"]\n{}{}",
        SETTINGS.replace("read = \"300ms\"", "read = \"3s\""),
        mariadb_target("victim", "")
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    let child = spawn_run(&plan, &out);
    wait_for("the load", 120, || {
        step_files(&out).iter().any(|f| f.ends_with("load-c1.json"))
    });
    std::thread::sleep(Duration::from_millis(800));
    kill9(server_pid(&out, "victim").expect("the server's pid file"));
    let first = child.wait_with_output().unwrap();
    assert_eq!(
        first.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let failed = read_json(&out.join("steps/victim/r1-02-point-query-c2.json"));
    assert!(failed["failed"].as_str().unwrap().contains("exited"));

    let resumed = spawn_resume(&out).wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{said}");
    let files = step_files(&out);
    assert_eq!(files.len(), 4, "{files:?}");
    for f in &files {
        let r = read_json(&out.join("steps").join(f));
        assert!(r["failed"].is_null(), "{f}: {}", r["failed"]);
        assert!(r["events"].as_u64().unwrap() > 0, "{f}");
    }
    assert_eq!(read_json(&out.join("run.json"))["status"], "complete");
    // The log of the start that crashed is kept: each start appends.
    let log = std::fs::read_to_string(out.join("data/victim.server.log")).unwrap();
    assert!(
        log.matches("starts the server of target").count() >= 2,
        "{log}"
    );
    // One datadir, the run's own, and no private directory left behind.
    let data: Vec<PathBuf> = std::fs::read_dir(out.join("data"))
        .map(|d| {
            d.map(|e| e.unwrap().path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    assert!(data.len() <= 1, "{data:?}");
}

#[test]
fn a_space_in_the_results_path_does_not_break_a_managed_server() {
    // mariadb-install-db's unquoted chown broke on "out dir".
    let dir = shared_tempdir();
    let text = format!(
        "steps = [\"load\", \"point-query\"]\n{SETTINGS}{}{}",
        mariadb_target("m", ""),
        pg_target("p", "")
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out dir");
    run_quiet(&plan, &out).assert().success();
    assert_eq!(step_files(&out).len(), 4);
}

#[test]
fn a_stale_server_on_the_runs_datadir_is_stopped_and_said() {
    // A server an earlier relbench left running on a datadir (here started
    // through the library and forgotten) is stopped by the next run that
    // uses that datadir, which says so, instead of failing on its lock.
    use relbench::db::server::{mariadb::MariaDb, ManagedServer, ServerSpec};
    let dir = shared_tempdir();
    let out = dir.path().join("out");
    let datadir = dir.path().join("kept");
    let stale = ManagedServer::start(
        ServerSpec {
            target: "m".into(),
            basedir: PathBuf::from("/usr"),
            config: None,
            datadir: datadir.clone(),
            datadir_note: None,
            log_dir: out.join("data"),
            port: None,
            user: Some("mysql".into()),
            args: vec![],
            malloc: None,
            plugins: vec![],
            start_timeout: Duration::from_secs(60),
        },
        Box::new(MariaDb),
    )
    .unwrap();
    let pid = stale.pid().unwrap();
    std::mem::forget(stale);
    assert!(alive(pid));
    let text = format!(
        "steps = [\"load\", \"point-query\"]\n{SETTINGS}{}",
        mariadb_target("m", "datadir = \"kept\"")
    );
    let plan = write_plan(dir.path(), &text);
    run_quiet(&plan, &out)
        .assert()
        .success()
        .stderr(contains(format!(
            "stopped server {pid}, which an earlier relbench started"
        )));
    assert!(!alive(pid));
}

/// A directory every user may create entries in, as /tmp is (sticky).
fn open_to_all(parent: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let d = parent.join("shared");
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

/// Regression: relbench trusted any directory holding `.relbench-datadir`,
/// whoever made it. Another user's initdb'd datadir with the marker and a
/// `restore_command` made root's run start PostgreSQL on it, running the
/// command as postgres; a planted MariaDB datadir made the stranger an
/// administrator of the server during root's run.
#[test]
fn a_datadir_another_user_made_with_a_forged_marker_is_refused_and_runs_nothing() {
    let dir = shared_tempdir();
    let shared = open_to_all(dir.path());
    let pwned = shared.join("pwned");
    let pgdata = shared.join("pgdata");
    assert!(as_nobody(&format!(
        "{PG_BIN}/initdb -D {} >/dev/null 2>&1 && touch {}/.relbench-datadir \
         && echo \"restore_command = 'touch {}'\" >> {}/postgresql.auto.conf && touch {}/standby.signal",
        pgdata.display(),
        pgdata.display(),
        pwned.display(),
        pgdata.display(),
        pgdata.display()
    )));
    let mdata = shared.join("mdata");
    assert!(as_nobody(&format!(
        "mkdir -m 700 {m} && mkdir {m}/mysql && touch {m}/.relbench-datadir {m}/mysql/global_priv.MAD",
        m = mdata.display()
    )));
    for (name, target) in [
        (
            "p",
            pg_target("p", &format!("datadir = \"{}\"", pgdata.display())),
        ),
        (
            "m",
            mariadb_target("m", &format!("datadir = \"{}\"", mdata.display())),
        ),
    ] {
        let plan = write_plan(
            dir.path(),
            &format!("steps = [\"load\"]\n{SETTINGS}{target}"),
        );
        // Refused with the plan, before anything runs.
        run_quiet(&plan, dir.path().join(format!("out-{name}")))
            .assert()
            .code(2)
            .stderr(contains("belongs to another user"));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(!pwned.exists(), "the stranger's restore_command ran");
}

/// Regression: an empty datadir someone else made (`mkdir -m 777`) was
/// used: while the install script ran the other user swapped the marker
/// for a link and root wrote through it, and the live server's datadir
/// stayed writable by all.
#[test]
fn an_empty_datadir_another_user_made_or_anyone_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = shared_tempdir();
    let shared = open_to_all(dir.path());
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "root's").unwrap();
    let theirs = shared.join("theirs");
    assert!(as_nobody(&format!("mkdir -m 777 {}", theirs.display())));
    // A root-made directory anyone can write is no better.
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    // The other user keeps trying to plant a link as the marker.
    let swapper = Command::new("runuser")
        .args(["-u", "nobody", "--", "sh", "-c"])
        .arg(format!(
            "for i in $(seq 400); do ln -sf {} {}/.relbench-datadir 2>/dev/null; sleep 0.01; done",
            victim.display(),
            theirs.display()
        ))
        .spawn()
        .unwrap();
    for (datadir, said) in [
        (&theirs, "belongs to another user"),
        (&open, "can be written by every user"),
    ] {
        let plan = write_plan(
            dir.path(),
            &format!(
                "steps = [\"load\"]\n{SETTINGS}{}",
                mariadb_target("m", &format!("datadir = \"{}\"", datadir.display()))
            ),
        );
        run_quiet(
            &plan,
            dir.path()
                .join(format!("out-{}", datadir.display().to_string().len())),
        )
        .assert()
        .code(2)
        .stderr(contains(said));
    }
    let _ = swapper.wait_with_output();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's");
    let m = std::fs::metadata(&open).unwrap();
    assert_eq!(m.permissions().mode() & 0o7777, 0o777, "untouched");
}

/// Regression: `--out` another user made, or under a directory another
/// user can write, was used: a planted link at the server's pid file made
/// root overwrite the file it pointed to, and a swapped `run` directory
/// took root's results into the other user's.
#[test]
fn a_results_directory_another_user_made_or_can_swap_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = shared_tempdir();
    let shared = open_to_all(dir.path());
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "root's").unwrap();
    let theirs = shared.join("out");
    assert!(as_nobody(&format!(
        "mkdir -p {o}/data && ln -s {v} {o}/data/m.server.pid",
        o = theirs.display(),
        v = victim.display()
    )));
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let plan = write_plan(
        dir.path(),
        &format!("steps = [\"load\"]\n{SETTINGS}{}", mariadb_target("m", "")),
    );
    for (out, said) in [
        (theirs.clone(), "belongs to another user"),
        (open.join("run"), "can be written by every user"),
    ] {
        run_quiet(&plan, &out)
            .assert()
            .code(1)
            .stderr(contains(said));
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's");
    assert!(!open.join("run").exists(), "nothing made under it");
}

/// Regression: `.lock` was mode 0644, so any user could take a shared
/// lock on it and make every later run and `--resume` fail, naming a
/// stale pid; a lock held by something else is now said to be so.
#[test]
fn another_user_cannot_lock_a_run_and_a_foreign_lock_is_named() {
    use std::os::unix::fs::PermissionsExt;
    let dir = shared_tempdir();
    let plan = write_plan(
        dir.path(),
        "steps = [\"load\"]\n[scale]\nrows = 1000\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n",
    );
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let lock = out.join(".lock");
    assert_eq!(
        std::fs::metadata(&lock).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(
        !as_nobody(&format!("flock -s -n {} true", lock.display())),
        "nobody took a lock on root's run"
    );
    // A lock file an older relbench left readable is made private.
    std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o644)).unwrap();
    relbench()
        .args(["run", "-q", "--resume", "--out"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(
        std::fs::metadata(&lock).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // Held by a program that is not relbench: said so.
    let mut holder = Command::new("flock")
        .arg(&lock)
        .args(["sleep", "20"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    relbench()
        .args(["run", "-q", "--resume", "--out"])
        .arg(&out)
        .assert()
        .code(1)
        .stderr(contains("not a running relbench"));
    let _ = holder.kill();
    let _ = holder.wait();
}

/// Regression: a URL target's password read from `password_env` stayed in
/// relbench's environment and was inherited by the managed servers and
/// the shell hooks.
#[test]
fn a_url_targets_password_reaches_no_child() {
    let dir = shared_tempdir();
    let secret = "s3cret-in-the-environment";
    let seen = dir.path().join("seen");
    let text = format!(
        "steps = [\"load\"]\norder = \"fixed\"\n{SETTINGS}\n[[hook]]\nwhen = \"before\"\nstep = \"load\"\n\
         shell = \"cat /proc/$RELBENCH_SERVER_PID/environ /proc/self/environ > {} 2>&1; true\"\n{}\
         \n[[target]]\nname = \"u\"\nengine = \"mariadb\"\nurl = \"mariadb://relbench@127.0.0.1:1/sbtest\"\npassword_env = \"RB_TEST_SECRET\"\n",
        seen.display(),
        mariadb_target("m", "")
    );
    let plan = write_plan(dir.path(), &text);
    let ran = relbench()
        .args(["run", "-q", "--out"])
        .arg(dir.path().join("out"))
        .arg(&plan)
        .env("RB_TEST_SECRET", secret)
        .output()
        .unwrap();
    // The URL target has no server behind it: the run stops there, after
    // the managed one ran its hook (`order = "fixed"`: it runs first).
    assert!(!ran.status.success());
    let text = std::fs::read(&seen)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&ran.stderr)));
    assert!(!text.is_empty());
    assert!(
        !text.windows(secret.len()).any(|w| w == secret.as_bytes()),
        "the password is in a child's environment"
    );
}

/// Regression: the PostgreSQL client sent the password in cleartext to
/// any server that asked for it (a fake one on loopback received it).
#[test]
fn the_postgres_client_sends_no_cleartext_or_md5_password_unless_allowed() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    for (code, allowed) in [(3u32, None), (5u32, None), (3u32, Some("password"))] {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        // One connection: read the startup message, ask for the password
        // in cleartext (3) or as MD5 (5), keep what comes back.
        let fake = std::thread::spawn(move || {
            let mut got = Vec::new();
            let Ok((mut s, _)) = listener.accept() else {
                return got;
            };
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut len = [0u8; 4];
            s.read_exact(&mut len).unwrap();
            let mut rest = vec![0u8; u32::from_be_bytes(len) as usize - 4];
            s.read_exact(&mut rest).unwrap();
            let mut msg = vec![b'R', 0, 0, 0, if code == 5 { 12 } else { 8 }];
            msg.extend_from_slice(&code.to_be_bytes());
            if code == 5 {
                msg.extend_from_slice(b"salt");
            }
            s.write_all(&msg).unwrap();
            let _ = s.read_to_end(&mut got);
            got
        });
        let auth = allowed
            .map(|a| format!("auth = \"{a}\"\n"))
            .unwrap_or_default();
        let plan = write_plan(
            dir.path(),
            &format!(
                "steps = [\"point-query\"]\n{SETTINGS}\n[[target]]\nname = \"u\"\nengine = \"postgres\"\n\
                 url = \"postgres://relbench@127.0.0.1:{port}/sbtest\"\npassword_env = \"RB_PG_SECRET\"\ntls = \"off\"\n{auth}"
            ),
        );
        let out = relbench()
            .args(["run", "-q", "--out"])
            .arg(dir.path().join(format!("out-{code}-{}", allowed.is_some())))
            .arg(&plan)
            .env("RB_PG_SECRET", "clear-as-day")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        let got = fake.join().unwrap();
        let sent = got.windows(12).any(|w| w == b"clear-as-day");
        if allowed.is_some() {
            assert!(sent, "allowed, and the password was not sent: {said}");
        } else {
            assert!(
                !sent,
                "the password went to a server that asked for code {code}"
            );
            // At most the polite Terminate ('X') as the connection closes.
            assert!(
                got.is_empty() || got == b"X\0\0\0\x04",
                "something was sent: {got:?}"
            );
            assert!(said.contains("relbench sent nothing"), "{said}");
        }
    }
}

/// Regression: `--loose-skip-grant-tables`, `--skip-grant` and
/// `skip-grant-tables = 1` in a config passed `check`, and a phase's
/// `server_args` were checked only at its restart, after the load ran.
#[test]
fn every_spelling_of_skip_grant_tables_is_refused_by_check_for_targets_and_phases() {
    let dir = tempfile::tempdir().unwrap();
    for arg in [
        "--loose-skip-grant-tables",
        "--skip-grant",
        "--skip_grant_tables=ON",
        "--enable-skip-grant-tables",
    ] {
        check_refuses(
            dir.path(),
            &format!(
                "steps = [\"load\"]\n{SETTINGS}{}",
                mariadb_target("m", &format!("args = [\"{arg}\"]"))
            ),
            "20:8",
            "without a password",
        );
    }
    std::fs::write(
        dir.path().join("open.cnf"),
        "[mysqld]\nskip-grant-tables = 1\n",
    )
    .unwrap();
    check_refuses(
        dir.path(),
        &format!(
            "steps = [\"load\"]\n{SETTINGS}{}",
            mariadb_target("m", "config = \"open.cnf\"")
        ),
        "20:10",
        "turns grant tables off",
    );
    // The same in a phase, found by check, not at the restart.
    let phases = "[[phase]]\nname = \"a\"\nsteps = [\"load\"]\n[[phase]]\nname = \"b\"\nserver_args = [\"--loose-skip-grant\"]\nsteps = [\"point-query\"]\n";
    check_refuses(
        dir.path(),
        &format!("{}{phases}{}", SETTINGS, mariadb_target("m", "")),
        "19:15",
        "phase \"b\" on target \"m\"",
    );
    // Turned off explicitly is fine.
    let plan = write_plan(
        dir.path(),
        &format!(
            "steps = [\"load\"]\n{SETTINGS}{}",
            mariadb_target("m", "args = [\"--skip-grant-tables=0\"]")
        ),
    );
    relbench().arg("check").arg(&plan).assert().success();
}
