//! The sysbench loader: creates the tables, fills them in parallel with
//! multi-row inserts inside transactions, then creates the secondary index on
//! `k` (after the rows, as a bulk load would, and timed apart).

use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context};
use rand::Rng as _;

use super::{fill_digits, sql};
use crate::db::{Conn, Driver, LoadMode, Param};
use crate::workload::dist;
use crate::Interrupted;

/// Rows per INSERT statement: large enough to amortise the round trip and
/// the parse, small enough for every engine's packet and parameter limits
/// (PostgreSQL takes at most 65535 parameters; this uses 4 per row).
pub const ROWS_PER_STATEMENT: usize = 500;

/// How a table was filled.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum LoadMethod {
    /// The engine's bulk path (LOAD DATA LOCAL INFILE, COPY FROM STDIN).
    Bulk,
    /// Multi-row INSERT statements.
    Insert,
}

impl LoadMethod {
    /// The methods of a load, in words: what its target's settings record.
    pub fn names(methods: &[LoadMethod]) -> String {
        methods
            .iter()
            .map(|m| m.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn name(self) -> &'static str {
        match self {
            LoadMethod::Bulk => "bulk (LOAD DATA LOCAL INFILE / COPY FROM STDIN)",
            LoadMethod::Insert => "multi-row INSERT",
        }
    }
}

#[derive(Debug, Clone)]
pub struct LoadOutcome {
    pub rows: u64,
    pub threads: usize,
    pub insert_secs: f64,
    pub index_secs: f64,
    /// The methods the tables were filled with.
    pub methods: Vec<LoadMethod>,
}

impl LoadOutcome {
    /// What the load did, for the step's notes.
    pub fn notes(&self, mode: &LoadMode) -> BTreeMap<String, String> {
        let mut n = BTreeMap::new();
        n.insert("loader_threads".into(), self.threads.to_string());
        n.insert("insert_secs".into(), format!("{:.3}", self.insert_secs));
        n.insert("index_secs".into(), format!("{:.3}", self.index_secs));
        n.insert("rows_per_statement".into(), ROWS_PER_STATEMENT.to_string());
        n.insert("load_method".into(), LoadMethod::names(&self.methods));
        n.insert(
            "rows_per_commit".into(),
            mode.rows_per_commit
                .map_or_else(|| "a whole table".into(), |n| n.to_string()),
        );
        if !mode.before.is_empty() {
            n.insert("load_session".into(), mode.before.join("; "));
        }
        n
    }
}

pub fn load(
    driver: &dyn Driver,
    tables: u32,
    rows: i64,
    seed: u64,
    random_pct: u8,
    stop: &AtomicBool,
) -> anyhow::Result<LoadOutcome> {
    let threads = if driver.concurrent_writers() {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        (tables as usize).min(cores.max(2))
    } else {
        1
    };
    let t0 = Instant::now();
    let methods = Mutex::new(Vec::new());
    in_parallel(driver, tables, threads, |conn, n| {
        let m = fill_table(conn, driver, n, rows, seed, random_pct, stop)?;
        methods.lock().unwrap_or_else(|p| p.into_inner()).push(m);
        Ok(())
    })?;
    let mut methods = methods.into_inner().unwrap_or_else(|p| p.into_inner());
    methods.sort();
    methods.dedup();
    let insert_secs = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let d = driver.dialect();
    in_parallel(driver, tables, threads, |conn, n| {
        if stop.load(Ordering::Relaxed) {
            bail!(Interrupted);
        }
        conn.batch(&sql::create_index(n))
            .with_context(|| format!("creating the index on {}", sql::table(n)))?;
        if let Some(s) = sql::after_load(d, n) {
            conn.batch(&s).with_context(|| s.clone())?;
        }
        Ok(())
    })?;
    Ok(LoadOutcome {
        rows: rows as u64 * tables as u64,
        threads,
        insert_secs,
        index_secs: t1.elapsed().as_secs_f64(),
        methods,
    })
}

/// Runs `work` for every table, on `threads` threads each with its own
/// connection, taking tables from a shared counter.
fn in_parallel(
    driver: &dyn Driver,
    tables: u32,
    threads: usize,
    work: impl Fn(&mut dyn Conn, u32) -> anyhow::Result<()> + Sync,
) -> anyhow::Result<()> {
    let next = AtomicU32::new(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> anyhow::Result<()> {
                    let mut conn = driver.connect().context("connecting to load")?;
                    loop {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        if n > tables {
                            return Ok(());
                        }
                        work(conn.as_mut(), n)?;
                    }
                })
            })
            .collect();
        let mut first_err = None;
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| bail!("a loader thread panicked"));
            if let Err(e) = r {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    })
}

fn fill_table(
    conn: &mut dyn Conn,
    driver: &dyn Driver,
    n: u32,
    rows: i64,
    seed: u64,
    random_pct: u8,
    stop: &AtomicBool,
) -> anyhow::Result<LoadMethod> {
    let d = driver.dialect();
    let table = sql::table(n);
    conn.batch(&sql::drop_table(n))
        .with_context(|| format!("dropping {table}"))?;
    conn.batch(&format!(
        "{}{}",
        sql::create_table(d, n),
        driver.table_options()
    ))
    .with_context(|| format!("creating {table}"))?;
    let mode = driver.load_mode();
    for s in &mode.before {
        conn.batch(s).with_context(|| s.clone())?;
    }
    let per_commit = mode
        .rows_per_commit
        .map_or(i64::MAX, |n| i64::try_from(n.max(1)).unwrap_or(i64::MAX));
    let mut rng = dist::rng(seed, 1_000_000 + n as u64);
    // The engine's bulk path first: one transaction, rows streamed.
    if per_commit == i64::MAX {
        conn.begin(true)
            .with_context(|| format!("loading {table}"))?;
        let (mut c, mut pad) = (String::with_capacity(120), String::with_capacity(60));
        let mut next_id: i64 = 1;
        let mut fill = |buf: &mut Vec<u8>| -> bool {
            if stop.load(Ordering::Relaxed) || next_id > rows {
                return false;
            }
            fill_digits(&mut rng, &mut c, 10, random_pct);
            fill_digits(&mut rng, &mut pad, 5, random_pct);
            let k = rng.random_range(1..=rows);
            let _ = writeln!(buf, "{next_id}\t{k}\t{c}\t{pad}");
            next_id += 1;
            next_id <= rows
        };
        let loaded = conn
            .bulk_load(&table, &["id", "k", "c", "pad"], &mut fill)
            .with_context(|| format!("bulk-loading {table}"))?;
        if stop.load(Ordering::Relaxed) {
            bail!(Interrupted);
        }
        if let Some(n_rows) = loaded {
            if n_rows != rows as u64 {
                bail!("bulk-loading {table}: the engine took {n_rows} rows of {rows}");
            }
            conn.commit()
                .with_context(|| format!("committing {table}"))?;
            for s in &mode.after {
                conn.batch(s).with_context(|| s.clone())?;
            }
            return Ok(LoadMethod::Bulk);
        }
        conn.rollback()?;
        rng = dist::rng(seed, 1_000_000 + n as u64);
    }
    let full = conn.prepare(&sql::insert_rows(d, n, ROWS_PER_STATEMENT))?;
    let mut cs = vec![String::with_capacity(120); ROWS_PER_STATEMENT];
    let mut pads = vec![String::with_capacity(60); ROWS_PER_STATEMENT];
    let mut next_id: i64 = 1;
    while next_id <= rows {
        if stop.load(Ordering::Relaxed) {
            bail!(Interrupted);
        }
        conn.begin(true)
            .with_context(|| format!("loading {table}"))?;
        let commit_at = next_id.saturating_add(per_commit);
        while next_id <= rows && next_id < commit_at {
            // A whole table can be one transaction (SQLite's, InnoDB's):
            // Ctrl-C is looked for every statement, not every commit.
            if stop.load(Ordering::Relaxed) {
                let _ = conn.rollback();
                bail!(Interrupted);
            }
            let batch = ((rows - next_id + 1) as usize).min(ROWS_PER_STATEMENT);
            let stmt = if batch == ROWS_PER_STATEMENT {
                full
            } else {
                conn.prepare(&sql::insert_rows(d, n, batch))?
            };
            for i in 0..batch {
                fill_digits(&mut rng, &mut cs[i], 10, random_pct);
                fill_digits(&mut rng, &mut pads[i], 5, random_pct);
            }
            let mut params = Vec::with_capacity(batch * 4);
            for i in 0..batch {
                params.push(Param::Int(next_id + i as i64));
                params.push(Param::Int(rng.random_range(1..=rows)));
                params.push(Param::Str(&cs[i]));
                params.push(Param::Str(&pads[i]));
            }
            conn.exec(stmt, &params)
                .with_context(|| format!("inserting into {table}"))?;
            next_id += batch as i64;
        }
        conn.commit()
            .with_context(|| format!("committing rows into {table}"))?;
    }
    for s in &mode.after {
        conn.batch(s).with_context(|| s.clone())?;
    }
    Ok(LoadMethod::Insert)
}
