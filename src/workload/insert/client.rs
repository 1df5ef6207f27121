//! What each of a client's connections does: the inserter, the deleter
//! beside it, the querier of the q-steps, and the index build.

use super::*;

/// Appends rows at the top of the table, `commit` per statement.
pub(super) struct Inserter {
    pub(super) stmt: Stmt,
    pub(super) commit: u32,
    pub(super) rng: Rng,
    pub(super) shared: Arc<Shared>,
    pub(super) data_len: (u32, u32),
    /// iibench's `data_random_pct` ([`Params::data_random_pct`]).
    pub(super) random_pct: u8,
    /// Per row: data, reused so an event allocates only its parameter
    /// list.
    pub(super) data: Vec<String>,
}

impl Inserter {
    pub(super) fn new(
        conn: &mut dyn Conn,
        d: Dialect,
        table: &str,
        commit: u32,
        p: &Params,
        rng: Rng,
        shared: Arc<Shared>,
    ) -> DbResult<Self> {
        Ok(Inserter {
            stmt: conn.prepare(&sql::insert(d, table, commit as usize))?,
            commit,
            rng,
            shared,
            data_len: (p.data_min, p.data_max.max(p.data_min)),
            random_pct: p.data_random_pct,
            data: vec![String::new(); commit as usize],
        })
    }
}

/// A `data` value as iibench makes it: int(len × 0.75 × pct / 100)
/// random base64 characters after a fill of 'a'.
pub(super) fn fill_data(rng: &mut Rng, len: usize, pct: u8, d: &mut String) {
    d.clear();
    let random = len * 3 * usize::from(pct) / 400;
    for _ in random..len {
        d.push('a');
    }
    for _ in 0..random {
        d.push(BASE64[rng.random_range(0..BASE64.len())] as char);
    }
}

/// The characters of iibench's random buffer (base64 of random bytes).
pub(super) const BASE64: &[u8] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

impl Client for Inserter {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        // This batch's ids, taken before it is built: inserters that share
        // a table never write the same id.
        let first = self
            .shared
            .taken
            .fetch_add(i64::from(self.commit), Ordering::Relaxed)
            + 1;
        let mut ints = Vec::with_capacity(self.commit as usize * 5);
        for i in 0..self.commit as usize {
            // iibench's defaults: 1,000 cash registers, 100,000
            // customers, 10,000 products, prices 0 to 499 (an INT).
            ints.push([
                first + i as i64,
                self.rng.random_range(0..1000),
                self.rng.random_range(0..100_000),
                self.rng.random_range(0..10_000),
                self.rng.random_range(0..500),
            ]);
            let len = self.rng.random_range(self.data_len.0..=self.data_len.1);
            fill_data(
                &mut self.rng,
                len as usize,
                self.random_pct,
                &mut self.data[i],
            );
        }
        // iibench's `dateandtime`: the client's time as a string.
        let when = crate::util::utc_datetime(crate::util::unix_now());
        let mut params = Vec::with_capacity(self.commit as usize * sql::ROW_PARAMS);
        for (i, v) in ints.iter().enumerate() {
            params.extend([
                Param::Int(v[0]),
                Param::Str(&when),
                Param::Int(v[1]),
                Param::Int(v[2]),
                Param::Int(v[3]),
                Param::Int(v[4]),
                Param::Str(&self.data[i]),
            ]);
        }
        let t = Instant::now();
        // One multi-row statement in autocommit: one commit per batch.
        match conn.exec(self.stmt, &params) {
            Ok(_) => {
                rec.statement(INSERT, t.elapsed());
                self.shared
                    .top
                    .fetch_max(first + i64::from(self.commit) - 1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => Err(record(rec, INSERT, e)),
        }
    }
}

/// Removes the oldest rows, a batch at a time, never taking the table below
/// its size when the step began.
pub(super) struct Deleter {
    pub(super) stmt: Stmt,
    pub(super) batch: i64,
    pub(super) keep: i64,
    pub(super) shared: Arc<Shared>,
    /// How long an event waits for the inserter's batch before it lets
    /// its turn go (a paced deleter's turns are its batches).
    pub(super) wait: Duration,
    /// `select min(transactionid)`, which iibench's deleter sends every
    /// [`RESYNC_MIN`] batches to resync (relbench knows the oldest id; it
    /// sends it for the server's work, untimed), and the batches so far.
    pub(super) min: Stmt,
    pub(super) batches: u64,
}

/// iibench's `resync_get_min`.
const RESYNC_MIN: u64 = 1000;
/// iibench's primary-key queries read `max(transactionid)` every 100.
const PK_MAX_EVERY: u64 = 100;

impl Deleter {
    /// Whether the next batch may go: the table keeps at least its size at
    /// the step's start.
    fn may_delete(&self) -> bool {
        let lo = self.shared.bottom.load(Ordering::Relaxed);
        let top = self.shared.top.load(Ordering::Relaxed);
        lo + self.batch - 1 <= top - self.keep
    }
}

impl Client for Deleter {
    fn caught_up(&self) -> bool {
        !self.may_delete()
    }

    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        let waited = Instant::now();
        while !self.may_delete() {
            // The inserter has not added this batch yet: wait for it.
            std::thread::sleep(Duration::from_micros(200));
            if waited.elapsed() >= self.wait {
                return Ok(());
            }
        }
        let lo = self.shared.bottom.load(Ordering::Relaxed);
        // Take the batch: deleters that share a table never take the same
        // one (another took it: try the next on the next event).
        if self
            .shared
            .bottom
            .compare_exchange(lo, lo + self.batch, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return Ok(());
        }
        self.batches += 1;
        if self.batches % RESYNC_MIN == 0 {
            conn.query_last(self.min, &[], 0)
                .map_err(|e| record(rec, DELETE, e))?;
        }
        let t = Instant::now();
        match conn.exec(self.stmt, &[Param::Int(lo)]) {
            Ok(_) => {
                rec.statement(DELETE, t.elapsed());
                Ok(())
            }
            Err(e) => Err(record(rec, DELETE, e)),
        }
    }
}

/// The q-steps' unthrottled query connection.
pub(super) struct Querier {
    pub(super) stmts: Vec<Stmt>,
    pub(super) point: bool,
    pub(super) next: usize,
    pub(super) rng: Rng,
    pub(super) shared: Arc<Shared>,
    /// `select max(transactionid)`, which iibench's primary-key queries
    /// send every [`PK_MAX_EVERY`] (untimed here; `None` for range
    /// queries, which never send it), and the queries so far.
    pub(super) max: Option<Stmt>,
    pub(super) queries: u64,
}

impl Client for Querier {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        if let Some(max) = self.max.filter(|_| self.queries % PK_MAX_EVERY == 0) {
            conn.query_last(max, &[], 0)
                .map_err(|e| record(rec, QUERY, e))?;
        }
        self.queries += 1;
        // The range query at random, as iibench picks it; the point query
        // is the only one of its kind.
        self.next = self.rng.random_range(0..self.stmts.len());
        let stmt = self.stmts[self.next];
        let t = Instant::now();
        let r = if self.point {
            // Ten ids among the live ones; the deleter may remove one
            // meanwhile, so the row count is not checked.
            let lo = self.shared.bottom.load(Ordering::Relaxed);
            let hi = self.shared.top.load(Ordering::Relaxed).max(lo);
            let mut ids = [0i64; 10];
            for id in &mut ids {
                *id = self.rng.random_range(lo..=hi);
            }
            let params: [Param<'_>; 10] = ids.map(Param::Int);
            conn.query(stmt, &params)
        } else {
            // Each range query starts at a random value of its index's
            // leading column.
            let start = match self.next {
                1 => self.rng.random_range(0..10_000),
                2 => self.rng.random_range(0..1000),
                _ => self.rng.random_range(0..500),
            };
            conn.query(stmt, &[Param::Int(start)])
        };
        match r {
            Ok(_) => {
                rec.statement(QUERY, t.elapsed());
                Ok(())
            }
            Err(e) => Err(record(rec, QUERY, e)),
        }
    }
}

/// l.x: the three indexes of one table, as one event.
pub(super) struct Indexer {
    pub(super) statements: Vec<String>,
}

impl Client for Indexer {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        for s in &self.statements {
            let t = Instant::now();
            match conn.batch(s) {
                Ok(()) => rec.statement(INDEX, t.elapsed()),
                Err(e) => return Err(record(rec, INDEX, e)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Regression (issue 32): `data` was 98% random letters by default;
    /// iibench's default (data_random_pct 50) makes a 10-character value
    /// 7 `a` then 3 base64 characters.
    #[test]
    fn data_is_iibenchs_fill_then_random_base64() {
        let mut rng = Rng::seed_from_u64(1);
        let mut d = String::new();
        fill_data(&mut rng, 10, 50, &mut d);
        assert_eq!(d.len(), 10);
        assert_eq!(&d[..7], "aaaaaaa");
        assert!(d[7..].bytes().all(|b| BASE64.contains(&b)), "{d}");
        fill_data(&mut rng, 20, 100, &mut d);
        assert!(d.starts_with("aaaaa"), "{d}");
        fill_data(&mut rng, 8, 0, &mut d);
        assert_eq!(d, "aaaaaaaa");
    }
}
