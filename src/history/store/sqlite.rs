//! The history in a SQLite file: created with relbench's mark (its own
//! application id), and an existing file without it refused, so relbench
//! never writes into a database it did not create.

use std::path::Path;

use anyhow::{bail, Context};
use rusqlite::types::{ToSqlOutput, ValueRef};

use super::{Arg, Backend, Value, Writes};

/// "RBHS": a relbench history (targets' files carry another mark).
const APPLICATION_ID: i32 = 0x5242_4853;

pub struct Sqlite {
    conn: rusqlite::Connection,
    path: std::path::PathBuf,
}

impl Sqlite {
    /// Opens the history file at `path`, making it when `create` and it
    /// is not there. The file must be this user's: a link or a file
    /// another user made is refused and left as it is (regression: a
    /// planted link made root create its target or convert an empty
    /// victim file into a history, and a planted history's trigger ran in
    /// root's process). Its directory is made or checked as results
    /// directories are ([`crate::util::secure_dir`]).
    pub fn open(path: &Path, create: bool) -> anyhow::Result<Sqlite> {
        use std::os::unix::fs::MetadataExt;
        let me = crate::util::my_uid();
        let meta = std::fs::symlink_metadata(path);
        let new = meta.is_err();
        match &meta {
            Ok(m) if m.file_type().is_symlink() => bail!(
                "the history {} is a symbolic link (owned by uid {}); relbench opens only a history file \
                 itself made: name the file it points to, if it is yours, or another path",
                path.display(),
                m.uid()
            ),
            Ok(m) if !m.is_file() || m.uid() != me => bail!(
                "the history {} is not a file of this user's (uid {}, {}): relbench never opens a database \
                 another user could have made; name another file with --history",
                path.display(),
                m.uid(),
                if m.is_file() { "a file" } else { "not a file" }
            ),
            Ok(_) => {}
            Err(_) if !create => bail!(
                "there is no history at {}: `relbench history add DIR…` (or `run --history`) makes one, or \
                 name the one you have with --history",
                path.display()
            ),
            Err(_) => {}
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::util::secure_dir(dir, &[me], "the history's directory")?;
        }
        let conn = rusqlite::Connection::open(path)
            .with_context(|| format!("opening the history {}", path.display()))?;
        let id: i32 = conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .with_context(|| {
                format!(
                    "{} is not a SQLite database; name another file with --history",
                    path.display()
                )
            })?;
        if new || (id == 0 && is_empty(&conn)) {
            conn.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID}"))?;
        } else if id != APPLICATION_ID {
            bail!(
                "{} is a SQLite database relbench did not create as a history (its application id is not \
                 relbench's); relbench never writes into a database it did not make: name another file with --history",
                path.display()
            );
        }
        // The history is written by one command at a time, read by many.
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 10000;",
        )?;
        Ok(Sqlite {
            conn,
            path: path.to_path_buf(),
        })
    }
}

fn is_empty(conn: &rusqlite::Connection) -> bool {
    conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })
    .is_ok_and(|n| n == 0)
}

impl rusqlite::ToSql for Arg {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        use rusqlite::types::Value as V;
        Ok(match self {
            Arg::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Arg::Int(i) => ToSqlOutput::Owned(V::Integer(*i)),
            Arg::Real(Some(v)) if v.is_finite() => ToSqlOutput::Owned(V::Real(*v)),
            Arg::Real(_) => ToSqlOutput::Owned(V::Null),
        })
    }
}

/// The store's placeholders as SQLite numbers them: `$1` → `?1` (its
/// `$name` would be numbered by first appearance, not by the digits). The
/// store's statements hold no `$` but placeholders: values are bound.
fn numbered(sql: &str) -> String {
    let b = sql.as_bytes();
    let mut out = String::with_capacity(sql.len());
    for (i, c) in sql.char_indices() {
        if c == '$' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    out
}

impl Backend for Sqlite {
    fn scan(
        &mut self,
        sql: &str,
        args: &[Arg],
        row: &mut dyn FnMut(&[Value<'_>]),
    ) -> anyhow::Result<()> {
        scan_on(&self.conn, sql, args, row)
    }

    fn write(&mut self, w: &Writes) -> anyhow::Result<()> {
        let tx = self.conn.transaction().context("writing the history")?;
        for (sql, args) in &w.stmts {
            tx.prepare_cached(&numbered(sql))
                .and_then(|mut st| st.execute(rusqlite::params_from_iter(args)))
                .context("writing the history")?;
        }
        // Dropped without a commit, the transaction rolls back.
        tx.commit().context("writing the history")
    }

    /// Pieces by rowid, each on a read-only connection of its own: reading
    /// 2 million cells takes two cores instead of one.
    fn scan_parts(
        &mut self,
        table: &str,
        sql: &str,
        parts: usize,
        row: &(dyn Fn(usize, &[Value<'_>]) + Sync),
    ) -> anyhow::Result<()> {
        let max: i64 = self.conn.query_row(
            &format!("SELECT COALESCE(MAX(rowid), 0) FROM {table}"),
            [],
            |r| r.get(0),
        )?;
        let parts = parts.max(1) as i64;
        let per = max / parts + 1;
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..parts)
                .map(|k| {
                    let sql = sql.replace(
                        "{part}",
                        &format!("rowid > {} AND rowid <= {}", k * per, (k + 1) * per),
                    );
                    let path = &self.path;
                    scope.spawn(move || -> anyhow::Result<()> {
                        let conn = rusqlite::Connection::open_with_flags(
                            path,
                            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                                | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
                        )?;
                        scan_on(&conn, &sql, &[], &mut |r| row(k as usize, r))
                    })
                })
                .collect();
            handles
                .into_iter()
                .try_for_each(|h| h.join().expect("a reading thread panicked"))
        })
    }
}

fn scan_on(
    conn: &rusqlite::Connection,
    sql: &str,
    args: &[Arg],
    row: &mut dyn FnMut(&[Value<'_>]),
) -> anyhow::Result<()> {
    let mut st = conn.prepare(&numbered(sql))?;
    let n = st.column_count();
    anyhow::ensure!(n <= 16, "a history query of more than 16 columns");
    let mut rows = st.query(rusqlite::params_from_iter(args))?;
    while let Some(r) = rows.next()? {
        let mut vals: [Value<'_>; 16] = [Value::Null; 16];
        for (i, v) in vals.iter_mut().enumerate().take(n) {
            *v = match r.get_ref(i)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(i) => Value::Int(i),
                ValueRef::Real(f) => Value::Real(f),
                ValueRef::Text(t) | ValueRef::Blob(t) => {
                    Value::Text(std::str::from_utf8(t).unwrap_or(""))
                }
            };
        }
        row(&vals[..n]);
    }
    Ok(())
}
