//! The requester: the ten operations of the mix, each as the original's
//! `LinkStoreMysql` runs it, link writes retried after a deadlock.
//!
//! On MySQL, with the original's two connections and transactions: reads
//! on one connection in autocommit, writes on another with autocommit off,
//! each write transaction ended as the original ends it (its last write
//! sent as `"…; commit"`, a link delete's COMMIT on its own), so no BEGIN
//! and the same round trips. Elsewhere (no original to follow) one
//! connection, link writes between BEGIN and COMMIT, node writes in
//! autocommit.

use super::*;

/// `lb.request`: one operation of the mix per event.
pub struct Requester {
    p: Params,
    graph: Graph,
    rng: Rng,
    /// Cumulative weights of [`Op::ALL`].
    mix: [f64; 10],
    link_reads: Access,
    link_writes: Access,
    node_reads: Access,
    node_updates: Access,
    node_deletes: Access,
    link_size: Size,
    node_size: Size,
    link_add: Motif,
    link_up: Motif,
    node_add: Motif,
    node_up: Motif,
    multiget: Multiget,
    s: Stmts,
    /// The connection reads go to (the original's `conn_ro`), when not the
    /// one writes go to; with it, writes go as the original's `conn_rw`
    /// sends them (autocommit off: [`Requester::original`]).
    reads: Option<Box<dyn Conn>>,
    /// Multiget statements and the id2s each takes (`multiget_sizes`), by
    /// length: a multiget uses the first that holds it.
    multigets: Vec<(usize, Stmt)>,
    /// The lists paged on (`getLinkListTail`).
    history: TailHistory,
    data: String,
    id2s: Vec<i64>,
}

pub(super) struct Stmts {
    add_node: Stmt,
    get_node: Stmt,
    update_node: Stmt,
    delete_node: Stmt,
    /// MySQL's upsert, or (elsewhere) the two statements that ask what it
    /// answers.
    upsert_link: Option<Stmt>,
    unhide_link: Option<Stmt>,
    insert_link: Option<Stmt>,
    update_link: Stmt,
    count_up: Stmt,
    lock_link: Stmt,
    hide_link: Stmt,
    count_down: Stmt,
    count_link: Stmt,
    link_list: Stmt,
}

impl Stmts {
    /// The writes on `conn`, the reads on `ro` when given, else on `conn`.
    fn prepare(conn: &mut dyn Conn, ro: &mut Option<Box<dyn Conn>>, d: Dialect) -> DbResult<Stmts> {
        let r = sql::Requests::new(d);
        let ro = reads(ro, conn);
        let get_node = ro.prepare(&r.get_node)?;
        let count_link = ro.prepare(&r.count_link)?;
        let link_list = ro.prepare(&r.link_list)?;
        Ok(Stmts {
            add_node: conn.prepare(&r.add_node)?,
            get_node,
            update_node: conn.prepare(&r.update_node)?,
            delete_node: conn.prepare(&r.delete_node)?,
            upsert_link: r
                .upsert_link
                .as_deref()
                .map(|q| conn.prepare(q))
                .transpose()?,
            unhide_link: (r.upsert_link.is_none())
                .then(|| conn.prepare(&r.unhide_link))
                .transpose()?,
            insert_link: (r.upsert_link.is_none())
                .then(|| conn.prepare(&r.insert_link))
                .transpose()?,
            update_link: conn.prepare(&r.update_link)?,
            count_up: conn.prepare(&r.count_up)?,
            lock_link: conn.prepare(&r.lock_link)?,
            hide_link: conn.prepare(&r.hide_link)?,
            count_down: conn.prepare(&r.count_down)?,
            count_link,
            link_list,
        })
    }
}

/// Prepared, multigets of up to this many id2s have a statement of their
/// own, as the original's literal IN lists do (2 to 16 are 99.9% of
/// them); a longer one is padded with its last id2 to the next power of
/// two, which IN reads once: at most a few dozen statements prepared per
/// connection. Sent as text (the default) every length is its own.
pub(super) const EXACT_MULTIGET: usize = 16;

/// The IN-list lengths for multigets of up to `max` id2s: every length
/// when the statements go as text (`every`), else each length to
/// [`EXACT_MULTIGET`], then the powers of two past it.
fn multiget_sizes(max: usize, every: bool) -> Vec<usize> {
    let max = max.max(1);
    if every {
        return (1..=max).collect();
    }
    let mut sizes: Vec<usize> = (1..=EXACT_MULTIGET.min(max)).collect();
    let mut n = EXACT_MULTIGET * 2;
    while n < max * 2 && max > EXACT_MULTIGET {
        sizes.push(n);
        n *= 2;
    }
    sizes
}

/// The position of `time` in a link row (`LINK_COLUMNS`).
const TIME_COLUMN: usize = 5;
/// Attempts of a transaction the engine aborted for a deadlock or a lock
/// wait (the original retries these too; each failed attempt is counted
/// as an error of its kind).
pub(super) const ATTEMPTS: u32 = 5;

impl Requester {
    /// A requester writing on `conn`, reading on the first of `more` when
    /// given (on MySQL, as the original).
    pub fn new(
        conn: &mut dyn Conn,
        mut more: Vec<Box<dyn Conn>>,
        d: Dialect,
        p: &Params,
        mut rng: Rng,
    ) -> DbResult<Requester> {
        if d == Dialect::Postgres {
            conn.batch(sql::PG_NODE_SEQUENCE)?;
        }
        // addLinkImpl reads its upsert's changed rows, as the original's
        // connection (`useAffectedRows=true`) reports them.
        conn.count_changed_rows()?;
        let mut ro = more.pop();
        if ro.is_some() {
            // The original's `conn_rw.setAutoCommit(false)`.
            conn.batch("SET autocommit=0")?;
        }
        let on = reads(&mut ro, conn);
        let multigets = multiget_sizes(p.multiget_max as usize, on.plain())
            .into_iter()
            .map(|n| Ok((n, on.prepare(&sql::multiget(d, n))?)))
            .collect::<DbResult<_>>()?;
        let s = Stmts::prepare(conn, &mut ro, d)?;
        let mut mix = p.mix;
        for i in 1..mix.len() {
            mix[i] += mix[i - 1];
        }
        let (start, end) = (p.startid1, p.maxid1);
        let blend = |pct: f64| Some((pct / 100.0, model::UNCORR_SEED));
        Ok(Requester {
            graph: p.graph(),
            mix,
            link_reads: Access::new(
                start,
                end,
                Some(p.read_shape),
                model::DEGREE_SEED,
                blend(p.read_uncorr_blend),
            ),
            link_writes: Access::new(
                start,
                end,
                Some(p.write_shape),
                model::DEGREE_SEED,
                blend(p.write_uncorr_blend),
            ),
            node_reads: Access::new(start, end, Some(p.node_read_shape), model::NODE_SEED, None),
            node_updates: Access::new(
                start,
                end,
                Some(p.node_update_shape),
                model::NODE_SEED,
                None,
            ),
            node_deletes: Access::new(start, end, None, model::NODE_SEED, None),
            link_size: Size::new(p.link_datasize, model::MAX_LINK_DATA),
            node_size: Size::new(p.node_datasize, model::MAX_NODE_DATA),
            link_add: link_motif(&mut rng),
            link_up: link_motif(&mut rng),
            node_add: node_motif(&mut rng),
            node_up: node_motif(&mut rng),
            multiget: Multiget::new(p.multiget_min, p.multiget_max, p.multiget_p),
            p: *p,
            rng,
            s,
            reads: ro,
            multigets,
            history: TailHistory::new(p.tail_corrected),
            data: String::new(),
            id2s: Vec::new(),
        })
    }

    /// Whether writes go as the original's (a read connection of their
    /// own, autocommit off on the write one).
    fn original(&self) -> bool {
        self.reads.is_some()
    }

    /// The operation a draw picks.
    pub fn pick(&mut self) -> Op {
        let total = self.mix[self.mix.len() - 1];
        let r = self.rng.random::<f64>() * total;
        let i = self.mix.partition_point(|&c| c <= r);
        Op::ALL[i.min(Op::ALL.len() - 1)]
    }

    /// A link write in one transaction (`addLinkImpl`). On MySQL the
    /// original's upsert, whose changed-row count says what happened: 1
    /// a new link (one more counted), 0 a visible one (its payload
    /// updated), 2 a hidden one made visible (both). Elsewhere the same
    /// answers come from the link's row, locked (`SELECT … FOR UPDATE`):
    /// hidden (made visible with the new payload, one more counted),
    /// visible (payload updated), or none (inserted, one more counted).
    /// Returns whether the link existed.
    fn write_link(&mut self, conn: &mut dyn Conn, link: &[i64; 5], data: &str) -> DbResult<bool> {
        let [id1, id2, link_type, time, version] = *link;
        let s = &self.s;
        if !self.original() {
            conn.begin(true)?;
        }
        let key = [Param::Int(id1), Param::Int(id2), Param::Int(link_type)];
        // The new payload and the link's key: unhide's parameters, and
        // update's after its visibility.
        let payload = [
            Param::Str(data),
            Param::Int(time),
            Param::Int(version),
            key[0],
            key[1],
            key[2],
        ];
        let row = [
            Param::Int(id1),
            Param::Int(id2),
            Param::Int(link_type),
            Param::Int(1),
            Param::Str(data),
            Param::Int(time),
            Param::Int(version),
        ];
        // (one more counted, the payload updated, the link existed)
        let (count, update, existed) = match (s.upsert_link, s.unhide_link, s.insert_link) {
            (Some(upsert), _, _) => match conn.exec(upsert, &row)? {
                1 => (true, false, false),
                0 => (false, true, true),
                _ => (true, true, true),
            },
            // Asked with the row locked: a visible link's payload update
            // unlocked sets visibility = 1, which once made a link a
            // concurrent delete had just hidden visible again uncounted
            // (PostgreSQL, two requesters: the check found a count one
            // short).
            (None, Some(unhide), Some(insert)) => {
                let mut locked = conn.query_last(s.lock_link, &key, 0)?;
                let inserted = locked.0 == 0 && conn.exec(insert, &row)? > 0;
                if locked.0 == 0 && !inserted {
                    // Another requester inserted it since the lock found
                    // nothing: its insert has committed, so it is there.
                    locked = conn.query_last(s.lock_link, &key, 0)?;
                }
                match locked {
                    _ if inserted => (true, false, false),
                    (found, Some(0)) if found > 0 => {
                        conn.exec(unhide, &payload)?;
                        (true, false, true)
                    }
                    // Visible (an update that finds no row changes nothing).
                    _ => (false, true, true),
                }
            }
            _ => unreachable!("the upsert, or the two statements in its place, are prepared"),
        };
        // The original appends its commit to the transaction's last write.
        let original = self.original();
        let ends = |conn: &mut dyn Conn, stmt: Stmt, params: &[Param<'_>], last: bool| {
            if last && original {
                conn.exec_commit(stmt, params)
            } else {
                conn.exec(stmt, params)
            }
        };
        if count {
            let params = [
                Param::Int(id1),
                Param::Int(link_type),
                Param::Int(time),
                Param::Int(time),
            ];
            ends(conn, s.count_up, &params, !update)?;
        }
        if update {
            let [d, t, v, k1, k2, k3] = payload;
            ends(
                conn,
                s.update_link,
                &[Param::Int(1), d, t, v, k1, k2, k3],
                true,
            )?;
        }
        if !original {
            conn.commit()?;
        }
        Ok(existed)
    }

    /// `deleteLinkImpl` without expunge, as the requests call it: read the
    /// link's visibility with its row locked; a visible link is hidden and
    /// its count goes down by one. Returns whether the link existed.
    fn delete_link(
        &mut self,
        conn: &mut dyn Conn,
        id1: i64,
        link_type: i64,
        id2: i64,
    ) -> DbResult<bool> {
        let s = &self.s;
        let key = [Param::Int(id1), Param::Int(id2), Param::Int(link_type)];
        if !self.original() {
            conn.begin(true)?;
        }
        let (found, visibility) = conn.query_last(s.lock_link, &key, 0)?;
        if found > 0 && visibility != Some(0) {
            conn.exec(s.hide_link, &key)?;
            let now = now_ms();
            conn.exec(
                s.count_down,
                &[
                    Param::Int(id1),
                    Param::Int(link_type),
                    Param::Int(now),
                    Param::Int(now),
                ],
            )?;
        }
        conn.commit()?;
        Ok(found > 0)
    }

    /// Runs one operation, retrying a transaction the engine aborted for a
    /// deadlock or lock wait. `Ok(false)`: it found nothing.
    fn run(&mut self, op: Op, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<bool, ErrorKind> {
        let class = op as usize;
        let time_s = now_ms() / 1000;
        let s = &self.s;
        match op {
            Op::AddNode | Op::UpdateNode => {
                let motif = if op == Op::AddNode {
                    &self.node_add
                } else {
                    &self.node_up
                };
                let size = self.node_size.draw(&mut self.rng);
                motif.fill(&mut self.rng, size, &mut self.data);
                let data = Param::Str(&self.data);
                let update = (op == Op::UpdateNode).then(|| self.node_updates.id(&mut self.rng));
                let t = Instant::now();
                let r = match update {
                    None => node_write(
                        self.original(),
                        conn,
                        s.add_node,
                        &[
                            Param::Int(NODE_TYPE),
                            Param::Int(1),
                            Param::Int(time_s),
                            data,
                        ],
                    ),
                    Some(id) => node_write(
                        self.original(),
                        conn,
                        s.update_node,
                        &[
                            Param::Int(2),
                            Param::Int(time_s),
                            data,
                            Param::Int(id),
                            Param::Int(NODE_TYPE),
                        ],
                    ),
                };
                finish(rec, class, (r, t))
            }
            Op::DeleteNode => {
                let id = self.node_deletes.id(&mut self.rng);
                let t = Instant::now();
                let r = node_write(
                    self.original(),
                    conn,
                    s.delete_node,
                    &[Param::Int(id), Param::Int(NODE_TYPE)],
                );
                finish(rec, class, (r, t))
            }
            Op::GetNode => {
                let id = self.node_reads.id(&mut self.rng);
                let t = Instant::now();
                let r = reads(&mut self.reads, conn).query(s.get_node, &[Param::Int(id)]);
                finish(rec, class, (r, t))
            }
            Op::CountLink => {
                let id1 = self.link_reads.id(&mut self.rng);
                let link_type = self.graph.link_type(&mut self.rng);
                let t = Instant::now();
                let r = reads(&mut self.reads, conn)
                    .query(s.count_link, &[Param::Int(id1), Param::Int(link_type)]);
                finish(rec, class, (r, t))
            }
            Op::MultigetLink => {
                let id1 = self.link_reads.id(&mut self.rng);
                let link_type = self.graph.link_type(&mut self.rng);
                let n = self.multiget.draw(&mut self.rng);
                self.graph
                    .id2s(&mut self.rng, id1, link_type, n, &mut self.id2s);
                let k = self.multigets.partition_point(|&(size, _)| size < n);
                let (sent, stmt) = self.multigets[k];
                let last = *self.id2s.last().expect("n >= 1");
                self.id2s.resize(sent, last);
                let mut params = Vec::with_capacity(2 + self.id2s.len());
                params.extend([Param::Int(id1), Param::Int(link_type)]);
                params.extend(self.id2s.iter().map(|&x| Param::Int(x)));
                let t = Instant::now();
                let r = reads(&mut self.reads, conn).query(stmt, &params);
                finish(rec, class, (r, t))
            }
            Op::GetLinkList => self.link_list(conn, rec, class),
            Op::AddLink | Op::UpdateLink => {
                let id1 = self.link_writes.id(&mut self.rng);
                let link_type = self.graph.link_type(&mut self.rng);
                let (p_exist, motif) = if op == Op::AddLink {
                    (model::P_ADD_EXIST, &self.link_add)
                } else {
                    (model::P_UPDATE_EXIST, &self.link_up)
                };
                let id2 = self.graph.id2(&mut self.rng, id1, link_type, p_exist);
                let size = self.link_size.draw(&mut self.rng);
                let mut data = std::mem::take(&mut self.data);
                motif.fill(&mut self.rng, size, &mut data);
                let link = [id1, id2, link_type, now_ms(), 0];
                let r = self.retried(conn, rec, class, |me, conn| {
                    me.write_link(conn, &link, &data)
                });
                self.data = data;
                // An update of a link that was not there added it.
                r.map(|existed| existed || op == Op::AddLink)
            }
            Op::DeleteLink => {
                let id1 = self.link_writes.id(&mut self.rng);
                let link_type = self.graph.link_type(&mut self.rng);
                let id2 = self
                    .graph
                    .id2(&mut self.rng, id1, link_type, model::P_DELETE_EXIST);
                self.retried(conn, rec, class, |me, conn| {
                    me.delete_link(conn, id1, link_type, id2)
                })
            }
        }
    }

    /// `getLinkList`, or the next page of a list seen full
    /// (`getLinkListTail`) as often as `getlinklist_history` says.
    fn link_list(
        &mut self,
        conn: &mut dyn Conn,
        rec: &mut Recorder,
        class: usize,
    ) -> Result<bool, ErrorKind> {
        let s = &self.s;
        let limit = i64::from(self.p.range_limit.max(1));
        let tail = !self.history.is_empty()
            && self.rng.random::<f64>() * 100.0 < self.p.getlinklist_history;
        // The next page of a list seen full (`getLinkListTail`):
        // the links no newer than the last one read, from offset 1.
        let (slot, id1, link_type, max_time, offset) = if tail {
            let (i, (id1, t, last)) = self.history.pick(&mut self.rng);
            (Some(i), id1, t, last, 1)
        } else {
            let id1 = self.link_reads.id(&mut self.rng);
            let t = self.graph.link_type(&mut self.rng);
            (None, id1, t, i64::MAX, 0)
        };
        let t = Instant::now();
        let r = reads(&mut self.reads, conn).query_last(
            s.link_list,
            &[
                Param::Int(id1),
                Param::Int(link_type),
                Param::Int(0),
                Param::Int(max_time),
                Param::Int(offset),
                Param::Int(limit),
            ],
            TIME_COLUMN,
        );
        if let Ok((rows, last)) = &r {
            let full = (*rows as i64 == limit).then_some(*last).flatten();
            match slot {
                Some(i) => self.history.paged(i, full),
                None => {
                    if let Some(last) = full {
                        self.history.seen_full(id1, link_type, last, &mut self.rng);
                    }
                }
            }
        }
        finish(rec, class, (r.map(|(rows, _)| rows), t))
    }

    /// A transaction, retried after a deadlock or a lock wait; its time
    /// counts from the first attempt.
    fn retried(
        &mut self,
        conn: &mut dyn Conn,
        rec: &mut Recorder,
        class: usize,
        mut tx: impl FnMut(&mut Self, &mut dyn Conn) -> DbResult<bool>,
    ) -> Result<bool, ErrorKind> {
        let t = Instant::now();
        let mut attempt = 0;
        loop {
            attempt += 1;
            match tx(self, conn) {
                Ok(found) => {
                    rec.statement(class, t.elapsed());
                    return Ok(found);
                }
                Err(e) => {
                    let _ = conn.rollback();
                    let kind = record(rec, class, e);
                    if !matches!(kind, ErrorKind::Deadlock | ErrorKind::Busy) || attempt >= ATTEMPTS
                    {
                        return Err(kind);
                    }
                }
            }
        }
    }
}

/// The connection reads go to: the reads' own, else the one given.
fn reads<'a>(own: &'a mut Option<Box<dyn Conn>>, conn: &'a mut dyn Conn) -> &'a mut dyn Conn {
    match own {
        Some(c) => c.as_mut(),
        None => conn,
    }
}

/// A node write: as the original sends it (`"…; commit"` on a connection
/// with autocommit off; a failed one rolled back, so it holds no lock
/// into the next operation), or in autocommit.
fn node_write(
    original: bool,
    conn: &mut dyn Conn,
    stmt: Stmt,
    params: &[Param<'_>],
) -> DbResult<u64> {
    if !original {
        return conn.exec(stmt, params);
    }
    let r = conn.exec_commit(stmt, params);
    if r.is_err() {
        let _ = conn.rollback();
    }
    r
}

/// Records a one-statement operation: its time, or its error. `Ok(false)`
/// when it read or changed no row.
pub(super) fn finish(
    rec: &mut Recorder,
    class: usize,
    (r, t): (DbResult<u64>, Instant),
) -> Result<bool, ErrorKind> {
    match r {
        Ok(n) => {
            rec.statement(class, t.elapsed());
            Ok(n > 0)
        }
        Err(e) => Err(record(rec, class, e)),
    }
}

impl Client for Requester {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        let op = self.pick();
        let found = self.run(op, conn, rec)?;
        if !found {
            rec.tally(op as usize, Tally::NotFound, 1);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multigets_prepare_each_length_to_16_then_powers_of_two() {
        let sizes = multiget_sizes(128, false);
        assert_eq!(sizes[..16], (1..=16).collect::<Vec<_>>()[..]);
        assert_eq!(sizes[16..], [32, 64, 128]);
        assert_eq!(multiget_sizes(5, false), [1, 2, 3, 4, 5]);
        assert_eq!(
            multiget_sizes(17, false),
            (1..=16).chain([32]).collect::<Vec<_>>()
        );
        assert_eq!(multiget_sizes(128, true), (1..=128).collect::<Vec<_>>());
    }
}
