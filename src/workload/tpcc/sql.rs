//! TPC-C's statements, in the shapes pingcap/go-tpc v1.0.7 sends them
//! (bench/tpcc_gotpc.py counts both at one server): a new order's items,
//! stock and lines each in one statement for all its lines, a delivery's
//! ten districts in one statement each after their oldest new orders are
//! locked, order-status by last name as a count and then the namesakes.
//! Where relbench departs from go-tpc's text it is for the specification
//! (docs/guide/tpcc.md lists each). `?` placeholders, made `$n` for
//! PostgreSQL and without `FOR UPDATE` for SQLite (whose transactions
//! take the write lock at BEGIN).

use crate::db::{Conn, DbResult, Dialect, Stmt};

/// The statements every client prepares once, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum S {
    NoCustomer,
    NoDistrict,
    NoNextOrder,
    NoOrder,
    NoNewOrder,
    NoStock,
    PayDistrictYtd,
    PayDistrict,
    PayWarehouseYtd,
    PayWarehouse,
    PayByLast,
    PayCustomer,
    PayData,
    PayWithData,
    PayBalance,
    PayHistory,
    OsCountLast,
    OsByLast,
    OsById,
    OsLastOrder,
    OsLines,
    DlNewOrder,
    DlCustomer,
    SlNextOrder,
    SlCount,
}

/// [`S`]'s texts, in its order, with the transaction that sends each.
const FIXED: [(&str, &str); 25] = [
    ("new-order", "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?"),
    ("new-order", "SELECT d_next_o_id, d_tax FROM district WHERE d_id = ? AND d_w_id = ? FOR UPDATE"),
    ("new-order", "UPDATE district SET d_next_o_id = ? + 1 WHERE d_id = ? AND d_w_id = ?"),
    ("new-order", "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)"),
    ("new-order", "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"),
    ("new-order", "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?"),
    ("payment", "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?"),
    ("payment", "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?"),
    ("payment", "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?"),
    ("payment", "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?"),
    ("payment", "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"),
    ("payment", "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE"),
    ("payment", "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
    ("payment", "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
    ("payment", "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
    ("payment", "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)"),
    ("order-status", "SELECT count(c_id) namecnt FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ?"),
    ("order-status", "SELECT c_balance, c_first, c_middle, c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first"),
    ("order-status", "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
    ("order-status", "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1"),
    ("order-status", "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"),
    ("delivery", "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE"),
    ("delivery", "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"),
    ("stock-level", "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?"),
    ("stock-level", "SELECT COUNT(DISTINCT (s_i_id)) stock_count FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? - 20 AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?"),
];

/// A new order's lines: 5 to 15.
pub const MIN_LINES: usize = 5;
pub const MAX_LINES: usize = 15;

/// `n` copies of `unit`, comma-separated.
fn repeat(unit: &str, n: usize) -> String {
    vec![unit; n].join(",")
}

/// A new order's items, all its lines in one query.
fn items(n: usize) -> String {
    format!(
        "SELECT i_price, i_name, i_data, i_id FROM item WHERE i_id IN ({})",
        repeat("?", n)
    )
}

/// Its stock rows, locked, in one query: (warehouse, item) pairs.
fn stock(n: usize) -> String {
    format!(
        "SELECT s_i_id, s_quantity, s_data, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10 FROM stock WHERE (s_w_id, s_i_id) IN ({}) FOR UPDATE",
        repeat("(?,?)", n)
    )
}

/// Its lines, in one multi-row INSERT.
fn lines(n: usize) -> String {
    format!(
        "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES {}",
        repeat("(?,?,?,?,?,?,?,?,?)", n)
    )
}

/// A delivery's statements over every district's oldest new order, one
/// (warehouse, district, order) triple a district: delete the new
/// orders, set the carrier, read the owners, stamp the lines, sum them.
fn delivery(districts: usize) -> [String; 5] {
    let keys = repeat("(?,?,?)", districts);
    [
        format!("DELETE FROM new_order WHERE (no_w_id, no_d_id, no_o_id) IN ({keys})"),
        format!("UPDATE orders SET o_carrier_id = ? WHERE (o_w_id, o_d_id, o_id) IN ({keys})"),
        format!("SELECT o_d_id, o_c_id FROM orders WHERE (o_w_id, o_d_id, o_id) IN ({keys})"),
        format!("UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE (ol_w_id, ol_d_id, ol_o_id) IN ({keys})"),
        format!("SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE (ol_w_id, ol_d_id, ol_o_id) IN ({keys}) GROUP BY ol_d_id"),
    ]
}

/// A delivery's five batched statements, in [`delivery`]'s order.
#[derive(Debug, Clone, Copy)]
pub enum D {
    Delete,
    Carrier,
    Owners,
    Delivered,
    Sums,
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
    crate::db::numbered_placeholders(&sql)
}

/// One connection's prepared statements.
pub struct Prepared {
    fixed: Vec<Stmt>,
    /// By line count − [`MIN_LINES`].
    items: Vec<Stmt>,
    stock: Vec<Stmt>,
    lines: Vec<Stmt>,
    delivery: Vec<Stmt>,
}

impl Prepared {
    /// Prepares every statement on `conn`, the delivery's for a warehouse
    /// of `districts` districts.
    pub fn new(conn: &mut dyn Conn, d: Dialect, districts: usize) -> DbResult<Prepared> {
        let mut prep = |sql: &str| conn.prepare(&in_dialect(sql, d));
        let fixed = FIXED
            .iter()
            .map(|(_, s)| prep(s))
            .collect::<DbResult<_>>()?;
        let sizes = MIN_LINES..=MAX_LINES;
        Ok(Prepared {
            fixed,
            items: sizes
                .clone()
                .map(|n| prep(&items(n)))
                .collect::<DbResult<_>>()?,
            stock: sizes
                .clone()
                .map(|n| prep(&stock(n)))
                .collect::<DbResult<_>>()?,
            lines: sizes.map(|n| prep(&lines(n))).collect::<DbResult<_>>()?,
            delivery: delivery(districts)
                .iter()
                .map(|s| prep(s))
                .collect::<DbResult<_>>()?,
        })
    }

    pub fn get(&self, s: S) -> Stmt {
        self.fixed[s as usize]
    }

    pub fn items(&self, n: usize) -> Stmt {
        self.items[n - MIN_LINES]
    }

    pub fn stock(&self, n: usize) -> Stmt {
        self.stock[n - MIN_LINES]
    }

    pub fn lines(&self, n: usize) -> Stmt {
        self.lines[n - MIN_LINES]
    }

    pub fn delivery(&self, s: D) -> Stmt {
        self.delivery[s as usize]
    }
}

/// Every statement with the transaction that sends it, in `d`'s words,
/// for `relbench show` (a new order of ten lines; a delivery over ten
/// districts).
pub fn shown(d: Dialect) -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let fixed = |i: usize| (FIXED[i].0, in_dialect(FIXED[i].1, d));
    out.extend((0..=S::NoNewOrder as usize).map(fixed));
    for s in [items(10), stock(10)] {
        out.push(("new-order", in_dialect(&s, d)));
    }
    out.push(fixed(S::NoStock as usize));
    out.push(("new-order", in_dialect(&lines(10), d)));
    out.extend((S::PayDistrictYtd as usize..=S::DlNewOrder as usize).map(fixed));
    for s in delivery(10) {
        out.push(("delivery", in_dialect(&s, d)));
    }
    out.extend((S::DlCustomer as usize..FIXED.len()).map(fixed));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_named_statements_are_in_their_transactions() {
        assert_eq!(FIXED[S::NoStock as usize].0, "new-order");
        assert!(FIXED[S::PayHistory as usize]
            .1
            .starts_with("INSERT INTO history"));
        assert!(FIXED[S::OsLines as usize].1.contains("FROM order_line"));
        assert!(FIXED[S::DlCustomer as usize].1.contains("c_delivery_cnt"));
        assert_eq!(FIXED[S::SlCount as usize].0, "stock-level");
        assert_eq!(stock(2).matches("(?,?)").count(), 2);
        assert_eq!(delivery(3)[0].matches("(?,?,?)").count(), 3);
        // A new order of ten lines and a delivery of ten districts each
        // shown once, beside every fixed statement.
        assert_eq!(shown(Dialect::Mysql).len(), FIXED.len() + 3 + 5);
    }
}
