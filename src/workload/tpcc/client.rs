//! TPC-C's five transactions (clauses 2.4–2.8) as one client runs them
//! against its home warehouse: the statements in `sql` (go-tpc's shapes),
//! prepared once on the connection, the values that drive the next
//! statement read back (`Conn::query_rows`), and each transaction timed
//! under its own class. 1% of new orders name an unused item and roll
//! back, as the spec asks (tallied as not found, not as errors).

use rand::Rng as _;

use super::load::Population;
use super::mix::{Deck, Tx};
use super::rand::{customer_id, item_id, run_last_name, Constants};
use super::sql::{Prepared, D, S};
use crate::db::{Conn, DbError, DbResult, Dialect, ErrorKind, Param, Stmt};
use crate::measure::{Recorder, Tally};
use crate::workload::dist::Rng;

/// One client's prepared statements, its home warehouse and its deck.
pub struct TpccClient {
    sql: Prepared,
    w: i64,
    warehouses: i64,
    population: Population,
    constants: Constants,
    deck: Deck,
    rng: Rng,
}

type Rows = Vec<Vec<Option<String>>>;

fn int(rows: &Rows, r: usize, c: usize) -> Option<i64> {
    rows.get(r)?.get(c)?.as_deref()?.parse().ok()
}

fn num(rows: &Rows, r: usize, c: usize) -> Option<f64> {
    rows.get(r)?.get(c)?.as_deref()?.parse().ok()
}

fn text(rows: &Rows, r: usize, c: usize) -> String {
    rows.get(r)
        .and_then(|row| row.get(c).cloned().flatten())
        .unwrap_or_default()
}

/// The id in column `col` of the middle row of a customer's namesakes,
/// sorted by first name (clauses 2.5.2.2 and 2.6.2.2: n/2 rounded up).
fn middle(rows: &Rows, col: usize) -> Option<i64> {
    let n = rows.len();
    (n > 0).then(|| int(rows, n.div_ceil(2) - 1, col)).flatten()
}

/// A row the population must hold was not there: the data is not what
/// this step's `[tpcc]` loads.
fn missing(what: &str) -> DbError {
    DbError::new(
        ErrorKind::Other,
        format!(
            "TPC-C: a {what} row this plan's [tpcc] population holds is not in the database: run tpcc.load first in the same sequence, with the [tpcc] tpcc.run uses"
        ),
    )
}

/// One line of a new order.
struct Line {
    item: i64,
    supply: i64,
    qty: i64,
    price: f64,
    left: i64,
    dist: String,
}

impl TpccClient {
    /// Prepares every statement on `conn` for a client whose home is
    /// warehouse `w` of `warehouses`.
    pub fn new(
        conn: &mut dyn Conn,
        d: Dialect,
        w: u32,
        warehouses: u32,
        population: Population,
        constants: Constants,
        mut rng: Rng,
    ) -> DbResult<Self> {
        let sql = Prepared::new(conn, d, population.districts as usize)?;
        let deck = Deck::new(&mut rng);
        Ok(TpccClient {
            sql,
            w: i64::from(w),
            warehouses: i64::from(warehouses),
            population,
            constants,
            deck,
            rng,
        })
    }

    /// Deals the next transaction and runs it; its time goes to its
    /// class (the index of [`Tx::ALL`]).
    pub fn transaction(
        &mut self,
        conn: &mut dyn Conn,
        rec: &mut Recorder,
    ) -> Result<Tx, ErrorKind> {
        let tx = self.deck.deal(&mut self.rng);
        let class = Tx::ALL.iter().position(|t| *t == tx).unwrap_or(0);
        let t0 = std::time::Instant::now();
        let result = conn
            .begin(tx != Tx::OrderStatus && tx != Tx::StockLevel)
            .and_then(|_| match tx {
                Tx::NewOrder => self.new_order(conn),
                Tx::Payment => self.payment(conn).map(|_| true),
                Tx::OrderStatus => self.order_status(conn).map(|_| true),
                Tx::Delivery => self.delivery(conn).map(|_| true),
                Tx::StockLevel => self.stock_level(conn).map(|_| true),
            });
        let ended = match result {
            Ok(true) => conn.commit(),
            Ok(false) => {
                rec.tally(class, Tally::NotFound, 1);
                conn.rollback()
            }
            Err(e) => {
                let _ = conn.rollback();
                Err(e)
            }
        };
        match ended {
            Ok(()) => {
                rec.statement(class, t0.elapsed());
                Ok(tx)
            }
            Err(e) => Err(crate::workload::record_error(rec, class, e)),
        }
    }

    /// A query whose values drive what comes next: its rows kept.
    fn q(&self, conn: &mut dyn Conn, s: Stmt, p: &[Param<'_>]) -> DbResult<Rows> {
        conn.query_rows(s, p)
    }

    /// A query whose rows the client reads to the end and does not use:
    /// nothing decoded, nothing allocated.
    fn read(&self, conn: &mut dyn Conn, s: S, p: &[Param<'_>]) -> DbResult<u64> {
        conn.query(self.sql.get(s), p)
    }

    fn x(&self, conn: &mut dyn Conn, s: Stmt, p: &[Param<'_>]) -> DbResult<u64> {
        conn.exec(s, p)
    }

    fn district(&mut self) -> i64 {
        self.rng
            .random_range(1..=i64::from(self.population.districts))
    }

    /// A customer id in a district of at most the population's
    /// customers (NURand over the spec's 3,000 wrapped to it).
    fn customer(&mut self) -> i64 {
        let id = customer_id(&mut self.rng, &self.constants);
        i64::from((id - 1) % self.population.customers + 1)
    }

    /// An item id of the population's (NURand over the spec's 100,000
    /// wrapped to it).
    fn item(&mut self) -> i64 {
        let id = item_id(&mut self.rng, &self.constants);
        i64::from((id - 1) % self.population.items + 1)
    }

    /// Another warehouse than the home one, when there is one.
    fn remote(&mut self) -> i64 {
        if self.warehouses == 1 {
            return self.w;
        }
        let other = self.rng.random_range(1..self.warehouses);
        if other >= self.w {
            other + 1
        } else {
            other
        }
    }

    /// A new order's lines: distinct items (the last one unused in 1% of
    /// orders), 1% from another warehouse, 1 to 10 of each.
    fn lines(&mut self) -> Vec<Line> {
        let n = self
            .rng
            .random_range(super::sql::MIN_LINES..=super::sql::MAX_LINES);
        let rollback = self.rng.random_range(0..100) == 0;
        let distinct = (self.population.items as usize).min(n);
        let mut lines: Vec<Line> = Vec::with_capacity(n);
        for k in 0..n {
            let item = if rollback && k == n - 1 {
                i64::from(self.population.items) + 1
            } else {
                loop {
                    let i = self.item();
                    if k >= distinct || !lines.iter().any(|l| l.item == i) {
                        break i;
                    }
                }
            };
            let supply = if self.rng.random_range(0..100) == 0 {
                self.remote()
            } else {
                self.w
            };
            let qty = self.rng.random_range(1..=10);
            lines.push(Line {
                item,
                supply,
                qty,
                price: 0.0,
                left: 0,
                dist: String::new(),
            });
        }
        lines
    }

    /// Returns false when the order rolled back (an unused item).
    fn new_order(&mut self, conn: &mut dyn Conn) -> DbResult<bool> {
        let (w, d, c) = (self.w, self.district(), self.customer());
        let mut lines = self.lines();
        let n = lines.len();
        let all_local = i64::from(lines.iter().all(|l| l.supply == w));
        let key = [Param::Int(w), Param::Int(d), Param::Int(c)];
        self.read(conn, S::NoCustomer, &key)?;
        let district = self.q(conn, self.sql.get(S::NoDistrict), &[key[1], key[0]])?;
        let o = int(&district, 0, 0).ok_or_else(|| missing("district"))?;
        self.x(
            conn,
            self.sql.get(S::NoNextOrder),
            &[Param::Int(o), key[1], key[0]],
        )?;
        let order = [Param::Int(o), key[1], key[0]];
        let (lines_n, local) = (Param::Int(n as i64), Param::Int(all_local));
        self.x(
            conn,
            self.sql.get(S::NoOrder),
            &[order[0], order[1], order[2], key[2], lines_n, local],
        )?;
        self.x(conn, self.sql.get(S::NoNewOrder), &order)?;

        let ids: Vec<Param> = lines.iter().map(|l| Param::Int(l.item)).collect();
        for row in self.q(conn, self.sql.items(n), &ids)? {
            let (Some(id), Some(price)) = (
                row.get(3)
                    .cloned()
                    .flatten()
                    .and_then(|v| v.parse::<i64>().ok()),
                row.first()
                    .cloned()
                    .flatten()
                    .and_then(|v| v.parse::<f64>().ok()),
            ) else {
                continue;
            };
            for l in lines.iter_mut().filter(|l| l.item == id) {
                l.price = price;
            }
        }
        // An unused item: the order rolls back (2.4.2.3).
        if lines.iter().any(|l| l.price == 0.0) {
            return Ok(false);
        }

        let pairs: Vec<Param> = lines
            .iter()
            .flat_map(|l| [Param::Int(l.supply), Param::Int(l.item)])
            .collect();
        for row in self.q(conn, self.sql.stock(n), &pairs)? {
            let id: i64 = row
                .first()
                .cloned()
                .flatten()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let have: i64 = row
                .get(1)
                .cloned()
                .flatten()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let dist = row
                .get(2 + d as usize)
                .cloned()
                .flatten()
                .unwrap_or_default();
            for l in lines.iter_mut().filter(|l| l.item == id) {
                l.left = if have >= l.qty + 10 {
                    have - l.qty
                } else {
                    have - l.qty + 91
                };
                l.dist.clone_from(&dist);
            }
        }
        for l in &lines {
            if l.dist.is_empty() {
                return Err(missing("stock"));
            }
            self.x(
                conn,
                self.sql.get(S::NoStock),
                &[
                    Param::Int(l.left),
                    Param::Int(l.qty),
                    Param::Int(i64::from(l.supply != w)),
                    Param::Int(l.item),
                    Param::Int(l.supply),
                ],
            )?;
        }
        let amounts: Vec<String> = lines
            .iter()
            .map(|l| format!("{:.2}", l.price * l.qty as f64))
            .collect();
        let mut values: Vec<Param> = Vec::with_capacity(9 * n);
        for (k, l) in lines.iter().enumerate() {
            values.extend([
                order[0],
                order[1],
                order[2],
                Param::Int(k as i64 + 1),
                Param::Int(l.item),
                Param::Int(l.supply),
                Param::Int(l.qty),
                Param::Str(&amounts[k]),
                Param::Str(&l.dist),
            ]);
        }
        self.x(conn, self.sql.lines(n), &values)?;
        Ok(true)
    }

    fn payment(&mut self, conn: &mut dyn Conn) -> DbResult<()> {
        let (w, d) = (self.w, self.district());
        let (cw, cd) = if self.rng.random_range(0..100) < 15 {
            (self.remote(), self.district())
        } else {
            (w, d)
        };
        let by_last = self.rng.random_range(0..100) < 60;
        let amount = format!("{:.2}", self.rng.random_range(100..=500_000) as f64 / 100.0);
        let a = Param::Str(&amount);
        let (pw, pd) = (Param::Int(w), Param::Int(d));
        self.x(conn, self.sql.get(S::PayDistrictYtd), &[a, pw, pd])?;
        let district = self.q(conn, self.sql.get(S::PayDistrict), &[pw, pd])?;
        self.x(conn, self.sql.get(S::PayWarehouseYtd), &[a, pw])?;
        let warehouse = self.q(conn, self.sql.get(S::PayWarehouse), &[pw])?;
        let mut c = None;
        if by_last {
            let last = run_last_name(&mut self.rng, &self.constants);
            let key = [Param::Int(cw), Param::Int(cd), Param::Str(&last)];
            let ids = self.q(conn, self.sql.get(S::PayByLast), &key)?;
            c = middle(&ids, 0);
        }
        // No namesake in a population smaller than the spec's: by id.
        let c = match c {
            Some(c) => c,
            None => self.customer(),
        };
        let key = [Param::Int(cw), Param::Int(cd), Param::Int(c)];
        let customer = self.q(conn, self.sql.get(S::PayCustomer), &key)?;
        if customer.is_empty() {
            return Err(missing("customer"));
        }
        if text(&customer, 0, 9) == "BC" {
            let old = self.q(conn, self.sql.get(S::PayData), &key)?;
            let mut data = format!("{c} {cd} {cw} {d} {w} {amount} | {}", text(&old, 0, 0));
            data.truncate(500);
            self.x(
                conn,
                self.sql.get(S::PayWithData),
                &[a, a, Param::Str(&data), key[0], key[1], key[2]],
            )?;
        } else {
            self.x(
                conn,
                self.sql.get(S::PayBalance),
                &[a, a, key[0], key[1], key[2]],
            )?;
        }
        // H_DATA: the warehouse's name, four spaces, the district's.
        let h = format!("{}    {}", text(&warehouse, 0, 5), text(&district, 0, 5));
        self.x(
            conn,
            self.sql.get(S::PayHistory),
            &[key[1], key[0], key[2], pd, pw, a, Param::Str(&h)],
        )?;
        Ok(())
    }

    fn order_status(&mut self, conn: &mut dyn Conn) -> DbResult<()> {
        let (w, d) = (self.w, self.district());
        let mut c = None;
        if self.rng.random_range(0..100) < 60 {
            let last = run_last_name(&mut self.rng, &self.constants);
            let key = [Param::Int(w), Param::Int(d), Param::Str(&last)];
            let n = self.q(conn, self.sql.get(S::OsCountLast), &key)?;
            if int(&n, 0, 0).unwrap_or(0) > 0 {
                let rows = self.q(conn, self.sql.get(S::OsByLast), &key)?;
                c = middle(&rows, 3);
            }
        }
        let c = match c {
            Some(c) => c,
            None => {
                let c = self.customer();
                self.read(
                    conn,
                    S::OsById,
                    &[Param::Int(w), Param::Int(d), Param::Int(c)],
                )?;
                c
            }
        };
        let key = [Param::Int(w), Param::Int(d), Param::Int(c)];
        let order = self.q(conn, self.sql.get(S::OsLastOrder), &key)?;
        if let Some(o) = int(&order, 0, 0) {
            self.read(conn, S::OsLines, &[key[0], key[1], Param::Int(o)])?;
        }
        Ok(())
    }

    fn delivery(&mut self, conn: &mut dyn Conn) -> DbResult<()> {
        let w = self.w;
        let carrier = self.rng.random_range(1..=10);
        let districts = i64::from(self.population.districts);
        // Each district's oldest new order, locked; 0 where none is left
        // (2.7.4.2: that district is skipped; its triple matches nothing).
        let mut oldest = Vec::with_capacity(districts as usize);
        for d in 1..=districts {
            let no = self.q(
                conn,
                self.sql.get(S::DlNewOrder),
                &[Param::Int(w), Param::Int(d)],
            )?;
            oldest.push(int(&no, 0, 0).unwrap_or(0));
        }
        let keys: Vec<Param> = oldest
            .iter()
            .zip(1..)
            .flat_map(|(o, d)| [Param::Int(w), Param::Int(d), Param::Int(*o)])
            .collect();
        self.x(conn, self.sql.delivery(D::Delete), &keys)?;
        let mut with_carrier = vec![Param::Int(carrier)];
        with_carrier.extend_from_slice(&keys);
        self.x(conn, self.sql.delivery(D::Carrier), &with_carrier)?;
        let owners = self.q(conn, self.sql.delivery(D::Owners), &keys)?;
        self.x(conn, self.sql.delivery(D::Delivered), &keys)?;
        let sums = self.q(conn, self.sql.delivery(D::Sums), &keys)?;
        for r in 0..owners.len() {
            let (Some(d), Some(c)) = (int(&owners, r, 0), int(&owners, r, 1)) else {
                continue;
            };
            let total = (0..sums.len())
                .find(|&k| int(&sums, k, 0) == Some(d))
                .and_then(|k| num(&sums, k, 1))
                .unwrap_or(0.0);
            let total = format!("{total:.2}");
            self.x(
                conn,
                self.sql.get(S::DlCustomer),
                &[
                    Param::Str(&total),
                    Param::Int(w),
                    Param::Int(d),
                    Param::Int(c),
                ],
            )?;
        }
        Ok(())
    }

    fn stock_level(&mut self, conn: &mut dyn Conn) -> DbResult<()> {
        let (w, d) = (self.w, self.district());
        let threshold = self.rng.random_range(10..=20);
        let next = self.q(
            conn,
            self.sql.get(S::SlNextOrder),
            &[Param::Int(w), Param::Int(d)],
        )?;
        let o = int(&next, 0, 0).ok_or_else(|| missing("district"))?;
        self.read(
            conn,
            S::SlCount,
            &[
                Param::Int(w),
                Param::Int(d),
                Param::Int(o),
                Param::Int(o),
                Param::Int(w),
                Param::Int(threshold),
            ],
        )?;
        Ok(())
    }
}

/// `tpcc.run`'s client: one transaction of the mix per event.
impl crate::workload::Client for TpccClient {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        self.transaction(conn, rec).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{check, load};
    use super::*;
    use crate::db::sqlite::SqliteDriver;
    use crate::db::Driver;
    use crate::workload::dist::rng;

    #[test]
    fn a_thousand_transactions_keep_the_consistency_conditions() {
        let small = load::Population {
            items: 400,
            districts: 3,
            customers: 60,
            orders: 60,
        };
        let dir = tempfile::tempdir().unwrap();
        let driver = SqliteDriver::new(dir.path().join("tpcc.db"), Vec::new());
        let mut conn = driver.connect().unwrap();
        let conn = conn.as_mut();
        let (c, _) = load::all(conn, Dialect::Sqlite, "", &mut rng(21, 0), &small, 2).unwrap();
        let mut clients: Vec<TpccClient> = (1..=2)
            .map(|w| {
                TpccClient::new(conn, Dialect::Sqlite, w, 2, small, c, rng(21, u64::from(w)))
                    .unwrap()
            })
            .collect();
        let mut rec = Recorder::new(Tx::ALL.len(), 10);
        let mut ran = std::collections::BTreeMap::new();
        for i in 0..1000 {
            let tx = clients[i % 2].transaction(conn, &mut rec).unwrap();
            *ran.entry(tx).or_insert(0) += 1;
        }
        // Every 100 of a client's transactions are the mix exactly.
        for t in Tx::ALL {
            assert_eq!(ran[&t], 10 * t.cards(), "{}", t.name());
        }
        assert_eq!(check::violations(conn).unwrap(), Vec::<String>::new());
        // New orders went in (rolled-back ones did not), and deliveries
        // took the oldest.
        let count = |conn: &mut dyn Conn, sql: &str| -> i64 {
            conn.text_rows(sql).unwrap()[0][0]
                .as_deref()
                .unwrap()
                .parse()
                .unwrap()
        };
        let orders = count(conn, "SELECT COUNT(*) FROM orders");
        assert!(
            orders > 2 * 3 * 60 + 400 && orders <= 2 * 3 * 60 + 450,
            "{orders}"
        );
        let payments = count(conn, "SELECT COUNT(*) FROM history");
        assert_eq!(payments, 2 * 3 * 60 + 430);
    }
}
