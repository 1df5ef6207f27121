//! The primitives a script calls on every event — a prepared statement's
//! `execute()` and the random draws — as plain C functions on Lua's stack,
//! not mlua callbacks: they take numbers and strings off the stack and
//! push their answer, with nothing made per call, which is what keeps a
//! script's client as cheap as sysbench's (`bench/client_overhead.py`).
//!
//! They find their client's `Current` through a thread-local set while
//! the state runs (`current::enter`): a state runs only on its client's
//! thread.
//! They never raise a Lua error (that would unwind through Rust): a
//! failure is pushed as `nil, message` and the prelude raises it.

use std::ffi::c_int;
use std::panic::AssertUnwindSafe;

use mlua::ffi;

use super::current::{current, Failure};
use super::rand::{bound, Draw};
use crate::db::Param;

/// The most parameters a statement executes with.
const MAX_PARAMS: usize = 64;

/// `nil, message`: a failure the prelude raises where the script called.
unsafe fn push_message(l: *mut ffi::lua_State, message: &str) -> c_int {
    ffi::lua_pushnil(l);
    ffi::lua_pushlstring(l, message.as_ptr().cast(), message.len());
    2
}

unsafe fn set_str(l: *mut ffi::lua_State, key: &std::ffi::CStr, value: &str) {
    ffi::lua_pushlstring(l, value.as_ptr().cast(), value.len());
    ffi::lua_setfield(l, -2, key.as_ptr());
}

/// `nil, errdesc`: a server's error as sysbench's scripts see it.
unsafe fn push_failure(l: *mut ffi::lua_State, f: &Failure) -> c_int {
    ffi::lua_pushnil(l);
    ffi::lua_createtable(l, 0, 4);
    ffi::lua_pushnumber(l, f.errno as f64);
    ffi::lua_setfield(l, -2, c"sql_errno".as_ptr());
    set_str(l, c"sql_state", &f.state);
    set_str(l, c"sql_errmsg", &f.message);
    ffi::lua_pushboolean(l, c_int::from(f.ignorable));
    ffi::lua_setfield(l, -2, c"ignorable".as_ptr());
    2
}

/// Runs `body`, turning a panic into a message rather than unwinding
/// through Lua's frames.
unsafe fn guarded(l: *mut ffi::lua_State, body: impl FnOnce() -> c_int) -> c_int {
    match std::panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(n) => n,
        Err(_) => push_message(l, "relbench failed inside a script's call"),
    }
}

/// `execute(handle, value...)`: the prepared statement with its values;
/// pushes the rows it returned or changed.
pub unsafe extern "C-unwind" fn execute(l: *mut ffi::lua_State) -> c_int {
    guarded(l, || {
        let Some(cur) = current() else {
            return push_message(l, "no script runs on this thread");
        };
        let h = ffi::lua_tointeger(l, 1) as usize;
        let n = (ffi::lua_gettop(l) - 1).max(0) as usize;
        if n > MAX_PARAMS {
            return push_message(
                l,
                &format!("{n} parameters: relbench binds at most {MAX_PARAMS}"),
            );
        }
        let mut params = [Param::Int(0); MAX_PARAMS];
        for (i, p) in params.iter_mut().enumerate().take(n) {
            let at = (i + 2) as c_int;
            *p = match ffi::lua_type(l, at) {
                ffi::LUA_TNUMBER => Param::Int(ffi::lua_tonumber(l, at) as i64),
                ffi::LUA_TSTRING => {
                    let mut len = 0usize;
                    let s = ffi::lua_tolstring(l, at, &mut len);
                    // SAFETY: Lua keeps the string, on the stack, for the call.
                    let bytes = std::slice::from_raw_parts(s.cast::<u8>(), len);
                    match std::str::from_utf8(bytes) {
                        Ok(s) => Param::Str(s),
                        Err(_) => return push_message(l, "a parameter's text is not UTF-8"),
                    }
                }
                ffi::LUA_TBOOLEAN => Param::Int(i64::from(ffi::lua_toboolean(l, at))),
                _ => return push_message(l, "a parameter is neither a number nor a string"),
            };
        }
        match cur.execute(h, &params[..n]) {
            Ok(Ok(rows)) => {
                ffi::lua_pushnumber(l, rows as f64);
                1
            }
            Ok(Err(f)) => push_failure(l, &f),
            Err(misuse) => push_message(l, &misuse.to_string()),
        }
    })
}

/// `sysbench.rand.*(a, b)`: distribution `K` of [`DRAWS`] on the client's
/// generator (numbers as LuaJIT converts them into sysbench's uint32_t).
pub unsafe extern "C-unwind" fn draw<const K: usize>(l: *mut ffi::lua_State) -> c_int {
    guarded(l, || {
        let Some(cur) = current() else {
            return push_message(l, "no script runs on this thread");
        };
        let a = bound(ffi::lua_tonumber(l, 1));
        let b = bound(ffi::lua_tonumber(l, 2));
        let v = DRAWS[K].1(&mut cur.draw.borrow_mut(), a, b);
        ffi::lua_pushnumber(l, f64::from(v));
        1
    })
}

type Two = fn(&mut Draw, u32, u32) -> u32;

/// The two-bound draws, by their names in `sysbench.rand`.
pub const DRAWS: [(&str, Two); 6] = [
    ("default", Draw::default),
    ("uniform", Draw::uniform),
    ("gaussian", Draw::gaussian),
    ("special", Draw::special),
    ("pareto", Draw::pareto),
    ("zipfian", Draw::zipfian),
];

/// The C functions of [`DRAWS`], in order.
pub const DRAW_FNS: [ffi::lua_CFunction; 6] = [
    draw::<0>, draw::<1>, draw::<2>, draw::<3>, draw::<4>, draw::<5>,
];
