//! LinkBench end to end on embedded SQLite: the load's rows, the request
//! mix over 100,000 seeded requests, counts that agree with the links after
//! a run with deletes, the report's LinkBench tables, and plans it refuses.
//! (Managed MariaDB and PostgreSQL are in servers.rs.)

mod common;

use common::*;

const TINY: &str = include_str!("fixtures/linkbench-tiny.toml");

fn count(db: &std::path::Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn the_suite_loads_runs_the_originals_mix_and_its_counts_agree_with_its_links() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lb.db");
    let text = TINY.replace(
        "engine = \"sqlite\"",
        &format!("engine = \"sqlite\"\npath = \"{}\"", db.display()),
    );
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("out");
    run_quiet(&plan, &out).assert().success();
    let files = step_files(&out);
    assert_eq!(files.len(), 4, "{files:?}");
    let step = |name: &str| {
        let f = files
            .iter()
            .find(|f| f.contains(&format!("-{name}-")))
            .unwrap_or_else(|| panic!("{name} missing: {files:?}"));
        let r = read_json(&out.join("steps").join(f));
        assert!(r["failed"].is_null(), "{f}: {}", r["failed"]);
        r
    };

    // 2,000 nodes; 4 links each split over two types as the original
    // splits them (3 + 3: its leftOver arithmetic), and a count per type.
    let load = step("lb.load");
    assert_eq!(load["clients"], 2);
    assert_eq!(load["unit"], "rows/s");
    assert_eq!(load["tallies"]["load_node/rows"], 2000);
    assert_eq!(load["tallies"]["load_link/rows"], 12000);
    assert_eq!(load["tallies"]["load_count/rows"], 4000);
    let rows_per_sec = load["throughput"].as_f64().unwrap();
    let secs = load["secs"].as_f64().unwrap();
    assert!(
        (rows_per_sec * secs - 18000.0).abs() < 1.0,
        "{rows_per_sec} × {secs}"
    );

    // The mix over 100,000 requests is the original's within a point.
    let req = step("lb.request");
    let st = req["statements"].as_object().unwrap();
    let total: u64 = st.values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(total, 100_000, "{st:?}");
    assert_eq!(req["events"], 100_000);
    let weights = [
        ("add_node", 2.573_278_9),
        ("update_node", 7.366_437),
        ("delete_node", 1.011_591_4),
        ("get_node", 12.932_668_3),
        ("add_link", 8.988_660_1),
        ("delete_link", 2.990_766_4),
        ("update_link", 8.012_212_5),
        ("count_link", 4.886_356_7),
        ("multiget_link", 0.526_114_2),
        ("get_link_list", 50.711_914_5),
    ];
    for (op, pct) in weights {
        let got = 100.0 * st[op].as_u64().unwrap() as f64 / total as f64;
        assert!((got - pct).abs() < 1.0, "{op}: {got:.2}% against {pct}%");
        let l = &req["latency"][op];
        for p in [
            "p25_us", "p50_us", "p75_us", "p95_us", "p99_us", "max_us", "mean_us",
        ] {
            assert!(l[p].as_f64().unwrap() > 0.0, "{op} {p}: {l}");
        }
    }
    // Deletes and updates of links that were not there are counted.
    let nf = &req["tallies"];
    assert!(nf["delete_link/not-found"].as_u64().unwrap() > 0, "{nf}");
    assert!(nf["update_link/not-found"].as_u64().unwrap() > 0, "{nf}");

    // Every id checked, none wrong; and the database agrees, all ids.
    let check = step("lb.check");
    assert_eq!(check["tallies"]["check/rows"], 2000);
    assert!(
        check["tallies"]["check/wrong"].is_null(),
        "{}",
        check["tallies"]
    );
    let hidden = count(&db, "SELECT COUNT(*) FROM linktable WHERE visibility = 0");
    assert!(hidden > 0, "the run hid links (delete_link)");
    let disagree = count(
        &db,
        "SELECT COUNT(*) FROM counttable c WHERE c.count <> (SELECT COUNT(*) FROM linktable l \
         WHERE l.link_type = c.link_type AND l.id1 = c.id AND l.visibility = 1)",
    );
    assert_eq!(disagree, 0);
    let added = count(&db, "SELECT COUNT(*) FROM nodetable WHERE id > 2000");
    assert!(added > 0, "add_node made new ids past the loaded ones");

    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for part in [
        "## LinkBench",
        "### Load",
        "| wal | 2 | 2000 | 12000 |",
        "### Requests per second",
        "### Latency per operation",
        "| lb.request | wal | get_link_list |",
        "### Consistency",
        "| wal | 2000 | 0 | consistent",
    ] {
        assert!(md.contains(part), "{part} missing from the report:\n{md}");
    }
}

#[test]
fn a_check_finds_counts_that_disagree_with_the_links() {
    // Load, then break a count by hand, then check: the step says which
    // ids and the report says inconsistent.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("lb.db");
    let text = format!(
        "steps = [\"lb.load\"]\nseed = 1\n[linkbench]\nmaxid1 = 501\nloaders = 1\nnlinks_func = \"const\"\nnlinks_default = 2\n\
         [[target]]\nname = \"t\"\nengine = \"sqlite\"\npath = \"{}\"\n",
        db.display()
    );
    let plan = write_plan(dir.path(), &text);
    run_quiet(&plan, dir.path().join("a")).assert().success();
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute("UPDATE counttable SET count = count + 1 WHERE id = 7", [])
        .unwrap();
    drop(c);
    let text = text.replace("steps = [\"lb.load\"]", "steps = [\"lb.check\"]");
    let plan = write_plan(dir.path(), &text);
    let out = dir.path().join("b");
    run_quiet(&plan, &out).assert().success();
    let f = step_files(&out)
        .into_iter()
        .find(|f| f.contains("lb.check"))
        .unwrap();
    let r = read_json(&out.join("steps").join(f));
    assert_eq!(r["tallies"]["check/rows"], 500);
    assert_eq!(r["tallies"]["check/wrong"], 2, "both types of id 7");
    assert!(r["error_samples"]["check/wrong-result"]
        .as_str()
        .unwrap()
        .contains("ids 1..101"));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("INCONSISTENT: 2 wrong"), "{md}");
}

#[test]
fn wrong_linkbench_plans_say_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    for (extra, position, message) in [
        ("startid1 = 9\nmaxid1 = 5", "4:10", "maxid1 = 5 must be above startid1 = 9"),
        ("nlinks_func = \"pareto\"", "3:15", "unknown nlinks_func \"pareto\""),
        ("nlinks_func = \"const\"", "3:15", "needs nlinks_default"),
        ("getlinklist = 0\ngetnode = 0\naddlink = 0\ndeletelink = 0\nupdatelink = 0\ncountlink = 0\ngetlink = 0\naddnode = 0\nupdatenode = 0\ndeletenode = 0", "", "the operation weights add to 0"),
        ("requesters = 0", "3:14", "requesters must be from 1 to 1024"),
        ("link_datasize = \"big\"", "3:17", "link_datasize must be a number"),
        ("nodes = 5", "", "unknown key `nodes`"),
        ("load = \"fast\"", "3:8", "unknown load \"fast\""),
        ("count_type = \"smallint\"", "3:14", "\"int\" (the original's DDL) or \"bigint\" (Small Datum's)"),
    ] {
        let text = format!(
            "suite = \"linkbench\"\n[linkbench]\n{extra}\n\n[[target]]\nname = \"t\"\nengine = \"sqlite\"\n"
        );
        check_refuses(dir.path(), &text, position, message);
    }
    // LinkBench's steps and sysbench's run on different tables.
    check_refuses(
        dir.path(),
        "steps = [\"lb.load\", \"point-query\"]\n[[target]]\nname = \"t\"\nengine = \"sqlite\"\n",
        "1:9",
        "the steps mix LinkBench's with sysbench's",
    );
}
