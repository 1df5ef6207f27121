//! One client's side of its Lua state: the engine's connection and
//! recorder, lent for each call into the state ([`Current::lend`]), the
//! statements it prepared, its generator, and what a server's error looks
//! like to a script. The statement classes a script's statements count in.
//!
//! The state is made, used and dropped on its client's thread, so the
//! lent pointers never outlive the borrow.

use std::cell::{Cell, RefCell};
use std::time::Instant;

use mlua::{Lua, Table};

use super::rand::Draw;
use crate::db::{Conn, DbError, Dialect, ErrorKind, Param, ServerCode, Stmt};
use crate::measure::Recorder;

/// The statement classes a script's statements are counted in, by their
/// first word: a script's statements are known only as it runs.
pub const CLASSES: [&str; 8] = [
    "select", "insert", "update", "delete", "begin", "commit", "rollback", "other",
];
/// The class of a statement that returns rows (run with `Conn::query`,
/// every other with `Conn::exec`).
pub const SELECT: usize = 0;
/// The class of whatever is not one of the others, and of a script's
/// own failures.
pub const OTHER: usize = 7;

/// The class of a statement's text.
pub fn class_of(sql: &str) -> usize {
    let mut s = sql.trim_start();
    // Comments before the first word (sysbench's `/*! ... */` is after it).
    while let Some(rest) = s.strip_prefix("/*") {
        s = rest.split_once("*/").map_or("", |(_, r)| r).trim_start();
    }
    let word: String = s
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase();
    match word.as_str() {
        "select" | "with" | "show" | "explain" | "values" => SELECT,
        "insert" | "replace" => 1,
        "update" => 2,
        "delete" => 3,
        "begin" | "start" => 4,
        "commit" => 5,
        "rollback" => 6,
        _ => OTHER,
    }
}

thread_local! {
    static CURRENT: Cell<*const Current> = const { Cell::new(std::ptr::null()) };
}

/// Runs `f` with `cur` the current client of this thread's functions.
pub fn enter<R>(cur: &Current, f: impl FnOnce() -> R) -> R {
    struct Restore(*const Current);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.set(self.0);
        }
    }
    let _restore = Restore(CURRENT.replace(cur as *const Current));
    f()
}

pub(super) fn current<'a>() -> Option<&'a Current> {
    let p = CURRENT.get();
    // SAFETY: set by `enter` from a live `Current` for the length of the
    // call that runs the state; null otherwise.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Which server errors restart the event rather than end the script, as
/// sysbench's drivers decide.
#[derive(Debug, Clone, PartialEq)]
pub enum Ignore {
    /// `--mysql-ignore-errors`: these codes, or all.
    Mysql { codes: Vec<u16>, all: bool },
    /// PostgreSQL's deadlock, unique violation and serialisation failure.
    Postgres,
    /// SQLite's busy and locked.
    Sqlite,
}

impl Ignore {
    fn ignorable(&self, e: &DbError) -> bool {
        match (self, e.code) {
            (Ignore::Mysql { all: true, .. }, _) => true,
            (Ignore::Mysql { codes, .. }, Some(ServerCode::Mysql(c))) => codes.contains(&c),
            (Ignore::Postgres, Some(ServerCode::Sqlstate(s))) => {
                matches!(&s, b"40P01" | b"23505" | b"40001")
            }
            (Ignore::Sqlite, _) => matches!(e.kind, ErrorKind::Busy | ErrorKind::Deadlock),
            _ => false,
        }
    }
}

pub(super) struct Prepared {
    pub stmt: Stmt,
    pub class: usize,
    /// The connection it was prepared on (0: the engine's).
    pub conn: usize,
}

/// A statement the script asked for that cannot run: raised in the
/// script as a Lua error, so its own `pcall` or sysbench's message shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Misuse {
    #[error("interrupted (Ctrl-C)")]
    Interrupted,
    #[error("no connection here: statements run in thread_init, event, thread_done and commands")]
    NoConnection,
    #[error("not a statement of this connection")]
    NotAStatement,
    #[error("this connection was disconnected: take one with drv:connect() before its statements")]
    Disconnected,
}

/// One client's side of its Lua state: what its primitives act on.
pub struct Current {
    conn: Cell<Option<*mut (dyn Conn + 'static)>>,
    /// The thread's other connections (`drv:connect()` while one is
    /// open), opened by the engine before the step as the first is.
    more: RefCell<Vec<Box<dyn Conn>>>,
    rec: Cell<Option<*mut Recorder>>,
    pub(super) prepared: RefCell<Vec<Prepared>>,
    pub draw: RefCell<Draw>,
    /// Which of the thread's connections the script holds (the engine's
    /// first, then `more`'s).
    pub(super) connected: RefCell<Vec<bool>>,
    pub dialect: Dialect,
    pub ignore: Ignore,
    /// The kind of the last statement that failed, for the event's outcome.
    pub last_error: Cell<Option<ErrorKind>>,
    pub(super) buf: RefCell<Vec<u8>>,
}

impl Current {
    pub fn new(draw: Draw, dialect: Dialect, ignore: Ignore) -> Current {
        Current {
            conn: Cell::new(None),
            more: RefCell::new(Vec::new()),
            rec: Cell::new(None),
            prepared: RefCell::new(Vec::new()),
            draw: RefCell::new(draw),
            connected: RefCell::new(vec![false]),
            dialect,
            ignore,
            last_error: Cell::new(None),
            buf: RefCell::new(Vec::new()),
        }
    }

    /// The thread's connections besides the engine's, for the script's
    /// second and later `drv:connect()`.
    pub fn give_more(&self, more: Vec<Box<dyn Conn>>) {
        *self.connected.borrow_mut() = vec![false; 1 + more.len()];
        *self.more.borrow_mut() = more;
    }

    /// `drv:connect()`: the first of the thread's connections the script
    /// does not hold, or `None` when it holds every one.
    pub(super) fn connect(&self) -> Option<usize> {
        let mut held = self.connected.borrow_mut();
        let free = held.iter().position(|h| !h)?;
        held[free] = true;
        Some(free)
    }

    /// How many connections the thread has.
    pub(super) fn connections(&self) -> usize {
        self.connected.borrow().len()
    }

    /// `con:disconnect()`: the connection is the script's no longer (it
    /// stays open, for the next `drv:connect()`).
    pub(super) fn disconnect(&self, c: usize) {
        if let Some(h) = self.connected.borrow_mut().get_mut(c) {
            *h = false;
        }
    }

    /// Runs `f` with the connection (and the recorder, in an event) lent
    /// to the state's primitives.
    pub fn lend<R>(
        &self,
        conn: &mut dyn Conn,
        rec: Option<&mut Recorder>,
        f: impl FnOnce() -> R,
    ) -> R {
        // SAFETY: only the lifetime is erased; the pointer is cleared
        // below, before the borrow it came from ends, and used only by
        // calls `f` makes on this thread.
        let conn: *mut (dyn Conn + '_) = conn;
        let conn: *mut (dyn Conn + 'static) = unsafe { std::mem::transmute(conn) };
        self.conn.set(Some(conn));
        self.rec.set(rec.map(|r| r as *mut Recorder));
        let out = enter(self, f);
        self.conn.set(None);
        self.rec.set(None);
        out
    }

    /// Runs `f` on connection `c` of the thread (0: the engine's).
    pub(super) fn with_conn<R>(
        &self,
        c: usize,
        f: impl FnOnce(&mut dyn Conn) -> R,
    ) -> Result<R, Misuse> {
        // Ctrl-C ends a script's long command at its next statement.
        if crate::util::INTERRUPT.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Misuse::Interrupted);
        }
        // Statements run where a connection is lent (an event, a
        // command, thread_init), whichever of the thread's they use.
        let Some(first) = self.conn.get() else {
            return Err(Misuse::NoConnection);
        };
        if !self.connected.borrow().get(c).copied().unwrap_or(false) {
            return Err(Misuse::Disconnected);
        }
        match c {
            // SAFETY: set by `lend` for the call this runs in.
            0 => Ok(f(unsafe { &mut *first })),
            _ => {
                let mut more = self.more.borrow_mut();
                let conn = more.get_mut(c - 1).ok_or(Misuse::NoConnection)?;
                Ok(f(conn.as_mut()))
            }
        }
    }

    pub(super) fn record(&self, class: usize, t0: Instant, r: &Result<(), &DbError>) {
        let Some(rec) = self.rec.get() else { return };
        // SAFETY: as `with_conn`.
        let rec = unsafe { &mut *rec };
        match r {
            Ok(()) => rec.statement(class, t0.elapsed()),
            Err(e) => rec.error(class, e.kind, || e.message.clone()),
        }
    }

    /// An error the script counted itself, as sysbench counts an ignored
    /// one (`ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR)`:
    /// sysbench-tpcc counts its deliberate rollbacks so); the event goes
    /// on.
    pub(super) fn counted_error(&self) {
        let Some(rec) = self.rec.get() else { return };
        // SAFETY: as `with_conn`.
        let rec = unsafe { &mut *rec };
        rec.error(OTHER, ErrorKind::Other, || {
            "counted by the script: ffi.C.sb_counter_inc(sysbench.tid, ffi.C.SB_CNT_ERROR), as sysbench counts an \
             ignored error"
                .into()
        });
    }

    /// The error as a script sees it (sysbench's errdesc), remembered for
    /// the event's outcome; a failed transaction the driver would end is
    /// ended.
    pub fn failure(&self, c: usize, e: &DbError) -> Failure {
        self.last_error.set(Some(e.kind));
        let (errno, state) = match e.code {
            Some(ServerCode::Mysql(c)) => (i64::from(c), String::new()),
            Some(ServerCode::Sqlstate(s)) => (0, String::from_utf8_lossy(&s).into_owned()),
            None => (0, String::new()),
        };
        let ignorable = e.kind != ErrorKind::Connection && self.ignore.ignorable(e);
        if ignorable && self.dialect != Dialect::Mysql {
            // As sysbench's PostgreSQL driver: the failed transaction is
            // ended (MySQL ends a deadlocked one itself).
            let _ = self.with_conn(c, |conn| conn.rollback());
        }
        Failure {
            errno,
            state,
            message: e.message.clone(),
            ignorable,
        }
    }

    pub(super) fn failed(&self, lua: &Lua, c: usize, e: &DbError) -> mlua::Result<Table> {
        let f = self.failure(c, e);
        let t = lua.create_table()?;
        t.raw_set("sql_errno", f.errno)?;
        t.raw_set("sql_state", f.state)?;
        t.raw_set("sql_errmsg", f.message)?;
        t.raw_set("ignorable", f.ignorable)?;
        Ok(t)
    }

    /// Executes prepared statement `h` (from 1) with `params`: the rows
    /// it returned or changed, or the server's error; `Err` when the
    /// script misused it.
    pub fn execute(&self, h: usize, params: &[Param]) -> Result<Result<u64, Failure>, Misuse> {
        let (stmt, class, c) = {
            let p = self.prepared.borrow();
            let Some(p) = h.checked_sub(1).and_then(|i| p.get(i)) else {
                return Err(Misuse::NotAStatement);
            };
            (p.stmt, p.class, p.conn)
        };
        let t0 = Instant::now();
        let r = self.with_conn(c, |conn| {
            if class == SELECT {
                conn.query(stmt, params)
            } else {
                conn.exec(stmt, params)
            }
        })?;
        Ok(match r {
            Ok(n) => {
                self.record(class, t0, &Ok(()));
                Ok(n)
            }
            Err(e) => {
                self.record(class, t0, &Err(&e));
                Err(self.failure(c, &e))
            }
        })
    }
}

/// A server's error as a script sees it.
pub struct Failure {
    pub errno: i64,
    pub state: String,
    pub message: String,
    /// The driver ignores it: the event restarts.
    pub ignorable: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_classed_by_their_first_word() {
        assert_eq!(class_of("  SELECT c FROM sbtest1 WHERE id=?"), SELECT);
        assert_eq!(class_of("/* hint */ update sbtest1 SET k=k+1"), 2);
        assert_eq!(class_of("INSERT INTO t VALUES (1)"), 1);
        assert_eq!(class_of("REPLACE INTO t VALUES (1)"), 1);
        assert_eq!(class_of("DELETE FROM t"), 3);
        assert_eq!(class_of("BEGIN"), 4);
        assert_eq!(class_of("START TRANSACTION"), 4);
        assert_eq!(class_of("COMMIT"), 5);
        assert_eq!(class_of("CREATE TABLE t (id int)"), OTHER);
    }
}
