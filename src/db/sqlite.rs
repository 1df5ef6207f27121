//! The embedded SQLite target (rusqlite with SQLite compiled in).
//!
//! The target's configuration is a set of pragmas applied on every connection
//! (some, like `cache_size`, are per connection) and read back from the engine
//! for the results, so a report shows what SQLite actually ran with.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::{ffi, Connection, OpenFlags};

use super::{
    Conn, DbError, DbResult, Driver, EngineKind, ErrorKind, LoadMode, Param, Site, Stmt,
    TargetFacts,
};

/// Pragmas a plan may set, with the values each accepts (`None`: an integer).
/// SQLite ignores a pragma it does not know, so a typo would silently change
/// nothing; the plan validator checks names against this list instead.
pub const PRAGMAS: &[(&str, Option<&[&str]>)] = &[
    (
        "journal_mode",
        Some(&["delete", "truncate", "persist", "memory", "wal", "off"]),
    ),
    (
        "synchronous",
        Some(&["off", "normal", "full", "extra", "0", "1", "2", "3"]),
    ),
    ("cache_size", None),
    ("page_size", None),
    ("mmap_size", None),
    (
        "temp_store",
        Some(&["default", "file", "memory", "0", "1", "2"]),
    ),
    ("locking_mode", Some(&["normal", "exclusive"])),
    ("wal_autocheckpoint", None),
    ("busy_timeout", None),
    (
        "auto_vacuum",
        Some(&["none", "full", "incremental", "0", "1", "2"]),
    ),
    ("journal_size_limit", None),
    ("cache_spill", None),
    ("secure_delete", Some(&["on", "off", "fast", "0", "1"])),
    ("automatic_index", Some(&["on", "off", "0", "1"])),
    ("threads", None),
];

/// Pragmas recorded with the results even when the plan leaves them alone.
const RECORDED: &[&str] = &[
    "journal_mode",
    "synchronous",
    "cache_size",
    "page_size",
    "mmap_size",
    "temp_store",
    "locking_mode",
    "wal_autocheckpoint",
    "busy_timeout",
    "auto_vacuum",
];

/// Connections wait this long for a lock before a statement fails as busy,
/// unless the plan sets `busy_timeout`. Several clients writing one SQLite
/// file queue on its lock; failing fast would measure the retry loop instead.
const DEFAULT_BUSY_TIMEOUT_MS: i64 = 10_000;

/// Prepared statements kept per connection: enough for every statement of
/// every table of the widest workload at the usual scales.
const STATEMENT_CACHE: usize = 512;

/// The application id in the header of every database file relbench
/// creates ("RBNC"): the mark that lets it remove the file later.
const APPLICATION_ID: i32 = 0x5242_4E43;

/// Why relbench may not remove or replace the file at `path`, if it may
/// not: it exists and is not a SQLite database relbench created (one with
/// its application id). A missing file is relbench's to create.
pub fn foreign(path: &Path) -> Option<String> {
    let m = std::fs::symlink_metadata(path).ok()?;
    let mut head = [0u8; 72];
    let read = m.is_file()
        && std::fs::File::open(path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
            .is_ok();
    let ours = read
        && head.starts_with(b"SQLite format 3\0")
        && head[68..72] == APPLICATION_ID.to_be_bytes();
    (!ours).then(|| {
        format!(
            "{} exists and relbench did not create it (it is not a SQLite database relbench marked); \
             relbench never deletes or replaces a file it did not make",
            path.display()
        )
    })
}

pub struct SqliteDriver {
    path: PathBuf,
    pragmas: Vec<(String, String)>,
    /// A file the plan named is the user's: kept when the run is done (a
    /// file in the results directory is removed).
    keep: bool,
    /// The target's `table_options` (`STRICT`).
    extra_options: Option<String>,
}

impl SqliteDriver {
    pub fn new(path: PathBuf, pragmas: Vec<(String, String)>) -> Self {
        SqliteDriver {
            path,
            pragmas,
            keep: false,
            extra_options: None,
        }
    }

    /// Appends `options` to every CREATE TABLE.
    pub fn with_table_options(mut self, options: Option<String>) -> Self {
        self.extra_options = options;
        self
    }

    /// Keeps the database file after the run.
    pub fn keeping(mut self) -> Self {
        self.keep = true;
        self
    }

    /// Refuses to touch a file relbench did not create.
    fn refuse_foreign(&self) -> anyhow::Result<()> {
        if let Some(why) = foreign(&self.path) {
            bail!("{why}; name a new file in `path`, or remove this one yourself");
        }
        Ok(())
    }

    fn remove_files(&self) -> anyhow::Result<()> {
        self.refuse_foreign()?;
        for p in std::iter::once(self.path.clone()).chain(self.side_files()) {
            match std::fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("removing {}", p.display()));
                }
            }
        }
        Ok(())
    }

    fn open(&self) -> DbResult<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| map_err(e, &self.path))?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        if !self.pragmas.iter().any(|(k, _)| k == "busy_timeout") {
            run_to_end(
                &conn,
                &format!("PRAGMA busy_timeout = {DEFAULT_BUSY_TIMEOUT_MS}"),
            )?;
        }
        for (name, value) in &self.pragmas {
            // Names and values were checked by the plan validator (identifiers
            // or integers), so formatting them into the statement is safe.
            run_to_end(&conn, &format!("PRAGMA {name} = {value}"))?;
        }
        Ok(conn)
    }

    fn side_files(&self) -> [PathBuf; 3] {
        let p = self.path.as_os_str();
        let with = |suffix: &str| {
            let mut s = p.to_os_string();
            s.push(suffix);
            PathBuf::from(s)
        };
        [with("-wal"), with("-shm"), with("-journal")]
    }
}

impl Driver for SqliteDriver {
    fn admin_sql(
        &self,
        sql: &str,
        timeout: Option<std::time::Duration>,
    ) -> anyhow::Result<Vec<Vec<Option<String>>>> {
        let conn = self.open()?;
        // A watchdog interrupts the statement at the timeout; dropping the
        // sender at the end of this call lets it go.
        let (_done, watch) = std::sync::mpsc::channel::<()>();
        if let Some(t) = timeout {
            let handle = conn.get_interrupt_handle();
            std::thread::spawn(move || {
                if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = watch.recv_timeout(t) {
                    handle.interrupt();
                }
            });
        }
        let mut st = conn.prepare(sql)?;
        Ok(text_rows(&mut st)?)
    }

    fn table_options(&self) -> String {
        super::spec::table_suffix(None, self.extra_options.as_deref())
    }

    fn engine(&self) -> EngineKind {
        EngineKind::Sqlite
    }

    fn connect(&self) -> DbResult<Box<dyn Conn>> {
        Ok(Box::new(SqliteConn {
            conn: self.open()?,
            sql: Vec::new(),
            path: self.path.clone(),
            plain: false,
        }))
    }

    fn facts(&self) -> anyhow::Result<TargetFacts> {
        let conn = self
            .open()
            .with_context(|| format!("opening SQLite database {}", self.path.display()))?;
        let version: String = conn.query_row("SELECT sqlite_version()", [], |r| r.get(0))?;
        let mut config = BTreeMap::new();
        let names = RECORDED
            .iter()
            .copied()
            .chain(self.pragmas.iter().map(|(k, _)| k.as_str()));
        for name in names {
            let value: rusqlite::types::Value =
                conn.query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))?;
            let text = match value {
                rusqlite::types::Value::Integer(i) => i.to_string(),
                rusqlite::types::Value::Text(t) => t,
                rusqlite::types::Value::Real(f) => f.to_string(),
                other => format!("{other:?}"),
            };
            config.insert(name.to_string(), text);
        }
        Ok(TargetFacts {
            version: format!("SQLite {version}"),
            config,
            datadir: Some(self.path.display().to_string()),
            config_file: None,
            transport: None,
            settings: BTreeMap::new(),
        })
    }

    fn concurrent_writers(&self) -> bool {
        false
    }

    fn load_mode(&self) -> LoadMode {
        // One transaction per table: one fsync instead of one per batch.
        LoadMode {
            rows_per_commit: None,
            ..LoadMode::default()
        }
    }

    fn settle(
        &self,
        tables: &[String],
        _wait: std::time::Duration,
    ) -> anyhow::Result<BTreeMap<String, String>> {
        let mut conn = self.connect()?;
        let mut notes = BTreeMap::new();
        for t in tables {
            conn.batch(&format!("ANALYZE {t}"))
                .with_context(|| format!("ANALYZE {t}"))?;
        }
        notes.insert("analyzed_tables".into(), tables.len().to_string());
        // Moves the WAL's pages into the database file so that the next step
        // does not pay for a checkpoint the previous steps caused.
        conn.batch("PRAGMA wal_checkpoint(TRUNCATE)")
            .context("PRAGMA wal_checkpoint(TRUNCATE)")?;
        notes.insert("wal_checkpoint".into(), "truncate".into());
        Ok(notes)
    }
}

impl Site for SqliteDriver {
    fn reset(&self) -> anyhow::Result<()> {
        self.remove_files()?;
        // A new database marked as relbench's, so that a later run may
        // start it afresh, and nothing else ever is.
        let conn = self.open().map_err(|e| anyhow::anyhow!("{e}"))?;
        run_to_end(&conn, &format!("PRAGMA application_id = {APPLICATION_ID}"))
            .map_err(|e| anyhow::anyhow!("marking {}: {e}", self.path.display()))
    }

    fn has_data(&self, table: &str) -> bool {
        self.path.exists()
            && rusqlite::Connection::open_with_flags(
                &self.path,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
            )
            .and_then(|c| {
                c.query_row(
                    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                    [table],
                    |r| r.get::<_, i64>(0),
                )
            })
            .is_ok_and(|n| n == 1)
    }

    fn data_size(&self) -> Option<crate::measure::size::DbSize> {
        let mut size = crate::measure::size::DbSize::default();
        size.add(&std::fs::metadata(&self.path).ok()?, false);
        if let Ok(m) = std::fs::metadata(&self.side_files()[0]) {
            size.add(&m, true);
        }
        Some(size)
    }

    fn data_dir(&self) -> Option<PathBuf> {
        self.path.parent().map(Path::to_path_buf)
    }

    fn cleanup(&self, remove_data: bool) -> anyhow::Result<()> {
        if !remove_data || self.keep {
            return Ok(());
        }
        self.remove_files()
    }
}

struct SqliteConn {
    conn: Connection,
    /// The SQL of each prepared statement; rusqlite keeps the compiled
    /// statements in its per-connection cache, keyed by this text.
    sql: Vec<String>,
    path: PathBuf,
    /// Compile each statement at each execution (no prepared statements).
    plain: bool,
}

impl SqliteConn {
    fn stmt(&self, stmt: Stmt) -> DbResult<rusqlite::CachedStatement<'_>> {
        if self.plain {
            // Emptying the cache makes the next line compile afresh.
            self.conn.flush_prepared_statement_cache();
        }
        self.conn
            .prepare_cached(&self.sql[stmt.0])
            .map_err(|e| map_err(e, &self.path))
    }
}

fn bind(st: &mut rusqlite::Statement<'_>, params: &[Param<'_>], path: &Path) -> DbResult<()> {
    for (i, p) in params.iter().enumerate() {
        let r = match *p {
            Param::Int(v) => st.raw_bind_parameter(i + 1, v),
            Param::Str(s) => st.raw_bind_parameter(i + 1, s),
        };
        r.map_err(|e| map_err(e, path))?;
    }
    Ok(())
}

impl Conn for SqliteConn {
    fn set_plain(&mut self, plain: bool) {
        self.plain = plain;
    }

    fn plain(&self) -> bool {
        self.plain
    }

    fn prepare(&mut self, sql: &str) -> DbResult<Stmt> {
        if let Some(i) = self.sql.iter().position(|s| s == sql) {
            return Ok(Stmt(i));
        }
        // Compile now so that a bad statement fails before the step starts.
        self.conn
            .prepare_cached(sql)
            .map_err(|e| map_err(e, &self.path))?;
        self.sql.push(sql.to_string());
        Ok(Stmt(self.sql.len() - 1))
    }

    fn query(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<u64> {
        let path = &self.path;
        let mut st = self.stmt(stmt)?;
        bind(&mut st, params, path)?;
        let mut rows = st.raw_query();
        let mut n = 0;
        while rows.next().map_err(|e| map_err(e, path))?.is_some() {
            n += 1;
        }
        Ok(n)
    }

    fn query_last(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        col: usize,
    ) -> DbResult<(u64, Option<i64>)> {
        let path = &self.path;
        let mut st = self.stmt(stmt)?;
        bind(&mut st, params, path)?;
        let mut rows = st.raw_query();
        let (mut n, mut last) = (0, None);
        while let Some(row) = rows.next().map_err(|e| map_err(e, path))? {
            n += 1;
            last = row.get::<_, Option<i64>>(col).ok().flatten();
        }
        Ok((n, last))
    }

    fn query_rows(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
    ) -> DbResult<Vec<Vec<Option<String>>>> {
        let path = &self.path;
        let mut st = self.stmt(stmt)?;
        bind(&mut st, params, path)?;
        text_rows(&mut st).map_err(|e| map_err(e, path))
    }

    fn exec(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<u64> {
        let path = &self.path;
        let mut st = self.stmt(stmt)?;
        bind(&mut st, params, path)?;
        let n = st.raw_execute().map_err(|e| map_err(e, path))?;
        Ok(n as u64)
    }

    fn batch(&mut self, sql: &str) -> DbResult<()> {
        run_to_end(&self.conn, sql)
    }

    fn text_rows(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        let path = &self.path;
        let mut st = self.conn.prepare(sql).map_err(|e| map_err(e, path))?;
        text_rows(&mut st).map_err(|e| map_err(e, path))
    }

    fn begin(&mut self, write: bool) -> DbResult<()> {
        // A deferred transaction that reads and then writes can fail at once
        // with SQLITE_BUSY when another connection holds the write lock (the
        // busy handler is not called, to avoid deadlock); IMMEDIATE takes the
        // write lock first and waits for it instead.
        let sql = if write { "BEGIN IMMEDIATE" } else { "BEGIN" };
        let st = self.prepare(sql)?;
        self.exec(st, &[]).map(drop)
    }

    fn commit(&mut self) -> DbResult<()> {
        let st = self.prepare("COMMIT")?;
        self.exec(st, &[]).map(drop)
    }

    fn rollback(&mut self) -> DbResult<()> {
        if self.conn.is_autocommit() {
            return Ok(());
        }
        let st = self.prepare("ROLLBACK")?;
        self.exec(st, &[]).map(drop)
    }
}

/// A statement's rows, every value as text (NULL as `None`).
fn text_rows(st: &mut rusqlite::Statement<'_>) -> rusqlite::Result<Vec<Vec<Option<String>>>> {
    use rusqlite::types::ValueRef;
    let n = st.column_count();
    let mut rows = st.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(
            (0..n)
                .map(|i| {
                    Ok(match row.get_ref(i)? {
                        ValueRef::Null => None,
                        ValueRef::Integer(v) => Some(v.to_string()),
                        ValueRef::Real(v) => Some(v.to_string()),
                        ValueRef::Text(t) | ValueRef::Blob(t) => {
                            Some(String::from_utf8_lossy(t).into_owned())
                        }
                    })
                })
                .collect::<rusqlite::Result<Vec<_>>>()?,
        );
    }
    Ok(out)
}

/// Runs one or more statements, reading any rows they return (PRAGMAs do)
/// to the end.
fn run_to_end(conn: &Connection, sql: &str) -> DbResult<()> {
    let path = Path::new(conn.path().unwrap_or(""));
    let mut batch = rusqlite::Batch::new(conn, sql);
    while let Some(mut st) = batch.next().map_err(|e| map_err(e, path))? {
        let mut rows = st.raw_query();
        while rows.next().map_err(|e| map_err(e, path))?.is_some() {}
    }
    Ok(())
}

fn map_err(e: rusqlite::Error, path: &Path) -> DbError {
    let kind = match &e {
        rusqlite::Error::SqliteFailure(f, _) => match f.code {
            ffi::ErrorCode::DatabaseBusy | ffi::ErrorCode::DatabaseLocked => ErrorKind::Busy,
            ffi::ErrorCode::ConstraintViolation => ErrorKind::Constraint,
            ffi::ErrorCode::DiskFull => ErrorKind::DiskFull,
            ffi::ErrorCode::CannotOpen
            | ffi::ErrorCode::NotADatabase
            | ffi::ErrorCode::SystemIoFailure
            | ffi::ErrorCode::ReadOnly => ErrorKind::Connection,
            _ => ErrorKind::Other,
        },
        _ => ErrorKind::Other,
    };
    let message = match kind {
        ErrorKind::DiskFull => format!(
            "{e}: the disk that holds {} is full; free space or point the target's `path` elsewhere",
            path.display()
        ),
        ErrorKind::Connection => format!("{e} ({})", path.display()),
        _ => e.to_string(),
    };
    DbError::new(kind, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pragmas_are_applied_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let d = SqliteDriver::new(
            dir.path().join("t.db"),
            vec![
                ("journal_mode".into(), "wal".into()),
                ("synchronous".into(), "normal".into()),
                ("cache_size".into(), "-4096".into()),
            ],
        );
        let f = d.facts().unwrap();
        assert!(f.version.starts_with("SQLite 3."), "{}", f.version);
        assert_eq!(f.config["journal_mode"], "wal");
        assert_eq!(f.config["synchronous"], "1");
        assert_eq!(f.config["cache_size"], "-4096");
        assert_eq!(f.config["busy_timeout"], "10000");
    }

    #[test]
    fn query_counts_rows_and_exec_counts_changes() {
        let dir = tempfile::tempdir().unwrap();
        let d = SqliteDriver::new(dir.path().join("t.db"), vec![]);
        d.reset().unwrap();
        let mut c = d.connect().unwrap();
        c.batch("CREATE TABLE t (id INTEGER PRIMARY KEY, c TEXT)")
            .unwrap();
        let ins = c
            .prepare("INSERT INTO t (id, c) VALUES (?, ?), (?, ?)")
            .unwrap();
        let n = c
            .exec(
                ins,
                &[
                    Param::Int(1),
                    Param::Str("a"),
                    Param::Int(2),
                    Param::Str("b"),
                ],
            )
            .unwrap();
        assert_eq!(n, 2);
        let sel = c.prepare("SELECT c FROM t WHERE id IN (?, ?, ?)").unwrap();
        assert_eq!(
            c.query(sel, &[Param::Int(1), Param::Int(2), Param::Int(9)])
                .unwrap(),
            2
        );
        // Preparing the same text again returns the same handle.
        assert_eq!(
            c.prepare("SELECT c FROM t WHERE id IN (?, ?, ?)").unwrap(),
            sel
        );
        let e = c.exec(
            ins,
            &[
                Param::Int(1),
                Param::Str("x"),
                Param::Int(3),
                Param::Str("y"),
            ],
        );
        assert_eq!(e.unwrap_err().kind, ErrorKind::Constraint);
        assert!(d.data_size().unwrap().apparent > 0);
        assert!(d.has_data("t") && !d.has_data("other"));
        drop(c);
        d.cleanup(true).unwrap();
        assert!(!d.has_data("t"));
    }

    #[test]
    fn a_file_relbench_did_not_create_is_never_removed() {
        // A `path` naming an existing file once deleted it.
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("notes.txt");
        std::fs::write(&theirs, "someone's notes").unwrap();
        let d = SqliteDriver::new(theirs.clone(), vec![]);
        let e = d.reset().unwrap_err().to_string();
        assert!(e.contains("relbench did not create it"), "{e}");
        assert!(d.cleanup(true).is_err());
        assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "someone's notes");
        // Another program's SQLite database is not relbench's either.
        let db = dir.path().join("app.db");
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch("CREATE TABLE x (a)")
            .unwrap();
        assert!(foreign(&db).is_some());
        // One relbench created is, and a later run starts it afresh.
        let mine = SqliteDriver::new(dir.path().join("mine.db"), vec![]);
        mine.reset().unwrap();
        assert!(foreign(&dir.path().join("mine.db")).is_none());
        mine.reset().unwrap();
    }
}
