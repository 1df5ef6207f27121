//! PostgreSQL targets, managed by relbench or reached by URL.

mod waits;
pub mod wire;

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::Context;

use super::protocol::{Outcome, ProtocolConn, Wire};
use super::server::{postgres as flavor, Handle, ManagedServer, ServerSpec};
use super::spec::Auth;
use super::tls::Tls;
use super::{
    numeric, Conn, Counters, DbResult, Driver, EngineKind, LoadMode, Param, ServerCode, Site,
    TargetFacts,
};
use wire::{Address, Opts, WireConn};

/// Settings recorded with the results.
const RECORDED: &[&str] = &[
    "shared_buffers",
    "effective_cache_size",
    "work_mem",
    "maintenance_work_mem",
    "wal_level",
    "wal_compression",
    "synchronous_commit",
    "fsync",
    "full_page_writes",
    "checkpoint_timeout",
    "max_wal_size",
    "huge_pages",
    "jit",
    "autovacuum",
    "random_page_cost",
    "max_connections",
];

pub struct PgDriver {
    opts: Opts,
    /// The superuser over a managed server's private socket, for settle's
    /// CHECKPOINT, the settings and the counters; a URL target's own user
    /// otherwise.
    admin: Opts,
    /// The target's `table_options` (`WITH (fillfactor = 80)`).
    extra_options: Option<String>,
    server: Handle,
}

impl PgDriver {
    pub fn managed(
        spec: ServerSpec,
        socket: bool,
        tls: Tls,
        remove_datadir: bool,
    ) -> anyhow::Result<Self> {
        let srv = ManagedServer::start(spec, Box::new(flavor::Postgres))?;
        let address = if socket {
            Address::Socket {
                dir: srv.rt.socket.clone(),
                port: srv.rt.port,
            }
        } else {
            Address::Tcp {
                host: "127.0.0.1".into(),
                port: srv.rt.port,
            }
        };
        Ok(PgDriver {
            opts: Opts {
                address,
                user: flavor::USER.into(),
                password: Some(srv.rt.password.expose().to_string()),
                database: flavor::DATABASE.into(),
                tls,
                // relbench's own hba asks for SCRAM.
                auth: Auth::ScramSha256,
            },
            admin: flavor::Postgres::admin(&srv.rt, flavor::DATABASE),
            extra_options: None,
            server: Handle::managed(srv, remove_datadir),
        })
    }

    /// Appends `options` to every CREATE TABLE.
    pub fn with_table_options(mut self, options: Option<String>) -> Self {
        self.extra_options = options;
        self
    }

    pub fn remote(opts: Opts) -> Self {
        PgDriver {
            admin: opts.clone(),
            opts,
            extra_options: None,
            server: Handle::none(),
        }
    }

    fn wire(&self) -> anyhow::Result<WireConn> {
        WireConn::connect(&self.opts).map_err(anyhow::Error::from)
    }

    fn admin(&self) -> anyhow::Result<WireConn> {
        WireConn::connect(&self.admin).map_err(anyhow::Error::from)
    }
}

impl Driver for PgDriver {
    fn table_options(&self) -> String {
        super::spec::table_suffix(None, self.extra_options.as_deref())
    }

    fn engine(&self) -> EngineKind {
        EngineKind::Postgres
    }

    fn connect(&self) -> DbResult<Box<dyn Conn>> {
        Ok(Box::new(ProtocolConn::new(WireConn::connect(&self.opts)?)))
    }

    fn facts(&self) -> anyhow::Result<TargetFacts> {
        let mut w = self.admin()?;
        let version = w
            .query_text("SELECT version()")?
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .unwrap_or_else(|| w.server_version.clone());
        // current_setting() gives the value as SHOW prints it, unit and all
        // ("512MB"); gluing `setting` to `unit` read 65536 and 8kB as
        // "655368kB".
        let (config, settings) = super::split_settings(
            w.query_text("SELECT name, current_setting(name) FROM pg_settings")?,
            RECORDED,
        );
        let (datadir, config_file) = self.server.recorded();
        Ok(TargetFacts {
            version,
            config,
            datadir,
            config_file,
            transport: Some(match &self.opts.address {
                Address::Tcp { host, port } => self.opts.tls.tcp_transport(host, *port),
                Address::Socket { dir, port } => {
                    format!("unix socket {}/.s.PGSQL.{port}", dir.display())
                }
            }),
            settings,
        })
    }

    fn concurrent_writers(&self) -> bool {
        true
    }

    fn load_mode(&self) -> LoadMode {
        // COPY FROM STDIN, a table in one transaction.
        LoadMode {
            rows_per_commit: None,
            ..LoadMode::default()
        }
    }

    fn settle(
        &self,
        tables: &[String],
        _wait: std::time::Duration,
    ) -> anyhow::Result<BTreeMap<String, String>> {
        let mut w = self.admin()?;
        let t0 = std::time::Instant::now();
        for t in tables {
            w.execute_text(&format!("VACUUM ANALYZE {t}"))
                .with_context(|| format!("VACUUM ANALYZE {t}"))?;
        }
        let vacuum = t0.elapsed().as_secs_f64();
        w.execute_text("CHECKPOINT").context("CHECKPOINT")?;
        let mut notes = BTreeMap::new();
        notes.insert("vacuum_analyze_secs".into(), format!("{vacuum:.3}"));
        notes.insert(
            "flush_secs".into(),
            format!("{:.3}", t0.elapsed().as_secs_f64()),
        );
        notes.insert("analyzed_tables".into(), tables.len().to_string());
        Ok(notes)
    }

    fn admin_sql(
        &self,
        sql: &str,
        timeout: Option<Duration>,
    ) -> anyhow::Result<Vec<Vec<Option<String>>>> {
        let mut w = match WireConn::connect(&self.admin) {
            Ok(w) => w,
            // After a drop-database step: in the `postgres` database.
            Err(e) if e.code == Some(ServerCode::PG_NO_DATABASE) => WireConn::connect(&Opts {
                database: "postgres".into(),
                ..self.admin.clone()
            })?,
            Err(e) => return Err(e.into()),
        };
        w.set_read_timeout(timeout);
        Ok(w.query_text(sql)?)
    }

    fn server_count(
        &self,
        before: &Counters,
        after: &Counters,
        transactional: bool,
    ) -> Option<super::ServerCount> {
        // Each statement outside a transaction is a transaction of its own.
        const XACT: [&str; 2] = [
            "pg_stat_database.xact_commit",
            "pg_stat_database.xact_rollback",
        ];
        after
            .values
            .contains_key(XACT[0])
            .then(|| super::ServerCount {
                count: super::counter_delta(before, after, &XACT),
                counters: "pg_stat_database.xact_commit + xact_rollback",
                of: if transactional {
                    super::Counted::Events
                } else {
                    super::Counted::Statements
                },
                // A backend publishes its counts at most once a second
                // (PGSTAT_MIN_INTERVAL; before version 15 the collector's
                // 500 ms): a reading lacks up to a second of each one's work.
                lag_secs: 1.0,
            })
    }

    fn counters(&self, internals: bool) -> Option<anyhow::Result<Counters>> {
        Some((|| {
            let mut w = self.admin()?;
            let version: u32 = w
                .query_text("SHOW server_version_num")?
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            // Every column of each view as (view.column, value) rows, so a
            // version's new columns come along without a list to keep.
            // pg_stat_io has a row per backend type, object and context.
            let mut views = vec![
                (
                    "pg_stat_database",
                    "",
                    "WHERE v.datname = current_database()",
                ),
                ("pg_stat_bgwriter", "", ""),
            ];
            if version >= 170000 {
                views.push(("pg_stat_checkpointer", "", ""));
            }
            if version >= 160000 {
                views.push((
                    "pg_stat_io",
                    "v.backend_type || '.' || v.object || '.' || v.context || '.' || ",
                    "",
                ));
            }
            let mut values = BTreeMap::new();
            for (view, row_key, filter) in &views {
                let rows = w.query_text(&format!(
                    "SELECT '{view}.' || {row_key}j.key, j.value \
                     FROM {view} v, json_each_text(row_to_json(v)) j {filter}"
                ))?;
                values.extend(numeric(rows));
            }
            let names: Vec<&str> = views.iter().map(|v| v.0).collect();
            let statements = internals.then(|| {
                let managed = self.server.lock().is_some();
                waits::statements(&mut w, &self.opts.user, version, managed)
            });
            Ok(Counters {
                source: names.join(", "),
                values,
                // PostgreSQL keeps no totals of its waits: they are sampled.
                waits: None,
                statements,
                trailing_statements: 0.0,
            })
        })())
    }

    fn sample_waits(&self, every: Duration) -> Option<anyhow::Result<super::WaitSampling>> {
        // From the `postgres` database where it may: the sampler's own
        // queries are then not the benchmark database's transactions.
        let opts = Opts {
            database: "postgres".into(),
            ..self.admin.clone()
        };
        let conn = WireConn::connect(&opts).or_else(|_| WireConn::connect(&self.admin));
        Some(
            conn.map_err(anyhow::Error::from)
                .map(|w| waits::sampling(w, &self.opts.database, every)),
        )
    }
}

impl Site for PgDriver {
    fn drop_database(&self) -> anyhow::Result<()> {
        if self.server.lock().is_none() {
            anyhow::bail!("only the database of a server relbench started may be dropped");
        }
        // Nobody may drop the database they are connected to.
        let opts = Opts {
            database: "postgres".into(),
            ..self.admin.clone()
        };
        WireConn::connect(&opts)?.execute_text(&format!("DROP DATABASE {}", flavor::DATABASE))?;
        Ok(())
    }

    fn reset(&self) -> anyhow::Result<()> {
        Ok(())
    }

    fn server(&self) -> Option<&Handle> {
        Some(&self.server)
    }

    fn has_data(&self, table: &str) -> bool {
        // Table names come from relbench's own catalogue (sbtestN, piN),
        // never from a plan's text.
        debug_assert!(table.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        self.wire()
            .and_then(|mut w| {
                let r = w.query_text(&format!("SELECT to_regclass('{table}') IS NOT NULL"))?;
                Ok(r.first().and_then(|r| r[0].clone()).as_deref() == Some("t"))
            })
            .unwrap_or(false)
    }

    fn runs_here(&self) -> bool {
        match &self.opts.address {
            Address::Tcp { host, .. } => super::is_loopback(host),
            Address::Socket { .. } => true,
        }
    }
}

impl Wire for WireConn {
    fn prepare(&mut self, sql: &str) -> DbResult<usize> {
        WireConn::prepare(self, sql)
    }

    fn execute(&mut self, stmt: usize, params: &[Param<'_>]) -> DbResult<Outcome> {
        WireConn::execute(self, stmt, params)
    }

    fn watch_column(&mut self, col: Option<usize>) {
        WireConn::watch_column(self, col)
    }

    fn last_value(&mut self) -> Option<i64> {
        WireConn::last_value(self)
    }

    fn keep_rows(&mut self, keep: bool) {
        WireConn::keep_rows(self, keep)
    }

    fn kept_rows(&mut self) -> Vec<Vec<Option<String>>> {
        WireConn::kept_rows(self)
    }

    fn execute_text(&mut self, sql: &str) -> DbResult<Outcome> {
        WireConn::execute_text(self, sql)
    }

    fn text_rows(&mut self, sql: &str) -> DbResult<Vec<Vec<Option<String>>>> {
        WireConn::query_text(self, sql)
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        fill: &mut dyn FnMut(&mut Vec<u8>) -> bool,
    ) -> DbResult<Option<u64>> {
        let sql = format!("COPY {table} ({}) FROM STDIN", columns.join(","));
        self.copy_in(&sql, fill).map(Some)
    }
}
