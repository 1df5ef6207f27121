//! What a target is, as a plan describes it: its engine and how relbench
//! reaches it (an embedded file, a server it manages, or a URL). The plan
//! parses these; `db::open` turns one into a live target.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::tls::Tls;
use super::EngineKind;

/// One target of a plan.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TargetSpec {
    pub name: String,
    pub engine: EngineKind,
    pub access: Access,
    /// The storage engine of the tables (MySQL/MariaDB: `ENGINE=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_engine: Option<String>,
    /// This target is an A/A copy of the named one: the same spec, run
    /// again (after every other target, in each repeat) to measure how
    /// much identical runs differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_of: Option<String>,
    /// SQL appended to every CREATE TABLE a suite runs, after the storage
    /// engine: row format and compression (`ROW_FORMAT=COMPRESSED
    /// KEY_BLOCK_SIZE=8`, `PAGE_COMPRESSED=1`, `COMPRESSION='zlib'`),
    /// partitioning (`PARTITION BY HASH(id) PARTITIONS 32`), PostgreSQL's
    /// storage parameters (`WITH (fillfactor = 80)`), SQLite's `STRICT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_options: Option<String>,
    /// Whether TCP connections to a server are encrypted.
    #[serde(default, skip_serializing_if = "Tls::is_off")]
    pub tls: Tls,
}

/// What follows `CREATE TABLE t (...)`: the storage engine (MySQL and
/// MariaDB), then a target's own `table_options`.
pub fn table_suffix(storage_engine: Option<&str>, table_options: Option<&str>) -> String {
    let engine = storage_engine.map(|e| format!("ENGINE={e}"));
    engine
        .into_iter()
        .chain(table_options.map(str::to_string))
        .map(|o| format!(" {o}"))
        .collect()
}

impl TargetSpec {
    /// What follows this target's `CREATE TABLE t (...)`.
    pub fn table_suffix(&self) -> String {
        table_suffix(
            self.storage_engine.as_deref(),
            self.table_options.as_deref(),
        )
    }
}

/// How relbench reaches a target.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// An embedded database file. `path: None` puts it in the results directory.
    Embedded {
        path: Option<PathBuf>,
        pragmas: Vec<(String, String)>,
    },
    /// A server relbench initialises, starts and stops.
    Managed(Managed),
    /// A server someone else runs. The URL holds no password; the password,
    /// if any, is read from the environment variable `password_env` at run time.
    Url {
        url: String,
        password_env: Option<String>,
        /// The weakest password exchange the server may ask for.
        #[serde(default, skip_serializing_if = "Auth::is_default")]
        auth: Auth,
    },
}

/// The weakest password exchange a server by URL may ask for (libpq's
/// `require_auth`): a password sent in cleartext can be read by whoever
/// answers at that address, an MD5 hash replayed; relbench refuses a
/// server that asks for less than this, before it sends anything.
/// Weakest first; named as `pg_hba.conf` names the methods.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Auth {
    /// The password itself (`password` in `pg_hba.conf`).
    Password,
    Md5,
    #[default]
    ScramSha256,
}

impl Auth {
    pub const NAMES: [&'static str; 3] = ["password", "md5", "scram-sha-256"];

    pub fn parse(s: &str) -> Option<Auth> {
        match s {
            "password" | "cleartext" => Some(Auth::Password),
            "md5" => Some(Auth::Md5),
            "scram-sha-256" => Some(Auth::ScramSha256),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// Whether a server may ask for `asked`.
    pub fn allows(self, asked: Auth) -> bool {
        asked >= self
    }

    fn is_default(&self) -> bool {
        *self == Auth::default()
    }
}

/// A managed server, as the plan describes it (relative paths are resolved
/// against the plan's directory).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Managed {
    pub basedir: PathBuf,
    pub config: Option<PathBuf>,
    /// `None`: `<results>/data/<target>`, removed when the target is done.
    pub datadir: Option<PathBuf>,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub args: Vec<String>,
    pub malloc: Option<PathBuf>,
    /// Clients connect over the unix socket instead of TCP to 127.0.0.1.
    pub socket: bool,
    pub start_timeout_secs: f64,
}
