//! What each LinkBench connection does: a loader takes the next chunk of
//! ids and writes its nodes, or its links and their counts; a requester runs
//! one operation of the mix per event; a checker compares counts with links
//! over the next range of ids.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::Rng as _;

use super::model::{self, Access, Graph, Motif, Multiget, Size, FIRST_LINK_TYPE, NODE_TYPE};
use super::{sql, Op, Params};
use crate::db::{Conn, DbError, DbResult, Dialect, ErrorKind, Param, Stmt};
use crate::measure::{Recorder, Tally};
use crate::workload::dist::Rng;
use crate::workload::{record_error as record, Client, ClientCtx};

/// What the connections of a step share: the next work item, and whether
/// the tables exist yet.
#[derive(Default)]
pub struct Shared {
    next: AtomicU64,
    created: AtomicBool,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Motif generators as FBWorkload configures them: links bytes 32..100,
/// uniqueness 0.225; nodes 50..220, uniqueness 0.63; motifs of 128 bytes.
/// Node bytes stop at 127 here: relbench sends text as UTF-8, where the
/// original's bytes above 127 would be two bytes each.
fn link_motif(rng: &mut Rng) -> Motif {
    Motif::new(rng, 32, 100, 0.225, 128)
}
fn node_motif(rng: &mut Rng) -> Motif {
    Motif::new(rng, 50, 127, 0.63, 128)
}

/// Appends `s` to a bulk row, with the backslash escaped (LOAD DATA's and
/// COPY's text formats both read `\\` as one).
fn push_escaped(buf: &mut Vec<u8>, s: &str) {
    for b in s.bytes() {
        if b == b'\\' {
            buf.push(b'\\');
        }
        buf.push(b);
    }
}

struct LinkRow {
    id1: i64,
    id2: i64,
    link_type: i64,
    time: i64,
    data: String,
}

/// Statements of one shape for batches of any size up to `batch`: the full
/// batch, and powers of two for the rest, so a connection prepares at most
/// a dozen statements per table however the chunks fall.
struct Batches {
    make: fn(Dialect, usize) -> String,
    full: usize,
    prepared: Vec<(usize, Stmt)>,
}

impl Batches {
    fn new(make: fn(Dialect, usize) -> String, full: usize) -> Batches {
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
        if ctx.index == 0 {
            for s in sql::create(d, &ctx.table_options) {
                conn.batch(&s)?;
            }
            shared.created.store(true, Ordering::Release);
        } else {
            // The first loader makes the tables all of them fill.
            let t0 = Instant::now();
            while !shared.created.load(Ordering::Acquire) {
                if t0.elapsed() > Duration::from_secs(120) {
                    return Err(DbError::new(
                        ErrorKind::Other,
                        "LinkBench's tables were not made within 120 s: the first loader, which makes them, failed or hangs (its error, if any, is in this step's result)",
                    ));
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let batch = p.bulk_insert_batch.max(1) as usize;
        Ok(Loader {
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
            bulk: None,
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
                    push_escaped(buf, data);
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
    /// rows, each committed (the original commits each batch).
    fn insert(
        &mut self,
        conn: &mut dyn Conn,
        rec: &mut Recorder,
        nodes: bool,
    ) -> Result<(), ErrorKind> {
        let d = self.d;
        if nodes {
            let rows = &self.node_rows;
            return insert_table(
                conn,
                rec,
                d,
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
            d,
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
            d,
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

/// `rows` rows through `batches`' statements, each one committed, timed as
/// one statement of `class` and its rows tallied; `row(i, out)` appends row
/// `i`'s parameters.
fn insert_table<'a>(
    conn: &mut dyn Conn,
    rec: &mut Recorder,
    d: Dialect,
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
        conn.exec(stmt, &params)
            .map_err(|e| record(rec, class, e))?;
        rec.statement(class, t.elapsed());
        rec.tally(class, Tally::Rows, n as u64);
        at += n;
    }
    Ok(())
}

/// Rows per bulk transaction: a chunk can hold the most linked node's
/// 961,963 links, past MyRocks' default of 1,048,576 row locks (a row and
/// its index entry each take one); the original commits every 1024.
const BULK_ROWS: usize = 50_000;

/// `rows` rows of `table` through the bulk path, [`BULK_ROWS`] a
/// transaction, each piece timed as one statement of `class` and its rows
/// tallied. `Ok(false)`: the engine has no bulk path (nothing written).
fn bulk_table(
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
    /// Multiget statements for 1, 2, 4 … id2s, up to the largest multiget.
    multigets: Vec<Stmt>,
    /// Lists seen full: (id1, link_type, pages read), at most 2048 (the
    /// original's `listTailHistoryLimit`).
    history: Vec<(i64, i64, u32)>,
    data: String,
    id2s: Vec<i64>,
}

struct Stmts {
    add_node: Stmt,
    get_node: Stmt,
    update_node: Stmt,
    delete_node: Stmt,
    unhide_link: Stmt,
    insert_link: Stmt,
    update_link: Stmt,
    count_up: Stmt,
    lock_link: Stmt,
    hide_link: Stmt,
    count_down: Stmt,
    count_link: Stmt,
    link_list: Stmt,
}

const HISTORY: usize = 2048;
/// Attempts of a transaction the engine aborted for a deadlock or a lock
/// wait (the original retries these too; each failed attempt is counted
/// as an error of its kind).
const ATTEMPTS: u32 = 5;

impl Requester {
    pub fn new(conn: &mut dyn Conn, d: Dialect, p: &Params, mut rng: Rng) -> DbResult<Requester> {
        if d == Dialect::Postgres {
            conn.batch(sql::PG_NODE_SEQUENCE)?;
        }
        let r = sql::Requests::new(d);
        let s = Stmts {
            add_node: conn.prepare(&r.add_node)?,
            get_node: conn.prepare(&r.get_node)?,
            update_node: conn.prepare(&r.update_node)?,
            delete_node: conn.prepare(&r.delete_node)?,
            unhide_link: conn.prepare(&r.unhide_link)?,
            insert_link: conn.prepare(&r.insert_link)?,
            update_link: conn.prepare(&r.update_link)?,
            count_up: conn.prepare(&r.count_up)?,
            lock_link: conn.prepare(&r.lock_link)?,
            hide_link: conn.prepare(&r.hide_link)?,
            count_down: conn.prepare(&r.count_down)?,
            count_link: conn.prepare(&r.count_link)?,
            link_list: conn.prepare(&r.link_list)?,
        };
        // Up to the largest multiget, rounded up to a power of two.
        let top = p.multiget_max.max(1).next_power_of_two().trailing_zeros();
        let multigets = (0..=top)
            .map(|k| conn.prepare(&sql::multiget(d, 1 << k)))
            .collect::<DbResult<_>>()?;
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
            multigets,
            history: Vec::new(),
            data: String::new(),
            id2s: Vec::new(),
        })
    }

    /// The operation a draw picks.
    pub fn pick(&mut self) -> Op {
        let total = self.mix[self.mix.len() - 1];
        let r = self.rng.random::<f64>() * total;
        let i = self.mix.partition_point(|&c| c <= r);
        Op::ALL[i.min(Op::ALL.len() - 1)]
    }

    /// A link write in one transaction (`addLinkImpl`): relbench's
    /// connections report rows matched rather than changed, so where the
    /// original reads the upsert's affected-row count (1 new, 2 changed,
    /// 0 unchanged), this asks in turn: was it hidden (made visible again,
    /// with the new payload: one more counted link), is it new (inserted:
    /// one more), else it was visible (payload updated, count unchanged).
    /// Returns whether the link existed.
    fn write_link(&mut self, conn: &mut dyn Conn, link: &[i64; 5], data: &str) -> DbResult<bool> {
        let [id1, id2, link_type, time, version] = *link;
        let s = &self.s;
        conn.begin(true)?;
        let key = [Param::Int(link_type), Param::Int(id1), Param::Int(id2)];
        let unhidden = conn.exec(
            s.unhide_link,
            &[
                Param::Str(data),
                Param::Int(time),
                Param::Int(version),
                key[0],
                key[1],
                key[2],
            ],
        )?;
        let mut existed = unhidden > 0;
        let counted = if existed {
            true
        } else {
            let inserted = conn.exec(
                s.insert_link,
                &[
                    Param::Int(id1),
                    Param::Int(id2),
                    Param::Int(link_type),
                    Param::Int(1),
                    Param::Str(data),
                    Param::Int(time),
                    Param::Int(version),
                ],
            )?;
            existed = inserted == 0;
            inserted > 0
        };
        if counted {
            conn.exec(
                s.count_up,
                &[Param::Int(id1), Param::Int(link_type), Param::Int(time)],
            )?;
        } else {
            conn.exec(
                s.update_link,
                &[
                    Param::Int(1),
                    Param::Str(data),
                    Param::Int(time),
                    Param::Int(version),
                    key[0],
                    key[1],
                    key[2],
                ],
            )?;
        }
        conn.commit()?;
        Ok(existed)
    }

    /// `deleteLinkImpl` without expunge, as the requests call it: lock the
    /// row; a visible link is hidden and its count goes down by one.
    /// Returns whether the link existed.
    fn delete_link(
        &mut self,
        conn: &mut dyn Conn,
        id1: i64,
        link_type: i64,
        id2: i64,
    ) -> DbResult<bool> {
        let s = &self.s;
        let key = [Param::Int(link_type), Param::Int(id1), Param::Int(id2)];
        conn.begin(true)?;
        let found = conn.query(s.lock_link, &key)? > 0;
        if found && conn.exec(s.hide_link, &key)? > 0 {
            conn.exec(
                s.count_down,
                &[Param::Int(id1), Param::Int(link_type), Param::Int(now_ms())],
            )?;
        }
        conn.commit()?;
        Ok(found)
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
                    None => conn.exec(
                        s.add_node,
                        &[
                            Param::Int(NODE_TYPE),
                            Param::Int(1),
                            Param::Int(time_s),
                            data,
                        ],
                    ),
                    Some(id) => conn.exec(
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
                let r = conn.exec(s.delete_node, &[Param::Int(id), Param::Int(NODE_TYPE)]);
                finish(rec, class, (r, t))
            }
            Op::GetNode => {
                let id = self.node_reads.id(&mut self.rng);
                let t = Instant::now();
                let r = conn.query(s.get_node, &[Param::Int(id)]);
                finish(rec, class, (r, t))
            }
            Op::CountLink => {
                let id1 = self.link_reads.id(&mut self.rng);
                let link_type = self.graph.link_type(&mut self.rng);
                let t = Instant::now();
                let r = conn.query(s.count_link, &[Param::Int(id1), Param::Int(link_type)]);
                finish(rec, class, (r, t))
            }
            Op::MultigetLink => {
                let id1 = self.link_reads.id(&mut self.rng);
                let link_type = self.graph.link_type(&mut self.rng);
                let n = self.multiget.draw(&mut self.rng);
                self.graph
                    .id2s(&mut self.rng, id1, link_type, n, &mut self.id2s);
                // One statement per power of two: the list is padded with
                // its last id2, which IN reads once.
                let k = n.next_power_of_two().trailing_zeros() as usize;
                let last = *self.id2s.last().expect("n >= 1");
                self.id2s.resize(1 << k, last);
                let mut params = Vec::with_capacity(2 + self.id2s.len());
                params.extend([Param::Int(id1), Param::Int(link_type)]);
                params.extend(self.id2s.iter().map(|&x| Param::Int(x)));
                let t = Instant::now();
                let r = conn.query(self.multigets[k], &params);
                finish(rec, class, (r, t))
            }
            Op::GetLinkList => {
                let limit = i64::from(self.p.range_limit.max(1));
                let tail = !self.history.is_empty()
                    && self.rng.random::<f64>() * 100.0 < self.p.getlinklist_history;
                // The next page of a list seen full: the original asks for
                // the links older than the last one it read; relbench's
                // connections count rows without reading values, so it
                // skips the pages read instead (the same rows).
                let (slot, id1, link_type, pages) = if tail {
                    let i = self.rng.random_range(0..self.history.len());
                    let (id1, t, pages) = self.history[i];
                    (Some(i), id1, t, pages)
                } else {
                    (
                        None,
                        self.link_reads.id(&mut self.rng),
                        self.graph.link_type(&mut self.rng),
                        0,
                    )
                };
                let t = Instant::now();
                let r = conn.query(
                    s.link_list,
                    &[
                        Param::Int(id1),
                        Param::Int(link_type),
                        Param::Int(0),
                        Param::Int(i64::MAX),
                        Param::Int(i64::from(pages) * limit),
                        Param::Int(limit),
                    ],
                );
                if let Ok(rows) = &r {
                    let full = *rows as i64 == limit;
                    match slot {
                        Some(i) if full => self.history[i].2 += 1,
                        Some(i) => {
                            self.history.swap_remove(i);
                        }
                        None if full && self.history.len() < HISTORY => {
                            self.history.push((id1, link_type, 1))
                        }
                        None if full => {
                            let i = self.rng.random_range(0..HISTORY);
                            self.history[i] = (id1, link_type, 1);
                        }
                        None => {}
                    }
                }
                finish(rec, class, (r, t))
            }
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

/// Records a one-statement operation: its time, or its error. `Ok(false)`
/// when it read or changed no row.
fn finish(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_use_the_full_size_then_powers_of_two() {
        let b = Batches::new(sql::load_nodes, 1024);
        let size = |left: usize| {
            if left >= b.full {
                b.full
            } else {
                1 << (usize::BITS - 1 - left.leading_zeros())
            }
        };
        assert_eq!(size(5000), 1024);
        assert_eq!(size(1023), 512);
        assert_eq!(size(5), 4);
        assert_eq!(size(1), 1);
    }

    #[test]
    fn bulk_rows_escape_the_backslash() {
        let mut buf = Vec::new();
        push_escaped(&mut buf, "a\\b");
        assert_eq!(buf, b"a\\\\b");
    }
}
