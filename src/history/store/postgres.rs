//! The history in a shared PostgreSQL, through relbench's own wire client
//! (the simple query protocol; no new runtime). The URL names the user,
//! host and database; the password comes from `PGPASSWORD`, read once
//! when the command line is (`HistoryAt::parse`).

use anyhow::{anyhow, Context};

use super::{Backend, Value};
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
        p.batch("SET client_min_messages = warning")?;
        // Every text the store writes is a literal `store::lit` made:
        // quotes doubled, a backslash as it is. That is safe only where
        // a backslash escapes nothing; a database or role that turns
        // standard_conforming_strings off would let a build or directory
        // name ending in \' close the literal and run its own SQL. Set for
        // this session, and checked.
        p.batch("SET standard_conforming_strings = on")?;
        let mut on = String::new();
        p.scan("SHOW standard_conforming_strings", &mut |r| {
            on = r[0].text();
        })?;
        if on != "on" {
            anyhow::bail!(
                "the history at {url} keeps standard_conforming_strings {on:?} after relbench set it on; relbench writes \
                 no text into it that way (a backslash would escape its quotes)"
            );
        }
        Ok(p)
    }
}

impl Backend for Postgres {
    fn batch(&mut self, sql: &str) -> anyhow::Result<()> {
        self.conn
            .execute_text(sql)
            .map(|_| ())
            .map_err(|e| anyhow!("writing the history: {e}"))
    }

    fn scan(&mut self, sql: &str, row: &mut dyn FnMut(&[Value<'_>])) -> anyhow::Result<()> {
        let rows = self
            .conn
            .query_text(sql)
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
}
