//! Opening a target from a plan's spec: where an embedded file goes, how
//! a managed server is configured (the MyRocks plugin, the OS user
//! PostgreSQL needs), and how a URL's address and password are read. The
//! runner calls [`open`] and never names an engine.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};

use super::mysql::{wire, MysqlDriver};
use super::postgres::{wire as pgwire, PgDriver};
use super::server::ServerSpec;
use super::spec::{Access, Managed, TargetSpec};
use super::sqlite::SqliteDriver;
use super::url::ServerUrl;
use super::{EngineKind, Target};

/// Where relative paths in a plan are resolved, and where a run keeps its
/// results (and the data of targets that name no place of their own).
pub struct Dirs {
    pub plan_dir: PathBuf,
    pub out: PathBuf,
    /// Where the data relbench makes for a target goes when the plan names
    /// no place (managed datadirs, SQLite files): `--data-dir`, a node's
    /// local disk when results go to a shared volume; `<out>/data` when
    /// `None`.
    pub data: Option<PathBuf>,
    /// URL targets' passwords, taken from the environment before the run.
    pub secrets: super::secrets::Secrets,
}

/// Opens a target from its spec: an embedded file, a managed server
/// (initialised and started here; `say` is told where), or a URL.
pub fn open(
    target: &TargetSpec,
    dirs: &Dirs,
    say: &mut dyn FnMut(&str),
) -> anyhow::Result<Box<dyn Target>> {
    let name = &target.name;
    match (&target.access, target.engine) {
        (Access::Embedded { path, pragmas }, EngineKind::Sqlite) => {
            let kept = path.is_some();
            let path = match path {
                Some(p) if p.is_absolute() => p.clone(),
                Some(p) => dirs.plan_dir.join(p),
                None => dirs.data_root().join(format!("{name}.db")),
            };
            match path.parent() {
                // A place relbench chose is relbench's to make.
                Some(dir) if !kept => std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {} for target \"{name}\"", dir.display()))?,
                // The user's path is theirs: no directory is made for it
                // (regression: a path in a missing directory made it, as
                // root).
                Some(dir) if !dir.as_os_str().is_empty() && !dir.is_dir() => bail!(
                    "target \"{name}\": the directory of its path {} does not exist; create it, or leave \
                     `path` out to keep the file with the results",
                    path.display()
                ),
                _ => {}
            }
            let d = SqliteDriver::new(path, pragmas.clone())
                .with_table_options(target.table_options.clone());
            Ok(Box::new(if kept { d.keeping() } else { d }))
        }
        (Access::Managed(m), EngineKind::Mysql | EngineKind::Mariadb) => {
            let spec = server_spec(target, m, dirs);
            say(&format!(
                "[{name}] starting the server from {} (datadir {})",
                m.basedir.display(),
                spec.datadir.display()
            ));
            let d = MysqlDriver::managed(
                target.engine,
                spec,
                m.socket,
                target.tls,
                target.storage_engine.clone(),
                m.datadir.is_none(),
            )?
            .with_table_options(target.table_options.clone());
            Ok(Box::new(d))
        }
        (
            Access::Url {
                url, password_env, ..
            },
            EngineKind::Mysql | EngineKind::Mariadb,
        ) => {
            let u = ServerUrl::parse(url, target.engine)
                .map_err(|e| anyhow::anyhow!("target \"{name}\": {e}"))?;
            let password = password_of(name, password_env, dirs)?;
            let address = match &u.socket {
                Some(s) => wire::Address::Socket(s.clone()),
                None => wire::Address::Tcp {
                    host: u.host.clone(),
                    port: u.port.unwrap_or(3306),
                },
            };
            let opts = wire::Opts {
                address,
                user: u.user.clone(),
                password,
                database: Some(u.database.clone().unwrap_or_else(|| "sbtest".into())),
                tls: target.tls,
                found_rows: true,
            };
            Ok(Box::new(
                MysqlDriver::remote(target.engine, opts, target.storage_engine.clone())
                    .with_table_options(target.table_options.clone()),
            ))
        }
        (Access::Managed(m), EngineKind::Postgres) => {
            let spec = server_spec(target, m, dirs);
            say(&format!(
                "[{name}] starting the server from {} (datadir {}, as user {})",
                m.basedir.display(),
                spec.datadir.display(),
                spec.user.as_deref().unwrap_or("?")
            ));
            Ok(Box::new(
                PgDriver::managed(spec, m.socket, target.tls, m.datadir.is_none())?
                    .with_table_options(target.table_options.clone()),
            ))
        }
        (
            Access::Url {
                url,
                password_env,
                auth,
            },
            EngineKind::Postgres,
        ) => {
            let u = ServerUrl::parse(url, target.engine)
                .map_err(|e| anyhow::anyhow!("target \"{name}\": {e}"))?;
            let port = u.port.unwrap_or(5432);
            let address = match &u.socket {
                Some(dir) => pgwire::Address::Socket {
                    dir: dir.clone(),
                    port,
                },
                None => pgwire::Address::Tcp {
                    host: u.host.clone(),
                    port,
                },
            };
            Ok(Box::new(
                PgDriver::remote(pgwire::Opts {
                    address,
                    user: u.user.clone(),
                    password: password_of(name, password_env, dirs)?,
                    auth: *auth,
                    database: u.database.clone().unwrap_or_else(|| "sbtest".into()),
                    tls: target.tls,
                })
                .with_table_options(target.table_options.clone()),
            ))
        }
        (_, engine) => bail!("target \"{name}\": engine {engine} has no driver in this build"),
    }
}

/// The password of a URL target, taken from the environment variable it
/// names before the run ([`super::secrets::Secrets::take`]).
fn password_of(
    name: &str,
    password_env: &Option<String>,
    dirs: &Dirs,
) -> anyhow::Result<Option<String>> {
    password_env
        .as_ref()
        .map(|v| {
            dirs.secrets.get(v).map(str::to_string).ok_or_else(|| {
                anyhow::anyhow!(
                    "target \"{name}\": the environment variable {v} (password_env) was not read before the run; \
                     export {v}=... and run again"
                )
            })
        })
        .transpose()
}

/// The managed server a target describes, with relbench's defaults filled in.
pub fn server_spec(target: &TargetSpec, m: &Managed, dirs: &Dirs) -> ServerSpec {
    let mut plugins = Vec::new();
    // MyRocks must be loaded when the server starts (loading it later with
    // INSTALL SONAME crashes MariaDB 10.11), unless the config does it.
    let rocksdb = target
        .storage_engine
        .as_deref()
        .is_some_and(|e| e.eq_ignore_ascii_case("rocksdb"));
    let config_loads = m
        .config
        .as_ref()
        .and_then(|c| std::fs::read_to_string(c).ok())
        .is_some_and(|t| t.contains("ha_rocksdb"));
    if rocksdb && !config_loads && !m.args.iter().any(|a| a.contains("ha_rocksdb")) {
        plugins.push("ha_rocksdb".to_string());
    }
    // A server relbench starts as root runs as the engine's own OS user:
    // PostgreSQL refuses root, and a MariaDB running as root would hand
    // root's files to anyone who got in.
    let user = m
        .user
        .clone()
        .or_else(|| super::server::default_user(target.engine).map(str::to_string));
    let (datadir, datadir_note) = match &m.datadir {
        Some(d) => (d.clone(), None),
        None => super::server::chosen_datadir(
            &absolute(&dirs.out),
            &dirs.data_root(),
            &target.name,
            user.as_deref(),
        ),
    };
    ServerSpec {
        target: target.name.clone(),
        basedir: m.basedir.clone(),
        config: m.config.clone(),
        datadir,
        datadir_note,
        log_dir: absolute(&dirs.out).join("data"),
        port: m.port,
        user,
        args: m.args.clone(),
        malloc: m.malloc.clone(),
        plugins,
        start_timeout: Duration::from_secs_f64(m.start_timeout_secs),
    }
}

impl Dirs {
    /// The directory a target's data goes under when its plan names no
    /// place.
    pub fn data_root(&self) -> PathBuf {
        match &self.data {
            Some(d) => absolute(d),
            None => absolute(&self.out).join("data"),
        }
    }
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| p.to_path_buf(), |d| d.join(p))
    }
}
