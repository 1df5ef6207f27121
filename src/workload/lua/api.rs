//! The primitives a script's Lua state calls (`__relbench`, wrapped into
//! sysbench's API by `prelude.lua`): the connection, statements timed and
//! counted in relbench's statement classes, and sysbench's random
//! functions on the client's own generator (the per-event ones as `fast`'s
//! C functions).

use std::rc::Rc;
use std::time::Instant;

use mlua::{Lua, MultiValue, Table, Value};

use super::current::{class_of, Current, Prepared, SELECT};
use super::rand::bound;
use crate::db::Dialect;

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
    c_calls(lua, &rb, cur)?;
    lua.globals().raw_set("__relbench", rb)?;
    Ok(())
}

/// The C calls relbench's `ffi` offers (prelude.lua): sysbench's error
/// counter and `usleep`, nothing else — relbench runs as root, and a
/// script's C calls would run with its rights.
fn c_calls(lua: &Lua, rb: &Table, cur: &Rc<Current>) -> mlua::Result<()> {
    let c = cur.clone();
    rb.raw_set(
        "count_error",
        lua.create_function(move |_, ()| {
            c.counted_error();
            Ok(())
        })?,
    )?;
    rb.raw_set(
        "usleep",
        lua.create_function(|_, us: f64| {
            // At most 10 s a call: a client asleep longer than that is
            // past any window's edge.
            let us = us.clamp(0.0, 10e6);
            std::thread::sleep(std::time::Duration::from_secs_f64(us / 1e6));
            Ok(0)
        })?,
    )?;
    Ok(())
}

/// `drv:connect()`, `con:disconnect()`, `con:reconnect()`: a thread's
/// connections are the engine's, opened before the step (as many as the
/// script's text calls `connect(`, [`super::scan::connects`]); the
/// script takes and gives them back.
fn connection(lua: &Lua, rb: &Table, cur: &Rc<Current>) -> mlua::Result<()> {
    let c = cur.clone();
    rb.raw_set(
        "connect",
        lua.create_function(move |_, ()| match c.connect() {
            Some(i) => Ok(i),
            None => {
                let n = c.connections();
                Err(mlua::Error::runtime(format!(
                    "this thread already holds its {n} connection(s): relbench opens a thread's \
                     connections before the step, as many as the script's busiest function calls \
                     connect(, and this script holds more at once (a connect in a loop?); give its \
                     [[workload]] `connections = N` (at most {}), or disconnect one before connecting \
                     again",
                    super::scan::MAX_CONNECTIONS
                )))
            }
        })?,
    )?;
    let c = cur.clone();
    rb.raw_set(
        "disconnect",
        lua.create_function(move |_, i: usize| {
            c.disconnect(i);
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
        lua.create_function(move |lua, (i, sql): (usize, mlua::String)| {
            let sql = sql.to_str()?;
            let class = class_of(&sql);
            let t0 = Instant::now();
            let r = c
                .with_conn(i, |conn| conn.text_rows(&sql))
                .map_err(mlua::Error::runtime)?;
            match r {
                Ok(rows) => {
                    c.record(class, t0, &Ok(()));
                    if class != SELECT {
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
                    let t = c.failed(lua, i, &e)?;
                    Ok(MultiValue::from_vec(vec![Value::Nil, Value::Table(t)]))
                }
            }
        })?,
    )?;

    let c = cur.clone();
    rb.raw_set(
        "prepare",
        lua.create_function(move |lua, (i, sql): (usize, mlua::String)| {
            let sql = sql.to_str()?;
            let class = class_of(&sql);
            // PostgreSQL numbers its parameters: every `?` becomes `$n`,
            // as sysbench's pgsql driver turns them (drv_pgsql.c, quotes
            // and all), so the server sees what sysbench would send.
            let sql = match c.dialect {
                crate::db::Dialect::Postgres => crate::db::numbered_placeholders(&sql),
                _ => sql.to_string(),
            };
            match c
                .with_conn(i, |conn| conn.prepare(&sql))
                .map_err(mlua::Error::runtime)?
            {
                Ok(stmt) => {
                    let mut p = c.prepared.borrow_mut();
                    p.push(Prepared {
                        stmt,
                        class,
                        conn: i,
                    });
                    Ok((Value::Integer(p.len() as i64), Value::Nil))
                }
                Err(e) => Ok((Value::Nil, Value::Table(c.failed(lua, i, &e)?))),
            }
        })?,
    )?;

    // SAFETY: a C function of the kind `fast` writes: it reads its
    // arguments off the stack and never raises.
    rb.raw_set("execute", unsafe {
        lua.create_c_function(super::fast::execute)?
    })?;
    Ok(())
}

/// `sysbench.rand.*` on the client's generator.
fn rand(lua: &Lua, rb: &Table, cur: &Rc<Current>) -> mlua::Result<()> {
    for ((name, _), f) in super::fast::DRAWS.iter().zip(super::fast::DRAW_FNS) {
        // SAFETY: as `execute`'s.
        rb.raw_set(*name, unsafe { lua.create_c_function(f)? })?;
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
                .varstring(bound(min), bound(max), &mut buf);
            lua.create_string(&buf[..])
        })?,
    )?;
    Ok(())
}
