//! Targets: the databases under test, and the one small interface the rest of
//! relbench uses to talk to them.
//!
//! A target has two halves: a [`Driver`] (how to open connections, settle
//! the engine, read its facts and counters) and a [`Site`] (where the data
//! lives, the server process, reset and cleanup); [`open`] makes one from a
//! plan's [`spec::TargetSpec`]. A [`Conn`] is one client connection. Statements are prepared once per
//! connection and then executed by handle with borrowed parameters, so the hot
//! path allocates nothing. One file per engine family implements them.

pub mod mysql;
pub mod postgres;
pub mod protocol;
pub mod secrets;
pub mod server;
pub mod spec;
pub mod sqlite;
pub mod stream;
pub mod tls;
pub mod url;

mod error;
mod open;

pub use error::{DbError, DbResult, ServerCode};
pub use open::{open, server_spec, Dirs};
pub use secrets::Secrets;

pub use crate::measure::ErrorKind;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The engine families relbench knows the SQL of. Only those with a driver
/// in this build can be run; the others can still be shown (`relbench show`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Sqlite,
    Mysql,
    Mariadb,
    Postgres,
}

impl EngineKind {
    pub const ALL: [EngineKind; 4] = [Self::Sqlite, Self::Mysql, Self::Mariadb, Self::Postgres];

    pub fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Mysql => "mysql",
            Self::Mariadb => "mariadb",
            Self::Postgres => "postgres",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == s)
    }

    pub fn dialect(self) -> Dialect {
        match self {
            Self::Sqlite => Dialect::Sqlite,
            Self::Mysql | Self::Mariadb => Dialect::Mysql,
            Self::Postgres => Dialect::Postgres,
        }
    }

    /// Whether targets of this engine are servers (managed or by URL).
    pub fn is_server(self) -> bool {
        !matches!(self, Self::Sqlite)
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// SQL dialects: what differs in the statements relbench generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Mysql,
    Postgres,
}

impl Dialect {
    pub const ALL: [Dialect; 3] = [Self::Sqlite, Self::Mysql, Self::Postgres];

    pub fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Mysql => "mysql/mariadb",
            Self::Postgres => "postgres",
        }
    }

    /// The placeholder for the `i`-th parameter (0-based).
    pub fn placeholder(self, i: usize) -> String {
        match self {
            Self::Postgres => format!("${}", i + 1),
            _ => "?".to_string(),
        }
    }

    /// A query of one row of three integers about `table`, a table of
    /// relbench's own that another database user may have made first:
    /// whether the connected user does not own it (PostgreSQL; 0 where
    /// tables have no owner), how many triggers, rules and row policies
    /// it has (code another user planted runs in relbench's statements),
    /// and how many of its columns are not among `columns` (none checked
    /// when `columns` is empty). No row: there is no such table.
    pub fn table_guard(self, table: &str, columns: &[&str]) -> String {
        let list = columns
            .iter()
            .map(|c| format!("'{c}'"))
            .collect::<Vec<_>>()
            .join(", ");
        match self {
            Self::Postgres => format!(
                "SELECT CAST(CASE WHEN pg_get_userbyid(c.relowner) = current_user THEN 0 ELSE 1 END AS BIGINT), \
                 (SELECT COUNT(*) FROM pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal) \
                 + (SELECT COUNT(*) FROM pg_rewrite r WHERE r.ev_class = c.oid AND r.rulename <> '_RETURN') \
                 + (SELECT COUNT(*) FROM pg_policy p WHERE p.polrelid = c.oid), \
                 (SELECT COUNT(*) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 \
                 AND NOT a.attisdropped{}) \
                 FROM pg_class c WHERE c.oid = to_regclass('{table}') AND c.relkind = 'r'",
                if columns.is_empty() {
                    " AND false".to_string()
                } else {
                    format!(" AND a.attname NOT IN ({list})")
                }
            ),
            _ => format!(
                "SELECT CAST(0 AS SIGNED), (SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE \
                 EVENT_OBJECT_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE = '{table}'), \
                 (SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() \
                 AND TABLE_NAME = '{table}'{}) \
                 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{table}' \
                 AND TABLE_TYPE = 'BASE TABLE'",
                if columns.is_empty() {
                    " AND false".to_string()
                } else {
                    format!(" AND COLUMN_NAME NOT IN ({list})")
                }
            ),
        }
    }

    /// `INSERT INTO {into} VALUES ({values})` that leaves a row whose key
    /// is there already as it is, without an error.
    pub fn insert_if_absent(self, into: &str, values: &str) -> String {
        match self {
            Self::Mysql => format!("INSERT IGNORE INTO {into} VALUES ({values})"),
            _ => format!("INSERT INTO {into} VALUES ({values}) ON CONFLICT DO NOTHING"),
        }
    }

    /// A query whose one value is the server's clock now, in µs since the
    /// Unix epoch.
    pub fn clock_us(self) -> &'static str {
        match self {
            Self::Mysql => "SELECT CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)",
            Self::Postgres => {
                "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"
            }
            Self::Sqlite => "SELECT CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)",
        }
    }

    /// A comma-separated list of `n` placeholders starting at parameter `first`.
    pub fn placeholders(self, first: usize, n: usize) -> String {
        (first..first + n)
            .map(|i| self.placeholder(i))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// One statement parameter, borrowed so that binding allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Param<'a> {
    Int(i64),
    Str(&'a str),
}

/// A statement prepared on one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stmt(pub usize);

/// One client connection. Not shared between threads.
pub trait Conn: Send {
    /// From now on, statements are not prepared on the server: each
    /// execution sends its text with the values in it (sysbench's
    /// `--db-ps-mode=disable`); SQLite compiles it each time.
    fn set_plain(&mut self, _plain: bool) {}
    /// Whether statements go as text ([`Conn::set_plain`]).
    fn plain(&self) -> bool {
        false
    }
    /// Prepares a statement once for this connection.
    fn prepare(&mut self, sql: &str) -> DbResult<Stmt>;
    /// Runs a query and returns how many rows it produced (the rows are read
    /// to the end, as a real client would, but not kept).
    fn query(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<u64>;
    /// Runs a statement that changes data and returns the rows it affected.
    fn exec(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<u64>;
    /// Runs statements without parameters (DDL, maintenance), not prepared.
    fn batch(&mut self, sql: &str) -> DbResult<()>;
    /// Runs one statement's text, not prepared, and returns its rows as
    /// text: what a script's `con:query()` reads (not a hot path's).
    fn text_rows(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>>;
    /// Starts a transaction; `write` says it will change data, which lets an
    /// engine take its write lock up front instead of failing to upgrade later.
    fn begin(&mut self, write: bool) -> DbResult<()>;
    fn commit(&mut self) -> DbResult<()>;
    fn rollback(&mut self) -> DbResult<()>;
    /// Runs a write and commits the transaction it ends: in one round trip
    /// when the statement goes as text and the protocol takes several
    /// statements at once (`"…; commit"`, as LinkBench's original ends
    /// its writes), else the write and then COMMIT. Returns the write's
    /// changed rows.
    fn exec_commit(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<u64> {
        let n = self.exec(stmt, params)?;
        self.commit()?;
        Ok(n)
    }
    /// Runs a query as [`Conn::query`] does and also returns column `col`
    /// of its last row as an integer (`None` without rows, or NULL): what
    /// LinkBench pages by (the time of the last link read). Only rows'
    /// counts are read otherwise, so this is for the few statements that
    /// need a value.
    fn query_last(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        col: usize,
    ) -> DbResult<(u64, Option<i64>)>;
    /// Runs a query as [`Conn::query`] does and returns its rows, each
    /// value as text as the engine writes it (NULL as `None`): for the
    /// few statements whose values drive what a client does next (TPC-C's
    /// next order id, the middle one of a customer's namesakes), never a
    /// hot path's row count. The statement goes as it would for
    /// [`Conn::query`]: prepared, or as text after [`Conn::set_plain`].
    fn query_rows(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
    ) -> DbResult<Vec<Vec<Option<String>>>>;
    /// From now on a write reports the rows it changed, not the rows it
    /// matched (MySQL without `CLIENT_FOUND_ROWS`: an upsert answers 1 for
    /// an insert, 2 for a changed row, 0 for a row left as it was, which
    /// LinkBench's `addLink` reads). Call before preparing statements: a
    /// MySQL connection is opened again for it. Other engines already
    /// count changed rows.
    fn count_changed_rows(&mut self) -> DbResult<()> {
        Ok(())
    }
    /// Streams rows into `table` through the engine's bulk path (LOAD DATA
    /// LOCAL INFILE, COPY FROM STDIN). `fill` appends tab-separated,
    /// newline-terminated rows to the buffer and returns false once it has
    /// no more. Returns `Ok(None)` when the engine or server offers no bulk
    /// path (the caller then inserts), else the rows loaded.
    fn bulk_load(
        &mut self,
        _table: &str,
        _columns: &[&str],
        _fill: &mut dyn FnMut(&mut Vec<u8>) -> bool,
    ) -> DbResult<Option<u64>> {
        Ok(None)
    }
}

/// Facts a driver reports about its target, recorded in `run.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TargetFacts {
    /// The version string as the engine reports it.
    pub version: String,
    /// The effective configuration, read back from the engine.
    pub config: BTreeMap<String, String>,
    /// Where the data lives.
    pub datadir: Option<String>,
    /// The text of the server's config file, when relbench started it with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_file: Option<String>,
    /// How clients reach the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// Every server setting as the server reports it (SHOW GLOBAL
    /// VARIABLES, pg_settings), less those that name this instance (paths,
    /// port, ids), so two targets' settings can be compared whole.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
}

/// `?` → `$1`, `$2`, … in order, every one of them: PostgreSQL's
/// placeholders for a statement written with `?`, as sysbench's pgsql
/// driver numbers them (it does not skip quoted text, and neither does
/// this). Used for sysbench scripts' statements and TPC-C's.
pub fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(ch);
        }
    }
    out
}

/// A server's settings from the rows of a (name, value) query: the
/// `recorded` few, shown with the target, and every one but those that
/// name this instance, for comparing targets whole. One query for both.
pub fn split_settings(
    rows: Vec<Vec<Option<String>>>,
    recorded: &[&str],
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let (mut config, mut settings) = (BTreeMap::new(), BTreeMap::new());
    for r in rows {
        let mut r = r.into_iter();
        let (Some(Some(name)), value) = (r.next(), r.next().flatten().unwrap_or_default()) else {
            continue;
        };
        if recorded.contains(&name.as_str()) {
            config.insert(name.clone(), value.clone());
        }
        if !instance_setting(&name, &value) {
            settings.insert(name, value);
        }
    }
    (config, settings)
}

/// Whether a setting names this instance rather than configures it: a
/// path, the port, an id. Such settings differ between any two targets and
/// say nothing about what was compared.
pub fn instance_setting(name: &str, value: &str) -> bool {
    const NAMES: &[&str] = &[
        "port",
        "hostname",
        "server_uuid",
        "server_id",
        "pseudo_thread_id",
        "timestamp",
        "gtid_domain_id",
        "unix_socket_directories",
        "listen_addresses",
    ];
    NAMES.contains(&name) || value.contains('/')
}

/// See [`Driver::load_mode`].
#[derive(Debug, Clone, PartialEq)]
pub struct LoadMode {
    /// Run on each loader connection before its first insert.
    pub before: Vec<String>,
    /// Run on each loader connection after its last insert of a table.
    pub after: Vec<String>,
    /// Rows per transaction; `None`: a whole table in one transaction
    /// (which is what InnoDB's bulk insert into an empty table needs).
    pub rows_per_commit: Option<usize>,
}

impl Default for LoadMode {
    fn default() -> Self {
        LoadMode {
            before: Vec::new(),
            after: Vec::new(),
            rows_per_commit: Some(10_000),
        }
    }
}

/// A reading of an engine's counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    /// The views or statements they were read from.
    pub source: String,
    pub values: BTreeMap<String, f64>,
    /// The server's waits since it started, where it sums them (MySQL and
    /// MariaDB with performance_schema on), or why not.
    pub waits: Option<Result<crate::measure::waits::Waits, crate::measure::Unmeasured>>,
    /// What each statement did since the server started (MySQL's and
    /// MariaDB's digests, PostgreSQL's pg_stat_statements), or why not.
    pub statements:
        Option<Result<crate::measure::statements::Statements, crate::measure::Unmeasured>>,
    /// Statements relbench sent after reading `values` in this reading
    /// (its queries of the engine's accounting): counted by the server in
    /// the next reading's values, not the benchmark's.
    pub trailing_statements: f64,
}

/// What the server counted, between two readings of its counters, of the
/// work relbench counts itself: a check that every event was counted
/// once, and the only count of a step split over client hosts that no
/// one host made.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerCount {
    pub count: f64,
    /// The counters summed, in words.
    pub counters: &'static str,
    /// Whether they count statements or whole events (transactions).
    pub of: Counted,
    /// How late the server may publish what it counted, in seconds: the
    /// count may be short by this long's work at either edge.
    pub lag_secs: f64,
}

pub use crate::measure::Counted;

/// The delta of the counters named, summed (those absent count 0).
pub fn counter_delta(before: &Counters, after: &Counters, names: &[&str]) -> f64 {
    names
        .iter()
        .map(|n| after.values.get(*n).unwrap_or(&0.0) - before.values.get(*n).unwrap_or(&0.0))
        .sum()
}

/// The numeric (name, value) pairs of a counter listing whose rows are
/// (name, value); text values (versions, on/off switches, timestamps) are
/// left out.
pub fn numeric(rows: Vec<Vec<Option<String>>>) -> BTreeMap<String, f64> {
    rows.into_iter()
        .filter_map(|r| {
            let mut r = r.into_iter();
            let (k, v) = (r.next()??, r.next()??);
            Some((k, v.trim().parse::<f64>().ok().filter(|f| f.is_finite())?))
        })
        .collect()
}

/// Whether a host name is this machine.
pub fn is_loopback(host: &str) -> bool {
    matches!(host, "localhost" | "::1" | "[::1]") || host.starts_with("127.")
}

/// The connection half of a target: what its clients and the loader talk
/// to. The engine and the workloads see only this.
pub trait Driver: Send + Sync {
    fn engine(&self) -> EngineKind;
    fn dialect(&self) -> Dialect {
        self.engine().dialect()
    }
    /// Opens one client connection.
    fn connect(&self) -> DbResult<Box<dyn Conn>>;
    /// Version and effective configuration.
    fn facts(&self) -> anyhow::Result<TargetFacts>;
    /// Whether several connections can write at once; when not, the loader
    /// uses one writer, since parallel writers would only queue on a lock.
    fn concurrent_writers(&self) -> bool;
    /// The engine's settle step: ANALYZE the tables, then flush, checkpoint or
    /// wait for compaction, waiting at most `wait` (the plan's settle
    /// `max`). Returns notes on what it did, for the results.
    fn settle(
        &self,
        tables: &[String],
        wait: std::time::Duration,
    ) -> anyhow::Result<BTreeMap<String, String>>;
    /// Runs one statement of the plan's own (a maintenance step, a hook) as
    /// the most privileged user relbench has here: root or the superuser
    /// over a managed server's private socket, the plan's user otherwise.
    /// Returns the rows it produced, as text. With a timeout, relbench
    /// stops waiting then (a server may run the statement on until it next
    /// writes to the connection; SQLite's is interrupted).
    fn admin_sql(
        &self,
        sql: &str,
        timeout: Option<std::time::Duration>,
    ) -> anyhow::Result<Vec<Vec<Option<String>>>>;
    /// How the loader should talk to this engine: statements that put a
    /// loader connection in the engine's bulk-load mode and take it out
    /// again, and how many rows go in one transaction.
    fn load_mode(&self) -> LoadMode {
        LoadMode::default()
    }
    /// Appended to CREATE TABLE (a storage engine, for MySQL and MariaDB).
    fn table_options(&self) -> String {
        String::new()
    }
    /// What the server counted of relbench's own work between two
    /// readings of [`Driver::counters`] (`transactional`: the workload's
    /// events are explicit transactions); `None` where no counter says.
    fn server_count(
        &self,
        _before: &Counters,
        _after: &Counters,
        _transactional: bool,
    ) -> Option<ServerCount> {
        None
    }
    /// The engine's own counters now (`SHOW GLOBAL STATUS`, `pg_stat_*`),
    /// numeric values only, with where they come from; `None` for an engine
    /// that keeps none. With `internals` (a measured window's edges), its
    /// accounting of waits and statements too: the step's edges, which
    /// only need the counters, never pay for those queries.
    fn counters(&self, _internals: bool) -> Option<anyhow::Result<Counters>> {
        None
    }
    /// A sampler of where the benchmark's connections wait, every
    /// `every`, from [`WaitSampling::start`] to [`WaitSampling::finish`]
    /// (PostgreSQL's `wait_event`); `None` for an engine that sums its
    /// waits in its counters instead, or keeps none.
    fn sample_waits(&self, _every: std::time::Duration) -> Option<anyhow::Result<WaitSampling>> {
        None
    }
}

/// The plan the engine chooses for `sql` (its values written in), as the
/// engine prints it: EXPLAIN in JSON where it has it, SQLite's query plan
/// a detail a line. Asked as the administrator, with a timeout: EXPLAIN
/// runs nothing, but plans it.
pub fn explain<D: Driver + ?Sized>(
    d: &D,
    sql: &str,
) -> anyhow::Result<(crate::measure::plans::PlanFormat, String)> {
    use crate::measure::plans::PlanFormat;
    let (q, format) = match d.dialect() {
        Dialect::Mysql => (format!("EXPLAIN FORMAT=JSON {sql}"), PlanFormat::MysqlJson),
        Dialect::Postgres => (
            format!("EXPLAIN (FORMAT JSON) {sql}"),
            PlanFormat::PostgresJson,
        ),
        Dialect::Sqlite => (format!("EXPLAIN QUERY PLAN {sql}"), PlanFormat::SqliteRows),
    };
    let rows = d.admin_sql(&q, Some(std::time::Duration::from_secs(10)))?;
    let text = match format {
        PlanFormat::SqliteRows => rows
            .iter()
            .filter_map(|r| r.last().cloned().flatten())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => rows
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .unwrap_or_default(),
    };
    Ok((format, text))
}

/// A thread sampling a server's waits over a window: made (and its
/// connection opened) before the step, started as the window opens, so
/// no connection is set up at the window's edge.
pub struct WaitSampling {
    go: Option<std::sync::mpsc::Sender<()>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<anyhow::Result<crate::measure::waits::Waits>>>,
}

impl WaitSampling {
    /// Readies `sample` on a thread of its own: once [`WaitSampling::start`]
    /// is called it runs until told to stop, and returns what it saw.
    pub fn ready(
        sample: impl FnOnce(&std::sync::atomic::AtomicBool) -> anyhow::Result<crate::measure::waits::Waits>
            + Send
            + 'static,
    ) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (go, started) = std::sync::mpsc::channel();
        let flag = stop.clone();
        WaitSampling {
            go: Some(go),
            stop,
            thread: Some(std::thread::spawn(move || {
                started
                    .recv()
                    .map_err(|_| anyhow::anyhow!("the window never opened"))?;
                sample(&flag)
            })),
        }
    }

    /// Starts sampling: the window has opened.
    pub fn start(&mut self) {
        if let Some(go) = self.go.take() {
            let _ = go.send(());
        }
    }

    /// Stops sampling and returns the window's waits.
    pub fn finish(mut self) -> anyhow::Result<crate::measure::waits::Waits> {
        self.halt();
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(got)) => got,
            _ => Err(anyhow::anyhow!("the wait sampler panicked")),
        }
    }

    /// Tells the thread to stop (one never started ends its wait).
    fn halt(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        drop(self.go.take());
    }
}

impl Drop for WaitSampling {
    /// A window left half way (Ctrl-C, a failed step): the thread stops
    /// querying the server and ends by itself.
    fn drop(&mut self) {
        self.halt();
    }
}

/// The site half of a target: where its data lives, the process that
/// serves it, and its lifecycle. The runner and the sampler see this.
pub trait Site: Send + Sync {
    /// The hold on a server relbench manages (or none, for a URL target),
    /// which the lifecycle methods below go through unless a target
    /// overrides them.
    fn server(&self) -> Option<&server::Handle> {
        None
    }
    /// Removes any data from an earlier run so a load starts empty.
    fn reset(&self) -> anyhow::Result<()>;
    /// Whether `table`, which the plan's first step creates, is there (for
    /// `--resume`, and for a plan that runs on tables loaded before).
    fn has_data(&self, table: &str) -> bool;
    /// Bytes the database occupies on disk, when that can be known.
    /// Drops the benchmark database: only a managed server's, which
    /// relbench created (and creates again at its next start).
    fn drop_database(&self) -> anyhow::Result<()> {
        anyhow::bail!("only the database of a server relbench started may be dropped")
    }

    fn data_size(&self) -> Option<crate::measure::size::DbSize> {
        self.server()?.data_size()
    }
    /// Directory that holds the data (for the filesystem and device facts).
    fn data_dir(&self) -> Option<PathBuf> {
        self.server()?.data_dir()
    }
    /// The root process of the server, when relbench started it on this
    /// machine; the sampler reads its CPU and memory (and its children's).
    fn server_pid(&self) -> Option<u32> {
        self.server()?.pid()
    }
    /// Whether the database does its work on this machine (embedded, a
    /// managed server, or a URL on loopback or a socket), so that the
    /// machine's CPU and context switches per operation describe it.
    fn runs_here(&self) -> bool {
        true
    }
    /// `None` while the target can serve; why it cannot otherwise (a managed
    /// server that died, with the end of its log).
    fn health(&self) -> Option<String> {
        self.server()?.health()
    }
    /// The target's sequence is complete: stop a managed server and, when
    /// `remove_data` (relbench loaded it), remove the data it created.
    fn cleanup(&self, remove_data: bool) -> anyhow::Result<()> {
        self.server().map_or(Ok(()), |s| s.cleanup(remove_data))
    }
}

/// One target under test, both halves: what [`open`] returns.
pub trait Target: Driver + Site {}

impl<T: Driver + Site> Target for T {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue 64): a sysbench script's prepared `UPDATE
    /// sbtest1 set c=? WHERE id IN (?, ?)` reached PostgreSQL with its `?`
    /// and failed with a syntax error at "=?".
    #[test]
    fn every_question_mark_is_numbered_as_sysbenchs_pgsql_driver_numbers_it() {
        assert_eq!(
            numbered_placeholders("UPDATE sbtest1 set c=? WHERE id IN (?, ?, ?)"),
            "UPDATE sbtest1 set c=$1 WHERE id IN ($2, $3, $4)"
        );
        assert_eq!(numbered_placeholders("SELECT 1"), "SELECT 1");
        // Quotes and all, as drv_pgsql.c does.
        assert_eq!(numbered_placeholders("SELECT '?', ?"), "SELECT '$1', $2");
    }

    #[test]
    fn settings_split_into_the_recorded_few_and_all_but_the_instances_own() {
        let row = |k: &str, v: &str| vec![Some(k.to_string()), Some(v.to_string())];
        let (config, settings) = split_settings(
            vec![
                row("shared_buffers", "128MB"),
                row("work_mem", "4MB"),
                row("data_directory", "/srv/pg"),
                row("port", "5433"),
                vec![None, Some("x".into())],
            ],
            &["shared_buffers", "data_directory"],
        );
        assert_eq!(config.len(), 2);
        assert_eq!(config["data_directory"], "/srv/pg");
        assert_eq!(
            settings.keys().collect::<Vec<_>>(),
            ["shared_buffers", "work_mem"]
        );
    }

    #[test]
    fn counter_listings_keep_numeric_values_only() {
        let row = |k: &str, v: Option<&str>| vec![Some(k.to_string()), v.map(String::from)];
        let got = numeric(vec![
            row("Questions", Some("1234")),
            row("blk_read_time", Some(" 1.5 ")),
            row("version", Some("10.11.19-MariaDB")),
            row("stats_reset", None),
            vec![Some("short".into())],
        ]);
        assert_eq!(got.len(), 2);
        assert_eq!(got["Questions"], 1234.0);
        assert_eq!(got["blk_read_time"], 1.5);
        assert!(is_loopback("127.0.0.1") && is_loopback("localhost") && !is_loopback("db1"));
    }

    #[test]
    fn a_wait_sampler_samples_only_between_start_and_finish() {
        use std::sync::atomic::{AtomicU32, Ordering};
        let rounds = std::sync::Arc::new(AtomicU32::new(0));
        let sampler = |n: std::sync::Arc<AtomicU32>| {
            WaitSampling::ready(move |stop| {
                while !stop.load(Ordering::Relaxed) {
                    n.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Ok(crate::measure::waits::Waits::default())
            })
        };
        let s = sampler(rounds.clone());
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(
            rounds.load(Ordering::Relaxed),
            0,
            "sampled before the window"
        );
        let err = s.finish().unwrap_err().to_string();
        assert!(err.contains("never opened"), "{err}");
        let mut s = sampler(rounds.clone());
        s.start();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(s.finish().is_ok());
        let seen = rounds.load(Ordering::Relaxed);
        assert!(seen > 0);
        // Dropped mid-window (Ctrl-C): the thread stops by itself.
        let mut s = sampler(rounds.clone());
        s.start();
        drop(s);
        std::thread::sleep(std::time::Duration::from_millis(50));
        let after = rounds.load(Ordering::Relaxed);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(
            rounds.load(Ordering::Relaxed),
            after,
            "a dropped sampler went on"
        );
    }
}
