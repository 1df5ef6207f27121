//! Where the processes of one step's client shares (`run --client-share
//! I/M`) meet: a row per share and meeting point in a table of relbench's
//! own (`relbench_barrier`) in the database under test, which every share
//! reaches already. Each step has two points, both outside its measured
//! window: `begin` (every share has finished the step before, so the
//! leading share's load or maintenance is done) and `go` (every share's
//! connections are set up; the warm-up, and the window after it, start
//! together). A share that waits past the timeout leaves a row saying it
//! gave up, so one that arrives later fails its step too instead of
//! running alone.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::db::{Conn, Driver, Param, Stmt};
use crate::plan::schedule::{ClientShare, Rendezvous};
use crate::util::unix_now;

const TABLE: &str = "relbench_barrier";

/// Refuses a barrier table another database user made first: one they
/// own, with a trigger, rule or policy of theirs, or other columns
/// (regression: a pre-made `relbench_barrier` with a SECURITY INVOKER
/// trigger ran as the benchmark's user and granted another role DELETE on
/// the benchmark's tables).
fn check_own_table(conn: &mut dyn Conn, d: crate::db::Dialect) -> anyhow::Result<()> {
    let guard = conn.prepare(&d.table_guard(TABLE, &["barrier", "point", "share"]))?;
    let mut value =
        |col: usize| -> anyhow::Result<Option<i64>> { Ok(conn.query_last(guard, &[], col)?.1) };
    let (not_ours, code, columns) = (value(0)?, value(1)?, value(2)?);
    let why = match (not_ours, code, columns) {
        (None, ..) => Some("it is not a table".to_string()),
        (Some(n), ..) if n > 0 => Some("another database user owns it".into()),
        (_, Some(n), _) if n > 0 => Some(format!("it has {n} trigger(s), rule(s) or policy(ies)")),
        (_, _, Some(n)) if n > 0 => Some(format!("it has {n} column(s) relbench did not make")),
        _ => None,
    };
    match why {
        None => Ok(()),
        Some(why) => anyhow::bail!(
            "--client-share: the barrier table {TABLE} in the target database was not made by relbench: {why}. \
             Another user may have made it to run code in relbench's statements; look at it, drop it, and \
             run again"
        ),
    }
}

/// What a meeting found.
#[derive(Debug, Clone, Copy)]
pub(super) struct Met {
    /// How long this share waited for the others.
    pub waited: Duration,
    /// The server's clock minus this host's, in ms, read as the meeting
    /// ended (± half a round trip): what says whether shares' wall-clock
    /// windows can be lined up.
    pub clock_offset_ms: Option<f64>,
}

pub(super) struct Barrier {
    rv: Rendezvous,
    conn: Mutex<Open>,
}

struct Open {
    conn: Box<dyn Conn>,
    insert: Stmt,
    arrived: Stmt,
    gave_up: Stmt,
    clock: Stmt,
    /// This barrier's rows, all of them.
    forget: Stmt,
}

impl Barrier {
    /// Opens a connection for the barrier and creates its table if no
    /// share has yet.
    pub fn open(db: &dyn Driver, rv: &Rendezvous) -> anyhow::Result<Barrier> {
        let d = db.dialect();
        let mut conn = db.connect()?;
        let create = format!(
            "CREATE TABLE IF NOT EXISTS {TABLE} (barrier VARCHAR(64) NOT NULL, point VARCHAR(190) NOT NULL, \
             share INTEGER NOT NULL, PRIMARY KEY (barrier, point, share))"
        );
        // Two shares creating it at once can collide in PostgreSQL's
        // catalogue; the second attempt finds it there.
        if conn.batch(&create).is_err() {
            std::thread::sleep(Duration::from_millis(100));
            conn.batch(&create).map_err(|e| {
                anyhow::anyhow!(
                    "--client-share: cannot create the barrier table {TABLE} in the target database: {e}; the \
                     target's user needs CREATE there"
                )
            })?;
        }
        check_own_table(conn.as_mut(), d)?;
        let (p0, p1, p2) = (d.placeholder(0), d.placeholder(1), d.placeholder(2));
        let insert = d.insert_if_absent(
            &format!("{TABLE} (barrier, point, share)"),
            &format!("{p0}, {p1}, {p2}"),
        );
        let count = |cmp: &str| {
            format!("SELECT COUNT(*) FROM {TABLE} WHERE barrier = {p0} AND point = {p1} AND share {cmp} 0")
        };
        let clock = d.clock_us();
        let forget = format!("DELETE FROM {TABLE} WHERE barrier = {p0}");
        let open = Open {
            forget: conn.prepare(&forget)?,
            insert: conn.prepare(&insert)?,
            arrived: conn.prepare(&count(">"))?,
            gave_up: conn.prepare(&count("<"))?,
            clock: conn.prepare(clock)?,
            conn,
        };
        Ok(Barrier {
            rv: rv.clone(),
            conn: Mutex::new(open),
        })
    }

    /// Waits until every share has reached `point`. `fast` polls every
    /// 2 ms (the meeting before a measured window: the windows begin
    /// within a poll of each other); otherwise every 50 ms, so a share
    /// waiting through another's load barely adds to what it measures.
    pub fn meet(&self, point: &str, fast: bool) -> Result<Met, BarrierError> {
        let mut o = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let share = self.rv.share;
        let key = key_of(point);
        let point_key = key.as_str();
        let id = self.rv.id.as_str();
        let err = |e: crate::db::DbError| BarrierError::Db {
            share,
            point: point.to_string(),
            error: e,
        };
        let t0 = Instant::now();
        let insert = o.insert;
        o.conn
            .exec(
                insert,
                &[
                    Param::Str(id),
                    Param::Str(point_key),
                    Param::Int(share.index.into()),
                ],
            )
            .map_err(err)?;
        let tick = Duration::from_millis(if fast { 2 } else { 50 });
        loop {
            let (arrived, gave_up) = (o.arrived, o.gave_up);
            let params = [Param::Str(id), Param::Str(point_key)];
            let here = o
                .conn
                .query_last(arrived, &params, 0)
                .map_err(err)?
                .1
                .unwrap_or(0);
            let quit = o
                .conn
                .query_last(gave_up, &params, 0)
                .map_err(err)?
                .1
                .unwrap_or(0);
            if quit > 0 {
                return Err(BarrierError::OtherGaveUp {
                    share,
                    point: point.to_string(),
                });
            }
            if here >= i64::from(share.count) {
                break;
            }
            if t0.elapsed() > self.rv.timeout {
                let me = -i64::from(share.index);
                let _ = o.conn.exec(
                    insert,
                    &[Param::Str(id), Param::Str(point_key), Param::Int(me)],
                );
                return Err(BarrierError::TimedOut {
                    share,
                    point: point.to_string(),
                    here,
                    secs: self.rv.timeout.as_secs_f64(),
                });
            }
            if crate::runner::interrupted() {
                return Err(BarrierError::Interrupted);
            }
            std::thread::sleep(tick);
        }
        let waited = t0.elapsed();
        let before = unix_now();
        let clock = o.clock;
        let server = o.conn.query_last(clock, &[], 0).ok().and_then(|r| r.1);
        let after = unix_now();
        Ok(Met {
            waited,
            clock_offset_ms: server
                .map(|us| ((us as f64 / 1e6 - (before + after) / 2.0) * 1e6).round() / 1e3),
        })
    }

    /// The study's barrier name (`--barrier`).
    pub fn id(&self) -> &str {
        &self.rv.id
    }

    /// Leaves the barrier after every share met at `point`, its last: the
    /// share that leaves last deletes the barrier's rows from the user's
    /// database (every share is past every point then, so none still
    /// polls a row). Whether this share deleted them.
    pub fn leave(&self, point: &str) -> Result<bool, BarrierError> {
        let mut o = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let share = self.rv.share;
        let key = key_of(&format!("{point}:left"));
        let err = |e: crate::db::DbError| BarrierError::Db {
            share,
            point: format!("{point}:left"),
            error: e,
        };
        let id = self.rv.id.as_str();
        let (insert, arrived, forget) = (o.insert, o.arrived, o.forget);
        o.conn
            .exec(
                insert,
                &[
                    Param::Str(id),
                    Param::Str(&key),
                    Param::Int(share.index.into()),
                ],
            )
            .map_err(err)?;
        let left = o
            .conn
            .query_last(arrived, &[Param::Str(id), Param::Str(&key)], 0)
            .map_err(err)?
            .1
            .unwrap_or(0);
        if left < i64::from(share.count) {
            return Ok(false);
        }
        o.conn.exec(forget, &[Param::Str(id)]).map_err(err)?;
        Ok(true)
    }
}

/// Why the shares did not meet.
#[derive(Debug, thiserror::Error)]
pub enum BarrierError {
    #[error("client share {share}: the barrier at {point} failed: {error}; check that the target is reachable")]
    Db {
        share: ClientShare,
        point: String,
        error: crate::db::DbError,
    },
    #[error(
        "client share {share}: another share gave up waiting at {point} (it waited past its \
         --barrier-timeout), so this step runs on no share; start the shares together and run \
         again with a new --barrier"
    )]
    OtherGaveUp { share: ClientShare, point: String },
    #[error(
        "client share {share}: only {here} of {} shares reached {point} within {secs:.0} s \
         (--barrier-timeout); a share started late, died, or was given another --barrier; \
         this step is not measured",
        share.count
    )]
    TimedOut {
        share: ClientShare,
        point: String,
        here: i64,
        secs: f64,
    },
    #[error("interrupted while waiting for the other client shares")]
    Interrupted,
}

/// A meeting point as the table keeps it: the execution's identity, or,
/// past the column's 190 characters, its SHA-256.
fn key_of(point: &str) -> String {
    use sha2::{Digest, Sha256};
    if point.len() <= 190 {
        return point.to_string();
    }
    Sha256::digest(point.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
