//! How a statement ended when it failed: the recorder counts errors by this
//! kind, and the engine decides from it whether a connection is still usable.
//! It lives on the ground floor because every layer that records, stores or
//! reports an error speaks of it.

use serde::{Deserialize, Serialize};

/// What kind of failure a statement met; the engine counts errors by kind and
/// decides from it whether the connection is still usable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// Lock wait timed out or the database was busy.
    Busy,
    /// The engine chose this transaction as a deadlock victim.
    Deadlock,
    /// A unique or other constraint was violated.
    Constraint,
    /// The connection is gone (server crashed, network); the client stops.
    Connection,
    /// The disk is full.
    DiskFull,
    /// Anything else the engine reported.
    Other,
    /// The statement ran but returned the wrong number of rows.
    WrongResult,
    /// The workload's own script failed (a Lua error or a SQL error it
    /// does not ignore, as sysbench stops on one); the client stops.
    Script,
}

impl ErrorKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Busy => "busy",
            Self::Deadlock => "deadlock",
            Self::Constraint => "constraint",
            Self::Connection => "connection",
            Self::DiskFull => "disk-full",
            Self::Other => "other",
            Self::WrongResult => "wrong-result",
            Self::Script => "script",
        }
    }

    /// Errors after which the connection cannot be used any more.
    pub fn is_fatal(self) -> bool {
        matches!(self, Self::Connection | Self::DiskFull | Self::Script)
    }
}
