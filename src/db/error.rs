//! A database's errors: the engine's own message, with what tells errors
//! apart — their kind, the server's code, whether a read timed out —
//! never the message's text.

use super::ErrorKind;

/// An error from the database, with the engine's own message. What tells
/// errors apart is its kind, the server's code and whether a read timed
/// out, never the message's text.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct DbError {
    pub kind: ErrorKind,
    pub message: String,
    /// The server's own code for it, when the server sent one.
    pub code: Option<ServerCode>,
    /// The connection's read or write timed out (its timeout was set).
    pub timed_out: bool,
}

/// A server's code for an error: MySQL's number, PostgreSQL's SQLSTATE
/// (five characters, kept inline: every statement's result carries room
/// for an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerCode {
    Mysql(u16),
    Sqlstate([u8; 5]),
}

impl ServerCode {
    /// A SQLSTATE as the server sent it; `None` when it is not one.
    pub fn sqlstate(code: &str) -> Option<ServerCode> {
        Some(ServerCode::Sqlstate(code.as_bytes().try_into().ok()?))
    }

    /// MySQL's ER_BAD_DB_ERROR: the connection's default database does
    /// not exist.
    pub const MYSQL_NO_DATABASE: ServerCode = ServerCode::Mysql(1049);

    /// MySQL's ER_SPECIFIC_ACCESS_DENIED_ERROR (a statement that needs
    /// SUPER or another privilege the user lacks) and
    /// ER_TABLEACCESS_DENIED_ERROR.
    pub fn mysql_denied(self) -> bool {
        matches!(self, ServerCode::Mysql(1227 | 1142))
    }

    /// PostgreSQL's invalid_catalog_name: the database asked for does
    /// not exist.
    pub const PG_NO_DATABASE: ServerCode = ServerCode::Sqlstate(*b"3D000");
}

impl DbError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        DbError {
            kind,
            message: message.into(),
            code: None,
            timed_out: false,
        }
    }

    /// The same error, with the server's code for it.
    pub fn with_code(mut self, code: Option<ServerCode>) -> Self {
        self.code = code;
        self
    }

    /// An IO error of the connection: lost, or timed out.
    pub fn io(e: &std::io::Error) -> Self {
        let timed_out = matches!(
            e.kind(),
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
        );
        DbError {
            timed_out,
            ..DbError::new(
                ErrorKind::Connection,
                format!("lost the connection to the server: {e}"),
            )
        }
    }

    /// Whether `e` (an error of any layer) is this database error with
    /// this code.
    pub fn has_code(e: &anyhow::Error, code: &ServerCode) -> bool {
        e.chain()
            .filter_map(|c| c.downcast_ref::<DbError>())
            .any(|d| d.code.as_ref() == Some(code))
    }

    /// Whether `e` (an error of any layer) is a database read that timed
    /// out.
    pub fn is_timeout(e: &anyhow::Error) -> bool {
        e.chain()
            .filter_map(|c| c.downcast_ref::<DbError>())
            .any(|d| d.timed_out)
    }
}

pub type DbResult<T> = Result<T, DbError>;
