//! TPC-C end to end through the binary: the suite on embedded SQLite (the
//! mix over 10,000 transactions, the rollbacks, the report's tpmC and
//! per-transaction tables, the check), on managed MariaDB and PostgreSQL
//! (conditions 1–4 hold after a run with clients on two warehouses), and
//! the `[tpcc]` plans it refuses.

mod common;

use common::*;

/// A population small enough for a debug build: each departure from the
/// specification is a `[tpcc]` key.
const SMALL: &str = "items = 2000\ndistricts = 4\ncustomers = 120\norders = 120";

fn step(out: &std::path::Path, files: &[String], name: &str) -> serde_json::Value {
    let f = files
        .iter()
        .find(|f| f.contains(&format!("-{name}-")))
        .unwrap_or_else(|| panic!("{name} missing: {files:?}"));
    read_json(&out.join("steps").join(f))
}

#[test]
fn the_suite_runs_the_specs_mix_rolls_back_one_new_order_in_a_hundred_and_holds_its_conditions() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "suite = \"tpcc\"\nseed = 11\nclients = [2]\n[tpcc]\nwarehouses = 2\ntransactions = 5000\n{SMALL}\n\
         [settle]\nbase = \"0s\"\nper_million_rows = \"0s\"\nmax = \"1s\"\n\
         [[target]]\nname = \"lite\"\nengine = \"sqlite\"\n"
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let files = step_files(&out);
    assert_eq!(files.len(), 4, "{files:?}");

    // The items once, then both warehouses, each on a loader.
    let load = step(&out, &files, "tpcc.load");
    assert!(load["failed"].is_null(), "{}", load["failed"]);
    assert_eq!(load["unit"], "rows/s");
    assert_eq!(load["tallies"]["load_items/rows"], 2000);
    let per_warehouse = load["tallies"]["load_warehouse/rows"].as_u64().unwrap();
    // 2 × (1 + 2000 stock + 4 districts × (1 + 120 customers + 120
    // history + 120 orders + 36 new orders)) + the order lines (5–15 each).
    let fixed = 2 * (1 + 2000 + 4 * (1 + 120 + 120 + 120 + 36));
    assert!(
        (fixed + 2 * 4 * 120 * 5..=fixed + 2 * 4 * 120 * 15).contains(&per_warehouse),
        "{per_warehouse}"
    );

    // 10,000 transactions: the mix exactly, every hundred a client deals.
    // Two writers on one SQLite file: a transaction may wait out the busy
    // timeout (SQLite's busy handler polls, and the other writer takes the
    // lock back between polls), and is then counted failed, nothing else.
    // Regression (fresh-clone CI): 1 of 10,000 "database is locked".
    let run = step(&out, &files, "tpcc.run");
    let (done, failed) = (
        run["events"].as_u64().unwrap(),
        run["failed_events"].as_u64().unwrap(),
    );
    assert_eq!(done + failed, 10_000, "{}", run["error_samples"]);
    assert!(failed <= 100, "{failed}: {}", run["error_samples"]);
    for k in run["errors"].as_object().unwrap().keys() {
        assert!(k.ends_with("/busy"), "{k}: {}", run["error_samples"]);
    }
    let lat = &run["latency"];
    let count = |tx: &str| lat[tx]["count"].as_u64().unwrap_or(0);
    for (tx, pct) in [
        ("new-order", 45.0),
        ("payment", 43.0),
        ("order-status", 4.0),
        ("delivery", 4.0),
        ("stock-level", 4.0),
    ] {
        let got = count(tx) as f64 / 100.0;
        assert!((got - pct).abs() <= 1.0, "{tx}: {got}% against {pct}%");
        assert!(lat[tx]["p90_us"].as_f64().unwrap() > 0.0, "{tx}");
    }
    // 1% of new orders end on an unused item and roll back.
    let rolled = run["tallies"]["new-order/not-found"].as_u64().unwrap();
    assert!(
        (15..=80).contains(&rolled),
        "{rolled} of {}",
        count("new-order")
    );

    let check = step(&out, &files, "tpcc.check");
    assert!(check["failed"].is_null(), "{}", check["failed"]);
    assert_eq!(check["tallies"]["check/rows"], 2);
    assert!(
        check["tallies"]["check/wrong"].is_null(),
        "{}",
        check["error_samples"]
    );

    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for part in [
        "## TPC-C",
        "### tpmC",
        "| tpcc.run | 2 | lite |",
        "### Response time per transaction",
        "| tpcc.run | lite | new-order |",
        "| lite | 2 | conditions 1–4 hold",
    ] {
        assert!(md.contains(part), "{part} missing from the report:\n{md}");
    }
    let json = read_json(&out.join("report.json"));
    let runs = &json["tpcc"]["runs"][0];
    assert!(runs["tpmc"].as_f64().unwrap() > 0.0, "{runs}");
    assert!(runs["tpm_total"].as_f64().unwrap() > runs["tpmc"].as_f64().unwrap());
}

#[test]
fn a_run_on_managed_mariadb_and_postgres_keeps_conditions_one_to_four() {
    let dir = shared_tempdir();
    let text = format!(
        "suite = \"tpcc\"\nseed = 12\nclients = [3]\n[tpcc]\nwarehouses = 2\ntransactions = 400\n{SMALL}\n\
         [settle]\nbase = \"0s\"\nper_million_rows = \"0s\"\nmax = \"1s\"\n\
         [[target]]\nname = \"innodb\"\nengine = \"mariadb\"\nbasedir = \"/usr\"\n\
         [[target]]\nname = \"pg\"\nengine = \"postgres\"\nbasedir = \"/usr/lib/postgresql/15\"\n"
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let files = step_files(&out);
    assert_eq!(files.len(), 2 * 4, "{files:?}");
    for f in &files {
        let r = read_json(&out.join("steps").join(f));
        assert!(r["failed"].is_null(), "{f}: {}", r["failed"]);
        if f.contains("-tpcc.run-") {
            // Three clients, two warehouses: clients 1 and 3 share one, and
            // remote lines and payments cross: a deadlock or lock wait may
            // end a transaction, nothing else.
            for k in r["errors"].as_object().unwrap().keys() {
                assert!(
                    k.ends_with("/deadlock") || k.ends_with("/busy"),
                    "{f}: {k}: {}",
                    r["error_samples"]
                );
            }
            assert!(
                r["metrics"]["server_cpu_us_per_op"].as_f64().is_some(),
                "{f}"
            );
        }
        if f.contains("-tpcc.check-") {
            assert!(
                r["tallies"]["check/wrong"].is_null(),
                "{f}: {}",
                r["error_samples"]
            );
        }
    }
}

#[test]
fn a_tpcc_plan_that_cannot_run_is_refused_where_it_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let target = "[[target]]\nname = \"t\"\nengine = \"sqlite\"\n";
    check_refuses(
        dir.path(),
        &format!("suite = \"tpcc\"\n[tpcc]\ncustomers = 100\norders = 300\n{target}"),
        "4:10",
        "orders = 300 is more than customers = 100",
    );
    check_refuses(
        dir.path(),
        &format!("suite = \"tpcc\"\n[tpcc]\nwarehouse = 2\n{target}"),
        "3:1",
        "unknown key `warehouse`",
    );
    check_refuses(
        dir.path(),
        &format!("steps = [\"tpcc.load\", \"point-query\"]\n{target}"),
        "1:9",
        "the steps mix TPC-C's with sysbench's",
    );
    // `relbench list` shows the suite and its keys.
    let listed = relbench().arg("list").output().unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(
        text.contains("tpcc.load → settle → tpcc.run → tpcc.check"),
        "{text}"
    );
    assert!(text.contains("warehouses"), "{text}");
}

/// The shape of a statement as the server logged it, with what relbench
/// and go-tpc write differently by design made alike (each in
/// docs/guide/tpcc.md's table): the server's clock where go-tpc binds its
/// own, TiDB's hint, and a list of any length as one item.
fn tpcc_shape(sql: &str) -> String {
    // A negative literal is a literal (go-tpc's unused item is -1).
    let sql = sql.replace(",-", ",");
    let mut s = shape(&sql).0.replace("current_timestamp", "?");
    if let (Some(a), Some(b)) = (s.find("/*+"), s.find("*/")) {
        s.replace_range(a..b + 2, "");
    }
    for unit in ["(?,?,?,?,?,?,?,?,?)", "(?,?,?)", "(?,?)"] {
        let twice = format!("{unit},{unit}");
        while s.contains(&twice) {
            s = s.replace(&twice, unit);
        }
    }
    s
}

/// The TPC-C statements the benchmark user's connections sent, by shape,
/// with how many times.
fn tpcc_shapes(lines: &[(u32, String, String)]) -> std::collections::BTreeMap<String, u64> {
    let tables = relbench::workload::tpcc::schema::TABLES;
    let mut out = std::collections::BTreeMap::new();
    for (_, cmd, sql) in lines {
        if cmd != "Execute" && cmd != "Query" {
            continue;
        }
        let s = tpcc_shape(sql);
        // The benchmark's statements, not relbench's reads of the server
        // (EXPLAIN, SHOW STATUS, information_schema) or the log's own.
        let ours = tables.iter().any(|t| s.contains(t))
            && !s.starts_with("explain")
            && !s.contains("information_schema");
        // BEGIN is relbench's words, START TRANSACTION go-sql-driver's;
        // a ROLLBACK ends 1% of new orders, which 300 transactions may
        // not reach: left out.
        let s = if s == "starttransaction" {
            "begin".into()
        } else {
            s
        };
        if ours || matches!(s.as_str(), "begin" | "commit") {
            *out.entry(s).or_default() += 1;
        }
    }
    out
}

#[test]
fn tpcc_run_sends_go_tpcs_statements_to_the_same_data() {
    use relbench::db::server::mariadb::MariaDb;
    let Some(go_tpc) = std::env::var_os("RELBENCH_GO_TPC") else {
        eprintln!(
            "not run: set RELBENCH_GO_TPC to pingcap/go-tpc v1.0.7's binary (./test builds it)"
        );
        return;
    };
    const SECRET: &str = "tpcc-secret";
    let dir = shared_tempdir();
    let server = server_elsewhere(dir.path(), "maria", "/usr", "mysql", Box::new(MariaDb));
    bench_user(&server, SECRET);
    let port = server.rt.port;
    let logs = log_dir(dir.path(), "mysql");
    let logged = |name: &str, f: &mut dyn FnMut()| general_log(&server, &logs.join(name), f);
    let relbench_run = |steps: &str, out: &str| {
        let plan = write_plan(
            dir.path(),
            &format!(
                "steps = [{steps}]\nseed = 5\nclients = [1]\n[tpcc]\nwarehouses = 1\nloaders = 1\ntransactions = 300\n\
                 [duration]\nwarmup = \"0s\"\n[[target]]\nname = \"maria\"\nengine = \"mariadb\"\n\
                 url = \"mysql://bench@127.0.0.1:{port}/sbtest\"\npassword_env = \"TPCC_SECRET\"\n"
            ),
        );
        run_quiet(&plan, dir.path().join(out))
            .env("TPCC_SECRET", SECRET)
            .assert()
            .success();
    };
    // One warehouse at the specification's population (go-tpc draws its
    // items and customers over all of it), loaded by relbench.
    relbench_run("\"tpcc.load\"", "load");
    let theirs = tpcc_shapes(&logged("go-tpc.log", &mut || {
        let out = std::process::Command::new(&go_tpc)
            .args(["tpcc", "run", "-H", "127.0.0.1", "-P", &port.to_string()])
            .args([
                "-U",
                "bench",
                "-p",
                SECRET,
                "-D",
                "sbtest",
                "--warehouses",
                "1",
            ])
            .args(["-T", "1", "--count", "300", "--interval", "1000s"])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && !said.contains("_ERR"),
            "go-tpc: {said}"
        );
    }));
    let ours = tpcc_shapes(&logged("relbench.log", &mut || {
        relbench_run("\"tpcc.run\"", "run")
    }));
    let only = |a: &std::collections::BTreeMap<String, u64>,
                b: &std::collections::BTreeMap<String, u64>| {
        a.keys()
            .filter(|k| !b.contains_key(*k))
            .cloned()
            .collect::<Vec<_>>()
    };
    // Every statement either sends, the other sends too: 28 shapes (the
    // items, stock and lines of an order of any length as one each),
    // besides BEGIN/COMMIT/ROLLBACK.
    assert!(ours.len() >= 28, "{ours:#?}");
    assert_eq!(
        only(&ours, &theirs),
        Vec::<String>::new(),
        "relbench's, not go-tpc's"
    );
    assert_eq!(
        only(&theirs, &ours),
        Vec::<String>::new(),
        "go-tpc's, not relbench's"
    );
    // Each statement about as often in 300 transactions: within five
    // standard deviations of counting (a Poisson count's) and 10% for the
    // mix, which go-tpc draws at random and relbench deals exactly. A
    // statement of every new order or payment (over a hundred) sent twice
    // where go-tpc sends it once is far outside; a rare one (a dozen) is
    // not told this way, and the shape lists above hold those.
    // Regression (fresh-clone CI): a 25% band failed on a payment's
    // c_data read, 20 against 9 of its 10% of bad-credit customers.
    for (k, &a) in &ours {
        let (a, b) = (a as f64, theirs[k] as f64);
        assert!(
            (a - b).abs() <= 5.0 * (a + b).sqrt() + 0.1 * a.max(b),
            "{k}: {a} in 300 transactions here, {b} from go-tpc"
        );
    }
}
