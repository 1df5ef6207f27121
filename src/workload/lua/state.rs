//! A script's Lua state: sysbench's globals, relbench's primitives, the
//! script and the modules it requires, and its options in `sysbench.opt`.
//! [`inspect`] loads a script once when the plan is read (what it
//! declares, which commands it has, what it requires, what it calls that
//! relbench does not offer); [`open`] makes a client's state from what
//! `inspect` recorded, never from the disk again.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use mlua::{Function, Lua, Table, Value};

use super::api;
use super::current::{self, Current};
use super::{Command, LuaSpec, Module};

/// Where sysbench's own scripts are (Debian's package), searched for a
/// bare script name and for the modules a script requires.
pub const SYSBENCH_DIR: &str = "/usr/share/sysbench";

/// The most Lua instructions a script's main chunk may run when the plan
/// is read: sysbench's own scripts' main chunks declare options and
/// functions in a few thousand; a chunk past this never ends.
const LOAD_INSTRUCTIONS: u64 = 100_000_000;

/// The most memory a script's state may hold when the plan is read.
const LOAD_MEMORY: usize = 256 << 20;

/// Every how many instructions the load's limits and Ctrl-C are checked.
const LOAD_CHECK_EVERY: u32 = 1_000;

/// A script that cannot run, said with its file and line where it has one,
/// and whether the plan's options for it are what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptError(pub String, pub Blame);

/// What a script's error is the fault of: the script, or the options the
/// plan gives it (`options = { … }`, where the plan's error points).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blame {
    Script,
    Options,
}

impl ScriptError {
    pub fn script(message: impl std::fmt::Display) -> Self {
        ScriptError(message.to_string(), Blame::Script)
    }

    pub fn options(message: impl std::fmt::Display) -> Self {
        ScriptError(message.to_string(), Blame::Options)
    }
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Lua's error, without mlua's wrapping and the traceback.
pub fn lua_message(e: &mlua::Error) -> String {
    let text = match e {
        mlua::Error::CallbackError { cause, .. } => return lua_message(cause),
        mlua::Error::RuntimeError(m) | mlua::Error::SyntaxError { message: m, .. } => m.clone(),
        e => e.to_string(),
    };
    let text = text.split("\nstack traceback:").next().unwrap_or("");
    text.trim_start_matches("runtime error: ")
        .trim()
        .to_string()
}

/// sysbench's own options a script may read from `sysbench.opt`, with
/// sysbench 1.0.20's defaults. relbench sets `threads` from the step.
const BUILTIN: [(&str, &str); 14] = [
    ("time", "10"),
    ("events", "0"),
    ("rate", "0"),
    ("warmup_time", "0"),
    ("percentile", "95"),
    ("report_interval", "0"),
    ("rand_type", "special"),
    ("rand_seed", "0"),
    ("rand_spec_iter", "12"),
    ("rand_spec_pct", "1"),
    ("rand_spec_res", "75"),
    ("rand_pareto_h", "0.2"),
    ("rand_zipfian_exp", "0.8"),
    ("db_ps_mode", "auto"),
];

/// sysbench options relbench takes from the step or the target, never
/// from a script's options.
pub const FROM_THE_STEP: [(&str, &str); 5] = [
    ("threads", "the step's clients"),
    ("time", "the plan's [duration]"),
    ("events", "the plan's [duration] as a count"),
    ("rate", "the step's rate"),
    ("warmup_time", "the plan's warm-up"),
];

/// What a loaded script's options are.
pub fn builtin_option(name: &str) -> bool {
    BUILTIN.iter().any(|(n, _)| *n == name)
        || ["db_driver", "mysql_ignore_errors", "threads"].contains(&name)
}

/// Where require() finds modules: on the disk when the plan is read
/// (each found one recorded), from the record afterwards.
enum Modules<'a> {
    Disk {
        dirs: Vec<PathBuf>,
        found: Rc<RefCell<Vec<Module>>>,
    },
    Recorded(&'a [Module]),
}

fn new_lua() -> mlua::Result<Lua> {
    let lua = Lua::new();
    // A script ends its client with an error, never the process. A
    // string too large for the load's memory limit is refused before it
    // is made (one `string.rep` would otherwise allocate it whole).
    lua.load(
        r#"os.exit = function() error("os.exit() is not supported by relbench", 2) end
           package.path = "" package.cpath = ""
           local rep, limit = string.rep, ...
           string.rep = function(s, n, sep)
              local size = #tostring(s) * (tonumber(n) or 0) + #(sep or "") * (tonumber(n) or 0)
              if size > limit then
                 error(string.format("string.rep of %.0f bytes: past relbench's %d MiB for a script", size, limit / 1048576), 2)
              end
              return rep(s, n, sep)
           end
           print = function(...)
              local t = {}
              for i = 1, select('#', ...) do t[i] = tostring((select(i, ...))) end
              io.stderr:write(table.concat(t, "\t"), "\n")
           end"#,
    )
    .set_name("=relbench")
    .call::<()>(LOAD_MEMORY as f64)?;
    Ok(lua)
}

/// The main chunk's limits at load: the interpreter only (LuaJIT's
/// compiled traces call no hook), and every [`LOAD_CHECK_EVERY`]
/// instructions the count, the memory held and Ctrl-C checked.
fn limit_load(lua: &Lua, shown: &str) -> mlua::Result<()> {
    lua.load("if jit then jit.off() end").exec()?;
    let ran = std::cell::Cell::new(0u64);
    let shown = shown.to_string();
    lua.set_hook(
        mlua::HookTriggers::new().every_nth_instruction(LOAD_CHECK_EVERY),
        move |lua, _| {
            ran.set(ran.get() + u64::from(LOAD_CHECK_EVERY));
            if crate::util::INTERRUPT.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(mlua::Error::runtime(format!("{shown}: interrupted (Ctrl-C) while its main chunk ran")));
            }
            if ran.get() > LOAD_INSTRUCTIONS {
                return Err(mlua::Error::runtime(format!(
                    "{shown}: its main chunk ran {LOAD_INSTRUCTIONS} instructions when the plan was read and had not ended \
                     (a loop that never ends?); a script's main chunk declares its options and functions, the work is in its commands"
                )));
            }
            if lua.used_memory() > LOAD_MEMORY {
                return Err(mlua::Error::runtime(format!(
                    "{shown}: its main chunk held more than {} MiB when the plan was read; a script's main chunk declares its \
                     options and functions, the work is in its commands",
                    LOAD_MEMORY >> 20
                )));
            }
            Ok(mlua::VmState::Continue)
        },
    )
}

/// A module name as sysbench's scripts give it: dotted words
/// (`oltp_common`, `lib.util`), never a path.
fn module_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

/// A script or module relbench would run: its real path, refused unless
/// no other user can change it (`util::trusted`: the file and every
/// directory above it, and any link on the way as named).
pub fn trusted_source(path: &Path, what: &str) -> Result<PathBuf, Untrusted> {
    crate::util::trusted(path, what).map_err(Untrusted::Refused)?;
    std::fs::canonicalize(path).map_err(|source| Untrusted::Unreadable {
        what: what.to_string(),
        path: path.to_path_buf(),
        source,
    })
}

/// A script or module relbench will not run, or cannot find.
#[derive(Debug, thiserror::Error)]
pub enum Untrusted {
    /// Another user can change it (`util::trusted` says how).
    #[error("{0:#}")]
    Refused(anyhow::Error),
    #[error("{what} {}: {source}", path.display())]
    Unreadable {
        what: String,
        path: PathBuf,
        source: std::io::Error,
    },
}

/// An option the plan gives a script that the script cannot take.
#[derive(Debug, thiserror::Error)]
pub enum OptionError {
    #[error("--{name}={given} is not {expected}")]
    NotOfItsType {
        name: String,
        given: String,
        expected: &'static str,
    },
    #[error("sysbench.cmdline.options: each option is name = {{description, default}}")]
    BadDeclaration,
    /// Not declared; with the options the script does declare.
    #[error("--{0} is not an option of this script (it declares: {1})")]
    Unknown(String, String),
    #[error("{0}")]
    Lua(#[from] mlua::Error),
}

fn install_require(lua: &Lua, modules: Modules<'_>) -> mlua::Result<()> {
    let loader: Function = match modules {
        Modules::Disk { dirs, found } => lua.create_function(move |lua, name: String| {
            if !module_name_ok(&name) {
                return Err(mlua::Error::runtime(format!(
                    "require(\"{name}\"): a module is named by dotted words (oltp_common, lib.util), looked for beside \
                     the script and in {SYSBENCH_DIR}; a path or .. is not looked for"
                )));
            }
            for d in &dirs {
                let p = d.join(format!("{}.lua", name.replace('.', "/")));
                if !p.exists() {
                    continue;
                }
                let real = trusted_source(&p, &format!("module {name}")).map_err(mlua::Error::runtime)?;
                let source = std::fs::read_to_string(&real)
                    .map_err(|e| mlua::Error::runtime(format!("module {name}: {}: {e}", real.display())))?;
                let path = real.display().to_string();
                let f = lua
                    .load(&source)
                    .set_name(format!("@{path}"))
                    .into_function()?;
                let mut found = found.borrow_mut();
                if !found.iter().any(|m| m.name == name) {
                    found.push(Module { name, path, source });
                }
                return Ok(Value::Function(f));
            }
            Ok(Value::String(lua.create_string(format!(
                "\n\tno {name}.lua beside the script or in {SYSBENCH_DIR}"
            ))?))
        })?,
        Modules::Recorded(list) => {
            let list: Vec<Module> = list.to_vec();
            lua.create_function(move |lua, name: String| {
                match list.iter().find(|m| m.name == name) {
                    Some(m) => Ok(Value::Function(
                        lua.load(&m.source)
                            .set_name(format!("@{}", m.path))
                            .into_function()?,
                    )),
                    None => Ok(Value::String(lua.create_string(format!(
                        "\n\t{name} was not required when the plan was read"
                    ))?)),
                }
            })?
        }
    };
    let package: Table = lua.globals().get("package")?;
    let loaders: Table = package.get("loaders")?;
    loaders.raw_insert(2, loader)?;
    Ok(())
}

/// The `sysbench` table before the script runs: who this thread is and
/// which command runs.
fn sysbench_table(lua: &Lua, path: &str, command: &str, tid: u32) -> mlua::Result<Table> {
    let sb = lua.create_table()?;
    sb.raw_set("tid", tid)?;
    sb.raw_set("version", "1.0.20")?;
    sb.raw_set("version_string", "sysbench 1.0.20 (relbench)")?;
    let cmdline = lua.create_table()?;
    cmdline.raw_set("command", command)?;
    cmdline.raw_set("script_path", path)?;
    let argv = lua.create_table()?;
    argv.raw_set(0, "sysbench")?;
    argv.raw_set(1, path)?;
    cmdline.raw_set("argv", argv)?;
    sb.raw_set("cmdline", cmdline)?;
    sb.raw_set("opt", lua.create_table()?)?;
    lua.globals().raw_set("sysbench", sb.clone())?;
    Ok(sb)
}

/// A value of an option as its declaration's type asks (sysbench infers
/// the type from the default: a boolean, a number, a list, else text).
fn typed(lua: &Lua, name: &str, def: &Table, given: &str) -> Result<Value, OptionError> {
    let default: Value = def.raw_get(2).unwrap_or(Value::Nil);
    let kind: Option<i64> = def.raw_get(3).ok().flatten();
    let bad = |expected: &'static str| OptionError::NotOfItsType {
        name: name.to_string(),
        given: given.to_string(),
        expected,
    };
    match (kind, &default) {
        (Some(1), _) | (None, Value::Boolean(_)) => match given {
            "on" | "true" | "yes" | "1" => Ok(Value::Boolean(true)),
            "off" | "false" | "no" | "0" => Ok(Value::Boolean(false)),
            _ => Err(bad("on or off")),
        },
        (Some(2..=4), _) | (None, Value::Integer(_) | Value::Number(_)) => given
            .trim()
            .parse::<f64>()
            .map(Value::Number)
            .map_err(|_| bad("a number")),
        (Some(6), _) | (None, Value::Table(_)) => {
            let t = lua.create_table()?;
            for (i, v) in given.split(',').enumerate() {
                t.raw_set(i + 1, v)?;
            }
            Ok(Value::Table(t))
        }
        _ => Ok(Value::String(lua.create_string(given)?)),
    }
}

/// An option without a declared type: a number when it reads as one,
/// else text.
fn loose(lua: &Lua, v: &str) -> mlua::Result<Value> {
    match v.parse::<f64>() {
        Ok(n) => Ok(Value::Number(n)),
        Err(_) => lua.create_string(v).map(Value::String),
    }
}

/// Fills `sysbench.opt`: sysbench's own options, then the script's, each
/// its given value or its default. Unknown given options are an error.
fn options(
    lua: &Lua,
    sb: &Table,
    given: &BTreeMap<String, String>,
    threads: u32,
) -> Result<(), OptionError> {
    let opt: Table = sb.raw_get("opt")?;
    let set = |k: &str, v: Value| opt.raw_set(k, v);
    for (name, default) in BUILTIN {
        set(
            name,
            loose(lua, given.get(name).map_or(default, String::as_str))?,
        )?;
    }
    set("threads", Value::Number(f64::from(threads)))?;
    let cmdline: Table = sb.raw_get("cmdline")?;
    let declared: Option<Table> = cmdline.raw_get("options")?;
    let mut names = Vec::new();
    if let Some(declared) = &declared {
        for pair in declared.pairs::<String, Table>() {
            let (name, def) = pair.map_err(|_| OptionError::BadDeclaration)?;
            let value = match given.get(&name) {
                Some(v) => typed(lua, &name, &def, v)?,
                None => def.raw_get(2)?,
            };
            set(&name, value)?;
            names.push(name);
        }
    }
    if declared.is_none() {
        // sysbench 0.5's way, which 1.0 keeps for a script that declares
        // no options: whatever is given is a global of that name.
        for (k, v) in given {
            if builtin_option(k) {
                continue;
            }
            let value = loose(lua, v)?;
            set(k, value.clone())?;
            lua.globals().raw_set(k.as_str(), value)?;
        }
        return Ok(());
    }
    for k in given.keys() {
        if names.contains(k) || builtin_option(k) {
            continue;
        }
        names.sort();
        return Err(OptionError::Unknown(
            k.replace('_', "-"),
            names
                .iter()
                .map(|n| n.replace('_', "-"))
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    Ok(())
}

/// A client's state for `command`, with `cur` its primitives' side.
pub fn open(
    spec: &LuaSpec,
    command: &str,
    tid: u32,
    threads: u32,
    cur: &Rc<Current>,
) -> Result<Lua, ScriptError> {
    let e = |e: mlua::Error| ScriptError::script(lua_message(&e));
    let lua = new_lua().map_err(e)?;
    let sb = sysbench_table(&lua, &spec.path, command, tid).map_err(e)?;
    api::install(&lua, cur).map_err(e)?;
    lua.load(include_str!("prelude.lua"))
        .set_name("=relbench's sysbench API")
        .exec()
        .map_err(e)?;
    install_require(&lua, Modules::Recorded(&spec.modules)).map_err(e)?;
    // The main chunk may draw random numbers: its client's generator.
    current::enter(cur, || {
        lua.load(&spec.source)
            .set_name(format!("@{}", spec.path))
            .exec()
    })
    .map_err(e)?;
    options(&lua, &sb, &spec.options, threads).map_err(ScriptError::options)?;
    Ok(lua)
}

/// Loads a script as the plan names it: checks what it calls, runs its
/// main chunk (as for `run`) with no connection, checks the options
/// given against the ones it declares, and records its modules and
/// commands.
pub fn inspect(
    name: &str,
    path: &Path,
    options_given: BTreeMap<String, String>,
) -> Result<LuaSpec, ScriptError> {
    // Its real path: modules are looked for beside it, not beside a link.
    let real = trusted_source(path, "the sysbench script").map_err(ScriptError::script)?;
    let source = std::fs::read_to_string(&real)
        .map_err(|e| ScriptError::script(format!("cannot read {}: {e}", path.display())))?;
    let shown = path.display().to_string();
    super::scan::unsupported(&source, &shown).map_err(ScriptError::script)?;
    let e = |e: mlua::Error| ScriptError::script(lua_message(&e));
    let lua = new_lua().map_err(e)?;
    let sb = sysbench_table(&lua, &shown, "run", 0).map_err(e)?;
    let draw = super::rand::Draw {
        rng: crate::workload::dist::rng(0, 0),
        settings: super::rand::Settings::default(),
        unique: Arc::new(super::rand::Unique::new(0)),
    };
    let cur = Rc::new(Current::new(
        draw,
        crate::db::Dialect::Mysql,
        current::Ignore::Sqlite,
    ));
    api::install(&lua, &cur).map_err(e)?;
    lua.load(include_str!("prelude.lua"))
        .set_name("=relbench's sysbench API")
        .exec()
        .map_err(e)?;
    let found = Rc::new(RefCell::new(Vec::new()));
    let dirs = vec![
        real.parent().unwrap_or(Path::new("/")).to_path_buf(),
        PathBuf::from(SYSBENCH_DIR),
    ];
    install_require(
        &lua,
        Modules::Disk {
            dirs,
            found: found.clone(),
        },
    )
    .map_err(e)?;
    limit_load(&lua, &shown).map_err(e)?;
    current::enter(&cur, || {
        lua.load(&source).set_name(format!("@{shown}")).exec()
    })
    .map_err(e)?;
    lua.remove_hook();
    let modules = found.take();
    for m in &modules {
        super::scan::unsupported(&m.source, &m.path).map_err(ScriptError::script)?;
    }
    options(&lua, &sb, &options_given, 1).map_err(ScriptError::options)?;
    let commands = commands(&lua, &sb).map_err(e)?;
    if commands.is_empty() {
        return Err(ScriptError::script(format!(
            "{shown} defines no event() and no command: there is nothing to run"
        )));
    }
    let connections = std::iter::once(source.as_str())
        .chain(modules.iter().map(|m| m.source.as_str()))
        .map(super::scan::connects)
        .max()
        .unwrap_or(0)
        .clamp(1, super::scan::MAX_CONNECTIONS) as u32;
    Ok(LuaSpec {
        name: name.to_string(),
        path: shown,
        source,
        modules,
        options: options_given,
        commands,
        connections,
    })
}

/// The commands a loaded script offers: `run` when it has `event`, each
/// of `sysbench.cmdline.commands` (parallel or not), and `prepare` and
/// `cleanup` as global functions when the commands do not name them.
fn commands(lua: &Lua, sb: &Table) -> mlua::Result<Vec<Command>> {
    let g = lua.globals();
    let mut out = Vec::new();
    if matches!(g.raw_get("event")?, Value::Function(_)) {
        out.push(Command {
            name: "run".into(),
            parallel: true,
        });
    }
    let cmdline: Table = sb.raw_get("cmdline")?;
    if let Some(cmds) = cmdline.raw_get::<Option<Table>>("commands")? {
        for pair in cmds.pairs::<String, Table>() {
            let (name, def) = pair?;
            let parallel = matches!(def.raw_get(2)?, Value::Boolean(true));
            out.push(Command { name, parallel });
        }
    }
    for name in ["prepare", "cleanup"] {
        if !out.iter().any(|c| c.name == name) && matches!(g.raw_get(name)?, Value::Function(_)) {
            out.push(Command {
                name: name.into(),
                parallel: false,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: `require("/abs/x")` and `require("..tmp.x")` loaded
    /// any file.
    #[test]
    fn a_module_is_dotted_words_never_a_path() {
        for ok in ["oltp_common", "lib.util", "a-b"] {
            assert!(module_name_ok(ok), "{ok}");
        }
        for bad in ["/abs/x", "..tmp.x", "a..b", "", "a/b", ".x", "x.", "a b"] {
            assert!(!module_name_ok(bad), "{bad}");
        }
    }
}
