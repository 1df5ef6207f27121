//! One client's script: `thread_init` as the client starts, then an event
//! per `event()` call (or the command, once), `thread_done` as the step
//! ends — sysbench's thread life, on the engine's connection and clock.

use std::rc::Rc;

use mlua::{Function, Lua, Value};

use super::current::{Current, OTHER};
use super::state::lua_message;
use crate::db::Conn;
use crate::measure::{ErrorKind, Recorder};
use crate::workload::Client;

pub struct LuaClient {
    /// Kept for the functions below, which live in it.
    _lua: Lua,
    cur: Rc<Current>,
    call: Function,
    tid: u32,
    thread_done: Option<Function>,
}

/// Why a script's client could not start, told as sysbench would.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The script's `thread_init` raised this (Lua's message).
    #[error("thread_init: {0}")]
    ThreadInit(String),
    /// The prelude's event runner was overwritten by the script.
    #[error("the API's event runner is gone")]
    NoEventRunner,
    #[error("the script has no {0} command")]
    NoCommand(String),
    /// Lua refused what the client set up (its message).
    #[error("{0}")]
    Lua(String),
}

impl LuaClient {
    /// The client of `command`, its `thread_init` run (for `run`) on
    /// `conn`.
    pub fn start(
        lua: Lua,
        cur: Rc<Current>,
        command: &str,
        tid: u32,
        conn: &mut dyn Conn,
    ) -> Result<LuaClient, StartError> {
        let g = lua.globals();
        let function = |name: &str| match g.raw_get::<Value>(name) {
            Ok(Value::Function(f)) => Some(f),
            _ => None,
        };
        let (call, thread_done) = if command == "run" {
            if let Some(init) = function("thread_init") {
                cur.lend(conn, None, || init.call::<()>(tid))
                    .map_err(|e| StartError::ThreadInit(lua_message(&e)))?;
            }
            let call = function("__relbench_event").ok_or(StartError::NoEventRunner)?;
            (call, function("thread_done"))
        } else {
            // A command is one event that may load a whole table: Ctrl-C
            // stops it at its next statement, or within a thousand
            // instructions of a loop that sends none.
            lua.set_hook(
                mlua::HookTriggers::new().every_nth_instruction(1_000),
                |_, _| {
                    if crate::util::INTERRUPT.load(std::sync::atomic::Ordering::Relaxed) {
                        return Err(mlua::Error::runtime("interrupted (Ctrl-C)"));
                    }
                    Ok(mlua::VmState::Continue)
                },
            )
            .map_err(|e| StartError::Lua(lua_message(&e)))?;
            (command_function(&lua, command)?, None)
        };
        Ok(LuaClient {
            _lua: lua,
            cur,
            call,
            tid,
            thread_done,
        })
    }
}

/// The function a command runs: `sysbench.cmdline.commands[NAME][1]`,
/// else the global function of that name.
fn command_function(lua: &Lua, command: &str) -> Result<Function, StartError> {
    let from_table = || -> mlua::Result<Option<Function>> {
        let sb: mlua::Table = lua.globals().get("sysbench")?;
        let cmdline: mlua::Table = sb.get("cmdline")?;
        let Some(cmds) = cmdline.get::<Option<mlua::Table>>("commands")? else {
            return Ok(None);
        };
        let Some(def) = cmds.get::<Option<mlua::Table>>(command)? else {
            return Ok(None);
        };
        def.get::<Option<Function>>(1)
    };
    if let Some(f) = from_table().map_err(|e| StartError::Lua(lua_message(&e)))? {
        return Ok(f);
    }
    match lua.globals().raw_get::<Value>(command) {
        Ok(Value::Function(f)) => Ok(f),
        _ => Err(StartError::NoCommand(command.to_string())),
    }
}

// SAFETY: a Lua state is not `Send` because its handles share counts
// without atomics. Every handle of this one (the state, its functions,
// and the `Current` its callbacks hold) is owned by this client, so the
// client moves whole or not at all; and the engine makes, runs and drops
// it on one client thread (`engine::client`), as `workload::shapes` does
// on its caller's.
unsafe impl Send for LuaClient {}

impl Client for LuaClient {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        self.cur.last_error.set(None);
        let r = self
            .cur
            .lend(conn, Some(&mut *rec), || self.call.call::<Value>(self.tid));
        match r {
            Ok(Value::Nil | Value::Boolean(false)) => Ok(()),
            // An error the driver ignores: counted where it happened, and
            // the event is over (the engine starts the next, as sysbench
            // restarts it).
            Ok(Value::Table(_)) => Err(self.cur.last_error.get().unwrap_or(ErrorKind::Other)),
            Ok(_) => {
                rec.error(OTHER, ErrorKind::Script, || {
                    "event() returned true to stop the thread: relbench stops a step at its \
                     duration or event count"
                        .into()
                });
                Err(ErrorKind::Script)
            }
            Err(e) => {
                rec.error(OTHER, ErrorKind::Script, || lua_message(&e));
                Err(ErrorKind::Script)
            }
        }
    }

    fn done(&mut self, conn: &mut dyn Conn) {
        if let Some(f) = &self.thread_done {
            if let Err(e) = self.cur.lend(conn, None, || f.call::<()>(self.tid)) {
                eprintln!("relbench: thread_done: {}", lua_message(&e));
            }
        }
    }
}
