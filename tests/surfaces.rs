//! No way in through the newer surfaces (issue 42), tried as another
//! local user (`nobody`) and another database role would: a basedir or a
//! malloc library another user can change runs nothing; a config that turns
//! grants off by any spelling, or includes another file, is refused; a
//! fallback datadir parent another user made first is refused; tables of
//! relbench's own that another role made first (the barrier, the
//! PostgreSQL history) are refused before anything is written to them;
//! `PGPASSWORD` reaches no hook; a history file or link another user made
//! is refused and left as it is. `tests/security.rs` tries the older
//! surfaces the same way.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use common::*;

const SETTINGS: &str = "clients = [1]\n[scale]\ntables = 1\nrows = 2000\n[duration]\nwarmup = \"0s\"\nread = \"300ms\"\n\
     [settle]\nbase = \"0s\"\nper_million_rows = \"0s\"\nmax = \"1s\"\n";

/// `write_plan` into `dir`, made first.
fn plan_in(dir: &Path, text: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    write_plan(dir, text)
}

/// `relbench check PLAN` fails and says `says`.
fn check_says(plan: &Path, says: &str) {
    let o = relbench().arg("check").arg(plan).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "check passed: {err}");
    assert!(err.contains(says), "{err}");
}

/// A basedir whose binaries would leave `mark` behind if run: MariaDB's
/// names, each a script that touches the file.
fn booby_trapped_basedir(dir: &Path, mark: &Path) -> std::path::PathBuf {
    let b = dir.join("basedir");
    for (sub, name) in [("sbin", "mariadbd"), ("bin", "mariadb-install-db")] {
        std::fs::create_dir_all(b.join(sub)).unwrap();
        let f = b.join(sub).join(name);
        std::fs::write(&f, format!("#!/bin/sh\ntouch {}\n", mark.display())).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    b
}

/// Regression: with `chown -R nobody B`, `relbench run` (and `bisect
/// --builds B,…`) ran `B/sbin/mariadbd --version` and
/// `B/bin/mariadb-install-db --help` as root; a root-owned 0777 basedir
/// passed `check` too.
#[test]
fn a_basedir_another_user_can_change_is_refused_and_none_of_its_binaries_runs() {
    let dir = shared_tempdir();
    let mark = dir.path().join("ran-as-root");
    let b = booby_trapped_basedir(dir.path(), &mark);
    assert!(Command::new("chown")
        .args(["-R", "nobody"])
        .arg(&b)
        .status()
        .unwrap()
        .success());
    let text = format!(
        "steps = [\"load\"]\n{SETTINGS}[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"{}\"\n",
        b.display()
    );
    let plan = write_plan(dir.path(), &text);
    check_says(&plan, "belongs to another user");
    let o = run_quiet(&plan, dir.path().join("out")).output().unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("belongs to another user"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // bisect takes basedirs from the command line: the same rule.
    let base = plan_in(
        &dir.path().join("plan2"),
        &format!(
            "steps = [\"load\", \"point-query\"]\n{SETTINGS}[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\n"
        ),
    );
    let o = relbench()
        .arg("bisect")
        .arg(&base)
        .arg("--builds")
        .arg(format!("{},{}", b.display(), b.display()))
        .args(["--step", "point-query", "--out"])
        .arg(dir.path().join("bisect"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(!mark.exists(), "a binary of another user's basedir ran");

    // Root's own, but anyone may write it.
    let b2 = booby_trapped_basedir(&dir.path().join("open"), &mark);
    std::fs::set_permissions(&b2, std::fs::Permissions::from_mode(0o777)).unwrap();
    let plan = write_plan(
        &dir.path().join("open"),
        &text.replace(&b.display().to_string(), &b2.display().to_string()),
    );
    check_says(&plan, "can be written by every user");
    assert!(!mark.exists());
}

/// Regression: `skip-grant-tables # x`, `skip-grant-tables#x`, `!include
/// FILE` and `!includedir DIR` in a managed target's config passed
/// `check`, and a local user polling the port got in during start-up.
#[test]
fn every_comment_and_include_spelling_of_skip_grant_tables_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (i, line) in [
        "skip-grant-tables # x",
        "skip-grant-tables#x",
        "!include /etc/mysql/my.cnf",
        "!includedir /etc/mysql/conf.d",
    ]
    .iter()
    .enumerate()
    {
        let cnf = dir.path().join(format!("c{i}.cnf"));
        std::fs::write(&cnf, format!("[mysqld]\n{line}\n")).unwrap();
        let plan = plan_in(
            &dir.path().join(format!("p{i}")),
            &format!(
                "steps = [\"load\"]\n{SETTINGS}[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\nconfig = \"{}\"\n",
                cnf.display()
            ),
        );
        check_says(
            &plan,
            if line.starts_with('!') {
                "read by the server alone"
            } else {
                "turns grant tables off"
            },
        );
    }
}

/// Regression: the fallback datadir's parent,
/// `/var/tmp/relbench-data-<dev>.<ino>`, is predictable from the results
/// directory; made first by `nobody` it was accepted (only its write bits
/// were checked), and a link swapped in during install ran root's server
/// on nobody's datadir.
#[test]
fn a_fallback_datadir_parent_another_user_made_first_is_refused() {
    // Root's own 0700 directory: the server's OS user cannot pass it, so
    // the datadir moves under /var/tmp.
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let m = std::fs::metadata(&out).unwrap();
    let parent = format!("/var/tmp/relbench-data-{}.{}", m.dev(), m.ino());
    assert!(as_nobody(&format!("mkdir -m 0755 {parent}")));
    let plan = write_plan(
        dir.path(),
        &format!(
            "steps = [\"load\"]\n{SETTINGS}[[target]]\nname = \"m\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\n"
        ),
    );
    let o = run_quiet(&plan, &out).output().unwrap();
    // The target's failure to start is said on stdout (its line) and in
    // the report; the run exits 3 (steps failed).
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let left: Vec<_> = std::fs::read_dir(&parent)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    let _ = std::fs::remove_dir(&parent);
    assert!(!o.status.success(), "the run used it: {err}");
    assert!(err.contains("was not made by relbench"), "{err}");
    assert!(left.is_empty(), "relbench wrote into it: {left:?}");
}

/// A PostgreSQL someone else runs, with a role `intruder` and the admin
/// statements `sql` run on its `sbtest` database.
fn postgres_with(dir: &Path, sql: &str) -> (relbench::db::server::ManagedServer, String) {
    use relbench::db::postgres::wire::WireConn;
    use relbench::db::server::postgres::Postgres;
    let (server, url) = postgres_elsewhere(dir);
    let mut admin = WireConn::connect(&Postgres::admin(&server.rt, "sbtest")).unwrap();
    admin
        .execute_text(&format!(
            "CREATE ROLE intruder; CREATE FUNCTION nothing() RETURNS trigger LANGUAGE plpgsql AS \
             'BEGIN RETURN NEW; END'; {sql}"
        ))
        .unwrap();
    (server, url)
}

/// Regression: a pre-made `relbench_barrier` with a SECURITY INVOKER
/// trigger ran as the benchmark's user and granted another role DELETE on
/// the benchmark tables.
#[test]
fn a_barrier_table_another_role_made_is_refused() {
    let dir = shared_tempdir();
    for (i, sql) in [
        "CREATE TABLE relbench_barrier (barrier VARCHAR(64), point VARCHAR(190), share INTEGER); \
         ALTER TABLE relbench_barrier OWNER TO intruder",
        "CREATE TABLE relbench_barrier (barrier VARCHAR(64), point VARCHAR(190), share INTEGER); \
         ALTER TABLE relbench_barrier OWNER TO relbench; CREATE TRIGGER t BEFORE INSERT ON relbench_barrier \
         FOR EACH ROW EXECUTE FUNCTION nothing()",
    ]
    .iter()
    .enumerate()
    {
        let d = dir.path().join(format!("pg{i}"));
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        let (server, url) = postgres_with(&d, sql);
        let plan = write_plan(
            &d,
            &format!(
                "steps = [\"load\", \"point-query\"]\n{SETTINGS}[[target]]\nname = \"remote\"\nengine = \"postgres\"\n\
                 url = \"{url}\"\npassword_env = \"RB_TEST_PG_PW\"\n"
            ),
        );
        let o = relbench()
            .args(["run", "-q"])
            .arg(&plan)
            .args(["--client-share", "1/2", "--barrier", "b", "--barrier-timeout", "5s", "--out"])
            .arg(d.join("out"))
            .env("RB_TEST_PG_PW", server.rt.password.expose())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{err}");
        assert!(err.contains("was not made by relbench"), "{err}");
        assert!(
            err.contains(if i == 0 { "another database user owns it" } else { "trigger" }),
            "{err}"
        );
    }
}

/// Regression: pre-made PostgreSQL history tables with a trigger ran it
/// as the history's user; `PGPASSWORD` for `run --history postgres://…`
/// reached shell hooks' environments.
#[test]
fn postgres_history_tables_another_role_made_are_refused_and_pgpassword_reaches_no_hook() {
    let dir = shared_tempdir();
    let (server, url) = postgres_with(
        dir.path(),
        "CREATE TABLE builds (id BIGINT); ALTER TABLE builds OWNER TO relbench; \
         CREATE TRIGGER t BEFORE INSERT ON builds FOR EACH ROW EXECUTE FUNCTION nothing()",
    );
    let seen = dir.path().join("seen");
    let plan = write_plan(
        dir.path(),
        &format!(
            "steps = [\"load\"]\n{SETTINGS}[[hook]]\nwhen = \"before\"\nstep = \"load\"\n\
             shell = \"cat /proc/self/environ > {}\"\n[[target]]\nname = \"lite\"\nengine = \"sqlite\"\n",
            seen.display()
        ),
    );
    let pw = server.rt.password.expose().to_string();
    let o = relbench()
        .args(["run", "-q"])
        .arg(&plan)
        .arg("--out")
        .arg(dir.path().join("out"))
        .args(["--history", &url])
        .env("PGPASSWORD", &pw)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    // The run is kept; adding it to this history is refused.
    assert!(!o.status.success());
    assert!(
        err.contains("table builds") && err.contains("trigger"),
        "{err}"
    );
    assert!(err.contains("the run is kept"), "{err}");
    let env = std::fs::read(&seen).unwrap();
    assert!(
        !env.windows(pw.len()).any(|w| w == pw.as_bytes()),
        "PGPASSWORD reached the hook"
    );
    // A URL with a password is refused without repeating it.
    let o = relbench()
        .args(["history", "changes", "--history"])
        .arg(url.replace("relbench@", "relbench:hunter2@"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

/// Regression: a history path that is another user's link made root
/// create its target, or converted an empty victim file into a history;
/// a history file another user planted was written into. And `history
/// ack --history typo.sqlite` made a new file.
#[test]
fn a_history_file_or_link_another_user_made_is_refused_and_left_as_it_is() {
    let dir = shared_tempdir();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let victim = dir.path().join("victim");
    let link = shared.join("h.sqlite");
    let empty = shared.join("empty.sqlite");
    assert!(as_nobody(&format!(
        "ln -s {} {} && touch {}",
        victim.display(),
        link.display(),
        empty.display()
    )));
    for (h, says) in [
        (&link, "symbolic link"),
        (&empty, "not a file of this user's"),
    ] {
        let o = relbench()
            .args(["history", "add"])
            .arg(dir.path())
            .arg("--history")
            .arg(h)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success());
        assert!(err.contains(says), "{err}");
    }
    assert!(!victim.exists(), "the link's target was created");
    assert_eq!(
        std::fs::metadata(&empty).unwrap().len(),
        0,
        "the planted file was written"
    );
    let typo = dir.path().join("typo.sqlite");
    let o = relbench()
        .args(["history", "ack", "1", "--history"])
        .arg(&typo)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("there is no history at"));
    assert!(!typo.exists(), "ack made a new history");
}
