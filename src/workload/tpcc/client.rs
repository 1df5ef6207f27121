//! TPC-C's five transactions (clauses 2.4–2.8) as one client runs them
//! against its home warehouse: the statements the specification's
//! profiles list, prepared once on the connection, the values that drive
//! the next statement read back (`Conn::query_rows`), and each transaction
//! timed under its own class. 1% of new orders name an unused item and
//! roll back, as the spec asks (tallied as not found, not as errors).

use rand::Rng as _;

use super::load::Population;
use super::mix::{Deck, Tx};
use super::rand::{customer_id, item_id, run_last_name, Constants};
use crate::db::{Conn, DbError, DbResult, Dialect, ErrorKind, Param, Stmt};
use crate::measure::{Recorder, Tally};
use crate::workload::dist::Rng;

/// The statements, in [`Sql`]'s order; `?` placeholders, made `$n` for
/// PostgreSQL and without `FOR UPDATE` for SQLite (whose transactions
/// take the write lock at BEGIN).
const STATEMENTS: [&str; 27] = [
    // new-order
    "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?",
    "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE",
    "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?",
    "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
    "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)",
    "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?",
    "SELECT s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE",
    "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?",
    "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    // payment
    "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?",
    "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?",
    "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?",
    "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?",
    "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
    "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
    "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)",
    // order-status
    "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
    "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    // delivery
    "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE",
    "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?",
    "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
    "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?",
    "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
];

/// The statements after them: the sum of an order's lines, the customer's
/// balance, and stock-level's two.
const MORE: [&str; 4] = [
    "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
    "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
    "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?",
    "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
];

/// Every statement with the transaction that sends it, in `d`'s words,
/// for `relbench show`.
pub fn shown(d: Dialect) -> Vec<(Tx, String)> {
    let of = |i: usize| match i {
        0..=8 => Tx::NewOrder,
        9..=18 => Tx::Payment,
        19..=21 => Tx::OrderStatus,
        _ => Tx::Delivery,
    };
    let mut out: Vec<(Tx, String)> = STATEMENTS
        .iter()
        .enumerate()
        .map(|(i, s)| (of(i), in_dialect(s, d)))
        .collect();
    for (i, s) in MORE.iter().enumerate() {
        let tx = if i < 2 { Tx::Delivery } else { Tx::StockLevel };
        out.push((tx, in_dialect(s, d)));
    }
    out
}

/// A statement's text for `d`.
pub fn in_dialect(sql: &str, d: Dialect) -> String {
    let sql = if d == Dialect::Sqlite {
        sql.replace(" FOR UPDATE", "")
    } else {
        sql.to_string()
    };
    if d != Dialect::Postgres {
        return sql;
    }
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(ch);
        }
    }
    out
}

/// One client's prepared statements, its home warehouse and its deck.
pub struct TpccClient {
    stmts: Vec<Stmt>,
    w: i64,
    warehouses: i64,
    population: Population,
    constants: Constants,
    deck: Deck,
    rng: Rng,
}

fn int(rows: &[Vec<Option<String>>], r: usize, c: usize) -> Option<i64> {
    rows.get(r)?.get(c)?.as_deref()?.parse().ok()
}

fn num(rows: &[Vec<Option<String>>], r: usize, c: usize) -> Option<f64> {
    rows.get(r)?.get(c)?.as_deref()?.parse().ok()
}

fn missing(what: &str) -> DbError {
    DbError::new(ErrorKind::Other, format!("TPC-C: {what} not found"))
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
        let stmts = STATEMENTS
            .iter()
            .chain(MORE.iter())
            .map(|s| conn.prepare(&in_dialect(s, d)))
            .collect::<DbResult<Vec<_>>>()?;
        let deck = Deck::new(&mut rng);
        Ok(TpccClient {
            stmts,
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
    fn q(
        &self,
        conn: &mut dyn Conn,
        i: usize,
        p: &[Param<'_>],
    ) -> DbResult<Vec<Vec<Option<String>>>> {
        conn.query_rows(self.stmts[i], p)
    }

    /// A query whose rows the client reads to the end and does not use:
    /// nothing decoded, nothing allocated.
    fn read(&self, conn: &mut dyn Conn, i: usize, p: &[Param<'_>]) -> DbResult<u64> {
        conn.query(self.stmts[i], p)
    }

    fn x(&self, conn: &mut dyn Conn, i: usize, p: &[Param<'_>]) -> DbResult<u64> {
        conn.exec(self.stmts[i], p)
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

    /// Returns false when the order rolled back (an unused item).
    fn new_order(&mut self, conn: &mut dyn Conn) -> DbResult<bool> {
        let (w, d, c) = (self.w, self.district(), self.customer());
        let lines = self.rng.random_range(5..=15);
        let rollback = self.rng.random_range(0..100) == 0;
        let items: Vec<(i64, i64, i64)> = (0..lines)
            .map(|n| {
                let item = if rollback && n == lines - 1 {
                    i64::from(self.population.items) + 1
                } else {
                    let id = item_id(&mut self.rng, &self.constants);
                    i64::from((id - 1) % self.population.items + 1)
                };
                let supply = if self.rng.random_range(0..100) == 0 {
                    self.remote()
                } else {
                    w
                };
                (item, supply, self.rng.random_range(1..=10))
            })
            .collect();
        let all_local = i64::from(items.iter().all(|(_, s, _)| *s == w));
        self.read(conn, 0, &[Param::Int(w), Param::Int(d), Param::Int(c)])?;
        let district = self.q(conn, 1, &[Param::Int(w), Param::Int(d)])?;
        let o = int(&district, 0, 0).ok_or_else(|| missing("district"))?;
        self.x(conn, 2, &[Param::Int(w), Param::Int(d)])?;
        let p = [Param::Int(o), Param::Int(d), Param::Int(w), Param::Int(c)];
        self.x(
            conn,
            3,
            &[
                p[0],
                p[1],
                p[2],
                p[3],
                Param::Int(lines),
                Param::Int(all_local),
            ],
        )?;
        self.x(conn, 4, &[p[0], p[1], p[2]])?;
        for (n, (item, supply, qty)) in items.into_iter().enumerate() {
            let found = self.q(conn, 5, &[Param::Int(item)])?;
            let Some(price) = num(&found, 0, 0) else {
                return Ok(false);
            };
            let stock = self.q(conn, 6, &[Param::Int(item), Param::Int(supply)])?;
            let have = int(&stock, 0, 0).ok_or_else(|| missing("stock"))?;
            let left = if have >= qty + 10 {
                have - qty
            } else {
                have - qty + 91
            };
            let dist = stock[0]
                .get(1 + d as usize)
                .cloned()
                .flatten()
                .unwrap_or_default();
            self.x(
                conn,
                7,
                &[
                    Param::Int(left),
                    Param::Int(qty),
                    Param::Int(i64::from(supply != w)),
                    Param::Int(item),
                    Param::Int(supply),
                ],
            )?;
            let amount = format!("{:.2}", price * qty as f64);
            self.x(
                conn,
                8,
                &[
                    p[0],
                    p[1],
                    p[2],
                    Param::Int(n as i64 + 1),
                    Param::Int(item),
                    Param::Int(supply),
                    Param::Int(qty),
                    Param::Str(&amount),
                    Param::Str(&dist),
                ],
            )?;
        }
        Ok(true)
    }

    /// The customer a payment or order-status names: by last name in 60%
    /// (the middle one of its namesakes), else by id.
    fn pick_customer(&mut self, conn: &mut dyn Conn, w: i64, d: i64) -> DbResult<i64> {
        if self.rng.random_range(0..100) < 60 {
            let last = run_last_name(&mut self.rng, &self.constants);
            let rows = self.q(conn, 13, &[Param::Int(w), Param::Int(d), Param::Str(&last)])?;
            if !rows.is_empty() {
                return int(&rows, rows.len().div_ceil(2) - 1, 0)
                    .ok_or_else(|| missing("customer"));
            }
        }
        Ok(self.customer())
    }

    fn payment(&mut self, conn: &mut dyn Conn) -> DbResult<()> {
        let (w, d) = (self.w, self.district());
        let (cw, cd) = if self.rng.random_range(0..100) < 15 {
            (self.remote(), self.district())
        } else {
            (w, d)
        };
        let amount = format!("{:.2}", self.rng.random_range(100..=500_000) as f64 / 100.0);
        let a = Param::Str(&amount);
        self.x(conn, 9, &[a, Param::Int(w)])?;
        self.read(conn, 10, &[Param::Int(w)])?;
        self.x(conn, 11, &[a, Param::Int(w), Param::Int(d)])?;
        self.read(conn, 12, &[Param::Int(w), Param::Int(d)])?;
        let c = self.pick_customer(conn, cw, cd)?;
        let key = [Param::Int(cw), Param::Int(cd), Param::Int(c)];
        let customer = self.q(conn, 14, &key)?;
        let credit = customer.first().and_then(|r| r.get(9).cloned().flatten());
        if credit.as_deref() == Some("BC") {
            let old = self.q(conn, 15, &key)?;
            let old = old.first().and_then(|r| r[0].clone()).unwrap_or_default();
            let mut data = format!("{c} {cd} {cw} {d} {w} {amount} | {old}");
            data.truncate(500);
            self.x(conn, 16, &[a, a, Param::Str(&data), key[0], key[1], key[2]])?;
        } else {
            self.x(conn, 17, &[a, a, key[0], key[1], key[2]])?;
        }
        let mut h = String::new();
        super::rand::a_string(&mut self.rng, 12, 24, &mut h);
        self.x(
            conn,
            18,
            &[
                key[1],
                key[0],
                key[2],
                Param::Int(d),
                Param::Int(w),
                a,
                Param::Str(&h),
            ],
        )?;
        Ok(())
    }

    fn order_status(&mut self, conn: &mut dyn Conn) -> DbResult<()> {
        let (w, d) = (self.w, self.district());
        let c = self.pick_customer(conn, w, d)?;
        self.read(conn, 19, &[Param::Int(w), Param::Int(d), Param::Int(c)])?;
        let order = self.q(conn, 20, &[Param::Int(w), Param::Int(d), Param::Int(c)])?;
        if let Some(o) = int(&order, 0, 0) {
            self.read(conn, 21, &[Param::Int(w), Param::Int(d), Param::Int(o)])?;
        }
        Ok(())
    }

    fn delivery(&mut self, conn: &mut dyn Conn) -> DbResult<()> {
        let w = self.w;
        let carrier = self.rng.random_range(1..=10);
        for d in 1..=i64::from(self.population.districts) {
            let no = self.q(conn, 22, &[Param::Int(w), Param::Int(d)])?;
            // A district with no new order left is skipped (2.7.4.2).
            let Some(o) = int(&no, 0, 0) else { continue };
            let key = [Param::Int(w), Param::Int(d), Param::Int(o)];
            self.x(conn, 23, &key)?;
            let owner = self.q(conn, 24, &key)?;
            let c = int(&owner, 0, 0).ok_or_else(|| missing("order"))?;
            self.x(conn, 25, &[Param::Int(carrier), key[0], key[1], key[2]])?;
            self.x(conn, 26, &key)?;
            let sum = self.q(conn, 27, &key)?;
            let total = format!("{:.2}", num(&sum, 0, 0).unwrap_or(0.0));
            self.x(
                conn,
                28,
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
        let next = self.q(conn, 29, &[Param::Int(w), Param::Int(d)])?;
        let o = int(&next, 0, 0).ok_or_else(|| missing("district"))?;
        self.read(
            conn,
            30,
            &[
                Param::Int(w),
                Param::Int(d),
                Param::Int(o),
                Param::Int(o - 20),
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
    fn statements_take_each_engines_placeholders_and_locks() {
        let s = "SELECT a FROM t WHERE x = ? AND y = ? FOR UPDATE";
        assert_eq!(in_dialect(s, Dialect::Mysql), s);
        assert_eq!(
            in_dialect(s, Dialect::Postgres),
            "SELECT a FROM t WHERE x = $1 AND y = $2 FOR UPDATE"
        );
        assert_eq!(
            in_dialect(s, Dialect::Sqlite),
            "SELECT a FROM t WHERE x = ? AND y = ?"
        );
    }

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
