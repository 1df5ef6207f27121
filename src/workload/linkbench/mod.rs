//! LinkBench (Armstrong et al., SIGMOD 2013; `facebookarchive/linkbench`):
//! Facebook's social graph as three tables — nodes, typed links between
//! them, and per-node link counts — loaded with the measured out-degree
//! distribution, then driven by requesters running the original's mix of
//! ten operations, each as `LinkStoreMysql` runs it (transactions
//! included), with hot ids drawn as the original draws them.
//!
//! Three steps: `lb.load` (loaders in parallel; rows/s), `lb.request`
//! (requesters; operations/s, latency per operation type) and `lb.check`
//! (whether `counttable` agrees with `linktable` for a sample of ids).
//! `model.rs` holds the graph's numbers, `sql.rs` the statements per
//! dialect, `client.rs` what each connection does.

mod client;
pub mod model;
pub mod params;
pub mod sql;

use std::any::Any;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::dist::Rng;
use super::{
    Client, ClientCtx, DurationClass, Group, Meta, Scale, ShownStatement, Tables, Workload,
};
use crate::db::{Conn, DbResult, Dialect};
use model::Degree;

/// The operations of the request mix, in the original's report order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    AddNode,
    UpdateNode,
    DeleteNode,
    GetNode,
    AddLink,
    DeleteLink,
    UpdateLink,
    CountLink,
    MultigetLink,
    GetLinkList,
}

impl Op {
    pub const ALL: [Op; 10] = [
        Op::AddNode,
        Op::UpdateNode,
        Op::DeleteNode,
        Op::GetNode,
        Op::AddLink,
        Op::DeleteLink,
        Op::UpdateLink,
        Op::CountLink,
        Op::MultigetLink,
        Op::GetLinkList,
    ];

    /// The statement class its latency is recorded under.
    pub fn class(self) -> &'static str {
        OPS[self as usize]
    }

    /// Its weight's key in the plan's `[linkbench]` table (the original's
    /// property name).
    pub fn key(self) -> &'static str {
        match self {
            Op::AddNode => "addnode",
            Op::UpdateNode => "updatenode",
            Op::DeleteNode => "deletenode",
            Op::GetNode => "getnode",
            Op::AddLink => "addlink",
            Op::DeleteLink => "deletelink",
            Op::UpdateLink => "updatelink",
            Op::CountLink => "countlink",
            Op::MultigetLink => "getlink",
            Op::GetLinkList => "getlinklist",
        }
    }
}

/// `lb.request`'s statement classes: one per operation type.
pub const OPS: [&str; 10] = [
    "add_node",
    "update_node",
    "delete_node",
    "get_node",
    "add_link",
    "delete_link",
    "update_link",
    "count_link",
    "multiget_link",
    "get_link_list",
];
/// `lb.load`'s classes: a batch of nodes, of links, of counts.
pub const LOAD_CLASSES: [&str; 3] = ["load_node", "load_link", "load_count"];
/// `lb.check`'s class.
pub const CHECK_CLASSES: [&str; 1] = ["check"];

/// The `[linkbench]` keys, for `relbench list`.
pub const KEYS: [(&str, &str); 23] = [
    ("startid1, maxid1", "ids loaded: startid1 .. maxid1 - 1 (1, 10000001)"),
    ("loaders", "load connections (10); lb.load's clients"),
    ("requesters", "request connections (100); lb.request's clients"),
    ("requests", "requests per requester; 0 runs for [duration] write (0)"),
    ("requestrate", "requests a second per requester, 0 unthrottled (0)"),
    ("link_type_count", "link types (2)"),
    ("nlinks_func", "\"real\": the measured out-degrees; \"const\" with nlinks_default (real)"),
    ("link_datasize", "median link payload, bytes (8)"),
    ("node_datasize", "median node payload, bytes (128)"),
    ("addlink … getnode", "the mix: addlink 8.99, deletelink 2.99, updatelink 8.01, countlink 4.89, getlink 0.53, getlinklist 50.71, getnode 12.93, addnode 2.57, updatenode 7.37, deletenode 1.01"),
    ("getlinklist_history", "percent of link lists that ask for a page seen before (0.3)"),
    ("range_limit", "rows per link-list page (10000)"),
    ("link_multiget_dist_*", "links per multiget: min 1, max 128, prob 0.382 (geometric)"),
    ("read_shape", "Zipf shape of link reads (0.8)"),
    ("read_uncorr_blend", "percent of link reads not correlated with the degree (99.5)"),
    ("write_shape", "Zipf shape of link writes (0.741)"),
    ("write_uncorr_blend", "percent of link writes not correlated with the degree (95)"),
    ("node_read_shape, node_update_shape", "Zipf shapes of node reads and updates (0.625, 0.606)"),
    ("loader_chunk_size, bulk_insert_batch", "ids per load chunk (2048), rows per load statement (1024)"),
    ("check_ids", "ids lb.check compares (10000)"),
    ("load", "\"insert\": the original's multi-row upserts of bulk_insert_batch rows; \"bulk\": LOAD DATA LOCAL INFILE / COPY, about twice as fast, the same rows (insert)"),
    ("count_type", "counttable's count column: \"int\" (the original's DDL) or \"bigint\" (Small Datum's) (int)"),
    ("tail_history", "lists paged again: \"original\", a list whose last page was read stays in the history's index and is not paged again (removeTailCacheEntry); \"corrected\", it is forgotten and paged again when seen full (original)"),
];

/// The benchmark's parameters, from the plan's `[linkbench]` table. Names
/// and defaults are the original's (`config/FBWorkload.properties` and
/// `config/LinkConfigMysql.properties`), except where said.
///
/// Read back from a run's record it is held to the plan's ranges
/// ([`params::recorded`]): serde's derive writes the fields
/// (`remote = "Self"`), the impls below add the check.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct Params {
    /// Ids loaded: `[startid1, maxid1)` (FBWorkload: 1 and 10,000,001).
    pub startid1: i64,
    pub maxid1: i64,
    /// Loader and requester connections (LinkConfigMysql: 10 and 100).
    pub loaders: u32,
    pub requesters: u32,
    /// Requests per requester; 0 (relbench's default) runs for the plan's
    /// write duration instead (the original: 500,000, with `maxtime`).
    pub requests: u64,
    /// Requests per second per requester, 0 for as fast as it goes
    /// (LinkConfigMysql: 0).
    pub requestrate: u32,
    /// Link types (FBWorkload: 2).
    pub link_type_count: u32,
    /// Out-degrees: the measured distribution (FBWorkload's `nlinks_func =
    /// real`), or a constant.
    pub degree: Degree,
    /// Median payload sizes, bytes (FBWorkload: 8 and 128).
    pub link_datasize: f64,
    pub node_datasize: f64,
    /// The mix, in [`Op::ALL`] order (FBWorkload's percentages; relative
    /// weights here, so they need not add to 100).
    pub mix: [f64; 10],
    /// Percent of link-list requests that ask for the next page of a list
    /// seen full before (FBWorkload: 0.3).
    pub getlinklist_history: f64,
    /// Rows per link-list page (`LinkStore.DEFAULT_LIMIT`: 10,000).
    pub range_limit: u32,
    /// Links per multiget: geometric (FBWorkload: min 1, max 128, p 0.382).
    pub multiget_min: u32,
    pub multiget_max: u32,
    pub multiget_p: f64,
    /// Zipf shapes of link reads and writes and node reads and updates
    /// (FBWorkload: 0.8, 0.741, 0.625, 0.606), and the percent of link
    /// reads and writes not correlated with the degree (99.5 and 95).
    pub read_shape: f64,
    pub read_uncorr_blend: f64,
    pub write_shape: f64,
    pub write_uncorr_blend: f64,
    pub node_read_shape: f64,
    pub node_update_shape: f64,
    /// Ids per load chunk (`loader_chunk_size`: 2048) and rows per load
    /// statement (`mysql_bulk_insert_batch`: 1024).
    pub loader_chunk_size: u32,
    pub bulk_insert_batch: u32,
    /// Ids `lb.check` compares (relbench's own; 10,000, or every id when
    /// there are fewer).
    pub check_ids: u64,
    /// counttable's `count` a BIGINT, as Small Datum's DDL has it, rather
    /// than the original's INT.
    #[serde(default)]
    pub count_bigint: bool,
    /// `lb.load` through the engine's bulk path (LOAD DATA LOCAL INFILE,
    /// COPY) rather than the original's multi-row upserts.
    #[serde(default)]
    pub load_bulk: bool,
    /// A list whose last page was read is forgotten (and paged again when
    /// a first page is seen full), rather than kept in the history's index
    /// as the original's `removeTailCacheEntry` keeps it (`tail_history =
    /// "corrected"`).
    #[serde(default)]
    pub tail_corrected: bool,
}

impl Serialize for Params {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // The derive's, generated as an inherent function by `remote`.
        Params::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Params, D::Error> {
        params::recorded(Params::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// FBWorkload's percentages, in [`Op::ALL`] order.
pub const FB_MIX: [f64; 10] = [
    2.573_278_9, // addnode
    7.366_437,   // updatenode
    1.011_591_4, // deletenode
    12.932_668_3,
    8.988_660_1,
    2.990_766_4,
    8.012_212_5,
    4.886_356_7,
    0.526_114_2,
    50.711_914_5,
];

impl Default for Params {
    fn default() -> Self {
        Params {
            startid1: 1,
            maxid1: 10_000_001,
            loaders: 10,
            requesters: 100,
            requests: 0,
            requestrate: 0,
            link_type_count: 2,
            degree: Degree::Real,
            link_datasize: 8.0,
            node_datasize: 128.0,
            mix: FB_MIX,
            getlinklist_history: 0.3,
            range_limit: 10_000,
            multiget_min: 1,
            multiget_max: 128,
            multiget_p: 0.382,
            read_shape: 0.8,
            read_uncorr_blend: 99.5,
            write_shape: 0.741,
            write_uncorr_blend: 95.0,
            node_read_shape: 0.625,
            node_update_shape: 0.606,
            loader_chunk_size: 2048,
            bulk_insert_batch: 1024,
            check_ids: 10_000,
            count_bigint: false,
            load_bulk: false,
            tail_corrected: false,
        }
    }
}

impl Params {
    /// The scale in words, for `relbench check`.
    pub fn describe(&self) -> String {
        let degree = match self.degree {
            Degree::Real => "out-degrees as measured".to_string(),
            Degree::Const(n) => format!("{n} links a node"),
        };
        let requests = match self.requests {
            0 => "for [duration] write".to_string(),
            n => format!("{n} requests each"),
        };
        format!(
            "LinkBench ids {} … {} ({degree}, {} link types); {} loaders; {} requesters, {requests}{}",
            self.startid1,
            self.maxid1 - 1,
            self.link_type_count,
            self.loaders,
            self.requesters,
            if self.requestrate > 0 {
                format!(" at {} a second each", self.requestrate)
            } else {
                String::new()
            },
        )
    }

    pub fn graph(&self) -> model::Graph {
        model::Graph::new(
            self.startid1,
            self.maxid1,
            self.link_type_count,
            self.degree,
        )
    }

    pub fn nodes(&self) -> i64 {
        (self.maxid1 - self.startid1).max(0)
    }

    /// Load chunks of ids; the load's work items are a node chunk and a
    /// link chunk for each.
    pub fn chunks(&self) -> u64 {
        (self.nodes() as u64).div_ceil(u64::from(self.loader_chunk_size.max(1)))
    }

    /// Ids per check statement, and how many statements.
    pub fn check_plan(&self) -> (i64, u64) {
        const PER: i64 = 100;
        let ids = (self.check_ids as i64).min(self.nodes()).max(1);
        (PER, (ids as u64).div_ceil(PER as u64))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Load,
    Request,
    Check,
}

/// One step of the benchmark, with the plan's parameters.
pub struct Step {
    pub name: &'static str,
    pub kind: Kind,
    pub params: Params,
}

/// The steps by name.
pub const KINDS: [(&str, Kind); 3] = [
    ("lb.load", Kind::Load),
    ("lb.request", Kind::Request),
    ("lb.check", Kind::Check),
];

/// The three steps, as a plan with these parameters runs them.
pub fn steps(params: &Params) -> Vec<Step> {
    KINDS
        .iter()
        .map(|&(name, kind)| Step {
            name,
            kind,
            params: *params,
        })
        .collect()
}

/// Which LinkBench step a workload name is.
pub fn kind(name: &str) -> Option<Kind> {
    KINDS.iter().find(|(n, _)| *n == name).map(|&(_, k)| k)
}

/// The suite's sequence: load, let the engine write back, the requests,
/// the check.
pub const SEQUENCE: [&str; 4] = ["lb.load", "settle", "lb.request", "lb.check"];

impl Workload for Step {
    fn meta(&self) -> Meta<'_> {
        let (about, classes, duration) = match self.kind {
            Kind::Load => (
                "LinkBench: load nodes, their links (out-degrees from the measured distribution) and link counts, loaders in parallel",
                LOAD_CLASSES.to_vec(),
                DurationClass::Insert,
            ),
            Kind::Request => (
                "LinkBench: one request from the mix of ten node and link operations, each as the original runs it",
                OPS.to_vec(),
                DurationClass::Write,
            ),
            Kind::Check => (
                "LinkBench: compare counttable with the visible links of linktable for a sample of ids",
                CHECK_CLASSES.to_vec(),
                DurationClass::Read,
            ),
        };
        Meta {
            name: self.name,
            group: Group::LinkBench,
            duration,
            about,
            transactional: self.kind == Kind::Request,
            classes,
            warms_up: self.kind == Kind::Request,
            creates_tables: self.kind == Kind::Load,
            removes_rows: false,
            class_series: self.kind == Kind::Request,
        }
    }

    fn statements(&self, d: Dialect) -> Vec<ShownStatement<'_>> {
        let show = |class: &'static str, sql: String| ShownStatement { class, sql };
        match self.kind {
            Kind::Load => {
                let mut out: Vec<ShownStatement> = sql::create(d, "", self.params.count_bigint)
                    .into_iter()
                    .map(|s| show("create", s))
                    .collect();
                out.push(show("load_node", sql::load_nodes(d, 2)));
                out.push(show("load_link", sql::load_links(d, 2)));
                out.push(show("load_count", sql::load_counts(d, 2)));
                out
            }
            Kind::Request => {
                let r = sql::Requests::new(d);
                let mut out = vec![
                    show("add_node", r.add_node),
                    show("update_node", r.update_node),
                    show("delete_node", r.delete_node),
                    show("get_node", r.get_node),
                ];
                for class in ["add_link", "update_link"] {
                    match &r.upsert_link {
                        Some(upsert) => out.push(show(class, upsert.clone())),
                        None => {
                            out.push(show(class, r.unhide_link.clone()));
                            out.push(show(class, r.insert_link.clone()));
                        }
                    }
                    out.push(show(class, r.count_up.clone()));
                    out.push(show(class, r.update_link.clone()));
                }
                out.push(show("delete_link", r.lock_link));
                out.push(show("delete_link", r.hide_link));
                out.push(show("delete_link", r.count_down));
                out.push(show("count_link", r.count_link));
                out.push(show("multiget_link", sql::multiget(d, 3)));
                out.push(show("get_link_list", r.link_list));
                out
            }
            Kind::Check => vec![show("check", sql::check(d))],
        }
    }

    fn rows_per_event(&self, _scale: &Scale) -> Option<u64> {
        None
    }

    /// The three tables, with the nodes and about four links each (the
    /// measured mean degree).
    fn tables(&self, _scale: &Scale, _clients: u32) -> Option<Tables> {
        let nodes = self.params.nodes() as f64;
        Some(Tables {
            names: sql::TABLES.iter().map(|t| t.to_string()).collect(),
            rows: (nodes * (1.0 + model::mean_degree())) as u64,
        })
    }

    fn clients(&self) -> Option<u32> {
        Some(match self.kind {
            Kind::Load => self.params.loaders,
            Kind::Request => self.params.requesters,
            Kind::Check => 1,
        })
    }

    /// The original's `requestrate` is per requester.
    fn rate_per_client(&self) -> Option<u64> {
        (self.kind == Kind::Request && self.params.requestrate > 0)
            .then_some(u64::from(self.params.requestrate))
    }

    fn counts_rows(&self) -> bool {
        self.kind == Kind::Load
    }

    fn shared(&self, _scale: &Scale, clients: u32) -> Vec<Option<Arc<dyn Any + Send + Sync>>> {
        // One queue of work for all clients: load chunks, check ranges.
        let one: Arc<dyn Any + Send + Sync> = Arc::new(client::Shared::default());
        (0..clients).map(|_| Some(one.clone())).collect()
    }

    fn events(&self, _scale: &Scale, clients: u32) -> Option<u64> {
        let p = &self.params;
        match self.kind {
            Kind::Load => Some(2 * p.chunks()),
            Kind::Request => (p.requests > 0).then(|| p.requests * u64::from(clients)),
            Kind::Check => Some(p.check_plan().1),
        }
    }

    fn more_connections(&self, dialect: Dialect) -> usize {
        // The original's requester reads on a connection of its own.
        usize::from(self.kind == Kind::Request && dialect == Dialect::Mysql)
    }

    fn client(
        &self,
        conn: &mut dyn Conn,
        more: Vec<Box<dyn Conn>>,
        d: Dialect,
        _scale: &Scale,
        rng: Rng,
        ctx: &ClientCtx,
    ) -> DbResult<Box<dyn Client>> {
        let shared: Arc<client::Shared> = ctx
            .shared
            .clone()
            .and_then(|s| s.downcast::<client::Shared>().ok())
            .expect("LinkBench's shared state");
        let p = &self.params;
        Ok(match self.kind {
            Kind::Load => Box::new(client::Loader::new(conn, d, p, rng, ctx, shared)?),
            Kind::Request => Box::new(client::Requester::new(conn, more, d, p, rng)?),
            Kind::Check => Box::new(client::Checker::new(conn, d, p, shared)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_mix_is_the_originals_and_adds_to_100() {
        let sum: f64 = FB_MIX.iter().sum();
        assert!((sum - 100.0).abs() < 1e-5, "{sum}");
        assert_eq!(Op::GetLinkList.key(), "getlinklist");
        assert_eq!(FB_MIX[Op::GetLinkList as usize], 50.711_914_5);
        assert_eq!(FB_MIX[Op::AddLink as usize], 8.988_660_1);
        assert_eq!(Op::ALL.map(Op::class), OPS);
    }

    #[test]
    fn fixed_steps_count_their_work() {
        let scale = Scale::probe();
        let mut p = Params {
            maxid1: 5001,
            loader_chunk_size: 1000,
            ..Params::default()
        };
        let s = steps(&p);
        assert_eq!(s[0].events(&scale, 3), Some(10));
        assert_eq!(s[1].events(&scale, 3), None, "by time");
        p.requests = 7;
        let s = steps(&p);
        assert_eq!(s[1].events(&scale, 3), Some(21));
        // 5000 ids, fewer than check_ids: all of them, 100 per statement.
        assert_eq!(s[2].events(&scale, 1), Some(50));
    }
}
