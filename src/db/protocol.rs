//! What relbench's wire-protocol clients (MySQL, PostgreSQL) have in
//! common, and the one [`Conn`] over any of them: each engine writes only
//! its protocol and its bulk-load statement.

use super::{Conn, DbResult, Param, Stmt};

/// What a command returned.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Outcome {
    /// Rows of all result sets.
    pub rows: u64,
    /// Rows the statement changed (matched, for MySQL's FOUND_ROWS); of a
    /// multi-statement, the first one's.
    pub affected: u64,
}

/// A protocol client, as the [`Conn`] adapter uses it.
pub trait Wire: Send {
    /// Prepares a statement once; returns its handle.
    fn prepare(&mut self, sql: &str) -> DbResult<usize>;
    /// Executes a prepared statement, counting rows without decoding them.
    fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> DbResult<Outcome>;
    /// From the next command on, the value of column `col` of each row
    /// read is decoded as an integer (`None`: no longer), and the last
    /// row's is kept for [`Wire::last_value`].
    fn watch_column(&mut self, col: Option<usize>);
    /// The watched column of the last row the last command returned.
    fn last_value(&mut self) -> Option<i64>;
    /// From the next command on, every row read is kept, its values as
    /// text (`false`: no longer; either way what was kept is dropped).
    fn keep_rows(&mut self, keep: bool);
    /// The rows kept since [`Wire::keep_rows`].
    fn kept_rows(&mut self) -> Vec<Vec<Option<String>>>;
    /// See [`Conn::count_changed_rows`].
    fn count_changed_rows(&mut self) -> DbResult<()> {
        Ok(())
    }
    /// Runs SQL text, discarding rows.
    fn execute_text(&mut self, sql: &str) -> DbResult<Outcome>;
    /// Runs SQL text and returns its rows as text (see [`Conn::text_rows`]).
    fn text_rows(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>>;
    /// Whether one text command may carry several statements, the first
    /// one's changed rows answered ([`Conn::exec_commit`] in one round
    /// trip).
    fn multi_statements(&self) -> bool {
        false
    }
    /// The engine's bulk path; see [`Conn::bulk_load`].
    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        fill: &mut dyn FnMut(&mut Vec<u8>) -> bool,
    ) -> DbResult<Option<u64>>;
}

/// A [`Conn`] over a protocol client.
pub struct ProtocolConn<W> {
    pub wire: W,
    /// Statements sent as text with their values in them (sysbench's
    /// `--db-ps-mode=disable`), once [`Conn::set_plain`] says so.
    plain: bool,
    texts: Vec<PlainText>,
    /// The statement being sent, reused so an event allocates nothing.
    buf: String,
}

/// Stmt handles of plain statements carry this bit.
const PLAIN: usize = 1 << 48;

/// A statement's text cut at its placeholders: `parts[i]`, the value of
/// parameter `order[i]`, …, then the last part.
struct PlainText {
    parts: Vec<String>,
    order: Vec<usize>,
    /// MySQL reads a backslash in a string as an escape.
    backslash: bool,
}

impl PlainText {
    /// Cuts at `?` (MySQL, in order) and `$n` (PostgreSQL), outside quotes.
    fn new(sql: &str) -> PlainText {
        let b = sql.as_bytes();
        let (mut parts, mut order) = (Vec::new(), Vec::new());
        let (mut last, mut i, mut next) = (0, 0, 0);
        let mut quote: Option<u8> = None;
        let mut dollar = false;
        while i < b.len() {
            let c = b[i];
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == b'\'' || c == b'"' || c == b'`' => quote = Some(c),
                None if c == b'?' => {
                    parts.push(sql[last..i].to_string());
                    order.push(next);
                    next += 1;
                    last = i + 1;
                }
                None if c == b'$' && b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                    let mut j = i + 1;
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                    let n: usize = sql[i + 1..j].parse().unwrap_or(1);
                    parts.push(sql[last..i].to_string());
                    order.push(n.saturating_sub(1));
                    dollar = true;
                    last = j;
                    i = j;
                    continue;
                }
                None => {}
            }
            i += 1;
        }
        parts.push(sql[last..].to_string());
        PlainText {
            parts,
            order,
            backslash: !dollar,
        }
    }

    /// The statement with `params` in it, into `out`.
    fn write(&self, params: &[Param<'_>], out: &mut String) -> DbResult<()> {
        use std::fmt::Write;
        out.clear();
        for (i, part) in self.parts.iter().enumerate() {
            out.push_str(part);
            let Some(&p) = self.order.get(i) else { break };
            match params.get(p) {
                Some(Param::Int(v)) => {
                    let _ = write!(out, "{v}");
                }
                Some(Param::Str(s)) => {
                    out.push('\'');
                    for ch in s.chars() {
                        match ch {
                            '\'' => out.push_str("''"),
                            '\\' if self.backslash => out.push_str("\\\\"),
                            c => out.push(c),
                        }
                    }
                    out.push('\'');
                }
                None => {
                    return Err(super::DbError::new(
                        super::ErrorKind::Other,
                        format!("the statement has a placeholder ${} with no value", p + 1),
                    ))
                }
            }
        }
        Ok(())
    }
}

impl<W> ProtocolConn<W> {
    pub fn new(wire: W) -> Self {
        ProtocolConn {
            wire,
            plain: false,
            texts: Vec::new(),
            buf: String::new(),
        }
    }
}

impl<W: Wire> ProtocolConn<W> {
    fn run(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<Outcome> {
        if stmt.0 & PLAIN == 0 {
            return self.wire.execute(stmt.0, params);
        }
        self.texts[stmt.0 & !PLAIN].write(params, &mut self.buf)?;
        self.wire.execute_text(&self.buf)
    }
}

impl<W: Wire> Conn for ProtocolConn<W> {
    fn set_plain(&mut self, plain: bool) {
        self.plain = plain;
    }

    fn plain(&self) -> bool {
        self.plain
    }

    fn prepare(&mut self, sql: &str) -> DbResult<Stmt> {
        if self.plain {
            self.texts.push(PlainText::new(sql));
            return Ok(Stmt(PLAIN | (self.texts.len() - 1)));
        }
        self.wire.prepare(sql).map(Stmt)
    }

    fn query(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<u64> {
        self.run(stmt, params).map(|o| o.rows)
    }

    fn query_last(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
        col: usize,
    ) -> DbResult<(u64, Option<i64>)> {
        self.wire.watch_column(Some(col));
        let r = self.run(stmt, params);
        let last = self.wire.last_value();
        self.wire.watch_column(None);
        r.map(|o| (o.rows, last))
    }

    fn query_rows(
        &mut self,
        stmt: Stmt,
        params: &[Param<'_>],
    ) -> DbResult<Vec<Vec<Option<String>>>> {
        self.wire.keep_rows(true);
        let r = self.run(stmt, params);
        let rows = self.wire.kept_rows();
        self.wire.keep_rows(false);
        r.map(|_| rows)
    }

    fn count_changed_rows(&mut self) -> DbResult<()> {
        self.wire.count_changed_rows()
    }

    fn exec(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<u64> {
        self.run(stmt, params).map(|o| o.affected)
    }

    fn batch(&mut self, sql: &str) -> DbResult<()> {
        self.wire.execute_text(sql).map(drop)
    }

    fn text_rows(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        self.wire.text_rows(sql)
    }

    fn exec_commit(&mut self, stmt: Stmt, params: &[Param<'_>]) -> DbResult<u64> {
        if stmt.0 & PLAIN == 0 || !self.wire.multi_statements() {
            let n = self.run(stmt, params)?.affected;
            self.commit()?;
            return Ok(n);
        }
        self.texts[stmt.0 & !PLAIN].write(params, &mut self.buf)?;
        self.buf.push_str("; commit");
        self.wire.execute_text(&self.buf).map(|o| o.affected)
    }

    fn begin(&mut self, _write: bool) -> DbResult<()> {
        // Both engines take row locks as they go; there is no write lock to
        // take up front.
        self.wire.execute_text("BEGIN").map(drop)
    }

    fn commit(&mut self) -> DbResult<()> {
        self.wire.execute_text("COMMIT").map(drop)
    }

    fn rollback(&mut self) -> DbResult<()> {
        self.wire.execute_text("ROLLBACK").map(drop)
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        fill: &mut dyn FnMut(&mut Vec<u8>) -> bool,
    ) -> DbResult<Option<u64>> {
        self.wire.bulk_load(table, columns, fill)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_statements_carry_their_values_quoted() {
        let mut out = String::new();
        let t = PlainText::new("UPDATE t SET c=? WHERE id=? AND x <> '?'");
        t.write(&[Param::Str("it's"), Param::Int(-7)], &mut out)
            .unwrap();
        assert_eq!(out, "UPDATE t SET c='it''s' WHERE id=-7 AND x <> '?'");
        let t = PlainText::new("SELECT c FROM t WHERE id BETWEEN $1 AND $2 AND c = $1");
        t.write(&[Param::Int(3), Param::Int(9)], &mut out).unwrap();
        assert_eq!(out, "SELECT c FROM t WHERE id BETWEEN 3 AND 9 AND c = 3");
        let t = PlainText::new("SELECT ?");
        t.write(&[Param::Str("a\\b")], &mut out).unwrap();
        assert_eq!(out, "SELECT 'a\\\\b'");
    }
}
