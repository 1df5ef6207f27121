//! The history in a shared PostgreSQL, through relbench's own wire client
//! (no new runtime): values bound in the extended protocol, a
//! transaction's statements sent in one pipeline, one round trip. The URL names the user,
//! host and database; the password comes from `PGPASSWORD`, read once
//! when the command line is (`HistoryAt::parse`).

use anyhow::{anyhow, Context};

use super::{Arg, Backend, Value, Writes};
use crate::db::postgres::wire::{Address, Opts, WireConn};
use crate::db::url::ServerUrl;

pub struct Postgres {
    conn: WireConn,
}

impl Postgres {
    pub fn connect(u: &ServerUrl, url: &str, password: Option<String>) -> anyhow::Result<Postgres> {
        let port = u.port.unwrap_or(5432);
        let address = match &u.socket {
            Some(dir) => Address::Socket {
                dir: dir.clone(),
                port,
            },
            None => Address::Tcp {
                host: u.host.clone(),
                port,
            },
        };
        let conn = WireConn::connect(&Opts {
            address,
            user: u.user.clone(),
            password,
            database: u.database.clone().unwrap_or_else(|| "relbench".into()),
            tls: Default::default(),
            auth: Default::default(),
        })
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| {
            format!("connecting to the history at {url} (a password is read from PGPASSWORD)")
        })?;
        let mut p = Postgres { conn };
        // Notices of "relation already exists" and the like stay quiet.
        p.conn
            .execute_text("SET client_min_messages = warning")
            .map_err(|e| anyhow!("{e}"))
            .with_context(|| format!("setting up the session with the history at {url}"))?;
        Ok(p)
    }
}

/// Runs `stmts` with their values bound, in one pipeline (see
/// `WireConn::run_bound`): the values as the wire sends them, text or NULL.
fn run<'a>(
    conn: &mut WireConn,
    stmts: impl Iterator<Item = (&'a str, &'a [Arg])>,
) -> crate::db::DbResult<Vec<Vec<Option<String>>>> {
    let stmts: Vec<(&str, Vec<Option<String>>)> = stmts
        .map(|(sql, args)| (sql, args.iter().map(Arg::as_text).collect()))
        .collect();
    let params: Vec<Vec<Option<&str>>> = stmts
        .iter()
        .map(|(_, v)| v.iter().map(|o| o.as_deref()).collect())
        .collect();
    conn.run_bound(
        stmts
            .iter()
            .zip(&params)
            .map(|((sql, _), p)| (*sql, p.as_slice())),
    )
}

impl Backend for Postgres {
    fn scan(
        &mut self,
        sql: &str,
        args: &[Arg],
        row: &mut dyn FnMut(&[Value<'_>]),
    ) -> anyhow::Result<()> {
        let rows = run(&mut self.conn, std::iter::once((sql, args)))
            .map_err(|e| anyhow!("reading the history: {e}"))?;
        let mut vals = Vec::new();
        for r in &rows {
            vals.clear();
            vals.extend(r.iter().map(|c| match c {
                Some(t) => Value::Text(t),
                None => Value::Null,
            }));
            row(&vals);
        }
        Ok(())
    }

    /// One pipeline, no BEGIN: the statements up to its Sync are one
    /// implicit transaction, rolled back whole by an error.
    fn write(&mut self, w: &Writes) -> anyhow::Result<()> {
        run(
            &mut self.conn,
            w.stmts.iter().map(|(sql, a)| (sql.as_str(), a.as_slice())),
        )
        .map(|_| ())
        .map_err(|e| anyhow!("writing the history: {e}"))
    }
}
