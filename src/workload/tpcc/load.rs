//! TPC-C's initial population (clause 4.3.3.1): the items once, then each
//! warehouse with its stock, districts, customers and their history,
//! orders, order lines and new orders — every value drawn as the
//! specification says. A warehouse is loaded on one connection in
//! multi-row INSERTs, so warehouses load in parallel, one client each.

use rand::seq::SliceRandom;
use rand::Rng as _;

use super::rand::{a_string, data, load_last_name, n_string, zip, Constants};
use super::schema;
use crate::db::{Conn, DbResult, Dialect};
use crate::workload::dist::Rng;

/// How much a warehouse holds: the specification's cardinalities, or a
/// smaller population for tests (said wherever it is used: the spec
/// fixes these).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Population {
    pub items: u32,
    pub districts: u32,
    pub customers: u32,
    /// Orders a district holds; the first 70% delivered, the last 30%
    /// new orders (2,100 and 900 of 3,000).
    pub orders: u32,
}

impl Population {
    /// The specification's: 100,000 items, 10 districts a warehouse,
    /// 3,000 customers and 3,000 orders a district.
    pub const SPEC: Population = Population {
        items: 100_000,
        districts: 10,
        customers: 3_000,
        orders: 3_000,
    };

    /// The first order id that is not delivered (2,101 of 3,000).
    pub fn first_new_order(&self) -> u32 {
        self.orders * 7 / 10 + 1
    }
}

/// Rows per INSERT statement.
const BATCH: usize = 200;

/// Multi-row INSERTs into one table, sent as they fill.
struct Inserts<'a> {
    conn: &'a mut dyn Conn,
    head: String,
    sql: String,
    rows: usize,
    total: u64,
}

impl<'a> Inserts<'a> {
    fn new(conn: &'a mut dyn Conn, table: &str) -> Self {
        let head = format!("INSERT INTO {table} VALUES ");
        Inserts {
            conn,
            sql: head.clone(),
            head,
            rows: 0,
            total: 0,
        }
    }

    /// Adds a row: its values as SQL literals, comma-separated.
    fn row(&mut self, values: &str) -> DbResult<()> {
        if self.rows > 0 {
            self.sql.push(',');
        }
        self.sql.push('(');
        self.sql.push_str(values);
        self.sql.push(')');
        self.rows += 1;
        if self.rows == BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> DbResult<()> {
        if self.rows > 0 {
            self.conn.batch(&self.sql)?;
            self.total += self.rows as u64;
            self.rows = 0;
            self.sql.clear();
            self.sql.push_str(&self.head);
        }
        Ok(())
    }

    fn finish(mut self) -> DbResult<u64> {
        self.flush()?;
        Ok(self.total)
    }
}

/// An a-string as a quoted literal (its characters need no escaping).
fn a(rng: &mut Rng, min: usize, max: usize) -> String {
    let mut s = String::from("'");
    a_string(rng, min, max, &mut s);
    s.push('\'');
    s
}

/// A street, a second line, a city, a state and a zip, quoted.
fn address(rng: &mut Rng) -> String {
    format!(
        "{},{},{},{},'{}'",
        a(rng, 10, 20),
        a(rng, 10, 20),
        a(rng, 10, 20),
        a(rng, 2, 2),
        zip(rng)
    )
}

/// A decimal between `lo` and `hi` hundredths (or ten-thousandths, with
/// `scale` 4), written out.
fn decimal(rng: &mut Rng, lo: u32, hi: u32, scale: u32) -> String {
    let v = rng.random_range(lo..=hi);
    let p = 10u32.pow(scale);
    format!("{}.{:0w$}", v / p, v % p, w = scale as usize)
}

/// Makes the tables and loads the items and warehouses 1 to `warehouses`
/// on one connection, the run's constants drawn first from `rng`.
/// Returns the constants and the rows loaded.
pub fn all(
    conn: &mut dyn Conn,
    d: Dialect,
    options: &str,
    rng: &mut Rng,
    p: &Population,
    warehouses: u32,
) -> DbResult<(Constants, u64)> {
    for s in schema::create(d, options) {
        conn.batch(&s)?;
    }
    let c = Constants::draw(rng);
    let mut rows = items(conn, rng, p)?;
    for w in 1..=warehouses {
        rows += warehouse(conn, rng, &c, p, w)?;
    }
    Ok((c, rows))
}

/// The item table, once for all warehouses. Returns the rows loaded.
pub fn items(conn: &mut dyn Conn, rng: &mut Rng, p: &Population) -> DbResult<u64> {
    let mut ins = Inserts::new(conn, "item");
    for i in 1..=p.items {
        let row = format!(
            "{i},{},{},{},'{}'",
            rng.random_range(1..=10_000),
            a(rng, 14, 24),
            decimal(rng, 100, 10_000, 2),
            data(rng)
        );
        ins.row(&row)?;
    }
    ins.finish()
}

/// Warehouse `w` and everything that belongs to it. Returns the rows
/// loaded.
pub fn warehouse(
    conn: &mut dyn Conn,
    rng: &mut Rng,
    c: &Constants,
    p: &Population,
    w: u32,
) -> DbResult<u64> {
    let mut total = 0;
    let ytd = 30_000 * p.districts;
    let row = format!(
        "{w},{},{},{},{ytd}.00",
        a(rng, 6, 10),
        address(rng),
        decimal(rng, 0, 2000, 4)
    );
    let mut ins = Inserts::new(conn, "warehouse");
    ins.row(&row)?;
    total += ins.finish()?;

    let mut ins = Inserts::new(conn, "stock");
    for i in 1..=p.items {
        let mut row = format!("{i},{w},{}", rng.random_range(10..=100));
        for _ in 0..10 {
            row.push(',');
            row.push_str(&a(rng, 24, 24));
        }
        row.push_str(&format!(",0,0,0,'{}'", data(rng)));
        ins.row(&row)?;
    }
    total += ins.finish()?;

    for d in 1..=p.districts {
        total += district(conn, rng, c, p, w, d)?;
    }
    Ok(total)
}

/// District `d` of warehouse `w`: the district, its customers and their
/// history rows, its orders, their lines, and its new orders.
fn district(
    conn: &mut dyn Conn,
    rng: &mut Rng,
    c: &Constants,
    p: &Population,
    w: u32,
    d: u32,
) -> DbResult<u64> {
    let mut total = 0;
    let row = format!(
        "{d},{w},{},{},{},30000.00,{}",
        a(rng, 6, 10),
        address(rng),
        decimal(rng, 0, 2000, 4),
        p.orders + 1
    );
    let mut ins = Inserts::new(conn, "district");
    ins.row(&row)?;
    total += ins.finish()?;

    let mut ins = Inserts::new(conn, "customer");
    for id in 1..=p.customers {
        let mut phone = String::new();
        n_string(rng, 16, 16, &mut phone);
        let credit = if rng.random_range(0..10) == 0 {
            "BC"
        } else {
            "GC"
        };
        let row = format!(
            "{id},{d},{w},{},'OE','{}',{},'{phone}',CURRENT_TIMESTAMP,'{credit}',50000.00,{},-10.00,10.00,1,0,{}",
            a(rng, 8, 16),
            load_last_name(rng, c, id),
            address(rng),
            decimal(rng, 0, 5000, 4),
            a(rng, 300, 500)
        );
        ins.row(&row)?;
    }
    total += ins.finish()?;

    let mut ins = Inserts::new(conn, "history");
    for id in 1..=p.customers {
        let row = format!(
            "{id},{d},{w},{d},{w},CURRENT_TIMESTAMP,10.00,{}",
            a(rng, 12, 24)
        );
        ins.row(&row)?;
    }
    total += ins.finish()?;

    // Each order's customer: a random permutation of the customers.
    let mut owners: Vec<u32> = (1..=p.customers).collect();
    owners.shuffle(rng);
    let new_from = p.first_new_order();
    let lines: Vec<u32> = (0..p.orders).map(|_| rng.random_range(5..=15)).collect();
    let mut ins = Inserts::new(conn, "orders");
    for o in 1..=p.orders {
        let carrier = if o < new_from {
            rng.random_range(1..=10).to_string()
        } else {
            "NULL".to_string()
        };
        let owner = owners[(o as usize - 1) % owners.len()];
        let row = format!(
            "{o},{d},{w},{owner},CURRENT_TIMESTAMP,{carrier},{},1",
            lines[o as usize - 1]
        );
        ins.row(&row)?;
    }
    total += ins.finish()?;

    let mut ins = Inserts::new(conn, "order_line");
    for o in 1..=p.orders {
        for n in 1..=lines[o as usize - 1] {
            let (delivered, amount) = if o < new_from {
                ("CURRENT_TIMESTAMP".to_string(), "0.00".to_string())
            } else {
                ("NULL".to_string(), decimal(rng, 1, 999_999, 2))
            };
            let row = format!(
                "{o},{d},{w},{n},{},{w},{delivered},5,{amount},{}",
                rng.random_range(1..=p.items),
                a(rng, 24, 24)
            );
            ins.row(&row)?;
        }
    }
    total += ins.finish()?;

    let mut ins = Inserts::new(conn, "new_order");
    for o in new_from..=p.orders {
        ins.row(&format!("{o},{d},{w}"))?;
    }
    total += ins.finish()?;
    Ok(total)
}
