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

// ---- Issue 60: the surfaces that came after (Lua scripts, profiles and
// `--out`, records read back, durations, `host reset`, get-versions.sh,
// the PostgreSQL history's SQL), each tried as `nobody` would. ----

/// A script that leaves `mark` behind if it runs, in its main chunk.
fn trap_script(mark: &Path) -> String {
    format!(
        "os.execute(\"touch {}\")\nfunction event() end\n",
        mark.display()
    )
}

/// A plan running `script` as a `[[workload]]` on SQLite.
fn script_plan(script: &str) -> String {
    format!(
        "steps = [\"lw\"]\n{SETTINGS}[[workload]]\nname = \"lw\"\nscript = \"{script}\"\n\
         [[target]]\nname = \"t\"\nengine = \"sqlite\"\n"
    )
}

/// Regression: nobody's script beside a plan, nobody's folder, and
/// nobody's link to sysbench's own script (modules were looked for beside
/// the link, so a planted `oltp_common.lua` ran) each ran as root, at
/// `relbench check` already; and `require` loaded any path.
#[test]
fn lua_code_another_user_can_change_never_runs() {
    let dir = shared_tempdir();
    let mark = dir.path().join("ran-as-root");
    // A script in a folder nobody owns.
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("s.lua"), trap_script(&mark)).unwrap();
    assert!(Command::new("chown")
        .args(["-R", "nobody"])
        .arg(&theirs)
        .status()
        .unwrap()
        .success());
    let plan = plan_in(
        &dir.path().join("p1"),
        &script_plan(&theirs.join("s.lua").display().to_string()),
    );
    check_says(&plan, "belongs to another user");
    // A root-owned script nobody can write (its folder 0777, not sticky).
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::write(open.join("s.lua"), trap_script(&mark)).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let plan = plan_in(
        &dir.path().join("p2"),
        &script_plan(&open.join("s.lua").display().to_string()),
    );
    check_says(&plan, "can be written by");
    // nobody's link to sysbench's own script, in a sticky folder, with a
    // module planted beside the link.
    let sticky = dir.path().join("sticky");
    std::fs::create_dir(&sticky).unwrap();
    std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let link = sticky.join("oltp_point_select.lua");
    assert!(as_nobody(&format!(
        "ln -s /usr/share/sysbench/oltp_point_select.lua {} && printf '{}' > {}",
        link.display(),
        trap_script(&mark).replace('\n', "\\n").replace('"', "\\\""),
        sticky.join("oltp_common.lua").display()
    )));
    let plan = plan_in(
        &dir.path().join("p3"),
        &script_plan(&link.display().to_string()),
    );
    check_says(&plan, "symbolic link another user");
    // require() of a path, or of `..`, is refused before anything loads.
    let mine = dir.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(dir.path().join("evil.lua"), trap_script(&mark)).unwrap();
    for (name, req) in [
        ("abs", format!("{}", dir.path().join("evil").display())),
        ("dots", "..evil".to_string()),
    ] {
        let s = mine.join(format!("{name}.lua"));
        std::fs::write(&s, format!("require(\"{req}\")\nfunction event() end\n")).unwrap();
        let plan = plan_in(
            &dir.path().join(format!("p-{name}")),
            &script_plan(&s.display().to_string()),
        );
        check_says(&plan, "a module is named by dotted words");
    }
    assert!(!mark.exists(), "another user's Lua ran as root");
}

/// Regression: `while true do end` in a main chunk hung `relbench check`
/// for ever, and one that allocated without end aborted relbench.
#[test]
fn a_main_chunk_that_never_ends_or_eats_memory_is_refused_in_bounded_time() {
    let dir = shared_tempdir();
    for (name, body, says) in [
        (
            "spin",
            "while true do end",
            "instructions when the plan was read",
        ),
        (
            "grow",
            "local t = {} while true do t[#t + 1] = {} end",
            "MiB when the plan was read",
        ),
        ("rep", "local s = string.rep(\"x\", 1e12)", "string.rep of"),
    ] {
        let s = dir.path().join(format!("{name}.lua"));
        std::fs::write(&s, format!("{body}\nfunction event() end\n")).unwrap();
        let plan = plan_in(
            &dir.path().join(name),
            &script_plan(&s.display().to_string()),
        );
        let t0 = std::time::Instant::now();
        check_says(&plan, says);
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "{name}: {:?}",
            t0.elapsed()
        );
    }
}

/// Regression: with `--out` under a folder another user owns, that user
/// swapped the folder once `profiles/` appeared and root wrote perf's
/// files through the links planted there.
#[test]
fn an_out_directory_under_another_users_folder_is_refused_before_anything_runs() {
    let dir = shared_tempdir();
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    assert!(Command::new("chown")
        .arg("nobody")
        .arg(&theirs)
        .status()
        .unwrap()
        .success());
    let plan = plan_in(
        &dir.path().join("p"),
        &format!("steps = [\"load\"]\n{SETTINGS}[[target]]\nname = \"t\"\nengine = \"sqlite\"\n"),
    );
    let o = run_quiet(&plan, theirs.join("out")).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("belongs to another user"), "{err}");
    assert!(!theirs.join("out").exists(), "something was written there");
}

/// Regression: a record read back was trusted: a FIFO in place of a step
/// file or a profile hung `report` and `profile`, a gzip bomb grew
/// `relbench profile` to 1.56 GB, escape sequences in a record's words
/// reached the terminal, and adaptive.json's round at repeat 4294967295
/// was accepted.
#[test]
fn records_read_back_are_bounded_regular_files_with_printable_words() {
    let dir = shared_tempdir();
    let plan = plan_in(
        &dir.path().join("p"),
        &format!(
            "steps = [\"load\", \"point-query\"]\nrepeats = 2\n{SETTINGS}[profile]\nsteps = [\"point-query\"]\n\
             [[target]]\nname = \"a\"\nengine = \"sqlite\"\n[[target]]\nname = \"b\"\nengine = \"sqlite\"\n"
        ),
    );
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    // Escape sequences in a step's failure and its error samples.
    let f = out.join("steps/b/r1-02-point-query-c1.json");
    let mut s = read_json(&f);
    s["failed"] = "\u{1b}]0;owned\u{7}\u{1b}[2Jgone".into();
    std::fs::write(&f, serde_json::to_vec(&s).unwrap()).unwrap();
    let o = relbench()
        .args(["report", "--format", "txt,json", "--out"])
        .arg(dir.path().join("r"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["report.txt", "report.json"] {
        let text = std::fs::read_to_string(dir.path().join("r").join(f)).unwrap();
        assert!(!text.contains('\u{1b}'), "{f} carries an escape sequence");
    }
    for (what, text) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        assert!(
            !text.contains(&0x1b),
            "{what}: {}",
            String::from_utf8_lossy(text).replace('\u{1b}', "<ESC>")
        );
    }
    // A FIFO in place of a step file: left out and said, in bounded time.
    let step = out.join("steps/a/r2-02-point-query-c1.json");
    std::fs::remove_file(&step).unwrap();
    assert!(Command::new("mkfifo")
        .arg(&step)
        .status()
        .unwrap()
        .success());
    let t0 = std::time::Instant::now();
    let o = relbench()
        .args(["report", "--format", "txt", "--out"])
        .arg(dir.path().join("r2"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(t0.elapsed() < std::time::Duration::from_secs(60));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a regular file") || o.status.success(),
        "{o:?}"
    );
    // A gzip bomb in a stored profile: refused, not unpacked whole.
    let bombs: Vec<std::path::PathBuf> = std::fs::read_dir(out.join("profiles/a"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".gz"))
        .collect();
    assert!(!bombs.is_empty(), "the run stored no profile");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..300 {
        std::io::Write::write_all(&mut gz, &chunk).unwrap();
    }
    let bomb = gz.finish().unwrap();
    for f in &bombs {
        std::fs::write(f, &bomb).unwrap();
    }
    let o = relbench()
        .args(["profile"])
        .arg(&out)
        .args(["--target", "a", "--step", "point-query"])
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(said.contains("unpack past"), "{said}");
    // An adaptive record no run wrote.
    std::fs::write(
        out.join("adaptive.json"),
        r#"{"first_secs": 1.0, "rounds": [{"repeat": 4294967295, "look": 1, "open": [], "estimate_secs": 1.0}]}"#,
    )
    .unwrap();
    let o = relbench()
        .args(["report", "--format", "txt", "--out"])
        .arg(dir.path().join("r3"))
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("damaged"), "{err}");
}

/// Regression: `--budget=1e30h`, `--budget=1e20` and
/// `--report-interval=1e30h` panicked (exit 101).
#[test]
fn durations_past_a_week_on_the_command_line_are_refused_not_panics() {
    let dir = shared_tempdir();
    let plan = plan_in(
        &dir.path().join("p"),
        &format!("steps = [\"load\"]\n{SETTINGS}[[target]]\nname = \"t\"\nengine = \"sqlite\"\n"),
    );
    for args in [
        vec!["--budget=1e30h"],
        vec!["--budget=1e20"],
        vec!["--report-interval=1e30h"],
    ] {
        let o = relbench()
            .arg("run")
            .arg(&plan)
            .args(&args)
            .arg("--out")
            .arg(dir.path().join("o"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("at most 7 days"), "{args:?}: {err}");
    }
}

/// Regression: `relbench host reset` wrote what its saved file said:
/// `sys/../../../x` passed a prefix check, and `sys/power/state` (a file
/// tune never sets) and 64 KiB values were written.
#[test]
fn host_reset_writes_only_the_files_tune_sets_with_values_they_take() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    for p in [
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        "sys/power/state",
        "proc/sys/vm/swappiness",
        "run/.keep",
    ] {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x\n").unwrap();
    }
    let victim = dir.path().join("victim");
    let gov = root.join("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    let swap = root.join("proc/sys/vm/swappiness");
    let escape = root.join("sys/../victim");
    for (saved, says) in [
        (
            vec![(escape.clone(), "1".to_string())],
            "not a file `relbench host tune` sets",
        ),
        (
            vec![(root.join("sys/power/state"), "disk".to_string())],
            "not a file `relbench host tune` sets",
        ),
        (
            vec![(gov.clone(), "x".repeat(1000))],
            "not a value governor takes",
        ),
        (
            vec![(swap.clone(), "60; reboot".to_string())],
            "not a value swappiness takes",
        ),
    ] {
        let state = root.join("run/relbench-host-tune.json");
        let list: Vec<(String, String)> = saved
            .iter()
            .map(|(p, v)| (p.display().to_string(), v.clone()))
            .collect();
        std::fs::write(&state, serde_json::to_vec(&list).unwrap()).unwrap();
        let o = relbench()
            .args(["host", "reset"])
            .env("RELBENCH_SYSROOT", &root)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{err}");
    }
    assert!(!victim.exists());
    assert_eq!(
        std::fs::read_to_string(root.join("sys/power/state")).unwrap(),
        "x\n"
    );
    assert_eq!(std::fs::read_to_string(&gov).unwrap(), "x\n");
}

/// Regression: get-versions.sh as root into a directory another user can
/// write counted a planted `NAME/.complete` as done, unpacked through
/// nobody's link, and ran nobody's `bin/mysqld --version`.
#[test]
fn get_versions_refuses_a_destination_another_user_can_change() {
    let dir = shared_tempdir();
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    assert!(Command::new("chown")
        .arg("nobody")
        .arg(&theirs)
        .status()
        .unwrap()
        .success());
    for (dest, says) in [
        (open.join("v"), "can be written by others"),
        (theirs.join("v"), "belongs to another user"),
    ] {
        let o = Command::new("examples/get-versions.sh")
            .arg(&dest)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says), "{err}");
        assert!(
            !dest.join(".downloads").exists(),
            "it went on into {}",
            dest.display()
        );
    }
}

/// Regression: with `standard_conforming_strings = off` on the history's
/// database, a results directory name or `--build` ending in `\'` ran the
/// attacker's SQL (`CREATE TABLE pwned_dir`), and a `back\slash` build
/// name was stored as `backslash`.
#[test]
fn a_postgres_history_with_backslash_escapes_on_runs_no_name_as_sql() {
    let dir = shared_tempdir();
    let (server, url) = postgres_with(
        dir.path(),
        "ALTER DATABASE sbtest SET standard_conforming_strings = off;",
    );
    let plan = plan_in(&dir.path().join("p"), &format!("steps = [\"load\", \"point-query\"]\n{SETTINGS}[[target]]\nname = \"t\"\nengine = \"sqlite\"\n"));
    let out = dir
        .path()
        .join("out\\'); CREATE TABLE pwned_dir (i int); --");
    run_quiet(&plan, &out).assert().success();
    let build = "back\\slash\\'); CREATE TABLE pwned_build (i int); --";
    let o = relbench()
        .args(["history", "add"])
        .arg(&out)
        .args(["--build", build, "--history", &url])
        .env("PGPASSWORD", server.rt.password.expose())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut c = relbench::db::postgres::wire::WireConn::connect(
        &relbench::db::server::postgres::Postgres::admin(&server.rt, "sbtest"),
    )
    .unwrap();
    let tables = c
        .query_text("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'pwned%'")
        .unwrap();
    assert_eq!(tables[0][0].as_deref(), Some("0"), "a name ran as SQL");
    let names = c.query_text("SELECT name FROM builds").unwrap();
    assert!(
        names.iter().any(|r| r[0].as_deref() == Some(build)),
        "{names:?}"
    );
}
