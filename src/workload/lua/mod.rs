//! sysbench's Lua scripts, run as they are (`[[workload]] script = …`,
//! `relbench run --script`): sysbench 1.0's API over relbench's wire
//! clients, one LuaJIT state per client thread as sysbench has, so a
//! sysbench user's own scripts get relbench's costs, statistics and
//! reports without a rewrite.
//!
//! A script is read once, when the plan is read ([`state::inspect`]):
//! its text, the modules it requires and the commands it offers are
//! recorded in the plan ([`LuaSpec`]), so a resumed run or a report runs
//! and names the same script. Each command is a catalogue entry: `NAME`
//! runs `event` (sysbench's `run`), `NAME.prepare`, `NAME.cleanup` and the
//! script's own commands run once per client (parallel commands) or once.

mod api;
mod client;
mod current;
mod fast;
pub mod rand;
pub mod scan;
pub mod state;

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::dist::Rng;
use super::{Client, ClientCtx, DurationClass, Group, Meta, Scale, ShownStatement, Workload};
use crate::db::{Conn, DbError, DbResult, Dialect, ErrorKind};
pub use current::CLASSES;
pub use state::ScriptError;

/// A module a script required, as it was read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Module {
    pub name: String,
    pub path: String,
    pub source: String,
}

/// A command a script offers (sysbench's `run`, `prepare`, `cleanup` and
/// `sysbench.cmdline.commands`); a parallel one runs on every client.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Command {
    pub name: String,
    pub parallel: bool,
}

/// A sysbench script as the plan names it, read once.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LuaSpec {
    pub name: String,
    /// Where it was read from.
    pub path: String,
    pub source: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<Module>,
    /// Its options as given (sysbench's names, `-` written `_`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, String>,
    pub commands: Vec<Command>,
    /// The connections each thread holds at once at most (its text's
    /// `connect(` calls): the engine opens them before the step.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub connections: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl LuaSpec {
    /// The catalogue name of one of its commands.
    pub fn entry_name(&self, command: &str) -> String {
        if command == "run" {
            self.name.clone()
        } else {
            format!("{}.{command}", self.name)
        }
    }

    /// The catalogue entries: one per command.
    pub fn entries(spec: &Arc<LuaSpec>) -> Vec<LuaWorkload> {
        spec.commands
            .iter()
            .map(|c| LuaWorkload::new(spec.clone(), c.clone()))
            .collect()
    }
}

/// One command of a script, as a catalogue entry.
#[derive(Debug)]
pub struct LuaWorkload {
    spec: Arc<LuaSpec>,
    command: Command,
    name: String,
    about: String,
    rand: rand::Settings,
    /// `--rand-seed`: the clients' generators seeded from it, not from
    /// the plan's seed.
    seed: Option<u64>,
    unique: Arc<rand::Unique>,
    /// `--db-ps-mode=disable`.
    plain: bool,
    /// `--mysql-ignore-errors`, for a MySQL or MariaDB target.
    mysql_ignore: current::Ignore,
}

impl LuaWorkload {
    fn new(spec: Arc<LuaSpec>, command: Command) -> LuaWorkload {
        let opt = |k: &str| spec.options.get(k).map(String::as_str);
        let num = |k: &str, d: f64| opt(k).and_then(|v| v.parse().ok()).unwrap_or(d);
        let d = rand::Settings::default();
        let rand = rand::Settings {
            default: opt("rand_type")
                .and_then(rand::Default::parse)
                .unwrap_or(d.default),
            spec_iter: num("rand_spec_iter", f64::from(d.spec_iter)) as u32,
            spec_pct: num("rand_spec_pct", d.spec_pct),
            spec_res: num("rand_spec_res", d.spec_res),
            pareto_h: num("rand_pareto_h", d.pareto_h),
            zipfian_exp: num("rand_zipfian_exp", d.zipfian_exp),
        };
        let ignores = opt("mysql_ignore_errors").unwrap_or("1213,1020,1205");
        let mysql_ignore = current::Ignore::Mysql {
            codes: ignores
                .split(',')
                .filter_map(|c| c.trim().parse().ok())
                .collect(),
            all: ignores.split(',').any(|c| c.trim() == "all"),
        };
        let seed = opt("rand_seed")
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|&s| s != 0);
        LuaWorkload {
            name: spec.entry_name(&command.name),
            about: format!("sysbench script {} ({})", spec.path, command.name),
            rand,
            seed,
            unique: Arc::new(rand::Unique::new(seed.unwrap_or(0x5eed))),
            plain: opt("db_ps_mode") == Some("disable"),
            mysql_ignore,
            spec,
            command,
        }
    }

    fn runs_events(&self) -> bool {
        self.command.name == "run"
    }
}

/// An option given to a script that the plan must not give it, found
/// when the plan is read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadOption {
    /// Relbench sets it from the step, the target or itself.
    #[error("--{option} comes from {from}")]
    Elsewhere { option: String, from: &'static str },
    /// A connection option: the target says where the server is.
    #[error("--{0} is the target's to say (its engine, URL or managed server), not the script's")]
    Connection(String),
    #[error("--rand-type={given}: one of {names}", names = rand::Default::NAMES.join(", "))]
    RandType { given: String },
    #[error("--db-ps-mode={0}: auto or disable")]
    PsMode(String),
}

/// What the options given to a script must be, checked when the plan is
/// read: the ones relbench takes from the step, the target or itself are
/// said with where they go.
pub fn check_options(given: &BTreeMap<String, String>) -> Result<(), BadOption> {
    let flag = |k: &str| k.replace('_', "-");
    for k in given.keys() {
        if let Some((_, from)) = state::FROM_THE_STEP.iter().find(|(n, _)| n == k) {
            return Err(BadOption::Elsewhere {
                option: flag(k),
                from,
            });
        }
        let connection = ["mysql_", "pgsql_"]
            .iter()
            .any(|p| k.starts_with(p) && k != "mysql_ignore_errors");
        if connection || k == "db_driver" {
            return Err(BadOption::Connection(flag(k)));
        }
    }
    if let Some(t) = given.get("rand_type") {
        if rand::Default::parse(t).is_none() {
            return Err(BadOption::RandType { given: t.clone() });
        }
    }
    if let Some(m) = given.get("db_ps_mode") {
        if m != "auto" && m != "disable" {
            return Err(BadOption::PsMode(m.clone()));
        }
    }
    Ok(())
}

impl Workload for LuaWorkload {
    fn meta(&self) -> Meta<'_> {
        let run = self.runs_events();
        Meta {
            name: &self.name,
            group: Group::Custom,
            duration: DurationClass::Write,
            about: &self.about,
            transactional: false,
            classes: CLASSES.to_vec(),
            warms_up: run,
            creates_tables: self.command.name == "prepare",
            removes_rows: false,
            class_series: false,
        }
    }

    fn statements(&self, _dialect: Dialect) -> Vec<ShownStatement<'_>> {
        vec![ShownStatement {
            class: "script",
            sql: format!(
                "-- {}: {}, through sysbench 1.0's Lua API (statements as the script sends them)",
                self.spec.path,
                if self.runs_events() {
                    "event() per event".to_string()
                } else {
                    format!("the {} command", self.command.name)
                }
            ),
        }]
    }

    fn rows_per_event(&self, _scale: &Scale) -> Option<u64> {
        None
    }

    /// A command runs once (with its own threads when the step gives
    /// `clients`): a plan's several client counts are for `event()`.
    fn clients(&self) -> Option<u32> {
        (!self.runs_events()).then_some(1)
    }

    fn explained(&self) -> bool {
        self.runs_events()
    }

    fn events(&self, _scale: &Scale, clients: u32) -> Option<u64> {
        match (self.runs_events(), self.command.parallel) {
            (true, _) => None,
            (false, true) => Some(u64::from(clients)),
            (false, false) => Some(1),
        }
    }

    fn more_connections(&self, _dialect: Dialect) -> usize {
        // Bounded again here: a resumed run reads the count back from
        // run.json.
        (self.spec.connections as usize).clamp(1, scan::MAX_CONNECTIONS) - 1
    }

    fn client(
        &self,
        conn: &mut dyn Conn,
        mut more: Vec<Box<dyn Conn>>,
        dialect: Dialect,
        scale: &Scale,
        rng: Rng,
        ctx: &ClientCtx,
    ) -> DbResult<Box<dyn Client>> {
        let rng = match self.seed {
            Some(s) => super::dist::rng(s, u64::from(ctx.index)),
            None => rng,
        };
        let ignore = match dialect {
            Dialect::Mysql => self.mysql_ignore.clone(),
            Dialect::Postgres => current::Ignore::Postgres,
            Dialect::Sqlite => current::Ignore::Sqlite,
        };
        let draw = rand::Draw {
            rng,
            settings: self.rand,
            unique: self.unique.clone(),
        };
        let cur = Rc::new(current::Current::new(draw, dialect, ignore));
        if self.plain {
            conn.set_plain(true);
            for c in &mut more {
                c.set_plain(true);
            }
        }
        cur.give_more(more);
        let lua = state::open(
            &self.spec,
            &self.command.name,
            ctx.index,
            scale.clients,
            &cur,
        )
        .map_err(|e| DbError::new(ErrorKind::Script, e.0))?;
        client::LuaClient::start(lua, cur, &self.command.name, ctx.index, conn)
            .map(|c| Box::new(c) as Box<dyn Client>)
            .map_err(|e| DbError::new(ErrorKind::Script, e.to_string()))
    }
}
