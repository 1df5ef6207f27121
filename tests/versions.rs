//! Every server version users compare, for real: MariaDB 10.1, 10.2,
//! 10.11 and 11.4, PostgreSQL 12 and 18 and Oracle MySQL 5.6, 5.7 and 8.0
//! from Maven Central, MySQL 9.7 from Debian unstable behind its loader
//! wrapper, all fetched by
//! `examples/get-versions.sh` into `$RELBENCH_VERSIONS` (`./test` does both
//! and keeps the directory between runs). Without the variable these tests
//! say so and do nothing: `cargo test` alone has no way to fetch them.

mod common;

use std::path::PathBuf;

use common::*;
use predicates::prelude::*;
use predicates::str::contains;

/// Where `./test` unpacked the builds, or None (and a line saying so).
fn versions() -> Option<PathBuf> {
    match std::env::var_os("RELBENCH_VERSIONS") {
        Some(d) => {
            let d = PathBuf::from(d);
            assert!(
                d.join("mysql-9.7/.complete").is_file(),
                "RELBENCH_VERSIONS={} has no complete builds; run examples/get-versions.sh {}",
                d.display(),
                d.display()
            );
            Some(d)
        }
        None => {
            eprintln!("not run: set RELBENCH_VERSIONS to the directory examples/get-versions.sh filled (./test does)");
            None
        }
    }
}

/// (target, engine, build directory, what its version string starts with)
/// (MySQL: `MYSQL` below, which runs more on each.)
const BUILDS: [(&str, &str, &str, &str); 6] = [
    ("ma101", "mariadb", "mariadb-10.1.23", "10.1.23-MariaDB"),
    ("ma102", "mariadb", "mariadb-10.2.11", "10.2.11-MariaDB"),
    ("ma1011", "mariadb", "mariadb-10.11.5", "10.11.5-MariaDB"),
    ("ma114", "mariadb", "mariadb-11.4.5", "11.4.5-MariaDB"),
    ("pg12", "postgres", "postgres-12.22", "PostgreSQL 12.22"),
    ("pg18", "postgres", "postgres-18.0", "PostgreSQL 18.0"),
];

#[test]
fn every_version_initialises_loads_reads_writes_and_stops() {
    share_machine();
    let Some(versions) = versions() else { return };
    let dir = shared_tempdir();
    let mut text = String::from(
        "steps = [\"load\", \"point-query\", \"update-index\"]\nclients = [2]\n\
         [scale]\ntables = 1\nrows = 10000\n\
         [duration]\nwarmup = \"0s\"\nevents = 200\n",
    );
    for (name, engine, build, _) in BUILDS {
        text += &format!(
            "\n[[target]]\nname = \"{name}\"\nengine = \"{engine}\"\nbasedir = \"{}\"\n",
            versions.join(build).display()
        );
    }
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    let t0 = std::time::Instant::now();
    run_quiet(&plan, &out).assert().success();
    eprintln!("6 versions in {:.0} s", t0.elapsed().as_secs_f64());
    let run = read_json(&out.join("run.json"));
    for (i, (name, _, _, version)) in BUILDS.iter().enumerate() {
        let t = &run["targets"][i];
        assert_eq!(t["name"], *name);
        let v = t["version"].as_str().unwrap_or_default();
        assert!(v.contains(version), "{name}: version {v:?}");
        for (k, step) in ["load-c1", "point-query-c2", "update-index-c2"]
            .iter()
            .enumerate()
        {
            let r = read_json(&out.join(format!("steps/{name}/r1-{:02}-{step}.json", k + 1)));
            assert!(r["failed"].is_null(), "{name} {step}: {}", r["failed"]);
            assert!(r["events"].as_u64().unwrap() > 0, "{name} {step}");
        }
        // The build, as its running binary says.
        let build = |k: &str| t["config"][k].as_str().unwrap_or_default().to_string();
        assert!(
            build("relbench.build.text_bytes")
                .parse::<u64>()
                .unwrap_or(0)
                > 1 << 20,
            "{name}: {}",
            t["config"]
        );
        assert!(
            build("relbench.malloc_in_use").contains("malloc"),
            "{name}: {}",
            t["config"]
        );
        // Its datadir (relbench's own) removed.
        assert!(
            !out.join("data").join(name).exists(),
            "{name}'s datadir is left"
        );
    }
    // Builds differ in their code: said among the settings that differ.
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("| relbench.build.text_bytes |"),
        "no build sizes among the settings that differ"
    );
    // No server outlived the run: none runs with a path under `out`.
    let out_path = out.to_string_lossy().into_owned();
    for p in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(p.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        assert!(
            !cmd.contains(&out_path),
            "pid {} outlived the run: {cmd}",
            p.file_name().to_string_lossy()
        );
    }
}

#[test]
fn a_mysql_9_7_target_by_url_authenticates_fully_with_caching_sha2_over_tcp() {
    use relbench::db::mysql::wire::{Address, Opts, WireConn};
    use relbench::db::server::mariadb::MariaDb;
    use relbench::db::tls::Tls;

    share_machine();
    let Some(versions) = versions() else { return };
    let dir = shared_tempdir();
    // mysqld refuses root, as relbench's own managed servers do.
    let server = server_elsewhere(
        dir.path(),
        "elsewhere",
        versions.join("mysql-9.7"),
        "mysql",
        Box::new(MariaDb),
    );
    let secret = "s3cret-Pa55word";
    let mut root = WireConn::connect(&MariaDb::admin(&server.rt)).unwrap();
    // Regression: MySQL 8+ loads the X Plugin by default, listening on
    // every address (port 33060); a managed server must not.
    let x = root
        .query_text(
            "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'mysqlx'",
        )
        .unwrap();
    assert!(
        x.first().is_none_or(|r| r[0].as_deref() != Some("ACTIVE")),
        "the X Plugin is listening: {x:?}"
    );
    // Accounts made now have caching_sha2_password (9.x has nothing
    // else) and no cached password: the first login over TCP needs the
    // full authentication.
    for user in ["plain", "tls", "direct"] {
        root.execute_text(&format!(
            "CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY '{secret}'; GRANT ALL ON sbtest.* TO '{user}'@'127.0.0.1'"
        ))
        .unwrap();
    }
    root.execute_text("CREATE DATABASE IF NOT EXISTS sbtest")
        .unwrap();
    let tcp = |user: &str, tls| Opts {
        address: Address::Tcp {
            host: "127.0.0.1".into(),
            port: server.rt.port,
        },
        user: user.into(),
        password: Some(secret.into()),
        database: Some("sbtest".into()),
        tls,
        found_rows: true,
    };
    let cipher = |c: &mut WireConn| {
        c.query_text("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
            .unwrap()[0][1]
            .clone()
            .unwrap_or_default()
    };
    // tls = "off" with a cold cache: one connection over TLS authenticates
    // fully, and the session itself is plain.
    let mut c = WireConn::connect(&tcp("direct", Tls::Off)).unwrap();
    assert_eq!(cipher(&mut c), "");
    // tls = "required": the whole session is encrypted.
    let mut c = WireConn::connect(&tcp("direct", Tls::Required)).unwrap();
    assert_ne!(cipher(&mut c), "");
    // A wrong password is refused, not waited for.
    let wrong = WireConn::connect(&Opts {
        password: Some("wrong".into()),
        ..tcp("direct", Tls::Off)
    })
    .err()
    .expect("a wrong password is refused");
    assert!(wrong.message.contains("1045"), "{}", wrong.message);

    for (user, tls) in [("plain", "off"), ("tls", "required")] {
        let text = format!(
            "steps = [\"load\", \"point-query\", \"update-index\"]\nclients = [2]\n\
             [scale]\ntables = 1\nrows = 10000\n\
             [duration]\nwarmup = \"0s\"\nread = \"1s\"\nwrite = \"1s\"\n\
             [[target]]\nname = \"remote\"\nengine = \"mysql\"\ntls = \"{tls}\"\n\
             url = \"mysql://{user}@127.0.0.1:{}/sbtest\"\npassword_env = \"RELBENCH_TEST_PW\"\n",
            server.rt.port
        );
        let plan = write_plan(dir.path(), &text);
        let out = dir.path().join(format!("out-{user}"));
        relbench()
            .env("RELBENCH_TEST_PW", secret)
            .args(["run", "-q"])
            .arg(&plan)
            .arg("--out")
            .arg(&out)
            .assert()
            .success()
            .stderr(contains(secret).not());
        let pq = read_json(&out.join("steps/remote/r1-02-point-query-c2.json"));
        assert!(pq["events"].as_u64().unwrap() > 0, "{user}: {pq}");
    }
}

/// Profiles of the fetched builds (unstripped): MariaDB 11.4 with the
/// performance schema instrumenting everything against it off, on point
/// queries — the functions that grew are the performance schema's own —
/// and PostgreSQL 18's backends, every one followed. At least 95% of the
/// on-CPU samples of each have a function's name.
#[test]
fn profiles_name_the_performance_schemas_functions_and_the_fetched_builds_symbols() {
    // It measures a difference in CPU per operation: alone. Regression:
    // beside the MySQL sequence its servers' profiles were disturbed.
    let _measure = alone();
    let Some(versions) = versions() else { return };
    let dir = shared_tempdir();
    let ma = versions.join("mariadb-11.4.5");
    let pfs = [
        "--performance-schema=ON",
        "--performance-schema-instrument=%=ON",
        "--performance-schema-consumer-events-stages-current=ON",
        "--performance-schema-consumer-events-stages-history=ON",
        "--performance-schema-consumer-events-statements-history=ON",
        "--performance-schema-consumer-events-waits-current=ON",
        "--performance-schema-consumer-events-waits-history=ON",
        "--performance-schema-consumer-events-waits-history-long=ON",
    ]
    .map(|a| format!("\"{a}\""))
    .join(", ");
    let text = format!(
        "steps = [\"load\", \"point-query\"]\nclients = [1]\nseed = 1\n\
         [scale]\ntables = 1\nrows = 10000\n\
         [duration]\nwarmup = \"200ms\"\nread = \"4s\"\n\
         [profile]\nrate = 1999\n\
         [[target]]\nname = \"off\"\nengine = \"mariadb\"\nbasedir = \"{ma}\"\nargs = [\"--performance-schema=OFF\"]\n\
         [[target]]\nname = \"pfs\"\nengine = \"mariadb\"\nbasedir = \"{ma}\"\nargs = [{pfs}]\n\
         [[target]]\nname = \"pg18\"\nengine = \"postgres\"\nbasedir = \"{}\"\n",
        versions.join("postgres-18.0").display(),
        ma = ma.display(),
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let report = read_json(&out.join("report.json"));
    let row = report_row(&report, "point-query");
    let names = report_targets(&report);
    let profile =
        |t: &str| row["cells"][names.iter().position(|n| n == t).unwrap()]["profile"].clone();
    for t in ["off", "pfs", "pg18"] {
        let p = profile(t);
        assert_eq!(p["of"], "server", "{t}: {p}");
        assert!(p["samples"].as_u64().unwrap() > 500, "{t}: {p}");
        let named = p["named_pct"].as_f64().unwrap();
        eprintln!("{t}: {named:.1}% of {} samples named", p["samples"]);
        assert!(named >= 95.0, "{t}: {p}");
    }
    // The performance schema's instrumentation is what grew.
    let p = profile("pfs");
    let base = profile("off");
    // Another test of this binary runs servers beside this one: a profiled
    // window it shared is not judged, and then nothing may be called past
    // noise — but the material growth is still the instrumentation's.
    let unjudged = !p["disturbed"].is_null() || !base["disturbed"].is_null();
    let diff = p["cpu_diff"].as_array().unwrap();
    let grown: Vec<&str> = diff
        .iter()
        .filter(|d| d["delta_us"].as_f64().unwrap() > 0.0)
        .filter(|d| d[if unjudged { "material" } else { "beyond_noise" }] == true)
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    if unjudged {
        assert!(
            diff.iter().all(|d| d["beyond_noise"] == false),
            "a disturbed window's differences were judged: {p}"
        );
    }
    // Its own functions (pfs.cc, pfs_instr.cc), and the timer every
    // instrumented event reads at its start and end.
    let instrumentation = |f: &str| {
        f.starts_with("pfs_")
            || f.contains("events_waits")
            || f.contains("PFS")
            || f.ends_with("_metadata_lock")
            || f.contains("timer")
            || f == "__vdso_clock_gettime"
    };
    assert!(
        grown.iter().any(|f| instrumentation(f)),
        "grown: {grown:?} (disturbed: {}, base: {}); {diff:?}",
        p["disturbed"],
        base["disturbed"]
    );
    // When the change is past 5% and judged (no other program disturbed
    // either window), the summary names them too (one window a side:
    // "not tested", with its sentence).
    let c = &row["cells"][names.iter().position(|n| n == "pfs").unwrap()];
    let judged =
        c["disturbed"].is_null() && c["base_disturbed"] != true && c["short_window"] != true;
    if c["relative"].as_f64().unwrap() <= 0.95 && judged {
        let s = serde_json::to_string(&report["summary_lines"]).unwrap();
        let mut named = s
            .split("µs/op in ")
            .skip(1)
            .map(|x| x.split([',', ';', '"']).next().unwrap_or(""));
        assert!(named.any(instrumentation), "{s}");
    }
}

/// MySQL 9.7 with the range optimizer given no memory: a list of a hundred
/// ids is read by a scan of the whole table. Its plan differs from the
/// default's (MySQL's JSON plans, version 2), and performance_schema says
/// what each call of the prepared statement did: a hundred times the rows
/// examined.
#[test]
fn a_mysql_statement_that_examines_the_whole_table_is_named_by_its_plan_and_rows() {
    share_machine();
    let Some(versions) = versions() else { return };
    let dir = shared_tempdir();
    let my = versions.join("mysql-9.7");
    let text = format!(
        "steps = [\"load\", \"random-points-100\"]\nclients = [1]\nseed = 1\n\
         [scale]\ntables = 1\nrows = 10000\n[duration]\nwarmup = \"200ms\"\nread = \"1s\"\n\
         [[target]]\nname = \"range\"\nengine = \"mysql\"\nbasedir = \"{my}\"\n\
         [[target]]\nname = \"scan\"\nengine = \"mysql\"\nbasedir = \"{my}\"\n\
         args = [\"--range-optimizer-max-mem-size=1\"]\n",
        my = my.display()
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let report = read_json(&out.join("report.json"));
    let row = report_row(&report, "random-points-100");
    let c = &row["cells"][1];
    let d = &c["plans_differ"][0];
    assert_eq!(
        d["base_shape"], "sbtest1: index_range_scan on PRIMARY",
        "{d}"
    );
    assert_eq!(d["shape"], "sbtest1: table", "{d}");
    let m = &c["server_statements"]["moved"];
    let rows = m
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["figure"] == "rows_examined")
        .unwrap_or_else(|| panic!("{}", c["server_statements"]));
    assert!(
        rows["sql"]
            .as_str()
            .unwrap()
            .starts_with("SELECT c FROM sbtest1 WHERE id IN (?,"),
        "{rows}"
    );
    assert_eq!(rows["base"], 100.0, "{rows}");
    assert!(rows["value"].as_f64().unwrap() >= 9000.0, "{rows}");
    let txt = std::fs::read_to_string(out.join("report.txt")).unwrap();
    assert!(
        txt.contains("WHERE id IN (?, ?, … 100 values): rows_examined/call 100 → 10000"),
        "{txt}"
    );
}

/// The seeds' subjects: Oracle MySQL 5.6, 5.7 and 8.0 (Maven Central's
/// generic builds) beside 9.7, each with its family's config.
const MYSQL: [(&str, &str, &str); 4] = [
    ("my56", "mysql-5.6.14", "mysql-5.6.cnf"),
    ("my57", "mysql-5.7.22", "mysql-5.7.cnf"),
    ("my80", "mysql-8.0.33", "mysql-8.0.cnf"),
    ("my97", "mysql-9.7", "mysql-8.0.cnf"),
];

/// A plan of `head` on the four MySQL builds, each with its family's config.
fn on_every_mysql(versions: &std::path::Path, head: &str) -> String {
    let configs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/configs");
    let mut text = head.to_string();
    for (name, build, config) in MYSQL {
        text += &format!(
            "\n[[target]]\nname = \"{name}\"\nengine = \"mysql\"\nbasedir = \"{}\"\nconfig = \"{}\"\n",
            versions.join(build).display(),
            configs.join(config).display()
        );
    }
    text
}

/// Every step result of a run, failed ones named.
fn assert_no_step_failed(out: &std::path::Path) -> usize {
    let files = step_files(out);
    let failed: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let r = read_json(&out.join("steps").join(f));
            r["failed"].as_str().map(|why| format!("{f}: {why}"))
        })
        .collect();
    assert!(failed.is_empty(), "failed steps:\n{}", failed.join("\n"));
    files.len()
}

/// Regression (issue 46): relbench had run none of the seeds' studies on
/// MySQL older than 9.7. Every step of the sysbench sequence, a few events
/// each, on 5.6, 5.7, 8.0 and 9.7; the settings read back say what each
/// version does by default (8.0 writes a binary log, 5.6 does not).
#[test]
fn mysql_5_6_5_7_8_0_and_9_7_run_the_whole_sysbench_sequence() {
    share_machine();
    let Some(versions) = versions() else { return };
    let dir = shared_tempdir();
    let plan = write_plan(
        dir.path(),
        &on_every_mysql(
            &versions,
            "suite = \"sysbench\"\nclients = [2]\n[scale]\ntables = 1\nrows = 10000\n\
             [duration]\nwarmup = \"0s\"\nevents = 40\n\
             [settle]\nbase = \"0s\"\nper_million_rows = \"0s\"\nmax = \"2s\"\n",
        ),
    );
    let out = dir.path().join("out");
    let t0 = std::time::Instant::now();
    run_quiet(&plan, &out).assert().success();
    eprintln!(
        "the sysbench sequence on 4 MySQL builds in {:.0} s",
        t0.elapsed().as_secs_f64()
    );
    let n = assert_no_step_failed(&out);
    // 40 steps of the sequence on each.
    assert!(n >= 4 * 40, "{n} step files");
    let run = read_json(&out.join("run.json"));
    let setting = |i: usize, k: &str| run["targets"][i]["settings"][k].as_str().map(String::from);
    for (i, (name, build, _)) in MYSQL.iter().enumerate() {
        let v = run["targets"][i]["version"].as_str().unwrap_or_default();
        let want = build.trim_start_matches("mysql-");
        assert!(v.starts_with(&format!("mysql {want}")), "{name}: {v}");
    }
    assert_eq!(setting(0, "log_bin").as_deref(), Some("OFF"), "5.6");
    assert_eq!(setting(1, "log_bin").as_deref(), Some("OFF"), "5.7");
    assert_eq!(setting(2, "log_bin").as_deref(), Some("ON"), "8.0");
    // MySQL 8.0 on has local_infile off: the load fell back to multi-row
    // INSERTs (error 3948); 5.6 and 5.7 took LOAD DATA.
    let method = |i: usize| {
        run["targets"][i]["config"]["relbench.load_method"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(method(0).starts_with("bulk"), "{}", method(0));
    assert_eq!(method(2), "multi-row INSERT");
    assert_eq!(method(3), "multi-row INSERT");
    // Each family's redo settings, as its config gave them.
    assert_eq!(
        setting(0, "innodb_log_files_in_group").as_deref(),
        Some("2")
    );
    assert_eq!(
        setting(2, "innodb_redo_log_capacity").as_deref(),
        Some("268435456")
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| log_bin | ON | OFF |"), "{md}");
}

/// The Insert Benchmark on MySQL 5.6 → 9.7 (seed 003 sets MySQL beside
/// MariaDB on it).
#[test]
fn mysql_5_6_to_9_7_run_the_insert_benchmark() {
    share_machine();
    let Some(versions) = versions() else { return };
    let dir = shared_tempdir();
    let insert = write_plan(
        dir.path(),
        &on_every_mysql(
            &versions,
            // Each kind of its steps (qr500 … qp1000 are qr100 and qp100
            // at other rates).
            "steps = [\"l.i0\", \"l.x\", \"l.i1\", \"l.i2\", \"qr100\", \"qp100\"]\n\
             clients = [1]\n[scale]\nrows = 3000\n\
             [insert]\nl_i1_rows = 1000\nl_i2_rows = 200\n\
             [duration]\nwarmup = \"0s\"\nread = \"300ms\"\n\
             [settle]\nbase = \"0s\"\nper_million_rows = \"0s\"\nmax = \"2s\"\n",
        ),
    );
    let out = dir.path().join("insert");
    let t0 = std::time::Instant::now();
    run_quiet(&insert, &out).assert().success();
    eprintln!(
        "the Insert Benchmark on 4 MySQL builds in {:.0} s",
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(assert_no_step_failed(&out), 4 * 6);
}

/// LinkBench on MySQL 5.6 → 9.7 (apart from the Insert Benchmark, so the
/// two run side by side).
#[test]
fn mysql_5_6_to_9_7_run_linkbench() {
    share_machine();
    let Some(versions) = versions() else { return };
    let dir = shared_tempdir();
    let linkbench = write_plan(
        dir.path(),
        &on_every_mysql(
            &versions,
            // Five links a node: the original's distribution loads about
            // a million links at any scale (its most linked node has
            // 961,963), 167 s of this binary's 478 on four builds;
            // tests/conformance.rs loads it, on MariaDB.
            "steps = [\"lb.load\", \"lb.request\", \"lb.check\"]\n\
             [linkbench]\nmaxid1 = 2001\nloaders = 2\nrequesters = 2\nrequests = 300\n\
             nlinks_func = \"const\"\nnlinks_default = 5\n\
             [duration]\nwarmup = \"0s\"\n",
        ),
    );
    let out = dir.path().join("linkbench");
    let t0 = std::time::Instant::now();
    run_quiet(&linkbench, &out).assert().success();
    eprintln!(
        "LinkBench on 4 MySQL builds in {:.0} s",
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(assert_no_step_failed(&out), 4 * 3);
    for (name, _, _) in MYSQL {
        let check = read_json(&out.join(format!("steps/{name}/r1-03-lb.check-c1.json")));
        assert_eq!(
            check["statements"]["inconsistent"].as_u64().unwrap_or(0),
            0,
            "{name}: {check}"
        );
    }
}

/// TPC-C on MySQL 5.6 → 9.7, MariaDB 10.2 and PostgreSQL 12 and 18: the
/// row-value IN lists of its batched statements (go-tpc's shapes), each
/// engine's placeholders and locks, and conditions 1–4 after a run with
/// two clients on two warehouses.
#[test]
fn mysql_5_6_to_9_7_mariadb_10_2_and_postgres_12_and_18_run_tpcc() {
    share_machine();
    let Some(versions) = versions() else { return };
    let dir = shared_tempdir();
    let mut text = on_every_mysql(
        &versions,
        "steps = [\"tpcc.load\", \"tpcc.run\", \"tpcc.check\"]\nclients = [2]\nseed = 2\n\
         [tpcc]\nwarehouses = 2\ntransactions = 150\nitems = 1000\ndistricts = 3\ncustomers = 40\norders = 40\n\
         [duration]\nwarmup = \"0s\"\n",
    );
    for (name, build) in [
        ("ma102", "mariadb-10.2.11"),
        ("pg12", "postgres-12.22"),
        ("pg18", "postgres-18.0"),
    ] {
        let engine = if name.starts_with("pg") {
            "postgres"
        } else {
            "mariadb"
        };
        text += &format!(
            "\n[[target]]\nname = \"{name}\"\nengine = \"{engine}\"\nbasedir = \"{}\"\n",
            versions.join(build).display()
        );
    }
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("tpcc");
    let t0 = std::time::Instant::now();
    run_quiet(&plan, &out).assert().success();
    eprintln!("TPC-C on 7 builds in {:.0} s", t0.elapsed().as_secs_f64());
    assert_eq!(assert_no_step_failed(&out), 7 * 3);
    for name in ["my56", "my57", "my80", "my97", "ma102", "pg12", "pg18"] {
        let run = read_json(&out.join(format!("steps/{name}/r1-02-tpcc.run-c2.json")));
        assert_eq!(
            run["latency"]["delivery"]["count"].as_u64().map(|n| n > 0),
            Some(true),
            "{name}"
        );
        for k in run["errors"].as_object().unwrap().keys() {
            assert!(
                k.ends_with("/deadlock") || k.ends_with("/busy"),
                "{name}: {k}: {}",
                run["error_samples"]
            );
        }
        let check = read_json(&out.join(format!("steps/{name}/r1-03-tpcc.check-c1.json")));
        assert!(
            check["tallies"]["check/wrong"].is_null(),
            "{name}: {}",
            check["error_samples"]
        );
    }
}

/// A server by URL with a password on each MySQL family, authenticated
/// as each version does by default: 5.6 and 5.7 with
/// mysql_native_password, 8.0 with caching_sha2_password (over plain TCP:
/// the full authentication of its first login). A whole run by URL is
/// `a_mysql_9_7_target_by_url_authenticates_fully_with_caching_sha2_over_tcp`.
#[test]
fn url_targets_on_mysql_5_6_5_7_and_8_0_authenticate_with_their_default_plugin() {
    use relbench::db::mysql::wire::{Address, Opts, WireConn};
    use relbench::db::server::mariadb::MariaDb;
    use relbench::db::tls::Tls;

    share_machine();
    let Some(versions) = versions() else { return };
    let dir = shared_tempdir();
    let secret = "s3cret-Pa55word";
    for (name, build, plugin) in [
        ("my56", "mysql-5.6.14", "mysql_native_password"),
        ("my57", "mysql-5.7.22", "mysql_native_password"),
        ("my80", "mysql-8.0.33", "caching_sha2_password"),
    ] {
        let server = server_elsewhere(
            dir.path(),
            name,
            versions.join(build),
            "mysql",
            Box::new(MariaDb),
        );
        let mut root = WireConn::connect(&MariaDb::admin(&server.rt)).unwrap();
        root.execute_text(&format!(
            "CREATE USER 'bench'@'127.0.0.1' IDENTIFIED BY '{secret}'"
        ))
        .unwrap();
        root.execute_text(
            "CREATE DATABASE IF NOT EXISTS sbtest; GRANT ALL ON sbtest.* TO 'bench'@'127.0.0.1'",
        )
        .unwrap();
        let got = root
            .query_text("SELECT plugin FROM mysql.user WHERE user = 'bench'")
            .unwrap();
        assert_eq!(got[0][0].as_deref(), Some(plugin), "{name}");
        // relbench's client, as a URL target connects: over TCP with
        // the password, no TLS (8.0's first login then needs the full
        // authentication), and refused with a wrong one.
        let tcp = |password: &str| Opts {
            address: Address::Tcp {
                host: "127.0.0.1".into(),
                port: server.rt.port,
            },
            user: "bench".into(),
            password: Some(password.into()),
            database: Some("sbtest".into()),
            tls: Tls::Off,
            found_rows: true,
        };
        let mut c = WireConn::connect(&tcp(secret)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let me = c.query_text("SELECT CURRENT_USER()").unwrap();
        assert_eq!(me[0][0].as_deref(), Some("bench@127.0.0.1"), "{name}");
        let wrong = WireConn::connect(&tcp("wrong")).err().expect("refused");
        assert!(wrong.message.contains("1045"), "{name}: {}", wrong.message);
    }
}
