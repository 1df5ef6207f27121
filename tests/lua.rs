//! sysbench's Lua scripts run by relbench against sysbench 1.0.20 itself
//! (Debian's package): on one MariaDB with its general log on, each
//! script sysbench ships is run by sysbench and by relbench, and the
//! statements each sends per event are compared shape by shape (literals
//! as `?`), with the statements `prepare` sends. Needs Debian's
//! mariadb-server and sysbench (`./test` installs them).

mod common;

use common::*;
use relbench::db::mysql::wire::WireConn;
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
        let logs = dir.join("logs");
        std::fs::create_dir(&logs).unwrap();
        let (uid, gid) = relbench::db::server::lookup_user("mysql").unwrap();
        std::os::unix::fs::chown(&logs, Some(uid), Some(gid)).unwrap();
        Logged { server, logs }
    }

    /// Runs `f` with the general log written to `name`, and returns the
    /// log's lines.
    fn log(&self, name: &str, f: impl FnOnce()) -> Vec<(u32, String, String)> {
        let path = self.logs.join(name);
        let mut root = WireConn::connect(&MariaDb::admin(&self.server.rt)).unwrap();
        root.execute_text(&format!(
            "SET GLOBAL general_log_file = '{}'; SET GLOBAL general_log = 1",
            path.display()
        ))
        .unwrap();
        f();
        root.execute_text("SET GLOBAL general_log = 0").unwrap();
        log_lines(&std::fs::read_to_string(&path).unwrap())
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
    let _serial = serial();
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
