//! TPC-C's nine tables (clause 1.3) and their indexes, in each engine's
//! words: the columns and keys the specification lists, the secondary
//! indexes every kit adds for the lookups by last name (payment,
//! order-status) and by customer (order-status's last order), and the
//! history table's, which the spec leaves without a key.

use crate::db::Dialect;

/// The tables in the order they are made and loaded (items first: they
/// do not depend on the warehouses).
pub const TABLES: [&str; 9] = [
    "item",
    "warehouse",
    "district",
    "customer",
    "history",
    "orders",
    "new_order",
    "order_line",
    "stock",
];

/// A column's type: integer, money (DECIMAL(p, s)), a rate (DECIMAL(4,4)),
/// a time, or text of at most n (`Char` fixed).
#[derive(Clone, Copy)]
enum T {
    Int,
    Dec(u8, u8),
    Time,
    Var(u16),
    Char(u16),
}

fn ty(t: T, d: Dialect) -> String {
    match (t, d) {
        (T::Int, _) => "INT".into(),
        (T::Dec(p, s), Dialect::Postgres) => format!("NUMERIC({p},{s})"),
        (T::Dec(p, s), _) => format!("DECIMAL({p},{s})"),
        (T::Time, Dialect::Postgres) => "TIMESTAMP".into(),
        (T::Time, _) => "DATETIME".into(),
        (T::Var(n), _) => format!("VARCHAR({n})"),
        (T::Char(n), _) => format!("CHAR({n})"),
    }
}

/// The columns of each table, the specification's names and sizes.
fn columns(table: &str) -> Vec<(String, T)> {
    let c = |n: &str, t: T| (n.to_string(), t);
    let address = |p: &str| {
        vec![
            c(&format!("{p}_street_1"), T::Var(20)),
            c(&format!("{p}_street_2"), T::Var(20)),
            c(&format!("{p}_city"), T::Var(20)),
            c(&format!("{p}_state"), T::Char(2)),
            c(&format!("{p}_zip"), T::Char(9)),
        ]
    };
    match table {
        "item" => vec![
            c("i_id", T::Int),
            c("i_im_id", T::Int),
            c("i_name", T::Var(24)),
            c("i_price", T::Dec(5, 2)),
            c("i_data", T::Var(50)),
        ],
        "warehouse" => [
            vec![c("w_id", T::Int), c("w_name", T::Var(10))],
            address("w"),
            vec![c("w_tax", T::Dec(4, 4)), c("w_ytd", T::Dec(12, 2))],
        ]
        .concat(),
        "district" => [
            vec![
                c("d_id", T::Int),
                c("d_w_id", T::Int),
                c("d_name", T::Var(10)),
            ],
            address("d"),
            vec![
                c("d_tax", T::Dec(4, 4)),
                c("d_ytd", T::Dec(12, 2)),
                c("d_next_o_id", T::Int),
            ],
        ]
        .concat(),
        "customer" => [
            vec![
                c("c_id", T::Int),
                c("c_d_id", T::Int),
                c("c_w_id", T::Int),
                c("c_first", T::Var(16)),
                c("c_middle", T::Char(2)),
                c("c_last", T::Var(16)),
            ],
            address("c"),
            vec![
                c("c_phone", T::Char(16)),
                c("c_since", T::Time),
                c("c_credit", T::Char(2)),
                c("c_credit_lim", T::Dec(12, 2)),
                c("c_discount", T::Dec(4, 4)),
                c("c_balance", T::Dec(12, 2)),
                c("c_ytd_payment", T::Dec(12, 2)),
                c("c_payment_cnt", T::Int),
                c("c_delivery_cnt", T::Int),
                c("c_data", T::Var(500)),
            ],
        ]
        .concat(),
        "history" => vec![
            c("h_c_id", T::Int),
            c("h_c_d_id", T::Int),
            c("h_c_w_id", T::Int),
            c("h_d_id", T::Int),
            c("h_w_id", T::Int),
            c("h_date", T::Time),
            c("h_amount", T::Dec(6, 2)),
            c("h_data", T::Var(24)),
        ],
        "orders" => vec![
            c("o_id", T::Int),
            c("o_d_id", T::Int),
            c("o_w_id", T::Int),
            c("o_c_id", T::Int),
            c("o_entry_d", T::Time),
            c("o_carrier_id", T::Int),
            c("o_ol_cnt", T::Int),
            c("o_all_local", T::Int),
        ],
        "new_order" => vec![
            c("no_o_id", T::Int),
            c("no_d_id", T::Int),
            c("no_w_id", T::Int),
        ],
        "order_line" => vec![
            c("ol_o_id", T::Int),
            c("ol_d_id", T::Int),
            c("ol_w_id", T::Int),
            c("ol_number", T::Int),
            c("ol_i_id", T::Int),
            c("ol_supply_w_id", T::Int),
            c("ol_delivery_d", T::Time),
            c("ol_quantity", T::Int),
            c("ol_amount", T::Dec(6, 2)),
            c("ol_dist_info", T::Char(24)),
        ],
        "stock" => [
            vec![
                c("s_i_id", T::Int),
                c("s_w_id", T::Int),
                c("s_quantity", T::Int),
            ],
            (1..=10)
                .map(|i| c(&format!("s_dist_{i:02}"), T::Char(24)))
                .collect(),
            vec![
                c("s_ytd", T::Int),
                c("s_order_cnt", T::Int),
                c("s_remote_cnt", T::Int),
                c("s_data", T::Var(50)),
            ],
        ]
        .concat(),
        _ => Vec::new(),
    }
}

/// The primary key of each table (none for history), then its secondary
/// indexes by name.
fn keys(table: &str) -> (&'static str, &'static [(&'static str, &'static str)]) {
    match table {
        "item" => ("i_id", &[]),
        "warehouse" => ("w_id", &[]),
        "district" => ("d_w_id, d_id", &[]),
        "customer" => (
            "c_w_id, c_d_id, c_id",
            &[("idx_customer", "c_w_id, c_d_id, c_last, c_first")],
        ),
        "history" => (
            "",
            &[
                ("idx_history_w", "h_w_id"),
                ("idx_history_c", "h_c_w_id, h_c_d_id, h_c_id"),
            ],
        ),
        "orders" => (
            "o_w_id, o_d_id, o_id",
            &[("idx_orders", "o_w_id, o_d_id, o_c_id, o_id")],
        ),
        "new_order" => ("no_w_id, no_d_id, no_o_id", &[]),
        "order_line" => ("ol_w_id, ol_d_id, ol_o_id, ol_number", &[]),
        "stock" => ("s_w_id, s_i_id", &[]),
        _ => ("", &[]),
    }
}

/// The statements that make every table, `options` (a target's
/// `table_options`: a storage engine, compression) after each CREATE
/// TABLE's columns.
pub fn create(d: Dialect, options: &str) -> Vec<String> {
    let mut out = Vec::new();
    for table in TABLES {
        let (pk, indexes) = keys(table);
        let mut cols: Vec<String> = columns(table)
            .into_iter()
            .map(|(n, t)| {
                let not_null = if pk.split(", ").any(|k| k == n) {
                    " NOT NULL"
                } else {
                    ""
                };
                format!("{n} {}{not_null}", ty(t, d))
            })
            .collect();
        if !pk.is_empty() {
            cols.push(format!("PRIMARY KEY ({pk})"));
        }
        // MySQL names its indexes inside the table (one statement, one
        // build); the others after it.
        if d == Dialect::Mysql {
            cols.extend(indexes.iter().map(|(n, c)| format!("INDEX {n} ({c})")));
        }
        let sep = if options.is_empty() { "" } else { " " };
        out.push(format!(
            "CREATE TABLE {table} ({}){sep}{options}",
            cols.join(", ")
        ));
        if d != Dialect::Mysql {
            out.extend(
                indexes
                    .iter()
                    .map(|(n, c)| format!("CREATE INDEX {n} ON {table} ({c})")),
            );
        }
    }
    out
}

/// The statements that drop every table this suite makes.
pub fn drop() -> Vec<String> {
    TABLES
        .iter()
        .rev()
        .map(|t| format!("DROP TABLE IF EXISTS {t}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_make_on_sqlite_with_the_specs_columns() {
        let db = rusqlite::Connection::open_in_memory().unwrap();
        for s in create(Dialect::Sqlite, "") {
            db.execute_batch(&s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
        let count = |t: &str| {
            db.prepare(&format!("SELECT * FROM {t}"))
                .unwrap()
                .column_count()
        };
        // The specification's column counts (clause 1.3).
        let want = [5, 9, 11, 21, 8, 8, 3, 10, 17];
        for (t, n) in TABLES.iter().zip(want) {
            assert_eq!(count(t), n, "{t}");
        }
        for s in drop() {
            db.execute_batch(&s).unwrap();
        }
    }

    #[test]
    fn each_dialect_writes_its_own_types_and_indexes() {
        let my = create(Dialect::Mysql, "ENGINE=InnoDB");
        assert_eq!(my.len(), 9);
        assert!(my[3].contains("INDEX idx_customer (c_w_id, c_d_id, c_last, c_first)"));
        assert!(my[3].ends_with(") ENGINE=InnoDB"), "{}", my[3]);
        let pg = create(Dialect::Postgres, "");
        assert!(pg.iter().any(
            |s| s == "CREATE INDEX idx_customer ON customer (c_w_id, c_d_id, c_last, c_first)"
        ));
        assert!(pg[1].contains("w_ytd NUMERIC(12,2)") && !pg[1].contains("DECIMAL"));
        assert!(pg.iter().all(|s| !s.contains("DATETIME")));
    }
}
