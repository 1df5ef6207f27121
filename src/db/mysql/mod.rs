//! MySQL and MariaDB targets (InnoDB, MyRocks, any storage engine), managed
//! by relbench or reached by URL, over TCP or a unix socket.

mod auth;
mod rows;
pub mod wire;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::protocol::{Outcome, ProtocolConn, Wire};
use super::server::{mariadb, Handle, ManagedServer, ServerSpec};
use super::tls::Tls;
use super::{
    numeric, Conn, Counters, DbResult, Driver, EngineKind, LoadMode, Param, Site, TargetFacts,
};
use crate::measure::statements::{Statements, CALLS};
use crate::measure::waits::{Wait, Waits};
use crate::measure::Unmeasured;
use wire::{Address, Opts, WireConn};

/// Server variables recorded with the results: the ones that decide what a
/// comparison of builds or configurations measures.
const RECORDED: &[&str] = &[
    "version_comment",
    "default_storage_engine",
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_log_files_in_group",
    "innodb_redo_log_capacity",
    "innodb_dedicated_server",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "innodb_page_size",
    "innodb_compression_default",
    "rocksdb_block_cache_size",
    "rocksdb_flush_log_at_trx_commit",
    "rocksdb_default_cf_options",
    "sync_binlog",
    "log_bin",
    "transaction_isolation",
    "tx_isolation",
    "performance_schema",
    "max_connections",
    "thread_handling",
];

/// Settle's note when the user may not force a flush.
const NOT_FORCED: &str =
    "not forced: this user may not SET GLOBAL (it needs SUPER); settle ran ANALYZE only";

/// How long settle waits for InnoDB's dirty pages or MyRocks' compaction.
const SETTLE_WAIT: Duration = Duration::from_secs(120);

pub struct MysqlDriver {
    engine: EngineKind,
    opts: Opts,
    /// Root over a managed server's private socket, for what the benchmark
    /// user may not do (settle's `SET GLOBAL`); a URL target's own user
    /// otherwise.
    admin: Opts,
    storage_engine: Option<String>,
    /// The target's own `table_options`, after `ENGINE=`.
    extra_options: Option<String>,
    server: Handle,
}

impl MysqlDriver {
    /// Starts a managed server and connects to it over `socket` or TCP.
    pub fn managed(
        engine: EngineKind,
        spec: ServerSpec,
        socket: bool,
        tls: Tls,
        storage_engine: Option<String>,
        remove_datadir: bool,
    ) -> anyhow::Result<Self> {
        let srv = ManagedServer::start(spec, Box::new(mariadb::MariaDb))?;
        let address = if socket {
            Address::Socket(srv.rt.socket.clone())
        } else {
            Address::Tcp {
                host: "127.0.0.1".into(),
                port: srv.rt.port,
            }
        };
        Ok(MysqlDriver {
            engine,
            opts: Opts {
                address,
                user: mariadb::USER.into(),
                password: Some(srv.rt.password.expose().to_string()),
                database: Some(mariadb::DATABASE.into()),
                tls,
                found_rows: true,
            },
            admin: Opts {
                database: Some(mariadb::DATABASE.into()),
                ..mariadb::MariaDb::admin(&srv.rt)
            },
            storage_engine,
            extra_options: None,
            server: Handle::managed(srv, remove_datadir),
        })
    }

    /// A server someone else runs.
    pub fn remote(engine: EngineKind, opts: Opts, storage_engine: Option<String>) -> Self {
        MysqlDriver {
            engine,
            admin: opts.clone(),
            opts,
            storage_engine,
            extra_options: None,
            server: Handle::none(),
        }
    }

    fn wire(&self) -> anyhow::Result<WireConn> {
        WireConn::connect(&self.opts).map_err(anyhow::Error::from)
    }

    fn admin(&self) -> anyhow::Result<WireConn> {
        WireConn::connect(&self.admin).map_err(anyhow::Error::from)
    }

    /// Appends `options` to every CREATE TABLE, after the storage engine.
    pub fn with_table_options(mut self, options: Option<String>) -> Self {
        self.extra_options = options;
        self
    }

    fn is_rocksdb(&self) -> bool {
        self.storage_engine
            .as_deref()
            .is_some_and(|e| e.eq_ignore_ascii_case("rocksdb"))
    }
}

/// The server's waits since it started, from performance_schema (its
/// timers count picoseconds): what the benchmark user's connections
/// waited on, and the file IO of every thread (a log's sync in a
/// background thread is part of what a commit costs) — not the waits of
/// background threads idling on their timers, nor `idle`, the time a
/// connection waited for its client. Why not, when it is off or
/// instruments nothing.
fn performance_schema_waits(w: &mut WireConn, user: &str) -> Result<Waits, Unmeasured> {
    let user = user.replace('\\', "\\\\").replace('\'', "''");
    let rows = w
        .query_text(&format!(
            "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT \
             FROM performance_schema.events_waits_summary_by_user_by_event_name \
             WHERE USER = '{user}' AND COUNT_STAR > 0 AND EVENT_NAME <> 'idle' \
             AND EVENT_NAME NOT LIKE 'wait/io/file/%' \
             UNION ALL SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT \
             FROM performance_schema.events_waits_summary_global_by_event_name \
             WHERE COUNT_STAR > 0 AND EVENT_NAME LIKE 'wait/io/file/%'"
        ))
        .map_err(|e| {
            Unmeasured::new(format!("performance_schema not readable ({e}): grant SELECT on performance_schema.* to the plan's user"))
        })?;
    let events: BTreeMap<String, Wait> = rows
        .into_iter()
        .filter_map(|r| {
            let num = |i: usize| r.get(i)?.as_deref()?.parse::<f64>().ok();
            Some((
                r.first()?.clone()?,
                Wait {
                    count: num(1)?,
                    us: num(2)? / 1e6,
                },
            ))
        })
        .collect();
    if events.is_empty() {
        return Err(Unmeasured::new(
            "performance_schema is off or instruments no waits \
             ([internals] performance_schema = true turns it on for a server relbench starts)",
        ));
    }
    Ok(Waits {
        source: format!(
            "performance_schema: the waits of user {user}'s connections, and every thread's file IO"
        ),
        events,
    })
}

/// What each statement of the benchmark's database did, from
/// performance_schema's digests (its own readings, SHOW and EXPLAIN left
/// out) and its prepared statements; times in µs.
fn digests(w: &mut WireConn) -> Result<Statements, Unmeasured> {
    const FIGURES: [(&str, &str, f64); 10] = [
        ("COUNT_STAR", CALLS, 1.0),
        ("SUM_ROWS_EXAMINED", "rows_examined", 1.0),
        ("SUM_ROWS_SENT", "rows_sent", 1.0),
        ("SUM_ROWS_AFFECTED", "rows_affected", 1.0),
        ("SUM_CREATED_TMP_TABLES", "tmp_tables", 1.0),
        ("SUM_CREATED_TMP_DISK_TABLES", "tmp_disk_tables", 1.0),
        ("SUM_SORT_MERGE_PASSES", "sort_merge_passes", 1.0),
        ("SUM_NO_INDEX_USED", "no_index_used", 1.0),
        ("SUM_TIMER_WAIT", "time_us", 1e-6),
        ("SUM_LOCK_TIME", "lock_time_us", 1e-6),
    ];
    let cols: Vec<&str> = FIGURES.iter().map(|f| f.0).collect();
    // Prepared statements are counted apart, per connection while it is
    // open (a step's connections are open at both of its window's edges),
    // by the text the workload prepared (MySQL's digests count them too,
    // as `EXECUTE …`, left out below; MariaDB 10.11 counts no executions
    // of them at all). Both queries run, whatever the first gives: the
    // server counts three SELECTs after its status (`trailing_statements`).
    let prepared = w
        .query_text(&format!(
            "SELECT SQL_TEXT, {} FROM performance_schema.prepared_statements_instances \
             WHERE SQL_TEXT NOT LIKE '%performance_schema%'",
            cols.join(", ")
                .replace("COUNT_STAR", "COUNT_EXECUTE")
                .replace("SUM_TIMER_WAIT", "SUM_TIMER_EXECUTE")
        ))
        .unwrap_or_default();
    let rows = w
        .query_text(&format!(
            "SELECT DIGEST_TEXT, {} FROM performance_schema.events_statements_summary_by_digest \
             WHERE SCHEMA_NAME = DATABASE() AND DIGEST_TEXT IS NOT NULL \
             AND DIGEST_TEXT NOT LIKE 'SHOW %' AND DIGEST_TEXT NOT LIKE 'EXPLAIN %' \
             AND DIGEST_TEXT NOT LIKE 'EXECUTE %' \
             AND DIGEST_TEXT NOT LIKE '%performance_schema%'",
            cols.join(", ")
        ))
        .map_err(|e| {
            Unmeasured::new(format!("performance_schema's digests not readable ({e}): grant SELECT on performance_schema.* to the plan's user"))
        })?;
    let mut by: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for (sql, figures) in rows.into_iter().chain(prepared).filter_map(|r| {
        let sql = r.first()?.clone()?;
        let figures: Vec<(String, f64)> = FIGURES
            .iter()
            .enumerate()
            .filter_map(|(i, (_, name, scale))| {
                let v: f64 = r.get(i + 1)?.as_deref()?.parse().ok()?;
                Some((name.to_string(), v * scale))
            })
            .collect();
        Some((sql, figures))
    }) {
        // One statement prepared on several connections is summed.
        let e: &mut BTreeMap<String, f64> = by.entry(sql).or_default();
        for (k, v) in figures {
            *e.entry(k).or_default() += v;
        }
    }
    Ok(Statements {
        source: "performance_schema: events_statements_summary_by_digest and prepared_statements_instances"
            .into(),
        by,
        if_none: "MariaDB counts no executions of prepared statements: `prepared = false` on the step \
                  sends them as text; MySQL counts them with performance_schema's statement \
                  instruments and its statements_digest consumer on",
    })
}

fn status(w: &mut WireConn, name: &str) -> anyhow::Result<Option<u64>> {
    let rows = w.query_text(&format!("SHOW GLOBAL STATUS LIKE '{name}'"))?;
    Ok(rows
        .first()
        .and_then(|r| r.get(1).cloned().flatten())
        .and_then(|v| v.parse().ok()))
}

impl Driver for MysqlDriver {
    fn engine(&self) -> EngineKind {
        self.engine
    }

    fn connect(&self) -> DbResult<Box<dyn Conn>> {
        Ok(Box::new(ProtocolConn::new(WireConn::connect(&self.opts)?)))
    }

    fn facts(&self) -> anyhow::Result<TargetFacts> {
        let mut w = self.admin()?;
        let version = w
            .query_text("SELECT VERSION()")?
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .unwrap_or_else(|| w.server_version.clone());
        let (mut config, settings) =
            super::split_settings(w.query_text("SHOW GLOBAL VARIABLES")?, RECORDED);
        if let Some(e) = &self.storage_engine {
            config.insert("relbench.table_engine".into(), e.clone());
        }
        let (datadir, config_file) = self.server.recorded();
        // The build, as the server describes it (PostgreSQL's version()
        // names its compiler; MySQL and MariaDB say what they can): two
        // builds of one version are not the same target.
        let build: Vec<&str> = [
            "version_comment",
            "version_compile_machine",
            "version_compile_os",
            "version_ssl_library",
            "version_malloc_library",
        ]
        .iter()
        .filter_map(|k| settings.get(*k).map(String::as_str))
        .filter(|v| !v.is_empty())
        .collect();
        let version = if build.is_empty() {
            format!("{} {version}", self.engine)
        } else {
            format!("{} {version} ({})", self.engine, build.join(", "))
        };
        Ok(TargetFacts {
            version,
            config,
            datadir,
            config_file,
            transport: Some(match &self.opts.address {
                Address::Tcp { host, port } => self.opts.tls.tcp_transport(host, *port),
                Address::Socket(p) => format!("unix socket {}", p.display()),
            }),
            settings,
        })
    }

    fn concurrent_writers(&self) -> bool {
        true
    }

    fn load_mode(&self) -> LoadMode {
        if self.is_rocksdb() {
            // MyRocks writes SST files directly from rows in key order, which
            // the loader's are.
            LoadMode {
                before: vec!["SET SESSION rocksdb_bulk_load = 1".into()],
                after: vec!["SET SESSION rocksdb_bulk_load = 0".into()],
                rows_per_commit: None,
            }
        } else {
            // With these off, InnoDB (MariaDB 10.6+, MySQL 8.0.?) takes the
            // first insert into an empty table, and the rest of its
            // transaction, as a bulk insert: no undo log per row, indexes
            // built sorted. So each table is one transaction.
            LoadMode {
                before: vec![
                    "SET SESSION unique_checks = 0".into(),
                    "SET SESSION foreign_key_checks = 0".into(),
                ],
                after: vec![
                    "SET SESSION unique_checks = 1".into(),
                    "SET SESSION foreign_key_checks = 1".into(),
                ],
                rows_per_commit: None,
            }
        }
    }

    fn table_options(&self) -> String {
        super::spec::table_suffix(
            self.storage_engine.as_deref(),
            self.extra_options.as_deref(),
        )
    }

    fn settle(
        &self,
        tables: &[String],
        wait: Duration,
    ) -> anyhow::Result<BTreeMap<String, String>> {
        // The plan's settle max bounds the waits too (a settle once ran
        // 32 s against max = "10s").
        let limit = SETTLE_WAIT.min(wait);
        let mut w = self.admin()?;
        let mut notes = BTreeMap::new();
        for t in tables {
            w.execute_text(&format!("ANALYZE TABLE {t}"))
                .with_context(|| format!("ANALYZE TABLE {t}"))?;
        }
        let t0 = Instant::now();
        // A URL target's user may lack SUPER, which forcing a flush takes:
        // settle then says it did not, instead of failing the step.
        let denied = |e: &crate::db::DbError| e.code.is_some_and(|c| c.mysql_denied());
        if self.is_rocksdb() {
            // Flush the memtable, then wait until compaction stops writing.
            match w.execute_text("SET GLOBAL rocksdb_force_flush_memtable_now = 1") {
                Ok(_) => {}
                Err(e) if denied(&e) => {
                    notes.insert("memtable_flushed".into(), NOT_FORCED.into());
                    notes.insert("analyzed_tables".into(), tables.len().to_string());
                    return Ok(notes);
                }
                Err(e) => {
                    return Err(anyhow::Error::from(e).context("flushing the MyRocks memtable"))
                }
            }
            let mut last = status(&mut w, "rocksdb_compact_write_bytes")?;
            let mut still_since = Instant::now();
            while t0.elapsed() < limit && still_since.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_millis(250));
                let now = status(&mut w, "rocksdb_compact_write_bytes")?;
                if now != last {
                    last = now;
                    still_since = Instant::now();
                }
            }
            notes.insert("memtable_flushed".into(), "yes".into());
            notes.insert("compaction_idle".into(), (t0.elapsed() < limit).to_string());
        } else if status(&mut w, "innodb_buffer_pool_pages_dirty")?.is_some() {
            // Make the page cleaner write everything dirty, then put the
            // server's own settings back.
            let saved = w.query_text(
                "SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm",
            )?;
            let (pct, lwm) = saved
                .first()
                .map(|r| {
                    (
                        r[0].clone().unwrap_or("90".into()),
                        r[1].clone().unwrap_or("10".into()),
                    )
                })
                .unwrap_or(("90".into(), "10".into()));
            let total = status(&mut w, "innodb_buffer_pool_pages_total")?.unwrap_or(0);
            let before = status(&mut w, "innodb_buffer_pool_pages_dirty")?.unwrap_or(0);
            let forced = match w.execute_text(
                "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0.001; SET GLOBAL innodb_max_dirty_pages_pct = 0.001",
            ) {
                // MySQL 5.6 takes whole percents only (ER_WRONG_TYPE_FOR_VAR,
                // 1232; regression: its settle failed): 0, where its page
                // cleaner flushes everything dirty too.
                Err(e) if e.code == Some(crate::db::ServerCode::Mysql(1232)) => w.execute_text(
                    "SET GLOBAL innodb_max_dirty_pages_pct_lwm = 0; SET GLOBAL innodb_max_dirty_pages_pct = 0",
                ),
                other => other,
            };
            match forced {
                Ok(_) => {}
                Err(e) if denied(&e) => {
                    notes.insert("dirty_pages_before".into(), before.to_string());
                    notes.insert("flush".into(), NOT_FORCED.into());
                    notes.insert("analyzed_tables".into(), tables.len().to_string());
                    return Ok(notes);
                }
                Err(e) => return Err(e.into()),
            }
            let few = (total / 1000).max(50);
            let mut dirty = before;
            while dirty > few && t0.elapsed() < limit {
                std::thread::sleep(Duration::from_millis(200));
                dirty = status(&mut w, "innodb_buffer_pool_pages_dirty")?.unwrap_or(0);
            }
            w.execute_text(&format!(
                "SET GLOBAL innodb_max_dirty_pages_pct = {pct}; SET GLOBAL innodb_max_dirty_pages_pct_lwm = {lwm}"
            ))?;
            notes.insert("dirty_pages_before".into(), before.to_string());
            notes.insert("dirty_pages_after".into(), dirty.to_string());
        }
        notes.insert(
            "flush_secs".into(),
            format!("{:.3}", t0.elapsed().as_secs_f64()),
        );
        notes.insert("analyzed_tables".into(), tables.len().to_string());
        Ok(notes)
    }

    fn admin_sql(
        &self,
        sql: &str,
        timeout: Option<Duration>,
    ) -> anyhow::Result<Vec<Vec<Option<String>>>> {
        let mut w = match self.admin() {
            Ok(w) => w,
            // After a drop-database step: without a default database.
            Err(e) if super::DbError::has_code(&e, &super::ServerCode::MYSQL_NO_DATABASE) => {
                WireConn::connect(&Opts {
                    database: None,
                    ..self.admin.clone()
                })?
            }
            Err(e) => return Err(e),
        };
        w.set_read_timeout(timeout);
        Ok(w.query_text(sql)?)
    }

    fn server_count(
        &self,
        before: &Counters,
        after: &Counters,
        _: bool,
    ) -> Option<super::ServerCount> {
        // The data statements, prepared or sent as text (`Com_select`
        // counts both); BEGIN and COMMIT are not among relbench's
        // statements, so they are left out.
        const DML: [&str; 9] = [
            "Com_select",
            "Com_insert",
            "Com_insert_select",
            "Com_update",
            "Com_update_multi",
            "Com_delete",
            "Com_delete_multi",
            "Com_replace",
            "Com_replace_select",
        ];
        after.values.contains_key("Com_select").then(|| super::ServerCount {
            count: super::counter_delta(before, after, &DML) - before.trailing_statements,
            counters: "Com_select + Com_insert + Com_update + Com_delete + Com_replace (and their multi-table forms)",
            of: super::Counted::Statements,
            // SHOW GLOBAL STATUS adds every thread's counters up as asked.
            lag_secs: 0.0,
        })
    }

    fn counters(&self, internals: bool) -> Option<anyhow::Result<Counters>> {
        Some((|| {
            let mut w = self.admin()?;
            let mut values = numeric(w.query_text("SHOW GLOBAL STATUS")?);
            // After the status, each query here is one of the next
            // reading's Com_select, which server_count takes out.
            // InnoDB's own counters, those enabled (innodb_monitor_enable).
            let mut source = "SHOW GLOBAL STATUS".to_string();
            if let Ok(rows) = w.query_text(
                "SELECT CONCAT('innodb_metrics.', NAME), COUNT \
                 FROM information_schema.INNODB_METRICS WHERE STATUS = 'enabled'",
            ) {
                values.extend(numeric(rows));
                source += ", information_schema.INNODB_METRICS";
            }
            let (waits, statements, trailing) = if internals {
                let waits = performance_schema_waits(&mut w, &self.opts.user);
                let (statements, n) = match &waits {
                    // The waits', then the statements' two.
                    Ok(_) => (digests(&mut w), 4.0),
                    Err(why) => (Err(why.clone()), 2.0),
                };
                (Some(waits), Some(statements), n)
            } else {
                (None, None, 1.0)
            };
            Ok(Counters {
                source,
                values,
                trailing_statements: trailing,
                waits,
                statements,
            })
        })())
    }
}

impl Site for MysqlDriver {
    fn drop_database(&self) -> anyhow::Result<()> {
        if self.server.lock().is_none() {
            anyhow::bail!("only the database of a server relbench started may be dropped");
        }
        self.admin()?
            .execute_text(&format!("DROP DATABASE {}", mariadb::DATABASE))?;
        Ok(())
    }

    fn reset(&self) -> anyhow::Result<()> {
        // The loader drops and creates each table; nothing else to clear.
        Ok(())
    }

    fn server(&self) -> Option<&Handle> {
        Some(&self.server)
    }

    fn has_data(&self, table: &str) -> bool {
        // Table names come from relbench's own catalogue (sbtestN, piN),
        // never from a plan's text.
        debug_assert!(table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        self.wire()
            .and_then(|mut w| {
                let r = w.query_text(&format!(
                    "SELECT COUNT(*) FROM information_schema.tables \
                     WHERE table_schema = DATABASE() AND table_name = '{table}'"
                ))?;
                Ok(r.first().and_then(|r| r[0].clone()).as_deref() == Some("1"))
            })
            .unwrap_or(false)
    }

    fn runs_here(&self) -> bool {
        match &self.opts.address {
            Address::Tcp { host, .. } => super::is_loopback(host),
            Address::Socket(_) => true,
        }
    }
}

impl Wire for WireConn {
    fn prepare(&mut self, sql: &str) -> DbResult<usize> {
        WireConn::prepare(self, sql)
    }

    fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> DbResult<Outcome> {
        WireConn::execute(self, stmt, params)
    }

    fn execute_text(&mut self, sql: &str) -> DbResult<Outcome> {
        WireConn::execute_text(self, sql)
    }

    fn text_rows(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        WireConn::query_text(self, sql)
    }

    fn multi_statements(&self) -> bool {
        // Every connection asks for CLIENT_MULTI_STATEMENTS.
        true
    }

    fn watch_column(&mut self, col: Option<usize>) {
        WireConn::watch_column(self, col)
    }

    fn last_value(&mut self) -> Option<i64> {
        WireConn::last_value(self)
    }

    fn keep_rows(&mut self, keep: bool) {
        WireConn::keep_rows(self, keep)
    }

    fn kept_rows(&mut self) -> Vec<Vec<Option<String>>> {
        WireConn::kept_rows(self)
    }

    fn count_changed_rows(&mut self) -> DbResult<()> {
        WireConn::count_changed_rows(self)
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        fill: &mut dyn FnMut(&mut Vec<u8>) -> bool,
    ) -> DbResult<Option<u64>> {
        // About twice as fast as multi-row INSERT on the server: no SQL to
        // parse per row (measured on MariaDB 10.11: 100k rows in 0.33 s
        // against 0.69 s). The file's bytes go into the columns as they
        // are (`CHARACTER SET binary`): no conversion, whatever the
        // database's character set; a loader writes the bytes its columns
        // hold (LinkBench's latin1 payloads).
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'relbench' INTO TABLE {table} CHARACTER SET binary \
             FIELDS TERMINATED BY '\\t' LINES TERMINATED BY '\\n' ({})",
            columns.join(",")
        );
        self.load_data_local(&sql, fill)
    }
}
