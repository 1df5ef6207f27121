//! Maintenance steps: DDL and upkeep a study times rather than loads
//! (`DROP TABLE` taking 8 minutes with transparent compression is a
//! finding), and the server restart between phases. Each is one statement
//! per table, in the target's dialect; the runner times them and measures
//! the machine over them like any step.

use serde::{Deserialize, Serialize};

use crate::db::server::mariadb::DATABASE;
use crate::db::Dialect;

/// A timed maintenance step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Maint {
    /// Drops the secondary index (sysbench's `k_N`).
    DropIndex,
    /// Builds the secondary index again.
    CreateIndex,
    /// Updates the optimizer's statistics.
    Analyze,
    /// Rebuilds the tables: `OPTIMIZE TABLE`, `VACUUM FULL`.
    Optimize,
    /// Empties the tables.
    Truncate,
    /// Drops the tables (the end of a sequence: nothing after it has data).
    DropTable,
    /// Drops the benchmark database of a managed server (relbench made
    /// it; it makes it again at the next start).
    DropDatabase,
    /// Stops the managed server cleanly and starts it again (with the
    /// next phase's settings): how long shutdown and recovery take.
    Restart,
}

impl Maint {
    pub const ALL: [Maint; 8] = [
        Maint::DropIndex,
        Maint::CreateIndex,
        Maint::Analyze,
        Maint::Optimize,
        Maint::Truncate,
        Maint::DropTable,
        Maint::DropDatabase,
        Maint::Restart,
    ];

    /// The step's name in a plan.
    pub fn name(self) -> &'static str {
        match self {
            Maint::DropIndex => "drop-index",
            Maint::CreateIndex => "create-index",
            Maint::Analyze => "analyze",
            Maint::Optimize => "optimize",
            Maint::Truncate => "truncate",
            Maint::DropTable => "drop-table",
            Maint::DropDatabase => "drop-database",
            Maint::Restart => "restart",
        }
    }

    pub fn find(name: &str) -> Option<Maint> {
        Maint::ALL.into_iter().find(|m| m.name() == name)
    }

    pub fn about(self) -> &'static str {
        match self {
            Maint::DropIndex => "drop the secondary index k_N of every sysbench table",
            Maint::CreateIndex => "create the secondary index k_N of every sysbench table",
            Maint::Analyze => "update the optimizer statistics of every table",
            Maint::Optimize => "rebuild every table (OPTIMIZE TABLE, VACUUM FULL, VACUUM)",
            Maint::Truncate => "empty every table",
            Maint::DropTable => "drop every table",
            Maint::DropDatabase => {
                "drop the benchmark database (managed servers only: relbench created it)"
            }
            Maint::Restart => "stop the managed server cleanly and start it again",
        }
    }

    /// Whether the tables are still there, with their rows, after it.
    pub fn keeps_rows(self) -> bool {
        !matches!(
            self,
            Maint::Truncate | Maint::DropTable | Maint::DropDatabase
        )
    }

    /// Whether the step needs a server relbench started.
    pub fn needs_managed_server(self) -> bool {
        matches!(self, Maint::Restart | Maint::DropDatabase)
    }

    /// Whether the step only works on sysbench's tables (the index steps:
    /// the Insert Benchmark's tables have three secondary indexes that its
    /// own l.x step builds).
    pub fn sysbench_only(self) -> bool {
        matches!(self, Maint::DropIndex | Maint::CreateIndex)
    }

    /// The statements, in order, for the tables `tables` (sysbench's are
    /// `sbtestN`, numbered from 1). Empty for a restart, which is no SQL.
    pub fn statements(self, d: Dialect, tables: &[String]) -> Vec<String> {
        let each = |f: &dyn Fn(usize, &str) -> String| -> Vec<String> {
            tables
                .iter()
                .enumerate()
                .map(|(i, t)| f(i + 1, t))
                .collect()
        };
        match (self, d) {
            (Maint::Restart, _) | (Maint::DropDatabase, Dialect::Sqlite) => Vec::new(),
            // As the administrator; PostgreSQL's from its `postgres`
            // database, since nobody may drop the database they are in.
            (Maint::DropDatabase, _) => vec![format!("DROP DATABASE {DATABASE}")],
            (Maint::DropIndex, Dialect::Mysql) => each(&|n, t| format!("DROP INDEX k_{n} ON {t}")),
            (Maint::DropIndex, _) => each(&|n, _| format!("DROP INDEX k_{n}")),
            (Maint::CreateIndex, _) => each(&|n, t| format!("CREATE INDEX k_{n} ON {t}(k)")),
            (Maint::Analyze, Dialect::Mysql) => each(&|_, t| format!("ANALYZE TABLE {t}")),
            (Maint::Analyze, _) => each(&|_, t| format!("ANALYZE {t}")),
            (Maint::Optimize, Dialect::Mysql) => each(&|_, t| format!("OPTIMIZE TABLE {t}")),
            (Maint::Optimize, Dialect::Postgres) => each(&|_, t| format!("VACUUM FULL {t}")),
            // SQLite rebuilds the whole file, not a table.
            (Maint::Optimize, Dialect::Sqlite) => vec!["VACUUM".into()],
            (Maint::Truncate, Dialect::Sqlite) => each(&|_, t| format!("DELETE FROM {t}")),
            (Maint::Truncate, _) => each(&|_, t| format!("TRUNCATE TABLE {t}")),
            (Maint::DropTable, _) => each(&|_, t| format!("DROP TABLE {t}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_step_speaks_each_dialect() {
        let t = vec!["sbtest1".to_string(), "sbtest2".to_string()];
        assert_eq!(
            Maint::DropIndex.statements(Dialect::Mysql, &t),
            ["DROP INDEX k_1 ON sbtest1", "DROP INDEX k_2 ON sbtest2"]
        );
        assert_eq!(
            Maint::DropIndex.statements(Dialect::Postgres, &t)[1],
            "DROP INDEX k_2"
        );
        assert_eq!(
            Maint::Optimize.statements(Dialect::Postgres, &t)[0],
            "VACUUM FULL sbtest1"
        );
        assert_eq!(Maint::Optimize.statements(Dialect::Sqlite, &t), ["VACUUM"]);
        assert_eq!(
            Maint::Truncate.statements(Dialect::Sqlite, &t)[0],
            "DELETE FROM sbtest1"
        );
        assert!(Maint::Restart.statements(Dialect::Mysql, &t).is_empty());
        for m in Maint::ALL {
            assert_eq!(Maint::find(m.name()), Some(m));
        }
    }
}
