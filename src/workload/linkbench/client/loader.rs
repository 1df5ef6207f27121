//! The loader: nodes, then their links and counts, in chunks all loaders
//! take in turn; bulk files (LOAD DATA, COPY) or multi-row INSERTs.

use super::*;

pub(super) struct LinkRow {
    id1: i64,
    id2: i64,
    link_type: i64,
    time: i64,
    data: String,
}

/// Statements of one shape for batches of any size up to `batch`: the full
/// batch, and powers of two for the rest, so a connection prepares at most
/// a dozen statements per table however the chunks fall.
pub(super) struct Batches {
    make: fn(Dialect, usize) -> String,
    pub(super) full: usize,
    prepared: Vec<(usize, Stmt)>,
}

impl Batches {
    pub(super) fn new(make: fn(Dialect, usize) -> String, full: usize) -> Batches {
        Batches {
            make,
            full: full.max(1),
            prepared: Vec::new(),
        }
    }

    /// The largest statement for `left` rows: its size and handle.
    fn next(&mut self, conn: &mut dyn Conn, d: Dialect, left: usize) -> DbResult<(usize, Stmt)> {
        let size = if left >= self.full {
            self.full
        } else {
            1 << (usize::BITS - 1 - left.leading_zeros())
        };
        if let Some(&(_, s)) = self.prepared.iter().find(|(n, _)| *n == size) {
            return Ok((size, s));
        }
        let s = conn.prepare(&(self.make)(d, size))?;
        self.prepared.push((size, s));
        Ok((size, s))
    }
}

/// `lb.load`: work items alternate a chunk's nodes and its links, taken in
/// turn by every loader, so nodes and links load side by side as the
/// original's node loader and link loaders do.
pub struct Loader {
    d: Dialect,
    p: Params,
    graph: Graph,
    rng: Rng,
    shared: Arc<Shared>,
    node_size: Size,
    link_size: Size,
    node_data: Motif,
    link_data: Motif,
    nodes: Batches,
    links: Batches,
    counts: Batches,
    /// Whether the engine's bulk path works; `None` until tried.
    bulk: Option<bool>,
    /// Batches committed as the original commits them, on a connection
    /// with autocommit off (MySQL); else each in autocommit.
    original: bool,
    node_rows: Vec<(i64, i64, String)>,
    link_rows: Vec<LinkRow>,
    count_rows: Vec<(i64, i64, i64, i64)>,
}

impl Loader {
    pub fn new(
        conn: &mut dyn Conn,
        d: Dialect,
        p: &Params,
        mut rng: Rng,
        ctx: &ClientCtx,
        shared: Arc<Shared>,
    ) -> DbResult<Loader> {
        crate::workload::tables_made_once(ctx.index, &shared.created, "LinkBench's", || {
            for s in sql::create(d, &ctx.table_options, p.count_bigint) {
                conn.batch(&s)?;
            }
            Ok(())
        })?;
        let batch = p.bulk_insert_batch.max(1) as usize;
        // The original loads on `conn_rw`: `setAutoCommit(false)`, each
        // link and count batch followed by `commit()`, each node batch
        // sent as `"…; commit;"`. The bulk path (an option) commits its
        // own transactions.
        let original = d == Dialect::Mysql && !p.load_bulk;
        if original {
            conn.batch("SET autocommit=0")?;
        }
        Ok(Loader {
            original,
            d,
            p: *p,
            graph: p.graph(),
            node_data: node_motif(&mut rng),
            link_data: link_motif(&mut rng),
            rng,
            shared,
            node_size: Size::new(p.node_datasize, model::MAX_NODE_DATA),
            link_size: Size::new(p.link_datasize, model::MAX_LINK_DATA),
            nodes: Batches::new(sql::load_nodes, batch),
            links: Batches::new(sql::load_links, batch),
            counts: Batches::new(sql::load_counts, batch),
            // The original's multi-row upserts unless the plan asks for the
            // engine's bulk path (`load = "bulk"`), which falls back to them.
            bulk: if p.load_bulk { None } else { Some(false) },
            node_rows: Vec::new(),
            link_rows: Vec::new(),
            count_rows: Vec::new(),
        })
    }

    fn ids(&self, chunk: u64) -> (i64, i64) {
        let size = i64::from(self.p.loader_chunk_size.max(1));
        let lo = self.p.startid1 + chunk as i64 * size;
        (lo, (lo + size).min(self.p.maxid1))
    }

    /// A chunk's nodes (`NodeLoader.genNode`): type 2048, version 1, the
    /// time in seconds, a payload of the node's size.
    fn make_nodes(&mut self, lo: i64, hi: i64) {
        let time = now_ms() / 1000;
        self.node_rows.clear();
        for id in lo..hi {
            let n = self.node_size.draw(&mut self.rng);
            let mut data = String::with_capacity(n);
            self.node_data.fill(&mut self.rng, n, &mut data);
            self.node_rows.push((id, time, data));
        }
    }

    /// A chunk's links (`LinkBenchLoad.createOutLinks`): for each id1 and
    /// type, links to `id1 .. id1 + n`, visible, version 0, a time up to 25
    /// days either side of 25 days ago; and a count per (id1, type) with
    /// links, stamped with its newest link's time.
    fn make_links(&mut self, lo: i64, hi: i64) {
        let now = now_ms();
        self.link_rows.clear();
        self.count_rows.clear();
        for id1 in lo..hi {
            for t in 0..i64::from(self.graph.link_types) {
                let link_type = FIRST_LINK_TYPE + t;
                let n = self.graph.links(id1, link_type) as i64;
                let mut newest = 0;
                for j in 0..n {
                    let size = self.link_size.draw(&mut self.rng);
                    let mut data = String::with_capacity(size);
                    self.link_data.fill(&mut self.rng, size, &mut data);
                    let time = model::initial_time(&mut self.rng, now);
                    newest = newest.max(time);
                    self.link_rows.push(LinkRow {
                        id1,
                        id2: id1 + j,
                        link_type,
                        time,
                        data,
                    });
                }
                if n > 0 {
                    self.count_rows.push((id1, link_type, n, newest));
                }
            }
        }
    }

    /// Streams the chunk's rows through the engine's bulk path, at most
    /// [`BULK_ROWS`] a transaction. `Ok(false)`: the engine has none
    /// (nothing was written).
    fn bulk(
        &mut self,
        conn: &mut dyn Conn,
        rec: &mut Recorder,
        nodes: bool,
    ) -> Result<bool, ErrorKind> {
        if nodes {
            let rows = &self.node_rows;
            let push = if self.d == Dialect::Mysql {
                push_escaped_latin1
            } else {
                push_escaped
            };
            return bulk_table(
                conn,
                rec,
                0,
                "nodetable",
                &["id", "type", "version", "time", "data"],
                rows.len(),
                &mut |i, buf| {
                    let (id, time, data) = &rows[i];
                    let _ = write!(buf, "{id}\t{NODE_TYPE}\t1\t{time}\t");
                    push(buf, data);
                    buf.push(b'\n');
                },
            );
        }
        let links = &self.link_rows;
        let counts = &self.count_rows;
        let done = bulk_table(
            conn,
            rec,
            1,
            "linktable",
            &[
                "id1",
                "id2",
                "link_type",
                "visibility",
                "data",
                "time",
                "version",
            ],
            links.len(),
            &mut |i, buf| {
                let l = &links[i];
                let _ = write!(buf, "{}\t{}\t{}\t1\t", l.id1, l.id2, l.link_type);
                push_escaped(buf, &l.data);
                let _ = writeln!(buf, "\t{}\t0", l.time);
            },
        )?;
        if !done {
            return Ok(false);
        }
        bulk_table(
            conn,
            rec,
            2,
            "counttable",
            &["id", "link_type", "count", "time", "version"],
            counts.len(),
            &mut |i, buf| {
                let (id, t, c, time) = counts[i];
                let _ = writeln!(buf, "{id}\t{t}\t{c}\t{time}\t0");
            },
        )
    }

    /// The same rows as multi-row INSERTs of up to `bulk_insert_batch`
    /// rows, each committed as the original commits it.
    fn insert(
        &mut self,
        conn: &mut dyn Conn,
        rec: &mut Recorder,
        nodes: bool,
    ) -> Result<(), ErrorKind> {
        let d = self.d;
        let (node_end, link_end) = if self.original {
            (Ends::Appended, Ends::Commit)
        } else {
            (Ends::Autocommit, Ends::Autocommit)
        };
        if nodes {
            let rows = &self.node_rows;
            return insert_table(
                conn,
                rec,
                (d, node_end),
                0,
                &mut self.nodes,
                rows.len(),
                &mut |i, out| {
                    let (id, time, data) = &rows[i];
                    out.extend([
                        Param::Int(*id),
                        Param::Int(NODE_TYPE),
                        Param::Int(1),
                        Param::Int(*time),
                        Param::Str(data),
                    ]);
                },
            );
        }
        let links = &self.link_rows;
        insert_table(
            conn,
            rec,
            (d, link_end),
            1,
            &mut self.links,
            links.len(),
            &mut |i, out| {
                let l = &links[i];
                out.extend([
                    Param::Int(l.id1),
                    Param::Int(l.id2),
                    Param::Int(l.link_type),
                    Param::Int(1),
                    Param::Str(&l.data),
                    Param::Int(l.time),
                    Param::Int(0),
                ]);
            },
        )?;
        let counts = &self.count_rows;
        insert_table(
            conn,
            rec,
            (d, link_end),
            2,
            &mut self.counts,
            counts.len(),
            &mut |i, out| {
                let (id, t, c, time) = counts[i];
                out.extend([
                    Param::Int(id),
                    Param::Int(t),
                    Param::Int(c),
                    Param::Int(time),
                    Param::Int(0),
                ]);
            },
        )
    }
}

/// How a load batch's transaction ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ends {
    /// The statement is its own transaction.
    Autocommit,
    /// COMMIT follows it (the original's `conn_rw.commit()`).
    Commit,
    /// Its commit goes with it (the original's `"…; commit;"`).
    Appended,
}

/// `rows` rows through `batches`' statements, each one committed as `ends`
/// says, timed as one statement of `class` with its commit and its rows
/// tallied; `row(i, out)` appends row `i`'s parameters.
pub(super) fn insert_table<'a>(
    conn: &mut dyn Conn,
    rec: &mut Recorder,
    (d, ends): (Dialect, Ends),
    class: usize,
    batches: &mut Batches,
    rows: usize,
    row: &mut dyn FnMut(usize, &mut Vec<Param<'a>>),
) -> Result<(), ErrorKind> {
    let mut params = Vec::new();
    let mut at = 0;
    while at < rows {
        let (n, stmt) = batches
            .next(conn, d, rows - at)
            .map_err(|e| record(rec, class, e))?;
        params.clear();
        for i in at..at + n {
            row(i, &mut params);
        }
        let t = Instant::now();
        let r = match ends {
            Ends::Autocommit => conn.exec(stmt, &params),
            Ends::Commit => conn
                .exec(stmt, &params)
                .and_then(|n| conn.commit().map(|_| n)),
            Ends::Appended => conn.exec_commit(stmt, &params),
        };
        if let Err(e) = r {
            if ends != Ends::Autocommit {
                let _ = conn.rollback();
            }
            return Err(record(rec, class, e));
        }
        rec.statement(class, t.elapsed());
        rec.tally(class, Tally::Rows, n as u64);
        at += n;
    }
    Ok(())
}

/// Rows per bulk transaction: a chunk can hold the most linked node's
/// 961,963 links, past MyRocks' default of 1,048,576 row locks (a row and
/// its index entry each take one); the original commits every 1024.
pub(super) const BULK_ROWS: usize = 50_000;

/// `rows` rows of `table` through the bulk path, [`BULK_ROWS`] a
/// transaction, each piece timed as one statement of `class` and its rows
/// tallied. `Ok(false)`: the engine has no bulk path (nothing written).
pub(super) fn bulk_table(
    conn: &mut dyn Conn,
    rec: &mut Recorder,
    class: usize,
    table: &str,
    columns: &[&str],
    rows: usize,
    row: &mut dyn FnMut(usize, &mut Vec<u8>),
) -> Result<bool, ErrorKind> {
    let mut at = 0;
    while at < rows {
        let end = (at + BULK_ROWS).min(rows);
        let mut i = at;
        let mut fill = |buf: &mut Vec<u8>| -> bool {
            let stop = (i + 1000).min(end);
            while i < stop {
                row(i, buf);
                i += 1;
            }
            i < end
        };
        conn.begin(true).map_err(|e| record(rec, class, e))?;
        let t = Instant::now();
        match conn.bulk_load(table, columns, &mut fill) {
            Ok(Some(n)) => {
                if let Err(e) = conn.commit() {
                    let _ = conn.rollback();
                    return Err(record(rec, class, e));
                }
                rec.statement(class, t.elapsed());
                rec.tally(class, Tally::Rows, n);
            }
            Ok(None) => {
                let _ = conn.rollback();
                return Ok(false);
            }
            Err(e) => {
                let _ = conn.rollback();
                return Err(record(rec, class, e));
            }
        }
        at = end;
    }
    Ok(true)
}

impl Client for Loader {
    fn event(&mut self, conn: &mut dyn Conn, rec: &mut Recorder) -> Result<(), ErrorKind> {
        let item = self.shared.next.fetch_add(1, Ordering::Relaxed);
        if item >= 2 * self.p.chunks() {
            return Ok(());
        }
        let (lo, hi) = self.ids(item / 2);
        let nodes = item % 2 == 0;
        if nodes {
            self.make_nodes(lo, hi);
        } else {
            self.make_links(lo, hi);
        }
        if self.bulk != Some(false) {
            let done = self.bulk(conn, rec, nodes)?;
            self.bulk = Some(done);
            if done {
                return Ok(());
            }
        }
        self.insert(conn, rec, nodes)
    }
}
