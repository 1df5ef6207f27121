//! Managed PostgreSQL servers. PostgreSQL refuses to run as root, so initdb
//! and the server run as the target's `user` (default `postgres` when
//! relbench runs as root), which owns the datadir, the socket directory and
//! the log.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use super::{find_binary, Flavor, Runtime, ServerSpec};
use crate::db::postgres::wire::{Address, Opts, WireConn};

pub const DATABASE: &str = "sbtest";
/// The superuser initdb creates; local connections are trusted.
pub const USER: &str = "relbench";

pub struct Postgres;

impl Flavor for Postgres {
    fn socket(&self, run_dir: &Path) -> PathBuf {
        run_dir.to_path_buf()
    }

    fn server_binary(&self, basedir: &Path) -> anyhow::Result<PathBuf> {
        find_binary(basedir, &["postgres"])
    }

    fn init_command(&self, spec: &ServerSpec) -> anyhow::Result<Command> {
        let mut c = Command::new(find_binary(&spec.basedir, &["initdb"])?);
        c.arg("-D")
            .arg(&spec.datadir)
            .arg(format!("--username={USER}"))
            .arg("--auth=trust")
            .arg("--encoding=UTF8")
            .arg("--locale=C");
        Ok(c)
    }

    fn start_command(
        &self,
        spec: &ServerSpec,
        bin: &Path,
        rt: &Runtime,
    ) -> anyhow::Result<Command> {
        let mut c = Command::new(bin);
        c.arg("-D")
            .arg(&rt.datadir)
            .arg("-p")
            .arg(rt.port.to_string())
            .arg("-k")
            .arg(&rt.run_dir)
            .arg("-c")
            .arg("listen_addresses=127.0.0.1")
            // The log goes to stderr, which relbench writes to the log file.
            .arg("-c")
            .arg("logging_collector=off");
        if let Some(cfg) = &rt.config {
            c.arg("-c").arg(format!("config_file={}", cfg.display()));
            // With its own config_file, the server would look for the hba
            // file beside it; keep initdb's, which trusts local connections.
            c.arg("-c").arg(format!(
                "hba_file={}",
                rt.datadir.join("pg_hba.conf").display()
            ));
        }
        c.args(&spec.args);
        Ok(c)
    }

    fn ready(&self, rt: &Runtime) -> anyhow::Result<()> {
        let mut conn = WireConn::connect(&Opts {
            address: Address::Socket {
                dir: rt.socket.clone(),
                port: rt.port,
            },
            user: USER.into(),
            password: None,
            database: "postgres".into(),
        })?;
        let exists = conn.query_text(&format!(
            "SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"
        ))?;
        if exists.is_empty() {
            conn.execute_text(&format!("CREATE DATABASE {DATABASE}"))
                .context("creating the sbtest database")?;
        }
        Ok(())
    }

    fn stop_signal(&self) -> i32 {
        // SIGINT is the "fast" shutdown: no waiting for clients to leave.
        libc::SIGINT
    }
}
