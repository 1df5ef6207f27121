//! Managed PostgreSQL servers. PostgreSQL refuses to run as root, so initdb
//! and the server run as the target's `user` (default `postgres` when
//! relbench runs as root), which owns the datadir, the socket directory and
//! the log.
//!
//! Who can get in: the superuser `relbench_admin` only through the unix
//! socket in the private run directory; the benchmark role `relbench` (not a
//! superuser, owner of the `sbtest` database, which is all any workload
//! needs, and a member of `pg_checkpoint` for settle) only from loopback or
//! that socket, with this start's random
//! password (stored as its SCRAM verifier). relbench writes the
//! authentication file itself, into the private directory, and no option
//! can point the server at another one or widen where it listens.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

use super::{find_binary, Flavor, Runtime, ServerSpec, SetupRefused};
use crate::db::postgres::wire::{Address, Opts, WireConn};
use crate::db::tls::Tls;

pub const DATABASE: &str = "sbtest";
/// The role the clients connect as.
pub const USER: &str = "relbench";
/// The superuser initdb creates: settle's CHECKPOINT, the facts and the
/// counters go through it, over the private socket.
pub const ADMIN: &str = "relbench_admin";

pub struct Postgres;

impl Postgres {
    /// The superuser over the private socket, on the benchmark database.
    pub fn admin(rt: &Runtime, database: &str) -> Opts {
        Opts {
            tls: Tls::Off,
            address: Address::Socket {
                dir: rt.socket.clone(),
                port: rt.port,
            },
            user: ADMIN.into(),
            password: None,
            database: database.into(),
            // Trusted on the private socket: no password is sent at all.
            auth: crate::db::spec::Auth::ScramSha256,
        }
    }
}

/// The authentication file: the superuser on the socket alone (trusted:
/// the socket's directory is private), the benchmark role by password.
fn hba() -> String {
    format!(
        "# Written by relbench for this start of the server.\n\
         local all {ADMIN} trust\n\
         local all {USER} scram-sha-256\n\
         host all {USER} 127.0.0.1/32 scram-sha-256\n\
         host all {USER} ::1/128 scram-sha-256\n"
    )
}

/// Server settings given in `args` (`-c name=value`, `--name=value`), and
/// the short options that set them.
fn settings(args: &[String]) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        let kv = if a == "-c" {
            it.next().cloned()
        } else if let Some(rest) = a.strip_prefix("-c") {
            Some(rest.to_string())
        } else if let Some(rest) = a.strip_prefix("--") {
            Some(rest.to_string())
        } else {
            match a.as_str() {
                // -h sets listen_addresses, -k the socket directory, -i
                // listens on every interface.
                "-h" => Some(format!(
                    "listen_addresses={}",
                    it.next().cloned().unwrap_or_default()
                )),
                "-k" => Some(format!(
                    "unix_socket_directories={}",
                    it.next().cloned().unwrap_or_default()
                )),
                "-i" => Some("listen_addresses=*".into()),
                _ => None,
            }
        };
        if let Some(kv) = kv {
            match kv.split_once('=') {
                Some((k, v)) => out.push((
                    k.replace('-', "_").to_ascii_lowercase(),
                    Some(v.to_string()),
                )),
                None => out.push((kv.replace('-', "_").to_ascii_lowercase(), None)),
            }
        }
    }
    out
}

impl Flavor for Postgres {
    fn socket(&self, run_dir: &Path) -> PathBuf {
        run_dir.to_path_buf()
    }

    fn server_binary(&self, basedir: &Path) -> anyhow::Result<PathBuf> {
        find_binary(basedir, &["postgres"])
    }

    fn init_command(&self, spec: &ServerSpec, _rt: &Runtime) -> anyhow::Result<Command> {
        let mut c = Command::new(find_binary(&spec.basedir, &["initdb"])?);
        c.arg("-D")
            .arg(&spec.datadir)
            .arg(format!("--username={ADMIN}"))
            // relbench's own authentication file replaces initdb's at every
            // start; these only keep the datadir closed on its own.
            .arg("--auth-local=peer")
            .arg("--auth-host=reject")
            .arg("--encoding=UTF8")
            .arg("--locale=C");
        Ok(c)
    }

    fn check_args(&self, args: &[String]) -> anyhow::Result<()> {
        for (k, v) in settings(args) {
            let loopback = |v: &str| {
                v.split(',')
                    .map(str::trim)
                    .all(|a| matches!(a, "127.0.0.1" | "localhost" | "::1" | ""))
            };
            let why = match k.as_str() {
                "listen_addresses" if v.as_deref().is_some_and(loopback) => continue,
                "listen_addresses" => "a managed server listens on 127.0.0.1 only",
                "hba_file" | "ident_file" => "relbench writes the authentication file itself",
                "unix_socket_directories" | "unix_socket_permissions" | "unix_socket_group" => {
                    "relbench keeps the socket in a private directory"
                }
                _ => continue,
            };
            bail!(
                "`args` sets {k}{}: {why}; remove it from `args`",
                v.map(|v| format!("={v}")).unwrap_or_default()
            );
        }
        Ok(())
    }

    fn start_command(
        &self,
        spec: &ServerSpec,
        bin: &Path,
        rt: &Runtime,
    ) -> anyhow::Result<Command> {
        let hba_file = rt.run_dir.join("pg_hba.conf");
        std::fs::write(&hba_file, hba())
            .with_context(|| format!("writing {}", hba_file.display()))?;
        if let Ok(m) = std::fs::metadata(&rt.run_dir) {
            use std::os::unix::fs::MetadataExt;
            std::os::unix::fs::lchown(&hba_file, Some(m.uid()), Some(m.gid()))?;
        }
        let mut c = Command::new(bin);
        c.arg("-D")
            .arg(&rt.datadir)
            .arg("-p")
            .arg(rt.port.to_string());
        // The log goes to stderr, which relbench writes to the log file.
        c.arg("-c").arg("logging_collector=off");
        if let Some(cfg) = &rt.config {
            c.arg("-c").arg(format!("config_file={}", cfg.display()));
        }
        c.args(&spec.args);
        // Last, so that neither the config file nor `args` can move them.
        for setting in [
            "listen_addresses=127.0.0.1".to_string(),
            format!("unix_socket_directories={}", rt.run_dir.display()),
            "unix_socket_permissions=0700".to_string(),
            format!("hba_file={}", hba_file.display()),
        ] {
            c.arg("-c").arg(setting);
        }
        Ok(c)
    }

    fn ready(&self, rt: &Runtime) -> anyhow::Result<()> {
        let mut conn = WireConn::connect(&Self::admin(rt, "postgres"))?;
        set_up(&mut conn, rt).map_err(|e| SetupRefused(format!("{e:#}")).into())
    }

    fn stop_signal(&self) -> i32 {
        // SIGINT is the "fast" shutdown: no waiting for clients to leave.
        libc::SIGINT
    }

    fn is_log(&self, rel: &Path) -> bool {
        // pg_xlog before PostgreSQL 10.
        rel.starts_with("pg_wal") || rel.starts_with("pg_xlog")
    }
}

/// The benchmark role and database on a server that answers.
fn set_up(conn: &mut WireConn, rt: &Runtime) -> anyhow::Result<()> {
    let verifier = postgres_protocol::password::scram_sha_256(rt.password.expose().as_bytes());
    conn.execute_text(&format!(
        "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{USER}') THEN \
         CREATE ROLE {USER}; END IF; END $$"
    ))
    .context("creating the relbench role")?;
    conn.execute_text(&format!(
        "ALTER ROLE {USER} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION PASSWORD '{verifier}'"
    ))
    .context("setting the relbench role's password")?;
    // Settle's CHECKPOINT, for a client that reaches this server by URL
    // as the benchmark role (PostgreSQL 15 has a role for just that).
    let version: u32 = conn
        .query_text("SHOW server_version_num")?
        .first()
        .and_then(|r| r[0].clone())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if version >= 150000 {
        conn.execute_text(&format!("GRANT pg_checkpoint TO {USER}"))
            .context("letting the relbench role checkpoint")?;
    }
    let exists = conn.query_text(&format!(
        "SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"
    ))?;
    if exists.is_empty() {
        conn.execute_text(&format!("CREATE DATABASE {DATABASE} OWNER {USER}"))
            .context("creating the sbtest database")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_that_open_the_server_are_refused() {
        let check =
            |a: &[&str]| Postgres.check_args(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert!(check(&["-c", "listen_addresses=*"]).is_err());
        assert!(check(&["-clisten_addresses=0.0.0.0"]).is_err());
        assert!(check(&["--listen-addresses=db1"]).is_err());
        assert!(check(&["-h", "0.0.0.0"]).is_err());
        assert!(check(&["-i"]).is_err());
        assert!(check(&["-c", "hba_file=/tmp/trust_all"]).is_err());
        assert!(check(&["-k", "/tmp"]).is_err());
        assert!(check(&["-c", "listen_addresses=127.0.0.1"]).is_ok());
        assert!(check(&["-c", "shared_buffers=1GB", "-c", "jit=off"]).is_ok());
        let e = check(&["-c", "listen_addresses=*"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("127.0.0.1 only") && e.contains("remove it"),
            "{e}"
        );
    }
}
