//! TPC-C's consistency conditions 1 to 4 (clause 3.3.2), checked after a
//! load or a run: each query returns the warehouses or districts that
//! break its condition, so a broken database is named where it broke.

use crate::db::{Conn, DbResult};

/// A condition and the query that lists what breaks it (money compared
/// to the cent: SQLite sums its decimals as doubles).
const CONDITIONS: [(&str, &str); 4] = [
    (
        "1: a warehouse's W_YTD is the sum of its districts' D_YTD",
        "SELECT w_id, NULL FROM warehouse w WHERE ABS(w_ytd - \
         (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w.w_id)) > 0.005",
    ),
    (
        "2: a district's D_NEXT_O_ID - 1 is its largest O_ID and NO_O_ID",
        "SELECT d_w_id, d_id FROM district d WHERE \
         d_next_o_id - 1 <> (SELECT MAX(o_id) FROM orders WHERE o_w_id = d.d_w_id AND o_d_id = d.d_id) \
         OR d_next_o_id - 1 <> (SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d.d_w_id AND no_d_id = d.d_id)",
    ),
    (
        "3: a district's new orders are consecutive (max - min + 1 = count)",
        "SELECT no_w_id, no_d_id FROM new_order GROUP BY no_w_id, no_d_id \
         HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)",
    ),
    (
        "4: a district's orders' O_OL_CNT add up to its order lines",
        "SELECT d_w_id, d_id FROM district d WHERE \
         (SELECT SUM(o_ol_cnt) FROM orders WHERE o_w_id = d.d_w_id AND o_d_id = d.d_id) <> \
         (SELECT COUNT(*) FROM order_line WHERE ol_w_id = d.d_w_id AND ol_d_id = d.d_id)",
    ),
];

/// The four conditions' queries, for `relbench show`.
pub fn queries() -> impl Iterator<Item = &'static str> {
    CONDITIONS.iter().map(|(_, sql)| *sql)
}

/// What breaks each condition, in words: empty when all four hold.
pub fn violations(conn: &mut dyn Conn) -> DbResult<Vec<String>> {
    let mut out = Vec::new();
    for (what, sql) in CONDITIONS {
        let rows = conn.text_rows(sql)?;
        if rows.is_empty() {
            continue;
        }
        let at: Vec<String> = rows
            .iter()
            .take(5)
            .map(|r| {
                let v = |i: usize| r.get(i).cloned().flatten();
                // Condition 1 is a warehouse's: its district is NULL.
                match v(1) {
                    Some(d) => format!("warehouse {} district {d}", v(0).unwrap_or_default()),
                    None => format!("warehouse {}", v(0).unwrap_or_default()),
                }
            })
            .collect();
        let more = rows.len().saturating_sub(at.len());
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        out.push(format!(
            "condition {what}: not so for {}{more}",
            at.join(", ")
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::load::{all, Population};
    use super::*;
    use crate::db::sqlite::SqliteDriver;
    use crate::db::{Dialect, Driver};
    use crate::workload::dist::rng;

    /// A small population (the spec's is 100,000 items and 30,000
    /// customers a warehouse: too slow for a unit test's debug build).
    const SMALL: Population = Population {
        items: 500,
        districts: 3,
        customers: 60,
        orders: 60,
    };

    #[test]
    fn a_loaded_database_holds_the_conditions_and_a_broken_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let driver = SqliteDriver::new(dir.path().join("tpcc.db"), Vec::new());
        let mut conn = driver.connect().unwrap();
        let conn = conn.as_mut();
        let mut r = rng(5, 0);
        let (_, loaded) = all(conn, Dialect::Sqlite, "", &mut r, &SMALL, 2).unwrap();
        let count = |conn: &mut dyn Conn, t: &str| -> u64 {
            conn.text_rows(&format!("SELECT COUNT(*) FROM {t}"))
                .unwrap()[0][0]
                .as_deref()
                .unwrap()
                .parse()
                .unwrap()
        };
        // Per warehouse: its row, its stock, 3 districts of 60 customers,
        // 60 history rows, 60 orders (42 delivered), 18 new orders.
        assert_eq!(count(conn, "warehouse"), 2);
        assert_eq!(count(conn, "stock"), 2 * 500);
        assert_eq!(count(conn, "customer"), 2 * 3 * 60);
        assert_eq!(count(conn, "history"), 2 * 3 * 60);
        assert_eq!(count(conn, "new_order"), 2 * 3 * 18);
        let lines = count(conn, "order_line");
        assert!((2 * 3 * 60 * 5..=2 * 3 * 60 * 15).contains(&lines));
        let tables: u64 = [
            "warehouse",
            "stock",
            "district",
            "customer",
            "history",
            "orders",
            "order_line",
            "new_order",
        ]
        .iter()
        .map(|t| count(conn, t))
        .sum();
        // Everything loaded, the items (500) with the rest.
        assert_eq!(loaded, tables + 500);
        // The first thousand customers' last names are their numbers'.
        let names = conn
            .text_rows("SELECT c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 1 AND c_id = 1")
            .unwrap();
        assert_eq!(names[0][0].as_deref(), Some("BARBARBAR"));
        assert_eq!(violations(conn).unwrap(), Vec::<String>::new());

        // A district whose next order id is off, a new order missing
        // from the middle: conditions 2 and 3 name them.
        conn.batch("UPDATE district SET d_next_o_id = 7 WHERE d_w_id = 2 AND d_id = 3")
            .unwrap();
        conn.batch("DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 2 AND no_o_id = 50")
            .unwrap();
        let v = violations(conn).unwrap();
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(
            v[0].starts_with("condition 2:") && v[0].ends_with("warehouse 2 district 3"),
            "{v:?}"
        );
        assert!(
            v[1].starts_with("condition 3:") && v[1].contains("warehouse 1 district 2"),
            "{v:?}"
        );
    }
}
