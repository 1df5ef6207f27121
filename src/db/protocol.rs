//! What relbench's wire-protocol clients (MySQL, PostgreSQL) have in
//! common, and the one [`Conn`] over any of them: each engine writes only
//! its protocol and its bulk-load statement.

use super::{Conn, DbResult, Param, Stmt};

/// What a command returned.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Outcome {
    /// Rows of all result sets.
    pub rows: u64,
    /// Rows the last statement changed (matched, for MySQL's FOUND_ROWS).
    pub affected: u64,
}

/// A protocol client, as the [`Conn`] adapter uses it.
pub trait Wire: Send {
    /// Prepares a statement once; returns its handle.
    fn prepare(&mut self, sql: &str) -> DbResult<usize>;
    /// Executes a prepared statement, counting rows without decoding them.
    fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> DbResult<Outcome>;
    /// Runs SQL text, discarding rows.
    fn execute_text(&mut self, sql: &str) -> DbResult<Outcome>;
    /// The engine's bulk path; see [`Conn::bulk_load`].
    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        fill: &mut dyn FnMut(&mut Vec<u8>) -> bool,
    ) -> DbResult<Option<u64>>;
}

/// A [`Conn`] over a protocol client.
pub struct ProtocolConn<W>(pub W);

impl<W: Wire> Conn for ProtocolConn<W> {
    fn prepare(&mut self, sql: &str) -> DbResult<Stmt> {
        self.0.prepare(sql).map(Stmt)
    }

    fn query(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<u64> {
        self.0.execute(stmt.0, params).map(|o| o.rows)
    }

    fn exec(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<u64> {
        self.0.execute(stmt.0, params).map(|o| o.affected)
    }

    fn batch(&mut self, sql: &str) -> DbResult<()> {
        self.0.execute_text(sql).map(drop)
    }

    fn begin(&mut self, _write: bool) -> DbResult<()> {
        // Both engines take row locks as they go; there is no write lock to
        // take up front.
        self.0.execute_text("BEGIN").map(drop)
    }

    fn commit(&mut self) -> DbResult<()> {
        self.0.execute_text("COMMIT").map(drop)
    }

    fn rollback(&mut self) -> DbResult<()> {
        self.0.execute_text("ROLLBACK").map(drop)
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        fill: &mut dyn FnMut(&mut Vec<u8>) -> bool,
    ) -> DbResult<Option<u64>> {
        self.0.bulk_load(table, columns, fill)
    }
}
