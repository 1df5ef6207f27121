//! Managed MariaDB and MySQL servers.
//!
//! Who can get in: root only through the unix socket in the private run
//! directory (MariaDB: the `unix_socket` plugin, as the OS user running
//! relbench; MySQL: no TCP root account), and the benchmark user `relbench`
//! only from loopback, with this start's random password (sent as its hash)
//! and no rights beyond its database: `ALL ON sbtest.*` covers what every
//! workload does (create, load, index, query, change and drop its tables).
//! No FILE, no SUPER: settle's `SET GLOBAL` goes through root on the socket.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use sha1::{Digest, Sha1};

use super::{find_binary, find_optional, Flavor, Runtime, Secret, ServerSpec, SetupRefused};
use crate::db::mysql::wire::{Address, Opts, WireConn};
use crate::db::tls::Tls;

/// The database and user relbench creates and connects as.
pub const DATABASE: &str = "sbtest";
pub const USER: &str = "relbench";
/// The administrator, reachable only through the private socket.
pub const ADMIN: &str = "root";
/// Where the benchmark user may connect from.
const USER_HOSTS: [&str; 3] = ["127.0.0.1", "::1", "localhost"];

pub struct MariaDb;

/// The OS user running relbench, which the socket's root account maps to.
fn os_user() -> String {
    // SAFETY: getpwuid returns static storage or null; the name is copied
    // out at once.
    unsafe {
        let pw = libc::getpwuid(libc::geteuid());
        if pw.is_null() {
            return "root".into();
        }
        std::ffi::CStr::from_ptr((*pw).pw_name)
            .to_string_lossy()
            .into_owned()
    }
}

/// `--bind_address=X` → (`bind-address`, Some("X")).
fn option(arg: &str) -> Option<(String, Option<&str>)> {
    let body = arg.strip_prefix("--")?;
    let (k, v) = match body.split_once('=') {
        Some((k, v)) => (k, Some(v)),
        None => (body, None),
    };
    Some((k.replace('_', "-").to_ascii_lowercase(), v))
}

/// Whether an option (as [`option`] gives it: `_` as `-`, lower case)
/// turns grant tables off however MariaDB and MySQL spell it: with
/// `loose-`, as any unique prefix of `skip-grant-tables` (`skip-grant`),
/// or as `enable-skip-grant-tables`; `=0`, `=off` or `=false` leave grants
/// on, as does `skip-skip-grant-tables` or `disable-skip-grant-tables`.
fn skips_grants(key: &str, value: Option<&str>) -> bool {
    let mut k = key;
    while let Some(rest) = k.strip_prefix("loose-") {
        k = rest;
    }
    let k = k.strip_prefix("enable-").unwrap_or(k);
    const NAME: &str = "skip-grant-tables";
    // "skip-g" could be skip-general-log: from "skip-gra" on, only the one.
    if !(NAME.starts_with(k) && k.len() >= "skip-gra".len()) {
        return false;
    }
    !value.is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "0" | "off" | "false"
        )
    })
}

/// A config line less its trailing comment: from the first `#` outside
/// single or double quotes, as MariaDB's and MySQL's option file reader
/// (`mysys/my_default.c`) removes it.
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (c, quote) {
            ('\'' | '"', None) => quote = Some(c),
            (c, Some(q)) if c == q => quote = None,
            ('#', None) => return &line[..i],
            _ => {}
        }
    }
    line
}

fn loopback(v: &str) -> bool {
    matches!(v, "127.0.0.1" | "localhost" | "::1")
}

/// The `mysql_native_password` hash of a password: what the server stores,
/// so the password itself never reaches the server (nor its logs).
fn native_hash(password: &Secret) -> String {
    let once = Sha1::digest(password.expose().as_bytes());
    let twice = Sha1::digest(once);
    let hex: String = twice.iter().map(|b| format!("{b:02X}")).collect();
    format!("*{hex}")
}

/// What a server binary says it is, from its `--version` ("mysqld  Ver
/// 10.2.11-MariaDB for Linux on x86_64", "mysqld  Ver 9.7.4-2 for Linux on
/// x86_64 ((Debian))"): the options and statements differ by both.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Build {
    mariadb: bool,
    version: (u32, u32),
}

impl Build {
    fn of(bin: &Path) -> Option<Build> {
        let out = Command::new(bin).arg("--version").output().ok()?;
        Build::parse(&String::from_utf8_lossy(&out.stdout))
    }

    fn parse(text: &str) -> Option<Build> {
        Build::of_version(text.split("Ver ").nth(1)?.split_whitespace().next()?)
    }

    /// From a version string as `SELECT VERSION()` gives it
    /// ("10.2.11-MariaDB-log", "9.7.4-2").
    fn of_version(v: &str) -> Option<Build> {
        let mut parts = v.split(['.', '-']);
        let version = (parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
        Some(Build {
            mariadb: v.contains("MariaDB"),
            version,
        })
    }

    /// MySQL 5.7 and later initialise with `mysqld --initialize-insecure`;
    /// MariaDB and MySQL 5.6 with their install script.
    fn initialises_itself(self) -> bool {
        !self.mariadb && self.version >= (5, 7)
    }
}

impl MariaDb {
    /// Root over the private socket.
    pub fn admin(rt: &Runtime) -> Opts {
        Opts {
            tls: Tls::Off,
            address: Address::Socket(rt.socket.clone()),
            user: ADMIN.into(),
            password: None,
            database: None,
            found_rows: true,
        }
    }
}

impl Flavor for MariaDb {
    fn socket(&self, run_dir: &Path) -> PathBuf {
        run_dir.join("server.sock")
    }

    fn server_binary(&self, basedir: &Path) -> anyhow::Result<PathBuf> {
        find_binary(basedir, &["mariadbd", "mysqld"])
    }

    fn init_command(&self, spec: &ServerSpec, rt: &Runtime) -> anyhow::Result<Command> {
        let datadir = spec.datadir.display();
        let build = Build::of(&self.server_binary(&spec.basedir)?);
        let script = find_optional(&spec.basedir, &["mariadb-install-db", "mysql_install_db"])?;
        if let (Some(script), false) = (script, build.is_some_and(Build::initialises_itself)) {
            // Which options this version's script knows, from its own
            // help: 10.2 has no --skip-test-db, 10.1 no
            // --auth-root-authentication-method, and a fixed list failed
            // on both with "unknown option".
            let help = Command::new(&script)
                .arg("--help")
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            let knows = |opt: &str| help.contains(opt);
            let mut c = Command::new(script);
            c.arg("--no-defaults")
                .arg(format!("--basedir={}", spec.basedir.display()))
                .arg(format!("--datadir={datadir}"))
                // Temporary tables in the private directory, not the
                // shared /tmp (parallel bootstraps there lost each
                // other's files).
                .arg(format!("--tmpdir={}", rt.run_dir.display()));
            // Root by unix_socket where the server has it built in (10.4
            // on); before that the plugin must be loaded, so root keeps no
            // password instead, which is as closed: `localhost` is the
            // socket, in relbench's private directory, and every other
            // root account is dropped after the start.
            let builtin_socket_auth = build.is_some_and(|b| b.mariadb && b.version >= (10, 4));
            if knows("--auth-root-authentication-method") {
                if builtin_socket_auth {
                    c.arg("--auth-root-authentication-method=socket")
                        .arg(format!("--auth-root-socket-user={}", os_user()));
                } else {
                    c.arg("--auth-root-authentication-method=normal");
                }
            }
            // The test database is dropped after the start where the script
            // cannot leave it out.
            if knows("--skip-test-db") {
                c.arg("--skip-test-db");
            }
            // Release trees without resolveip (10.1's) need it; the host
            // name accounts it would make are dropped after the start.
            if knows("--force") {
                c.arg("--force");
            }
            // No --user: the script runs as that user already (relbench
            // gives the datadir to it first), and with --user it runs an
            // unquoted `chown -R` that breaks on a space in the path.
            return Ok(c);
        }
        // MySQL 5.7 and later initialise with the server itself (their
        // mysql_install_db is deprecated, or gone): root has no password,
        // but only on the socket (localhost), which is in the private
        // directory.
        let mut c = Command::new(self.server_binary(&spec.basedir)?);
        c.arg("--no-defaults")
            .arg("--initialize-insecure")
            .arg(format!("--tmpdir={}", rt.run_dir.display()))
            .arg(format!("--basedir={}", spec.basedir.display()))
            .arg(format!("--datadir={datadir}"));
        if let Some(u) = &spec.user {
            c.arg(format!("--user={u}"));
        }
        Ok(c)
    }

    fn check_args(&self, args: &[String]) -> anyhow::Result<()> {
        for a in args {
            let Some((key, value)) = option(a) else {
                continue;
            };
            let why = match key.as_str() {
                "bind-address" if value.is_some_and(loopback) => continue,
                "bind-address" => "a managed server listens on 127.0.0.1 only",
                k if skips_grants(k, value) => "it would let anyone in without a password",
                "socket" | "pid-file" | "secure-file-priv" | "user" => {
                    "relbench sets it so that only it can reach the server's files"
                }
                _ => continue,
            };
            bail!("`args` has \"{a}\": {why}; remove it from `args`");
        }
        Ok(())
    }

    fn check_config(&self, text: &str) -> anyhow::Result<()> {
        for (n, line) in text.lines().enumerate() {
            let l = line.trim();
            // An included file is read after this check, by the server
            // alone: it could turn grants off (regression: `!include`
            // passed, and a local user got in during start-up).
            if l.starts_with("!include") {
                bail!(
                    "its config file has \"{}\" (line {}): relbench checks the options a managed server \
                     reads, and an included file is read by the server alone; put its options in this file",
                    crate::util::printable(l, 120),
                    n + 1
                );
            }
            // Comments as the server strips them: whole lines from # or ;,
            // and from a # outside quotes to the end of the line
            // (`skip-grant-tables # x` and `skip-grant-tables#x` are the
            // option, as mysys reads them).
            let l = strip_comment(l).trim();
            if l.is_empty() || l.starts_with(['#', ';', '[']) {
                continue;
            }
            let (k, v) = match l.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (l, None),
            };
            // The option's name is its first word: anything after it on
            // the line makes the server refuse the line, or is its value.
            let k = k.split_whitespace().next().unwrap_or(k);
            let key = k.replace('_', "-").to_ascii_lowercase();
            if skips_grants(&key, v) {
                bail!(
                    "its config file has \"{l}\" (line {}), which turns grant tables off and would let anyone in \
                     without a password; remove it",
                    n + 1
                );
            }
        }
        Ok(())
    }

    fn start_command(
        &self,
        spec: &ServerSpec,
        bin: &Path,
        rt: &Runtime,
    ) -> anyhow::Result<Command> {
        if let Some(text) = &rt
            .config
            .as_ref()
            .and_then(|c| std::fs::read_to_string(c).ok())
        {
            self.check_config(text)
                .with_context(|| format!("target \"{}\"", spec.target))?;
        }
        let mut c = Command::new(bin);
        // --defaults-file must come first; without a config, --no-defaults
        // keeps /etc/mysql out of the measurement.
        match &rt.config {
            Some(cfg) => c.arg(format!("--defaults-file={}", cfg.display())),
            None => c.arg("--no-defaults"),
        };
        c.arg(format!("--basedir={}", spec.basedir.display()))
            .arg(format!("--datadir={}", rt.datadir.display()))
            .arg(format!("--port={}", rt.port))
            .arg(format!("--log-error={}", rt.log.display()))
            .arg("--skip-name-resolve");
        // MySQL 8.0 on loads the X Plugin, which listens on every address
        // (port 33060) and a socket in /var/run: not a door to leave open.
        if Build::of(bin).is_some_and(|b| !b.mariadb && b.version >= (8, 0)) {
            c.arg("--mysqlx=OFF");
        }
        for p in &spec.plugins {
            c.arg(format!("--plugin-load-add={p}"));
        }
        c.args(&spec.args);
        // Last, so that neither the config file nor `args` can move them:
        // loopback only, the socket and pid file in the private directory,
        // no file reads or writes outside it.
        c.arg("--bind-address=127.0.0.1")
            .arg(format!("--socket={}", rt.socket.display()))
            .arg(format!(
                "--pid-file={}",
                rt.run_dir.join("server.pid").display()
            ))
            .arg(format!("--secure-file-priv={}", rt.run_dir.display()))
            .arg(format!("--tmpdir={}", rt.run_dir.display()));
        if let Some(u) = &spec.user {
            c.arg(format!("--user={u}"));
        }
        Ok(c)
    }

    fn ready(&self, rt: &Runtime) -> anyhow::Result<()> {
        let mut conn = WireConn::connect(&Self::admin(rt))?;
        set_up(&mut conn, rt).map_err(|e| SetupRefused(format!("{e:#}")).into())
    }

    fn stop_signal(&self) -> i32 {
        // mysqld shuts down cleanly on SIGTERM.
        libc::SIGTERM
    }

    fn is_log(&self, rel: &Path) -> bool {
        is_log(rel)
    }
}

/// InnoDB's redo (`ib_logfile0`, MySQL 8.0.30's `#innodb_redo/`), the
/// binary and relay logs with their index (`binlog.000001`,
/// `mysql-bin.index`), Aria's log, MyRocks' WAL (`.rocksdb/000012.log`).
fn is_log(rel: &Path) -> bool {
    let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let numbered = |ext: &str| ext.len() >= 6 && ext.bytes().all(|b| b.is_ascii_digit());
    let binlog_like = match name.rsplit_once('.') {
        Some((stem, ext)) => {
            (numbered(ext) || ext == "index")
                && (stem == "binlog" || stem.ends_with("-bin") || stem.ends_with("-relay-bin"))
        }
        None => false,
    };
    rel.starts_with("#innodb_redo")
        || name.starts_with("ib_logfile")
        || name.starts_with("aria_log")
        || binlog_like
        || (rel.starts_with(".rocksdb") && name.ends_with(".log"))
}

/// The accounts and database on a server that answers.
fn set_up(conn: &mut WireConn, rt: &Runtime) -> anyhow::Result<()> {
    let version = conn
        .query_text("SELECT VERSION()")?
        .first()
        .and_then(|r| r[0].clone())
        .unwrap_or_default();
    // MariaDB, and MySQL before 5.7, take the password as its hash (so it
    // never reaches the server's logs) and change it with SET PASSWORD;
    // MySQL 5.7 on has ALTER USER, keeps the password out of its logs
    // itself, and 8.0 on hashes with caching_sha2_password, which has no
    // hash a client can compute.
    let by_hash = Build::of_version(&version).map_or(true, |b| b.mariadb || b.version < (5, 7));
    // No other way in: anonymous accounts, root anywhere but the socket,
    // the benchmark user from anywhere but loopback (an older relbench
    // made relbench@'%').
    let others = conn.query_text(&format!(
        "SELECT user, host FROM mysql.user WHERE user = '' OR (user = '{ADMIN}' AND host <> 'localhost') \
         OR (user = '{USER}' AND host NOT IN ('127.0.0.1', '::1', 'localhost'))"
    ))?;
    for row in others {
        let (u, h) = (
            row[0].clone().unwrap_or_default(),
            row[1].clone().unwrap_or_default(),
        );
        conn.execute_text(&format!("DROP USER '{u}'@'{h}'"))
            .with_context(|| format!("removing the account '{u}'@'{h}'"))?;
    }
    // Versions whose install script cannot leave it out make a `test`
    // database any account may use.
    conn.execute_text("DROP DATABASE IF EXISTS test")
        .context("dropping the test database")?;
    conn.execute_text("DELETE FROM mysql.db WHERE Db LIKE 'test%'")
        .context("removing the grants on test databases")?;
    conn.execute_text("FLUSH PRIVILEGES")?;
    conn.execute_text(&format!("CREATE DATABASE IF NOT EXISTS {DATABASE}"))
        .context("creating the sbtest database")?;
    for host in USER_HOSTS {
        // Whether the account exists, rather than CREATE USER IF NOT EXISTS,
        // which MySQL 5.6 does not have.
        let exists = !conn
            .query_text(&format!(
                "SELECT 1 FROM mysql.user WHERE user = '{USER}' AND host = '{host}'"
            ))?
            .is_empty();
        let account = format!("'{USER}'@'{host}'");
        let sql = match (by_hash, exists) {
            (true, false) => format!(
                "CREATE USER {account} IDENTIFIED BY PASSWORD '{}'",
                native_hash(&rt.password)
            ),
            (true, true) => format!(
                "SET PASSWORD FOR {account} = '{}'",
                native_hash(&rt.password)
            ),
            (false, false) => format!(
                "CREATE USER {account} IDENTIFIED BY '{}'",
                rt.password.expose()
            ),
            (false, true) => format!(
                "ALTER USER {account} IDENTIFIED BY '{}'",
                rt.password.expose()
            ),
        };
        conn.execute_text(&sql)
            .context("creating the relbench user")?;
        conn.execute_text(&format!("GRANT ALL ON {DATABASE}.* TO {account}"))
            .context("granting the relbench user its database")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redo_binary_logs_and_rocksdb_wal_are_logs() {
        for l in [
            "ib_logfile0",
            "#innodb_redo/#ib_redo9",
            "binlog.000001",
            "binlog.index",
            "mysql-bin.000012",
            "host-relay-bin.000003",
            "aria_log.00000001",
            ".rocksdb/000012.log",
        ] {
            assert!(is_log(Path::new(l)), "{l}");
        }
        for d in [
            "ibdata1",
            "sbtest/sbtest1.ibd",
            ".rocksdb/000010.sst",
            "undo001",
            "mysql/db.opt",
        ] {
            assert!(!is_log(Path::new(d)), "{d}");
        }
    }

    #[test]
    fn args_that_open_the_server_are_refused() {
        let check = |a: &str| MariaDb.check_args(&[a.to_string()]);
        assert!(check("--bind-address=0.0.0.0").is_err());
        assert!(check("--bind_address=::").is_err());
        assert!(check("--skip-grant-tables").is_err());
        assert!(check("--socket=/tmp/open.sock").is_err());
        assert!(check("--bind-address=127.0.0.1").is_ok());
        assert!(check("--innodb-buffer-pool-size=1G").is_ok());
        let e = check("--bind-address=0.0.0.0").unwrap_err().to_string();
        assert!(
            e.contains("127.0.0.1 only") && e.contains("remove it"),
            "{e}"
        );
    }

    #[test]
    fn versions_are_read_from_the_servers_own_words() {
        let b = |text: &str| Build::parse(text).map(|b| (b.mariadb, b.version));
        assert_eq!(
            b("mysqld  Ver 10.2.11-MariaDB for Linux on x86_64 (MariaDB Server)"),
            Some((true, (10, 2)))
        );
        assert_eq!(
            b("/usr/sbin/mariadbd  Ver 11.4.5-MariaDB-log for Linux"),
            Some((true, (11, 4)))
        );
        assert_eq!(
            b("/x/root/usr/sbin/mysqld  Ver 9.7.4-2 for Linux on x86_64 ((Debian))"),
            Some((false, (9, 7)))
        );
        assert_eq!(b("nonsense"), None);
        let mysql = |v| Build {
            mariadb: false,
            version: v,
        };
        assert!(mysql((5, 7)).initialises_itself());
        assert!(!mysql((5, 6)).initialises_itself());
        assert!(!Build {
            mariadb: true,
            version: (11, 4)
        }
        .initialises_itself());
    }

    #[test]
    fn the_password_hash_is_mysql_native_passwords() {
        // '*' and SHA1(SHA1(password)) in upper-case hex, as SELECT
        // PASSWORD('relbench') gives.
        let s = Secret::from("relbench");
        assert_eq!(native_hash(&s), "*106484F2C8BEB2C76002940D2B4159BD218AA20A");
    }

    /// Regression: `skip-grant-tables # x`, `skip-grant-tables#x`,
    /// `!include FILE` and `!includedir DIR` passed the check, and a local
    /// user polling the port got in during start-up.
    #[test]
    fn every_spelling_of_skip_grant_tables_and_every_include_is_refused() {
        let check = |t: &str| MariaDb.check_config(&format!("[mysqld]\n{t}\n"));
        for bad in [
            "skip-grant-tables # x",
            "skip-grant-tables#x",
            "skip_grant_tables\t; not a comment here",
            "loose-skip-grant-tables = 1 # on",
            "!include /etc/mysql/other.cnf",
            "!includedir /etc/mysql/conf.d",
        ] {
            assert!(check(bad).is_err(), "{bad:?} passed");
        }
        for ok in [
            "# skip-grant-tables",
            "; skip-grant-tables",
            "skip-grant-tables = 0 # off",
            "init_connect = 'SET @a = \"#\"' # a quoted hash",
        ] {
            assert!(check(ok).is_ok(), "{ok:?} refused: {:?}", check(ok));
        }
    }
}
