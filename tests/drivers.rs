//! What a client reads back from each engine it drives: a prepared
//! query's rows, every value as text as the engine writes it, on managed
//! MariaDB and PostgreSQL (Debian's, started here on private ports and
//! datadirs) and on embedded SQLite — prepared and sent as text alike.
//! TPC-C's clients are driven by such values (the next order id, the
//! middle one of a customer's namesakes); sysbench's only count rows.
//! And TPC-C's nine tables, as each engine is given them.

mod common;

use common::*;
use relbench::db::protocol::ProtocolConn;
use relbench::db::{Conn, Dialect, Param};
use relbench::workload::tpcc::schema;

type Rows = Vec<Vec<Option<String>>>;

/// Debian 12's PostgreSQL.
const PG_BASEDIR: &str = "/usr/lib/postgresql/15";

/// Makes a table of every kind of value TPC-C reads, fills two rows (the
/// second mostly NULL), and reads them back with one prepared query, then
/// with the same query sent as text.
fn read_back(conn: &mut dyn Conn, decimal: &str, float: &str) -> (Rows, Rows) {
    conn.batch("DROP TABLE IF EXISTS kinds").unwrap();
    conn.batch(&format!(
        "CREATE TABLE kinds (id INT PRIMARY KEY, price {decimal}, ratio {float}, \
         name VARCHAR(16), big BIGINT)"
    ))
    .unwrap();
    conn.batch(
        "INSERT INTO kinds VALUES (1, 12.50, 0.25, 'BARBAR', 3000000000), \
         (2, NULL, NULL, 'O''Neil', NULL)",
    )
    .unwrap();
    // Each engine's placeholder: PostgreSQL's `$n`, the others' `?`.
    let p = if decimal.starts_with("NUMERIC") {
        "$1"
    } else {
        "?"
    };
    let q = format!("SELECT id, price, ratio, name, big FROM kinds WHERE id >= {p} ORDER BY id");
    let stmt = conn.prepare(&q).unwrap();
    let prepared = conn.query_rows(stmt, &[Param::Int(1)]).unwrap();
    // The row count alone still comes back as before.
    assert_eq!(conn.query(stmt, &[Param::Int(2)]).unwrap(), 1);
    conn.set_plain(true);
    let stmt = conn.prepare(&q).unwrap();
    let text = conn.query_rows(stmt, &[Param::Int(1)]).unwrap();
    conn.set_plain(false);
    // A prepared query that fails as it runs (its table dropped since)
    // is an error, not rows, and leaves nothing kept for the next one.
    let gone = conn.prepare(&q).unwrap();
    conn.batch("DROP TABLE kinds").unwrap();
    assert!(conn.query_rows(gone, &[Param::Int(1)]).is_err());
    let one = conn.prepare("SELECT 1").unwrap();
    assert_eq!(
        conn.query_rows(one, &[]).unwrap(),
        vec![vec![Some("1".to_string())]]
    );
    (prepared, text)
}

/// TPC-C's tables are made as the engine is given them, a small
/// population loaded into them holds consistency conditions 1–4, and
/// they are dropped.
fn tpcc_tables(conn: &mut dyn Conn, d: Dialect, options: &str) {
    use relbench::workload::dist::rng;
    use relbench::workload::tpcc::{check, load};
    let small = load::Population {
        items: 300,
        districts: 2,
        customers: 30,
        orders: 30,
    };
    let (c, _) = load::all(conn, d, options, &mut rng(9, 0), &small, 2)
        .unwrap_or_else(|e| panic!("making and loading TPC-C's tables: {e}"));
    assert_eq!(check::violations(conn).unwrap(), Vec::<String>::new());
    // The five transactions, a client a warehouse, keep them.
    use relbench::workload::tpcc::client::TpccClient;
    let mut clients: Vec<TpccClient> = (1..=2)
        .map(|w| TpccClient::new(conn, d, w, 2, small, c, rng(9, u64::from(w))).unwrap())
        .collect();
    let mut rec = relbench::measure::Recorder::new(5, 10);
    for i in 0..400 {
        clients[i % 2]
            .transaction(conn, &mut rec)
            .unwrap_or_else(|e| panic!("transaction {i}: {e:?}"));
    }
    assert_eq!(check::violations(conn).unwrap(), Vec::<String>::new());
    // A price reads back as the engine keeps it.
    let stmt = conn
        .prepare(if d == Dialect::Postgres {
            "SELECT i_price, i_data FROM item WHERE i_id = $1"
        } else {
            "SELECT i_price, i_data FROM item WHERE i_id = ?"
        })
        .unwrap();
    let rows = conn.query_rows(stmt, &[Param::Int(7)]).unwrap();
    let price: f64 = rows[0][0].as_deref().unwrap().parse().unwrap();
    assert!((1.0..=100.0).contains(&price), "{rows:?}");
    for s in schema::drop() {
        conn.batch(&s).unwrap();
    }
}

fn want(price: &str, ratio: &str) -> Rows {
    let s = |v: &str| Some(v.to_string());
    vec![
        vec![s("1"), s(price), s(ratio), s("BARBAR"), s("3000000000")],
        vec![s("2"), None, None, s("O'Neil"), None],
    ]
}

#[test]
fn a_prepared_querys_rows_read_back_as_text_on_mariadb() {
    use relbench::db::mysql::wire::WireConn;
    use relbench::db::server::mariadb::MariaDb;
    let dir = shared_tempdir();
    let server = server_elsewhere(dir.path(), "maria", "/usr", "mysql", Box::new(MariaDb));
    let mut wire = WireConn::connect(&MariaDb::admin(&server.rt)).unwrap();
    wire.execute_text("CREATE DATABASE rows_back; USE rows_back")
        .unwrap();
    let mut conn = ProtocolConn::new(wire);
    let (prepared, text) = read_back(&mut conn, "DECIMAL(5,2)", "DOUBLE");
    // The binary protocol's DOUBLE written as Rust writes it, its
    // DECIMAL as the server sent it.
    assert_eq!(prepared, want("12.50", "0.25"));
    assert_eq!(text, want("12.50", "0.25"));
    tpcc_tables(&mut conn, Dialect::Mysql, "ENGINE=InnoDB");
}

#[test]
fn a_prepared_querys_rows_read_back_as_text_on_postgres() {
    use relbench::db::postgres::wire::WireConn;
    use relbench::db::server::postgres::Postgres;
    let dir = shared_tempdir();
    let server = server_elsewhere(dir.path(), "pg", PG_BASEDIR, "postgres", Box::new(Postgres));
    let wire = WireConn::connect(&Postgres::admin(&server.rt, "sbtest")).unwrap();
    let mut conn = ProtocolConn::new(wire);
    let (prepared, text) = read_back(&mut conn, "NUMERIC(5,2)", "DOUBLE PRECISION");
    assert_eq!(prepared, want("12.50", "0.25"));
    assert_eq!(text, want("12.50", "0.25"));
    tpcc_tables(&mut conn, Dialect::Postgres, "");
}

#[test]
fn a_prepared_querys_rows_read_back_as_text_on_sqlite() {
    use relbench::db::sqlite::SqliteDriver;
    use relbench::db::Driver;
    let dir = tempfile::tempdir().unwrap();
    let driver = SqliteDriver::new(dir.path().join("rows.db"), Vec::new());
    let mut conn = driver.connect().unwrap();
    let (prepared, text) = read_back(conn.as_mut(), "DECIMAL(5,2)", "DOUBLE");
    // SQLite keeps a DECIMAL as a REAL: 12.5, as it writes it.
    assert_eq!(prepared, want("12.5", "0.25"));
    assert_eq!(text, want("12.5", "0.25"));
    tpcc_tables(conn.as_mut(), Dialect::Sqlite, "");
}
