//! The primitives a script's Lua state calls (`__relbench`, wrapped into
//! sysbench's API by `prelude.lua`): statements on the client's one
//! connection, timed and counted in relbench's statement classes, and
//! sysbench's random functions on the client's own generator.
//!
//! The connection and the recorder belong to the engine and are lent to
//! the state only for the length of a call into it ([`Current::lend`]):
//! the state is made, used and dropped on its client's thread, so the
//! pointers never outlive the borrow.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;

use mlua::{Lua, MultiValue, Table, Value};

use super::rand::Draw;
use crate::db::{Conn, DbError, Dialect, ErrorKind, Param, ServerCode, Stmt};
use crate::measure::Recorder;

/// The statement classes a script's statements are counted in, by their
/// first word: a script's statements are known only as it runs.
pub const CLASSES: [&str; 8] = [
    "select", "insert", "update", "delete", "begin", "commit", "rollback", "other",
];
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
        "select" | "with" | "show" | "explain" | "values" => 0,
        "insert" | "replace" => 1,
        "update" => 2,
        "delete" => 3,
        "begin" | "start" => 4,
        "commit" => 5,
        "rollback" => 6,
        _ => OTHER,
    }
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

struct Prepared {
    stmt: Stmt,
    class: usize,
    query: bool,
}

/// One client's side of its Lua state: what its primitives act on.
pub struct Current {
    conn: Cell<Option<*mut (dyn Conn + 'static)>>,
    rec: Cell<Option<*mut Recorder>>,
    prepared: RefCell<Vec<Prepared>>,
    pub draw: RefCell<Draw>,
    connected: Cell<bool>,
    pub dialect: Dialect,
    pub ignore: Ignore,
    /// The kind of the last statement that failed, for the event's outcome.
    pub last_error: Cell<Option<ErrorKind>>,
    buf: RefCell<Vec<u8>>,
}

impl Current {
    pub fn new(draw: Draw, dialect: Dialect, ignore: Ignore) -> Current {
        Current {
            conn: Cell::new(None),
            rec: Cell::new(None),
            prepared: RefCell::new(Vec::new()),
            draw: RefCell::new(draw),
            connected: Cell::new(false),
            dialect,
            ignore,
            last_error: Cell::new(None),
            buf: RefCell::new(Vec::new()),
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
        let out = f();
        self.conn.set(None);
        self.rec.set(None);
        out
    }

    fn with_conn<R>(&self, f: impl FnOnce(&mut dyn Conn) -> R) -> mlua::Result<R> {
        match self.conn.get() {
            // SAFETY: set by `lend` for the call this runs in.
            Some(c) => Ok(f(unsafe { &mut *c })),
            None => Err(mlua::Error::runtime(
                "no connection here: statements run in thread_init, event, thread_done and commands",
            )),
        }
    }

    fn record(&self, class: usize, t0: Instant, r: &Result<(), &DbError>) {
        let Some(rec) = self.rec.get() else { return };
        // SAFETY: as `with_conn`.
        let rec = unsafe { &mut *rec };
        match r {
            Ok(()) => rec.statement(class, t0.elapsed()),
            Err(e) => rec.error(class, e.kind, || e.message.clone()),
        }
    }

    /// The error as a script sees it (sysbench's errdesc), remembered for
    /// the event's outcome.
    fn failed(&self, lua: &Lua, e: &DbError) -> mlua::Result<Table> {
        self.last_error.set(Some(e.kind));
        let t = lua.create_table()?;
        let (errno, state) = match e.code {
            Some(ServerCode::Mysql(c)) => (i64::from(c), String::new()),
            Some(ServerCode::Sqlstate(s)) => (0, String::from_utf8_lossy(&s).into_owned()),
            None => (0, String::new()),
        };
        t.raw_set("sql_errno", errno)?;
        t.raw_set("sql_state", state)?;
        t.raw_set("sql_errmsg", e.message.as_str())?;
        let ignorable = e.kind != ErrorKind::Connection && self.ignore.ignorable(e);
        t.raw_set("ignorable", ignorable)?;
        if ignorable && self.dialect != Dialect::Mysql {
            // As sysbench's PostgreSQL driver: the failed transaction is
            // ended (MySQL ends a deadlocked one itself).
            let _ = self.with_conn(|c| c.rollback());
        }
        Ok(t)
    }
}

/// Lua's number as an integer parameter (LuaJIT has only doubles; sysbench
/// truncates them into its integer buffers).
fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Integer(i) => Some(*i),
        Value::Number(n) => Some(*n as i64),
        Value::String(s) => s.to_str().ok()?.trim().parse().ok(),
        _ => None,
    }
}

fn arg_u32(v: f64) -> u32 {
    // sysbench's C functions take uint32_t: LuaJIT converts by truncation.
    v as i64 as u32
}

/// Makes `__relbench`, the table of primitives `prelude.lua` wraps.
pub fn install(lua: &Lua, cur: &Rc<Current>) -> mlua::Result<()> {
    let rb = lua.create_table()?;
    let driver = match cur.dialect {
        Dialect::Mysql => "mysql",
        Dialect::Postgres => "pgsql",
        Dialect::Sqlite => "sqlite",
    };
    rb.raw_set("driver_name", driver)?;
    connection(lua, &rb, cur)?;
    statements(lua, &rb, cur)?;
    rand(lua, &rb, cur)?;
    lua.globals().raw_set("__relbench", rb)?;
    Ok(())
}

/// `drv:connect()`, `con:disconnect()`, `con:reconnect()`: the client's
/// one connection is the engine's.
fn connection(lua: &Lua, rb: &Table, cur: &Rc<Current>) -> mlua::Result<()> {
    let c = cur.clone();
    rb.raw_set(
        "connect",
        lua.create_function(move |_, ()| {
            if c.connected.replace(true) {
                return Err(mlua::Error::runtime(
                    "relbench gives each thread one connection: a second drv:connect() \
                     before con:disconnect() is not supported",
                ));
            }
            Ok(())
        })?,
    )?;
    let c = cur.clone();
    rb.raw_set(
        "disconnect",
        lua.create_function(move |_, ()| {
            c.connected.set(false);
            Ok(true)
        })?,
    )?;
    rb.raw_set(
        "reconnect",
        lua.create_function(|_, ()| -> mlua::Result<bool> {
            Err(mlua::Error::runtime(
                "con:reconnect() is not supported by relbench (a lost connection ends the client; \
                 `--reconnect` opens a new one after every event)",
            ))
        })?,
    )?;
    Ok(())
}

/// `con:query()`, `con:prepare()` and a statement's `execute()`, each
/// timed and counted in its class.
fn statements(lua: &Lua, rb: &Table, cur: &Rc<Current>) -> mlua::Result<()> {
    let c = cur.clone();
    rb.raw_set(
        "query",
        lua.create_function(move |lua, sql: mlua::String| {
            let sql = sql.to_str()?;
            let class = class_of(&sql);
            let t0 = Instant::now();
            let r = c.with_conn(|conn| conn.text_rows(&sql))?;
            match r {
                Ok(rows) => {
                    c.record(class, t0, &Ok(()));
                    if class != 0 {
                        return Ok(MultiValue::from_vec(vec![Value::Integer(0)]));
                    }
                    let nfields = rows.first().map_or(0, Vec::len);
                    let t = lua.create_table_with_capacity(rows.len(), 0)?;
                    for (i, row) in rows.iter().enumerate() {
                        let r = lua.create_table_with_capacity(row.len(), 0)?;
                        for (j, v) in row.iter().enumerate() {
                            if let Some(v) = v {
                                r.raw_set(j + 1, v.as_str())?;
                            }
                        }
                        t.raw_set(i + 1, r)?;
                    }
                    Ok(MultiValue::from_vec(vec![
                        Value::Integer(rows.len() as i64),
                        Value::Table(t),
                        Value::Integer(nfields as i64),
                    ]))
                }
                Err(e) => {
                    c.record(class, t0, &Err(&e));
                    let t = c.failed(lua, &e)?;
                    Ok(MultiValue::from_vec(vec![Value::Nil, Value::Table(t)]))
                }
            }
        })?,
    )?;

    let c = cur.clone();
    rb.raw_set(
        "prepare",
        lua.create_function(move |lua, sql: mlua::String| {
            let sql = sql.to_str()?;
            let class = class_of(&sql);
            match c.with_conn(|conn| conn.prepare(&sql))? {
                Ok(stmt) => {
                    let mut p = c.prepared.borrow_mut();
                    p.push(Prepared {
                        stmt,
                        class,
                        query: class == 0,
                    });
                    Ok((Value::Integer(p.len() as i64), Value::Nil))
                }
                Err(e) => Ok((Value::Nil, Value::Table(c.failed(lua, &e)?))),
            }
        })?,
    )?;

    let c = cur.clone();
    rb.raw_set(
        "execute",
        lua.create_function(move |lua, (h, values): (usize, mlua::Variadic<Value>)| {
            execute(&c, lua, h, &values)
        })?,
    )?;
    Ok(())
}

/// A prepared statement executed with its parameters' values.
fn execute(c: &Current, lua: &Lua, h: usize, values: &[Value]) -> mlua::Result<(Value, Value)> {
    let (stmt, class, query) = {
        let p = c.prepared.borrow();
        let Some(p) = h.checked_sub(1).and_then(|i| p.get(i)) else {
            return Err(mlua::Error::runtime("not a statement of this connection"));
        };
        (p.stmt, p.class, p.query)
    };
    // A string parameter borrows the Lua string it was set to.
    let mut texts: Vec<mlua::BorrowedStr> = Vec::new();
    for v in values {
        if let Value::String(s) = v {
            texts.push(s.to_str()?);
        }
    }
    let mut texts = texts.iter();
    let bound: Vec<Param> = values
        .iter()
        .map(|v| match v {
            Value::String(_) => Ok(Param::Str(texts.next().expect("one per string"))),
            v => int_of(v).map(Param::Int).ok_or_else(|| {
                mlua::Error::runtime(format!("a parameter set to a {}", v.type_name()))
            }),
        })
        .collect::<mlua::Result<_>>()?;
    let t0 = Instant::now();
    let r = c.with_conn(|conn| {
        if query {
            conn.query(stmt, &bound)
        } else {
            conn.exec(stmt, &bound)
        }
    })?;
    match r {
        Ok(n) => {
            c.record(class, t0, &Ok(()));
            Ok((Value::Integer(n as i64), Value::Nil))
        }
        Err(e) => {
            c.record(class, t0, &Err(&e));
            Ok((Value::Nil, Value::Table(c.failed(lua, &e)?)))
        }
    }
}

/// `sysbench.rand.*` on the client's generator.
fn rand(lua: &Lua, rb: &Table, cur: &Rc<Current>) -> mlua::Result<()> {
    type Two = fn(&mut Draw, u32, u32) -> u32;
    let two: [(&str, Two); 6] = [
        ("default", Draw::default),
        ("uniform", Draw::uniform),
        ("gaussian", Draw::gaussian),
        ("special", Draw::special),
        ("pareto", Draw::pareto),
        ("zipfian", Draw::zipfian),
    ];
    for (name, f) in two {
        let c = cur.clone();
        rb.raw_set(
            name,
            lua.create_function(move |_, (a, b): (f64, f64)| {
                Ok(f64::from(f(
                    &mut c.draw.borrow_mut(),
                    arg_u32(a),
                    arg_u32(b),
                )))
            })?,
        )?;
    }
    let c = cur.clone();
    rb.raw_set(
        "unique",
        lua.create_function(move |_, ()| Ok(f64::from(c.draw.borrow().unique.next())))?,
    )?;
    let c = cur.clone();
    rb.raw_set(
        "uniform_uint64",
        lua.create_function(move |_, ()| {
            use rand::Rng as _;
            // A Lua number holds 53 bits exactly: the rest are dropped.
            Ok((c.draw.borrow_mut().rng.random::<u64>() >> 11) as f64)
        })?,
    )?;
    let c = cur.clone();
    rb.raw_set(
        "uniform_double",
        lua.create_function(move |_, ()| Ok(c.draw.borrow_mut().unit()))?,
    )?;
    let c = cur.clone();
    rb.raw_set(
        "string",
        lua.create_function(move |lua, fmt: mlua::String| {
            let mut buf = c.buf.borrow_mut();
            c.draw.borrow_mut().string(&fmt.as_bytes(), &mut buf);
            lua.create_string(&buf[..])
        })?,
    )?;
    let c = cur.clone();
    rb.raw_set(
        "varstring",
        lua.create_function(move |lua, (min, max): (f64, f64)| {
            let mut buf = c.buf.borrow_mut();
            c.draw
                .borrow_mut()
                .varstring(arg_u32(min), arg_u32(max), &mut buf);
            lua.create_string(&buf[..])
        })?,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_classed_by_their_first_word() {
        assert_eq!(class_of("  SELECT c FROM sbtest1 WHERE id=?"), 0);
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
