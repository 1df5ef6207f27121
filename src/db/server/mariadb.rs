//! Managed MariaDB and MySQL servers.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use super::{find_binary, Flavor, Runtime, ServerSpec};
use crate::db::mysql::wire::{Address, Opts, WireConn};

/// The database and user relbench creates and connects as.
pub const DATABASE: &str = "sbtest";
pub const USER: &str = "relbench";

pub struct MariaDb;

impl Flavor for MariaDb {
    fn socket(&self, run_dir: &Path) -> PathBuf {
        run_dir.join("server.sock")
    }

    fn server_binary(&self, basedir: &Path) -> anyhow::Result<PathBuf> {
        find_binary(basedir, &["mariadbd", "mysqld"])
    }

    fn init_command(&self, spec: &ServerSpec) -> anyhow::Result<Command> {
        let datadir = spec.datadir.display();
        if let Ok(script) = find_binary(&spec.basedir, &["mariadb-install-db", "mysql_install_db"])
        {
            let mut c = Command::new(script);
            c.arg("--no-defaults")
                .arg(format!("--basedir={}", spec.basedir.display()))
                .arg(format!("--datadir={datadir}"))
                .arg(format!("--user={}", spec.user.as_deref().unwrap_or("root")))
                .arg("--auth-root-authentication-method=normal")
                .arg("--skip-test-db");
            return Ok(c);
        }
        // MySQL 5.7 and later initialise with the server itself.
        let mut c = Command::new(self.server_binary(&spec.basedir)?);
        c.arg("--no-defaults")
            .arg("--initialize-insecure")
            .arg(format!("--basedir={}", spec.basedir.display()))
            .arg(format!("--datadir={datadir}"))
            .arg(format!("--user={}", spec.user.as_deref().unwrap_or("root")));
        Ok(c)
    }

    fn start_command(
        &self,
        spec: &ServerSpec,
        bin: &Path,
        rt: &Runtime,
    ) -> anyhow::Result<Command> {
        let mut c = Command::new(bin);
        // --defaults-file must come first; without a config, --no-defaults
        // keeps /etc/mysql out of the measurement.
        match &rt.config {
            Some(cfg) => c.arg(format!("--defaults-file={}", cfg.display())),
            None => c.arg("--no-defaults"),
        };
        c.arg(format!("--basedir={}", spec.basedir.display()))
            .arg(format!("--datadir={}", rt.datadir.display()))
            .arg(format!("--socket={}", rt.socket.display()))
            .arg(format!("--port={}", rt.port))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--user={}", spec.user.as_deref().unwrap_or("root")))
            .arg(format!(
                "--pid-file={}",
                rt.run_dir.join("server.pid").display()
            ))
            .arg(format!("--log-error={}", rt.log.display()))
            .arg("--skip-name-resolve");
        for p in &spec.plugins {
            c.arg(format!("--plugin-load-add={p}"));
        }
        c.args(&spec.args);
        Ok(c)
    }

    fn ready(&self, rt: &Runtime) -> anyhow::Result<()> {
        let mut conn = WireConn::connect(&Opts {
            address: Address::Socket(rt.socket.clone()),
            user: "root".into(),
            password: None,
            database: None,
        })?;
        conn.execute_text(&format!(
            "CREATE DATABASE IF NOT EXISTS {DATABASE}; \
             CREATE USER IF NOT EXISTS '{USER}'@'%'; \
             CREATE USER IF NOT EXISTS '{USER}'@'localhost'; \
             GRANT ALL ON *.* TO '{USER}'@'%'; \
             GRANT ALL ON *.* TO '{USER}'@'localhost'"
        ))
        .context("creating the sbtest database and the relbench user")?;
        Ok(())
    }

    fn stop_signal(&self) -> i32 {
        // mysqld shuts down cleanly on SIGTERM.
        libc::SIGTERM
    }
}
