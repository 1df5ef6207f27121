//! The checker: whether `counttable` agrees with the visible links of
//! `linktable` for a sample of ids.

use super::*;

/// `lb.check`: ranges of ids spread evenly over the loaded ones.
pub struct Checker {
    stmt: Stmt,
    shared: Arc<Shared>,
    start: i64,
    end: i64,
    per: i64,
    ranges: u64,
}

impl Checker {
    pub fn new(
        conn: &mut dyn Conn,
        d: Dialect,
        p: &Params,
        shared: Arc<Shared>,
    ) -> DbResult<Checker> {
        let (per, ranges) = p.check_plan();
        Ok(Checker {
            stmt: conn.prepare(&sql::check(d))?,
            shared,
            start: p.startid1,
            end: p.maxid1,
            per,
            ranges,
        })
    }
}

impl Client for Checker {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        let k = self.shared.next.fetch_add(1, Ordering::Relaxed);
        if k >= self.ranges {
            return Ok(());
        }
        let stride = ((self.end - self.start) / self.ranges as i64).max(self.per);
        let lo = self.start + k as i64 * stride;
        let hi = (lo + self.per).min(self.end);
        let t = Instant::now();
        let wrong = conn
            .query(
                self.stmt,
                &[
                    Param::Int(lo),
                    Param::Int(hi),
                    Param::Int(lo),
                    Param::Int(hi),
                ],
            )
            .map_err(|e| record(rec, 0, e))?;
        rec.statement(0, t.elapsed());
        rec.tally(0, Tally::Rows, (hi - lo).max(0) as u64);
        if wrong > 0 {
            rec.tally(0, Tally::Wrong, wrong);
            rec.error(0, ErrorKind::WrongResult, || {
                format!("{wrong} (id1, link_type) in ids {lo}..{hi} whose counttable count differs from their visible links in linktable")
            });
        }
        Ok(())
    }
}
