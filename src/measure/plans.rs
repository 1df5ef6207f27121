//! Query plans: what the optimizer chose for each statement a step sends,
//! as the engine printed it and reduced to its shape — the access path per
//! table and the operations around it, without the costs and row estimates
//! that move with every statistics update — so two targets' plans compare
//! by what they do.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How an engine prints a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanFormat {
    /// `EXPLAIN FORMAT=JSON` (MySQL, MariaDB).
    MysqlJson,
    /// `EXPLAIN (FORMAT JSON)` (PostgreSQL).
    PostgresJson,
    /// `EXPLAIN QUERY PLAN`'s rows, their details one per line (SQLite).
    SqliteRows,
}

/// One statement's plan, as a step file keeps it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatementPlan {
    /// The statement as the workload prepares it (placeholders, not
    /// values): what plans of two targets are matched by.
    pub sql: String,
    /// The plan's shape ([`shape`]); empty when it could not be had.
    pub shape: String,
    /// The plan as the engine printed it for one set of the step's values.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub plan: String,
    /// Why there is no plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A plan's shape: each table's access path and the operations that
/// change what a statement costs (a sort, a temporary table), in the
/// engine's own words; the same for the same choices whatever the
/// estimates.
pub fn shape(format: PlanFormat, plan: &str) -> String {
    match format {
        PlanFormat::SqliteRows => plan.lines().map(str::trim).collect::<Vec<_>>().join("; "),
        PlanFormat::PostgresJson => match serde_json::from_str::<Value>(plan) {
            Ok(v) => {
                let root = v.get(0).and_then(|p| p.get("Plan")).unwrap_or(&v);
                pg_node(root)
            }
            Err(_) => plan.trim().to_string(),
        },
        PlanFormat::MysqlJson => match serde_json::from_str::<Value>(plan) {
            Ok(v) => {
                let mut parts = Vec::new();
                mysql_walk(&v, &mut parts);
                parts.join(", ")
            }
            Err(_) => plan.trim().to_string(),
        },
    }
}

/// A PostgreSQL plan node and its children: `Aggregate(Index Scan using
/// k_1 on sbtest1)`.
fn pg_node(n: &Value) -> String {
    let s = |k: &str| n.get(k).and_then(Value::as_str);
    let mut out = match (s("Node Type"), s("Operation")) {
        (Some("ModifyTable"), Some(op)) => op.to_string(),
        (Some(t), _) => t.to_string(),
        (None, _) => "?".to_string(),
    };
    if let Some(i) = s("Index Name") {
        out += &format!(" using {i}");
    }
    if let Some(r) = s("Relation Name") {
        out += &format!(" on {r}");
    }
    if let Some(kids) = n.get("Plans").and_then(Value::as_array) {
        let kids: Vec<String> = kids.iter().map(pg_node).collect();
        out += &format!("({})", kids.join(", "));
    }
    out
}

/// MySQL's and MariaDB's JSON plans: every table's `access_type` and
/// `key`, and the sorts and temporary tables, in the order they appear.
fn mysql_walk(v: &Value, parts: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            let s = |k: &str| m.get(k).and_then(Value::as_str);
            // Version 1 (MySQL 5.6 to 8, MariaDB): `access_type` and `key`;
            // version 2 (MySQL 8.3 on): `index_access_type` and
            // `index_name` under `access_type` "index", and the other
            // operations as nodes of their own.
            if let Some(t) = s("table_name") {
                let access = s("index_access_type").or(s("access_type")).unwrap_or("?");
                parts.push(match s("key").or(s("index_name")) {
                    Some(k) => format!("{t}: {access} on {k}"),
                    None => format!("{t}: {access}"),
                });
            } else if let Some(op) = s("access_type").filter(|a| {
                [
                    "sort",
                    "temp_table_aggregate",
                    "materialize",
                    "aggregate",
                    "window",
                ]
                .contains(a)
            }) {
                parts.push(op.replace('_', " "));
            }
            for (flag, what) in [
                ("using_filesort", "filesort"),
                ("using_temporary_table", "temporary table"),
                ("using_index", "covering index"),
            ] {
                if m.get(flag) == Some(&Value::Bool(true)) {
                    parts.push(what.into());
                }
            }
            // MariaDB names a sort or a temporary table by an object.
            for (key, what) in [
                ("filesort", "filesort"),
                ("temporary_table", "temporary table"),
            ] {
                if m.get(key).is_some_and(Value::is_object) {
                    parts.push(what.into());
                }
            }
            m.values().for_each(|x| mysql_walk(x, parts));
        }
        Value::Array(a) => a.iter().for_each(|x| mysql_walk(x, parts)),
        _ => {}
    }
}

/// A statement as a sentence shows it: a list of placeholders in
/// parentheses (`IN (?,?,…)`, `VALUES ($1,$2,…)`) said by its length.
pub fn short_sql(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len().min(200));
    let mut rest = sql;
    while let Some(open) = rest.find('(') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let Some(close) = rest.find(')') else { break };
        let inner = &rest[..close];
        let items: Vec<&str> = inner.split(',').map(str::trim).collect();
        let placeholder = |x: &str| {
            x == "?"
                || x.strip_prefix('$')
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        };
        if items.len() > 4 && items.iter().all(|x| placeholder(x)) {
            out.push_str(&format!(
                "{}, {}, … {} values",
                items[0],
                items[1],
                items.len()
            ));
            rest = &rest[close..];
        }
    }
    out.push_str(rest);
    out
}

/// The plans of `mine` whose shape differs from `base`'s plan of the
/// same statement: (statement, base's shape, this shape).
pub fn differing<'a>(
    mine: &'a [StatementPlan],
    base: &'a [StatementPlan],
) -> Vec<(&'a str, &'a str, &'a str)> {
    mine.iter()
        .filter(|p| !p.shape.is_empty())
        .filter_map(|p| {
            let b = base
                .iter()
                .find(|b| b.sql == p.sql && !b.shape.is_empty())?;
            (b.shape != p.shape).then_some((p.sql.as_str(), b.shape.as_str(), p.shape.as_str()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_of_placeholders_are_said_by_their_length() {
        let q = format!(
            "SELECT c FROM t WHERE id IN ({}) AND k=?",
            vec!["?"; 100].join(",")
        );
        assert_eq!(
            short_sql(&q),
            "SELECT c FROM t WHERE id IN (?, ?, … 100 values) AND k=?"
        );
        let pg = "INSERT INTO t VALUES ($1,$2,$3,$4,$5,$6), (x)";
        assert_eq!(
            short_sql(pg),
            "INSERT INTO t VALUES ($1, $2, … 6 values), (x)"
        );
        assert_eq!(short_sql("SELECT f(a, b) FROM t"), "SELECT f(a, b) FROM t");
    }

    #[test]
    fn postgres_plans_keep_their_nodes_and_indexes_not_their_costs() {
        let a = r#"[{"Plan": {"Node Type": "Index Scan", "Index Name": "sbtest1_pkey",
            "Relation Name": "sbtest1", "Total Cost": 8.3, "Plan Rows": 1}}]"#;
        let b = r#"[{"Plan": {"Node Type": "Index Scan", "Index Name": "sbtest1_pkey",
            "Relation Name": "sbtest1", "Total Cost": 9.1, "Plan Rows": 3}}]"#;
        let c = r#"[{"Plan": {"Node Type": "ModifyTable", "Operation": "Update",
            "Relation Name": "sbtest1", "Plans": [{"Node Type": "Seq Scan",
            "Relation Name": "sbtest1"}]}}]"#;
        let f = PlanFormat::PostgresJson;
        assert_eq!(shape(f, a), "Index Scan using sbtest1_pkey on sbtest1");
        assert_eq!(shape(f, a), shape(f, b));
        assert_eq!(shape(f, c), "Update on sbtest1(Seq Scan on sbtest1)");
    }

    #[test]
    fn mysql_plans_keep_each_tables_access_and_the_sorts() {
        let range = r#"{"query_block": {"select_id": 1, "cost_info": {"query_cost": "3.1"},
            "ordering_operation": {"using_filesort": true, "table": {"table_name": "sbtest1",
            "access_type": "range", "key": "k_1", "rows_examined_per_scan": 100}}}}"#;
        let all = r#"{"query_block": {"select_id": 1, "table": {"table_name": "sbtest1",
            "access_type": "ALL", "rows": 10000}}}"#;
        let f = PlanFormat::MysqlJson;
        assert_eq!(shape(f, range), "filesort, sbtest1: range on k_1");
        assert_eq!(shape(f, all), "sbtest1: ALL");
        // MySQL 9's version 2.
        let v2 = r#"{"query_plan": {"access_type": "sort", "inputs": [{"access_type": "filter",
            "inputs": [{"table_name": "sbtest1", "access_type": "index", "index_name": "PRIMARY",
            "index_access_type": "index_range_scan", "estimated_rows": 100.0}]}]}}"#;
        assert_eq!(shape(f, v2), "sort, sbtest1: index_range_scan on PRIMARY");
        let p = |sql: &str, shape: &str| StatementPlan {
            sql: sql.into(),
            shape: shape.into(),
            ..Default::default()
        };
        let mine = [p("q1", "sbtest1: ALL"), p("q2", "x"), p("q3", "y")];
        let base = [p("q1", "sbtest1: range on k_1"), p("q2", "x")];
        assert_eq!(
            differing(&mine, &base),
            [("q1", "sbtest1: range on k_1", "sbtest1: ALL")]
        );
    }
}
